// system domain — operations: the dashboard, throughput statistics, call metrics, and the store's
// upkeep (restore from a backup, schema migration, housekeeping of idempotency keys and the
// audit trail).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <system_error>

#include "core/text.h"
#include "domains/context.h"
#include "domains/metrics.h"
#include "domains/params.h"
#include "domains/pipeline.h"
#include "domains/registry.h"
#include "engines/store/audit_chain.h"
#include "engines/store/backups.h"
#include "engines/store/open/open_store.h"
#include "engines/rules/task_engine.h"
#include "engines/store/task_json.h"

namespace ct {
namespace {

namespace fs = std::filesystem;

constexpr TimeMs kDayMs = 24LL * 3600 * 1000;
/// Idempotency keys are honoured for 24 hours (the router's window); gc forgets older ones.
constexpr TimeMs kIdempotencyWindowMs = kDayMs;

// ---- backups ---------------------------------------------------------------------------------

/// A safety copy of the live store before it is replaced or migrated (.cleo/backups/safety/,
/// out of reach of backup.keep).
Result<fs::path> safety_backup(const Project& project, TimeMs now, std::string_view note) {
  CT_TRY_ASSIGN(fs::path file, reserve_backup_path(project.safety_backups_dir(), now, note));
  if (auto copied = project_store(project)->copy_to(file); !copied) {
    std::error_code ec;
    fs::remove(file, ec);
    return std::unexpected(std::move(copied.error()));
  }
  return file;
}

/// A backup's name as restore takes it: the file name in .cleo/backups/, safety/<name> for a
/// safety backup.
std::string backup_name(const BackupFile& backup) {
  return (backup.safety ? "safety/" : "") + backup.path.filename().string();
}

json::Value counts_json(const StoreCounts& counts) {
  json::Value out = json::Value::object();
  out.set("tasks", counts.tasks);
  out.set("auditRows", counts.audit_rows);
  return out;
}

/// Removes a temporary database and its WAL files when the call ends, whatever happens (unless
/// released: the file was given another name).
class TempDatabase {
 public:
  explicit TempDatabase(fs::path path) : path_(std::move(path)) { remove(); }
  ~TempDatabase() { remove(); }
  TempDatabase(const TempDatabase&) = delete;
  TempDatabase& operator=(const TempDatabase&) = delete;
  const fs::path& path() const { return path_; }
  void release() { released_ = true; }

 private:
  void remove() {
    std::error_code ec;
    if (!released_) fs::remove(path_, ec);
    for (const char* suffix : {"-wal", "-shm", "-journal"}) fs::remove(path_.string() + suffix, ec);
  }
  fs::path path_;
  bool released_ = false;
};

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

Result<Reply> dash(Context& context, const Params& params) {
  Store& db = context.db();
  json::Value data = json::Value::object();

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
  data.set("counts", std::move(counts));

  // Active sessions and what each is working on; the sessionless focus too.
  constexpr std::int64_t kShownSessions = 10;
  SessionQuery active;
  active.statuses = {SessionStatus::Active};
  active.limit = kShownSessions;
  CT_TRY_ASSIGN(std::vector<Session> sessions, db.list_sessions(active));
  json::Value session_list = json::Value::array();
  std::vector<std::pair<std::string, std::string>> focused;  // task id, session label
  for (const auto& session : sessions) {
    json::Value item = json::Value::object();
    item.set("id", session.id);
    if (!session.name.empty()) item.set("name", session.name);
    item.set("scope", session.scope);
    CT_TRY_ASSIGN(std::optional<std::string> focus, db.get_focus(session.id));
    if (focus) {
      item.set("focus", *focus);
      focused.emplace_back(*focus, session.name.empty() ? session.id : session.name);
    }
    session_list.push_back(std::move(item));
  }
  if (!session_list.empty()) data.set("sessions", std::move(session_list));
  if (std::ssize(sessions) == kShownSessions) {
    CT_TRY_ASSIGN(std::int64_t all, db.count_sessions(SessionQuery{.statuses = {SessionStatus::Active}}));
    if (all > kShownSessions) data.set("moreSessions", all - kShownSessions);
  }
  CT_TRY_ASSIGN(std::optional<std::string> own_focus, db.get_focus(""));
  if (own_focus) focused.emplace_back(*own_focus, "");
  if (!focused.empty()) {
    std::vector<std::string> ids;
    for (const auto& [id, label] : focused) ids.push_back(id);
    CT_TRY_ASSIGN(std::vector<Task> tasks, db.get_tasks(ids));
    json::Value focus_list = json::Value::array();
    for (const auto& [id, label] : focused) {
      auto task = std::find_if(tasks.begin(), tasks.end(), [&](const Task& t) { return t.id == id; });
      if (task == tasks.end()) continue;
      json::Value item = json::Value::object();
      item.set("id", task->id);
      item.set("title", task->title);
      if (!label.empty()) item.set("session", label);
      focus_list.push_back(std::move(item));
    }
    if (!focus_list.empty()) data.set("focus", std::move(focus_list));
  }

  // tasks.next's ranking.
  TaskEngine engine(db, *context.config, context.now(), context.session, nullptr);
  CT_TRY_ASSIGN(std::vector<ScoredTask> picks, engine.next(static_cast<int>(params.integer("next"))));
  if (!picks.empty()) {
    json::Value next = json::Value::array();
    for (const auto& pick : picks) {
      json::Value item = task_suggestion(pick.task);
      item.set("score", pick.score);
      next.push_back(std::move(item));
    }
    data.set("next", std::move(next));
  }

  AuditQuery recent;
  recent.limit = params.integer("recent");
  CT_TRY_ASSIGN(std::vector<AuditEntry> rows, db.read_audit(recent));
  if (!rows.empty()) {
    json::Value lines = json::Value::array();
    for (const auto& row : rows) lines.push_back(activity_line(row));
    data.set("recent", std::move(lines));
  }
  return Reply{std::move(data), {}, {}, {}};
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

Result<Reply> stats(Context& context, const Params& params) {
  const std::string& kind = params.str("period");
  std::vector<Period> periods = calendar_periods(context.now(), kind, static_cast<int>(params.integer("count")));
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
  return Reply{std::move(data), {}, {}, {}};
}

// ---- system.metrics --------------------------------------------------------------------------

json::Value millis(double ms) { return json::Value(std::round(ms * 1000.0) / 1000.0); }

Result<Reply> metrics(Context&, const Params& params) {
  std::vector<OperationMetrics> rows = CallMetrics::global().snapshot();
  if (auto prefix = params.opt_str("operation"))
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
  Reply reply{std::move(data), {}, {}, {}};
  if (rows.empty()) reply.note = ErrorCode::NoData;
  return reply;
}

// ---- system.restore --------------------------------------------------------------------------

Advice restore_call(std::string_view file) {
  return call("system.restore", {{"file", file}, {"dryRun", true}});
}

/// A backup made ready to restore: copied privately, integrity-checked, migrated to this
/// binary's schema, counted and its audit chain verified. The backup itself is only read.
struct PreparedBackup {
  fs::path file;
  std::unique_ptr<TempDatabase> copy;
  std::int64_t schema_version = 0;
  json::Value counts;
  std::optional<std::int64_t> broken;  // first audit row that does not verify
  std::int64_t anchor = 0;             // the backup's audit anchor (0: not compacted)
};

Error refused(const fs::path& file, std::string why, Advice fix) {
  return Error(ErrorCode::FileError, "refusing to restore " + file.filename().string() + ": " + std::move(why))
      .with_fix(std::move(fix))
      .with_detail("file", file.string());
}

Result<PreparedBackup> prepare_backup(const Project& project, const fs::path& file) {
  const Advice other_fix =
      "pick another backup (" + call("system.health") + " checks the live store; ls .cleo/backups/ lists the backups)";
  PreparedBackup out;
  out.file = file;
  // Restores (dry runs too) run one at a time per process (the store's write lock, or recovery
  // of a store nobody can open), so one copy name per process is enough.
  out.copy = std::make_unique<TempDatabase>(project.cleo_dir() / (".restore-" + std::to_string(::getpid()) + ".db"));
  if (auto copied = copy_backup_file(file, out.copy->path()); !copied)
    return fail(refused(file, "it is not a readable SQLite database (" + copied.error().message + ")", other_fix));
  auto info = inspect_backup_file(out.copy->path(), /*check=*/true);
  if (!info) return fail(refused(file, info.error().message, other_fix));
  const std::int64_t ours = store_schema_version();
  if (info->schema_version == 0) return fail(refused(file, "it holds no CLEO task database", other_fix));
  if (info->schema_version > ours)
    return fail(refused(file,
                        "it was written by a newer ct (schema version " + std::to_string(info->schema_version) +
                            ", this binary knows " + std::to_string(ours) + ")",
                        "install the latest ct and restore with it"));
  if (!info->problems.empty())
    return fail(refused(file, "it fails the integrity check (" + info->problems.front() + ")", other_fix)
                    .with_detail("problems", json::Value::array_of(info->problems)));
  out.schema_version = info->schema_version;
  // Opening migrates the copy to this binary's schema.
  auto store = open_backup_file(out.copy->path());
  if (!store) return fail(refused(file, store.error().message, other_fix));
  CT_TRY((*store)->begin(TxKind::Read));
  auto counted = (*store)->counts();
  auto chain = verify_audit_chain(**store);
  auto anchor = (*store)->audit_anchor();
  (*store)->rollback();
  if (anchor && *anchor) out.anchor = (*anchor)->seq;
  if (!counted) return fail(refused(file, counted.error().message, other_fix));
  if (!chain) return fail(refused(file, chain.error().message, other_fix));
  out.counts = counts_json(*counted);
  out.broken = chain->first_broken;
  return out;
}

/// The backup named by the caller: a name in .cleo/backups/ (safety/<name> for a safety backup),
/// or — from a person at the command line, or where security.allowOutsideProject is set — the
/// absolute path of a backup file elsewhere. A live store (another project's .cleo/tasks.db) is
/// never read as a backup.
Result<fs::path> named_backup(Context& context, const Project& project, const std::string& wanted) {
  const fs::path dir = project.backups_dir();
  std::vector<std::string> names;
  for (const auto& backup : list_backups(project)) names.push_back(backup_name(backup));
  std::error_code ec;
  fs::path given(wanted);
  if (given.is_absolute()) {
    fs::path resolved = fs::weakly_canonical(given, ec);
    const fs::path cleo = fs::weakly_canonical(project.cleo_dir(), ec);
    const bool inside = !ec && resolved.lexically_relative(cleo).native().rfind("..", 0) != 0 &&
                        !resolved.lexically_relative(cleo).empty();
    if (!inside && !context.may_leave_project())
      return fail(Error(ErrorCode::InvalidInput, given.string() + " is outside this project; this caller may restore "
                                                                  "only backups in " + dir.string())
                      .with_fix(names.empty() ? call("system.backup") + " makes one" : restore_call(names.front()))
                      .with_detail("field", "file")
                      .with_detail("valid", json::Value::array_of(names)));
    if (!fs::is_regular_file(given, ec))
      return fail(Error(ErrorCode::NotFound, "no backup file at " + given.string())
                      .with_fix("check the path, or name a backup in " + dir.string())
                      .with_detail("field", "file")
                      .with_detail("valid", json::Value::array_of(names)));
    if (resolved.filename() == "tasks.db" && resolved.parent_path().filename() == ".cleo")
      return fail(Error(ErrorCode::InvalidInput, given.string() + " is a live task store, not a backup")
                      .with_fix(fs::equivalent(given, project.db_path(), ec)
                                    ? Advice("name a backup in " + dir.string())
                                    : "back that project up (" + call("system.backup") +
                                          " there), then restore the backup it writes")
                      .with_detail("field", "file"));
    return given;
  }
  // A relative name is looked up in .cleo/backups/ (or its safety/ folder) and may not leave it.
  fs::path inside = (dir / given).lexically_normal();
  if (inside.parent_path() != dir.lexically_normal() && inside.parent_path() != project.safety_backups_dir().lexically_normal())
    return fail(Error(ErrorCode::InvalidInput, "'" + wanted + "' is outside " + dir.string() +
                                                   "; restore reads backups from there only")
                    .with_fix("name a backup file there, or give the absolute path of another backup file")
                    .with_detail("field", "file")
                    .with_detail("valid", json::Value::array_of(names)));
  if (!fs::is_regular_file(inside, ec)) {
    Error error(ErrorCode::NotFound, "no backup named '" + wanted + "' in " + dir.string());
    error.fix = names.empty() ? call("system.backup") + " makes one" : restore_call(names.front());
    return fail(std::move(error).with_detail("field", "file").with_choices(wanted, names));
  }
  return inside;
}

/// The audit archives (system.gc) that do not belong to a trail compacted up to `anchor_seq`
/// (0: not compacted): after a restore they hold rows of the replaced trail.
std::vector<fs::path> foreign_archives(const Project& project, std::int64_t anchor_seq) {
  std::vector<fs::path> out;
  std::error_code ec;
  const fs::path dir = project.cleo_dir() / "audit-archive";
  if (!fs::is_directory(dir, ec)) return out;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (!entry.is_regular_file(ec) || entry.path().extension() != ".jsonl") continue;
    auto report = verify_audit_archive(entry.path());
    if (!report || report->to > anchor_seq) out.push_back(entry.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string compact_stamp(TimeMs now) {
  std::string stamp = format_iso8601(now);
  std::erase_if(stamp, [](char c) { return c == '-' || c == ':'; });
  return stamp;
}

/// Moves the replaced trail's archives into .cleo/audit-archive/replaced-<stamp>/: kept, never
/// deleted, but out of the way of the restored trail's chain (and of its next system.gc).
Result<json::Value> set_archives_aside(const Project& project, const std::vector<fs::path>& files, TimeMs now) {
  json::Value moved = json::Value::array();
  if (files.empty()) return moved;
  const fs::path aside = project.cleo_dir() / "audit-archive" / ("replaced-" + compact_stamp(now));
  std::error_code ec;
  fs::create_directories(aside, ec);
  if (ec) return fail(Error(ErrorCode::FileError, "cannot create " + aside.string() + ": " + ec.message()));
  for (const auto& file : files) {
    fs::rename(file, aside / file.filename(), ec);
    if (ec)
      return fail(Error(ErrorCode::FileError, "cannot move " + file.string() + " aside: " + ec.message())
                      .with_fix("move it out of .cleo/audit-archive/ by hand, then run validate.audit {archives:true}"));
    moved.push_back(".cleo/audit-archive/" + aside.filename().string() + "/" + file.filename().string());
  }
  return moved;
}

/// Recovery of a store nobody can open (missing, empty, corrupt): the backend moves it aside into
/// .cleo/damaged/, never deleting it, and the prepared copy takes its place whole.
Result<json::Value> replace_damaged_store(const Project& project, PreparedBackup& prepared, TimeMs now) {
  json::Value data = json::Value::object();
  CT_TRY_ASSIGN(std::string aside,
                project_store(project)->replace_with_backup(prepared.copy->path(), project.cleo_dir() / "damaged", now));
  prepared.copy->release();
  if (!aside.empty()) data.set("movedAside", ".cleo/damaged/" + aside);
  return data;
}

/// system.restore. With a store that opens, its rows are replaced inside this call's write
/// transaction; with one that does not (the router runs this handler without a store), the
/// damaged file is moved aside and the backup takes its place. Without `file`, the newest backup
/// that passes every check is used, in either case.
Result<Reply> restore(Context& context, const Params& params) {
  const Project& project = *context.project;
  const bool recovering = context.store == nullptr;
  std::vector<std::string> warnings;
  std::optional<PreparedBackup> prepared;
  if (auto wanted = params.opt_str("file")) {
    CT_TRY_ASSIGN(fs::path file, named_backup(context, project, *wanted));
    CT_TRY_ASSIGN(PreparedBackup ready, prepare_backup(project, file));
    prepared = std::move(ready);
  } else {
    std::vector<BackupFile> backups = list_backups(project);
    if (backups.empty())
      return fail(Error(ErrorCode::NotFound, "there are no backups in " + project.backups_dir().string())
                      .with_fix(recovering ? "with no backup, " + call("system.init") +
                                                 " starts an empty store (move .cleo/tasks.db aside first)"
                                           : call("system.backup") +
                                                 " makes one; or pass the absolute path of a backup file as `file`"));
    for (const auto& backup : backups) {
      auto ready = prepare_backup(project, backup.path);
      if (ready) {
        prepared = std::move(*ready);
        break;
      }
      warnings.push_back("skipped " + backup_name(backup) + ": " + ready.error().message);
    }
    if (!prepared)
      return fail(Error(ErrorCode::NotFound, "no backup in " + project.backups_dir().string() +
                                                 " passes the checks (" + std::to_string(backups.size()) + " tried)")
                      .with_fix("restore a backup file from elsewhere by its absolute path (ct restore /path/to/backup.db)")
                      .with_detail("skipped", json::Value::array_of(warnings)));
  }

  const fs::path& file = prepared->file;
  json::Value data = json::Value::object();
  const bool safety = file.parent_path() == project.safety_backups_dir();
  data.set("file", (safety ? "safety/" : "") + file.filename().string());
  if (file.parent_path() != project.backups_dir() && !safety) data.set("path", file.string());
  data.set("schemaVersion", prepared->schema_version);
  for (auto& [key, value] : prepared->counts.as_object()) data.set(key, value);
  if (prepared->schema_version < store_schema_version()) data.set("migratedTo", store_schema_version());
  if (prepared->broken)
    warnings.push_back("the backup's audit trail does not verify from row " + std::to_string(*prepared->broken) +
                       " (it is restored as it is; validate.audit will report it)");
  std::optional<StoreCounts> live;
  if (recovering) {
    data.set("recovered", true);
    data.set("damaged", context.store_error ? context.store_error->message : "the store cannot be opened");
  } else {
    CT_TRY_ASSIGN(StoreCounts counted, context.db().counts());
    live = counted;
    data.set("current", counts_json(counted));
  }

  const std::vector<fs::path> foreign = foreign_archives(project, prepared->anchor);
  if (params.flag("dryRun")) {
    data.set("dryRun", true);
    if (!foreign.empty()) {
      json::Value names = json::Value::array();
      for (const auto& f : foreign) names.push_back(f.filename().string());
      data.set("archivesSetAside", std::move(names));
    }
    return Reply{std::move(data), std::move(warnings), {}, {}};
  }
  if (recovering) {
    CT_TRY_ASSIGN(json::Value moved, replace_damaged_store(project, *prepared, context.now()));
    for (auto& [key, value] : moved.as_object()) data.set(key, value);
  } else {
    CT_TRY_ASSIGN(fs::path safety_copy, safety_backup(project, context.now(), "pre-restore"));
    data.set("safetyBackup", "safety/" + safety_copy.filename().string());
    // Row by row inside this call's write transaction: other processes see the old store or the
    // restored one, never a mix, and the audit row of this call is chained to the restored trail.
    CT_TRY(context.db().replace_contents_from(prepared->copy->path()));
  }
  CT_TRY_ASSIGN(json::Value aside, set_archives_aside(project, foreign, context.now()));
  if (!aside.empty()) data.set("archivesSetAside", std::move(aside));
  json::Value after = prepared->counts;
  after.set("file", data["file"]);
  context.record(FieldChange{"", "store", live ? counts_json(*live) : json::Value("damaged"), std::move(after)});
  return Reply{std::move(data), std::move(warnings), {}, {}};
}

// ---- system.migrate --------------------------------------------------------------------------

json::Value steps_json(const std::vector<MigrationStep>& steps) {
  json::Value out = json::Value::array();
  for (const auto& step : steps) {
    json::Value item = json::Value::object();
    item.set("version", step.version);
    item.set("description", step.description);
    out.push_back(std::move(item));
  }
  return out;
}

/// Runs without the router opening the store (which would migrate it on open): it reads the
/// schema version first, so a dry run can list what is pending, and a real run backs up first.
Result<Reply> migrate(Context& context, const Params& params) {
  CT_TRY_ASSIGN(Project project, find_project(context.project_dir));
  std::unique_ptr<StoreBackend> backend = project_store(project);
  auto info = backend->inspect(/*check=*/false);
  if (!info && info.error().code == ErrorCode::NotFound)
    return fail(Error(ErrorCode::NotInitialized, "no task database at " + backend->location())
                    .with_fix(call("system.init")));
  if (!info) return std::unexpected(std::move(info.error()));
  const std::int64_t from = info->schema_version;
  const std::int64_t target = store_schema_version();
  if (from == 0)
    return fail(Error(ErrorCode::NotInitialized, backend->location() + " holds no CLEO task database")
                    .with_fix(call("system.init")));
  if (from > target)
    return fail(Error(ErrorCode::FileError, backend->location() + " has schema version " + std::to_string(from) +
                                                ", newer than this ct knows (" + std::to_string(target) +
                                                "); ct never migrates a store backwards")
                    .with_fix("install the latest ct; or restore a backup written by this version: " +
                              call("system.restore", {{"dryRun", true}}))
                    .with_detail("schemaVersion", from)
                    .with_detail("supported", target));
  std::vector<MigrationStep> pending = backend->migrations();
  std::erase_if(pending, [&](const MigrationStep& step) { return step.version <= from; });
  json::Value data = json::Value::object();
  data.set("from", from);
  data.set("to", target);
  if (pending.empty()) {
    data.set("applied", json::Value::array());
    return Reply{std::move(data), {"the store is at schema version " + std::to_string(target) + ": nothing to migrate"},
                 {}, ErrorCode::NoChange};
  }
  if (params.flag("dryRun")) {
    data.set("dryRun", true);
    data.set("pending", steps_json(pending));
    return Reply{std::move(data), {}, {}, {}};
  }
  CT_TRY_ASSIGN(fs::path backup, safety_backup(project, context.now(), "pre-migrate-v" + std::to_string(from)));
  CT_TRY_ASSIGN(Config config, Config::load(project.config_path()));
  CT_TRY_ASSIGN(std::unique_ptr<Store> store, backend->open(store_options(config)));
  // The router audits only calls that run in its own transaction; this one records itself.
  CT_TRY(pipeline::append_own_audit(*store, context, "system.migrate", params.json(),
                                    {FieldChange{"", "schemaVersion", json::Value(from), json::Value(target)}}));
  data.set("applied", steps_json(pending));
  data.set("safetyBackup", "safety/" + backup.filename().string());
  return Reply{std::move(data), {}, {}, {}};
}

// ---- system.gc -------------------------------------------------------------------------------

std::string padded(std::int64_t seq) {
  std::string text = std::to_string(seq);
  return std::string(text.size() < 6 ? 6 - text.size() : 0, '0') + text;
}

Result<Reply> gc(Context& context, const Params& params) {
  Store& db = context.db();
  const bool dry = params.flag("dryRun");
  const TimeMs now = context.now();
  json::Value data = json::Value::object();
  if (dry) data.set("dryRun", true);
  CT_TRY_ASSIGN(std::int64_t keys, db.expire_idempotent(now - kIdempotencyWindowMs, dry));
  data.set("idempotencyKeys", keys);
  bool changed = keys > 0;

  const std::int64_t retention = context.config->get_int("audit.retentionDays");
  json::Value audit = json::Value::object();
  audit.set("retentionDays", retention);
  CT_TRY_ASSIGN(std::optional<AuditAnchor> anchor, db.audit_anchor());
  const std::int64_t archived_before = anchor ? anchor->seq : 0;
  std::int64_t upto = 0;
  if (retention > 0) {
    const TimeMs cutoff = now - retention * kDayMs;
    audit.set("before", format_iso8601(cutoff));
    CT_TRY_ASSIGN(upto, db.last_audit_seq_before(cutoff));
  }
  if (upto > archived_before) {
    fs::path dir = context.project->cleo_dir() / "audit-archive";
    AuditQuery first_row;
    first_row.ascending = true;
    first_row.limit = 1;
    CT_TRY_ASSIGN(std::vector<AuditEntry> first, db.read_audit(first_row));
    const std::int64_t from = first.empty() ? archived_before + 1 : first.front().seq;
    std::string name = "audit-" + padded(from) + "-" + padded(upto) + ".jsonl";
    audit.set("from", from);
    audit.set("to", upto);
    audit.set("archive", ".cleo/audit-archive/" + name);
    if (dry) {
      audit.set("rows", upto - from + 1);
    } else {
      // The rows reach the disk (fsynced) before any is deleted, and the archive is read back.
      CT_TRY_ASSIGN(ArchiveReport written, write_audit_archive(db, dir / name, anchor, upto));
      CT_TRY_ASSIGN(ArchiveReport check, verify_audit_archive(dir / name));
      if (check.first_broken || check.rows != written.rows || check.last_hash != written.last_hash ||
          check.previous != (anchor ? anchor->hash : ""))
        return fail(Error(ErrorCode::FileError, "the audit archive " + (dir / name).string() +
                                                    " did not read back intact; nothing was removed")
                        .with_fix("check the disk, then run system.gc again"));
      CT_TRY_ASSIGN(std::int64_t removed, db.compact_audit(AuditAnchor{upto, written.last_hash, name}));
      audit.set("rows", removed);
      changed = changed || removed > 0;
    }
  } else {
    audit.set("rows", 0);
  }
  if (anchor) audit.set("anchor", archived_before);
  data.set("audit", std::move(audit));
  if (dry) {
    return Reply{std::move(data), {}, {}, {}};
  }
  Reply reply{std::move(data), {}, {}, {}};
  if (!changed) reply.note = ErrorCode::NoChange;
  return reply;
}

}  // namespace

void register_system_ops(Registry& registry) {
  registry.add({.domain = "system", .name = "dash", .gateway = Gateway::Query,
                .summary = "Dashboard: task counts, sessions, focus, next tasks, recent changes",
                .params = {{.name = "next", .type = ParamType::Int, .default_json = "3", .min = 0, .max = 20,
                            .description = "Next-task suggestions to show"},
                           {.name = "recent", .type = ParamType::Int, .default_json = "5", .min = 0, .max = 50,
                            .description = "Recent audit rows to show"}},
                .returns = "{counts{<status>:n,total}, sessions?[{id,name?,scope,focus?}], moreSessions?, "
                           "focus?[{id,title,session?}], next?[{id,title,priority,score}], recent?[line]}",
                .examples = {{R"({})", "the project at a glance"}, {R"({"next":5,"recent":0})", "more suggestions, no history"}},
                .idempotent = true, .tier = 0, .shortcut = "dash", .handler = dash});
  registry.add({.domain = "system", .name = "stats", .gateway = Gateway::Query,
                .summary = "Throughput and cycle time per day, week or month",
                .params = {{.name = "period", .type = ParamType::Enum, .default_json = R"("week")",
                            .choices = {"day", "week", "month"}, .description = "Length of a period (UTC; ISO weeks)"},
                           {.name = "count", .type = ParamType::Int, .default_json = "8", .min = 1, .max = 366,
                            .description = "Periods to report, ending with the current one"}},
                .returns = "{period, from, periods[{period, created, completed, cycleP50H?, cycleP90H?, started?, "
                           "workP50H?, workP90H?}], total{…}}: cycle = created→completed, work = first start→completed, "
                           "in hours",
                .examples = {{R"({})", "the last eight weeks"}, {R"({"period":"month","count":12})", "a year by month"}},
                .idempotent = true, .tier = 2, .handler = stats});
  registry.add({.domain = "system", .name = "metrics", .gateway = Gateway::Query,
                .summary = "Calls, errors and latency per operation since this server started",
                .params = {{.name = "operation", .type = ParamType::String, .max = 60,
                            .description = "Only operations starting with this, e.g. tasks or tasks.add"}},
                .returns = "{calls, errors, operations[{op, calls, errors, p50Ms, p95Ms}]} busiest first; "
                           "E_NO_DATA note before the first call",
                .examples = {{R"({})", "every operation called so far"}, {R"({"operation":"tasks"})", "the tasks domain"}},
                .idempotent = true, .needs_project = false, .tier = 2, .handler = metrics});
  registry.add({.domain = "system", .name = "restore", .gateway = Gateway::Mutate,
                .summary = "Replace the store with a backup; recover a damaged or missing store",
                .params = {{.name = "file", .type = ParamType::String, .max = 4096,
                            .description = "Backup name in .cleo/backups/ (safety/<name> for a safety copy; default: "
                                           "the newest that passes every check), or an absolute path (CLI)",
                            .positional = true},
                           {.name = "dryRun", .type = ParamType::Bool, .default_json = "false",
                            .description = "Check the backup and report what would happen; change nothing", .dry_run = true}},
                .returns = "{file, schemaVersion, migratedTo?, tasks, auditRows, current?{tasks, auditRows}, "
                           "safetyBackup?, recovered?, damaged?, movedAside?, archivesSetAside?[file], dryRun?}: a live "
                           "store is copied to backups/safety/ and its rows replaced; a store that cannot be opened "
                           "(missing, empty, corrupt) is moved to .cleo/damaged/ and the backup takes its place",
                .errors = {ErrorCode::NotFound, ErrorCode::InvalidInput, ErrorCode::FileError},
                .examples = {{R"({"dryRun":true})", "what restoring the newest backup would do"},
                             {R"({"file":"tasks-20260101T000000Z-before-refactor.db"})", "restore a named backup"}},
                .destructive = true, .runs_on_damaged_store = true, .tier = 2, .shortcut = "restore",
                .handler = restore});
  registry.add({.domain = "system", .name = "migrate", .gateway = Gateway::Mutate,
                .summary = "Upgrade the store's schema to this version of ct (backs up first)",
                .params = {{.name = "dryRun", .type = ParamType::Bool, .default_json = "false",
                            .description = "List the pending steps; change nothing", .dry_run = true}},
                .returns = "{from, to, pending?[{version, description}], applied?[…], safetyBackup?, dryRun?}; "
                           "E_NO_CHANGE note when already current",
                .errors = {ErrorCode::FileError, ErrorCode::StoreUnavailable, ErrorCode::NotInitialized},
                .examples = {{R"({"dryRun":true})", "what an upgrade would change"}, {R"({})", "upgrade now"}},
                .idempotent = true, .needs_project = false, .tier = 2, .shortcut = "migrate", .handler = migrate});
  registry.add({.domain = "system", .name = "gc", .gateway = Gateway::Mutate,
                .summary = "Expire idempotency keys; archive audit rows past audit.retentionDays",
                .params = {{.name = "dryRun", .type = ParamType::Bool, .default_json = "false",
                            .description = "Report what would be removed; change nothing", .dry_run = true}},
                .returns = "{idempotencyKeys, audit{retentionDays, before?, rows, from?, to?, archive?, anchor?}, "
                           "dryRun?}; E_NO_CHANGE note when nothing was due",
                .errors = {ErrorCode::FileError},
                .examples = {{R"({"dryRun":true})", "what housekeeping would remove"}, {R"({})", "clean up now"}},
                .idempotent = true, .tier = 2, .shortcut = "gc", .handler = gc});
}

}  // namespace ct
