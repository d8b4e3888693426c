#include "domains/tasks/original_brain.h"

#include <map>
#include <set>

#include "core/json_parse.h"
#include "core/text.h"
#include "domains/tasks/original_store.h"
#include "engines/store/open/open_store.h"
#include "engines/store/task.h"

namespace ct::tasks {
namespace {

/// One table of the brain that becomes memory: its kind here, the name brain_memory_links gives
/// its entries, and the columns read (everything else is derived — left silently — or reported).
struct BrainTable {
  std::string_view name;
  std::string_view kind;
  std::string_view link;                              // brain_memory_links.memory_type
  std::map<std::string_view, std::string_view> read;  // column → where it goes (the report's `mapped`)
};

constexpr std::string_view kTitle = "title (its first line; the whole text opens the body when longer)";
constexpr std::string_view kProvenance = "body: where it came from";

const std::vector<BrainTable>& brain_tables() {
  static const std::vector<BrainTable> kTables = {
      {"brain_decisions", "decision", "decision",
       {{"id", kProvenance}, {"type", kProvenance}, {"confidence", kProvenance}, {"created_at", kProvenance},
        {"decision", kTitle}, {"rationale", "body"}, {"outcome", "body"}, {"alternatives_json", "body"},
        {"context_task_id", "source task (taskId)"}, {"context_epic_id", "scope: epic"}}},
      {"brain_learnings", "learning", "learning",
       {{"id", kProvenance}, {"actionable", kProvenance}, {"created_at", kProvenance}, {"insight", kTitle},
        {"application", "body"}, {"source", "body"}, {"confidence", "confidence"}}},
      {"brain_patterns", "pattern", "pattern",
       {{"id", kProvenance}, {"type", kProvenance}, {"impact", kProvenance}, {"extracted_at", kProvenance},
        {"pattern", kTitle}, {"context", "body"}, {"anti_pattern", "body"}, {"mitigation", "body"},
        {"examples_json", "body"}, {"frequency", "body"}, {"occurrence_count", "body"}, {"success_rate", "body"}}},
      {"brain_observations", "observation", "observation",
       {{"id", kProvenance}, {"type", kProvenance}, {"source_type", kProvenance}, {"agent", kProvenance},
        {"source_session_id", kProvenance}, {"created_at", kProvenance}, {"title", kTitle}, {"subtitle", "body"},
        {"narrative", "body"}, {"facts_json", "body"}, {"files_modified_json", "scope: files"}}},
  };
  return kTables;
}

constexpr std::string_view kLinks = "brain_memory_links";

/// Columns the original derived from the rest (scores, tiers, hashes, bookkeeping of its graph and
/// of its peers), or that only mark an entry it no longer holds (read as such): nothing is lost.
const std::set<std::string_view> kDerived = {
    "updated_at",      "content_hash",          "quality_score",    "memory_tier",      "memory_type",
    "valid_at",        "network",               "source_confidence", "citation_count",  "tier_promoted_at",
    "tier_promotion_reason", "provenance_class", "peer_id",          "peer_scope",       "stability_score",
    "times_derived",   "level",                 "tree_id",          "validator_run_at", "decision_category",
    "last_seen_at",    "discovery_tokens",      "invalid_at",       "expired_at",       "superseded_by"};

/// Values that only repeat a column's default say nothing (a learning not actionable, a decision
/// still proposed by an agent).
bool says_something(std::string_view column, const json::Value& value) {
  if (value.is_null()) return false;
  if (value.is_string() && trim(value.as_string()).empty()) return false;
  static const std::map<std::string_view, json::Value> kDefaults = {
      {"verified", json::Value(0)},           {"actionable", json::Value(0)},
      {"decided_by", json::Value("agent")},   {"confirmation_state", json::Value("proposed")},
      {"frequency", json::Value(1)},          {"occurrence_count", json::Value(1)},
      {"examples_json", json::Value("[]")},   {"source_type", json::Value("agent")}};
  auto found = kDefaults.find(column);
  return found == kDefaults.end() || found->second != value;
}

std::string text_of(const json::Value& row, std::string_view column) {
  const json::Value& value = row[column];
  if (value.is_string()) return std::string(trim(value.as_string()));
  if (value.is_null()) return "";
  return value.dump();
}

/// A JSON column holding a list (facts_json, alternatives_json …): its items as text.
std::vector<std::string> list_of(const json::Value& row, std::string_view column) {
  std::vector<std::string> out;
  const json::Value& value = row[column];
  if (!value.is_string()) return out;
  auto parsed = json::parse(value.as_string());
  if (!parsed || !parsed->is_array()) {
    if (!trim(value.as_string()).empty()) out.emplace_back(trim(value.as_string()));
    return out;
  }
  for (const auto& item : parsed->as_array()) {
    std::string text = item.is_string() ? std::string(trim(item.as_string())) : item.dump();
    if (!text.empty()) out.push_back(std::move(text));
  }
  return out;
}

void mapped(ForeignFile& file, const std::string& field, std::string_view to) {
  if (!file.mapped.contains(field)) file.mapped.set(field, std::string(to));
}
void lost(ForeignFile& file, const std::string& field, std::int64_t count = 1) {
  if (count <= 0) return;
  const json::Value& had = file.unmapped[field];
  file.unmapped.set(field, (had.is_int() ? had.as_int() : 0) + count);
}

/// A title from a text: its first line that says something, cut to `max` characters ("…" ends
/// it); `whole` tells whether it holds all of the text (else the whole text opens the body).
std::string title_of(std::string_view text, std::size_t max, bool& whole) {
  std::string line;
  std::size_t lines = 0;
  for (auto piece : split_lines(text)) {
    if (trim(piece).empty()) continue;
    if (++lines == 1) line = std::string(trim(piece));
  }
  whole = lines <= 1 && utf8_length(line) <= max;
  return whole ? line : clip(line, max);
}

/// The body's paragraphs, without the empty ones.
std::string paragraphs(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& part : parts)
    if (!trim(part).empty()) out += (out.empty() ? "" : "\n\n") + part;
  return out;
}

/// An entry's row as memory.observe's params: {kind, title, body, taskId?, epic?, tasks?, files?,
/// confidence?}.
json::Value entry_params(const BrainTable& table, const json::Value& row, std::size_t title_max,
                         const std::vector<std::string>& linked) {
  json::Value params = json::Value::object();
  params.set("kind", std::string(table.kind));
  std::vector<std::string> body;
  std::vector<std::string> detail;  // for the provenance line
  auto titled = [&](const std::string& text) {
    bool whole = true;
    params.set("title", title_of(text, title_max, whole));
    if (!whole) body.push_back(text);
  };
  auto labelled = [&](std::string_view label, const std::string& text) {
    if (!text.empty()) body.push_back(std::string(label) + ": " + text);
  };
  std::string created = text_of(row, "created_at");
  std::string agent, session;
  if (table.name == "brain_decisions") {
    titled(text_of(row, "decision"));
    body.push_back(text_of(row, "rationale"));
    labelled("Alternatives", join(list_of(row, "alternatives_json"), "; "));
    labelled("Outcome", text_of(row, "outcome"));
    if (auto type = text_of(row, "type"); !type.empty()) detail.push_back(type);
    if (auto confidence = text_of(row, "confidence"); !confidence.empty()) detail.push_back("confidence " + confidence);
    if (auto task = text_of(row, "context_task_id"); !task.empty())
      params.set("taskId", normalize_task_id(task).value_or(task));
    if (auto epic = text_of(row, "context_epic_id"); !epic.empty()) params.set("epic", normalize_task_id(epic).value_or(epic));
  } else if (table.name == "brain_learnings") {
    titled(text_of(row, "insight"));
    labelled("Apply", text_of(row, "application"));
    labelled("Source", text_of(row, "source"));
    if (row["actionable"] == json::Value(1) || row["actionable"] == json::Value(true)) detail.push_back("actionable");
    if (row["confidence"].is_number()) params.set("confidence", row["confidence"]);
  } else if (table.name == "brain_patterns") {
    titled(text_of(row, "pattern"));
    body.push_back(text_of(row, "context"));
    labelled("Anti-pattern", text_of(row, "anti_pattern"));
    labelled("Mitigation", text_of(row, "mitigation"));
    labelled("Examples", join(list_of(row, "examples_json"), "; "));
    const json::Value& seen = row["occurrence_count"].is_int() ? row["occurrence_count"] : row["frequency"];
    std::vector<std::string> record;
    if (seen.is_int() && seen.as_int() > 1) record.push_back(std::to_string(seen.as_int()) + " times");
    if (row["success_rate"].is_number()) record.push_back("success rate " + row["success_rate"].dump());
    labelled("Seen", join(record, ", "));
    if (auto type = text_of(row, "type"); !type.empty()) detail.push_back(type);
    if (auto impact = text_of(row, "impact"); !impact.empty()) detail.push_back("impact " + impact);
    created = text_of(row, "extracted_at");
  } else {
    titled(text_of(row, "title"));
    body.push_back(text_of(row, "subtitle"));
    body.push_back(text_of(row, "narrative"));
    std::string facts;
    for (const auto& fact : list_of(row, "facts_json")) facts += (facts.empty() ? "- " : "\n- ") + fact;
    body.push_back(facts);
    if (auto type = text_of(row, "type"); !type.empty()) detail.push_back(type);
    if (auto source = text_of(row, "source_type"); !source.empty() && source != "agent") detail.push_back("from " + source);
    agent = text_of(row, "agent");
    if (auto was = text_of(row, "source_session_id"); !was.empty()) session = session_id_for(was);
    if (auto files = list_of(row, "files_modified_json"); !files.empty()) params.set("files", json::Value::array_of(files));
  }
  if (!linked.empty()) params.set("tasks", json::Value::array_of(linked));
  // Where it came from: the original's table and id, what it was there, when, by whom.
  std::string from = "From the original CLEO: " + std::string(table.name) + " " + text_of(row, "id");
  if (!detail.empty()) from += " (" + join(detail, "; ") + ")";
  if (!created.empty()) from += ", " + created;
  if (!agent.empty()) from += "; agent " + agent;
  if (!session.empty()) from += "; session " + session;
  body.push_back(from + ".");
  params.set("body", paragraphs(body));
  return params;
}

}  // namespace

bool is_brain_table(std::string_view name) { return name.starts_with("brain_"); }

Result<void> read_original_brain(const std::filesystem::path& database, bool whole_file, const OperationSpec& observe_spec,
                                 ForeignFile& file) {
  std::vector<std::string> wanted{std::string(kLinks)};
  for (const auto& table : brain_tables()) wanted.emplace_back(table.name);
  CT_TRY_ASSIGN(ForeignDatabase db, read_foreign_sqlite(database, wanted));
  const ParamSpec* title = observe_spec.find_param("title");
  const std::size_t title_max = title && title->max != kUnbounded ? static_cast<std::size_t>(title->max) : 200;

  // The tasks each entry is linked to: its scope's tasks.
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> links;
  if (const ForeignTable* table = db.find(kLinks)) {
    for (const auto& row : table->records.as_array()) {
      std::string task = text_of(row, "task_id");
      if (task.empty()) continue;
      task = normalize_task_id(task).value_or(task);
      auto& tasks = links[{text_of(row, "memory_type"), text_of(row, "memory_id")}];
      if (std::find(tasks.begin(), tasks.end(), task) == tasks.end()) tasks.push_back(std::move(task));
    }
    if (table->rows > 0) mapped(file, std::string(kLinks), "memory scope: tasks");
  }

  for (const auto& table : brain_tables()) {
    const ForeignTable* found = db.find(table.name);
    if (!found) continue;
    std::int64_t invalidated = 0;
    for (const auto& row : found->records.as_array()) {
      // What the original itself no longer holds is not brought back as memory.
      const bool gone = says_something("invalid_at", row["invalid_at"]) || says_something("expired_at", row["expired_at"]) ||
                        says_something("superseded_by", row["superseded_by"]) ||
                        row["confirmation_state"] == json::Value("superseded");
      if (gone) {
        ++invalidated;
        continue;
      }
      for (const auto& [column, value] : row.as_object()) {
        if (!says_something(column, value) || kDerived.contains(column)) continue;
        const std::string field = std::string(table.name) + "." + column;
        if (auto to = table.read.find(column); to != table.read.end())
          mapped(file, field, "memory " + std::string(table.kind) + ": " + std::string(to->second));
        else
          lost(file, field);
      }
      auto linked = links.find({std::string(table.link), text_of(row, "id")});
      json::Value record = json::Value::object();
      record.set("from", std::string(table.name) + " " + text_of(row, "id"));
      record.set("params", entry_params(table, row, title_max,
                                        linked == links.end() ? std::vector<std::string>{} : linked->second));
      file.memory.push_back(std::move(record));
    }
    lost(file, std::string(table.name) + " (invalidated or superseded there)", invalidated);
  }

  // The rest of the brain: its other tables, with their rows.
  static const std::set<std::string_view> kBookkeeping = {"brain_schema_meta", "__drizzle_migrations"};
  for (const auto& table : db.tables) {
    if (table.name == kLinks || kBookkeeping.contains(table.name) || table.rows == 0) continue;
    if (!whole_file && !is_brain_table(table.name)) continue;
    if (std::any_of(brain_tables().begin(), brain_tables().end(), [&](const BrainTable& t) { return t.name == table.name; }))
      continue;
    lost(file, table.name, table.rows);
  }
  return {};
}

}  // namespace ct::tasks
