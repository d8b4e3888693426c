// Text checks applied to strings that may reach storage.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "core/text.h"
#include "tests/unit/core/env_guard.h"

namespace {

bool is_lower_hex(const std::string& text) {
  return text.find_first_not_of("0123456789abcdef") == std::string::npos;
}

}  // namespace

TEST_CASE("utf8_length counts code points", "[core][text]") {
  CHECK(ct::utf8_length("") == 0);
  CHECK(ct::utf8_length("abc") == 3);
  CHECK(ct::utf8_length("é") == 1);
  CHECK(ct::utf8_length("café") == 4);
  CHECK(ct::utf8_length("中文") == 2);
  CHECK(ct::utf8_length("😀") == 1);
  CHECK(ct::utf8_length("a😀b") == 3);
  CHECK(ct::utf8_length("👩‍💻") == 3);  // woman, zero-width joiner, computer
  CHECK(ct::utf8_length("e\xcc\x81") == 2);  // e + combining acute accent
  CHECK(ct::utf8_length(std::string_view("\0\0", 2)) == 2);
  CHECK(ct::utf8_length(std::string(200, 'x') + "中") == 201);
}

TEST_CASE("has_control_characters", "[core][text]") {
  for (bool allow_newlines : {true, false}) {
    INFO("allow_newlines = " << allow_newlines);
    CHECK_FALSE(ct::has_control_characters("", allow_newlines));
    CHECK_FALSE(ct::has_control_characters("plain text", allow_newlines));
    CHECK_FALSE(ct::has_control_characters("tab\tis fine", allow_newlines));
    CHECK_FALSE(ct::has_control_characters("é中😀", allow_newlines));
    CHECK_FALSE(ct::has_control_characters("~ and space", allow_newlines));
    CHECK(ct::has_control_characters(std::string_view("\0", 1), allow_newlines));
    CHECK(ct::has_control_characters("bell\a", allow_newlines));
    CHECK(ct::has_control_characters("\x1b[31mred", allow_newlines));
    CHECK(ct::has_control_characters("\x1f", allow_newlines));
    CHECK(ct::has_control_characters("del\x7f", allow_newlines));
    CHECK(ct::has_control_characters("\b\f\v", allow_newlines));
  }
  CHECK_FALSE(ct::has_control_characters("line\nbreak", true));
  CHECK_FALSE(ct::has_control_characters("crlf\r\n", true));
  CHECK(ct::has_control_characters("line\nbreak", false));
  CHECK(ct::has_control_characters("cr\r", false));

  // Every C0 byte except tab (and newlines when allowed) is rejected.
  for (int c = 0; c < 0x20; ++c) {
    std::string text = "a" + std::string(1, static_cast<char>(c)) + "b";
    bool is_newline = c == '\n' || c == '\r';
    INFO("byte " << c);
    CHECK(ct::has_control_characters(text, false) == (c != '\t'));
    CHECK(ct::has_control_characters(text, true) == (c != '\t' && !is_newline));
  }
}

TEST_CASE("trim removes ASCII whitespace at both ends", "[core][text]") {
  CHECK(ct::trim("") == "");
  CHECK(ct::trim("   ") == "");
  CHECK(ct::trim("abc") == "abc");
  CHECK(ct::trim("  a b  ") == "a b");
  CHECK(ct::trim("\t\n\r\f\v x \v\f\r\n\t") == "x");
  CHECK(ct::trim("inner  space") == "inner  space");
  CHECK(ct::trim("\xc2\xa0nbsp\xc2\xa0") == "\xc2\xa0nbsp\xc2\xa0");  // not ASCII whitespace
  // A view into the original, not a copy.
  std::string_view source = "  xy  ";
  CHECK(ct::trim(source).data() == source.data() + 2);
}

TEST_CASE("to_lower_ascii lowers only A-Z", "[core][text]") {
  CHECK(ct::to_lower_ascii("") == "");
  CHECK(ct::to_lower_ascii("ABC def XyZ") == "abc def xyz");
  CHECK(ct::to_lower_ascii("@[`{") == "@[`{");  // neighbours of A-Z and a-z
  CHECK(ct::to_lower_ascii("ÉCOLE") == "École");  // multi-byte characters untouched
  CHECK(ct::to_lower_ascii("HIGH-Priority_1") == "high-priority_1");
}

TEST_CASE("random_hex returns 2 lowercase hex characters per byte", "[core][text]") {
  for (const char* mode : {"1", ""}) {
    ct::testing::EnvGuard guard("CLEO_TEST_MODE",
                                *mode ? std::optional<std::string>(mode) : std::nullopt);
    INFO("CLEO_TEST_MODE=" << mode);
    for (std::size_t bytes : {0u, 1u, 2u, 3u, 4u, 5u, 7u, 8u, 16u, 33u}) {
      std::string hex = ct::random_hex(bytes);
      CHECK(hex.size() == bytes * 2);
      CHECK(is_lower_hex(hex));
    }
    // Successive values differ (a counter in test mode, the CSPRNG otherwise).
    std::set<std::string> seen;
    for (int i = 0; i < 50; ++i) seen.insert(ct::random_hex(8));
    CHECK(seen.size() == 50);
  }
}
