// session.heartbeat: an agent doing long silent work (a build, a test run, reading a large tree)
// says it is still there, so that its claim does not lapse (session.leaseSeconds) and session.gc
// does not end its session as idle. Every call in the session already does this (engines/rules/
// claim_lease.h); a heartbeat is for the stretches without one.
#include "core/clock.h"
#include "domains/session/session_common.h"
#include "engines/rules/claim_lease.h"

namespace ct::session {
namespace {

Result<Reply> heartbeat(Context& context, const IdArgs& args) {
  CT_TRY_ASSIGN(std::string id, subject(context, args.id));
  auto engine = sessions(context);
  CT_TRY(owned_session(context, engine, id));
  CT_TRY_ASSIGN(Session session, engine.touch(id));
  if (context.audit) context.audit->task_id = id;
  json::Value data = json::Value::object();
  data.set("id", session.id);
  // When session.gc would first end it as idle, without another write or heartbeat.
  data.set("idleAt", format_iso8601(session.updated_at + engine.idle_after()));
  // When its claim lapses without another call (session.leaseSeconds; none when 0).
  if (const TimeMs lease = lease_ms(*context.config); lease > 0)
    data.set("leaseEnds", format_iso8601(session.updated_at + lease));
  return Reply::of(std::move(data));
}

}  // namespace

void register_session_heartbeat(Registry& registry) {
  const auto args = bind(field(&IdArgs::id, id_param(false, kCurrentOrId)));
  registry.add({.domain = "session", .name = "heartbeat", .gateway = Gateway::Mutate,
                .summary = "Keep a session from going idle during long silent work",
                .params = args.specs(),
                .returns = "{id,idleAt,leaseEnds?}: when session.gc would end it, and when its claim would lapse, "
                           "without another call",
                .errors = {ErrorCode::SessionNotFound, ErrorCode::SessionRequired, ErrorCode::SessionOwned},
                .examples = {{R"({})", "the current session is still working"}},
                .idempotent = true, .tier = 2, .handler = args.handler(heartbeat)});
}

}  // namespace ct::session
