// Long work's progress on a terminal (cli/progress_line.h): one line rewritten in place, paced,
// made safe to print, and erased when the work ends; no line at all for work that said nothing.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "cli/progress_line.h"

using namespace ct;
using namespace ct::cli;

namespace {

/// What `body` wrote through a ProgressLine of "ct sync github".
template <class Body>
std::string written(Body&& body) {
  char* buffer = nullptr;
  std::size_t size = 0;
  std::FILE* out = ::open_memstream(&buffer, &size);
  REQUIRE(out);
  {
    ProgressLine line(out, "ct sync github");
    body();
  }
  std::fclose(out);
  std::string text(buffer, size);
  std::free(buffer);
  return text;
}

}  // namespace

TEST_CASE("progress line: rewritten in place, paced, and gone before the reply", "[cli][progress]") {
  const std::string text = written([] {
    report_progress("pulled 100 items (1 page)");
    report_progress("pulled 200 items (2 pages)");  // within the interval: not shown
    std::this_thread::sleep_for(ProgressLine::kInterval + std::chrono::milliseconds(20));
    report_progress("waiting 60 s: secondary rate limit\x1b]0;title\x07");
  });
  CHECK(text == "\r\x1b[Kct sync github: pulled 100 items (1 page)"
                "\r\x1b[Kct sync github: waiting 60 s: secondary rate limit^[]0;title^G"
                "\r\x1b[K");
  CHECK(written([] {}).empty());  // quick work: no line, nothing to erase
}
