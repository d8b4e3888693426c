// Shared by the session domain's handler files: the engine for a call, the session a call is
// about, and the `id` param.
#pragma once

#include <string>
#include <string_view>

#include "core/advice.h"
#include "domains/bind.h"
#include "domains/context.h"
#include "domains/registry.h"
#include "engines/rules/session_engine.h"

namespace ct::session {

/// The session engine at the call's time, its changes recorded in the call's audit row.
inline SessionEngine sessions(Context& context) {
  return SessionEngine(context.db(), *context.config, context.now(),
                       [&context](FieldChange change) { context.record(std::move(change)); });
}

inline ParamSpec id_param(bool required, std::string_view description) {
  return ParamSpec{.name = "id", .type = ParamType::String, .required = required, .max = 40,
                   .pattern = "^ses_[0-9a-z]+$", .description = description, .positional = true};
}

inline constexpr std::string_view kCurrentOrId = "Session id (default: the session this caller is bound to)";

/// The params of an operation on one session, the bound one by default (id_param).
struct IdArgs {
  std::optional<std::string> id;
};

/// The subject session: `id`, else the bound one; E_SESSION_REQUIRED when there is neither.
inline Result<std::string> subject(Context& context, const std::optional<std::string>& id) {
  if (id) return *id;
  if (!context.session.empty()) return context.session;
  Error error(ErrorCode::SessionRequired, "no session given and none is bound to this caller");
  error.fix = call("session.list", {{"status", "active"}});
  return fail(std::move(error).with_detail("field", "id"));
}

/// Whether the caller owns the parent of child session `session` (session_tree.h).
Result<bool> acts_for_child(Context& context, const Session& session);

/// Session `id` (subject()'s), for a change to it (E_SESSION_NOT_FOUND when there is none): an
/// agent changes only its own, or a child of its own session (session_tree.h); a person any
/// (E_SESSION_OWNED).
inline Result<Session> owned_session(Context& context, SessionEngine& engine, const std::string& id) {
  CT_TRY_ASSIGN(Session session, engine.get(id));
  if (context.is_person()) return session;
  if (auto owned = SessionEngine::check_owner(session, context.principal.id); !owned) {
    CT_TRY_ASSIGN(bool parent_owner, acts_for_child(context, session));
    if (!parent_owner) return fail(std::move(owned.error()));
  }
  return session;
}


}  // namespace ct::session
