#include "cli/man.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <array>
#include <cstdio>
#include <map>
#include <memory>

#include "cli/command_tree.h"
#include "cli/servers.h"
#include "core/error.h"
#include "core/json_parse.h"
#include "core/text.h"
#include "disclosure/cli_syntax.h"

namespace ct::cli {
namespace {

constexpr std::string_view kGenerated =
    ".\\\" Generated from the operation registry by ct-docs (cmake --build <build dir> --target docs).\n"
    ".\\\" Do not edit by hand: change the registry or cli/man.cpp, then regenerate.\n";

constexpr std::array<EnvironmentVariable, 16> kEnvironment = {{
    {"CLEO_ROOT", "The project directory, when --project is not given (else the nearest directory above the "
                  "current one that holds .cleo/)."},
    {"CLEO_FORMAT", "json: print the exact JSON envelope, as --json does."},
    {"CLEO_READ_ONLY", "1, true or yes: refuse every change, as --read-only does (ct, ct mcp and ct serve)."},
    {"CLEO_SESSION", "The session a command works in, when --session is not given (ct session start prints the "
                     "export line)."},
    {"CLEO_TERMINAL", "A name for this terminal's session binding (harnesses and tests); by default the "
                      "controlling terminal, else the POSIX session."},
    {"CLEO_DATABASE_URL", "A PostgreSQL URL (postgresql://…) for the project's store; it wins over storage.url in "
                          ".cleo/config.json. Keep the password in ~/.pgpass or PGPASSWORD, never in the URL."},
    {"CLEO_DATABASE_SCHEMA", "The PostgreSQL schema that holds the project (default cleo); wins over "
                             "storage.schema."},
    {"PGPASSWORD", "Read by libpq (with ~/.pgpass and the other PG* variables) when the store is on PostgreSQL."},
    {"CLEO_SERVE_TOKEN", "The bearer token ct serve requires, when --token is not given."},
    {"CLEO_HOME", "Where global templates live (default ~/.cleo)."},
    {"HOME", "The user's own files: skills in ~/.cleo/skills, agent hosts' configuration (ct providers), "
             "instruction files written with ct inject --global."},
    {"VISUAL", "The editor ct edit opens (else EDITOR, else vi)."},
    {"EDITOR", "The editor ct edit opens when VISUAL is not set."},
    {"NO_COLOR", "Set: no colour, even on a terminal."},
    {"FORCE_COLOR", "Set: colour even when the output is not a terminal."},
    {"PATH", "Where programs that operations need are found (git, gh, a configured test command, agent hosts); "
             "ct capabilities lists what is missing."},
}};

constexpr std::array<ProjectFile, 13> kFiles = {{
    {".cleo/tasks.db", "The project's store (SQLite), unless storage.url names a PostgreSQL server."},
    {".cleo/config.json", "The project's configuration (ct config get, ct config set)."},
    {".cleo/backups/", "Verified backups (ct backup, and before every schema upgrade); ct restore brings the newest "
                       "good one back."},
    {".cleo/backups/safety/", "Copies taken before a restore or an upgrade replaces the store."},
    {".cleo/damaged/", "A store ct restore found damaged, set aside (never deleted)."},
    {".cleo/bindings/", "The session each terminal works in (one small file per terminal)."},
    {".cleo/skills/", "The project's skills (markdown with front matter); ~/.cleo/skills/ holds the user's."},
    {".cleo/templates/", "The project's own instruction templates (ct inject); $CLEO_HOME/templates/ the "
                         "user's."},
    {".cleo/agent-outputs/MANIFEST.jsonl", "Subagents' research results, read by ct research sync "
                                           "(research.manifestFile)."},
    {"AGENTS.md, CLAUDE.md, GEMINI.md", "Instruction files that hold CLEO's block for agents (ct inject)."},
    {"CHANGELOG.md", "Written by ct release changelog --write and ct release ship."},
    {"/usr/lib/cleo/libct_postgres.so", "The PostgreSQL store's module (with libpq), loaded only when a store "
                                        "names a server; beside ct in a build tree."},
    {"/usr/bin/ct-serve", "The HTTP server program ct serve runs (beside ct)."},
}};

/// A name in bold (a command word, an option), escaped.
std::string bold(std::string_view text) { return "\\fB" + roff_text(text) + "\\fR"; }
std::string italic(std::string_view text) { return "\\fI" + roff_text(text) + "\\fR"; }

std::string header(std::string_view name) {
  std::string upper;
  for (char c : name) upper += static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  return std::string(kGenerated) + ".TH " + roff_text(upper) + " 1 \"\" \"CLEO\" \"CLEO Manual\"\n.nh\n.ad l\n";
}

/// A paragraph of text; each line of `text` starts a new line of output.
std::string paragraph(std::string_view text) {
  std::string out = ".PP\n";
  bool first = true;
  for (auto line : split_lines(text)) {
    if (!first) out += ".br\n";
    out += roff_text(line) + "\n";
    first = false;
  }
  return out;
}

/// One tagged entry: the tag in its own formatting, the text under it.
std::string tagged(const std::string& tag, std::string_view text) {
  return ".TP\n" + tag + "\n" + roff_text(text) + "\n";
}

/// An option of a CLI11 command: its spellings in bold, its value's kind in italics.
std::string option_tag(const CLI::Option& option) {
  std::string tag;
  auto names = split_list(option.get_name(false, true));
  for (const auto& name : names) tag += (tag.empty() ? "" : ", ") + bold(name);
  const std::string type = option.get_type_name();
  if (option.get_items_expected() != 0 && !type.empty()) tag += " " + italic(type);
  return tag;
}

/// Every option of `command` but --help, as tagged paragraphs.
std::string options_of(const CLI::App& command) {
  std::string out;
  for (const CLI::Option* option : command.get_options()) {
    if (option == command.get_help_ptr() || !option->nonpositional()) continue;
    out += tagged(option_tag(*option), option->get_description());
  }
  return out;
}

/// The positionals of `command` as a usage line shows them: [title] [id].
std::string positionals_of(const CLI::App& command) {
  std::string out;
  for (const CLI::Option* option : command.get_options())
    if (option->get_positional()) out += " [" + italic(option->get_name(true, false)) + "]";
  return out;
}

/// The first subcommand of `app` (the command trees built here name one command each).
const CLI::App* only_subcommand(const CLI::App& app) {
  auto subcommands = app.get_subcommands([](const CLI::App*) { return true; });
  return subcommands.empty() ? nullptr : subcommands.front();
}

/// Sections of ct(1) from the root of the command tree: each group of commands as `ct --help`
/// lists them, under its own heading.
std::string command_groups(const CLI::App& root, const std::vector<std::string>& skip) {
  std::vector<std::string> groups;
  std::map<std::string, std::string> entries;
  for (const CLI::App* command : root.get_subcommands([](const CLI::App*) { return true; })) {
    const std::string group = command->get_group();
    if (std::find(skip.begin(), skip.end(), group) != skip.end()) continue;
    if (std::find(groups.begin(), groups.end(), group) == groups.end()) groups.push_back(group);
    entries[group] += tagged(bold("ct " + command->get_name()), command->get_description());
  }
  std::string out;
  for (const auto& group : groups) {
    // The daily commands need no heading of their own under COMMANDS; the other groups do.
    if (group != "Commands") out += ".SS \"" + roff_text(group) + "\"\n";
    out += entries[group];
  }
  return out;
}

std::string exit_status() {
  std::string out = ".SH \"EXIT STATUS\"\n";
  out += tagged(bold("0"), "Success.");
  std::map<int, std::vector<const ErrorInfo*>> by_exit;
  for (const auto& info : error_table()) by_exit[info.exit_code].push_back(&info);
  for (const auto& [code, infos] : by_exit) {
    std::string text;
    for (const auto* info : infos)
      text += (text.empty() ? "" : "; ") + std::string(info->name) + " (" + std::string(info->summary) +
              (info->retryable ? ", retryable" : "") + ")";
    if (is_success_note(infos.front()->code)) text = "Success with a note: " + text;
    out += tagged(bold(std::to_string(code)), text + ".");
  }
  return out;
}

std::string ct_page(const Registry& registry) {
  CommandTree tree(registry, Route{});
  const CLI::App& root = tree.app();
  std::string out = header("ct");
  out += ".SH NAME\nct, cleo \\- CLEO task management for people and AI coding agents\n";
  out += ".SH SYNOPSIS\n";
  out += bold("ct") + " " + italic("command") + " [" + italic("arguments") + "] [" + italic("options") + "]\n.br\n";
  out += bold("ct") + " " + italic("domain") + " " + italic("operation") + " [" + bold("--param") + " " +
         italic("value") + " ...]\n.br\n";
  out += bold("ct mcp") + " | " + bold("ct serve") + " [" + italic("options") + "]\n";
  out += ".SH DESCRIPTION\n";
  // `ct --help`'s description, after its first line (which the NAME line says).
  const std::string description = root.get_description();
  if (auto newline = description.find('\n'); newline != std::string::npos)
    out += paragraph(description.substr(newline + 1));
  out += paragraph(
      "Each operation of the registry is reachable as ct <domain> <operation>; the daily ones also as a "
      "command of their own (ct add is ct tasks add). An operation's params are its kebab-case flags "
      "(ifVersion is --if-version), and its positional params may come first without their flag; lists take "
      "repeated flags or commas, JSON objects take JSON text, @file or - (stdin). ct <command> --help shows "
      "one command; ct help shows what agents are told (help levels 0 to 3). Each domain's operations are "
      "described in ct-<domain>(1).");
  out += paragraph(
      "Output is text for people, or the exact JSON envelope with --json. The project is found like git finds "
      "a repository: the nearest directory above the current one that holds .cleo/ (or --project, or "
      "CLEO_ROOT). cleo is another name for ct.");
  out += ".SH COMMANDS\n";
  out += command_groups(root, {"Domains (ct <domain> <operation>)", "MCP servers", "Global options"});
  out += ".SH DOMAINS\n";
  for (const auto& domain : registry.domains())
    out += tagged(bold("ct " + domain) + " " + italic("operation"),
                  "See ct-" + domain + "(1). " + std::to_string(registry.operation_names(domain).size()) +
                      " operations: " + join(registry.operation_names(domain), ", ") + ".");
  out += ".SH \"MCP SERVERS\"\n";
  for (const auto& server : server_commands()) {
    out += ".SS \"" + roff_text("ct " + std::string(server.name)) + "\"\n";
    visit_server_command(server.name, [&](const CLI::App& command) {
      out += paragraph(command.get_description());
      out += options_of(command);
    });
  }
  out += ".SH \"GLOBAL OPTIONS\"\n";
  out += paragraph("Accepted by every command, before or after it.");
  for (const CLI::Option* option : root.get_options()) {
    if (option->get_group() != "Global options" || !option->nonpositional()) continue;
    out += tagged(option_tag(*option), option->get_description());
  }
  out += exit_status();
  out += paragraph(
      "A failed check (ct validate, ct doctor) exits 6 and still prints its report; with --json, "
      "error.details holds it.");
  out += ".SH ENVIRONMENT\n";
  for (const auto& variable : kEnvironment) out += tagged(bold(variable.name), variable.meaning);
  out += ".SH FILES\n";
  for (const auto& file : kFiles) out += tagged(italic(file.path), file.meaning);
  out += ".SH \"SEE ALSO\"\n";
  std::string see;
  for (const auto& domain : registry.domains()) see += (see.empty() ? "" : ",\n") + bold("ct-" + domain) + "(1)";
  out += see + "\n";
  return out;
}

/// How an operation is reached besides ct <domain> <operation>: its shortcut, aliases and views.
std::string also_reached(const OperationSpec& spec) {
  std::vector<std::string> ways;
  if (!spec.shortcut.empty()) {
    ways.push_back("ct " + std::string(spec.shortcut));
    for (auto alias : spec.shortcut_aliases) ways.push_back("ct " + std::string(alias));
  }
  for (const auto& view : spec.views)
    ways.push_back("ct " + std::string(view.word) + " (" + std::string(view.summary) + ")");
  return ways.empty() ? "" : "Also: " + join(ways, ", ") + ".";
}

std::string operation_section(const Registry& registry, const OperationSpec& spec) {
  Route route;
  route.words = {std::string(spec.domain), std::string(spec.name)};
  route.spec = &spec;
  CommandTree tree(registry, route);
  const CLI::App* domain = only_subcommand(tree.app());
  const CLI::App* leaf = domain ? only_subcommand(*domain) : nullptr;
  std::string out = ".SS \"" + roff_text(spec.full_name()) + "\"\n";
  out += roff_text(std::string(spec.summary) + " (" + std::string(tool_name(spec.gateway)) + ")") + "\n";
  out += ".PP\n" + bold("ct " + std::string(spec.domain) + " " + std::string(spec.name)) +
         (leaf ? positionals_of(*leaf) : "") + " [" + italic("options") + "]\n";
  if (auto also = also_reached(spec); !also.empty()) out += ".br\n" + roff_text(also) + "\n";
  if (leaf) {
    std::string options = options_of(*leaf);
    if (!options.empty()) out += ".PP\nOptions:\n.RS\n" + options + ".RE\n";
  }
  if (!spec.returns.empty()) out += paragraph("Returns: " + std::string(spec.returns));
  std::string examples;
  for (const auto& example : spec.examples) {
    auto params = json::parse(example.params_json);
    if (!params) continue;
    if (!example.description.empty()) examples += roff_text("# " + std::string(example.description)) + "\n";
    examples += roff_text(disclosure::command_line(spec, *params)) + "\n";
  }
  if (!examples.empty()) out += ".PP\nExamples:\n.RS\n.nf\n" + examples + ".fi\n.RE\n";
  if (!spec.errors.empty()) {
    std::string errors;
    for (auto code : spec.errors)
      errors += (errors.empty() ? "" : ", ") + std::string(to_string(code)) + " (exit " +
                std::to_string(exit_code(code)) + ")";
    out += paragraph("Errors: " + errors + ".");
  }
  std::vector<std::string> traits;
  if (spec.idempotent) traits.emplace_back("idempotent");
  if (spec.destructive) traits.emplace_back("destructive");
  if (spec.needs_session) traits.emplace_back("checked against the session");
  if (!spec.needs_project) traits.emplace_back("works without a project");
  std::string mcp = "Over MCP: " + std::string(tool_name(spec.gateway)) + " {domain:'" + std::string(spec.domain) +
                    "', operation:'" + std::string(spec.name) + "', params:{...}}";
  if (!traits.empty()) mcp += "; " + join(traits, ", ");
  out += paragraph(mcp + ".");
  return out;
}

std::string domain_page(const Registry& registry, const std::string& domain) {
  const std::vector<std::string> names = registry.operation_names(domain);
  std::string out = header("ct-" + domain);
  out += ".SH NAME\n" + roff_text("ct-" + domain) + " \\- " + roff_text("the " + domain + " operations of ct (CLEO)") +
         "\n";
  out += ".SH SYNOPSIS\n" + bold("ct " + domain) + " " + italic("operation") + " [" + italic("options") + "]\n";
  out += ".SH DESCRIPTION\n";
  out += paragraph("The " + std::to_string(names.size()) + " operations of the " + domain + " domain (" +
                   join(names, ", ") + "), as ct runs them. Each is also one call of an MCP tool (cleo_query "
                   "reads, cleo_mutate changes) with {domain:'" + domain + "', operation, params}: its options are "
                   "the params as kebab-case flags. The global options of ct(1) (--json, --project, --reason, "
                   "--session ...) apply to each.");
  out += ".SH OPERATIONS\n";
  for (const auto& spec : registry.operations())
    if (spec.domain == domain) out += operation_section(registry, spec);
  out += ".SH \"SEE ALSO\"\n" + bold("ct") + "(1)\n";
  return out;
}

}  // namespace

std::span<const EnvironmentVariable> environment_variables() { return kEnvironment; }

std::span<const ProjectFile> project_files() { return kFiles; }

std::string roff_text(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool line_start = true;
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    line_start = c == '\n';
    if (static_cast<unsigned char>(c) >= 0x80) {
      bool valid = true;
      char32_t code = next_code_point(text, i, &valid);
      if (!valid) {
        // A broken sequence is one U+FFFD, its continuation bytes with it.
        while (i < text.size() && (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) ++i;
        code = U'\uFFFD';
      }
      char escaped[16];
      std::snprintf(escaped, sizeof escaped, "\\[u%04X]", static_cast<unsigned>(code));
      out += escaped;
      continue;
    }
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else {
      out += c;
    }
    ++i;
    // Lists and patterns written without spaces (one|two|three, {id,title,status}, a regular
    // expression) may break after a separator that more text follows, instead of running past
    // the line.
    if ((c == '|' || c == ',' || c == ')' || c == ']') && i < text.size() &&
        std::string_view(" \n,.;:)]").find(text[i]) == std::string_view::npos)
      out += "\\:";
  }
  return out;
}

std::vector<ManPage> man_pages(const Registry& registry) {
  std::vector<ManPage> pages;
  pages.push_back({"ct.1", ct_page(registry)});
  for (const auto& domain : registry.domains()) pages.push_back({"ct-" + domain + ".1", domain_page(registry, domain)});
  return pages;
}

}  // namespace ct::cli
