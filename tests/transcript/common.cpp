// Shared parts of ct_transcript; see common.h.
#include <cctype>

#include "tests/transcript/common.h"
#include "tests/support/person_key_fixture.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <regex>
#include <system_error>
#include <thread>

#include "core/clock.h"
#include "core/json_parse.h"

namespace ct::transcript {

std::string_view to_string(Transport transport) { return transport == Transport::Stdio ? "stdio" : "http"; }

// ---- parsing helpers -----------------------------------------------------------------------

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

// ---- the sandbox ---------------------------------------------------------------------------

void Environment::set(const std::string& name, const std::string& value) {
  for (auto& [k, v] : vars_) {
    if (k == name) {
      v = value;
      return;
    }
  }
  vars_.emplace_back(name, value);
}

std::string Environment::get(const std::string& name) const {
  for (const auto& [k, v] : vars_)
    if (k == name) return v;
  return {};
}

std::vector<std::string> Environment::entries() const {
  std::vector<std::string> out;
  for (const auto& [k, v] : vars_) out.push_back(k + "=" + v);
  return out;
}

std::expected<Sandbox, std::string> make_sandbox(const Options& options) {
  std::error_code ec;
  fs::path temp_base = fs::temp_directory_path(ec);
  if (ec) temp_base = "/tmp";
  std::string pattern = (temp_base / "ct-transcript-XXXXXX").string();
  if (!::mkdtemp(pattern.data())) return std::unexpected("mkdtemp " + pattern + ": " + errno_text(errno));
  Sandbox sandbox;
  sandbox.root = pattern;
  fs::create_directories(sandbox.root / "home", ec);

  // A person key (engines/project/person_keys.h) listed in the sandbox's home and given to every
  // command: `ct` without a terminal is an agent, and transcripts speak as a person's script by
  // default. A transcript plays an agent with a shell with `env CT_PERSON_KEY=` and a host marker.
  {
    fs::path keys = sandbox.root / "home" / ".config" / "cleo";
    fs::create_directories(keys, ec);
    const fs::path file = keys / "person-keys.json";
    std::ofstream(file) << ct::testing::kTestPersonKeysJson << "\n";
    fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write, fs::perm_options::replace, ec);
  }
  Environment& env = sandbox.env;
  env.set("CT_PERSON_KEY", std::string(ct::testing::kTestPersonKey));
  const char* parent_path = std::getenv("PATH");
  env.set("PATH", parent_path ? parent_path : "/usr/bin:/bin");
  env.set("HOME", (sandbox.root / "home").string());
  env.set("CLEO_TEST_MODE", "1");
  env.set("NO_COLOR", "1");
  env.set("LC_ALL", "C.UTF-8");
  // Sanitizer settings pass through so that a sanitized `ct` reports the way CI asked it to.
  for (const char* name : {"ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS", "TSAN_OPTIONS"})
    if (const char* value = std::getenv(name)) env.set(name, value);
  for (const auto& [name, value] : options.extra_env) env.set(name, value);
  // On a PostgreSQL store (--env CLEO_DATABASE_URL=…) every sandbox is a project of its own: a
  // schema named after the sandbox.
  if (!env.get("CLEO_DATABASE_URL").empty() && env.get("CLEO_DATABASE_SCHEMA").empty()) {
    std::string schema = "tr_";
    for (char c : sandbox.root.filename().string()) schema += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    env.set("CLEO_DATABASE_SCHEMA", schema);
  }
  return sandbox;
}

void finish_sandbox(const Sandbox& sandbox, const Options& options, bool failed) {
  bool keep = options.keep == Options::Keep::Always || (failed && options.keep == Options::Keep::OnFailure);
  if (keep) {
    std::cerr << "  temp dir kept: " << sandbox.root.string() << "\n";
    return;
  }
  std::error_code ec;
  fs::remove_all(sandbox.root, ec);
}

// ---- processes -----------------------------------------------------------------------------

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

namespace {

/// argv and environment as the char* arrays execve wants, built before fork.
struct ExecArgs {
  std::vector<char*> argv;
  std::vector<char*> env;
  ExecArgs(const std::vector<std::string>& args, const std::vector<std::string>& environment) {
    for (const auto& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    for (const auto& entry : environment) env.push_back(const_cast<char*>(entry.c_str()));
    env.push_back(nullptr);
  }
};

/// In the child after fork: own process group (so a timeout can kill everything it started),
/// default signal dispositions, the given fds on 0/1/2, then exec. Only async-signal-safe calls.
/// On failure the errno goes to `report_fd` and the child exits 127.
[[noreturn]] void exec_child(int in, int out, int err, const std::string& cwd, const std::string& program,
                             ExecArgs& args, int report_fd) {
  ::setpgid(0, 0);
  ::signal(SIGPIPE, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::dup2(in, 0);
  ::dup2(out, 1);
  ::dup2(err, 2);
  int error = 0;
  if (::chdir(cwd.c_str()) != 0) {
    error = errno;
  } else {
    ::execve(program.c_str(), args.argv.data(), args.env.data());
    error = errno;
  }
  ssize_t ignored = ::write(report_fd, &error, sizeof error);
  (void)ignored;
  ::_exit(127);
}

}  // namespace

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
  ExecArgs exec_args(argv, environment);  // before fork: no allocation between fork and exec

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
    exec_child(in_pipe[0], out_pipe[1], err_pipe[1], cwd, program, exec_args, exec_pipe[1]);
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


std::expected<Child, std::string> start_child(const std::string& program, const std::vector<std::string>& argv,
                                              const std::vector<std::string>& environment, const std::string& cwd,
                                              const ChildStdio& stdio) {
  int in_pipe[2] = {-1, -1}, out_pipe[2] = {-1, -1}, exec_pipe[2] = {-1, -1};
  auto close_all = [&] {
    for (int* p : {in_pipe, out_pipe, exec_pipe})
      for (int i = 0; i < 2; ++i) close_fd(p[i]);
  };
  if ((stdio.pipe_stdin && ::pipe2(in_pipe, O_CLOEXEC) != 0) ||
      (stdio.pipe_stdout && ::pipe2(out_pipe, O_CLOEXEC) != 0) || ::pipe2(exec_pipe, O_CLOEXEC) != 0) {
    std::string why = "pipe: " + errno_text(errno);
    close_all();
    return std::unexpected(why);
  }
  int null_in = stdio.pipe_stdin ? -1 : ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  int out_file = stdio.pipe_stdout ? -1
                                   : ::open(stdio.stdout_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  int err_file = ::open(stdio.stderr_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  int child_in = stdio.pipe_stdin ? in_pipe[0] : null_in;
  int child_out = stdio.pipe_stdout ? out_pipe[1] : out_file;
  if (child_in < 0 || child_out < 0 || err_file < 0) {
    std::string why = "cannot open the server's stdio files: " + errno_text(errno);
    close_all();
    close_fd(null_in);
    close_fd(out_file);
    close_fd(err_file);
    return std::unexpected(why);
  }

  ExecArgs exec_args(argv, environment);  // before fork: no allocation between fork and exec

  pid_t pid = ::fork();
  if (pid < 0) {
    std::string why = "fork: " + errno_text(errno);
    close_all();
    close_fd(null_in);
    close_fd(out_file);
    close_fd(err_file);
    return std::unexpected(why);
  }
  if (pid == 0) {
    exec_child(child_in, child_out, err_file, cwd, program, exec_args, exec_pipe[1]);
  }

  ::setpgid(pid, pid);
  Child child;
  child.pid = pid;
  close_fd(in_pipe[0]);
  close_fd(out_pipe[1]);
  close_fd(exec_pipe[1]);
  close_fd(null_in);
  close_fd(out_file);
  close_fd(err_file);
  child.in = in_pipe[1];
  child.out = out_pipe[0];

  int exec_error = 0;
  ssize_t got;
  do {
    got = ::read(exec_pipe[0], &exec_error, sizeof exec_error);
  } while (got < 0 && errno == EINTR);
  close_fd(exec_pipe[0]);
  if (got == static_cast<ssize_t>(sizeof exec_error)) {
    kill_child(child);
    return std::unexpected("cannot run " + program + ": " + errno_text(exec_error));
  }
  if (child.in >= 0) set_nonblocking(child.in);
  if (child.out >= 0) set_nonblocking(child.out);
  return child;
}

std::string describe(const ExitStatus& status) {
  if (status.exit_code >= 0) return "exit " + std::to_string(status.exit_code);
  return "killed by signal " + std::to_string(status.signal) + " (" + strsignal(status.signal) + ")";
}

std::optional<ExitStatus> wait_child(pid_t pid, std::chrono::milliseconds timeout) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + timeout;
  while (true) {
    siginfo_t info{};
    if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid) {
      ExitStatus status;
      if (info.si_code == CLD_EXITED) {
        status.exit_code = info.si_status;
      } else {
        status.signal = info.si_status;
      }
      return status;
    }
    if (Clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

void kill_child(Child& child) {
  close_fd(child.in);
  close_fd(child.out);
  if (child.pid <= 0) return;
  // Only the group this runner created: the server and anything it started.
  ::kill(-child.pid, SIGKILL);
  int status = 0;
  while (::waitpid(child.pid, &status, 0) < 0 && errno == EINTR) {
  }
  child.pid = -1;
}

// ---- checking and reporting ----------------------------------------------------------------

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

namespace {

bool is_task_id(const std::string& text) {
  static const std::regex pattern("^T[0-9]{3,}$");
  return std::regex_match(text, pattern);
}

bool is_utc_time(const std::string& text) {
  static const std::regex pattern("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]+)?Z$");
  return std::regex_match(text, pattern) && ct::parse_iso8601(text).has_value();
}

}  // namespace

/// Subset match with placeholders. On a mismatch, `why` says where and how.
bool json_matches(const Value& actual, const Value& expected, const std::string& path, std::string& why) {
  if (expected.is_string()) {
    const std::string& wanted = expected.as_string();
    if (wanted == "<any>") return true;
    if (wanted == "<id>" || wanted == "<time>" || wanted == "<person>") {
      bool ok = actual.is_string() && (wanted == "<id>"       ? is_task_id(actual.as_string())
                                       : wanted == "<person>" ? actual.as_string().starts_with("person:") &&
                                                                    actual.as_string().size() > 7
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

std::string format_seconds(std::chrono::milliseconds duration) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", static_cast<double>(duration.count()) / 1000.0);
  return buffer;
}


std::string read_file(const fs::path& path) {
  std::string text;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return text;
  char buffer[65536];
  ssize_t n;
  while ((n = ::read(fd, buffer, sizeof buffer)) > 0 || (n < 0 && errno == EINTR))
    if (n > 0) text.append(buffer, static_cast<std::size_t>(n));
  ::close(fd);
  return text;
}

std::optional<SourceFile> read_source_lines(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return std::nullopt;
  SourceFile source;
  std::string raw;
  while (std::getline(file, raw)) {
    ++source.line_count;
    if (!raw.empty() && raw.back() == '\r') raw.pop_back();
    source.raw.push_back(raw);
    auto first = raw.find_first_not_of(" \t");
    if (first == std::string::npos) continue;  // blank
    if (raw[first] == '#') continue;            // comment
    source.lines.push_back({source.line_count, raw.substr(first)});
  }
  return source;
}

}  // namespace ct::transcript
