// Test helper: sets or unsets an environment variable for one scope and restores it afterwards.
#pragma once

#include <cstdlib>
#include <optional>
#include <string>

namespace ct::testing {

class EnvGuard {
 public:
  /// Sets `name` to `value`, or unsets it when `value` is empty (std::nullopt).
  EnvGuard(std::string name, std::optional<std::string> value) : name_(std::move(name)) {
    if (const char* old = std::getenv(name_.c_str())) saved_ = old;
    if (value)
      ::setenv(name_.c_str(), value->c_str(), 1);
    else
      ::unsetenv(name_.c_str());
  }
  ~EnvGuard() {
    if (saved_)
      ::setenv(name_.c_str(), saved_->c_str(), 1);
    else
      ::unsetenv(name_.c_str());
  }
  EnvGuard(const EnvGuard&) = delete;
  EnvGuard& operator=(const EnvGuard&) = delete;

 private:
  std::string name_;
  std::optional<std::string> saved_;
};

}  // namespace ct::testing
