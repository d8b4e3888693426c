// The constraints of a text (engines/rules/memory_constraints.h, issue 54 seed 000): H2 sections
// and the top-level list items inside them, with ids that stay the same while their text does.
#include <catch2/catch.hpp>

#include "engines/rules/memory_constraints.h"

using namespace ct::memory;

namespace {

std::vector<std::string> ids(const std::vector<Constraint>& constraints) {
  std::vector<std::string> out;
  for (const auto& c : constraints) out.push_back(c.id);
  return out;
}

}  // namespace

TEST_CASE("constraints: each H2 section and each list item inside one", "[memory][constraints]") {
  const auto found = constraints_of(
      "Intro text is no constraint.\n"
      "## Steps\n"
      "Inspect the diff first.\n"
      "- Run the tests\n"
      "  before you commit\n"
      "- Write the message\n"
      "  - nested items belong to their item\n"
      "1. Numbered items count on\n"
      "### A subsection stays in Steps\n"
      "## Rules ##\n"
      "Never use floats for money.\r\n");
  REQUIRE(ids(found) == std::vector<std::string>{"Steps", "Steps/1", "Steps/2", "Steps/3", "Rules"});
  CHECK(found[0].name == "Steps");
  CHECK(found[0].text.starts_with("Inspect the diff first.\n- Run the tests"));
  CHECK(found[0].text.ends_with("### A subsection stays in Steps"));
  CHECK(found[1].name == "Steps");
  CHECK(found[1].text == "Run the tests\nbefore you commit");
  CHECK(found[2].text == "Write the message\n- nested items belong to their item");
  CHECK(found[3].text == "Numbered items count on");
  CHECK(found[4].text == "Never use floats for money.");
  CHECK(found[4].text_hash.size() == 16);
  CHECK(found[1].text_hash != found[2].text_hash);
}

TEST_CASE("constraints: ids are stable, distinct, and code is text", "[memory][constraints]") {
  // The same text, the same ids and hashes; an edit elsewhere leaves a constraint's hash alone.
  const auto before = constraints_of("## Steps\n- one\n- two\n## Notes\nfree text\n");
  const auto after = constraints_of("## Steps\n- one\n- two\n## Notes\nother text\n");
  REQUIRE(ids(before) == ids(after));
  CHECK(before[1].text_hash == after[1].text_hash);
  CHECK(before[3].text_hash != after[3].text_hash);
  // A title used twice gets its count; a heading or item in a fence is text.
  CHECK(ids(constraints_of("## Steps\n- a\n## Steps\n- b\n")) ==
        std::vector<std::string>{"Steps", "Steps/1", "Steps (2)", "Steps (2)/1"});
  const auto fenced = constraints_of("## Build\n```sh\n## not a heading\n- not an item\n```\n- real item\n");
  CHECK(ids(fenced) == std::vector<std::string>{"Build", "Build/1"});
  CHECK(fenced[0].text.find("## not a heading") != std::string::npos);
  // No H2: nothing to attest but the whole entry. An H1 ends a section; "##x" is no heading.
  CHECK(constraints_of("Plain body\n- item\n").empty());
  CHECK(constraints_of("").empty());
  CHECK(ids(constraints_of("## A\ntext\n# Top\n- after the H1\n##B\n")) == std::vector<std::string>{"A"});
  // The reference form memory.applied takes.
  CHECK(split_constraint_ref("M012#Steps/2").entry == "M012");
  CHECK(*split_constraint_ref("M012#Steps/2").constraint == "Steps/2");
  CHECK_FALSE(split_constraint_ref("M012").constraint);
}
