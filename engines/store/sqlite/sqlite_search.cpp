// The SQLite store, part: the FTS5 search index of tasks and research entries and its queries
// (tokenizer, match expression, exact id first).
#include "engines/store/sqlite/sqlite_store_impl.h"

#include <array>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <span>
#include <unordered_map>
#include <unordered_set>

#include "core/json.h"

namespace ct::sqlite {

namespace {

/// `term` as an FTS5 phrase: in double quotes, its own doubled.
void append_phrase(std::string& out, std::string_view term) {
  out += '"';
  for (char c : term) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
}

/// The weights of the index's columns (title, description, labels, notes) in a task's score.
constexpr std::array<double, 4> kTaskColumnWeights = {10.0, 3.0, 5.0, 1.0};

/// ct_rank's arithmetic, shared by the SQL function and the scan of noted tasks so that both give
/// a task the same score to the bit: for each column and each phrase, the column's weight times a
/// saturating count of the phrase's hits there, tf·(k1+1)/(tf+k1) with bm25's k1 = 1.2, summed.
/// `counts[phrase * columns + column]`; `weight(column)`.
template <typename Weight>
double saturating_score(std::span<const int> counts, int phrases, int columns, Weight&& weight) {
  constexpr double kK1 = 1.2;
  double score = 0;
  for (int column = 0; column < columns; ++column) {
    const double w = weight(column);
    for (int phrase = 0; phrase < phrases; ++phrase) {
      const double tf = counts[static_cast<std::size_t>(phrase * columns + column)];
      if (tf > 0) score += w * tf * (kK1 + 1) / (tf + kK1);
    }
  }
  return score;
}

/// False when the row's text cannot match every token, told without tokenizing it: when the
/// text is ASCII without escapes, the tokenizer only splits it at other characters and lowers its
/// letters, so a token the query word starts with leaves the word in the lowered text. (The JSON
/// lists are tested as stored: their punctuation only adds text.) Most noted tasks do not match a
/// search; this saves tokenizing them. `folded` is scratch space.
bool might_match(const std::vector<std::string>& tokens, std::initializer_list<std::string_view> texts,
                 std::string& folded) {
  std::size_t size = 0;
  for (std::string_view text : texts) size += text.size() + 8;
  folded.resize(size);
  char* out = folded.data();
  // Eight bytes at a time: a set high bit is a non-ASCII byte, a zero byte of word ^ 0x5c… a
  // backslash; 0x20 is added to the bytes from 'A' to 'Z'.
  constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
  constexpr std::uint64_t kHigh = 0x8080808080808080ULL;
  std::uint64_t odd = 0;  // high bits of non-ASCII bytes and backslashes
  for (std::string_view text : texts) {
    std::size_t i = 0;
    for (; i + 8 <= text.size(); i += 8, out += 8) {
      std::uint64_t word;
      std::memcpy(&word, text.data() + i, 8);
      const std::uint64_t slash = word ^ (kOnes * '\\');
      odd |= (word | ((slash - kOnes) & ~slash)) & kHigh;
      const std::uint64_t low = word & ~kHigh;
      const std::uint64_t at_least_a = low + kOnes * (0x80 - 'A');
      const std::uint64_t above_z = low + kOnes * (0x7f - 'Z');
      word |= ((at_least_a & ~above_z) & kHigh) >> 2;
      std::memcpy(out, &word, 8);
    }
    for (; i < text.size(); ++i) {
      const auto byte = static_cast<unsigned char>(text[i]);
      if (byte >= 0x80 || byte == '\\') odd = 1;
      *out++ = static_cast<char>(byte >= 'A' && byte <= 'Z' ? byte + 32 : byte);
    }
    *out++ = ' ';
  }
  if (odd != 0) return true;  // the tokenizer's folding decides
  const std::string_view lowered(folded.data(), static_cast<std::size_t>(out - folded.data()));
  for (const auto& token : tokens)
    if (lowered.find(token) == std::string_view::npos) return false;
  return true;
}

}  // namespace

// The search index is written behind the tasks (schema v9, issue 32). Adding a document to FTS5
// in its own transaction writes a segment of its own, ~40 % of a tasks.add; a write now notes the
// task in tasks_fts_tail instead, in the same transaction (a crash loses nothing: the note and the
// task commit together), and every kIndexBatch notes are folded into the index in one segment.
Result<void> SqliteStore::index_task(std::int64_t number) {
  const sql::Value args[] = {sql::Value(number)};
  CT_TRY(runner_.run("INSERT OR IGNORE INTO tasks_fts_tail(num) VALUES(?1)", args, "cannot update the search index"));
  CT_TRY_ASSIGN(std::int64_t waiting, index_tail_size());
  if (waiting < kIndexBatch) return {};
  return fold_index_tail();
}

Result<std::int64_t> SqliteStore::index_tail_size() {
  return runner_.integer("SELECT count(*) FROM tasks_fts_tail", {}, "cannot read the search index");
}

Result<void> SqliteStore::fold_index_tail() {
  CT_TRY_ASSIGN(bool rebuild_terms, keep_index_terms());
  // One statement each: FTS5 writes out what a statement added when the next one begins (its
  // statement savepoint), so a statement per task would write a segment per task again.
  // A changed task's old row goes first (a new task has none).
  static const std::string add_sql = "INSERT INTO tasks_fts(rowid, title, description, labels, notes) SELECT " +
                                     std::string(kIndexedTaskColumns) +
                                     " FROM tasks_fts_tail f CROSS JOIN tasks t ON t.num = f.num ORDER BY f.num";
  for (std::string_view sql :
       {std::string_view("DELETE FROM tasks_fts WHERE rowid IN (SELECT f.num FROM tasks_fts_tail f WHERE EXISTS "
                         "(SELECT 1 FROM tasks_fts_docsize d WHERE d.id = f.num))"),
        std::string_view(add_sql), std::string_view("DELETE FROM tasks_fts_tail")})
    CT_TRY(runner_.run(sql, {}, "cannot update the search index"));
  if (rebuild_terms) CT_TRY(exec(std::string(kRebuildIndexTerms).c_str(), "cannot update the search index"));
  return {};
}

Result<bool> SqliteStore::keep_index_terms() {
  // tasks_fts_terms must hold every term the fold writes (a missed term is a missed match): the
  // noted tasks' text is tokenized as FTS5 will tokenize it, with the index's own tokenizer.
  if (!load_tokenizer()) {
    // No tokenizer to keep it: prefix queries until a fold can rebuild it.
    CT_TRY(runner_.run("DELETE FROM tasks_fts_terms WHERE term = ''", {}, "cannot update the search index"));
    return false;
  }
  // Marked incomplete (a restore, a repair, an older ct): the whole vocabulary after the fold.
  CT_TRY_ASSIGN(bool complete, index_terms_complete());
  if (!complete) return true;
  static const std::string sql = "SELECT " + std::string(kIndexedTaskColumns) +
                                 " FROM tasks_fts_tail f CROSS JOIN tasks t ON t.num = f.num";
  std::unordered_set<std::string> terms;
  auto on_token = [](void* context, int, const char* token, int length, int, int) -> int {
    // FTS5 keeps at most FTS5_MAX_TOKEN_SIZE bytes of a token (fts5_storage.c).
    constexpr int kMaxTokenSize = 32768;
    if (length > 0)
      static_cast<std::unordered_set<std::string>*>(context)->emplace(token,
                                                                      static_cast<std::size_t>(std::min(length, kMaxTokenSize)));
    return SQLITE_OK;
  };
  CT_TRY(runner_.each(sql, {}, "cannot update the search index", [&](const sql::Cursor& row) -> Result<void> {
    for (int column = 1; column <= 4; ++column) {
      const std::string_view text = row.text(column);
      tokenizer_api_.xTokenize(tokenizer_, &terms, FTS5_TOKENIZE_DOCUMENT, text.data(), static_cast<int>(text.size()),
                               on_token);
    }
    return {};
  }));
  if (terms.empty()) return false;
  // One statement for the batch's terms (a statement each cost ~15,000 instructions: its journal).
  std::string list = "[";
  for (const auto& term : terms) {
    if (list.size() > 1) list += ',';
    json::write_string(list, term);
  }
  list += ']';
  const sql::Value args[] = {sql::Value(std::move(list))};
  CT_TRY(runner_.run("INSERT OR IGNORE INTO tasks_fts_terms(term) SELECT value FROM json_each(?1)", args,
                     "cannot update the search index"));
  return false;
}

Result<void> SqliteStore::unindex_task(std::int64_t number) {
  const sql::Value args[] = {sql::Value(number)};
  for (const char* sql : {"DELETE FROM tasks_fts WHERE rowid = ?1", "DELETE FROM tasks_fts_tail WHERE num = ?1"})
    CT_TRY(runner_.run(sql, args, "cannot update the search index"));
  return {};
}

Result<void> SqliteStore::index_research(const ResearchEntry& entry, std::int64_t number) {
  const sql::Value args[] = {sql::Value(number)};
  CT_TRY(runner_.run("DELETE FROM research_fts WHERE rowid = ?1", args, "cannot update the research index"));
  std::string findings;
  for (const auto& finding : entry.key_findings) findings += (findings.empty() ? "" : "\n") + finding;
  return runner_.run("INSERT INTO research_fts(rowid, title, topics, key_findings) VALUES(?1, ?2, ?3, ?4)",
                     sql::values(number, entry.title, join_labels(entry.topics), std::move(findings)),
                     "cannot update the research index");
}

std::string SqliteStore::matches(const TaskFilter& filter, bool skip_tail, sql::Args& args) {
  // A noted task's index row is missing or behind its text: it is read from tasks_fts_tail instead.
  const std::string tail = skip_tail ? " AND tasks_fts.rowid NOT IN (SELECT num FROM tasks_fts_tail)" : "";
  TaskFilter rest = filter;
  rest.archived = ArchivedFilter::Include;
  std::string where = sql::task_where(kDialect, rest, true, args);
  if (where.empty()) {
    // Only the archived filter: checked on the index's row numbers against the archived tasks (few,
    // found through the status index), so that no match is joined to its task row — a seek per
    // match, most of the cost of a common word.
    // (A range or equality on archived, after the status, lets the index seek.)
    constexpr std::string_view kAllStatuses = "status IN ('pending', 'active', 'blocked', 'done', 'cancelled')";
    switch (filter.archived) {
      case ArchivedFilter::Exclude:
        return " FROM tasks_fts WHERE tasks_fts MATCH ?1 AND tasks_fts.rowid NOT IN (SELECT num FROM tasks WHERE " +
               std::string(kAllStatuses) + " AND archived > 0)" + tail;
      case ArchivedFilter::Only:
        return " FROM tasks_fts WHERE tasks_fts MATCH ?1 AND tasks_fts.rowid IN (SELECT num FROM tasks WHERE " +
               std::string(kAllStatuses) + " AND archived = 1)" + tail;
      case ArchivedFilter::Include: return " FROM tasks_fts WHERE tasks_fts MATCH ?1" + tail;
    }
  }
  // The same conditions as task_where(filter) would give: the archived one comes last.
  if (auto archived = sql::archived_condition(filter.archived)) sql::Where{where, args}.add(*archived);
  // CROSS JOIN keeps the index outermost: with the filter outside, SQLite may walk the filter's
  // index and run the whole match once per task (1.8 s instead of 5 ms at 10k).
  return " FROM tasks_fts CROSS JOIN tasks t ON t.num = tasks_fts.rowid WHERE tasks_fts MATCH ?1 AND " +
         where.substr(std::string_view(" WHERE ").size()) + tail;
}

Result<std::optional<std::vector<SqliteStore::TailHit>>> SqliteStore::search_index_tail(
    const std::vector<std::string>& tokens, const TaskFilter& filter) {
  CT_TRY_ASSIGN(std::int64_t waiting, index_tail_size());
  if (waiting == 0) return std::nullopt;
  std::vector<TailHit> hits;
  if (!load_tokenizer()) return fail(ErrorCode::Internal, "cannot search: SQLite's unicode61 tokenizer is missing");
  sql::Args args;
  const std::string where = sql::task_where(kDialect, filter, true, args);
  // Within a transaction the noted tasks change only by a write on this connection.
  std::string key = match_expression(tokens) + '\x1f' + where;
  for (const sql::Value& value : std::span<const sql::Value>(args)) {
    key += '\x1f';
    if (const auto* text = std::get_if<std::string>(&value)) key += *text;
    else if (const auto* number = std::get_if<std::int64_t>(&value)) key += std::to_string(*number);
  }
  const std::int64_t changes = sqlite3_total_changes64(db_);
  if (in_transaction() && tail_memo_ && tail_memo_->transaction == transactions_ && tail_memo_->changes == changes &&
      tail_memo_->key == key)
    return tail_memo_->hits;
  // CROSS JOIN keeps the few noted tasks outermost, whatever index the filter could walk.
  const std::string sql = "SELECT t.num, t.title, t.description, t.labels, t.notes, t.id "
                          "FROM tasks_fts_tail f CROSS JOIN tasks t ON t.num = f.num" + where;
  constexpr int kColumns = static_cast<int>(kTaskColumnWeights.size());
  const int phrases = static_cast<int>(tokens.size());
  std::vector<int> counts;
  struct Scan {
    const std::vector<std::string>* tokens;
    int* counts;  // this column's cell of phrase 0
  };
  auto on_token = [](void* context, int, const char* token, int length, int, int) -> int {
    auto* scan = static_cast<Scan*>(context);
    const std::string_view word(token, static_cast<std::size_t>(std::max(length, 0)));
    // Each query word is a prefix ("word"*).
    for (std::size_t phrase = 0; phrase < scan->tokens->size(); ++phrase)
      if (word.starts_with((*scan->tokens)[phrase])) ++scan->counts[phrase * kColumns];
    return SQLITE_OK;
  };
  std::string folded;
  CT_TRY(runner_.each(sql, args, "cannot search", [&](const sql::Cursor& row) -> Result<void> {
    if (!might_match(tokens, {row.text(1), row.text(2), row.text(3), row.text(4)}, folded)) return {};
    // The text the index would hold (the fold's kIndexedTaskColumns): labels joined by spaces,
    // note texts by newlines. Lists are decoded only when they hold something.
    std::string labels, notes;
    if (const auto list = row.text(3); list != "[]") {
      CT_TRY_ASSIGN(auto decoded, decode_strings(list, row.text(5), "labels"));
      labels = join_labels(decoded);
    }
    if (const auto list = row.text(4); list != "[]") {
      CT_TRY_ASSIGN(auto decoded, decode_notes(list, row.text(5)));
      notes = join_notes(decoded);
    }
    const std::array<std::string_view, kColumns> columns = {row.text(1), row.text(2), labels, notes};
    counts.assign(static_cast<std::size_t>(phrases * kColumns), 0);
    for (int column = 0; column < kColumns; ++column) {
      Scan scan{&tokens, counts.data() + column};
      const std::string_view text = columns[static_cast<std::size_t>(column)];
      tokenizer_api_.xTokenize(tokenizer_, &scan, FTS5_TOKENIZE_DOCUMENT, text.data(), static_cast<int>(text.size()),
                               on_token);
    }
    for (int phrase = 0; phrase < phrases; ++phrase) {
      int total = 0;
      for (int column = 0; column < kColumns; ++column) total += counts[static_cast<std::size_t>(phrase * kColumns + column)];
      if (total == 0) return {};
    }
    const double score = saturating_score(counts, phrases, kColumns, [](int column) {
      return kTaskColumnWeights[static_cast<std::size_t>(column)];
    });
    hits.push_back(TailHit{row.integer(0), score});
    return {};
  }));
  if (in_transaction()) tail_memo_ = TailMemo{std::move(key), transactions_, changes, hits};
  return hits;
}

Result<std::vector<SearchHit>> SqliteStore::search(std::string_view text, const TaskFilter& filter,
                                                   std::int64_t limit, SearchCount* count) {
  std::vector<SearchHit> hits;
  if (count) *count = SearchCount{};
  if (limit == 0) return hits;
  std::vector<std::string> tokens = tokenize(text);
  if (tokens.empty()) return hits;

  // An exact id goes first.
  CT_TRY_ASSIGN(std::optional<Task> exact, exact_id_match(text, filter));
  // Noted tasks are scored from their rows; the index gives the rest.
  CT_TRY_ASSIGN(std::optional<std::vector<TailHit>> scanned, search_index_tail(tokens, filter));
  const std::vector<TailHit> noted = scanned ? std::move(*scanned) : std::vector<TailHit>{};
  // Each word's whole terms rather than its prefix: FTS5 then streams the matches newest first and
  // stops at the window, instead of merging every match of the prefix first (issue 56).
  CT_TRY_ASSIGN(Expansion expansion, expand_words(tokens));
  sql::Args args;
  args.bind(expansion.expression);
  // Rank and cut on row numbers first; read full rows for the hits only. ct_rank counts each
  // phrase's hits as its word's (args ?2).
  CT_TRY(ensure_rank());
  static const std::string rank_call = [] {
    std::string call = "ct_rank(tasks_fts";
    for (double weight : kTaskColumnWeights) call += ", " + std::to_string(weight);
    return call + ", ?2)";
  }();
  args.bind(expansion.words);
  std::string inner = "SELECT tasks_fts.rowid AS hit_num, " + rank_call + " AS rank_value" +
                      matches(filter, scanned.has_value(), args);
  const std::int64_t window = std::max(kSearchRankWindow - std::ssize(noted), limit + 1);
  const std::int64_t exact_num = exact ? parse_task_id(exact->id).value_or(-1) : -1;
  // Hits from the index and from the noted tasks, merged in the index query's order: best score
  // first, then task number. A noted task's row is read only if it makes the page.
  struct Ranked {
    double score;
    std::int64_t num;
    std::optional<Task> task;
  };
  std::vector<Ranked> ranked;
  std::int64_t indexed = 0;  // the index's matches in the window
  bool exact_indexed = false;
  if (limit > 0 && !expansion.expression.empty()) {
    // Only the newest matches are ranked (the index gives them in row order, and ct_rank runs on
    // the rows the window lets through), then cut here: the best `limit` of them, the exact id
    // apart. The noted tasks' matches, the newest tasks or the last changed, fill the window
    // first. The window's rows are counted on the way: they are the page's total unless the
    // window filled (then "at least"), so no second pass counts every match (issue 56). Sorting
    // here rather than in SQL spares a window function and a sorter their temporary b-trees.
    struct WindowHit {
      double rank;  // ct_rank's value: lower is better
      std::int64_t num;
    };
    std::vector<WindowHit> window_hits;
    window_hits.reserve(static_cast<std::size_t>(std::min<std::int64_t>(window, kSearchRankWindow)));
    const std::string sql = inner + " ORDER BY tasks_fts.rowid DESC LIMIT " + args(window);
    CT_TRY(runner_.each(sql, args, "cannot search",
                        [&](const sql::Cursor& row) { window_hits.push_back(WindowHit{row.real(1), row.integer(0)}); }));
    indexed = std::ssize(window_hits);
    if (exact) exact_indexed = std::erase_if(window_hits, [&](const WindowHit& hit) { return hit.num == exact_num; }) > 0;
    const auto keep = static_cast<std::ptrdiff_t>(std::min<std::int64_t>(limit, std::ssize(window_hits)));
    std::partial_sort(window_hits.begin(), window_hits.begin() + keep, window_hits.end(),
                      [](const WindowHit& a, const WindowHit& b) { return a.rank != b.rank ? a.rank < b.rank : a.num < b.num; });
    window_hits.resize(static_cast<std::size_t>(keep));
    if (!window_hits.empty()) {
      // The page's rows, read whole at once and put in rank order.
      std::string list;
      for (const auto& hit : window_hits) list += (list.empty() ? "" : ",") + std::to_string(hit.num);
      std::unordered_map<std::int64_t, Task> rows;
      CT_TRY(runner_.each(task_select() + " WHERE t.num IN (" + list + ")", {}, "cannot search",
                          [&](const sql::Cursor& row) -> Result<void> {
                            CT_TRY_ASSIGN(Task task, read_task_row(row));
                            rows.emplace(parse_task_id(task.id).value_or(-1), std::move(task));
                            return {};
                          }));
      for (const auto& hit : window_hits)
        if (auto row = rows.find(hit.num); row != rows.end())
          ranked.push_back(Ranked{-hit.rank, hit.num, std::move(row->second)});
    }
  } else if (!expansion.expression.empty()) {
    // Every match ranked (a scope's search).
    const std::string sql = "SELECT " + std::string(kTaskColumns) +
                            ", hits.rank_value, hits.hit_num FROM (" + inner +
                            ") AS hits CROSS JOIN tasks t ON t.num = hits.hit_num ORDER BY hits.rank_value, t.num";
    CT_TRY(runner_.each(sql, args, "cannot search", [&](const sql::Cursor& row) -> Result<void> {
      ++indexed;
      if (exact && row.integer(kTaskColumnCount + 1) == exact_num) {
        exact_indexed = true;
        return {};
      }
      CT_TRY_ASSIGN(Task task, read_task_row(row));
      ranked.push_back(Ranked{-row.real(kTaskColumnCount), row.integer(kTaskColumnCount + 1), std::move(task)});
      return {};
    }));
  }
  for (const auto& hit : noted)
    if (hit.num != exact_num) ranked.push_back(Ranked{hit.score, hit.num, std::nullopt});
  if (count) {
    // As count_matches() counts, within the window: the noted matches, the index's, and an exact id
    // that the words do not match. An exact id beyond the page is looked up only while counting.
    count->at_least = limit > 0 && indexed >= window;
    count->matched = indexed + std::ssize(noted);
    if (exact && !exact_indexed && std::ranges::none_of(noted, [&](const TailHit& hit) { return hit.num == exact_num; })) {
      std::int64_t words_match = 0;
      if (!expansion.expression.empty()) {
        CT_TRY_ASSIGN(words_match,
                      runner_.integer("SELECT count(*) FROM tasks_fts WHERE tasks_fts MATCH ?1 AND rowid = ?2 AND rowid "
                                      "NOT IN (SELECT num FROM tasks_fts_tail)",
                                      sql::values(expansion.expression, exact_num), "cannot count search results"));
      }
      if (words_match == 0) ++count->matched;
    }
  }
  if (!noted.empty()) {
    std::ranges::sort(ranked, [](const Ranked& a, const Ranked& b) {
      return a.score != b.score ? a.score > b.score : a.num < b.num;
    });
  }
  const std::int64_t room = limit < 0 ? std::ssize(ranked) : std::min<std::int64_t>(limit - (exact ? 1 : 0), std::ssize(ranked));
  if (exact) {
    double top = ranked.empty() ? 1.0 : std::max(1.0, ranked.front().score + 1.0);
    hits.push_back(SearchHit{std::move(*exact), top});
  }
  for (std::int64_t i = 0; i < room; ++i) {
    auto& entry = ranked[static_cast<std::size_t>(i)];
    if (!entry.task) {
      CT_TRY_ASSIGN(std::optional<Task> task, get_task(format_task_id(entry.num)));
      if (!task) return fail(ErrorCode::Internal, "a task noted for the search index vanished during the search");
      entry.task = std::move(*task);
    }
    hits.push_back(SearchHit{std::move(*entry.task), entry.score});
  }
  return hits;
}

Result<std::int64_t> SqliteStore::count_matches(std::string_view text, const TaskFilter& filter) {
  std::vector<std::string> tokens = tokenize(text);
  if (tokens.empty()) return 0;
  CT_TRY_ASSIGN(std::optional<std::vector<TailHit>> scanned, search_index_tail(tokens, filter));
  const std::vector<TailHit> noted = scanned ? std::move(*scanned) : std::vector<TailHit>{};
  sql::Args args;
  args.bind(match_expression(tokens));
  const std::string sql = "SELECT count(*)" + matches(filter, scanned.has_value(), args);
  CT_TRY_ASSIGN(std::int64_t indexed, runner_.integer(sql, args, "cannot count search results"));
  std::int64_t count = std::ssize(noted) + indexed;
  // An exact id that the words do not match is one more result.
  CT_TRY_ASSIGN(std::optional<Task> exact, exact_id_match(text, filter));
  if (exact) {
    const std::int64_t exact_num = parse_task_id(exact->id).value_or(-1);
    if (std::ranges::any_of(noted, [&](const TailHit& hit) { return hit.num == exact_num; })) return count;
    CT_TRY_ASSIGN(std::int64_t exact_indexed,
                  runner_.integer("SELECT count(*) FROM tasks_fts WHERE tasks_fts MATCH ?1 AND rowid = "
                                  "(SELECT num FROM tasks WHERE id = ?2) AND rowid NOT IN (SELECT num FROM tasks_fts_tail)",
                                  sql::values(match_expression(tokens), exact->id), "cannot count search results"));
    if (exact_indexed == 0) ++count;
  }
  return count;
}

Result<std::vector<ResearchEntry>> SqliteStore::search_research(std::string_view text, ArchivedFilter archived,
                                                                std::int64_t limit) {
  std::vector<ResearchEntry> out;
  if (limit == 0) return out;
  std::vector<std::string> tokens = tokenize(text);
  if (tokens.empty()) return out;
  CT_TRY(ensure_rank());
  ResearchQuery filter;
  filter.archived = archived;
  sql::Args args;
  args.bind(match_expression(tokens));
  std::string where;
  sql::Where conditions{where, args};
  sql::append_research_filter(kDialect, filter, conditions);
  std::string sql = "SELECT " + research_columns(kDialect) +
                    " FROM research_fts CROSS JOIN research r ON r.num = research_fts.rowid WHERE research_fts MATCH ?1" +
                    (where.empty() ? std::string() : " AND " + where.substr(std::string_view(" WHERE ").size())) +
                    " ORDER BY ct_rank(research_fts, 10.0, 5.0, 2.0), r.num";
  if (limit > 0) sql += " LIMIT " + args(limit);
  CT_TRY_ASSIGN(out, runner_.all(sql, args, "cannot search research entries",
                                 [](const sql::Cursor& row) { return read_research_row(row); }));
  // An exact id goes first.
  CT_TRY_ASSIGN(std::optional<ResearchEntry> exact, get_research(trim(text)));
  if (exact && (archived == ArchivedFilter::Include || exact->archived == (archived == ArchivedFilter::Only))) {
    std::erase_if(out, [&](const ResearchEntry& e) { return e.id == exact->id; });
    out.insert(out.begin(), std::move(*exact));
    if (limit > 0 && std::ssize(out) > limit) out.resize(static_cast<std::size_t>(limit));
  }
  return out;
}

Result<std::int64_t> SqliteStore::count_research_matches(std::string_view text, ArchivedFilter archived) {
  CT_TRY_ASSIGN(std::vector<ResearchEntry> all, search_research(text, archived, -1));
  return static_cast<std::int64_t>(all.size());
}

std::vector<std::string> SqliteStore::tokenize(std::string_view text) {
  constexpr std::size_t kMaxText = 1000;
  constexpr std::size_t kMaxTokens = 32;
  if (text.size() > kMaxText) {
    std::size_t cut = kMaxText;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // UTF-8 boundary
    text = text.substr(0, cut);
  }
  std::vector<std::string> tokens;
  if (load_tokenizer()) {
    auto on_token = [](void* context, int, const char* token, int length, int, int) -> int {
      auto* out = static_cast<std::vector<std::string>*>(context);
      if (length > 0 && out->size() < kMaxTokens) out->emplace_back(token, static_cast<std::size_t>(length));
      return SQLITE_OK;
    };
    tokenizer_api_.xTokenize(tokenizer_, &tokens, FTS5_TOKENIZE_QUERY, text.data(), static_cast<int>(text.size()),
                             on_token);
  } else {
    // Fallback: ASCII letters and digits (and any non-ASCII byte) form words.
    std::string current;
    for (char c : text) {
      auto byte = static_cast<unsigned char>(c);
      if (byte >= 0x80 || (byte >= '0' && byte <= '9') || (byte >= 'a' && byte <= 'z') ||
          (byte >= 'A' && byte <= 'Z')) {
        current += static_cast<char>(byte >= 'A' && byte <= 'Z' ? byte + 32 : byte);
      } else if (!current.empty()) {
        tokens.push_back(std::move(current));
        current.clear();
      }
    }
    if (!current.empty()) tokens.push_back(std::move(current));
    if (tokens.size() > kMaxTokens) tokens.resize(kMaxTokens);
  }
  // Duplicates add nothing to an AND query.
  std::vector<std::string> unique;
  for (auto& token : tokens)
    if (std::find(unique.begin(), unique.end(), token) == unique.end()) unique.push_back(std::move(token));
  return unique;
}

std::string SqliteStore::match_expression(const std::vector<std::string>& tokens) {
  std::string match;
  for (const auto& token : tokens) {
    if (!match.empty()) match += ' ';
    append_phrase(match, token);
    match += '*';
  }
  return match;
}

Result<bool> SqliteStore::index_terms_complete() {
  CT_TRY_ASSIGN(std::int64_t marks, runner_.integer("SELECT count(*) FROM tasks_fts_terms WHERE term = ''", {},
                                                    "cannot read the search index's terms"));
  return marks > 0;
}

Result<SqliteStore::Expansion> SqliteStore::expand_words(const std::vector<std::string>& tokens) {
  // A word of more terms than this stays a prefix query (FTS5's OR steps every branch per row);
  // so does every word once the expression holds this many phrases.
  constexpr std::size_t kMaxTermsPerWord = 16;
  constexpr std::size_t kMaxPhrases = 64;
  Expansion out;
  CT_TRY_ASSIGN(bool complete, index_terms_complete());
  for (std::size_t word = 0; word < tokens.size(); ++word) {
    const std::string& token = tokens[word];
    const char mark = static_cast<char>('A' + word);
    std::vector<std::string> terms;
    if (complete && out.words.size() < kMaxPhrases) {
      // The terms that start with the word: from it up to the word with its last byte raised.
      std::string high = token;
      while (!high.empty() && static_cast<unsigned char>(high.back()) == 0xff) high.pop_back();
      sql::Args args;
      args.bind(token);
      std::string sql = "SELECT term FROM tasks_fts_terms WHERE term >= ?1";
      if (!high.empty()) {
        high.back() = static_cast<char>(static_cast<unsigned char>(high.back()) + 1);
        sql += " AND term < " + args(high);
      }
      sql += " ORDER BY term LIMIT " + std::to_string(kMaxTermsPerWord + 1);
      CT_TRY_ASSIGN(terms, runner_.strings(sql, args, "cannot search"));
      if (terms.empty()) return Expansion{};  // this word matches nothing in the index
    }
    if (!out.expression.empty()) out.expression += " AND ";  // (FTS5 ANDs no group implicitly)
    if (terms.empty() || terms.size() > kMaxTermsPerWord || out.words.size() + terms.size() > kMaxPhrases) {
      append_phrase(out.expression, token);
      out.expression += '*';
      out.words += mark;
      continue;
    }
    if (terms.size() > 1) out.expression += '(';
    for (std::size_t i = 0; i < terms.size(); ++i) {
      if (i > 0) out.expression += " OR ";
      append_phrase(out.expression, terms[i]);
      out.words += mark;
    }
    if (terms.size() > 1) out.expression += ')';
  }
  return out;
}

Result<std::optional<Task>> SqliteStore::exact_id_match(std::string_view text, const TaskFilter& filter) {
  auto id = normalize_task_id(trim(text));
  if (!id) return std::optional<Task>();
  sql::Args args;
  args.bind(*id);
  const std::string rest = sql::task_where(kDialect, filter, true, args);
  const std::string sql = task_select() + " WHERE t.id = ?1" +
                          (rest.empty() ? "" : " AND " + rest.substr(std::string_view(" WHERE ").size()));
  return runner_.first(sql, args, "cannot search", [](const sql::Cursor& row) { return read_task_row(row); });
}

fts5_api* SqliteStore::fts5() {
  if (fts5_ != nullptr) return fts5_;
  fts5_api* api = nullptr;
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db_, "SELECT fts5(?1)", -1, &stmt, nullptr) == SQLITE_OK) {
    sqlite3_bind_pointer(stmt, 1, static_cast<void*>(&api), "fts5_api_ptr", nullptr);
    sqlite3_step(stmt);
  }
  sqlite3_finalize(stmt);
  if (api == nullptr || api->iVersion < 2) return nullptr;
  fts5_ = api;
  return fts5_;
}

namespace {

/// ct_rank(index, weight of column 0, weight of column 1, …[, word of each phrase]): how well a row matches, lower is
/// better (as bm25, so that ORDER BY is ascending): saturating_score negated (a title hit
/// outweighs a description that repeats the word).
/// Unlike bm25 it does not normalise by the row's length: that needs one lookup of the row's size
/// per match, 90 % of bm25's cost (a word in 10k of 100k tasks: 6.7 ms to rank with bm25, 0.9 ms
/// with this; docs/performance.md).
void ct_rank(const Fts5ExtensionApi* x, Fts5Context* fts, sqlite3_context* context, int argc, sqlite3_value** argv) {
  constexpr int kMaxCells = 256;  // words × columns counted (a query has at most 32 words)
  const int columns = x->xColumnCount(fts);
  const int phrases = x->xPhraseCount(fts);
  int hits = 0;
  if (columns <= 0 || phrases <= 0 || x->xInstCount(fts, &hits) != SQLITE_OK) {
    sqlite3_result_error(context, "ct_rank: cannot read the match", -1);
    return;
  }
  // The argument after the weights, when given, names the word of each phrase ('A' + its index):
  // a word expanded into its terms ("schema" OR "schemas") scores as its prefix ("schema"*) did.
  std::string_view word_of;
  if (argc > columns && sqlite3_value_type(argv[columns]) == SQLITE_TEXT)
    word_of = std::string_view(reinterpret_cast<const char*>(sqlite3_value_text(argv[columns])),
                               static_cast<std::size_t>(sqlite3_value_bytes(argv[columns])));
  int words = phrases;
  if (!word_of.empty()) {
    words = 0;
    for (char mark : word_of) words = mark < 'A' ? kMaxCells : std::max(words, mark - 'A' + 1);
  }
  if (std::ssize(word_of) != (word_of.empty() ? 0 : phrases) || words <= 0 || words * columns > kMaxCells) {
    sqlite3_result_error(context, "ct_rank: cannot read the match", -1);
    return;
  }
  std::array<int, kMaxCells> counts;  // only the cells of the words are used
  std::fill_n(counts.begin(), words * columns, 0);
  for (int i = 0; i < hits; ++i) {
    int phrase = 0, column = 0, offset = 0;
    if (x->xInst(fts, i, &phrase, &column, &offset) != SQLITE_OK) continue;
    if (phrase < 0 || phrase >= phrases || column < 0 || column >= columns) continue;
    const int word = word_of.empty() ? phrase : word_of[static_cast<std::size_t>(phrase)] - 'A';
    ++counts[static_cast<std::size_t>(word * columns + column)];
  }
  const double score = saturating_score(counts, words, columns, [&](int column) {
    return column < argc ? sqlite3_value_double(argv[column]) : 1.0;
  });
  sqlite3_result_double(context, -score);
}

}  // namespace

Result<void> SqliteStore::ensure_rank() {
  if (rank_registered_) return {};
  fts5_api* api = fts5();
  if (api == nullptr || api->xCreateFunction(api, "ct_rank", nullptr, &ct_rank, nullptr) != SQLITE_OK)
    return fail(ErrorCode::Internal, "cannot register the search ranking (SQLite without FTS5?)");
  rank_registered_ = true;
  return {};
}

bool SqliteStore::load_tokenizer() {
  if (tokenizer_ != nullptr) return true;
  if (tokenizer_failed_) return false;
  tokenizer_failed_ = true;
  fts5_api* api = fts5();
  if (api == nullptr) return false;
  void* user_data = nullptr;
  if (api->xFindTokenizer(api, "unicode61", &user_data, &tokenizer_api_) != SQLITE_OK) return false;
  const char* args[] = {"remove_diacritics", "2"};
  if (tokenizer_api_.xCreate(user_data, args, 2, &tokenizer_) != SQLITE_OK || tokenizer_ == nullptr) {
    tokenizer_ = nullptr;
    return false;
  }
  tokenizer_failed_ = false;
  return true;
}

}  // namespace ct::sqlite
