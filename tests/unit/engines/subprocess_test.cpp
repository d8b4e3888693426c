// The subprocess adapter against scripted misbehaving programs (tests/fixtures/programs/): each
// gets a precise result or error — never a hang, a crash, a zombie or a leaked descriptor.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>

#include "core/cancel.h"
#include "engines/adapters/subprocess.h"
#include "unit/temp_dir.h"

using namespace ct;

namespace {

const std::filesystem::path kPrograms = std::filesystem::path(CT_FIXTURES_DIR) / "programs";

ProcessSpec spec_of(std::string program, std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  ProcessSpec spec;
  spec.argv = {(kPrograms / program).string()};
  spec.env = minimal_environment();
  spec.timeout = timeout;
  spec.grace = std::chrono::milliseconds(300);
  return spec;
}

std::set<std::string> open_fds() {
  std::set<std::string> fds;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) fds.insert(entry.path().filename());
  return fds;
}

/// No child of ours is left unreaped.
bool no_zombies() {
  int status = 0;
  pid_t pid = ::waitpid(-1, &status, WNOHANG);
  return pid <= 0;  // 0: children still running (none should), -1/ECHILD: none at all
}

}  // namespace

TEST_CASE("a program that runs to its end: output, status, duration", "[engines][subprocess]") {
  auto result = run_process(spec_of("fail.sh"));
  REQUIRE(result);
  CHECK(result->exit_code == 3);
  CHECK(result->signal == 0);
  CHECK_FALSE(result->timed_out);
  CHECK(result->out == "partial output\n");
  CHECK(result->err_tail() == "first line of the complaint\nthe reason: nothing works");
  CHECK(result->duration_ms > 0);
  Error error = process_error(spec_of("fail.sh"), *result, "running the tests");
  CHECK(error.code == ErrorCode::EngineFailed);
  CHECK(error.message.find("exited with status 3: the reason: nothing works") != std::string::npos);
  CHECK(error.details["exitCode"].as_int() == 3);
  CHECK(no_zombies());
}

TEST_CASE("a program that hangs is stopped at its time limit (E_TIMEOUT)", "[engines][subprocess]") {
  auto hang = run_process(spec_of("hang.sh", std::chrono::milliseconds(300)));
  REQUIRE(hang);
  CHECK(hang->timed_out);
  CHECK(hang->signal == SIGTERM);
  CHECK(hang->duration_ms < 5000);
  CHECK(process_error(spec_of("hang.sh", std::chrono::milliseconds(300)), *hang, "x").code == ErrorCode::Timeout);
  // One that ignores SIGTERM gets SIGKILL after the grace period.
  auto stubborn = run_process(spec_of("ignore_term.sh", std::chrono::milliseconds(300)));
  REQUIRE(stubborn);
  CHECK(stubborn->timed_out);
  CHECK(stubborn->signal == SIGKILL);
  CHECK(stubborn->out == "ignoring TERM\n");
  CHECK(no_zombies());
}

TEST_CASE("floods are capped while both pipes are drained", "[engines][subprocess]") {
  ProcessSpec spec = spec_of("flood.sh");
  spec.max_stdout = 1000;
  spec.max_stderr = 100;
  auto result = run_process(spec);
  REQUIRE(result);
  CHECK(result->exit_code == 0);  // it was never blocked on a full pipe
  CHECK(result->out.size() == 1000);
  CHECK(result->err.size() == 100);
  CHECK(result->out_truncated);
  CHECK(result->err_truncated);
}

TEST_CASE("stdin and stdout full at once do not deadlock; a closed stdin is not fatal", "[engines][subprocess]") {
  ProcessSpec spec = spec_of("echo_stdin.sh");
  spec.stdin_data = std::string(8 * 1024 * 1024, 'x');
  spec.max_stdout = 16 * 1024 * 1024;
  auto echoed = run_process(spec);
  REQUIRE(echoed);
  CHECK(echoed->exit_code == 0);
  CHECK(echoed->out.size() == spec.stdin_data.size());
  ProcessSpec closing = spec_of("close_stdin.sh");
  closing.stdin_data = std::string(4 * 1024 * 1024, 'y');
  auto closed = run_process(closing);  // writing gets EPIPE: no SIGPIPE kills this process
  REQUIRE(closed);
  CHECK(closed->exit_code == 0);
  CHECK(closed->out == "closed stdin\n");
}

TEST_CASE("garbage output and death by signal are reported as they are", "[engines][subprocess]") {
  auto garbage = run_process(spec_of("garbage.sh"));
  REQUIRE(garbage);
  CHECK(garbage->exit_code == 0);
  CHECK(garbage->out == "\xff\xfe not utf-8 \xc0");
  auto killed = run_process(spec_of("die_by_signal.sh"));
  REQUIRE(killed);
  CHECK(killed->exit_code == -1);
  CHECK(killed->signal == SIGKILL);
  Error error = process_error(spec_of("die_by_signal.sh"), *killed, "x");
  CHECK(error.message.find("was killed by signal 9") != std::string::npos);
}

TEST_CASE("a child that leaves a grandchild behind ends with it", "[engines][subprocess]") {
  auto started = run_process(spec_of("daemon.sh"));
  REQUIRE(started);
  CHECK(started->exit_code == 0);
  CHECK_FALSE(started->timed_out);
  CHECK(started->duration_ms < 5000);
  std::string pid = started->out.substr(std::string_view("started ").size());
  while (!pid.empty() && pid.back() == '\n') pid.pop_back();
  REQUIRE_FALSE(pid.empty());
  // The sleep it started was in its process group: killed (SIGKILL is delivered asynchronously,
  // so give the kernel a moment; a zombie waiting for init to reap it is not running).
  auto running = [&] {
    std::ifstream stat("/proc/" + pid + "/stat");
    std::string line;
    std::getline(stat, line);
    return !line.empty() && line.find(") Z") == std::string::npos && line.find(") X") == std::string::npos;
  };
  for (int i = 0; i < 100 && running(); ++i) ::usleep(20'000);
  CHECK_FALSE(running());
}

TEST_CASE("no descriptor of ours reaches the child, and none leaks here", "[engines][subprocess]") {
  std::set<std::string> before = open_fds();
  int leaky = ::open("/dev/zero", O_RDONLY);  // deliberately without O_CLOEXEC
  REQUIRE(leaky > 2);
  auto listed = run_process(spec_of("list_fds.sh"));
  ::close(leaky);
  REQUIRE(listed);
  // The shell's own descriptors (its script, the directory it lists) are there; ours is not.
  CHECK(listed->out.find("/dev/zero") == std::string::npos);
  CHECK(listed->out.find("0 pipe:") != std::string::npos);
  std::set<std::string> after = open_fds();
  CHECK(after == before);  // every pipe closed again
  CHECK(no_zombies());
}

TEST_CASE("a minimal environment and the working directory asked for", "[engines][subprocess]") {
  test::TempDir dir;
  setenv("CLEO_PROBE", "kept", 1);
  setenv("SECRET_TOKEN", "leaked", 1);
  setenv("GH_TOKEN", "passed", 1);
  ProcessSpec spec = spec_of("print_env.sh");
  spec.env = minimal_environment({"GH_TOKEN"}, {"EXTRA=1"});
  spec.cwd = dir.path();
  auto result = run_process(spec);
  unsetenv("CLEO_PROBE");
  unsetenv("SECRET_TOKEN");
  unsetenv("GH_TOKEN");
  REQUIRE(result);
  CHECK(result->out.find("CLEO_PROBE=kept") != std::string::npos);
  CHECK(result->out.find("GH_TOKEN=passed") != std::string::npos);
  CHECK(result->out.find("EXTRA=1") != std::string::npos);
  CHECK(result->out.find("SECRET_TOKEN") == std::string::npos);
  CHECK(result->out.find("PWD_IS=" + std::filesystem::canonical(dir.path()).string()) != std::string::npos);
}

TEST_CASE("a program that is not there is E_CAPABILITY_UNAVAILABLE; no shell ever runs", "[engines][subprocess]") {
  ProcessSpec missing;
  missing.argv = {"surely-not-a-program-cleo"};
  missing.env = minimal_environment();
  auto result = run_process(missing);
  REQUIRE_FALSE(result);
  CHECK(result.error().code == ErrorCode::CapabilityUnavailable);
  CHECK(result.error().details["program"].as_string() == "surely-not-a-program-cleo");
  // Shell syntax is one argv word, never interpreted.
  ProcessSpec echo;
  echo.argv = {"echo", "$(id) ; rm -rf / && `x`"};
  echo.env = minimal_environment();
  auto literal = run_process(echo);
  REQUIRE(literal);
  CHECK(literal->out == "$(id) ; rm -rf / && `x`\n");
}

TEST_CASE("a child that closes its stdout and stderr is still held to its time limit", "[engines][subprocess]") {
  // Issue 30 item 2: `exec >/dev/null 2>&1; sleep 20` with a 2 s limit ran 21 s and counted as
  // passed — the adapter stopped watching the clock once both pipes were at end of file.
  ProcessSpec spec = spec_of("closed_pipes_hang.sh", std::chrono::seconds(2));
  auto hang = run_process(spec);
  REQUIRE(hang);
  CHECK(hang->timed_out);
  CHECK_FALSE(hang->ok());
  CHECK(hang->signal == SIGTERM);
  CHECK(hang->duration_ms >= 2000);
  CHECK(hang->duration_ms < 5000);
  CHECK(process_error(spec, *hang, "running the tests").code == ErrorCode::Timeout);
  // One that also ignores SIGTERM gets SIGKILL after the grace period.
  auto stubborn = run_process(spec_of("closed_pipes_ignore_term.sh", std::chrono::milliseconds(300)));
  REQUIRE(stubborn);
  CHECK(stubborn->timed_out);
  CHECK(stubborn->signal == SIGKILL);
  CHECK(stubborn->duration_ms < 3000);
  CHECK(no_zombies());
}

TEST_CASE("a grandchild out of the group's reach that keeps the pipes open does not hold the call",
          "[engines][subprocess]") {
  auto started = run_process(spec_of("escaped_grandchild.sh", std::chrono::milliseconds(500)));
  REQUIRE(started);
  // The grandchild has its own session: the adapter cannot end it, but it stops reading once the
  // child is gone (half a second later), so the call still ends near its limit.
  std::string pid = started->out.substr(0, started->out.find('\n'));
  REQUIRE(pid.starts_with("grandchild "));
  pid = pid.substr(std::string_view("grandchild ").size());
  ::kill(std::stoi(pid), SIGKILL);
  CHECK(started->timed_out);
  CHECK(started->signal == SIGTERM);
  CHECK(started->duration_ms < 500 + 300 + 500 + 1500);
  CHECK(no_zombies());
}

TEST_CASE("a cancelled call stops its program as a time limit would (core/cancel.h)", "[engines][subprocess]") {
  CancelFlag flag = make_cancel_flag();
  std::thread canceller([flag] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    flag->request_cancel();
  });
  Result<ProcessResult> hang = fail(ErrorCode::Internal, "not run");
  {
    CancelScope scope(flag);
    CHECK_FALSE(cancel_requested());
    hang = run_process(spec_of("hang.sh"));  // a 20 s limit: only the cancellation ends it early
  }
  canceller.join();
  CHECK_FALSE(cancel_requested());  // the scope is gone
  REQUIRE(hang);
  CHECK(hang->cancelled);
  CHECK_FALSE(hang->timed_out);
  CHECK_FALSE(hang->ok());
  CHECK(hang->duration_ms < 5000);
  Error error = process_error(spec_of("hang.sh"), *hang, "running the tests");
  CHECK(error.code == ErrorCode::EngineFailed);
  CHECK(error.message.find("the call was cancelled") != std::string::npos);
  // A flag raised before the program starts stops it at once; another thread's flag is not ours.
  CancelFlag raised = make_cancel_flag();
  raised->request_cancel();
  {
    CancelScope scope(raised);
    auto stopped = run_process(spec_of("hang.sh"));
    REQUIRE(stopped);
    CHECK(stopped->cancelled);
  }
  auto untouched = run_process(spec_of("fail.sh"));
  REQUIRE(untouched);
  CHECK_FALSE(untouched->cancelled);
  CHECK(no_zombies());
}
