// system domain — administration: typed configuration, health checks and backups.
#include <algorithm>
#include <filesystem>
#include <system_error>

#include "core/json_parse.h"
#include "core/text.h"
#include "domains/approval.h"
#include "domains/bind.h"
#include "domains/context.h"
#include "domains/registry.h"
#include "domains/system/capability_matrix.h"
#include "domains/verdict.h"
#include "engines/store/backups.h"
#include "engines/store/open/open_store.h"

namespace ct {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> key_names() {
  std::vector<std::string> names;
  for (const auto& key : config_keys()) names.emplace_back(key.name);
  return names;
}

Error unknown_key(const std::string& key) {
  Error error(ErrorCode::InvalidInput, "unknown config key '" + key + "'");
  error.fix = call("system.config.get") + " lists every key";
  return std::move(error).with_detail("field", "key").with_choices(key, key_names());
}

json::Value describe_key(const ConfigKey& key, const Config& config) {
  json::Value out = json::Value::object();
  out.set("key", key.name);
  out.set("value", config.get(key.name));
  out.set("type", json::to_string(key.type));
  if (!key.choices.empty()) out.set("choices", json::Value::array_of(key.choices));
  if (key.type == json::Type::Int) {
    out.set("min", key.min);
    out.set("max", key.max);
  }
  out.set("description", key.description);
  if (key.set_by == SetBy::People) out.set("setBy", "people");
  return out;
}

struct ConfigGetArgs {
  std::optional<std::string> key;
};

Result<Reply> config_get(Context& context, const ConfigGetArgs& args) {
  const Config& config = *context.config;
  if (const auto& key = args.key) {
    const ConfigKey* spec = find_config_key(*key);
    if (!spec) return fail(unknown_key(*key));
    return Reply::of(describe_key(*spec, config));
  }
  json::Value all = json::Value::object();
  for (const auto& key : config_keys()) all.set(key.name, config.get(key.name));
  return Reply::of(std::move(all));
}

/// The text of a CLI or agent value in the key's type: "3" → 3 for integers, "true" → true.
Result<json::Value> typed_value(const ConfigKey& key, const std::string& text) {
  if (key.type == json::Type::Int) {
    std::string_view digits = trim(text);
    std::int64_t number = 0;
    bool negative = !digits.empty() && digits.front() == '-';
    if (negative) digits.remove_prefix(1);
    bool ok = !digits.empty() && digits.size() < 18;
    for (char c : digits) ok = ok && c >= '0' && c <= '9';
    if (!ok)
      return fail(Error(ErrorCode::InvalidInput, std::string(key.name) + " takes an integer, got '" + text + "'")
                      .with_detail("field", "value"));
    for (char c : digits) number = number * 10 + (c - '0');
    return json::Value(negative ? -number : number);
  }
  if (key.type == json::Type::Bool) {
    if (text == "true") return json::Value(true);
    if (text == "false") return json::Value(false);
    return fail(Error(ErrorCode::InvalidInput, std::string(key.name) + " takes true or false, got '" + text + "'")
                    .with_detail("field", "value"));
  }
  if (key.type == json::Type::Array && !key.choices.empty() && !trim(text).starts_with("[")) {
    // A list of names may also come as words: "consensus,testing" (or "" for none).
    json::Value list = json::Value::array();
    std::string_view rest = text;
    while (!rest.empty()) {
      auto comma = rest.find(',');
      std::string_view word = trim(rest.substr(0, comma));
      if (!word.empty()) list.push_back(json::Value(std::string(word)));
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
    return list;
  }
  if (key.type == json::Type::Array) {
    // A list arrives as JSON text: [["make","test"],["npm","run","lint"]], ["consensus"].
    auto parsed = json::parse(text);
    if (!parsed)
      return fail(Error(ErrorCode::InvalidInput,
                        std::string(key.name) +
                            (key.choices.empty() ? " takes a JSON list of commands like [[\"make\",\"test\"]], got '"
                                                 : " takes a JSON list of names, got '") +
                            text + "'")
                      .with_detail("field", "value"));
    return std::move(*parsed);
  }
  if (key.type == json::Type::Object) {
    // An object arrives as JSON text too: {"github":{"repository":"owner/name"}}.
    auto parsed = json::parse(text);
    if (!parsed || !parsed->is_object())
      return fail(Error(ErrorCode::InvalidInput, std::string(key.name) + " takes a JSON object, got '" + text + "'")
                      .with_detail("field", "value"));
    return std::move(*parsed);
  }
  return json::Value(text);
}

struct ConfigSetArgs {
  std::string key;
  std::string value;
};

Result<Reply> config_set(Context& context, const ConfigSetArgs& args) {
  const std::string& key = args.key;
  const ConfigKey* spec = find_config_key(key);
  if (!spec) return fail(unknown_key(key));
  // Who is calling comes first: an agent learns that the key is not its to set, whatever the value.
  CT_TRY(context.may_set_config(*spec, json::Value(args.value)));
  CT_TRY_ASSIGN(json::Value value, typed_value(*spec, args.value));
  Config updated = *context.config;
  json::Value before = updated.get(key);
  CT_TRY(updated.set(key, value));
  if (key == "approval.required") CT_TRY(approval::check_rules(*context.registry, value));
  json::Value data = json::Value::object();
  data.set("key", key);
  data.set("value", value);
  if (before == value) return Reply::noted(std::move(data), ErrorCode::NoChange);
  CT_TRY(updated.save(context.project->config_path()));
  context.record(FieldChange{"", "config." + key, before, value});
  context.config_changed = true;
  return Reply::of(std::move(data));
}

/// One check of system.health: its row, and the fix the row shows.
struct Check {
  json::Value item;
  Advice fix;
};

Check check(std::string_view name, std::string_view status, std::string detail, Advice fix = {}) {
  json::Value out = json::Value::object();
  out.set("name", name);
  out.set("status", status);
  out.set("detail", std::move(detail));
  return {std::move(out), std::move(fix)};
}

Result<Reply> health(Context& context, const NoArgs&) {
  json::Value checks = json::Value::array();
  std::string overall = "ok";
  std::string summary = "health check failed";
  Advice fix;  // the first failure's
  auto add = [&](Check check) {
    const std::string& status = check.item["status"].as_string();
    if (status == "fail" && overall != "fail") {
      summary = check.item["name"].as_string() + ": " + check.item["detail"].as_string();
      fix = check.fix;
    }
    if (status == "fail") overall = "fail";
    else if (status == "warn" && overall == "ok") overall = "warn";
    if (!check.fix.empty()) check.item.set("fix", check.fix.to_value());
    checks.push_back(std::move(check.item));
  };
  if (!context.store) {
    // The store cannot be opened at all: say why and how to recover; the other checks still run.
    const Error& why = *context.store_error;
    add(check("database", "fail", why.message, why.fix));
  } else {
    // A failed check marks the store damaged (writes refused); a clean one lifts the mark.
    auto problems = context.db().integrity_problems();
    if (!problems) {
      add(check("database", "fail", problems.error().message, problems.error().fix));
    } else if (problems->empty()) {
      add(check("database", "ok", "integrity and foreign-key checks passed"));
    } else {
      add(check("database", "fail", std::to_string(problems->size()) + " problem(s): " + problems->front(),
                "restore the newest good backup (the damaged store is moved aside): " + call("system.restore")));
    }
    auto schema = context.db().schema_version();
    if (schema && *schema == store_schema_version()) {
      add(check("schema", "ok", "version " + std::to_string(*schema)));
    } else {
      add(check("schema", "fail", schema ? "version " + std::to_string(*schema) : schema.error().message));
    }
  }
  for (auto& finding : project_store(*context.project)->health())
    add(check(finding.name, finding.status, std::move(finding.detail), std::move(finding.fix)));
  std::error_code ec;
  auto space = fs::space(context.project->cleo_dir(), ec);
  if (ec) {
    add(check("disk", "warn", "free space unknown: " + ec.message()));
  } else {
    std::uintmax_t mib = space.available / (1024 * 1024);
    add(mib < 100 ? check("disk", mib < 10 ? "fail" : "warn", std::to_string(mib) + " MiB free",
                          "free disk space: writes fail when the disk is full")
                  : check("disk", "ok", std::to_string(mib) + " MiB free"));
  }
  auto config = Config::load(context.project->config_path());
  add(config ? check("config", "ok", context.project->config_path().string())
             : check("config", "fail", config.error().message, config.error().fix));
  // The matrix in one line (system.capabilities has it whole); an unavailable operation is a
  // warning, never a failure: native work goes on.
  std::size_t native = 0, unavailable = 0;
  std::string first_unavailable;
  for (const auto& row : capability_matrix(context)) {
    native += row.spec->engine == EngineKind::Native ? 1 : 0;
    if (!row.availability.available && unavailable++ == 0)
      first_unavailable = row.spec->full_name() + " (" + row.availability.reason + ")";
  }
  std::string matrix = std::to_string(context.registry->operations().size()) + " operations, " +
                       std::to_string(native) + " native";
  if (unavailable == 0) {
    add(check("capabilities", "ok", matrix + ", all available"));
  } else {
    add(check("capabilities", "warn",
              matrix + ", " + std::to_string(unavailable) + " unavailable here, e.g. " + first_unavailable,
              context.registry->find("system", "capabilities")->call_with(R"({"available":false})")));
  }
  json::Value data = json::Value::object();
  data.set("status", overall);
  data.set("checks", std::move(checks));
  return verdict(overall != "fail", std::move(data), {}, std::move(summary), std::move(fix));
}

struct BackupArgs {
  std::optional<std::string> note;
};

Result<Reply> backup(Context& context, const BackupArgs& args) {
  const Project& project = *context.project;
  CT_TRY_ASSIGN(fs::path file, reserve_backup_path(project.backups_dir(), context.now(), args.note.value_or("")));
  // The copy is read through a second connection: this call's own connection holds the write
  // lock (for the audit row), and SQLite cannot back up from a connection that is writing. In WAL
  // mode the second connection reads the last committed state meanwhile. backup_to() keeps the
  // file only when it passes an integrity check.
  auto reader = project_store(project)->open(StoreOptions{});
  auto written = reader ? (*reader)->backup_to(file) : Result<void>(std::unexpected(reader.error()));
  if (!written) {
    std::error_code ec;
    fs::remove(file, ec);
    return std::unexpected(std::move(written.error()));
  }
  // Retention: the newest backup.keep ordinary backups stay; the one just made always does.
  std::vector<std::string> removed = rotate_backups(project, context.config->get_int("backup.keep"), file);
  json::Value data = json::Value::object();
  data.set("file", file.string());
  std::error_code ec;
  data.set("bytes", static_cast<std::int64_t>(fs::file_size(file, ec)));
  if (!removed.empty()) data.set("removed", json::Value::array_of(removed));
  return Reply::of(std::move(data));
}

}  // namespace

void register_system_admin(Registry& registry) {
  const auto get_args =
      bind(field(&ConfigGetArgs::key, {.name = "key", .type = ParamType::String, .max = 60,
                                       .description = "One key, e.g. hierarchy.maxDepth (default: all keys)",
                                       .positional = true}));
  registry.add({.domain = "system", .name = "config.get", .gateway = Gateway::Query,
                .summary = "Show configuration values",
                .params = get_args.specs(),
                .returns = "{key: value, …}; with key: {key, value, type, choices?, min?, max?, description, setBy?}",
                .errors = {ErrorCode::InvalidInput},
                .examples = {{R"({})", "every key"}, {R"({"key":"hierarchy.maxSiblings"})", "one key"}},
                .idempotent = true, .tier = 2, .shortcut = "config get", .original_names = {"system.config"},
                .handler = get_args.handler(config_get)});
  const auto set_args = bind(
      field(&ConfigSetArgs::key, {.name = "key", .type = ParamType::String, .required = true, .max = 60,
                                  .description = "The key, e.g. hierarchy.maxSiblings", .positional = true}),
      field(&ConfigSetArgs::value, {.name = "value", .type = ParamType::Scalar, .required = true, .max = 1000,
                                    .description = "The new value in the key's type: a number, true/false, text or a JSON list",
                                    .positional = true}));
  registry.add({.domain = "system", .name = "config.set", .gateway = Gateway::Mutate,
                .summary = "Change a configuration value",
                .params = set_args.specs(),
                .returns = "{key, value}; E_NO_CHANGE note when it already had that value",
                .errors = {ErrorCode::InvalidInput, ErrorCode::ConfigError},
                .examples = {{R"({"key":"hierarchy.maxSiblings","value":20})", "limit siblings to 20"}},
                .idempotent = true, .tier = 2, .shortcut = "config set", .handler = set_args.handler(config_set)});
  registry.add({.domain = "system", .name = "health", .gateway = Gateway::Query,
                .summary = "Check the store, disk and config",
                .returns = "{status: ok|warn|fail, checks[{name,status,detail,fix?}], valid}; a failing check fails "
                           "with E_VALIDATION (exit 6), the report in error.details. Runs on a store that cannot be "
                           "opened, to say why",
                .errors = {ErrorCode::Validation},
                .examples = {{R"({})", "is everything healthy"}},
                .idempotent = true, .runs_on_damaged_store = true, .tier = 1, .shortcut = "doctor",
                .original_names = {"system.doctor"}, .handler = no_args(health)});
  const auto backup_args = bind(field(&BackupArgs::note, {.name = "note", .type = ParamType::String, .max = 80,
                                                         .description = "A word or two kept in the file name"}));
  registry.add({.domain = "system", .name = "backup", .gateway = Gateway::Mutate,
                .summary = "Copy the store into .cleo/backups/",
                .params = backup_args.specs(),
                .returns = "{file, bytes, removed?[older backups beyond backup.keep]}; a backup is kept only when "
                           "it passes an integrity check (a damaged store: E_FILE_ERROR, and writes are refused "
                           "until it is restored)",
                .errors = {ErrorCode::FileError},
                .examples = {{R"({"note":"before refactor"})", "a named backup"}},
                .tier = 2, .shortcut = "backup", .handler = backup_args.handler(backup)});
}

}  // namespace ct
