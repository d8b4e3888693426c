// system.help and system.inject: the disclosure layer's operations, and system.init's project
// injection, registered into the product registry by gateway/product.cpp. They read the registry they describe through
// Context::registry (the one the router serves), never through a global.
#include "disclosure/disclosure_ops.h"

#include <filesystem>

#include "core/text.h"
#include "disclosure/help_levels.h"
#include "disclosure/injection.h"
#include "disclosure/research_inject.h"
#include "disclosure/spawn.h"
#include "domains/bind.h"
#include "domains/context.h"
#include "domains/providers/providers.h"
#include "engines/project/project.h"

namespace ct::disclosure {
namespace {

struct HelpArgs {
  std::optional<std::int64_t> level;
  std::optional<std::string> domain;
  std::optional<std::string> operation;
  std::string format;
  std::optional<std::string> known_hash;
};

Result<Reply> help(Context& context, const HelpArgs& args) {
  const Registry& registry = *context.registry;
  CT_TRY_ASSIGN(HelpTarget target,
                resolve_help_target(registry, args.domain.value_or(""), args.operation.value_or("")));
  const bool schema = args.format == "json-schema";
  const std::int64_t level = args.level.value_or(target.spec || schema ? 2 : target.domain.empty() ? 0 : 1);
  const OperationSpec* self = registry.find("system", "help");
  std::vector<std::string> warnings;
  if (level == 2 && !target.spec) {
    std::vector<std::string> valid;
    for (const auto& spec : registry.operations())
      if (target.domain.empty() || spec.domain == target.domain) valid.push_back(spec.full_name());
    Error error(ErrorCode::InvalidParams, "operation: level 2 describes one operation; name it");
    error.fix = self->call_with(R"({"level":2,"domain":"tasks","operation":"add"})");
    return fail(std::move(error).with_detail("field", "operation").with_detail("valid", json::Value::array_of(valid)));
  }
  if (schema && level != 2) {
    Error error(ErrorCode::InvalidParams, "format: json-schema describes one operation's params (level 2)");
    error.fix = self->call_with(R"({"level":2,"domain":"tasks","operation":"add","format":"json-schema"})");
    return fail(std::move(error).with_detail("field", "format"));
  }
  if ((level == 0 || level == 3) && (!target.domain.empty() || target.spec))
    warnings.push_back("level " + std::to_string(level) + " covers every domain; domain and operation were ignored");

  json::Value data = json::Value::object();
  std::string hashed;
  if (schema) {
    json::Value body = params_schema(*target.spec);
    hashed = body.dump();
    data.set("schema", std::move(body));
  } else {
    Result<std::string> text = level == 0   ? level0(registry)
                               : level == 1 ? level1(registry, target.spec ? std::string(target.spec->domain) : target.domain)
                               : level == 2 ? level2(registry, *target.spec)
                                            : level3(registry);
    if (!text) return fail(std::move(text.error()));
    hashed = std::move(*text);
  }
  std::string hash = content_hash(hashed);
  if (args.known_hash == hash) {
    json::Value same = json::Value::object();
    same.set("unchanged", true);
    same.set("hash", hash);
    return Reply::warned(std::move(same), std::move(warnings));
  }
  json::Value out = json::Value::object();
  out.set("level", level);
  out.set("hash", hash);
  out.set("tokens", static_cast<std::int64_t>(estimate_tokens(hashed)));
  if (schema) {
    out.set("schema", data["schema"]);
  } else {
    out.set("content", std::move(hashed));
  }
  return Reply::warned(std::move(out), std::move(warnings));
}

json::Value outcomes(const std::vector<FileOutcome>& files) {
  json::Value list = json::Value::array();
  for (const auto& file : files) {
    json::Value item = json::Value::object();
    item.set("file", file.file);
    item.set("action", file.action);
    if (file.level) item.set("level", static_cast<std::int64_t>(*file.level));
    list.push_back(std::move(item));
  }
  return list;
}

/// The one level every target's block has (or would have), if they agree: a fix names it, so
/// following the fix cannot change a level.
std::optional<int> common_level(const InjectReport& report) {
  std::optional<int> level;
  for (const auto& file : report.targets) {
    if (!file.level) continue;
    if (level && *level != *file.level) return std::nullopt;
    level = file.level;
  }
  return level;
}

struct InjectArgs {
  std::vector<std::string> targets;
  std::optional<std::int64_t> level;
  bool global = false;
  bool check = false;
  bool create = false;
  bool allow_outside = false;
  json::Value sent;  // the call, repeated in the fix of a check
};

Result<Reply> inject_instructions(Context& context, const InjectArgs& args) {
  InjectOptions options;
  options.targets = args.targets;
  if (args.level) options.level = static_cast<int>(*args.level);
  options.check = args.check;
  options.create = args.create;
  options.allow_outside = args.allow_outside;
  if ((args.global || options.allow_outside) && !context.may_leave_project()) {
    Error error(ErrorCode::InvalidInput, std::string(args.global ? "global" : "allowOutside") +
                                             ": this caller may not write outside the project");
    error.fix = "run `ct inject --global` (or --allow-outside) in a terminal; " + Context::let_agents_leave_project();
    return fail(std::move(error).with_detail("field", args.global ? "global" : "allowOutside"));
  }
  if (args.global) {
    CT_TRY_ASSIGN(options.global_dirs, global_dirs_from_environment());
  } else {
    CT_TRY_ASSIGN(Project project, context.workspace->project());
    options.root = project.root;
  }
  CT_TRY_ASSIGN(InjectReport report, inject(*context.registry, options));
  json::Value data = json::Value::object();
  data.set("templates", outcomes(report.templates));
  data.set("targets", outcomes(report.targets));
  if (options.check && report.changed) {
    std::string drift;
    for (const auto* group : {&report.templates, &report.targets})
      for (const auto& file : *group)
        if (file.action == "outdated" || file.action == "missing")
          drift += (drift.empty() ? "" : ", ") + file.file + " (" + file.action + ")";
    json::Value again = args.sent;
    again.erase("check");
    if (auto level = common_level(report); level && !options.level) again.set("level", static_cast<std::int64_t>(*level));
    Error error(ErrorCode::Outdated, "CLEO's instructions differ from what this version renders: " + drift);
    error.fix = context.registry->find("system", "inject")->call_with(again.dump());
    return fail(std::move(error).with_detail("templates", data["templates"]).with_detail("targets", data["targets"]));
  }
  // No instruction file exists to hold a block: the instructions are neither current nor written,
  // whatever the templates are.
  std::vector<std::string> warnings;
  const bool no_target = std::all_of(report.targets.begin(), report.targets.end(),
                                     [](const FileOutcome& file) { return file.action == "absent"; });
  if (no_target) {
    std::vector<std::string> names = options.targets;
    if (names.empty()) names.assign(instruction_files().begin(), instruction_files().end());
    warnings.push_back("no instruction file (" + join(names, ", ") + ") exists to hold CLEO's block: create one "
                       "with targets [\"AGENTS.md\"] and create: true (ct inject --targets AGENTS.md --create)");
  }
  std::optional<ErrorCode> note;
  if (!report.changed) note = no_target ? ErrorCode::NoData : ErrorCode::NoChange;
  return Reply::noted(std::move(data), note, std::move(warnings));
}

/// providers.inject: system.inject's mechanism for the one instruction file a host reads (the
/// providers table names it), created when missing: the caller asked for this host.
struct ProviderInjectArgs {
  std::string provider;
  std::optional<std::int64_t> level;
  bool dry_run = false;
};

Result<Reply> inject_for_provider(Context& context, const ProviderInjectArgs& args) {
  const providers::Provider& provider = *providers::find(args.provider);
  InjectOptions options;
  options.targets = {std::string(provider.inject_target)};
  if (args.level) options.level = static_cast<int>(*args.level);
  options.check = args.dry_run;
  options.create = true;
  CT_TRY_ASSIGN(Project project, context.workspace->project());
  options.root = project.root;
  CT_TRY_ASSIGN(InjectReport report, inject(*context.registry, options));
  json::Value data = json::Value::object();
  data.set("provider", std::string(provider.id));
  data.set("file", std::string(provider.inject_target));
  const FileOutcome& target = report.targets.front();
  data.set("action", target.action);
  if (target.level) data.set("level", static_cast<std::int64_t>(*target.level));
  data.set("templates", outcomes(report.templates));
  std::optional<ErrorCode> note;
  if (!report.changed) note = ErrorCode::NoChange;
  return Reply::noted(std::move(data), note);
}

/// The project injection system.init performs: renders the templates into .cleo/templates/ and
/// refreshes the block of the instruction files that already exist (never creates one: init stays
/// non-invasive; each block keeps its level). Returns the files it wrote as [{file, action}].
Result<json::Value> inject_after_init(const Registry& registry, const std::filesystem::path& root) {
  InjectOptions options;
  options.root = root;
  CT_TRY_ASSIGN(InjectReport report, inject(registry, options));
  json::Value done = json::Value::array();
  for (const auto* group : {&report.templates, &report.targets}) {
    for (const auto& file : *group) {
      if (file.action == "unchanged" || file.action == "absent" || file.action.starts_with("same file")) continue;
      json::Value item = json::Value::object();
      item.set("file", file.file);
      item.set("action", file.action);
      if (file.level) item.set("level", static_cast<std::int64_t>(*file.level));
      done.push_back(std::move(item));
    }
  }
  return done;
}

/// system.init's step: the project injection. A failed injection does not undo the project; it
/// becomes a warning. It reads no param.
Result<Reply> write_instructions_after_init(Context& context, const NoArgs&, Reply reply) {
  auto written = inject_after_init(*context.registry, reply.data["root"].as_string());
  if (!written) {
    const Error& error = written.error();
    Advice warning = "agent instructions not written: " + error.message;
    if (!error.fix.empty()) warning += " (fix: " + error.fix + ")";
    reply.advice_warnings.push_back(std::move(warning));
  } else if (!written->empty()) {
    if (reply.note) {
      // The project existed: the note answers for the reply, so say what was refreshed.
      std::string files;
      for (const auto& file : written->as_array())
        files += (files.empty() ? "" : ", ") + file["file"].as_string() + " (" + file["action"].as_string() + ")";
      reply.warnings.push_back("agent instructions refreshed: " + files);
    }
    reply.data.set("instructions", std::move(*written));
  }
  return reply;
}


void register_providers_inject(Registry& registry) {
  std::vector<std::string_view> hosts;
  for (const auto& provider : providers::all()) hosts.push_back(provider.id);
  const auto provider_args = bind(
      field(&ProviderInjectArgs::provider, {.name = "provider", .type = ParamType::Enum, .required = true,
                                            .choices = hosts,
                                            .description = "The agent host (its file: CLAUDE.md, AGENTS.md or GEMINI.md)",
                                            .positional = true}),
      field(&ProviderInjectArgs::level, {.name = "level", .type = ParamType::Int, .min = 0, .max = 3,
                                         .choices = {"0", "1", "3"},
                                         .description = "As system.inject: 0, or 1/3 to import the larger template "
                                                        "(default: the level the block has)"}),
      field(&ProviderInjectArgs::dry_run, {.name = "dryRun", .type = ParamType::Bool,
                                           .description = "Report what would change (current|outdated|missing), "
                                                          "write nothing",
                                           .dry_run = true}));
  registry.add({.domain = "providers", .name = "inject", .gateway = Gateway::Mutate,
                .summary = "Write CLEO's instructions into a host's instruction file",
                .params = provider_args.specs(),
                .returns = "{provider, file, action created|inserted|updated|unchanged (dry run: current|outdated|"
                           "missing), level, templates[{file, action}]}; E_NO_CHANGE note when nothing changed",
                .errors = {ErrorCode::Validation, ErrorCode::FileError, ErrorCode::NotInitialized},
                .examples = {{R"({"provider":"claude"})", "the block in CLAUDE.md (created when missing)"},
                             {R"({"provider":"cursor","dryRun":true})", "what AGENTS.md would get, unwritten"}},
                .idempotent = true, .needs_project = false, .tier = 2,
                .handler = provider_args.handler(inject_for_provider)});
}

void register_system_help(Registry& registry) {
  const auto help_args = bind(
      field(&HelpArgs::level, {.name = "level", .type = ParamType::Int, .min = 0, .max = 3,
                               .description = "0 entry, 1 operations, 2 one operation, 3 protocol (default 0; "
                                              "1 with a domain, 2 with an operation)"}),
      field(&HelpArgs::domain, {.name = "domain", .type = ParamType::String, .max = 60,
                                .description = "Only this domain (level 1), or the domain of operation",
                                .positional = true}),
      field(&HelpArgs::operation, {.name = "operation", .type = ParamType::String, .max = 80,
                                   .description = "One operation for level 2: add, tasks.add or with domain",
                                   .positional = true}),
      field(&HelpArgs::format, {.name = "format", .type = ParamType::Enum, .default_json = R"("text")",
                                .choices = {"text", "json-schema"},
                                .description = "json-schema: level 2 params as a JSON Schema object"}),
      field(&HelpArgs::known_hash, {.name = "knownHash", .type = ParamType::String, .max = 64,
                                    .description = "The hash of a text you have: an unchanged text is not sent again"}));
  registry.add({.domain = "system", .name = "help", .gateway = Gateway::Query,
                .summary = "Explain CLEO, levels 0–3",
                .params = help_args.specs(),
                .returns = "{level, hash, tokens (≈ o200k tokens: an estimate, within ±10%), content} (json-schema: "
                           "schema instead of content); "
                           "{unchanged:true, hash} when knownHash matches",
                .errors = {ErrorCode::InvalidDomain, ErrorCode::InvalidOperation},
                .examples = {{R"({"level":1})", "every operation"},
                             {R"({"level":2,"domain":"tasks","operation":"add"})", "one operation in full"},
                             {R"({"operation":"tasks.add","format":"json-schema"})", "params as JSON Schema"},
                             {R"({"level":3})", "the protocol"}},
                .idempotent = true, .needs_project = false, .tier = 1, .shortcut = "help",
                .text_view = TextView::HelpText, .handler = help_args.handler(help)});
}

void register_system_inject(Registry& registry) {
  const auto inject_args = bind(
      field(&InjectArgs::targets, {.name = "targets", .type = ParamType::Array, .max = 3,
                                   .choices = {"CLAUDE.md", "AGENTS.md", "GEMINI.md"}, .item_type = ParamType::Enum,
                                   .description = "Instruction files (default: every one that exists)",
                                   .alias = "target"}),
      field(&InjectArgs::level, {.name = "level", .type = ParamType::Int, .min = 0, .max = 3, .choices = {"0", "1", "3"},
                                 .description = "0: the block holds level 0; 1 or 3: it imports the larger template "
                                                "(default: the level the block has, 0 for a new one)"}),
      field(&InjectArgs::global, {.name = "global", .type = ParamType::Bool,
                                  .description = "The user's files (~/.claude/CLAUDE.md …; templates in $CLEO_HOME)"}),
      field(&InjectArgs::check, {.name = "check", .type = ParamType::Bool,
                                 .description = "Report drift without writing (E_OUTDATED when something differs)",
                                 .dry_run = true}),
      field(&InjectArgs::create, {.name = "create", .type = ParamType::Bool,
                                  .description = "Create target files that do not exist yet"}),
      field(&InjectArgs::allow_outside, {.name = "allowOutside", .type = ParamType::Bool,
                                         .description = "Write through a symlink that leads outside the project "
                                                        "(refused otherwise; MCP callers need "
                                                        "security.allowOutsideProject)"}),
      call_params(&InjectArgs::sent));
  registry.add({.domain = "system", .name = "inject", .gateway = Gateway::Mutate,
                .summary = "Write CLEO's agent instructions into CLAUDE.md, AGENTS.md, GEMINI.md",
                .params = inject_args.specs(),
                .returns = "{templates[{file, action}], targets[{file, action, level?}]}; action: created|inserted|"
                           "updated|unchanged|absent|same file as <target> (check: current|outdated|missing|…); "
                           "E_NO_CHANGE note when nothing changed; E_NO_DATA note and a warning when no target file "
                           "exists (create makes one)",
                .errors = {ErrorCode::Validation, ErrorCode::Outdated, ErrorCode::FileError, ErrorCode::NotInitialized,
                           ErrorCode::InvalidInput, ErrorCode::ConfigError},
                .examples = {{R"({})", "refresh the block in every instruction file here"},
                             {R"({"level":3})", "orchestrators: import the protocol (CLEO-INJECTION.md)"},
                             {R"({"targets":["CLAUDE.md"],"level":1,"create":true})", "create CLAUDE.md importing level 1"},
                             {R"({"check":true})", "CI: fail when the instructions are stale"}},
                .idempotent = true, .needs_project = false, .tier = 2, .shortcut = "inject",
                .text_view = TextView::Injected, .handler = inject_args.handler(inject_instructions)});
}

}  // namespace

void register_disclosure_operations(Registry& registry) {
  registry.add_step("system", "init", Binding<NoArgs>({}).step(write_instructions_after_init));
  register_spawn_operation(registry);
  register_research_inject(registry);
  register_providers_inject(registry);
  register_system_help(registry);
  register_system_inject(registry);
}

}  // namespace ct::disclosure
