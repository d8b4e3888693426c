// JSON value, writer, parser and subset matching: compact output, escaping, round trips,
// parse errors as values, and the subset semantics the transcript runner relies on.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "core/json.h"
#include "core/json_parse.h"

namespace {

using ct::json::Value;
using ct::json::Writer;

std::string quoted(std::string_view text) {
  std::string out;
  ct::json::write_string(out, text);
  return out;
}

std::string double_text(double d) {
  std::string out;
  ct::json::write_double(out, d);
  return out;
}

Value parsed(std::string_view text) {
  auto result = ct::json::parse(text);
  INFO("parsing: " << text);
  REQUIRE(result.has_value());
  return *result;
}

// Every string here must survive dump → parse unchanged.
std::vector<std::string> tricky_strings() {
  std::vector<std::string> strings = {
      "",
      "plain",
      "with \"double\" quotes",
      "back\\slash and \\\\ two",
      "trailing backslash\\",
      "\\\"",
      "slash / and </script>",
      "'; DROP TABLE tasks; --",
      "Robert'); DELETE FROM tasks WHERE ('1'='1",
      "SELECT * FROM t WHERE x = \"y\" OR 1=1 /* c */",
      "emoji 😀 🎉 👩‍💻 🏳️‍🌈",
      "CJK 中文 日本語 한국어",
      "mixed é ü ß Ω ∑ € ￿",
      "line\nbreak\r\nand\ttab",
      "del \x7f char",
      "\u2028 line separator \u2029",
      "\xef\xbb\xbf BOM at start",
      "{\"looks\":\"like json\"}",
      "[1,2,3]",
      "null",
      "\\u0041 is not unescaped",
  };
  std::string all_controls;
  for (int c = 0; c < 0x20; ++c) {
    all_controls += static_cast<char>(c);
    strings.push_back(std::string(1, static_cast<char>(c)));
    strings.push_back("a" + std::string(1, static_cast<char>(c)) + "b");
  }
  strings.push_back(all_controls);
  strings.push_back(std::string("embedded\0nul", 12));
  strings.push_back(std::string(10000, 'x') + "\"" + std::string(10000, '\\'));
  return strings;
}

}  // namespace

TEST_CASE("write_string escapes quotes, backslash and control characters", "[core][json]") {
  CHECK(quoted("") == R"("")");
  CHECK(quoted("abc") == R"("abc")");
  CHECK(quoted("a\"b") == R"("a\"b")");
  CHECK(quoted("a\\b") == R"("a\\b")");
  CHECK(quoted("/") == R"("/")");  // solidus is not escaped
  CHECK(quoted("\n") == R"("\n")");
  CHECK(quoted("\t") == R"("\t")");
  CHECK(quoted("\r") == R"("\r")");
  CHECK(quoted("\b") == R"("\b")");
  CHECK(quoted("\f") == R"("\f")");
  CHECK(quoted(std::string_view("\0", 1)) == R"("\u0000")");
  CHECK(quoted("\x01") == R"("\u0001")");
  CHECK(quoted("\x1b[31m") == R"("\u001b[31m")");
  CHECK(quoted("\x1f") == R"("\u001f")");
  CHECK(quoted(" ") == R"(" ")");
}

TEST_CASE("write_string escapes every control character 0x00-0x1F", "[core][json]") {
  for (int c = 0; c < 0x20; ++c) {
    std::string text(1, static_cast<char>(c));
    std::string expected;
    switch (c) {
      case '\n': expected = R"("\n")"; break;
      case '\t': expected = R"("\t")"; break;
      case '\r': expected = R"("\r")"; break;
      case '\b': expected = R"("\b")"; break;
      case '\f': expected = R"("\f")"; break;
      default: {
        static constexpr char kHex[] = "0123456789abcdef";
        expected = std::string("\"\\u00") + kHex[c >> 4] + kHex[c & 0xF] + "\"";
      }
    }
    INFO("control character " << c);
    CHECK(quoted(text) == expected);
    // No raw control byte may ever appear in the output.
    for (char out : quoted(text)) CHECK(static_cast<unsigned char>(out) >= 0x20);
  }
}

TEST_CASE("write_string passes DEL and non-ASCII UTF-8 through unchanged", "[core][json]") {
  CHECK(quoted("\x7f") == "\"\x7f\"");
  CHECK(quoted("é") == "\"é\"");
  CHECK(quoted("中文") == "\"中文\"");
  CHECK(quoted("😀") == "\"😀\"");
  CHECK(quoted("\u2028") == "\"\u2028\"");
}

TEST_CASE("Value::dump produces compact JSON", "[core][json]") {
  CHECK(Value().dump() == "null");
  CHECK(Value(nullptr).dump() == "null");
  CHECK(Value(true).dump() == "true");
  CHECK(Value(false).dump() == "false");
  CHECK(Value(0).dump() == "0");
  CHECK(Value(-42).dump() == "-42");
  CHECK(Value("hi").dump() == R"("hi")");
  CHECK(Value::array().dump() == "[]");
  CHECK(Value::object().dump() == "{}");

  Value task = Value::object();
  task.set("id", "T001");
  task.set("title", "Write docs");
  task.set("labels", Value::array_of(std::vector<std::string>{"a", "b"}));
  task.set("parent", nullptr);
  task.set("size", 3);
  Value nested = Value::object();
  nested.set("empty", Value::array());
  nested.set("obj", Value::object());
  task.set("nested", std::move(nested));
  CHECK(task.dump() ==
        R"({"id":"T001","title":"Write docs","labels":["a","b"],"parent":null,"size":3,)"
        R"("nested":{"empty":[],"obj":{}}})");
  std::string appended = "prefix:";
  task.dump_to(appended);
  CHECK(appended == "prefix:" + task.dump());
}

TEST_CASE("Value::string_or_empty is the string, or empty for any other kind", "[core][json]") {
  Value object = Value::object();
  object.set("name", "cleo");
  object.set("count", static_cast<std::int64_t>(3));
  CHECK(object["name"].string_or_empty() == "cleo");
  CHECK(object["count"].string_or_empty().empty());
  CHECK(object["missing"].string_or_empty().empty());
  CHECK(Value::array().string_or_empty().empty());
}

TEST_CASE("Value keeps insertion order and set() replaces in place", "[core][json]") {
  Value v = Value::object();
  v.set("zebra", 1);
  v.set("apple", 2);
  v.set("mango", 3);
  CHECK(v.dump() == R"({"zebra":1,"apple":2,"mango":3})");

  Value& replaced = v.set("apple", "two");
  CHECK(replaced == Value("two"));
  CHECK(v.size() == 3);
  CHECK(v.dump() == R"({"zebra":1,"apple":"two","mango":3})");

  CHECK(v.erase("zebra"));
  CHECK_FALSE(v.erase("zebra"));
  CHECK(v.dump() == R"({"apple":"two","mango":3})");

  // Parsing keeps document order too, and a repeated key keeps its first position.
  Value p = parsed(R"({"b":1,"a":2,"c":3,"a":4})");
  CHECK(p.dump() == R"({"b":1,"a":4,"c":3})");
}

TEST_CASE("Value object access", "[core][json]") {
  Value v = Value::object();
  v.set("a", 1);
  CHECK(v.contains("a"));
  CHECK_FALSE(v.contains("b"));
  CHECK(v["a"] == Value(1));
  CHECK(v["missing"].is_null());
  CHECK(Value(3)["anything"].is_null());  // not an object: null, not a crash
  CHECK(Value(3).find("a") == nullptr);
  REQUIRE(v.find("a") != nullptr);
  *v.find("a") = Value(5);
  CHECK(v["a"].as_int() == 5);

  Value from_null;  // set() on null makes an object
  from_null.set("k", "v");
  CHECK(from_null.is_object());
  CHECK(from_null.dump() == R"({"k":"v"})");
}

TEST_CASE("Writer streams compact JSON with commas in the right places", "[core][json]") {
  std::string out;
  Writer w(out);
  w.begin_object()
      .key("id").value("T001")
      .key("n").value(7)
      .key("big").value(std::int64_t{1} << 40)
      .key("ok").value(true)
      .key("none").null()
      .key("ratio").value(0.5)
      .key("list").begin_array().value(1).value("two").begin_array().end_array()
          .begin_object().end_object().null().end_array()
      .key("obj").begin_object().key("x").begin_object().key("y").value(false).end_object()
          .end_object()
      .key("raw").raw(R"({"pre":"built"})")
      .key("val").value(Value::array_of(std::vector<int>{1, 2}))
      .key("quote\"key").value(std::string("a\nb"))
      .end_object();
  CHECK(out ==
        R"({"id":"T001","n":7,"big":1099511627776,"ok":true,"none":null,"ratio":0.5,)"
        R"("list":[1,"two",[],{},null],"obj":{"x":{"y":false}},"raw":{"pre":"built"},)"
        R"("val":[1,2],"quote\"key":"a\nb"})");
  CHECK(ct::json::parse(out).has_value());
}

TEST_CASE("Writer handles nested empty containers and top-level arrays", "[core][json]") {
  std::string out;
  Writer w(out);
  w.begin_array()
      .begin_array().end_array()
      .begin_array().begin_array().end_array().end_array()
      .begin_object().end_object()
      .begin_object().key("a").begin_array().end_array().end_object()
      .value(1)
      .end_array();
  CHECK(out == R"([[],[[]],{},{"a":[]},1])");
}

TEST_CASE("Writer and Value agree", "[core][json]") {
  Value v = parsed(R"({"a":[1,2,{"b":null}],"c":"d\u0001","e":1.5,"f":{}})");
  std::string out;
  Writer(out).value(v);
  CHECK(out == v.dump());
  CHECK(out == R"({"a":[1,2,{"b":null}],"c":"d\u0001","e":1.5,"f":{}})");
}

TEST_CASE("strings round-trip through dump and parse", "[core][json]") {
  for (const auto& s : tricky_strings()) {
    std::string text = Value(s).dump();
    auto back = ct::json::parse(text);
    INFO("dumped: " << text);
    REQUIRE(back.has_value());
    REQUIRE(back->is_string());
    CHECK(back->as_string() == s);
    // Also as an object key and inside an array.
    Value obj = Value::object();
    obj.set(s, Value::array_of(std::vector<std::string>{s, s}));
    auto obj_back = ct::json::parse(obj.dump());
    REQUIRE(obj_back.has_value());
    CHECK(*obj_back == obj);
  }
}

TEST_CASE("nested documents round-trip", "[core][json]") {
  const std::vector<std::string> documents = {
      R"({"success":true,"data":{"id":"T042","title":"Write docs","status":"pending"}})",
      R"({"success":false,"error":{"code":"E_NOT_FOUND","exitCode":4,"alternatives":[{"action":"List","operation":"tasks.list"}],"retryable":false,"details":{}}})",
      R"([[[[[[[[[[1]]]]]]]]]])",
      R"([{"a":[{"b":[{"c":[]}]}]},null,true,false,0,-1,"x",0.25,{}])",
      R"({"":"","empty key":{"":[]}})",
      R"("just a string")",
      R"(42)",
      R"(null)",
  };
  for (const auto& doc : documents) {
    Value v = parsed(doc);
    CHECK(v.dump() == doc);
    CHECK(parsed(v.dump()) == v);
  }

  // Deep nesting built programmatically, up to the parser's limit (an object and an array per
  // step: two levels).
  Value deep = Value("leaf");
  for (int i = 0; i < ct::json::kMaxDepth / 2; ++i) {
    Value wrapper = Value::object();
    wrapper.set("k" + std::to_string(i), Value::array_of(std::vector<Value>{deep}));
    deep = std::move(wrapper);
  }
  CHECK(parsed(deep.dump()) == deep);
  Value deeper = Value::array_of(std::vector<Value>{deep});
  auto refused = ct::json::parse(deeper.dump());
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message.find("nesting deeper than") != std::string::npos);
}

TEST_CASE("objects are built in linear time and bounded in size", "[core][json]") {
  // 10,000 members (the limit): quadratic building took seconds at this size.
  std::string text = "{";
  for (std::size_t i = 0; i < ct::json::kMaxMembers; ++i) text += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":" + std::to_string(i);
  text += "}";
  Value big = parsed(text);
  REQUIRE(big.size() == ct::json::kMaxMembers);
  CHECK(big["k9999"] == Value(9999));
  text.pop_back();
  text += ",\"one too many\":1}";
  auto refused = ct::json::parse(text);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message.find("more than 10000 members") != std::string::npos);

  // A repeated key keeps its first position and its last value, in small and large objects.
  Value small = parsed(R"({"a":1,"b":2,"a":3})");
  CHECK(small.dump() == R"({"a":3,"b":2})");
  std::string many = "{\"dup\":0";
  for (int i = 0; i < 40; ++i) many += ",\"m" + std::to_string(i) + "\":" + std::to_string(i);
  many += ",\"dup\":99}";
  Value large = parsed(many);
  CHECK(large.size() == 41);
  CHECK(large.as_object().front().first == "dup");
  CHECK(large["dup"] == Value(99));
}

TEST_CASE("outline reads well-formed JSON that the parser cannot represent", "[core][json]") {
  using ct::json::outline;
  auto big = outline(R"({"jsonrpc":"2.0","id":18446744073709551616,"method":"x","params":{"n":1e999,"s":"\ud800"}})");
  REQUIRE(big.well_formed);
  CHECK(big.top == ct::json::Type::Object);
  CHECK(big.member("id") == "18446744073709551616");
  CHECK(big.member("method") == R"("x")");
  CHECK(big.member("params") == R"({"n":1e999,"s":"\ud800"})");
  CHECK(big.member("missing").empty());
  CHECK_FALSE(ct::json::parse(R"({"id":18446744073709551616})"));

  auto batch = outline(R"( [ {"id":1} , 2 ,"x"] )");
  REQUIRE(batch.well_formed);
  CHECK(batch.top == ct::json::Type::Array);
  CHECK(batch.elements == std::vector<std::string_view>{R"({"id":1})", "2", R"("x")"});

  for (const char* bad : {"", "{", "{\"a\"}", "{\"a\":}", "[1,]", "01", "1.", "-", "1e", "\"\\x\"", "\"\\u12\"",
                          "tru", "{\"a\":1}x", "\"a\nb\"", "{\"a\":1,}", "[1 2]"}) {
    INFO(bad);
    CHECK_FALSE(outline(bad).well_formed);
  }
  for (const char* good : {"0", "-0.5e+3", "\"\\u00e9\\n\"", "[]", "{}", " null ", "[true,false,{\"a\":[{}]}]"}) {
    INFO(good);
    CHECK(outline(good).well_formed);
  }
  CHECK_FALSE(outline("\xff").well_formed);  // invalid UTF-8
  // Deeper than parse() takes, outline still reads it (so the id can be answered); much deeper, not.
  std::string deep(ct::json::kMaxDepth + 1, '[');
  deep += std::string(ct::json::kMaxDepth + 1, ']');
  CHECK(outline(deep).well_formed);
  CHECK_FALSE(ct::json::parse(deep));
  std::string too_deep(ct::json::kMaxOutlineDepth + 1, '[');
  too_deep += std::string(ct::json::kMaxOutlineDepth + 1, ']');
  CHECK_FALSE(outline(too_deep).well_formed);
  // A scalar at the deepest level parse() takes counts no level of its own, in either.
  std::string deepest(ct::json::kMaxDepth, '[');
  deepest += "1" + std::string(ct::json::kMaxDepth, ']');
  CHECK(ct::json::parse(deepest));
  CHECK(outline(deepest).well_formed);
  // Keys with escapes are decoded; a repeated key gives its last value, as parse() keeps it.
  auto escaped = outline(R"({"\u0069d":1,"id":2,"k\u00e9y":"\ud83d\ude00","\ud800x":0})");
  REQUIRE(escaped.well_formed);
  CHECK(escaped.member("id") == "2");
  CHECK(escaped.member("k\xc3\xa9y") == R"("\ud83d\ude00")");
  CHECK(escaped.members[3].first == "\xef\xbf\xbdx");  // a lone surrogate in a key: U+FFFD
}

TEST_CASE("large integral doubles dump to text that parses back", "[core][json]") {
  for (double d : {18446744073709551615.0, 2.3333333333333333e19, -9.3e18, 1e300, 123456789012345678901234.0}) {
    std::string text = Value(d).dump();
    INFO(text);
    auto back = ct::json::parse(text);
    REQUIRE(back);
    CHECK(back->as_double() == d);
  }
  CHECK(Value(12345678901234568.0).dump() == "12345678901234568");  // below 2^63: unchanged
}

TEST_CASE("doubles use the shortest representation; NaN and infinity become null",
          "[core][json]") {
  CHECK(double_text(0.5) == "0.5");
  CHECK(double_text(0.1) == "0.1");
  CHECK(double_text(1.0 / 3) == "0.3333333333333333");
  CHECK(double_text(-2.25) == "-2.25");
  CHECK(double_text(1e21) == "1e+21");
  CHECK(double_text(5e-324) == "5e-324");
  CHECK(double_text(1.0) == "1");  // integral doubles print without a fraction
  CHECK(double_text(std::numeric_limits<double>::quiet_NaN()) == "null");
  CHECK(double_text(std::numeric_limits<double>::infinity()) == "null");
  CHECK(double_text(-std::numeric_limits<double>::infinity()) == "null");
  CHECK(Value(std::nan("")).dump() == "null");
  CHECK(Value(0.1).dump() == "0.1");

  for (double d : {0.1, 0.2, 0.3, 1e-7, 123456.789, 1.7976931348623157e308, 2.2250738585072014e-308,
                   -0.001, 3.141592653589793}) {
    Value back = parsed(Value(d).dump());
    REQUIRE(back.is_number());
    CHECK(back.as_double() == d);
  }
  // NaN in a document still yields valid JSON.
  Value doc = Value::object();
  doc.set("x", std::numeric_limits<double>::quiet_NaN());
  CHECK(doc.dump() == R"({"x":null})");
  CHECK(ct::json::parse(doc.dump()).has_value());
}

TEST_CASE("int64 extremes survive dump and parse", "[core][json]") {
  constexpr auto kMax = std::numeric_limits<std::int64_t>::max();
  constexpr auto kMin = std::numeric_limits<std::int64_t>::min();
  CHECK(Value(kMax).dump() == "9223372036854775807");
  CHECK(Value(kMin).dump() == "-9223372036854775808");
  for (std::int64_t i : {kMax, kMin, std::int64_t{0}, std::int64_t{-1}, std::int64_t{1} << 53}) {
    Value back = parsed(Value(i).dump());
    REQUIRE(back.is_int());
    CHECK(back.as_int() == i);
  }
  std::string out;
  Writer(out).begin_array().value(kMax).value(kMin).end_array();
  CHECK(out == "[9223372036854775807,-9223372036854775808]");
  // Larger than int64: kept as a (lossy) number rather than rejected.
  Value big = parsed("18446744073709551615");
  CHECK(big.type() == ct::json::Type::Double);
}

TEST_CASE("parse errors are E_INVALID_INPUT values", "[core][json]") {
  const std::vector<std::string> bad = {
      "",
      "   ",
      "{",
      R"({"a":)",
      R"({"a":1)",
      R"({"a" 1})",
      R"([1,2)",
      R"([1,])",
      R"({"a":1,})",
      R"("unterminated)",
      "{} x",
      "{}{}",
      "[1] 2",
      "nul",
      "tru",
      "01",
      "1.",
      "+1",
      "1e400",
      "NaN",
      "'single'",
      "{a:1}",
      "\"\xff\"",
      "\xff",
      "\"\xc0\xaf\"",          // overlong '/'
      "\"\xe0\x80\xaf\"",      // overlong '/' in three bytes
      "\"\xf0\x80\x80\xaf\"",  // overlong '/' in four bytes
      "\"\xed\xa0\x80\"",      // UTF-16 surrogate encoded as UTF-8
      "\"\xf4\x90\x80\x80\"",  // above U+10FFFF
      "\"\xe4\xb8\"",          // truncated sequence
      "\"\x80\"",              // lone continuation byte
      "\"\\ud800\"",           // lone high surrogate escape
      "\"\\udc00\"",           // lone low surrogate escape
      "\"\\x41\"",             // invalid escape
      "\"tab\there\"",         // raw control character inside a string
      "\"nl\nhere\"",
  };
  for (const auto& text : bad) {
    auto result = ct::json::parse(text);
    INFO("input: " << text);
    REQUIRE_FALSE(result.has_value());
    CHECK(result.error().code == ct::ErrorCode::InvalidInput);
    CHECK_FALSE(result.error().message.empty());
  }
}

TEST_CASE("parse accepts surrounding whitespace and escapes", "[core][json]") {
  CHECK(parsed(" \n\t{\"a\" : [ 1 , 2 ] }\r\n ").dump() == R"({"a":[1,2]})");
  CHECK(parsed(R"("\u0041\u00e9\u4e2d\ud83d\ude00\/")").as_string() == "Aé中😀/");
  CHECK(parsed(R"("\b\f\n\r\t\"\\")").as_string() == "\b\f\n\r\t\"\\");
  CHECK(parsed(R"("\u0000")").as_string() == std::string("\0", 1));
}

TEST_CASE("valid_utf8", "[core][json]") {
  CHECK(ct::valid_utf8(""));
  CHECK(ct::valid_utf8("ascii"));
  CHECK(ct::valid_utf8("é中😀"));
  CHECK(ct::valid_utf8(std::string_view("\0", 1)));
  CHECK(ct::valid_utf8("\x7f"));
  CHECK(ct::valid_utf8("\xf4\x8f\xbf\xbf"));  // U+10FFFF
  CHECK(ct::valid_utf8("\xef\xbf\xbf"));      // U+FFFF
  CHECK_FALSE(ct::valid_utf8("\xff"));
  CHECK_FALSE(ct::valid_utf8("\xfe"));
  CHECK_FALSE(ct::valid_utf8("\x80"));
  CHECK_FALSE(ct::valid_utf8("\xc0\xaf"));
  CHECK_FALSE(ct::valid_utf8("\xc1\xbf"));
  CHECK_FALSE(ct::valid_utf8("\xe0\x80\xaf"));
  CHECK_FALSE(ct::valid_utf8("\xf0\x80\x80\xaf"));
  CHECK_FALSE(ct::valid_utf8("\xed\xa0\x80"));
  CHECK_FALSE(ct::valid_utf8("\xf4\x90\x80\x80"));
  CHECK_FALSE(ct::valid_utf8("\xe4\xb8"));
  CHECK_FALSE(ct::valid_utf8("abc\xe4"));
  CHECK_FALSE(ct::valid_utf8("\xc3\x28"));
}

TEST_CASE("contains_subset semantics", "[core][json]") {
  using ct::json::contains_subset;
  Value whole = parsed(
      R"({"success":true,"data":{"id":"T001","labels":["a","b"],"size":2,"ratio":0.5,"parent":null}})");

  CHECK(contains_subset(whole, whole));
  CHECK(contains_subset(whole, Value::object()));
  CHECK(contains_subset(whole, parsed(R"({"success":true})")));
  CHECK(contains_subset(whole, parsed(R"({"data":{"id":"T001"}})")));
  CHECK(contains_subset(whole, parsed(R"({"data":{"parent":null}})")));
  CHECK(contains_subset(whole, parsed(R"({"data":{"labels":["a","b"]}})")));

  // Missing keys, wrong values, wrong types.
  CHECK_FALSE(contains_subset(whole, parsed(R"({"error":null})")));
  CHECK_FALSE(contains_subset(whole, parsed(R"({"success":false})")));
  CHECK_FALSE(contains_subset(whole, parsed(R"({"data":{"id":"T002"}})")));
  CHECK_FALSE(contains_subset(whole, parsed(R"({"data":"T001"})")));
  CHECK_FALSE(contains_subset(whole, parsed(R"({"data":{"size":"2"}})")));
  CHECK_FALSE(contains_subset(Value(1), Value::object()));

  // Arrays: same length, element-wise subset, order matters.
  CHECK_FALSE(contains_subset(whole, parsed(R"({"data":{"labels":["a"]}})")));
  CHECK_FALSE(contains_subset(whole, parsed(R"({"data":{"labels":["a","b","c"]}})")));
  CHECK_FALSE(contains_subset(whole, parsed(R"({"data":{"labels":["b","a"]}})")));
  CHECK(contains_subset(parsed(R"([{"a":1,"b":2},{"c":3}])"), parsed(R"([{"a":1},{}])")));
  CHECK_FALSE(contains_subset(parsed(R"({"a":[]})"), parsed(R"({"a":{}})")));
  CHECK(contains_subset(parsed("[]"), parsed("[]")));

  // Numbers compare by value whether integer or double.
  CHECK(contains_subset(Value(2), Value(2.0)));
  CHECK(contains_subset(Value(2.0), Value(2)));
  CHECK(contains_subset(whole, parsed(R"({"data":{"size":2.0,"ratio":0.5}})")));
  CHECK_FALSE(contains_subset(Value(2), Value(2.5)));
  CHECK_FALSE(contains_subset(Value(1), Value(true)));
  CHECK_FALSE(contains_subset(Value(0), Value(nullptr)));
  CHECK_FALSE(contains_subset(Value("1"), Value(1)));

  // Scalars.
  CHECK(contains_subset(Value("x"), Value("x")));
  CHECK_FALSE(contains_subset(Value("x"), Value("X")));
  CHECK(contains_subset(Value(nullptr), Value(nullptr)));
  CHECK(contains_subset(Value(false), Value(false)));
}

TEST_CASE("dump_pretty indents nested values and round-trips", "[json]") {
  auto value = *ct::json::parse(R"({"a":[1,{"b":"c"}],"d":{},"e":[]})");
  std::string pretty = value.dump_pretty();
  CHECK(pretty == "{\n  \"a\": [\n    1,\n    {\n      \"b\": \"c\"\n    }\n  ],\n  \"d\": {},\n  \"e\": []\n}");
  CHECK(*ct::json::parse(pretty) == value);
}

TEST_CASE("write_string appends to what is there and agrees with a byte-by-byte escaper", "[core][json]") {
  // The reference: one byte at a time, as JSON defines it (valid UTF-8 passes through).
  auto reference = [](std::string_view text) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out = "\"";
    for (char ch : text) {
      const auto c = static_cast<unsigned char>(ch);
      if (ch == '"' || ch == '\\') out += std::string("\\") + ch;
      else if (ch == '\n') out += "\\n";
      else if (ch == '\r') out += "\\r";
      else if (ch == '\t') out += "\\t";
      else if (ch == '\b') out += "\\b";
      else if (ch == '\f') out += "\\f";
      else if (c < 0x20) out += std::string("\\u00") + kHex[c >> 4] + kHex[c & 0xF];
      else out += ch;
    }
    return out + "\"";
  };
  const std::string_view pieces[] = {"a", "{\"id\":", "\\", "\n", "\x01", "\x1f", "é", "😀", "\u2028", "plain text ", "\x7f", "\t\"", ""};
  std::uint32_t seed = 20261129;
  for (int round = 0; round < 200; ++round) {
    std::string text;
    const int count = round % 40;
    for (int i = 0; i < count; ++i) {
      seed = seed * 1664525u + 1013904223u;
      text += pieces[(seed >> 8) % std::size(pieces)];
    }
    std::string out = "prefix:";
    ct::json::write_string(out, text);
    INFO("text: " << text);
    CHECK(out == "prefix:" + reference(text));
  }
  // A bad byte anywhere, even after escapes, still repairs the whole string the same way.
  std::string out = "[";
  ct::json::write_string(out, std::string("\"q\"\n\xff") + "\x01");
  CHECK(out == "[\"\\\"q\\\"\\n\xEF\xBF\xBD\\u0001\"");
}

TEST_CASE("what dump() writes reads back to the same text: negative zero, large numbers, any bytes", "[core][json]") {
  auto fixed_point = [](const Value& value) {
    const std::string written = value.dump();
    auto read = ct::json::parse(written);
    REQUIRE(read);
    CHECK(read->dump() == written);
    return written;
  };
  // -0.0 was written "-0", read as the integer 0 and written "0": a hashed value that no longer verifies.
  CHECK(fixed_point(Value(-0.0)) == "-0.0");
  auto negative = ct::json::parse("-0.0");
  REQUIRE(negative);
  CHECK((negative->is_number() && !negative->is_int()));
  CHECK(std::signbit(negative->as_double()));
  CHECK(fixed_point(Value(0.0)) == "0");
  for (double value : {1.0, 0.1, 1e300, 5e-324, 1e21, 9.2e18, 18446744073709551616.0, -123.5e-7})
    (void)fixed_point(Value(value));
  (void)fixed_point(Value(std::numeric_limits<std::int64_t>::min()));
  // Bytes that are not UTF-8 (a file name, a program's output) are written as U+FFFD: the text
  // parses, and stays what it was written as.
  CHECK(fixed_point(Value(std::string("a\xff" "b"))) == "\"a\xEF\xBF\xBD" "b\"");
  CHECK(fixed_point(Value(std::string("\xC0\xAF"))) == "\"\xEF\xBF\xBD\xEF\xBF\xBD\"");  // overlong '/'
  CHECK(fixed_point(Value(std::string("\xED\xA0\x80"))) == "\"\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\"");  // a surrogate
  CHECK(fixed_point(Value(std::string("cut \xE2\x82"))) == "\"cut \xEF\xBF\xBD\xEF\xBF\xBD\"");
  (void)fixed_point(Value("\x01\x1f\"\\\u2028é😀"));
}
