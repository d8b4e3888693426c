// MCP's progress utility (gateway/mcp_progress.h): the token a request carries, the notification's
// shape, and the pace at which a call's notes are sent.
#include <catch2/catch.hpp>

#include <mutex>
#include <thread>

#include "gateway/mcp_progress.h"
#include "gateway/outbox.h"
#include "unit/test_support.h"

using namespace ct;
using namespace ct::mcp;

namespace {

class Sent final : public Outbox {
 public:
  bool send(std::string_view message) override {
    messages.emplace_back(message);
    return true;
  }
  bool open() const override { return is_open; }
  std::vector<std::string> messages;
  bool is_open = true;
};

}  // namespace

TEST_CASE("progress: a request's token is a string or an integer", "[mcp][progress]") {
  CHECK(progress_token(test::parse_json(R"({"_meta":{"progressToken":"abc"}})")) == "\"abc\"");
  CHECK(progress_token(test::parse_json(R"({"_meta":{"progressToken":17}})")) == "17");
  CHECK_FALSE(progress_token(test::parse_json(R"({"_meta":{"progressToken":1.5}})")));
  CHECK_FALSE(progress_token(test::parse_json(R"({"_meta":{"progressToken":null}})")));
  CHECK_FALSE(progress_token(test::parse_json(R"({"_meta":{}})")));
  CHECK_FALSE(progress_token(json::Value()));
}

TEST_CASE("progress: notes become notifications/progress, rising, paced, in safe words", "[mcp][progress]") {
  json::Value one = test::parse_json(progress_notification("\"t\"", 1, "pulled 100 items\x1b[2J"));
  CHECK(one["jsonrpc"].as_string() == "2.0");
  CHECK(one["method"].as_string() == "notifications/progress");
  CHECK_FALSE(one.contains("id"));
  CHECK(one["params"]["progressToken"].as_string() == "t");
  CHECK(one["params"]["progress"].as_int() == 1);
  CHECK(one["params"]["message"].as_string().find('\x1b') == std::string::npos);  // terminal_safe

  auto sent = std::make_shared<Sent>();
  {
    ProgressScope watched(progress_sender("42", sent));
    report_progress("pulled 100 items (1 page)");  // the first goes at once
    report_progress("pulled 200 items (2 pages)");  // within the interval: dropped
    std::this_thread::sleep_for(kProgressInterval + std::chrono::milliseconds(20));
    report_progress("pulled 300 items (3 pages)");
    sent->is_open = false;
    std::this_thread::sleep_for(kProgressInterval + std::chrono::milliseconds(20));
    report_progress("the peer is gone");  // nothing is sent to a closed channel
  }
  report_progress("after the call");
  REQUIRE(sent->messages.size() == 2);
  json::Value first = test::parse_json(sent->messages[0]);
  json::Value second = test::parse_json(sent->messages[1]);
  CHECK(first["params"]["progressToken"].as_int() == 42);
  CHECK(first["params"]["progress"].as_int() == 1);
  CHECK(first["params"]["message"].as_string() == "pulled 100 items (1 page)");
  CHECK(second["params"]["progress"].as_int() == 2);
  CHECK(second["params"]["message"].as_string() == "pulled 300 items (3 pages)");
}
