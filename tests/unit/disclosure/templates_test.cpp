// The placeholder syntax of templates/ and the embedded templates themselves: each one renders,
// and a placeholder naming something the registry lacks fails the render.
#include <catch2/catch.hpp>

#include "disclosure/help_levels.h"
#include "gateway/product.h"
#include "disclosure/templates.h"

using namespace ct;
using namespace ct::disclosure;

namespace {

Result<std::string> echo_args(std::string_view name, const std::vector<std::string>& args) {
  if (name == "missing") return fail(ErrorCode::NotFound, "no such thing");
  std::string out = "<" + std::string(name);
  for (const auto& arg : args) out += "|" + arg;
  return out + ">";
}

}  // namespace

TEST_CASE("expand replaces placeholders with their words as arguments", "[disclosure][templates]") {
  auto out = expand("a {{x}} b {{ y  1 two }} c {{z}}", "t.md", echo_args);
  REQUIRE(out);
  CHECK(*out == "a <x> b <y|1|two> c <z>");
  // Replacements are not expanded again; text without placeholders is kept byte for byte.
  auto literal = expand("{{x}}", "t.md", [](std::string_view, const std::vector<std::string>&) -> Result<std::string> {
    return std::string("{{x}}");
  });
  REQUIRE(literal);
  CHECK(*literal == "{{x}}");
  CHECK(*expand("no placeholders {\"a\":{\"b\":1}}\n", "t.md", echo_args) == "no placeholders {\"a\":{\"b\":1}}\n");
}

TEST_CASE("expand names the template and line of a bad placeholder", "[disclosure][templates]") {
  auto unknown = expand("line one\nline {{missing}}\n", "help/x.md", echo_args);
  REQUIRE_FALSE(unknown);
  CHECK(unknown.error().message == "template help/x.md:2: {{missing}}: no such thing");
  auto unclosed = expand("a {{x\n}}", "t.md", echo_args);
  REQUIRE_FALSE(unclosed);
  CHECK(unclosed.error().message.find("t.md:1: '{{' without '}}'") != std::string::npos);
  CHECK_FALSE(expand("{{ }}", "t.md", echo_args));
}

TEST_CASE("every embedded template renders from the registry", "[disclosure][templates]") {
  REQUIRE(embedded_templates().size() >= 10);
  const Resolver files = [](std::string_view name, const std::vector<std::string>&) -> Result<std::string> {
    if (name == "agent_file" || name == "protocol_file" || name == "host_file") return std::string("x.md");
    // Placeholders of the templates' own renderers (level 2, spawn, research.inject, the prompts:
    // tests/unit/disclosure/prompts_test.cpp renders those with real values).
    if (name.starts_with("op_") || name.starts_with("spawn_") || name.starts_with("research_") || name == "domain" || name == "domain_index" ||
        name == "reference" || name == "arg" || name == "call_with")
      return std::string("…");
    return fail(ErrorCode::NotFound, "");
  };
  for (const auto& entry : embedded_templates()) {
    INFO(entry.name);
    CHECK_FALSE(entry.text.empty());
    auto rendered = render(registry(), entry.name, files);
    if (!rendered) FAIL(rendered.error().message);
    CHECK(rendered->find("{{") == std::string::npos);
  }
  CHECK_FALSE(template_text("help/no-such.md"));
}

TEST_CASE("registry placeholders refuse names the registry does not have", "[disclosure][templates]") {
  for (auto text : {"{{call tasks.frobnicate}}", "{{call tasks.add 9}}", "{{error E_NOPE}}", "{{with_param nope}}",
                    "{{choices tasks.add title}}", "{{config no.key}}", "{{param tasks.add nope}}", "{{help x}}", "{{op nodomain}}",
                    "{{quick_reference}}", "{{nonsense}}"}) {
    INFO(text);
    auto out = expand(text, "t.md", [](std::string_view name, const std::vector<std::string>& args) {
      return resolve_placeholder(registry(), name, args);
    });
    CHECK_FALSE(out);
  }
  auto good = expand("{{call tasks.add 2}} | {{cli tasks.show}} | {{error E_NOT_FOUND}} | {{choices tasks.add priority}} | "
                     "{{config hierarchy.maxDepth}} | {{help 2 tasks add}} | {{cli_help 1}} | {{op tasks.next}}",
                     "t.md", [](std::string_view name, const std::vector<std::string>& args) {
                       return resolve_placeholder(registry(), name, args);
                     });
  REQUIRE(good);
  CHECK(*good ==
        R"(cleo_mutate tasks.add {"title":"Add login form","parent":"T001","depends":["T002"]} | ct show T001 | )"
        R"(E_NOT_FOUND (exit 4) | critical|high|medium|low | hierarchy.maxDepth (default 3) | )"
        R"(cleo_query system.help {"level":2,"domain":"tasks","operation":"add"} | ct help --level 1 | tasks.next)");
}
