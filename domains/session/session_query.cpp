// session domain (docs/architecture.md §4–§5), its reads: named, scoped units of agent work with
// their own focus — the caller's session, the list, one session, the history of its changes. The
// changes are session_mutate.cpp's, the heartbeat and the briefing have files of their own.
#include <algorithm>
#include <set>

#include "core/clock.h"
#include "core/text.h"
#include "domains/claims.h"
#include "domains/projection.h"
#include "domains/session/session_common.h"
#include "domains/session/session_tree.h"

namespace ct::session {
namespace {

json::Value compact(const Context& context, const Session& session) {
  json::Value out = json::Value::object();
  out.set("id", session.id);
  if (!session.name.empty()) out.set("name", session.name);
  out.set("scope", session.scope);
  out.set("status", to_string(session.status));
  if (!session.agent.empty()) out.set("agent", session.agent);
  // Where it runs: a worktree other than the main one (relative to it), and the branch.
  if (std::string shown = shown_worktree(session.worktree, context.root()); !shown.empty())
    out.set("worktree", std::move(shown));
  if (!session.branch.empty()) out.set("branch", session.branch);
  out.set("updatedAt", format_iso8601(session.updated_at));
  return out;
}

Result<json::Value> full(Context& context, const Session& session) {
  json::Value out = compact(context, session);
  CT_TRY_ASSIGN(std::optional<std::string> focus, context.db().get_focus(session.id));
  if (focus) out.set("focus", *focus);
  if (!session.note.empty()) out.set("notes", session.note);
  if (!session.next_action.empty()) out.set("nextAction", session.next_action);
  out.set("createdAt", format_iso8601(session.created_at));
  if (session.ended_at) out.set("endedAt", format_iso8601(*session.ended_at));
  if (session.archived_at) out.set("archivedAt", format_iso8601(*session.archived_at));
  return out;
}

Result<Reply> status(Context& context, const NoArgs&) {
  if (context.session.empty())
    return Reply::noted(json::Value(), ErrorCode::NoData, {"no session bound: start one with session.start or resume one with session.resume"});
  auto engine = sessions(context);
  CT_TRY_ASSIGN(Session session, engine.get(context.session));
  CT_TRY_ASSIGN(json::Value data, full(context, session));
  return Reply::of(std::move(data));
}

struct ListArgs {
  std::optional<std::string> status;
  bool include_archived = false;
  Paging page;
  Projection rows;
};

Result<Reply> list(Context& context, const ListArgs& args) {
  SessionQuery query;
  if (args.status) query.statuses = {*parse_session_status(*args.status)};
  query.include_archived = args.include_archived;
  CT_TRY_ASSIGN(std::int64_t total, context.db().count_sessions(query));
  query.limit = args.page.limit;
  query.offset = args.page.offset;
  CT_TRY_ASSIGN(std::vector<Session> found, context.db().list_sessions(query));
  // The tree: each child names its parent.
  std::vector<std::string> ids;
  for (const auto& session : found) ids.push_back(session.id);
  CT_TRY_ASSIGN(auto parents, parents_of(context, ids));
  json::Value rows = json::Value::array();
  for (const auto& session : found) {
    json::Value row;
    if (args.rows.full) {
      CT_TRY_ASSIGN(row, full(context, session));
    } else {
      row = compact(context, session);
    }
    if (session.id == context.session) row.set("current", true);
    if (auto parent = parents.find(session.id); parent != parents.end()) row.set("parent", parent->second);
    rows.push_back(std::move(row));
  }
  Reply reply = Reply::paged(std::move(rows), Page{total, query.limit, query.offset});
  if (total == 0) reply.note = ErrorCode::NoData;
  return reply;
}

Result<Reply> show(Context& context, const IdArgs& args) {
  CT_TRY_ASSIGN(std::string id, subject(context, args.id));
  auto engine = sessions(context);
  CT_TRY_ASSIGN(Session session, engine.get(id));
  CT_TRY_ASSIGN(json::Value data, full(context, session));
  // Its place in the tree: what it was delegated, and its children with their reports.
  CT_TRY_ASSIGN(json::Value delegated, delegated_json(context, id));
  if (!delegated.is_null()) data.set("delegated", std::move(delegated));
  CT_TRY_ASSIGN(json::Value children, children_json(context, id, /*with_writes=*/true));
  if (!children.is_null()) data.set("children", std::move(children));
  return Reply::of(std::move(data));
}

/// The sessions session.history {children:true} reads at most.
constexpr std::size_t kTreeSessions = 100;

struct HistoryArgs {
  std::optional<std::string> id;
  bool children = false;
  Paging page;
};

Result<Reply> history(Context& context, const HistoryArgs& args) {
  CT_TRY_ASSIGN(std::string id, subject(context, args.id));
  auto engine = sessions(context);
  CT_TRY(engine.get(id));
  std::vector<std::string> tree{id};
  if (args.children) {
    CT_TRY_ASSIGN(tree, subtree(context, id, kTreeSessions));
  }
  // Each session's newest offset+limit rows, merged newest first: the page of the whole tree.
  std::vector<AuditEntry> rows;
  for (const auto& session : tree) {
    AuditQuery query;
    query.session = session;
    query.limit = args.page.offset + args.page.limit;
    CT_TRY_ASSIGN(std::vector<AuditEntry> own, context.db().read_audit(query));
    rows.insert(rows.end(), std::make_move_iterator(own.begin()), std::make_move_iterator(own.end()));
  }
  std::ranges::sort(rows, [](const AuditEntry& a, const AuditEntry& b) { return a.seq > b.seq; });
  const auto from = std::min<std::size_t>(rows.size(), static_cast<std::size_t>(args.page.offset));
  const auto to = std::min<std::size_t>(rows.size(), from + static_cast<std::size_t>(args.page.limit));
  rows = std::vector<AuditEntry>(std::make_move_iterator(rows.begin() + static_cast<std::ptrdiff_t>(from)),
                                 std::make_move_iterator(rows.begin() + static_cast<std::ptrdiff_t>(to)));
  json::Value out = json::Value::array();
  for (const auto& row : rows) {
    json::Value item = json::Value::object();
    item.set("seq", row.seq);
    if (args.children) item.set("session", row.session);
    item.set("at", format_iso8601(row.at));
    item.set("operation", row.operation);
    if (!row.task_id.empty()) item.set("taskId", row.task_id);
    if (!row.agent.empty()) item.set("agent", row.agent);
    item.set("outcome", row.outcome);
    out.push_back(std::move(item));
  }
  return Reply::noted(std::move(out), no_data_if(rows.empty()));
}

}  // namespace

void register_session_queries(Registry& registry) {
  registry.add({.domain = "session", .name = "status", .gateway = Gateway::Query,
                .summary = "Your bound session",
                .returns = "{id,name?,scope,status,agent?,worktree?,branch?,focus?,notes?,nextAction?,createdAt,updatedAt}; "
                           "E_NO_DATA note when no session is bound",
                .examples = {{R"({})", "which session am I in?"}},
                .idempotent = true, .tier = 1, .handler = no_args(status)});
  const auto list_args =
      bind(field(&ListArgs::status, {.name = "status", .type = ParamType::Enum,
                                     .choices = {"active", "suspended", "ended", "closed"},
                                     .description = "Only sessions with this status"}),
           field(&ListArgs::include_archived, {.name = "includeArchived", .type = ParamType::Bool,
                                               .description = "Also sessions archived by session.gc"}),
           paging(&ListArgs::page, "50"), projection(&ListArgs::rows));
  registry.add({.domain = "session", .name = "list", .gateway = Gateway::Query,
                .summary = "List sessions, newest first",
                .params = list_args.specs(),
                .returns = "[{id,name?,scope,status,agent?,worktree? (relative to the main one),branch?,updatedAt,current?,parent?}] "
                           "(also focus?, notes?, nextAction?, createdAt, endedAt? with detail:'full'); _meta.page "
                           "when there are more",
                .examples = {{R"({"status":"active"})", "active sessions"}},
                .idempotent = true, .tier = 2,
                .row_fields = {"id", "name", "scope", "status", "agent", "worktree", "branch", "updatedAt", "focus", "notes", "nextAction",
                               "createdAt", "endedAt", "archivedAt", "current", "parent"},
                .handler = list_args.handler(list)});
  const auto id_args = bind(field(&IdArgs::id, id_param(false, kCurrentOrId)));
  registry.add({.domain = "session", .name = "show", .gateway = Gateway::Query,
                .summary = "Show one session",
                .params = id_args.specs(),
                .returns = "{id,name?,scope,status,agent?,focus?,notes?,nextAction?,createdAt,updatedAt,endedAt?,"
                           "delegated?{parent,goal,paths?,report?},children?[{id,status,agent?,goal,paths?,report?,writes}]}",
                .errors = {ErrorCode::SessionNotFound, ErrorCode::SessionRequired},
                .examples = {{R"({"id":"ses_0123456789ab"})", "show a session"}},
                .idempotent = true, .tier = 2, .handler = id_args.handler(show)});
  const auto history_args = bind(field(&HistoryArgs::id, id_param(false, kCurrentOrId)),
                                 field(&HistoryArgs::children, {.name = "children", .type = ParamType::Bool,
                                                                .description = "Also its child sessions' writes"}),
                                 paging(&HistoryArgs::page, "50"));
  registry.add({.domain = "session", .name = "history", .gateway = Gateway::Query,
                .summary = "The writes made in a session, newest first",
                .params = history_args.specs(),
                .returns = "[{seq,session? (with children),at,operation,taskId?,agent?,outcome}]",
                .errors = {ErrorCode::SessionNotFound, ErrorCode::SessionRequired},
                .examples = {{R"({})", "what did this session change?"}},
                .idempotent = true, .tier = 2, .handler = history_args.handler(history)});
}

}  // namespace ct::session
