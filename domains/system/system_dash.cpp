// system domain — the dashboard, throughput statistics and call metrics.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

#include "core/text.h"
#include "domains/bind.h"
#include "domains/claims.h"
#include "domains/context.h"
#include "domains/metrics.h"
#include "domains/registry.h"
#include "engines/store/audit_chain.h"
#include "engines/rules/task_engine.h"
#include "engines/store/task_json.h"

namespace ct {
namespace {

// ---- system.dash -----------------------------------------------------------------------------

std::string activity_line(const AuditEntry& row) {
  std::string line = "#" + std::to_string(row.seq) + " " + format_iso8601(row.at) + " " + row.operation;
  // The subject: the call's id, else the task it changed (tasks.add learns its id as it runs).
  std::string subject = row.task_id;
  for (const auto& change : row.changes)
    if (subject.empty()) subject = change.task_id;
  if (!subject.empty()) line += " " + subject;
  if (row.outcome != "ok") line += " " + row.outcome;
  if (!row.agent.empty()) line += " by " + row.agent;
  return line;
}

struct DashArgs {
  std::int64_t next = 0;
  std::int64_t recent = 0;
};

/// {<status>: n, total}: the live tasks by status, statuses without any left out.
Result<json::Value> status_counts(Store& db) {
  TaskFilter live;
  CT_TRY_ASSIGN(auto by_status, db.count_by_status(live));
  json::Value counts = json::Value::object();
  std::int64_t total = 0;
  for (auto status : kTaskStatuses) {
    auto it = by_status.find(status);
    if (it == by_status.end() || it->second == 0) continue;
    counts.set(to_string(status), it->second);
    total += it->second;
  }
  counts.set("total", total);
  return counts;
}

using SessionNames = std::map<std::string, std::string, std::less<>>;  // session id → its name, where it has one

/// Active sessions and what each is working on (sessions, moreSessions); answers their names.
Result<SessionNames> add_sessions(Store& db, json::Value& data) {
  constexpr std::int64_t kShownSessions = 10;
  SessionQuery active;
  active.statuses = {SessionStatus::Active};
  active.limit = kShownSessions;
  CT_TRY_ASSIGN(std::vector<Session> sessions, db.list_sessions(active));
  json::Value session_list = json::Value::array();
  SessionNames labels;
  for (const auto& session : sessions) {
    json::Value item = json::Value::object();
    item.set("id", session.id);
    if (!session.name.empty()) item.set("name", session.name);
    item.set("scope", session.scope);
    CT_TRY_ASSIGN(std::optional<std::string> focus, db.get_focus(session.id));
    if (focus) item.set("focus", *focus);
    if (!session.name.empty()) labels.emplace(session.id, session.name);
    session_list.push_back(std::move(item));
  }
  if (!session_list.empty()) data.set("sessions", std::move(session_list));
  if (std::ssize(sessions) == kShownSessions) {
    CT_TRY_ASSIGN(std::int64_t all, db.count_sessions(SessionQuery{.statuses = {SessionStatus::Active}}));
    if (all > kShownSessions) data.set("moreSessions", all - kShownSessions);
  }
  return labels;
}

/// Every claim (a suspended or silent session's too, and the sessionless focus): who works on
/// what, and until when their lease runs (focus).
Result<void> add_claims(Context& context, const SessionNames& labels, json::Value& data) {
  Store& db = context.db();
  CT_TRY_ASSIGN(std::vector<Claim> claims, db.claims());
  if (claims.empty()) return {};
  std::vector<std::string> ids;
  for (const auto& claim : claims) ids.push_back(claim.task_id);
  CT_TRY_ASSIGN(std::vector<Task> tasks, db.get_tasks(ids));
  const TimeMs now = context.now();
  json::Value focus_list = json::Value::array();
  for (const auto& claim : claims) {
    auto task = std::find_if(tasks.begin(), tasks.end(), [&](const Task& t) { return t.id == claim.task_id; });
    if (task == tasks.end()) continue;
    json::Value item = json::Value::object();
    item.set("id", task->id);
    item.set("title", task->title);
    if (!claim.session.empty()) {
      auto label = labels.find(claim.session);
      item.set("session", label != labels.end() ? label->second : claim.session);
      const json::Value held = claim_json(claim, *context.config, now, context.root());
      for (const auto& [key, value] : held.as_object())
        if (key != "session") item.set(key, value);
    }
    focus_list.push_back(std::move(item));
  }
  if (!focus_list.empty()) data.set("focus", std::move(focus_list));
  return {};
}

/// tasks.next's ranking: the first `count` suggestions with their scores (next).
Result<void> add_next(Context& context, std::int64_t count, json::Value& data) {
  TaskEngine engine(context.db(), *context.config, context.now(), context.session, nullptr);
  CT_TRY_ASSIGN(std::vector<ScoredTask> picks, engine.next(static_cast<int>(count)));
  if (picks.empty()) return {};
  json::Value next = json::Value::array();
  for (const auto& pick : picks) {
    json::Value item = task_suggestion(pick.task);
    item.set("score", pick.score);
    next.push_back(std::move(item));
  }
  data.set("next", std::move(next));
  return {};
}

/// The newest `count` audit rows, a line each (recent).
Result<void> add_recent(Store& db, std::int64_t count, json::Value& data) {
  AuditQuery recent;
  recent.limit = count;
  CT_TRY_ASSIGN(std::vector<AuditEntry> rows, db.read_audit(recent));
  if (rows.empty()) return {};
  json::Value lines = json::Value::array();
  for (const auto& row : rows) lines.push_back(activity_line(row));
  data.set("recent", std::move(lines));
  return {};
}

Result<Reply> dash(Context& context, const DashArgs& args) {
  Store& db = context.db();
  json::Value data = json::Value::object();
  CT_TRY_ASSIGN(json::Value counts, status_counts(db));
  data.set("counts", std::move(counts));
  CT_TRY_ASSIGN(SessionNames labels, add_sessions(db, data));
  CT_TRY(add_claims(context, labels, data));
  CT_TRY(add_next(context, args.next, data));
  CT_TRY(add_recent(db, args.recent, data));
  return Reply::of(std::move(data));
}

// ---- system.stats ----------------------------------------------------------------------------

struct Period {
  StatsPeriod range;
  std::string label;
};

std::string two(unsigned value) { return (value < 10 ? "0" : "") + std::to_string(value); }

/// The last `count` calendar periods (UTC) up to and including the one holding `now`, oldest
/// first. Weeks are ISO weeks (Monday to Sunday, labelled 2026-W02).
std::vector<Period> calendar_periods(TimeMs now, std::string_view kind, int count) {
  using namespace std::chrono;
  const auto today = floor<days>(sys_time<milliseconds>(milliseconds(now)));
  auto to_ms = [](sys_days day) { return static_cast<TimeMs>(duration_cast<milliseconds>(day.time_since_epoch()).count()); };
  std::vector<Period> out;
  if (kind == "month") {
    year_month_day ymd(today);
    year_month month = ymd.year() / ymd.month();
    for (int i = count - 1; i >= 0; --i) {
      year_month start = month - months(i);
      year_month next = start + months(1);
      out.push_back({{to_ms(sys_days(start / 1)), to_ms(sys_days(next / 1))},
                     std::to_string(static_cast<int>(start.year())) + "-" + two(static_cast<unsigned>(start.month()))});
    }
    return out;
  }
  if (kind == "week") {
    const sys_days monday = today - (weekday(today) - Monday);
    for (int i = count - 1; i >= 0; --i) {
      sys_days start = monday - weeks(i);
      // The ISO year and week are those of the week's Thursday.
      year_month_day thursday(start + days(3));
      sys_days new_year = sys_days(thursday.year() / January / 1);
      auto week = (sys_days(thursday) - new_year).count() / 7 + 1;
      out.push_back({{to_ms(start), to_ms(start + weeks(1))},
                     std::to_string(static_cast<int>(thursday.year())) + "-W" + two(static_cast<unsigned>(week))});
    }
    return out;
  }
  for (int i = count - 1; i >= 0; --i) {
    sys_days start = today - days(i);
    year_month_day ymd(start);
    out.push_back({{to_ms(start), to_ms(start + days(1))},
                   std::to_string(static_cast<int>(ymd.year())) + "-" + two(static_cast<unsigned>(ymd.month())) + "-" +
                       two(static_cast<unsigned>(ymd.day()))});
  }
  return out;
}

/// Hours, rounded to 0.01.
json::Value hours(TimeMs ms) { return json::Value(std::round(static_cast<double>(ms) / 36000.0) / 100.0); }

json::Value period_json(const PeriodStats& stats, json::Value out = json::Value::object()) {
  out.set("created", stats.created);
  out.set("completed", stats.completed);
  if (stats.cycle_p50) out.set("cycleP50H", hours(*stats.cycle_p50));
  if (stats.cycle_p90) out.set("cycleP90H", hours(*stats.cycle_p90));
  if (stats.started > 0) {
    out.set("started", stats.started);
    if (stats.work_p50) out.set("workP50H", hours(*stats.work_p50));
    if (stats.work_p90) out.set("workP90H", hours(*stats.work_p90));
  }
  return out;
}

struct StatsArgs {
  std::string period;
  std::int64_t count = 0;
};

Result<Reply> stats(Context& context, const StatsArgs& args) {
  const std::string& kind = args.period;
  std::vector<Period> periods = calendar_periods(context.now(), kind, static_cast<int>(args.count));
  std::vector<StatsPeriod> ranges;
  for (const auto& period : periods) ranges.push_back(period.range);
  CT_TRY_ASSIGN(std::vector<PeriodStats> results, context.db().period_stats(ranges));
  json::Value rows = json::Value::array();
  for (std::size_t i = 0; i < periods.size(); ++i) {
    json::Value row = json::Value::object();
    row.set("period", periods[i].label);
    rows.push_back(period_json(results[i], std::move(row)));
  }
  json::Value data = json::Value::object();
  data.set("period", kind);
  data.set("from", format_iso8601(periods.front().range.start));
  data.set("periods", std::move(rows));
  data.set("total", period_json(results.back()));
  return Reply::of(std::move(data));
}

// ---- system.metrics --------------------------------------------------------------------------

json::Value millis(double ms) { return json::Value(std::round(ms * 1000.0) / 1000.0); }

struct MetricsArgs {
  std::optional<std::string> operation;
};

Result<Reply> metrics(Context&, const MetricsArgs& args) {
  std::vector<OperationMetrics> rows = CallMetrics::global().snapshot();
  if (const auto& prefix = args.operation)
    std::erase_if(rows, [&](const OperationMetrics& row) { return !row.operation.starts_with(*prefix); });
  std::stable_sort(rows.begin(), rows.end(),
                   [](const OperationMetrics& a, const OperationMetrics& b) { return a.calls > b.calls; });
  json::Value list = json::Value::array();
  std::int64_t calls = 0;
  std::int64_t errors = 0;
  for (const auto& row : rows) {
    json::Value item = json::Value::object();
    item.set("op", row.operation);
    item.set("calls", row.calls);
    item.set("errors", row.errors);
    item.set("p50Ms", millis(row.p50_ms));
    item.set("p95Ms", millis(row.p95_ms));
    list.push_back(std::move(item));
    calls += row.calls;
    errors += row.errors;
  }
  json::Value data = json::Value::object();
  data.set("calls", calls);
  data.set("errors", errors);
  data.set("operations", std::move(list));
  return Reply::noted(std::move(data), no_data_if(rows.empty()));
}

}  // namespace

void register_system_dash(Registry& registry) {
  const auto dash_args =
      bind(field(&DashArgs::next, {.name = "next", .type = ParamType::Int, .default_json = "3", .min = 0, .max = 20,
                                   .description = "Next-task suggestions to show"}),
           field(&DashArgs::recent, {.name = "recent", .type = ParamType::Int, .default_json = "5", .min = 0, .max = 50,
                                     .description = "Recent audit rows to show"}));
  registry.add({.domain = "system", .name = "dash", .gateway = Gateway::Query,
                .summary = "Counts, claims, next, changes",
                .params = dash_args.specs(),
                .returns = "{counts{<status>:n,total}, sessions?[{id,name?,scope,focus?}], moreSessions?, "
                           "focus?[{id,title,session?,agent?,leaseEnds?,lapsed?}], next?[{id,title,priority,score}], recent?[line]}",
                .examples = {{R"({})", "the project at a glance"}, {R"({"next":5,"recent":0})", "more suggestions, no history"}},
                .idempotent = true, .tier = 0, .shortcut = "dash", .text_view = TextView::Dashboard,
                .handler = dash_args.handler(dash)});
  const auto stats_args =
      bind(field(&StatsArgs::period, {.name = "period", .type = ParamType::Enum, .default_json = R"("week")",
                                      .choices = {"day", "week", "month"},
                                      .description = "Length of a period (UTC; ISO weeks)"}),
           field(&StatsArgs::count, {.name = "count", .type = ParamType::Int, .default_json = "8", .min = 1, .max = 366,
                                     .description = "Periods to report, ending with the current one"}));
  registry.add({.domain = "system", .name = "stats", .gateway = Gateway::Query,
                .summary = "Throughput and cycle time per day, week or month",
                .params = stats_args.specs(),
                .returns = "{period, from, periods[{period, created, completed, cycleP50H?, cycleP90H?, started?, "
                           "workP50H?, workP90H?}], total{…}}: cycle = created→completed, work = first start→completed, "
                           "in hours",
                .examples = {{R"({})", "the last eight weeks"}, {R"({"period":"month","count":12})", "a year by month"}},
                .idempotent = true, .tier = 2, .handler = stats_args.handler(stats)});
  const auto metrics_args =
      bind(field(&MetricsArgs::operation, {.name = "operation", .type = ParamType::String, .max = 60,
                                           .description = "Only operations starting with this, e.g. tasks or tasks.add"}));
  registry.add({.domain = "system", .name = "metrics", .gateway = Gateway::Query,
                .summary = "Calls, errors and latency per operation since this server started",
                .params = metrics_args.specs(),
                .returns = "{calls, errors, operations[{op, calls, errors, p50Ms, p95Ms}]} busiest first; "
                           "E_NO_DATA note before the first call",
                .examples = {{R"({})", "every operation called so far"}, {R"({"operation":"tasks"})", "the tasks domain"}},
                .idempotent = true, .needs_project = false, .tier = 2, .handler = metrics_args.handler(metrics)});
}

}  // namespace ct
