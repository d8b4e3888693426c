// A temporary directory for tests (never $HOME), and JSON literals for expectations.
#pragma once

#include <atomic>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>

#include "core/json_parse.h"

namespace ct::test {

/// A fresh directory under the system temp dir, removed on destruction.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    std::random_device device;
    path_ = std::filesystem::temp_directory_path() /
            ("ct-test-" + std::to_string(device()) + "-" + std::to_string(counter++));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline json::Value parse_json(std::string_view text) {
  auto parsed = json::parse(text);
  if (!parsed) throw std::runtime_error("bad JSON in test: " + std::string(text));
  return *parsed;
}

}  // namespace ct::test
