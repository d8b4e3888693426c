#include "domains/evidence.h"

#include <algorithm>
#include <map>
#include <set>

#include "core/json_parse.h"
#include "core/pattern.h"
#include "core/text.h"
#include "domains/pipeline.h"
#include "domains/validate/protocol_check.h"
#include "engines/adapters/git_change.h"
#include "engines/adapters/split_command.h"
#include "engines/adapters/subprocess.h"
#include "engines/rules/evidence.h"
#include "engines/rules/memory.h"

namespace ct::evidence {
namespace {

/// git's checks of a commit are quick; one that hangs (a broken repository, a lock) stops here.
constexpr std::chrono::seconds kGitTimeout{60};

Error invalid(std::string message, std::string_view field) {
  return Error(ErrorCode::EvidenceInvalid, std::move(message)).with_detail("field", std::string(field));
}

/// Where an atom is checked: the caller's work root (Context::work_root), or for a recheck the
/// worktree the atom was checked in, while that is still a worktree of the project's repository.
using Where = std::filesystem::path;

ProcessSpec program(const Where& where, std::vector<std::string> argv, std::chrono::milliseconds timeout) {
  ProcessSpec spec;
  spec.argv = std::move(argv);
  spec.cwd = where;
  spec.env = minimal_environment();
  spec.timeout = timeout;
  return spec;
}

/// What git says of a commit: its full hash and whether HEAD reaches it; an error when it is not
/// a commit of the project's repository (or git cannot tell).
struct CommitFound {
  std::string sha;
  bool reachable = false;
};
Result<CommitFound> find_commit(const Where& where, const std::string& ref, std::string_view field) {
  auto ran = run_process(program(where, {"git", "rev-parse", "--verify", "--quiet", "--end-of-options", ref + "^{commit}"},
                                 kGitTimeout));
  if (!ran)
    return fail(invalid("git is not available to check commit " + echo(ref) + ": " + ran.error().message, field)
                    .with_fix("install git, or give it as a note (recorded unverified): {note:'commit " + ref + "'}"));
  if (!ran->ok()) {
    const std::string why = ran->err_tail();
    if (why.find("not a git repository") != std::string::npos)
      return fail(invalid("the project is not in a git repository: commit " + echo(ref) + " cannot be checked", field)
                      .with_fix("give files or a test run as evidence, or the commit as a note (recorded unverified)"));
    return fail(invalid("commit " + echo(ref) + " does not exist in the project's repository", field)
                    .with_fix("give the hash `git log -1 --format=%H` prints for the commit that holds the work"));
  }
  CommitFound found;
  found.sha = std::string(trim(ran->out));
  auto ancestor = run_process(program(where, {"git", "merge-base", "--is-ancestor", found.sha, "HEAD"}, kGitTimeout));
  found.reachable = ancestor && ancestor->ok();
  return found;
}

/// A file's SHA-256 now, or an error naming it.
Result<std::string> file_hash(const Where& where, const std::string& path, std::string_view field) {
  auto hashed = process_hasher().hash(where, path);
  if (!hashed) {
    const Error& why = hashed.error();
    return fail(invalid(why.code == ErrorCode::NotFound ? "file " + echo(path) + " does not exist"
                                                        : "file " + echo(path) + " cannot be read: " + why.message,
                        field));
  }
  return hashed->sha256;
}

Result<json::Value> check_test_run(Context& context, const std::string& ref, std::string_view task_id,
                                   std::string_view field) {
  ComplianceQuery query;
  query.id = std::stoll(ref);
  query.limit = 1;
  CT_TRY_ASSIGN(std::vector<ComplianceRecord> found, pipeline::read_in_own_transaction(context, [&] {
                  return context.db().list_compliance(query);
                }));
  auto fix = call("validate.test.run", {{"id", std::string(task_id)}}) + " runs the tests and answers the record id";
  if (found.empty() || found.front().check != validate::kTestRunCheck)
    return fail(invalid("there is no test run " + ref + " (validate.test.run answers the id as recorded)", field)
                    .with_fix(fix));
  const ComplianceRecord& run = found.front();
  if (!run.task_id.empty() && run.task_id != task_id)
    return fail(invalid("test run " + ref + " was recorded for " + run.task_id + ", not " + std::string(task_id), field)
                    .with_fix(fix));
  if (!run.passed) return fail(invalid("test run " + ref + " failed: failing tests prove nothing done", field).with_fix(fix));
  json::Value detail = json::Value::object();
  auto details = json::parse(run.details);
  if (details && (*details)["command"].is_array()) detail.set("command", (*details)["command"]);
  return detail;
}

/// A pull request through gh: verified when gh finds it; unverified (said why) when gh is missing
/// or not signed in; an error when gh answers that there is no such pull request.
Result<json::Value> check_pr(Context& context, const std::string& ref, bool& verified, std::string_view field) {
  json::Value detail = json::Value::object();
  verified = false;
  const auto env = minimal_environment({"GH_TOKEN", "GITHUB_TOKEN", "GH_HOST"});
  if (!find_program("gh", env)) {
    detail.set("unverified", "gh is not installed");
    return detail;
  }
  ProcessSpec spec = program(context.work_root(), {"gh", "pr", "view", ref, "--json", "state,url,number"},
                             std::chrono::seconds(context.config->get_int("issues.ghTimeoutSeconds")));
  spec.env = env;
  auto ran = run_process(spec);
  if (!ran || ran->timed_out) {
    detail.set("unverified", ran ? "gh did not answer in time" : "gh could not be run");
    return detail;
  }
  if (!ran->ok()) {
    const std::string why = ran->err_tail();
    if (why.find("auth") != std::string::npos || why.find("login") != std::string::npos) {
      detail.set("unverified", "gh is not signed in");
      return detail;
    }
    return fail(invalid("gh found no pull request " + echo(ref) + ": " + why, field)
                    .with_fix("give the number or URL of an existing pull request"));
  }
  auto answer = json::parse(ran->out);
  if (answer && answer->is_object()) {
    if ((*answer)["state"].is_string()) detail.set("state", (*answer)["state"]);
    if ((*answer)["url"].is_string()) detail.set("url", (*answer)["url"]);
  }
  verified = true;
  return detail;
}

/// A caller's atom, checked (mode off: as given, unchecked): the form the external step hands on.
Result<json::Value> check_input(Context& context, const AtomInput& input, std::string_view task_id, bool check,
                                const std::string& field) {
  json::Value out = json::Value::object();
  out.set("kind", input.kind);
  bool verified = false;
  json::Value detail = json::Value::object();
  std::string ref = input.ref;
  std::vector<EvidenceFile> files;
  for (const auto& path : input.files) files.push_back({path, ""});
  if (!check) {
    detail.set("unverified", "verification.evidence is off");
  } else if (input.kind == "commit") {
    CT_TRY_ASSIGN(CommitFound commit, find_commit(context.work_root(), input.ref, field));
    ref = commit.sha;
    detail.set("reachable", commit.reachable);
    verified = true;
  } else if (input.kind == "files") {
    for (auto& file : files) {
      CT_TRY_ASSIGN(file.sha256, file_hash(context.work_root(), file.path, field));
    }
    verified = true;
  } else if (input.kind == "test") {
    CT_TRY_ASSIGN(detail, check_test_run(context, input.ref, task_id, field));
    verified = true;
  } else if (input.kind == "pr") {
    CT_TRY_ASSIGN(detail, check_pr(context, input.ref, verified, field));
  } else {
    detail.set("unverified", "a note is not checked");
  }
  // Checked in a worktree other than the project's root: the atom names it (its top-level folder,
  // relative to the project's root) for the recheck at completion (recheck_root).
  if (verified && (input.kind == "commit" || input.kind == "files") && context.work_root() != context.root())
    if (std::string there = std::filesystem::path(context.project_place().worktree)
                                .lexically_relative(context.root().lexically_normal())
                                .generic_string();
        !there.empty() && there != ".")
      detail.set("worktree", std::move(there));
  out.set("ref", ref);
  if (!files.empty()) out.set("files", evidence_files_json(files));
  if (!input.covers.empty()) out.set("covers", json::Value::array_of(input.covers));
  out.set("verified", verified);
  if (!detail.empty()) out.set("detail", std::move(detail));
  return out;
}

/// The change a task's commit and files atoms are judged against (docs/architecture.md §4,
/// Evidence): the task's branch against its base, else the commits its evidence cites.
struct TaskChange {
  bool known = false;
  std::string why;         // !known: why no change could be determined
  bool by_branch = false;  // the branch's own commits; else the cited commits, each its own change
  std::string described;   // "branch cleo/T001 since 1a2b3c4d5e6f" | "the cited commits 1a2b3c4d5e6f, …"
  std::string branch;
  std::string base;        // as given to git: a commit, or main-worktree/HEAD
  git::Change change;

  /// What the change did touch, bounded: {branch?, base?, commits[], paths[], commitCount, pathCount}.
  json::Value json() const {
    json::Value out = json::Value::object();
    if (by_branch) {
      out.set("branch", branch);
      out.set("base", base);
    }
    constexpr std::size_t kShown = 20;
    std::vector<std::string> commits, paths;
    for (std::size_t i = 0; i < change.commits.size() && i < kShown; ++i) commits.push_back(change.commits[i]);
    for (std::size_t i = 0; i < change.paths.size() && i < 2 * kShown; ++i) paths.push_back(change.paths[i]);
    out.set("commits", json::Value::array_of(commits));
    out.set("paths", json::Value::array_of(paths));
    out.set("commitCount", static_cast<std::int64_t>(change.commits.size()));
    out.set("pathCount", static_cast<std::int64_t>(change.paths.size()));
    return out;
  }
  /// One line for messages: the change and what it touched, the paths bounded.
  std::string touched() const {
    std::vector<std::string> shown;
    for (std::size_t i = 0; i < change.paths.size() && i < 10; ++i) shown.push_back(change.paths[i]);
    std::string out = described + ": " + std::to_string(change.commits.size()) + " commit" +
                      (change.commits.size() == 1 ? "" : "s") + " touching ";
    if (shown.empty()) return out + "no file";
    out += join(shown, ", ");
    if (change.paths.size() > shown.size()) out += " and " + std::to_string(change.paths.size() - shown.size()) + " more";
    return out;
  }
};

std::string short_sha(std::string_view sha) { return std::string(sha.substr(0, 12)); }

/// One `git log` of the change: its commits and paths, or why git could not list them.
Result<git::Change> read_change(Context& context, std::string_view branch, std::string_view base,
                                const std::vector<std::string>& revs, std::string& why) {
  auto ran = run_process(program(context.work_root(), git::change_argv(branch, base, revs), kGitTimeout));
  if (!ran) {
    why = "git is not available: " + ran.error().message;
    return fail(ErrorCode::CapabilityUnavailable, why);
  }
  if (!ran->ok()) {
    const std::string err = ran->err_tail(300);
    why = err.find("not a git repository") != std::string::npos ? "the project is not in a git repository"
                                                                   : "git could not list it: " + std::string(trim(err));
    return fail(ErrorCode::EngineFailed, why);
  }
  return git::parse_change(ran->out);
}

/// The branch names git takes from the store as refs, never as options or ranges.
bool plain_ref(std::string_view name) {
  static const Pattern ref = *Pattern::compile(kCommitPattern);
  return ref.matches(std::string(name)) && name.find("..") == std::string_view::npos;
}

/// The change of `task_id`: its branch (task_worktrees, else the claiming session's) against the
/// recorded base or the main worktree's HEAD, when that holds commits of its own; else the commits
/// its evidence cites (`cited_now`, this call's, and the ones recorded for it that were not found
/// unrelated), read only when `need_paths`. At most two git programs.
Result<TaskChange> task_change(Context& context, const std::string& task_id, std::vector<std::string> cited_now,
                               bool need_paths) {
  TaskChange out;
  CT_TRY_ASSIGN(std::optional<TaskBranch> branch, pipeline::read_in_own_transaction(context, [&] {
                  return context.db().task_branch(task_id);
                }));
  std::string passed_over;  // why the branch gave no change
  if (branch && plain_ref(branch->branch) && (branch->base.empty() || plain_ref(branch->base))) {
    const std::string base = branch->base.empty() ? "main-worktree/HEAD" : branch->base;
    std::string why;
    auto change = read_change(context, branch->branch, base, {}, why);
    if (!change && why == "the project is not in a git repository") {
      out.why = why;
      return out;
    }
    if (change && (!change->commits.empty() || !branch->base.empty()) && !change->truncated) {
      out.known = out.by_branch = true;
      out.branch = branch->branch;
      out.base = base;
      out.described = "branch " + branch->branch + " since " +
                      (branch->base.empty() ? "the main worktree's HEAD" : short_sha(branch->base));
      out.change = std::move(*change);
      return out;
    }
    passed_over = !change              ? "branch " + branch->branch + " cannot be read (" + why + ")"
                  : change->truncated  ? "branch " + branch->branch + " holds more commits than are read"
                                       : "branch " + branch->branch + " has no commits beyond the main worktree's HEAD";
  }
  CT_TRY_ASSIGN(std::vector<EvidenceAtom> recorded, pipeline::read_in_own_transaction(context, [&] {
                  return context.db().task_evidence(task_id, /*with_replaced=*/true);
                }));
  for (const auto& atom : recorded)
    if (atom.kind == "commit" && atom.status != "withdrawn" && atom.verified && !atom.detail.contains("unrelated"))
      cited_now.push_back(atom.ref);
  std::sort(cited_now.begin(), cited_now.end());
  cited_now.erase(std::unique(cited_now.begin(), cited_now.end()), cited_now.end());
  if (cited_now.empty()) {
    out.why = (passed_over.empty() ? std::string("it runs on no branch of its own") : passed_over) +
              " and its evidence cites no commit";
    return out;
  }
  std::vector<std::string> shown;
  for (std::size_t i = 0; i < cited_now.size() && i < 5; ++i) shown.push_back(short_sha(cited_now[i]));
  out.described = std::string(cited_now.size() == 1 ? "the cited commit " : "the cited commits ") + join(shown, ", ") +
                  (cited_now.size() > shown.size() ? " and " + std::to_string(cited_now.size() - shown.size()) + " more"
                                                   : "");
  if (need_paths) {
    std::string why;
    auto change = read_change(context, "", "", cited_now, why);
    if (!change) {
      out.why = why;
      return out;
    }
    out.change = std::move(*change);
  } else {
    out.change.commits = cited_now;
  }
  out.known = true;
  return out;
}

/// Judges the call's checked commit and files atoms against the task's change. In the change: the
/// atom keeps verified:true with detail.change naming the change. Outside it: strict mode refuses
/// (E_EVIDENCE_INVALID with what the change touched); advisory records it verified:false with
/// detail.unrelated. No change determinable: a files atom is verified:false with detail.unchecked
/// (a commit is its own change, so it is always in one).
Result<void> judge_against_change(Context& context, const std::string& task_id, json::Value& atoms,
                                  const std::vector<std::string>& fields, Mode mode) {
  std::vector<std::string> cited;
  bool any = false, files = false;
  for (const auto& atom : atoms.as_array()) {
    if (!atom["verified"].is_bool() || !atom["verified"].as_bool()) continue;
    const std::string& kind = atom["kind"].as_string();
    if (kind == "commit") cited.push_back(atom["ref"].as_string());
    files = files || kind == "files";
    any = any || kind == "commit" || kind == "files";
  }
  if (!any) return {};
  CT_TRY_ASSIGN(TaskChange change, task_change(context, task_id, cited, /*need_paths=*/files));
  for (std::size_t i = 0; i < atoms.size(); ++i) {
    json::Value& atom = atoms.as_array()[i];
    if (!atom["verified"].is_bool() || !atom["verified"].as_bool()) continue;
    const std::string& kind = atom["kind"].as_string();
    if (kind != "commit" && kind != "files") continue;
    json::Value detail = atom["detail"].is_object() ? atom["detail"] : json::Value::object();
    std::string outside;  // what of the atom lies outside the change
    json::Value outside_json = json::Value::array();
    if (!change.known) {
      if (kind != "files") continue;  // a commit is its own change
      detail.set("unchecked", "not checked against " + task_id + "'s change: " + change.why);
      atom.set("verified", false);
      atom.set("detail", std::move(detail));
      continue;
    }
    if (kind == "commit") {
      if (change.by_branch && !change.change.has_commit(atom["ref"].as_string())) {
        outside = "commit " + short_sha(atom["ref"].as_string());
        outside_json.push_back(atom["ref"]);
      }
    } else {
      std::vector<std::string> paths;
      for (const auto& file : atom["files"].as_array())
        if (!change.change.touches(file["path"].as_string())) paths.push_back(file["path"].as_string());
      if (!paths.empty()) {
        outside = (paths.size() == 1 ? "file " : "files ") + join(paths, ", ");
        outside_json = json::Value::array_of(paths);
      }
    }
    if (outside.empty()) {
      detail.set("change", change.described);
      atom.set("detail", std::move(detail));
      continue;
    }
    const std::string message = outside + " " + (outside_json.size() == 1 ? "is" : "are") + " not " + task_id +
                                "'s work: " + change.touched();
    if (mode == Mode::Strict) {
      const std::string fix =
          change.by_branch
              ? "cite a commit of branch " + change.branch + " (`git log " + change.base + ".." + change.branch +
                    "`) or files it touched; commit the work on the branch first"
              : "cite the commit that holds this work in the same call ({commit:'<hash>'} beside the files), or "
                "files the cited commits touched";
      return fail(invalid(message, fields[i])
                      .with_fix(fix)
                      .with_detail("outside", std::move(outside_json))
                      .with_detail("change", change.json()));
    }
    detail.set("unrelated", message);
    atom.set("verified", false);
    atom.set("detail", std::move(detail));
  }
  return {};
}

/// Where a recorded atom is rechecked: the worktree it was checked in (detail.worktree, relative to
/// the project's root) while that is still a worktree of the project's repository — so a person
/// completing or verifying from the main checkout sees the branch's files before it is merged; once
/// that worktree is removed (pruned, or never one), the caller's work root: after a merge the main
/// checkout holds the files and HEAD reaches the commits, and what the merge changed shows as stale.
Where recheck_root(const Context& context, const EvidenceAtom& atom) {
  const json::Value& recorded = atom.detail["worktree"];
  if (!recorded.is_string() || recorded.as_string().empty()) return context.work_root();
  auto tree = context.project_worktree((context.root() / recorded.as_string()).lexically_normal());
  return tree ? context.work_root_in(*tree) : context.work_root();
}

/// What no longer holds of a recorded atom ("" when it all still holds).
std::string what_changed(const Context& context, const EvidenceAtom& atom) {
  const Where where = recheck_root(context, atom);
  if (atom.kind == "commit") {
    auto commit = find_commit(where, atom.ref, "evidence");
    if (!commit) return "commit " + atom.ref.substr(0, 12) + " is no longer in the repository (rewritten away?)";
    const json::Value& was = atom.detail["reachable"];
    if (was.is_bool() && was.as_bool() && !commit->reachable)
      return "HEAD no longer reaches commit " + atom.ref.substr(0, 12) + " (rewritten away?)";
    return "";
  }
  if (atom.kind == "files") {
    std::vector<std::string> changed;
    for (const auto& file : atom.files) {
      if (file.sha256.empty()) continue;  // recorded unchecked
      auto now = process_hasher().hash(where, file.path);
      if (!now) changed.push_back(file.path + (now.error().code == ErrorCode::NotFound ? " is gone" : " cannot be read"));
      else if (now->sha256 != file.sha256) changed.push_back(file.path + " changed");
    }
    return join(changed, ", ");
  }
  return "";
}

/// The call that records a fresh atom of `atom`'s kind in its place.
Advice refresh_call(const EvidenceAtom& atom, const std::string& task_id) {
  json::Value fresh = json::Value::object();
  if (atom.kind == "files") {
    json::Value paths = json::Value::array();
    for (const auto& file : atom.files) paths.push_back(file.path);
    fresh.set("files", std::move(paths));
  } else if (atom.kind == "commit") {
    fresh.set("commit", "<the commit that holds the work now>");
  } else {
    fresh.set(atom.kind, atom.ref);
  }
  if (!atom.covers.empty()) fresh.set("covers", json::Value::array_of(atom.covers));
  json::Value evidence = json::Value::array();
  evidence.push_back(std::move(fresh));
  return call("tasks.complete", {{"id", task_id}, {"evidence", std::move(evidence)}});
}

/// What a person runs to waive criteria of `task` (tasks.evidence takes waivers before and after
/// completion), given the waivers as JSON.
std::string person_waives(const Task& task, const json::Value& waive) {
  return "`" + join_command({"ct", "tasks", "evidence", task.id, "--waive", waive.dump()}) + "` in a terminal";
}

/// Under strict verification.evidence a waiver excuses a criterion from the bar people set: a
/// person's act (issue 52). Advisory and off modes judge nothing, so a waiver there is a note.
Result<void> waiver_rules(const Context& context, const Task& task, const json::Value& waive) {
  if (context.is_person() || mode(*context.config) != Mode::Strict) return {};
  return fail(Error(ErrorCode::MutationDisabled,
                    "waiving an acceptance criterion of " + task.id +
                        " under strict verification.evidence is a person's act, not an MCP or dashboard caller's")
                  .with_fix("cover it with checked evidence (" +
                            call("tasks.evidence", {{"id", task.id}, {"evidence", "<atoms with covers>"}}) +
                            "), or ask a person to run " + person_waives(task, waive))
                  .with_detail("field", "waive")
                  .with_detail("setBy", "people"));
}

}  // namespace

ParamSpec evidence_param(std::string_view description) {
  return {.name = "evidence", .type = ParamType::Object, .description = description, .or_text = true};
}

Result<Reply> check_atoms(Context& context, const std::string& task_id, const json::Value& evidence, bool recheck) {
  json::Value data = json::Value::object();
  const Mode mode = evidence::mode(*context.config);
  CT_TRY_ASSIGN(std::vector<AtomInput> inputs, parse_atoms(evidence));
  json::Value atoms = json::Value::array();
  std::vector<std::string> fields;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    fields.push_back(inputs.size() == 1 && !evidence.is_array() ? std::string("evidence")
                                                                : "evidence[" + std::to_string(i) + "]");
    CT_TRY_ASSIGN(json::Value atom, check_input(context, inputs[i], task_id, mode != Mode::Off, fields.back()));
    atoms.push_back(std::move(atom));
  }
  if (mode != Mode::Off) CT_TRY(judge_against_change(context, task_id, atoms, fields, mode));
  data.set("atoms", std::move(atoms));
  if (recheck && mode != Mode::Off) {
    CT_TRY_ASSIGN(std::vector<EvidenceAtom> recorded, pipeline::read_in_own_transaction(context, [&] {
                    return context.db().task_evidence(task_id, /*with_replaced=*/false);
                  }));
    json::Value stale = json::Value::object();
    for (const auto& atom : recorded)
      if (std::string what = what_changed(context, atom); !what.empty()) stale.set(atom.id, what);
    if (!stale.empty()) data.set("stale", std::move(stale));
  }
  return Reply::of(std::move(data));
}

Result<std::vector<EvidenceAtom>> record_atoms(Context& context, const json::Value& waive, const Task& task,
                                               std::string_view gate, std::vector<std::string>& warnings) {
  std::vector<EvidenceAtom> fresh;
  CT_TRY_ASSIGN(std::vector<Waiver> waivers, parse_waivers(waive));
  if (!waivers.empty()) CT_TRY(waiver_rules(context, task, waive));
  const json::Value* checked = context.external ? context.external->data.find("atoms") : nullptr;
  if ((!checked || checked->empty()) && waivers.empty()) return fresh;
  CT_TRY_ASSIGN(std::string agent, context.agent_name());
  const TimeMs now = context.now();
  auto atom_of = [&](std::string kind) {
    EvidenceAtom atom;
    atom.task_id = task.id;
    atom.gate = std::string(gate);
    atom.kind = std::move(kind);
    atom.agent = agent;
    atom.session = context.session;
    atom.at = now;
    return atom;
  };
  if (checked)
    for (std::size_t i = 0; i < checked->size(); ++i) {
      const json::Value& item = checked->as_array()[i];
      EvidenceAtom atom = atom_of(item["kind"].as_string());
      atom.ref = item["ref"].is_string() ? item["ref"].as_string() : "";
      if (item["files"].is_array())
        for (const auto& file : item["files"].as_array())
          atom.files.push_back({file["path"].as_string(), file["sha256"].as_string()});
      if (item["covers"].is_array())
        for (const auto& criterion : item["covers"].as_array()) atom.covers.push_back(criterion.as_int());
      atom.verified = item["verified"].is_bool() && item["verified"].as_bool();
      atom.detail = item["detail"];
      CT_TRY(check_criteria(atom.covers, task.acceptance.size(), task.id, "evidence[" + std::to_string(i) + "].covers"));
      fresh.push_back(std::move(atom));
    }
  for (std::size_t i = 0; i < waivers.size(); ++i) {
    CT_TRY(check_criteria(waivers[i].criteria, task.acceptance.size(), task.id,
                          "waive[" + std::to_string(i) + "].criterion"));
    EvidenceAtom atom = atom_of("waiver");
    atom.ref = waivers[i].reason;
    atom.covers = waivers[i].criteria;
    fresh.push_back(std::move(atom));
  }
  // Each fresh atom takes the place of the current one of its kind recorded before this call.
  CT_TRY_ASSIGN(std::vector<EvidenceAtom> before, context.db().task_evidence(task.id, /*with_replaced=*/false));
  CT_TRY_ASSIGN(std::int64_t next, context.db().next_evidence_number());
  std::vector<bool> named_covers;
  for (const auto& atom : fresh) named_covers.push_back(!atom.covers.empty());
  for (auto& old : before) {
    auto by = std::find_if(fresh.begin(), fresh.end(), [&](const EvidenceAtom& atom) { return replaces(atom, old); });
    if (by == fresh.end()) continue;
    // The fresh atom covers what the one it replaces covered, unless it names its own criteria.
    if (!named_covers[static_cast<std::size_t>(by - fresh.begin())])
      for (auto criterion : old.covers)
        if (std::find(by->covers.begin(), by->covers.end(), criterion) == by->covers.end()) by->covers.push_back(criterion);
    json::Value was = json::Value::object();
    was.set("id", old.id);
    was.set("status", old.status);
    old.status = "replaced";
    CT_TRY(context.db().put_evidence(old));
    json::Value now_is = was;
    now_is.set("status", old.status);
    context.record({task.id, "evidence", std::move(was), std::move(now_is)});
  }
  for (auto& atom : fresh) {
    atom.id = prefixed_id("E", next++);
    CT_TRY(context.db().put_evidence(atom));
    if (const json::Value* why = atom.detail.find("unrelated"); why && why->is_string())
      warnings.push_back(atom.id + " recorded as unrelated, verifying nothing: " + why->as_string());
    else if (const json::Value* unchecked = atom.detail.find("unchecked"); unchecked && unchecked->is_string())
      warnings.push_back(atom.id + " recorded unverified, " + unchecked->as_string() +
                         "; cite the commit that holds the work beside the files");
    json::Value recorded = atom_json(atom);
    if (!atom.files.empty()) recorded.set("files", evidence_files_json(atom.files));
    context.record({task.id, "evidence", json::Value(), std::move(recorded)});
  }
  return fresh;
}

Result<void> gate_rules(Context& context, const Task& task, std::string_view gate,
                        const std::vector<EvidenceAtom>& recorded, std::vector<std::string>& warnings) {
  const Mode mode = evidence::mode(*context.config);
  if (mode == Mode::Off) return {};
  const auto required = context.config->get_strings("verification.required");
  if (std::find(required.begin(), required.end(), gate) == required.end()) return {};
  std::vector<std::string> unverified;
  for (const auto& atom : recorded)
    if (!atom.verified) {
      std::string what = atom.kind + (atom.ref.empty() ? "" : " " + clip(atom.ref, 40));
      // Why a commit or files atom is not checked: outside the task's change, or no change known.
      for (std::string_view key : {"unrelated", "unchecked"})
        if (const json::Value* why = atom.detail.find(key); why && why->is_string()) what += " (" + why->as_string() + ")";
      unverified.push_back(std::move(what));
    }
  if (!recorded.empty() && unverified.empty()) return {};
  const std::string message =
      recorded.empty() ? "gate " + std::string(gate) + " of " + task.id + " is required (verification.required) and "
                                                                            "needs checked evidence: none was given"
                       : "gate " + std::string(gate) + " of " + task.id +
                             " is required (verification.required) and needs checked evidence; not checked: " +
                             join(unverified, "; ");
  if (mode == Mode::Advisory) {
    warnings.push_back(message);
    return {};
  }
  json::Value atom = json::Value::array();
  json::Value commit = json::Value::object();
  commit.set("commit", "<hash>");
  atom.push_back(std::move(commit));
  json::Value test = json::Value::object();
  test.set("test", "<validate.test.run record id>");
  atom.push_back(std::move(test));
  return fail(Error(ErrorCode::EvidenceUnverified, message)
                  .with_fix(call("lifecycle.gate.pass", {{"id", task.id}, {"gate", std::string(gate)}, {"evidence", atom}}))
                  .with_detail("gate", std::string(gate))
                  .with_detail("unverified", json::Value::array_of(unverified)));
}

Result<void> acceptance_rules(const Context& context, const Task& task, const std::vector<std::string>& after,
                              std::string fix) {
  if (context.is_person() || mode(*context.config) != Mode::Strict) return {};
  // Adding criteria raises the bar: the ones there stay, in their places (atoms cover them by number).
  const bool only_adds = after.size() >= task.acceptance.size() &&
                         std::equal(task.acceptance.begin(), task.acceptance.end(), after.begin());
  if (only_adds) return {};
  return fail(Error(ErrorCode::MutationDisabled,
                    "the acceptance criteria of " + task.id +
                        " are the bar strict verification.evidence holds it to: an MCP or dashboard caller may add "
                        "criteria, and only a person changes or removes one")
                  .with_fix(std::move(fix))
                  .with_detail("field", "acceptance")
                  .with_detail("setBy", "people"));
}

Result<void> completion_rules(Context& context, const Task& task, std::vector<std::string>& warnings) {
  const Mode mode = evidence::mode(*context.config);
  if (mode == Mode::Off) return {};
  CT_TRY_ASSIGN(std::vector<EvidenceAtom> atoms, context.db().task_evidence(task.id, /*with_replaced=*/false));
  std::set<std::string> stale;
  json::Value stale_rows = json::Value::array();
  const json::Value* found = context.external ? context.external->data.find("stale") : nullptr;
  std::optional<Advice> refresh;
  for (const auto& atom : atoms)
    if (found && found->is_object() && (*found)[atom.id].is_string()) {
      stale.insert(atom.id);
      json::Value row = json::Value::object();
      row.set("id", atom.id);
      row.set("kind", atom.kind);
      row.set("what", (*found)[atom.id]);
      stale_rows.push_back(std::move(row));
      if (!refresh) refresh = refresh_call(atom, task.id);
    }
  if (!stale.empty()) {
    std::vector<std::string> whats;
    for (const auto& row : stale_rows.as_array()) whats.push_back(row["id"].as_string() + ": " + row["what"].as_string());
    const std::string message = "evidence of " + task.id + " no longer holds: " + join(whats, "; ") +
                                "; record it again (a fresh atom of its kind replaces the stale one)";
    if (mode == Mode::Strict)
      return fail(Error(ErrorCode::EvidenceStale, message).with_fix(*refresh).with_detail("stale", std::move(stale_rows)));
    warnings.push_back(message);
  }
  if (task.acceptance.empty()) return {};
  Coverage covered = coverage(task.acceptance.size(), atoms, stale, mode == Mode::Strict);
  if (covered.uncovered.empty()) return {};
  json::Value uncovered = json::Value::array();
  std::vector<std::string> names;
  for (auto criterion : covered.uncovered) {
    json::Value row = json::Value::object();
    row.set("criterion", criterion);
    row.set("text", task.acceptance[static_cast<std::size_t>(criterion - 1)]);
    uncovered.push_back(std::move(row));
    names.push_back(std::to_string(criterion) + " (" + clip(task.acceptance[static_cast<std::size_t>(criterion - 1)], 60) + ")");
  }
  const std::int64_t first = covered.uncovered.front();
  const std::string message = "acceptance criteria of " + task.id + " neither covered by " +
                              (mode == Mode::Strict ? "checked " : "") + "evidence nor waived: " + join(names, "; ");
  if (mode == Mode::Advisory) {
    warnings.push_back(message);
    return {};
  }
  json::Value atom = json::Value::object();
  atom.set("test", "<validate.test.run record id>");
  atom.set("covers", json::Value::array_of(std::vector<std::int64_t>{first}));
  json::Value evidence = json::Value::array();
  evidence.push_back(std::move(atom));
  json::Value waiver = json::Value::object();
  waiver.set("criterion", first);
  waiver.set("reason", "<why it need not be shown>");
  json::Value waive = json::Value::array();
  waive.push_back(std::move(waiver));
  // Waiving is a person's act here (waiver_rules): an agent is told what a person runs.
  Advice waives = context.is_person() ? call("tasks.complete", {{"id", task.id}, {"waive", waive}}) + " waives it"
                                 : Advice("a person waives it: " + person_waives(task, waive));
  return fail(Error(ErrorCode::AcCoverageIncomplete, message)
                  .with_fix(call("tasks.complete", {{"id", task.id}, {"evidence", std::move(evidence)}}) + " covers it; " +
                            std::move(waives))
                  .with_detail("uncovered", std::move(uncovered))
                  .with_detail("covered", json::Value(static_cast<std::int64_t>(covered.covered.size())))
                  .with_detail("waived", json::Value(static_cast<std::int64_t>(covered.waived.size()))));
}

Result<json::Value> task_evidence_json(Context& context, const Task& task) {
  CT_TRY_ASSIGN(std::vector<EvidenceAtom> atoms, context.db().task_evidence(task.id, /*with_replaced=*/false));
  if (atoms.empty()) return json::Value();
  json::Value out = json::Value::object();
  json::Value list = json::Value::array();
  for (const auto& atom : atoms) list.push_back(atom_json(atom));
  out.set("atoms", std::move(list));
  if (!task.acceptance.empty()) {
    Coverage covered = coverage(task.acceptance.size(), atoms, {}, evidence::mode(*context.config) == Mode::Strict);
    json::Value coverage_json = json::Value::object();
    coverage_json.set("covered", json::Value::array_of(covered.covered));
    coverage_json.set("waived", json::Value::array_of(covered.waived));
    coverage_json.set("uncovered", json::Value::array_of(covered.uncovered));
    out.set("coverage", std::move(coverage_json));
  }
  return out;
}

}  // namespace ct::evidence
