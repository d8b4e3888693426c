#include "engines/rules/memory_find.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <unordered_map>

#include "core/text.h"
#include "engines/rules/memory_symbols.h"

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

/// The query words as key ranges (a word finds the words it begins), how many entries hold each,
/// and its rarity.
struct QueryWords {
  std::vector<MemoryKeyRange> ranges;
  std::vector<std::int64_t> holders;
  std::vector<double> rarity;
  std::int64_t total = 1;  // the entries there are
};

/// A query word's rarity (BM25's inverse document frequency), from how many entries hold it.
Result<QueryWords> query_words(MemoryStore& store, const std::vector<std::string>& words) {
  QueryWords query;
  for (const auto& word : words) query.ranges.push_back(key_range("w:" + word, true));
  query.holders.assign(query.ranges.size(), 0);
  if (!query.ranges.empty()) {
    CT_TRY_ASSIGN(MemoryKeyCounts counts, store.memory_key_counts(query.ranges));
    query.holders = std::move(counts.holders);
    query.total = counts.total;
  }
  query.rarity.resize(query.holders.size());
  for (std::size_t i = 0; i < query.holders.size(); ++i) {
    const double df = static_cast<double>(std::min(query.holders[i], query.total));
    query.rarity[i] = std::log(1.0 + (static_cast<double>(query.total) - df + 0.5) / (df + 0.5));
  }
  return query;
}

/// The key ranges whose entries are candidates, each with the weight it adds to a candidate's first
/// score.
struct Candidates {
  std::vector<MemoryKeyRange> ranges;
  std::vector<double> weights;
};

/// The entries of the rarer query words and of every key of the scope. A word most entries hold
/// finds nothing worth reading; it still counts in the text score of what is read.
Candidates candidate_keys(const QueryWords& query, const FindScope& scope) {
  Candidates candidates;
  const std::int64_t common = std::max<std::int64_t>(kCommonWord, query.total / 20);
  for (std::size_t i = 0; i < query.ranges.size(); ++i)
    if (query.holders[i] > 0 && query.holders[i] <= common) {
      candidates.ranges.push_back(query.ranges[i]);
      candidates.weights.push_back(query.rarity[i]);
    }
  std::vector<std::string> scope_keys;
  for (const auto& file : scope.files)
    for (auto& key : file_lookup_keys(file)) scope_keys.push_back(std::move(key));
  for (const auto& symbol : scope.symbols) {
    scope_keys.push_back("s:" + symbol);
    scope_keys.push_back("s:" + symbol_leaf(symbol));
  }
  for (const auto& label : scope.labels) scope_keys.push_back("l:" + to_lower_ascii(label));
  for (const auto& task : scope.tasks) scope_keys.push_back("t:" + task);
  for (const auto& epic : scope.epics) scope_keys.push_back("e:" + epic);
  std::sort(scope_keys.begin(), scope_keys.end());
  scope_keys.erase(std::unique(scope_keys.begin(), scope_keys.end()), scope_keys.end());
  if (candidates.ranges.empty() && scope_keys.empty() && !query.ranges.empty()) {
    // Only common words: the entries of the rarest one, the newest first cut at the cap.
    const auto& holders = query.holders;
    std::size_t rarest = 0;
    for (std::size_t i = 1; i < holders.size(); ++i)
      if (holders[i] > 0 && (holders[rarest] == 0 || holders[i] < holders[rarest])) rarest = i;
    if (holders[rarest] > 0) {
      candidates.ranges.push_back(query.ranges[rarest]);
      candidates.weights.push_back(query.rarity[rarest]);
    }
  }
  for (const auto& key : scope_keys) {
    candidates.ranges.push_back(key_range(key, false));
    candidates.weights.push_back(2.0);
  }
  return candidates;
}

/// The numbers of the `read` candidates with the best first score (from the keys alone).
Result<std::vector<std::int64_t>> best_candidates(MemoryStore& store, const Candidates& candidates, std::size_t read) {
  CT_TRY_ASSIGN(auto hits, store.memory_numbers(candidates.ranges, kPerKeyCap));
  std::unordered_map<std::int64_t, double> early;
  for (std::size_t r = 0; r < hits.size(); ++r) {
    std::vector<std::int64_t>& numbers = hits[r];
    std::sort(numbers.begin(), numbers.end());  // a prefix can match several words of one entry
    numbers.erase(std::unique(numbers.begin(), numbers.end()), numbers.end());
    for (std::int64_t number : numbers) early[number] += candidates.weights[r];
  }
  std::vector<std::pair<double, std::int64_t>> order;
  order.reserve(early.size());
  for (const auto& [number, score] : early) order.emplace_back(score, number);
  if (order.size() > read) {
    std::nth_element(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(read), order.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first || (a.first == b.first && a.second > b.second); });
    order.resize(read);
  }
  std::vector<std::int64_t> numbers;
  for (const auto& [score, number] : order) numbers.push_back(number);
  return numbers;
}

/// The text score: each query word the entry holds (as a prefix of one of its words) adds its
/// rarity, twice in the title.
double text_match(const MemoryEntry& entry, const std::vector<std::string>& words, const std::vector<double>& rarity) {
  double match = 0;
  if (words.empty()) return match;
  const auto title_words = memory::words(entry.title);
  const auto body_words = memory::words(entry.body);
  auto holds = [](const std::vector<std::string>& list, const std::string& word) {
    return std::any_of(list.begin(), list.end(), [&](const std::string& w) { return w.starts_with(word); });
  };
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (holds(title_words, words[i])) match += 2 * rarity[i];
    else if (holds(body_words, words[i])) match += rarity[i];
  }
  return match;
}

}  // namespace

Ranked rank(const MemoryEntry& entry, const FindScope& scope, double text_match, bool stale, TimeMs now) {
  Ranked ranked;
  ranked.text = text_match;
  for (const auto& file : scope.files) {
    int best = 0;
    for (const auto& path : entry.files) best = std::max(best, scope_match(path, file));
    ranked.scope += best == 2 ? 3.0 : best == 1 ? 2.0 : 0.0;
  }
  for (const auto& symbol : scope.symbols) {
    double best = 0;
    for (const auto& path : entry.files)
      if (const SymbolScope parts = split_symbol(path); !parts.symbol.empty()) {
        if (symbol_names(symbol, parts.symbol) || symbol_names(parts.symbol, symbol)) best = 3.0;
        else if (symbol_leaf(symbol) == symbol_leaf(parts.symbol)) best = std::max(best, 1.5);
      }
    ranked.scope += best;
  }
  for (const auto& label : scope.labels)
    for (const auto& mine : entry.labels)
      if (to_lower_ascii(mine) == to_lower_ascii(label)) ranked.scope += 1.0;
  for (const auto& task : scope.tasks)
    if (entry.source_task == task || std::find(entry.tasks.begin(), entry.tasks.end(), task) != entry.tasks.end())
      ranked.scope += 3.0;
  for (const auto& epic : scope.epics)
    if (entry.epic == epic) ranked.scope += 1.5;
  double score = ranked.text + ranked.scope;
  if (!entry.verified_by.empty()) score += 0.5;
  score += 0.3 * std::log1p(static_cast<double>(entry.applied_count)) -
           0.2 * std::log1p(static_cast<double>(entry.ignored_count));
  const double age_days = static_cast<double>(std::max<TimeMs>(0, now - entry.updated_at)) / 86'400'000.0;
  score += 0.5 * std::exp2(-age_days / 90.0);
  if (entry.confidence) score *= 0.75 + 0.25 * std::clamp(*entry.confidence, 0.0, 1.0);
  if (stale) score *= 0.5;
  ranked.score = score;
  return ranked;
}

Result<std::vector<Found>> find_ranked(StoreRoles<MemoryStore, TaskStore> store, const FindScope& scope,
                                       const FindLimits& limits, const std::filesystem::path& root, ScopeHasher& hasher,
                                       TimeMs now, std::int64_t* matched) {
  CT_TRY_ASSIGN(QueryWords query, query_words(store.get<MemoryStore>(), scope.words));
  // Read the best few: enough that the text score, recency, use and staleness can reorder them,
  // and that stale or other-kind entries left out still leave `limit`.
  const std::size_t read = static_cast<std::size_t>(std::max<std::int64_t>(limits.limit * 3, 30));
  CT_TRY_ASSIGN(std::vector<std::int64_t> numbers,
                best_candidates(store.get<MemoryStore>(), candidate_keys(query, scope), read));
  CT_TRY_ASSIGN(std::vector<MemoryEntry> entries, store.get<MemoryStore>().get_memories(numbers));
  std::erase_if(entries, [&](const MemoryEntry& entry) {
    return entry.status != "active" || (limits.kind && entry.kind != *limits.kind);
  });
  std::vector<const MemoryEntry*> pointers;
  for (const auto& entry : entries) pointers.push_back(&entry);
  CT_TRY_ASSIGN(auto tasks, anchored_tasks(store.get<TaskStore>(), pointers));
  std::vector<Found> found;
  for (auto& entry : entries) {
    auto stale = staleness(entry, root, tasks, hasher);
    if (stale && !limits.include_stale) continue;
    Ranked ranked = rank(entry, scope, text_match(entry, scope.words, query.rarity), stale.has_value(), now);
    if (ranked.text == 0 && ranked.scope == 0) continue;  // a folder key matched, the glob did not
    found.push_back({std::move(entry), ranked, std::move(stale)});
  }
  std::sort(found.begin(), found.end(), [](const Found& a, const Found& b) {
    if (a.ranked.score != b.ranked.score) return a.ranked.score > b.ranked.score;
    return *memory_number(a.entry.id) < *memory_number(b.entry.id);
  });
  if (matched) *matched = std::ssize(found);
  if (std::ssize(found) > limits.limit) found.resize(static_cast<std::size_t>(limits.limit));
  return found;
}

Result<std::map<std::string, std::pair<TaskStatus, TimeMs>>> anchored_tasks(TaskStore& tasks,
                                                                            const std::vector<const MemoryEntry*>& entries) {
  std::set<std::string> ids;
  for (const MemoryEntry* entry : entries)
    for (const auto& anchor : entry->anchors)
      if (!anchor.task.empty()) ids.insert(anchor.task);
  std::map<std::string, std::pair<TaskStatus, TimeMs>> out;
  if (ids.empty()) return out;
  CT_TRY_ASSIGN(std::vector<Task> found, tasks.get_tasks(std::vector<std::string>(ids.begin(), ids.end())));
  for (const auto& task : found) out[task.id] = {task.status, task.updated_at};
  return out;
}

}  // namespace ct::memory
