#include "support/sandbox.h"

#include "support/person_key_fixture.h"

#include <stdlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <utility>

namespace ct::testing {

namespace fs = std::filesystem;

std::expected<Sandbox, std::string> Sandbox::create(std::string_view prefix) {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/" + std::string(prefix) + "-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) return std::unexpected("mkdtemp " + pattern + ": " + std::strerror(errno));
  std::error_code ec;
  fs::create_directories(fs::path(pattern) / "home" / ".config" / "cleo", ec);
  if (ec) return std::unexpected("cannot create " + pattern + "/home: " + ec.message());
  // The person key the sandbox's commands are given (person_key_fixture.h), listed in its home.
  const fs::path keys = fs::path(pattern) / "home" / ".config" / "cleo" / "person-keys.json";
  std::ofstream(keys) << kTestPersonKeysJson << "\n";
  fs::permissions(keys, fs::perms::owner_read | fs::perms::owner_write, fs::perm_options::replace, ec);
  return Sandbox(fs::path(pattern));
}

Sandbox::Sandbox(Sandbox&& other) noexcept
    : root_(std::exchange(other.root_, fs::path())), keep_(other.keep_) {}

Sandbox::~Sandbox() {
  if (root_.empty() || keep_) return;
  std::error_code ec;
  fs::remove_all(root_, ec);
}

std::vector<std::string> Sandbox::env_for(const fs::path& project) const {
  const char* path = std::getenv("PATH");
  std::vector<std::string> env{"PATH=" + std::string(path ? path : "/usr/bin:/bin"),
                               "HOME=" + (root_ / "home").string(), "LC_ALL=C.UTF-8", "NO_COLOR=1",
                               "CLEO_ROOT=" + project.string(), "CT_PERSON_KEY=" + std::string(kTestPersonKey)};
  for (const char* name : {"ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"})
    if (const char* value = std::getenv(name)) env.push_back(std::string(name) + "=" + value);
  return env;
}

std::optional<Sandbox> sandbox_or_complain(std::string_view prefix) {
  auto sandbox = Sandbox::create(prefix);
  if (sandbox) return std::optional<Sandbox>(std::move(*sandbox));
  std::fprintf(stderr, "%s\n", sandbox.error().c_str());
  return std::nullopt;
}

}  // namespace ct::testing
