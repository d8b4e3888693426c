// A hermetic place for tests that run the real `ct`: a fresh directory under $TMPDIR (or /tmp)
// with an empty home/ inside, and the environment a ct child gets there (never the caller's
// $HOME or CLEO_* variables). Removed at the end unless keep() was called.
#pragma once

#include <expected>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ct::testing {

class Sandbox {
 public:
  /// mkdtemp of "<tmp>/<prefix>-XXXXXX".
  static std::expected<Sandbox, std::string> create(std::string_view prefix);

  Sandbox(Sandbox&& other) noexcept;
  Sandbox& operator=(Sandbox&& other) = delete;
  Sandbox(const Sandbox&) = delete;
  Sandbox& operator=(const Sandbox&) = delete;
  ~Sandbox();

  const std::filesystem::path& root() const { return root_; }
  /// PATH, HOME=<root>/home, LC_ALL=C.UTF-8, NO_COLOR=1, the sanitizer options of this process,
  /// CLEO_ROOT=<project>, and CT_PERSON_KEY (person_key_fixture.h: `ct` runs as a person's script;
  /// add CLAUDECODE=1 or another host's marker for an agent with a shell).
  std::vector<std::string> env_for(const std::filesystem::path& project) const;
  /// Keep the directory when the sandbox ends (to look at a failure).
  void keep() { keep_ = true; }

 private:
  explicit Sandbox(std::filesystem::path root) : root_(std::move(root)) {}

  std::filesystem::path root_;
  bool keep_ = false;
};

/// For main(): Sandbox::create(prefix), or nullopt after saying on stderr why it failed.
std::optional<Sandbox> sandbox_or_complain(std::string_view prefix);

}  // namespace ct::testing
