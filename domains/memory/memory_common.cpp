#include "domains/memory/memory_common.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <unordered_map>

#include "core/text.h"

namespace ct::memory {
namespace {

/// Entries read per key at most; a query word held by more than kCommonWord entries (or a twentieth
/// of them) finds no candidates of its own.
constexpr std::int64_t kPerKeyCap = 2000;
constexpr std::int64_t kCommonWord = 500;

/// The range of keys that start with `key` when `prefix`, else `key` alone. Words hold ASCII letters,
/// digits and UTF-8 bytes; a range's end must stay valid UTF-8 (PostgreSQL checks it), so a word
/// ending in a multi-byte character is matched whole.
MemoryKeyRange key_range(const std::string& key, bool prefix) {
  if (prefix && !key.empty() && static_cast<unsigned char>(key.back()) < 0x7f) {
    std::string end = key;
    end.back() = static_cast<char>(end.back() + 1);
    return {key, end};
  }
  return {key, key + " "};  // no key byte sorts below a space
}

Result<std::map<std::string, std::pair<TaskStatus, TimeMs>>> anchored_tasks(Context& context,
                                                                            const std::vector<const MemoryEntry*>& entries) {
  std::set<std::string> ids;
  for (const MemoryEntry* entry : entries)
    for (const auto& anchor : entry->anchors)
      if (!anchor.task.empty()) ids.insert(anchor.task);
  std::map<std::string, std::pair<TaskStatus, TimeMs>> out;
  if (ids.empty()) return out;
  CT_TRY_ASSIGN(std::vector<Task> tasks, context.db().get_tasks(std::vector<std::string>(ids.begin(), ids.end())));
  for (const auto& task : tasks) out[task.id] = {task.status, task.updated_at};
  return out;
}

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
  CT_TRY_ASSIGN(auto tasks, anchored_tasks(context, pointers));
  std::vector<std::optional<Staleness>> out;
  out.reserve(entries.size());
  for (const auto& entry : entries)
    out.push_back(entry.status == "retracted" || entry.status == "superseded"
                      ? std::nullopt
                      : staleness(entry, context.project->root, tasks, process_hasher()));
  return out;
}

Result<std::vector<Found>> find(Context& context, const Search& search) {
  FindScope scope;
  scope.words = words(search.query);
  scope.files = search.files;
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

  // A query word's rarity (BM25's inverse document frequency), from how many entries hold it.
  std::vector<MemoryKeyRange> word_ranges;
  for (const auto& word : scope.words) word_ranges.push_back(key_range("w:" + word, true));
  std::vector<std::int64_t> holders(word_ranges.size(), 0);
  std::int64_t total = 1;
  if (!word_ranges.empty()) {
    CT_TRY_ASSIGN(holders, context.db().memory_key_counts(word_ranges));
    CT_TRY_ASSIGN(total, context.db().memory_total());
  }
  std::vector<double> rarity(holders.size());
  for (std::size_t i = 0; i < holders.size(); ++i) {
    const double df = static_cast<double>(std::min(holders[i], total));
    rarity[i] = std::log(1.0 + (static_cast<double>(total) - df + 0.5) / (df + 0.5));
  }

  // Candidates: the entries of the rarer query words and of every key of the scope. A word most
  // entries hold finds nothing worth reading; it still counts in the text score of what is read.
  const std::int64_t common = std::max<std::int64_t>(kCommonWord, total / 20);
  std::vector<MemoryKeyRange> ranges;
  std::vector<double> weights;
  for (std::size_t i = 0; i < word_ranges.size(); ++i)
    if (holders[i] > 0 && holders[i] <= common) {
      ranges.push_back(word_ranges[i]);
      weights.push_back(rarity[i]);
    }
  std::vector<std::string> scope_keys;
  for (const auto& file : scope.files)
    for (auto& key : file_lookup_keys(file)) scope_keys.push_back(std::move(key));
  for (const auto& label : scope.labels) scope_keys.push_back("l:" + to_lower_ascii(label));
  for (const auto& task : scope.tasks) scope_keys.push_back("t:" + task);
  for (const auto& epic : scope.epics) scope_keys.push_back("e:" + epic);
  std::sort(scope_keys.begin(), scope_keys.end());
  scope_keys.erase(std::unique(scope_keys.begin(), scope_keys.end()), scope_keys.end());
  if (ranges.empty() && scope_keys.empty() && !word_ranges.empty()) {
    // Only common words: the entries of the rarest one, the newest first cut at the cap.
    std::size_t rarest = 0;
    for (std::size_t i = 1; i < holders.size(); ++i)
      if (holders[i] > 0 && (holders[rarest] == 0 || holders[i] < holders[rarest])) rarest = i;
    if (holders[rarest] > 0) {
      ranges.push_back(word_ranges[rarest]);
      weights.push_back(rarity[rarest]);
    }
  }
  for (const auto& key : scope_keys) {
    ranges.push_back(key_range(key, false));
    weights.push_back(2.0);
  }
  CT_TRY_ASSIGN(auto hits, context.db().memory_numbers(ranges, kPerKeyCap));
  std::unordered_map<std::int64_t, double> early;  // a first score from the keys alone
  for (std::size_t r = 0; r < hits.size(); ++r) {
    std::vector<std::int64_t>& numbers = hits[r];
    std::sort(numbers.begin(), numbers.end());  // a prefix can match several words of one entry
    numbers.erase(std::unique(numbers.begin(), numbers.end()), numbers.end());
    for (std::int64_t number : numbers) early[number] += weights[r];
  }
  std::vector<std::pair<double, std::int64_t>> order;
  order.reserve(early.size());
  for (const auto& [number, score] : early) order.emplace_back(score, number);
  // Read the best few: enough that the text score, recency, use and staleness can reorder them,
  // and that stale or other-kind entries left out still leave `limit`.
  const std::size_t read = static_cast<std::size_t>(std::max<std::int64_t>(search.limit * 3, 30));
  if (order.size() > read) {
    std::nth_element(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(read), order.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first || (a.first == b.first && a.second > b.second); });
    order.resize(read);
  }
  std::vector<std::int64_t> numbers;
  for (const auto& [score, number] : order) numbers.push_back(number);
  CT_TRY_ASSIGN(std::vector<MemoryEntry> entries, context.db().get_memories(numbers));
  std::erase_if(entries, [&](const MemoryEntry& entry) {
    return entry.status != "active" || (search.kind && entry.kind != *search.kind);
  });
  std::vector<const MemoryEntry*> pointers;
  for (const auto& entry : entries) pointers.push_back(&entry);
  CT_TRY_ASSIGN(auto tasks, anchored_tasks(context, pointers));
  std::vector<Found> found;
  const TimeMs now = context.now();
  for (auto& entry : entries) {
    auto stale = staleness(entry, context.project->root, tasks, process_hasher());
    if (stale && !search.include_stale) continue;
    // The text score: each query word the entry holds (as a prefix of one of its words) adds its
    // rarity, twice in the title.
    double text_match = 0;
    if (!scope.words.empty()) {
      const auto title_words = words(entry.title);
      const auto body_words = words(entry.body);
      auto holds = [](const std::vector<std::string>& list, const std::string& word) {
        return std::any_of(list.begin(), list.end(), [&](const std::string& w) { return w.starts_with(word); });
      };
      for (std::size_t i = 0; i < scope.words.size(); ++i) {
        if (holds(title_words, scope.words[i])) text_match += 2 * rarity[i];
        else if (holds(body_words, scope.words[i])) text_match += rarity[i];
      }
    }
    Ranked ranked = rank(entry, scope, text_match, stale.has_value(), now);
    if (ranked.text == 0 && ranked.scope == 0) continue;  // a folder key matched, the glob did not
    found.push_back({std::move(entry), ranked, std::move(stale)});
  }
  std::sort(found.begin(), found.end(), [](const Found& a, const Found& b) {
    if (a.ranked.score != b.ranked.score) return a.ranked.score > b.ranked.score;
    return *memory_number(a.entry.id) < *memory_number(b.entry.id);
  });
  if (std::ssize(found) > search.limit) found.resize(static_cast<std::size_t>(search.limit));
  return found;
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
    out += "- " + item.entry.id + " [" + item.entry.kind + "] " + item.entry.title;
    if (!item.entry.body.empty()) out += ": " + clip(item.entry.body, 240);
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
  return {};
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
  std::vector<MemoryAnchor> fresh = anchors_of(entry, context.project->root, statuses, read, &skipped);
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
  data.set("files", read_files(context.project->root, files, process_hasher()));
  return Reply{std::move(data), {}, {}, {}};
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
  const bool person = context.person_reviews;
  if (entry.status.empty() || entry.status == "active") {
    if (needs_person(context, entry.kind) && !person) {
      entry.status = "proposed";
      warnings.push_back(entry.id + " is proposed: a " + entry.kind + " is served once a person verifies it (ct memory verify " +
                         entry.id + ")");
    } else {
      entry.status = "active";
      if (needs_person(context, entry.kind) && person) {
        entry.verified_by = entry.source_agent.empty() ? "person" : entry.source_agent;
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
