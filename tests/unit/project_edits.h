// What unit tests do to a test::Project besides calling operations as an agent: write a file into
// it, and set a configuration key as a person does (people-only keys included).
#pragma once

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "unit/test_support.h"

namespace ct::test {

/// Writes `text` to `file`, making its folders; an existing file is replaced.
inline void write_file(const std::filesystem::path& file, std::string_view text) {
  std::filesystem::create_directories(file.parent_path());
  std::ofstream(file, std::ios::trunc) << text;
}

/// system.config.set {key, value} as a person, `value_json` the value as JSON; fails the test
/// when it is refused.
inline void set_config(Project& p, std::string_view key, std::string_view value_json) {
  Envelope set = p.mutate_as_person("system", "config.set",
                                    R"({"key":")" + std::string(key) + R"(","value":)" + std::string(value_json) + "}");
  INFO(to_json(set, McpAdvice(registry())));
  REQUIRE(set.success);
}

}  // namespace ct::test
