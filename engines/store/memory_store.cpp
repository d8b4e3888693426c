#include "engines/store/memory_store.h"

#include <algorithm>
#include <charconv>
#include <cstdio>

#include "core/json.h"
#include "core/json_parse.h"
#include "engines/store/schema_ddl.h"
#include "engines/store/store_rows.h"

namespace ct {
namespace {

using sql::Value;

constexpr std::string_view kColumns =
    "m.id, m.kind, m.title, m.body, m.status, m.confidence, m.files, m.labels, m.tasks, m.epic, m.source_agent, "
    "m.source_session, m.source_task, m.verified_by, m.verified_at, m.supersedes, m.superseded_by, m.reason, m.hash, "
    "m.anchors, m.applied_count, m.ignored_count, m.applied_at, m.applied_by, m.created_at, m.updated_at";

Error corrupt(std::string_view id, std::string_view column) {
  return Error(ErrorCode::FileError, "memory entry " + std::string(id) + " has an unreadable " + std::string(column))
      .with_fix(corrupt_fix());
}

std::string encode_anchors(const std::vector<MemoryAnchor>& anchors) {
  json::Value out = json::Value::array();
  for (const auto& anchor : anchors) {
    json::Value item = json::Value::object();
    if (!anchor.file.empty()) {
      item.set("file", anchor.file);
      item.set("sha256", anchor.sha256);
      item.set("size", anchor.size);
      item.set("mtime", anchor.mtime_ns);
    } else {
      item.set("task", anchor.task);
      item.set("status", anchor.task_status);
    }
    out.push_back(std::move(item));
  }
  return out.dump();
}

Result<std::vector<MemoryAnchor>> decode_anchors(std::string_view text, std::string_view id) {
  std::vector<MemoryAnchor> anchors;
  if (text.empty() || text == "[]") return anchors;
  auto parsed = json::parse(text);
  if (!parsed || !parsed->is_array()) return fail(corrupt(id, "anchors"));
  for (const auto& item : parsed->as_array()) {
    if (!item.is_object()) return fail(corrupt(id, "anchors"));
    MemoryAnchor anchor;
    auto text_of = [&](std::string_view key) {
      const json::Value* value = item.find(key);
      return value ? value->string_or_empty() : std::string();
    };
    auto int_of = [&](std::string_view key) {
      const json::Value* value = item.find(key);
      return value && value->is_int() ? value->as_int() : std::int64_t{0};
    };
    anchor.file = text_of("file");
    anchor.sha256 = text_of("sha256");
    anchor.size = int_of("size");
    anchor.mtime_ns = int_of("mtime");
    anchor.task = text_of("task");
    anchor.task_status = text_of("status");
    anchors.push_back(std::move(anchor));
  }
  return anchors;
}

Result<MemoryEntry> read_entry(const sql::Cursor& row) {
  MemoryEntry entry;
  entry.id = std::string(row.text(0));
  entry.kind = std::string(row.text(1));
  entry.title = std::string(row.text(2));
  entry.body = std::string(row.text(3));
  entry.status = std::string(row.text(4));
  entry.confidence = row.optional_real(5);
  CT_TRY_ASSIGN(entry.files, decode_strings(row.text(6), entry.id, "files"));
  CT_TRY_ASSIGN(entry.labels, decode_strings(row.text(7), entry.id, "labels"));
  CT_TRY_ASSIGN(entry.tasks, decode_strings(row.text(8), entry.id, "tasks"));
  entry.epic = std::string(row.text(9));
  entry.source_agent = std::string(row.text(10));
  entry.source_session = std::string(row.text(11));
  entry.source_task = std::string(row.text(12));
  entry.verified_by = std::string(row.text(13));
  entry.verified_at = row.optional_int(14);
  entry.supersedes = std::string(row.text(15));
  entry.superseded_by = std::string(row.text(16));
  entry.reason = std::string(row.text(17));
  entry.hash = std::string(row.text(18));
  CT_TRY_ASSIGN(entry.anchors, decode_anchors(row.text(19), entry.id));
  entry.applied_count = row.integer(20);
  entry.ignored_count = row.integer(21);
  entry.applied_at = row.optional_int(22);
  entry.applied_by = std::string(row.text(23));
  entry.created_at = row.integer(24);
  entry.updated_at = row.integer(25);
  return entry;
}

Value optional_value(const std::optional<std::int64_t>& value) {
  if (value) return Value(*value);
  return Value();
}

/// The conditions of a list: " WHERE …" and its values.
std::string where_of(const MemoryQuery& query, std::vector<Value>& args) {
  std::string where;
  auto add = [&](const std::string& condition) { where += (where.empty() ? " WHERE " : " AND ") + condition; };
  auto mark = [&](Value value) {
    args.push_back(std::move(value));
    return "?" + std::to_string(args.size());
  };
  if (!query.statuses.empty()) {
    std::string in;
    for (const auto& status : query.statuses) in += (in.empty() ? "" : ", ") + mark(status);
    add("m.status IN (" + in + ")");
  }
  if (query.kind) add("m.kind = " + mark(*query.kind));
  if (query.key) add("m.num IN (SELECT k.num FROM memory_keys k WHERE k.key = " + mark(*query.key) + ")");
  if (query.since) add("m.updated_at >= " + mark(*query.since));
  return where;
}

/// Statements over many values read them kChunk at a time, so that one statement per shape is
/// prepared and cached.
constexpr std::size_t kChunk = 32;

/// "?1, ?2, …" for the chunk of `items` from `start`, its values appended to `args`; a short last
/// chunk repeats its last item to keep the shape.
template <typename T>
std::string in_chunk(const std::vector<T>& items, std::size_t start, std::vector<Value>& args) {
  std::string in;
  for (std::size_t i = 0; i < kChunk; ++i) {
    args.emplace_back(items[std::min(start + i, items.size() - 1)]);
    in += (i ? ", ?" : "?") + std::to_string(i + 1);
  }
  return in;
}

}  // namespace

std::optional<std::int64_t> memory_number(std::string_view id) {
  if (id.size() < 2 || id.front() != 'M' || id.size() > 19) return std::nullopt;
  std::int64_t number = 0;
  auto [end, ec] = std::from_chars(id.data() + 1, id.data() + id.size(), number);
  if (ec != std::errc() || end != id.data() + id.size() || number <= 0) return std::nullopt;
  return number;
}

std::string memory_id(std::int64_t number) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "M%03lld", static_cast<long long>(number));
  return buffer;
}

namespace {
Result<std::vector<MemoryEntry>> read_all(sql::Runner& runner, const std::string& sql, std::span<const Value> args,
                                          std::string_view what) {
  return runner.all(sql, args, what, read_entry);
}
}  // namespace

Result<std::optional<MemoryEntry>> MemoryStore::get_memory(std::string_view id) {
  // By its number, the row's key: "M01" and "M0001" are M001, never another entry beside it.
  const auto number = memory_number(id);
  if (!number) return std::optional<MemoryEntry>();
  const Value args[] = {Value(*number)};
  CT_TRY_ASSIGN(std::vector<MemoryEntry> found, read_all(sql_runner(), "SELECT " + std::string(kColumns) +
                                                                          " FROM memory m WHERE m.num = ?1",
                                                         args, "cannot read the memory entry"));
  if (found.empty()) return std::optional<MemoryEntry>();
  return std::optional<MemoryEntry>(std::move(found.front()));
}

Result<std::vector<MemoryEntry>> MemoryStore::get_memories(const std::vector<std::int64_t>& numbers) {
  std::vector<MemoryEntry> out;
  for (std::size_t start = 0; start < numbers.size(); start += kChunk) {
    std::vector<Value> args;
    const std::string in = in_chunk(numbers, start, args);
    CT_TRY_ASSIGN(std::vector<MemoryEntry> part,
                  read_all(sql_runner(), "SELECT " + std::string(kColumns) + " FROM memory m WHERE m.num IN (" + in + ")",
                           args, "cannot read memory entries"));
    for (auto& entry : part) out.push_back(std::move(entry));
  }
  return out;
}

Result<std::vector<MemoryEntry>> MemoryStore::list_memory(const MemoryQuery& query) {
  std::vector<Value> args;
  std::string sql = "SELECT " + std::string(kColumns) + " FROM memory m" + where_of(query, args) +
                    " ORDER BY m.updated_at DESC, m.num DESC";
  if (query.limit >= 0) {
    args.emplace_back(query.limit);
    sql += " LIMIT ?" + std::to_string(args.size());
    args.emplace_back(query.offset);
    sql += " OFFSET ?" + std::to_string(args.size());
  }
  return read_all(sql_runner(), sql, args, "cannot list memory entries");
}

Result<std::int64_t> MemoryStore::count_memory(const MemoryQuery& query) {
  std::vector<Value> args;
  const std::string sql = "SELECT count(*) FROM memory m" + where_of(query, args);  // binds args first
  return sql_runner().integer(sql, args, "cannot count memory entries");
}

Result<std::int64_t> MemoryStore::next_memory_number() {
  return sql_runner().integer("SELECT coalesce(max(num), 0) + 1 FROM memory", {}, "cannot number a memory entry");
}

namespace {
/// The kept total (schema v18): the row of memory_terms whose key is '', the key every entry holds.
constexpr std::string_view kKeptTotal = "SELECT entries FROM memory_terms WHERE key = ''";
/// The total counted from the entries: what the kept one must say, and a store that lost it reads.
constexpr std::string_view kCountedTotal = "SELECT count(*) FROM memory";

Result<std::int64_t> counted_total(sql::Runner& runner) {
  return runner.integer(kCountedTotal, {}, "cannot count memory entries");
}
}  // namespace

Result<std::int64_t> MemoryStore::memory_total() {
  CT_TRY_ASSIGN(std::optional<std::int64_t> kept,
                sql_runner().first(kKeptTotal, {}, "cannot count memory entries",
                                   [](const sql::Cursor& row) { return row.integer(0); }));
  if (kept) return *kept;
  return counted_total(sql_runner());
}

Result<bool> MemoryStore::recount_memory() {
  auto& runner = sql_runner();
  bool right = false;
  CT_TRY(runner.each("SELECT (" + std::string(kKeptTotal) + "), (" + std::string(kCountedTotal) + ")", {},
                     "cannot count memory entries",
                     [&](const sql::Cursor& row) { right = !row.is_null(0) && row.integer(0) == row.integer(1); }));
  if (right) return false;
  CT_TRY(runner.run(ddl::kMemoryTotal, {}, "cannot count memory entries"));
  return true;
}

Result<void> MemoryStore::put_memory(const MemoryEntry& entry, const std::vector<std::string>& keys) {
  auto number = memory_number(entry.id);
  if (!number || memory_id(*number) != entry.id) return fail(ErrorCode::Internal, "not a memory entry id: " + entry.id);
  if (*number > kMaxMemoryNumber)
    return fail(Error(ErrorCode::Validation, entry.id + " is beyond the last entry id (M" +
                                                 std::to_string(kMaxMemoryNumber) + ")")
                    .with_detail("id", entry.id));
  auto& runner = sql_runner();
  // Before the row is written, in one statement: the keys stored for it, whether it exists (a new
  // entry counts in the kept total) and whether the total is kept (a damaged store's is counted).
  const Value num_arg[] = {Value(*number)};
  std::vector<std::string> stored;
  bool exists = false;
  bool total_kept = false;
  CT_TRY(runner.each("SELECT 0, key FROM memory_keys WHERE num = ?1 UNION ALL SELECT 1, '' FROM memory WHERE num = ?1 "
                     "UNION ALL SELECT 2, '' FROM memory_terms WHERE key = ''",
                     num_arg, "cannot read the memory keys", [&](const sql::Cursor& row) {
                       const std::int64_t what = row.integer(0);
                       if (what == 0) stored.emplace_back(row.text(1));
                       else if (what == 1) exists = true;
                       else total_kept = true;
                     }));
  std::sort(stored.begin(), stored.end());
  const Value args[] = {
      Value(*number), Value(entry.id), Value(entry.kind), Value(entry.title), Value(entry.body), Value(entry.status),
      entry.confidence ? Value(*entry.confidence) : Value(), Value(encode_strings(entry.files)),
      Value(encode_strings(entry.labels)), Value(encode_strings(entry.tasks)), Value(entry.epic),
      Value(entry.source_agent), Value(entry.source_session), Value(entry.source_task), Value(entry.verified_by),
      optional_value(entry.verified_at), Value(entry.supersedes), Value(entry.superseded_by), Value(entry.reason),
      Value(entry.hash), Value(encode_anchors(entry.anchors)), Value(entry.applied_count), Value(entry.ignored_count),
      optional_value(entry.applied_at), Value(entry.applied_by), Value(entry.created_at), Value(entry.updated_at)};
  CT_TRY(runner.run(
      "INSERT INTO memory(num, id, kind, title, body, status, confidence, files, labels, tasks, epic, source_agent, "
      "source_session, source_task, verified_by, verified_at, supersedes, superseded_by, reason, hash, anchors, "
      "applied_count, ignored_count, applied_at, applied_by, created_at, updated_at) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, "
      "?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27) "
      "ON CONFLICT(num) DO UPDATE SET id = excluded.id, kind = excluded.kind, title = excluded.title, "
      "body = excluded.body, status = excluded.status, confidence = excluded.confidence, files = excluded.files, "
      "labels = excluded.labels, tasks = excluded.tasks, epic = excluded.epic, source_agent = excluded.source_agent, "
      "source_session = excluded.source_session, source_task = excluded.source_task, "
      "verified_by = excluded.verified_by, verified_at = excluded.verified_at, supersedes = excluded.supersedes, "
      "superseded_by = excluded.superseded_by, reason = excluded.reason, hash = excluded.hash, "
      "anchors = excluded.anchors, applied_count = excluded.applied_count, ignored_count = excluded.ignored_count, "
      "applied_at = excluded.applied_at, applied_by = excluded.applied_by, created_at = excluded.created_at, "
      "updated_at = excluded.updated_at",
      args, "cannot save the memory entry"));
  // A store that lost its total (damaged; validate reports it) has it counted again, this entry
  // with the others; else a new entry adds one to it with its keys' counts (below).
  if (!total_kept) CT_TRY(runner.run(ddl::kMemoryTotal, {}, "cannot count memory entries"));
  bool count_new = !exists && total_kept;
  // The keys are replaced only when they differ: a usage count or a status changes none.
  std::vector<std::string> wanted = keys;
  std::sort(wanted.begin(), wanted.end());
  wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());
  if (stored == wanted && !count_new) return {};
  for (const auto& key : stored)
    if (!std::binary_search(wanted.begin(), wanted.end(), key)) {
      const Value pair[] = {Value(key), Value(*number)};
      CT_TRY(runner.run("DELETE FROM memory_keys WHERE key = ?1 AND num = ?2", pair, "cannot save the memory keys"));
      const Value one[] = {Value(key)};
      CT_TRY(runner.run("UPDATE memory_terms SET entries = entries - 1 WHERE key = ?1", one, "cannot save the memory keys"));
    }
  std::vector<std::string> added;
  for (const auto& key : wanted)
    if (!std::binary_search(stored.begin(), stored.end(), key)) added.push_back(key);
  // New keys go in by rows of 16, 4 and 1: a new entry's thirty-odd keys in a handful of statements,
  // each of three shapes prepared once. A new entry's count in the total ('') goes with the first.
  constexpr std::string_view kTotalRow = "('', 1)";
  for (std::size_t at = 0; at < added.size();) {
    const std::size_t rows = added.size() - at >= 16 ? 16 : added.size() - at >= 4 ? 4 : 1;
    std::string keys_sql = "INSERT INTO memory_keys(key, num) VALUES";
    std::string terms_sql = "INSERT INTO memory_terms(key, entries) VALUES";
    std::vector<Value> key_args;
    std::vector<Value> term_args;
    for (std::size_t i = 0; i < rows; ++i) {
      key_args.emplace_back(added[at + i]);
      key_args.emplace_back(*number);
      keys_sql += std::string(i ? ", " : " ") + "(?" + std::to_string(2 * i + 1) + ", ?" + std::to_string(2 * i + 2) + ")";
      term_args.emplace_back(added[at + i]);
      terms_sql += std::string(i ? ", " : " ") + "(?" + std::to_string(i + 1) + ", 1)";
    }
    if (count_new) (terms_sql += ", ") += kTotalRow;
    count_new = false;
    terms_sql += " ON CONFLICT(key) DO UPDATE SET entries = memory_terms.entries + 1";
    CT_TRY(runner.run(keys_sql, key_args, "cannot save the memory keys"));
    CT_TRY(runner.run(terms_sql, term_args, "cannot save the memory keys"));
    at += rows;
  }
  if (count_new)  // a new entry without keys
    CT_TRY(runner.run("INSERT INTO memory_terms(key, entries) VALUES" + std::string(kTotalRow) +
                          " ON CONFLICT(key) DO UPDATE SET entries = memory_terms.entries + 1",
                      {}, "cannot count memory entries"));
  return {};
}

namespace {

/// Ranges read per statement: a find's few ranges in one statement (a round trip on PostgreSQL,
/// where a scoped find read each of its ~4 ranges by a statement of its own), the statement's
/// text one of a few.
constexpr std::size_t kRangesPerStatement = 8;

/// A UNION ALL of `count` branches, the i-th made by `branch(i, from, to)` over its range's
/// placeholders (?2i+1, ?2i+2; `args` gets the values), each tagged with its index first.
template <class Branch>
std::string ranges_union(const std::vector<MemoryKeyRange>& ranges, std::size_t start, std::size_t count,
                         std::vector<Value>& args, Branch branch) {
  std::string sql;
  for (std::size_t i = 0; i < count; ++i) {
    const std::string from = "?" + std::to_string(args.size() + 1);
    const std::string to = "?" + std::to_string(args.size() + 2);
    args.emplace_back(ranges[start + i].from);
    args.emplace_back(ranges[start + i].to);
    sql += (i ? " UNION ALL " : "") + branch(i, from, to);
  }
  return sql;
}

}  // namespace

Result<std::vector<std::vector<std::int64_t>>> MemoryStore::memory_numbers(const std::vector<MemoryKeyRange>& ranges,
                                                                           std::int64_t cap) {
  std::vector<std::vector<std::int64_t>> out(ranges.size());
  for (std::size_t start = 0; start < ranges.size(); start += kRangesPerStatement) {
    const std::size_t count = std::min(kRangesPerStatement, ranges.size() - start);
    std::vector<Value> args{Value(sql::limit_of(cap))};  // ?1, every branch's limit
    const std::string sql = ranges_union(ranges, start, count, args, [](std::size_t i, const std::string& from,
                                                                        const std::string& to) {
      return "SELECT " + std::to_string(i) + " AS r, s.num FROM (SELECT num FROM memory_keys WHERE key >= " + from +
             " AND key < " + to + " ORDER BY key DESC, num DESC LIMIT ?1) AS s";
    });
    CT_TRY(sql_runner().each(sql, args, "cannot search memory", [&](const sql::Cursor& row) {
      out[start + static_cast<std::size_t>(row.integer(0))].push_back(row.integer(1));
    }));
  }
  return out;
}

Result<MemoryKeyCounts> MemoryStore::memory_key_counts(const std::vector<MemoryKeyRange>& ranges) {
  MemoryKeyCounts out;
  out.holders.assign(ranges.size(), 0);
  std::optional<std::int64_t> kept;
  // The first statement reads the kept total too (r = -1; NULL when the store lost it).
  for (std::size_t start = 0; start == 0 || start < ranges.size(); start += kRangesPerStatement) {
    const std::size_t count = std::min(kRangesPerStatement, ranges.size() - start);
    std::vector<Value> args;
    std::string sql = ranges_union(ranges, start, count, args, [](std::size_t i, const std::string& from,
                                                                  const std::string& to) {
      return "SELECT " + std::to_string(i) + " AS r, (SELECT coalesce(sum(entries), 0) FROM memory_terms WHERE key >= " +
             from + " AND key < " + to + ") AS n";
    });
    if (start == 0) sql += std::string(count ? " UNION ALL " : "") + "SELECT -1 AS r, (" + std::string(kKeptTotal) + ") AS n";
    CT_TRY(sql_runner().each(sql, args, "cannot search memory", [&](const sql::Cursor& row) {
      const std::int64_t r = row.integer(0);
      if (r >= 0) out.holders[start + static_cast<std::size_t>(r)] = row.integer(1);
      else if (!row.is_null(1)) kept = row.integer(1);
    }));
  }
  if (kept) {
    out.total = *kept;
  } else {
    CT_TRY_ASSIGN(out.total, counted_total(sql_runner()));  // the kept one was just read: missing
  }
  return out;
}

Result<std::map<std::string, std::int64_t>> MemoryStore::memory_term_counts(const std::vector<std::string>& keys) {
  std::map<std::string, std::int64_t> out;
  for (std::size_t start = 0; start < keys.size(); start += kChunk) {
    std::vector<Value> args;
    const std::string in = in_chunk(keys, start, args);
    CT_TRY(sql_runner().each("SELECT key, entries FROM memory_terms WHERE key IN (" + in + ")", args, "cannot search memory",
                            [&](const sql::Cursor& row) { out[std::string(row.text(0))] = row.integer(1); }));
  }
  return out;
}

Result<void> MemoryStore::add_memory_usage(const MemoryUsage& usage) {
  auto& runner = sql_runner();
  const Value args[] = {Value(usage.memory_id), Value(usage.at), Value(std::int64_t{usage.applied ? 1 : 0}),
                        Value(usage.agent), Value(usage.session), Value(usage.task_id),
                        Value(usage.constraint_id), Value(usage.host_session)};
  CT_TRY(runner.run("INSERT INTO memory_usage(seq, memory_id, at, applied, agent, session, task_id, constraint_id, "
                    "host_session) "
                    "VALUES((SELECT coalesce(max(seq), 0) + 1 FROM memory_usage), ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                    args, "cannot record the use of a memory entry"));
  if (!usage.counted) return {};
  if (usage.applied) {
    const Value update[] = {Value(usage.memory_id), Value(usage.at), Value(usage.agent)};
    return runner.run("UPDATE memory SET applied_count = applied_count + 1, applied_at = ?2, applied_by = ?3 "
                      "WHERE id = ?1",
                      update, "cannot record the use of a memory entry");
  }
  const Value update[] = {Value(usage.memory_id)};
  return runner.run("UPDATE memory SET ignored_count = ignored_count + 1 WHERE id = ?1", update,
                    "cannot record the use of a memory entry");
}

Result<std::vector<MemoryUsage>> MemoryStore::memory_usage(std::optional<std::string> memory_id,
                                                           std::optional<std::string> task_id,
                                                           std::optional<TimeMs> since, std::int64_t limit) {
  std::vector<Value> args;
  std::string where;
  auto add = [&](std::string_view column, Value value) {
    args.push_back(std::move(value));
    where += (where.empty() ? " WHERE " : " AND ") + std::string(column) + "?" + std::to_string(args.size());
  };
  if (memory_id) add("memory_id = ", *memory_id);
  if (task_id) add("task_id = ", *task_id);
  if (since) add("at >= ", *since);
  args.emplace_back(limit);
  return sql_runner().all("SELECT memory_id, at, applied, agent, session, task_id, constraint_id, host_session "
                          "FROM memory_usage" + where + " ORDER BY seq DESC LIMIT ?" + std::to_string(args.size()),
                          args, "cannot read the use of memory entries", [](const sql::Cursor& row) {
                            return MemoryUsage{std::string(row.text(0)), row.integer(1), row.integer(2) != 0,
                                               std::string(row.text(3)), std::string(row.text(4)),
                                               std::string(row.text(5)), std::string(row.text(6)),
                                               std::string(row.text(7))};
                          });
}

Result<MemoryCounts> MemoryStore::memory_counts() {
  MemoryCounts counts;
  CT_TRY(sql_runner().each("SELECT status, kind, count(*), coalesce(sum(CASE WHEN applied_count = 0 THEN 1 ELSE 0 END), 0) "
                          "FROM memory GROUP BY status, kind",
                          {}, "cannot count memory entries", [&](const sql::Cursor& row) {
                            const std::int64_t n = row.integer(2);
                            counts.total += n;
                            counts.by_status[std::string(row.text(0))] += n;
                            counts.by_kind[std::string(row.text(1))] += n;
                            if (row.text(0) == "active") counts.never_applied += row.integer(3);
                          }));
  return counts;
}

}  // namespace ct
