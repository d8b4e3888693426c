#include "gateway/mcp_syntax.h"
#include "engines/project/config.h"

#include <catch2/catch.hpp>

#include "unit/temp_dir.h"

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "core/json_parse.h"
#include "gateway/product.h"

namespace ct {
namespace {

namespace fs = std::filesystem;

using test::TempDir;

void write(const fs::path& file, std::string_view text) {
  std::ofstream out(file, std::ios::binary);
  out << text;
}

std::string read(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

Error load_error(const fs::path& file, std::string_view text) {
  write(file, text);
  auto config = Config::load(file);
  REQUIRE_FALSE(config);
  return config.error();
}

}  // namespace

TEST_CASE("the keys that widen what agents may do are the ones only people set", "[engines][config]") {
  // A program runs, a file or a place outside .cleo/ is named, another store is reached, a guard
  // goes off, or a rule that binds agents loosens (issue 52): engines/project/config.cpp says why
  // each of these is a person's.
  const std::vector<std::string_view> people = {
      "storage.busyTimeoutMs", "storage.url", "storage.schema", "backup.keep", "session.enforcement",
      "session.maxConcurrent", "session.idleMinutes", "session.leaseSeconds", "session.archiveDays",
      "messages.perMinute", "messages.maxChars", "messages.maxPerThread", "reservations.mode", "audit.retentionDays",
      "security.allowOutsideProject", "engines", "trackers", "release.gates", "release.versionFile",
      "release.remote", "validate.testCommand", "validate.coverageThreshold", "orchestrator.spawnCommand",
      "orchestrator.provider", "orchestrator.worktrees", "lifecycle.enforcement", "lifecycle.allowSkip", "verification.required",
      "verification.separateAgents", "verification.evidence", "approval.required", "memory.verifyKinds"};
  std::vector<std::string_view> marked;
  for (const auto& key : config_keys()) {
    INFO(key.name);
    if (key.set_by == SetBy::People) marked.push_back(key.name);
    // Every security key, and every key private enough to hide (a command line), is a person's.
    if (key.name.starts_with("security.") || key.sensitive) CHECK(key.set_by == SetBy::People);
  }
  CHECK(marked == people);
  // The fix that names how to set a key says who may: an MCP call, or a person's command line.
  CHECK(mcp_text(config_set_fix("output.maxReplyBytes", json::Value(5000)), registry()) ==
        "cleo_mutate {domain:'system', operation:'config.set', params:{key:'output.maxReplyBytes', value:5000}}");
  CHECK(mcp_text(config_set_fix("validate.testCommand", json::Value("make check")), registry()) ==
        "a person runs `ct config set validate.testCommand 'make check'` in a terminal, or edits .cleo/config.json "
        "(agents cannot set validate.testCommand)");
  // A bad value's fix for such a key (a person at the command line sees it) names the same command.
  auto bad = Config().set("release.gates", json::Value("make"));
  REQUIRE_FALSE(bad);
  CHECK(mcp_text(bad.error().fix, registry()) == "a person runs `ct config set release.gates '[]'` in a terminal, or edits "
                           ".cleo/config.json (agents cannot set release.gates)");
}

TEST_CASE("config defaults", "[engines][config]") {
  Config config;
  CHECK(config.get_int("hierarchy.maxDepth") == 3);
  CHECK(config.get_int("hierarchy.maxSiblings") == 0);
  CHECK(config.get_string("storage.synchronous") == "normal");
  CHECK(config.get_int("storage.busyTimeoutMs") == 5000);
  CHECK(config.get_string("output.format") == "text");
  CHECK(config.get_string("project.currentPhase").empty());
  CHECK(config.get("no.such.key").is_null());
  CHECK(config.get_int("no.such.key") == 0);
  CHECK(config.get_string("hierarchy.maxDepth").empty());  // wrong type: a neutral value, no throw

  // Every declared default is itself valid.
  for (const auto& key : config_keys()) {
    CHECK(find_config_key(key.name) == &key);
    auto value = json::parse(key.default_json);
    REQUIRE(value);
    CHECK(Config().set(key.name, *value));
    // What a Config reads for a key not set is the JSON parser's reading of its default (the common
    // forms are read without the parser: issue 56).
    CHECK(config.get(key.name) == *value);
    CHECK(config.get(key.name).type() == value->type());
  }
}

TEST_CASE("a missing or empty config file gives the defaults", "[engines][config]") {
  TempDir dir;
  auto missing = Config::load(dir.path() / "config.json");
  REQUIRE(missing);
  CHECK(missing->get_int("hierarchy.maxDepth") == 3);
  write(dir.path() / "config.json", "  \n");
  CHECK(Config::load(dir.path() / "config.json"));
}

TEST_CASE("config loads nested values", "[engines][config]") {
  TempDir dir;
  auto file = dir.path() / "config.json";
  write(file, R"({"hierarchy":{"maxDepth":2,"maxSiblings":10},"storage":{"synchronous":"full"},
                  "project":{"currentPhase":"core"}})");
  auto config = Config::load(file);
  REQUIRE(config);
  CHECK(config->get_int("hierarchy.maxDepth") == 2);
  CHECK(config->get_int("hierarchy.maxSiblings") == 10);
  CHECK(config->get_string("storage.synchronous") == "full");
  CHECK(config->get_string("project.currentPhase") == "core");
  CHECK(config->get_int("storage.busyTimeoutMs") == 5000);  // untouched keys keep their default
}

TEST_CASE("config load rejects bad files with E_CONFIG_ERROR", "[engines][config]") {
  TempDir dir;
  auto file = dir.path() / "config.json";

  Error syntax = load_error(file, "{\"hierarchy\": ");
  CHECK(syntax.code == ErrorCode::ConfigError);
  CHECK_FALSE(syntax.fix.empty());

  CHECK(load_error(file, "[1,2]").code == ErrorCode::ConfigError);

  Error range = load_error(file, R"({"hierarchy":{"maxDepth":7}})");
  CHECK(range.code == ErrorCode::ConfigError);
  CHECK(range.message.find("hierarchy.maxDepth") != std::string::npos);
  CHECK(mcp_text(range.fix, registry()).find("hierarchy.maxDepth") != std::string::npos);

  Error type = load_error(file, R"({"hierarchy":{"maxDepth":"3"}})");
  CHECK(type.code == ErrorCode::ConfigError);
  CHECK(type.message.find("integer") != std::string::npos);

  Error nested_type = load_error(file, R"({"hierarchy":{"maxDepth":{"x":1}}})");
  CHECK(nested_type.code == ErrorCode::ConfigError);
  CHECK(nested_type.message.find("hierarchy.maxDepth") != std::string::npos);

  Error choice = load_error(file, R"({"storage":{"synchronous":"fulll"}})");
  CHECK(choice.code == ErrorCode::ConfigError);
  CHECK(choice.details["didYouMean"] == json::Value("full"));

  Error unknown = load_error(file, R"({"hierarchy":{"maxDepht":3}})");
  CHECK(unknown.code == ErrorCode::ConfigError);
  CHECK(unknown.message.find("hierarchy.maxDepht") != std::string::npos);
  CHECK(unknown.details["didYouMean"] == json::Value("hierarchy.maxDepth"));
  CHECK(unknown.details["valid"].size() == config_keys().size());
  CHECK_FALSE(unknown.fix.empty());
}

TEST_CASE("config set validates", "[engines][config]") {
  Config config;
  REQUIRE(config.set("hierarchy.maxDepth", json::Value(2)));
  CHECK(config.get_int("hierarchy.maxDepth") == 2);
  REQUIRE(config.set("project.currentPhase", json::Value("anything at all")));
  CHECK(config.get_string("project.currentPhase") == "anything at all");

  auto unknown = config.set("hierarchy.depth", json::Value(2));
  REQUIRE_FALSE(unknown);
  CHECK(unknown.error().code == ErrorCode::InvalidInput);
  CHECK(unknown.error().details["valid"].is_array());

  auto too_big = config.set("hierarchy.maxDepth", json::Value(4));
  REQUIRE_FALSE(too_big);
  CHECK(too_big.error().code == ErrorCode::InvalidInput);
  CHECK_FALSE(too_big.error().fix.empty());
  CHECK(config.get_int("hierarchy.maxDepth") == 2);  // unchanged

  CHECK_FALSE(config.set("hierarchy.maxSiblings", json::Value(-1)));
  CHECK_FALSE(config.set("storage.busyTimeoutMs", json::Value(1.5)));
  CHECK_FALSE(config.set("output.format", json::Value("yaml")));
  CHECK_FALSE(config.set("project.currentPhase", json::Value(3)));
  CHECK(config.set("output.format", json::Value("json")));
}

TEST_CASE("config save round-trips through a nested file", "[engines][config]") {
  TempDir dir;
  auto file = dir.path() / "config.json";
  Config config;
  REQUIRE(config.set("hierarchy.maxSiblings", json::Value(12)));
  REQUIRE(config.set("project.currentPhase", json::Value("polish \"phase\" ü")));
  REQUIRE(config.save(file));

  auto text = read(file);
  auto parsed = json::parse(text);
  REQUIRE(parsed);
  CHECK((*parsed)["hierarchy"]["maxSiblings"] == json::Value(12));
  CHECK(config.to_json()["storage"]["synchronous"] == json::Value("normal"));

  auto loaded = Config::load(file);
  REQUIRE(loaded);
  CHECK(loaded->get_int("hierarchy.maxSiblings") == 12);
  CHECK(loaded->get_string("project.currentPhase") == "polish \"phase\" ü");
  CHECK(loaded->to_json() == config.to_json());

  // No temp files are left behind.
  int entries = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir.path())) ++entries;
  CHECK(entries == 1);
}

}  // namespace ct
