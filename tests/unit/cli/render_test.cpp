// Text rendering: per-operation views, the generic renderer, errors and notes.
#include <catch2/catch.hpp>

#include "cli/render.h"
#include "core/json_parse.h"
#include "gateway/product.h"

namespace {

using ct::cli::Style;

ct::json::Value json(std::string_view text) { return *ct::json::parse(text); }

}  // namespace

TEST_CASE("generic rendering: objects as key/value lines, object lists as tables", "[cli][render]") {
  ct::cli::RenderOptions options;
  CHECK(ct::cli::render_value(json(R"({"pending":2,"done":10,"labels":["a","b"],"archived":false})"), options) ==
        "pending   2\n"
        "done      10\n"
        "labels    a, b\n"
        "archived  no\n");
  CHECK(ct::cli::render_value(json(R"([{"id":"T1","title":"One","status":"done"},{"id":"T2","status":"active"}])"),
                              options) ==
        "ID  STATUS  TITLE\n"
        "T1  done    One\n"
        "T2  active\n");
  CHECK(ct::cli::render_value(json(R"("text")"), options) == "text\n");
  CHECK(ct::cli::render_value(json("null"), options).empty());
  CHECK(ct::cli::render_value(json(R"({"id":"T1","relates":[{"id":"T2","type":"duplicates"}]})"), options) ==
        "id  T1\n"
        "relates:\n"
        "  ID  TYPE\n"
        "  T2  duplicates\n");
}

TEST_CASE("errors print the code, a fix and the valid choices", "[cli][render]") {
  ct::Error error =
      ct::Error(ct::ErrorCode::InvalidParams, "priority: expected one of critical|high|medium|low, got 'hihg'")
          .with_fix(ct::call("tasks.find", {{"query", "x"}}))
          .with_choices("hihg", {"critical", "high", "medium", "low"});
  std::string out = ct::cli::render_error(error, Style{}, ct::registry());
  CHECK(out ==
        "error: priority: expected one of critical|high|medium|low, got 'hihg' (E_INVALID_PARAMS)\n"
        "  fix: ct find x\n"
        "  did you mean: high\n"
        "  valid: critical, high, medium, low\n");
}

TEST_CASE("notes are one short line; warnings go to stderr", "[cli][render]") {
  const ct::OperationSpec* complete = ct::registry().find("tasks", "complete");
  REQUIRE(complete);
  ct::Envelope envelope;
  envelope.data = json(R"({"id":"T001","status":"done"})");
  envelope.note = ct::ErrorCode::NoChange;
  auto rendered = ct::cli::render_envelope(*complete, json(R"({"id":"T001"})"), envelope, {}, ct::registry());
  CHECK(rendered.out == "No change: T001 was already done\n");

  envelope.note.reset();
  envelope.data = json(R"({"id":"T001","status":"done","unblocked":["T003","T004"]})");
  envelope.warnings = {"epic T000 has no open tasks left"};
  rendered = ct::cli::render_envelope(*complete, json(R"({"id":"T001"})"), envelope, {}, ct::registry());
  CHECK(rendered.out == "Completed T001\nUnblocked: T003, T004\n");
  CHECK(rendered.err == "warning: epic T000 has no open tasks left\n");
}
