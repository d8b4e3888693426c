// ct_transcript: replays a CLI transcript (tests/cli/*.test) command by command in a fresh,
// hermetic temporary directory and checks each command's exit code, stdout and stderr.
// The file format is described in tests/transcript/README.md.
//
// Commands run without a shell: the line is split shell-style into argv and started with
// fork + execve, so quoting in a transcript means exactly what it says and nothing expands.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <expected>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "core/clock.h"
#include "core/json.h"
#include "core/json_parse.h"
#include "core/text.h"

namespace {

namespace fs = std::filesystem;
using ct::json::Value;

// ---- the transcript model ------------------------------------------------------------------

enum class ExpectKind { Exit, Json, OutContains, OutLacks, ErrContains, ErrLacks, OutExact };

struct Expectation {
  ExpectKind kind = ExpectKind::Exit;
  int line = 0;
  std::string text;  // substring, or the exact stdout (lines joined with \n)
  Value json;
  int exit_code = 0;
};

enum class StepKind { Run, ChangeDir, SetEnv };

struct Step {
  StepKind kind = StepKind::Run;
  int line = 0;
  std::string source;  // the command as written, after "$ "
  std::vector<std::string> argv;
  std::optional<std::string> input;  // stdin, from "<" lines
  std::vector<Expectation> expectations;
  bool has_exit = false;
  std::string name;   // SetEnv
  std::string value;  // SetEnv value, ChangeDir directory
};

struct Transcript {
  std::string path;
  std::vector<Step> steps;
};

struct ParseError {
  int line = 0;
  std::string message;
};

// ---- parsing -------------------------------------------------------------------------------

/// Splits a command line the way a POSIX shell splits words, without expanding anything:
/// whitespace separates words; '…' is literal; "…" is literal except \" \\ \$ \` ; a backslash
/// outside quotes makes the next character literal.
std::expected<std::vector<std::string>, std::string> split_command(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == ' ' || c == '\t') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
      continue;
    }
    in_word = true;
    if (c == '\\') {
      if (i + 1 >= text.size()) return std::unexpected("trailing backslash");
      word += text[++i];
    } else if (c == '\'') {
      auto close = text.find('\'', i + 1);
      if (close == std::string_view::npos) return std::unexpected("unterminated single quote");
      word.append(text.substr(i + 1, close - i - 1));
      i = close;
    } else if (c == '"') {
      bool closed = false;
      for (++i; i < text.size(); ++i) {
        char d = text[i];
        if (d == '"') {
          closed = true;
          break;
        }
        if (d == '\\' && i + 1 < text.size() &&
            std::string_view("\"\\$`").find(text[i + 1]) != std::string_view::npos) {
          word += text[++i];
        } else {
          word += d;
        }
      }
      if (!closed) return std::unexpected("unterminated double quote");
    } else {
      word += c;
    }
  }
  if (in_word) words.push_back(std::move(word));
  return words;
}

/// "out hello" → "hello"; "|" → ""; the separator is one space after the directive.
std::string_view rest_after(std::string_view line, std::size_t directive_length) {
  std::string_view rest = line.substr(directive_length);
  if (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  return rest;
}

bool valid_env_name(std::string_view name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
  });
}

std::expected<Transcript, ParseError> parse_transcript(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return std::unexpected(ParseError{0, "cannot open file"});
  Transcript transcript;
  transcript.path = path;

  std::optional<std::string> pending_input;
  int pending_input_line = 0;
  bool last_directive_was_exact = false;  // "|" lines of one command must be consecutive
  bool exact_block_closed = false;

  std::string raw;
  int line_number = 0;
  while (std::getline(file, raw)) {
    ++line_number;
    if (!raw.empty() && raw.back() == '\r') raw.pop_back();
    std::string_view line = raw;
    auto first = line.find_first_not_of(" \t");
    if (first == std::string_view::npos) continue;  // blank
    line.remove_prefix(first);
    if (line.front() == '#') continue;  // comment

    auto error = [&](std::string message) {
      return std::unexpected(ParseError{line_number, std::move(message)});
    };
    Step* current = transcript.steps.empty() ? nullptr : &transcript.steps.back();
    bool is_exact = line.front() == '|';

    if (line.front() == '<') {
      std::string text(rest_after(line, 1));
      if (!pending_input) {
        pending_input = text + "\n";
        pending_input_line = line_number;
      } else {
        *pending_input += text + "\n";
      }
      last_directive_was_exact = false;
      continue;
    }

    if (line.front() == '$') {
      if (line.size() > 1 && line[1] != ' ') return error("a command line starts with \"$ \"");
      std::string_view command = rest_after(line, 1);
      auto words = split_command(command);
      if (!words) return error(words.error());
      if (words->empty()) return error("empty command");
      Step step;
      step.line = line_number;
      step.source = std::string(command);
      if ((*words)[0] == "cd") {
        if (pending_input) return error("stdin lines (\"<\") cannot feed a cd");
        if (words->size() > 2) return error("cd takes one directory");
        step.kind = StepKind::ChangeDir;
        step.value = words->size() == 2 ? (*words)[1] : ".";
      } else {
        step.kind = StepKind::Run;
        step.argv = std::move(*words);
        step.input = std::move(pending_input);
        pending_input.reset();
      }
      transcript.steps.push_back(std::move(step));
      last_directive_was_exact = false;
      exact_block_closed = false;
      continue;
    }

    if (pending_input)
      return error("stdin lines (\"<\", from line " + std::to_string(pending_input_line) +
                   ") must come right before the \"$\" line they feed");

    // env applies to every later command, so it is a step of its own.
    std::string_view word = line.substr(0, line.find_first_of(" \t"));
    if (word == "env") {
      std::string_view assignment = rest_after(line, 3);
      auto equals = assignment.find('=');
      if (equals == std::string_view::npos) return error("expected: env NAME=value");
      std::string_view name = assignment.substr(0, equals);
      if (!valid_env_name(name)) return error("invalid environment variable name '" + std::string(name) + "'");
      Step step;
      step.kind = StepKind::SetEnv;
      step.line = line_number;
      step.name = std::string(name);
      step.value = std::string(assignment.substr(equals + 1));
      transcript.steps.push_back(std::move(step));
      last_directive_was_exact = false;
      exact_block_closed = false;
      continue;
    }

    // Everything else is an expectation about the most recent command.
    if (!current || current->kind == StepKind::SetEnv)
      return error(current ? "expectation after env: it must follow a \"$\" command"
                           : "expectation before any \"$\" command");
    if (current->kind == StepKind::ChangeDir) return error("a cd has no output to check");

    Expectation expectation;
    expectation.line = line_number;
    if (is_exact) {
      if (exact_block_closed) return error("the \"|\" lines of one command must be consecutive");
      std::string text(rest_after(line, 1));
      auto existing = std::find_if(current->expectations.begin(), current->expectations.end(),
                                   [](const Expectation& e) { return e.kind == ExpectKind::OutExact; });
      if (existing != current->expectations.end()) {
        existing->text += "\n" + text;
      } else {
        expectation.kind = ExpectKind::OutExact;
        expectation.text = std::move(text);
        current->expectations.push_back(std::move(expectation));
      }
      last_directive_was_exact = true;
      continue;
    }
    if (last_directive_was_exact) exact_block_closed = true;
    last_directive_was_exact = false;

    std::string_view argument = rest_after(line, word.size());
    if (word == "exit") {
      if (current->has_exit) return error("more than one exit line for this command");
      std::string digits(ct::trim(argument));
      char* end = nullptr;
      long value = std::strtol(digits.c_str(), &end, 10);
      if (digits.empty() || *end != '\0' || value < 0 || value > 255)
        return error("expected: exit <0-255>");
      expectation.kind = ExpectKind::Exit;
      expectation.exit_code = static_cast<int>(value);
      current->has_exit = true;
    } else if (word == "json") {
      auto parsed = ct::json::parse(argument);
      if (!parsed) return error("json expectation is not valid JSON: " + parsed.error().message);
      expectation.kind = ExpectKind::Json;
      expectation.json = std::move(*parsed);
      expectation.text = std::string(argument);
    } else if (word == "out" || word == "!out" || word == "err" || word == "!err") {
      if (argument.empty()) return error(std::string(word) + " needs some text");
      expectation.kind = word == "out"    ? ExpectKind::OutContains
                         : word == "!out" ? ExpectKind::OutLacks
                         : word == "err"  ? ExpectKind::ErrContains
                                          : ExpectKind::ErrLacks;
      expectation.text = std::string(argument);
    } else {
      return error("unknown directive '" + std::string(word) +
                   "' (expected $, <, |, exit, json, out, !out, err, !err, env or #)");
    }
    current->expectations.push_back(std::move(expectation));
  }
  if (pending_input)
    return std::unexpected(ParseError{pending_input_line, "stdin lines (\"<\") without a following \"$\" command"});
  return transcript;
}

// ---- running a process ---------------------------------------------------------------------

struct Outcome {
  std::string start_error;  // non-empty when the program could not be started
  bool timed_out = false;
  int exit_code = -1;  // -1 when killed by a signal
  int signal = 0;
  std::string out;
  std::string err;
};

std::string errno_text(int error) { return std::strerror(error); }

void set_nonblocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK); }

/// Reads what is available; closes and sets `fd` to -1 at end of file.
void drain(int& fd, std::string& into) {
  char buffer[65536];
  while (fd >= 0) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n > 0) {
      into.append(buffer, static_cast<std::size_t>(n));
    } else if (n == 0) {
      ::close(fd);
      fd = -1;
    } else if (errno == EINTR) {
      continue;
    } else {
      if (errno != EAGAIN && errno != EWOULDBLOCK) {
        ::close(fd);
        fd = -1;
      }
      return;
    }
  }
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

/// Searches PATH (from the command's environment) for `name`; a name with a slash is used as is.
std::optional<std::string> find_program(const std::string& name, const std::string& path_variable) {
  if (name.find('/') != std::string::npos) return name;
  std::size_t start = 0;
  while (start <= path_variable.size()) {
    auto end = path_variable.find(':', start);
    if (end == std::string::npos) end = path_variable.size();
    std::string directory = path_variable.substr(start, end - start);
    if (directory.empty()) directory = ".";
    std::string candidate = directory + "/" + name;
    std::error_code ec;
    if (fs::is_regular_file(candidate, ec) && ::access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return std::nullopt;
}

Outcome run_process(const std::string& program, const std::vector<std::string>& argv,
                    const std::vector<std::string>& environment, const std::string& cwd,
                    const std::string& input, std::chrono::milliseconds timeout) {
  Outcome outcome;
  int in_pipe[2], out_pipe[2], err_pipe[2], exec_pipe[2];
  if (::pipe2(in_pipe, O_CLOEXEC) != 0 || ::pipe2(out_pipe, O_CLOEXEC) != 0 ||
      ::pipe2(err_pipe, O_CLOEXEC) != 0 || ::pipe2(exec_pipe, O_CLOEXEC) != 0) {
    outcome.start_error = "pipe: " + errno_text(errno);
    return outcome;
  }
  // Everything the child needs is prepared before fork: no allocation between fork and exec.
  std::vector<char*> child_argv;
  for (const auto& arg : argv) child_argv.push_back(const_cast<char*>(arg.c_str()));
  child_argv.push_back(nullptr);
  std::vector<char*> child_env;
  for (const auto& entry : environment) child_env.push_back(const_cast<char*>(entry.c_str()));
  child_env.push_back(nullptr);

  pid_t pid = ::fork();
  if (pid < 0) {
    outcome.start_error = "fork: " + errno_text(errno);
    for (int* p : {in_pipe, out_pipe, err_pipe, exec_pipe}) {
      ::close(p[0]);
      ::close(p[1]);
    }
    return outcome;
  }
  if (pid == 0) {
    // Child: own process group (so a timeout can kill everything it started), default signal
    // dispositions, pipes on 0/1/2, then exec. Only async-signal-safe calls from here on.
    ::setpgid(0, 0);
    ::signal(SIGPIPE, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::dup2(in_pipe[0], 0);
    ::dup2(out_pipe[1], 1);
    ::dup2(err_pipe[1], 2);
    int error = 0;
    if (::chdir(cwd.c_str()) != 0) {
      error = errno;
    } else {
      ::execve(program.c_str(), child_argv.data(), child_env.data());
      error = errno;
    }
    ssize_t ignored = ::write(exec_pipe[1], &error, sizeof error);
    (void)ignored;
    ::_exit(127);
  }

  ::setpgid(pid, pid);  // also here, so there is no window where the group does not exist yet
  ::close(in_pipe[0]);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  ::close(exec_pipe[1]);

  // The exec pipe closes on a successful exec, or carries errno when exec failed.
  int exec_error = 0;
  ssize_t got;
  do {
    got = ::read(exec_pipe[0], &exec_error, sizeof exec_error);
  } while (got < 0 && errno == EINTR);
  ::close(exec_pipe[0]);

  int in_fd = in_pipe[1];
  int out_fd = out_pipe[0];
  int err_fd = err_pipe[0];
  if (got == static_cast<ssize_t>(sizeof exec_error)) {
    outcome.start_error = "cannot run " + program + ": " + errno_text(exec_error);
    close_fd(in_fd);
    close_fd(out_fd);
    close_fd(err_fd);
    int status = 0;
    ::waitpid(pid, &status, 0);
    return outcome;
  }

  set_nonblocking(in_fd);
  set_nonblocking(out_fd);
  set_nonblocking(err_fd);
  if (input.empty()) close_fd(in_fd);
  std::size_t written = 0;

  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + timeout;
  while (true) {
    // Has the child exited? WNOWAIT keeps it a zombie, so its process group id stays reserved
    // until the stragglers are killed below.
    siginfo_t info{};
    if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
        info.si_pid == pid) {
      drain(out_fd, outcome.out);
      drain(err_fd, outcome.err);
      break;
    }
    auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (remaining.count() <= 0) {
      outcome.timed_out = true;
      break;
    }
    pollfd fds[3];
    nfds_t count = 0;
    if (out_fd >= 0) fds[count++] = {out_fd, POLLIN, 0};
    if (err_fd >= 0) fds[count++] = {err_fd, POLLIN, 0};
    if (in_fd >= 0) fds[count++] = {in_fd, POLLOUT, 0};
    int wait_ms = static_cast<int>(std::min<long long>(remaining.count(), count ? 100 : 10));
    int ready = ::poll(fds, count, wait_ms);
    if (ready < 0 && errno != EINTR) {
      outcome.start_error = "poll: " + errno_text(errno);
      break;
    }
    for (nfds_t i = 0; i < count && ready > 0; ++i) {
      if (fds[i].revents == 0) continue;
      if (fds[i].fd == out_fd) {
        drain(out_fd, outcome.out);
      } else if (fds[i].fd == err_fd) {
        drain(err_fd, outcome.err);
      } else if (fds[i].fd == in_fd) {
        if (fds[i].revents & (POLLERR | POLLHUP)) {
          close_fd(in_fd);  // the child closed its stdin: it does not want the rest
          continue;
        }
        ssize_t n = ::write(in_fd, input.data() + written, input.size() - written);
        if (n > 0) written += static_cast<std::size_t>(n);
        else if (n < 0 && errno != EAGAIN && errno != EINTR) close_fd(in_fd);
        if (written == input.size()) close_fd(in_fd);
      }
    }
  }

  // Kill the child's whole group: on a timeout the child itself, otherwise any background
  // process it left behind. These are all processes this runner started.
  ::kill(-pid, SIGKILL);
  close_fd(in_fd);
  close_fd(out_fd);
  close_fd(err_fd);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) {
    outcome.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    outcome.signal = WTERMSIG(status);
  }
  return outcome;
}

// ---- checking ------------------------------------------------------------------------------

std::string quote(std::string_view text) {
  std::string out;
  ct::json::write_string(out, text);
  return out;
}

std::string describe(const Value& value) {
  std::string text = value.dump();
  if (text.size() > 200) text = text.substr(0, 200) + "…";
  return text;
}

bool is_task_id(const std::string& text) {
  static const std::regex pattern("^T[0-9]{3,}$");
  return std::regex_match(text, pattern);
}

bool is_utc_time(const std::string& text) {
  static const std::regex pattern("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]+)?Z$");
  return std::regex_match(text, pattern) && ct::parse_iso8601(text).has_value();
}

/// Subset match with placeholders. On a mismatch, `why` says where and how.
bool json_matches(const Value& actual, const Value& expected, const std::string& path, std::string& why) {
  if (expected.is_string()) {
    const std::string& wanted = expected.as_string();
    if (wanted == "<any>") return true;
    if (wanted == "<id>" || wanted == "<time>") {
      bool ok = actual.is_string() && (wanted == "<id>" ? is_task_id(actual.as_string())
                                                        : is_utc_time(actual.as_string()));
      if (!ok) why = path + ": expected " + wanted + ", got " + describe(actual);
      return ok;
    }
  }
  if (expected.is_object()) {
    if (!actual.is_object()) {
      why = path + ": expected an object, got " + describe(actual);
      return false;
    }
    for (const auto& [key, value] : expected.as_object()) {
      std::string child_path = path + "." + key;
      const Value* member = actual.find(key);
      if (!member) {
        why = child_path + ": missing (object has " + describe(actual) + ")";
        return false;
      }
      if (!json_matches(*member, value, child_path, why)) return false;
    }
    return true;
  }
  if (expected.is_array()) {
    if (!actual.is_array()) {
      why = path + ": expected an array, got " + describe(actual);
      return false;
    }
    if (actual.size() != expected.size()) {
      why = path + ": expected " + std::to_string(expected.size()) + " elements, got " +
            std::to_string(actual.size()) + ": " + describe(actual);
      return false;
    }
    for (std::size_t i = 0; i < expected.size(); ++i) {
      if (!json_matches(actual.as_array()[i], expected.as_array()[i],
                        path + "[" + std::to_string(i) + "]", why))
        return false;
    }
    return true;
  }
  bool equal;
  if (expected.is_int() && actual.is_int()) equal = expected.as_int() == actual.as_int();
  else if (expected.is_number() && actual.is_number()) equal = expected.as_double() == actual.as_double();
  else equal = expected == actual;
  if (!equal) why = path + ": expected " + describe(expected) + ", got " + describe(actual);
  return equal;
}

std::string strip_one_newline(std::string_view text) {
  if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  return std::string(text);
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (true) {
    auto end = text.find('\n', start);
    lines.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return lines;
}

/// Why the expectation failed, or nullopt when it holds.
std::optional<std::string> check(const Expectation& e, const Outcome& outcome) {
  switch (e.kind) {
    case ExpectKind::Exit:
      if (outcome.exit_code == e.exit_code) return std::nullopt;
      if (outcome.exit_code < 0)
        return "expected exit " + std::to_string(e.exit_code) + ", but it was killed by signal " +
               std::to_string(outcome.signal);
      return "expected exit " + std::to_string(e.exit_code) + ", got " + std::to_string(outcome.exit_code);
    case ExpectKind::Json: {
      auto parsed = ct::json::parse(outcome.out);
      if (!parsed) return "stdout is not valid JSON (" + parsed.error().message + ")";
      std::string why;
      if (json_matches(*parsed, e.json, "$", why)) return std::nullopt;
      return "json mismatch at " + why;
    }
    case ExpectKind::OutContains:
      if (outcome.out.find(e.text) != std::string::npos) return std::nullopt;
      return "stdout does not contain " + quote(e.text);
    case ExpectKind::OutLacks:
      if (outcome.out.find(e.text) == std::string::npos) return std::nullopt;
      return "stdout contains " + quote(e.text) + " but must not";
    case ExpectKind::ErrContains:
      if (outcome.err.find(e.text) != std::string::npos) return std::nullopt;
      return "stderr does not contain " + quote(e.text);
    case ExpectKind::ErrLacks:
      if (outcome.err.find(e.text) == std::string::npos) return std::nullopt;
      return "stderr contains " + quote(e.text) + " but must not";
    case ExpectKind::OutExact: {
      std::string actual = strip_one_newline(outcome.out);
      if (actual == e.text) return std::nullopt;
      auto want = split_lines(e.text);
      auto got = split_lines(actual);
      std::size_t i = 0;
      while (i < want.size() && i < got.size() && want[i] == got[i]) ++i;
      std::string message = "stdout differs from the \"|\" lines at output line " + std::to_string(i + 1) + ": ";
      if (i >= got.size()) message += "expected " + quote(want[i]) + ", but output ended";
      else if (i >= want.size()) message += "unexpected extra line " + quote(got[i]);
      else message += "expected " + quote(want[i]) + ", got " + quote(got[i]);
      return message;
    }
  }
  return "unknown expectation";
}

// ---- reporting -----------------------------------------------------------------------------

/// Shows a stream indented, cut to a sensible size.
void print_stream(std::ostream& os, std::string_view label, const std::string& text) {
  constexpr std::size_t kMaxBytes = 3000;
  constexpr std::size_t kMaxLines = 40;
  os << "  " << label << " (" << text.size() << " bytes)";
  if (text.empty()) {
    os << ": (empty)\n";
    return;
  }
  os << ":\n";
  std::size_t shown = 0, lines = 0, pos = 0;
  while (pos < text.size() && shown < kMaxBytes && lines < kMaxLines) {
    auto end = text.find('\n', pos);
    std::string_view line = std::string_view(text).substr(pos, end == std::string::npos ? std::string::npos : end - pos);
    if (line.size() > kMaxBytes - shown) line = line.substr(0, kMaxBytes - shown);
    os << "    | " << line << "\n";
    shown += line.size() + 1;
    ++lines;
    pos = end == std::string::npos ? text.size() : end + 1;
  }
  if (pos < text.size()) os << "    … (" << text.size() - pos << " more bytes)\n";
}

// ---- the run -------------------------------------------------------------------------------

struct Options {
  std::string ct_path;
  std::chrono::milliseconds timeout{30000};
  std::vector<std::pair<std::string, std::string>> extra_env;
  enum class Keep { OnFailure, Always, Never } keep = Keep::OnFailure;
  bool verbose = false;
  std::vector<std::string> files;
};

class Environment {
 public:
  void set(const std::string& name, const std::string& value) {
    for (auto& [k, v] : vars_) {
      if (k == name) {
        v = value;
        return;
      }
    }
    vars_.emplace_back(name, value);
  }
  std::string get(const std::string& name) const {
    for (const auto& [k, v] : vars_)
      if (k == name) return v;
    return {};
  }
  std::vector<std::string> entries() const {
    std::vector<std::string> out;
    for (const auto& [k, v] : vars_) out.push_back(k + "=" + v);
    return out;
  }

 private:
  std::vector<std::pair<std::string, std::string>> vars_;
};

/// A relative directory inside the temp dir, or nullopt when it would leave it.
std::optional<fs::path> inside(const fs::path& root, const std::string& directory) {
  fs::path relative = fs::path(directory).lexically_normal();
  if (relative.is_absolute()) return std::nullopt;
  if (!relative.empty() && *relative.begin() == "..") return std::nullopt;
  if (relative.empty() || relative == ".") return root;
  fs::path target = (root / relative).lexically_normal();
  return target.has_filename() ? target : target.parent_path();  // no trailing slash
}

std::string format_seconds(std::chrono::milliseconds duration) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", static_cast<double>(duration.count()) / 1000.0);
  return buffer;
}

/// Runs one transcript. Returns 0 when every expectation holds, 1 on a failure, 2 on a setup
/// or format error.
int run_transcript(const std::string& path, const Options& options) {
  auto transcript = parse_transcript(path);
  if (!transcript) {
    std::cerr << path << ":" << transcript.error().line << ": error: "
              << transcript.error().message << "\n";
    return 2;
  }

  std::error_code ec;
  fs::path temp_base = fs::temp_directory_path(ec);
  if (ec) temp_base = "/tmp";
  std::string pattern = (temp_base / "ct-transcript-XXXXXX").string();
  if (!::mkdtemp(pattern.data())) {
    std::cerr << "error: mkdtemp " << pattern << ": " << errno_text(errno) << "\n";
    return 2;
  }
  const fs::path root = pattern;
  fs::create_directories(root / "home", ec);

  Environment env;
  const char* parent_path = std::getenv("PATH");
  env.set("PATH", parent_path ? parent_path : "/usr/bin:/bin");
  env.set("HOME", (root / "home").string());
  env.set("CLEO_TEST_MODE", "1");
  env.set("NO_COLOR", "1");
  env.set("LC_ALL", "C.UTF-8");
  // Sanitizer settings pass through so that a sanitized `ct` reports the way CI asked it to.
  for (const char* name : {"ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS", "TSAN_OPTIONS"})
    if (const char* value = std::getenv(name)) env.set(name, value);
  for (const auto& [name, value] : options.extra_env) env.set(name, value);

  fs::path cwd = root;
  int commands = 0;
  int expectations = 0;
  bool failed = false;

  for (const Step& step : transcript->steps) {
    std::string where = path + ":" + std::to_string(step.line);
    if (step.kind == StepKind::SetEnv) {
      env.set(step.name, step.value);
      continue;
    }
    if (step.kind == StepKind::ChangeDir) {
      auto target = inside(root, step.value);
      if (!target) {
        std::cerr << where << ": error: cd " << step.value << ": must stay inside the temp dir\n";
        failed = true;
        break;
      }
      fs::create_directories(*target, ec);
      cwd = *target;
      continue;
    }

    ++commands;
    std::vector<std::string> argv = step.argv;
    if (argv[0] == "ct") {
      if (options.ct_path.empty()) {
        std::cerr << where << ": error: the transcript runs ct but no --ct was given\n";
        failed = true;
        break;
      }
      argv[0] = options.ct_path;
    }
    auto program = find_program(argv[0], env.get("PATH"));
    if (options.verbose) std::cout << where << ": $ " << step.source << "\n";

    Outcome outcome;
    if (!program) {
      outcome.start_error = "command not found: " + argv[0];
    } else {
      outcome = run_process(*program, argv, env.entries(), cwd.string(), step.input.value_or(""),
                            options.timeout);
    }

    std::vector<std::pair<int, std::string>> failures;
    if (!outcome.start_error.empty()) {
      failures.emplace_back(step.line, outcome.start_error);
    } else if (outcome.timed_out) {
      failures.emplace_back(step.line,
                            "timed out after " + format_seconds(options.timeout) + " s and was killed");
    } else {
      if (!step.has_exit) {
        ++expectations;
        Expectation implicit;
        implicit.line = step.line;
        if (auto why = check(implicit, outcome)) failures.emplace_back(step.line, *why + " (no exit line: 0 is expected)");
      }
      for (const auto& e : step.expectations) {
        ++expectations;
        if (auto why = check(e, outcome)) failures.emplace_back(e.line, *why);
      }
    }
    if (options.verbose && failures.empty())
      std::cout << "  exit " << outcome.exit_code << ", " << step.expectations.size() + (step.has_exit ? 0 : 1)
                << " expectations ok\n";
    if (failures.empty()) continue;

    failed = true;
    for (const auto& [line, why] : failures)
      std::cerr << path << ":" << line << ": FAIL: " << why << "\n";
    std::cerr << "  command (" << where << "): " << step.source << "\n";
    if (argv[0] != step.argv[0]) std::cerr << "  ct: " << options.ct_path << "\n";
    if (cwd != root) std::cerr << "  cwd: " << cwd.string() << "\n";
    if (step.input) print_stream(std::cerr, "stdin", *step.input);
    if (outcome.start_error.empty()) {
      if (outcome.timed_out)
        std::cerr << "  exit: none (timed out)\n";
      else if (outcome.exit_code >= 0)
        std::cerr << "  exit: " << outcome.exit_code << "\n";
      else
        std::cerr << "  exit: killed by signal " << outcome.signal << " (" << strsignal(outcome.signal) << ")\n";
      for (const auto& e : step.expectations) {
        if (e.kind == ExpectKind::Json) std::cerr << "  expected json subset: " << e.text << "\n";
        if (e.kind == ExpectKind::OutExact) print_stream(std::cerr, "expected stdout", e.text + "\n");
      }
      print_stream(std::cerr, "stdout", outcome.out);
      print_stream(std::cerr, "stderr", outcome.err);
    }
    break;
  }

  bool keep = options.keep == Options::Keep::Always || (failed && options.keep == Options::Keep::OnFailure);
  if (keep) {
    std::cerr << "  temp dir kept: " << root.string() << "\n";
  } else {
    fs::remove_all(root, ec);
  }
  if (failed) {
    std::cout << path << ": FAILED after " << commands << " of "
              << std::count_if(transcript->steps.begin(), transcript->steps.end(),
                               [](const Step& s) { return s.kind == StepKind::Run; })
              << " commands\n";
    return 1;
  }
  std::cout << path << ": " << commands << " commands, " << expectations
            << " expectations, all passed\n";
  return 0;
}

constexpr std::string_view kUsage =
    "usage: ct_transcript [--ct PATH] [--timeout SECONDS] [--env NAME=VALUE]... [--keep|--no-keep]\n"
    "                     [-v] FILE.test...\n"
    "Replays CLI transcripts; see tests/transcript/README.md for the format.\n"
    "  --ct PATH          binary that replaces the word `ct` at the start of a command\n"
    "  --timeout SECONDS  per-command time limit (default 30)\n"
    "  --env NAME=VALUE   extra environment for every command (like an `env` line)\n"
    "  --keep             keep the temp dir even when the transcript passes\n"
    "  --no-keep          remove the temp dir even when the transcript fails\n"
    "  -v, --verbose      print each command as it runs\n"
    "Exit status: 0 all passed, 1 an expectation failed, 2 usage or transcript format error.\n";

std::optional<Options> parse_options(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    auto value = [&]() -> std::optional<std::string> {
      if (i + 1 >= argc) return std::nullopt;
      return std::string(argv[++i]);
    };
    if (arg == "--ct") {
      auto v = value();
      if (!v) return std::nullopt;
      std::error_code ec;
      options.ct_path = fs::absolute(*v, ec).string();
    } else if (arg == "--timeout") {
      auto v = value();
      if (!v) return std::nullopt;
      char* end = nullptr;
      double seconds = std::strtod(v->c_str(), &end);
      if (*end != '\0' || !(seconds > 0)) return std::nullopt;
      options.timeout = std::chrono::milliseconds(static_cast<long long>(seconds * 1000));
    } else if (arg == "--env") {
      auto v = value();
      if (!v) return std::nullopt;
      auto equals = v->find('=');
      if (equals == std::string::npos || !valid_env_name(std::string_view(*v).substr(0, equals)))
        return std::nullopt;
      options.extra_env.emplace_back(v->substr(0, equals), v->substr(equals + 1));
    } else if (arg == "--keep") {
      options.keep = Options::Keep::Always;
    } else if (arg == "--no-keep") {
      options.keep = Options::Keep::Never;
    } else if (arg == "-v" || arg == "--verbose") {
      options.verbose = true;
    } else if (arg.starts_with("-")) {
      return std::nullopt;
    } else {
      options.files.emplace_back(arg);
    }
  }
  if (options.files.empty()) return std::nullopt;
  return options;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && (std::string_view(argv[1]) == "--help" || std::string_view(argv[1]) == "-h")) {
    std::cout << kUsage;
    return 0;
  }
  auto options = parse_options(argc, argv);
  if (!options) {
    std::cerr << kUsage;
    return 2;
  }
  if (!options->ct_path.empty() && ::access(options->ct_path.c_str(), X_OK) != 0) {
    std::cerr << "error: --ct " << options->ct_path << ": " << errno_text(errno) << "\n";
    return 2;
  }
  ::signal(SIGPIPE, SIG_IGN);  // a child that stops reading its stdin must not kill the runner

  int worst = 0;
  for (const auto& file : options->files) worst = std::max(worst, run_transcript(file, *options));
  return worst;
}
