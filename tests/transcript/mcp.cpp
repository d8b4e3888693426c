// The MCP mode of ct_transcript: one server per file, fed the ">>>" messages in order, each reply
// checked against its "<<<" line. The same file runs over stdio and over HTTP; the runner acts as
// a real client would on each transport (session header, protocol version header, DELETE at the
// end) so that a transcript only states what the protocol says, not how a transport carries it.
//
// A message that carries the per-request `_meta` of MCP 2026-07-28 (the stateless revision) is sent
// over HTTP as such a client sends it: with MCP-Protocol-Version, Mcp-Method and Mcp-Name taken from
// its body and no session header. `http-header` lines after a ">>>" change the headers of that one
// message (to test refusals); stdio ignores them.
//
// Setup lines ("---") come first: init, args, env, only, and `--- file PATH` followed by the
// file's lines, taken literally (blank lines, "#" lines and indentation kept, each written with a
// newline) up to a line that is exactly "---"; the file is written at PATH (relative, inside the
// project directory) after `--- init` and before the server starts.
#include "tests/transcript/mcp.h"

#include <httplib.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <expected>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "core/json_parse.h"
#include "core/text.h"

namespace ct::transcript {
namespace {

using Clock = std::chrono::steady_clock;

// ---- the transcript model ------------------------------------------------------------------

/// One ">>>" message and what must come back.
struct Exchange {
  int line = 0;         // the ">>>" line
  std::string message;  // sent verbatim
  int expect_line = 0;  // the "<<<" line; 0 while it is missing
  bool expect_none = false;
  Value expected;
  std::string expected_text;
  std::optional<int> http_status;
  int status_line = 0;
  /// "http-header NAME: VALUE" sets a header of this message's POST, "http-header NAME" leaves it out.
  std::vector<std::pair<std::string, std::optional<std::string>>> http_headers;
  /// "<<< notification {…}" lines: the notifications the server sends before the reply, in order
  /// (each a subset); "<<< notification none": it sends none. Without either, any are allowed.
  struct Notification {
    int line = 0;
    Value expected;
    std::string text;
  };
  std::vector<Notification> notifications;
  int no_notifications_line = 0;
};

/// A "--- file" block: written into the project before the server starts.
struct SetupFile {
  int line = 0;
  std::string path;     // relative to the project directory
  std::string content;
};

struct McpTranscript {
  std::string path;
  int init_line = 0;  // "--- init": run `ct init` before the server starts
  std::vector<SetupFile> files;
  std::vector<std::string> server_args;
  std::vector<std::pair<std::string, std::string>> env;
  std::optional<Transport> only;
  std::vector<Exchange> exchanges;
  int last_line = 0;
};

struct ParseError {
  int line = 0;
  std::string message;
};

/// A message the server sends unasked: an object with a method and no id.
bool is_notification(std::string_view text) {
  auto parsed = json::parse(text);
  return parsed && parsed->is_object() && parsed->contains("method") && !parsed->contains("id");
}

/// Ids the runner uses for its own requests (the stdio probe); transcripts must not use them.
constexpr std::string_view kReservedIdPrefix = "ct-transcript-";

/// ">>>", "<<<" and "---" take their text after exactly one space, like the CLI directives.
bool has_marker(std::string_view line, std::string_view marker) {
  return line.starts_with(marker) && (line.size() == marker.size() || line[marker.size()] == ' ');
}

std::expected<McpTranscript, ParseError> parse_mcp_transcript(const std::string& path) {
  auto source = read_source_lines(path);
  if (!source) return std::unexpected(ParseError{0, "cannot open file"});
  McpTranscript transcript;
  transcript.path = path;

  int block_end = 0;  // the closing "---" of a file block: lines up to it were consumed
  for (const auto& source_line : source->lines) {
    const int line_number = source_line.number;
    if (line_number <= block_end) continue;
    std::string_view line = source_line.text;

    auto error = [&](std::string message) {
      return std::unexpected(ParseError{line_number, std::move(message)});
    };
    Exchange* current = transcript.exchanges.empty() ? nullptr : &transcript.exchanges.back();
    auto missing_reply = [&] {
      return error("the message on line " + std::to_string(current->line) + " has no \"<<<\" line");
    };

    if (has_marker(line, ">>>")) {
      std::string_view message = rest_after(line, 3);
      if (message.empty()) return error("\">>>\" needs a message");
      if (current && current->expect_line == 0) return missing_reply();
      Exchange exchange;
      exchange.line = line_number;
      exchange.message = std::string(message);
      transcript.exchanges.push_back(std::move(exchange));
      continue;
    }

    if (has_marker(line, "<<<") && rest_after(line, 3).starts_with("notification")) {
      std::string_view text = rest_after(rest_after(line, 3), std::string_view("notification").size());
      if (!current) return error("\"<<< notification\" before any \">>>\" message");
      if (current->expect_line != 0)
        return error("\"<<< notification\" lines come before the reply's \"<<<\" line (line " +
                     std::to_string(current->expect_line) + "): the server sends them first");
      if (text == "none") {
        if (!current->notifications.empty()) return error("\"<<< notification none\" after expected notifications");
        current->no_notifications_line = line_number;
        continue;
      }
      if (current->no_notifications_line) return error("a notification after \"<<< notification none\"");
      auto parsed = json::parse(text);
      if (!parsed) return error("\"<<< notification\" needs `none` or a JSON subset: " + parsed.error().message);
      current->notifications.push_back({line_number, std::move(*parsed), std::string(text)});
      continue;
    }

    if (has_marker(line, "<<<")) {
      if (!current) return error("\"<<<\" before any \">>>\" message");
      if (current->expect_line != 0)
        return error("the message on line " + std::to_string(current->line) + " already has its \"<<<\" (line " +
                     std::to_string(current->expect_line) + "); one reply per message");
      std::string_view text = rest_after(line, 3);
      current->expect_line = line_number;
      if (text == "none") {
        current->expect_none = true;
        current->expected_text = "none";
        continue;
      }
      auto parsed = json::parse(text);
      if (!parsed) return error("\"<<<\" needs `none` or a JSON subset: " + parsed.error().message);
      current->expected = std::move(*parsed);
      current->expected_text = std::string(text);
      continue;
    }

    if (has_marker(line, "---")) {
      if (!transcript.exchanges.empty()) return error("setup lines (\"---\") come before the first \">>>\"");
      std::string_view directive = rest_after(line, 3);
      std::string_view word = directive.substr(0, directive.find_first_of(" \t"));
      std::string_view argument = rest_after(directive, word.size());
      if (word == "init") {
        if (!argument.empty()) return error("\"--- init\" takes no argument");
        transcript.init_line = line_number;
      } else if (word == "args") {
        auto words = split_command(argument);
        if (!words) return error(words.error());
        if (words->empty()) return error("\"--- args\" needs server arguments, e.g. --- args --read-only");
        transcript.server_args.insert(transcript.server_args.end(), words->begin(), words->end());
      } else if (word == "env") {
        auto equals = argument.find('=');
        if (equals == std::string_view::npos) return error("expected: --- env NAME=value");
        std::string_view name = argument.substr(0, equals);
        if (!valid_env_name(name)) return error("invalid environment variable name '" + std::string(name) + "'");
        transcript.env.emplace_back(std::string(name), std::string(argument.substr(equals + 1)));
      } else if (word == "file") {
        const std::string relative(trim(argument));
        const fs::path normal = fs::path(relative).lexically_normal();
        if (relative.empty() || normal.is_absolute() || normal.empty() || *normal.begin() == ".." ||
            normal.filename().empty())
          return error("\"--- file\" needs a file path inside the project, e.g. --- file docs/out.md");
        SetupFile file{line_number, normal.generic_string(), ""};
        int end = line_number;
        while (end < static_cast<int>(source->raw.size()) && source->raw[static_cast<std::size_t>(end)] != "---") {
          file.content += source->raw[static_cast<std::size_t>(end)] + "\n";
          ++end;
        }
        if (end >= static_cast<int>(source->raw.size()))
          return error("\"--- file\" has no closing line \"---\" (a line that is exactly ---)");
        block_end = end + 1;  // 1-based number of the closing line
        transcript.files.push_back(std::move(file));
      } else if (word == "only") {
        if (transcript.only) return error("more than one \"--- only\"");
        if (argument == "stdio") transcript.only = Transport::Stdio;
        else if (argument == "http") transcript.only = Transport::Http;
        else return error("expected: --- only stdio, or --- only http");
      } else {
        return error("unknown setup line '--- " + std::string(word) + "' (expected init, args, env, file or only)");
      }
      continue;
    }

    std::string_view word = line.substr(0, line.find_first_of(" \t"));
    if (word == "http-header") {
      if (!current || current->expect_line != 0)
        return error("\"http-header\" belongs after a \">>>\" line, before its \"<<<\"");
      std::string_view header = trim(rest_after(line, word.size()));
      auto colon = header.find(':');
      std::string name(trim(header.substr(0, colon)));
      if (name.empty() || name.find_first_of(" \t") != std::string::npos)
        return error("expected: http-header NAME: VALUE, or http-header NAME to leave it out");
      if (colon == std::string_view::npos)
        current->http_headers.emplace_back(std::move(name), std::nullopt);
      else
        current->http_headers.emplace_back(std::move(name), std::string(trim(header.substr(colon + 1))));
      continue;
    }
    if (word == "http-status") {
      if (!current || current->expect_line == 0) return error("\"http-status\" belongs after a \"<<<\" line");
      if (current->http_status) return error("more than one http-status for this message");
      std::string digits(trim(rest_after(line, word.size())));
      char* end = nullptr;
      long value = std::strtol(digits.c_str(), &end, 10);
      if (digits.empty() || *end != '\0' || value < 100 || value > 599) return error("expected: http-status <100-599>");
      current->http_status = static_cast<int>(value);
      current->status_line = line_number;
      continue;
    }
    return error("unknown directive '" + std::string(word) + "' (expected >>>, <<<, http-header, http-status, --- or #)");
  }
  transcript.last_line = source->line_count;
  if (transcript.exchanges.empty())
    return std::unexpected(ParseError{source->line_count, "no \">>>\" messages"});
  if (transcript.exchanges.back().expect_line == 0)
    return std::unexpected(ParseError{transcript.exchanges.back().line, "this message has no \"<<<\" line"});
  return transcript;
}

// ---- the transports ------------------------------------------------------------------------

/// What came back for one message.
struct Reply {
  bool none = false;         // no reply: stdio, the probe's reply came first; HTTP, 202 with no body
  std::string text;          // the reply line (stdio) or body (HTTP)
  std::vector<std::string> notifications;  // what the server sent before it (messages with no id)
  int status = 0;            // HTTP status; 0 over stdio
  std::string content_type;  // HTTP only
  std::string failure;       // nothing could be read: a timeout, a closed stream, a refused connection
};

/// Where the server runs and how to reach it.
struct ServerSetup {
  std::string ct_path;
  fs::path project;
  fs::path root;
  std::vector<std::string> environment;
  std::vector<std::string> args;  // from "--- args"
  std::chrono::milliseconds timeout;
};

class McpServer {
 public:
  explicit McpServer(ServerSetup setup) : setup_(std::move(setup)) {}
  virtual ~McpServer() { kill_child(child_); }
  McpServer(const McpServer&) = delete;
  McpServer& operator=(const McpServer&) = delete;

  /// Starts the server; the error says why it is not serving.
  virtual std::optional<std::string> start() = 0;
  virtual Reply exchange(const Exchange& exchange) = 0;
  /// Ends the session the way a client does and checks that the server exits cleanly.
  virtual std::optional<std::string> finish() = 0;

  /// The command line, for the report.
  std::string command() const {
    std::string text;
    for (const auto& word : argv_) text += (text.empty() ? "" : " ") + word;
    return text;
  }
  std::string stderr_text() const { return read_file(stderr_file()); }

 protected:
  fs::path stderr_file() const { return setup_.root / "server.stderr"; }
  std::optional<std::string> spawn(std::vector<std::string> argv, const ChildStdio& stdio) {
    argv_ = std::move(argv);
    argv_.insert(argv_.end(), setup_.args.begin(), setup_.args.end());
    auto child = start_child(setup_.ct_path, argv_, setup_.environment, setup_.project.string(), stdio);
    if (!child) return child.error();
    child_ = *child;
    return std::nullopt;
  }
  std::string seconds() const { return format_seconds(setup_.timeout) + " s"; }

  ServerSetup setup_;
  Child child_;
  std::vector<std::string> argv_;
};

/// `ct mcp`: one JSON-RPC message per line on stdin, one reply per line on stdout.
class StdioServer final : public McpServer {
 public:
  using McpServer::McpServer;

  std::optional<std::string> start() override {
    ChildStdio stdio;
    stdio.pipe_stdin = true;
    stdio.pipe_stdout = true;
    stdio.stderr_file = stderr_file();
    return spawn({setup_.ct_path, "mcp", "--project", setup_.project.string()}, stdio);
  }

  Reply exchange(const Exchange& exchange) override {
    Reply reply;
    const auto deadline = Clock::now() + setup_.timeout;
    if (auto failed = write_line(exchange.message, deadline)) {
      reply.failure = *failed;
      return reply;
    }
    // The server answers in order, so a ping sent after a message is answered after anything the
    // message caused: when the ping's reply comes first, the message got no reply.
    if (!exchange.expect_none) {
      // Usually the reply is there at once; after a grace period a probe tells "none" from "slow".
      bool timed_out = false;
      auto line = next_reply(std::min(deadline, Clock::now() + std::chrono::seconds(1)), reply.failure, timed_out,
                             reply.notifications);
      if (line) {
        reply.text = std::move(*line);
        return reply;
      }
      if (!timed_out) return reply;
      reply.failure.clear();
    }
    std::string probe_id;
    if (auto failed = send_probe(deadline, probe_id)) {
      reply.failure = *failed;
      return reply;
    }
    bool timed_out = false;
    auto line = next_reply(deadline, reply.failure, timed_out, reply.notifications);
    if (!line) {
      reply.failure += " (waiting for the reply to the runner's ping " + probe_id + ")";
      return reply;
    }
    if (probe_id_of(*line) == probe_id) {
      reply.none = true;  // for a message that expects a reply, check_reply reports it
      return reply;
    }
    stale_probes_.push_back(probe_id);  // its reply is still to come; skip it then
    reply.text = std::move(*line);
    return reply;
  }

  std::optional<std::string> finish() override {
    close_fd(child_.in);  // a client that is done closes stdin; the server must exit 0
    auto status = wait_child(child_.pid, setup_.timeout);
    if (!status) return "`ct mcp` did not exit within " + seconds() + " after its stdin closed";
    drain(child_.out, buffer_);
    std::string unexpected;  // whatever is left but the late replies to the runner's probes
    std::size_t start = 0;
    while (start < buffer_.size()) {
      auto end = buffer_.find('\n', start);
      std::string line = buffer_.substr(start, end == std::string::npos ? std::string::npos : end - start + 1);
      start = end == std::string::npos ? buffer_.size() : end + 1;
      auto stale = std::find(stale_probes_.begin(), stale_probes_.end(), probe_id_of(std::string(trim(line))));
      if (stale != stale_probes_.end()) stale_probes_.erase(stale);
      else unexpected += line;
    }
    if (!unexpected.empty()) return "unexpected output after the last reply: " + quote(unexpected.substr(0, 300));
    if (status->exit_code != 0) return "`ct mcp` ended with " + describe(*status) + " after its stdin closed (0 expected)";
    return std::nullopt;
  }

 private:
  std::optional<std::string> write_line(std::string text, Clock::time_point deadline) {
    text += '\n';
    std::size_t written = 0;
    while (written < text.size()) {
      if (child_.in < 0) return "the server's stdin is closed";
      auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (remaining.count() <= 0) return "the server did not read its stdin within " + seconds();
      pollfd fd{child_.in, POLLOUT, 0};
      int ready = ::poll(&fd, 1, static_cast<int>(remaining.count()));
      if (ready < 0 && errno != EINTR) return "poll: " + errno_text(errno);
      if (ready <= 0) continue;
      ssize_t n = ::write(child_.in, text.data() + written, text.size() - written);
      if (n > 0) {
        written += static_cast<std::size_t>(n);
      } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
        return "cannot write to the server's stdin: " + errno_text(errno) + exit_note();
      }
    }
    return std::nullopt;
  }

  /// The next line of stdout (without its newline), or nullopt with `failure` set (and
  /// `timed_out` when the deadline passed).
  std::optional<std::string> read_line(Clock::time_point deadline, std::string& failure, bool& timed_out) {
    while (true) {
      if (auto newline = buffer_.find('\n'); newline != std::string::npos) {
        std::string line = buffer_.substr(0, newline);
        buffer_.erase(0, newline + 1);
        if (!line.empty() && line.back() == '\r') line.pop_back();
        return line;
      }
      if (child_.out < 0) {
        failure = "the server closed its stdout" + exit_note();
        if (!buffer_.empty()) failure += "; it wrote an unfinished line " + quote(buffer_.substr(0, 300));
        return std::nullopt;
      }
      auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (remaining.count() <= 0) {
        failure = "no reply within " + seconds();
        timed_out = true;
        return std::nullopt;
      }
      pollfd fd{child_.out, POLLIN, 0};
      int ready = ::poll(&fd, 1, static_cast<int>(remaining.count()));
      if (ready < 0 && errno != EINTR) {
        failure = "poll: " + errno_text(errno);
        return std::nullopt;
      }
      if (ready > 0) drain(child_.out, buffer_);
    }
  }

  /// The next line that is not the late reply to an earlier probe, nor a notification (a message
  /// with a method and no id: those go to `notifications`, in order).
  std::optional<std::string> next_reply(Clock::time_point deadline, std::string& failure, bool& timed_out,
                                        std::vector<std::string>& notifications) {
    while (true) {
      auto line = read_line(deadline, failure, timed_out);
      if (!line) return line;
      if (is_notification(*line)) {
        notifications.push_back(std::move(*line));
        continue;
      }
      auto stale = std::find(stale_probes_.begin(), stale_probes_.end(), probe_id_of(*line));
      if (stale == stale_probes_.end()) return line;
      stale_probes_.erase(stale);
    }
  }

  std::optional<std::string> send_probe(Clock::time_point deadline, std::string& probe_id) {
    probe_id = std::string(kReservedIdPrefix) + "probe-" + std::to_string(++probes_);
    return write_line(R"({"jsonrpc":"2.0","id":")" + probe_id + R"(","method":"ping"})", deadline);
  }

  /// The id of a probe's reply, or "" for any other line.
  static std::string probe_id_of(const std::string& line) {
    if (line.find(kReservedIdPrefix) == std::string::npos) return "";
    auto parsed = json::parse(line);
    if (!parsed || !parsed->is_object() || !(*parsed)["id"].is_string()) return "";
    const std::string& id = (*parsed)["id"].as_string();
    return id.starts_with(kReservedIdPrefix) ? id : "";
  }

  std::string exit_note() const {
    auto status = wait_child(child_.pid, std::chrono::milliseconds(200));
    return status ? " (it ended with " + describe(*status) + ")" : "";
  }

  std::string buffer_;  // stdout read but not consumed yet
  int probes_ = 0;
  std::vector<std::string> stale_probes_;  // probes whose replies are still to come
};

/// The data of each event of a text/event-stream body (a server may answer a POST that way).
std::vector<std::string> sse_data(const std::string& body) {
  std::vector<std::string> events;
  std::string data;
  bool any = false;
  std::size_t start = 0;
  while (start <= body.size()) {
    auto end = body.find('\n', start);
    std::string line = body.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() && any) {
      events.push_back(std::exchange(data, std::string()));
      any = false;
    }
    if (line.starts_with("data:")) {
      std::string_view value = std::string_view(line).substr(5);
      if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
      if (any) data += '\n';
      data += value;
      any = true;
    }
    if (end == std::string::npos) break;
    start = end + 1;
  }
  if (any) events.push_back(std::move(data));
  return events;
}

/// `ct serve --port 0`: each message is one POST to the endpoint it prints.
class HttpServer final : public McpServer {
 public:
  using McpServer::McpServer;

  std::optional<std::string> start() override {
    ChildStdio stdio;
    stdio.stdout_file = setup_.root / "server.stdout";
    stdio.stderr_file = stderr_file();
    if (auto failed = spawn({setup_.ct_path, "serve", "--project", setup_.project.string(), "--port", "0"}, stdio))
      return failed;

    // The first line naming the endpoint (an "Initialised …" line may come before it).
    constexpr std::string_view kPrefix = "CLEO MCP server: ";
    const auto deadline = Clock::now() + setup_.timeout;
    std::string url;
    while (url.empty()) {
      std::string out = read_file(stdio.stdout_file);
      std::size_t start = 0;
      for (auto end = out.find('\n'); end != std::string::npos; start = end + 1, end = out.find('\n', start)) {
        std::string_view line = std::string_view(out).substr(start, end - start);
        if (line.starts_with(kPrefix)) {
          url = std::string(trim(line.substr(kPrefix.size())));
          break;
        }
      }
      if (!url.empty()) break;
      if (auto status = wait_child(child_.pid, std::chrono::milliseconds(0)))
        return "`ct serve` ended with " + describe(*status) + " before printing \"" + std::string(kPrefix) +
               "URL\"; its stdout: " + quote(out.substr(0, 300));
      if (Clock::now() >= deadline)
        return "`ct serve` did not print \"" + std::string(kPrefix) + "URL\" within " + seconds() + "; its stdout: " +
               quote(out.substr(0, 300));
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }

    // http://HOST:PORT/PATH
    constexpr std::string_view kScheme = "http://";
    auto slash = url.find('/', kScheme.size());
    auto colon = url.rfind(':', slash);
    if (!url.starts_with(kScheme) || slash == std::string::npos || colon == std::string::npos || colon < kScheme.size())
      return "cannot read the endpoint " + quote(url) + " (expected http://HOST:PORT/PATH)";
    host_ = url.substr(kScheme.size(), colon - kScheme.size());
    if (host_.size() > 2 && host_.front() == '[' && host_.back() == ']') host_ = host_.substr(1, host_.size() - 2);
    port_ = std::atoi(url.substr(colon + 1, slash - colon - 1).c_str());
    path_ = url.substr(slash);
    if (port_ <= 0) return "cannot read the port of " + quote(url);
    url_ = url;

    client_ = std::make_unique<httplib::Client>(host_, port_);
    auto ms = setup_.timeout.count();
    client_->set_connection_timeout(ms / 1000, (ms % 1000) * 1000);
    client_->set_read_timeout(ms / 1000, (ms % 1000) * 1000);
    client_->set_write_timeout(ms / 1000, (ms % 1000) * 1000);
    return std::nullopt;
  }

  Reply exchange(const Exchange& exchange) override {
    Reply reply;
    auto result = client_->Post(path_, headers_for(exchange), exchange.message, "application/json");
    if (!result) {
      reply.failure = "POST " + url_ + " failed: " + httplib::to_string(result.error());
      if (auto status = wait_child(child_.pid, std::chrono::milliseconds(200)))
        reply.failure += " (the server ended with " + describe(*status) + ")";
      return reply;
    }
    reply.status = result->status;
    reply.content_type = result->get_header_value("Content-Type");
    reply.text = result->body;
    if (reply.content_type.starts_with("text/event-stream")) {
      // The reply is the first event that is not a notification; those before it are kept.
      reply.text.clear();
      for (auto& event : sse_data(result->body)) {
        if (!is_notification(event)) {
          reply.text = std::move(event);
          break;
        }
        reply.notifications.push_back(std::move(event));
      }
    }
    reply.none = reply.status == 202 && reply.text.empty();

    // As a client: keep the session the server issues, and send the negotiated version with
    // every later request.
    if (result->has_header("Mcp-Session-Id")) session_id_ = result->get_header_value("Mcp-Session-Id");
    if (auto parsed = json::parse(reply.text)) {
      auto take_version = [this](const Value& message) {
        if (message.is_object() && message["result"]["protocolVersion"].is_string())
          protocol_version_ = message["result"]["protocolVersion"].as_string();
      };
      if (parsed->is_array()) {
        for (const auto& item : parsed->as_array()) take_version(item);
      } else {
        take_version(*parsed);
      }
    }
    return reply;
  }

  std::optional<std::string> finish() override {
    if (!session_id_.empty()) {
      auto result = client_->Delete(path_, headers());
      if (!result) return "DELETE " + url_ + " (ending the session) failed: " + httplib::to_string(result.error());
      if (result->status != 204)
        return "DELETE " + url_ + " (ending the session) answered HTTP " + std::to_string(result->status) +
               " (204 expected): " + quote(result->body.substr(0, 300));
    }
    client_.reset();
    ::kill(child_.pid, SIGTERM);
    auto status = wait_child(child_.pid, setup_.timeout);
    if (!status) return "`ct serve` did not exit within " + seconds() + " after SIGTERM";
    if (status->exit_code != 0) return "`ct serve` ended with " + describe(*status) + " after SIGTERM (0 expected)";
    return std::nullopt;
  }

 private:
  httplib::Headers headers() const {
    httplib::Headers h{{"Accept", "application/json, text/event-stream"}};
    if (!session_id_.empty()) h.emplace("Mcp-Session-Id", session_id_);
    if (!protocol_version_.empty()) h.emplace("MCP-Protocol-Version", protocol_version_);
    return h;
  }

  /// The headers of one message's POST: a stateless message (2026-07-28) mirrors its body in
  /// them and carries no session; any other is sent within the session. Then the transcript's
  /// own `http-header` lines.
  httplib::Headers headers_for(const Exchange& exchange) const {
    httplib::Headers h;
    if (auto stateless = stateless_headers(exchange.message)) {
      h = std::move(*stateless);
    } else {
      h = headers();
    }
    for (const auto& [name, value] : exchange.http_headers) {
      for (auto it = h.begin(); it != h.end();) it = equal_ignoring_case(it->first, name) ? h.erase(it) : std::next(it);
      if (value) h.emplace(name, *value);
    }
    return h;
  }

  static bool equal_ignoring_case(std::string_view a, std::string_view b) {
    return to_lower_ascii(a) == to_lower_ascii(b);
  }

  static std::optional<httplib::Headers> stateless_headers(const std::string& message) {
    auto parsed = json::parse(message);
    if (!parsed || !parsed->is_object()) return std::nullopt;
    const Value& params = (*parsed)["params"];
    const Value* version = params["_meta"].find("io.modelcontextprotocol/protocolVersion");
    if (!version) return std::nullopt;
    httplib::Headers h{{"Accept", "application/json, text/event-stream"}};
    if (version->is_string()) h.emplace("MCP-Protocol-Version", version->as_string());
    const Value& method = (*parsed)["method"];
    if (method.is_string()) {
      h.emplace("Mcp-Method", method.as_string());
      const std::string& name = method.as_string();
      // What Mcp-Name mirrors: params.name, params.uri, or (the tasks extension) params.taskId.
      const bool task_method = name == "tasks/get" || name == "tasks/update" || name == "tasks/cancel";
      const Value& named = name == "resources/read" ? params["uri"] : task_method ? params["taskId"] : params["name"];
      if ((name == "tools/call" || name == "prompts/get" || name == "resources/read" || task_method) && named.is_string())
        h.emplace("Mcp-Name", named.as_string());
    }
    return h;
  }

  std::string host_;
  int port_ = 0;
  std::string path_;
  std::string url_;
  std::unique_ptr<httplib::Client> client_;
  std::string session_id_;
  std::string protocol_version_;
};

// ---- checking ------------------------------------------------------------------------------

/// The JSON-RPC rules every single reply must keep, whatever the transcript expects.
std::optional<std::string> check_message(const Value& reply, const Value* request_id, bool stateless) {
  if (!reply.is_object()) return "a reply must be a JSON object, got " + describe(reply);
  if (reply["jsonrpc"] != Value("2.0")) return "$.jsonrpc must be \"2.0\"";
  const Value* id = reply.find("id");
  if (!id) return "$.id is missing";
  const Value* result = reply.find("result");
  const Value* error = reply.find("error");
  // An error may carry id null when the id could not be read (or the transport refused the
  // request before reading it); anything else echoes the request's id.
  if (request_id && !(*id == *request_id) && !(error && id->is_null()))
    return "$.id is " + describe(*id) + ", not the request's id " + describe(*request_id) +
           " (ids are echoed with their type unchanged)";
  if ((result != nullptr) == (error != nullptr)) return "a reply has exactly one of result and error";
  if (error && (!error->is_object() || !(*error)["code"].is_int() || !(*error)["message"].is_string()))
    return "$.error needs an integer code and a string message, got " + describe(*error);
  if (stateless && result && (!result->is_object() || !(*result)["resultType"].is_string()))
    return "$.result.resultType is required in a reply to a request with _meta (2026-07-28)";
  if (!result || !result->is_object() || !result->contains("structuredContent")) return std::nullopt;

  // A tool result: the envelope as structuredContent, mirrored as compact JSON in one text block,
  // and isError exactly when the envelope says success:false.
  const Value& structured = (*result)["structuredContent"];
  const Value& content = (*result)["content"];
  if (!content.is_array() || content.size() != 1 || content.as_array()[0]["type"] != Value("text") ||
      !content.as_array()[0]["text"].is_string())
    return "$.result.content must be one {type:\"text\", text} block, got " + describe(content);
  const std::string& text = content.as_array()[0]["text"].as_string();
  auto mirrored = json::parse(text);
  if (!mirrored || !(*mirrored == structured))
    return "$.result.content[0].text is not structuredContent as JSON: " + quote(text.substr(0, 200));
  if (mirrored->dump() != text) return "$.result.content[0].text is not compact JSON: " + quote(text.substr(0, 200));
  const Value& success = structured["success"];
  const Value& is_error = (*result)["isError"];
  if (!success.is_bool() || !is_error.is_bool() || is_error.as_bool() == success.as_bool())
    return "$.result.isError must be the opposite of structuredContent.success, got isError " + describe(is_error) +
           " and success " + describe(success);
  return std::nullopt;
}

std::optional<std::string> check_protocol(std::string_view sent, const Value& reply) {
  if (reply.is_array()) {  // a batch reply
    if (reply.empty()) return "a batch reply must not be an empty array";
    for (std::size_t i = 0; i < reply.size(); ++i)
      if (auto why = check_message(reply.as_array()[i], nullptr, false)) return "[" + std::to_string(i) + "]: " + *why;
    return std::nullopt;
  }
  const Value* request_id = nullptr;
  bool stateless = false;
  auto request = json::parse(sent);
  if (request && request->is_object()) {
    const Value* id = request->find("id");
    if (id && (id->is_string() || id->is_number())) request_id = id;
    stateless = (*request)["params"]["_meta"].contains("io.modelcontextprotocol/protocolVersion");
  }
  return check_message(reply, request_id, stateless);
}

std::vector<std::pair<int, std::string>> check_reply(const Exchange& exchange, const Reply& reply,
                                                     Transport transport) {
  std::vector<std::pair<int, std::string>> failures;
  if (!reply.failure.empty()) {
    failures.emplace_back(exchange.expect_line, reply.failure);
    return failures;
  }
  std::string http = transport == Transport::Http ? " (HTTP " + std::to_string(reply.status) + ")" : "";
  if (exchange.expect_none) {
    if (!reply.none) {
      if (reply.text.empty())
        failures.emplace_back(exchange.expect_line, "expected no reply (HTTP 202 with an empty body), got HTTP " +
                                                        std::to_string(reply.status) + " with an empty body");
      else
        failures.emplace_back(exchange.expect_line, "expected no reply, got one" + http);
    }
  } else if (reply.none || reply.text.empty()) {
    failures.emplace_back(exchange.expect_line,
                          "expected a reply, got none" +
                              (transport == Transport::Stdio ? " (the runner's ping, sent after it, was answered first)" : http));
  } else if (auto parsed = json::parse(reply.text); !parsed) {
    failures.emplace_back(exchange.expect_line, "the reply is not valid JSON (" + parsed.error().message + ")" + http);
  } else {
    if (auto why = check_protocol(exchange.message, *parsed))
      failures.emplace_back(exchange.expect_line, "the reply breaks JSON-RPC/MCP: " + *why);
    std::string why;
    if (!json_matches(*parsed, exchange.expected, "$", why))
      failures.emplace_back(exchange.expect_line, "json mismatch at " + why);
    if (transport == Transport::Http && !reply.content_type.starts_with("application/json") &&
        !reply.content_type.starts_with("text/event-stream"))
      failures.emplace_back(exchange.expect_line, "Content-Type is " + quote(reply.content_type) +
                                                      ", expected application/json or text/event-stream");
  }
  if (exchange.no_notifications_line && !reply.notifications.empty())
    failures.emplace_back(exchange.no_notifications_line, "expected no notification before the reply, got " +
                                                              quote(reply.notifications.front().substr(0, 300)));
  if (!exchange.notifications.empty()) {
    if (reply.notifications.size() != exchange.notifications.size()) {
      failures.emplace_back(exchange.notifications.front().line,
                            "expected " + std::to_string(exchange.notifications.size()) +
                                " notifications before the reply, got " + std::to_string(reply.notifications.size()));
    } else {
      for (std::size_t i = 0; i < exchange.notifications.size(); ++i) {
        auto parsed = json::parse(reply.notifications[i]);
        std::string why;
        if (!parsed || !json_matches(*parsed, exchange.notifications[i].expected, "$", why))
          failures.emplace_back(exchange.notifications[i].line,
                                "notification mismatch at " + (parsed ? why : std::string("(not JSON)")) + ": got " +
                                    quote(reply.notifications[i].substr(0, 300)));
      }
    }
  }
  if (transport == Transport::Http && exchange.http_status && reply.status != *exchange.http_status)
    failures.emplace_back(exchange.status_line, "expected HTTP status " + std::to_string(*exchange.http_status) +
                                                    ", got " + std::to_string(reply.status));
  return failures;
}

// ---- the run -------------------------------------------------------------------------------

void print_server(std::ostream& os, const McpServer& server) {
  os << "  server: " << server.command() << "\n";
  print_stream(os, "server stderr", server.stderr_text());
}

}  // namespace

int run_mcp_transcript(const std::string& path, const Options& options) {
  const Transport transport = *options.mcp;
  const std::string tag = " [" + std::string(to_string(transport)) + "]";
  auto transcript = parse_mcp_transcript(path);
  if (!transcript) {
    std::cerr << path << ":" << transcript.error().line << ": error: " << transcript.error().message << "\n";
    return 2;
  }
  if (transcript->only && *transcript->only != transport) {
    std::cout << path << tag << ": skipped (--- only " << to_string(*transcript->only) << ")\n";
    return kSkipped;
  }
  for (const auto& exchange : transcript->exchanges) {
    if (exchange.message.find(std::string("\"") + std::string(kReservedIdPrefix)) != std::string::npos) {
      std::cerr << path << ":" << exchange.line << ": error: ids starting with \"" << kReservedIdPrefix
                << "\" are reserved for the runner\n";
      return 2;
    }
  }

  auto sandbox = make_sandbox(options);
  if (!sandbox) {
    std::cerr << "error: " << sandbox.error() << "\n";
    return 2;
  }
  const fs::path project = sandbox->root / "project";
  std::error_code ec;
  fs::create_directories(project, ec);

  auto fail_setup = [&](int line, const std::string& why, const McpServer* server) {
    std::cerr << path << ":" << line << ": FAIL" << tag << ": " << why << "\n";
    if (server) print_server(std::cerr, *server);
    finish_sandbox(*sandbox, options, true);
    std::cout << path << tag << ": FAILED before the first message\n";
    return 1;
  };

  if (transcript->init_line) {
    Outcome init = run_process(options.ct_path, {options.ct_path, "init"}, sandbox->env.entries(), project.string(),
                               "", options.timeout);
    if (!init.start_error.empty() || init.timed_out || init.exit_code != 0) {
      std::string why = !init.start_error.empty() ? init.start_error
                        : init.timed_out          ? "`ct init` timed out"
                                                  : "`ct init` ended with " +
                                                       describe(ExitStatus{init.exit_code, init.signal});
      std::cerr << path << ":" << transcript->init_line << ": FAIL" << tag << ": " << why << "\n";
      print_stream(std::cerr, "stdout", init.out);
      print_stream(std::cerr, "stderr", init.err);
      finish_sandbox(*sandbox, options, true);
      std::cout << path << tag << ": FAILED before the first message\n";
      return 1;
    }
  }

  for (const auto& file : transcript->files) {
    const fs::path target = project / file.path;
    fs::create_directories(target.parent_path(), ec);
    std::ofstream out(target, std::ios::binary);
    out << file.content;
    if (!out.flush()) return fail_setup(file.line, "cannot write " + target.string(), nullptr);
  }

  // "--- env" is for the server; `ct init` above ran in the plain sandbox environment.
  for (const auto& [name, value] : transcript->env) sandbox->env.set(name, value);
  ServerSetup setup{options.ct_path, project, sandbox->root, sandbox->env.entries(), transcript->server_args,
                    options.timeout};
  std::unique_ptr<McpServer> server;
  if (transport == Transport::Stdio) server = std::make_unique<StdioServer>(std::move(setup));
  else server = std::make_unique<HttpServer>(std::move(setup));
  if (auto failed = server->start()) return fail_setup(transcript->exchanges.front().line, *failed, server.get());
  if (options.verbose) std::cout << path << tag << ": " << server->command() << "\n";

  const std::size_t total = transcript->exchanges.size();
  std::size_t sent = 0;
  int expectations = 0;
  bool failed = false;
  for (const auto& exchange : transcript->exchanges) {
    ++sent;
    Reply reply = server->exchange(exchange);
    auto failures = check_reply(exchange, reply, transport);
    expectations += 1 + (transport == Transport::Http && exchange.http_status ? 1 : 0) +
                    static_cast<int>(exchange.notifications.size()) + (exchange.no_notifications_line ? 1 : 0);
    if (options.verbose) {
      std::cout << path << ":" << exchange.line << ": >>> " << exchange.message << "\n";
      for (const auto& notification : reply.notifications) std::cout << "  <<< notification " << notification << "\n";
      if (reply.none) std::cout << "  <<< none\n";
      else if (reply.failure.empty()) std::cout << "  <<< " << reply.text << "\n";
      if (transport == Transport::Http) std::cout << "  HTTP " << reply.status << "\n";
    }
    if (failures.empty()) continue;

    failed = true;
    for (const auto& [line, why] : failures) std::cerr << path << ":" << line << ":" << " FAIL" << tag << ": " << why << "\n";
    std::cerr << "  message (" << path << ":" << exchange.line << "): " << exchange.message << "\n";
    std::cerr << "  expected: " << exchange.expected_text << "\n";
    if (transport == Transport::Http) {
      std::cerr << "  HTTP status: " << reply.status;
      if (exchange.http_status) std::cerr << " (expected " << *exchange.http_status << ")";
      std::cerr << "\n";
    }
    for (const auto& notification : reply.notifications) print_stream(std::cerr, "notification", notification);
    if (reply.none) std::cerr << "  reply: none\n";
    else if (reply.failure.empty()) print_stream(std::cerr, "reply", reply.text);
    print_server(std::cerr, *server);
    break;
  }

  if (!failed) {
    if (auto why = server->finish()) {
      failed = true;
      std::cerr << path << ":" << transcript->last_line << ": FAIL" << tag << ": " << why.value() << "\n";
      print_server(std::cerr, *server);
    }
  }
  server.reset();  // kills whatever is left of the server's process group
  finish_sandbox(*sandbox, options, failed);
  if (failed) {
    std::cout << path << tag << ": FAILED after " << sent << " of " << total << " messages\n";
    return 1;
  }
  std::cout << path << tag << ": " << total << " messages, " << expectations << " expectations, all passed\n";
  return 0;
}

}  // namespace ct::transcript
