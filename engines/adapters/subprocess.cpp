#include "engines/adapters/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <set>

#include "core/cancel.h"
#include "core/text.h"

extern char** environ;

namespace ct {
namespace {

using Clock = std::chrono::steady_clock;

std::string env_value(const std::vector<std::string>& env, std::string_view name) {
  for (const auto& entry : env)
    if (entry.size() > name.size() && entry.compare(0, name.size(), name) == 0 && entry[name.size()] == '=')
      return entry.substr(name.size() + 1);
  return "";
}

bool executable_file(const std::filesystem::path& path) {
  struct stat st{};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

/// Closes a descriptor once, and remembers that it did.
void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

/// How long what a child started may keep its pipes open once the child has exited.
constexpr std::chrono::milliseconds kLetGo{500};

/// Whether the child has exited, without reaping it: while it is a zombie its pid, and so its
/// process group's id, cannot be given to another process, and signalling the group stays safe.
bool has_exited(pid_t pid) {
  siginfo_t info{};
  while (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) < 0)
    if (errno != EINTR) return true;  // ECHILD: something else in this process reaped it
  return info.si_pid == pid;
}

/// A descriptor (close-on-exec) that becomes readable when the child exits (Linux 5.3+), so that
/// waiting for the child and for its output is one poll(); -1 where the kernel has none.
/// (The system call directly: glibc 2.36's <sys/pidfd.h> declares pidfd_open without C linkage.)
int open_exit_fd(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
  (void)pid;
  return -1;
#endif
}

/// The children run_process is running now (each the leader of its own group), until reaped: a
/// zombie keeps its pid and group id, so kill_running_children() never reaches another process.
std::mutex running_mutex;
std::set<pid_t> running_children;

/// The child's process group, and the child itself in case it left the group. Only called
/// before the child is reaped, so neither id can belong to another process yet.
void signal_child(pid_t pid, int signal) {
  ::kill(-pid, signal);
  ::kill(pid, signal);
}

/// SIGPIPE is blocked in this thread while the child's stdin is written (a child that closed it
/// makes write() fail with EPIPE instead of killing us); a pending one is consumed afterwards.
class SigpipeBlock {
 public:
  SigpipeBlock() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_, &previous_);
  }
  ~SigpipeBlock() {
    sigset_t pending;
    sigpending(&pending);
    if (sigismember(&pending, SIGPIPE) == 1) {
      timespec zero{0, 0};
      sigtimedwait(&pipe_, nullptr, &zero);
    }
    pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
  }
  SigpipeBlock(const SigpipeBlock&) = delete;
  SigpipeBlock& operator=(const SigpipeBlock&) = delete;

 private:
  sigset_t pipe_{};
  sigset_t previous_{};
};

}  // namespace

std::string ProcessResult::err_tail(std::size_t bytes) const {
  std::string_view text = err;
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  if (text.size() > bytes) {
    text.remove_prefix(text.size() - bytes);
    if (auto newline = text.find('\n'); newline != std::string_view::npos && newline + 1 < text.size())
      text.remove_prefix(newline + 1);
  }
  return std::string(text);
}

std::vector<std::string> minimal_environment(const std::vector<std::string>& pass, const std::vector<std::string>& extra) {
  std::vector<std::string> env;
  auto keep = [&](std::string_view name) {
    if (const char* value = std::getenv(std::string(name).c_str())) env.push_back(std::string(name) + "=" + value);
  };
  for (std::string_view name : {"PATH", "HOME", "LANG", "LC_ALL", "TMPDIR"}) keep(name);
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry)
    if (std::string_view(*entry).starts_with("CLEO_")) env.emplace_back(*entry);
  for (const auto& name : pass) {
    bool already = false;
    for (const auto& entry : env) already = already || entry.starts_with(name + "=");
    if (!already) keep(name);
  }
  env.insert(env.end(), extra.begin(), extra.end());
  if (env_value(env, "PATH").empty()) env.emplace_back("PATH=/usr/local/bin:/usr/bin:/bin");
  return env;
}

std::optional<std::filesystem::path> find_program(std::string_view program, const std::vector<std::string>& env) {
  if (program.empty()) return std::nullopt;
  if (program.find('/') != std::string_view::npos) {
    std::filesystem::path path(program);
    return executable_file(path) ? std::optional(path) : std::nullopt;
  }
  std::string path = env_value(env, "PATH");
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t colon = path.find(':', start);
    std::string dir = path.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    if (dir.empty()) dir = ".";
    std::filesystem::path candidate = std::filesystem::path(dir) / std::string(program);
    if (executable_file(candidate)) return candidate;
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  return std::nullopt;
}

std::optional<std::filesystem::path> installed_program(std::string_view program) {
  std::error_code ec;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec || program.empty() || program.find('/') != std::string_view::npos) return std::nullopt;
  std::filesystem::path candidate = self.parent_path() / std::string(program);
  return executable_file(candidate) ? std::optional(candidate) : std::nullopt;
}

namespace {

/// ProcessSpec::attached: the child gets our terminal and we wait for it.
Result<ProcessResult> run_attached(const ProcessSpec& spec, const std::filesystem::path& program) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);
  if (!spec.cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, spec.cwd.c_str());
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t all;
  sigfillset(&all);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  std::vector<char*> argv;
  for (const auto& arg : spec.argv) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (const auto& entry : spec.env) envp.push_back(const_cast<char*>(entry.c_str()));
  envp.push_back(nullptr);
  const auto started = Clock::now();
  pid_t pid = -1;
  int spawned = posix_spawn(&pid, program.c_str(), &actions, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (spawned != 0)
    return fail(Error(ErrorCode::EngineFailed, "cannot start " + spec.argv.front() + ": " + std::strerror(spawned))
                    .with_fix("check that " + program.string() + " is executable"));
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return fail(ErrorCode::EngineFailed, std::string("waitpid: ") + std::strerror(errno));
  }
  ProcessResult result;
  result.duration_ms = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  return result;
}

}  // namespace

Result<ProcessResult> run_process(const ProcessSpec& spec) {
  if (spec.argv.empty() || spec.argv.front().empty()) return fail(ErrorCode::Internal, "run_process: no program");
  auto program = find_program(spec.argv.front(), spec.env);
  if (!program)
    return fail(Error(ErrorCode::CapabilityUnavailable, "'" + spec.argv.front() + "' is not installed (not found on PATH)")
                    .with_fix("install " + spec.argv.front() + " or put it on PATH, then retry")
                    .with_detail("program", spec.argv.front()));
  if (spec.attached) return run_attached(spec, *program);

  int in[2] = {-1, -1};
  int out[2] = {-1, -1};
  int err[2] = {-1, -1};
  auto close_all = [&] {
    for (int* pair : {in, out, err}) {
      close_fd(pair[0]);
      close_fd(pair[1]);
    }
  };
  if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) {
    close_all();
    return fail(ErrorCode::EngineFailed, std::string("cannot create pipes: ") + std::strerror(errno));
  }

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err[1], 2);
  // Nothing of ours beyond 0–2 reaches the child, whatever was opened without O_CLOEXEC.
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);
  if (!spec.cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, spec.cwd.c_str());
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // Its own process group (a time limit ends the child and whatever it started), default signal
  // dispositions and an empty mask (this process may ignore SIGPIPE; the child must not inherit that).
  sigset_t all;
  sigfillset(&all);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);

  std::vector<char*> argv;
  for (const auto& arg : spec.argv) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (const auto& entry : spec.env) envp.push_back(const_cast<char*>(entry.c_str()));
  envp.push_back(nullptr);

  const auto started = Clock::now();
  pid_t pid = -1;
  int spawned = posix_spawn(&pid, program->c_str(), &actions, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  close_fd(in[0]);
  close_fd(out[1]);
  close_fd(err[1]);
  if (spawned != 0) {
    close_all();
    return fail(Error(ErrorCode::EngineFailed, "cannot start " + spec.argv.front() + ": " + std::strerror(spawned))
                    .with_fix("check that " + program->string() + " is executable and that " + spec.cwd.string() +
                              " exists"));
  }
  for (int fd : {in[1], out[0], err[0]}) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  {
    std::lock_guard lock(running_mutex);
    running_children.insert(pid);
  }

  ProcessResult result;
  SigpipeBlock block;
  std::size_t written = 0;
  if (spec.stdin_data.empty()) close_fd(in[1]);
  // One loop until the child has exited, whatever it did with its descriptors: the pipes are
  // read while they are open, the deadline holds until the child is gone (SIGTERM to its group,
  // SIGKILL after the grace period), and the child is reaped only after its group was killed.
  int exit_fd = open_exit_fd(pid);  // readable once the child has exited; -1: look every 10 ms
  auto deadline = started + spec.timeout;  // the next step of stopping it
  bool terminated = false;                 // SIGTERM sent
  bool exited = false;                     // the child has exited (a zombie: its pid and group id stay ours)
  Clock::time_point let_go{};              // by then, what it left behind must have let go of the pipes
  char buffer[65536];
  for (;;) {
    if (!exited && has_exited(pid)) {
      exited = true;
      close_fd(exit_fd);
      let_go = Clock::now() + kLetGo;
    }
    if (exited && out[0] < 0 && err[0] < 0) break;
    const auto now = Clock::now();
    if (exited && now >= let_go) break;  // something it started still holds the pipes: killed below
    if (!exited && !terminated && cancel_requested()) {
      // Its caller gave up on it (an MCP task cancelled): stopped as at its time limit.
      result.cancelled = true;
      terminated = true;
      signal_child(pid, SIGTERM);
      deadline = now + spec.grace;
      continue;
    }
    if (!exited && now >= deadline) {
      if (!terminated) {
        result.timed_out = true;
        terminated = true;
        signal_child(pid, SIGTERM);
        deadline = now + spec.grace;
      } else {
        signal_child(pid, SIGKILL);  // again each second until the kernel has ended it
        deadline = now + std::chrono::seconds(1);
      }
      continue;
    }
    pollfd fds[4];
    nfds_t count = 0;
    for (int fd : {out[0], err[0]})
      if (fd >= 0) fds[count++] = {fd, POLLIN, 0};
    if (in[1] >= 0) fds[count++] = {in[1], POLLOUT, 0};
    if (exit_fd >= 0) fds[count++] = {exit_fd, POLLIN, 0};
    const auto until = exited ? let_go : deadline;
    long long wait = std::chrono::duration_cast<std::chrono::milliseconds>(until - now).count() + 1;
    if (!exited && exit_fd < 0) wait = std::min(wait, 10LL);
    // At most 100 ms between looks at the cancel flag.
    int ready = ::poll(fds, count, static_cast<int>(std::min(wait, 100LL)));
    if (ready < 0) {
      if (errno == EINTR) continue;
      // Cannot wait on the pipes any more: stop reading them, keep the deadline.
      close_fd(out[0]);
      close_fd(err[0]);
      close_fd(in[1]);
      continue;
    }
    for (nfds_t i = 0; i < count; ++i) {
      if (fds[i].revents == 0 || fds[i].fd == exit_fd) continue;  // the loop's head looks at the child
      if (fds[i].fd == in[1]) {
        ssize_t n = ::write(in[1], spec.stdin_data.data() + written, spec.stdin_data.size() - written);
        if (n > 0) written += static_cast<std::size_t>(n);
        if ((n < 0 && errno != EAGAIN && errno != EINTR) || written == spec.stdin_data.size() ||
            (fds[i].revents & (POLLERR | POLLHUP)))
          close_fd(in[1]);  // done, or the child closed its stdin early
        continue;
      }
      const bool is_out = fds[i].fd == out[0];
      ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
      if (n > 0) {
        std::string& sink = is_out ? result.out : result.err;
        const std::size_t cap = is_out ? spec.max_stdout : spec.max_stderr;
        const std::size_t room = sink.size() < cap ? cap - sink.size() : 0;
        sink.append(buffer, std::min(room, static_cast<std::size_t>(n)));
        if (static_cast<std::size_t>(n) > room) (is_out ? result.out_truncated : result.err_truncated) = true;
      } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
        close_fd(is_out ? out[0] : err[0]);
      }
    }
  }
  close_all();
  close_fd(exit_fd);
  // Whatever it left behind in its group goes too — before the child is reaped, while its zombie
  // keeps the group's id from being reused. Then reaping cannot block: it has exited.
  ::kill(-pid, SIGKILL);
  {
    std::lock_guard lock(running_mutex);
    running_children.erase(pid);
  }
  int status = 0;
  pid_t waited = -1;
  while ((waited = ::waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
  }
  result.duration_ms = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
  if (waited != pid) {
    result.exit_code = -1;  // reaped by someone else in this process: its status is unknown
  } else if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
  }
  return result;
}

void kill_running_children() {
  std::lock_guard lock(running_mutex);
  for (pid_t pid : running_children) signal_child(pid, SIGKILL);
}

Error process_error(const ProcessSpec& spec, const ProcessResult& result, std::string_view what) {
  std::string command = spec.argv.empty() ? std::string("the program") : spec.argv.front();
  // What the program said reaches the caller shown, never obeyed: an escape sequence or a
  // bidirectional override in it is neutralised, and bytes that are not UTF-8 cannot break the reply.
  std::string tail = terminal_safe(result.err_tail());
  if (result.timed_out) {
    return Error(ErrorCode::Timeout, std::string(what) + ": " + command + " did not finish within " +
                                         std::to_string(spec.timeout.count()) + " ms and was stopped")
        .with_fix("retry; if it keeps timing out, look at what " + command + " waits for")
        .with_detail("stderr", tail)
        .with_detail("durationMs", static_cast<std::int64_t>(result.duration_ms));
  }
  std::string how = result.cancelled    ? "was stopped: the call was cancelled"
                    : result.signal != 0 ? "was killed by signal " + std::to_string(result.signal)
                                         : "exited with status " + std::to_string(result.exit_code);
  Error error(ErrorCode::EngineFailed, std::string(what) + ": " + command + " " + how +
                                           (tail.empty() ? "" : ": " + tail.substr(tail.rfind('\n') == std::string::npos
                                                                                       ? 0
                                                                                       : tail.rfind('\n') + 1)));
  error.fix = "see error.details.stderr for what " + command + " said";
  error.details.set("stderr", tail);
  if (result.signal != 0) error.details.set("signal", result.signal);
  else error.details.set("exitCode", result.exit_code);
  return error;
}

std::string output_tail(std::string_view out, std::size_t bytes) {
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.remove_suffix(1);
  if (out.size() <= bytes) return std::string(out);
  out.remove_prefix(out.size() - bytes);
  if (auto newline = out.find('\n'); newline != std::string_view::npos) out.remove_prefix(newline + 1);
  return std::string(out);
}

}  // namespace ct
