// session.briefing: everything an agent needs to carry on, in one call and within a token budget —
// after a restart, a context compaction, or as the handoff of a session another agent ended. Its
// sections, most important first:
//   session and handoff   the session, its scope, its note and nextAction, and the first call to make
//   focus                 the task it holds (or last held), with acceptance, last notes and gates
//   messages              its unread messages (session.inbox), oldest first, bodies clipped
//   children              its child sessions (session_tree.h): intent, status, report clipped
//   finished              results of the focus task's finished dependencies (their last note)
//   memory                what the project knows for the focus task (memory.find {taskId})
//   ready                 what tasks.next would offer in the scope
//   changes               what others changed in scope since the session's own last write
// The whole is cut
// to budgetTokens from the least important end, and `left` says what was cut and how to get it.
#include <algorithm>
#include <set>

#include "core/stored_text.h"
#include "core/text.h"
#include "domains/memory/memory_common.h"
#include "domains/changes.h"
#include "domains/claims.h"
#include "domains/envelope.h"
#include "domains/messages.h"
#include "domains/projection.h"
#include "domains/providers/providers.h"
#include "domains/session/session_common.h"
#include "domains/session/session_tree.h"
#include "engines/rules/claim_lease.h"
#include "engines/rules/lifecycle.h"
#include "engines/store/task_json.h"

namespace ct::session {
namespace {

constexpr std::size_t kNotesShown = 3;
constexpr std::size_t kNoteChars = 300;
constexpr std::size_t kResultChars = 200;
constexpr int kReadyShown = 5;
constexpr std::int64_t kChangesRead = 200;
constexpr std::int64_t kMessagesShown = 5;
constexpr std::size_t kMessageChars = 200;

/// The session a briefing is about: the one named, else the caller's, else the handoff — the
/// newest session nobody is working in (suspended, ended, or active with a lapsed lease).
Result<std::optional<Session>> subject_session(Context& context, const std::optional<std::string>& id, TimeMs now) {
  SessionEngine engine(context.db(), *context.config, now, nullptr);  // reads only
  if (id) {
    CT_TRY_ASSIGN(Session session, engine.get(*id));
    return std::optional<Session>(std::move(session));
  }
  if (!context.session.empty()) {
    CT_TRY_ASSIGN(Session session, engine.get(context.session));
    return std::optional<Session>(std::move(session));
  }
  SessionQuery recent;
  recent.statuses = {SessionStatus::Active, SessionStatus::Suspended, SessionStatus::Ended};
  recent.limit = 20;
  CT_TRY_ASSIGN(std::vector<Session> sessions, context.db().list_sessions(recent));
  const std::optional<TimeMs> cutoff = lapsed_before(*context.config, now);
  for (auto& session : sessions) {
    const bool live = session.status == SessionStatus::Active && !(cutoff && session.updated_at <= *cutoff);
    if (!live) return std::optional<Session>(std::move(session));
  }
  return std::optional<Session>();
}

/// The task the session holds, else the one it held last (from its audit rows), if unfinished.
Result<std::optional<Task>> focus_of(Context& context, const Session& session) {
  CT_TRY_ASSIGN(std::optional<std::string> focus, context.db().get_focus(session.id));
  if (!focus) {
    AuditQuery query;
    query.session = session.id;
    query.limit = 50;
    CT_TRY_ASSIGN(std::vector<AuditEntry> rows, context.db().read_audit(query));
    for (const auto& row : rows) {
      for (const auto& change : row.changes)
        if (change.field == "focus" && change.after.is_string()) focus = change.after.as_string();
      if (focus) break;
    }
  }
  if (!focus) return std::optional<Task>();
  CT_TRY_ASSIGN(std::optional<Task> task, context.db().get_task(*focus));
  if (!task || task->archived || task->status == TaskStatus::Done || task->status == TaskStatus::Cancelled)
    return std::optional<Task>();
  return task;
}

/// A section of rows the budget may shorten from its end, and how to get what it cut.
struct Section {
  std::string key;
  std::vector<json::Value> rows;
  json::Value more_call;  // the call that reads the rest, as advice (Advice::to_value); null: none
  std::size_t cut = 0;
};

/// A briefing being put together: the subject session and its focus, the fixed part (`data`) and
/// the sections the budget may shorten, each filled by a step of its own.
class Briefing {
 public:
  Briefing(Context& context, TimeMs now) : context_(context), now_(now) {}

  /// The session, its scope and its focus; the session's block and the first call to make.
  Result<void> about(std::optional<Session> session) {
    session_ = std::move(session);
    if (session_) {
      CT_TRY_ASSIGN(scope_, parse_scope(session_->scope));
      json::Value about = json::Value::object();
      about.set("id", session_->id);
      if (!session_->name.empty()) about.set("name", session_->name);
      about.set("scope", session_->scope);
      about.set("status", to_string(session_->status));
      if (!session_->agent.empty()) about.set("agent", session_->agent);
      if (std::string shown = shown_worktree(session_->worktree, context_.root()); !shown.empty())
        about.set("worktree", std::move(shown));
      if (!session_->branch.empty()) about.set("branch", session_->branch);
      about.set("updatedAt", format_iso8601(session_->updated_at));
      if (!session_->note.empty()) about.set("notes", session_->note);
      if (!session_->next_action.empty()) about.set("nextAction", session_->next_action);
      CT_TRY_ASSIGN(json::Value delegated, delegated_json(context_, session_->id));
      if (!delegated.is_null()) about.set("delegated", std::move(delegated));
      data_.set("session", std::move(about));
      CT_TRY_ASSIGN(focus_, focus_of(context_, *session_));
    }
    // The first call to make: carry on in the session, or take its work over in one of one's own.
    const bool own = session_ && session_->id == context_.session;
    if (session_ && !own) {
      data_.set("then", suggested(session_->status == SessionStatus::Ended ? call("session.start", {{"scope", session_->scope}})
                                                                      : call("session.resume", {{"id", session_->id}})));
    } else if (focus_ && focus_->status != TaskStatus::Active) {
      data_.set("then", suggested(call("tasks.start", {{"id", focus_->id}})));
    }
    return {};
  }

  /// The focus task (acceptance, gates, claim), its newest notes and its finished dependencies'
  /// results.
  Result<void> focus() {
    notes_.more_call = focus_ ? suggested(call("tasks.show", {{"id", focus_->id}})) : json::Value();
    finished_.more_call = focus_ ? suggested(call("tasks.deps", {{"id", focus_->id}})) : json::Value();
    if (!focus_) return {};
    json::Value task = json::Value::object();
    task.set("id", focus_->id);
    task.set("title", focus_->title);
    task.set("status", to_string(focus_->status));
    if (!focus_->acceptance.empty()) task.set("acceptance", json::Value::array_of(focus_->acceptance));
    LifecycleEngine lifecycle(context_.db(), *context_.config, 0, Actor{}, nullptr);  // reads only
    CT_TRY_ASSIGN(std::vector<LifecycleState> gates, lifecycle.recorded(focus_->id, LifecycleKind::Gate));
    json::Value gate_map = json::Value::object();
    for (const auto& gate : gates)
      if (gate.at != 0) gate_map.set(gate.name, gate.status);
    if (gate_map.size() > 0) task.set("gates", std::move(gate_map));
    CT_TRY_ASSIGN(std::optional<Claim> claim, context_.db().claim_on(focus_->id));
    if (claim) task.set("claim", claim_json(*claim, *context_.config, now_, context_.root()));
    data_.set("focus", std::move(task));
    // The newest notes first.
    for (auto it = focus_->notes.rbegin(); it != focus_->notes.rend(); ++it) {
      if (notes_.rows.size() == kNotesShown) {
        ++notes_.cut;
        continue;
      }
      json::Value note = json::Value::object();
      note.set("at", format_iso8601(it->at));
      note.set("text", clip(it->text, kNoteChars));
      notes_.rows.push_back(std::move(note));
    }
    CT_TRY_ASSIGN(std::vector<Task> deps, context_.db().get_tasks(focus_->depends));
    for (const auto& dep : deps) {
      if (dep.status != TaskStatus::Done) continue;
      json::Value row = json::Value::object();
      row.set("id", dep.id);
      row.set("title", dep.title);
      if (!dep.notes.empty()) row.set("result", clip(dep.notes.back().text, kResultChars));
      finished_.rows.push_back(std::move(row));
    }
    return {};
  }

  /// The session's unread messages: the oldest few (the inbox has the rest), bodies clipped.
  Result<void> messages() {
    if (!session_) return {};
    CT_TRY_ASSIGN(InboxReader reader, session_reader(context_, *session_));
    InboxQuery query;
    query.unread_only = true;
    query.limit = kMessagesShown;
    CT_TRY_ASSIGN(std::vector<Message> unread, context_.db().inbox(reader, query));
    if (unread.empty()) return {};
    CT_TRY_ASSIGN(UnreadCount count, context_.db().unread(reader, 0, kUnreadCounted));
    unread_.more_call = suggested(call("session.inbox", {{"unread", true}}));
    for (const auto& message : unread) {
      json::Value row = message_json(message, false);
      row.set("body", clip(message.body, kMessageChars));
      unread_.rows.push_back(std::move(row));
    }
    unread_.cut = static_cast<std::size_t>(count.count) - unread.size();  // at least (kUnreadCounted)
    return {};
  }

  /// What the project knows for the focus task: its files, labels, epics and words.
  Result<void> memory() {
    remembered_.more_call = focus_ ? suggested(call("memory.find", {{"taskId", focus_->id}})) : json::Value();
    if (!focus_) return {};
    CT_TRY_ASSIGN(std::vector<memory::Found> found, memory::for_task(context_, focus_->id));
    for (const auto& item : found) {
      json::Value row = json::Value::object();
      row.set("id", item.entry.id);
      row.set("kind", item.entry.kind);
      row.set("title", item.entry.title);
      if (!item.entry.body.empty()) row.set("body", clip(item.entry.body, kResultChars));
      if (item.entry.verified_by.empty()) {  // no person verified it: an agent's word alone
        row.set("unreviewed", true);
        if (!item.entry.source_agent.empty()) row.set("by", item.entry.source_agent);
      }
      remembered_.rows.push_back(std::move(row));
    }
    return {};
  }

  /// The session's children: what each was delegated, where it stands, what it reported.
  Result<void> children() {
    if (!session_) return {};
    CT_TRY_ASSIGN(json::Value rows, children_json(context_, session_->id, /*with_writes=*/false));
    if (rows.is_null()) return {};
    children_.more_call = suggested(call("session.show", {{"id", session_->id}}));
    for (auto row : rows.as_array()) {
      if (row.contains("report")) row.set("report", clip(row["report"].as_string(), kResultChars));
      children_.rows.push_back(std::move(row));
    }
    return {};
  }

  /// What tasks.next would offer in the scope.
  Result<void> ready() {
    if (scope_ && scope_->kind != ScopeKind::Global) {
      SessionEngine engine(context_.db(), *context_.config, now_, nullptr);  // reads only
      CT_TRY_ASSIGN(within_, engine.tasks_of(*scope_));
    }
    ready_.more_call = suggested(call("tasks.next", {{"count", 10}}));
    TaskEngine tasks(context_.db(), *context_.config, now_, context_.session, nullptr);
    CT_TRY_ASSIGN(std::vector<ScoredTask> picks, tasks.next(kReadyShown, within_ ? &*within_ : nullptr));
    for (const auto& pick : picks)
      if (!focus_ || pick.task.id != focus_->id) ready_.rows.push_back(task_suggestion(pick.task));
    return {};
  }

  /// What others changed in scope since the session's own last write: the newest are kept.
  Result<void> changes() {
    if (!session_) return {};
    AuditQuery own_last;
    own_last.session = session_->id;
    own_last.limit = 1;
    CT_TRY_ASSIGN(std::vector<AuditEntry> last, context_.db().read_audit(own_last));
    const std::int64_t since = last.empty() ? 0 : last.front().seq;
    CT_TRY_ASSIGN(ChangePage page, read_changes(context_, since, within_ ? &*within_ : nullptr, kChangesRead, session_->id));
    changed_.more_call = suggested(call("system.changes", {{"sinceSeq", since}}));
    // Newest first, so that the budget cuts the oldest.
    for (auto it = page.rows.rbegin(); it != page.rows.rend(); ++it) changed_.rows.push_back(change_json(*it, false));
    if (page.more) ++changed_.cut;
    return {};
  }

  /// The whole, cut to `budget` tokens from the least important end: changes, ready, memory,
  /// finished, notes (the essentials go whole).
  json::Value cut_to(std::size_t budget) {
    json::Value out = assemble();
    while (estimate_tokens(agents_text(out)) > budget) {
      auto victim = std::find_if(sections_.rbegin(), sections_.rend(), [](Section* s) { return !s->rows.empty(); });
      if (victim == sections_.rend()) break;  // only the essentials are left: they go whole
      (*victim)->rows.pop_back();
      ++(*victim)->cut;
      out = assemble();
    }
    out.set("tokens", static_cast<std::int64_t>(estimate_tokens(agents_text(out))));
    return out;
  }

  const std::optional<Session>& session() const { return session_; }
  /// `value` as agents read it, its calls in their tools' syntax (Registry::agent_writer): what the
  /// budget measures and an agent host's hook loads.
  std::string agents_text(const json::Value& value) const {
    std::string out;
    write_json(out, value, context_.registry->agent_writer());
    return out;
  }

 private:
  /// A call the briefing suggests, as a value its edge writes (Advice::to_value).
  static json::Value suggested(const Advice& advice) { return advice.to_value(); }

  /// The fixed part with each section's rows, and `left`: what was cut and the call that reads it.
  json::Value assemble() const {
    json::Value out = data_;
    for (const Section* section : sections_)
      if (!section->rows.empty()) {
        json::Value rows = json::Value::array();
        for (const auto& row : section->rows) rows.push_back(row);
        if (section == &changed_) {
          out.set(section->key, rows_as_table(rows));
        } else {
          out.set(section->key, std::move(rows));
        }
      }
    json::Value left = json::Value::array();
    for (const Section* section : sections_)
      if (section->cut > 0 && !section->more_call.is_null()) {
        json::Value item = json::Value::object();
        item.set("what", section->key);
        item.set("count", static_cast<std::int64_t>(section->cut));
        item.set("call", section->more_call);
        left.push_back(std::move(item));
      }
    if (!left.empty()) out.set("left", std::move(left));
    return out;
  }

  Context& context_;
  TimeMs now_;
  std::optional<Session> session_;
  std::optional<Scope> scope_;
  std::optional<Task> focus_;
  std::optional<std::set<std::string>> within_;  // the scope's tasks (none: global)
  json::Value data_ = json::Value::object();
  Section notes_{"notes", {}, {}};
  Section unread_{"messages", {}, {}};
  Section children_{"children", {}, {}};
  Section finished_{"finished", {}, {}};
  Section remembered_{"memory", {}, {}};
  Section ready_{"ready", {}, {}};
  Section changed_{"changes", {}, {}};
  // The order of importance: the budget cuts from the end.
  std::vector<Section*> sections_{&unread_, &children_, &notes_, &finished_, &remembered_, &ready_, &changed_};
};

struct BriefingArgs {
  std::optional<std::string> id;
  std::int64_t budget_tokens = 0;
  std::optional<std::string> hook;
};

}  // namespace

Result<Reply> briefing(Context& context, const BriefingArgs& args) {
  const TimeMs now = context.now();
  Briefing briefing(context, now);
  CT_TRY_ASSIGN(std::optional<Session> session, subject_session(context, args.id, now));
  CT_TRY(briefing.about(std::move(session)));
  CT_TRY(briefing.focus());
  CT_TRY(briefing.messages());
  CT_TRY(briefing.children());
  CT_TRY(briefing.memory());
  CT_TRY(briefing.ready());
  CT_TRY(briefing.changes());
  json::Value out = briefing.cut_to(static_cast<std::size_t>(args.budget_tokens));
  if (const auto& host = args.hook) {
    // An agent host's session-start hook: the briefing as the context it loads, in its format. What
    // agents stored in it (titles, notes, memory) is data: the briefing goes in a fence after the
    // product's own words (core/stored_text.h).
    const std::string intro = briefing.session() ? "CLEO briefing: where this project's work stands, to carry on (act through "
                                                   "the cleo_query and cleo_mutate tools)."
                                                 : "CLEO briefing: no session yet (start one with session.start).";
    std::string context_text = intro + " " + std::string(kStoredDataNote) + "\n" +
                               fenced(briefing.agents_text(out), {.what = "session.briefing"});
    context_text.pop_back();  // the fence's last line break: the host's format ends the text
    json::Value hooked = json::Value::object();
    hooked.set("hook", providers::hook_output(*providers::find(*host), context_text));
    return Reply::of(std::move(hooked));
  }
  Reply reply = Reply::of(std::move(out));
  if (!briefing.session())
    reply.warnings.push_back("no session to brief on: this is the project's (start one with session.start)");
  return reply;
}

void register_session_briefing(Registry& registry) {
  std::vector<std::string_view> hosts;
  for (const auto& provider : providers::all())
    if (provider.hook) hosts.push_back(provider.id);
  const auto args = bind(
      field(&BriefingArgs::id, id_param(false, "Session id (default: yours, else the newest one nobody works in)")),
      field(&BriefingArgs::budget_tokens, {.name = "budgetTokens", .type = ParamType::Int, .default_json = "1500",
                                           .min = 200, .max = 20000,
                                           .description = "Cut the briefing to about this many tokens"}),
      field(&BriefingArgs::hook, {.name = "hook", .type = ParamType::Enum, .choices = std::move(hosts),
                                  .description = "For this host's session-start hook (providers.install hooks): "
                                                 "{hook: the text it loads, in its format}"}));
  registry.add({.domain = "session", .name = "briefing", .gateway = Gateway::Query,
                .summary = "All you need to carry on",
                .params = args.specs(),
                .returns = "{session{id,name?,scope,status,agent?,notes?,nextAction?,delegated?}, then? (the call to make), "
                           "focus?{id,title,status,acceptance?,gates?,claim?}, messages?[{id,at,from,to,body}] (unread), "
                           "children?[{id,status,agent?,goal,paths?,report?}], notes?[{at,text}] (newest first), "
                           "finished?[{id,title,result?}] (its done dependencies), memory?[{id,kind,title,body?,unreviewed?,by?}] (memory.find "
                           "for it), ready?[{id,title,priority}], "
                           "changes?{columns,rows} (others' changes in scope since the session's last write, newest first), "
                           "left?[{what,count,call}] (what the budget cut), tokens}",
                .errors = {ErrorCode::SessionNotFound},
                .examples = {{R"({})", "after a restart or a compaction"},
                             {R"({"id":"ses_0a1b2c3d4e5f","budgetTokens":800})", "another agent's handoff, short"}},
                .idempotent = true, .tier = 1, .shortcut = "briefing", .text_view = TextView::Briefing,
                .known_hash = true, .handler = args.handler(briefing)});
}

}  // namespace ct::session
