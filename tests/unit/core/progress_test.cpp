// Progress of long work (core/progress.h): nobody told outside a scope, every nested scope told
// innermost first, and the watchers of one thread never see another thread's work.
#include <catch2/catch.hpp>

#include <string>
#include <thread>
#include <vector>

#include "core/progress.h"

using namespace ct;

TEST_CASE("progress: told to every watcher of this thread, innermost first", "[progress]") {
  report_progress("nobody hears this");  // outside any scope: nothing happens
  std::vector<std::string> heard;
  {
    ProgressScope outer([&](std::string_view message) { heard.push_back("outer " + std::string(message)); });
    report_progress("one");
    {
      ProgressScope inner([&](std::string_view message) { heard.push_back("inner " + std::string(message)); });
      report_progress("two");
    }
    report_progress("three");
    // Another thread's work has watchers of its own: none here, so nobody hears it.
    std::thread([] { report_progress("elsewhere"); }).join();
  }
  report_progress("after");
  CHECK(heard == std::vector<std::string>{"outer one", "inner two", "outer two", "outer three"});
}
