// issues domain — reports about ct itself: diagnostics (what a bug report needs, with nothing
// private in it), the Markdown templates, and issues.create, which files the report through `gh`
// when it is installed and authenticated, and otherwise hands back the report and the exact
// command to file it (engine kind hybrid: it degrades instead of refusing).
#include <sys/utsname.h>

#include <cstdlib>
#include <filesystem>
#include <set>

#include "core/text.h"
#include "core/version.h"
#include "domains/bind.h"
#include "domains/context.h"
#include "domains/registry.h"
#include "engines/adapters/split_command.h"
#include "engines/store/store_backend.h"
#include "engines/adapters/subprocess.h"

namespace ct {
namespace {

namespace fs = std::filesystem;

struct Template {
  std::string_view type;
  std::string_view label;  // a label every new GitHub repository has
  std::string_view body;
};

constexpr Template kTemplates[] = {
    {"bug", "bug",
     "## What happened\n\n\n## What I expected\n\n\n## Steps to reproduce\n\n1. \n2. \n\n"
     "## Command or call\n\n```\nct …  (or the tool call: its domain, operation and params)\n```\n"},
    {"feature", "enhancement",
     "## The problem\n\n\n## The proposal\n\n\n## Alternatives considered\n\n"},
    {"help", "question",
     "## What I am trying to do\n\n\n## What I tried\n\n\n## Where I am stuck\n\n"},
};

const Template& find_template(std::string_view type) {
  for (const auto& t : kTemplates)
    if (t.type == type) return t;
  return kTemplates[0];  // the enum param admits only the three types
}

json::Value template_json(const Template& t) {
  json::Value out = json::Value::object();
  out.set("type", t.type);
  out.set("label", t.label);
  out.set("body", t.body);
  return out;
}

// -- diagnostics ---------------------------------------------------------------------------------

/// Paths in text a report may carry: the project root becomes "<project>", $HOME becomes "~", and
/// any other absolute path is replaced by "<path>" (nothing about the machine outside the project).
std::string scrub_paths(std::string text, const std::optional<fs::path>& root) {
  auto replace_all = [&text](const std::string& from, std::string_view to) {
    if (from.size() < 2) return;
    for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
      text.replace(at, from.size(), to);
  };
  if (root) replace_all(root->string(), "<project>");
  if (const char* home = std::getenv("HOME"); home && *home) replace_all(home, "~");
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const bool starts_token = i == 0 || std::string_view(" \t'\"(=:,").find(text[i - 1]) != std::string_view::npos;
    if (text[i] == '/' && starts_token && i + 1 < text.size() && text[i + 1] != ' ') {
      while (i < text.size() && std::string_view(" \t'\"),").find(text[i]) == std::string_view::npos) ++i;
      out += "<path>";
      --i;
      continue;
    }
    out += text[i];
  }
  return out;
}

/// "~/work/app" when the project sits under $HOME; nothing otherwise (a path outside the home
/// directory says more about the machine than a report needs).
std::optional<std::string> project_location(const fs::path& root) {
  const char* home = std::getenv("HOME");
  if (!home || !*home) return std::nullopt;
  const fs::path base = fs::path(home).lexically_normal();
  const fs::path relative = root.lexically_normal().lexically_relative(base);
  if (relative.empty() || *relative.begin() == "..") return std::nullopt;
  return relative == "." ? std::string("~") : "~/" + relative.string();
}

bool success_note(std::string_view code) {
  return code == "E_NO_DATA" || code == "E_ALREADY_EXISTS" || code == "E_NO_CHANGE";
}

constexpr std::int64_t kRecentErrors = 5;
constexpr std::int64_t kAuditRowsScanned = 200;

Result<json::Value> diagnostics_json(Context& context) {
  json::Value data = json::Value::object();
  data.set("version", product_version());
  data.set("schemaVersion", store_schema_version());

  json::Value platform = json::Value::object();
  struct utsname names {};
  if (::uname(&names) == 0) {
    platform.set("os", std::string(names.sysname));
    platform.set("release", std::string(names.release));
    platform.set("machine", std::string(names.machine));
  }
  data.set("platform", std::move(platform));

  json::Value project = json::Value::object();
  const std::optional<fs::path> root =
      context.project ? std::optional<fs::path>(context.project->root) : std::nullopt;
  if (root)
    if (auto where = project_location(*root)) project.set("location", *where);
  if (context.store_error) project.set("store", scrub_paths(context.store_error->message, root));
  else project.set("store", context.store ? "ok" : "none");
  data.set("project", std::move(project));

  // Only keys changed from their defaults; sensitive ones say no more than that they are set.
  json::Value config = json::Value::object();
  const Config defaults;
  for (const auto& key : config_keys()) {
    const json::Value& value = context.config->get(key.name);
    if (value == defaults.get(key.name)) continue;
    config.set(key.name, key.sensitive ? json::Value("(set)") : value);
  }
  data.set("config", std::move(config));

  if (context.capabilities) {
    std::vector<std::string_view> needs;
    std::set<std::string_view> seen;
    if (context.registry)
      for (const auto& spec : context.registry->operations())
        for (auto need : spec.needs)
          if (seen.insert(need).second) needs.push_back(need);
    const fs::path where = root ? *root : fs::current_path();
    json::Value probes = context.capabilities->probes(needs, where, *context.config);
    json::Value summary = json::Value::array();
    if (probes.is_array())
      for (const auto& probe : probes.as_array()) {
        json::Value item = json::Value::object();
        item.set("need", probe["need"]);
        item.set("available", probe["available"]);
        if (probe["reason"].is_string()) item.set("reason", scrub_paths(probe["reason"].as_string(), root));
        summary.push_back(std::move(item));
      }
    data.set("capabilities", std::move(summary));
  }

  // Failed mutations leave an audit row whose outcome is the error code (queries are not audited);
  // only the code, the operation and the time are reported — params may hold anything.
  json::Value errors = json::Value::array();
  if (context.store) {
    AuditQuery query;
    query.limit = kAuditRowsScanned;
    CT_TRY_ASSIGN(std::vector<AuditEntry> rows, context.store->read_audit(query));
    for (const auto& row : rows) {
      if (std::ssize(errors.as_array()) >= kRecentErrors) break;
      if (row.outcome == "ok" || row.outcome.empty() || success_note(row.outcome)) continue;
      json::Value item = json::Value::object();
      item.set("at", format_iso8601(row.at));
      item.set("operation", row.operation);
      item.set("code", row.outcome);
      errors.push_back(std::move(item));
    }
  }
  data.set("recentErrors", std::move(errors));
  return data;
}

std::string diagnostics_markdown(const json::Value& d) {
  std::string out = "## Diagnostics\n\n";
  out += "- ct " + d["version"].as_string() + " (schema " + d["schemaVersion"].dump() + ")\n";
  const json::Value& p = d["platform"];
  if (p["os"].is_string())
    out += "- platform: " + p["os"].as_string() + " " + p["release"].as_string() + " " + p["machine"].as_string() + "\n";
  out += "- store: " + d["project"]["store"].as_string() + "\n";
  if (!d["config"].as_object().empty()) {
    out += "- config (changed from defaults):";
    for (const auto& [key, value] : d["config"].as_object()) out += " " + key + "=" + value.dump();
    out += "\n";
  }
  if (d["capabilities"].is_array()) {
    std::string missing;
    for (const auto& c : d["capabilities"].as_array())
      if (c["available"] != json::Value(true)) missing += (missing.empty() ? "" : ", ") + c["need"].as_string();
    out += "- unavailable capabilities: " + (missing.empty() ? std::string("none") : missing) + "\n";
  }
  if (!d["recentErrors"].as_array().empty()) {
    out += "- recent errors:\n";
    for (const auto& e : d["recentErrors"].as_array())
      out += "  - " + e["at"].as_string() + " " + e["operation"].as_string() + " " + e["code"].as_string() + "\n";
  }
  return out;
}

Result<Reply> diagnostics(Context& context, const NoArgs&) {
  CT_TRY_ASSIGN(json::Value data, diagnostics_json(context));
  return Reply::of(std::move(data));
}

struct TemplatesArgs {
  std::optional<std::string> type;
};

Result<Reply> templates(Context&, const TemplatesArgs& args) {
  if (args.type) return Reply::of(template_json(find_template(*args.type)));
  json::Value all = json::Value::array();
  for (const auto& t : kTemplates) all.push_back(template_json(t));
  return Reply::of(std::move(all));
}

// -- create --------------------------------------------------------------------------------------

/// gh's own credentials and settings reach gh (and only gh): without them an authenticated gh
/// would look logged out.
std::vector<std::string> gh_environment() {
  return minimal_environment({"GH_TOKEN", "GITHUB_TOKEN", "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN", "GH_HOST",
                              "GH_CONFIG_DIR", "XDG_CONFIG_HOME"});
}

/// The reply when the issue was not filed: the report, the command and why.
Reply not_filed(json::Value data, std::string why) {
  data.set("filed", false);
  return Reply::warned(std::move(data), {std::move(why)});
}

struct CreateArgs {
  std::string type;
  std::string title;
  std::string body;
  std::optional<std::string> repo;
  bool diagnostics = true;
  bool dry_run = false;
};

/// The issue's body: the report as the caller wrote it, and the diagnostics unless left out.
Result<std::string> issue_body(Context& context, const CreateArgs& args) {
  std::string report = args.body;
  while (!report.empty() && (report.back() == '\n' || report.back() == ' ')) report.pop_back();
  if (args.diagnostics) {
    CT_TRY_ASSIGN(json::Value diag, diagnostics_json(context));
    report += "\n\n" + diagnostics_markdown(diag);
  } else {
    report += "\n";
  }
  return report;
}

/// `gh issue create` for the report, in the repository named or the one gh finds.
std::vector<std::string> create_command(const CreateArgs& args, const Template& kind, const std::string& report) {
  std::vector<std::string> argv = {"gh", "issue", "create", "--title", args.title, "--label", std::string(kind.label),
                                   "--body", report};
  if (args.repo) {
    argv.emplace_back("--repo");
    argv.push_back(*args.repo);
  }
  return argv;
}

/// `argv` run as gh is: in the project (or the working folder), with gh's environment, under
/// issues.ghTimeoutSeconds.
ProcessSpec gh_process(Context& context, std::vector<std::string> argv) {
  ProcessSpec spec;
  spec.argv = std::move(argv);
  spec.env = gh_environment();
  spec.timeout = std::chrono::seconds(context.config->get_int("issues.ghTimeoutSeconds"));
  spec.cwd = context.project ? context.project->root : fs::current_path();
  return spec;
}

/// Why gh cannot file the issue — it is not on PATH, or not authenticated (`auth`: gh auth
/// status) — or none when it can; E_TIMEOUT when gh auth status overruns.
Result<std::optional<std::string>> gh_unready(Context& context, const ProcessSpec& auth) {
  if (!find_program("gh", auth.env))
    return std::optional<std::string>("not filed: gh (the GitHub CLI) is not on PATH; install it and run `gh auth "
                                      "login`, or run the command in commandText yourself");
  CT_TRY_ASSIGN(ProcessResult status, run_process(auth));
  if (status.timed_out) return fail(process_error(auth, status, "issues.create"));
  if (status.ok()) return std::optional<std::string>();
  std::string said = status.err_tail(200);
  if (said.empty()) said = status.out.substr(0, 200);
  return std::optional<std::string>(
      "not filed: gh is not authenticated (gh auth status: " +
      scrub_paths(said, context.project ? std::optional(context.project->root) : std::nullopt) +
      "); run `gh auth login`, then the command in commandText");
}

/// gh issue create's failure, with what to do and the command to run by hand.
Error create_failed(const ProcessSpec& create, const ProcessResult& filed) {
  Error error = process_error(create, filed, "issues.create");
  error.fix = error.code == ErrorCode::Timeout
                  ? "retry; or run the command in error.details.commandText yourself"
                  : "see error.details.stderr for what gh said (a wrong --repo, a missing label, no network); "
                    "or run the command in error.details.commandText yourself";
  error.details.set("commandText", join_command(create.argv));
  return error;
}

/// The issue's URL in what gh issue create printed (its last http(s) line), or "".
std::string issue_url(std::string_view printed) {
  std::string url;
  for (std::string_view rest = printed; !rest.empty();) {
    auto newline = rest.find('\n');
    std::string_view line = trim(rest.substr(0, newline));
    if (line.starts_with("https://") || line.starts_with("http://")) url = std::string(line);
    if (newline == std::string_view::npos) break;
    rest.remove_prefix(newline + 1);
  }
  return url;
}

/// issues.create's external step: the report rendered and, unless a dry run, filed through gh.
Result<Reply> create_external(Context& context, const CreateArgs& args) {
  const Template& kind = find_template(args.type);
  CT_TRY_ASSIGN(const std::string report, issue_body(context, args));
  const std::vector<std::string> argv = create_command(args, kind, report);
  json::Value data = json::Value::object();
  data.set("type", kind.type);
  data.set("title", args.title);
  data.set("label", kind.label);
  data.set("body", report);
  data.set("command", json::Value::array_of(argv));
  data.set("commandText", join_command(argv));
  if (args.dry_run) {
    data.set("dryRun", true);
    data.set("filed", false);
    return Reply::of(std::move(data));
  }
  const ProcessSpec auth = gh_process(context, {"gh", "auth", "status"});
  CT_TRY_ASSIGN(std::optional<std::string> unready, gh_unready(context, auth));
  if (unready) return not_filed(std::move(data), std::move(*unready));
  const ProcessSpec create = gh_process(context, argv);
  CT_TRY_ASSIGN(ProcessResult filed, run_process(create));
  if (!filed.ok()) return fail(create_failed(create, filed));
  const std::string url = issue_url(filed.out);
  data.set("filed", true);
  data.erase("commandText");
  if (!url.empty()) data.set("url", url);
  std::vector<std::string> warnings;
  if (url.empty()) warnings.push_back("gh reported success but printed no issue URL: check the repository's issues");
  return Reply::warned(std::move(data), std::move(warnings));
}

Result<Reply> create(Context& context, const CreateArgs&) {
  if (!context.external) return fail(ErrorCode::Internal, "issues.create: the external step did not run");
  Reply reply = std::move(*context.external);
  if (reply.data["filed"] == json::Value(true))
    context.record(FieldChange{"", "issue", json::Value(), reply.data["url"].is_string() ? reply.data["url"] : json::Value(true)});
  // The report is long and the caller wrote most of it: a filed issue answers with its URL only.
  if (reply.data["filed"] == json::Value(true)) {
    reply.data.erase("body");
    reply.data.erase("command");
  }
  return reply;
}

}  // namespace

void register_issues_domain(Registry& registry) {
  registry.add({.domain = "issues", .name = "diagnostics", .gateway = Gateway::Query,
                .summary = "Collect what a bug report about ct needs, with nothing private",
                .returns = "{version, schemaVersion, platform{os, release, machine}, project{location?, store}, "
                           "config{key: value changed from its default; sensitive keys '(set)'}, "
                           "capabilities?[{need, available, reason?}], recentErrors[{at, operation, code}]}; no "
                           "secrets, no paths outside the project ($HOME shown as ~)",
                .examples = {{R"({})", "what to paste into a bug report"}},
                .engine = EngineKind::Native, .idempotent = true, .runs_on_damaged_store = true, .tier = 2,
                .handler = no_args(diagnostics)});
  const auto templates_args = bind(field(&TemplatesArgs::type, {.name = "type", .type = ParamType::Enum,
                                                                 .choices = {"bug", "feature", "help"},
                                                                 .description = "Only this template", .positional = true}));
  registry.add({.domain = "issues", .name = "templates", .gateway = Gateway::Query,
                .summary = "Show the Markdown skeletons of bug, feature and help reports",
                .params = templates_args.specs(),
                .returns = "[{type, label, body}], or one {type, label, body} with type",
                .examples = {{R"({})", "every template"}, {R"({"type":"bug"})", "the bug report skeleton"}},
                .idempotent = true, .needs_project = false, .tier = 2, .handler = templates_args.handler(templates)});
  const auto create_args = bind(
      field(&CreateArgs::type, {.name = "type", .type = ParamType::Enum, .required = true,
                                .choices = {"bug", "feature", "help"}, .description = "Kind of report (sets the label)"}),
      field(&CreateArgs::title, {.name = "title", .type = ParamType::String, .required = true, .min = 3, .max = 200,
                                 .description = "Issue title", .single_line = true}),
      field(&CreateArgs::body, {.name = "body", .type = ParamType::String, .required = true, .min = 1, .max = 20000,
                                .description = "The report in Markdown (issues.templates has skeletons)"}),
      field(&CreateArgs::repo, {.name = "repo", .type = ParamType::String, .max = 200,
                                .pattern = "^([A-Za-z0-9.-]+/)?[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$",
                                .description = "OWNER/REPO (or HOST/OWNER/REPO); default: gh's repository for the "
                                               "project directory"}),
      field(&CreateArgs::diagnostics, {.name = "diagnostics", .type = ParamType::Bool, .default_json = "true",
                                       .description = "Append issues.diagnostics to the report"}),
      field(&CreateArgs::dry_run, {.name = "dryRun", .type = ParamType::Bool,
                                   .description = "Render the report and the command; run nothing", .dry_run = true}));
  registry.add({.domain = "issues", .name = "create", .gateway = Gateway::Mutate,
                .summary = "File a bug, feature or help report with diagnostics through gh",
                .params = create_args.specs(),
                .returns = "{filed, type, title, label, url? (filed), body, command[argv], commandText, dryRun?}: "
                           "filed through `gh issue create` when gh is on PATH and `gh auth status` succeeds; "
                           "otherwise filed:false with a warning saying why, and the exact command to run",
                .errors = {ErrorCode::EngineFailed, ErrorCode::Timeout},
                .examples = {{R"({"type":"bug","title":"tasks.next skips blocked parents","body":"## What happened\n\nct next returned nothing.","dryRun":true})",
                              "preview a bug report and the gh command"},
                             {R"({"type":"feature","title":"Export to CSV","body":"## The proposal\n\ntasks.export as CSV.","repo":"owner/repo","diagnostics":false,"dryRun":true})",
                              "preview a feature request for another repository"}},
                .engine = EngineKind::Hybrid, .tier = 2, .external = create_args.handler(create_external),
                .handler = create_args.handler(create)});
}

}  // namespace ct
