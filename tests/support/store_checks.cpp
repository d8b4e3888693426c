#include "support/store_checks.h"

#include <libpq-fe.h>
#include <sqlite3.h>

#include <memory>

namespace ct::testing {

std::expected<Rows, std::string> query_rows(const std::filesystem::path& db, const std::string& sql, bool read_write) {
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(db.c_str(), &raw, read_write ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY, nullptr);
  std::unique_ptr<sqlite3, int (*)(sqlite3*)> handle(raw, sqlite3_close_v2);
  if (rc != SQLITE_OK) return std::unexpected("cannot open " + db.string() + ": " + sqlite3_errstr(rc));
  sqlite3_busy_timeout(raw, 10000);
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(raw, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK)
    return std::unexpected("cannot run `" + sql + "`: " + sqlite3_errmsg(raw));
  std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)> statement(stmt, sqlite3_finalize);
  Rows rows;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    std::vector<std::string> row;
    for (int c = 0; c < sqlite3_column_count(stmt); ++c) {
      const unsigned char* text = sqlite3_column_text(stmt, c);
      row.emplace_back(text ? reinterpret_cast<const char*>(text) : "");
    }
    rows.push_back(std::move(row));
  }
  if (rc != SQLITE_DONE) return std::unexpected("`" + sql + "` failed: " + sqlite3_errmsg(raw));
  return rows;
}

std::expected<Rows, std::string> query_pg_rows(const std::string& url, const std::string& schema,
                                               const std::string& sql) {
  std::unique_ptr<PGconn, void (*)(PGconn*)> conn(PQconnectdb(url.c_str()), PQfinish);
  if (PQstatus(conn.get()) != CONNECTION_OK) return std::unexpected(std::string("cannot connect: ") + PQerrorMessage(conn.get()));
  std::string script = "SET search_path = \"" + schema + "\"";
  PQclear(PQexec(conn.get(), script.c_str()));
  std::unique_ptr<PGresult, void (*)(PGresult*)> result(PQexec(conn.get(), sql.c_str()), PQclear);
  if (PQresultStatus(result.get()) != PGRES_TUPLES_OK)
    return std::unexpected("`" + sql + "` failed: " + PQerrorMessage(conn.get()));
  Rows rows;
  for (int r = 0; r < PQntuples(result.get()); ++r) {
    std::vector<std::string> row;
    for (int c = 0; c < PQnfields(result.get()); ++c) row.emplace_back(PQgetvalue(result.get(), r, c));
    rows.push_back(std::move(row));
  }
  return rows;
}

std::expected<void, std::string> drop_pg_schema(const std::string& url, const std::string& schema) {
  std::unique_ptr<PGconn, void (*)(PGconn*)> conn(PQconnectdb(url.c_str()), PQfinish);
  if (PQstatus(conn.get()) != CONNECTION_OK) return std::unexpected(std::string("cannot connect: ") + PQerrorMessage(conn.get()));
  PQsetNoticeProcessor(conn.get(), [](void*, const char*) {}, nullptr);  // not each object the drop takes
  std::unique_ptr<char, void (*)(void*)> quoted(PQescapeIdentifier(conn.get(), schema.data(), schema.size()), PQfreemem);
  if (!quoted) return std::unexpected(std::string("cannot quote the schema's name: ") + PQerrorMessage(conn.get()));
  const std::string sql = std::string("DROP SCHEMA IF EXISTS ") + quoted.get() + " CASCADE";
  std::unique_ptr<PGresult, void (*)(PGresult*)> result(PQexec(conn.get(), sql.c_str()), PQclear);
  if (PQresultStatus(result.get()) != PGRES_COMMAND_OK)
    return std::unexpected("`" + sql + "` failed: " + PQerrorMessage(conn.get()));
  return {};
}

std::string integrity_problem(const std::filesystem::path& db) {
  auto rows = query_rows(db, "PRAGMA integrity_check", true);
  if (!rows) return "integrity_check could not run: " + rows.error();
  if (rows->size() == 1 && rows->front().front() == "ok") return "";
  std::string said;
  for (const auto& row : *rows) said += (said.empty() ? "" : "; ") + row.front();
  return "integrity_check: " + said;
}

namespace {

Verdict verdict_of(const CtRun& ran, const std::string& what) {
  Verdict verdict;
  const json::Value& envelope = ran.json;
  if (succeeded(envelope) && envelope["data"]["valid"].is_bool()) {
    verdict.valid = envelope["data"]["valid"].as_bool();
    if (envelope["data"]["rows"].is_int()) verdict.rows = envelope["data"]["rows"].as_int();
    if (!verdict.valid) verdict.problem = what + " says the store is not valid: " + ran.out;
  } else if (error_code(envelope) == "E_VALIDATION") {
    verdict.problem = what + " says the store is not valid: " + ran.out;
  } else {
    verdict.problem = what + " did not run (exit " + std::to_string(ran.status.code) + "): " + ran.out;
  }
  return verdict;
}

}  // namespace

Verdict validate_schema(const CtCommand& ct) {
  return verdict_of(ct.run_retrying({"validate", "--limit", "20"}), "ct validate");
}

Verdict validate_audit(const CtCommand& ct) {
  return verdict_of(ct.run_retrying({"validate", "audit"}), "ct validate audit");
}

std::vector<std::string> store_problems(const CtCommand& ct, const std::filesystem::path& db) {
  std::vector<std::string> problems;
  if (std::string problem = integrity_problem(db); !problem.empty()) problems.push_back(problem);
  for (const Verdict& verdict : {validate_schema(ct), validate_audit(ct)})
    if (!verdict.valid) problems.push_back(verdict.problem);
  return problems;
}

}  // namespace ct::testing
