// MCP over stdio: newline-delimited JSON-RPC on stdin/stdout; logs on stderr; returns when stdin closes.
#pragma once

#include <cstddef>
#include <cstdio>

#include "domains/router.h"
#include "gateway/mcp_protocol.h"

namespace ct::mcp {

inline constexpr std::size_t kMaxMessageBytes = 16 * 1024 * 1024;

/// Serves one connection until end of input. Returns 0 on a clean end of input.
int serve_stdio(const Protocol& protocol, Router& router, std::FILE* in, std::FILE* out);

}  // namespace ct::mcp
