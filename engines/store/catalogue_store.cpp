#include "engines/store/catalogue_store.h"

namespace ct {
namespace {

using sql::Value;

constexpr std::string_view kColumns = "subject, version, owner, body_hash, gov_hash, used, used_at, updated_at";

CatalogueRow read_row(const sql::Cursor& row) {
  CatalogueRow out;
  out.subject = std::string(row.text(0));
  out.version = row.integer(1);
  out.owner = std::string(row.text(2));
  out.body_hash = std::string(row.text(3));
  out.gov_hash = std::string(row.text(4));
  out.used = row.integer(5);
  out.used_at = row.optional_int(6);
  out.updated_at = row.integer(7);
  return out;
}

CatalogueChange read_change(const sql::Cursor& row) {
  return {std::string(row.text(0)), row.integer(1), row.integer(2), std::string(row.text(3)), std::string(row.text(4))};
}

/// The first subject after every one starting with `prefix` (byte order): the end of its range.
std::string prefix_end(std::string_view prefix) {
  std::string end(prefix);
  while (!end.empty() && static_cast<unsigned char>(end.back()) == 0xFF) end.pop_back();
  if (!end.empty()) end.back() = static_cast<char>(static_cast<unsigned char>(end.back()) + 1);
  return end;
}

}  // namespace

Result<std::optional<CatalogueRow>> CatalogueStore::get_catalogue(std::string_view subject) {
  const Value args[] = {Value(std::string(subject))};
  return sql_runner().first("SELECT " + std::string(kColumns) + " FROM catalogue WHERE subject = ?1", args,
                            "cannot read the catalogue", read_row);
}

Result<std::vector<CatalogueRow>> CatalogueStore::list_catalogue(std::string_view prefix) {
  const std::string end = prefix_end(prefix);
  if (end.empty())
    return sql_runner().all("SELECT " + std::string(kColumns) + " FROM catalogue ORDER BY subject",
                            std::span<const Value>(), "cannot read the catalogue", read_row);
  const Value args[] = {Value(std::string(prefix)), Value(end)};
  return sql_runner().all("SELECT " + std::string(kColumns) +
                              " FROM catalogue WHERE subject >= ?1 AND subject < ?2 ORDER BY subject",
                          args, "cannot read the catalogue", read_row);
}

Result<void> CatalogueStore::put_catalogue(const CatalogueRow& row) {
  const Value args[] = {Value(row.subject), Value(row.version),  Value(row.owner),
                        Value(row.body_hash), Value(row.gov_hash), Value(row.used),
                        row.used_at ? Value(*row.used_at) : Value(), Value(row.updated_at)};
  return sql_runner().run(
      "INSERT INTO catalogue(" + std::string(kColumns) +
          ") VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT(subject) DO UPDATE SET version = excluded.version, "
          "owner = excluded.owner, body_hash = excluded.body_hash, gov_hash = excluded.gov_hash, used = excluded.used, "
          "used_at = excluded.used_at, updated_at = excluded.updated_at",
      args, "cannot save the catalogue");
}

Result<void> CatalogueStore::add_catalogue_change(const CatalogueChange& change) {
  const Value args[] = {Value(change.subject), Value(change.version), Value(change.at), Value(change.by),
                        Value(change.summary)};
  return sql_runner().run(
      "INSERT INTO catalogue_changes(subject, version, at, changed_by, summary) VALUES(?1, ?2, ?3, ?4, ?5) "
      "ON CONFLICT(subject, version) DO UPDATE SET at = excluded.at, changed_by = excluded.changed_by, "
      "summary = excluded.summary",
      args, "cannot save the catalogue's change log");
}

Result<std::vector<CatalogueChange>> CatalogueStore::catalogue_changes(std::string_view subject, std::int64_t limit) {
  constexpr std::string_view kSql =
      "SELECT subject, version, at, changed_by, summary FROM catalogue_changes WHERE subject = ?1 ORDER BY version DESC";
  if (limit < 0) {
    const Value args[] = {Value(std::string(subject))};
    return sql_runner().all(kSql, args, "cannot read the catalogue's change log", read_change);
  }
  const Value args[] = {Value(std::string(subject)), Value(limit)};
  return sql_runner().all(std::string(kSql) + " LIMIT ?2", args, "cannot read the catalogue's change log", read_change);
}

Result<std::vector<CatalogueRow>> CatalogueStore::hot_catalogue(std::string_view prefix, std::int64_t limit) {
  const Value args[] = {Value(std::string(prefix)), Value(prefix_end(prefix)), Value(limit)};
  return sql_runner().all("SELECT " + std::string(kColumns) +
                              " FROM catalogue WHERE subject >= ?1 AND subject < ?2 AND used > 0 "
                              "ORDER BY used DESC, used_at DESC, subject LIMIT ?3",
                          args, "cannot read the catalogue", read_row);
}

}  // namespace ct
