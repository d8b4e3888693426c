// The original CLEO's memory as tasks.import brings it (domains/tasks/import_records.h): each entry
// of its brain (original_brain.h) memory.observe's params, checked as that call checks them before
// anything is written, then run as that call inside this one — the same checks, statuses and new
// ids, its changes in this call's audit row.
#include <algorithm>

#include "domains/tasks/import_records.h"
#include "engines/project/project.h"
#include "engines/rules/memory.h"

namespace ct::tasks {

std::optional<std::string> scope_path_here(const std::filesystem::path& root, const std::string& path) {
  std::filesystem::path given(path);
  if (given.is_absolute()) {
    if (!lies_within(given, root)) return std::nullopt;
    auto resolved = resolve_links(given);
    auto base = resolve_links(root);
    if (!resolved || !base) return std::nullopt;
    given = resolved->lexically_relative(*base);
  }
  auto normal = memory::normal_scope_path(given.generic_string());
  return normal ? std::optional<std::string>(*normal) : std::nullopt;
}

Result<std::vector<MemoryRecord>> read_memory(Context& context, const ImportArgs& args, const json::Value& entries,
                                              const std::set<std::string>& in_store, Dangling& dangling,
                                              json::Value& problems) {
  const OperationSpec* observe = context.registry->find("memory", "observe");
  if (!observe) return fail(ErrorCode::Internal, "memory.observe is missing from the registry");
  std::vector<MemoryRecord> memory;
  json::Value memory_problems = json::Value::array();
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const json::Value& item = entries.as_array()[i];
    MemoryRecord record{i, item["from"].string_or_empty(), item["params"]};
    const std::string where = store_label("memory", i, record.from);
    json::Value& observed = record.params;
    for (std::string_view field : {"taskId", "epic"})
      if (const json::Value& id = observed[field]; id.is_string() && !in_store.contains(id.as_string())) {
        dangling.add(where, field, id.as_string());
        observed.erase(field);
      }
    for (std::string_view field : {"tasks", "files"}) {
      if (!observed[field].is_array()) continue;
      json::Value kept = json::Value::array();
      for (const auto& value : observed[field].as_array()) {
        const std::string text = value.string_or_empty();
        std::optional<std::string> here = field == "tasks" ? (in_store.contains(text) ? std::optional(text) : std::nullopt)
                                                           : scope_path_here(context.work_root(), text);
        if (!here) {
          dangling.add(where, field, text);
          continue;
        }
        if (std::find(kept.as_array().begin(), kept.as_array().end(), json::Value(*here)) == kept.as_array().end())
          kept.push_back(*here);
      }
      if (kept.empty()) observed.erase(field);
      else observed.set(field, std::move(kept));
    }
    if (auto checked = Params::validate(*observe, observed); !checked) {
      json::Value problem = record_problem(i, json::Value(), checked.error());
      problem.set("of", "memory");
      problem.set("id", record.from);
      memory_problems.push_back(std::move(problem));
      continue;
    }
    memory.push_back(std::move(record));
  }
  if (!memory_problems.empty() && !args.skip_invalid) {
    const json::Value& first = memory_problems.as_array().front();
    return fail(Error(ErrorCode::Validation, "memory: " + std::to_string(memory_problems.size()) + " of " +
                                                 std::to_string(entries.size()) + " entries are invalid; first: " +
                                                 store_label("memory", static_cast<std::size_t>(first["index"].as_int()),
                                                             first["id"].string_or_empty()) +
                                                 " " + first["message"].as_string())
                    .with_fix("correct them in the original, or pass skipInvalid:true to import without them: " +
                              call("tasks.import", {{"from", args.from.value_or("")}, {"skipInvalid", true}, {"dryRun", true}}))
                    .with_detail("field", "memory")
                    .with_detail("records", std::move(memory_problems)));
  }
  for (auto& problem : memory_problems.as_array()) problems.push_back(std::move(problem));
  return memory;
}

/// The original's memory, each entry a memory.observe run as this caller inside this call
/// (NestedRuns::run_inside): the same checks, the same status (an agent's entry of a kind people
/// govern is proposed — never verified), a new id (no entry here is ever overwritten); its changes
/// join this call's audit row, so tasks.undo takes them back with the rest. An entry this store
/// holds already (the same content) is not added twice; one that nearly repeats an entry here is
/// left out, as memory.observe leaves it without force — each listed.
Result<json::Value> import_memory(Context& context, NestedRuns& runs, const std::vector<MemoryRecord>& records,
                                  std::vector<std::string>& warnings) {
  if (records.empty()) return json::Value();
  const OperationSpec* observe = context.registry->find("memory", "observe");
  if (!observe) return fail(ErrorCode::Internal, "memory.observe is missing from the registry");
  std::int64_t added = 0;
  json::Value kinds = json::Value::object();
  std::vector<std::string> proposed;
  json::Value held = json::Value::array();
  json::Value similar = json::Value::array();
  std::vector<std::string> said;
  // memory.observe's external step, which read its scope files: done for every entry by this
  // call's own (read_for_import).
  json::Value read = json::Value::object();
  read.set("files", context.external ? context.external->data["memoryFiles"] : json::Value::object());
  const Reply observed_files{std::move(read), {}, {}, {}};
  for (const auto& record : records) {
    AuditEntry inner;
    auto reply = runs.run_inside(context, *observe, record.params, inner, &observed_files);
    if (!reply && reply.error().code == ErrorCode::AlreadyExists) {
      json::Value row = json::Value::object();
      row.set("from", record.from);
      std::vector<std::string> ids;
      if (reply.error().details["similar"].is_array())
        for (const auto& other : reply.error().details["similar"].as_array()) ids.push_back(other["id"].string_or_empty());
      row.set("ids", json::Value::array_of(ids));
      similar.push_back(std::move(row));
      continue;
    }
    if (!reply) {
      Error error = std::move(reply.error());
      error.message = store_label("memory", record.index, record.from) + ": " + error.message;
      return fail(std::move(error));
    }
    const std::string id = reply->data["id"].string_or_empty();
    if (reply->note == ErrorCode::AlreadyExists) {
      json::Value row = json::Value::object();
      row.set("from", record.from);
      row.set("id", id);
      held.push_back(std::move(row));
      continue;
    }
    ++added;
    const std::string kind = record.params["kind"].string_or_empty();
    kinds.set(kind, (kinds[kind].is_int() ? kinds[kind].as_int() : 0) + 1);
    if (reply->data["status"] == json::Value("proposed")) proposed.push_back(id);
    for (auto& warning : reply->warnings)
      if (!warning.starts_with(id + " is proposed")) said.push_back(id + " (" + record.from + "): " + warning);
    for (auto& change : inner.changes) context.record(std::move(change));
  }
  json::Value out = json::Value::object();
  out.set("added", added);
  if (!kinds.empty()) out.set("kinds", std::move(kinds));
  if (!proposed.empty()) {
    warnings.push_back(std::to_string(proposed.size()) + " memory entr" + (proposed.size() == 1 ? "y is" : "ies are") +
                       " proposed: their kind is served once a person verifies it (ct memory verify " + proposed.front() +
                       ")");
    out.set("proposed", json::Value::array_of(proposed));
  }
  if (!held.empty()) out.set("held", std::move(held));
  if (!similar.empty()) {
    warnings.push_back(std::to_string(similar.size()) + " memory entr" + (similar.size() == 1 ? "y" : "ies") +
                       " of the original nearly repeat entries here and were left out (data.memory.similar); "
                       "memory.observe with force:true records one anyway");
    out.set("similar", std::move(similar));
  }
  constexpr std::size_t kSaid = 20;
  for (std::size_t i = 0; i < said.size() && i < kSaid; ++i) warnings.push_back(std::move(said[i]));
  if (said.size() > kSaid) warnings.push_back("… and " + std::to_string(said.size() - kSaid) + " more about memory entries");
  return out;
}

}  // namespace ct::tasks
