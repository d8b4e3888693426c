// `ct briefing --hook <host>` as an agent host's session-start hook runs it: once per firing. A
// host runs every hook its settings declare — a team's in the project, a person's own in their
// home — for the same start, so two of CLEO's hooks would load the briefing twice. Each hook reads
// what the host writes on its stdin (its session id and the start's source: providers::hook_firing),
// and the first of a firing's hooks to claim it briefs; the others print what says nothing.
#pragma once

#include <chrono>
#include <filesystem>
#include <string_view>

#include "core/json.h"

namespace ct::cli {

/// The JSON a host writes on a hook's stdin (`fd`): read until end of file, at most 1 MiB and
/// within `deadline`. Null when `fd` is a terminal (a person typed the command), or the input is
/// empty, late, too long or not JSON — the hook then briefs as it would without it.
json::Value read_hook_input(int fd, std::chrono::milliseconds deadline);

/// How long a firing's claim holds: every hook of one start runs within it (hosts run them
/// together, or one after another within their timeouts), and the same session starts again from
/// the same source (a second compaction) only long after.
inline constexpr std::chrono::seconds kFiringWindow{60};

/// Whether this hook is the first of its firing to brief: claims `firing` of `host` in `dir` (the
/// project's .cleo/hook-briefings, created when missing) under the folder's lock, unless a claim of
/// it younger than kFiringWindow is there. Claims older than a day are removed on the way. A
/// folder that cannot be written claims nothing: the hook briefs (twice beats never).
bool first_briefing(const std::filesystem::path& dir, std::string_view host, std::string_view firing);

}  // namespace ct::cli
