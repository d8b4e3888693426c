// MCP transcripts (tests/transcripts/<area>/<case>.test): JSON-RPC messages sent to a real server
// and the expected replies, replayed over stdio (`ct mcp`) or Streamable HTTP (`ct serve`).
// The format is described in tests/transcript/README.md.
#pragma once

#include <string>

#include "tests/transcript/common.h"

namespace ct::transcript {

/// Replays one MCP transcript over `*options.mcp`. Returns 0 when every expectation holds, 1 on
/// a failure, 2 on a setup or format error, kSkipped when the file is `--- only` the other transport.
int run_mcp_transcript(const std::string& path, const Options& options);

}  // namespace ct::transcript
