// ct_transcript: replays a CLI transcript (tests/cli/*.test) command by command in a fresh,
// hermetic temporary directory and checks each command's exit code, stdout and stderr; with
// --mcp stdio|http it replays an MCP transcript (tests/transcripts/**/*.test, see mcp.h).
// The file formats are described in tests/transcript/README.md.
//
// Commands run without a shell: the line is split shell-style into argv and started with
// fork + execve, so quoting in a transcript means exactly what it says and nothing expands.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "core/json_parse.h"
#include "core/text.h"
#include "tests/transcript/common.h"
#include "tests/transcript/mcp.h"

namespace {

using namespace ct::transcript;

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

std::expected<Transcript, ParseError> parse_transcript(const std::string& path) {
  auto source = read_source_lines(path);
  if (!source) return std::unexpected(ParseError{0, "cannot open file"});
  Transcript transcript;
  transcript.path = path;

  std::optional<std::string> pending_input;
  int pending_input_line = 0;
  bool last_directive_was_exact = false;  // "|" lines of one command must be consecutive
  bool exact_block_closed = false;

  for (const auto& source_line : source->lines) {
    const int line_number = source_line.number;
    std::string_view line = source_line.text;

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

// ---- checking ------------------------------------------------------------------------------

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

// ---- the run -------------------------------------------------------------------------------

/// A relative directory inside the temp dir, or nullopt when it would leave it.
std::optional<fs::path> inside(const fs::path& root, const std::string& directory) {
  fs::path relative = fs::path(directory).lexically_normal();
  if (relative.is_absolute()) return std::nullopt;
  if (!relative.empty() && *relative.begin() == "..") return std::nullopt;
  if (relative.empty() || relative == ".") return root;
  fs::path target = (root / relative).lexically_normal();
  return target.has_filename() ? target : target.parent_path();  // no trailing slash
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

  auto sandbox = make_sandbox(options);
  if (!sandbox) {
    std::cerr << "error: " << sandbox.error() << "\n";
    return 2;
  }
  const fs::path root = sandbox->root;
  Environment& env = sandbox->env;
  std::error_code ec;

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

  finish_sandbox(*sandbox, options, failed);
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
    "usage: ct_transcript [--ct PATH] [--mcp stdio|http] [--timeout SECONDS] [--env NAME=VALUE]...\n"
    "                     [--keep|--no-keep] [-v] FILE.test...\n"
    "Replays CLI transcripts, or MCP transcripts with --mcp; see tests/transcript/README.md.\n"
    "  --ct PATH          binary that replaces the word `ct` at the start of a command\n"
    "  --mcp TRANSPORT    the files are MCP transcripts, replayed against `ct mcp` (stdio)\n"
    "                     or `ct serve` (http); needs --ct\n"
    "  --timeout SECONDS  per-command (MCP: per-reply) time limit (default 30)\n"
    "  --env NAME=VALUE   extra environment for every command (like an `env` line)\n"
    "  --keep             keep the temp dir even when the transcript passes\n"
    "  --no-keep          remove the temp dir even when the transcript fails\n"
    "  -v, --verbose      print each command (MCP: each message and reply) as it runs\n"
    "Exit status: 0 all passed, 1 an expectation failed, 2 usage or transcript format error,\n"
    "77 every file was skipped (an MCP transcript marked `--- only` the other transport).\n";

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
    } else if (arg == "--mcp") {
      auto v = value();
      if (!v) return std::nullopt;
      if (*v == "stdio") options.mcp = Transport::Stdio;
      else if (*v == "http") options.mcp = Transport::Http;
      else return std::nullopt;
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

  if (options->mcp && options->ct_path.empty()) {
    std::cerr << "error: --mcp needs --ct (the server under test)\n";
    return 2;
  }

  int worst = 0;
  std::size_t skipped = 0;
  for (const auto& file : options->files) {
    int status = options->mcp ? run_mcp_transcript(file, *options) : run_transcript(file, *options);
    if (status == kSkipped) {
      ++skipped;
      continue;
    }
    worst = std::max(worst, status);
  }
  if (worst == 0 && skipped == options->files.size()) return kSkipped;
  return worst;
}
