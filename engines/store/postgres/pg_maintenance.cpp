// The PostgreSQL store, part: consistency scans and repairs, integrity, backups (files written and
// read through the BackupFiles the opener gave).
//
// JSON list columns are text. labels and notes (tasks), topics and key_findings (research) always
// hold valid JSON, since the generated search column casts them to jsonb; depends, acceptance,
// files and relates may hold anything, and PostgreSQL 15 has no non-failing JSON test (no
// IS JSON, no pg_input_is_valid), so they are tested with a regular expression of the JSON they
// must be before any cast: an array of JSON strings exactly (depends), or an array of scalars and
// flat objects (the rest; rows it refuses are parsed once more here before they are reported).
#include <map>
#include <utility>

#include "engines/store/postgres/pg_store_impl.h"
#include "engines/store/scan_sql.h"

namespace ct::pg {
namespace {

// -- JSON shapes as regular expressions (PostgreSQL's ARE) --------------------------------------

const std::string& json_string_re() {
  // No control characters, valid escapes, and none that jsonb refuses (\u0000, lone surrogates).
  static const std::string re =
      R"re("(?:[^"\\\x01-\x1f]|\\["\\/bfnrt]|\\u(?!0000)(?:[0-9a-ce-fA-CE-F][0-9a-fA-F]{3}|[dD][0-7][0-9a-fA-F]{2}))re"
      R"re(|\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2})*")re";
  return re;
}

std::string array_of(const std::string& item) {
  const std::string ws = R"([ \t\n\r]*)";
  return "^" + ws + R"(\[)" + ws + "(?:" + item + ws + "(?:," + ws + item + ws + ")*)?" + R"(\])" + ws + "$";
}

/// A JSON array of strings, exactly.
const std::string& string_array_re() {
  static const std::string re = array_of(json_string_re());
  return re;
}

/// A JSON array of scalars and of objects whose members are scalars.
const std::string& flat_array_re() {
  static const std::string re = [] {
    const std::string ws = R"([ \t\n\r]*)";
    const std::string scalar = "(?:" + json_string_re() +
                               R"re(|-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]{1,4})?|true|false|null))re";
    const std::string member = json_string_re() + ws + ":" + ws + scalar;
    const std::string object = R"(\{)" + ws + "(?:" + member + ws + "(?:," + ws + member + ws + ")*)?" + R"(\})";
    return array_of("(?:" + scalar + "|" + object + ")");
  }();
  return re;
}

/// The depends list of t as jsonb when it is an array of strings, else an empty one (the cast
/// must never fail).
const std::string& depends_jsonb() {
  static const std::string sql =
      "(CASE WHEN t.depends ~ '" + string_array_re() + "' THEN t.depends::jsonb ELSE '[]'::jsonb END)";
  return sql;
}

// -- the scans --------------------------------------------------------------------------------

/// The list rules whose regular expression is narrower than "a JSON array": their rows are
/// parsed again before they are reported (flag_still_holds).
struct ConfirmedList {
  std::string_view rule;
  std::string_view column;
};
constexpr ConfirmedList kConfirmedLists[] = {
    {"malformed-list:acceptance", "acceptance"}, {"malformed-list:files", "files"}, {"malformed-list:relates", "relates"}};

/// How PostgreSQL tests each rule of task_rules(): the rules both dialects test alike
/// (engines/store/scan_sql.h), and these.
const std::map<std::string_view, sql::RuleSql>& rule_sql() {
  static const std::map<std::string_view, sql::RuleSql> rules = [] {
    auto r = sql::common_rule_sql({.greatest = "GREATEST", .truth_open = "(", .truth_close = ")::int"});
    // An empty list ("[]", most of them) is valid without testing it.
    r["malformed-list:depends"] = {"(t.depends <> '[]' AND t.depends !~ '" + string_array_re() + "')", {}};
    // Always valid JSON (the search column casts them): only the kind of value can be wrong.
    for (auto [name, column] : {std::pair<std::string_view, std::string_view>{"malformed-list:labels", "t.labels"},
                                {"malformed-list:notes", "t.notes"}})
      r[name] = {"(" + std::string(column) + " <> '[]' AND jsonb_typeof(" + std::string(column) + "::jsonb) <> 'array')",
                 {}};
    for (const auto& list : kConfirmedLists)
      r[list.rule] = {"(t." + std::string(list.column) + " <> '[]' AND t." + std::string(list.column) + " !~ '" +
                          flat_array_re() + "')",
                      {}};
    r["task-id"] = {"(CASE WHEN t.id ~ '^T[0-9]{3,}$' THEN substr(t.id, 2)::numeric <> t.num ELSE true END)", {"t.num"}};
    r["title"] = {"(length(btrim(t.title)) < 3 OR length(t.title) > 200 OR strpos(t.title, chr(10)) > 0 OR "
                  "strpos(t.title, chr(13)) > 0)",
                  {"length(btrim(t.title))"}};
    r["title-equals-description"] = {"(t.description <> '' AND lower(btrim(t.title, ' ' || chr(9) || chr(10) || chr(13))) = "
                                     "lower(btrim(t.description, ' ' || chr(9) || chr(10) || chr(13))))",
                                     {}};
    // The search vector is a generated column of the row itself: no task can miss it.
    r["search-index"] = {"false", {}};
    return r;
  }();
  return rules;
}

/// One pass over the tasks: the id, then per rule its flag and its detail columns, then the raw
/// text of each list of kConfirmedLists when its flag is set; only rows breaking a rule.
std::string task_rules_sql() {
  std::string raw_lists;
  for (const auto& list : kConfirmedLists)
    raw_lists += ", CASE WHEN " + rule_sql().at(list.rule).flag + " THEN t." + std::string(list.column) + " END";
  return sql::task_rules_query(rule_sql(), "false", raw_lists, " ORDER BY t.num");
}

/// The scans' SQL with placeholders: {ID:column} narrows to one task; {TASK} is ScanScope::task,
/// {NUM} ScanScope::number.
std::string scan_sql(ScanKind kind, bool one_task) {
  switch (kind) {
    case ScanKind::TaskRules: return task_rules_sql();
    case ScanKind::MissingDependency:
      return "SELECT t.id, j.value FROM tasks t CROSS JOIN LATERAL jsonb_array_elements_text(" + depends_jsonb() +
             ") WITH ORDINALITY j(value, n) WHERE {ID:t.id} AND t.depends <> '[]' AND "
             "NOT EXISTS (SELECT 1 FROM tasks u WHERE u.id = j.value) ORDER BY t.num, j.n";
    case ScanKind::DependencyEdges:
      return "SELECT d.task_id, d.depends_on, 'extra' FROM task_deps d WHERE {ID:d.task_id} AND NOT EXISTS "
             "(SELECT 1 FROM tasks t CROSS JOIN LATERAL jsonb_array_elements_text(" + depends_jsonb() + ") j(value) "
             "WHERE t.id = d.task_id AND j.value = d.depends_on) "
             "UNION ALL SELECT t.id, j.value, 'missing' FROM tasks t CROSS JOIN LATERAL jsonb_array_elements_text(" +
             depends_jsonb() + ") j(value) WHERE {ID:t.id} AND t.depends <> '[]' AND NOT EXISTS "
             "(SELECT 1 FROM task_deps d WHERE d.task_id = t.id AND d.depends_on = j.value)";
    case ScanKind::OrphanSearchRows:
    case ScanKind::MissingSearchTerms:
    case ScanKind::IntegrityQuick:
    case ScanKind::IntegrityFull: return {};  // answered without SQL (PgStore::scan)
    case ScanKind::SharedClaims:
      return "SELECT f.task_id, string_agg(f.session, ', ' ORDER BY f.session) FROM focus f WHERE {ID:f.task_id} "
             "GROUP BY f.task_id HAVING count(*) > 1";
    case ScanKind::SessionsWithSeveralTasks:
      return "SELECT '', f.session, string_agg(f.task_id, ', ' ORDER BY f.task_id) FROM focus f GROUP BY f.session "
             "HAVING count(*) > 1";
    case ScanKind::IdCounter:
      return "SELECT '', coalesce(counter, 'missing'), top FROM (SELECT (SELECT value FROM meta WHERE "
             "key = 'next_task_num') AS counter, (SELECT max(num) FROM tasks) AS top) x "
             "WHERE top IS NOT NULL AND "
             "coalesce(CASE WHEN counter ~ '^-?[0-9]+$' THEN counter::numeric END, 0) <= top";
    case ScanKind::ForeignKeys:
      // The one reference of the schema; the server enforces it, so this finds nothing unless the
      // constraint was dropped.
      return "SELECT 'audit_changes', c.ord, 'audit' FROM audit_changes c "
             "WHERE NOT EXISTS (SELECT 1 FROM audit a WHERE a.seq = c.seq) ORDER BY c.ord";
    case ScanKind::ParentRows:
      // The parent chain of one task: it and its ancestors (a loop stops after 64 steps).
      if (one_task)
        return "WITH RECURSIVE up(id, n) AS (SELECT {TASK}::text COLLATE \"C\", 0 UNION ALL SELECT t.parent, up.n + 1 FROM tasks t "
               "JOIN up ON t.id = up.id WHERE t.parent IS NOT NULL AND up.n < 64) "
               "SELECT t.id, coalesce(t.parent, ''), t.type, t.archived FROM up JOIN tasks t ON t.id = up.id ORDER BY up.n";
      return "SELECT t.id, coalesce(t.parent, ''), t.type, t.archived FROM tasks t ORDER BY t.num";
    case ScanKind::DependencyRows:
      return "SELECT t.id, j.value FROM tasks t CROSS JOIN LATERAL jsonb_array_elements_text(" + depends_jsonb() +
             ") WITH ORDINALITY j(value, n) WHERE t.depends <> '[]' AND "
             "EXISTS (SELECT 1 FROM tasks u WHERE u.id = j.value) ORDER BY t.num, j.n";
    default: return sql::common_scan_sql(kind);
  }
  return {};
}

/// Writes out the marks of engines/store/scan_sql.h: {ID:column} ("column = {TASK}" for one task,
/// else "true"), then {TASK} and {NUM} as placeholders numbered in order, binding the scope's values.
std::string bind_scope(std::string_view sql, const ScanScope& scope, sql::Args& args) {
  const bool one_task = !scope.task.empty();
  const std::string narrowed = sql::expand_scan_marks(sql, one_task, "true", "{TASK}", "{NUM}");
  std::string task_mark;
  std::string number_mark;
  if (narrowed.find("{TASK}") != std::string::npos) task_mark = args(scope.task);
  if (narrowed.find("{NUM}") != std::string::npos) number_mark = args(scope.number) + "::bigint";
  return sql::expand_scan_marks(narrowed, one_task, "true", task_mark, number_mark);
}

/// A list whose regular expression refused it is reported only when it is not a JSON array.
bool still_malformed(const DiagnosticRow& wide, std::size_t raw_column) {
  if (raw_column >= wide.size()) return true;
  auto value = json::parse(wide[raw_column]);
  return !value || !value->is_array();
}

/// Whether a rule's flag ("t") holds: a list the regular expression refused counts only when it is
/// not a JSON array either (the raw lists follow every rule's columns in the wide row).
bool rule_broken(const DiagnosticRow& row, const TaskRule& rule, std::string_view flag) {
  if (flag != "t") return false;
  std::size_t raw_start = 1;
  for (const auto& each : task_rules()) raw_start += 1 + static_cast<std::size_t>(each.details);
  for (std::size_t i = 0; i < std::size(kConfirmedLists); ++i)
    if (rule.name == kConfirmedLists[i].rule) return still_malformed(row, raw_start + i);
  return true;
}

/// Rows as scans return them: every column as text, NULL as "".
std::vector<DiagnosticRow> to_diagnostic_rows(const Rows& rows) {
  std::vector<DiagnosticRow> out;
  const int columns = rows.get() ? PQnfields(rows.get()) : 0;
  out.reserve(static_cast<std::size_t>(rows.size()));
  for (int r = 0; r < rows.size(); ++r) {
    DiagnosticRow row;
    row.reserve(static_cast<std::size_t>(columns));
    for (int c = 0; c < columns; ++c) row.emplace_back(rows.is_null(r, c) ? std::string_view() : rows.text(r, c));
    out.push_back(std::move(row));
  }
  return out;
}

std::vector<std::optional<std::string>> table_names() {
  std::vector<std::optional<std::string>> names;
  for (const auto& table : dumped_tables()) names.emplace_back(std::string(table.name));
  return names;
}

/// What can break in a PostgreSQL store that the server does not guard: a table of the schema
/// gone, a meta row gone or not a number, an index left invalid (a failed concurrent build).
/// Cheap: catalog lookups and three meta rows.
Result<std::vector<std::string>> structure_problems(Connection& db) {
  std::vector<std::string> problems;
  CT_TRY_ASSIGN(Rows missing, db.query("SELECT n.name FROM unnest($1::text[]) WITH ORDINALITY AS n(name, i) WHERE "
                                       "to_regclass(quote_ident(current_schema()) || '.' || quote_ident(n.name)) IS NULL "
                                       "ORDER BY n.i",
                                       sql::values(text_array(table_names())), "cannot check the store's tables"));
  bool meta_present = true;
  for (int i = 0; i < missing.size(); ++i) {
    problems.push_back("table " + std::string(missing.text(i, 0)) + " is missing");
    if (missing.text(i, 0) == "meta") meta_present = false;
  }
  if (meta_present) {
    CT_TRY_ASSIGN(Rows rows, db.query("SELECT k FROM unnest(ARRAY['schema_version', 'next_task_num', 'change_stamp']) "
                                      "AS k WHERE NOT EXISTS (SELECT 1 FROM meta m WHERE m.key = k AND "
                                      "m.value ~ '^-?[0-9]+$')",
                                      "cannot check the store's metadata"));
    for (int i = 0; i < rows.size(); ++i)
      problems.push_back("meta row " + std::string(rows.text(i, 0)) + " is missing or not a number");
  }
  CT_TRY_ASSIGN(Rows invalid, db.query("SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
                                       "JOIN pg_namespace n ON n.oid = c.relnamespace "
                                       "WHERE n.nspname = current_schema() AND NOT (i.indisvalid AND i.indisready) "
                                       "ORDER BY c.relname",
                                       "cannot check the store's indexes"));
  for (int i = 0; i < invalid.size(); ++i)
    problems.push_back("index " + std::string(invalid.text(i, 0)) + " is invalid (a failed build); REINDEX it");
  return problems;
}

}  // namespace

Result<std::vector<DiagnosticRow>> PgStore::scan(ScanKind kind, const ScanScope& scope) {
  switch (kind) {
    // No search index rows exist apart from the tasks: the tsvector is a generated column.
    // A search there matches the tsvector itself: no list of words to fall behind.
    case ScanKind::OrphanSearchRows:
    case ScanKind::MissingSearchTerms: return std::vector<DiagnosticRow>{};
    // PostgreSQL checks its pages itself (and has no PRAGMA integrity_check); both answer what
    // integrity_problems() checks.
    case ScanKind::IntegrityQuick:
    case ScanKind::IntegrityFull: {
      CT_TRY_ASSIGN(std::vector<std::string> problems, structure_problems(*db_));
      std::vector<DiagnosticRow> rows;
      for (auto& problem : problems) rows.push_back({std::move(problem)});
      return rows;
    }
    default: break;
  }
  sql::Args args;
  const std::string sql = bind_scope(scan_sql(kind, !scope.task.empty()), scope, args);
  CT_TRY_ASSIGN(Rows rows, query(sql, args, "cannot run a consistency check"));
  auto out = to_diagnostic_rows(rows);
  if (kind == ScanKind::TaskRules) return split_task_rules(out, rule_broken);
  return out;
}

Result<DerivedRepair> PgStore::rebuild_derived() {
  DerivedRepair repair;
  CT_TRY(db_->exec("SAVEPOINT ct_rebuild", "cannot start a repair"));
  auto result = [&]() -> Result<void> {
    CT_TRY(query("INSERT INTO meta(key, value) VALUES('next_task_num', '1') ON CONFLICT (key) DO NOTHING",
                 "cannot repair the task id counter"));
    CT_TRY_ASSIGN(Rows removed, query("DELETE FROM task_deps d WHERE NOT EXISTS (SELECT 1 FROM tasks t CROSS JOIN LATERAL "
                                      "jsonb_array_elements_text(" + depends_jsonb() + ") j(value) "
                                      "WHERE t.id = d.task_id AND j.value = d.depends_on)",
                                      "cannot repair dependency edges"));
    repair.edges_removed = removed.affected();
    CT_TRY_ASSIGN(Rows added, query("INSERT INTO task_deps(task_id, depends_on) SELECT DISTINCT t.id, j.value "
                                    "FROM tasks t CROSS JOIN LATERAL jsonb_array_elements_text(" + depends_jsonb() +
                                    ") j(value) ON CONFLICT DO NOTHING",
                                    "cannot repair dependency edges"));
    repair.edges_added = added.affected();
    // The search vectors are generated columns: nothing to rebuild (index_removed/added stay 0).
    CT_TRY_ASSIGN(Rows raised, query("UPDATE meta SET value = ((SELECT max(num) FROM tasks) + 1)::text "
                                     "WHERE key = 'next_task_num' AND coalesce(CASE WHEN value ~ '^-?[0-9]+$' "
                                     "THEN value::numeric END, 0) <= (SELECT max(num) FROM tasks)",
                                     "cannot repair the task id counter"));
    repair.counter_raised = raised.affected() > 0;
    CT_TRY_ASSIGN(repair.memory_recounted, recount_memory());
    return {};
  }();
  if (!result) {
    (void)db_->exec("ROLLBACK TO SAVEPOINT ct_rebuild; RELEASE SAVEPOINT ct_rebuild", "cannot undo a repair");
    return std::unexpected(std::move(result.error()));
  }
  CT_TRY(db_->exec("RELEASE SAVEPOINT ct_rebuild", "cannot finish a repair"));
  return repair;
}

Result<std::vector<std::string>> PgStore::integrity_problems() {
  if (!in_transaction()) CT_TRY(db_->ensure_connected());
  return structure_problems(*db_);
}

Result<void> PgStore::backup_to(const std::filesystem::path& file) {
  // One snapshot for every table: the caller's transaction, or a read-only one of our own.
  const bool own = !in_transaction();
  if (own) {
    CT_TRY(db_->ensure_connected());
    CT_TRY(db_->exec("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", "cannot begin the backup"));
  }
  auto written = backups_.write(file, [&](DumpSink& sink) { return dump(sink); });
  if (own) rollback();
  return written;
}

Result<void> PgStore::replace_contents_from(const std::filesystem::path& file) {
  return load([&](DumpSink& sink) { return backups_.read(file, sink); });
}

}  // namespace ct::pg
