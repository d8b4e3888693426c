#include "support/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>
#include <utility>

extern char** environ;

namespace ct::testing {
namespace {

using Clock = std::chrono::steady_clock;

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

ExitStatus decode(int status) {
  if (WIFEXITED(status)) return {WEXITSTATUS(status), false};
  if (WIFSIGNALED(status)) return {128 + WTERMSIG(status), true};
  return {};
}

}  // namespace

std::expected<ChildProcess, std::string> ChildProcess::start(const std::vector<std::string>& argv,
                                                             const SpawnOptions& options) {
  if (argv.empty()) return std::unexpected("no program to start");
  int in[2] = {-1, -1};
  int out[2] = {-1, -1};
  if ((options.pipe_stdin && ::pipe2(in, O_CLOEXEC) != 0) || (options.pipe_stdout && ::pipe2(out, O_CLOEXEC) != 0)) {
    std::string error = std::string("pipe: ") + std::strerror(errno);
    for (int fd : {in[0], in[1], out[0], out[1]})
      if (fd >= 0) ::close(fd);
    return std::unexpected(error);
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (options.pipe_stdin) posix_spawn_file_actions_adddup2(&actions, in[0], STDIN_FILENO);
  else posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  if (options.pipe_stdout) posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  else posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  if (options.stderr_path.empty()) {
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  } else {
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, options.stderr_path.c_str(),
                                     O_WRONLY | O_CREAT | O_APPEND, 0644);
  }
  if (!options.cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, options.cwd.c_str());
  std::vector<std::string> words = argv;
  std::vector<char*> argv_pointers;
  for (auto& word : words) argv_pointers.push_back(word.data());
  argv_pointers.push_back(nullptr);
  std::vector<std::string> entries = options.env;
  std::vector<char*> env_pointers;
  for (auto& entry : entries) env_pointers.push_back(entry.data());
  env_pointers.push_back(nullptr);

  ChildProcess child;
  int rc = posix_spawn(&child.pid_, words[0].c_str(), &actions, nullptr, argv_pointers.data(), env_pointers.data());
  posix_spawn_file_actions_destroy(&actions);
  if (options.pipe_stdin) ::close(in[0]);
  if (options.pipe_stdout) ::close(out[1]);
  if (rc != 0) {
    if (options.pipe_stdin) ::close(in[1]);
    if (options.pipe_stdout) ::close(out[0]);
    child.pid_ = -1;
    return std::unexpected("cannot start " + argv[0] + ": " + std::strerror(rc));
  }
  child.to_child_ = options.pipe_stdin ? in[1] : -1;
  child.from_child_ = options.pipe_stdout ? out[0] : -1;
  return child;
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept { *this = std::move(other); }

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  if (this == &other) return *this;
  std::swap(pid_, other.pid_);
  std::swap(to_child_, other.to_child_);
  std::swap(from_child_, other.from_child_);
  std::swap(buffer_, other.buffer_);
  std::swap(end_, other.end_);
  std::swap(reap_lock_, other.reap_lock_);
  std::swap(status_, other.status_);
  return *this;
}

ChildProcess::~ChildProcess() {
  close_fd(to_child_);
  close_fd(from_child_);
  // A server sees end of file on its stdin and exits; one that does not is killed.
  if (pid_ > 0 && reap_lock_) stop(0, std::chrono::seconds(5));
}

bool ChildProcess::write_line(std::string_view line) {
  if (to_child_ < 0) return false;
  std::string text(line);
  text += '\n';
  std::size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(to_child_, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

void ChildProcess::close_stdin() { close_fd(to_child_); }

std::optional<std::string> ChildProcess::read_line(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  std::size_t scanned = 0;
  while (true) {
    if (auto newline = buffer_.find('\n', scanned); newline != std::string::npos) {
      std::string line = buffer_.substr(0, newline);
      buffer_.erase(0, newline + 1);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      end_ = ReadEnd::None;
      return line;
    }
    scanned = buffer_.size();
    if (from_child_ < 0) {
      end_ = ReadEnd::EndOfFile;
      return std::nullopt;
    }
    auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (remaining.count() <= 0) {
      end_ = ReadEnd::Timeout;
      return std::nullopt;
    }
    pollfd fd{from_child_, POLLIN, 0};
    int ready = ::poll(&fd, 1, static_cast<int>(remaining.count()));
    if (ready < 0 && errno != EINTR) {
      end_ = ReadEnd::Error;
      return std::nullopt;
    }
    if (ready <= 0) continue;
    char chunk[65536];
    ssize_t n = ::read(from_child_, chunk, sizeof chunk);
    if (n > 0) {
      buffer_.append(chunk, static_cast<std::size_t>(n));
    } else if (n == 0) {
      close_fd(from_child_);
    } else if (errno != EINTR && errno != EAGAIN) {
      end_ = ReadEnd::Error;
      return std::nullopt;
    }
  }
}

std::string ChildProcess::read_all() {
  while (from_child_ >= 0) {
    char chunk[65536];
    ssize_t n = ::read(from_child_, chunk, sizeof chunk);
    if (n > 0) buffer_.append(chunk, static_cast<std::size_t>(n));
    else if (n == 0 || errno != EINTR) close_fd(from_child_);
  }
  end_ = ReadEnd::EndOfFile;
  return std::exchange(buffer_, std::string());
}

void ChildProcess::kill(int signal) {
  if (pid_ <= 0 || !reap_lock_) return;
  std::lock_guard lock(*reap_lock_);
  if (!status_) ::kill(pid_, signal);
}

void ChildProcess::reap_locked(int status) { status_ = decode(status); }

ExitStatus ChildProcess::wait() {
  if (pid_ <= 0 || !reap_lock_) return {};
  {
    std::lock_guard lock(*reap_lock_);
    if (status_) return *status_;
  }
  // Wait for the end without reaping, so that kill() from another thread meanwhile still signals
  // this child and never a process that got its pid after it was reaped.
  siginfo_t info{};
  while (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR) {
  }
  std::lock_guard lock(*reap_lock_);
  if (!status_) {
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    reap_locked(status);
  }
  return *status_;
}

std::optional<ExitStatus> ChildProcess::wait_for(std::chrono::milliseconds timeout) {
  if (pid_ <= 0 || !reap_lock_) return ExitStatus{};
  const auto deadline = Clock::now() + timeout;
  while (true) {
    {
      std::lock_guard lock(*reap_lock_);
      if (status_) return *status_;
      int status = 0;
      pid_t done = ::waitpid(pid_, &status, WNOHANG);
      if (done == pid_) {
        reap_locked(status);
        return *status_;
      }
      if (done < 0 && errno != EINTR) return ExitStatus{};
    }
    if (Clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

ExitStatus ChildProcess::stop(int signal, std::chrono::milliseconds grace) {
  if (signal != 0) kill(signal);
  if (auto status = wait_for(grace)) return *status;
  kill(SIGKILL);
  return wait();
}

std::string describe(const ExitStatus& status) {
  return status.signaled ? "signal " + std::to_string(status.code - 128) : "exit " + std::to_string(status.code);
}

ProcessResult run_process(const std::vector<std::string>& argv, const SpawnOptions& options,
                          std::chrono::milliseconds timeout) {
  SpawnOptions spawn = options;
  spawn.pipe_stdin = false;
  spawn.pipe_stdout = true;
  ProcessResult result;
  auto child = ChildProcess::start(argv, spawn);
  if (!child) {
    result.start_error = child.error();
    return result;
  }
  const auto deadline = Clock::now() + timeout;
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    auto line = child->read_line(std::max(left, std::chrono::milliseconds(1)));
    if (line) {
      result.out += *line;
      result.out += '\n';
      continue;
    }
    if (child->end() == ReadEnd::Timeout) {
      result.timed_out = true;
      child->kill(SIGKILL);
    }
    result.out += child->read_all();
    break;
  }
  result.status = child->wait();
  return result;
}

std::vector<std::string> inherited_environment(const std::vector<std::string>& drop_prefixes) {
  std::vector<std::string> out;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    std::string_view text(*entry);
    bool drop = false;
    for (const auto& prefix : drop_prefixes) drop = drop || text.starts_with(prefix);
    if (!drop) out.emplace_back(text);
  }
  return out;
}

}  // namespace ct::testing
