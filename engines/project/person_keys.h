// Person keys: how a person's scripts and CI prove they act for a person (issue 52).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/error.h"

namespace ct {

/// A key a person made at their terminal (`ct person key create`). Only its SHA-256 is kept, in
/// the person's own file outside every project (~/.config/cleo/person-keys.json, mode 0600); the
/// key itself is printed once and kept where the person chooses (a CI secret, a 0600 file).
struct PersonKey {
  std::string name;
  std::string sha256;  // of the whole key text
  TimeMs created_at = 0;
};

/// Where a home directory's person keys are listed.
std::filesystem::path person_keys_file(const std::filesystem::path& home);

/// The keys listed there (none when the file is missing). A file that is not the person's own, or
/// that group or others may write, is refused: a key listed in it could have been added by someone
/// else.
Result<std::vector<PersonKey>> list_person_keys(const std::filesystem::path& home);

/// A new key named `name` (letters, digits, '-', '_'; unique): listed by its digest, returned whole
/// (never stored). E_ALREADY_EXISTS for a name in use.
Result<std::string> create_person_key(const std::filesystem::path& home, const std::string& name, TimeMs now);

/// Removes the key named `name`; E_NOT_FOUND when none is.
Result<void> revoke_person_key(const std::filesystem::path& home, const std::string& name);

/// The name of the listed key `key` is, or none. Compared by digest in constant time.
Result<std::optional<std::string>> match_person_key(const std::filesystem::path& home, std::string_view key);

/// The user this process runs as (for a person's principal id): the password database's name,
/// else $USER, else the numeric uid.
std::string os_user_name();

}  // namespace ct
