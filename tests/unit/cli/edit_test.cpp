// `ct edit`'s form: a task out, the changes back in (issue 17).
#include <catch2/catch.hpp>

#include <cstdlib>

#include "cli/edit.h"
#include "core/json_parse.h"

namespace {

using ct::cli::edit_changes;
using ct::cli::edit_form;
using ct::json::Value;

Value task() {
  return ct::json::parse(R"({"id":"T005","title":"Build the API","status":"pending","priority":"medium","type":"task",
    "labels":["api","backend"],"depends":["T002"],"acceptance":["Routes documented","Tests pass"],
    "description":"First line\n\nThird line","version":4})").value();
}

std::string replaced(std::string text, std::string_view from, std::string_view to) {
  auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

TEST_CASE("the form read back unchanged changes nothing", "[cli][edit]") {
  std::string form = edit_form(task());
  CHECK(form.find("# ct edit T005 (version 4)") == 0);
  CHECK(form.find("\nacceptance:\n  - Routes documented\n  - Tests pass\n") != std::string::npos);
  CHECK(form.find("\ndescription: |\n  First line\n\n  Third line\n") != std::string::npos);
  auto changes = edit_changes(task(), form);
  REQUIRE(changes);
  CHECK(changes->empty());
}

TEST_CASE("only what changed goes into the update", "[cli][edit]") {
  std::string form = edit_form(task());
  form = replaced(form, "title: Build the API", "title: Build the public API");
  form = replaced(form, "labels: api, backend", "labels: api");
  form = replaced(form, "  - Tests pass\n", "  - Tests pass\n  - Load tested\n");
  form = replaced(form, "  Third line\n", "  Third line, longer\n");
  form += "  A note\n  on two lines\n";
  auto changes = edit_changes(task(), form);
  REQUIRE(changes);
  CHECK(*changes == ct::json::parse(R"({"title":"Build the public API","labels":["api"],
    "acceptance":["Routes documented","Tests pass","Load tested"],"mode":"replace",
    "description":"First line\n\nThird line, longer","notes":"A note\non two lines"})").value());
}

TEST_CASE("a field left out is kept, a field emptied is cleared", "[cli][edit]") {
  std::string form = edit_form(task());
  form = replaced(form, "depends: T002\n", "");
  form = replaced(form, "labels: api, backend", "labels:");
  auto changes = edit_changes(task(), form);
  REQUIRE(changes);
  CHECK(*changes == ct::json::parse(R"({"labels":[],"mode":"replace"})").value());
}

TEST_CASE("a form that does not read names its line", "[cli][edit]") {
  auto unknown = edit_changes(task(), "title: Build the API\nowner: me\n");
  REQUIRE_FALSE(unknown);
  CHECK(unknown.error().code == ct::ErrorCode::InvalidInput);
  CHECK(unknown.error().message == "line 2: unknown field 'owner'");
  auto stray = edit_changes(task(), "title: Build the API\n  - an item\n");
  REQUIRE_FALSE(stray);
  CHECK(stray.error().message.starts_with("line 2:"));
  auto twice = edit_changes(task(), "title: A\ntitle: B\n");
  REQUIRE_FALSE(twice);
  CHECK(twice.error().message == "line 2: title is given twice");
}

TEST_CASE("the editor is VISUAL, else EDITOR, else vi, split into words", "[cli][edit]") {
  ::setenv("VISUAL", "", 1);
  ::setenv("EDITOR", "code --wait 'a b'", 1);
  CHECK(ct::cli::editor_command() == std::vector<std::string>{"code", "--wait", "a b"});
  ::setenv("VISUAL", "nano", 1);
  CHECK(ct::cli::editor_command() == std::vector<std::string>{"nano"});
  ::unsetenv("VISUAL");
  ::unsetenv("EDITOR");
  CHECK(ct::cli::editor_command() == std::vector<std::string>{"vi"});
}

}  // namespace
