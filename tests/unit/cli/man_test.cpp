// The manual pages: ct(1) and one ct-<domain>(1) per domain, projected from the registry, the
// command tree, the error table and the server commands' flags.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "cli/args.h"
#include "cli/man.h"
#include "cli/servers.h"
#include "core/error.h"
#include "gateway/product.h"

namespace {

using ct::cli::ManPage;
using ct::cli::roff_text;

const ManPage& page(const std::vector<ManPage>& pages, const std::string& file) {
  auto found = std::find_if(pages.begin(), pages.end(), [&](const ManPage& p) { return p.file == file; });
  REQUIRE(found != pages.end());
  return *found;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("text becomes roff: escapes, minus signs, control lines, non-ASCII characters, break points", "[cli][man]") {
  CHECK(roff_text("plain words") == "plain words");
  CHECK(roff_text("--if-version") == "\\-\\-if\\-version");
  CHECK(roff_text("a\\b") == "a\\eb");
  CHECK(roff_text(".cleo/tasks.db") == "\\&.cleo/tasks.db");
  CHECK(roff_text("'quoted'") == "\\&'quoted'");
  CHECK(roff_text("x\n.y") == "x\n\\&.y");
  CHECK(roff_text("a — b … ≤ 5") == "a \\[u2014] b \\[u2026] \\[u2264] 5");
  CHECK(roff_text("\xF0\x9F\x98\x80") == "\\[u1F600]");
  CHECK(roff_text("\xE2\x80") == "\\[uFFFD]");  // a cut sequence
  CHECK(roff_text("one|two, three,four") == "one|\\:two, three,\\:four");  // break points in lists
}

TEST_CASE("ct(1) and a page per domain, ASCII only", "[cli][man]") {
  const auto& registry = ct::registry();
  const auto pages = ct::cli::man_pages(registry);
  REQUIRE(pages.size() == registry.domains().size() + 1);
  CHECK(pages.front().file == "ct.1");
  for (const auto& domain : registry.domains()) CHECK(page(pages, "ct-" + domain + ".1").text.starts_with(".\\\""));
  for (const auto& p : pages) {
    INFO(p.file);
    CHECK(std::all_of(p.text.begin(), p.text.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; }));
    CHECK(has(p.text, "\n.SH NAME\n"));
    CHECK(has(p.text, "\n.SH SYNOPSIS\n"));
    CHECK(has(p.text, "\n.SH DESCRIPTION\n"));
  }
}

TEST_CASE("ct(1) names the commands, global options, exit codes, environment and files", "[cli][man]") {
  const auto& registry = ct::registry();
  const std::string text = page(ct::cli::man_pages(registry), "ct.1").text;
  CHECK(has(text, ".SH NAME\nct, cleo \\- "));
  for (const auto* section : {".SH COMMANDS", ".SH DOMAINS", ".SH \"MCP SERVERS\"", ".SH \"GLOBAL OPTIONS\"",
                              ".SH \"EXIT STATUS\"", ".SH ENVIRONMENT", ".SH FILES", ".SH \"SEE ALSO\""})
    CHECK(has(text, section));
  CHECK(has(text, "\\fBct add\\fR"));
  CHECK(has(text, "\\fBct edit\\fR"));
  CHECK(has(text, "\\fBct completion\\fR"));
  for (const auto& domain : registry.domains()) CHECK(has(text, "\\fBct\\-" + domain + "\\fR(1)"));
  for (const auto* option : {"\\-\\-json", "\\-\\-project", "\\-\\-reason", "\\-\\-intent", "\\-\\-session",
                             "\\-\\-read\\-only", "\\-\\-version"})
    CHECK(has(text, std::string("\\fB") + option + "\\fR"));
  // The server commands' own flags come from the parser run_server_command uses.
  CHECK(has(text, "\\fB\\-\\-dashboard\\-write\\fR"));
  CHECK(has(text, "\\fB\\-\\-token\\-env\\fR"));
  for (const auto& info : ct::error_table()) {
    INFO(info.name);
    CHECK(has(text, ".TP\n\\fB" + std::to_string(info.exit_code) + "\\fR\n"));
    CHECK(has(text, roff_text(info.name)));
  }
  for (const auto& variable : ct::cli::environment_variables()) CHECK(has(text, "\\fB" + roff_text(variable.name) + "\\fR"));
  for (const auto& file : ct::cli::project_files()) CHECK(has(text, "\\fI" + roff_text(file.path) + "\\fR"));
}

TEST_CASE("a domain's page holds every operation with its flags, examples and errors", "[cli][man]") {
  const auto& registry = ct::registry();
  const auto pages = ct::cli::man_pages(registry);
  for (const auto& spec : registry.operations()) {
    INFO(spec.full_name());
    const std::string& text = page(pages, "ct-" + std::string(spec.domain) + ".1").text;
    CHECK(has(text, ".SS \"" + roff_text(spec.full_name()) + "\"\n"));
    for (const auto& param : spec.params)
      for (const auto& spelling : ct::cli::flag_spellings(param)) CHECK(has(text, "\\fB" + roff_text(spelling) + "\\fR"));
    for (auto code : spec.errors) CHECK(has(text, roff_text(ct::to_string(code))));
  }
  const std::string& tasks = page(pages, "ct-tasks.1").text;
  CHECK(has(tasks, "\\fBct tasks add\\fR [\\fItitle\\fR] [\\fIoptions\\fR]\n"));
  CHECK(has(tasks, "ct add \"Write the README\""));
  CHECK(has(tasks, "Also: ct list, ct ls"));
}
