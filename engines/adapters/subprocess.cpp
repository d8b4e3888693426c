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

/// The words of an argv or environment as the C array posix_spawn takes (null-terminated).
std::vector<char*> c_strings(const std::vector<std::string>& words) {
  std::vector<char*> out;
  for (const auto& word : words) out.push_back(const_cast<char*>(word.c_str()));
  out.push_back(nullptr);
  return out;
}

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
  std::vector<char*> argv = c_strings(spec.argv);
  std::vector<char*> envp = c_strings(spec.env);
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

/// The three pipes between this process and a child ([0] the read end, [1] the write end).
struct Pipes {
  int in[2] = {-1, -1};
  int out[2] = {-1, -1};
  int err[2] = {-1, -1};

  void close_all() {
    for (int* pair : {in, out, err}) {
      close_fd(pair[0]);
      close_fd(pair[1]);
    }
  }
};

Result<void> open_pipes(Pipes& pipes) {
  if (::pipe2(pipes.in, O_CLOEXEC) != 0 || ::pipe2(pipes.out, O_CLOEXEC) != 0 || ::pipe2(pipes.err, O_CLOEXEC) != 0) {
    pipes.close_all();
    return fail(ErrorCode::EngineFailed, std::string("cannot create pipes: ") + std::strerror(errno));
  }
  return {};
}

/// Starts the child with the pipes as its 0–2, in its own process group (a time limit ends the
/// child and whatever it started), with default signal dispositions and an empty mask (this
/// process may ignore SIGPIPE; the child must not inherit that). The child's ends are closed here,
/// ours made non-blocking, and the child counted among the running ones.
Result<pid_t> spawn(const ProcessSpec& spec, const std::filesystem::path& program, Pipes& pipes) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipes.in[0], 0);
  posix_spawn_file_actions_adddup2(&actions, pipes.out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, pipes.err[1], 2);
  // Nothing of ours beyond 0–2 reaches the child, whatever was opened without O_CLOEXEC.
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);
  if (!spec.cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, spec.cwd.c_str());
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t all;
  sigfillset(&all);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  std::vector<char*> argv = c_strings(spec.argv);
  std::vector<char*> envp = c_strings(spec.env);
  pid_t pid = -1;
  int spawned = posix_spawn(&pid, program.c_str(), &actions, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  close_fd(pipes.in[0]);
  close_fd(pipes.out[1]);
  close_fd(pipes.err[1]);
  if (spawned != 0) {
    pipes.close_all();
    return fail(Error(ErrorCode::EngineFailed, "cannot start " + spec.argv.front() + ": " + std::strerror(spawned))
                    .with_fix("check that " + program.string() + " is executable and that " + spec.cwd.string() +
                              " exists"));
  }
  for (int fd : {pipes.in[1], pipes.out[0], pipes.err[0]}) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  std::lock_guard lock(running_mutex);
  running_children.insert(pid);
  return pid;
}

/// One loop until the child has exited, whatever it did with its descriptors: the pipes are read
/// (and stdin written) while they are open, the deadline holds until the child is gone (SIGTERM to
/// its group, SIGKILL after the grace period; a cancel stops it the same way), and the loop ends
/// when the child has exited and its pipes are closed — or, when something it started still holds
/// them, kLetGo after it exited.
class Watch {
 public:
  Watch(pid_t pid, const ProcessSpec& spec, Pipes& pipes, Clock::time_point started, ProcessResult& result)
      : pid_(pid), spec_(spec), pipes_(pipes), result_(result),
        exit_fd_(open_exit_fd(pid)),  // readable once the child has exited; -1: look every 10 ms
        deadline_(started + spec.timeout) {
    if (spec_.stdin_data.empty()) close_fd(pipes_.in[1]);
  }
  ~Watch() { close_fd(exit_fd_); }
  Watch(const Watch&) = delete;
  Watch& operator=(const Watch&) = delete;

  void run() {
    for (;;) {
      if (!exited_ && has_exited(pid_)) {
        exited_ = true;
        close_fd(exit_fd_);
        let_go_ = Clock::now() + kLetGo;
      }
      if (exited_ && pipes_.out[0] < 0 && pipes_.err[0] < 0) break;
      const auto now = Clock::now();
      if (exited_ && now >= let_go_) break;  // something it started still holds the pipes: killed after
      if (stop_when_due(now)) continue;
      transfer(now);
    }
  }

 private:
  /// A cancel (its caller gave up on it: an MCP task cancelled) or the deadline: the next signal,
  /// and the next deadline. True when one was sent.
  bool stop_when_due(Clock::time_point now) {
    if (exited_) return false;
    if (!terminated_ && cancel_requested()) {
      result_.cancelled = true;
      terminated_ = true;
      signal_child(pid_, SIGTERM);
      deadline_ = now + spec_.grace;
      return true;
    }
    if (now < deadline_) return false;
    if (!terminated_) {
      result_.timed_out = true;
      terminated_ = true;
      signal_child(pid_, SIGTERM);
      deadline_ = now + spec_.grace;
    } else {
      signal_child(pid_, SIGKILL);  // again each second until the kernel has ended it
      deadline_ = now + std::chrono::seconds(1);
    }
    return true;
  }

  /// Waits for a pipe (or the child's exit) at most until the next deadline, and 100 ms between
  /// looks at the cancel flag; then moves what it can.
  void transfer(Clock::time_point now) {
    pollfd fds[4];
    nfds_t count = 0;
    for (int fd : {pipes_.out[0], pipes_.err[0]})
      if (fd >= 0) fds[count++] = {fd, POLLIN, 0};
    if (pipes_.in[1] >= 0) fds[count++] = {pipes_.in[1], POLLOUT, 0};
    if (exit_fd_ >= 0) fds[count++] = {exit_fd_, POLLIN, 0};
    const auto until = exited_ ? let_go_ : deadline_;
    long long wait = std::chrono::duration_cast<std::chrono::milliseconds>(until - now).count() + 1;
    if (!exited_ && exit_fd_ < 0) wait = std::min(wait, 10LL);
    int ready = ::poll(fds, count, static_cast<int>(std::min(wait, 100LL)));
    if (ready < 0) {
      if (errno == EINTR) return;
      // Cannot wait on the pipes any more: stop reading them, keep the deadline.
      close_fd(pipes_.out[0]);
      close_fd(pipes_.err[0]);
      close_fd(pipes_.in[1]);
      return;
    }
    for (nfds_t i = 0; i < count; ++i) {
      if (fds[i].revents == 0 || fds[i].fd == exit_fd_) continue;  // the loop's head looks at the child
      if (fds[i].fd == pipes_.in[1]) {
        write_stdin(fds[i].revents);
      } else {
        read_output(fds[i].fd);
      }
    }
  }

  void write_stdin(short revents) {
    ssize_t n = ::write(pipes_.in[1], spec_.stdin_data.data() + written_, spec_.stdin_data.size() - written_);
    if (n > 0) written_ += static_cast<std::size_t>(n);
    if ((n < 0 && errno != EAGAIN && errno != EINTR) || written_ == spec_.stdin_data.size() ||
        (revents & (POLLERR | POLLHUP)))
      close_fd(pipes_.in[1]);  // done, or the child closed its stdin early
  }

  /// What the child wrote, up to the spec's cap (the rest is dropped and said).
  void read_output(int fd) {
    const bool is_out = fd == pipes_.out[0];
    ssize_t n = ::read(fd, buffer_, sizeof buffer_);
    if (n > 0) {
      std::string& sink = is_out ? result_.out : result_.err;
      const std::size_t cap = is_out ? spec_.max_stdout : spec_.max_stderr;
      const std::size_t room = sink.size() < cap ? cap - sink.size() : 0;
      sink.append(buffer_, std::min(room, static_cast<std::size_t>(n)));
      if (static_cast<std::size_t>(n) > room) (is_out ? result_.out_truncated : result_.err_truncated) = true;
    } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
      close_fd(is_out ? pipes_.out[0] : pipes_.err[0]);
    }
  }

  pid_t pid_;
  const ProcessSpec& spec_;
  Pipes& pipes_;
  ProcessResult& result_;
  SigpipeBlock block_;
  int exit_fd_;
  Clock::time_point deadline_;   // the next step of stopping it
  bool terminated_ = false;      // SIGTERM sent
  bool exited_ = false;          // the child has exited (a zombie: its pid and group id stay ours)
  Clock::time_point let_go_{};   // by then, what it left behind must have let go of the pipes
  std::size_t written_ = 0;      // of stdin_data
  char buffer_[65536];
};

/// Whatever the child left behind in its group goes too — before the child is reaped, while its
/// zombie keeps the group's id from being reused. Then reaping cannot block: it has exited.
void reap(pid_t pid, Clock::time_point started, ProcessResult& result) {
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
  Pipes pipes;
  CT_TRY(open_pipes(pipes));
  const auto started = Clock::now();
  CT_TRY_ASSIGN(pid_t pid, spawn(spec, *program, pipes));
  ProcessResult result;
  {
    Watch watch(pid, spec, pipes, started, result);
    watch.run();
  }
  pipes.close_all();
  reap(pid, started, result);
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
