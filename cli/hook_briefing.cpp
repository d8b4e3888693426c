#include "cli/hook_briefing.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <system_error>

#include "core/atomic_file.h"
#include "core/sha256.h"
#include "core/json_parse.h"

namespace ct::cli {
namespace fs = std::filesystem;

namespace {

constexpr std::size_t kMaxInput = 1024 * 1024;
constexpr std::chrono::hours kKeepClaims{24};

}  // namespace

json::Value read_hook_input(int fd, std::chrono::milliseconds deadline) {
  if (::isatty(fd)) return nullptr;
  const auto until = std::chrono::steady_clock::now() + deadline;
  std::string input;
  char buffer[8192];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    if (left.count() <= 0) return nullptr;
    pollfd ready{.fd = fd, .events = POLLIN, .revents = 0};
    const int polled = ::poll(&ready, 1, static_cast<int>(left.count()));
    if (polled < 0 && errno == EINTR) continue;
    if (polled <= 0) return nullptr;
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n < 0) return nullptr;
    if (n == 0) break;
    input.append(buffer, static_cast<std::size_t>(n));
    if (input.size() > kMaxInput) return nullptr;
  }
  auto parsed = json::parse(input);
  return parsed ? std::move(*parsed) : json::Value(nullptr);
}

bool first_briefing(const fs::path& dir, std::string_view host, std::string_view firing) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  auto lock = FolderLock::acquire(dir);
  if (!lock) return true;
  const auto now = fs::file_time_type::clock::now();
  // A file per firing, named by its hash (a host's session id is its own text): its time is the claim's.
  const fs::path claim = dir / (std::string(host) + "-" + sha256_hex(firing).substr(0, 32));
  if (auto when = fs::last_write_time(claim, ec); !ec && now - when < kFiringWindow) return false;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::error_code old;
    if (auto when = fs::last_write_time(entry.path(), old); !old && now - when > kKeepClaims) fs::remove(entry.path(), old);
  }
  (void)write_file_atomically(claim, std::string(firing) + "\n");  // unwritten: brief all the same
  return true;
}

}  // namespace ct::cli
