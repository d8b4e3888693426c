// json: core/json_parse.h. json::parse and json::outline read the same bytes.
//   - neither crashes; parse fails only with E_INVALID_INPUT;
//   - outline accepts every document parse accepts, and agrees on the top-level shape; for each
//     key of a top-level object, outline().member(key) is the value parse keeps;
//   - a parsed value's dump() (and dump_pretty()) parses again to an equal value (numbers by
//     value: "1.0" comes back as the integer 1);
//   - dump() is a fixed point: what it writes parses and is written again byte for byte — the
//     audit chain hashes values as written and verifies them as read back (issue 50 item 4: -0.0
//     was written "-0", read as the integer 0, written "0").
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
  if (!outline.well_formed) fuzz::finding("parse accepted a document that outline() refuses", text);
  if (outline.top != outline_type(*parsed))
    fuzz::finding("outline() and parse disagree on the top-level type", text,
                  std::string(json::to_string(outline.top)) + " vs " + std::string(json::to_string(parsed->type())));
  if (parsed->is_array() && outline.elements.size() != parsed->size())
    fuzz::finding("outline() and parse disagree on the number of array elements", text);
  // parse keeps one member per key; outline keeps them all.
  if (parsed->is_object() && outline.members.size() < parsed->size())
    fuzz::finding("outline() lists fewer members than parse", text);
  // member() reads what parse keeps: the value of the last of repeated keys.
  if (parsed->is_object())
    for (const auto& [key, value] : parsed->as_object()) {
      auto raw = json::parse(outline.member(key));
      if (!raw || !fuzz::same_json(*raw, value))
        fuzz::finding("outline().member(key) is not the value parse keeps", text, key);
    }

  std::string dumped = parsed->dump();
  auto again = json::parse(dumped);
  if (!again) fuzz::finding("dump() of a parsed value does not parse", text, dumped + " -> " + again.error().message);
  if (!fuzz::same_json(*parsed, *again)) fuzz::finding("parse(dump(v)) differs from v", text, dumped);
  if (again && again->dump() != dumped)
    fuzz::finding("dump(parse(dump(v))) differs from dump(v): a hashed value would not verify", text,
                  dumped + " -> " + again->dump());
  if (!json::outline(dumped).well_formed) fuzz::finding("outline() refuses dump() of a parsed value", text, dumped);

  std::string pretty = parsed->dump_pretty();
  auto from_pretty = json::parse(pretty);
  if (!from_pretty) fuzz::finding("dump_pretty() of a parsed value does not parse", text, pretty);
  if (!fuzz::same_json(*parsed, *from_pretty)) fuzz::finding("parse(dump_pretty(v)) differs from v", text, pretty);
  return 0;
}
