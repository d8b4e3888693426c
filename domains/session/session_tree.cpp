// The session tree (session_tree.h): children started with a delegation, acting for them, their
// reports reaching the parent, and the tree as session.show, session.list, session.history and the
// briefing show it.
#include "domains/session/session_tree.h"

#include <algorithm>
#include <set>

#include "core/advice.h"
#include "core/text.h"
#include "domains/messages.h"

namespace ct::session {
namespace {

/// A child's audit rows counted at most this many (`writes`; session.history reads them all).
constexpr std::int64_t kWritesCounted = 1000;

/// Whether `path` lies within one of `allowed` (a path, a folder, or a glob whose literal start is
/// compared): a child is never delegated more of the tree than its parent holds.
bool within(const std::string& path, const std::vector<std::string>& allowed) {
  if (allowed.empty()) return true;
  for (const auto& root : allowed) {
    std::string prefix = root.substr(0, root.find_first_of("*?["));
    if (path == root || path.starts_with(prefix)) return true;
  }
  return false;
}

Error not_for_child(const std::string& why, std::string_view field) {
  return Error(ErrorCode::InvalidParams, why)
      .with_fix(call("session.start", {{"scope", "custom:T002"}, {"parent", "ses_…"}, {"goal", "…"}}))
      .with_detail("field", field);
}

}  // namespace

Result<Reply> start_child(Context& context, const std::string& scope_text, const std::string& name,
                          const std::string& agent, const Delegation& delegation) {
  if (delegation.intent.empty()) return fail(not_for_child("a child session needs the goal it is delegated", "goal"));
  SessionEngine engine(context.db(), *context.config, context.now(),
                       [&context](FieldChange change) { context.record(std::move(change)); });
  CT_TRY_ASSIGN(Session parent, engine.get(delegation.parent));
  if (!context.is_person()) CT_TRY(SessionEngine::check_owner(parent, context.principal.id));
  if (parent.status == SessionStatus::Ended || parent.status == SessionStatus::Closed)
    return fail(Error(ErrorCode::Validation, "Session " + parent.id + " is " + std::string(to_string(parent.status)) +
                                                 ": only a live session delegates")
                    .with_fix(call("session.resume", {{"id", parent.id}}) + " first")
                    .with_detail("id", parent.id)
                    .with_detail("status", std::string(to_string(parent.status))));
  // Inside the parent's scope: its tasks, and its paths when it was delegated some.
  CT_TRY_ASSIGN(Scope parent_scope, parse_scope(parent.scope));
  CT_TRY_ASSIGN(Scope scope, parse_scope(scope_text));
  if (parent_scope.kind != ScopeKind::Global) {
    std::vector<std::string> outside;
    if (scope.kind == ScopeKind::Global) {
      outside.push_back("global");
    } else {
      CT_TRY_ASSIGN(std::set<std::string> theirs, engine.tasks_of(parent_scope));
      CT_TRY_ASSIGN(std::set<std::string> mine, engine.tasks_of(scope));
      for (const auto& id : mine)
        if (!theirs.contains(id)) outside.push_back(id);
    }
    if (!outside.empty())
      return fail(Error(ErrorCode::TaskNotInScope, "scope " + scope.text + " reaches outside " + parent.id + "'s scope " +
                                                       parent.scope + ": " + join(outside, ", "))
                      .with_fix("delegate tasks of " + parent.scope + " only")
                      .with_detail("scope", parent.scope)
                      .with_detail("outside", json::Value::array_of(outside)));
  }
  CT_TRY_ASSIGN(std::optional<SessionChild> grand, context.db().session_parent(parent.id));
  if (grand)
    for (const auto& path : delegation.paths)
      if (!within(path, grand->paths))
        return fail(Error(ErrorCode::Validation, "path " + path + " is outside the paths " + parent.id + " was delegated")
                        .with_detail("field", "paths")
                        .with_detail("allowed", json::Value::array_of(grand->paths)));
  CT_TRY_ASSIGN(Session child, engine.start(name, scope.text, agent, context.principal.id));
  // It waits for its agent: session.resume makes it that caller's (the intent is its next action).
  CT_TRY_ASSIGN(child, engine.set_note(child.id, std::nullopt, delegation.intent));
  CT_TRY_ASSIGN(child, engine.suspend(child.id, ""));
  CT_TRY(context.db().put_session_child(
      SessionChild{child.id, parent.id, delegation.intent, delegation.paths, "", std::nullopt, context.now()}));
  if (context.audit) {
    context.audit->task_id = child.id;
    context.record({child.id, "parent", json::Value(), parent.id});
  }
  json::Value data = json::Value::object();
  data.set("id", child.id);
  data.set("status", to_string(child.status));
  return Reply::of(std::move(data));
}

Result<bool> acts_for_child(Context& context, const Session& session) {
  CT_TRY_ASSIGN(std::optional<SessionChild> link, context.db().session_parent(session.id));
  if (!link) return false;
  CT_TRY_ASSIGN(std::optional<Session> parent, context.db().get_session(link->parent));
  return parent && !parent->owner.empty() && parent->owner == context.principal.id;
}

Result<void> report_to_parent(Context& context, const Session& session, const std::string& notes) {
  CT_TRY_ASSIGN(std::optional<SessionChild> link, context.db().session_parent(session.id));
  if (!link) return {};
  link->report = notes;
  link->reported_at = context.now();
  CT_TRY(context.db().put_session_child(*link));
  // The parent hears of it in its inbox, as any message to a session (its next reply announces it).
  const auto max_chars = static_cast<std::size_t>(context.config->get_int("messages.maxChars"));
  Message message;
  message.at = context.now();
  message.to_kind = "session";
  message.to_ref = link->parent;
  message.body = clip(session.id + " " + std::string(to_string(session.status)) + " (" + link->intent + ")" +
                          (notes.empty() ? std::string() : ": " + notes),
                      max_chars);
  message.from_principal = context.principal.id;
  message.from_session = session.id;
  // From the child session by its id, not by its agent's label: a parent's agent often goes by the
  // same label as its child's (the same host), and an inbox leaves out what its own label sent.
  message.from_agent = session.id;
  CT_TRY(context.db().add_message(message, {}));
  if (context.audit) {
    context.record({session.id, "report", json::Value(), json::Value(message_id(message.num))});
    context.record({"inbox/" + link->parent, "message", json::Value(), json::Value(message_id(message.num))});
  }
  return {};
}

Result<json::Value> delegated_json(Context& context, const std::string& id) {
  CT_TRY_ASSIGN(std::optional<SessionChild> link, context.db().session_parent(id));
  if (!link) return json::Value();
  json::Value out = json::Value::object();
  out.set("parent", link->parent);
  out.set("goal", link->intent);
  if (!link->paths.empty()) out.set("paths", json::Value::array_of(link->paths));
  if (link->reported_at) out.set("report", link->report);
  return out;
}

Result<json::Value> children_json(Context& context, const std::string& parent, bool with_writes) {
  CT_TRY_ASSIGN(std::vector<SessionChild> children, context.db().session_children(parent));
  if (children.empty()) return json::Value();
  json::Value out = json::Value::array();
  for (const auto& child : children) {
    json::Value row = json::Value::object();
    row.set("id", child.child);
    CT_TRY_ASSIGN(std::optional<Session> session, context.db().get_session(child.child));
    if (session) {
      row.set("status", to_string(session->status));
      if (!session->agent.empty()) row.set("agent", session->agent);
    }
    row.set("goal", child.intent);
    if (!child.paths.empty()) row.set("paths", json::Value::array_of(child.paths));
    if (child.reported_at) row.set("report", child.report);
    if (with_writes) {
      AuditQuery query;
      query.session = child.child;
      query.limit = kWritesCounted;
      CT_TRY_ASSIGN(std::vector<AuditEntry> rows, context.db().read_audit(query));
      row.set("writes", static_cast<std::int64_t>(rows.size()));
    }
    out.push_back(std::move(row));
  }
  return out;
}

Result<std::vector<std::string>> subtree(Context& context, const std::string& root, std::size_t cap) {
  std::vector<std::string> out{root};
  std::set<std::string> seen{root};
  for (std::size_t next = 0; next < out.size() && out.size() < cap; ++next) {
    CT_TRY_ASSIGN(std::vector<SessionChild> children, context.db().session_children(out[next]));
    for (const auto& child : children)
      if (out.size() < cap && seen.insert(child.child).second) out.push_back(child.child);
  }
  return out;
}

Result<std::map<std::string, std::string>> parents_of(Context& context, const std::vector<std::string>& ids) {
  CT_TRY_ASSIGN(std::vector<SessionChild> links, context.db().session_links(ids));
  std::map<std::string, std::string> out;
  for (const auto& link : links) out.emplace(link.child, link.parent);
  return out;
}

}  // namespace ct::session
