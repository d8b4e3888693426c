// Terminal layout: display widths of UTF-8, truncation, colour, aligned tables.
#include <catch2/catch.hpp>

#include "cli/table.h"
#include "core/json_parse.h"

namespace {

using ct::cli::display_width;
using ct::cli::Style;
using ct::cli::Table;

}  // namespace

TEST_CASE("display width counts terminal columns, not bytes", "[cli][table]") {
  CHECK(display_width("") == 0);
  CHECK(display_width("T001") == 4);
  CHECK(display_width("Ünïcödé") == 7);
  CHECK(display_width("日本語") == 6);
  CHECK(display_width("タスク") == 6);
  CHECK(display_width("한국어") == 6);
  CHECK(display_width("🚀") == 2);
  CHECK(display_width("e\xCC\x81") == 1);        // e + combining acute accent
  CHECK(display_width("a\xE2\x80\x8B" "b") == 2);  // zero-width space
  CHECK(display_width("→ ≤ –") == 5);
  CHECK(display_width("\xFF") == 1);               // invalid UTF-8 still takes a column
}

TEST_CASE("truncation respects columns and code points", "[cli][table]") {
  using ct::cli::truncate_to_width;
  CHECK(truncate_to_width("short", 10) == "short");
  CHECK(truncate_to_width("abcdefghij", 5) == "abcd…");
  CHECK(truncate_to_width("日本語のタスク", 5) == "日本…");
  CHECK(display_width(truncate_to_width("日本語のタスク", 6)) <= 6);
}

TEST_CASE("tables align columns by display width, without trailing spaces", "[cli][table]") {
  Table table({"ID", "STATUS", "TITLE"});
  table.add_row({{"T001", ""}, {"pending", ""}, {"Write docs", ""}});
  table.add_row({{"T002", ""}, {"done", ""}, {"日本語のタスク", ""}});
  table.add_row({{"T10000", ""}, {"active", ""}, {"", ""}});
  CHECK(table.render(Style{}) ==
        "ID      STATUS   TITLE\n"
        "T001    pending  Write docs\n"
        "T002    done     日本語のタスク\n"
        "T10000  active\n");

  Table wide({"TITLE", "ID"});
  wide.add_row({{"日本語", ""}, {"T1", ""}});
  wide.add_row({{"abc", ""}, {"T2", ""}});
  wide.add_row({{"🚀 go", ""}, {"T3", ""}});
  CHECK(wide.render(Style{}) ==
        "TITLE   ID\n"
        "日本語  T1\n"
        "abc     T2\n"
        "🚀 go   T3\n");
}

TEST_CASE("a cell of several lines stays on its row: line breaks are shown, never printed (issue 50)", "[cli][table]") {
  Table table({"ID", "BODY", "KIND"});
  table.add_row({{"M001", ""}, {"first line\nsecond\r\nthird\tend", ""}, {"learning", ""}});
  table.add_row({{"M002", ""}, {"short", ""}, {"risk", ""}});
  CHECK(table.render(Style{}) ==
        "ID    BODY                             KIND\n"
        "M001  first line \u21b5 second \u21b5 third end  learning\n"
        "M002  short                            risk\n");
}

TEST_CASE("colour never changes alignment and is off unless enabled", "[cli][table]") {
  Table table({"ID", "STATUS"});
  table.add_row({{"T1", ""}, {"done", "32"}});
  std::string plain = table.render(Style{false});
  CHECK(plain.find('\x1b') == std::string::npos);
  std::string coloured = table.render(Style{true});
  CHECK(coloured.find("\x1b[32mdone\x1b[0m") != std::string::npos);
  CHECK(ct::cli::status_sgr("active") == "36");
  CHECK(ct::cli::status_sgr("pending").empty());
}

TEST_CASE("the last column is cut to the terminal width", "[cli][table]") {
  Table table({"ID", "TITLE"});
  table.add_row({{"T1", ""}, {"a very long title that will not fit in twenty columns", ""}});
  std::string out = table.render(Style{}, 20);
  for (std::size_t start = 0; start < out.size();) {
    std::size_t end = out.find('\n', start);
    CHECK(display_width(std::string_view(out).substr(start, end - start)) <= 20);
    start = end + 1;
  }
  CHECK(out.find("…") != std::string::npos);
}

