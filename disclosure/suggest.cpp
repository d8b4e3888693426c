#include "disclosure/suggest.h"

#include <algorithm>
#include <cctype>

#include "core/text.h"
#include "domains/projection.h"
#include "engines/rules/lifecycle.h"

namespace ct::disclosure {
namespace {

/// "T12", "t", "T": an id prefix rather than words.
bool looks_like_id_prefix(std::string_view typed) {
  if (typed.empty() || (typed.front() != 'T' && typed.front() != 't')) return false;
  return std::all_of(typed.begin() + 1, typed.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool starts_with_folded(std::string_view text, std::string_view prefix) {
  return prefix.size() <= text.size() && to_lower_ascii(text.substr(0, prefix.size())) == to_lower_ascii(prefix);
}

json::Value strings(std::initializer_list<std::string_view> items) {
  json::Value out = json::Value::array();
  for (auto item : items) out.push_back(json::Value(item));
  return out;
}

Suggestions from_ids(const Envelope& reply, std::size_t limit) {
  Suggestions out;
  if (!reply.success) return out;
  for (const auto& row : reply_rows(reply.data))
    if (row["id"].is_string() && out.values.size() < limit) out.values.push_back(row["id"].as_string());
  out.total = reply.page ? std::max<std::int64_t>(reply.page->total, std::ssize(out.values)) : std::ssize(out.values);
  out.more = out.total > std::ssize(out.values);
  return out;
}

/// Those of `names` that start with `typed`, in their order.
template <typename Names>
Suggestions matching(const Names& names, std::string_view typed, std::size_t limit) {
  Suggestions out;
  for (const auto& name : names) {
    if (!starts_with_folded(name, typed)) continue;
    ++out.total;
    if (out.values.size() < limit) out.values.emplace_back(name);
  }
  out.more = out.total > std::ssize(out.values);
  return out;
}

Suggestions task_ids(Router& router, const Caller& caller, bool epics, bool open, std::string_view typed,
                     std::size_t limit) {
  const auto rows = static_cast<std::int64_t>(std::clamp<std::size_t>(limit, 1, 100));
  json::Value params = json::Value::object();
  // Work still to do: a task done or cancelled is no task to take or hand out.
  if (open) params.set("status", strings({"active", "pending", "blocked"}));
  if (!typed.empty() && !looks_like_id_prefix(typed)) {
    // Words: ranked as tasks.find ranks them (an epic is asked for as a field, and kept).
    params.set("query", std::string(typed.substr(0, 200)));
    params.set("limit", epics ? static_cast<std::int64_t>(100) : rows);
    params.set("fields", strings({"id", "type"}));
    Envelope found = router.dispatch({Gateway::Query, "tasks", "find", params, caller});
    if (!epics) return from_ids(found, limit);
    Suggestions out;
    if (!found.success) return out;
    for (const auto& row : reply_rows(found.data))
      if (row["type"] == json::Value("epic") && row["id"].is_string()) {
        ++out.total;
        if (out.values.size() < limit) out.values.push_back(row["id"].as_string());
      }
    out.more = out.total > std::ssize(out.values);
    return out;
  }
  params.set("fields", strings({"id"}));
  params.set("limit", rows);
  if (epics) params.set("type", "epic");
  if (typed.empty()) {
    // Nothing typed yet: the work in hand, most recently changed first.
    params.set("status", strings({"active", "pending", "blocked"}));
    params.set("sort", "updated");
    params.set("order", "desc");
  } else {
    params.set("idPrefix", std::string(typed.substr(0, 20)));
    params.set("sort", "id");
  }
  return from_ids(router.dispatch({Gateway::Query, "tasks", "list", params, caller}), limit);
}

Suggestions session_ids(Router& router, const Caller& caller, std::string_view typed, std::size_t limit) {
  json::Value params = json::Value::object();
  params.set("limit", static_cast<std::int64_t>(200));
  params.set("fields", strings({"id", "name", "status"}));
  Envelope listed = router.dispatch({Gateway::Query, "session", "list", params, caller});
  Suggestions out;
  if (!listed.success) return out;
  for (const auto& row : reply_rows(listed.data)) {
    const json::Value& status = row["status"];
    if (status != json::Value("active") && status != json::Value("suspended")) continue;
    if (!row["id"].is_string()) continue;
    const std::string& id = row["id"].as_string();
    bool named = row["name"].is_string() && !typed.empty() && starts_with_folded(row["name"].as_string(), typed);
    if (!starts_with_folded(id, typed) && !named) continue;
    ++out.total;
    if (out.values.size() < limit) out.values.push_back(id);
  }
  out.more = out.total > std::ssize(out.values);
  return out;
}

Suggestions listed_names(Router& router, const Caller& caller, std::string_view domain, std::string_view field,
                         std::string_view typed, std::size_t limit) {
  json::Value params = json::Value::object();
  params.set("fields", strings({field}));
  if (domain == "research") params.set("limit", static_cast<std::int64_t>(500));
  Envelope listed = router.dispatch({Gateway::Query, std::string(domain), "list", params, caller});
  std::vector<std::string> names;
  if (listed.success)
    for (const auto& row : reply_rows(listed.data))
      if (row[field].is_string()) names.push_back(row[field].as_string());
  return matching(names, typed, limit);
}

}  // namespace

std::string_view to_string(ValueKind kind) {
  switch (kind) {
    case ValueKind::TaskId: return "task id";
    case ValueKind::OpenTaskId: return "open task id";
    case ValueKind::EpicId: return "epic id";
    case ValueKind::SessionId: return "session id";
    case ValueKind::Skill: return "skill";
    case ValueKind::ResearchId: return "research entry";
    case ValueKind::Stage: return "lifecycle stage";
    case ValueKind::Gate: return "verification gate";
    case ValueKind::HelpLevel: return "help level";
  }
  return "value";
}

Suggestions suggest(Router& router, const Caller& caller, ValueKind kind, std::string_view typed, std::size_t limit) {
  typed = trim(typed);
  switch (kind) {
    case ValueKind::TaskId: return task_ids(router, caller, false, false, typed, limit);
    case ValueKind::OpenTaskId: return task_ids(router, caller, false, true, typed, limit);
    case ValueKind::EpicId: return task_ids(router, caller, true, false, typed, limit);
    case ValueKind::SessionId: return session_ids(router, caller, typed, limit);
    case ValueKind::Skill: return listed_names(router, caller, "skills", "name", typed, limit);
    case ValueKind::ResearchId: return listed_names(router, caller, "research", "id", typed, limit);
    case ValueKind::Stage: return matching(kLifecycleStages, typed, limit);
    case ValueKind::Gate: return matching(kVerificationGates, typed, limit);
    case ValueKind::HelpLevel: {
      // Level 2 is one operation's: it is asked for with the operation, not as a level alone.
      constexpr std::array<std::string_view, 3> kLevels = {"0", "1", "3"};
      return matching(kLevels, typed, limit);
    }
  }
  return {};
}

}  // namespace ct::disclosure
