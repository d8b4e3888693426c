// The SQLite backend's store class and the helpers its parts share. Internal to the backend: the
// roles are written once over its sql::Runner (engines/store/sql_runner.h); what is SQLite's own is
// defined by part, sqlite_store.cpp (connection, transactions, the runner, opening and migrating),
// sqlite_tasks.cpp (the next-task walk), sqlite_search.cpp (the FTS5 indexes, written behind the
// tasks, and their queries), sqlite_maintenance.cpp (consistency scans, repairs, integrity,
// backups), sqlite_dump.cpp (dumps and loads, and backup files) and sqlite_backend.cpp (the
// StoreBackend).
#pragma once

#include "engines/store/sqlite/sqlite_store.h"

#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "core/atomic_file.h"
#include "core/file_read.h"
#include "core/json_parse.h"
#include "core/log.h"
#include "core/text.h"
#include "engines/store/audit_chain.h"
#include "engines/store/sqlite/write_turns.h"
#include "engines/store/backups.h"
#include "engines/project/project.h"
#include "engines/store/store_rows.h"
#include "engines/store/sqlite/sqlite_schema.h"
#include "engines/store/sqlite/sqlite_statement.h"
#include "engines/store/sql_query.h"

namespace ct::sqlite {

inline bool is_file_error(int rc) {
  switch (rc & 0xff) {
    case SQLITE_IOERR:
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
    case SQLITE_FULL:
    case SQLITE_CANTOPEN:
    case SQLITE_READONLY:
    case SQLITE_PERM:
      return true;
    default:
      return false;
  }
}

/// A line of PRAGMA quick_check/integrity_check that names a problem ("ok" and the
/// "*** in database main ***" headings do not).
inline bool is_problem_line(std::string_view line) { return line != "ok" && !line.starts_with("*** in database"); }

/// The problems PRAGMA quick_check finds in the file `db` opened (one being inspected, a backup
/// just written), or the error itself when the check cannot run.
inline std::vector<std::string> quick_check_problems(sqlite3* db) {
  std::vector<std::string> problems;
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(db, "PRAGMA quick_check", -1, &stmt, nullptr);
  if (rc == SQLITE_OK)
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW)
      if (is_problem_line(column_text(stmt, 0))) problems.emplace_back(column_text(stmt, 0));
  if (rc != SQLITE_DONE) problems.emplace_back(sqlite3_errmsg(db));
  sqlite3_finalize(stmt);
  return problems;
}

inline bool is_lock_error(int rc) { return (rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED; }

/// The one mapping from an SQLite result code (and, for I/O errors, the operating system's errno
/// behind it) to our error codes.
inline Error sqlite_error(int rc, std::string_view detail, std::string_view what, const std::filesystem::path& file,
                   int system_errno = 0) {
  if (is_lock_error(rc)) {
    return Error(ErrorCode::LockTimeout, "database is locked by another writer; retry")
        .with_fix("retry the call; if it keeps happening, a person runs `ct config set storage.busyTimeoutMs 15000` "
                  "in a terminal (agents cannot set storage.busyTimeoutMs)")
        .with_detail("sqlite", std::string(detail));
  }
  std::string message = std::string(what) + ": " + std::string(detail) + " (" + file.string() + ")";
  // "disk I/O error" says little: the errno says a full disk or a read-only filesystem.
  if ((rc & 0xff) == SQLITE_IOERR || (rc & 0xff) == SQLITE_CANTOPEN || (rc & 0xff) == SQLITE_FULL) {
    if (system_errno == ENOSPC || system_errno == EDQUOT || (rc & 0xff) == SQLITE_FULL)
      return Error(ErrorCode::FileError, std::string(what) + ": the disk is full (" + file.string() + ")")
          .with_fix("free disk space on the volume holding " + file.parent_path().string() + " and retry");
    if (system_errno == EROFS)
      return Error(ErrorCode::FileError, std::string(what) + ": the filesystem is read-only (" + file.string() + ")")
          .with_fix("run with --read-only to read it, or on a writable copy");
  }
  if (is_file_error(rc)) {
    Error error(ErrorCode::FileError, std::move(message));
    switch (rc & 0xff) {
      case SQLITE_CORRUPT:
      case SQLITE_NOTADB:
        error.with_fix(corrupt_fix());
        break;
      case SQLITE_FULL:
        error.with_fix("free disk space on the volume holding " + file.parent_path().string() + " and retry");
        break;
      default:
        error.with_fix("check that " + file.string() + " and its directory exist and are readable and "
                       "writable by this user");
        break;
    }
    return error;
  }
  return Error(ErrorCode::Internal, std::move(message));
}

/// Whether task t has an unfinished child (an epic's work is its children). The parent index finds
/// them in one seek: `+c.status` keeps SQLite from probing tasks(status, archived, parent, …)
/// once per status instead (38 % more instructions for tasks.next).
inline constexpr std::string_view kOpenChildren =
    "EXISTS (SELECT 1 FROM tasks c WHERE c.parent = t.id AND c.archived = 0"
    " AND +c.status IN ('pending', 'active', 'blocked'))";

/// SQLite's words for the shared queries (engines/store/sql_query.h). NULL sorts first in SQLite,
/// so root tasks lead tree order; the (parent, position) index serves it.
inline constexpr sql::Dialect kDialect{
    .has_label = "EXISTS (SELECT 1 FROM json_each(t.labels) AS l WHERE l.value = {})",
    .open_children = kOpenChildren,
    .has_topic = "EXISTS (SELECT 1 FROM json_each(r.topics) AS j WHERE lower(j.value) = lower({}))",
    .roots_first = "",
    .roots_last = "",
    .title_key = "t.title COLLATE NOCASE",
    .ordered_join = "CROSS JOIN",  // CROSS JOIN: SQLite keeps the left side outermost
    .list_items = "(SELECT value, key AS pos FROM json_each({}))",
    .linked_tasks = "(SELECT coalesce(json_group_array(task_id), '[]') FROM (SELECT task_id FROM research_links l "
                    "WHERE l.research_id = r.id ORDER BY l.position))",
    .find_text = "instr",
    .intent_category = "json_extract(intent, '$.category')",
    .intent_confidence = "json_extract(intent, '$.confidence')",
    .intent_has_tag = "EXISTS (SELECT 1 FROM json_each(intent, '$.tags') WHERE value = {})",
    .change_order = "rowid",
    .merges_ordered_union = true,
};

/// What the search index holds of task t, in the order of tasks_fts(rowid, title, description,
/// labels, notes): labels joined by spaces, note texts by newlines (join_labels, join_notes).
inline constexpr std::string_view kIndexedTaskColumns =
    "t.num, t.title, t.description, "
    "coalesce((SELECT group_concat(l.value, ' ') FROM json_each(t.labels) l), ''), "
    "coalesce((SELECT group_concat(json_extract(n.value, '$.text'), char(10)) FROM json_each(t.notes) n), '')";

/// How many noted tasks (tasks_fts_tail) a write lets pile up before it folds them into the index:
/// the most a search reads beside the index.
inline constexpr std::int64_t kIndexBatch = 32;

/// A short-lived process (StoreOptions::short_lived) that committed leaves up to this many frames
/// in the WAL for the next process; past it, closing checkpoints the WAL into the database and
/// truncates it. Every process that opens the store alone rebuilds the WAL's index from the
/// whole WAL (~5,000 instructions per frame, measured): 128 frames (512 KiB) bound that to
/// ~0.6 million instructions, while a checkpoint (two syncs) comes once in every ~10 writes.
inline constexpr int kShortLivedWalFrames = 128;
/// SQLite's own automatic checkpoint (wal_autocheckpoint's default), kept by commit() once the
/// write has given back its turn (a checkpoint's syncs are not every writer's wait).
inline constexpr int kAutoCheckpointFrames = 1000;
/// Past this many frames (16 MB) a writer has the WAL start over (a RESTART checkpoint,
/// SqliteStore::commit), waiting at most kWalRestartWaitMs for readers of older snapshots.
inline constexpr int kWalRestartFrames = 4000;
inline constexpr int kWalRestartWaitMs = 50;

/// The name of the VFS every store connection is opened with: SQLite's own unix VFS, but an
/// existing WAL file is opened without SQLITE_OPEN_CREATE, which makes the unix VFS sync the
/// WAL's directory at the first sync of every process (a second durable sync per CLI write);
/// a WAL this VFS creates has its directory synced at once, so an existing one's entry is
/// durable (engines/store/sqlite/sqlite_store.cpp).
const char* store_vfs();

// ---------------------------------------------------------------------------------------------

/// PRAGMA user_version of a raw connection; nullopt when it cannot be read (not a database).
inline std::optional<std::int64_t> read_user_version(sqlite3* db) {
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &stmt, nullptr) != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return std::nullopt;
  }
  std::optional<std::int64_t> version;
  if (sqlite3_step(stmt) == SQLITE_ROW) version = sqlite3_column_int64(stmt, 0);
  sqlite3_finalize(stmt);
  return version;
}

/// Percent-encodes a path for an SQLite URI ("file:/a%3Fb?immutable=1").
inline std::string uri_path(const std::filesystem::path& file) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : file.string()) {
    if (c == '%' || c == '?' || c == '#' || c < 0x20 || c >= 0x7F) {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

/// The marker beside a store that failed an integrity check: writes are refused while it exists.
inline std::filesystem::path damaged_marker(const std::filesystem::path& file) { return file.string() + ".damaged"; }

inline Error damaged_store_error(const std::filesystem::path& file, std::string_view why) {
  return Error(ErrorCode::FileError, file.string() + " failed an integrity check (" + std::string(why) +
                                         "); writes are refused so that nothing more is built on it")
      .with_fix(corrupt_fix())
      .with_detail("damaged", true);
}

/// Pushes every dumped table (engines/store/store_dump.h) of `db` into `sink`: the columns as the
/// file has them, the rows in the table's dump order. Inside the caller's transaction (one snapshot).
Result<void> dump_database(sqlite3* db, DumpSink& sink, const std::filesystem::path& file);

/// Loads a dump into `db`, inside the caller's write transaction. With the first table, the rows of
/// every dumped table and of the search indexes go (the store's own meta rows stay). Each value is
/// bound as text: the column's affinity stores numbers as INTEGER or REAL again. finish() fills the
/// search indexes as the store's writers do: labels and topics joined by spaces, note texts and
/// findings by newlines.
class DumpLoader final : public DumpSink {
 public:
  DumpLoader(sqlite3* db, std::filesystem::path file) : db_(db), file_(std::move(file)) {}
  Result<void> table(std::string_view name, const std::vector<std::string>& columns) override;
  Result<void> row(std::span<const std::optional<std::string_view>> values) override;
  /// Whether a table arrived (and with it the old rows went).
  bool started() const { return started_; }
  Result<void> finish();

 private:
  Result<void> exec(const char* sql, std::string_view what);

  sqlite3* db_;
  std::filesystem::path file_;
  bool started_ = false;
  std::string table_;
  std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)> insert_{nullptr, sqlite3_finalize};
};

class SqliteStore final : public Store {
 public:
  SqliteStore(sqlite3* db, std::filesystem::path file) : db_(db), file_(std::move(file)) {}
  ~SqliteStore() override {
    if (in_transaction()) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    give_back_write_turn();
    for (auto& [sql, stmt] : statements_) sqlite3_finalize(stmt);
    if (tokenizer_ != nullptr && tokenizer_api_.xDelete != nullptr) tokenizer_api_.xDelete(tokenizer_);
    // A short-lived writer that left the WAL long checkpoints it on close (when no other
    // connection has the store open), and journal_size_limit=0 truncates it after.
    if (short_lived_ && !replaced_ && wal_frames_ >= kShortLivedWalFrames)
      sqlite3_db_config(db_, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 0, nullptr);
    sqlite3_close_v2(db_);
  }
  SqliteStore(const SqliteStore&) = delete;
  SqliteStore& operator=(const SqliteStore&) = delete;
  void set_shared_by_processes(bool shared) { shared_by_processes_ = shared; }
  Result<void> configure(const SqliteOptions& options) {
    sqlite3_extended_result_codes(db_, 1);
    busy_timeout_ms_ = std::max(0, options.busy_timeout_ms);
    sqlite3_busy_timeout(db_, busy_timeout_ms_);
    read_only_ = options.read_only || sqlite3_db_readonly(db_, "main") == 1;
    // Read before anything can write: a file that is not a database, an empty one or a schema
    // whose version and tables disagree is reported without touching it (reads never write).
    CT_TRY_ASSIGN(std::int64_t version, checked_version(options.create));
    const bool upgrade = options.upgrade && !read_only_;
    if (upgrade) CT_TRY(exec("PRAGMA journal_mode=WAL", "cannot open the task database"));
    CT_TRY(exec("PRAGMA foreign_keys=ON", "cannot configure the task database"));
    // Reads through a memory map skip a read() per page: large stores get much cheaper lookups.
    CT_TRY(exec("PRAGMA mmap_size=268435456", "cannot configure the task database"));
    // A short-lived process's commit is durable when COMMIT returns (one fdatasync of the WAL):
    // it does not checkpoint on close, which is what made its writes durable before.
    short_lived_ = options.short_lived && !read_only_;
    CT_TRY(exec(options.synchronous_full || short_lived_ ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL",
                "cannot configure the task database"));
    if (short_lived_) {
      int persist = 1;
      sqlite3_file_control(db_, "main", SQLITE_FCNTL_PERSIST_WAL, &persist);
      sqlite3_db_config(db_, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);
      CT_TRY(exec("PRAGMA journal_size_limit=0", "cannot configure the task database"));
    }
    // Every writer checkpoints at SQLite's own threshold, but after its write has given back the
    // turn (SqliteStore::commit): the next writer need not wait for it.
    if (!read_only_) sqlite3_wal_hook(db_, &SqliteStore::on_wal_commit, this);
    remember_identity();
    if (upgrade) return migrate(options, version);
    if (version < sqlite_schema_version())
      return fail(Error(ErrorCode::FileError, file_.string() + " has schema version " + std::to_string(version) +
                                                  " and needs an upgrade, which read-only mode does not make")
                      .with_fix("run one ct command without --read-only where the store is writable"));
    return {};
  }

  // -- transactions ---------------------------------------------------------------------------
  Result<void> begin(TxKind kind) override;
  Result<void> commit() override;
  void rollback() override;
  bool in_transaction() const override;
  Result<void> savepoint(std::string_view name) override;
  Result<void> rollback_to(std::string_view name) override;
  Result<void> release(std::string_view name) override;

  Result<std::int64_t> schema_version() override;
  // PRAGMA data_version: changes when another connection commits; reads the WAL index only.
  Result<std::int64_t> change_stamp() override;

  // -- what SQLite does its own way -----------------------------------------------------------
  Result<std::vector<ReadyCandidate>> top_ready(const ReadyScoring& scoring) override;
  Result<std::vector<SearchHit>> search(std::string_view text, const TaskFilter& filter,
                                          std::int64_t limit, SearchCount* count = nullptr) override;
  Result<std::int64_t> count_matches(std::string_view text, const TaskFilter& filter) override;
  Result<std::vector<ResearchEntry>> search_research(std::string_view text, ArchivedFilter archived,
                                                     std::int64_t limit) override;
  Result<std::int64_t> count_research_matches(std::string_view text, ArchivedFilter archived) override;

  // -- the roles' SQL (engines/store/sql_runner.h) ------------------------------------------
  class Runner final : public sql::Runner {
   public:
    explicit Runner(SqliteStore& store) : sql::Runner(kDialect), store_(store) {}
    using sql::Runner::run;
    Result<void> run(std::string_view sql, std::span<const sql::Value> args, std::string_view what,
                     sql::RowFn on_row) override;
    Result<void> atomically(sql::FunctionRef<Result<void>()> body) override { return store_.atomically(body); }
    std::int64_t changes() const override { return sqlite3_changes64(store_.db_); }

   private:
    SqliteStore& store_;
  };
  sql::Runner& sql_runner() override { return runner_; }

  // -- diagnostics ----------------------------------------------------------------------------
  Result<std::vector<DiagnosticRow>> scan(ScanKind kind, const ScanScope& scope) override;
  Result<DerivedRepair> rebuild_derived() override;
  Result<std::vector<std::string>> integrity_problems() override;
  Result<std::vector<std::string>> find_integrity_problems();
  Result<void> backup_to(const std::filesystem::path& file) override;

  // -- restore --------------------------------------------------------------------------------
  Result<void> replace_contents_from(const std::filesystem::path& file) override;
  Result<void> dump(DumpSink& sink) override;
  Result<void> load(const DumpSource& source) override;

 private:
  // -- the search indexes, kept with the rows (sqlite_search.cpp) ------------------------------
  /// Notes that task `number`'s search-index row is missing or behind its text (tasks_fts_tail),
  /// and folds the noted tasks into the index once kIndexBatch are waiting.
  Result<void> index_task(std::int64_t number) override;
  Result<void> unindex_task(std::int64_t number) override;
  Result<void> index_research(const ResearchEntry& entry, std::int64_t number) override;

  // -- plumbing -------------------------------------------------------------------------------
  Error error(int rc, std::string_view what) const;
  /// Writes the damaged marker (best effort: a store that cannot be written cannot be harmed).
  void mark_damaged(std::string_view reason) const;
  std::string damage_reason() const;
  /// The file this connection opened; a store removed or replaced under a running process must
  /// not swallow writes into an unlinked file.
  void remember_identity();
  /// Waits for the file's other writers, of this process and of others (WriteTurns), within the
  /// busy timeout; given back when the write ends.
  Result<void> take_write_turn();
  void give_back_write_turn();
  Result<void> check_identity();
  /// The cached statement for `sql`, prepared on first use.
  Result<sqlite3_stmt*> prepare(std::string_view sql);
  /// Runs a fixed statement (transaction control) from the cache.
  Result<void> run(std::string_view sql, std::string_view what);
  /// Runs one-off SQL (pragmas, migrations) without caching.
  Result<void> exec(const char* sql, std::string_view what);
  /// Makes a multi-statement write all-or-nothing, inside or outside the caller's transaction.
  Result<void> atomically(sql::FunctionRef<Result<void>()> body) {
    CT_TRY(run("SAVEPOINT ct_write", "cannot start a write"));
    auto result = body();
    if (!result) {
      sqlite3_exec(db_, "ROLLBACK TO ct_write; RELEASE ct_write", nullptr, nullptr, nullptr);
      return result;
    }
    auto released = run("RELEASE ct_write", "cannot finish a write");
    if (!released) sqlite3_exec(db_, "ROLLBACK TO ct_write; RELEASE ct_write", nullptr, nullptr, nullptr);
    return released;
  }
  /// Rewrites the index rows of the noted tasks from their rows and clears the notes.
  Result<void> fold_index_tail();
  /// Adds the terms the fold will write to tasks_fts_terms (schema v16); true when the table is
  /// marked incomplete and is to be rebuilt from the index after the fold.
  Result<bool> keep_index_terms();
  /// Whether tasks_fts_terms holds every term of the index (its row '' says so).
  Result<bool> index_terms_complete();
  /// The FTS5 query for search words with each word's whole terms (tasks_fts_terms) in place of
  /// its prefix, so that FTS5 streams the matches instead of merging them first.
  struct Expansion {
    std::string expression;  // empty when a word has no term: nothing in the index matches
    std::string words;       // the word of each phrase of the expression, 'A' + its index (ct_rank)
  };
  Result<Expansion> expand_words(const std::vector<std::string>& tokens);
  /// How many tasks are noted.
  Result<std::int64_t> index_tail_size();
  struct TailHit {
    std::int64_t num;
    double score;
  };
  /// The noted tasks under `filter` that every token matches (as a prefix, the index's way),
  /// scored as ct_rank scores an index row; nullopt when no task is noted (the index has all).
  Result<std::optional<std::vector<TailHit>>> search_index_tail(const std::vector<std::string>& tokens,
                                                                const TaskFilter& filter);
  /// Splits search text into the tokens the index holds, using FTS5's own unicode61 tokenizer
  /// (same folding and diacritics removal as the index), so "Café" finds "cafe".
  std::vector<std::string> tokenize(std::string_view text);
  /// The FTS5 query for search words: each a quoted prefix ("word"*), all required.
  static std::string match_expression(const std::vector<std::string>& tokens);
  /// The task whose id the search text is (within the filter), which ranks first.
  Result<std::optional<Task>> exact_id_match(std::string_view text, const TaskFilter& filter);
  bool load_tokenizer();
  /// " FROM tasks_fts … WHERE tasks_fts MATCH ? …" for the matches of a search under `filter`;
  /// `params` holds the match expression and receives the filter's values.
  /// Noted tasks (tasks_fts_tail) are left out when `skip_tail`: their index rows may be stale.
  std::string matches(const TaskFilter& filter, bool skip_tail, sql::Args& args);
  /// The connection's FTS5 API (nullptr without FTS5), fetched once.
  fts5_api* fts5();
  /// Registers ct_rank (sqlite_search.cpp) on this connection before its first search.
  Result<void> ensure_rank();
  Result<std::int64_t> user_version();
  Error newer_schema(std::int64_t version) const;
  /// Which of the tables (or indexes) the schema steps create (schema_steps()'s `creates`) the
  /// store holds, and whether it holds any table or index at all.
  struct StepTables {
    std::set<std::string> present;
    bool any = false;
  };
  Result<StepTables> step_tables();
  Error inconsistent(std::string why) const;
  /// The schema version, checked against what the file holds: a version the tables contradict
  /// (a tampered user_version) is refused once, clearly, before anything is written or backed up.
  Result<std::int64_t> checked_version(bool create);
  Result<void> migrate(const SqliteOptions& options, std::int64_t version);
  /// The pre-migration copy. A copy of this version already taken since the store last changed
  /// is reused: an upgrade that keeps failing (a full disk) must not pile up backups.
  Result<void> backup_before_migration(const SqliteOptions& options, std::int64_t current);
  /// v1 → v2: rows written before the chain existed get their hashes, oldest first.
  Result<void> chain_existing_audit_rows();
  Result<std::int64_t> meta_int(std::string_view key);
  /// The WAL hook of a writable connection, which replaces SQLite's automatic checkpoint:
  /// remembers the WAL's length after each commit; commit() checkpoints past kAutoCheckpointFrames.
  static int on_wal_commit(void* store, sqlite3* db, const char* schema, int frames);
  sqlite3* db_;
  std::filesystem::path file_;
  bool read_only_ = false;
  bool short_lived_ = false;  // StoreOptions::short_lived, on a writable connection
  bool replaced_ = false;     // the file was removed or replaced under this connection
  int wal_frames_ = 0;        // the WAL's length after this connection's last commit
  int wal_restart_at_ = kWalRestartFrames;  // the WAL's length at which commit() has it start over
  dev_t device_ = 0;
  ino_t inode_ = 0;
  off_t size_ = 0;
  std::unordered_map<std::string, sqlite3_stmt*, StringHash, std::equal_to<>> statements_;
  fts5_tokenizer tokenizer_api_{};
  Fts5Tokenizer* tokenizer_ = nullptr;
  bool tokenizer_failed_ = false;
  fts5_api* fts5_ = nullptr;
  bool rank_registered_ = false;
  /// The last scan of the noted tasks, for the search text and filter of `key`, within the
  /// transaction numbered `transaction` and before any row changed on this connection since
  /// (sqlite3_total_changes64 = `changes`): tasks.find's page and its count read them once.
  struct TailMemo {
    std::string key;
    std::uint64_t transaction;
    std::int64_t changes;
    std::vector<TailHit> hits;
  };
  std::optional<TailMemo> tail_memo_;
  std::uint64_t transactions_ = 0;  // transactions begun on this connection
  /// Held while a write transaction is open: no file is read for a caller meanwhile (core/file_read.h).
  std::optional<WriteLockMark> write_lock_;
  int busy_timeout_ms_ = 0;
  /// The file's writers take turns (WriteTurns); held from before BEGIN IMMEDIATE to its end.
  std::shared_ptr<WriteTurns> write_turns_;
  std::unique_lock<std::timed_mutex> write_turn_;
  SharedTurn* shared_turn_ = nullptr;  // the processes' turn while this connection holds it
  bool shared_by_processes_ = false;   // a project's store: its writers take the processes' turn
  Runner runner_{*this};
};

}  // namespace ct::sqlite
