#include "gateway/stdio_transport.h"

#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <string>
#include <string_view>

#include "core/log.h"
#include "core/text.h"
#include "gateway/outbox.h"

namespace ct::mcp {
namespace {

/// Reads newline-delimited messages with bounded memory: a line longer than `limit` is not kept —
/// its bytes are skipped up to the next newline and it is reported as oversized.
class LineReader {
 public:
  LineReader(int fd, std::size_t limit) : fd_(fd), limit_(limit) {}

  enum class Status { Line, Oversized, End };

  /// The next line, without its newline (and a trailing \r).
  Status next(std::string& line) {
    line.clear();
    bool oversized = false;
    while (true) {
      if (start_ == end_ && !fill()) {
        // End of input: a last line without a newline still counts.
        if (oversized) return Status::Oversized;
        if (line.empty()) return Status::End;
        strip(line);
        return Status::Line;
      }
      std::string_view chunk(buffer_ + start_, end_ - start_);
      std::size_t newline = chunk.find('\n');
      std::string_view piece = chunk.substr(0, newline);
      if (!oversized) {
        if (line.size() + piece.size() > limit_) {
          oversized = true;
          line.clear();
          line.shrink_to_fit();
        } else {
          line.append(piece);
        }
      }
      if (newline == std::string_view::npos) {
        start_ = end_;
        continue;
      }
      start_ += newline + 1;
      if (oversized) return Status::Oversized;
      strip(line);
      return Status::Line;
    }
  }

 private:
  static void strip(std::string& line) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
  }

  bool fill() {
    while (true) {
      ssize_t n = ::read(fd_, buffer_, sizeof buffer_);
      if (n > 0) {
        start_ = 0;
        end_ = static_cast<std::size_t>(n);
        return true;
      }
      if (n < 0 && errno == EINTR) continue;
      return false;
    }
  }

  int fd_;
  std::size_t limit_;
  char buffer_[64 * 1024];
  std::size_t start_ = 0;
  std::size_t end_ = 0;
};

}  // namespace

int serve_stdio(const Protocol& protocol, Router& router, std::FILE* in, std::FILE* out) {
  // A client that goes away must not kill the server mid-write: EPIPE is an error value here,
  // and the loop ends cleanly.
  std::signal(SIGPIPE, SIG_IGN);
  std::fflush(out);
  // Replies, notifications and late replies (a task's result) all go through one outbox, so that
  // lines written by several threads never interleave.
  auto outbox = std::make_shared<LineOutbox>(::fileno(out));
  Connection connection;
  connection.outbox = outbox;
  connection.task_owner = "stdio";
  // This process is one connection: one agent, whatever name it gives.
  connection.principal = Principal::agent("stdio:" + random_hex(6), "connection");
  connection.place = process_place();  // this process works in its working directory's git work tree
  LineReader reader(::fileno(in), kMaxMessageBytes);
  log::info("serving MCP on stdio");
  std::string line;
  while (true) {
    LineReader::Status status = reader.next(line);
    if (status == LineReader::Status::End) break;  // the client closed stdin
    std::string reply;
    if (status == LineReader::Status::Oversized) {
      // The message was not kept (its id cannot be known): one error, then the next line.
      reply = rpc_error("null", RpcError::InvalidRequest, "Invalid Request: message larger than 16 MiB");
    } else {
      if (line.find_first_not_of(" \t") == std::string::npos) continue;
      Outcome outcome = protocol.handle(line, connection, router);
      if (!outcome.reply) continue;
      reply = std::move(*outcome.reply);
      // The call's log (notifications/message) goes out before the reply it is about.
      for (const auto& notification : outcome.notifications) outbox->send(notification);
    }
    if (!outbox->send(reply)) {
      log::warn("stdout closed; stopping");
      break;
    }
  }
  // The client is gone: its session's claim must not wait for the lease.
  if (std::string suspended = protocol.disconnect(connection, router, "the MCP client disconnected (stdio closed)");
      !suspended.empty())
    log::info("session " + suspended + " suspended; its claim released");
  log::info("stdin closed; exiting");
  return 0;
}

}  // namespace ct::mcp
