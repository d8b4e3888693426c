// github_sync (issue 55): `ct sync github` against the fake GitHub (tests/github/server.mjs, every
// request and response validated against GitHub's OpenAPI description), with the real `ct` binary
// and its GitHub module (libct_github.so, loaded on first use):
//  - 1,000 generated issues (labels, milestones, task lists, references) come in as tasks, after a
//    first dry run that keeps nothing; a second sync right away changes nothing;
//  - agents complete tasks and edit them; people edit issues meanwhile (/_control/edit); the next
//    sync closes the completed issues with a comment, pulls the people's edits, and reports a
//    conflict exactly where both sides changed the same field;
//  - a person's comment comes back as a note of its task (one repository-wide listing a sync), the
//    completion's own comment does not;
//  - a task added under a milestone's epic that opted in (pushNew) is created in that milestone;
//  - a value GitHub refuses (422 Validation Failed; the fake's title limit lowered to one ct's titles
//    reach) is told for its task, sent once, the rest of the sync goes on, and once fixed it goes out;
//  - 5xx answers, a secondary rate limit and a used-up primary limit are waited out (waits scaled to
//    nothing); 5xx past the retries is E_ENGINE_FAILED;
//  - a sync killed mid-way (SIGKILL while it writes its pages) resumes with no duplicate and
//    nothing lost;
//  - /_control/violations is empty at the end.
//
//   ct_e2e_github_sync --ct build/release/ct --server tests/github/server.mjs [--postgresql URL]
// Exit 0 = passed (or skipped: no node, or the fake's packages are not installed), 1 = a check failed.
#include <httplib.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "core/json_parse.h"
#include "e2e/e2e.h"
#include "support/child_process.h"
#include "support/ct_client.h"
#include "support/sandbox.h"

using namespace ct;
using namespace ct::testing;
using ct::e2e::check;
using ct::e2e::failures;
using ct::e2e::without;

namespace {

namespace fs = std::filesystem;

std::string argument(int argc, char** argv, std::string_view name) {
  for (int i = 1; i + 1 < argc; ++i)
    if (argv[i] == name) return argv[i + 1];
  return "";
}

/// The fake's control and state endpoints.
struct Fake {
  httplib::Client client;
  explicit Fake(int port) : client("127.0.0.1", port) { client.set_read_timeout(120); }
  json::Value post(const std::string& path, const std::string& body) {
    auto result = client.Post(path, body, "application/json");
    if (!result) return json::Value();
    auto parsed = json::parse(result->body);
    return parsed ? *parsed : json::Value();
  }
  json::Value get(const std::string& path) {
    auto result = client.Get(path);
    if (!result) return json::Value();
    auto parsed = json::parse(result->body);
    return parsed ? *parsed : json::Value();
  }
};

std::string cut(const json::Value& value) { return value.dump().substr(0, 600); }

/// A list's items; none for anything else.
const json::Value::Array& items(const json::Value& value) {
  static const json::Value::Array none;
  return value.is_array() ? value.as_array() : none;
}

/// An integer's value; -1 for anything else (a failed call's missing data never aborts the scenario).
std::int64_t int_of(const json::Value& value) { return value.is_int() ? value.as_int() : -1; }

/// The first task's id in a find answer's data: a list of tasks, or compact rows {columns, rows}.
std::string first_id(const json::Value& data) {
  if (data.is_array()) return data.as_array().empty() ? "" : data.as_array()[0]["id"].string_or_empty();
  if (!data["columns"].is_array() || !data["rows"].is_array() || data["rows"].as_array().empty()) return "";
  const auto& columns = data["columns"].as_array();
  for (std::size_t i = 0; i < columns.size(); ++i)
    if (columns[i] == json::Value("id")) return data["rows"].as_array()[0].as_array()[i].string_or_empty();
  return "";
}

/// How many requests of `method` to a path ending in `tail` the log holds from `from` on.
std::size_t requests_to(const json::Value& log, std::size_t from, std::string_view method, std::string_view tail) {
  std::size_t count = 0;
  for (std::size_t at = from; log.is_array() && at < log.size(); ++at)
    if (log.as_array()[at]["method"].string_or_empty() == method &&
        log.as_array()[at]["path"].string_or_empty().ends_with(tail))
      ++count;
  return count;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string ct = e2e::ct_argument(argc, argv, "ct_e2e_github_sync");
  if (ct.empty()) return 2;
  const std::string server = argument(argc, argv, "--server");
  const std::string pg_url = e2e::postgresql_argument(argc, argv);
  std::signal(SIGPIPE, SIG_IGN);
  const fs::path node = fs::exists("/usr/bin/node") ? "/usr/bin/node" : "/usr/local/bin/node";
  if (server.empty() || !fs::exists(node) ||
      !fs::exists(fs::path(server).parent_path() / "node_modules" / "@octokit" / "openapi")) {
    std::printf("SKIP: no node, or the fake GitHub's packages are not installed (ctest github/install)\n");
    return 0;
  }
  auto sandbox = sandbox_or_complain("ct-e2e-github");
  if (!sandbox) return 2;
  SpawnOptions options;
  options.pipe_stdin = true;  // the fake exits when this process (its stdin) goes away
  options.stderr_path = (sandbox->root() / "server-stderr.log").string();
  options.env = inherited_environment({});
  auto fake_process = ChildProcess::start({node.string(), server, "--port", "0"}, options);
  if (!fake_process) {
    std::fprintf(stderr, "cannot start the fake GitHub: %s\n", fake_process.error().c_str());
    return 2;
  }
  auto line = fake_process->read_line(std::chrono::seconds(60));
  auto port_json = line ? json::parse(*line) : Result<json::Value>(json::Value());
  if (!port_json || !(*port_json)["port"].is_int()) {
    std::fprintf(stderr, "the fake GitHub did not say its port\n");
    return 2;
  }
  const int port = static_cast<int>((*port_json)["port"].as_int());
  Fake fake(port);
  check(fake.post("/_control/reset", R"({"repos":[{"owner":"octo","name":"app"}]})")["ok"] == json::Value(true),
        "the fake resets");
  json::Value made = fake.post("/_control/generate", R"({"repo":"octo/app","count":1000,"seed":7,"labels":6,)"
                                                     R"("milestones":3,"taskLists":true,"references":true})");
  check(!made.is_null(), "the fake generates 1,000 issues: " + cut(made));

  const fs::path project = sandbox->root() / "project";
  fs::create_directories(project);
  std::vector<std::string> env = without(sandbox->env_for(project), {"GITHUB_TOKEN", "GH_TOKEN", "GITHUB_API_URL"});
  env.push_back("GITHUB_API_URL=http://127.0.0.1:" + std::to_string(port));
  env.push_back("GITHUB_TOKEN=tok-e2e");
  e2e::use_postgresql(env, pg_url, "e2e_github");
  CtCommand person(ct, env, project.string());
  auto run = [&](std::vector<std::string> args, std::chrono::seconds timeout = std::chrono::seconds(300)) {
    args.push_back("--json");
    CtRun ran = person.run(args, timeout);
    return ran.json;
  };
  if (CtRun init = person.run({"init", "--json"}); init.status.code != 0) {
    std::fprintf(stderr, "ct init failed: %s\n", init.out.c_str());
    sandbox->keep();
    return 1;
  }
  // Waits (rate limits, 5xx backoff) count but do not sleep in this test.
  check(succeeded(run({"config", "set", "trackers", R"({"github":{"waitScale":0,"maxWaitSeconds":100000}})"})),
        "a person sets the GitHub tracker's options");

  // 1. The first sync is a dry run; then the import.
  json::Value dry = run({"sync", "github", "--repo", "octo/app"});
  check(succeeded(dry) && dry["data"]["dryRun"] == json::Value(true) && dry["data"]["wouldCreate"].is_int() &&
            int_of(dry["data"]["wouldCreate"]) == 1000,
        "the first sync is a dry run that would create 1,000 tasks: " + cut(dry));
  json::Value after_dry = run({"sync", "status", "--repo", "octo/app"});
  check(succeeded(after_dry) && int_of(after_dry["data"]["linked"]) == 0, "the dry run kept nothing");
  const auto started = std::chrono::steady_clock::now();
  json::Value first = run({"sync", "github", "--repo", "octo/app", "--dry-run=false"});
  const double first_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  check(succeeded(first) && int_of(first["data"]["created"]) == 1000, "1,000 issues come in: " + cut(first));
  std::printf("first sync of 1,000 issues: %.0f ms\n", first_ms);
  json::Value status = run({"sync", "status", "--repo", "octo/app"});
  check(succeeded(status) && int_of(status["data"]["linked"]) >= 1000 && status["data"]["outOfStep"].size() == 0,
        "sync status: 1,000 linked (and the milestones' epics), nothing out of step: " + cut(status));
  json::Value again = run({"sync", "github", "--repo", "octo/app"});
  check(succeeded(again) && int_of(again["data"]["created"]) == 0 && int_of(again["data"]["pushed"]) == 0 &&
            int_of(again["data"]["updated"]) == 0,
        "a second sync at once changes nothing: " + cut(again));

  // 2. Agents work; people edit meanwhile.
  json::Value state = fake.get("/_control/state");
  std::vector<std::int64_t> open_numbers;
  for (const auto& issue : items(state["issues"]))
    if (issue["state"].string_or_empty() == "open" && !issue.contains("pull_request") && open_numbers.size() < 4)
      open_numbers.push_back(int_of(issue["number"]));
  check(open_numbers.size() == 4, "four open issues to work on");
  // The tasks of those issues, by their titles (the generator's are unique).
  std::map<std::int64_t, std::string> task_for;
  for (auto number : open_numbers) {
    std::string title;
    for (const auto& issue : items(state["issues"]))
      if (int_of(issue["number"]) == number) title = issue["title"].string_or_empty();
    json::Value found = run({"find", title, "--limit", "3"});
    if (!succeeded(found)) continue;
    if (std::string id = first_id(found["data"]); !id.empty()) task_for[number] = id;
  }
  check(task_for.size() == 4, "the four issues' tasks are found");
  const std::int64_t done_number = open_numbers[0], both_number = open_numbers[1], here_number = open_numbers[2],
                     there_number = open_numbers[3];
  check(succeeded(run({"complete", task_for[done_number], "--notes", "Fixed in abc123; tests pass"})),
        "an agent completes a task");
  check(succeeded(run({"update", task_for[both_number], "--title", "Title from the agent"})), "an agent edits a title");
  check(succeeded(run({"update", task_for[here_number], "--description", "Description from the agent"})),
        "an agent edits a description");
  auto edit = [&](std::int64_t number, std::string_view field, std::string_view value) {
    json::Value body = json::Value::object();
    body.set("repo", "octo/app");
    body.set("number", number);
    body.set("as", "alice");
    body.set(field, value);
    return fake.post("/_control/edit", body.dump());
  };
  edit(both_number, "title", "Title from a person");
  edit(there_number, "title", "Renamed by a person");
  edit(there_number, "comment", "Please keep the old name in the changelog.");  // alice comments

  // 3. Faults on the way: two 502s on the issues list and a secondary rate limit are waited out.
  check(fake.post("/_control/faults", R"([{"method":"GET","path":"/issues$|/issues\\?","status":502,"times":2},)"
                                      R"({"method":"PATCH","status":403,"secondary":true,"retryAfter":30,"times":1},)"
                                      R"({"method":"GET","path":"/comments","status":403,"remaining0":true,"times":1}])")
                ["ok"] == json::Value(true),
        "faults are set");
  json::Value second = run({"sync", "github", "--repo", "octo/app"});
  check(succeeded(second), "the sync waits out 502s, a secondary rate limit and a used-up primary limit: " + cut(second));
  check(int_of(second["data"]["conflicts"]) == 1, "exactly one conflict: " + cut(second));
  const json::Value& conflicts = second["data"]["newConflicts"];
  check(items(conflicts).size() == 1 && items(conflicts)[0]["id"].string_or_empty() == task_for[both_number] &&
            items(conflicts)[0]["fields"].size() == 1 &&
            items(conflicts)[0]["fields"]["title"]["there"].string_or_empty() == "Title from a person",
        "the conflict is the title both changed, with both values: " + cut(conflicts));
  state = fake.get("/_control/state");
  auto issue = [&](std::int64_t number) {
    for (const auto& entry : items(state["issues"]))
      if (int_of(entry["number"]) == number) return entry;
    return json::Value();
  };
  check(issue(done_number)["state"].string_or_empty() == "closed" &&
            issue(done_number)["state_reason"].string_or_empty() == "completed",
        "the completed task's issue is closed as completed");
  bool commented = false;
  for (const auto& comment : items(state["comments"]))
    commented = commented || (e2e::contains(comment["body"].string_or_empty(), "Fixed in abc123") &&
                              comment["issue_url"].string_or_empty().ends_with("/" + std::to_string(done_number)));
  check(commented || state["comments"].dump().find("Fixed in abc123") != std::string::npos,
        "the completion's notes are a comment on the issue");
  check(issue(here_number)["body"].string_or_empty().starts_with("Description from the agent"),
        "the agent's description is pushed");
  check(issue(both_number)["title"].string_or_empty() == "Title from a person", "a conflict changes neither side");
  json::Value renamed = run({"show", task_for[there_number]});
  check(renamed["data"]["title"].string_or_empty() == "Renamed by a person", "the person's edit is pulled");
  check(e2e::contains(renamed["data"]["notes"].dump(), "@alice commented on octo/app#" + std::to_string(there_number)) &&
            e2e::contains(renamed["data"]["notes"].dump(), "Please keep the old name in the changelog."),
        "the person's comment is a note of the task, with its author: " + cut(renamed["data"]["notes"]));
  check(int_of(second["data"]["notes"]) >= 1, "the sync says it kept notes: " + cut(second));
  json::Value shown = run({"show", task_for[both_number]});
  check(items(shown["data"]["sync"]).size() == 1 && items(shown["data"]["sync"])[0]["state"].string_or_empty() == "conflict",
        "tasks.show shows the link in conflict: " + cut(shown["data"]["sync"]));
  fake.post("/_control/faults", R"([{"method":"PATCH","status":500,"times":4}])");
  check(succeeded(run({"update", task_for[here_number], "--title", "Another title from the agent"})),
        "an agent edits again");
  json::Value failing = run({"sync", "github", "--repo", "octo/app"});
  check(!succeeded(failing) && error_code(failing) == "E_ENGINE_FAILED", "5xx beyond the retries is E_ENGINE_FAILED");
  json::Value resolved = run({"sync", "github", "--repo", "octo/app", "--resolve", task_for[both_number], "--take", "here"});
  check(succeeded(resolved) && int_of(resolved["data"]["conflicts"]) == 0, "the conflict resolved: " + cut(resolved));
  state = fake.get("/_control/state");
  check(issue(both_number)["title"].string_or_empty() == "Title from the agent", "the kept side goes out");
  json::Value done_task = run({"show", task_for[done_number]});
  check(!e2e::contains(done_task["data"]["notes"].dump(), "Done in CLEO"),
        "the completion's own comment is not pulled back as a note: " + cut(done_task["data"]["notes"]));

  // 3b. Comments are read in one listing of the repository, not one request per issue.
  json::Value api_log = fake.get("/_control/log");
  std::size_t from = api_log.is_array() ? api_log.size() : 0;
  edit(here_number, "comment", "One more thought.");
  json::Value quiet = run({"sync", "github", "--repo", "octo/app"});
  api_log = fake.get("/_control/log");
  check(succeeded(quiet) && int_of(quiet["data"]["notes"]) == 1 && requests_to(api_log, from, "GET", "/issues/comments") == 1 &&
            requests_to(api_log, from, "GET", "/comments") == 1,
        "a sync reads the comments once, repository-wide: " + cut(quiet));

  // 3c. A task created here under a milestone's epic (pushNew) is created in that milestone.
  const std::string epic = first_id(run({"find", "Milestone 1", "--limit", "1"})["data"]);
  check(!epic.empty(), "the epic of Milestone 1 is found");
  json::Value added = run({"add", "A task made here for the milestone", "--parent", epic});
  check(succeeded(added), "an agent adds a task under the milestone's epic: " + cut(added));
  json::Value opted = run({"sync", "github", "--repo", "octo/app", "--push-new", epic});
  check(succeeded(opted) && int_of(opted["data"]["createdThere"]) == 1, "the new task goes out: " + cut(opted));
  state = fake.get("/_control/state");
  bool in_milestone = false;
  for (const auto& entry : items(state["issues"]))
    in_milestone = in_milestone || (entry["title"].string_or_empty() == "A task made here for the milestone" &&
                                    entry["milestone"]["title"].string_or_empty() == "Milestone 1");
  check(in_milestone, "its issue is in Milestone 1");

  // 3d. GitHub refuses a value (422 Validation Failed): told for that task, not retried, the rest
  // goes on; sent again once fixed. ct keeps titles within 200 characters, GitHub takes 256: the
  // fake's limit is lowered so that a title ct holds reaches it.
  check(fake.post("/_control/limits", R"({"title":40})")["ok"] == json::Value(true), "GitHub's title limit lowered");
  check(succeeded(run({"update", task_for[here_number], "--title", "A title that is longer than forty characters"})) &&
            succeeded(run({"update", task_for[there_number], "--description", "Pushed while another is refused"})),
        "agents edit two tasks");
  api_log = fake.get("/_control/log");
  from = api_log.is_array() ? api_log.size() : 0;
  json::Value refused = run({"sync", "github", "--repo", "octo/app"});
  api_log = fake.get("/_control/log");
  const json::Value& why = items(refused["data"]["refused"]).empty() ? json::Value() : items(refused["data"]["refused"])[0];
  check(succeeded(refused) && items(refused["data"]["refused"]).size() == 1 &&
            why["id"].string_or_empty() == task_for[here_number] && why["field"].string_or_empty() == "title" &&
            e2e::contains(why["message"].string_or_empty(), "title is too long (maximum is 40 characters)") &&
            e2e::contains(why["fix"].string_or_empty(), "tasks.update"),
        "the refusal is told for its task, with GitHub's message and a fix: " + cut(refused));
  check(requests_to(api_log, from, "PATCH", "/issues/" + std::to_string(here_number)) == 1,
        "the refused edit is sent once, not retried");
  state = fake.get("/_control/state");
  check(issue(there_number)["body"].string_or_empty().starts_with("Pushed while another is refused"),
        "the rest of the sync goes on");
  json::Value out_of_step = run({"sync", "status", "--repo", "octo/app"});
  check(e2e::contains(out_of_step["data"]["outOfStep"].dump(), "refused"), "sync status lists the refused task");
  check(succeeded(run({"update", task_for[here_number], "--title", "A shorter title"})), "an agent fixes the title");
  json::Value fixed = run({"sync", "github", "--repo", "octo/app"});
  state = fake.get("/_control/state");
  check(succeeded(fixed) && !fixed["data"].contains("refused") &&
            issue(here_number)["title"].string_or_empty() == "A shorter title",
        "fixed, it goes out at the next sync: " + cut(fixed));
  fake.post("/_control/limits", R"({"title":256})");

  // 4. Killed mid-way: a fresh project syncs the same repository; SIGKILL once pages are being kept.
  const fs::path second_project = sandbox->root() / "second";
  fs::create_directories(second_project);
  std::vector<std::string> env2 = env;
  for (auto& entry : env2) {
    if (entry.starts_with("CLEO_ROOT=")) entry = "CLEO_ROOT=" + second_project.string();
    if (entry.starts_with("CLEO_DATABASE_SCHEMA=")) entry += "_b";
  }
  CtCommand second_person(ct, env2, second_project.string());
  check(succeeded(second_person.run({"init", "--json"}).json), "a second project");
  second_person.run({"config", "set", "trackers", R"({"github":{"waitScale":0}})", "--json"});
  SpawnOptions sync_options;
  sync_options.env = env2;
  sync_options.cwd = second_project.string();
  const json::Value log_before = fake.get("/_control/log");
  const std::size_t seen_before = log_before.is_array() ? log_before.size() : 0;
  auto killed = ChildProcess::start({ct, "sync", "github", "--repo", "octo/app", "--dry-run=false", "--json"}, sync_options);
  check(killed.has_value(), "the sync to kill starts");
  if (killed) {
    // Kill it once it has asked for its fourth page of issues: three pages are kept by then.
    for (int i = 0; i < 3000; ++i) {
      json::Value log = fake.get("/_control/log");
      std::size_t pages = 0;
      if (log.is_array())
        for (std::size_t at = seen_before; at < log.size(); ++at)
          if (log.as_array()[at]["path"].string_or_empty().ends_with("/issues") &&
              log.as_array()[at]["method"].string_or_empty() == "GET")
            ++pages;
      if (pages >= 4) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    killed->kill(SIGKILL);
    killed->wait();
  }
  json::Value part = second_person.run({"sync", "status", "--repo", "octo/app", "--json"}).json;
  check(part["data"]["linked"].is_int() && int_of(part["data"]["linked"]) > 0 && int_of(part["data"]["linked"]) < 1000,
        "the killed sync kept some pages, not all: " + cut(part["data"]["linked"]));
  json::Value resumed =
      second_person.run({"sync", "github", "--repo", "octo/app", "--dry-run=false", "--json"}, std::chrono::seconds(300)).json;
  check(succeeded(resumed), "the killed sync resumes: " + cut(resumed));
  json::Value count = second_person.run({"sync", "status", "--repo", "octo/app", "--json"}).json;
  json::Value first_count = run({"sync", "status", "--repo", "octo/app"});
  check(count["data"]["linked"] == first_count["data"]["linked"],
        "after the resume every issue is linked once, as in the first project: " + cut(count["data"]["linked"]) +
            " vs " + cut(first_count["data"]["linked"]));

  json::Value violations = fake.get("/_control/violations");
  check(violations.is_array() && violations.empty(), "no request or response broke GitHub's contract: " + cut(violations));
  if (failures > 0) {
    sandbox->keep();
    std::fprintf(stderr, "%d check(s) failed; the sandbox is kept at %s\n", failures, sandbox->root().c_str());
    return 1;
  }
  return 0;
}
