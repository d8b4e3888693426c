#include "capability/probes.h"

#include "engines/project/config.h"

namespace ct::capability {
namespace {

bool value_set(const json::Value& value) {
  if (value.is_null()) return false;
  if (value.is_string()) return !value.as_string().empty();
  if (value.is_array()) return !value.as_array().empty();
  return true;
}

std::string first_line(std::string_view text) {
  std::size_t end = text.find('\n');
  std::string line(text.substr(0, end));
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  return line.size() > 120 ? line.substr(0, 120) : line;
}

std::string install_fix(std::string_view program) {
  if (program == "git") return "install git (apt-get install -y git) or put it on PATH";
  if (program == "gh") return "install the GitHub CLI (apt-get install -y gh, or https://cli.github.com) or put it on PATH";
  return "install " + std::string(program) + " or put it on PATH";
}

}  // namespace

const std::vector<std::string> ProbeResolver::kProbePassed = {"GH_TOKEN", "GITHUB_TOKEN", "GH_HOST",
                                                              "GH_CONFIG_DIR", "XDG_CONFIG_HOME"};

ProbeResolver::ProbeResolver(std::vector<std::string> environment, std::chrono::milliseconds ttl)
    : environment_(std::move(environment)), ttl_(ttl) {}

int ProbeResolver::spawned() const {
  std::lock_guard lock(mutex_);
  return spawned_;
}

Result<ProcessResult> ProbeResolver::run(std::vector<std::string> argv, const std::filesystem::path& cwd) {
  {
    std::lock_guard lock(mutex_);
    ++spawned_;
  }
  ProcessSpec spec;
  spec.argv = std::move(argv);
  spec.cwd = cwd;
  spec.env = environment_;
  spec.timeout = std::chrono::seconds(5);
  spec.grace = std::chrono::milliseconds(500);
  spec.max_stdout = 64 * 1024;
  spec.max_stderr = 64 * 1024;
  return run_process(spec);
}

ProbeResult ProbeResolver::program(std::string_view name) {
  ProbeResult result;
  auto path = find_program(name, environment_);
  if (!path) {
    result.reason = std::string(name) + " is not on PATH";
    result.fix = install_fix(name);
    return result;
  }
  result.available = true;
  result.detail = path->string();
  // The version of the tools we know answer --version harmlessly; any other program (a plug-in
  // engine) is never run just to look at it.
  if (name != "git" && name != "gh") return result;
  if (auto ran = run({std::string(name), "--version"}, {}); ran && ran->ok()) {
    std::string version = first_line(ran->out.empty() ? ran->err : ran->out);
    if (!version.empty()) result.detail = version;
  }
  return result;
}

ProbeResult ProbeResolver::git_repo(const std::filesystem::path& root) {
  ProbeResult git = program("git");
  if (!git.available) return git;
  ProbeResult result;
  auto ran = run({"git", "rev-parse", "--show-toplevel"}, root);
  if (ran && ran->ok()) {
    result.available = true;
    result.detail = first_line(ran->out);
    return result;
  }
  result.reason = "the project is not inside a git work tree";
  result.fix = "run git init in the project root (or work in a clone of the repository)";
  if (ran && ran->timed_out) result.reason = "git did not answer within 5 s";
  return result;
}

ProbeResult ProbeResolver::gh_auth() {
  ProbeResult gh = program("gh");
  if (!gh.available) return gh;
  ProbeResult result;
  auto ran = run({"gh", "auth", "status"}, {});
  if (ran && ran->ok()) {
    result.available = true;
    result.detail = gh.detail;
    return result;
  }
  result.reason = "gh is not authenticated";
  result.fix = "run gh auth login (or set GH_TOKEN for the server's environment)";
  return result;
}

ProbeResult ProbeResolver::probe(std::string_view need, const std::filesystem::path& project_root,
                                 const Config& config) {
  // A configured value is read each time: the configuration reloads when its file changes.
  if (need.starts_with("config:")) {
    std::string key(need.substr(7));
    ProbeResult result;
    const json::Value& value = config.get(key);
    result.available = value_set(value);
    if (result.available) {
      result.detail = value.is_string() ? value.as_string() : value.dump();
    } else {
      result.reason = key + " is not set";
      // The system.config.set call (each edge writes it its own way); a key only people set says
      // what a person runs.
      result.fix = config_set_fix(key, json::Value("<value>"));
    }
    return result;
  }
  std::string key(need);
  if (need == "git-repo") key += "\n" + project_root.string();
  auto now = std::chrono::steady_clock::now();
  {
    std::lock_guard lock(mutex_);
    if (auto it = cache_.find(key); it != cache_.end() && now - it->second.at < ttl_) return it->second.result;
  }
  ProbeResult result;
  if (need.starts_with("program:")) {
    result = program(need.substr(8));
  } else if (need == "git-repo") {
    result = git_repo(project_root);
  } else if (need == "gh-auth") {
    result = gh_auth();
  } else {
    result.reason = "unknown need '" + std::string(need) + "'";
    result.fix = "this is a bug in the operation's declaration (or a plug-in's): report it";
  }
  std::lock_guard lock(mutex_);
  cache_[key] = {result, now};
  return result;
}

Availability ProbeResolver::check(const OperationSpec& spec, const std::filesystem::path& project_root,
                                  const Config& config) {
  for (auto need : spec.needs) {
    ProbeResult found = probe(need, project_root, config);
    if (!found.available) return {false, std::string(need), std::move(found.reason), std::move(found.fix)};
  }
  return {};
}

json::Value ProbeResolver::probes(const std::vector<std::string_view>& needs, const std::filesystem::path& project_root,
                                  const Config& config) {
  json::Value out = json::Value::array();
  for (auto need : needs) {
    ProbeResult found = probe(need, project_root, config);
    json::Value row = json::Value::object();
    row.set("need", std::string(need));
    row.set("available", found.available);
    if (!found.detail.empty()) row.set("detail", found.detail);
    if (!found.available) {
      row.set("reason", found.reason);
      row.set("fix", found.fix.to_value());
    }
    out.push_back(std::move(row));
  }
  return out;
}

ProbeResolver& process_resolver() {
  static ProbeResolver resolver;
  return resolver;
}

}  // namespace ct::capability
