// The original CLEO's names (issue 37, domains/original_names.h): its operation names run ours with a
// warning naming ours, its param names are put under ours, through the same gateway rules; the
// names it had without an equivalent here get a did-you-mean; help level 2 shows them, levels 0 and
// 1 never do.
#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "disclosure/help_levels.h"
#include "gateway/mcp_syntax.h"
#include "gateway/product.h"
#include "domains/original_names.h"
#include "domains/pipeline.h"
#include "unit/test_support.h"

using namespace ct;
using ct::test::code_of;
using ct::test::parse_json;

namespace {

bool has_warning(const Envelope& envelope, std::string_view text) {
  for (const auto& warning : test::warnings_of(envelope))
    if (warning == text) return true;
  return false;
}

std::string full(std::string_view domain, std::string_view name) { return std::string(domain) + "." + std::string(name); }

/// Every operation name of the original CLEO at v0.91.0 (gateways/query.ts and mutate.ts: the 107
/// of its registry; then what its domain handlers also accepted), with its tool.
struct OriginalOperation {
  Gateway gateway;
  std::string_view domain;
  std::string_view name;
};
const std::vector<OriginalOperation>& original_operations() {
  static const std::vector<OriginalOperation> kOperations = [] {
    std::vector<OriginalOperation> out;
    auto add = [&](Gateway gateway, std::string_view domain, std::initializer_list<std::string_view> names) {
      for (auto name : names) out.push_back({gateway, domain, name});
    };
    const Gateway q = Gateway::Query, m = Gateway::Mutate;
    add(q, "tasks", {"get", "list", "find", "exists", "tree", "blockers", "deps", "analyze", "next", "relates"});
    add(m, "tasks", {"create", "update", "complete", "delete", "archive", "unarchive", "reparent", "promote", "reorder",
                     "reopen", "relates.add"});
    add(q, "session", {"status", "list", "show", "focus.get", "history"});
    add(m, "session", {"start", "end", "resume", "suspend", "focus.set", "focus.clear", "gc"});
    add(q, "orchestrate", {"status", "next", "ready", "analyze", "context", "waves", "skill.list"});
    add(m, "orchestrate", {"startup", "spawn", "validate", "parallel.start", "parallel.end"});
    add(q, "research", {"show", "list", "query", "pending", "stats", "manifest.read"});
    add(m, "research", {"inject", "link", "manifest.append", "manifest.archive"});
    add(q, "lifecycle", {"check", "status", "history", "gates", "prerequisites"});
    add(m, "lifecycle", {"progress", "skip", "reset", "gate.pass", "gate.fail"});
    add(q, "validate", {"schema", "protocol", "task", "manifest", "output", "compliance.summary",
                        "compliance.violations", "test.status", "test.coverage"});
    add(m, "validate", {"compliance.record", "test.run"});
    add(m, "release", {"prepare", "changelog", "commit", "tag", "push", "gates.run", "rollback"});
    add(q, "system", {"version", "doctor", "config.get", "stats", "context", "job.status", "job.list", "dash",
                      "roadmap", "labels", "compliance", "log", "archive-stats", "sequence"});
    add(m, "system", {"init", "config.set", "backup", "restore", "migrate", "sync", "cleanup", "job.cancel",
                      "safestop", "uncancel"});
    // Its handlers' other names.
    add(q, "tasks", {"show", "depends", "stats", "export", "history", "lint", "batch-validate", "manifest"});
    add(m, "tasks", {"add", "restore", "import"});
    add(q, "session", {"focus-show", "stats"});
    add(m, "session", {"switch", "focus-set", "focus-clear", "archive", "cleanup"});
    add(q, "orchestrate", {"progress"});
    add(m, "orchestrate", {"start", "pause", "resume", "abort", "analyze"});
    add(q, "research", {"validate", "search", "export", "manifest.validate", "manifest.summary"});
    add(m, "research", {"unlink", "import", "aggregate", "report"});
    add(q, "lifecycle", {"stages", "validate", "report", "export"});
    add(m, "lifecycle", {"record", "enforce", "unskip", "import"});
    add(q, "validate", {"report", "stats", "compliance", "all"});
    add(m, "validate", {"fix", "schema", "protocol", "session", "research", "lifecycle"});
    add(q, "release", {"version", "verify", "changelog"});
    add(m, "release", {"bump", "publish"});
    add(q, "system", {"metrics", "health", "config", "diagnostics", "help"});
    add(m, "system", {"audit"});
    return out;
  }();
  return kOperations;
}

/// The original's names with nothing like them here: the error still lists what there is.
const std::set<std::string>& without_equivalent() {
  static const std::set<std::string> kNames = {
      "validate.test.status", "validate.test.coverage", "system.job.status", "system.job.list", "system.roadmap",
      "system.archive-stats", "system.sequence", "system.sync", "system.job.cancel", "session.stats",
      "research.export", "research.import", "research.aggregate", "research.report",
      "lifecycle.report", "lifecycle.export", "lifecycle.enforce", "lifecycle.import", "validate.report",
      "validate.stats", "validate.all", "validate.session", "validate.research", "validate.lifecycle",
      "release.version", "release.verify", "system.audit"};
  return kNames;
}

/// system.health's data without what it measures of the disk: the free space other processes
/// change between two calls (the rest must be the same word for word).
json::Value without_free_space(json::Value data) {
  if (!data["checks"].is_array()) return data;
  json::Value checks = json::Value::array();
  for (json::Value check : data["checks"].as_array()) {
    if (check["name"] == json::Value("disk")) check.erase("detail");
    checks.push_back(std::move(check));
  }
  data.set("checks", std::move(checks));
  return data;
}

}  // namespace

TEST_CASE("every original name runs its operation, the reply naming ours", "[original-names]") {
  test::Project seeded;
  seeded.add(R"({"title":"Ship the login page"})");
  std::size_t names = 0;
  for (const auto& spec : registry().operations()) {
    for (std::string_view original : spec.original_names) {
      ++names;
      INFO(std::string(original) + " → " + spec.full_name());
      const auto dot = original.find('.');
      const std::string domain(original.substr(0, dot)), name(original.substr(dot + 1));
      auto routed = pipeline::route(registry(), {spec.gateway, domain, name, json::Value()});
      REQUIRE(routed);
      CHECK(*routed == &spec);
      // Called with the first example's params, as a working call of ours: it runs as ours does (or
      // fails as ours does), with the warning in _meta whichever way it went.
      test::Project project(seeded);
      json::Value params = spec.examples.empty() ? json::Value::object() : parse_json(spec.examples.front().params_json);
      params.set("meta", true);
      Envelope envelope = spec.gateway == Gateway::Query ? project.query(domain, name, params.dump())
                                                         : project.mutate(domain, name, params.dump());
      CHECK(has_warning(envelope, original_names::operation_warning(original, spec)));
      CHECK(test::warnings_of(envelope).back() == std::string(original) + " is the original CLEO's name of " + spec.full_name() +
                                            "; call " + spec.full_name());
      if (envelope.success) {
        CHECK(envelope.meta["domain"] == json::Value(spec.domain));
        CHECK(envelope.meta["operation"] == json::Value(spec.name));
      } else {
        CHECK(code_of(envelope) != "E_INVALID_OPERATION");
        CHECK(code_of(envelope) != "E_INVALID_GATEWAY");
      }
      if (spec.gateway == Gateway::Query) {
        // A read answers what ours answers, word for word.
        params.erase("meta");
        Envelope ours = project.query(std::string(spec.domain), std::string(spec.name), params.dump());
        Envelope theirs = project.query(domain, name, params.dump());
        CHECK(theirs.success == ours.success);
        if (ours.success) CHECK(without_free_space(theirs.data) == without_free_space(ours.data));
      }
    }
  }
  CHECK(names >= 28);
}

TEST_CASE("an original name in another domain runs there: orchestrate.skill.list, session.focus.set", "[original-names]") {
  test::Project project;
  Envelope skills = project.query("orchestrate", "skill.list");
  REQUIRE(skills.success);
  CHECK(skills.data == project.query("skills", "list").data);
  CHECK(test::warnings_of(skills).back() == "orchestrate.skill.list is the original CLEO's name of skills.list; call skills.list");

  project.add(R"({"title":"Write the parser"})");
  REQUIRE(project.mutate("session", "start", R"({"scope":"global"})").success);
  Envelope focus = project.mutate("session", "focus.set", R"({"taskId":"T001"})");
  REQUIRE(focus.success);
  CHECK(has_warning(focus, "session.focus.set is the original CLEO's name of tasks.start; call tasks.start"));
  CHECK(has_warning(focus, "taskId is the original CLEO's name of id; send id"));
  Envelope current = project.query("session", "focus.get");
  REQUIRE(current.success);
  CHECK(current.data["id"] == json::Value("T001"));
  CHECK(project.query("tasks", "show", R"({"id":"T001"})").data["status"] == json::Value("active"));
  CHECK(project.mutate("session", "focus.clear").success);
  CHECK(project.query("tasks", "show", R"({"id":"T001"})").data["status"] == json::Value("pending"));
}

TEST_CASE("session.switch {sessionId} resumes and binds that session, as the original's switch did", "[original-names]") {
  test::Project project;
  Envelope first = project.mutate("session", "start", R"({"scope":"global","name":"first"})");
  REQUIRE(first.success);
  const std::string id = first.data["id"].as_string();
  REQUIRE(project.mutate("session", "suspend").success);
  project.set_session("");
  Envelope switched = project.mutate("session", "switch", R"({"sessionId":")" + id + R"("})");
  INFO(to_json(switched, McpAdvice(registry())));
  REQUIRE(switched.success);
  CHECK(switched.data["id"] == json::Value(id));
  CHECK(switched.data["status"] == json::Value("active"));
  CHECK(project.session() == id);
  CHECK(test::warnings_of(switched).back() == "session.switch is the original CLEO's name of session.resume; call session.resume");
  // Named by neither id nor sessionId, with none bound: which session is the question.
  project.set_session("");
  CHECK(code_of(project.mutate("session", "resume")) == "E_SESSION_REQUIRED");
}

TEST_CASE("taskId is taken for id, with a warning; given with a different id it is refused", "[original-names]") {
  test::Project project;
  project.add(R"({"title":"First task"})");
  project.add(R"({"title":"Second task"})");
  Envelope shown = project.query("tasks", "show", R"({"taskId":"T001"})");
  REQUIRE(shown.success);
  CHECK(shown.data["id"] == json::Value("T001"));
  CHECK(test::warnings_of(shown) == std::vector<std::string>{"taskId is the original CLEO's name of id; send id"});

  // A call that fails still says so: the agent learns our name either way.
  Envelope missing = project.mutate("tasks", "complete", R"({"taskId":"T099"})");
  CHECK(code_of(missing) == "E_NOT_FOUND");
  CHECK(test::warnings_of(missing) == std::vector<std::string>{"taskId is the original CLEO's name of id; send id"});

  // Both names of one task (spelled two ways) are one param.
  Envelope same = project.query("tasks", "show", R"({"taskId":"t1","id":"T001"})");
  REQUIRE(same.success);
  CHECK(same.data["id"] == json::Value("T001"));

  Envelope differ = project.mutate("tasks", "complete", R"({"taskId":"T001","id":"T002"})");
  REQUIRE_FALSE(differ.success);
  CHECK(code_of(differ) == "E_INVALID_PARAMS");
  CHECK(differ.error->details["field"] == json::Value("taskId"));
  CHECK(differ.error->message ==
        "taskId and id differ ('T001', 'T002'): taskId is the original CLEO's name of id; send id alone");
  CHECK(project.query("tasks", "show", R"({"id":"T001"})").data["status"] == json::Value("pending"));
  CHECK(project.query("tasks", "show", R"({"id":"T002"})").data["status"] == json::Value("pending"));

  // A mutation under both original names: the operation's and the param's.
  Envelope relate = project.mutate("tasks", "relates.add", R"({"taskId":"T001","targetId":"T002","type":"relates-to"})");
  REQUIRE(relate.success);
  CHECK(has_warning(relate, "taskId is the original CLEO's name of id; send id"));
  CHECK(has_warning(relate, "targetId is the original CLEO's name of target; send target"));
  CHECK(test::warnings_of(relate).back() == "tasks.relates.add is the original CLEO's name of tasks.relate; call tasks.relate");
  CHECK(project.query("tasks", "relates", R"({"id":"T001"})").success);

  // An operation whose own param is called taskId keeps it (research.link: id is the entry).
  const OperationSpec* link = registry().find("research", "link");
  REQUIRE(link);
  CHECK(original_names::params_of(*link).size() == 1);  // researchId, not taskId
  json::Value params = parse_json(R"({"researchId":"R1","taskId":"T001"})");
  auto taken = original_names::take_params(*link, params);
  REQUIRE(taken);
  CHECK(params == parse_json(R"({"taskId":"T001","id":"R1"})"));
  // Where id is no task (a session, a memory entry), taskId is not id: refused as unknown.
  Envelope memory = project.query("memory", "show", R"({"taskId":"T001"})");
  CHECK(code_of(memory) == "E_INVALID_PARAMS");
  CHECK(memory.error->message.starts_with("unknown parameter 'taskId'"));
}

TEST_CASE("every row of the param table names params the operations have", "[original-names]") {
  for (const auto& row : original_names::params()) {
    INFO(std::string(row.original) + " → " + std::string(row.ours));
    for (auto name : row.operations) {
      INFO(name);
      const auto dot = name.find('.');
      const OperationSpec* spec = registry().find(name.substr(0, dot), name.substr(dot + 1));
      REQUIRE(spec);
      auto rows = original_names::params_of(*spec);
      CHECK(std::find(rows.begin(), rows.end(), &row) != rows.end());
    }
  }
  // The original's lifecycle names: lifecycle.check {taskId, targetStage} is ours {id, stage}.
  test::Project project;
  project.add(R"({"title":"Auth epic","type":"epic"})");
  Envelope check = project.query("lifecycle", "check", R"({"epicId":"T001","targetStage":"research"})");
  INFO(to_json(check, McpAdvice(registry())));
  REQUIRE(check.success);
  CHECK(check.warnings.size() == 2);
}

TEST_CASE("an original name is refused through the wrong tool, as ours would be", "[original-names]") {
  test::Project project;
  Envelope create = project.query("tasks", "create", R"({"title":"Through the wrong tool"})");
  CHECK(code_of(create) == "E_INVALID_GATEWAY");
  CHECK(create.error->message ==
        "tasks.create (the original CLEO's name of tasks.add) is a mutate operation; call it through cleo_mutate");
  CHECK(mcp_text(create.error->fix, registry()).starts_with("cleo_mutate {domain:'tasks', operation:'add'"));
  CHECK(code_of(project.mutate("tasks", "get", R"({"taskId":"T001"})")) == "E_INVALID_GATEWAY");
  CHECK(code_of(project.mutate("orchestrate", "skill.list")) == "E_INVALID_GATEWAY");
  CHECK(project.query("tasks", "list").note == ErrorCode::NoData);  // nothing was created
}

TEST_CASE("every name of the original CLEO runs, or is refused with somewhere to go", "[original-names]") {
  test::Project project;
  for (const auto& op : original_operations()) {
    const std::string name = full(op.domain, op.name);
    INFO(name << " through " << tool_name(op.gateway));
    auto routed = pipeline::route(registry(), {op.gateway, std::string(op.domain), std::string(op.name), json::Value()});
    if (routed) {
      CHECK_FALSE(without_equivalent().contains(name));
      continue;
    }
    const Error& error = routed.error();
    if (error.code == ErrorCode::InvalidGateway) continue;  // ours is on the other tool, which the error names
    REQUIRE(error.code == ErrorCode::InvalidOperation);
    CHECK_FALSE(error.details["valid"].empty());
    CHECK_FALSE(error.fix.empty());
    if (without_equivalent().contains(name)) continue;
    // A suggestion that runs: its own example, through its own tool.
    REQUIRE(error.details["didYouMean"].is_string());
    const Call* fix = error.fix.only_call();
    REQUIRE(fix);
    CHECK((fix->operation == error.details["didYouMean"].as_string() ||
           fix->operation == full(op.domain, error.details["didYouMean"].as_string())));
  }
}

TEST_CASE("an original name with no equivalent is pointed at what does its job", "[original-names]") {
  test::Project project;
  struct Case {
    Gateway gateway;
    std::string_view domain, name, meant, tool;
  };
  for (const auto& c : {Case{Gateway::Mutate, "release", "prepare", "ship", "cleo_mutate"},
                        Case{Gateway::Mutate, "system", "safestop", "session.end", "cleo_mutate"},
                        Case{Gateway::Query, "tasks", "manifest", "research.list", "cleo_query"},
                        Case{Gateway::Query, "system", "context", "orchestrate.context", "cleo_query"},
                        Case{Gateway::Query, "lifecycle", "prerequisites", "check", "cleo_query"},
                        Case{Gateway::Mutate, "orchestrate", "parallel.start", "ready", "cleo_query"}}) {
    INFO(c.domain << "." << c.name);
    Envelope refused = c.gateway == Gateway::Query ? project.query(std::string(c.domain), std::string(c.name))
                                                   : project.mutate(std::string(c.domain), std::string(c.name));
    CHECK(code_of(refused) == "E_INVALID_OPERATION");
    CHECK(refused.error->details["didYouMean"] == json::Value(c.meant));
    CHECK(refused.error->message.ends_with("(did you mean '" + std::string(c.meant) + "'?)"));
    CHECK(mcp_text(refused.error->fix, registry()).starts_with(std::string(c.tool) + " "));
  }
  // release.ship's fix is its dry run: what the original's prepare did.
  Envelope prepare = project.mutate("release", "prepare", R"({"version":"1.2.0","type":"minor"})");
  CHECK(mcp_text(prepare.error->fix, registry()) ==
        R"(cleo_mutate {domain:'release', operation:'ship', params:{"version":"1.0.0","dryRun":true}})");
}

TEST_CASE("the registry's original names are unambiguous and leave no alias dead", "[original-names][registry]") {
  std::set<std::string> seen;
  for (const auto& spec : registry().operations()) {
    for (std::string_view original : spec.original_names) {
      INFO(original);
      const auto dot = original.find('.');
      REQUIRE(dot != std::string_view::npos);
      const std::string domain(original.substr(0, dot));
      CHECK(std::find(canonical_domains().begin(), canonical_domains().end(), domain) != canonical_domains().end());
      CHECK_FALSE(registry().find(domain, original.substr(dot + 1)));  // a name of ours always means ours
      CHECK(seen.insert(std::string(original)).second);
      // A suggestion that the original name now runs would never be made.
      CHECK_FALSE(registry().find_alias(domain, original.substr(dot + 1), Gateway::Query));
      CHECK_FALSE(registry().find_alias(domain, original.substr(dot + 1), Gateway::Mutate));
    }
    for (std::string_view alias : spec.aliases) {
      INFO(spec.full_name() << " suggests for " << alias);
      // An alias of another domain names a domain there is, and no operation of it.
      const auto dot = alias.find('.');
      const std::string domain(dot == std::string_view::npos ? std::string(spec.domain) : std::string(alias.substr(0, dot)));
      if (std::find(canonical_domains().begin(), canonical_domains().end(), domain) == canonical_domains().end()) {
        CHECK_FALSE(registry().find(spec.domain, alias));  // a word with a dot, of its own domain ("gates.run")
        continue;
      }
      CHECK_FALSE(registry().find(domain, dot == std::string_view::npos ? alias : alias.substr(dot + 1)));
    }
  }
}

TEST_CASE("help level 2 names an operation's original names; levels 0 and 1 never do", "[original-names][help]") {
  const OperationSpec* deps = registry().find("tasks", "deps");
  REQUIRE(deps);
  auto text = disclosure::level2(registry(), *deps);
  REQUIRE(text);
  CHECK(text->find("original CLEO names (accepted, with a warning): tasks.depends, taskId for id") != std::string::npos);
  auto skills = disclosure::level2(registry(), *registry().find("skills", "list"));
  REQUIRE(skills);
  CHECK(skills->find("original CLEO names (accepted, with a warning): orchestrate.skill.list.") != std::string::npos);
  auto plain = disclosure::level2(registry(), *registry().find("system", "version"));
  REQUIRE(plain);
  CHECK(plain->find("original CLEO") == std::string::npos);

  std::vector<std::string> levels;
  levels.push_back(*disclosure::level0(registry()));
  levels.push_back(*disclosure::level1(registry(), ""));
  for (const auto& domain : registry().domains()) levels.push_back(*disclosure::level1(registry(), domain));
  for (const auto& level : levels) {
    // (tasks.import's summary names the original CLEO as a source: only its names are kept out.)
    CHECK(level.find("original CLEO names") == std::string::npos);
    for (const auto& spec : registry().operations())
      for (std::string_view original : spec.original_names) {
        INFO(original);
        CHECK(level.find(std::string(original) + " ") == std::string::npos);
        CHECK(level.find(std::string(original) + ",") == std::string::npos);
        CHECK(level.find(std::string(original) + "\n") == std::string::npos);
      }
    CHECK(level.find("taskId for id") == std::string::npos);
  }

  // Help for an original name is the help of ours.
  test::Project project;
  Envelope help = project.query("system", "help", R"({"domain":"tasks","operation":"depends"})");
  REQUIRE(help.success);
  CHECK(help.data["content"].as_string().starts_with("## tasks.deps (cleo_query)"));
  Envelope dotted = project.query("system", "help", R"({"operation":"orchestrate.skill.list"})");
  REQUIRE(dotted.success);
  CHECK(dotted.data["content"].as_string().starts_with("## skills.list (cleo_query)"));
}
