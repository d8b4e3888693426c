// `ct` end to end: route argv, parse it with the generated command tree, dispatch through the
// router, and print either the human rendering or the exact envelope.
#include "cli/cli.h"

#include <fcntl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "capability/plugins.h"
#include "capability/probes.h"
#include "cli/args.h"
#include "cli/command_tree.h"
#include "cli/completion.h"
#include "cli/edit.h"
#include "cli/person.h"
#include "cli/progress_line.h"
#include "cli/hook_briefing.h"
#include "cli/usage.h"
#include "cli/render.h"
#include "cli/servers.h"
#include "core/atomic_file.h"
#include "core/clock.h"
#include "core/json_parse.h"
#include "core/text.h"
#include "core/version.h"
#include "gateway/product.h"
#include "disclosure/suggest.h"
#include "domains/original_names.h"
#include "domains/providers/providers.h"
#include "domains/registry.h"
#include "domains/router.h"
#include "engines/adapters/subprocess.h"

namespace ct::cli {
namespace {

bool env_is(const char* name, std::initializer_list<std::string_view> values) {
  const char* value = std::getenv(name);
  if (!value) return false;
  for (auto candidate : values)
    if (candidate == value) return true;
  return false;
}

/// What is read from argv before CLI11 parses it, in one pass: the project (the registry it is
/// parsed against holds the project's plug-in engines) and --json (to report routing errors).
struct EarlyOptions {
  std::optional<std::filesystem::path> project;  // --project DIR
  bool json = false;                             // --json, or CLEO_FORMAT=json
};

EarlyOptions early_options(const std::vector<std::string>& args) {
  EarlyOptions early;
  early.json = env_is("CLEO_FORMAT", {"json", "JSON"});
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--") break;
    if (args[i] == "--json") early.json = true;
    if (args[i] == "--project" && i + 1 < args.size()) {
      if (!early.project) early.project = args[i + 1];
    } else if (args[i].starts_with("--project=") && !early.project) {
      early.project = args[i].substr(10);
    }
  }
  return early;
}

/// Where the command word is: the first argument that is neither a global option nor its value
/// (args.size() when there is none).
std::size_t command_word(const std::vector<std::string>& args) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--") break;
    if (args[i].size() > 1 && args[i].front() == '-') {
      if (global_takes_value(args[i])) ++i;
      continue;
    }
    return i;
  }
  return args.size();
}

/// --intent: a category alone, or the whole intent as JSON (the router checks either).
json::Value intent_value(const std::string& text) {
  if (text.starts_with("{"))
    if (auto parsed = json::parse(text)) return std::move(*parsed);
  json::Value intent = json::Value::object();
  intent.set("category", text);
  return intent;
}

void write(std::FILE* stream, const std::string& text) {
  if (!text.empty()) std::fwrite(text.data(), 1, text.size(), stream);
}

struct Output {
  bool json = false;
  RenderOptions render;
};

/// Stored text and echoed input reach a terminal only through terminal_safe(): a title holding
/// ESC or BEL must not drive the viewer's terminal. (JSON output escapes them anyway.)
Error printable(Error error) {
  error.message = terminal_safe(error.message);
  error.fix.map_text([](const std::string& text) { return terminal_safe(text); });
  for (auto& alternative : error.alternatives) alternative.action = terminal_safe(alternative.action);
  make_terminal_safe(error.details);
  return error;
}

Envelope printable(Envelope envelope) {
  make_terminal_safe(envelope.data);
  for (auto& warning : envelope.warnings) warning.map_text([](const std::string& text) { return terminal_safe(text); });
  if (envelope.error) envelope.error = printable(std::move(*envelope.error));
  return envelope;
}

int report_failure(const Error& error, const Output& output) {
  if (output.json) {
    write(stdout, to_json(failure(error), PeopleAdvice(registry())) + "\n");
  } else {
    write(stderr, render_error(printable(error), output.render.err, registry()));
  }
  return error.exit_code();
}

int print_version(const Output& output) {
  if (output.json) {
    Envelope envelope;
    json::Value data = json::Value::object();
    data.set("version", product_version());
    envelope.data = std::move(data);
    write(stdout, to_json(envelope, PeopleAdvice(registry())) + "\n");
  } else {
    write(stdout, "ct " + std::string(product_version()) + "\n");
  }
  return 0;
}

// ---- session binding -------------------------------------------------------------------------
//
// `ct session start` binds the session to the terminal it ran in (or, without a terminal, to the
// POSIX session of the process: an agent and the commands it runs): later commands from there
// work in it. Two agents in two terminals each keep their own. The binding is a file per
// terminal in .cleo/bindings/; CLEO_SESSION (printed by session start, for `export`) and
// --session override it.

/// CLEO_TERMINAL when set (a harness naming its agents; tests), else "tty-<device>" for the
/// controlling terminal (agents launched from a terminal share it, even with pipes for stdin and
/// stdout), else "sid-<session id>".
std::string binding_key() {
  if (const char* named = std::getenv("CLEO_TERMINAL"); named && *named) {
    std::string key = "name-";
    for (const char* c = named; *c && key.size() < 69; ++c)
      key += std::isalnum(static_cast<unsigned char>(*c)) || *c == '-' || *c == '_' ? *c : '_';
    return key;
  }
  std::ifstream stat("/proc/self/stat");
  std::string line;
  std::getline(stat, line);
  // Fields after the command name (which may hold spaces): state ppid pgrp session tty_nr …
  if (auto close = line.rfind(')'); close != std::string::npos) {
    std::istringstream fields(line.substr(close + 1));
    std::string state, ppid, pgrp, session, tty;
    if (fields >> state >> ppid >> pgrp >> session >> tty && tty != "0") return "tty-" + tty;
  }
  return "sid-" + std::to_string(::getsid(0));
}

std::optional<std::filesystem::path> bindings_dir(Workspace& workspace) {
  auto project = workspace.project();
  if (!project) return std::nullopt;
  return project->cleo_dir() / "bindings";
}

/// The session id in a binding file, "" when it is missing or not a session id. The file is
/// never followed through a symlink, and its content is never echoed unless it is a valid id.
std::string read_binding(const std::filesystem::path& file) {
  int fd = ::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return "";
  char buffer[64];
  ssize_t n = ::read(fd, buffer, sizeof buffer);
  ::close(fd);
  if (n <= 0) return "";
  std::string id(trim(std::string_view(buffer, static_cast<std::size_t>(n))));
  bool valid = id.size() > 4 && id.size() <= 40 && id.starts_with("ses_");
  for (std::size_t i = 4; valid && i < id.size(); ++i)
    valid = (id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f');
  return valid ? id : "";
}

struct Binding {
  std::string session;       // the session this command runs in ("" = none)
  std::string source;        // "--session", "CLEO_SESSION", "this terminal", ""
  std::vector<std::string> elsewhere;  // sessions bound to other terminals: never adopted here
};

/// The session a command runs in: --session, then CLEO_SESSION, then this terminal's binding
/// ("" = none; the router then adopts the project's only active session not bound elsewhere).
Binding resolve_session(const GlobalOptions& globals, Workspace& workspace) {
  Binding binding;
  if (!globals.session.empty()) return {globals.session, "--session", {}};
  if (const char* env = std::getenv("CLEO_SESSION"); env && *env) return {env, "CLEO_SESSION", {}};
  auto dir = bindings_dir(workspace);
  if (!dir) return binding;
  const std::string own = binding_key();
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(*dir, ec)) {
    std::string id = read_binding(entry.path());
    if (id.empty()) continue;
    if (entry.path().filename() == own) {
      binding.session = id;
      binding.source = "this terminal";
    } else {
      binding.elsewhere.push_back(id);
    }
  }
  return binding;
}

/// After a session operation: the binding it left is kept for this terminal (session.start and
/// resume bind, end, close and suspend unbind).
void remember_session(Workspace& workspace, const std::string& session) {
  auto dir = bindings_dir(workspace);
  if (!dir) return;
  const std::filesystem::path file = *dir / binding_key();
  std::error_code ec;
  if (session.empty()) {
    std::filesystem::remove(file, ec);
    return;
  }
  std::filesystem::create_directories(*dir, ec);
  (void)write_file_atomically(file, session + "\n");
}

bool is_session_error(ErrorCode code) {
  return code == ErrorCode::TaskNotInScope || code == ErrorCode::SessionRequired || code == ErrorCode::SessionNotFound ||
         code == ErrorCode::TaskClaimed || code == ErrorCode::ScopeConflict;
}

/// `ct completion SHELL`: the script to source (or install) for that shell.
int print_completion_script(const std::vector<std::string>& args, const Output& output) {
  if (args.size() == 2 && (args[1] == "--help" || args[1] == "-h")) {
    write(stdout, "Print the shell completion script for ct: commands, flags, enum values and task ids.\n\n"
                  "Usage: ct completion bash|zsh|fish\n"
                  "  bash:  source <(ct completion bash)          (or save it as ~/.local/share/bash-completion/completions/ct)\n"
                  "  zsh:   ct completion zsh > \"${fpath[1]}/_ct\"  (then compinit)\n"
                  "  fish:  ct completion fish > ~/.config/fish/completions/ct.fish\n"
                  "`cmake --install` puts all three where the shells look for them.\n");
    return 0;
  }
  if (args.size() != 2)
    return report_failure(Error(ErrorCode::InvalidInput, "ct completion takes one shell: bash, zsh or fish")
                              .with_fix("ct completion bash"),
                          output);
  auto script = completion_script(args[1]);
  if (!script) return report_failure(script.error(), output);
  write(stdout, *script);
  return 0;
}

/// `ct __complete WORD... CURRENT` (what the completion scripts run): one candidate per line.
/// Task ids come from the project's store when there is one; nothing is printed on any failure.
int print_completions(const Registry& operations, const std::shared_ptr<Workspace>& workspace,
                      std::vector<std::string> words) {
  words.erase(words.begin());
  if (!words.empty() && words.front() == "--") words.erase(words.begin());
  if (words.empty()) words.emplace_back();
  TaskIds task_ids = [&](std::string_view prefix) {
    RouterOptions options;
    options.budget_replies = false;
    Router router(operations, workspace, std::move(options), clock_from_environment());
    // What MCP's completion/complete offers for a task id (disclosure/suggest.h): the ids that
    // start with the word, or with none yet the open tasks, most recently changed first.
    return disclosure::suggest(router, {}, disclosure::ValueKind::TaskId, prefix, 100).values;
  };
  std::string out;
  for (const auto& candidate : complete(operations, words, task_ids)) out += candidate + "\n";
  write(stdout, out);
  return 0;
}

/// The router of one `ct` command: what was asked for, whole (who asks is the caller's principal).
RouterOptions person_options(const GlobalOptions& globals, bool json) {
  RouterOptions options;
  options.read_only = globals.read_only || env_is("CLEO_READ_ONLY", {"1", "true", "yes"});
  options.budget_replies = false;          // the agent reply budget never cuts what a person asked for
  options.drop_echoes = json;              // the text view shows the outcome whole
  options.capabilities = &capability::process_resolver();
  options.short_lived = true;              // one call, then the process exits
  return options;
}

/// The form with `error` on top (and no earlier error lines), for the editor's next round.
std::string with_error(const std::string& form, const Error& error) {
  std::string out = "# error: " + error.message + "\n";
  if (!error.fix.empty()) out += "# fix: " + advice_for_people(error.fix, registry()) + "\n";
  for (std::string_view line : split_lines(form))
    if (!line.starts_with("# error: ") && !line.starts_with("# fix: ")) out += std::string(line) + "\n";
  return out;
}

/// `ct edit ID`: the task as a form in $VISUAL or $EDITOR; saved, it is read back and applied as
/// one tasks.update with ifVersion (nobody else's change is overwritten). A form that does not read,
/// or an update the task's rules refuse, opens the editor again with the error on top (at a
/// terminal; a scripted editor gets one round); leaving the form as it was cancels.
/// A file only this user may read, for a task's text: mkstemps creates it 0600, under a name
/// nobody else holds (a rewrite keeps the mode).
Result<std::filesystem::path> private_edit_file(const std::string& task_id) {
  std::error_code ec;
  std::string name = (std::filesystem::temp_directory_path(ec) / ("ct-edit-" + task_id + "-XXXXXX.txt")).string();
  int fd = ::mkstemps(name.data(), 4);
  if (fd < 0)
    return fail(Error(ErrorCode::FileError, "cannot create " + name + ": " + std::strerror(errno))
                    .with_fix("set TMPDIR to a writable directory"));
  ::close(fd);
  return std::filesystem::path(name);
}

/// The person's editor ($VISUAL, $EDITOR, else vi) run on `file` with their environment and our
/// terminal, then what it left there. An editor that cannot start or fails changes nothing.
Result<std::string> run_editor(const std::filesystem::path& file, const std::vector<std::string>& env,
                               const std::string& task_id) {
  ProcessSpec editor;
  editor.argv = editor_command();
  editor.argv.push_back(file.string());
  editor.env = env;
  editor.attached = true;
  auto ran = run_process(editor);
  if (!ran) {
    Error error = std::move(ran.error());
    error.fix = "set VISUAL or EDITOR to your editor (e.g. export EDITOR=nano), then: ct edit " + task_id;
    return fail(std::move(error));
  }
  if (!ran->ok())
    return fail(Error(ErrorCode::EngineFailed, "the editor (" + editor.argv.front() + ") exited with " +
                                                   (ran->signal ? "signal " + std::to_string(ran->signal)
                                                                : "status " + std::to_string(ran->exit_code)) +
                                                   "; nothing was changed")
                    .with_fix("ct edit " + task_id));
  return InputSource::system().read_file(file.string());
}

/// The form left as it was: nothing to do.
int report_unchanged(const std::string& task_id, const Output& output) {
  Envelope unchanged;
  unchanged.note = ErrorCode::NoChange;
  unchanged.warnings.push_back(task_id + " was left as it was");
  if (output.json) {
    write(stdout, to_json(unchanged, PeopleAdvice(registry())) + "\n");
  } else {
    write(stdout, "No change: " + task_id + " was left as it was\n");
  }
  return unchanged.exit_code();
}

/// The update's envelope, as `ct tasks update` shows it.
int report_update(const Registry& operations, const json::Value& params, const Envelope& updated, const Output& output) {
  if (output.json) {
    write(stdout, to_json(updated, PeopleAdvice(registry())) + "\n");
  } else {
    const OperationSpec* spec = operations.find("tasks", "update");
    Rendered rendered = render_envelope(*spec, params, printable(updated), output.render, operations, "ct edit --help");
    write(stderr, rendered.err);
    write(stdout, rendered.out);
  }
  return updated.exit_code();
}

/// ct edit's own command line: the task id and the global options. An exit code when it asked for
/// help or could not be read.
std::optional<int> read_edit_args(const std::vector<std::string>& args, GlobalOptions& globals, std::string& id,
                                  const Output& output) {
  CLI::App app("Edit a task in $VISUAL or $EDITOR (else vi): the changes are one update, applied only if "
               "nobody changed the task meanwhile",
               "ct edit");
  add_globals(app, globals);
  app.add_option("id", id, "Task id, e.g. T005")->required();
  app.footer("Example: ct edit T005   (EDITOR=\"code --wait\" ct edit T005 for an editor with arguments)");
  try {
    app.parse(std::vector<std::string>(args.rbegin(), args.rend() - 1));
  } catch (const CLI::CallForHelp&) {
    write(stdout, app.help());
    return 0;
  } catch (const CLI::ParseError& error) {
    return report_failure(Error(ErrorCode::InvalidInput, error.what()).with_fix("ct edit --help"), output);
  }
  return std::nullopt;
}

int run_edit(const Registry& operations, const std::shared_ptr<Workspace>& workspace,
             const std::vector<std::string>& args, Output& output) {
  GlobalOptions globals;
  std::string id;
  if (auto done = read_edit_args(args, globals, id, output)) return *done;
  output.json = output.json || globals.json;
  auto who = cli_principal();
  if (!who) return report_failure(who.error(), output);
  Router router(operations, workspace, person_options(globals, output.json), clock_from_environment());
  const Caller caller{.principal = who->principal,
                      .place = process_place(),
                      .session = resolve_session(globals, *workspace).session,
                      .adopt_only_active_session = true};
  json::Value show = json::Value::object();
  show.set("id", id);
  show.set("detail", "full");
  Envelope shown = router.dispatch({Gateway::Query, "tasks", "show", show, caller});
  if (!shown.success) return report_failure(*shown.error, output);
  const std::string task_id = shown.data["id"].as_string();
  auto file = private_edit_file(task_id);
  if (!file) return report_failure(file.error(), output);
  std::error_code ec;
  auto remove_file = [&] { std::filesystem::remove(*file, ec); };
  std::string presented = edit_form(shown.data);
  std::optional<Error> last_error;
  std::vector<std::string> env;
  for (char** entry = environ; entry && *entry; ++entry) env.emplace_back(*entry);  // the person's own editor setup
  // Another round is for a person at a terminal; a scripted editor would repeat its mistake.
  const int rounds = ::isatty(STDIN_FILENO) ? 10 : 1;
  for (int round = 1;; ++round) {
    if (auto written = write_file_atomically(*file, presented); !written) return report_failure(written.error(), output);
    auto edited = run_editor(*file, env, task_id);
    if (!edited) {
      remove_file();
      return report_failure(edited.error(), output);
    }
    if (*edited == presented) {
      // Left as it was: after an error, that error stands; else nothing to do.
      remove_file();
      if (last_error) return report_failure(*last_error, output);
      return report_unchanged(task_id, output);
    }
    auto changes = edit_changes(shown.data, *edited);
    if (!changes && round < rounds) {
      last_error = changes.error();
      presented = with_error(*edited, *last_error);
      continue;
    }
    if (!changes) {
      remove_file();
      return report_failure(changes.error(), output);
    }
    json::Value params = *changes;
    if (params.empty()) {
      remove_file();
      write(stdout, output.json ? to_json(Envelope{.note = ErrorCode::NoChange}, PeopleAdvice(registry())) + "\n"
                                : "No change: " + task_id + " was left as it was\n");
      return exit_code(ErrorCode::NoChange);
    }
    params.set("id", task_id);
    params.set("ifVersion", shown.data["version"]);
    if (!globals.reason.empty()) params.set("reason", globals.reason);
    if (!globals.intent.empty()) params.set("intent", intent_value(globals.intent));
    Envelope updated = router.dispatch({Gateway::Mutate, "tasks", "update", params, caller});
    if (!updated.success && updated.error && round < rounds &&
        (updated.error->code == ErrorCode::InvalidParams || updated.error->code == ErrorCode::Validation)) {
      last_error = *updated.error;
      presented = with_error(*edited, *last_error);
      continue;
    }
    remove_file();
    return report_update(operations, params, updated, output);
  }
}

/// The params the global options add: the route's preset, meta, intent and (for a change) reason;
/// a query given --reason is warned that it keeps none.
void add_global_params(json::Value& params, const Route& route, const GlobalOptions& globals, const OperationSpec& spec,
                       const Output& output) {
  if (route.preset.is_object())
    for (const auto& [key, value] : route.preset.as_object())
      if (!params.contains(key)) params.set(key, value);
  if (globals.meta) params.set("meta", true);
  if (!globals.intent.empty() && spec.gateway == Gateway::Mutate && !params.contains("intent"))
    params.set("intent", intent_value(globals.intent));
  if (!globals.reason.empty()) {
    if (spec.gateway == Gateway::Mutate) {
      if (!params.contains("reason")) params.set("reason", globals.reason);
    } else {
      // Queries change nothing, so there is no audit row to keep the reason in.
      write(stderr, output.render.err.yellow("warning:") + " --reason is recorded only for changes; " +
                        spec.full_name() + " ignores it\n");
    }
  }
}

/// An agent host's session-start hook: the first of the hooks the host runs for this start briefs,
/// the others (a team's and a person's own, both installed) say nothing (cli/hook_briefing.h). True
/// for one of those others, after it said its nothing.
bool later_hook(const OperationSpec& spec, const json::Value& params, Workspace& workspace) {
  if (spec.text_view == TextView::Briefing && params["hook"].is_string())
    if (const providers::Provider* host = providers::find(params["hook"].as_string()); host && host->hook)
      if (auto firing = providers::hook_firing(*host, read_hook_input(STDIN_FILENO, std::chrono::seconds(2))))
        if (auto project = workspace.project(); project && !first_briefing(project->cleo_dir() / "hook-briefings",
                                                                           host->id, *firing)) {
          write(stdout, providers::hook_output(*host, ""));
          return true;
        }
  return false;
}

/// The reply as JSON (--json) or as text for people, with the warning an original CLEO name
/// gets and, when the call bound `bound` to this terminal, how to use it elsewhere.
int report_reply(const Registry& operations, const Route& route, const std::string& command, const json::Value& params,
                 Envelope& envelope, const std::string& bound, const Output& output) {
  const OperationSpec& spec = *route.spec;
  if (output.json) {
    // The original CLEO's name (`ct tasks depends`) ran ours: the reply names it, as over MCP.
    if (!route.original.empty()) envelope.warnings.push_back(original_names::operation_warning(route.original, spec));
    write(stdout, to_json(envelope, PeopleAdvice(registry())) + "\n");
  } else {
    Rendered rendered = render_envelope(spec, params, printable(envelope), output.render, operations, command + " --help");
    if (!route.original.empty())
      rendered.err += output.render.err.yellow("warning:") + " " + route.original + " is the original CLEO's name of " +
                      spec.full_name() + "; its command is " + command_prefix(spec) + "\n";
    if (!bound.empty())
      rendered.out += "Bound to this terminal. For another shell or agent: export CLEO_SESSION=" + bound + "\n";
    write(stderr, rendered.err);
    write(stdout, rendered.out);
  }
  return envelope.exit_code();
}

int run_checked(const std::vector<std::string>& args) {
  // The project is found once, here: everything below reaches it through the workspace.
  const EarlyOptions early = early_options(args);
  std::shared_ptr<Workspace> workspace = Workspace::open(early.project);
  std::vector<std::string> plugin_warnings;
  const Registry& operations = capability::project_registry(registry(), *workspace, &plugin_warnings);
  Output output;
  output.json = early.json;
  output.render.out.color = color_enabled(STDOUT_FILENO);
  output.render.err.color = color_enabled(STDERR_FILENO);
  output.render.width = terminal_width(STDOUT_FILENO);
  output.render.now = clock_from_environment()->now();

  if (!args.empty() && args.front() == "__complete") return print_completions(operations, workspace, args);
  for (const auto& warning : plugin_warnings)
    write(stderr, output.render.err.yellow("warning:") + " " + terminal_safe(warning) + "\n");
  // The built-in commands after global options too (`ct --project P edit T001`): their own words
  // and flags first; `ct edit` also takes the global options given before it, the others only a
  // leading --json (the project was found above).
  if (std::size_t word = command_word(args); word < args.size()) {
    const std::string& name = args[word];
    std::vector<std::string> own(args.begin() + static_cast<std::ptrdiff_t>(word), args.end());
    if (name == "edit") {
      own.insert(own.end(), args.begin(), args.begin() + static_cast<std::ptrdiff_t>(word));
      return run_edit(operations, workspace, own, output);
    }
    if (name == "completion") return print_completion_script(own, output);
    const ReportFailure report = [&output](const Error& error) { return report_failure(error, output); };
    if (name == "person") return run_person(own, report);
    if (name == "whoami") {
      if (early.json && std::find(own.begin(), own.end(), "--json") == own.end()) own.push_back("--json");
      return run_whoami(own, report);
    }
  }
  Route route = find_route(operations, args);
  if (route.error) return report_failure(*route.error, output);
  if (!route.server.empty()) return run_server_command(route.server, args, nullptr, workspace);

  CommandTree tree(operations, route);
  auto parsed = parse_command(tree, args, InputSource::system());
  const GlobalOptions& globals = tree.globals();
  output.json = output.json || globals.json;
  if (!parsed) return report_failure(parsed.error(), output);
  if (!parsed->help.empty()) {
    write(stdout, parsed->help);
    return 0;
  }
  if (globals.version) return print_version(output);

  const OperationSpec* spec = route.spec;
  if (!spec) {
    if (output.json) {
      std::string what = route.domain.empty() ? "a command" : "an operation of '" + route.domain + "'";
      return report_failure(Error(ErrorCode::InvalidInput, "missing " + what).with_fix(tree.command() + " --help"), output);
    }
    write(stdout, tree.help());
    return 0;
  }

  json::Value params = std::move(parsed->params);
  add_global_params(params, route, globals, *spec, output);
  if (later_hook(*spec, params, *workspace)) return 0;

  auto who = cli_principal();
  if (!who) return report_failure(who.error(), output);
  Router router(operations, workspace, person_options(globals, output.json), clock_from_environment());
  const Binding binding = resolve_session(globals, *workspace);
  Request request{spec->gateway, std::string(spec->domain), std::string(spec->name), params,
                  {.principal = who->principal,
                   .place = process_place(),
                   .session = binding.session,
                   .adopt_only_active_session = true,
                   .never_adopt = binding.elsewhere}};
  Envelope envelope;
  {
    // Long work (a tracker sync) tells a person at a terminal how it goes; its line is gone before the reply.
    std::optional<ProgressLine> progress;
    if (::isatty(STDERR_FILENO) == 1) progress.emplace(stderr, tree.command());
    envelope = router.dispatch(request);
  }
  // An agent host's session-start hook (`ct briefing --hook H`, providers.install hooks) runs in
  // every folder the host opens: outside a CLEO project it has nothing to load, and says nothing
  // rather than an error the host would show at every start.
  if (spec->text_view == TextView::Briefing && params.contains("hook") && !envelope.success && envelope.error &&
      envelope.error->code == ErrorCode::NotInitialized)
    return 0;
  // The session this terminal is in now: the one it ran in, unless the call bound or unbound one.
  const std::string session = envelope.rebind.value_or(binding.session);
  if (envelope.rebind) remember_session(*workspace, session);
  if (!envelope.success && envelope.error && is_session_error(envelope.error->code) && !session.empty()) {
    // Which session the call ran in, and how to choose another: the binding is per terminal.
    std::string from = binding.source.empty() ? "the project's only active session" : binding.source;
    envelope.error->fix += (envelope.error->fix.empty() ? "" : "; ") + std::string("this command ran in session ") +
                           session + " (from " + from + "); another one: --session ID or export CLEO_SESSION=ID";
  }

  const bool newly_bound = envelope.success && !session.empty() && session != binding.session;
  return report_reply(operations, route, tree.command(), params, envelope, newly_bound ? session : "", output);
}

}  // namespace

int run(int argc, char** argv) {
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
  try {
    return run_checked(args);
  } catch (const std::exception& e) {
    // The last line of defence: nothing below should throw, but a crash helps nobody.
    std::fprintf(stderr, "ct: internal error: %s\n", e.what());
    return exit_code(ErrorCode::Internal);
  }
}

}  // namespace ct::cli
