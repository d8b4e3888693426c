// Instruction-file injection: the block between the CLEO markers, idempotence, user text kept,
// outdated blocks replaced, malformed markers refused without writing, check mode, create vs
// existing-only, the global files, and system.inject through the router.
#include <catch2/catch.hpp>

#include <atomic>
#include <fstream>
#include <sstream>
#include <thread>

#include "disclosure/help_levels.h"
#include "disclosure/injection.h"
#include "gateway/mcp_syntax.h"
#include "gateway/product.h"
#include "unit/core/env_guard.h"
#include "unit/test_support.h"

using namespace ct;
using namespace ct::disclosure;
namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write(const fs::path& path, std::string_view text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

std::string action_of(const std::vector<FileOutcome>& files, std::string_view file) {
  for (const auto& outcome : files)
    if (outcome.file == file) return outcome.action;
  return "(not reported)";
}

InjectReport run(const fs::path& root, InjectOptions options) {
  options.root = root;
  auto report = inject(registry(), options);
  if (!report) FAIL(report.error().message);
  return *report;
}

std::string block_body(std::string_view text) {
  auto span = find_block(text, "x");
  REQUIRE(span);
  REQUIRE(span->has_value());
  return std::string(text.substr((*span)->begin, (*span)->end - (*span)->begin));
}

}  // namespace

TEST_CASE("find_block finds one block and refuses malformed markers", "[disclosure][injection]") {
  auto none = find_block("# notes\nno block\n", "CLAUDE.md");
  REQUIRE(none);
  CHECK_FALSE(none->has_value());

  std::string text = "before\n<!-- CLEO:START -->\nold\n<!-- CLEO:END -->\nafter\n";
  auto span = find_block(text, "CLAUDE.md");
  REQUIRE(span);
  REQUIRE(span->has_value());
  CHECK(text.substr((*span)->begin, (*span)->end - (*span)->begin) == "<!-- CLEO:START -->\nold\n<!-- CLEO:END -->\n");

  // A marker quoted inside a line is prose, not a marker.
  auto quoted = find_block("Use `<!-- CLEO:START -->` markers.\n", "CLAUDE.md");
  REQUIRE(quoted);
  CHECK_FALSE(quoted->has_value());

  auto message = [](std::string_view bad) {
    auto result = find_block(bad, "CLAUDE.md");
    REQUIRE_FALSE(result);
    CHECK(result.error().code == ErrorCode::Validation);
    CHECK(mcp_text(result.error().fix, registry()).find("CLAUDE.md") != std::string::npos);
    return result.error().message;
  };
  CHECK(message("a\n<!-- CLEO:START -->\nb\n") == "CLAUDE.md:2: <!-- CLEO:START --> without <!-- CLEO:END -->");
  CHECK(message("<!-- CLEO:END -->\n") == "CLAUDE.md:1: <!-- CLEO:END --> without <!-- CLEO:START -->");
  CHECK(message("<!-- CLEO:END -->\n<!-- CLEO:START -->\n") == "CLAUDE.md:1: <!-- CLEO:END --> comes before <!-- CLEO:START -->");
  CHECK(message("<!-- CLEO:START -->\n<!-- CLEO:END -->\nx\n<!-- CLEO:START -->\n<!-- CLEO:END -->\n")
            .starts_with("CLAUDE.md:4: more than one CLEO block"));
}

TEST_CASE("the START marker records the block's level; plain and versioned markers still count", "[disclosure][injection]") {
  auto level_of = [](std::string_view start) {
    std::string text = "x\n" + std::string(start) + "\nbody\n<!-- CLEO:END -->\n";
    auto span = find_block(text, "CLAUDE.md");
    REQUIRE(span);
    REQUIRE(span->has_value());
    CHECK((*span)->begin == 2);
    return (*span)->level;
  };
  CHECK(level_of("<!-- CLEO:START -->") == std::nullopt);
  CHECK(level_of("<!-- CLEO:START level=3 -->") == 3);
  CHECK(level_of("  <!-- CLEO:START level=1 -->") == 1);
  CHECK(level_of("<!-- CLEO:START v0.91.0 -->") == std::nullopt);  // the original CLEO's marker
  CHECK(start_marker(0) == kBlockStart);
  CHECK(start_marker(3) == "<!-- CLEO:START level=3 -->");

  auto bad = find_block("<!-- CLEO:START level=2 -->\n<!-- CLEO:END -->\n", "AGENTS.md");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code == ErrorCode::Validation);
  CHECK(bad.error().message == "AGENTS.md:1: level=2 in the START marker is not an injection level (0, 1 or 3)");
  CHECK(mcp_text(bad.error().fix, registry()).find("level=0, 1 or 3") != std::string::npos);
  // Not markers: another word glued on, or no closing -->.
  CHECK_FALSE(*find_block("<!-- CLEO:STARTED -->\n", "x"));
  CHECK_FALSE(*find_block("<!-- CLEO:START\n", "x"));
}

TEST_CASE("with_block appends after a blank line, replaces in place, keeps CRLF", "[disclosure][injection]") {
  CHECK(with_block("", std::nullopt, "body\n", 0) == "<!-- CLEO:START -->\nbody\n<!-- CLEO:END -->\n");
  CHECK(with_block("# Mine", std::nullopt, "body\n", 0) == "# Mine\n\n<!-- CLEO:START -->\nbody\n<!-- CLEO:END -->\n");
  std::string text = "top\n<!-- CLEO:START -->\nold\n<!-- CLEO:END -->\nbottom\n";
  auto span = find_block(text, "x");
  REQUIRE(span);
  CHECK(with_block(text, **span, "new\n", 0) == "top\n<!-- CLEO:START -->\nnew\n<!-- CLEO:END -->\nbottom\n");
  CHECK(with_block(text, **span, "new\n", 3) == "top\n<!-- CLEO:START level=3 -->\nnew\n<!-- CLEO:END -->\nbottom\n");
  CHECK(with_block("a\r\nb\r\n", std::nullopt, "one\ntwo\n", 0) ==
        "a\r\nb\r\n\r\n<!-- CLEO:START -->\r\none\r\ntwo\r\n<!-- CLEO:END -->\r\n");
}

TEST_CASE("inject writes templates and blocks, and running it again changes nothing", "[disclosure][injection]") {
  test::TempDir dir;
  const std::string mine = "# Project notes\n\nKeep this.\n";
  write(dir.path() / "CLAUDE.md", mine);
  write(dir.path() / "AGENTS.md", "agents\n");

  InjectReport first = run(dir.path(), {});
  CHECK(first.changed);
  CHECK(action_of(first.templates, ".cleo/templates/AGENT-INJECTION.md") == "created");
  CHECK(action_of(first.templates, ".cleo/templates/CLEO-INJECTION.md") == "created");
  CHECK(action_of(first.targets, "CLAUDE.md") == "inserted");
  CHECK(action_of(first.targets, "AGENTS.md") == "inserted");
  CHECK(action_of(first.targets, "GEMINI.md") == "absent");
  CHECK_FALSE(fs::exists(dir.path() / "GEMINI.md"));  // only files that exist

  std::string claude = slurp(dir.path() / "CLAUDE.md");
  CHECK(claude.starts_with(mine + "\n<!-- CLEO:START -->\n"));
  auto level0_text = level0(registry());
  REQUIRE(level0_text);
  CHECK(claude.find(*level0_text) != std::string::npos);
  CHECK(claude.find(".cleo/templates/AGENT-INJECTION.md") != std::string::npos);
  CHECK(estimate_tokens(block_body(claude)) < 250);  // o200k: tests/disclosure/budgets.mjs
  auto agent = render(registry(), "AGENT-INJECTION.md");
  REQUIRE(agent);
  CHECK(slurp(dir.path() / ".cleo/templates/AGENT-INJECTION.md") == *agent);

  InjectReport second = run(dir.path(), {});
  CHECK_FALSE(second.changed);
  CHECK(action_of(second.targets, "CLAUDE.md") == "unchanged");
  CHECK(action_of(second.templates, ".cleo/templates/CLEO-INJECTION.md") == "unchanged");
  CHECK(slurp(dir.path() / "CLAUDE.md") == claude);
}

TEST_CASE("an outdated block is replaced and the user's text around it kept", "[disclosure][injection]") {
  test::TempDir dir;
  write(dir.path() / "CLAUDE.md", "intro\n<!-- CLEO:START -->\nold CLEO text\n<!-- CLEO:END -->\noutro, mine\n");
  InjectReport report = run(dir.path(), {});
  CHECK(action_of(report.targets, "CLAUDE.md") == "updated");
  std::string claude = slurp(dir.path() / "CLAUDE.md");
  CHECK(claude.starts_with("intro\n<!-- CLEO:START -->\nCLEO "));
  CHECK(claude.ends_with("<!-- CLEO:END -->\noutro, mine\n"));
  CHECK(claude.find("old CLEO text") == std::string::npos);

  // Level 1 and 3 blocks import the larger templates instead.
  InjectOptions one;
  one.level = 1;
  run(dir.path(), one);
  CHECK(block_body(slurp(dir.path() / "CLAUDE.md")).find("@.cleo/templates/AGENT-INJECTION.md\n") != std::string::npos);
  InjectOptions three;
  three.level = 3;
  run(dir.path(), three);
  CHECK(block_body(slurp(dir.path() / "CLAUDE.md")).find("@.cleo/templates/CLEO-INJECTION.md\n") != std::string::npos);
  CHECK(slurp(dir.path() / "CLAUDE.md").ends_with("<!-- CLEO:END -->\noutro, mine\n"));
}

TEST_CASE("malformed markers leave every file untouched", "[disclosure][injection]") {
  test::TempDir dir;
  const std::string broken = "mine\n<!-- CLEO:START -->\nno end\n";
  write(dir.path() / "AGENTS.md", "agents\n");
  write(dir.path() / "CLAUDE.md", broken);
  InjectOptions options;
  options.root = dir.path();
  auto report = inject(registry(), options);
  REQUIRE_FALSE(report);
  CHECK(report.error().code == ErrorCode::Validation);
  CHECK(report.error().message == "CLAUDE.md:2: <!-- CLEO:START --> without <!-- CLEO:END -->");
  CHECK(slurp(dir.path() / "CLAUDE.md") == broken);
  CHECK(slurp(dir.path() / "AGENTS.md") == "agents\n");  // validated before anything is written
  CHECK_FALSE(fs::exists(dir.path() / ".cleo/templates"));
}

TEST_CASE("check reports drift without writing", "[disclosure][injection]") {
  test::TempDir dir;
  write(dir.path() / "CLAUDE.md", "mine\n");
  InjectOptions check;
  check.check = true;
  InjectReport before = run(dir.path(), check);
  CHECK(before.changed);
  CHECK(action_of(before.targets, "CLAUDE.md") == "missing");
  CHECK(action_of(before.templates, ".cleo/templates/AGENT-INJECTION.md") == "missing");
  CHECK(slurp(dir.path() / "CLAUDE.md") == "mine\n");
  CHECK_FALSE(fs::exists(dir.path() / ".cleo/templates"));

  run(dir.path(), {});
  InjectReport current = run(dir.path(), check);
  CHECK_FALSE(current.changed);
  CHECK(action_of(current.targets, "CLAUDE.md") == "current");

  std::string edited = slurp(dir.path() / "CLAUDE.md");
  edited.replace(edited.find("Domains:"), 8, "DOMAINS:");
  write(dir.path() / "CLAUDE.md", edited);
  InjectReport drift = run(dir.path(), check);
  CHECK(drift.changed);
  CHECK(action_of(drift.targets, "CLAUDE.md") == "outdated");
  CHECK(slurp(dir.path() / "CLAUDE.md") == edited);
}

TEST_CASE("create makes missing targets; unknown targets and level 2 are refused", "[disclosure][injection]") {
  test::TempDir dir;
  InjectOptions options;
  options.targets = {"GEMINI.md"};
  CHECK(action_of(run(dir.path(), options).targets, "GEMINI.md") == "absent");
  CHECK_FALSE(fs::exists(dir.path() / "GEMINI.md"));
  options.create = true;
  InjectReport created = run(dir.path(), options);
  CHECK(action_of(created.targets, "GEMINI.md") == "created");
  CHECK(created.targets.size() == 1);
  CHECK(slurp(dir.path() / "GEMINI.md").starts_with("<!-- CLEO:START -->\n"));

  InjectOptions unknown;
  unknown.root = dir.path();
  unknown.targets = {"CLAUD.md"};
  auto refused = inject(registry(), unknown);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == ErrorCode::Validation);
  CHECK(refused.error().details["didYouMean"] == json::Value("CLAUDE.md"));
  InjectOptions two;
  two.root = dir.path();
  two.level = 2;
  auto level2 = inject(registry(), two);
  REQUIRE_FALSE(level2);
  CHECK(level2.error().code == ErrorCode::Validation);
  CHECK(mcp_text(level2.error().fix, registry()).find("3 (imports CLEO-INJECTION.md)") != std::string::npos);
}

TEST_CASE("global injection writes the hosts' user files and templates under CLEO_HOME", "[disclosure][injection]") {
  test::TempDir home;
  ct::testing::EnvGuard home_env("HOME", home.path().string());
  ct::testing::EnvGuard cleo_home_env("CLEO_HOME", (home.path() / "cleo-home").string());
  auto dirs = global_dirs_from_environment();
  REQUIRE(dirs);
  CHECK(dirs->cleo_home == home.path() / "cleo-home");
  write(home.path() / ".claude/CLAUDE.md", "global notes\n");

  InjectOptions options;
  options.global_dirs = *dirs;
  InjectReport report = run(home.path() / "unused", options);
  const std::string claude = (home.path() / ".claude/CLAUDE.md").string();
  CHECK(action_of(report.targets, claude) == "inserted");
  CHECK(action_of(report.targets, (home.path() / ".codex/AGENTS.md").string()) == "absent");
  CHECK(fs::exists(home.path() / "cleo-home/templates/CLEO-INJECTION.md"));
  std::string text = slurp(claude);
  CHECK(text.starts_with("global notes\n\n<!-- CLEO:START -->\n"));
  // User-wide files point at the templates by absolute path.
  CHECK(text.find((home.path() / "cleo-home/templates/AGENT-INJECTION.md").string()) != std::string::npos);

  ct::testing::EnvGuard no_cleo_home("CLEO_HOME", std::nullopt);
  CHECK(global_dirs_from_environment()->cleo_home == home.path() / ".cleo");
  ct::testing::EnvGuard no_home("HOME", std::nullopt);
  CHECK(global_dirs_from_environment().error().code == ErrorCode::ConfigError);
}

TEST_CASE("system.inject through the router: notes, drift as E_OUTDATED, init injects", "[disclosure][injection]") {
  test::TempDir dir;
  write(dir.path() / "CLAUDE.md", "mine\n");
  RouterOptions options;
  Router router(registry(), Workspace::open(dir.path()), options, std::make_unique<FixedClock>(0));
  auto call = [&](Gateway gateway, std::string operation, std::string_view params) {
    return router.dispatch({gateway, "system", std::move(operation), test::parse_json(params)});
  };

  // Without a project there is nowhere to render the templates.
  CHECK(test::code_of(call(Gateway::Mutate, "inject", "{}")) == "E_NOT_INITIALIZED");

  // init performs the project injection into the files that exist, and says so.
  Envelope init = call(Gateway::Mutate, "init", "{}");
  REQUIRE(init.success);
  CHECK(init.data["instructions"] == test::parse_json(R"([
    {"file":".cleo/templates/AGENT-INJECTION.md","action":"created"},
    {"file":".cleo/templates/CLEO-INJECTION.md","action":"created"},
    {"file":"CLAUDE.md","action":"inserted","level":0}])"));
  CHECK_FALSE(fs::exists(dir.path() / "AGENTS.md"));

  Envelope again = call(Gateway::Mutate, "inject", "{}");
  REQUIRE(again.success);
  CHECK(test::code_of(again) == "E_NO_CHANGE");
  CHECK(again.exit_code() == 102);
  Envelope current = call(Gateway::Mutate, "inject", R"({"check":true})");
  CHECK(current.exit_code() == 102);

  Envelope drift = call(Gateway::Mutate, "inject", R"({"check":true,"level":1})");
  REQUIRE_FALSE(drift.success);
  CHECK(test::code_of(drift) == "E_OUTDATED");
  CHECK(drift.exit_code() == 23);
  CHECK(drift.error->message.find("CLAUDE.md (outdated)") != std::string::npos);
  CHECK(mcp_text(drift.error->fix, registry()) == R"(cleo_mutate {domain:'system', operation:'inject', params:{"level":1}})");
  CHECK(slurp(dir.path() / "CLAUDE.md").find("@.cleo/templates") == std::string::npos);  // nothing written

  Envelope level1 = call(Gateway::Mutate, "inject", R"({"level":1})");
  REQUIRE(level1.success);
  CHECK(level1.data["targets"].as_array().front() == test::parse_json(R"({"file":"CLAUDE.md","action":"updated","level":1})"));
  // Level 2 is one operation's help, not a block: the params say so, with the valid levels.
  Envelope two = call(Gateway::Mutate, "inject", R"({"level":2})");
  CHECK(test::code_of(two) == "E_VALIDATION");
  CHECK(two.error->message == "level: expected one of 0|1|3, got 2");
  CHECK(two.error->details["valid"] == test::parse_json("[0,1,3]"));
  CHECK(mcp_text(two.error->fix, registry()) == R"(cleo_mutate {domain:'system', operation:'inject', params:{"level":3}})");
  CHECK(test::code_of(call(Gateway::Mutate, "inject", R"({"targets":["README.md"]})")) == "E_VALIDATION");

  // The audit trail is about the store; injection writes files only, and leaves none behind.
  for (const auto& entry : fs::directory_iterator(dir.path()))
    CHECK(entry.path().filename().string().find(".cleo-") == std::string::npos);
}

TEST_CASE("a symlinked instruction file is written through the link, once", "[disclosure][injection]") {
  test::TempDir dir;
  write(dir.path() / "AGENTS.md", "# My rules\n");
  fs::create_symlink("AGENTS.md", dir.path() / "CLAUDE.md");

  InjectReport report = run(dir.path(), {});
  CHECK(action_of(report.targets, "AGENTS.md") == "inserted");
  CHECK(action_of(report.targets, "CLAUDE.md") == "same file as AGENTS.md");
  CHECK(fs::is_symlink(dir.path() / "CLAUDE.md"));  // the link survives
  std::string agents = slurp(dir.path() / "AGENTS.md");
  CHECK(agents.starts_with("# My rules\n\n<!-- CLEO:START -->\n"));
  auto span = find_block(agents, "AGENTS.md");  // one block, not two
  REQUIRE(span);
  CHECK(span->has_value());

  InjectOptions check;
  check.check = true;
  InjectReport checked = run(dir.path(), check);
  CHECK_FALSE(checked.changed);
  CHECK(action_of(checked.targets, "CLAUDE.md") == "same file as AGENTS.md");

  // Asked for the link alone, the file it points at is written, and the link stays a link.
  InjectOptions link_only;
  link_only.targets = {"CLAUDE.md"};
  link_only.level = 1;
  CHECK(action_of(run(dir.path(), link_only).targets, "CLAUDE.md") == "updated");
  CHECK(fs::is_symlink(dir.path() / "CLAUDE.md"));
  CHECK(slurp(dir.path() / "AGENTS.md").find("<!-- CLEO:START level=1 -->\n") != std::string::npos);

  // A dangling link with create: the file is created where the link points.
  fs::create_symlink("docs/GEMINI.md", dir.path() / "GEMINI.md");
  fs::create_directories(dir.path() / "docs");
  InjectOptions create;
  create.targets = {"GEMINI.md"};
  create.create = true;
  CHECK(action_of(run(dir.path(), create).targets, "GEMINI.md") == "created");
  CHECK(fs::is_symlink(dir.path() / "GEMINI.md"));
  CHECK(slurp(dir.path() / "docs/GEMINI.md").starts_with("<!-- CLEO:START -->\n"));
}

TEST_CASE("a block keeps its level: inject, check and init without a level leave it", "[disclosure][injection]") {
  test::TempDir dir;
  write(dir.path() / "CLAUDE.md", "mine\n");
  write(dir.path() / "AGENTS.md", "agents\n");
  RouterOptions options;
  Router router(registry(), Workspace::open(dir.path()), options, std::make_unique<FixedClock>(0));
  auto call = [&](std::string operation, std::string_view params) {
    return router.dispatch({Gateway::Mutate, "system", std::move(operation), test::parse_json(params)});
  };
  REQUIRE(call("init", "{}").success);
  Envelope three = call("inject", R"({"targets":["CLAUDE.md"],"level":3})");
  REQUIRE(three.success);
  const std::string claude = slurp(dir.path() / "CLAUDE.md");
  CHECK(claude.find("<!-- CLEO:START level=3 -->\n") != std::string::npos);
  CHECK(claude.find("@.cleo/templates/CLEO-INJECTION.md") != std::string::npos);

  // No level given: each file keeps its own (CLAUDE.md 3, AGENTS.md 0).
  Envelope again = call("inject", "{}");
  CHECK(test::code_of(again) == "E_NO_CHANGE");
  CHECK(again.data["targets"] == test::parse_json(R"([{"file":"CLAUDE.md","action":"unchanged","level":3},
    {"file":"AGENTS.md","action":"unchanged","level":0},{"file":"GEMINI.md","action":"absent"}])"));
  CHECK(test::code_of(call("inject", R"({"check":true})")) == "E_NO_CHANGE");
  Envelope init = call("init", "{}");
  CHECK(test::code_of(init) == "E_ALREADY_EXISTS");
  CHECK_FALSE(init.data.contains("instructions"));
  CHECK(slurp(dir.path() / "CLAUDE.md") == claude);

  // Drift: the fix names the level the blocks have, so following it keeps the level.
  std::string edited = claude;
  edited.replace(edited.find("Read and follow"), 4, "READ");
  write(dir.path() / "CLAUDE.md", edited);
  Envelope drift = call("inject", R"({"check":true,"targets":["CLAUDE.md"]})");
  CHECK(test::code_of(drift) == "E_OUTDATED");
  CHECK(mcp_text(drift.error->fix, registry()) == R"(cleo_mutate {domain:'system', operation:'inject', params:{"targets":["CLAUDE.md"],"level":3}})");
  // Several levels: the fix names none (each block keeps its own).
  Envelope mixed = call("inject", R"({"check":true})");
  CHECK(mcp_text(mixed.error->fix, registry()) == R"(cleo_mutate {domain:'system', operation:'inject', params:{}})");

  // init refreshes an outdated block at its level, and says so though the project existed.
  Envelope refreshed = call("init", "{}");
  CHECK(test::code_of(refreshed) == "E_ALREADY_EXISTS");
  CHECK(refreshed.data["instructions"] == test::parse_json(R"([{"file":"CLAUDE.md","action":"updated","level":3}])"));
  REQUIRE(refreshed.warnings.size() == 2);
  CHECK(test::warnings_of(refreshed)[1] == "agent instructions refreshed: CLAUDE.md (updated)");
  CHECK(slurp(dir.path() / "CLAUDE.md") == claude);

  // An explicit level still changes it.
  REQUIRE(call("inject", R"({"targets":["CLAUDE.md"],"level":0})").success);
  CHECK(slurp(dir.path() / "CLAUDE.md").find("<!-- CLEO:START -->\n") != std::string::npos);
}

TEST_CASE("inject --check runs in read-only mode; writing is refused", "[disclosure][injection]") {
  test::TempDir dir;
  write(dir.path() / "CLAUDE.md", "mine\n");
  {
    RouterOptions writable;
    Router router(registry(), Workspace::open(dir.path()), writable, std::make_unique<FixedClock>(0));
    REQUIRE(router.dispatch({Gateway::Mutate, "system", "init", json::Value()}).success);
  }
  RouterOptions options;
  options.read_only = true;
  Router router(registry(), Workspace::open(dir.path()), options, std::make_unique<FixedClock>(0));
  auto call = [&](std::string_view params) {
    return router.dispatch({Gateway::Mutate, "system", "inject", test::parse_json(params)});
  };
  CHECK(test::code_of(call(R"({"check":true})")) == "E_NO_CHANGE");
  CHECK(test::code_of(call(R"({"check":true,"level":1})")) == "E_OUTDATED");
  CHECK(test::code_of(call("{}")) == "E_MUTATION_DISABLED");
  CHECK(test::code_of(call(R"({"check":false,"level":1})")) == "E_MUTATION_DISABLED");
  CHECK(slurp(dir.path() / "CLAUDE.md").find("@.cleo/templates") == std::string::npos);
}

TEST_CASE("concurrent injections in one process use their own temp files", "[disclosure][injection]") {
  // `ct serve` runs calls on several threads: each write needs a temp name of its own, or one
  // call's rename takes (or loses) another's half-written file.
  test::TempDir dir;
  write(dir.path() / "CLAUDE.md", "mine\n");
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 25; ++i) {
        InjectOptions options;
        options.root = dir.path();
        options.level = (t + i) % 2 ? 1 : 3;  // always something to write
        if (!inject(registry(), options)) ++failures;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  CHECK(failures == 0);
  std::string claude = slurp(dir.path() / "CLAUDE.md");
  CHECK(claude.starts_with("mine\n\n<!-- CLEO:START level="));
  CHECK(find_block(claude, "CLAUDE.md").has_value());
  for (const auto& entry : fs::directory_iterator(dir.path()))
    CHECK(entry.path().filename().string().find(".cleo-") == std::string::npos);
}

TEST_CASE("system.inject with no instruction file is not 'current': an E_NO_DATA note that says how", "[disclosure][injection]") {
  test::TempDir dir;
  RouterOptions options;
  Router router(registry(), Workspace::open(dir.path()), options, std::make_unique<FixedClock>(0));
  auto call = [&](std::string_view params) {
    return router.dispatch({Gateway::Mutate, "system", "inject", test::parse_json(params)});
  };
  REQUIRE(router.dispatch({Gateway::Mutate, "system", "init", json::Value::object()}).success);
  for (std::string_view params : {R"({"check":true})", "{}", R"({"targets":["GEMINI.md"]})"}) {
    Envelope none = call(params);
    INFO(params);
    CHECK(none.success);
    CHECK(test::code_of(none) == "E_NO_DATA");
    REQUIRE(test::warnings_of(none).size() == 1);
    CHECK(test::warnings_of(none)[0].find("create: true") != std::string::npos);
  }
  CHECK(test::warnings_of(call(R"({"targets":["GEMINI.md"]})"))[0].starts_with("no instruction file (GEMINI.md)"));
  // Once a file exists it is checked as before.
  REQUIRE(call(R"({"targets":["AGENTS.md"],"create":true})").success);
  Envelope current = call(R"({"check":true})");
  CHECK(test::code_of(current) == "E_NO_CHANGE");
  CHECK(current.warnings.empty());
}
