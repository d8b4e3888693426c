#include "engines/store/trust_store.h"

#include <charconv>
#include <cstdio>

#include "core/json_parse.h"
#include "engines/store/store_rows.h"

namespace ct {
namespace {

using sql::Value;

constexpr std::string_view kEvidenceColumns =
    "num, task_id, gate, kind, ref, files, covers, verified, detail, status, agent, session, at";
constexpr std::string_view kPlanColumns =
    "num, label, epic_id, status, ops, base, agent, session, created_at, updated_at, closed_at, outcome, name, since";
constexpr std::string_view kProposalColumns =
    "num, operation, params, rule, task_id, preview, reason, intent, status, agent, session, at, decided_by, "
    "decided_at, decision";

Error corrupt(std::string_view what, std::string_view id, std::string_view column) {
  return Error(ErrorCode::FileError,
               std::string(what) + " " + std::string(id) + " has an unreadable " + std::string(column))
      .with_fix(corrupt_fix());
}

/// Reads a JSON column into `out` (null for "", a column never set); false when it does not parse.
bool json_column(std::string_view text, json::Value& out) {
  if (text.empty()) return true;
  auto parsed = json::parse(text);
  if (!parsed) return false;
  out = std::move(*parsed);
  return true;
}

Result<EvidenceAtom> read_atom(const sql::Cursor& row) {
  EvidenceAtom atom;
  atom.id = prefixed_id("E", row.integer(0));
  atom.task_id = std::string(row.text(1));
  atom.gate = std::string(row.text(2));
  atom.kind = std::string(row.text(3));
  atom.ref = std::string(row.text(4));
  json::Value files;
  if (!json_column(row.text(5), files) || (!files.is_null() && !files.is_array()))
    return fail(corrupt("evidence", atom.id, "files"));
  if (files.is_array())
    for (const auto& item : files.as_array()) {
      if (!item["path"].is_string() || !item["sha256"].is_string()) return fail(corrupt("evidence", atom.id, "files"));
      atom.files.push_back({item["path"].as_string(), item["sha256"].as_string()});
    }
  json::Value covers;
  if (!json_column(row.text(6), covers)) return fail(corrupt("evidence", atom.id, "covers"));
  if (covers.is_array())
    for (const auto& item : covers.as_array())
      if (item.is_int()) atom.covers.push_back(item.as_int());
  atom.verified = row.integer(7) != 0;
  if (!json_column(row.text(8), atom.detail)) return fail(corrupt("evidence", atom.id, "detail"));
  atom.status = std::string(row.text(9));
  atom.agent = std::string(row.text(10));
  atom.session = std::string(row.text(11));
  atom.at = row.integer(12);
  return atom;
}

Result<Proposal> read_proposal(const sql::Cursor& row) {
  Proposal proposal;
  proposal.id = prefixed_id("P", row.integer(0));
  proposal.operation = std::string(row.text(1));
  if (!json_column(row.text(2), proposal.params)) return fail(corrupt("proposal", proposal.id, "params"));
  proposal.rule = std::string(row.text(3));
  proposal.task_id = std::string(row.text(4));
  if (!json_column(row.text(5), proposal.preview)) return fail(corrupt("proposal", proposal.id, "preview"));
  proposal.reason = std::string(row.text(6));
  if (!json_column(row.text(7), proposal.intent)) return fail(corrupt("proposal", proposal.id, "intent"));
  proposal.status = std::string(row.text(8));
  proposal.agent = std::string(row.text(9));
  proposal.session = std::string(row.text(10));
  proposal.at = row.integer(11);
  proposal.decided_by = std::string(row.text(12));
  proposal.decided_at = row.optional_int(13);
  proposal.decision = std::string(row.text(14));
  return proposal;
}

Result<Plan> read_plan(const sql::Cursor& row) {
  Plan plan;
  plan.id = prefixed_id("PL", row.integer(0));
  plan.label = std::string(row.text(1));
  plan.epic_id = std::string(row.text(2));
  plan.status = std::string(row.text(3));
  if (!json_column(row.text(4), plan.ops) || !plan.ops.is_array()) return fail(corrupt("plan", plan.id, "ops"));
  if (!json_column(row.text(5), plan.base)) return fail(corrupt("plan", plan.id, "base"));
  plan.agent = std::string(row.text(6));
  plan.session = std::string(row.text(7));
  plan.created_at = row.integer(8);
  plan.updated_at = row.integer(9);
  plan.closed_at = row.optional_int(10);
  if (!json_column(row.text(11), plan.outcome)) return fail(corrupt("plan", plan.id, "outcome"));
  plan.name = std::string(row.text(12));
  plan.since = row.optional_int(13);
  return plan;
}

template <typename T>
Result<std::vector<T>> read_all(sql::Runner& runner, const std::string& sql, std::span<const Value> args,
                                std::string_view what, Result<T> (*read)(const sql::Cursor&)) {
  return runner.all(sql, args, what, read);
}

Result<std::int64_t> next_number(sql::Runner& runner, std::string_view table, std::string_view what) {
  return runner.integer("SELECT coalesce(max(num), 0) + 1 FROM " + std::string(table), {}, what);
}

/// Rows of `table` newest first, of one status unless `status` is empty (limit < 0: all).
template <typename T>
Result<std::vector<T>> list_of_status(sql::Runner& runner, std::string_view columns, std::string_view table,
                                      std::string_view status, std::int64_t limit, std::int64_t offset,
                                      std::string_view what, Result<T> (*read)(const sql::Cursor&)) {
  std::vector<Value> args;
  std::string sql = "SELECT " + std::string(columns) + " FROM " + std::string(table);
  if (!status.empty()) {
    args.emplace_back(std::string(status));
    sql += " WHERE status = ?1";
  }
  sql += " ORDER BY num DESC LIMIT ?" + std::to_string(args.size() + 1) + " OFFSET ?" + std::to_string(args.size() + 2);
  args.emplace_back(sql::limit_of(limit));
  args.emplace_back(std::max<std::int64_t>(0, offset));
  return read_all<T>(runner, sql, args, what, read);
}

/// The rows of `table`, of one status unless `status` is empty.
Result<std::int64_t> count_of_status(sql::Runner& runner, std::string_view table, std::string_view status,
                                     std::string_view what) {
  std::vector<Value> args;
  std::string sql = "SELECT count(*) FROM " + std::string(table);
  if (!status.empty()) {
    args.emplace_back(std::string(status));
    sql += " WHERE status = ?1";
  }
  return runner.integer(sql, args, what);
}

Value text_or_null(const json::Value& value) { return value.is_null() ? Value() : Value(value.dump()); }

}  // namespace

json::Value evidence_files_json(const std::vector<EvidenceFile>& files) {
  json::Value out = json::Value::array();
  for (const auto& file : files) {
    json::Value item = json::Value::object();
    item.set("path", file.path);
    item.set("sha256", file.sha256);
    out.push_back(std::move(item));
  }
  return out;
}

std::optional<std::int64_t> prefixed_number(std::string_view id, std::string_view prefix) {
  if (id.size() <= prefix.size() || !id.starts_with(prefix) || id.size() > 19) return std::nullopt;
  std::int64_t number = 0;
  auto [end, ec] = std::from_chars(id.data() + prefix.size(), id.data() + id.size(), number);
  if (ec != std::errc() || end != id.data() + id.size() || number <= 0) return std::nullopt;
  return number;
}

std::string prefixed_id(std::string_view prefix, std::int64_t number) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%03lld", static_cast<long long>(number));
  return std::string(prefix) + buffer;
}

const std::string& TrustStore::task_evidence_sql(bool with_replaced) {
  static const std::string all = "SELECT " + std::string(kEvidenceColumns) + " FROM evidence WHERE task_id = ?1 ORDER BY num";
  static const std::string current = "SELECT " + std::string(kEvidenceColumns) +
                                     " FROM evidence WHERE task_id = ?1 AND status = 'current' ORDER BY num";
  return with_replaced ? all : current;
}

Result<std::vector<EvidenceAtom>> TrustStore::task_evidence(std::string_view task_id, bool with_replaced) {
  const Value args[] = {Value(std::string(task_id))};
  return read_all<EvidenceAtom>(sql_runner(), task_evidence_sql(with_replaced), args, "cannot read the task's evidence",
                                read_atom);
}

Result<std::int64_t> TrustStore::next_evidence_number() {
  return next_number(sql_runner(), "evidence", "cannot number the evidence");
}

Result<void> TrustStore::put_evidence(const EvidenceAtom& atom) {
  auto number = prefixed_number(atom.id, "E");
  if (!number) return fail(ErrorCode::Internal, "evidence id " + atom.id + " is not E<number>");
  std::string covers = "[";
  for (auto criterion : atom.covers) covers += (covers.size() > 1 ? "," : "") + std::to_string(criterion);
  covers += "]";
  const Value args[] = {Value(*number),       Value(atom.task_id),  Value(atom.gate),
                        Value(atom.kind),     Value(atom.ref),      Value(evidence_files_json(atom.files).dump()),
                        Value(covers),        Value(std::int64_t{atom.verified ? 1 : 0}),
                        Value(atom.detail.is_null() ? std::string() : atom.detail.dump()),
                        Value(atom.status),   Value(atom.agent),    Value(atom.session),
                        Value(atom.at)};
  return sql_runner().run(
      "INSERT INTO evidence(num, task_id, gate, kind, ref, files, covers, verified, detail, status, agent, session, at) "
      "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13) "
      "ON CONFLICT(num) DO UPDATE SET task_id = excluded.task_id, gate = excluded.gate, kind = excluded.kind, "
      "ref = excluded.ref, files = excluded.files, covers = excluded.covers, verified = excluded.verified, "
      "detail = excluded.detail, status = excluded.status, agent = excluded.agent, session = excluded.session, "
      "at = excluded.at",
      args, "cannot record the evidence");
}

Result<std::optional<TaskBranch>> TrustStore::task_branch(std::string_view task_id) {
  const auto args = sql::values(task_id);
  CT_TRY_ASSIGN(std::optional<TaskBranch> made,
                sql_runner().first("SELECT branch, worktree, base, session FROM task_worktrees WHERE task_id = ?1 AND "
                                   "branch <> ''",
                                   args, "cannot read the task's worktree", [](const sql::Cursor& row) {
                                     return TaskBranch{std::string(row.text(0)), std::string(row.text(1)),
                                                       std::string(row.text(2)), "worktree", std::string(row.text(3))};
                                   }));
  if (made) return made;
  return sql_runner().first(
      "SELECT s.branch, s.worktree, s.id FROM focus f JOIN sessions s ON s.id = f.session WHERE f.task_id = ?1 AND "
      "s.branch <> ''",
      args, "cannot read the claiming session's branch", [](const sql::Cursor& row) {
        return TaskBranch{std::string(row.text(0)), std::string(row.text(1)), "", "session", std::string(row.text(2))};
      });
}

Result<std::optional<Proposal>> TrustStore::get_proposal(std::string_view id) {
  auto number = prefixed_number(id, "P");
  if (!number) return std::optional<Proposal>();
  const Value args[] = {Value(*number)};
  CT_TRY_ASSIGN(std::vector<Proposal> found,
                read_all<Proposal>(sql_runner(), "SELECT " + std::string(kProposalColumns) + " FROM proposals WHERE num = ?1",
                                   args, "cannot read the proposal", read_proposal));
  if (found.empty()) return std::optional<Proposal>();
  return std::optional<Proposal>(std::move(found.front()));
}

Result<std::vector<Proposal>> TrustStore::list_proposals(std::string_view status, std::int64_t limit,
                                                         std::int64_t offset) {
  return list_of_status<Proposal>(sql_runner(), kProposalColumns, "proposals", status, limit, offset,
                                  "cannot list the proposals", read_proposal);
}

Result<std::int64_t> TrustStore::count_proposals(std::string_view status) {
  return count_of_status(sql_runner(), "proposals", status, "cannot count the proposals");
}

Result<std::int64_t> TrustStore::next_proposal_number() {
  return next_number(sql_runner(), "proposals", "cannot number the proposals");
}

Result<void> TrustStore::put_proposal(const Proposal& proposal) {
  auto number = prefixed_number(proposal.id, "P");
  if (!number) return fail(ErrorCode::Internal, "proposal id " + proposal.id + " is not P<number>");
  const Value args[] = {Value(*number),
                        Value(proposal.operation),
                        Value(proposal.params.is_null() ? std::string("{}") : proposal.params.dump()),
                        Value(proposal.rule),
                        Value(proposal.task_id),
                        Value(proposal.preview.is_null() ? std::string() : proposal.preview.dump()),
                        Value(proposal.reason),
                        text_or_null(proposal.intent),
                        Value(proposal.status),
                        Value(proposal.agent),
                        Value(proposal.session),
                        Value(proposal.at),
                        Value(proposal.decided_by),
                        proposal.decided_at ? Value(*proposal.decided_at) : Value(),
                        Value(proposal.decision)};
  return sql_runner().run(
      "INSERT INTO proposals(num, operation, params, rule, task_id, preview, reason, intent, status, agent, session, at, "
      "decided_by, decided_at, decision) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15) "
      "ON CONFLICT(num) DO UPDATE SET operation = excluded.operation, params = excluded.params, rule = excluded.rule, "
      "task_id = excluded.task_id, preview = excluded.preview, reason = excluded.reason, intent = excluded.intent, "
      "status = excluded.status, agent = excluded.agent, session = excluded.session, at = excluded.at, "
      "decided_by = excluded.decided_by, decided_at = excluded.decided_at, decision = excluded.decision",
      args, "cannot record the proposal");
}

Result<std::optional<Plan>> TrustStore::get_plan(std::string_view id) {
  auto number = prefixed_number(id, "PL");
  if (!number) return std::optional<Plan>();
  const Value args[] = {Value(*number)};
  CT_TRY_ASSIGN(std::vector<Plan> found,
                read_all<Plan>(sql_runner(), "SELECT " + std::string(kPlanColumns) + " FROM plans WHERE num = ?1", args,
                               "cannot read the plan", read_plan));
  if (found.empty()) return std::optional<Plan>();
  return std::optional<Plan>(std::move(found.front()));
}

Result<std::optional<Plan>> TrustStore::plan_named(std::string_view name) {
  // The open one when there is one; else the newest of that name (committed or discarded).
  const Value args[] = {Value(name)};
  CT_TRY_ASSIGN(std::vector<Plan> found,
                read_all<Plan>(sql_runner(),
                               "SELECT " + std::string(kPlanColumns) +
                                   " FROM plans WHERE name = ?1 ORDER BY CASE WHEN status = 'open' THEN 0 ELSE 1 END, num DESC LIMIT 1",
                               args, "cannot read the plan", read_plan));
  if (found.empty()) return std::optional<Plan>();
  return std::optional<Plan>(std::move(found.front()));
}

Result<std::vector<Plan>> TrustStore::list_plans(std::string_view status, std::int64_t limit, std::int64_t offset) {
  return list_of_status<Plan>(sql_runner(), kPlanColumns, "plans", status, limit, offset, "cannot list the plans",
                              read_plan);
}

Result<std::int64_t> TrustStore::count_plans(std::string_view status) {
  return count_of_status(sql_runner(), "plans", status, "cannot count the plans");
}

Result<std::optional<std::pair<std::string, std::int64_t>>> TrustStore::oldest_plan_watermark() {
  return sql_runner().first("SELECT num, since FROM plans WHERE status = 'open' AND since IS NOT NULL ORDER BY since "
                            "LIMIT 1",
                            {}, "cannot read the plans", [](const sql::Cursor& row) {
                              return std::pair{prefixed_id("PL", row.integer(0)), row.integer(1)};
                            });
}

Result<std::int64_t> TrustStore::next_plan_number() { return next_number(sql_runner(), "plans", "cannot number the plans"); }

Result<void> TrustStore::put_plan(const Plan& plan) {
  auto number = prefixed_number(plan.id, "PL");
  if (!number) return fail(ErrorCode::Internal, "plan id " + plan.id + " is not PL<number>");
  const Value args[] = {Value(*number),
                        Value(plan.label),
                        Value(plan.epic_id),
                        Value(plan.status),
                        Value(plan.ops.is_null() ? std::string("[]") : plan.ops.dump()),
                        Value(plan.base.is_null() ? std::string() : plan.base.dump()),
                        Value(plan.agent),
                        Value(plan.session),
                        Value(plan.created_at),
                        Value(plan.updated_at),
                        plan.closed_at ? Value(*plan.closed_at) : Value(),
                        Value(plan.outcome.is_null() ? std::string() : plan.outcome.dump()),
                        Value(plan.name),
                        plan.since ? Value(*plan.since) : Value()};
  return sql_runner().run(
      "INSERT INTO plans(num, label, epic_id, status, ops, base, agent, session, created_at, updated_at, closed_at, "
      "outcome, name, since) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14) "
      "ON CONFLICT(num) DO UPDATE SET label = excluded.label, epic_id = excluded.epic_id, status = excluded.status, "
      "ops = excluded.ops, base = excluded.base, agent = excluded.agent, session = excluded.session, "
      "created_at = excluded.created_at, updated_at = excluded.updated_at, closed_at = excluded.closed_at, "
      "outcome = excluded.outcome, name = excluded.name, since = excluded.since",
      args, "cannot record the plan");
}

}  // namespace ct
