// Shared by the research domain's handler files (research_query.cpp, research_mutate.cpp,
// research_sync.cpp).
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "core/text.h"
#include "domains/context.h"
#include "domains/params.h"
#include "engines/rules/research.h"

namespace ct::research {

inline constexpr std::size_t kListedInReply = 100;  // ids, invalid lines or conflicts named in one reply

inline std::string today(Context& context) { return format_iso8601(context.now()).substr(0, 10); }

inline Error task_not_found(const std::string& id) {
  return Error(ErrorCode::NotFound, "Task " + id + " not found")
      .with_fix(call("tasks.find", {{"query", id}}))
      .with_detail("taskId", id);
}

/// The first of `ids` that names no task, if any.
inline Result<std::optional<std::string>> missing_task(Context& context, const std::vector<std::string>& ids) {
  if (ids.empty()) return std::optional<std::string>();
  CT_TRY_ASSIGN(std::vector<Task> found, context.db().get_tasks(ids));
  for (const auto& id : ids)
    if (std::none_of(found.begin(), found.end(), [&](const Task& t) { return t.id == id; }))
      return std::optional<std::string>(id);
  return std::optional<std::string>();
}

inline Error entry_not_found(const std::string& id) {
  return Error(ErrorCode::NotFound, "Research entry " + id + " not found")
      .with_fix(call("research.find", {{"query", id}}))
      .with_alternative("List research entries", "research.list")
      .with_detail("id", id);
}

inline Result<ResearchEntry> load(Context& context, const std::string& id) {
  CT_TRY_ASSIGN(std::optional<ResearchEntry> entry, context.db().get_research(id));
  if (!entry) return fail(entry_not_found(id));
  return std::move(*entry);
}

/// An entry in a list or a reply that names it: id, title, status, date, agentType, archived.
inline json::Value compact_json(const ResearchEntry& entry) {
  json::Value out = json::Value::object();
  out.set("id", entry.id);
  out.set("title", entry.title);
  out.set("status", to_string(entry.status));
  out.set("date", entry.date);
  out.set("agentType", entry.agent_type);
  if (entry.archived) out.set("archived", true);
  return out;
}

/// The `id` param of an operation on one entry.
inline ParamSpec id_spec() {
  return {.name = "id", .type = ParamType::String, .required = true, .max = 120, .pattern = kResearchIdPattern,
          .description = "Entry id: task id, dash, slug (T001-auth-options)", .positional = true, .single_line = true};
}

inline void record(Context& context, const std::optional<ResearchEntry>& before, const ResearchEntry& after) {
  context.record(FieldChange{"", "research." + after.id, before ? research_manifest_json(*before) : json::Value(),
                             research_manifest_json(after)});
}

}  // namespace ct::research
