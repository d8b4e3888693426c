#include "engines/store/sqlite/sqlite_foreign.h"

#include <algorithm>
#include <cctype>
#include <memory>
#include <system_error>

#include <sqlite3.h>

#include "core/file_read.h"
#include "core/json_parse.h"
#include "engines/store/sqlite/sqlite_statement.h"

namespace ct {
namespace {

using Db = std::unique_ptr<sqlite3, int (*)(sqlite3*)>;
using Stmt = std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)>;

/// `file` as an SQLite URI, read-only, and immutable unless `in_use`: the characters a URI
/// gives a meaning (and any byte outside the plain ones) escaped.
std::string file_uri(const std::filesystem::path& file, bool in_use) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string uri = "file:";
  for (unsigned char c : std::filesystem::absolute(file).string()) {
    if (std::isalnum(c) || c == '/' || c == '.' || c == '_' || c == '-' || c == '~') {
      uri += static_cast<char>(c);
    } else {
      uri += '%';
      uri += kHex[c >> 4];
      uri += kHex[c & 0xF];
    }
  }
  return uri + (in_use ? "?mode=ro" : "?mode=ro&immutable=1");
}

class Reader {
 public:
  Reader(sqlite3* db, const std::filesystem::path& file, const ForeignReadLimits& limits)
      : db_(db), file_(file.string()), limits_(limits) {}

  /// What went wrong with SQLite's code `rc`, in words a person can act on.
  Error failed(int rc, std::string_view doing) const {
    const int primary = rc & 0xff;
    const std::string reason = sqlite3_errmsg(db_);
    if (primary == SQLITE_TOOBIG)
      return Error(ErrorCode::Validation, file_ + ": a value " + std::string(doing) + " is over " +
                                              std::to_string(limits_.max_value_bytes >> 10) + " KiB")
          .with_fix("this is not a store the original CLEO wrote; check the file")
          .with_detail("file", file_);
    Error error(ErrorCode::FileError, file_ + ": cannot read it (" + std::string(doing) + "): " + reason);
    if (primary == SQLITE_NOTADB) error.message = file_ + " is not a SQLite database";
    if (primary == SQLITE_CORRUPT) error.message = file_ + " is damaged (" + reason + ")";
    if (rc == SQLITE_READONLY_ROLLBACK || rc == SQLITE_READONLY_RECOVERY || rc == SQLITE_READONLY_CANTINIT)
      error.message = file_ + " was left in the middle of a write by the program that keeps it (" + reason +
                      "); a reader that never writes cannot finish that write";
    if (primary == SQLITE_BUSY || primary == SQLITE_LOCKED)
      error.message = file_ + " is locked by the program that keeps it (" + reason + ")";
    error.fix = primary == SQLITE_BUSY || primary == SQLITE_LOCKED || primary == SQLITE_READONLY
                    ? Advice("let the program that keeps it finish (open and close it once), then read it again")
                    : Advice("check the file: it must be the SQLite database the original CLEO kept");
    return std::move(error).with_detail("file", file_);
  }

  Result<Stmt> prepare(const std::string& sql, std::string_view doing) {
    sqlite3_stmt* raw = nullptr;
    int rc = sqlite3_prepare_v2(db_, sql.c_str(), -1, &raw, nullptr);
    Stmt stmt(raw, sqlite3_finalize);
    if (rc != SQLITE_OK) return fail(failed(rc, doing));
    return stmt;
  }

  Result<ForeignDatabase> list() {
    ForeignDatabase out;
    CT_TRY_ASSIGN(Stmt names, prepare("SELECT name, coalesce(sql, '') FROM sqlite_schema WHERE type = 'table' AND "
                                      "name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name",
                                      "listing its tables"));
    int rc = SQLITE_OK;
    while ((rc = sqlite3_step(names.get())) == SQLITE_ROW) {
      std::string sql(sqlite::column_text(names.get(), 1));
      // A virtual table needs its module (FTS and the like), which a reader of a foreign file
      // does not load; its rows live in tables of its own, listed like any other.
      if (std::string_view(sql).substr(0, 20).find("VIRTUAL") != std::string_view::npos ||
          std::string_view(sql).substr(0, 20).find("virtual") != std::string_view::npos)
        continue;
      if (out.tables.size() == limits_.max_tables)
        return fail(Error(ErrorCode::Validation, file_ + " holds more than " + std::to_string(limits_.max_tables) +
                                                     " tables; this is not a store the original CLEO wrote")
                        .with_detail("file", file_));
      out.tables.push_back({std::string(sqlite::column_text(names.get(), 0)), {}, 0, json::Value::array()});
    }
    if (rc != SQLITE_DONE) return fail(failed(rc, "listing its tables"));
    for (auto& table : out.tables) {
      CT_TRY_ASSIGN(Stmt columns, prepare("SELECT name FROM pragma_table_info(?1) ORDER BY cid", "reading a table's columns"));
      sqlite3_bind_text(columns.get(), 1, table.name.c_str(), -1, sqlite::kTransient);
      while ((rc = sqlite3_step(columns.get())) == SQLITE_ROW) table.columns.emplace_back(sqlite::column_text(columns.get(), 0));
      if (rc != SQLITE_DONE) return fail(failed(rc, "reading the columns of " + table.name));
      CT_TRY_ASSIGN(Stmt count, prepare("SELECT count(*) FROM " + sqlite::sql_identifier(table.name), "counting the rows of " + table.name));
      rc = sqlite3_step(count.get());
      if (rc != SQLITE_ROW) return fail(failed(rc, "counting the rows of " + table.name));
      table.rows = sqlite3_column_int64(count.get(), 0);
    }
    return out;
  }

  Result<void> read(ForeignTable& table) {
    if (table.rows > limits_.max_rows)
      return fail(too_many(table));
    // Rowid order where the table has one (WITHOUT ROWID tables have none).
    auto stmt = prepare("SELECT * FROM " + sqlite::sql_identifier(table.name) + " ORDER BY rowid", "reading " + table.name);
    if (!stmt) {
      CT_TRY_ASSIGN(stmt, prepare("SELECT * FROM " + sqlite::sql_identifier(table.name), "reading " + table.name));
    }
    sqlite3_stmt* raw = stmt->get();
    const int columns = sqlite3_column_count(raw);
    int rc = SQLITE_OK;
    std::int64_t rows = 0;
    while ((rc = sqlite3_step(raw)) == SQLITE_ROW) {
      if (++rows > limits_.max_rows) return fail(too_many(table));
      json::Value record = json::Value::object();
      for (int c = 0; c < columns; ++c) {
        const char* name = sqlite3_column_name(raw, c);
        std::string column = name ? name : "";
        switch (sqlite3_column_type(raw, c)) {
          case SQLITE_INTEGER: record.set(column, static_cast<std::int64_t>(sqlite3_column_int64(raw, c))); break;
          case SQLITE_FLOAT: record.set(column, sqlite3_column_double(raw, c)); break;
          case SQLITE_TEXT: {
            std::string value(sqlite::column_text(raw, c));
            total_ += value.size();
            if (total_ > limits_.max_total_bytes)
              return fail(Error(ErrorCode::Validation, file_ + " holds more than " +
                                                           std::to_string(limits_.max_total_bytes >> 20) +
                                                           " MiB of text in the tables read (passed in " + table.name + ")")
                              .with_fix("import a store this size in parts: it is larger than any the original CLEO kept")
                              .with_detail("file", file_).with_detail("table", table.name));
            if (!valid_utf8(value))
              return fail(Error(ErrorCode::Validation, file_ + ": " + table.name + "." + column + " of row " +
                                                           std::to_string(rows) + " is not UTF-8 text")
                              .with_fix("check the file: the original CLEO writes UTF-8")
                              .with_detail("file", file_).with_detail("table", table.name));
            record.set(column, std::move(value));
            break;
          }
          default: record.set(column, json::Value()); break;  // NULL, and blobs (nothing the original keeps)
        }
      }
      table.records.push_back(std::move(record));
    }
    if (rc != SQLITE_DONE) return fail(failed(rc, "reading " + table.name));
    return {};
  }

 private:
  Error too_many(const ForeignTable& table) const {
    return Error(ErrorCode::Validation, file_ + ": " + table.name + " holds " + std::to_string(table.rows) +
                                            " rows, more than the " + std::to_string(limits_.max_rows) + " read at most")
        .with_fix("import a store this size in parts: it is larger than any the original CLEO kept")
        .with_detail("file", file_)
        .with_detail("table", table.name);
  }

  sqlite3* db_;
  std::string file_;
  ForeignReadLimits limits_;
  std::size_t total_ = 0;
};

}  // namespace

const ForeignTable* ForeignDatabase::find(std::string_view name) const {
  for (const auto& table : tables)
    if (table.name == name) return &table;
  return nullptr;
}

Result<ForeignDatabase> read_foreign_sqlite(const std::filesystem::path& file, const std::vector<std::string>& read,
                                            const ForeignReadLimits& limits) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec))
    return fail(Error(ErrorCode::NotFound, file.string() + " is not a file").with_fix("check the path"));
  {
    // SQLite would say "file is not a database" only once asked for a page; the header says it first.
    auto header = read_regular_file_part(file, 0, {16, std::chrono::milliseconds(5000)});
    if (!header || *header != std::string_view("SQLite format 3\0", 16))
      return fail(Error(ErrorCode::FileError, file.string() + " is not a SQLite database")
                      .with_fix("check the file: it must be the SQLite database the original CLEO kept")
                      .with_detail("file", file.string()));
  }
  sqlite3* raw = nullptr;
  // Read-only: SQLite writes neither the file nor a journal through this connection, and a hot
  // journal (a write its program left unfinished) is an error here instead of being rolled back.
  // A reader of a database in WAL mode still opens (or makes) its -wal and -shm files; unless the
  // program that keeps it left one beside it, the file is read as immutable, so that nothing at
  // all appears in the user's folder.
  auto beside = [&](std::string_view suffix) {
    std::error_code missing;
    const std::filesystem::path other = file.string() + std::string(suffix);
    return std::filesystem::exists(other, missing) && std::filesystem::file_size(other, missing) > 0;
  };
  const bool in_use = beside("-wal") || beside("-journal");
  int rc = sqlite3_open_v2(file_uri(file, in_use).c_str(), &raw, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX,
                           nullptr);
  Db db(raw, sqlite3_close_v2);
  if (rc != SQLITE_OK)
    return fail(Error(ErrorCode::FileError, "cannot open " + file.string() + ": " +
                                                (raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc)))
                    .with_detail("file", file.string()));
  sqlite3_extended_result_codes(raw, 1);
  sqlite3_busy_timeout(raw, 2000);
  // One value above the limit is refused while it is read (SQLITE_TOOBIG), before it takes memory.
  sqlite3_limit(raw, SQLITE_LIMIT_LENGTH, static_cast<int>(std::min<std::size_t>(limits.max_value_bytes, 1u << 30)));
  sqlite3_exec(raw, "PRAGMA query_only = ON", nullptr, nullptr, nullptr);
  Reader reader(raw, file, limits);
  // One read transaction: the tables are read as of one moment, even while their program writes.
  if (int begun = sqlite3_exec(raw, "BEGIN", nullptr, nullptr, nullptr); begun != SQLITE_OK)
    return fail(reader.failed(begun, "starting to read"));
  auto listed = reader.list();
  if (listed) {
    for (auto& table : listed->tables) {
      if (std::find(read.begin(), read.end(), table.name) == read.end()) continue;
      if (auto done = reader.read(table); !done) {
        listed = fail(std::move(done.error()));
        break;
      }
    }
  }
  sqlite3_exec(raw, "ROLLBACK", nullptr, nullptr, nullptr);
  return listed;
}

}  // namespace ct
