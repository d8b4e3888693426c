// The only translation unit that includes simdjson.
#define SIMDJSON_EXCEPTIONS 0
#include "core/json_parse.h"

#include <simdjson.h>

namespace ct::json {
namespace {

Value convert(simdjson::dom::element element) {
  using simdjson::dom::element_type;
  switch (element.type()) {
    case element_type::ARRAY: {
      // get() into a local: `for (x : element.get_array().value_unsafe())` iterated a reference
      // into a temporary that was already destroyed (GCC 12 -Wdangling-pointer at -O2).
      simdjson::dom::array elements;
      if (element.get_array().get(elements)) return Value::array();
      Value::Array items;
      for (simdjson::dom::element child : elements)
        items.push_back(convert(child));
      return Value(std::move(items));
    }
    case element_type::OBJECT: {
      Value object = Value::object();
      simdjson::dom::object members;
      if (element.get_object().get(members)) return object;
      for (auto field : members)
        object.set(field.key, convert(field.value));  // a repeated key: the last one wins
      return object;
    }
    case element_type::INT64: return Value(element.get_int64().value_unsafe());
    case element_type::UINT64: return Value(static_cast<double>(element.get_uint64().value_unsafe()));
    case element_type::DOUBLE: return Value(element.get_double().value_unsafe());
    case element_type::STRING: return Value(element.get_string().value_unsafe());
    case element_type::BOOL: return Value(element.get_bool().value_unsafe());
    case element_type::NULL_VALUE: return Value();
  }
  return Value();
}

}  // namespace

Result<Value> parse(std::string_view text) {
  // One parser per thread: simdjson parsers are not thread-safe but are cheap to reuse.
  thread_local simdjson::dom::parser parser;
  simdjson::dom::element root;
  auto error = parser.parse(text.data(), text.size()).get(root);
  if (error) {
    return fail(ErrorCode::InvalidInput,
                std::string("invalid JSON: ") + simdjson::error_message(error));
  }
  return convert(root);
}

}  // namespace ct::json

namespace ct {
bool valid_utf8(std::string_view text) { return simdjson::validate_utf8(text.data(), text.size()); }
}  // namespace ct
