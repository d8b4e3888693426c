#include "gateway/mcp_progress.h"

#include <cstdint>
#include <utility>

#include "core/text.h"
#include "gateway/outbox.h"

namespace ct::mcp {

std::optional<std::string> progress_token(const json::Value& params) {
  const json::Value& token = params["_meta"]["progressToken"];
  if (token.is_string() || token.is_int()) return token.dump();
  return std::nullopt;
}

std::string progress_notification(const std::string& token_json, std::int64_t sequence, std::string_view message) {
  std::string out;
  json::Writer w(out);
  w.begin_object();
  w.key("jsonrpc").value("2.0");
  w.key("method").value("notifications/progress");
  w.key("params").begin_object();
  w.key("progressToken").raw(token_json);
  w.key("progress").value(sequence);
  if (!message.empty()) w.key("message").value(terminal_safe(message));
  w.end_object();
  w.end_object();
  return out;
}

ProgressSink progress_sender(std::string token_json, std::shared_ptr<Outbox> outbox) {
  using Clock = std::chrono::steady_clock;
  struct State {
    std::int64_t sent = 0;
    std::optional<Clock::time_point> last;
  };
  auto state = std::make_shared<State>();
  return [token = std::move(token_json), outbox = std::move(outbox), state](std::string_view message) {
    const auto now = Clock::now();
    if (state->last && now - *state->last < kProgressInterval) return;
    if (!outbox || !outbox->open()) return;
    state->last = now;
    outbox->send(progress_notification(token, ++state->sent, message));
  };
}

}  // namespace ct::mcp
