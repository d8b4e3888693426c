// A child process for tests and benchmarks: started with posix_spawn (argv only, no shell) in an
// environment the caller builds, its stdin and stdout on pipes, written to and read from line by
// line with a deadline. Shared by tests/multiproc, tests/fault and bench/; product code never
// includes it.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <expected>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ct::testing {

struct SpawnOptions {
  bool pipe_stdin = false;        // else stdin is /dev/null
  bool pipe_stdout = true;        // else stdout is /dev/null
  std::string stderr_path;        // stderr is appended there; "" = /dev/null
  std::vector<std::string> env;   // the child's whole environment, "NAME=value" entries
  std::string cwd;                // the child's working directory; "" = this process's
};

/// Why read_line() returned no line.
enum class ReadEnd { None, EndOfFile, Timeout, Error };

/// Exit code of a child that ended normally, or 128 + signal number (the shell's convention).
struct ExitStatus {
  int code = -1;
  bool signaled = false;
};

class ChildProcess {
 public:
  /// Starts argv[0] (a path; PATH is not searched). The error says why it could not start.
  static std::expected<ChildProcess, std::string> start(const std::vector<std::string>& argv,
                                                        const SpawnOptions& options);

  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  /// Closes the pipes and reaps the child; one still running 5 s later is killed with SIGKILL.
  ~ChildProcess();

  pid_t pid() const { return pid_; }

  /// Writes `line` and a newline to the child's stdin; false when its stdin is gone.
  bool write_line(std::string_view line);
  /// Closes the child's stdin (it sees end of file).
  void close_stdin();

  /// The next line of stdout without its newline (and a trailing CR); nullopt at end of file,
  /// after `timeout`, or on a read error — end() says which. An unfinished last line is not
  /// returned; unfinished() shows it.
  std::optional<std::string> read_line(std::chrono::milliseconds timeout);
  ReadEnd end() const { return end_; }
  const std::string& unfinished() const { return buffer_; }
  /// Everything left on stdout up to end of file (the buffered rest included).
  std::string read_all();

  /// Sends `signal` unless the child has been reaped already (so a recycled pid is never hit).
  /// Safe to call from another thread while one thread waits in wait().
  void kill(int signal);
  /// Waits for the child to end and reaps it (once; later calls return the same status).
  ExitStatus wait();
  /// Waits at most `timeout`; nullopt when the child is still running.
  std::optional<ExitStatus> wait_for(std::chrono::milliseconds timeout);
  /// Ends the child for good: `signal` (0: none), up to `grace` to exit, then SIGKILL. Its status.
  ExitStatus stop(int signal, std::chrono::milliseconds grace);

 private:
  ChildProcess() = default;
  void reap_locked(int status);

  pid_t pid_ = -1;
  int to_child_ = -1;
  int from_child_ = -1;
  std::string buffer_;
  ReadEnd end_ = ReadEnd::None;
  // Guards reaping against kill(): a pid may be signalled only while it is not yet reaped.
  std::unique_ptr<std::mutex> reap_lock_ = std::make_unique<std::mutex>();
  std::optional<ExitStatus> status_;
};

/// "exit 3", "signal 9".
std::string describe(const ExitStatus& status);

/// What run_process() saw.
struct ProcessResult {
  ExitStatus status;
  bool timed_out = false;  // killed with SIGKILL after the timeout
  std::string out;
  std::string start_error;  // non-empty when the program could not be started
};

/// Runs a program to completion with stdin on /dev/null, collecting its stdout.
ProcessResult run_process(const std::vector<std::string>& argv, const SpawnOptions& options,
                          std::chrono::milliseconds timeout);

/// The current environment without the variables whose names start with one of `drop_prefixes`.
std::vector<std::string> inherited_environment(const std::vector<std::string>& drop_prefixes);

}  // namespace ct::testing
