#include "cli/person.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include <CLI/CLI.hpp>

#include "core/clock.h"
#include "core/file_read.h"
#include "core/json.h"
#include "core/text.h"
#include "cli/usage.h"
#include "domains/envelope.h"
#include "engines/project/person_keys.h"
#include "gateway/product.h"

namespace ct::cli {
namespace {

/// The environment variables agent hosts set in the shells their agents run commands in (each
/// host's own source says so; docs/architecture.md §8 lists where), and the host each names.
struct Marker {
  const char* variable;
  const char* host;  // "" = the variable's value names the host (AI_AGENT=…, AGENT=…)
};
constexpr Marker kMarkers[] = {
    {"CLAUDECODE", "claude-code"},     {"CODEX_THREAD_ID", "codex"},   {"CODEX_SANDBOX", "codex"},
    {"GEMINI_CLI", "gemini"},          {"OPENCODE", "opencode"},       {"CURSOR_AGENT", "cursor"},
    {"COPILOT_AGENT", "copilot"},      {"AI_AGENT", ""},               {"AGENT", ""},
};

std::string host_name(std::string_view value) {
  std::string name;
  for (char c : value)
    if (name.size() < 32 && (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_')) name += c;
  return name.empty() ? "agent" : name;
}

std::optional<std::filesystem::path> home() {
  const char* value = std::getenv("HOME");
  if (!value || !*value) return std::nullopt;
  return std::filesystem::path(value);
}

void print(std::FILE* stream, const std::string& text) { std::fwrite(text.data(), 1, text.size(), stream); }

/// `data` as the success envelope `ct --json` prints.
void print_json(json::Value data) {
  Envelope envelope;
  envelope.data = std::move(data);
  print(stdout, to_json(envelope, PeopleAdvice(registry())) + "\n");
}

}  // namespace

std::string agent_host_from_environment() {
  for (const Marker& marker : kMarkers)
    if (const char* value = std::getenv(marker.variable); value && *value) return *marker.host ? marker.host : host_name(value);
  return std::string();
}

Result<CliPrincipal> cli_principal() {
  // An agent host's environment first: a person key that reached an agent's shell (a person's
  // exported variable the host passed on) must not make the agent a person.
  if (std::string host = agent_host_from_environment(); !host.empty()) {
    const char* key = std::getenv("CT_PERSON_KEY");
    const char* key_file = std::getenv("CT_PERSON_KEY_FILE");
    std::string why = "run in " + host + "'s environment: an agent, whatever the terminal";
    if ((key && *key) || (key_file && *key_file)) {
      why += "; its person key is ignored";
      print(stderr, "warning: a person key is set in " + host +
                        "'s environment and is ignored: keep person keys out of agents' environments\n");
    }
    return CliPrincipal{Principal::agent("cli:" + host, "environment"), why, host};
  }
  std::string key;
  std::string key_source;
  if (const char* value = std::getenv("CT_PERSON_KEY"); value && *value) {
    key = value;
    key_source = "CT_PERSON_KEY";
  } else if (const char* file = std::getenv("CT_PERSON_KEY_FILE"); file && *file) {
    auto text = read_regular_file(file, ReadLimit{4096, std::chrono::milliseconds(2000)});
    if (!text)
      return fail(Error(ErrorCode::FileError, "CT_PERSON_KEY_FILE cannot be read: " + text.error().message)
                      .with_fix("point CT_PERSON_KEY_FILE at the file holding the key ct person key create printed"));
    key = std::string(trim(*text));
    key_source = "CT_PERSON_KEY_FILE";
  }
  if (!key.empty()) {
    auto dir = home();
    if (!dir) return fail(Error(ErrorCode::ConfigError, "HOME is not set: the person keys cannot be found"));
    CT_TRY_ASSIGN(std::optional<std::string> name, match_person_key(*dir, key));
    if (!name)
      return fail(Error(ErrorCode::MutationDisabled, key_source + " holds no person key listed in " +
                                                         person_keys_file(*dir).string())
                      .with_fix("a person runs ct person key list at their terminal; unset " + key_source +
                                " to run as an agent"));
    return CliPrincipal{Principal::person(os_user_name(), "person-key"), "the person key '" + *name + "' (" + key_source + ")", ""};
  }
  if (::isatty(STDIN_FILENO) && ::isatty(STDOUT_FILENO))
    return CliPrincipal{Principal::person(os_user_name(), "terminal"), "a terminal, and no agent host's environment", ""};
  return CliPrincipal{Principal::agent("cli:shell", "environment"),
                      "no terminal (a pipe, a script or an agent's shell): a person's scripts use a person key", ""};
}

int run_whoami(const std::vector<std::string>& args, const ReportFailure& report) {
  CLI::App app("Who this ct command is: a person (a terminal, a person key) or an agent, and why", "ct whoami");
  bool json = false;
  app.add_flag("--json", json, "Print JSON");
  try {
    app.parse(std::vector<std::string>(args.rbegin(), args.rend() - 1));
  } catch (const CLI::CallForHelp&) {
    print(stdout, app.help());
    return 0;
  } catch (const CLI::ParseError& error) {
    return report(Error(ErrorCode::InvalidInput, error.what()).with_fix("ct whoami --help"));
  }
  auto who = cli_principal();
  if (!who) return report(who.error());
  const Principal& p = who->principal;
  if (json) {
    json::Value data = json::Value::object();
    data.set("kind", p.is_person() ? "person" : "agent");
    data.set("id", p.id);
    data.set("proof", p.proof);
    data.set("why", who->why);
    if (!who->host.empty()) data.set("host", who->host);
    print_json(std::move(data));
  } else {
    print(stdout, std::string(p.is_person() ? "person" : "agent") + " " + p.id + " (" + p.proof + "): " + who->why + "\n");
  }
  return 0;
}

int run_person(const std::vector<std::string>& args, const ReportFailure& report) {
  CLI::App app("A person's keys: what lets a person's scripts and CI act as that person (approve, verify, "
               "reclaim, set the keys only people set). Made at a person's terminal; only digests are kept, in "
               "~/.config/cleo/person-keys.json (mode 0600)",
               "ct person");
  app.require_subcommand(1);
  CLI::App* key = app.add_subcommand("key", "Create, list or revoke person keys");
  key->require_subcommand(1);
  std::string name, out_file, revoke_name;
  bool json = false;
  CLI::App* create = key->add_subcommand("create", "Make a key: printed once (or written to --out, mode 0600)");
  create->add_option("--name", name, "What the key is for, e.g. ci")->required();
  create->add_option("--out", out_file, "Write the key to this new file (mode 0600) instead of printing it");
  CLI::App* list = key->add_subcommand("list", "The keys by name and creation time (never the keys)");
  list->add_flag("--json", json, "Print JSON");
  CLI::App* revoke = key->add_subcommand("revoke", "Remove a key: it proves nothing from now on");
  revoke->add_option("name", revoke_name, "The key's name")->required();
  app.footer("Use a key: CT_PERSON_KEY=<key> ct approve P001, or CT_PERSON_KEY_FILE=<file>. ct never writes it into an "
             "agent host's config or an agent's environment.");
  try {
    app.parse(std::vector<std::string>(args.rbegin(), args.rend() - 1));
  } catch (const CLI::CallForHelp&) {
    print(stdout, (app.get_subcommands().empty() ? app : *app.get_subcommands().back()).help());
    return 0;
  } catch (const CLI::ParseError& error) {
    return report(Error(ErrorCode::InvalidInput, error.what()).with_fix("ct person --help"));
  }
  auto dir = home();
  if (!dir) return report(Error(ErrorCode::ConfigError, "HOME is not set: the person keys cannot be found"));
  if (list->parsed()) {
    auto keys = list_person_keys(*dir);
    if (!keys) return report(keys.error());
    if (json) {
      json::Value rows = json::Value::array();
      for (const auto& k : *keys)
        rows.push_back(json::Value(json::Value::Object{{"name", json::Value(k.name)},
                                                      {"createdAt", json::Value(format_iso8601(k.created_at))}}));
      print_json(json::Value(json::Value::Object{{"keys", std::move(rows)}}));
    } else if (keys->empty()) {
      print(stdout, "No person keys. Make one at your terminal: ct person key create --name ci\n");
    } else {
      for (const auto& k : *keys) print(stdout, k.name + "  created " + format_iso8601(k.created_at) + "\n");
    }
    return 0;
  }
  // Making or revoking a key is a person's act at their own terminal: a key proves a person only
  // while no agent can make one.
  auto who = cli_principal();
  if (!who) return report(who.error());
  if (!who->principal.is_person() || who->principal.proof != "terminal")
    return report(Error(ErrorCode::MutationDisabled, "person keys are made and revoked by a person at their own terminal, "
                                                        "not by " + who->principal.id + " (" + who->why + ")")
                         .with_fix("a person runs ct person key " + std::string(create->parsed() ? "create --name " + name
                                                                                                  : "revoke " + revoke_name) +
                                   " in a terminal of their own"));
  if (revoke->parsed()) {
    if (auto done = revoke_person_key(*dir, revoke_name); !done) return report(done.error());
    print(stdout, "Revoked the person key " + revoke_name + ".\n");
    return 0;
  }
  auto made = create_person_key(*dir, name, SystemClock().now());
  if (!made) return report(made.error());
  if (out_file.empty()) {
    print(stdout, *made + "\n");
    print(stderr, "The person key " + name + " (shown once; keep it secret): CT_PERSON_KEY=<key> ct …\n");
    return 0;
  }
  std::FILE* file = nullptr;
  int fd = ::open(out_file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd >= 0) file = ::fdopen(fd, "w");
  if (!file) {
    if (fd >= 0) ::close(fd);
    (void)revoke_person_key(*dir, name);
    return report(Error(ErrorCode::FileError, "cannot create " + out_file + " (it must not exist yet)")
                         .with_fix("choose a new file, e.g. --out ~/.config/cleo/" + name + ".key"));
  }
  const std::string text = *made + "\n";
  const bool written = std::fwrite(text.data(), 1, text.size(), file) == text.size();
  if (std::fclose(file) != 0 || !written) {
    (void)revoke_person_key(*dir, name);
    std::filesystem::remove(out_file);
    return report(Error(ErrorCode::FileError, "cannot write " + out_file));
  }
  print(stdout, "Wrote the person key " + name + " to " + out_file + " (mode 0600): CT_PERSON_KEY_FILE=" + out_file + " ct …\n");
  return 0;
}

}  // namespace ct::cli
