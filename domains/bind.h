// Typed params, decoded once (clangd's LSPBinder is the model). An operation's params are the
// members of a struct of its own, each bound to its ParamSpec — the one place its name is
// written. The router validates the call's JSON against those specs (params.h: types, ranges,
// defaults, task ids); the binding then decodes it into the struct, and the handler reads fields:
//
//   struct ShowArgs { std::string id; bool history = false; };
//   const auto show_args = bind(field(&ShowArgs::id, id_param()),
//                               field(&ShowArgs::history, {.name = "history", .type = ParamType::Bool}));
//   registry.add({…, .params = show_args.specs(), …, .handler = show_args.handler(show)});
//
// where show is Result<Reply>(Context&, const ShowArgs&). A member's type says how it is read:
// std::string (a String, Enum or TaskId param that is required or has a default), std::optional
// of it or of an integer, bool or list (absent stays empty: "not given" is a value), std::int64_t,
// bool, std::vector<std::string>, json::Value (Object, Scalar), Moment (a point in time), and the
// shared shapes below (Paging, Projection), which bring their own params.
#pragma once

#include <concepts>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/clock.h"
#include "core/error.h"
#include "core/json.h"
#include "domains/context.h"
#include "domains/params.h"
#include "domains/projection.h"
#include "domains/registry.h"

namespace ct {

/// A String param that names a point in time (Params::time: a date, a time, today, 3d …),
/// relative to the call's clock; `at` is empty when it was not given.
struct Moment {
  std::optional<TimeMs> at;
};

/// `limit` and `offset` of a list (projection.h: limit_param, offset_param), from paging().
struct Paging {
  std::int64_t limit = 0;
  std::int64_t offset = 0;
};

/// The `detail` and `fields` params the registry adds to a list-like operation (projection.h),
/// from projection(): whether the handler builds full rows.
struct Projection {
  bool full = false;
};

namespace bind_detail {

template <class T> struct is_optional : std::false_type {};
template <class T> struct is_optional<std::optional<T>> : std::true_type {};

inline void read(const Params& params, std::string_view name, std::string& out) {
  if (auto value = params.opt_str(name)) out = std::move(*value);
}
inline void read(const Params& params, std::string_view name, std::int64_t& out) {
  if (auto value = params.opt_integer(name)) out = *value;
}
inline void read(const Params& params, std::string_view name, bool& out) {
  if (auto value = params.opt_flag(name)) out = *value;
}
inline void read(const Params& params, std::string_view name, std::vector<std::string>& out) {
  out = params.strings(name);
}
inline void read(const Params& params, std::string_view name, json::Value& out) { out = params.value(name); }
template <class T>
void read(const Params& params, std::string_view name, std::optional<T>& out) {
  if (!params.has(name)) return;
  T value{};
  read(params, name, value);
  out = std::move(value);
}

}  // namespace bind_detail

/// One member of `Args` bound to the params it is read from.
template <class Args>
struct Field {
  std::vector<ParamSpec> specs;
  std::function<Result<void>(Args& args, const Params& params, Context& context)> decode;
};

namespace bind_detail {
/// `spec` alone, moved in: a braced list would copy it (its elements are const).
inline std::vector<ParamSpec> only(ParamSpec&& spec) {
  std::vector<ParamSpec> out;
  out.push_back(std::move(spec));
  return out;
}
}  // namespace bind_detail

/// `member` read from the param `spec` declares.
template <class Args, class T>
Field<Args> field(T Args::*member, ParamSpec spec) {
  const std::string_view name = spec.name;
  if constexpr (std::is_same_v<T, Moment>) {
    return {bind_detail::only(std::move(spec)), [member, name](Args& args, const Params& params, Context& context) -> Result<void> {
              CT_TRY_ASSIGN((args.*member).at, params.time(name, context.now()));
              return {};
            }};
  } else {
    return {bind_detail::only(std::move(spec)), [member, name](Args& args, const Params& params, Context&) -> Result<void> {
              bind_detail::read(params, name, args.*member);
              return {};
            }};
  }
}

/// `limit` (rows per page, `default_limit` as JSON text) and `offset`, into a Paging member.
template <class Args>
Field<Args> paging(Paging Args::*member, std::string_view default_limit) {
  return {{limit_param(default_limit), offset_param()},
          [member](Args& args, const Params& params, Context&) -> Result<void> {
            (args.*member).limit = params.opt_integer("limit").value_or(0);
            (args.*member).offset = params.opt_integer("offset").value_or(0);
            return {};
          }};
}

/// Only `offset` (a list whose page size is the reply's budget), into a Paging member.
template <class Args>
Field<Args> offset_only(Paging Args::*member) {
  return {{offset_param()}, [member](Args& args, const Params& params, Context&) -> Result<void> {
            (args.*member).offset = params.opt_integer("offset").value_or(0);
            return {};
          }};
}

/// Whether full rows are wanted (`detail`, `fields`: params the registry adds to a list-like
/// operation, so none is declared here), into a Projection member.
template <class Args>
Field<Args> projection(Projection Args::*member) {
  return {{}, [member](Args& args, const Params& params, Context&) -> Result<void> {
            (args.*member).full = wants_full(params);
            return {};
          }};
}

/// Every param of the call as validated (defaults applied), as one JSON object, into a json::Value
/// member (no param of its own): for an operation that writes its own audit row, or repeats its
/// call in a fix.
template <class Args>
Field<Args> call_params(json::Value Args::*member) {
  return {{}, [member](Args& args, const Params& params, Context&) -> Result<void> {
            args.*member = params.json();
            return {};
          }};
}

/// The params of an operation and how they become its Args.
template <class Args>
class Binding {
 public:
  explicit Binding(std::vector<Field<Args>> fields)
      : fields_(std::make_shared<const std::vector<Field<Args>>>(std::move(fields))) {}

  /// The specs, in the order of the fields: OperationSpec::params.
  std::vector<ParamSpec> specs() const {
    std::vector<ParamSpec> out;
    std::size_t count = 0;
    for (const auto& field : *fields_) count += field.specs.size();
    out.reserve(count);
    for (const auto& field : *fields_) out.insert(out.end(), field.specs.begin(), field.specs.end());
    return out;
  }

  Result<Args> decode(const Params& params, Context& context) const {
    Args args{};
    for (const auto& field : *fields_) CT_TRY(field.decode(args, params, context));
    return args;
  }

  /// A Handler (or an external step) that decodes the call's params and calls `fn(context, args)`.
  template <class Fn>
    requires std::invocable<Fn&, Context&, const Args&>
  Handler handler(Fn fn) const {
    return [fields = *this, fn = std::move(fn)](Context& context, const Params& params) -> Result<Reply> {
      CT_TRY_ASSIGN(Args args, fields.decode(params, context));
      return fn(context, std::as_const(args));
    };
  }

  /// The Handler of an operation that runs other operations' calls inside its own: `fn(context,
  /// args, runs)` is handed the router's NestedRuns (domains/nested_runs.h).
  template <class Fn>
    requires std::invocable<Fn&, Context&, const Args&, NestedRuns&>
  Handler handler(Fn fn) const {
    return [fields = *this, fn = std::move(fn)](Context& context, const Params& params,
                                                NestedRuns& runs) -> Result<Reply> {
      CT_TRY_ASSIGN(Args args, fields.decode(params, context));
      return fn(context, std::as_const(args), runs);
    };
  }

  /// A Step (Registry::add_step) that reads the same Args.
  template <class Fn>
    requires std::invocable<Fn&, Context&, const Args&, Reply>
  Step step(Fn fn) const {
    return [fields = *this, fn = std::move(fn)](Context& context, const Params& params, Reply reply) -> Result<Reply> {
      CT_TRY_ASSIGN(Args args, fields.decode(params, context));
      return fn(context, std::as_const(args), std::move(reply));
    };
  }

 private:
  std::shared_ptr<const std::vector<Field<Args>>> fields_;
};

/// The Args of an operation without params.
struct NoArgs {};

/// The Handler of an operation without params: `fn(context, NoArgs{})`.
template <class Fn>
  requires std::invocable<Fn&, Context&, const NoArgs&>
Handler no_args(Fn fn) {
  return [fn = std::move(fn)](Context& context, const Params&) -> Result<Reply> { return fn(context, NoArgs{}); };
}

/// The binding of `fields`, all members of one Args struct.
template <class Args, class... More>
Binding<Args> bind(Field<Args> first, More... more) {
  std::vector<Field<Args>> fields;
  fields.reserve(1 + sizeof...(more));
  fields.push_back(std::move(first));
  (fields.push_back(std::move(more)), ...);
  return Binding<Args>(std::move(fields));
}

/// The fields of a part several operations' params share (a task's content, the filter of a list),
/// each read into the `member` of Args that holds the part: its params are described once.
template <class Args, class Part>
std::vector<Field<Args>> part_of(Part Args::*member, std::vector<Field<Part>> fields) {
  std::vector<Field<Args>> out;
  out.reserve(fields.size());
  for (auto& part : fields)
    out.push_back({std::move(part.specs),
                   [member, decode = std::move(part.decode)](Args& args, const Params& params, Context& context) {
                     return decode(args.*member, params, context);
                   }});
  return out;
}

namespace bind_detail {
template <class Args>
void append(std::vector<Field<Args>>& out, Field<Args> one) {
  out.push_back(std::move(one));
}
template <class Args>
void append(std::vector<Field<Args>>& out, std::vector<Field<Args>> several) {
  for (auto& one : several) out.push_back(std::move(one));
}
}  // namespace bind_detail

/// The binding of fields and parts (part_of()), in their order: bind_parts<ListArgs>(part_of(…), field(…)).
template <class Args, class... Parts>
Binding<Args> bind_parts(Parts... parts) {
  std::vector<Field<Args>> fields;
  (bind_detail::append(fields, std::move(parts)), ...);
  return Binding<Args>(std::move(fields));
}

}  // namespace ct
