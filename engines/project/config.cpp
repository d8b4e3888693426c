#include "engines/project/config.h"

#include <algorithm>
#include <charconv>
#include <iterator>
#include <string>
#include <system_error>

#include "core/atomic_file.h"
#include "core/file_read.h"
#include "core/json_parse.h"
#include "core/text.h"
#include "engines/adapters/split_command.h"

namespace ct {
namespace {

namespace fs = std::filesystem;

/// validate.testCommand: empty (unset) or words split_command accepts.
std::string check_command(std::string_view text) {
  if (trim(text).empty()) return "";
  auto words = split_command(text, "value");
  return words ? "" : words.error().message.substr(std::string_view("value: ").size());
}

/// research.manifestFile: a relative path that stays inside the project.
std::string check_inside_project(std::string_view text) {
  std::string path(trim(text));
  if (path.empty()) return "must name a file";
  fs::path normal = fs::path(path).lexically_normal();
  std::string out = normal.generic_string();
  if (normal.is_absolute() || out == "." || out == ".." || out.starts_with("../"))
    return "must be a path relative to the project root that stays inside it";
  return "";
}

/// orchestrator.worktrees: one folder per task, so the pattern names the task.
std::string check_worktree_pattern(std::string_view text) {
  if (text.empty()) return "";
  if (text.find("{task}") == std::string_view::npos) return "must hold {task}, so that each task gets a folder of its own";
  if (text.find_first_of("\n\r\t") != std::string_view::npos) return "must be one line";
  return "";
}

// The one table of configuration keys. Order is the order of config.json and of help output.
// SetBy::People marks the keys whose value widens what agents may do, which only a person sets:
// - a program runs: validate.testCommand, orchestrator.spawnCommand, orchestrator.provider (an agent
//   host's headless command), release.gates, engines (plug-in commands), trackers (a tracker
//   plug-in's command; where GitHub's API is);
// - git worktrees made outside the project: orchestrator.worktrees;
// - a file or a place outside .cleo/: release.versionFile (release.ship rewrites it; an absolute
//   path leaves the project), release.remote (git pushes branches and tags there, and takes a URL);
// - another store: storage.url, storage.schema (another project's tasks in the same database);
// - a guard off: security.* (security.allowOutsideProject lets agents past the project's edge);
// - a rule that binds agents (issue 52): the checks of their work (verification.*, lifecycle.enforcement,
//   lifecycle.allowSkip, validate.coverageThreshold, approval.required, memory.verifyKinds) and the rules
//   of sessions and claims, which reach other agents (session.enforcement; session.leaseSeconds,
//   after which another agent's claim lapses; session.idleMinutes and session.archiveDays, after
//   which session.gc ends and archives other agents' sessions; session.maxConcurrent, which can lock
//   every other agent out or lift the limit; reservations.mode, whose strict mode keeps agents off the
//   paths others reserved) — an agent bound by a rule does not loosen it;
// - what the project keeps of itself: backup.keep (0 or 1 prunes the backups a person would restore
//   from), audit.retentionDays (moves the trail of what agents did out of the store), and
//   storage.busyTimeoutMs (0 makes every writer that meets a lock fail at once).
// research.manifestFile is only read, and its check keeps it inside the project. The rest shape
// replies and analyses (output., analyze., hierarchy., orchestrator.context*) or bound what runs
// (timeouts): they widen nothing, and are the agents' to tune.

/// The store, its replies, backups, sessions and the project's edge.
std::vector<ConfigKey> store_keys() {
  return {
      {"hierarchy.maxDepth", json::Type::Int, "3", 1, 3, {},
       "Deepest task hierarchy allowed: 1 = flat, 3 = epic > task > subtask"},
      {"hierarchy.maxSiblings", json::Type::Int, "0", 0, 100000, {},
       "Most children one task may have (0 = unlimited)"},
      {"storage.synchronous", json::Type::String, "\"normal\"", 0, 0, {"normal", "full"},
       "SQLite durability: normal (fast, safe on crash) or full (also safe on power loss)"},
      {"storage.busyTimeoutMs", json::Type::Int, "5000", 0, 600000, {},
       "How long a writer waits for the database lock before E_LOCK_TIMEOUT",
       SetBy::People},
      {"storage.url", json::Type::String, "\"\"", 0, 0, {},
       "A PostgreSQL store shared by many machines (postgresql://user@host/db; the password in ~/.pgpass or "
       "PGPASSWORD, never here); empty = SQLite in .cleo/tasks.db. CLEO_DATABASE_URL overrides it",
       SetBy::People},  // its check: engines/store/store_backend.cpp
      {"storage.schema", json::Type::String, "\"cleo\"", 0, 0, {},
       "The PostgreSQL schema holding this project's store (one database can hold several projects). "
       "CLEO_DATABASE_SCHEMA overrides it",
       SetBy::People},
      {"output.format", json::Type::String, "\"text\"", 0, 0, {"text", "json"},
       "Default output of the ct command line"},
      {"output.maxReplyBytes", json::Type::Int, "20000", 1000, 10000000, {},
       "Largest list reply (bytes of data, ~4 bytes a token); longer ones are cut with _meta.page.nextOffset"},
      {"backup.keep", json::Type::Int, "10", 0, 10000, {},
       "Backups kept in .cleo/backups/ by system.backup (0 = keep all)",
       SetBy::People},
      {"project.currentPhase", json::Type::String, "\"\"", 0, 0, {},
       "The phase the project is in; tasks in this phase rank higher in tasks.next"},
      {"session.enforcement", json::Type::String, "\"advisory\"", 0, 0, {"none", "advisory", "strict"},
       "Task writes without a session: none (allowed), advisory (allowed, warned while sessions are active), strict (E_SESSION_REQUIRED)",
       SetBy::People},
      {"session.maxConcurrent", json::Type::Int, "32", 0, 100000, {},
       "Most sessions active at once (0 = unlimited)",
       SetBy::People},
      {"session.idleMinutes", json::Type::Int, "240", 1, 525600, {},
       "session.gc ends active sessions that show no life (see session.leaseSeconds) for this long",
       SetBy::People},
      {"session.leaseSeconds", json::Type::Int, "900", 0, 604800, {},
       "A claimed task is free for others once its session shows no life (any call, or session.heartbeat) for this long (0 = never)",
       SetBy::People},
      {"session.archiveDays", json::Type::Int, "30", 0, 36500, {},
       "session.gc archives sessions ended this many days ago",
       SetBy::People},
      {"messages.perMinute", json::Type::Int, "30", 1, 10000, {},
       "Messages one caller may send a minute (session.send); more is E_RATE_LIMITED",
       SetBy::People},
      {"messages.maxChars", json::Type::Int, "2000", 1, 20000, {},
       "Longest message body, in characters",
       SetBy::People},
      {"messages.maxPerThread", json::Type::Int, "500", 1, 100000, {},
       "Most messages one addressee (a task's thread, an agent, a session, everyone) holds; more is refused",
       SetBy::People},
      {"reservations.mode", json::Type::String, "\"advisory\"", 0, 0, {"advisory", "strict"},
       "Paths a claim reserves that overlap another session's live reservation: advisory (a warning) or strict "
       "(E_PATH_RESERVED; the pre-commit hook refuses the commit)",
       SetBy::People},
      {"audit.retentionDays", json::Type::Int, "0", 0, 36500, {},
       "system.gc moves audit rows older than this many days to .cleo/audit-archive/ (0 = keep forever)",
       SetBy::People},
      {"security.allowOutsideProject", json::Type::Bool, "false", 0, 0, {},
       "MCP callers may name files outside the project (restore from a path, inject into ~/): off by default",
       SetBy::People},
      {"engines", json::Type::Object, "{}", 0, 0, {},
       "Plug-in engines: \"domain.operation\" → {command:[argv…], gateway?, summary?, params?, timeoutSeconds?} "
       "(capability/README.md); edit config.json, then restart servers",
       SetBy::People},
      {"trackers", json::Type::Object, "{}", 0, 0, {},
       "Trackers issues.sync keeps in step: name → {repository?, command?:[argv…] (a plug-in, docs/sync.md), "
       "apiUrl?, pageSize?}; \"github\" is built in",
       SetBy::People},
  };
}

/// What operations run (release, validate, issues, orchestrator), the analyses' thresholds and the
/// workflow rules (lifecycle, verification, approval, memory).
std::vector<ConfigKey> work_keys() {
  return {
      {"release.gates", json::Type::Array, "[]", 0, 20, {},
       "Commands release.ship runs first, each an argv array run without a shell: [[\"make\",\"test\"]]",
       SetBy::People},
      {"release.versionFile", json::Type::String, "\"\"", 0, 0, {},
       "File (relative to the project root) whose version string release.ship bumps; \"\" = none", SetBy::People},
      {"release.remote", json::Type::String, "\"origin\"", 0, 0, {},
       "The git remote release.ship pushes to (push: true) and release.rollback deletes pushed tags from",
       SetBy::People},
      {"release.timeoutSeconds", json::Type::Int, "600", 1, 86400, {},
       "Time limit of each gate and git command of the release domain"},
      {"research.manifestFile", json::Type::String, "\".cleo/agent-outputs/MANIFEST.jsonl\"", 0, 0, {},
       "The manifest subagents append their outputs to (one JSON line each, O_APPEND), relative to the project "
       "root; research.sync imports its new lines",
       SetBy::Anyone, false, check_inside_project},
      {"validate.testCommand", json::Type::String, "\"\"", 0, 0, {},
       "The project's test command for validate.test.run, e.g. \"ctest --test-dir build\": split into words like a "
       "shell would, but run without one (no pipes, &&, $VARS or globs; name a script for those). Empty = none",
       SetBy::People, true, check_command},
      {"validate.testTimeoutSeconds", json::Type::Int, "600", 1, 86400, {},
       "validate.test.run stops the test command after this many seconds (recorded as a failed run)"},
      {"validate.coverageThreshold", json::Type::Int, "0", 0, 100, {},
       "Coverage in percent the testing protocol requires of the latest validate.test.run (its output's coverage "
       "total); below it validate.protocol fails with E_COVERAGE_INSUFFICIENT. 0 = no threshold",
       SetBy::People},
      {"issues.ghTimeoutSeconds", json::Type::Int, "60", 1, 3600, {},
       "issues.create stops gh (auth status, issue create) after this many seconds (E_TIMEOUT)"},
      {"analyze.stalePendingDays", json::Type::Int, "30", 1, 36500, {},
       "tasks.analyze reports pending tasks not updated for this many days as stale"},
      {"analyze.staleBlockedDays", json::Type::Int, "7", 1, 36500, {},
       "tasks.analyze reports blocked tasks not updated for this many days as stale"},
      {"orchestrator.contextBudget", json::Type::Int, "200000", 1000, 10000000, {},
       "Tokens of context an orchestrator may fill (orchestrate.context compares its usage with it)"},
      {"orchestrator.contextWarning", json::Type::Int, "70", 1, 100, {},
       "orchestrate.context: percent of the budget at which the status becomes warning"},
      {"orchestrator.contextCritical", json::Type::Int, "80", 1, 100, {},
       "orchestrate.context: percent of the budget at which the status becomes critical"},
      {"orchestrator.spawnCommand", json::Type::String, "\"\"", 0, 0, {},
       "The agent command orchestrate.spawn runs with execute:true, the prompt on its stdin, e.g. \"claude -p\": "
       "split into words like a shell would, but run without one. Empty = spawn only returns the prompt",
       SetBy::People, true, check_command},
      {"orchestrator.provider", json::Type::String, "\"\"", 0, 0, {},
       "The agent host (a providers.list id with a headless command: claude, codex, cursor, gemini, opencode) whose "
       "headless command orchestrate.spawn runs with execute:true, the prompt as its last argument, when "
       "orchestrator.spawnCommand is empty. Empty = none",
       SetBy::People},
      {"orchestrator.worktrees", json::Type::String, "\"\"", 0, 0, {},
       "Where orchestrate.spawn with execute:true puts each task's git worktree (branch cleo/<task>, from the main "
       "worktree's HEAD) and runs the agent: a directory relative to the main worktree, {repo} its folder's name and "
       "{task} the task id, e.g. \"../{repo}-{task}\". Empty = off: agents run in the project root",
       SetBy::People, false, check_worktree_pattern},
      {"orchestrator.spawnTimeoutSeconds", json::Type::Int, "1800", 1, 86400, {},
       "orchestrate.spawn with execute:true stops the agent after this many seconds (recorded as a failed run)"},
      {"lifecycle.enforcement", json::Type::String, "\"strict\"", 0, 0, {"strict", "advisory", "off"},
       "Lifecycle stages and verification gates: strict (a missing prerequisite is an error), advisory (a warning) "
       "or off. Only epics with a recorded stage are gated",
       SetBy::People},
      {"lifecycle.allowSkip", json::Type::Array, "[\"consensus\"]", 0, 8,
       {},  // the stages: engines/rules/lifecycle.cpp
       "The stages lifecycle.skip may skip",
       SetBy::People},
      {"verification.required", json::Type::Array, "[]", 0, 6,
       {},  // the gates: engines/rules/lifecycle.cpp
       "Verification gates tasks.complete needs passed (strict: an error; advisory: a warning)",
       SetBy::People},
      {"verification.separateAgents", json::Type::Bool, "false", 0, 0, {},
       "An agent may not pass a verification gate (after implemented) on a task it worked on itself",
       SetBy::People},
      {"verification.evidence", json::Type::String, "\"advisory\"", 0, 0, {"off", "advisory", "strict"},
       "Evidence of done (commits, files, test runs, PRs, notes): off (kept unchecked), advisory (checked; gaps "
       "warned) or strict (required gates need checked evidence; tasks.complete needs no stale evidence and every "
       "acceptance criterion covered or waived)",
       SetBy::People},
      {"approval.required", json::Type::Array, "[]", 0, 40,
       {},  // each item checked by domains/approval.cpp
       "Mutations an agent only proposes and a person approves (ct approve): \"domain.operation\", or with a "
       "condition: \"tasks.complete:epic\", \"memory.update:verified\"",
       SetBy::People},
      {"memory.verifyKinds", json::Type::Array, "[\"convention\"]", 0, 6,
       {},  // the kinds: engines/rules/memory.cpp
       "Kinds of memory entry an agent only proposes: served once a person verifies them (ct memory verify, the "
       "dashboard)",
       SetBy::People},
      {"memory.promptEntries", json::Type::Int, "5", 0, 20, {},
       "Memory entries a spawn prompt and a session briefing carry for the task at hand (0 = none)"},
  };
}

std::vector<ConfigKey>& key_table() {
  static std::vector<ConfigKey> keys = [] {
    std::vector<ConfigKey> all = store_keys();
    std::vector<ConfigKey> work = work_keys();
    all.insert(all.end(), std::make_move_iterator(work.begin()), std::make_move_iterator(work.end()));
    return all;
  }();
  return keys;
}

std::vector<std::string> key_names() {
  std::vector<std::string> names;
  for (const auto& key : key_table()) names.emplace_back(key.name);
  return names;
}

json::Value default_value(const ConfigKey& key) {
  // The defaults' common forms read without the JSON parser (a process reads them all): a
  // boolean, an integer, an empty list or object, a string without escapes.
  std::string_view text = key.default_json;
  if (text == "true" || text == "false") return text == "true";
  if (text == "[]") return json::Value::array();
  if (text == "{}") return json::Value::object();
  std::int64_t number = 0;
  if (auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
      !text.empty() && error == std::errc() && end == text.data() + text.size() && (text.size() == 1 || text[0] != '0'))
    return number;
  if (text.size() >= 2 && text.front() == '"' && text.back() == '"' &&
      text.substr(1, text.size() - 2).find_first_of("\\\"") == std::string_view::npos)
    return text.substr(1, text.size() - 2);
  auto parsed = json::parse(text);
  return parsed ? std::move(*parsed) : json::Value();
}

/// Every key's default, in key_table()'s order: read once per process, shared by every Config
/// (which holds only the values set).
const std::vector<json::Value>& default_values() {
  static const std::vector<json::Value> values = [] {
    std::vector<json::Value> out;
    out.reserve(key_table().size());
    for (const auto& key : key_table()) out.push_back(default_value(key));
    return out;
  }();
  return values;
}

std::string_view type_name(json::Type type) {
  switch (type) {
    case json::Type::Int: return "an integer";
    case json::Type::Bool: return "true or false";
    case json::Type::String: return "a string";
    case json::Type::Object: return "an object";
    case json::Type::Array: return "a list of commands, each an array of strings";
    default: return "a value";
  }
}

/// What a valid value looks like, for messages: "an integer from 1 to 3", "one of normal, full".
std::string expectation(const ConfigKey& key) {
  if (key.type == json::Type::Int) {
    return "an integer from " + std::to_string(key.min) + " to " + std::to_string(key.max);
  }
  if (key.type == json::Type::Array && key.choices.empty() && key.check)
    return "a list of at most " + std::to_string(key.max) + " names";
  if (key.type == json::Type::Array && key.choices.empty())
    return "a list of at most " + std::to_string(key.max) + " commands, each a non-empty array of strings";
  if (!key.choices.empty()) {
    std::string out = key.type == json::Type::Array ? "a list of names, each one of " : "one of ";
    for (std::size_t i = 0; i < key.choices.size(); ++i) {
      if (i > 0) out += ", ";
      out += key.choices[i];
    }
    return out;
  }
  return std::string(type_name(key.type));
}

std::string describe(const json::Value& value) {
  std::string text = value.dump();
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  return text;
}

/// What a value that breaks its key's rule is told; written only when one does (a valid config
/// is loaded by every process: issue 56).
std::string wrong(const ConfigKey& key, const json::Value& value) {
  return "config key '" + std::string(key.name) + "' must be " + expectation(key) + " (got " + describe(value) + ")";
}

/// Checks `value` against the key's type and limits. The error carries `code`; the caller adds
/// the fix (which differs between loading a file and setting one key).
/// An Array key: a list of names checked by the key's owner, or of the key's choices (each at most
/// once), or of commands (each an argv array, program first, never a shell line); at most key.max.
Result<void> validate_list(const ConfigKey& key, const json::Value& value, ErrorCode code) {
  bool ok = value.is_array() && static_cast<std::int64_t>(value.size()) <= key.max;
  if (ok && key.choices.empty() && key.check) {
    // A list of names, each checked by the key's owner, each at most once.
    std::vector<std::string> seen;
    for (const auto& item : value.as_array()) {
      if (!item.is_string() || std::find(seen.begin(), seen.end(), item.as_string()) != seen.end())
        return fail(Error(code, wrong(key, value)).with_detail("key", std::string(key.name)));
      if (std::string problem = key.check(item.as_string()); !problem.empty())
        return fail(Error(code, "config key '" + std::string(key.name) + "': " + echo(item.as_string()) + " " +
                                    problem)
                        .with_detail("key", std::string(key.name)));
      seen.push_back(item.as_string());
    }
    return {};
  }
  if (ok && !key.choices.empty()) {
    // A list of names from the key's choices, each at most once.
    std::vector<std::string> seen;
    for (const auto& item : value.as_array()) {
      if (!item.is_string() || std::find(seen.begin(), seen.end(), item.as_string()) != seen.end()) {
        ok = false;
        break;
      }
      if (std::find(key.choices.begin(), key.choices.end(), item.as_string()) == key.choices.end()) {
        std::vector<std::string> choices(key.choices.begin(), key.choices.end());
        return fail(Error(code, wrong(key, value))
                        .with_detail("key", std::string(key.name))
                        .with_choices(item.as_string(), choices));
      }
      seen.push_back(item.as_string());
    }
    if (!ok) return fail(Error(code, wrong(key, value)).with_detail("key", std::string(key.name)));
    return {};
  }
  // A list of commands: each an argv array (program first), never a shell line.
  if (ok)
    for (const auto& command : value.as_array()) {
      ok = ok && command.is_array() && command.size() > 0;
      if (ok)
        for (const auto& word : command.as_array()) ok = ok && word.is_string() && !word.as_string().empty();
    }
  if (!ok) return fail(Error(code, wrong(key, value)).with_detail("key", std::string(key.name)));
  return {};
}

Result<void> validate(const ConfigKey& key, const json::Value& value, ErrorCode code) {
  switch (key.type) {
    case json::Type::Int:
      if (!value.is_int() || value.as_int() < key.min || value.as_int() > key.max) {
        return fail(Error(code, wrong(key, value))
                        .with_detail("key", std::string(key.name))
                        .with_detail("min", key.min)
                        .with_detail("max", key.max));
      }
      return {};
    case json::Type::Bool:
      if (!value.is_bool()) return fail(Error(code, wrong(key, value)).with_detail("key", std::string(key.name)));
      return {};
    case json::Type::Array:
      return validate_list(key, value, code);
    case json::Type::String: {
      if (!value.is_string()) return fail(Error(code, wrong(key, value)).with_detail("key", std::string(key.name)));
      if (key.check) {
        std::string problem = key.check(value.as_string());
        if (!problem.empty())
          // A URL's value is never echoed: it may hold the very password refused.
          return fail(Error(code, "config key '" + std::string(key.name) + "': " + problem +
                                      (key.name == "storage.url" ? std::string() : " (got " + describe(value) + ")"))
                          .with_detail("key", std::string(key.name)));
      }
      if (key.choices.empty()) return {};
      for (auto choice : key.choices)
        if (choice == value.as_string()) return {};
      std::vector<std::string> choices(key.choices.begin(), key.choices.end());
      return fail(Error(code, wrong(key, value))
                      .with_detail("key", std::string(key.name))
                      .with_choices(value.as_string(), choices));
    }
    case json::Type::Object:
      // The shape inside is checked by whoever reads it (plug-in engines: capability/plugins.cpp).
      if (!value.is_object()) return fail(Error(code, wrong(key, value)).with_detail("key", std::string(key.name)));
      return {};
    default:
      return fail(ErrorCode::Internal, "config key '" + std::string(key.name) + "' has an unsupported type");
  }
}


/// Walks the nested object, validating every leaf into `flat`.
Result<void> load_object(const json::Value& object, const std::string& prefix, const fs::path& file,
                         json::Value& flat) {
  for (const auto& [name, value] : object.as_object()) {
    std::string key = prefix.empty() ? name : prefix + "." + name;
    const ConfigKey* spec = find_config_key(key);
    if (spec == nullptr && value.is_object()) {
      CT_TRY(load_object(value, key, file, flat));
      continue;
    }
    if (spec == nullptr) {
      return fail(Error(ErrorCode::ConfigError, "unknown config key '" + key + "' in " + file.string())
                      .with_fix("remove '" + key + "' from " + file.string() + " (" + call("system.config.get") +
                                " lists the valid keys)")
                      .with_choices(key, key_names()));
    }
    auto valid = validate(*spec, value, ErrorCode::ConfigError);
    if (!valid) {
      Error error = std::move(valid.error());
      error.message += " in " + file.string();
      error.with_fix("edit " + file.string() + " and set " + key + " to " + expectation(*spec) +
                     ", or remove it to use the default " + std::string(spec->default_json));
      return fail(std::move(error));
    }
    flat.set(key, value);
  }
  return {};
}

}  // namespace

std::span<const ConfigKey> config_keys() { return key_table(); }

bool register_config_rule(const ConfigKeyRule& rule) {
  for (ConfigKey& key : key_table()) {
    if (key.name != rule.key) continue;
    if (rule.check != nullptr) key.check = rule.check;
    if (!rule.choices.empty()) key.choices = rule.choices;
    return true;
  }
  return false;
}

const ConfigKey* find_config_key(std::string_view name) {
  for (const auto& key : key_table())
    if (key.name == name) return &key;
  return nullptr;
}

Advice config_set_fix(std::string_view key, const json::Value& value) {
  const ConfigKey* spec = find_config_key(key);
  if (spec == nullptr || spec->set_by == SetBy::Anyone)
    // A list or an object travels as its JSON text: the value param is a scalar.
    return call("system.config.set",
                {{"key", std::string(key)}, {"value", value.is_array() || value.is_object() ? json::Value(value.dump()) : value}});
  const std::string text = value.is_string() ? value.as_string() : value.dump();
  return "a person runs `" + join_command({"ct", "config", "set", std::string(key), text}) +
         "` in a terminal, or edits .cleo/config.json (agents cannot set " + std::string(key) + ")";
}

Config::Config() = default;

Result<Config> Config::load(const std::filesystem::path& file) {
  Config config;
  std::error_code ec;
  if (!fs::exists(file, ec)) return config;
  // Bounded as any file a person may have put there (a FIFO would hang every command).
  auto read = read_regular_file(file, {.max_bytes = 4LL << 20, .deadline = std::chrono::milliseconds(10000), .own_file = true});
  if (!read) {
    return fail(Error(ErrorCode::ConfigError, "cannot read " + file.string() + ": " + read.error().message)
                    .with_fix("check the permissions of " + file.string()));
  }
  std::string text = std::move(*read);
  if (trim(text).empty()) return config;
  auto parsed = json::parse(text);
  if (!parsed) {
    return fail(Error(ErrorCode::ConfigError, file.string() + " is not valid JSON: " + parsed.error().message)
                    .with_fix("fix the JSON syntax in " + file.string() + ", or delete it to restore the defaults"));
  }
  if (!parsed->is_object()) {
    return fail(Error(ErrorCode::ConfigError, file.string() + " must hold a JSON object")
                    .with_fix("write an object such as {\"hierarchy\":{\"maxDepth\":3}} to " + file.string() +
                              ", or delete it to restore the defaults"));
  }
  CT_TRY(load_object(*parsed, "", file, config.values_));
  return config;
}

std::int64_t Config::get_int(std::string_view key) const {
  const json::Value& value = get(key);
  return value.is_int() ? value.as_int() : 0;
}

bool Config::get_bool(std::string_view key) const {
  const json::Value& value = get(key);
  return value.is_bool() && value.as_bool();
}

const std::string& Config::get_string(std::string_view key) const {
  static const std::string empty;
  const json::Value& value = get(key);
  return value.is_string() ? value.as_string() : empty;
}

const json::Value& Config::get(std::string_view key) const {
  if (const json::Value* value = values_.find(key)) return *value;
  const auto keys = config_keys();
  for (std::size_t i = 0; i < keys.size(); ++i)
    if (keys[i].name == key) return default_values()[i];
  static const json::Value kNone;
  return kNone;
}

std::vector<std::string> Config::get_strings(std::string_view key) const {
  std::vector<std::string> out;
  const json::Value& value = get(key);
  if (value.is_array())
    for (const auto& item : value.as_array())
      if (item.is_string()) out.push_back(item.as_string());
  return out;
}

Result<void> Config::set(std::string_view key, const json::Value& value) {
  const ConfigKey* spec = find_config_key(key);
  if (spec == nullptr) {
    return fail(Error(ErrorCode::InvalidInput, "unknown config key '" + std::string(key) + "'")
                    .with_fix(call("system.config.get"))
                    .with_choices(key, key_names()));
  }
  auto valid = validate(*spec, value, ErrorCode::InvalidInput);
  if (!valid) {
    Error error = std::move(valid.error());
    error.with_fix(config_set_fix(spec->name, default_value(*spec)));
    return fail(std::move(error));
  }
  values_.set(key, value);
  return {};
}

json::Value Config::to_json() const {
  json::Value root = json::Value::object();
  for (const auto& key : key_table()) {
    json::Value* node = &root;
    std::string_view rest = key.name;
    for (auto dot = rest.find('.'); dot != std::string_view::npos; dot = rest.find('.')) {
      std::string_view section = rest.substr(0, dot);
      json::Value* child = node->find(section);
      if (child == nullptr || !child->is_object()) child = &node->set(section, json::Value::object());
      node = child;
      rest.remove_prefix(dot + 1);
    }
    node->set(rest, get(key.name));
  }
  return root;
}

Result<void> Config::save(const std::filesystem::path& file) const {
  return write_file_atomically(file, to_json().dump_pretty() + "\n");
}

}  // namespace ct
