// The envelope's codec (domains/envelope.h): advice travels as a value — an error's fix, warnings,
// advice inside the data — and the encoder writes it as the edge's AdviceWriter does.
#include <catch2/catch.hpp>

#include "core/json_parse.h"
#include "gateway/mcp_syntax.h"
#include "gateway/product.h"
#include "domains/envelope.h"
#include "unit/domains/advising_envelope.h"

using namespace ct;

using test::advising;

TEST_CASE("advice is a value until an edge writes it", "[envelope]") {
  Advice advice = "read it again (" + call("tasks.show", {{"id", "T2"}}) + ")";
  json::Value value = advice.to_value();
  CHECK(Advice::is_value(value));
  CHECK(value.dump() == R"x({"$advice":["read it again (",{"operation":"tasks.show","params":{"id":"T2"}},")"]})x");
  std::optional<Advice> back = Advice::from_value(value);
  REQUIRE(back);
  CHECK(back->to_value() == value);
  CHECK_FALSE(Advice::from_value(json::Value("text")));
  CHECK_FALSE(Advice::from_value(json::Value(json::Value::Object{{"$advice", 3}})));
  // A call written from an example keeps its JSON form.
  Advice example = registry().find("tasks", "show")->example_call();
  CHECK(Advice::from_value(example.to_value())->only_call()->json_params);
}

TEST_CASE("a remembered reply keeps its advice as values, for whichever edge repeats the call", "[envelope]") {
  const Envelope envelope = advising();
  const std::string kept = to_json(envelope, AdviceAsValue(registry()));
  auto parsed = json::parse(kept);
  REQUIRE(parsed);
  Envelope replayed = envelope_from_value(*parsed);
  CHECK(to_json(replayed, McpAdvice(registry())) == to_json(envelope, McpAdvice(registry())));
  CHECK(to_json(replayed, AdviceAsJson(registry())) == to_json(envelope, AdviceAsJson(registry())));
}
