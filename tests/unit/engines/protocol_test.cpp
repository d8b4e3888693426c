// The protocol stack's rule table and checker (engines/rules/protocol.h): each rule against evidence
// built by hand — what passes, what fails with which message, and what is skipped because this
// subject lacks the evidence.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>

#include "core/sha256.h"
#include "gateway/mcp_syntax.h"
#include "engines/rules/protocol.h"
#include "unit/temp_dir.h"
#include "gateway/product.h"

using namespace ct;

namespace {

Task task(std::string id, std::string title = "A task", std::string parent = "") {
  Task t;
  t.id = std::move(id);
  t.title = std::move(title);
  t.parent = std::move(parent);
  return t;
}

ResearchEntry entry(std::string id, std::string agent_type, std::vector<std::string> findings = {"a", "b", "c"}) {
  ResearchEntry e;
  e.id = std::move(id);
  e.file = "docs/out.md";
  e.title = "Output";
  e.agent_type = std::move(agent_type);
  e.key_findings = std::move(findings);
  e.linked_tasks = {"T001"};
  return e;
}

ProjectFile file(std::string content, std::string path = "docs/out.md") {
  ProjectFile f;
  f.path = std::move(path);
  f.state = FileState::Read;
  f.size = content.size();
  f.sha256 = sha256_hex(content);
  f.content = std::move(content);
  return f;
}

/// Evidence of an output: the entry, its file (checksum recorded) and its task.
ProtocolEvidence output(std::string agent_type, std::string content) {
  ProtocolEvidence evidence;
  evidence.task = task("T001");
  evidence.entry = entry("T001-out", std::move(agent_type));
  evidence.output = file(std::move(content));
  evidence.entry->file_checksum = evidence.output->sha256;
  return evidence;
}

RuleStatus status(const ProtocolReport& report, std::string_view id) {
  for (const auto& result : report.rules)
    if (result.rule->id == id) return result.status;
  FAIL("no rule " << id);
  return RuleStatus::Skipped;
}

std::string message(const ProtocolReport& report, std::string_view id) {
  for (const auto& result : report.rules)
    if (result.rule->id == id) return result.message;
  return "";
}

/// The rules that failed, in order.
std::vector<std::string> failures(const ProtocolReport& report) {
  std::vector<std::string> out;
  for (const auto& result : report.rules)
    if (result.status == RuleStatus::Fail) out.emplace_back(result.rule->id);
  return out;
}

const std::string kResearch =
    "# Auth options\n\n## Summary\nOAuth fits.\n\n## References\n- https://oauth.net/2/\n";

}  // namespace

TEST_CASE("the protocol table: nine protocols, their codes and well-formed rules", "[engines][protocol]") {
  const std::map<std::string, std::pair<std::string, ErrorCode>> expected = {
      {"research", {"RSCH", ErrorCode::ProtocolResearch}},
      {"consensus", {"CONS", ErrorCode::ProtocolConsensus}},
      {"specification", {"SPEC", ErrorCode::ProtocolSpecification}},
      {"decomposition", {"DCMP", ErrorCode::ProtocolDecomposition}},
      {"implementation", {"IMPL", ErrorCode::ProtocolImplementation}},
      {"contribution", {"CONT", ErrorCode::ProtocolContribution}},
      {"release", {"RLSE", ErrorCode::ProtocolRelease}},
      {"validation", {"VALID", ErrorCode::ProtocolValidation}},
      {"testing", {"TEST", ErrorCode::TestsSkipped}},
  };
  REQUIRE(protocols().size() == expected.size());
  std::set<std::string> ids;
  for (const auto& info : protocols()) {
    INFO(info.name);
    auto found = expected.find(std::string(info.name));
    REQUIRE(found != expected.end());
    CHECK(info.code == found->second.second);
    CHECK(parse_protocol(info.name) == info.protocol);
    CHECK(to_string(info.protocol) == info.name);
    CHECK(!info.agent_types.empty());
    CHECK(!info.purpose.empty());
    bool must = false;
    for (const auto& rule : info.rules) {
      INFO(rule.id);
      CHECK(ids.insert(std::string(rule.id)).second);
      CHECK(std::regex_match(std::string(rule.id), std::regex(found->second.first + "-00[0-9]")));
      CHECK(rule.check != nullptr);
      CHECK(!rule.text.empty());
      CHECK(!rule.fix.empty());
      must = must || rule.level == RuleLevel::Must;
    }
    CHECK(must);
  }
  // The reference's SHOULD rules (cleo-original.md §5.3).
  for (auto id : {"RSCH-002", "CONS-005", "SPEC-003", "SPEC-004", "SPEC-005", "SPEC-006", "IMPL-004", "IMPL-006",
                  "CONT-005", "RLSE-003", "RLSE-006", "VALID-004", "VALID-005", "TEST-002", "TEST-003"}) {
    INFO(id);
    bool found = false;
    for (const auto& info : protocols())
      for (const auto& rule : info.rules)
        if (rule.id == id) {
          found = true;
          CHECK(rule.level == RuleLevel::Should);
        }
    CHECK(found);
  }
  // Coverage below the threshold has a code of its own.
  const auto& testing = protocol_info(Protocol::Testing);
  CHECK(testing.rules.back().id == "TEST-008");
  CHECK(testing.rules.back().code == ErrorCode::CoverageInsufficient);
  CHECK_FALSE(parse_protocol("generic"));
  // The names an Enum param lists are the table's, in its order (the stack's, which is the enum's).
  REQUIRE(protocol_names().size() == protocols().size());
  for (std::size_t i = 0; i < protocols().size(); ++i) {
    CHECK(protocols()[i].protocol == static_cast<Protocol>(i));
    CHECK(protocol_names()[i] == protocols()[i].name);
  }
}

TEST_CASE("an entry's agentType names its protocol; shared ones go to the first owner", "[engines][protocol]") {
  CHECK(protocol_for_agent_type("research") == Protocol::Research);
  CHECK(protocol_for_agent_type("analysis") == Protocol::Consensus);
  CHECK(protocol_for_agent_type("specification") == Protocol::Specification);
  CHECK(protocol_for_agent_type("implementation") == Protocol::Implementation);
  CHECK(protocol_for_agent_type("release") == Protocol::Release);
  CHECK(protocol_for_agent_type("validation") == Protocol::Validation);
  CHECK(protocol_for_agent_type("testing") == Protocol::Testing);
  CHECK_FALSE(protocol_for_agent_type("documentation"));  // release accepts it, but does not own it
  CHECK_FALSE(protocol_for_agent_type("poet"));
}

TEST_CASE("read_project_file: inside the project only, bounded, checksum of the whole file", "[engines][protocol]") {
  namespace fs = std::filesystem;
  test::TempDir dir;
  fs::create_directories(dir.path() / "docs");
  const std::string big(300 * 1024, 'x');
  std::ofstream(dir.path() / "docs" / "big.md") << big;
  std::ofstream(dir.path() / "small.md") << "# Hi\n";

  ProjectFile small = read_project_file(dir.path(), "small.md");
  CHECK(small.state == FileState::Read);
  CHECK(small.content == "# Hi\n");
  CHECK_FALSE(small.truncated);
  CHECK(small.sha256 == sha256_hex("# Hi\n"));

  ProjectFile large = read_project_file(dir.path(), "docs/big.md");
  CHECK(large.state == FileState::Read);
  CHECK(large.content.size() == kMaxProtocolFileBytes);
  CHECK(large.truncated);
  CHECK(large.size == big.size());
  CHECK(large.sha256 == sha256_hex(big));  // streamed over all of it
  CHECK(read_project_file(dir.path(), "docs/big.md", 0).content.empty());
  // Without the checksum it stops at the bound and still knows the size.
  ProjectFile searched = read_project_file(dir.path(), "docs/big.md", 1000, false);
  CHECK(searched.content.size() == 1000);
  CHECK(searched.truncated);
  CHECK(searched.size == big.size());
  CHECK(searched.sha256.empty());

  CHECK(read_project_file(dir.path(), "none.md").state == FileState::Missing);
  CHECK(read_project_file(dir.path(), "docs").state == FileState::NotRegular);
  CHECK(read_project_file(dir.path(), "../outside.md").state == FileState::Outside);
  CHECK(read_project_file(dir.path(), "docs/../../x").state == FileState::Outside);
  CHECK(read_project_file(dir.path(), "/etc/passwd").state == FileState::Outside);
  // A link inside the project that points out of it.
  std::error_code ec;
  fs::create_symlink("/etc/passwd", dir.path() / "docs" / "link.md", ec);
  if (!ec) CHECK(read_project_file(dir.path(), "docs/link.md").state == FileState::Outside);
  fs::create_symlink(dir.path() / "small.md", dir.path() / "docs" / "inside.md", ec);
  if (!ec) CHECK(read_project_file(dir.path(), "docs/inside.md").state == FileState::Read);
}

TEST_CASE("research: a complete output passes every rule", "[engines][protocol]") {
  ProtocolReport report = check_protocol(Protocol::Research, output("research", kResearch), false);
  CHECK(report.valid);
  CHECK(report.score == 100);
  CHECK(report.passed == 7);
  CHECK(failures(report).empty());
  CHECK(report.first_failure() == nullptr);
}

TEST_CASE("research: each rule fails for its own reason", "[engines][protocol]") {
  SECTION("no entry: RSCH-004 fails, the rules that read it are skipped") {
    ProtocolEvidence evidence;
    evidence.task = task("T001");
    ProtocolReport report = check_protocol(Protocol::Research, evidence, false);
    CHECK_FALSE(report.valid);
    CHECK(failures(report) == std::vector<std::string>{"RSCH-004"});
    CHECK(message(report, "RSCH-004") == "no research entry is linked to T001 (name one with entryId)");
    CHECK(status(report, "RSCH-006") == RuleStatus::Skipped);
    CHECK(status(report, "RSCH-007") == RuleStatus::Skipped);
    CHECK(report.score == 80);
    CHECK(report.error_code() == ErrorCode::ProtocolResearch);
    CHECK(mcp_text(report.first_failure()->fix, registry()).find("linkedTasks:['T001']") != std::string::npos);
  }
  SECTION("findings, links, agent type") {
    ProtocolEvidence evidence = output("analysis", kResearch);
    evidence.entry->key_findings = {"only one"};
    evidence.entry->linked_tasks.clear();
    ProtocolReport report = check_protocol(Protocol::Research, evidence, false);
    CHECK(failures(report) == std::vector<std::string>{"RSCH-003", "RSCH-006", "RSCH-007"});
    CHECK(message(report, "RSCH-006") == "keyFindings has 1 item; 3–7 are required");
    CHECK(message(report, "RSCH-007") == "T001-out has agentType 'analysis'; research output has agentType research");
    CHECK(report.score == 40);
    evidence = output("research", kResearch);
    evidence.missing_links = {"T009"};
    CHECK(message(check_protocol(Protocol::Research, evidence, false), "RSCH-003") ==
          "T001-out links T009, which does not exist");
    evidence = output("research", kResearch);
    evidence.task = task("T002");
    CHECK(message(check_protocol(Protocol::Research, evidence, false), "RSCH-003") == "T001-out is not linked to T002");
  }
  SECTION("the output file: missing, changed, unstructured, code") {
    ProtocolEvidence evidence = output("research", kResearch);
    evidence.output->state = FileState::Missing;
    ProtocolReport report = check_protocol(Protocol::Research, evidence, false);
    CHECK(failures(report) == std::vector<std::string>{"RSCH-002", "RSCH-005"});
    CHECK(message(report, "RSCH-005") == "the output file docs/out.md does not exist");

    evidence = output("research", kResearch);
    evidence.entry->file_checksum = sha256_hex("what it was");
    CHECK(message(check_protocol(Protocol::Research, evidence, false), "RSCH-005").find("changed after it was recorded") !=
          std::string::npos);

    evidence = output("research", "just text, no heading and no sources\n");
    report = check_protocol(Protocol::Research, evidence, false);
    CHECK(failures(report) == std::vector<std::string>{"RSCH-002", "RSCH-005"});
    CHECK(report.score == 75);

    evidence = output("research", kResearch);
    evidence.entry->file = "src/auth.cpp";
    CHECK(status(check_protocol(Protocol::Research, evidence, false), "RSCH-001") == RuleStatus::Fail);
  }
  SECTION("a SHOULD failure is a warning, unless strict") {
    ProtocolEvidence evidence = output("research", "# Findings\n\nNo links here.\n");
    ProtocolReport report = check_protocol(Protocol::Research, evidence, false);
    CHECK(report.valid);
    CHECK(report.score == 95);
    CHECK(failures(report) == std::vector<std::string>{"RSCH-002"});
    CHECK(report.first_failure() == nullptr);
    report = check_protocol(Protocol::Research, evidence, true);
    CHECK_FALSE(report.valid);
    REQUIRE(report.first_failure());
    CHECK(report.first_failure()->rule->id == "RSCH-002");
    CHECK(report.error_code() == ErrorCode::ProtocolResearch);
  }
}

TEST_CASE("consensus: options, rationale, confidence, threshold and escalation", "[engines][protocol]") {
  const std::string matrix =
      "# Storage\n\n| Option | Votes |\n|---|---|\n| Option A: Postgres | 3 |\n| Option B: SQLite | 1 |\n\n"
      "## Rationale\nPostgres scales.\n\n## Dissent\nOne agent preferred SQLite.\n";
  ProtocolEvidence evidence = output("analysis", matrix);
  evidence.entry->confidence = 0.75;
  ProtocolReport report = check_protocol(Protocol::Consensus, evidence, false);
  CHECK(failures(report).empty());
  CHECK(report.valid);
  CHECK(message(report, "CONS-001") == "2 options");

  evidence = output("analysis", "# Storage\n\n### Option A\nOnly one.\n");
  report = check_protocol(Protocol::Consensus, evidence, false);
  CHECK(failures(report) == std::vector<std::string>{"CONS-001", "CONS-002", "CONS-003", "CONS-005"});
  CHECK(status(report, "CONS-004") == RuleStatus::Skipped);
  CHECK(report.error_code() == ErrorCode::ProtocolConsensus);

  // Below the threshold: no consensus (CONS-004); escalated it meets CONS-006 at least.
  evidence = output("analysis", matrix);
  evidence.entry->confidence = 0.3;
  report = check_protocol(Protocol::Consensus, evidence, false);
  CHECK(failures(report) == std::vector<std::string>{"CONS-004", "CONS-006"});
  CHECK(message(report, "CONS-004") == "confidence 0.3 is below the 0.5 threshold: no consensus");
  evidence.entry->needs_followup = {"a person chooses the database"};
  CHECK(failures(check_protocol(Protocol::Consensus, evidence, false)) == std::vector<std::string>{"CONS-004"});

  // Without an entry the protocol has nothing to read: CONS-007 requires one.
  ProtocolEvidence bare;
  bare.task = task("T001");
  report = check_protocol(Protocol::Consensus, bare, false);
  CHECK(failures(report) == std::vector<std::string>{"CONS-007"});
  CHECK(message(report, "CONS-007") == "no analysis entry is linked to T001 (name one with entryId)");
  CHECK(report.skipped == 6);
}

TEST_CASE("specification: RFC 2119 keywords, a version and the SHOULD sections", "[engines][protocol]") {
  const std::string spec =
      "# Sync spec\n\nVersion: 1.2.0\n\n## Scope\nx\n\n## Requirements\nClients MUST retry. They MAY cache.\n\n"
      "## Conformance\ny\n\n## Changelog\n- 1.2.0\n\n## References\n- RFC 2119\n";
  ProtocolReport report = check_protocol(Protocol::Specification, output("specification", spec), false);
  CHECK(failures(report).empty());
  CHECK(message(report, "SPEC-001") == "MUST, MAY");

  report = check_protocol(Protocol::Specification, output("specification", "# Notes\n\nclients must retry.\n"), false);
  CHECK(failures(report) ==
        std::vector<std::string>{"SPEC-001", "SPEC-002", "SPEC-003", "SPEC-004", "SPEC-005", "SPEC-006"});
  CHECK(report.score == 40);
  CHECK(report.error_code() == ErrorCode::ProtocolSpecification);
  // Version lines in the usual spellings; "versions 2" is no version.
  for (auto text : {"version: 0.3", "**Version**: v2.0.1", "---\nversion: \"1.0.0\"\n---"}) {
    INFO(text);
    CHECK(status(check_protocol(Protocol::Specification, output("specification", text), false), "SPEC-002") ==
          RuleStatus::Pass);
  }
  CHECK(status(check_protocol(Protocol::Specification, output("specification", "see versions 2 and 3"), false),
               "SPEC-002") == RuleStatus::Fail);
}

TEST_CASE("decomposition: MECE, cycles, depth, atomic leaves, estimates, siblings", "[engines][protocol]") {
  ProtocolEvidence evidence;
  evidence.task = task("T001", "Auth epic");
  auto child = [](std::string id, std::string title, std::string parent = "T001") {
    Task t = task(std::move(id), std::move(title), std::move(parent));
    t.acceptance = {"it works"};
    return t;
  };
  evidence.subtree = {child("T002", "Login form"), child("T003", "Session store")};
  ProtocolReport report = check_protocol(Protocol::Decomposition, evidence, false);
  CHECK(failures(report).empty());
  CHECK(status(report, "DCMP-007") == RuleStatus::Skipped);  // no entry: only the tasks are checked
  CHECK(report.valid);

  SECTION("nothing decomposed") {
    evidence.subtree.clear();
    report = check_protocol(Protocol::Decomposition, evidence, false);
    CHECK(failures(report) == std::vector<std::string>{"DCMP-001"});
    CHECK(message(report, "DCMP-001") == "T001 has no open subtasks: nothing is decomposed");
    CHECK(status(report, "DCMP-004") == RuleStatus::Skipped);
    CHECK(report.error_code() == ErrorCode::ProtocolDecomposition);
  }
  SECTION("overlapping parts and a cycle") {
    evidence.subtree.push_back(child("T004", "login form"));
    evidence.cycles = {{"T002", "T003"}};
    report = check_protocol(Protocol::Decomposition, evidence, false);
    CHECK(failures(report) == std::vector<std::string>{"DCMP-001", "DCMP-002"});
    CHECK(message(report, "DCMP-002") == "1 dependency cycle among the subtasks: T002 → T003 → T002");
  }
  SECTION("too deep, too wide, not atomic") {
    evidence.depth = 2;  // T001 sits under an epic
    evidence.subtree.push_back(child("T004", "Cookie flags", "T003"));
    for (int i = 15; i <= 20; ++i) evidence.subtree.push_back(child("T0" + std::to_string(i), "Part " + std::to_string(i)));
    evidence.subtree.front().acceptance.clear();
    report = check_protocol(Protocol::Decomposition, evidence, false);
    CHECK(failures(report) == std::vector<std::string>{"DCMP-003", "DCMP-004", "DCMP-006"});
    CHECK(message(report, "DCMP-003") == "T004 is at depth 4; at most 3 levels (epic > task > subtask)");
    CHECK(message(report, "DCMP-006") == "T001 has 8 open subtasks; at most 7 siblings");
    // A small leaf is atomic without criteria; cancelled tasks do not count.
    evidence.subtree.front().size = TaskSize::Small;
    for (std::size_t i = 3; i < evidence.subtree.size(); ++i) evidence.subtree[i].status = TaskStatus::Cancelled;
    evidence.depth = 1;
    CHECK(failures(check_protocol(Protocol::Decomposition, evidence, false)).empty());
  }
  SECTION("time estimates, and durations that are requirements") {
    const std::vector<std::pair<std::string, bool>> texts = {
        {"Build login (2h)", true},           {"Refactor store 1.5d", true},
        {"Write docs ~3 days", true},         {"Migrate data (2 weeks)", true},
        {"Parser, est. 4 hours", true},       {"Cache, about 2-3 days", true},
        {"Tokens expire after 30 days", false}, {"Print on the 3D printer", false},
        {"Retry 3 times within 10 minutes", false}, {"Upgrade to v2h", false},
    };
    for (const auto& [title, estimate] : texts) {
      INFO(title);
      evidence.subtree.front().title = title;
      CHECK((status(check_protocol(Protocol::Decomposition, evidence, false), "DCMP-005") == RuleStatus::Fail) ==
            estimate);
    }
    evidence.subtree.front().title = "Login form";
    evidence.task->description = "Effort: 5 days in all";
    CHECK(message(check_protocol(Protocol::Decomposition, evidence, false), "DCMP-005") ==
          "T001's description holds a time estimate: 'Effort: 5 days'");
  }
}

TEST_CASE("implementation and contribution: provenance tags, tests, checks, conflicts", "[engines][protocol]") {
  ProtocolEvidence evidence;
  evidence.task = task("T001");
  evidence.task->files = {"src/a.cpp", "src/b.cpp", "src/gone.cpp"};
  evidence.task_files = {file("// @task T001\nint a;\n", "src/a.cpp"), file("int b; // @task T0012\n", "src/b.cpp")};
  ProjectFile gone;
  gone.path = "src/gone.cpp";
  evidence.task_files.push_back(gone);

  ProtocolReport report = check_protocol(Protocol::Implementation, evidence, false);
  CHECK(failures(report) == std::vector<std::string>{"IMPL-003", "IMPL-004"});
  CHECK(message(report, "IMPL-003") == "src/b.cpp has no @task T001 tag");
  CHECK(message(report, "IMPL-004") == "no validate.test.run is recorded for T001 or since it was created");
  CHECK(status(report, "IMPL-005") == RuleStatus::Skipped);  // not observable
  CHECK(report.error_code() == ErrorCode::ProtocolImplementation);

  evidence.task_files[1] = file("int b; /* @task\tT001 */\n", "src/b.cpp");
  evidence.test_run = TestRunEvidence{.at = 1000, .passed = true, .task_id = "T001", .failed = 0};
  report = check_protocol(Protocol::Implementation, evidence, false);
  CHECK(failures(report).empty());
  CHECK(report.valid);
  CHECK(message(report, "IMPL-003") == "2 files tagged; not there: src/gone.cpp");

  // Without files nothing of the code can be checked: every MUST skipped is no pass.
  evidence.task->files.clear();
  evidence.task_files.clear();
  report = check_protocol(Protocol::Implementation, evidence, false);
  CHECK(failures(report).empty());
  CHECK_FALSE(report.valid);
  CHECK(report.first_failure() == nullptr);
  CHECK(report.error_code() == ErrorCode::ProtocolImplementation);
  CHECK(report.score == 100);

  SECTION("contribution") {
    evidence.task->files = {"src/a.cpp"};
    evidence.task_files = {file("// @task T001\n", "src/a.cpp")};
    evidence.checks = {ComplianceSummary{.check = "protocol.implementation", .runs = 2, .passed = 1, .last_passed = true},
                       ComplianceSummary{.check = "protocol.contribution", .runs = 1, .last_passed = false}};
    evidence.overlaps = {{"T007", "src/a.cpp"}};
    report = check_protocol(Protocol::Contribution, evidence, false);
    CHECK(failures(report) == std::vector<std::string>{"CONT-005"});
    CHECK(message(report, "CONT-003") == "1 recorded check passed");  // its own earlier result does not count
    CHECK(message(report, "CONT-005") ==
          "active T007 (src/a.cpp) also work on its files; no note of T001 names them");
    CHECK(status(report, "CONT-001") == RuleStatus::Skipped);
    CHECK(report.valid);
    evidence.task->notes = {Note{1, "overlaps with T007 on src/a.cpp"}};
    // Required verification gates come first; passed, they count next to the checks.
    evidence.required_gates = {"implemented", "testsPassed"};
    evidence.missing_gates = {"testsPassed"};
    report = check_protocol(Protocol::Contribution, evidence, false);
    CHECK(failures(report) == std::vector<std::string>{"CONT-003"});
    CHECK(message(report, "CONT-003") == "T001 has not passed the verification gate testsPassed (verification.required)");
    evidence.missing_gates.clear();
    CHECK(message(check_protocol(Protocol::Contribution, evidence, false), "CONT-003") ==
          "2 required gates passed; 1 recorded check passed");
    evidence.checks.front().last_passed = false;
    report = check_protocol(Protocol::Contribution, evidence, false);
    CHECK(failures(report) == std::vector<std::string>{"CONT-003"});
    CHECK(message(report, "CONT-003") == "the latest result of protocol.implementation failed");
    CHECK(report.error_code() == ErrorCode::ProtocolContribution);
  }
}

TEST_CASE("release: semver, changelog, tag, version files, rollback", "[engines][protocol]") {
  ProtocolEvidence evidence;
  evidence.task = task("T001");
  ProtocolReport report = check_protocol(Protocol::Release, evidence, false);
  CHECK(failures(report) == std::vector<std::string>{"RLSE-001", "RLSE-003"});
  CHECK(message(report, "RLSE-001") == "T001 is in no release");
  CHECK(report.error_code() == ErrorCode::ProtocolRelease);

  Release release;
  release.version = "1.2.0";
  release.status = ReleaseStatus::Released;
  release.tag = "v1.2.0";
  release.notes = "Rollback: release.rollback 1.2.0";
  evidence.release = release;
  evidence.changelog = file("# Changelog\n\n## [1.2.0] - 2026-01-01\n\n- T001\n", "CHANGELOG.md");
  evidence.version_files = {file("1.2.0\n", "VERSION"), file(R"({"version":"1.2.0"})", "package.json")};
  evidence.test_run = TestRunEvidence{.at = 1, .passed = true};
  report = check_protocol(Protocol::Release, evidence, false);
  CHECK(failures(report).empty());
  CHECK(report.valid);

  evidence.release->tag = "v1.1.0";
  evidence.release->notes.clear();
  evidence.changelog = file("# Changelog\n\n## [1.1.0]\n", "CHANGELOG.md");
  evidence.version_files[1] = file(R"({"version":"1.1.0"})", "package.json");
  report = check_protocol(Protocol::Release, evidence, false);
  CHECK(failures(report) == std::vector<std::string>{"RLSE-002", "RLSE-004", "RLSE-005", "RLSE-006"});
  CHECK(message(report, "RLSE-005") == "package.json does not state 1.2.0");
  // A release superseded by a later one is not compared with today's version files; an untagged
  // one is not compared with a tag.
  evidence.release_superseded = true;
  evidence.release->tag.clear();
  report = check_protocol(Protocol::Release, evidence, false);
  CHECK(status(report, "RLSE-004") == RuleStatus::Skipped);
  CHECK(status(report, "RLSE-005") == RuleStatus::Skipped);
}

TEST_CASE("validation: the report against the acceptance criteria, tests and recorded checks", "[engines][protocol]") {
  ProtocolEvidence evidence = output("validation",
                                     "# Validation of T001\n\n- Users can log in: pass\n- AC2: pass (minor: slow)\n");
  evidence.task->acceptance = {"Users can  log in", "Sessions expire"};
  evidence.test_run = TestRunEvidence{.at = 1, .passed = false};
  ProtocolReport report = check_protocol(Protocol::Validation, evidence, false);
  CHECK(failures(report).empty());  // tests ran (their failing is testing's business)
  CHECK(status(report, "VALID-003") == RuleStatus::Skipped);

  evidence.task->acceptance.push_back("Passwords are hashed");
  evidence.test_run.reset();
  report = check_protocol(Protocol::Validation, evidence, false);
  CHECK(failures(report) == std::vector<std::string>{"VALID-001", "VALID-002"});
  CHECK(message(report, "VALID-001") ==
        "the report does not address acceptance criterion 3 (Passwords are hashed): quote each, or refer to it as AC<n>");
  CHECK(report.error_code() == ErrorCode::ProtocolValidation);
}

TEST_CASE("testing: framework, passing run, counts in the manifest, coverage threshold", "[engines][protocol]") {
  ProtocolEvidence evidence = output("testing", "# Tests\n\n12 passed, 0 failed\n");
  evidence.task->files = {"tests/test_auth.py", "tests/helpers.py", "src/auth.py"};
  ProtocolReport report = check_protocol(Protocol::Testing, evidence, false);
  CHECK(failures(report) == std::vector<std::string>{"TEST-001", "TEST-002", "TEST-004"});
  CHECK(message(report, "TEST-004") == "no validate.test.run is recorded for T001 or since it was created");
  CHECK(report.error_code() == ErrorCode::TestsSkipped);
  CHECK(status(report, "TEST-005") == RuleStatus::Skipped);
  CHECK(status(report, "TEST-008") == RuleStatus::Skipped);

  evidence.test_command = "pytest";
  evidence.task->files = {"tests/test_auth.py"};
  evidence.test_run = TestRunEvidence{.at = 1, .passed = true, .failed = 0, .coverage = 71.5};
  evidence.coverage_threshold = 80;
  report = check_protocol(Protocol::Testing, evidence, false);
  CHECK(failures(report) == std::vector<std::string>{"TEST-008"});
  CHECK(message(report, "TEST-008") == "coverage 71.5% is below validate.coverageThreshold 80%");
  CHECK(report.error_code() == ErrorCode::CoverageInsufficient);

  evidence.coverage_threshold = 70;
  report = check_protocol(Protocol::Testing, evidence, false);
  CHECK(report.valid);
  CHECK(report.score == 100);

  // A failed run fails TEST-004 first: E_TESTS_SKIPPED, even with coverage below the threshold.
  evidence.coverage_threshold = 80;
  evidence.test_run->passed = false;
  evidence.test_run->failed = 2;
  report = check_protocol(Protocol::Testing, evidence, false);
  CHECK(failures(report) == std::vector<std::string>{"TEST-004", "TEST-008"});
  CHECK(message(report, "TEST-004") == "the latest test run (1970-01-01T00:00:00Z) failed: 2 failing");
  CHECK(report.error_code() == ErrorCode::TestsSkipped);

  // Counts in keyFindings do as well as in the file.
  evidence = output("testing", "# Tests\n");
  CHECK(status(check_protocol(Protocol::Testing, evidence, false), "TEST-006") == RuleStatus::Fail);
  evidence.entry->key_findings = {"40 tests, all passing"};
  CHECK(status(check_protocol(Protocol::Testing, evidence, false), "TEST-006") == RuleStatus::Pass);
}
