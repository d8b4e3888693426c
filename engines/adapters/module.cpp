#include "engines/adapters/module.h"

#include <dlfcn.h>

#include <filesystem>
#include <system_error>

namespace ct {

void* load_module(std::string_view file, std::string& why) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path program = fs::read_symlink("/proc/self/exe", ec);
  if (ec) {
    why = "cannot find this program's directory: " + ec.message();
    return nullptr;
  }
  std::string reasons;
  for (const fs::path& candidate : {program.parent_path() / file, program.parent_path().parent_path() / "lib" / "cleo" / file}) {
    if (!fs::exists(candidate, ec)) continue;
    // RTLD_NOW: a symbol missing from the program fails here, not in the middle of a call.
    if (void* module = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL); module != nullptr) return module;
    const char* error = dlerror();
    reasons += (reasons.empty() ? "" : "; ") + std::string(error != nullptr ? error : candidate.c_str());
  }
  why = reasons.empty() ? std::string(file) + " is not beside " + program.string() + " or in " +
                              (program.parent_path().parent_path() / "lib" / "cleo").string()
                        : reasons;
  return nullptr;
}

}  // namespace ct
