// tasks.import of the original CLEO's store (domains/tasks/import_records.h): its tasks keep their
// ids, states and times; its sessions become sessions here and its config keys this project's; its
// memory comes through import_original_memory.cpp. References to what the store does not hold
// are refused, or with skipInvalid dropped and said; everything lands in the call's transaction
// and its one audit row, which tasks.undo takes back whole.
#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "core/json_parse.h"
#include "core/text.h"
#include "domains/tasks/import_records.h"
#include "domains/tasks/tasks_common.h"
#include "engines/rules/session_engine.h"

namespace ct::tasks {
namespace {

/// A record that keeps its id as the task it becomes: its type (`type`, already resolved), its
/// status (active is pending: a claim is made with tasks.start here), and its times made
/// consistent — a done task has its completion time, a cancelled one its cancellation, an
/// archived one the time it was archived, none earlier than its creation and the archive time
/// no earlier than the last change (each adjustment counted in `adjusted`).
Task kept_task(const ImportRecord& record, TaskType type, std::int64_t& adjusted) {
  Task task;
  task.id = record.id;
  task.title = record.task.title;
  task.description = record.task.description;
  task.priority = record.task.priority;
  task.type = type;
  task.parent = record.parent;
  task.depends = record.depends;
  task.relates = record.relates;
  task.labels = record.task.labels;
  task.acceptance = record.task.acceptance;
  task.files = record.task.files;
  task.phase = record.task.phase;
  task.size = record.task.size;
  task.status = record.status == TaskStatus::Active ? TaskStatus::Pending : record.status;
  if (task.status == TaskStatus::Blocked)
    task.blocked_by = record.task.blocked_by.empty() ? "blocked in the original CLEO" : record.task.blocked_by;
  task.created_at = record.created_at;
  auto raise = [&](TimeMs& time) {
    if (time < task.created_at) {
      time = task.created_at;
      ++adjusted;
    }
  };
  task.updated_at = record.updated_at.value_or(task.created_at);
  raise(task.updated_at);
  for (const auto& note : record.task.notes) task.notes.push_back({note.at ? note.at : task.created_at, note.text});
  if (task.status == TaskStatus::Done) {
    if (!record.completed_at) ++adjusted;
    TimeMs completed = record.completed_at.value_or(task.updated_at);
    raise(completed);
    task.completed_at = completed;
  }
  if (task.status == TaskStatus::Cancelled) {
    if (!record.cancelled_at) ++adjusted;
    TimeMs cancelled = record.cancelled_at.value_or(task.updated_at);
    raise(cancelled);
    task.cancelled_at = cancelled;
    task.cancellation_reason =
        record.cancellation_reason.empty() ? std::string("cancelled in the original CLEO") : record.cancellation_reason;
  }
  for (const auto& closed : {task.completed_at, task.cancelled_at})
    if (closed && *closed > task.updated_at) task.updated_at = *closed;
  if (record.archived) {
    task.archived = true;
    TimeMs archived = record.archived_at.value_or(task.updated_at);
    if (archived < task.updated_at) {
      archived = task.updated_at;
      ++adjusted;
    }
    task.archived_at = archived;
    task.archive_reason = record.archive_reason;
  }
  return task;
}

/// The type each record keeps: the one it gave (a subtask without a parent is a task), else what
/// its parent makes it — a task under an epic, a subtask under anything else, a task at the top.
std::vector<TaskType> kept_types(const std::vector<ImportRecord>& records) {
  std::map<std::string, std::size_t> at;
  for (std::size_t i = 0; i < records.size(); ++i) at.emplace(records[i].id, i);
  std::vector<std::optional<TaskType>> types(records.size());
  // Parent chains are loop-free (check_file_links) and short (hierarchy.maxDepth); the depth
  // bound only keeps a bug from recursing for ever.
  std::function<TaskType(std::size_t, int)> type_of = [&](std::size_t i, int depth) -> TaskType {
    if (types[i]) return *types[i];
    const ImportRecord& record = records[i];
    auto parent = record.parent.empty() ? at.end() : at.find(record.parent);
    TaskType type = TaskType::Task;
    if (record.given_type && !(record.given_type == TaskType::Subtask && record.parent.empty())) {
      type = *record.given_type;
    } else if (parent != at.end() && depth < 16) {
      type = type_of(parent->second, depth + 1) == TaskType::Epic ? TaskType::Task : TaskType::Subtask;
    }
    types[i] = type;
    return type;
  };
  std::vector<TaskType> out;
  for (std::size_t i = 0; i < records.size(); ++i) out.push_back(type_of(i, 0));
  return out;
}

/// The specs whose params a session record must pass: session.start's name and agent,
/// session.note's notes and nextAction.
struct SessionSpecs {
  const OperationSpec* start = nullptr;
  const OperationSpec* note = nullptr;
};

/// One of the original's sessions (original_store.h's session record) as a session of this store.
Result<Session> read_session(const json::Value& item, const SessionSpecs& specs, TimeMs now, Scope& scope) {
  auto refuse = [&](std::string_view field, std::string message, ErrorCode code = ErrorCode::Validation) {
    return fail(Error(code, std::move(message)).with_detail("field", std::string(field)));
  };
  if (!item.is_object()) return refuse("sessions", "a session must be an object", ErrorCode::InvalidParams);
  Session session;
  if (!item["id"].is_string()) return refuse("id", "id: missing; a session of the store has one");
  session.id = item["id"].as_string();
  const std::string status = item["status"].string_or_empty();
  auto parsed = parse_session_status(status);
  if (!parsed)
    return refuse("status", "status: expected one of active|suspended|ended|archived|orphaned, got " +
                                echo(item["status"].dump()));
  session.status = *parsed;
  auto checked_scope = parse_scope(item["scope"].string_or_empty());
  if (!checked_scope) return refuse("scope", "scope: " + checked_scope.error().message, checked_scope.error().code);
  scope = *checked_scope;
  session.scope = scope.text;
  auto text = [&](const OperationSpec& spec, std::string_view param, std::string_view field) -> Result<std::string> {
    const json::Value& value = item[field];
    if (value.is_null()) return std::string();
    auto checked = Params::check(spec, param, value);
    if (!checked)
      return refuse(field, std::string(field) + checked.error().message.substr(param.size()), checked.error().code);
    return checked->as_string();
  };
  CT_TRY_ASSIGN(session.name, text(*specs.start, "name", "name"));
  CT_TRY_ASSIGN(session.agent, text(*specs.start, "agent", "agent"));
  CT_TRY_ASSIGN(session.note, text(*specs.note, "notes", "note"));
  CT_TRY_ASSIGN(session.next_action, text(*specs.note, "nextAction", "nextAction"));
  auto time = [&](std::string_view field) -> Result<std::optional<TimeMs>> {
    const json::Value& value = item[field];
    if (value.is_null()) return std::optional<TimeMs>();
    auto at = value.is_string() ? parse_iso8601(trim(value.as_string())) : std::nullopt;
    if (!at || *at > now)
      return refuse(field, std::string(field) + ": expected a past ISO-8601 time, got " + echo(value.dump()));
    return at;
  };
  CT_TRY_ASSIGN(std::optional<TimeMs> created, time("createdAt"));
  if (!created) return refuse("createdAt", "createdAt: missing; every session of the store started once");
  session.created_at = *created;
  CT_TRY_ASSIGN(std::optional<TimeMs> updated, time("updatedAt"));
  session.updated_at = std::max(updated.value_or(*created), *created);
  CT_TRY_ASSIGN(session.ended_at, time("endedAt"));
  CT_TRY_ASSIGN(session.archived_at, time("archivedAt"));
  const bool over = session.status == SessionStatus::Ended || session.status == SessionStatus::Closed;
  if (over && !session.ended_at) session.ended_at = session.updated_at;
  if (!over) session.ended_at.reset();
  if (session.ended_at && *session.ended_at < session.created_at) session.ended_at = session.created_at;
  if (session.ended_at && *session.ended_at > session.updated_at) session.updated_at = *session.ended_at;
  if (session.archived_at && !over) session.archived_at.reset();
  return session;
}

/// The original's config keys with an equivalent here, applied where this project still has the
/// default (a value set here is kept, and said) — and only when a person imports (issue 52): another
/// project's rules are a person's to take, as the keys only people set are (an agent would switch
/// off what binds it, lifecycle.enforcement "off"). An agent's import applies none; each key it
/// left is a warning in `not_applied` that says how to set it (config_set_fix: the call for a key
/// anyone sets, what a person runs for one only people set).
/// Written to config.json after everything else, and not at all in a dry run; each applied key is
/// a `config.<key>` change of the call's audit row, which undo puts back.
Result<json::Value> apply_config(Context& context, const json::Value& mapped, std::vector<std::string>& warnings,
                                 std::vector<Advice>& not_applied) {
  json::Value applied = json::Value::object();
  if (!mapped.is_object() || mapped.empty()) return applied;
  Config updated = *context.config;
  std::vector<FieldChange> changes;
  for (const auto& [key, value] : mapped.as_object()) {
    const ConfigKey* spec = find_config_key(key);
    if (!spec) continue;
    const json::Value current = updated.get(key);
    if (current == value) continue;
    auto default_value = json::parse(spec->default_json);
    if (default_value && current != *default_value) {
      warnings.push_back("config " + key + ": kept this project's " + current.dump() + " (the original had " +
                         value.dump() + ")");
      continue;
    }
    if (!context.is_person()) {
      not_applied.push_back("config " + key + " " + value.dump() +
                            " not applied: another project's configuration is applied only when a person imports it; "
                            "to apply it, " + config_set_fix(key, value));
      continue;
    }
    if (auto set = updated.set(key, value); !set) {
      warnings.push_back("config " + key + " " + value.dump() + " not applied: " + set.error().message);
      continue;
    }
    applied.set(key, value);
    changes.push_back(FieldChange{"", "config." + key, current, value});
  }
  if (changes.empty()) return applied;
  if (!context.keeps_nothing) {
    CT_TRY(updated.save(context.project->config_path()));
    context.config_changed = true;
  }
  for (auto& change : changes) context.record(std::move(change));
  return applied;
}


/// The records' references to tasks the store does not hold, dropped (a parent: the task goes to
/// the top level).
void drop_dangling(std::vector<ImportRecord>& records, const std::set<std::string>& in_store, Dangling& dangling) {
  for (auto& record : records) {
    const std::string where = store_label("tasks", record.index, record.id);
    if (!record.parent.empty() && !in_store.contains(record.parent)) {
      dangling.add(where, "parent", record.parent);
      record.parent.clear();
    }
    std::erase_if(record.depends, [&](const std::string& dep) {
      if (in_store.contains(dep)) return false;
      dangling.add(where, "depends", dep);
      return true;
    });
    std::erase_if(record.relates, [&](const Relation& link) {
      if (in_store.contains(link.task_id)) return false;
      dangling.add(where, "relates", link.task_id);
      return true;
    });
  }
}

/// The original's sessions, each checked as its record is; one whose scope names a task the store
/// does not hold is left out (dangling). Invalid ones refuse the import, unless skipInvalid: then
/// they join `problems`.
Result<std::vector<Session>> read_sessions(Context& context, const ImportArgs& args, const json::Value& items,
                                           const std::set<std::string>& in_store, Dangling& dangling,
                                           json::Value& problems) {
  SessionSpecs specs{context.registry->find("session", "start"), context.registry->find("session", "note")};
  if (!specs.start || !specs.note) return fail(ErrorCode::Internal, "session.start or session.note is missing from the registry");
  std::vector<Session> sessions;
  json::Value session_problems = json::Value::array();
  std::map<std::string, std::string> given;  // this store's session id → the original's it was given for
  for (std::size_t i = 0; i < items.size(); ++i) {
    const json::Value& item = items.as_array()[i];
    Scope scope;
    auto session = read_session(item, specs, context.now(), scope);
    const std::string was = item["was"].string_or_empty();
    if (session) {
      auto [other, inserted] = given.emplace(session->id, was);
      if (!inserted)
        session = fail(Error(ErrorCode::Validation, "id: " + was + " and " + other->second + " both become " + session->id +
                                                        " here")
                           .with_detail("field", "id"));
    }
    if (!session) {
      json::Value problem = record_problem(i, json::Value(), session.error());
      problem.set("of", "sessions");
      if (!was.empty()) problem.set("id", was);
      session_problems.push_back(std::move(problem));
      continue;
    }
    bool complete = true;
    for (const auto& root : scope.ids)
      if (!in_store.contains(root)) {
        dangling.add(store_label("sessions", i, was), "scope", root);
        complete = false;
      }
    if (complete) sessions.push_back(std::move(*session));
  }
  if (!session_problems.empty() && !args.skip_invalid) {
    const json::Value& first = session_problems.as_array().front();
    return fail(Error(ErrorCode::Validation, "sessions: " + std::to_string(session_problems.size()) + " of " +
                                                 std::to_string(items.size()) + " sessions are invalid; first: " +
                                                 store_label("sessions", static_cast<std::size_t>(first["index"].as_int()),
                                                             first["id"].is_string() ? first["id"].as_string() : "") +
                                                 " " + first["message"].as_string())
                    .with_fix("correct them in the store, or pass skipInvalid:true to import without them: " +
                              call("tasks.import", {{"from", args.from.value_or("")}, {"skipInvalid", true}, {"dryRun", true}}))
                    .with_detail("field", "sessions")
                    .with_detail("records", std::move(session_problems)));
  }
  for (auto& problem : session_problems.as_array()) problems.push_back(std::move(problem));
  return sessions;
}

/// What placing the tasks tells the reply.
struct PlacedTasks {
  std::int64_t archived = 0;
  std::string last_id;  // the highest id: the counter moved past it
};

/// The records placed as tasks that keep their ids (TaskEngine::import_kept), their times made
/// consistent (said in a warning).
Result<PlacedTasks> place_tasks(Context& context, const std::vector<ImportRecord>& records,
                                std::vector<std::string>& warnings) {
  std::vector<TaskType> types = kept_types(records);
  std::vector<Task> tasks;
  std::int64_t adjusted = 0;
  PlacedTasks placed;
  for (std::size_t i = 0; i < records.size(); ++i) {
    tasks.push_back(kept_task(records[i], types[i], adjusted));
    if (tasks.back().archived) ++placed.archived;
    if (placed.last_id.empty() || *parse_task_id(tasks.back().id) > *parse_task_id(placed.last_id))
      placed.last_id = tasks.back().id;
  }
  if (adjusted > 0)
    warnings.push_back(std::to_string(adjusted) + " time(s) made consistent: a completion, cancellation or archive "
                                                  "time missing or earlier than the task's creation or last change");
  auto engine_ = engine(context);
  CT_TRY(engine_.import_kept(std::move(tasks)));
  return placed;
}

/// The sessions inserted, each a `session.<id>` change of the call's row (tasks.undo takes it
/// back); refused when one is here already (imported once before).
Result<void> insert_sessions(Context& context, const std::vector<Session>& sessions) {
  std::vector<std::string> taken;
  for (const auto& session : sessions) {
    CT_TRY_ASSIGN(std::optional<Session> existing, context.db().get_session(session.id));
    if (existing) taken.push_back(session.id);
  }
  if (!taken.empty())
    return fail(Error(ErrorCode::Validation, std::to_string(taken.size()) + " session(s) of the store are here already: " +
                                                  join(taken, ", ") + " (imported once before?)")
                    .with_fix("import into a store that holds none of them (a new project)")
                    .with_detail("taken", json::Value::array_of(taken)));
  for (const auto& session : sessions) {
    CT_TRY(context.db().insert_session(session));
    context.record(FieldChange{"", "session." + session.id, json::Value(), session_record(session)});
  }
  return {};
}

}  // namespace

void Dangling::add(const std::string& where, std::string_view field, const std::string& missing) {
  json::Value item = json::Value::object();
  item.set("record", where);
  item.set("field", std::string(field));
  item.set("missing", missing);
  items_.push_back(std::move(item));
}

Result<void> Dangling::settle(const ImportArgs& args, std::vector<std::string>& warnings) const {
  if (items_.empty()) return {};
  const json::Value& first = items_.as_array().front();
  if (!args.skip_invalid) {
    constexpr std::size_t kListed = 50;
    json::Value listed = json::Value::array();
    for (std::size_t i = 0; i < items_.size() && i < kListed; ++i) listed.push_back(items_.as_array()[i]);
    const bool files = std::ranges::any_of(items_.as_array(), [](const json::Value& item) {
      return item["field"] == json::Value("files");
    });
    return fail(Error(ErrorCode::Validation,
                      std::to_string(items_.size()) + " reference(s) name tasks the store does not hold" +
                          (files ? " or files outside the project" : "") + "; first: " +
                          first["record"].as_string() + " " + first["field"].as_string() + " " +
                          first["missing"].as_string())
                    .with_fix("put those tasks back in the original first, or pass skipInvalid:true to import without "
                              "these references (each said): " +
                              call("tasks.import", {{"from", args.from.value_or("")}, {"skipInvalid", true}, {"dryRun", true}}))
                    .with_detail("field", "tasks")
                    .with_detail("references", std::move(listed))
                    .with_detail("count", static_cast<std::int64_t>(items_.size())));
  }
  constexpr std::size_t kSaid = 20;
  for (std::size_t i = 0; i < items_.size() && i < kSaid; ++i) {
    const json::Value& item = items_.as_array()[i];
    const std::string& field = item["field"].as_string();
    warnings.push_back(item["record"].as_string() + ": " + field + " " + item["missing"].as_string() +
                       (field == "files" ? " is outside the project; " : " is not in the store; ") +
                       (field == "parent" ? "placed at the top level"
                        : field == "scope" ? "the session is left out"
                                           : "dropped"));
  }
  if (items_.size() > kSaid)
    warnings.push_back("… and " + std::to_string(items_.size() - kSaid) + " more reference(s) to missing tasks");
  return {};
}

/// The original CLEO's store, ids kept. References to tasks the store does not hold (a parent,
/// a dependency, a link, a session's scope) are refused, naming each; with skipInvalid they are
/// dropped (a session whose scope names one is left out), each said. The tasks are placed by
/// TaskEngine::import_kept (E_VALIDATION naming them when this store holds one of their ids: the
/// same import fails again, so not the retryable E_ID_COLLISION), the sessions inserted (likewise),
/// the config applied last: all in the call's transaction and its one audit row.
Result<Reply> import_kept(Context& context, NestedRuns& runs, const ImportArgs& args, ForeignFile file,
                          std::vector<ImportRecord> records, json::Value problems) {
  std::vector<std::string> warnings = std::move(file.warnings);
  std::set<std::string> in_store;
  for (const auto& record : records) in_store.insert(record.id);
  Dangling dangling;
  drop_dangling(records, in_store, dangling);
  CT_TRY_ASSIGN(std::vector<Session> sessions, read_sessions(context, args, file.sessions, in_store, dangling, problems));
  CT_TRY_ASSIGN(std::vector<MemoryRecord> memory, read_memory(context, args, file.memory, in_store, dangling, problems));
  CT_TRY(dangling.settle(args, warnings));

  // The tasks, then the sessions, then the memory and the config.
  CT_TRY_ASSIGN(PlacedTasks placed, place_tasks(context, records, warnings));
  CT_TRY(insert_sessions(context, sessions));
  CT_TRY_ASSIGN(json::Value memory_report, import_memory(context, runs, memory, warnings));
  std::vector<Advice> config_not_applied;
  CT_TRY_ASSIGN(json::Value config, apply_config(context, file.config, warnings, config_not_applied));

  json::Value data = json::Value::object();
  data.set("imported", static_cast<std::int64_t>(records.size()));
  data.set("format", "original");
  data.set("generation", file.generation);
  data.set("store", file.source);
  if (placed.archived > 0) data.set("archived", placed.archived);
  if (!placed.last_id.empty()) data.set("lastId", placed.last_id);
  if (!sessions.empty()) data.set("sessions", static_cast<std::int64_t>(sessions.size()));
  if (!memory_report.is_null()) data.set("memory", std::move(memory_report));
  if (!config.empty()) data.set("config", std::move(config));
  data.set("mapped", std::move(file.mapped));
  if (!file.unmapped.empty()) data.set("unmapped", std::move(file.unmapped));
  if (!problems.empty()) data.set("skipped", std::move(problems));
  if (args.dry_run) data.set("dryRun", true);
  Reply reply = Reply::warned(std::move(data), std::move(warnings));
  reply.advice_warnings = std::move(config_not_applied);
  return reply;
}

json::Value session_record(const Session& session) {
  json::Value out = json::Value::object();
  out.set("name", session.name);
  out.set("scope", session.scope);
  if (!session.agent.empty()) out.set("agent", session.agent);
  out.set("status", std::string(to_string(session.status)));
  if (!session.note.empty()) out.set("note", session.note);
  if (!session.next_action.empty()) out.set("nextAction", session.next_action);
  out.set("createdAt", format_iso8601(session.created_at));
  out.set("updatedAt", format_iso8601(session.updated_at));
  if (session.ended_at) out.set("endedAt", format_iso8601(*session.ended_at));
  if (session.archived_at) out.set("archivedAt", format_iso8601(*session.archived_at));
  return out;
}

Result<Session> session_from_record(const std::string& id, const json::Value& record) {
  auto time = [&](std::string_view field) -> std::optional<TimeMs> {
    return record[field].is_string() ? parse_iso8601(record[field].as_string()) : std::nullopt;
  };
  auto status = record["status"].is_string() ? parse_session_status(record["status"].as_string()) : std::nullopt;
  auto created = time("createdAt");
  auto updated = time("updatedAt");
  if (!status || !created || !updated || !record["scope"].is_string())
    return fail(ErrorCode::Internal, "the audit row's record of session " + id + " is incomplete");
  Session session;
  session.id = id;
  session.name = record["name"].string_or_empty();
  session.scope = record["scope"].as_string();
  session.agent = record["agent"].string_or_empty();
  session.status = *status;
  session.note = record["note"].string_or_empty();
  session.next_action = record["nextAction"].string_or_empty();
  session.created_at = *created;
  session.updated_at = *updated;
  session.ended_at = time("endedAt");
  session.archived_at = time("archivedAt");
  return session;
}

}  // namespace ct::tasks
