// subprocess: the subprocess adapter, run_process() in engines/adapters/subprocess.h, against children that
// misbehave in arbitrary combinations. The input is a little program for /bin/sh built only from
// fixed steps (no input text reaches the shell): close or redirect stdout, stderr or stdin, ignore
// SIGTERM, start grandchildren that keep the pipes open (or ignore SIGTERM themselves), write bytes
// to either pipe, read stdin, sleep briefly or far past the limit, exit, die by a signal. The time
// limit and the grace period are short and come from the input too.
//   - run_process always returns a result, within limit + grace + the half second a child's
//     leftovers get to let go of the pipes (+ slack for a loaded machine);
//   - a child that reaches a step running past the limit is reported timed out, and a timed-out
//     run is never ok(); a run is never timed out before its limit;
//   - afterwards no process of the child's group is left running, no child of this process is left
//     unreaped, and no descriptor of ours is left open;
//   - output never exceeds its caps.
#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "engines/adapters/subprocess.h"
#include "fuzz_support.h"

using namespace ct;

namespace {

std::filesystem::path pid_file;

std::size_t open_descriptors() {
  std::size_t count = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) ++count;
  return count;
}

/// Processes of group `group` that are still running (zombies waiting to be reaped by init are
/// not).
int running_in_group(pid_t group) {
  int count = 0;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return 0;
  while (dirent* entry = ::readdir(proc)) {
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
    std::ifstream stat(std::string("/proc/") + entry->d_name + "/stat");
    std::string line;
    if (!std::getline(stat, line)) continue;
    auto close = line.rfind(')');
    if (close == std::string::npos) continue;
    char state = 0;
    long parent = 0, pgrp = 0;
    if (std::sscanf(line.c_str() + close + 1, " %c %ld %ld", &state, &parent, &pgrp) != 3) continue;
    if (pgrp == group && state != 'Z' && state != 'X') ++count;
  }
  ::closedir(proc);
  return count;
}

/// The steps. Each is a fixed line of shell; `long_step` marks those that run past any limit.
struct Step {
  const char* text;
  bool long_step;
  bool ends;  // the script stops here
};
constexpr Step kSteps[] = {
    {"exec >/dev/null", false, false},
    {"exec 2>/dev/null", false, false},
    {"exec 1>&-", false, false},
    {"exec 2>&-", false, false},
    {"exec 0<&-", false, false},
    {"trap '' TERM", false, false},
    {"sleep 3 &", false, false},                              // a grandchild holding the pipes
    {"(trap '' TERM; sleep 3) &", false, false},              // one that ignores SIGTERM
    {"(exec >/dev/null 2>&1; sleep 3) &", false, false},      // one that let go of the pipes
    {"head -c 70000 /dev/zero", false, false},                // more than a pipe holds
    {"head -c 300 /dev/zero >&2", false, false},
    {"printf 'a\\377b\\n'", false, false},
    {"cat >/dev/null", false, false},                         // reads stdin to its end
    {"head -c 1000 >/dev/null", false, false},                // reads part of stdin, then stops
    {"sleep 0.02", false, false},
    {"sleep 3", true, false},
    {"exec sleep 3", true, true},
    {"while :; do :; done", true, false},
    {"exit 3", false, true},
    {"kill -9 $$", false, true},
    {"kill -TERM $$", false, false},                          // ends it unless TERM is ignored
};
constexpr std::size_t kStepCount = sizeof kSteps / sizeof kSteps[0];

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* scratch = std::getenv("CT_FUZZ_SCRATCH");
  std::filesystem::path dir = scratch ? scratch : std::filesystem::temp_directory_path();
  pid_file = dir / ("subprocess-fuzz-" + std::to_string(::getpid()) + ".pid");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view input = fuzz::as_text(data, size);
  if (size < 3) return 0;
  ProcessSpec spec;
  spec.timeout = std::chrono::milliseconds(20 + (data[0] % 64) * 5);  // 20–335 ms
  spec.grace = std::chrono::milliseconds(20 + (data[1] % 32) * 5);    // 20–175 ms
  spec.stdin_data.assign(static_cast<std::size_t>(data[2]) * 256, 'x');
  spec.max_stdout = 4096;
  spec.max_stderr = 256;
  spec.env = minimal_environment();
  // The child's pid first (it is its group's id), then the steps.
  std::string script = "echo $$ >'" + pid_file.string() + "'\n";
  bool reaches_long = false;
  bool ended = false;
  bool term_ignored = false;
  for (std::size_t i = 3; i < size && i < 3 + 12; ++i) {
    const Step& step = kSteps[data[i] % kStepCount];
    script += step.text;
    script += '\n';
    if (ended) continue;
    if (std::string_view(step.text) == "trap '' TERM") term_ignored = true;
    if (std::string_view(step.text) == "kill -TERM $$" && !term_ignored) ended = true;
    if (step.long_step) reaches_long = true;
    if (step.long_step || step.ends) ended = true;
  }
  spec.argv = {"/bin/sh", "-c", script};
  std::filesystem::remove(pid_file);

  const std::size_t descriptors = open_descriptors();
  const auto started = std::chrono::steady_clock::now();
  auto ran = run_process(spec);
  const auto took = std::chrono::steady_clock::now() - started;
  const std::string shown = "limit " + std::to_string(spec.timeout.count()) + " ms, grace " +
                            std::to_string(spec.grace.count()) + " ms, script:\n" + script;
  if (!ran) fuzz::finding("run_process failed to run /bin/sh", input, ran.error().message + "\n" + shown);
  const auto bound = spec.timeout + spec.grace + std::chrono::milliseconds(500) + std::chrono::milliseconds(2500);
  if (took > bound)
    fuzz::finding("run_process took longer than limit + grace + let-go", input,
                  std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(took).count()) + " ms; " + shown);
  if (reaches_long && !ran->timed_out) fuzz::finding("a child that ran past its limit is not timed out", input, shown);
  if (ran->timed_out && ran->ok()) fuzz::finding("a timed-out run is ok()", input, shown);
  if (ran->timed_out && took < spec.timeout) fuzz::finding("timed out before the limit", input, shown);
  if (ran->out.size() > spec.max_stdout || ran->err.size() > spec.max_stderr)
    fuzz::finding("output beyond its cap", input, shown);
  int status = 0;
  if (pid_t stray = ::waitpid(-1, &status, WNOHANG); stray > 0)
    fuzz::finding("a child left unreaped", input, std::to_string(stray) + "; " + shown);
  if (open_descriptors() != descriptors) fuzz::finding("a descriptor left open", input, shown);

  // The group: SIGKILL is delivered asynchronously, so give the kernel a moment.
  std::ifstream pid_in(pid_file);
  long group = 0;
  if (pid_in >> group && group > 1) {
    int left = running_in_group(static_cast<pid_t>(group));
    for (int i = 0; i < 100 && left > 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      left = running_in_group(static_cast<pid_t>(group));
    }
    if (left > 0) {
      ::kill(-static_cast<pid_t>(group), SIGKILL);
      fuzz::finding("processes of the child's group left running", input, std::to_string(left) + "; " + shown);
    }
  }
  return 0;
}
