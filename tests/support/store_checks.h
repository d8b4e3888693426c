// Checks of a project store from the outside, for tests that damage or stress it: SQLite's
// integrity_check on the file, `ct validate` (validate.schema) and `ct validate audit`
// (validate.audit, the hash chain), and read-only SQL for row-level facts.
#pragma once

#include <cstdint>
#include <expected>
#include <filesystem>
#include <string>
#include <vector>

#include "support/ct_client.h"

namespace ct::testing {

using Rows = std::vector<std::vector<std::string>>;

/// The rows of `sql` on the database, every column as text (NULL as ""). The database is opened
/// read-only unless `read_write` (a crashed WAL store may need its wal-index rebuilt to be read).
std::expected<Rows, std::string> query_rows(const std::filesystem::path& db, const std::string& sql,
                                            bool read_write = false);

/// The rows of `sql` on the PostgreSQL store at `url` in `schema`, every column as text (NULL as "").
std::expected<Rows, std::string> query_pg_rows(const std::string& url, const std::string& schema,
                                               const std::string& sql);

/// Drops `schema` with everything in it from the PostgreSQL server at `url` (nothing when there is
/// no such schema).
std::expected<void, std::string> drop_pg_schema(const std::string& url, const std::string& schema);

/// "" when `PRAGMA integrity_check` answers ok, else what it answered (or why it could not run).
std::string integrity_problem(const std::filesystem::path& db);

/// What `ct validate --json` (or `ct validate audit --json`) said about the store. A store is
/// valid when the command succeeded with data.valid == true; success:false with E_VALIDATION
/// (the exit 6 that `ct validate` may give an invalid store) is invalid; anything else (no JSON,
/// another error) is a failure of the check itself.
struct Verdict {
  bool valid = false;
  std::string problem;    // "" when valid: what was wrong, or why the check could not run
  std::int64_t rows = -1; // validate.audit: data.rows
};
Verdict validate_schema(const CtCommand& ct);
Verdict validate_audit(const CtCommand& ct);

/// integrity_check, validate.schema and validate.audit, in that order: one line per problem,
/// empty when the store passes all three.
std::vector<std::string> store_problems(const CtCommand& ct, const std::filesystem::path& db);

}  // namespace ct::testing
