// Text checks applied to strings that may reach storage.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "core/json_parse.h"
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
    bool is_newline = c == '\n';  // a lone carriage return overwrites the line: refused (below)
    INFO("byte " << c);
    CHECK(ct::has_control_characters(text, false) == (c != '\t'));
    CHECK(ct::has_control_characters(text, true) == (c != '\t' && !is_newline));
  }
}

TEST_CASE("stored text refuses C1 controls, bidirectional overrides and a lone carriage return", "[core][text]") {
  // Issue 30 item 15: a title could hold U+202E (RIGHT-TO-LEFT OVERRIDE) and read backwards.
  for (bool allow_newlines : {true, false}) {
    INFO("allow_newlines = " << allow_newlines);
    CHECK(ct::first_control_character("evil \u202E txet", allow_newlines) == U'\u202E');
    const std::pair<const char*, char32_t> kBidi[] = {
        {"\u202A", U'\u202A'}, {"\u202B", U'\u202B'}, {"\u202C", U'\u202C'}, {"\u202D", U'\u202D'},
        {"\u2066", U'\u2066'}, {"\u2067", U'\u2067'}, {"\u2068", U'\u2068'}, {"\u2069", U'\u2069'}};
    for (const auto& [text, c] : kBidi) CHECK(ct::first_control_character(std::string("a") + text, allow_newlines) == c);
    CHECK(ct::first_control_character("c1 \xc2\x9b" "31m", allow_newlines) == U'\u009B');  // the 8-bit CSI
    CHECK(ct::first_control_character("nel \xc2\x85", allow_newlines) == U'\u0085');
    // Marks that order right-to-left text override nothing: allowed, as is ordinary text.
    CHECK_FALSE(ct::first_control_character("\u200E\u200F\u061C שלום مرحبا", allow_newlines));
    CHECK_FALSE(ct::first_control_character("nbsp\u00A0 dash \u2014 zwj \u200D", allow_newlines));
  }
  CHECK(ct::first_control_character("over\rwrite", true) == U'\r');
  CHECK(ct::first_control_character("trailing\r", true) == U'\r');
  CHECK_FALSE(ct::first_control_character("windows\r\nlines\r\n", true));
  CHECK(ct::code_point_name(U'\u202E') == "U+202E");
  CHECK(ct::code_point_name(U'\x1b') == "U+001B");
  CHECK(ct::code_point_name(U'\U0001F600') == "U+1F600");
}

TEST_CASE("terminal_safe: stored text cannot drive the terminal", "[core][text]") {
  using ct::terminal_safe;
  CHECK(terminal_safe("plain text, 日本語 ✓\tand\nlines") == "plain text, 日本語 ✓\tand\nlines");
  CHECK(terminal_safe("red \x1b[31malert\x07") == "red ^[[31malert^G");
  CHECK(terminal_safe(std::string("nul\0byte", 8)) == "nul^@byte");
  CHECK(terminal_safe("over\rwrite") == "over^Mwrite");
  CHECK(terminal_safe("del\x7f") == "del^?");
  CHECK(terminal_safe("c1 \xc2\x9b" "31m") == "c1 <U+009B>31m");       // U+009B: the 8-bit CSI
  CHECK(terminal_safe("raw \x9b byte") == "raw <U+009B> byte");         // not even UTF-8
  CHECK(terminal_safe("bidi \xe2\x80\xae txet") == "bidi <U+202E> txet");  // RIGHT-TO-LEFT OVERRIDE
  CHECK(terminal_safe("dash \xe2\x80\x94 ok") == "dash \xe2\x80\x94 ok");
  // Whatever goes in, valid UTF-8 comes out: a byte that is not UTF-8 is U+FFFD.
  CHECK(terminal_safe("latin1 \xe9t\xe9 \xff") == "latin1 \uFFFDt\uFFFD \uFFFD");
  CHECK(ct::valid_utf8(terminal_safe("\xf0\x9f\x98 cut \xc3")));

  ct::json::Value value = ct::json::parse(R"({"t\u001bk":["a\u0007",{"x":"\u001b"}],"n":1})").value();
  ct::make_terminal_safe(value);
  CHECK(value.dump() == R"({"t^[k":["a^G",{"x":"^["}],"n":1})");
}

TEST_CASE("echo quotes a value back at most 200 characters long, and says how long it was", "[core][text]") {
  CHECK(ct::echo("short") == "'short'");
  CHECK(ct::echo("esc\x1b") == "'esc^['");
  std::string big(500'000, 'a');
  std::string echoed = ct::echo(big);
  CHECK(echoed == "'" + std::string(200, 'a') + "…' (500000 characters)");
  std::string wide;
  for (int i = 0; i < 300; ++i) wide += "日";
  CHECK(ct::echo(wide) == "'" + wide.substr(0, 600) + "…' (300 characters)");
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

TEST_CASE("is_template_variable: a host's variables, filled in later, and nothing else", "[core][text]") {
  for (std::string_view variable : {"$1", "$12", "$ARGUMENTS", "$id", "${id}", "${task-id}", "{{id}}", "{{ id }}"})
    CHECK(ct::is_template_variable(variable));
  for (std::string_view value : {"T001", "$", "$ 1", "$1a", "$1 T002", "${}", "${a b}", "{{}}", "{id}", "a$1", "$$1", "ses_01"})
    CHECK_FALSE(ct::is_template_variable(value));
}
