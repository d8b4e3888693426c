// The release role, written once over the backend's sql::Runner.
#include "engines/store/release_store.h"

#include "engines/store/store_rows.h"

namespace ct {
namespace {

Result<Release> read_release(const sql::Cursor& row) { return read_release_row(row); }

}  // namespace

Result<std::optional<Release>> ReleaseStore::get_release(std::string_view version) {
  static const std::string sql = std::string(kReleaseSelect) + " WHERE version = ?1";
  const sql::Value args[] = {sql::Value(version)};
  return sql_runner().first(sql, args, "cannot read the release", read_release);
}

Result<std::vector<Release>> ReleaseStore::list_releases() {
  static const std::string sql = std::string(kReleaseSelect) + " ORDER BY created_at DESC, version DESC";
  return sql_runner().all(sql, {}, "cannot list releases", read_release);
}

Result<void> ReleaseStore::put_release(const Release& release) {
  return sql_runner().run(
      "INSERT INTO releases(version, status, tasks, notes, created_at, updated_at, released_at, tag, commit_sha, "
      "pushed, remote) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11) "
      "ON CONFLICT(version) DO UPDATE SET status = excluded.status, tasks = excluded.tasks, notes = excluded.notes, "
      "created_at = excluded.created_at, updated_at = excluded.updated_at, released_at = excluded.released_at, "
      "tag = excluded.tag, commit_sha = excluded.commit_sha, pushed = excluded.pushed, remote = excluded.remote",
      sql::values(release.version, to_string(release.status), encode_strings(release.tasks), release.notes,
                  release.created_at, release.updated_at, release.released_at, release.tag, release.commit,
                  std::int64_t{release.pushed ? 1 : 0}, release.remote),
      "cannot save the release");
}

}  // namespace ct
