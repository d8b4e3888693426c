// orchestrate domain (docs/architecture.md §5): what lets an orchestrator agent drive subagents through an
// epic — which tasks can run in parallel now, which unblock the most, the waves and the critical
// path (engines/rules/graph.h), its own context budget, starting or resuming its session, and whether a
// task can be handed out. orchestrate.spawn, which renders the subagent's prompt, is registered by
// disclosure/ (it needs the help texts); it shares readiness() from orchestrate.h.
#include "domains/orchestrate/orchestrate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/text.h"
#include "domains/analysis.h"
#include "domains/bind.h"
#include "domains/claims.h"
#include "domains/registry.h"
#include "domains/skills/skills.h"
#include "engines/rules/lifecycle.h"
#include "engines/rules/reservations.h"
#include "engines/rules/session_engine.h"
#include "engines/rules/task_engine.h"

namespace ct {
namespace orchestrate {

namespace {

/// Adds a blocker {kind, detail?} and answers it, for the caller to add what else it knows.
json::Value& add_blocker(Readiness& out, std::string_view kind, std::string detail) {
  json::Value row = json::Value::object();
  row.set("kind", kind);
  if (!detail.empty()) row.set("detail", std::move(detail));
  out.blockers.push_back(std::move(row));
  return out.blockers.as_array().back();
}

/// An archived or finished task is nothing to spawn.
void check_status(const Task& task, const std::string& id, Readiness& out) {
  if (task.archived) {
    add_blocker(out, "status", "archived");
    out.recommendations.push_back("restore it first: " + call("tasks.restore", {{"id", id}}));
  } else if (!is_unfinished(task.status)) {
    add_blocker(out, "status", std::string(to_string(task.status)));
    out.recommendations.push_back("nothing to spawn: it is " + std::string(to_string(task.status)) +
                                  "; reopen it with tasks.reopen if more work is needed");
  }
}

/// What tasks.blockers names: unfinished dependencies, and a block on it or its parent.
Result<void> check_blockers(TaskEngine& tasks, const Task& task, Readiness& out) {
  CT_TRY_ASSIGN(std::vector<Blocker> blocking, tasks.blockers(task));
  for (const auto& b : blocking) {
    json::Value& row = add_blocker(out, b.kind, b.detail);
    if (!b.id.empty()) {
      row.set("id", b.id);
      row.set("title", b.title);
      row.set("status", to_string(b.status));
    }
  }
  if (std::any_of(blocking.begin(), blocking.end(), [](const Blocker& b) { return b.kind == "dependency"; }))
    out.recommendations.push_back("spawn its unfinished dependencies first (orchestrate.ready lists what can run)");
  if (std::any_of(blocking.begin(), blocking.end(), [](const Blocker& b) { return b.kind != "dependency"; }))
    out.recommendations.push_back("clear the block: tasks.update {id, status:'pending', blockedBy:''} once the "
                                  "reason is resolved");
  return {};
}

/// Unfinished children: their work comes first.
Result<void> check_children(Context& context, const std::string& id, Readiness& out) {
  CT_TRY_ASSIGN(std::vector<std::string> children, context.db().children_of(id, false));
  std::vector<std::string> open_children;
  if (!children.empty()) {
    CT_TRY_ASSIGN(std::vector<Task> rows, context.db().get_tasks(children));
    for (const auto& child : rows)
      if (is_unfinished(child.status)) open_children.push_back(child.id);
  }
  if (!open_children.empty()) {
    json::Value& row = add_blocker(out, "children", std::to_string(open_children.size()) + " unfinished");
    row.set("ids", json::Value::array_of(open_children));
    out.recommendations.push_back("spawn its children instead: " + call("orchestrate.ready", {{"epicId", id}}));
  }
  return {};
}

/// Its epic's lifecycle: work whose stage cannot be entered yet cannot be completed either — a
/// blocker under strict enforcement, a recommendation under advisory.
Result<void> check_lifecycle(Context& context, const Task& task, Readiness& out) {
  LifecycleEngine lifecycle(context.db(), *context.config, 0, Actor{}, nullptr);  // reads only
  if (lifecycle.enforcement() == Enforcement::Off) return {};
  CT_TRY_ASSIGN(std::optional<LifecycleEngine::StageWait> wait, lifecycle.stage_wait(task));
  if (!wait) return {};
  std::string detail = wait->stage + " work of epic " + wait->epic + " waits for stage" +
                       (wait->missing.size() == 1 ? " " : "s ") + join(wait->missing, ", ");
  Advice fix = "finish or skip " + wait->missing.front() + " first: " +
               call("lifecycle.check", {{"id", wait->epic}, {"stage", wait->stage}});
  if (lifecycle.enforcement() == Enforcement::Strict) {
    json::Value& row = add_blocker(out, "lifecycle", std::move(detail));
    row.set("epic", wait->epic);
    row.set("missing", json::Value::array_of(wait->missing));
    out.recommendations.push_back(std::move(fix));
  } else {
    out.recommendations.push_back(detail + " (lifecycle.enforcement advisory: it may run; " + fix + ")");
  }
  return {};
}

/// A claim that has not lapsed: the caller's own session's, or another's. (A lapsed claim holds
/// nothing: the subagent's tasks.start takes the task over.)
Result<void> check_claim(Context& context, const std::string& id, Readiness& out) {
  CT_TRY_ASSIGN(std::optional<Claim> holder, live_claim(context, id));
  if (!holder) return {};
  if (holder->session == context.session) {
    json::Value& row = add_blocker(out, "claim", "held by this caller's own session");
    row.set("session", holder->session);
    out.recommendations.push_back("release it so the subagent can claim it: " + call("tasks.stop", {}));
  } else {
    json::Value& row = add_blocker(
        out, "claim", holder->session.empty() ? "held by work outside any session" : "held by another session");
    row.set("session", holder->session);
    out.recommendations.push_back("pick another task: another agent is working on it");
  }
  return {};
}

/// Its declared files a live claim of another task reserves — the caller's own included, for the
/// subagent is another session: its tasks.start would be refused under strict reservations (a
/// blocker) and warned of under advisory (a recommendation), as orchestrate.ready defers such a task.
Result<void> check_reservations(Context& context, const Task& task, Readiness& out) {
  const std::vector<std::string> files = reservations::declared_paths(task.files);  // as tasks.start reserves
  if (files.empty()) return {};
  CT_TRY_ASSIGN(std::vector<Reservation> reserved, live_reservations(context));
  std::erase_if(reserved, [&](const Reservation& row) { return row.holder.task_id == task.id; });  // check_claim's
  const std::vector<reservations::Conflict> found = reservations::conflicts(files, false, nullptr, reserved);
  if (found.empty()) return {};
  const std::string line = reservations::describe(found, *context.config);
  if (reservations::strict(*context.config)) {
    json::Value& row = add_blocker(out, "reservation", line);
    row.set("conflicts", reservations::conflicts_json(found, *context.config));
    out.recommendations.push_back("spawn it once that claim ends, or another ready task (orchestrate.ready defers it)");
  } else {
    out.recommendations.push_back(line + " (reservations.mode advisory: it may run, its agent is warned)");
  }
  return {};
}

}  // namespace

Result<Readiness> readiness(Context& context, const std::string& id) {
  TaskEngine tasks(context.db(), *context.config, context.now(), context.session, nullptr);
  CT_TRY_ASSIGN(Task task, tasks.get(id));
  Readiness out;
  check_status(task, id, out);
  CT_TRY(check_blockers(tasks, task, out));
  CT_TRY(check_children(context, id, out));
  CT_TRY(check_lifecycle(context, task, out));
  CT_TRY(check_claim(context, id, out));
  CT_TRY(check_reservations(context, task, out));
  out.ready = out.blockers.as_array().empty();
  if (out.ready) out.recommendations.push_back("ready: " + call("orchestrate.spawn", {{"id", id}}));
  out.task = std::move(task);
  return out;
}

json::Value readiness_json(const Readiness& readiness) {
  json::Value out = json::Value::object();
  out.set("id", readiness.task.id);
  out.set("ready", readiness.ready);
  out.set("blockers", readiness.blockers);
  json::Value recommendations = json::Value::array();
  for (const auto& advice : readiness.recommendations) recommendations.push_back(advice.to_value());
  out.set("recommendations", std::move(recommendations));
  return out;
}

}  // namespace orchestrate

namespace {

ParamSpec epic_param() {
  return ParamSpec{.name = "epicId", .type = ParamType::TaskId, .required = true,
                   .description = "The epic (or any parent task) whose subtree is orchestrated", .positional = true};
}

struct Deferred {
  std::size_t task;
  std::string with;
  std::vector<std::string> files;
  std::string session;  // `with` is another session's claim that reserved the files
};

struct ParallelSet {
  std::vector<std::size_t> picked;
  std::vector<Deferred> deferred;
};

/// Ready tasks that can run side by side, best first: a task whose known files overlap those of a
/// task already picked, of a task in progress, or another session's reservation (`reserved`),
/// waits for the next round.
ParallelSet parallel_safe(const Graph& graph, const std::vector<Reservation>& reserved) {
  ParallelSet out;
  struct Taken {
    std::string_view file;
    const std::string* task;     // the task holding it
    const std::string* session;  // the session whose reservation it is, if it is one
  };
  std::vector<Taken> taken;
  for (const auto& row : reserved) taken.push_back({row.path, &row.holder.task_id, &row.holder.session});
  for (std::size_t i = 0; i < graph.tasks.size(); ++i)
    if (graph.tasks[i].status == TaskStatus::Active)
      for (const auto& file : graph.tasks[i].files) taken.push_back({file, &graph.tasks[i].id, nullptr});
  for (auto index : graph.ready_order()) {
    const GraphTask& task = graph.tasks[index];
    Deferred clash{index, "", {}, ""};
    for (const auto& file : task.files)
      for (const auto& [held, holder, session] : taken)
        if (reservations::overlaps(file, held)) {
          if (clash.with.empty()) {
            clash.with = *holder;
            if (session) clash.session = *session;
          }
          if (*holder == clash.with && std::find(clash.files.begin(), clash.files.end(), file) == clash.files.end())
            clash.files.push_back(file);
        }
    if (!clash.with.empty()) {
      out.deferred.push_back(std::move(clash));
      continue;
    }
    out.picked.push_back(index);
    for (const auto& file : task.files) taken.push_back({file, &task.id, nullptr});
  }
  return out;
}

json::Value ids_of(const Graph& graph, const std::vector<std::size_t>& indices, std::size_t limit = SIZE_MAX) {
  json::Value out = json::Value::array();
  for (std::size_t i = 0; i < indices.size() && i < limit; ++i) out.push_back(graph.tasks[indices[i]].id);
  return out;
}

/// Status replies name at most this many ready tasks (orchestrate.ready pages through all).
constexpr std::size_t kReadyShown = 10;

void set_ready(json::Value& data, const Graph& graph, const ParallelSet& parallel) {
  data.set("ready", ids_of(graph, parallel.picked, kReadyShown));
  if (parallel.picked.size() > kReadyShown) data.set("readyTotal", static_cast<std::int64_t>(parallel.picked.size()));
}

std::string one_decimal(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", value);
  return text;
}

/// status, next, analyze and startup: the epic (or parent task) whose subtree is orchestrated.
struct EpicArgs {
  std::string epic_id;
};

/// The ready task to hand out next, with the skill a spawn would choose for it.
Result<json::Value> next_json(Context& context, const Graph& graph, std::size_t index) {
  json::Value row = ready_json(graph, index);
  CT_TRY_ASSIGN(std::optional<Task> task, context.db().get_task(graph.tasks[index].id));
  if (!task) return row;
  std::vector<std::string> ignored;  // skills.list reports the files it skipped
  CT_TRY_ASSIGN(SkillCatalog skills, load_skill_catalog(context, ignored));
  CT_TRY_ASSIGN(SkillChoice choice, skills.select(*task, std::nullopt));
  row.set("skill", choice.skill->name);
  row.set("skillReason", choice.reason);
  return row;
}

Result<Reply> status(Context& context, const EpicArgs& args) {
  CT_TRY_ASSIGN(Graph graph, load_scope_graph(context, args.epic_id));
  CT_TRY_ASSIGN(std::vector<Reservation> reserved, reserved_by_others(context));
  ParallelSet parallel = parallel_safe(graph, reserved);
  json::Value data = json::Value::object();
  data.set("epicId", args.epic_id);
  data.set("tasks", static_cast<std::int64_t>(graph.tasks.size()));
  data.set("counts", counts_json(graph));
  data.set("waves", static_cast<std::int64_t>(graph.waves.size()));
  auto current = graph.current_wave();
  if (current) data.set("currentWave", *current);
  set_ready(data, graph, parallel);
  std::vector<std::size_t> active;
  for (std::size_t i = 0; i < graph.tasks.size(); ++i)
    if (graph.tasks[i].status == TaskStatus::Active) active.push_back(i);
  if (!active.empty()) data.set("active", ids_of(graph, active));
  data.set("complete", !current && graph.cycles.empty());
  if (!graph.cycles.empty()) data.set("cycles", cycles_json(graph));
  return Reply::of(std::move(data));
}

/// Why nothing is ready: finished, waiting on work in progress, or stuck.
std::string idle_reason(const Graph& graph) {
  if (!graph.current_wave() && graph.cycles.empty()) return "every task of the epic is finished";
  if (graph.counts.contains(TaskStatus::Active) && graph.counts.at(TaskStatus::Active) > 0)
    return "nothing is ready until the tasks in progress finish";
  if (!graph.cycles.empty()) return "the remaining tasks wait on each other in a cycle (see tasks.analyze)";
  return "the remaining tasks are blocked or wait on unfinished work outside the epic";
}

Result<Reply> next(Context& context, const EpicArgs& args) {
  CT_TRY_ASSIGN(Graph graph, load_scope_graph(context, args.epic_id));
  CT_TRY_ASSIGN(std::vector<Reservation> reserved, reserved_by_others(context));
  ParallelSet parallel = parallel_safe(graph, reserved);
  if (parallel.picked.empty()) {
    json::Value data = json::Value::object();
    data.set("epicId", args.epic_id);
    data.set("reason", idle_reason(graph));
    return Reply::noted(std::move(data), ErrorCode::NoData);
  }
  CT_TRY_ASSIGN(json::Value row, next_json(context, graph, parallel.picked.front()));
  return Reply::of(std::move(row));
}

struct ReadyArgs {
  std::string epic_id;
  std::int64_t limit = 0;
};

Result<Reply> ready(Context& context, const ReadyArgs& args) {
  CT_TRY_ASSIGN(Graph graph, load_scope_graph(context, args.epic_id));
  CT_TRY_ASSIGN(std::vector<Reservation> reserved, reserved_by_others(context));
  ParallelSet parallel = parallel_safe(graph, reserved);
  json::Value data = json::Value::object();
  data.set("epicId", args.epic_id);
  if (auto current = graph.current_wave()) data.set("wave", *current);
  const auto limit = static_cast<std::size_t>(args.limit);
  if (parallel.picked.size() > limit) data.set("total", static_cast<std::int64_t>(parallel.picked.size()));
  json::Value rows = json::Value::array();
  for (std::size_t i = 0; i < parallel.picked.size() && i < limit; ++i) {
    const std::size_t index = parallel.picked[i];
    json::Value row = ready_json(graph, index);
    if (!graph.tasks[index].files.empty()) row.set("files", json::Value::array_of(graph.tasks[index].files));
    rows.push_back(std::move(row));
  }
  data.set("tasks", std::move(rows));
  if (!parallel.deferred.empty()) {
    json::Value deferred = json::Value::array();
    for (const auto& d : parallel.deferred) {
      json::Value row = json::Value::object();
      row.set("id", graph.tasks[d.task].id);
      row.set("conflictsWith", d.with);
      row.set("files", json::Value::array_of(d.files));
      if (!d.session.empty()) row.set("reservedBy", d.session);
      deferred.push_back(std::move(row));
    }
    data.set("deferred", std::move(deferred));
  }
  if (parallel.picked.empty()) return Reply::noted(std::move(data), ErrorCode::NoData, {idle_reason(graph)});
  return Reply::of(std::move(data));
}

Result<Reply> analyze(Context& context, const EpicArgs& args) {
  CT_TRY_ASSIGN(Graph graph, load_scope_graph(context, args.epic_id));
  json::Value data = json::Value::object();
  data.set("epicId", args.epic_id);
  json::Value waves = json::Value::array();
  for (std::size_t w = 0; w < graph.waves.size(); ++w) {
    json::Value row = json::Value::object();
    row.set("wave", static_cast<std::int64_t>(w));
    row.set("ids", ids_of(graph, graph.waves[w]));
    std::int64_t open = std::count_if(graph.waves[w].begin(), graph.waves[w].end(),
                                      [&](std::size_t i) { return is_unfinished(graph.tasks[i].status); });
    row.set("open", open);
    waves.push_back(std::move(row));
  }
  data.set("waves", std::move(waves));
  data.set("criticalPath", critical_path_json(graph, SIZE_MAX));
  data.set("bottlenecks", bottlenecks_json(graph, 5));
  data.set("parallelism", graph.max_parallelism());
  if (!graph.cycles.empty()) data.set("cycles", cycles_json(graph));
  return Reply::noted(std::move(data), no_data_if(graph.tasks.empty()));
}

struct WavesArgs {
  std::string epic_id;
  std::int64_t limit = 0;
  std::int64_t offset = 0;
};

Result<Reply> waves(Context& context, const WavesArgs& args) {
  CT_TRY_ASSIGN(Graph graph, load_scope_graph(context, args.epic_id));
  const std::int64_t limit = args.limit;
  const std::int64_t offset = args.offset;
  std::int64_t total = 0;
  json::Value rows = json::Value::array();
  for (std::size_t w = 0; w < graph.waves.size(); ++w)
    for (auto index : graph.waves[w]) {
      if (const std::int64_t at = total++; at < offset || at >= offset + limit) continue;
      json::Value row = json::Value::object();
      row.set("wave", static_cast<std::int64_t>(w));
      row.set("id", graph.tasks[index].id);
      row.set("title", graph.tasks[index].title);
      row.set("status", to_string(graph.tasks[index].status));
      if (graph.ready[index]) row.set("ready", true);
      rows.push_back(std::move(row));
    }
  Reply reply = Reply::paged(std::move(rows), Page{total, limit, offset});
  if (!graph.cycles.empty())
    reply.warnings.push_back(std::to_string(graph.cycles.size()) +
                             " dependency cycle(s): their tasks are in no wave (tasks.analyze lists them)");
  if (graph.tasks.empty()) reply.note = ErrorCode::NoData;
  return reply;
}

struct ContextArgs {
  std::optional<std::int64_t> tokens;
};

Result<Reply> context_budget(Context& context, const ContextArgs& args) {
  const std::int64_t budget = context.config->get_int("orchestrator.contextBudget");
  const std::int64_t warning = context.config->get_int("orchestrator.contextWarning");
  const std::int64_t critical = context.config->get_int("orchestrator.contextCritical");
  json::Value data = json::Value::object();
  data.set("budget", budget);
  data.set("warningAt", warning);
  data.set("criticalAt", critical);
  const std::optional<std::int64_t>& tokens = args.tokens;
  if (!tokens) {
    data.set("recommendation", "pass tokens: the number of tokens your context holds now");
    return Reply::of(std::move(data));
  }
  const double percent = std::round(1000.0 * static_cast<double>(*tokens) / static_cast<double>(budget)) / 10.0;
  std::string_view level = percent >= static_cast<double>(critical)  ? "critical"
                           : percent >= static_cast<double>(warning) ? "warning"
                                                                     : "safe";
  data.set("tokens", *tokens);
  data.set("percent", percent);
  data.set("status", level);
  std::vector<std::string> warnings;
  if (level == "safe") {
    data.set("recommendation", "continue: spawn the next ready tasks (orchestrate.ready)");
  } else if (level == "warning") {
    data.set("recommendation",
             "save context: keep replies compact (detail:'compact', fields), let subagents carry the work and read "
             "only their one-line results; write a handover soon (session.note with nextAction)");
    warnings.push_back("context at " + one_decimal(percent) + "% of the budget");
  } else {
    data.set("recommendation",
             "stop spawning: write the handover now (session.note {note, nextAction}), then session.suspend; a fresh "
             "orchestrator continues with orchestrate.startup {epicId}");
    warnings.push_back("context at " + one_decimal(percent) + "% of the budget: critical");
  }
  return Reply::warned(std::move(data), std::move(warnings));
}

/// The newest active or suspended session whose scope is exactly `scope`.
Result<std::optional<Session>> session_for(Context& context, const std::string& scope) {
  SessionQuery query;
  query.statuses = {SessionStatus::Active, SessionStatus::Suspended};
  CT_TRY_ASSIGN(std::vector<Session> sessions, context.db().list_sessions(query));
  for (auto& session : sessions)
    if (session.scope == scope) return std::optional<Session>(std::move(session));
  return std::optional<Session>();
}

/// What orchestrate.startup found and decided.
struct Startup {
  std::optional<Session> session;
  std::string how;  // bound, found, resumed or created
  std::string decision;
  std::string reason;
  std::optional<std::string> focus;  // the session's task in progress
};

/// The caller's own session when it is over this epic, else the epic's open session, else none;
/// a suspended one is resumed.
Result<void> find_session(Context& context, SessionEngine& sessions, const std::string& scope, Startup& out) {
  if (!context.session.empty()) {
    CT_TRY_ASSIGN(Session bound, sessions.get(context.session));
    if (bound.scope == scope && (bound.status == SessionStatus::Active || bound.status == SessionStatus::Suspended)) {
      out.session = std::move(bound);
      out.how = "bound";
    }
  }
  if (!out.session) {
    CT_TRY_ASSIGN(out.session, session_for(context, scope));
    if (out.session) out.how = "found";
  }
  if (out.session && out.session->status == SessionStatus::Suspended) {
    CT_TRY_ASSIGN(out.session, sessions.resume(out.session->id));
    out.how = "resumed";
  }
  return {};
}

/// What the orchestrator does now: resume the session's task in progress, spawn the next ready
/// tasks, start a session for an epic with unfinished tasks and spawn, or ask for direction.
Result<void> decide(Context& context, SessionEngine& sessions, const Graph& graph, const std::string& epic,
                    const std::string& scope, Startup& out) {
  if (out.session) {
    CT_TRY_ASSIGN(out.focus, context.db().get_focus(out.session->id));
    if (out.focus) {
      out.decision = "resume";
      out.reason = "session " + out.session->id + " is working on " + *out.focus + ": finish or hand it out first";
    } else {
      out.decision = "spawn_followup";
      out.reason = "session " + out.session->id + " has no task in progress: spawn the next ready tasks";
    }
  } else if (graph.current_wave().has_value()) {
    CT_TRY_ASSIGN(Session created, sessions.start("orchestrate " + epic, scope, context.agent));
    out.session = std::move(created);
    out.how = "created";
    out.decision = "create_and_spawn";
    out.reason = "no session was open for " + epic + " and it has unfinished tasks: a session was started";
  } else {
    out.decision = "request_direction";
    out.reason = graph.tasks.empty() ? epic + " has no tasks yet: decompose it in a plan (plan.begin {label, epicId}, "
                                              "plan.apply, plan.diff, plan.commit) or ask for direction"
                                     : "every task of " + epic + " is finished: ask for direction (or release it)";
  }
  return {};
}

/// {decision, reason, epicId, session?{id, scope, how, nextAction?}, focus?}
json::Value startup_json(const Startup& startup, const std::string& epic) {
  json::Value data = json::Value::object();
  data.set("decision", startup.decision);
  data.set("reason", startup.reason);
  data.set("epicId", epic);
  if (const auto& session = startup.session) {
    json::Value s = json::Value::object();
    s.set("id", session->id);
    s.set("scope", session->scope);
    s.set("how", startup.how);
    if (!session->next_action.empty()) s.set("nextAction", session->next_action);
    data.set("session", std::move(s));
  }
  if (startup.focus) data.set("focus", *startup.focus);
  return data;
}

/// Decompositions staged for this epic and not committed yet (plan domain): one may be the plan.
Result<void> add_open_plans(Context& context, const Graph& graph, const std::string& epic, const Startup& startup,
                            json::Value& data) {
  CT_TRY_ASSIGN(std::vector<Plan> plans, context.db().list_plans("open", 50, 0));
  std::vector<std::string> open_plans;
  for (const auto& plan : plans)
    if (plan.epic_id == epic) open_plans.push_back(plan.id);
  if (open_plans.empty()) return {};
  data.set("plans", json::Value::array_of(open_plans));
  if (startup.decision == "request_direction" && graph.tasks.empty())
    data.set("reason", epic + " has no tasks yet; plan " + open_plans.front() +
                           " stages a decomposition: plan.diff it, then plan.commit (or plan.discard)");
  return {};
}

Result<Reply> startup(Context& context, const EpicArgs& args) {
  const std::string& epic = args.epic_id;
  CT_TRY_ASSIGN(Graph graph, load_scope_graph(context, epic));
  CT_TRY_ASSIGN(std::optional<Task> root, context.db().get_task(epic));
  if (context.audit) context.audit->task_id = epic;
  SessionEngine sessions(context.db(), *context.config, context.now(),
                         [&context](FieldChange change) { context.record(std::move(change)); });
  const std::string scope = (root->type == TaskType::Epic ? "epic:" : "subtree:") + epic;
  Startup found;
  CT_TRY(find_session(context, sessions, scope, found));
  CT_TRY(decide(context, sessions, graph, epic, scope, found));
  if (found.session) {
    context.session = found.session->id;
    context.bind_session(found.session->id);
  }
  json::Value data = startup_json(found, epic);
  CT_TRY(add_open_plans(context, graph, epic, found, data));
  data.set("counts", counts_json(graph));
  CT_TRY_ASSIGN(std::vector<Reservation> reserved, reserved_by_others(context));
  ParallelSet parallel = parallel_safe(graph, reserved);
  set_ready(data, graph, parallel);
  if (!parallel.picked.empty()) {
    CT_TRY_ASSIGN(json::Value first, next_json(context, graph, parallel.picked.front()));
    data.set("next", std::move(first));
  }
  return Reply::of(std::move(data));
}

struct ValidateArgs {
  std::string id;
};

Result<Reply> validate(Context& context, const ValidateArgs& args) {
  CT_TRY_ASSIGN(orchestrate::Readiness result, orchestrate::readiness(context, args.id));
  if (context.audit) context.audit->task_id = result.task.id;
  return Reply::of(orchestrate::readiness_json(result));
}


/// The one binding of status, next, analyze and startup.
auto epic_binding() { return bind(field(&EpicArgs::epic_id, epic_param())); }

void register_status(Registry& registry) {
  const auto epic_args = epic_binding();
  registry.add({.domain = "orchestrate", .name = "status", .gateway = Gateway::Query,
                .summary = "An epic's counts and current wave",
                .params = epic_args.specs(),
                .returns = "{epicId, tasks, counts{status:n}, waves, currentWave?, ready[ids] (parallel-safe, the best 10), "
                           "readyTotal? (when more), active?[ids], complete, cycles?[[ids]]}",
                .errors = {ErrorCode::NotFound},
                .examples = {{R"({"epicId":"T001"})", "status of epic T001"}},
                .idempotent = true, .tier = 1, .aliases = {"progress", "parallel.end"},
                .handler = epic_args.handler(status)});
}

void register_next(Registry& registry) {
  const auto epic_args = epic_binding();
  registry.add({.domain = "orchestrate", .name = "next", .gateway = Gateway::Query,
                .summary = "An epic's next task, with its skill",
                .params = epic_args.specs(),
                .returns = "{id, title, priority, tier, unblocks?, skill, skillReason}: the best parallel-safe ready "
                           "task; {epicId, reason} with an E_NO_DATA note when none is ready",
                .errors = {ErrorCode::NotFound},
                .examples = {{R"({"epicId":"T001"})", "what to spawn next in T001"}},
                .idempotent = true, .tier = 1, .handler = epic_args.handler(next)});
}

void register_ready(Registry& registry) {
  const auto ready_args =
      bind(field(&ReadyArgs::epic_id, epic_param()),
           field(&ReadyArgs::limit, {.name = "limit", .type = ParamType::Int, .default_json = "10", .min = 1, .max = 200,
                                     .description = "At most this many tasks (the best first)"}));
  registry.add({.domain = "orchestrate", .name = "ready", .gateway = Gateway::Query,
                .summary = "An epic's tasks runnable in parallel now",
                .params = ready_args.specs(),
                .returns = "{epicId, wave?, tasks[{id,title,priority,tier,unblocks?,files?}], total? (when more are "
                           "ready than limit), deferred?[{id,conflictsWith,files,reservedBy?}]}: ready tasks (pending, "
                           "dependencies finished, no open children) best first; a task whose files overlap a picked "
                           "or active task's, or another session's live reservation (reservedBy), is deferred. "
                           "E_NO_DATA note when none is ready",
                .errors = {ErrorCode::NotFound},
                .examples = {{R"({"epicId":"T001"})", "the next wave to spawn"}},
                .idempotent = true, .tier = 1, .aliases = {"parallel.start"},
                .handler = ready_args.handler(ready)});
}

void register_analyze(Registry& registry) {
  const auto epic_args = epic_binding();
  registry.add({.domain = "orchestrate", .name = "analyze", .gateway = Gateway::Query,
                .summary = "An epic's plan: waves, critical path, bottlenecks, parallelism",
                .params = epic_args.specs(),
                .returns = "{epicId, waves[{wave,ids,open}], criticalPath{length,ids}, bottlenecks[{id,title,"
                           "unblocks}], parallelism (most unfinished tasks in one wave), cycles?[[ids]]}",
                .errors = {ErrorCode::NotFound},
                .examples = {{R"({"epicId":"T001"})", "plan of epic T001"}},
                .idempotent = true, .tier = 2, .handler = epic_args.handler(analyze)});
}

void register_waves(Registry& registry) {
  const auto waves_args =
      bind(field(&WavesArgs::epic_id, epic_param()),
           field(&WavesArgs::limit, {.name = "limit", .type = ParamType::Int, .default_json = "100", .min = 1, .max = 1000,
                                     .description = "Rows per page"}),
           field(&WavesArgs::offset, offset_param()));
  registry.add({.domain = "orchestrate", .name = "waves", .gateway = Gateway::Query,
                .summary = "An epic's tasks grouped by dependency wave",
                .params = waves_args.specs(),
                .returns = "[{wave, id, title, status, ready?}] by wave: wave 0 has no dependency inside the epic, "
                           "wave n depends on wave n-1 at most; tasks in a cycle are in no wave (a warning says so); "
                           "_meta.page when there are more rows",
                .errors = {ErrorCode::NotFound},
                .examples = {{R"({"epicId":"T001"})", "waves of epic T001"}},
                .idempotent = true, .tier = 2, .row_fields = {"wave", "id", "title", "status", "ready"},
                .handler = waves_args.handler(waves)});
}

void register_context(Registry& registry) {
  const auto context_args = bind(field(&ContextArgs::tokens, {.name = "tokens", .type = ParamType::Int, .min = 0,
                                                             .max = 100'000'000, .description = "Tokens in your context now"}));
  registry.add({.domain = "orchestrate", .name = "context", .gateway = Gateway::Query,
                .summary = "Check the orchestrator's context use against its budget",
                .params = context_args.specs(),
                .returns = "{budget, warningAt, criticalAt, tokens?, percent?, status? safe|warning|critical, "
                           "recommendation}: against orchestrator.contextBudget and its thresholds (70/80 %)",
                .examples = {{R"({"tokens":150000})", "how full is a 150k-token context"}},
                .idempotent = true, .tier = 2, .aliases = {"system.context"},
                .handler = context_args.handler(context_budget)});
}

void register_startup(Registry& registry) {
  const auto epic_args = epic_binding();
  registry.add({.domain = "orchestrate", .name = "startup", .gateway = Gateway::Mutate,
                .summary = "Take over an epic and its session",
                .params = epic_args.specs(),
                .returns = "{decision resume|spawn_followup|create_and_spawn|request_direction, reason, epicId, "
                           "session?{id,scope,how bound|found|resumed|created,nextAction?}, focus?, counts, plans?[open "
                           "plans of the epic], "
                           "ready[ids] (the best 10), readyTotal?, next?{id,title,priority,tier,skill,skillReason}}",
                .errors = {ErrorCode::NotFound, ErrorCode::SessionNotFound, ErrorCode::SessionExists},
                .examples = {{R"({"epicId":"T001"})", "take over epic T001"}},
                .tier = 1, .original_names = {"orchestrate.start"}, .handler = epic_args.handler(startup)});
}

void register_validate(Registry& registry) {
  const auto validate_args = bind(field(&ValidateArgs::id, {.name = "id", .type = ParamType::TaskId, .required = true,
                                                           .description = "Task id, e.g. T001", .positional = true}));
  registry.add({.domain = "orchestrate", .name = "validate", .gateway = Gateway::Mutate,
                .summary = "Check that a task can be handed to a subagent now",
                .params = validate_args.specs(),
                .returns = "{id, ready, blockers[{kind status|dependency|parent|manual|children|lifecycle|claim|"
                           "reservation, id?, title?, status?, detail?, ids?, session?, conflicts?}], recommendations[]}",
                .errors = {ErrorCode::NotFound},
                .examples = {{R"({"id":"T002"})", "can T002 be spawned"}},
                .idempotent = true, .tier = 2, .handler = validate_args.handler(validate)});
}

}  // namespace

void register_orchestrate_domain(Registry& registry) {
  register_status(registry);
  register_next(registry);
  register_ready(registry);
  register_analyze(registry);
  register_waves(registry);
  register_context(registry);
  register_startup(registry);
  register_validate(registry);
}

}  // namespace ct
