#include "engines/rules/file_hashes.h"

#include "core/file_read.h"
#include "engines/project/project.h"

namespace ct {

namespace fs = std::filesystem;

namespace {
bool names_a_file(const std::string& file) {
  return !file.empty() && file.back() != '/' && file.find_first_of("*?[") == std::string::npos;
}
}  // namespace

Result<HashedFile> FileHasher::hash(const fs::path& root, const std::string& file) {
  CT_TRY_ASSIGN(fs::path real, project_file(root, file));
  const FileStamp stamp = file_stamp(real);
  if (stamp.size < 0) return fail(Error(ErrorCode::NotFound, file + " does not exist").with_detail("file", file));
  const std::string key = real.string();
  if (auto found = cache_.find(key); found != cache_.end() && found->second.stamp == stamp) return found->second;
  HashedFile hashed;
  CT_TRY_ASSIGN(hashed.sha256, hash_regular_file(real, kHashLimit, &hashed.stamp));
  ++hashed_;
  if (cache_.size() > 65536) cache_.clear();
  cache_[key] = hashed;
  return hashed;
}

FileHasher& process_hasher() {
  static thread_local FileHasher hasher;
  return hasher;
}

Result<HashedFile> ReadFiles::hash(const fs::path& root, const std::string& file) {
  (void)root;
  const json::Value& read = read_[file];
  if (!read.is_object())
    return fail(ErrorCode::Internal, file + " was not read before the call's transaction (its external step)");
  if (read["sha256"].is_string()) {
    HashedFile out;
    out.sha256 = read["sha256"].as_string();
    out.stamp.size = read["size"].is_int() ? read["size"].as_int() : 0;
    out.stamp.mtime_ns = read["mtimeNs"].is_int() ? read["mtimeNs"].as_int() : 0;
    return out;
  }
  const auto code = parse_error_code(read["code"].string_or_empty());
  return fail(Error(code.value_or(ErrorCode::FileError), read["message"].string_or_empty()).with_detail("file", file));
}

json::Value read_files(const fs::path& root, const std::vector<std::string>& files, FileHashes& hasher, bool wide) {
  json::Value out = json::Value::object();
  for (const auto& file : files) {
    if ((wide ? file.empty() : !names_a_file(file)) || out.contains(file)) continue;
    json::Value row = json::Value::object();
    if (auto hashed = hasher.hash(root, file)) {
      row.set("sha256", hashed->sha256);
      row.set("size", hashed->stamp.size);
      row.set("mtimeNs", hashed->stamp.mtime_ns);
    } else {
      row.set("code", to_string(hashed.error().code));
      row.set("message", hashed.error().message);
    }
    out.set(file, std::move(row));
  }
  return out;
}

}  // namespace ct
