// An agent host's config file on disk (engines/adapters/host_config.h): edit_file reads, edits and
// publishes it under a folder lock with a compare-and-swap and a backup; line_diff shows a change.
// The edits of the text itself: host_config_json.cpp (JSON, JSONC) and host_config_toml.cpp.
#include "engines/adapters/host_config.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

#include "core/atomic_file.h"
#include "core/file_read.h"

namespace ct::host_config {
namespace {

namespace fs = std::filesystem;

/// The lines of `text`, each with its newline (the last one may have none).
std::vector<std::string> split_lines(std::string_view text) {
  std::vector<std::string> lines;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    std::size_t end = nl == std::string_view::npos ? text.size() : nl + 1;
    lines.emplace_back(text.substr(pos, end - pos));
    pos = end;
  }
  return lines;
}

/// A file as read: whether it exists, its bytes, its mode and owner.
struct Snapshot {
  bool exists = false;
  std::string content;
  FileAttributes attributes;
};

Error file_problem(std::string message, std::string fix) {
  return Error(ErrorCode::FileError, std::move(message)).with_fix(std::move(fix));
}

Result<Snapshot> read_snapshot(const fs::path& file, std::string_view label) {
  Snapshot snapshot;
  // A host's file is read as any file of the user's (core/file_read.h): regular, bounded, quick.
  FileStamp stamp;
  auto text = read_regular_file(file, {16LL << 20, std::chrono::milliseconds(10000)}, &stamp);
  if (!text) {
    const Error& why = text.error();
    if (why.code == ErrorCode::NotFound) return snapshot;
    if (why.details["reason"] == json::Value("notRegular"))
      return fail(file_problem(std::string(label) + " is not a regular file", "move it away, then run again"));
    return fail(file_problem("cannot read " + std::string(label) + ": " + why.message, "check the file's permissions"));
  }
  struct stat info {};
  if (::stat(file.c_str(), &info) != 0)
    return fail(file_problem("cannot read " + std::string(label) + ": " + std::strerror(errno), "check the file's permissions"));
  snapshot.exists = true;
  snapshot.attributes = {static_cast<unsigned>(info.st_mode & 07777), static_cast<unsigned>(info.st_uid),
                         static_cast<unsigned>(info.st_gid)};
  snapshot.content = std::move(*text);
  return snapshot;
}

/// "<file>.bak-<UTC stamp>Z", or with "-2", "-3" … when taken: published with link(), which never
/// replaces a file, so a name in use (an older backup of the same second) is simply skipped.
Result<fs::path> write_backup(const fs::path& file, const Snapshot& original, TimeMs now) {
  std::string stamp;
  for (char c : format_iso8601(now).substr(0, 19))
    if (c != '-' && c != ':') stamp += c;
  fs::path base = file;
  base += ".bak-" + stamp + "Z";
  for (int n = 1; n <= 1000; ++n) {
    fs::path candidate = base;
    if (n > 1) candidate += "-" + std::to_string(n);
    CT_TRY_ASSIGN(AtomicFile copy, AtomicFile::create(candidate));
    copy.set_attributes(original.attributes);  // a private file's backup stays private
    CT_TRY(copy.write(original.content));
    auto published = copy.commit(Publish::Exclusive);
    if (published) return candidate;
    if (!is_target_exists(published.error())) return fail(std::move(published.error()));
  }
  return fail(file_problem("cannot find a free backup name beside " + file.string(),
                           "remove old " + file.filename().string() + ".bak-* files there"));
}

}  // namespace

std::string line_diff(std::string_view before, std::string_view after, std::string_view label) {
  if (before == after) return "";
  // Lines with their newline: a last line without one differs from the same text with one, and
  // is marked as diff(1) and patch(1) expect.
  std::vector<std::string> a = split_lines(before);
  std::vector<std::string> b = split_lines(after);
  std::size_t prefix = 0;
  while (prefix < a.size() && prefix < b.size() && a[prefix] == b[prefix]) ++prefix;
  std::size_t suffix = 0;
  while (suffix < a.size() - prefix && suffix < b.size() - prefix && a[a.size() - 1 - suffix] == b[b.size() - 1 - suffix])
    ++suffix;
  constexpr std::size_t kContext = 2;
  const std::size_t from = prefix > kContext ? prefix - kContext : 0;
  const std::size_t a_to = std::min(a.size(), a.size() - suffix + kContext);
  const std::size_t tail = a_to - (a.size() - suffix);  // context lines after the change
  const std::size_t b_to = b.size() - suffix + tail;
  std::string out = "--- " + std::string(label) + "\n+++ " + std::string(label) + "\n";
  out += "@@ -" + std::to_string(a_to > from ? from + 1 : from) + "," + std::to_string(a_to - from) + " +" +
         std::to_string(b_to > from ? from + 1 : from) + "," + std::to_string(b_to - from) + " @@\n";
  auto line = [&](char mark, const std::string& text) {
    out += mark;
    out += text;
    if (text.empty() || text.back() != '\n') out += "\n\\ No newline at end of file\n";
  };
  for (std::size_t i = from; i < prefix; ++i) line(' ', a[i]);
  for (std::size_t i = prefix; i < a.size() - suffix; ++i) line('-', a[i]);
  for (std::size_t i = prefix; i < b.size() - suffix; ++i) line('+', b[i]);
  for (std::size_t i = a.size() - suffix; i < a_to; ++i) line(' ', a[i]);
  return out;
}

Result<FileEdit> edit_file(const fs::path& path, std::string_view label, const Editor& editor, bool dry_run,
                           TimeMs now) {
  FileEdit result;
  CT_TRY_ASSIGN(result.file, write_target(path));
  const fs::path folder = result.file.has_parent_path() ? result.file.parent_path() : fs::path(".");
  std::optional<FolderLock> lock;
  if (!dry_run) {
    std::error_code ec;
    fs::create_directories(folder, ec);
    if (ec)
      return fail(file_problem("cannot create the folder of " + std::string(label) + ": " + ec.message(),
                               "check the folder's permissions"));
    CT_TRY_ASSIGN(lock, FolderLock::acquire(folder));
  }
  constexpr int kAttempts = 5;
  for (int attempt = 1;; ++attempt) {
    CT_TRY_ASSIGN(Snapshot snapshot, read_snapshot(result.file, label));
    result.existed = snapshot.exists;
    result.before = snapshot.content;
    CT_TRY_ASSIGN(result.edit, editor(snapshot.content));
    if (!result.edit.changed) return result;
    if (snapshot.exists) CT_TRY(may_replace(result.file));
    if (dry_run) return result;

    CT_TRY_ASSIGN(AtomicFile out, AtomicFile::create(result.file, Links::Follow));
    CT_TRY(out.write(result.edit.text));
    // Compare and swap: a writer that does not take the lock may have changed the file since it
    // was read; publishing now would drop its change.
    CT_TRY_ASSIGN(Snapshot current, read_snapshot(result.file, label));
    if (current.exists != snapshot.exists || current.content != snapshot.content) {
      if (attempt < kAttempts) continue;
      return fail(file_problem(std::string(label) + " kept changing while CLEO edited it; it was left as it was",
                               "close the program that keeps writing it (the agent host), then run again")
                      .with_detail("reason", "changing"));
    }
    if (snapshot.exists) {
      CT_TRY_ASSIGN(result.backup, write_backup(result.file, snapshot, now));
    }
    CT_TRY(out.commit(Publish::Replace));
    return result;
  }
}

}  // namespace ct::host_config
