// tasks.undo — reverting a change from the audit trail's before/after values.
//
// Without a seq it takes back the caller's last command: the newest task change of the bound
// session (or, outside any session, of the same agent outside any session), skipping what earlier
// undos already took back, so repeated undos walk back through the history. A command that
// changed several tasks at once (bulk ids) is taken back as a whole. The undo is itself a change,
// audited like any other: undoing it (by its seq) redoes what it took back.
#include <algorithm>
#include <map>
#include <set>

#include "domains/evidence.h"
#include "domains/memory/memory_common.h"
#include "domains/tasks/tasks_common.h"

namespace ct::tasks {
namespace {

constexpr std::int64_t kSearchedRows = 500;  // how far back the last command is looked for

std::string_view domain_of(std::string_view operation) { return operation.substr(0, operation.find('.')); }

/// Rows undo takes back: changes of tasks — the tasks domain's, and a committed plan's (one row for
/// all it made, as a batch).
bool changes_tasks(std::string_view operation) { return domain_of(operation) == "tasks" || operation == "plan.commit"; }

/// The seqs an undo row took back (its params.undid).
std::vector<std::int64_t> undid_by(const AuditEntry& row) {
  std::vector<std::int64_t> seqs;
  const json::Value& undid = row.params["undid"];
  if (!undid.is_array()) return seqs;
  for (const auto& seq : undid.as_array())
    if (seq.is_int()) seqs.push_back(seq.as_int());
  return seqs;
}

Error nothing_to_undo(std::string message) {
  Error error(ErrorCode::NotFound, std::move(message));
  error.fix = call("system.log") + " lists the changes; undo one with params {seq}";
  return error;
}

/// The rows of one audited command: `last` and, when it ran for several ids at once, the rows
/// written with it. Those are consecutive (one transaction, a row per id in the order of `ids`),
/// so the row's own id places the command's first row.
Result<std::vector<AuditEntry>> command_rows(AuditLog& store, AuditEntry last) {
  std::vector<AuditEntry> rows;
  const json::Value ids = last.params["ids"];
  const json::Value& own = last.params["id"];
  if (ids.is_array() && ids.size() > 1 && own.is_string()) {
    const auto& list = ids.as_array();
    auto at = std::ranges::find(list, own);
    if (at != list.end()) {
      AuditQuery query;
      query.after_seq = last.seq - (at - list.begin()) - 1;
      query.ascending = true;
      query.limit = static_cast<std::int64_t>(list.size());
      CT_TRY_ASSIGN(std::vector<AuditEntry> group, store.read_audit(query));
      for (auto& row : group)
        if (row.seq != last.seq && row.operation == last.operation && row.params["ids"] == ids &&
            !row.changes.empty())
          rows.push_back(std::move(row));
    }
  }
  rows.push_back(std::move(last));
  std::ranges::sort(rows, {}, &AuditEntry::seq);
  return rows;
}

/// The caller's last command that changed tasks and was not undone yet.
Result<std::vector<AuditEntry>> last_command(Context& context) {
  AuditQuery query;
  query.session = context.session;
  if (context.session.empty()) {
    CT_TRY_ASSIGN(std::string agent, context.agent_name());
    query.agent = agent;
  }
  query.limit = 50;
  std::set<std::int64_t> undone;
  for (query.offset = 0; query.offset < kSearchedRows; query.offset += query.limit) {
    CT_TRY_ASSIGN(std::vector<AuditEntry> rows, context.db().read_audit(query));
    for (auto& row : rows) {
      if (row.operation == "tasks.undo") {
        for (auto seq : undid_by(row)) undone.insert(seq);
        continue;
      }
      if (undone.contains(row.seq) || row.changes.empty() || !changes_tasks(row.operation)) continue;
      return command_rows(context.db(), std::move(row));
    }
    if (static_cast<std::int64_t>(rows.size()) < query.limit) break;
  }
  std::string who = context.session.empty() ? "outside any session" : "in session " + context.session;
  return fail(nothing_to_undo("Nothing to undo: no task change " + who + " that is not undone already"));
}

Result<AuditEntry> row_at(AuditLog& store, std::int64_t seq) {
  AuditQuery query;
  query.after_seq = seq - 1;
  query.ascending = true;
  query.limit = 1;
  CT_TRY_ASSIGN(std::vector<AuditEntry> rows, store.read_audit(query));
  if (rows.empty() || rows.front().seq != seq)
    return fail(nothing_to_undo("No audit row " + std::to_string(seq)).with_detail("seq", seq));
  return std::move(rows.front());
}

/// The undo rows after a seq and what they took back. An undo counts while it is not undone
/// itself: `cancelled_by` holds the rows whose effect is gone, with the undo that counts.
struct LaterUndos {
  std::map<std::int64_t, std::vector<std::int64_t>> undid;  // undo seq → the seqs it took back
  std::map<std::int64_t, std::int64_t> cancelled_by;       // seq → the undo that took it back

  bool cancelled(std::int64_t seq) const { return cancelled_by.contains(seq); }

  /// An undo whose targets all came after `seq` and are gone: together they left nothing behind.
  bool nets_out(std::int64_t undo_seq, std::int64_t seq) const {
    auto found = undid.find(undo_seq);
    return found != undid.end() && !cancelled(undo_seq) &&
           std::ranges::all_of(found->second, [&](std::int64_t target) { return target > seq; });
  }
};

Result<LaterUndos> undos_after(AuditLog& store, std::int64_t seq) {
  AuditQuery query;
  query.operation = "tasks.undo";
  query.after_seq = seq;
  query.limit = -1;  // newest first: a later undo decides whether an earlier one counts
  CT_TRY_ASSIGN(std::vector<AuditEntry> rows, store.read_audit(query));
  LaterUndos later;
  for (const auto& row : rows) {
    auto seqs = undid_by(row);
    if (!later.cancelled(row.seq))
      for (auto target : seqs) later.cancelled_by.emplace(target, row.seq);
    later.undid.emplace(row.seq, std::move(seqs));
  }
  return later;
}

/// Refuses rows undo cannot take back: other domains' changes, failures, rows already undone.
Result<void> check_undoable(const AuditEntry& row, const LaterUndos& later) {
  if (!changes_tasks(row.operation))
    return fail(Error(ErrorCode::Validation, "seq " + std::to_string(row.seq) + " is " + row.operation +
                                                 "; undo takes back task changes only")
                    .with_fix("revert it with the " + std::string(domain_of(row.operation)) + " operation that undoes it")
                    .with_detail("seq", row.seq));
  if (row.changes.empty())
    return fail(Error(ErrorCode::Validation, "seq " + std::to_string(row.seq) + " (" + row.operation + ", " +
                                                 row.outcome + ") changed nothing; there is nothing to undo")
                    .with_detail("seq", row.seq));
  if (auto by = later.cancelled_by.find(row.seq); by != later.cancelled_by.end())
    return fail(Error(ErrorCode::Validation, "seq " + std::to_string(row.seq) + " was undone already, by seq " +
                                                 std::to_string(by->second))
                    .with_fix(call("tasks.undo", {{"seq", by->second}}) + " redoes it")
                    .with_detail("seq", row.seq).with_detail("undoneBy", by->second));
  return {};
}

/// What the undo changed, for the reply: {id, field, from, to}, or {id, removed|restored:true}
/// for whole tasks.
json::Value changes_reply(const std::vector<FieldChange>& changes) {
  json::Value out = json::Value::array();
  for (const auto& change : changes) {
    json::Value item = json::Value::object();
    item.set("id", change.task_id);
    if (change.field == "created") {
      item.set("restored", true);
    } else if (change.field == "deleted") {
      item.set("removed", true);
    } else if (change.task_id.empty() && change.field.starts_with("session.")) {
      item.set("id", change.field.substr(std::string_view("session.").size()));  // a session an import brought
      item.set(change.after.is_null() ? "removed" : "restored", true);
    } else {
      item.set("field", change.field);
      item.set("from", change.before);
      item.set("to", change.after);
    }
    out.push_back(std::move(item));
  }
  return out;
}

/// A memory entry a task command recorded (tasks.complete {remember}, the original's memory
/// tasks.import brings): its change rows, which the task engine does not take back.
bool memory_change(const FieldChange& change) { return change.task_id.empty() && change.field.starts_with("memory."); }

/// Takes back the memory entries `row` recorded: each is retracted (kept as a record, no longer
/// served), audited; the row without them is what the task engine takes back.
Result<AuditEntry> take_back_memory(Context& context, AuditEntry row, std::vector<std::string>& warnings) {
  for (const auto& change : row.changes) {
    if (!memory_change(change) || !change.before.is_null()) continue;
    const std::string id = change.field.substr(std::string_view("memory.").size());
    CT_TRY_ASSIGN(std::optional<MemoryEntry> entry, context.db().get_memory(id));
    if (!entry || entry->status == "retracted") continue;
    const MemoryEntry before = *entry;
    entry->status = "retracted";
    entry->reason = "taken back with seq " + std::to_string(row.seq) + " (" + row.operation + ") by tasks.undo";
    entry->updated_at = context.now();
    CT_TRY(memory::save(context, before, *entry));
    warnings.push_back(id + ", the " + entry->kind + " seq " + std::to_string(row.seq) + " recorded, is retracted");
  }
  std::erase_if(row.changes, memory_change);
  return row;
}

/// Takes back the evidence `row` recorded (tasks.complete, tasks.evidence {evidence, waive}): its
/// atoms are withdrawn (kept as a record, covering nothing) and the atoms they replaced are current
/// again, audited as changes of the task's evidence; the row without them is what the task engine
/// takes back.
Result<AuditEntry> take_back_evidence(Context& context, AuditEntry row, std::vector<std::string>& warnings) {
  auto is_evidence = [](const FieldChange& change) { return change.field == "evidence"; };
  std::vector<EvidenceAtom> atoms;
  std::string task;
  for (const auto& change : row.changes) {
    if (!is_evidence(change)) continue;
    const json::Value& after = change.after;
    if (!after["id"].is_string()) continue;
    if (task != change.task_id) {
      task = change.task_id;
      CT_TRY_ASSIGN(atoms, context.db().task_evidence(task, /*with_replaced=*/true));
    }
    auto atom = std::find_if(atoms.begin(), atoms.end(), [&](const EvidenceAtom& a) { return a.id == after["id"].as_string(); });
    if (atom == atoms.end()) continue;
    // Recorded by the row: withdrawn. Replaced by the row: current again.
    const std::string status = change.before.is_null() ? "withdrawn" : "current";
    if (atom->status == status) continue;
    json::Value was = json::Value::object();
    was.set("id", atom->id);
    was.set("status", atom->status);
    atom->status = status;
    CT_TRY(context.db().put_evidence(*atom));
    json::Value now_is = was;
    now_is.set("status", status);
    context.record({change.task_id, "evidence", std::move(was), std::move(now_is)});
    if (status == "withdrawn") warnings.push_back(atom->id + ", evidence seq " + std::to_string(row.seq) + " recorded, is withdrawn");
  }
  std::erase_if(row.changes, is_evidence);
  return row;
}

/// Takes back a plan's commit (plan.commit's row records it as a change of `plan.<id>`): the plan is
/// open again, to be rebased and committed anew, or discarded; the row without it is what the task
/// engine takes back.
Result<AuditEntry> take_back_plan(Context& context, AuditEntry row, std::vector<std::string>& warnings) {
  auto is_plan = [](const FieldChange& change) { return change.task_id.empty() && change.field.starts_with("plan."); };
  for (const auto& change : row.changes) {
    if (!is_plan(change) || change.after != json::Value("committed")) continue;
    const std::string id = change.field.substr(std::string_view("plan.").size());
    CT_TRY_ASSIGN(std::optional<Plan> plan, context.db().get_plan(id));
    if (!plan || plan->status != "committed") continue;
    plan->status = "open";
    plan->closed_at.reset();
    plan->outcome = json::Value();
    plan->updated_at = context.now();
    CT_TRY(context.db().put_plan(*plan));
    context.record({"", change.field, "committed", "open"});
    warnings.push_back(id + " is open again: `plan.rebase` then `plan.commit` makes it anew, `plan.discard` drops it");
  }
  std::erase_if(row.changes, is_plan);
  return row;
}

/// Takes back the sessions an import of the original CLEO's store brought (its row records each as
/// a change of `session.<id>` from nothing): a session nobody used since is removed, one used since
/// is kept and said. Undoing that undo puts them back (a change to nothing). The row without them is
/// what the task engine takes back.
Result<AuditEntry> take_back_sessions(Context& context, AuditEntry row, std::vector<std::string>& warnings) {
  auto is_session = [](const FieldChange& change) { return change.task_id.empty() && change.field.starts_with("session."); };
  for (const auto& change : row.changes) {
    if (!is_session(change)) continue;
    const std::string id = change.field.substr(std::string_view("session.").size());
    CT_TRY_ASSIGN(std::optional<Session> current, context.db().get_session(id));
    if (change.before.is_null()) {
      if (!current) continue;
      if (session_record(*current) != change.after) {
        warnings.push_back(id + " was used since seq " + std::to_string(row.seq) + " brought it; kept");
        continue;
      }
      CT_TRY(context.db().delete_session(id));
      context.record({"", change.field, change.after, json::Value()});
    } else if (change.after.is_null()) {
      if (current) continue;
      CT_TRY_ASSIGN(Session session, session_from_record(id, change.before));
      CT_TRY(context.db().insert_session(session));
      context.record({"", change.field, json::Value(), change.before});
    }
  }
  std::erase_if(row.changes, is_session);
  return row;
}

/// Takes back the config keys an import applied (`config.<key>` changes): each goes back to its
/// value before, unless it changed since (kept, and said). `config` collects the result, which
/// undo writes once everything else is taken back (never in a dry run). A key only people set goes
/// back only for a person (Context::may_set_config): an agent's undo of a person's import would
/// otherwise loosen a rule that binds it; it is refused whole, naming what a person runs.
Result<AuditEntry> take_back_config(Context& context, AuditEntry row, std::optional<Config>& config,
                                    std::vector<std::string>& warnings) {
  auto is_config = [](const FieldChange& change) { return change.task_id.empty() && change.field.starts_with("config."); };
  for (const auto& change : row.changes) {
    if (!is_config(change)) continue;
    const std::string key = change.field.substr(std::string_view("config.").size());
    if (!config) config = *context.config;
    if (config->get(key) != change.after) {
      warnings.push_back("config " + key + " is " + config->get(key).dump() + " now, changed since seq " +
                         std::to_string(row.seq) + "; kept");
      continue;
    }
    if (const ConfigKey* spec = find_config_key(key))
      if (auto allowed = context.may_set_config(*spec, change.before); !allowed) {
        Error error = std::move(allowed.error());
        error.message = "undoing seq " + std::to_string(row.seq) + " (" + row.operation + ") would set " + key +
                        " back: " + error.message;
        error.fix = "a person runs `ct undo " + std::to_string(row.seq) + "` in a terminal";
        return fail(std::move(error).with_detail("seq", row.seq));
      }
    if (auto set = config->set(key, change.before); !set) {
      warnings.push_back("config " + key + " cannot go back to " + change.before.dump() + ": " + set.error().message);
      continue;
    }
    context.record({"", change.field, change.after, change.before});
  }
  std::erase_if(row.changes, is_config);
  return row;
}

/// Putting a task's acceptance criteria back as they were is a change of them like any other: under
/// strict verification.evidence only a person drops or rewrites one (evidence::acceptance_rules).
Result<void> check_acceptance(Context& context, const AuditEntry& row) {
  for (const auto& change : row.changes) {
    if (change.field != "acceptance" || change.task_id.empty()) continue;
    CT_TRY_ASSIGN(std::optional<Task> task, context.db().get_task(change.task_id));
    if (!task) continue;
    std::vector<std::string> before;
    if (change.before.is_array())
      for (const auto& item : change.before.as_array())
        if (item.is_string()) before.push_back(item.as_string());
    CT_TRY(evidence::acceptance_rules(context, *task, before,
                                      "a person runs `ct undo " + std::to_string(row.seq) + "` in a terminal"));
  }
  return {};
}

/// What an undo would take back, as approval.required names it (domains/approval.h): a task whose
/// creation it takes back is deleted (tasks.delete of it), a task it turns back from an epic is
/// demoted (every rule that names epics). Asked before the call runs, with the rows the handler
/// will find; when there are none the handler says why.
Result<std::vector<Effect>> undo_effects(Context& context, const Params& params, const std::vector<std::string>&) {
  Result<std::vector<AuditEntry>> rows = std::vector<AuditEntry>();
  if (auto seq = params.opt_integer("seq")) {
    auto row = row_at(context.db(), *seq);
    if (row) rows->push_back(std::move(*row));
  } else {
    rows = last_command(context);
  }
  std::vector<Effect> effects;
  if (!rows) return effects;
  for (const auto& row : *rows)
    for (const auto& change : row.changes) {
      if (change.task_id.empty()) continue;
      if (change.field == "created" && change.before.is_null()) effects.push_back({"tasks.delete", change.task_id, {}});
      if (change.field == "type" && change.after == json::Value("epic"))
        for (auto& demotion : demotions({change.task_id})) effects.push_back(std::move(demotion));
    }
  return effects;
}

/// tasks.undo's params: a dry run is the router's (it keeps nothing).
struct UndoArgs {
  std::optional<std::int64_t> seq;
  bool force = false;
  bool dry_run = false;
};

Result<Reply> undo(Context& context, const UndoArgs& args) {
  std::vector<AuditEntry> rows;
  if (args.seq) {
    CT_TRY_ASSIGN(AuditEntry row, row_at(context.db(), *args.seq));
    rows.push_back(std::move(row));
  } else {
    CT_TRY_ASSIGN(rows, last_command(context));
  }
  std::set<std::int64_t> targets;
  for (const auto& row : rows) targets.insert(row.seq);
  CT_TRY_ASSIGN(LaterUndos later, undos_after(context.db(), *targets.begin() - 1));
  for (const auto& row : rows) CT_TRY(check_undoable(row, later));
  for (const auto& row : rows) CT_TRY(check_acceptance(context, row));
  std::vector<std::string> warnings;
  std::optional<Config> config;  // the configuration as undoing leaves it, when a row changed some
  for (auto& row : rows) {
    CT_TRY_ASSIGN(row, take_back_memory(context, std::move(row), warnings));
    CT_TRY_ASSIGN(row, take_back_evidence(context, std::move(row), warnings));
    CT_TRY_ASSIGN(row, take_back_plan(context, std::move(row), warnings));
    CT_TRY_ASSIGN(row, take_back_sessions(context, std::move(row), warnings));
    CT_TRY_ASSIGN(row, take_back_config(context, std::move(row), config, warnings));
  }

  auto engine_ = engine(context);
  json::Value conflicts = json::Value::array();
  std::string first_conflict;
  for (const auto& row : rows) {
    CT_TRY_ASSIGN(std::vector<UndoConflict> touched, engine_.undo_conflicts(row));
    for (const auto& conflict : touched) {
      // Changes taken back since, and the undos that took them back, leave nothing to overwrite.
      if (targets.contains(conflict.seq) || later.cancelled(conflict.seq) ||
          later.nets_out(conflict.seq, row.seq))
        continue;
      if (first_conflict.empty())
        first_conflict = conflict.task_id + "." + conflict.field + " (seq " + std::to_string(conflict.seq) + ", " +
                         conflict.operation + ")";
      json::Value item = json::Value::object();
      item.set("seq", conflict.seq);
      item.set("operation", conflict.operation);
      item.set("id", conflict.task_id);
      item.set("field", conflict.field);
      conflicts.push_back(std::move(item));
    }
  }
  if (!conflicts.empty()) {
    if (!args.force) {
      Error error(ErrorCode::ConcurrentModification,
                  "Later changes touched what seq " + std::to_string(rows.back().seq) + " changed: " + first_conflict +
                      (conflicts.size() > 1 ? " and " + std::to_string(conflicts.size() - 1) + " more" : ""));
      error.fix = "undo the later change first (" +
                  call("tasks.undo", {{"seq", conflicts.as_array().back()["seq"].as_int()}}) +
                  "), or pass force:true to overwrite it";
      return fail(std::move(error).with_detail("seq", rows.back().seq).with_detail("conflicts", std::move(conflicts)));
    }
    warnings.push_back("forced: " + std::to_string(conflicts.size()) + " later change(s) overwritten, first " +
                       first_conflict);
  }

  // Newest first: a command's rows are taken back in the reverse of the order they were made.
  for (auto it = rows.rbegin(); it != rows.rend(); ++it) CT_TRY(engine_.undo(*it, warnings));
  // config.json last, once everything in the store is taken back (never in a dry run).
  if (config && !context.keeps_nothing) {
    CT_TRY(config->save(context.project->config_path()));
    context.config_changed = true;
  }

  json::Value undid = json::Value::array();
  for (const auto& row : rows) undid.push_back(row.seq);
  json::Value data = json::Value::object();
  data.set("undid", undid);
  data.set("operation", rows.back().operation);
  if (context.audit) {
    context.audit->params.set("undid", std::move(undid));
    context.audit->task_id = rows.back().task_id;
    if (context.audit->task_id.empty() && !context.audit->changes.empty())
      context.audit->task_id = context.audit->changes.front().task_id;
    data.set("changes", changes_reply(context.audit->changes));
  }
  return Reply::warned(std::move(data), std::move(warnings));
}

}  // namespace

void register_tasks_undo(Registry& registry) {
  const auto args = bind(
      field(&UndoArgs::seq, {.name = "seq", .type = ParamType::Int, .min = 1,
                             .description = "Audit row to take back (default: your last task change not undone)",
                             .positional = true}),
      field(&UndoArgs::force, {.name = "force", .type = ParamType::Bool,
                               .description = "Also when later changes touched the same fields (they are overwritten)"}),
      field(&UndoArgs::dry_run, {.name = "dryRun", .type = ParamType::Bool,
                                 .description = "Show what would change, change nothing", .dry_run = true}));
  registry.add({.domain = "tasks", .name = "undo", .gateway = Gateway::Mutate,
                .summary = "Take back the last change from the audit trail",
                .params = args.specs(),
                .returns = "{undid[seq], operation, changes[{id,field,from,to} | {id,removed|restored}]}; repeated undos "
                           "walk back; undoing an undo (by seq) redoes",
                .errors = {ErrorCode::NotFound, ErrorCode::Validation, ErrorCode::ConcurrentModification,
                           ErrorCode::HasDependents, ErrorCode::ParentNotFound, ErrorCode::CircularReference},
                .examples = {{R"({})", "take back your last change"},
                             {R"({"seq":42,"dryRun":true})", "see what undoing seq 42 would change"}},
                .needs_session = true, .tier = 2, .shortcut = "undo", .text_view = TextView::Undone,
                .effects = undo_effects, .handler = args.handler(undo)});
}

}  // namespace ct::tasks
