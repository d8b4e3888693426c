#include "engines/project/person_keys.h"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/atomic_file.h"
#include "core/file_read.h"
#include "core/json.h"
#include "core/json_parse.h"
#include "core/sha256.h"
#include "core/text.h"

namespace ct {
namespace {

constexpr std::string_view kKeyPrefix = "ctpk_";

bool same_digest(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

Error file_error(const std::filesystem::path& file, std::string what) {
  return Error(ErrorCode::FileError, what + ": " + file.string())
      .with_fix("check " + file.string() + " (it should be yours, mode 0600); ct person key list shows what it holds");
}

Result<void> save(const std::filesystem::path& home, const std::vector<PersonKey>& keys) {
  const std::filesystem::path file = person_keys_file(home);
  std::error_code ec;
  std::filesystem::create_directories(file.parent_path(), ec);
  if (ec) return fail(file_error(file.parent_path(), "cannot create the folder"));
  ::chmod(file.parent_path().c_str(), 0700);
  json::Value list = json::Value::array();
  for (const auto& key : keys)
    list.push_back(json::Value(json::Value::Object{{"name", json::Value(key.name)},
                                                  {"sha256", json::Value(key.sha256)},
                                                  {"createdAt", json::Value(format_iso8601(key.created_at))}}));
  json::Value body(json::Value::Object{{"keys", std::move(list)}});
  CT_TRY_ASSIGN(AtomicFile out, AtomicFile::create(file));
  out.set_attributes({0600, static_cast<unsigned>(::geteuid()), static_cast<unsigned>(::getegid())});
  CT_TRY(out.write(body.dump() + "\n"));
  return out.commit();
}

bool valid_name(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') return false;
  return true;
}

}  // namespace

std::filesystem::path person_keys_file(const std::filesystem::path& home) {
  return home / ".config" / "cleo" / "person-keys.json";
}

Result<std::vector<PersonKey>> list_person_keys(const std::filesystem::path& home) {
  const std::filesystem::path file = person_keys_file(home);
  struct stat info {};
  if (::lstat(file.c_str(), &info) != 0) return std::vector<PersonKey>{};
  // Digests are no secret; a file someone else could write is: a key listed there proves nothing.
  if (!S_ISREG(info.st_mode) || info.st_uid != ::geteuid() || (info.st_mode & 022) != 0)
    return fail(file_error(file, "person keys are refused from a file that is not yours or that others may write"));
  CT_TRY_ASSIGN(std::string text, read_regular_file(file, ReadLimit{1 << 20, std::chrono::milliseconds(2000), true}));
  auto parsed = json::parse(text);
  if (!parsed || !parsed->is_object() || !(*parsed)["keys"].is_array()) return fail(file_error(file, "not a list of person keys"));
  std::vector<PersonKey> keys;
  for (const auto& entry : (*parsed)["keys"].as_array()) {
    if (!entry["name"].is_string() || !entry["sha256"].is_string()) return fail(file_error(file, "not a list of person keys"));
    PersonKey key{entry["name"].as_string(), entry["sha256"].as_string(), 0};
    if (entry["createdAt"].is_string()) key.created_at = parse_iso8601(entry["createdAt"].as_string()).value_or(0);
    keys.push_back(std::move(key));
  }
  return keys;
}

Result<std::string> create_person_key(const std::filesystem::path& home, const std::string& name, TimeMs now) {
  if (!valid_name(name))
    return fail(Error(ErrorCode::InvalidInput, "a key's name is 1-64 letters, digits, '-' or '_'")
                    .with_fix("ct person key create --name ci"));
  CT_TRY_ASSIGN(std::vector<PersonKey> keys, list_person_keys(home));
  for (const auto& key : keys)
    if (key.name == name)
      return fail(Error(ErrorCode::AlreadyExists, "a person key named " + name + " exists")
                      .with_fix("ct person key revoke " + name + ", or choose another --name"));
  std::string secret = std::string(kKeyPrefix) + random_hex(32);
  keys.push_back({name, sha256_hex(secret), now});
  CT_TRY(save(home, keys));
  return secret;
}

Result<void> revoke_person_key(const std::filesystem::path& home, const std::string& name) {
  CT_TRY_ASSIGN(std::vector<PersonKey> keys, list_person_keys(home));
  auto before = keys.size();
  std::erase_if(keys, [&](const PersonKey& key) { return key.name == name; });
  if (keys.size() == before)
    return fail(Error(ErrorCode::NotFound, "no person key is named " + name).with_fix("ct person key list"));
  return save(home, keys);
}

Result<std::optional<std::string>> match_person_key(const std::filesystem::path& home, std::string_view key) {
  key = trim(key);
  if (!key.starts_with(kKeyPrefix)) return std::optional<std::string>();
  CT_TRY_ASSIGN(std::vector<PersonKey> keys, list_person_keys(home));
  const std::string digest = sha256_hex(key);
  std::optional<std::string> found;
  for (const auto& listed : keys)
    if (same_digest(listed.sha256, digest)) found = listed.name;
  return found;
}

std::string os_user_name() {
  if (const passwd* entry = ::getpwuid(::geteuid()); entry && entry->pw_name && *entry->pw_name) return entry->pw_name;
  if (const char* user = std::getenv("USER"); user && *user) return user;
  return std::to_string(::geteuid());
}

}  // namespace ct
