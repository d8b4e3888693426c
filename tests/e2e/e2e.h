// What the end-to-end scenarios share: checks that count failures and go on (a scenario reports
// every broken step, not the first), the `--ct PATH` argument, and the two voices of a scenario — a
// person's `ct` commands and an agent's MCP calls.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "core/json.h"
#include "support/ct_client.h"

namespace ct::e2e {

inline int failures = 0;

/// Counts and prints a failed check; the scenario goes on.
inline void check(bool ok, const std::string& what) {
  if (ok) return;
  ++failures;
  std::fprintf(stderr, "FAILED: %s\n", what.c_str());
}

/// The `ct` binary named by `--ct PATH`; "" (after the usage line on stderr) when it is missing.
inline std::string ct_argument(int argc, char** argv, const char* program) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--ct") return argv[i + 1];
  std::fprintf(stderr, "usage: %s --ct PATH\n", program);
  return "";
}

/// A string value's text; "" for anything else.
inline std::string text_of(const json::Value& value) { return value.is_string() ? value.as_string() : std::string(); }
inline bool contains(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }
/// `text` as a JSON string literal (quoted and escaped), for params written by hand.
inline std::string json_string(std::string_view text) { return json::Value(std::string(text)).dump(); }

/// The PostgreSQL URL named by `--postgresql URL`; "" (SQLite) without it.
inline std::string postgresql_argument(int argc, char** argv) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--postgresql") return argv[i + 1];
  return "";
}

/// With --postgresql URL (`pg_url` not empty): `env` names that server and a schema of this run's
/// own (`schema` and the process id), so every ct the scenario runs uses that store.
inline void use_postgresql(std::vector<std::string>& env, const std::string& pg_url, std::string_view schema) {
  if (pg_url.empty()) return;
  env.push_back("CLEO_DATABASE_URL=" + pg_url);
  env.push_back("CLEO_DATABASE_SCHEMA=" + std::string(schema) + "_" + std::to_string(::getpid()));
}

/// The environment `env` without the variables named `names`.
inline std::vector<std::string> without(std::vector<std::string> env, std::initializer_list<std::string_view> names) {
  std::erase_if(env, [&](const std::string& entry) {
    for (auto name : names)
      if (entry.starts_with(std::string(name) + "=")) return true;
    return false;
  });
  return env;
}

/// A person's `ct` in `project`: person({"memory", "verify", …}) runs `ct --project P … --json` and
/// answers its envelope.
inline auto person_in(const testing::CtCommand& cli, std::filesystem::path project) {
  return [&cli, project = std::move(project)](std::vector<std::string> args) {
    args.insert(args.begin(), {"--project", project.string()});
    args.push_back("--json");
    return cli.run(args).json;
  };
}

/// An agent's calls through one tool of its `ct mcp`: calls_of(agent, "cleo_mutate")("tasks", "add",
/// params) answers the envelope.
inline auto calls_of(testing::McpClient& agent, std::string_view tool) {
  return [&agent, tool](std::string_view domain, std::string_view operation, const std::string& params) {
    return agent.call(tool, domain, operation, params);
  };
}

}  // namespace ct::e2e
