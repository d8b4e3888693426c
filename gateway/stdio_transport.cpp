#include "gateway/stdio_transport.h"

#include <cstdlib>
#include <string>
#include <string_view>

#include "core/log.h"

namespace ct::mcp {

int serve_stdio(const Protocol& protocol, Router& router, std::FILE* in, std::FILE* out) {
  Connection connection;
  char* buffer = nullptr;
  std::size_t capacity = 0;
  log::info("serving MCP on stdio");
  while (true) {
    ssize_t length = getline(&buffer, &capacity, in);
    if (length < 0) break;  // end of input: the client closed stdin
    std::string_view line(buffer, static_cast<std::size_t>(length));
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
    std::string reply;
    if (line.size() > kMaxMessageBytes) {
      reply = rpc_error("null", RpcError::InvalidRequest, "Invalid Request: message larger than 16 MiB");
    } else {
      Outcome outcome = protocol.handle(line, connection, router);
      if (!outcome.reply) continue;
      reply = std::move(*outcome.reply);
    }
    reply += '\n';
    if (std::fwrite(reply.data(), 1, reply.size(), out) != reply.size() || std::fflush(out) != 0) {
      log::warn("stdout closed; stopping");
      break;
    }
  }
  std::free(buffer);
  log::info("stdin closed; exiting");
  return 0;
}

}  // namespace ct::mcp
