// The subprocess adapter: external programs (git, gh, a test command, an agent CLI, a plug-in
// engine) run the one safe way. posix_spawn with an argv array — never a shell —, the project root
// as working directory, a minimal environment, stdin written and stdout/stderr read together
// (no deadlock whatever the child does), both capped, a time limit (SIGTERM to the child's process
// group, SIGKILL after a grace period) that holds until the child has exited — whatever it did
// with its descriptors —, every child reaped with its group killed, and no descriptor of ours
// inherited.
#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace ct {

struct ProcessSpec {
  std::vector<std::string> argv;       // argv[0] is looked up on the environment's PATH when it has no '/'
  std::filesystem::path cwd;           // empty: the caller's working directory
  std::vector<std::string> env;        // NAME=value, the whole environment (see minimal_environment)
  std::string stdin_data;              // written to the child's stdin, which is then closed
  std::chrono::milliseconds timeout{30'000};
  std::chrono::milliseconds grace{2'000};  // after SIGTERM, before SIGKILL
  std::size_t max_stdout = 4 * 1024 * 1024;
  std::size_t max_stderr = 256 * 1024;
  /// The child shares this process's terminal — stdin, stdout and stderr, in the foreground
  /// process group — and runs until it exits, with no time limit and nothing captured: a program
  /// a person works in (an editor). stdin_data, timeout and the output limits do not apply.
  bool attached = false;
};

struct ProcessResult {
  int exit_code = -1;         // the child's exit status; -1 when a signal ended it
  int signal = 0;             // the signal that ended it (0: it exited)
  std::string out;            // stdout, at most max_stdout bytes
  std::string err;            // stderr, at most max_stderr bytes
  bool out_truncated = false; // more was written and dropped
  bool err_truncated = false;
  bool timed_out = false;     // the time limit ended it
  bool cancelled = false;     // the call was cancelled (core/cancel.h) and it was stopped
  double duration_ms = 0;

  bool ok() const { return exit_code == 0 && !timed_out && !cancelled; }
  /// The last lines of stderr (for error messages), at most `bytes` long.
  std::string err_tail(std::size_t bytes = 600) const;
};

/// The last lines of a program's output for a reply: at most `bytes`, starting at a line, trailing
/// blank lines dropped.
std::string output_tail(std::string_view out, std::size_t bytes = 2000);

/// The environment a child gets by default: PATH, HOME, LANG, LC_ALL, TMPDIR and every CLEO_*
/// variable of this process, plus `pass` (names of further variables to pass on, when set) and
/// `extra` (NAME=value pairs). Nothing else: tokens and secrets of the caller stay out unless named.
std::vector<std::string> minimal_environment(const std::vector<std::string>& pass = {},
                                             const std::vector<std::string>& extra = {});

/// Runs the program to its end (or its time limit, or until the calling thread's work is
/// cancelled: core/cancel.h — then it is stopped as at its time limit, and `cancelled` says so). Failures to start it are errors — the program
/// is missing (E_CAPABILITY_UNAVAILABLE, with the program's name) or cannot be spawned
/// (E_ENGINE_FAILED); a program that runs and fails, times out or dies by a signal is a result:
/// the caller decides what that means.
Result<ProcessResult> run_process(const ProcessSpec& spec);

/// Kills (SIGKILL) the process group of every child run_process is running now: what a server does
/// before it ends at once (SIGINT's grace period ran out), so that no program it started runs on
/// without it. Safe from any thread; a child is in the list only until it is reaped.
void kill_running_children();

/// The full path of `program` on the PATH of `env` (or as given when it holds a '/'), when it is
/// an executable file.
std::optional<std::filesystem::path> find_program(std::string_view program, const std::vector<std::string>& env);

/// The executable `program` installed beside the running one (`ct` next to `ct-serve`), by the
/// absolute path of /proc/self/exe with its links resolved; nullopt when there is none.
std::optional<std::filesystem::path> installed_program(std::string_view program);

/// A failed, timed-out, cancelled or killed run as an error value: E_TIMEOUT when the limit ended
/// it, else E_ENGINE_FAILED naming the exit status or signal (or the cancellation), with the tail
/// of stderr.
Error process_error(const ProcessSpec& spec, const ProcessResult& result, std::string_view what);

}  // namespace ct
