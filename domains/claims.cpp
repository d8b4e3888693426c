#include "domains/claims.h"

#include "core/advice.h"
#include "core/json_parse.h"
#include "engines/rules/claim_lease.h"

namespace ct {

std::string shown_worktree(const std::string& worktree, const std::filesystem::path& root) {
  if (worktree.empty()) return "";
  const std::filesystem::path tree(worktree);
  if (tree == root) return "";
  const std::filesystem::path relative = tree.lexically_relative(root);
  return relative.empty() ? worktree : relative.string();
}

json::Value claim_json(const Claim& claim, const Config& config, TimeMs now, const std::filesystem::path& root) {
  json::Value out = json::Value::object();
  out.set("session", claim.session);
  if (!claim.agent.empty()) out.set("agent", claim.agent);
  if (std::string shown = shown_worktree(claim.worktree, root); !shown.empty()) out.set("worktree", std::move(shown));
  if (!claim.branch.empty()) out.set("branch", claim.branch);
  if (std::optional<TimeMs> end = lease_end(claim, config)) {
    out.set("leaseEnds", format_iso8601(*end));
    if (*end <= now) out.set("lapsed", true);
  }
  return out;
}

Result<std::map<std::string, Claim, std::less<>>> claims_by_task(Context& context) {
  CT_TRY_ASSIGN(std::vector<Claim> claims, context.db().claims());
  std::map<std::string, Claim, std::less<>> out;
  for (auto& claim : claims) {
    std::string id = claim.task_id;
    out.emplace(std::move(id), std::move(claim));
  }
  return out;
}

Result<std::optional<Claim>> live_claim(Context& context, const std::string& task_id) {
  CT_TRY_ASSIGN(std::optional<Claim> claim, context.db().claim_on(task_id));
  if (claim && lapsed(*claim, *context.config, context.now())) claim.reset();
  return claim;
}

namespace {

/// Live reservations among `held`.
std::vector<Reservation> live_among(Context& context, std::vector<Reservation> held) {
  if (held.empty()) return held;  // the clock is read only when there is a lease to test
  const std::optional<TimeMs> cutoff = lapsed_before(*context.config, context.now());
  std::erase_if(held, [&](const Reservation& row) { return lapsed_by(row.holder, cutoff); });
  return held;
}

}  // namespace

Result<std::vector<Reservation>> live_reservations(Context& context) {
  CT_TRY_ASSIGN(std::vector<Reservation> held, context.db().claimed_reservations({}));
  return live_among(context, std::move(held));
}

Result<std::vector<Reservation>> reserved_by_others(Context& context) {
  CT_TRY_ASSIGN(std::vector<Reservation> held, context.db().claimed_reservations({}));
  std::erase_if(held, [&](const Reservation& row) { return row.shared || row.holder.session == context.session; });
  return live_among(context, std::move(held));
}

Result<void> refuse_others_claim(Context& context, const std::string& task_id, std::string_view action) {
  if (context.is_person()) return {};
  CT_TRY_ASSIGN(std::optional<Claim> claim, live_claim(context, task_id));
  if (!claim || claim->session.empty() || claim->session == context.session) return {};
  Error error(ErrorCode::TaskClaimed, "Task " + task_id + " is claimed by session " + claim->session +
                                          (claim->agent.empty() ? std::string() : " (" + claim->agent + ")") +
                                          ": only its holder may " + std::string(action) + " it");
  error.fix = call("tasks.next", {});
  return fail(std::move(error).with_detail("id", task_id).with_detail("holder", claim->session));
}

Result<void> notify_displaced(Context& context, const std::string& displaced, const std::string& task_id) {
  if (displaced.empty() || displaced == context.session) return {};
  CT_TRY_ASSIGN(std::optional<Session> session, context.db().get_session(displaced));
  if (!session) return {};
  // Who took it: its name and who it really is (a person is their principal).
  CT_TRY_ASSIGN(std::string label, context.agent_name());
  std::string by = context.principal.id.empty() ? label : context.principal.id;
  if (!context.is_person() && !label.empty() && !context.principal.id.empty()) by = label + " (" + context.principal.id + ")";
  if (by.empty()) by = "session " + context.session;
  json::Value notice(json::Value::Object{{"task", json::Value(task_id)},
                                         {"by", json::Value(by)},
                                         {"at", json::Value(format_iso8601(context.now()))}});
  session->notice = notice.dump();
  return context.db().update_session(*session);
}

Result<std::optional<std::string>> session_notice(Context& context, Session& session, bool clear) {
  if (session.notice.empty()) return std::optional<std::string>();
  auto notice = json::parse(session.notice);
  std::optional<std::string> text;
  if (notice && (*notice)["task"].is_string())
    text = (*notice)["task"].as_string() + " was taken over by " + (*notice)["by"].string_or_empty() + " at " +
           (*notice)["at"].string_or_empty() + ": it is no longer this session's";
  if (clear) {
    session.notice.clear();
    CT_TRY(context.db().update_session(session));
  }
  return text;
}

}  // namespace ct
