// MCP's progress utility: a request whose `_meta.progressToken` is a string or an integer asks to
// be told how long work goes (notifications/progress). What the work reports (core/progress.h)
// goes out while the call runs, where the transport can send it before the reply: stdio's output.
// Each notification's `progress` counts the notes sent (it must rise, and what the work counts
// changes from phase to phase — items pulled, then changes pushed); its `message` says what was
// done in words. The first note goes at once, later ones at most every kProgressInterval (the notes
// between are dropped: the next one sent says where the work is then); there is no total, as a
// sync cannot know its own. A long call run as an MCP task tells its notes in the task's status.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "core/json.h"
#include "core/progress.h"

namespace ct::mcp {

class Outbox;

inline constexpr std::chrono::milliseconds kProgressInterval{250};

/// The token a request's params carry (`_meta.progressToken`), as compact JSON; none when absent
/// or of another type (the spec allows strings and integers).
std::optional<std::string> progress_token(const json::Value& params);

/// The notifications/progress of the `sequence`-th note about the request of `token_json`.
std::string progress_notification(const std::string& token_json, std::int64_t sequence, std::string_view message);

/// A sink sending the notes of one call to `outbox`, paced as above. Safe to call from the call's
/// thread only (one sink per call).
ProgressSink progress_sender(std::string token_json, std::shared_ptr<Outbox> outbox);

}  // namespace ct::mcp
