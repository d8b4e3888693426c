// Several roles of one store, passed as one argument: an engine that reads tasks and the audit
// trail takes StoreRoles<TaskStore, AuditLog>, and a whole Store (or anything else with those
// roles) converts to it, as does a StoreRoles holding more roles. It holds one reference per role,
// so calls through it cost what calls through a Store& cost.
#pragma once

#include <concepts>
#include <tuple>

namespace ct {

template <class... Roles>
class StoreRoles {
 public:
  template <class S>
    requires(std::derived_from<S, Roles> && ...)
  StoreRoles(S& store) : roles_(static_cast<Roles&>(store)...) {}  // NOLINT(google-explicit-constructor)
  StoreRoles(Roles&... roles) : roles_(roles...) {}                 // NOLINT(google-explicit-constructor)
  template <class... More>
  StoreRoles(const StoreRoles<More...>& more) : roles_(more.template get<Roles>()...) {}  // NOLINT

  template <class Role>
  Role& get() const {
    return std::get<Role&>(roles_);
  }

 private:
  std::tuple<Roles&...> roles_;
};

}  // namespace ct
