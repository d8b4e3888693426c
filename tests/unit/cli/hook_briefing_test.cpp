// A session-start hook briefs once per firing (cli/hook_briefing.h): the JSON the host writes on
// the hook's stdin, and the claim the first of a firing's hooks makes (issue 50 item 15).
#include <catch2/catch.hpp>

#include <unistd.h>

#include <fstream>
#include <string>
#include <thread>

#include "cli/hook_briefing.h"
#include "domains/providers/providers.h"
#include "unit/temp_dir.h"

using namespace ct;
namespace fs = std::filesystem;

namespace {

/// What read_hook_input reads from a pipe that gets `input` (and is closed unless `keep_open`).
json::Value read_piped(const std::string& input, bool keep_open = false) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  std::thread writer([&] {
    std::size_t done = 0;
    while (done < input.size()) {
      const ssize_t n = ::write(fds[1], input.data() + done, input.size() - done);
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    if (!keep_open) ::close(fds[1]);
  });
  json::Value out = cli::read_hook_input(fds[0], std::chrono::milliseconds(300));
  ::close(fds[0]);
  writer.join();
  if (keep_open) ::close(fds[1]);
  return out;
}

}  // namespace

TEST_CASE("hook input: the host's JSON, or nothing when it is not that", "[cli][hooks]") {
  CHECK(read_piped(R"({"session_id":"s1","source":"startup"})")["session_id"].as_string() == "s1");
  CHECK(read_piped("").is_null());
  CHECK(read_piped("not json").is_null());
  CHECK(read_piped(std::string(1024 * 1024 + 10, ' ')).is_null());  // past the cap
  CHECK(read_piped(R"({"session_id":"s1"})", /*keep_open=*/true).is_null());  // never closed: the deadline
}

TEST_CASE("hook firing: each host's session id and source from its stdin", "[cli][hooks][providers]") {
  const json::Value claude = *json::parse(R"({"session_id":"4072c653","hook_event_name":"SessionStart","source":"fork"})");
  CHECK(providers::hook_firing(*providers::find("claude"), claude) == "4072c653\nfork");
  CHECK(providers::hook_firing(*providers::find("codex"), claude) == "4072c653\nfork");
  CHECK(providers::hook_firing(*providers::find("gemini"), claude) == "4072c653\nfork");
  CHECK_FALSE(providers::hook_firing(*providers::find("cursor"), claude));  // Cursor names its conversation
  CHECK(providers::hook_firing(*providers::find("cursor"), *json::parse(R"({"conversation_id":"c1","source":"x"})")) ==
        "c1\n");
  CHECK_FALSE(providers::hook_firing(*providers::find("claude"), *json::parse(R"({"session_id":""})")));
  CHECK_FALSE(providers::hook_firing(*providers::find("claude"), *json::parse(R"({"session_id":7})")));
  CHECK_FALSE(providers::hook_firing(*providers::find("claude"), json::Value(nullptr)));
  CHECK_FALSE(providers::hook_firing(*providers::find("opencode"), claude));  // no hook at all
  // What a hook that says nothing prints: nothing, or what Cursor reads as "carry on".
  CHECK(providers::hook_output(*providers::find("claude"), "").empty());
  CHECK(providers::hook_output(*providers::find("gemini"), "").empty());
  CHECK(providers::hook_output(*providers::find("cursor"), "") == R"({"continue":true})");
}

TEST_CASE("hook briefing: the first hook of a firing briefs, the others of it do not", "[cli][hooks]") {
  test::TempDir dir;
  const fs::path claims = dir.path() / ".cleo" / "hook-briefings";
  CHECK(cli::first_briefing(claims, "claude", "s1\nstartup"));
  CHECK_FALSE(cli::first_briefing(claims, "claude", "s1\nstartup"));  // the user's hook after the project's
  CHECK(cli::first_briefing(claims, "claude", "s1\ncompact"));        // the same session, started again
  CHECK(cli::first_briefing(claims, "codex", "s1\nstartup"));         // another host
  CHECK(cli::first_briefing(claims, "claude", "s2\nstartup"));
  // A claim older than the window is a later firing of the same kind (a second compaction).
  for (const auto& entry : fs::directory_iterator(claims))
    fs::last_write_time(entry.path(), fs::file_time_type::clock::now() - cli::kFiringWindow - std::chrono::seconds(1));
  CHECK(cli::first_briefing(claims, "claude", "s1\nstartup"));
  CHECK_FALSE(cli::first_briefing(claims, "claude", "s1\nstartup"));
  // Claims a day old are swept.
  for (const auto& entry : fs::directory_iterator(claims))
    fs::last_write_time(entry.path(), fs::file_time_type::clock::now() - std::chrono::hours(25));
  CHECK(cli::first_briefing(claims, "gemini", "g\nstartup"));
  std::size_t left = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(claims)) ++left;
  CHECK(left == 1);
  // A folder that cannot be made claims nothing: the hook briefs.
  test::TempDir other;
  std::ofstream(other.path() / "file") << "x";
  CHECK(cli::first_briefing(other.path() / "file" / "hook-briefings", "claude", "s1\nstartup"));
  CHECK(cli::first_briefing(other.path() / "file" / "hook-briefings", "claude", "s1\nstartup"));
}
