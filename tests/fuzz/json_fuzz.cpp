// json: core/json_parse.h. json::parse and json::outline read the same bytes.
//   - neither crashes; parse fails only with E_INVALID_INPUT;
//   - outline accepts every document parse accepts, and agrees on the top-level shape;
//   - a parsed value's dump() (and dump_pretty()) parses again to an equal value (numbers by
//     value: "1.0" comes back as the integer 1, and -0.0 as "-0", which parses to the integer 0).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/json_parse.h"
#include "fuzz_support.h"

using namespace ct;

namespace {

json::Type outline_type(const json::Value& value) {
  return value.is_number() ? json::Type::Double : value.type();
}

/// Known finding outline-depth-64 (regressions/json/): outline() refuses any value at nesting
/// depth 64, parse() only containers there, so a scalar inside 64 containers parses but does not
/// outline. True when `value` holds a scalar that deep.
bool has_scalar_at_depth_64(const json::Value& value, int depth = 0) {
  if (value.is_array())
    for (const auto& item : value.as_array())
      if (has_scalar_at_depth_64(item, depth + 1)) return true;
  if (value.is_object())
    for (const auto& [key, item] : value.as_object())
      if (has_scalar_at_depth_64(item, depth + 1)) return true;
  return !value.is_array() && !value.is_object() && depth >= json::kMaxDepth;
}

/// Known finding json-big-double (regressions/json/): a double beyond the 64-bit integers whose
/// shortest form has no '.' or exponent dumps as an integer literal that parse() refuses.
bool has_big_integral_double(const json::Value& value) {
  if (value.type() == json::Type::Double) {
    std::string text;
    json::write_double(text, value.as_double());
    return std::fabs(value.as_double()) >= 9223372036854775808.0 && text.find_first_of(".e") == std::string::npos;
  }
  if (value.is_array())
    for (const auto& item : value.as_array())
      if (has_big_integral_double(item)) return true;
  if (value.is_object())
    for (const auto& [key, item] : value.as_object())
      if (has_big_integral_double(item)) return true;
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text = fuzz::as_text(data, size);
  auto parsed = json::parse(text);
  json::Outline outline = json::outline(text);
  (void)outline.member("id");
  if (!parsed) {
    if (parsed.error().code != ErrorCode::InvalidInput)
      fuzz::finding("parse failed with a code other than E_INVALID_INPUT", text, parsed.error().message);
    return 0;
  }
  if (!outline.well_formed && has_scalar_at_depth_64(*parsed) && fuzz::skip_known("outline-depth-64")) return 0;
  if (!outline.well_formed) fuzz::finding("parse accepted a document that outline() refuses", text);
  if (outline.top != outline_type(*parsed))
    fuzz::finding("outline() and parse disagree on the top-level type", text,
                  std::string(json::to_string(outline.top)) + " vs " + std::string(json::to_string(parsed->type())));
  if (parsed->is_array() && outline.elements.size() != parsed->size())
    fuzz::finding("outline() and parse disagree on the number of array elements", text);
  // parse keeps one member per key; outline keeps them all.
  if (parsed->is_object() && outline.members.size() < parsed->size())
    fuzz::finding("outline() lists fewer members than parse", text);

  std::string dumped = parsed->dump();
  auto again = json::parse(dumped);
  if (!again && has_big_integral_double(*parsed) && fuzz::skip_known("json-big-double")) return 0;
  if (!again) fuzz::finding("dump() of a parsed value does not parse", text, dumped + " -> " + again.error().message);
  if (!fuzz::same_json(*parsed, *again)) fuzz::finding("parse(dump(v)) differs from v", text, dumped);
  if (!json::outline(dumped).well_formed && has_scalar_at_depth_64(*parsed) && fuzz::skip_known("outline-depth-64"))
    return 0;
  if (!json::outline(dumped).well_formed) fuzz::finding("outline() refuses dump() of a parsed value", text, dumped);

  std::string pretty = parsed->dump_pretty();
  auto from_pretty = json::parse(pretty);
  if (!from_pretty && has_big_integral_double(*parsed) && fuzz::skip_known("json-big-double")) return 0;
  if (!from_pretty) fuzz::finding("dump_pretty() of a parsed value does not parse", text, pretty);
  if (!fuzz::same_json(*parsed, *from_pretty)) fuzz::finding("parse(dump_pretty(v)) differs from v", text, pretty);
  return 0;
}
