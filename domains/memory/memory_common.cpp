#include "domains/memory/memory_common.h"

#include <algorithm>
#include <map>

#include "core/stored_text.h"
#include "core/text.h"
#include "engines/rules/catalogue.h"

namespace ct::memory {
namespace {

/// An entry's scope, confidence and governance fields (those set), into `out`: what the audit
/// trail keeps of an entry and a full reply shows.
void scope_fields(const MemoryEntry& entry, json::Value& out) {
  if (!entry.files.empty()) out.set("files", json::Value::array_of(entry.files));
  if (!entry.labels.empty()) out.set("labels", json::Value::array_of(entry.labels));
  if (!entry.tasks.empty()) out.set("tasks", json::Value::array_of(entry.tasks));
  if (!entry.epic.empty()) out.set("epic", entry.epic);
  if (entry.confidence) out.set("confidence", *entry.confidence);
  if (!entry.verified_by.empty()) out.set("verifiedBy", entry.verified_by);
  if (!entry.supersedes.empty()) out.set("supersedes", entry.supersedes);
  if (!entry.superseded_by.empty()) out.set("supersededBy", entry.superseded_by);
  if (!entry.reason.empty()) out.set("reason", entry.reason);
}

/// The entry as the audit trail keeps it: its content, status, scope and governance, not its use.
json::Value stored_json(const MemoryEntry& entry) {
  json::Value out = json::Value::object();
  out.set("kind", entry.kind);
  out.set("title", entry.title);
  if (!entry.body.empty()) out.set("body", entry.body);
  out.set("status", entry.status);
  scope_fields(entry, out);
  out.set("hash", entry.hash);
  return out;
}

}  // namespace

Result<std::string> source_task(Context& context, const std::optional<std::string>& task) {
  if (task) {
    CT_TRY(check_tasks(context, {*task}));
    return *task;
  }
  if (context.session.empty()) return std::string();
  CT_TRY_ASSIGN(std::optional<std::string> focus, context.db().get_focus(context.session));
  return focus.value_or("");
}

Result<std::string> who(Context& context) {
  if (context.is_person()) return context.principal.id;
  return context.agent_name();
}

Result<std::string> catalogue_actor(Context& context) {
  CT_TRY_ASSIGN(std::string name, who(context));
  return name.empty() ? context.principal.id : name;
}

bool needs_person(const Context& context, std::string_view kind) {
  const auto kinds = context.config->get_strings("memory.verifyKinds");
  return std::find(kinds.begin(), kinds.end(), kind) != kinds.end();
}

json::Value stale_json(const Staleness& stale) {
  json::Value out = json::Value::object();
  if (!stale.file.empty()) out.set("file", stale.file);
  if (!stale.task.empty()) out.set("task", stale.task);
  out.set("what", stale.what);
  out.set("since", format_iso8601(stale.since));
  return out;
}

json::Value entry_json(const MemoryEntry& entry, bool full, const std::optional<Staleness>& stale) {
  json::Value out = json::Value::object();
  out.set("id", entry.id);
  out.set("kind", entry.kind);
  out.set("title", entry.title);
  if (full) {
    if (!entry.body.empty()) out.set("body", entry.body);
  } else if (!entry.body.empty()) {
    out.set("body", clip(entry.body, 240));
  }
  if (entry.status != "active" || full) out.set("status", entry.status);
  // No person verified it: an agent's word alone (what reaches other agents says so).
  if (entry.verified_by.empty()) out.set("unreviewed", true);
  if (stale) out.set("stale", stale_json(*stale));
  out.set("hash", entry.hash);
  if (!full) return out;
  scope_fields(entry, out);
  if (entry.verified_at) out.set("verifiedAt", format_iso8601(*entry.verified_at));
  json::Value source = json::Value::object();
  if (!entry.source_agent.empty()) source.set("agent", entry.source_agent);
  if (!entry.source_session.empty()) source.set("session", entry.source_session);
  if (!entry.source_task.empty()) source.set("task", entry.source_task);
  if (!source.as_object().empty()) out.set("source", std::move(source));
  json::Value usage = json::Value::object();
  usage.set("applied", entry.applied_count);
  usage.set("ignored", entry.ignored_count);
  if (entry.applied_at) {
    usage.set("lastAt", format_iso8601(*entry.applied_at));
    usage.set("lastBy", entry.applied_by);
  }
  out.set("usage", std::move(usage));
  out.set("createdAt", format_iso8601(entry.created_at));
  out.set("updatedAt", format_iso8601(entry.updated_at));
  return out;
}

Result<std::vector<std::optional<Staleness>>> staleness_of(Context& context, const std::vector<MemoryEntry>& entries) {
  std::vector<const MemoryEntry*> pointers;
  for (const auto& entry : entries) pointers.push_back(&entry);
  CT_TRY_ASSIGN(auto tasks, anchored_tasks(context.db(), pointers));
  std::vector<std::optional<Staleness>> out;
  out.reserve(entries.size());
  ScopeHasher hasher(process_hasher());
  for (const auto& entry : entries)
    out.push_back(entry.status == "retracted" || entry.status == "superseded"
                      ? std::nullopt
                      : staleness(entry, context.work_root(), tasks, hasher));
  return out;
}

Result<std::vector<Found>> find(Context& context, const Search& search, std::int64_t* matched) {
  FindScope scope;
  scope.words = words(search.query);
  scope.files = search.files;
  scope.symbols = search.symbols;
  scope.labels = search.labels;
  if (search.task) {
    CT_TRY_ASSIGN(std::optional<Task> task, context.db().get_task(*search.task));
    if (!task) return fail(task_not_found(*search.task));
    if (search.task_words) scope.words = words(task->title);
    scope.tasks.push_back(task->id);
    for (const auto& file : task->files)
      if (auto normal = normal_scope_path(file); normal && !normal->empty() &&
                                                 std::find(scope.files.begin(), scope.files.end(), *normal) == scope.files.end())
        scope.files.push_back(*normal);
    for (const auto& label : task->labels)
      if (std::find(scope.labels.begin(), scope.labels.end(), label) == scope.labels.end()) scope.labels.push_back(label);
    // Its epics: every ancestor (the hierarchy is at most hierarchy.maxDepth deep).
    std::string parent = task->parent;
    for (int depth = 0; !parent.empty() && depth < 8; ++depth) {
      scope.epics.push_back(parent);
      CT_TRY_ASSIGN(std::optional<Task> up, context.db().get_task(parent));
      parent = up ? up->parent : std::string();
    }
  }
  const FindLimits limits{.kind = search.kind, .include_stale = search.include_stale, .limit = search.limit};
  ScopeHasher hasher(process_hasher());
  return find_ranked(context.db(), scope, limits, context.work_root(), hasher, context.now(), matched);
}

Result<std::vector<Found>> for_task(Context& context, const std::string& task_id) {
  const std::int64_t count = context.config->get_int("memory.promptEntries");
  if (count <= 0) return std::vector<Found>();
  Search search;
  search.task = task_id;
  search.task_words = true;
  search.limit = count;
  CT_TRY_ASSIGN(std::vector<Found> found, find(context, search));
  // Words alone are not enough for a prompt: an entry must share the task's scope or most of its words.
  std::erase_if(found, [](const Found& item) { return item.ranked.scope == 0 && item.ranked.text < 4.0; });
  return found;
}

Advice prompt_block(const std::vector<Found>& found, const std::string& task_id) {
  if (found.empty()) return {};
  std::string out;
  for (const auto& item : found) {
    const MemoryEntry& entry = item.entry;
    // The label is the product's, outside the quotes; the entry's own text is quoted (core/stored_text.h).
    out += "- " + entry.id + " [" + entry.kind;
    if (entry.verified_by.empty()) {
      out += ", unreviewed";
      if (!entry.source_agent.empty()) out += ", by " + quoted_line(entry.source_agent, 60);
    }
    out += "] " + quoted_line(entry.title);
    if (!entry.body.empty()) out += ": " + quoted_line(entry.body, 240);
    out += "\n";
  }
  out += "When done, declare the ones you applied: ";
  return out + call("memory.applied", {{"ids", json::Value::Array{found.front().entry.id}}, {"taskId", task_id}}) + "\n";
}

std::vector<std::string_view> kind_choices() { return {kKinds.begin(), kKinds.end()}; }

Result<MemoryEntry> load(Context& context, const std::string& id) {
  CT_TRY_ASSIGN(std::optional<MemoryEntry> entry, context.db().get_memory(id));
  if (!entry)
    return fail(Error(ErrorCode::NotFound, "Memory entry " + id + " not found")
                    .with_fix(call("memory.find", {{"query", id}}))
                    .with_alternative("Count entries by status and kind", "memory.stats")
                    .with_detail("id", id));
  return std::move(*entry);
}

Error task_not_found(const std::string& id) {
  return Error(ErrorCode::NotFound, "Task " + id + " not found")
      .with_fix(call("tasks.find", {{"query", id}}))
      .with_detail("taskId", id);
}

Result<void> check_tasks(Context& context, const std::vector<std::string>& ids) {
  if (ids.empty()) return {};
  CT_TRY_ASSIGN(std::vector<Task> found, context.db().get_tasks(ids));
  for (const auto& id : ids)
    if (std::none_of(found.begin(), found.end(), [&](const Task& t) { return t.id == id; })) return fail(task_not_found(id));
  return {};
}

Result<void> save(Context& context, const std::optional<MemoryEntry>& before, const MemoryEntry& entry) {
  CT_TRY(context.db().put_memory(entry, keys_of(entry)));
  context.record(FieldChange{"", "memory." + entry.id, before ? stored_json(*before) : json::Value(), stored_json(entry)});
  // The governed catalogue (engines/rules/catalogue.h): a new version with its change-log row.
  CT_TRY_ASSIGN(const std::string by, catalogue_actor(context));
  return catalogue::record_memory(context.db(), before, entry, entry.source_agent.empty() ? by : entry.source_agent, by,
                                  context.now());
}

Result<void> anchor(Context& context, MemoryEntry& entry, bool keep_existing, std::vector<std::string>& warnings) {
  std::map<std::string, TaskStatus> statuses;
  std::vector<std::string> ids = entry.tasks;
  if (!entry.source_task.empty()) ids.push_back(entry.source_task);
  if (!ids.empty()) {
    CT_TRY_ASSIGN(std::vector<Task> tasks, context.db().get_tasks(ids));
    for (const auto& task : tasks) statuses[task.id] = task.status;
  }
  // The files were hashed by the call's external step, before its transaction: nothing is read here.
  ReadFiles read(context.external ? context.external->data["files"] : json::Value());
  std::vector<Skipped> skipped;
  std::vector<MemoryAnchor> fresh = anchors_of(entry, context.work_root(), statuses, read, &skipped);
  if (keep_existing)
    for (auto& anchor : fresh)
      for (const auto& old : entry.anchors)
        if ((!anchor.file.empty() && old.file == anchor.file) || (!anchor.task.empty() && old.task == anchor.task)) anchor = old;
  entry.anchors = std::move(fresh);
  for (const auto& [file, why] : skipped) {
    if (why.code == ErrorCode::Internal) return fail(why);
    warnings.push_back((why.code == ErrorCode::NotFound ? file + " does not exist"
                                                         : file + " cannot be anchored (" + why.message + ")") +
                       ": it stays in the scope, but no change of it can make " + entry.id + " stale");
  }
  return {};
}

Result<Reply> hash_scope_files(Context& context, const std::vector<std::string>& files) {
  json::Value data = json::Value::object();
  data.set("files", read_scopes(context.work_root(), files));
  return Reply::of(std::move(data));
}

Result<MemoryEntry> add_entry(Context& context, MemoryEntry entry, std::vector<std::string>& warnings) {
  CT_TRY_ASSIGN(std::int64_t number, context.db().next_memory_number());
  if (number > kMaxMemoryNumber)
    return fail(Error(ErrorCode::Validation, "every memory entry id up to M" + std::to_string(kMaxMemoryNumber) +
                                                 " is taken: no entry can be added")
                    .with_fix("retract or export and re-import the entries under lower ids")
                    .with_detail("next", number));
  entry.id = memory_id(number);
  entry.hash = content_hash(entry);
  const bool person = context.is_person();
  if (entry.status.empty() || entry.status == "active") {
    if (needs_person(context, entry.kind) && !person) {
      entry.status = "proposed";
      warnings.push_back(entry.id + " is proposed: a " + entry.kind + " is served once a person verifies it (ct memory verify " +
                         entry.id + ")");
    } else {
      entry.status = "active";
      if (needs_person(context, entry.kind) && person) {
        entry.verified_by = context.principal.id;
        entry.verified_at = context.now();
      }
    }
  }
  CT_TRY(anchor(context, entry, false, warnings));
  entry.created_at = entry.updated_at = context.now();
  CT_TRY(save(context, std::nullopt, entry));
  return entry;
}

}  // namespace ct::memory
