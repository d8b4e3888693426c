// Helpers of the providers tests (providers_test.cpp, providers_files_test.cpp): a host's file read
// and written whole, and the backups providers.install keeps beside it.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace ct::test {

inline std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

inline void spit(const std::filesystem::path& path, std::string_view text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary);
  out << text;
}

/// The backups of `file` (`<name>.bak-…`) in its folder.
inline std::vector<std::filesystem::path> backups_of(const std::filesystem::path& file) {
  std::vector<std::filesystem::path> out;
  for (const auto& entry : std::filesystem::directory_iterator(file.parent_path()))
    if (entry.path().filename().string().starts_with(file.filename().string() + ".bak-")) out.push_back(entry.path());
  return out;
}

}  // namespace ct::test
