// What both transcript modes of ct_transcript share: options, the hermetic sandbox (temp dir and
// environment), starting processes, the JSON subset matcher with its placeholders, and the
// failure report helpers. The CLI mode lives in runner.cpp, the MCP mode in mcp.cpp.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <expected>
#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/json.h"

namespace ct::transcript {

namespace fs = std::filesystem;
using json::Value;

/// Exit status of a transcript that does not apply to the requested transport (`--- only`);
/// ctest reports it as skipped (SKIP_RETURN_CODE).
inline constexpr int kSkipped = 77;

enum class Transport { Stdio, Http };
std::string_view to_string(Transport transport);

struct Options {
  std::string ct_path;
  std::chrono::milliseconds timeout{30000};
  std::vector<std::pair<std::string, std::string>> extra_env;
  enum class Keep { OnFailure, Always, Never } keep = Keep::OnFailure;
  bool verbose = false;
  std::optional<Transport> mcp;  // --mcp stdio|http: the files are MCP transcripts
  std::vector<std::string> files;
};

// ---- parsing helpers -----------------------------------------------------------------------

/// Splits a command line the way a POSIX shell splits words, without expanding anything:
/// whitespace separates words; '…' is literal; "…" is literal except \" \\ \$ \` ; a backslash
/// outside quotes makes the next character literal.
std::expected<std::vector<std::string>, std::string> split_command(std::string_view text);

/// "out hello" → "hello"; "|" → ""; the separator is one space after the directive.
std::string_view rest_after(std::string_view line, std::size_t directive_length);

bool valid_env_name(std::string_view name);

// ---- the sandbox ---------------------------------------------------------------------------

/// The environment of the commands a transcript runs, rebuilt from scratch (nothing leaks in).
class Environment {
 public:
  void set(const std::string& name, const std::string& value);
  std::string get(const std::string& name) const;
  std::vector<std::string> entries() const;

 private:
  std::vector<std::pair<std::string, std::string>> vars_;
};

/// A fresh temp dir (with an empty home/ inside) and the hermetic environment that points at it:
/// PATH, HOME, CLEO_TEST_MODE=1, NO_COLOR=1, LC_ALL, the sanitizer options, then --env options.
struct Sandbox {
  fs::path root;
  Environment env;
};
std::expected<Sandbox, std::string> make_sandbox(const Options& options);

/// Keeps or removes the sandbox as the options say; prints the path when it is kept.
void finish_sandbox(const Sandbox& sandbox, const Options& options, bool failed);

// ---- processes -----------------------------------------------------------------------------

struct Outcome {
  std::string start_error;  // non-empty when the program could not be started
  bool timed_out = false;
  int exit_code = -1;  // -1 when killed by a signal
  int signal = 0;
  std::string out;
  std::string err;
};

std::string errno_text(int error);
void set_nonblocking(int fd);
/// Reads what is available; closes and sets `fd` to -1 at end of file.
void drain(int& fd, std::string& into);
void close_fd(int& fd);

/// Searches PATH (from the command's environment) for `name`; a name with a slash is used as is.
std::optional<std::string> find_program(const std::string& name, const std::string& path_variable);

/// Runs a program to completion in its own process group, feeding `input` on stdin.
Outcome run_process(const std::string& program, const std::vector<std::string>& argv,
                    const std::vector<std::string>& environment, const std::string& cwd,
                    const std::string& input, std::chrono::milliseconds timeout);

/// A long-running child (a server) in its own process group.
struct Child {
  pid_t pid = -1;
  int in = -1;   // write end of its stdin, when piped
  int out = -1;  // read end of its stdout, when piped
};

struct ChildStdio {
  bool pipe_stdin = false;   // else /dev/null
  bool pipe_stdout = false;  // else stdout_file
  fs::path stdout_file;
  fs::path stderr_file;
};

/// Starts `program`; the error says why it could not be started (exec failures included).
std::expected<Child, std::string> start_child(const std::string& program, const std::vector<std::string>& argv,
                                              const std::vector<std::string>& environment, const std::string& cwd,
                                              const ChildStdio& stdio);

struct ExitStatus {
  int exit_code = -1;  // -1 when killed by a signal
  int signal = 0;
};
std::string describe(const ExitStatus& status);

/// Waits up to `timeout` for the child to exit (without reaping it, so its process group stays
/// reserved); nullopt when it is still running.
std::optional<ExitStatus> wait_child(pid_t pid, std::chrono::milliseconds timeout);
/// Kills the child's whole process group (stragglers included) and reaps the child.
void kill_child(Child& child);

// ---- checking and reporting ----------------------------------------------------------------

std::string quote(std::string_view text);
/// A JSON value for a message, cut to about 200 bytes.
std::string describe(const Value& value);

/// Subset match with the placeholders "<any>", "<id>", "<time>". On a mismatch, `why` says where
/// and how.
bool json_matches(const Value& actual, const Value& expected, const std::string& path, std::string& why);

/// Shows a stream indented, cut to 40 lines / 3000 bytes.
void print_stream(std::ostream& os, std::string_view label, const std::string& text);

std::string format_seconds(std::chrono::milliseconds duration);

/// The whole file, or an empty string when it cannot be read.
/// A transcript line that carries something: blank lines and `#` comments are dropped, leading
/// blanks and a trailing CR removed. `number` is the 1-based line in the file.
struct SourceLine {
  int number = 0;
  std::string text;
};
struct SourceFile {
  std::vector<SourceLine> lines;
  int line_count = 0;  // every line of the file, blank or not
  /// Every line as written (without its newline; raw[0] is line 1), for blocks taken literally.
  std::vector<std::string> raw;
};
/// nullopt when the file cannot be opened.
std::optional<SourceFile> read_source_lines(const std::string& path);

std::string read_file(const fs::path& path);

}  // namespace ct::transcript
