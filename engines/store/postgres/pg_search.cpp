// The PostgreSQL store, part: search of tasks and research entries over their generated tsvector
// columns (every word of the text a prefix, AND), ranked per word with ts_rank, exact id first.
#include "engines/store/postgres/pg_store_impl.h"

namespace ct::pg {
namespace {

/// The text searched for, cut as the SQLite backend cuts it (at most 1000 bytes, on a UTF-8
/// boundary).
std::string_view cut_text(std::string_view text) {
  constexpr std::size_t kMaxText = 1000;
  if (text.size() <= kMaxText) return text;
  std::size_t cut = kMaxText;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return text.substr(0, cut);
}

/// CTEs over $1 (the text): `words(term)`, each word of the text as a prefix query (at most 32), and
/// `m(q, each)`, all of them ANDed (NULL when the text has no word) and the list of them. The
/// lexemes come from the same parser as the search columns, so a query word splits as a stored word
/// does; each is quoted for the tsquery syntax (quotes and backslashes escaped).
constexpr std::string_view kWords =
    "WITH words AS (SELECT '''' || replace(replace(w.lexeme, '\\', '\\\\'), '''', '''''') || ''':*' AS term"
    " FROM unnest(to_tsvector('simple', fold(?1::text))) AS w LIMIT 32),"
    " m AS (SELECT string_agg(term, ' & ')::tsquery AS q, array_agg(term::tsquery) AS each FROM words) ";

/// Rank of a row's vector `column`: per word, ts_rank with these weights ({D, C, B, A}), no length
/// normalisation, summed. One word (most finds) is ranked by one call, the same value without the
/// per-row subquery over the words (a third of the ranking's server CPU). `query` and `each` name
/// `m`'s two columns: as joined (`m.q`), or as values computed once (kQuery, kEach) where the
/// statement does not join `m`.
std::string rank_of(std::string_view column, std::string_view weights, std::string_view query = "m.q",
                    std::string_view each = "m.each") {
  const std::string rank = "ts_rank('" + std::string(weights) + "'::real[], " + std::string(column);
  return "CASE WHEN cardinality(" + std::string(each) + ") = 1 THEN " + rank + ", " + std::string(query) +
         ", 0) ELSE (SELECT coalesce(sum(" + rank + ", e, 0)), 0) FROM unnest(" + std::string(each) + ") AS e) END";
}

/// `m`'s columns as values PostgreSQL computes once per statement (an init plan) rather than
/// joined: a CROSS JOIN of `m` with the rows scanned rescanned `m` for every row.
constexpr std::string_view kQuery = "(SELECT q FROM m)";
constexpr std::string_view kEach = "(SELECT each FROM m)";

// Title 10, labels 5, description 3, notes 1 relative (A, B, C, D).
constexpr std::string_view kTaskWeights = "{0.1,0.3,0.5,1.0}";
// Title 10, topics 5, key findings 2 relative (A, B, C).
constexpr std::string_view kResearchWeights = "{0.1,0.2,0.5,1.0}";

/// FROM and WHERE of a task search: rows matching every word, or the exact id (?2, NULL when the
/// text is none), under the filter.
std::string task_matches(const TaskFilter& filter, sql::Args& args) {
  std::string where = " WHERE (t.search @@ m.q OR t.id = ?2::text)";
  sql::Where conditions{where, args};
  sql::append_task_filter(kDialect, filter, true, conditions);
  return " FROM m CROSS JOIN tasks t" + where;
}

/// ?1 the text, ?2 the exact id or NULL.
sql::Args search_args(std::string_view text, const std::optional<std::string>& exact) {
  sql::Args args;
  args.bind(cut_text(text));
  args.bind(exact ? sql::Value(*exact) : sql::Value());
  return args;
}

/// FROM and WHERE of a research search (?1 the text, ?2 the exact id or NULL).
std::string research_matches(ArchivedFilter archived) {
  std::string sql = " FROM m CROSS JOIN research r WHERE (r.search @@ m.q OR r.id = ?2::text)";
  switch (archived) {
    case ArchivedFilter::Exclude: sql += " AND r.archived = 0"; break;
    case ArchivedFilter::Only: sql += " AND r.archived = 1"; break;
    case ArchivedFilter::Include: break;
  }
  return sql;
}

std::optional<std::string> research_id(std::string_view text) {
  std::string_view id = trim(text);
  if (id.empty()) return std::nullopt;
  return std::string(id);
}

/// How much of the table, in windows, the newest-first scan of a common word reads at most
/// (PgStore::search): a word in at least 1.25 / kNewestSpan of the newest tasks (one in 6.4) is read
/// that way, as it is expected to fill the window there with a quarter to spare.
constexpr std::int64_t kNewestSpan = 8;

/// How many of the newest tasks are read to tell whether the words are common there (`sample(n)`
/// in PgStore::search: how many of them hold every word). Reading them costs about as much whatever the
/// words (~0.1 ms); the planner's lexeme statistics cost more than that on every find (~0.6 ms,
/// `pg_stats` unnested per call), are not there until the table is analysed, and describe the whole
/// table rather than the newest tasks the scan reads.
constexpr std::int64_t kSampleRows = 256;

}  // namespace

Result<std::vector<SearchHit>> PgStore::search(std::string_view text, const TaskFilter& filter, std::int64_t limit,
                                               SearchCount* count) {
  std::vector<SearchHit> hits;
  if (count) *count = SearchCount{};
  if (limit == 0) return hits;
  sql::Args args = search_args(text, normalize_task_id(trim(text)));
  if (limit < 0) {
    // Every match ranked (a scope's search).
    const std::string sql = std::string(kWords) + "SELECT " + std::string(kTaskColumns) + ", " +
                            rank_of("t.search", kTaskWeights) + " AS score, coalesce(t.id = ?2::text, false) AS exact" +
                            task_matches(filter, args) + " ORDER BY exact DESC, score DESC, t.num";
    bool exact_found = false;
    CT_TRY(runner_.each(sql, args, "cannot search", [&](const sql::Cursor& row) -> Result<void> {
      CT_TRY_ASSIGN(Task task, read_task_row(row));
      exact_found = exact_found || row.text(kTaskColumnCount + 1) == "t";
      hits.push_back(SearchHit{std::move(task), row.real(kTaskColumnCount)});
      return {};
    }));
    if (exact_found) hits.front().score = hits.size() > 1 ? std::max(1.0, hits[1].score + 1.0) : 1.0;
    if (count) count->matched = std::ssize(hits);
    return hits;
  }
  // As SQLite does (issue 56): only the newest matches are ranked — the window, read newest first
  // and cut, so that neither ranking nor counting follows the number of matches — with the exact id
  // whatever its age. The window's size is counted on the way: the page's total unless it filled.
  std::string conditions = " WHERE TRUE";
  sql::Where where{conditions, args};
  sql::append_task_filter(kDialect, filter, true, where);
  conditions.erase(0, std::string_view(" WHERE TRUE").size());
  const std::int64_t window = std::max(kSearchRankWindow, limit + 1);
  const std::int64_t span = kNewestSpan * window;
  // A row `near` reads is ranked as it is read (no second read of its vector, and the window keeps
  // (number, score) pairs, not vectors); `every` sorts all its matches first, so its rows are
  // ranked after the cut (ranked in its projection, all of them would be: 2,308 instead of
  // 1,000 in the fleet's store). Only the page's rows are joined to their tasks by number (a
  // filter "num IN w" on the whole table made PostgreSQL scan it): reading every column of the
  // window's 1,000 rows to keep five was most of a find's time (tasks.find, and the completion
  // of a task id by a word).
  // Where the window comes from (issue 56): the GIN index gives every match as a bitmap, and each
  // match's row is read to sort by number, linear in the matches. A word common among the
  // newest tasks (`below` not NULL) is read instead from the newest task backwards over at most `span`
  // numbers, each row tested (ts_match_vq, which no index serves), stopping at the window: `near`.
  // Whether a word is common is read from the newest kSampleRows tasks (`sample`), only in a store
  // of at least two windows (PostgreSQL evaluates the sample only when the CASE reaches it).
  // When that does not fill the window (or was not tried), `every` reads it from every match as
  // before; a full `near` is the newest `window` matches whatever lies below it (`filled`, counted
  // once). `near` not tried is a one-time filter (PostgreSQL planned it as a scan of every row
  // testing `num > NULL`). Its range is closed above (`num <= newest`, true of every row): a range
  // open on one side looked like a third of the table to the planner, which then read the whole
  // span and sorted it instead of walking the primary key backwards to the window (at 10k tasks:
  // 8,000 rows tested and sorted against 4,400 tested; 3.3 → 2.1 ms of server CPU per find).
  // The query is a value computed once (kQuery), not `m` joined: joined, `m` was rescanned for
  // each of the ~4,400 rows `near` tests.
  // The page's limit is written in, not bound: the plan cache then keeps one plan instead of
  // planning the statement again at every call (a bound LIMIT made its custom plans look cheaper).
  // A custom plan knew little more: the words reach the planner only through `m`, computed at run
  // time. The re-planning was a fifth of a find's server CPU at 10k tasks.
  const std::string sizes[] = {std::to_string(window), std::to_string(span), std::to_string(2 * window),
                               std::to_string((window + window / 4) * kSampleRows)};
  const std::string& n_window = sizes[0];
  const std::string query(kQuery);
  const std::string score = rank_of("t.search", kTaskWeights, kQuery, kEach) + " AS score";
  const std::string sql =
      std::string(kWords) +
      ", sample AS (SELECT count(*) AS n FROM (SELECT t.search FROM tasks t ORDER BY t.num DESC LIMIT " +
      std::to_string(kSampleRows) + ") s WHERE ts_match_vq(s.search, " + query + "))" +
      ", newest AS (SELECT coalesce(max(num), 0) AS num FROM tasks),"
      " below AS (SELECT CASE WHEN (SELECT num FROM newest) < " + sizes[2] +
      " THEN NULL WHEN (SELECT n FROM sample) * least(" + sizes[1] + ", (SELECT num FROM newest)) >= " + sizes[3] +
      " THEN (SELECT num FROM newest) - " + sizes[1] + " END AS num),"
      " near AS MATERIALIZED (SELECT t.num, " + score + " FROM tasks t"
      " WHERE (SELECT num FROM below) IS NOT NULL AND t.num > (SELECT num FROM below)"
      " AND t.num <= (SELECT num FROM newest) AND ts_match_vq(t.search, " + query + ")" + conditions +
      " ORDER BY t.num DESC LIMIT " + n_window + "),"
      " filled AS (SELECT count(*) >= " + n_window + " AS yes FROM near),"
      " every AS MATERIALIZED (SELECT t.num, t.search FROM tasks t WHERE NOT (SELECT yes FROM filled)"
      " AND t.search @@ " + query + conditions + " ORDER BY t.num DESC LIMIT " + n_window + "),"
      " w AS MATERIALIZED (SELECT num, score FROM near WHERE (SELECT yes FROM filled)"
      " UNION ALL SELECT every.num, " + rank_of("every.search", kTaskWeights, kQuery, kEach) + " FROM every"
      "), ex AS (SELECT t.num, " + score + " FROM tasks t WHERE t.id = ?2::text" + conditions +
      "), hit AS (SELECT w.num, w.score, TRUE AS words FROM w"
      " UNION ALL SELECT ex.num, ex.score, FALSE FROM ex WHERE ex.num NOT IN (SELECT num FROM w)),"
      " top AS (SELECT hit.num, hit.score, hit.words, hit.num IN (SELECT num FROM ex) AS exact FROM hit"
      " ORDER BY exact DESC, score DESC, hit.num LIMIT " + std::to_string(limit) + ") SELECT " +
      std::string(kTaskColumns) + ", top.score, top.exact, (SELECT count(*) FROM w) AS in_window, top.words"
      " FROM top JOIN tasks t ON t.num = top.num ORDER BY top.exact DESC, top.score DESC, t.num";
  bool exact_found = false;
  bool exact_words = false;
  std::int64_t in_window = 0;
  CT_TRY(runner_.each(sql, args, "cannot search", [&](const sql::Cursor& row) -> Result<void> {
    CT_TRY_ASSIGN(Task task, read_task_row(row));
    const bool exact = row.text(kTaskColumnCount + 1) == "t";
    exact_found = exact_found || exact;
    exact_words = exact_words || (exact && row.text(kTaskColumnCount + 3) == "t");
    in_window = row.integer(kTaskColumnCount + 2);
    hits.push_back(SearchHit{std::move(task), row.real(kTaskColumnCount)});
    return {};
  }));
  // The exact id scores above every other hit.
  if (exact_found) hits.front().score = hits.size() > 1 ? std::max(1.0, hits[1].score + 1.0) : 1.0;
  if (count) {
    count->at_least = in_window >= window;
    count->matched = in_window;
    if (exact_found && !exact_words) {
      // Outside the window: whether the words match it too decides whether it is one more.
      CT_TRY_ASSIGN(std::int64_t words_match,
                    runner_.integer(std::string(kWords) + "SELECT count(*) FROM m CROSS JOIN tasks t WHERE t.id = ?2::text "
                                                          "AND t.search @@ m.q",
                                    search_args(text, hits.front().task.id), "cannot count search results"));
      if (words_match == 0) ++count->matched;
    }
  }
  return hits;
}

Result<std::int64_t> PgStore::count_matches(std::string_view text, const TaskFilter& filter) {
  sql::Args args = search_args(text, normalize_task_id(trim(text)));
  const std::string matches = task_matches(filter, args);
  return runner_.integer(std::string(kWords) + "SELECT count(*)" + matches, args, "cannot count search results");
}

Result<std::vector<ResearchEntry>> PgStore::search_research(std::string_view text, ArchivedFilter archived,
                                                            std::int64_t limit) {
  std::vector<ResearchEntry> out;
  if (limit == 0) return out;
  sql::Args args = search_args(text, research_id(text));
  const std::string sql = std::string(kWords) + "SELECT r.id" + research_matches(archived) +
                          " ORDER BY coalesce(r.id = ?2::text, false) DESC, " + rank_of("r.search", kResearchWeights) +
                          " DESC, r.num LIMIT " + args(sql::limit_of(limit));
  CT_TRY_ASSIGN(std::vector<std::string> ids, runner_.strings(sql, args, "cannot search research entries"));
  // The entries are read as get_research reads them (with their links), in rank order.
  for (const auto& id : ids) {
    CT_TRY_ASSIGN(std::optional<ResearchEntry> entry, get_research(id));
    if (entry) out.push_back(std::move(*entry));
  }
  return out;
}

Result<std::int64_t> PgStore::count_research_matches(std::string_view text, ArchivedFilter archived) {
  return runner_.integer(std::string(kWords) + "SELECT count(*)" + research_matches(archived),
                         search_args(text, research_id(text)), "cannot count research search results");
}

}  // namespace ct::pg
