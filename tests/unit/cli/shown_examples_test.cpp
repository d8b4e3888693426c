// Documentation cannot drift from behaviour: every MCP call and every `ct` command that the help
// levels (0–3, and level 2 of every operation) and the injection templates show is executed
// against a fresh project. A call may fail for a reason of the data (a task in the wrong state),
// never because it is malformed: an unknown domain, operation, param or flag fails this test.
#include <catch2/catch.hpp>

#include <map>
#include <regex>
#include <set>

#include "cli/args.h"
#include "cli/command_tree.h"
#include "core/json_parse.h"
#include "disclosure/help_levels.h"
#include "gateway/mcp_syntax.h"
#include "gateway/product.h"
#include "unit/cli/shell_words.h"
#include "unit/test_support.h"

using namespace ct;

namespace {

struct Shown {
  std::string source;
  std::string text;
};

/// `cleo_query tasks.show {"id":"T001"}`: the tool, domain.operation and a balanced JSON object.
std::vector<Shown> mcp_calls(const std::string& source, const std::string& text) {
  std::vector<Shown> out;
  static const std::regex call(R"((cleo_query|cleo_mutate) [a-z]+\.[A-Za-z.]+ \{)");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), call); it != std::sregex_iterator(); ++it) {
    std::size_t start = static_cast<std::size_t>(it->position());
    std::size_t pos = start + static_cast<std::size_t>(it->length()) - 1;
    int depth = 0;
    bool in_string = false;
    for (; pos < text.size(); ++pos) {
      char c = text[pos];
      if (in_string) {
        if (c == '\\') ++pos;
        else if (c == '"') in_string = false;
      } else if (c == '"') {
        in_string = true;
      } else if (c == '{') {
        ++depth;
      } else if (c == '}' && --depth == 0) {
        break;
      }
    }
    out.push_back({source, text.substr(start, pos + 1 - start)});
  }
  return out;
}

/// `ct …` in backticks and the `CLI: ct …` lines of level 2; forms with <placeholders> or "…"
/// are patterns for people, not commands.
std::vector<Shown> ct_commands(const std::string& source, const std::string& text) {
  std::vector<Shown> out;
  static const std::regex quoted("`(ct [^`]*)`");
  static const std::regex cli_line("CLI: (ct [^\n]*)");
  for (const auto* pattern : {&quoted, &cli_line}) {
    for (auto it = std::sregex_iterator(text.begin(), text.end(), *pattern); it != std::sregex_iterator(); ++it) {
      std::string command = (*it)[1].str();
      if (command.find('<') != std::string::npos || command.find("…") != std::string::npos) continue;
      out.push_back({source, command});
    }
  }
  return out;
}

/// A project with the tasks the examples name: T001 an epic, T002–T003 under it (T003 waits on
/// T002), T004 and T005 on their own. Seeded once; every call gets a fresh copy of it.
std::unique_ptr<test::Project> seeded_project() {
  static const std::unique_ptr<test::Project> seed = [] {
    auto project = std::make_unique<test::Project>();
    project->add(R"({"title":"Ship version one","type":"epic"})");
    project->add(R"({"title":"Write the README","parent":"T001"})");
    project->add(R"({"title":"Add login form","parent":"T001","depends":["T002"]})");
    project->add(R"({"title":"Fix the auth bug"})");
    project->add(R"({"title":"Polish the docs"})");
    return project;
  }();
  return std::make_unique<test::Project>(*seed);
}

/// Codes that say the call itself is wrong (and so the documentation showing it).
bool malformed_call(const Envelope& envelope) {
  if (envelope.success || !envelope.error) return false;
  switch (envelope.error->code) {
    case ErrorCode::InvalidInput:
    case ErrorCode::InvalidParams:
    case ErrorCode::InvalidDomain:
    case ErrorCode::InvalidOperation:
    case ErrorCode::InvalidGateway:
    case ErrorCode::Internal:
      return true;
    default:
      return false;
  }
}

Envelope run_mcp(test::Project& project, const std::string& call) {
  std::size_t space = call.find(' ');
  std::size_t params_at = call.find(' ', space + 1);
  Gateway gateway = call.starts_with("cleo_query") ? Gateway::Query : Gateway::Mutate;
  std::string name = call.substr(space + 1, params_at - space - 1);
  std::size_t dot = name.find('.');
  auto params = json::parse(call.substr(params_at + 1));
  if (!params) return failure(Error(ErrorCode::InvalidInput, "params are not JSON: " + params.error().message));
  return project.router().dispatch({gateway, name.substr(0, dot), name.substr(dot + 1), *params});
}

Envelope run_ct(test::Project& project, const std::string& command) {
  std::vector<std::string> args = test::shell_words(command);
  args.erase(args.begin());  // "ct"
  cli::Route route = cli::find_route(registry(), args);
  if (route.error) return failure(*route.error);
  cli::CommandTree tree(registry(), route);
  cli::InputSource none;
  auto parsed = cli::parse_command(tree, args, none);
  if (!parsed) return failure(parsed.error());
  Envelope shown;
  if (!parsed->help.empty() || !route.spec) return shown;  // help text is a success too
  return project.router().dispatch({route.spec->gateway, std::string(route.spec->domain), std::string(route.spec->name),
                                    parsed->params});
}

std::string must(Result<std::string> text) {
  if (!text) FAIL(text.error().message);
  return *text;
}

}  // namespace

TEST_CASE("every call and ct command shown in help and templates runs", "[cli][disclosure][examples]") {
  const Registry& r = registry();
  std::map<std::string, std::string> texts = {
      {"help level 0", must(disclosure::level0(r))},
      {"help level 1", must(disclosure::level1(r))},
      {"help level 3", must(disclosure::level3(r))},
      {"AGENT-INJECTION.md", must(disclosure::render(r, "AGENT-INJECTION.md"))},
      {"CLEO-INJECTION.md", must(disclosure::render(r, "CLEO-INJECTION.md"))},
      {"docs/operations.md", must(disclosure::operations_reference(r))},
  };
  std::map<std::string, std::size_t> mcp_count, ct_count;
  std::set<std::string> seen;
  std::size_t runs = 0;
  for (const auto& [source, text] : texts) {
    for (const auto& shown : mcp_calls(source, text)) {
      ++mcp_count[source];
      if (!seen.insert(shown.text).second) continue;
      auto project = seeded_project();
      Envelope envelope = run_mcp(*project, shown.text);
      INFO(source << ": " << shown.text << "\n  → " << to_json(envelope, McpAdvice(registry())));
      CHECK_FALSE(malformed_call(envelope));
      ++runs;
    }
    for (const auto& shown : ct_commands(source, text)) {
      ++ct_count[source];
      if (!seen.insert(shown.text).second) continue;
      auto project = seeded_project();
      Envelope envelope = run_ct(*project, shown.text);
      INFO(source << ": " << shown.text << "\n  → " << to_json(envelope, McpAdvice(registry())));
      CHECK_FALSE(malformed_call(envelope));
      ++runs;
    }
  }
  // The extraction itself must see what the texts show.
  CHECK(mcp_count["help level 0"] == 6);  // five quick-reference calls and the level-1 help call
  CHECK(mcp_count["help level 3"] >= 20);
  // The injected files show the CLI in one paragraph (help/cli.md); every operation's command
  // line is in docs/operations.md (level 2).
  CHECK(ct_count["AGENT-INJECTION.md"] >= 2);
  CHECK(ct_count["CLEO-INJECTION.md"] >= 2);
  std::size_t examples = 0;
  for (const auto& spec : r.operations()) examples += spec.examples.size();
  CHECK(mcp_count["docs/operations.md"] >= examples);
  CHECK(ct_count["docs/operations.md"] >= examples);
  CHECK(runs > examples);
}

TEST_CASE("each level-0 quick-reference call succeeds on a fresh project", "[cli][disclosure][examples]") {
  // What an agent carries always must not just parse: each call does what it shows.
  std::string text = must(disclosure::level0(registry()));
  auto calls = mcp_calls("level 0", text);
  REQUIRE(calls.size() == 6);
  for (const auto& call : calls) {
    auto project = seeded_project();
    Envelope envelope = run_mcp(*project, call.text);
    INFO(call.text << "\n  → " << to_json(envelope, McpAdvice(registry())));
    CHECK(envelope.success);
  }
}

TEST_CASE("the extractors find calls and commands and skip patterns", "[cli][disclosure][examples]") {
  auto calls = mcp_calls("t", R"(x cleo_mutate tasks.add {"title":"a {b}","labels":["x"]} and cleo_query system.config.get {} end)");
  REQUIRE(calls.size() == 2);
  CHECK(calls[0].text == R"(cleo_mutate tasks.add {"title":"a {b}","labels":["x"]})");
  CHECK(calls[1].text == "cleo_query system.config.get {}");
  auto commands = ct_commands("t", "run `ct add \"x y\" --priority high`, or `ct <command> --help`\n  CLI: ct show T001\n");
  REQUIRE(commands.size() == 2);
  CHECK(commands[0].text == "ct add \"x y\" --priority high");
  CHECK(commands[1].text == "ct show T001");
  CHECK(test::shell_words(R"(ct add "Write \"it\"" 'a b' c)") == std::vector<std::string>{"ct", "add", "Write \"it\"", "a b", "c"});
}
