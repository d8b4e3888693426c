// Project memory (the memory domain, engines/rules/memory.h, issue 34): entries recorded, found by
// words and by the scope of the work at hand, near-duplicates refused, kinds people govern proposed
// until a person verifies them, stale when their files or tasks move, use declared, and the
// Markdown a team reviews read back idempotently. Runs on both backends.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <fstream>
#include <map>

#include "gateway/mcp_syntax.h"
#include "unit/project_edits.h"
#include "unit/test_support.h"
#include "engines/rules/memory.h"
#include "engines/store/store_backend.h"

using namespace ct;

namespace {

/// The error code of a failed call or result (E_INTERNAL stands for "it did not fail").
ErrorCode code_of(const Envelope& e) { return e.error ? e.error->code : ErrorCode::Internal; }
template <typename T>
ErrorCode code_of(const Result<T>& r) {
  return r ? ErrorCode::Internal : r.error().code;
}

using test::write_file;

/// A person's router on the project (`ct` in a terminal), calling in `session` ("" = none).
struct Person {
  std::unique_ptr<Router> router;
  Caller caller;
  explicit Person(const test::Project& p, std::string session = "") {
    RouterOptions options;
    caller.principal = test::test_person();
    router = std::make_unique<Router>(registry(), p.workspace(), options,
                                      std::make_unique<FixedClock>(*parse_iso8601("2026-01-01T00:00:00Z")));
    caller.session = std::move(session);
  }
  Envelope mutate(std::string domain, std::string operation, std::string_view params) {
    return router->dispatch({Gateway::Mutate, std::move(domain), std::move(operation), test::parse_json(params), caller});
  }
};

std::vector<std::string> ids_of(const Envelope& e) {
  std::vector<std::string> ids;
  if (e.data.is_array())
    for (const auto& row : e.data.as_array()) ids.push_back(row["id"].as_string());
  return ids;
}

}  // namespace

TEST_CASE("memory rules: words, keys, scope paths and globs", "[memory]") {
  using namespace memory;
  CHECK(words("The Store's WAL, and the store") == std::vector<std::string>{"store", "wal"});
  CHECK(*normal_scope_path("./src//store/") == "src/store/");
  CHECK(*normal_scope_path("src\\a.cpp") == "src/a.cpp");
  CHECK(code_of(normal_scope_path("/etc/passwd")) == ErrorCode::Validation);
  CHECK(code_of(normal_scope_path("src/../../x")) == ErrorCode::Validation);
  CHECK(file_lookup_keys("src/store/a.cpp") == std::vector<std::string>{"f:src/store/a.cpp", "f:src/store/", "f:src/", "f:"});
  CHECK(scope_match("src/store/a.cpp", "src/store/a.cpp") == 2);
  CHECK(scope_match("src/store/", "src/store/a.cpp") == 1);
  CHECK(scope_match("src/**/*.cpp", "src/store/deep/a.cpp") == 1);
  CHECK(scope_match("src/*.cpp", "src/store/a.cpp") == 0);
  CHECK(scope_match("*.md", "README.md") == 1);
  CHECK(scope_match("src/store/", "src/storefront.cpp") == 0);

  MemoryEntry entry;
  entry.id = "M001";
  entry.kind = "learning";
  entry.title = "Retry with backoff";
  entry.files = {"src/**/*.cpp", "docs/"};
  entry.labels = {"Net"};
  entry.source_task = "T004";
  const auto keys = keys_of(entry);
  for (auto key : {"w:retry", "w:backoff", "f:src/", "f:docs/", "l:net", "t:T004"})
    CHECK(std::find(keys.begin(), keys.end(), key) != keys.end());
  MemoryEntry other = entry;
  other.title = "Retry with a backoff";
  CHECK(similarity(entry, other) == 1.0);
  CHECK(content_hash(entry) != content_hash(other));
}

TEST_CASE("memory Markdown: export and import read each other, fields and escapes kept", "[memory]") {
  using namespace memory;
  MemoryEntry a;
  a.id = "M002";
  a.kind = "convention";
  a.title = "Files are snake_case";
  a.body = "# not a heading\n- not a field\n<!-- not a comment -->\nplain line";
  a.files = {"src/", "tests/**/*.cpp"};
  a.confidence = 0.75;
  a.verified_by = "ann";
  a.created_at = *parse_iso8601("2026-01-01T00:00:00Z");
  MemoryEntry b;
  b.id = "M010";
  b.kind = "risk";
  b.title = "The cache may serve old rows";
  b.status = "retracted";
  b.reason = "the cache was removed";
  b.created_at = a.created_at;
  const std::string text = to_markdown({b, a});
  auto back = from_markdown(text);
  REQUIRE(back);
  REQUIRE(back->size() == 2);
  CHECK((*back)[0].id == "M002");  // grouped by kind: conventions before risks
  CHECK((*back)[0].body == a.body);
  CHECK((*back)[0].files == a.files);
  CHECK((*back)[0].confidence == a.confidence);
  CHECK((*back)[0].verified_by == "ann");
  CHECK(content_hash((*back)[0]) == content_hash(a));
  CHECK((*back)[1].status == "retracted");
  CHECK((*back)[1].reason == b.reason);
  CHECK(to_markdown(*back) == text);

  // Line breaks of any spelling are one: a body's CRLF and bare CRs read back as LF, and again the
  // same (a bare CR once ended a line only on the way back in: found by the memory fuzz target).
  CHECK(normalized_body("a\r\nb\rc\r\r\nd\r") == "a\nb\nc\n\nd");
  auto crs = from_markdown("## Risks\n\n### M009 r\n\nx\r\r\ry\r\n");
  REQUIRE(crs);
  REQUIRE(crs->size() == 1);
  CHECK((*crs)[0].body == "x\n\n\ny");
  auto again = from_markdown(to_markdown(*crs));
  REQUIRE(again);
  CHECK((*again)[0].body == (*crs)[0].body);

  auto bad = from_markdown("## Conventions\n\n### X1 nope\n");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message.starts_with("line 3:"));
  CHECK(code_of(from_markdown("## Whims\n")) == ErrorCode::Validation);
  CHECK(code_of(from_markdown("## Risks\n### M1 a\n### M1 b\n")) == ErrorCode::Validation);
}

TEST_CASE("memory.observe and find: by words, files, labels and the task at hand", "[memory]") {
  test::Project p;
  write_file(p.dir() / "src/net/retry.cpp", "int retry;");
  p.add(R"({"title":"Networking","type":"epic"})");
  p.add(R"({"title":"Retry the upload","parent":"T001","files":["src/net/retry.cpp"],"labels":["net"]})");
  p.add(R"({"title":"Unrelated"})");

  Envelope first = p.mutate("memory", "observe",
                            R"({"kind":"learning","title":"Uploads need exponential backoff","body":"The CDN rate-limits bursts",)"
                            R"("files":["src/net/"],"taskId":"T002"})");
  REQUIRE(first.success);
  CHECK(first.data["id"] == json::Value("M001"));
  CHECK(first.data["status"] == json::Value("active"));
  REQUIRE(p.mutate("memory", "observe", R"({"kind":"decision","title":"We use libcurl for HTTP","labels":["net"]})").success);
  REQUIRE(p.mutate("memory", "observe", R"({"kind":"risk","title":"The epic's deadline is tight","epic":"T001"})").success);
  REQUIRE(p.mutate("memory", "observe", R"({"kind":"pattern","title":"Parsers return values, not exceptions"})").success);

  // The task at hand brings its files, labels and epic.
  Envelope for_task = p.query("memory", "find", R"({"taskId":"T002"})");
  REQUIRE(for_task.success);
  CHECK(ids_of(for_task) == std::vector<std::string>{"M001", "M003", "M002"});  // file+task, epic, label
  CHECK(ids_of(p.query("memory", "find", R"({"query":"backof"})")) == std::vector<std::string>{"M001"});  // a prefix
  CHECK(ids_of(p.query("memory", "find", R"({"files":["src/net/retry.cpp"]})")) == std::vector<std::string>{"M001"});
  CHECK(ids_of(p.query("memory", "find", R"({"query":"parsers","kind":"risk"})")).empty());
  CHECK(p.query("memory", "find", R"({"query":"nothing-like-it"})").exit_code() == 100);

  // Hashes already read come back as {id, unchanged:true}.
  const std::string hash = for_task.data.as_array()[0]["hash"].as_string();
  Envelope known = p.query("memory", "find", R"({"taskId":"T002","knownHashes":[")" + hash + R"("]})");
  CHECK(known.data.as_array()[0] == test::parse_json(R"({"id":"M001","unchanged":true})"));

  // Neither words nor a scope: refused, with the calls that work.
  Envelope refused = p.query("memory", "find", R"({})");
  CHECK(code_of(refused) == ErrorCode::InvalidParams);
  CHECK(code_of(p.query("memory", "find", R"({"query":"the of"})")) == ErrorCode::InvalidParams);
  CHECK(code_of(p.query("memory", "find", R"({"taskId":"T099"})")) == ErrorCode::NotFound);
  CHECK(code_of(p.mutate("memory", "observe", R"({"kind":"learning","title":"Outside","files":["../x"]})")) == ErrorCode::Validation);
  CHECK(code_of(p.mutate("memory", "observe", R"({"kind":"learning","title":"No such task","tasks":["T099"]})")) ==
        ErrorCode::NotFound);
  CHECK(code_of(p.mutate("memory", "observe", R"({"kind":"learning","title":"Sure?","confidence":"2"})")) ==
        ErrorCode::Validation);
}

TEST_CASE("memory.observe reports a near-duplicate instead of adding it; the same entry is a note", "[memory]") {
  test::Project p;
  const std::string learning = R"({"kind":"learning","title":"Store writes go through one transaction","body":"never outside begin and commit"})";
  REQUIRE(p.mutate("memory", "observe", learning).success);
  Envelope same = p.mutate("memory", "observe", learning);
  CHECK(same.exit_code() == 101);
  CHECK(same.data["id"] == json::Value("M001"));
  Envelope near = p.mutate("memory", "observe",
                           R"({"kind":"learning","title":"Store writes go through a single transaction","body":"never outside begin and commit"})");
  CHECK(code_of(near) == ErrorCode::AlreadyExists);
  CHECK(near.error->details["similar"].as_array()[0]["id"] == json::Value("M001"));
  CHECK(near.error->fix.plain_text().find("memory.update") != std::string::npos);
  Envelope forced = p.mutate("memory", "observe",
                             R"({"kind":"learning","title":"Store writes go through a single transaction","body":"never outside begin and commit","force":true})");
  REQUIRE(forced.success);
  CHECK(forced.data["id"] == json::Value("M002"));
}

TEST_CASE("memory: a kind people govern is proposed by an agent and served once a person verifies it", "[memory]") {
  test::Project p;
  REQUIRE(p.mutate("session", "start", R"({"scope":"global","name":"writer"})").success);
  const std::string session = p.session();
  Envelope proposed = p.mutate("memory", "observe", R"({"kind":"convention","title":"Errors are values with stable codes"})");
  REQUIRE(proposed.success);
  CHECK(proposed.data["status"] == json::Value("proposed"));
  CHECK_FALSE(proposed.warnings.empty());
  CHECK(ids_of(p.query("memory", "find", R"({"query":"errors"})")).empty());  // not served yet

  // Not by an agent, and not by a person in the session that proposed it.
  Envelope by_agent = p.mutate("memory", "verify", R"({"id":"M001"})");
  CHECK(code_of(by_agent) == ErrorCode::MutationDisabled);
  CHECK(by_agent.error->fix.plain_text().find("ct memory verify M001") != std::string::npos);
  CHECK(code_of(Person(p, session).mutate("memory", "verify", R"({"id":"M001"})")) == ErrorCode::MutationDisabled);

  Envelope verified = Person(p).mutate("memory", "verify", R"({"id":"M001"})");
  REQUIRE(verified.success);
  CHECK(verified.data["status"] == json::Value("active"));
  CHECK(ids_of(p.query("memory", "find", R"({"query":"errors"})")) == std::vector<std::string>{"M001"});

  // An agent's change of a verified convention is a revision (as memory.supersede makes): the
  // verified text stays served until a person verifies the change, and the agent may not retract it.
  Envelope changed = p.mutate("memory", "update", R"({"id":"M001","body":"and exit codes"})");
  REQUIRE(changed.success);
  CHECK(changed.data["id"] == json::Value("M002"));
  CHECK(changed.data["status"] == json::Value("proposed"));
  CHECK(changed.data["supersedes"] == json::Value("M001"));
  CHECK(ids_of(p.query("memory", "find", R"({"query":"errors"})")) == std::vector<std::string>{"M001"});
  Envelope still = p.query("memory", "show", R"({"id":"M001"})");
  CHECK(still.data["status"] == json::Value("active"));
  CHECK(still.data["verifiedBy"].is_string());
  CHECK_FALSE(still.data.contains("body"));
  CHECK(code_of(p.mutate("memory", "retract", R"({"id":"M001","reason":"I disagree"})")) == ErrorCode::MutationDisabled);
  // A second change edits the pending revision rather than adding another.
  Envelope again = p.mutate("memory", "update", R"({"id":"M001","body":"and stable exit codes"})");
  REQUIRE(again.success);
  CHECK(again.data["id"] == json::Value("M002"));
  CHECK(p.query("memory", "show", R"({"id":"M002"})").data["body"] == json::Value("and stable exit codes"));
  REQUIRE(Person(p).mutate("memory", "verify", R"({"id":"M002"})").success);
  CHECK(ids_of(p.query("memory", "find", R"({"query":"errors"})")) == std::vector<std::string>{"M002"});
  CHECK(p.query("memory", "show", R"({"id":"M001"})").data["status"] == json::Value("superseded"));

  // A learning is the agents' own: active at once, and an agent re-anchors it.
  REQUIRE(p.mutate("memory", "observe", R"({"kind":"learning","title":"The linker needs -ldl"})").data["status"] ==
          json::Value("active"));
  CHECK(p.mutate("memory", "verify", R"({"id":"M003"})").success);

  // People decide which kinds they govern; an agent cannot switch it off.
  CHECK(code_of(p.mutate("system", "config.set", R"({"key":"memory.verifyKinds","value":"[\"decision\"]"})")) == ErrorCode::MutationDisabled);
}

TEST_CASE("memory: an entry goes stale when its file changes or goes, or its task reopens", "[memory]") {
  test::Project p;
  write_file(p.dir() / "src/a.cpp", "int a;");
  write_file(p.dir() / "src/b.cpp", "int b;");
  p.add(R"({"title":"Write a"})");
  REQUIRE(p.mutate("memory", "observe", R"({"kind":"learning","title":"Alpha keeps its state","files":["src/a.cpp"]})").data["anchoredFiles"] ==
          json::Value(1));
  Envelope missing = p.mutate("memory", "observe", R"({"kind":"learning","title":"Gamma is generated","files":["src/gen.cpp"]})");
  REQUIRE(missing.success);
  CHECK(missing.warnings.size() == 1);
  REQUIRE(p.mutate("memory", "observe", R"({"kind":"learning","title":"Beta reads alpha","files":["src/b.cpp"]})").success);
  REQUIRE(p.mutate("tasks", "complete", R"({"id":"T001","notes":"done"})").success);
  REQUIRE(p.mutate("memory", "observe", R"({"kind":"learning","title":"Delta finished","taskId":"T001"})").success);
  CHECK(ids_of(p.query("memory", "find", R"({"query":"alpha"})")) == std::vector<std::string>{"M003", "M001"});

  write_file(p.dir() / "src/a.cpp", "int a; // changed");
  std::filesystem::remove(p.dir() / "src/b.cpp");
  CHECK(ids_of(p.query("memory", "find", R"({"query":"alpha"})")).empty());
  Envelope stale = p.query("memory", "find", R"({"query":"alpha","includeStale":true})");
  REQUIRE(ids_of(stale).size() == 2);
  CHECK(stale.data.as_array()[0]["stale"]["what"].is_string());
  Envelope shown = p.query("memory", "show", R"({"id":"M001"})");
  CHECK(shown.data["stale"]["file"] == json::Value("src/a.cpp"));
  CHECK(shown.data["stale"]["what"] == json::Value("changed"));
  CHECK(p.query("memory", "show", R"({"id":"M003"})").data["stale"]["what"] == json::Value("missing"));
  CHECK(p.query("memory", "stats").data["stale"] == json::Value(2));
  Envelope validated = p.query("validate", "schema");  // a valid store, with its stale memory reported
  REQUIRE(validated.success);
  CHECK(validated.data["memory"]["stale"] == json::Value(2));
  CHECK_FALSE(validated.warnings.empty());

  // The task it was learned in is reopened.
  REQUIRE(p.mutate("tasks", "reopen", R"({"id":"T001","reason":"not done after all"})").success);
  Envelope reopened = p.query("memory", "show", R"({"id":"M004"})");
  CHECK(reopened.data["stale"]["task"] == json::Value("T001"));
  CHECK(reopened.data["stale"]["what"] == json::Value("reopened"));

  // Verifying after review anchors the file as it is now.
  REQUIRE(p.mutate("memory", "verify", R"({"id":"M001"})").success);
  CHECK(ids_of(p.query("memory", "find", R"({"query":"alpha"})")) == std::vector<std::string>{"M001"});
}

TEST_CASE("memory.applied records use; applied entries rank higher, usage is reported", "[memory]") {
  test::Project p;
  p.add(R"({"title":"Work"})");
  REQUIRE(p.mutate("memory", "observe", R"({"kind":"pattern","title":"Cache invalidation by version"})").success);
  REQUIRE(p.mutate("memory", "observe", R"({"kind":"pattern","title":"Cache warming at start"})").success);
  CHECK(ids_of(p.query("memory", "find", R"({"query":"cache"})")).front() == "M002");  // the newer, all else equal
  Envelope declared = p.mutate("memory", "applied", R"({"ids":["M001"],"ignored":["M002"],"taskId":"T001"})");
  REQUIRE(declared.success);
  CHECK(declared.data["applied"] == test::parse_json(R"(["M001"])"));
  CHECK(ids_of(p.query("memory", "find", R"({"query":"cache"})")).front() == "M001");
  Envelope shown = p.query("memory", "show", R"({"id":"M001"})");
  CHECK(shown.data["usage"]["applied"] == json::Value(1));
  CHECK(shown.data["usage"]["recent"].as_array()[0]["taskId"] == json::Value("T001"));
  CHECK(p.query("memory", "stats").data["mostApplied"].as_array()[0]["id"] == json::Value("M001"));
  Envelope timeline = p.query("memory", "timeline", R"({"taskId":"T001"})");
  REQUIRE(timeline.success);
  CHECK(timeline.data.as_array()[0]["event"].is_string());

  CHECK(code_of(p.mutate("memory", "applied", R"({"ids":["M009"]})")) == ErrorCode::NotFound);
  CHECK(code_of(p.mutate("memory", "applied", R"({"ids":["M001"],"ignored":["M001"]})")) == ErrorCode::Validation);
  CHECK(code_of(p.mutate("memory", "applied", R"({"ids":["X1"]})")) == ErrorCode::Validation);
  CHECK(code_of(p.query("memory", "timeline", R"({})")) == ErrorCode::InvalidParams);
  // Every change is audited.
  Envelope log = p.query("system", "log", R"({"operation":"memory.applied"})");
  REQUIRE(log.success);
  CHECK_FALSE(log.data.empty());
}

TEST_CASE("memory.supersede and retract keep the record; closed entries are not changed", "[memory]") {
  test::Project p;
  REQUIRE(p.mutate("memory", "observe", R"({"kind":"decision","title":"Use JSON for config","labels":["config"]})").success);
  Envelope replaced = p.mutate("memory", "supersede", R"({"id":"M001","title":"Use TOML for config"})");
  REQUIRE(replaced.success);
  CHECK(replaced.data["id"] == json::Value("M002"));
  CHECK(replaced.data["supersedes"] == json::Value("M001"));
  CHECK(p.query("memory", "show", R"({"id":"M001"})").data["status"] == json::Value("superseded"));
  CHECK(ids_of(p.query("memory", "find", R"({"labels":["config"]})")) == std::vector<std::string>{"M002"});
  CHECK(code_of(p.mutate("memory", "update", R"({"id":"M001","title":"Use YAML"})")) == ErrorCode::Validation);
  REQUIRE(p.mutate("memory", "retract", R"({"id":"M002","reason":"config moved to the store"})").success);
  CHECK(p.mutate("memory", "retract", R"({"id":"M002","reason":"again"})").exit_code() == 102);
  CHECK(ids_of(p.query("memory", "find", R"({"labels":["config"]})")).empty());
  CHECK(code_of(p.mutate("memory", "retract", R"({"id":"M002"})")) == ErrorCode::InvalidParams);  // a reason is required
  CHECK(code_of(p.query("memory", "show", R"({"id":"M042"})")) == ErrorCode::NotFound);
}

TEST_CASE("memory export and import: a reviewed file is read back idempotently", "[memory]") {
  test::Project p;
  REQUIRE(p.mutate("memory", "observe", R"({"kind":"learning","title":"Builds need ccache warm","body":"first build 30 min"})").success);
  REQUIRE(p.mutate("memory", "observe", R"({"kind":"risk","title":"Disk fills with WAL","labels":["store"]})").success);
  Envelope exported = p.query("memory", "export");
  REQUIRE(exported.success);
  CHECK(exported.data["entries"] == json::Value(2));
  const std::string markdown = exported.data["markdown"].as_string();

  test::Project other;
  write_file(other.dir() / "docs/memory.md", markdown);
  Envelope imported = other.mutate("memory", "import", R"({"file":"docs/memory.md"})");
  REQUIRE(imported.success);
  CHECK(imported.data["added"].size() == 2);
  CHECK(other.query("memory", "export").data["markdown"] == json::Value(markdown));
  CHECK(other.mutate("memory", "import", R"({"file":"docs/memory.md"})").exit_code() == 102);

  // A reviewed edit changes the entry; a convention an agent brings in waits for a person.
  std::string edited = markdown;
  edited.replace(edited.find("Builds need ccache warm"), 23, "Builds need a warm ccache");
  edited += "\n## Conventions\n\n### M007 Commit messages say why\n\n- status: active\n- verified-by: ann\n";
  write_file(other.dir() / "docs/memory.md", edited);
  Envelope dry = other.mutate("memory", "import", R"({"file":"docs/memory.md","dryRun":true})");
  REQUIRE(dry.success);
  CHECK(dry.data["changed"].size() == 1);
  CHECK(other.query("memory", "show", R"({"id":"M001"})").data["title"] == json::Value("Builds need ccache warm"));
  Envelope again = other.mutate("memory", "import", R"({"file":"docs/memory.md"})");
  REQUIRE(again.success);
  CHECK(again.data["changed"] == test::parse_json(R"(["M001"])"));
  CHECK(again.data["proposed"] == test::parse_json(R"(["M007"])"));
  CHECK(other.query("memory", "show", R"({"id":"M007"})").data["status"] == json::Value("proposed"));
  CHECK(other.mutate("memory", "observe", R"({"kind":"learning","title":"Next number follows the import"})").data["id"] ==
        json::Value("M008"));

  CHECK(code_of(other.mutate("memory", "import", R"({"file":"docs/none.md"})")) == ErrorCode::NotFound);
  CHECK(code_of(other.mutate("memory", "import", R"({"file":"/etc/hostname"})")) == ErrorCode::Validation);
  write_file(other.dir() / "docs/bad.md", "## Whims\n");
  CHECK(code_of(other.mutate("memory", "import", R"({"file":"docs/bad.md"})")) == ErrorCode::Validation);
}

TEST_CASE("tasks.complete {remember} keeps a learning in its transaction; undo retracts it with the completion", "[memory]") {
  test::Project p;
  write_file(p.dir() / "src/pay.cpp", "int pay;");
  p.add(R"({"title":"Pay by card","files":["src/pay.cpp"]})");
  Envelope done = p.mutate("tasks", "complete",
                           R"({"id":"T001","notes":"done","remember":"Card payments need idempotency keys\nThe gateway retries on timeouts"})");
  REQUIRE(done.success);
  CHECK(done.data["remembered"] == json::Value("M001"));
  Envelope shown = p.query("memory", "show", R"({"id":"M001"})");
  CHECK(shown.data["kind"] == json::Value("learning"));
  CHECK(shown.data["title"] == json::Value("Card payments need idempotency keys"));
  CHECK(shown.data["body"] == json::Value("The gateway retries on timeouts"));
  CHECK(shown.data["files"] == test::parse_json(R"(["src/pay.cpp"])"));
  CHECK(shown.data["source"]["task"] == json::Value("T001"));
  CHECK(ids_of(p.query("memory", "find", R"({"files":["src/pay.cpp"]})")) == std::vector<std::string>{"M001"});

  Envelope undone = p.mutate("tasks", "undo");
  REQUIRE(undone.success);
  CHECK(p.query("tasks", "show", R"({"id":"T001"})").data["status"] == json::Value("pending"));
  CHECK(p.query("memory", "show", R"({"id":"M001"})").data["status"] == json::Value("retracted"));
  CHECK(ids_of(p.query("memory", "find", R"({"files":["src/pay.cpp"]})")).empty());
}

TEST_CASE("a store made before project memory gets its tables when it is next opened", "[memory][migrate]") {
  test::Project p;
  p.add(R"({"title":"Made before memory"})");
  const auto db = p.dir() / ".cleo" / "tasks.db";
  if (test::on_postgresql())
    test::run_sql(db, std::string(test::kDropV17) + test::kDropV15 + test::kDropFleetV14 + test::kDropPrincipalsV13 + "DROP TABLE plans; " + std::string(test::kDropTrustV11) +
                          "DROP TABLE memory; DROP TABLE memory_keys; DROP TABLE memory_terms; DROP TABLE memory_usage; "
                          "UPDATE meta SET value = '9' WHERE key = 'schema_version'");
  else
    test::downgrade_store(db, 9);
  // Another process (a router of its own) opens it.
  Router later(registry(), Workspace::open(p.dir()), RouterOptions{},
               std::make_unique<FixedClock>(*parse_iso8601("2026-01-02T00:00:00Z")));
  Envelope observed = later.dispatch({Gateway::Mutate, "memory", "observe",
                                      test::parse_json(R"({"kind":"learning","title":"Memory came with the upgrade"})")});
  INFO(to_json(observed, McpAdvice(registry())));
  REQUIRE(observed.success);
  CHECK(observed.data["id"] == json::Value("M001"));
  Envelope version = later.dispatch({Gateway::Query, "system", "version", test::parse_json("{}")});
  CHECK(version.data["schemaVersion"] == json::Value(store_schema_version()));
  CHECK(later.dispatch({Gateway::Query, "tasks", "show", test::parse_json(R"({"id":"T001"})")}).success);
}

namespace {

/// The kept total of memory entries (schema v18) against the entries: "" when it is right, else
/// what ScanKind::MemoryTotal says ("<kept or missing>/<counted>"); and how many entries it says.
struct KeptTotal {
  std::string wrong;
  std::int64_t total = -1;
};
KeptTotal kept_total(const std::filesystem::path& db) {
  auto store = test::create_store(db);
  REQUIRE(store->begin(TxKind::Read));
  auto rows = store->scan(ScanKind::MemoryTotal, {});
  auto total = store->memory_total();
  store->rollback();
  REQUIRE(rows);
  REQUIRE(total);
  KeptTotal out;
  out.total = *total;
  if (!rows->empty()) out.wrong = (*rows)[0][1] + "/" + (*rows)[0][2];
  return out;
}

}  // namespace

TEST_CASE("memory's kept total counts new entries, not changes; a restore, an import, a migration and a repair leave it right", "[memory][total]") {
  test::Project p;
  const auto db = p.dir() / ".cleo" / "tasks.db";
  CHECK(kept_total(db).wrong.empty());
  CHECK(kept_total(db).total == 0);
  REQUIRE(p.mutate("memory", "observe", R"({"kind":"learning","title":"Uploads need exponential backoff"})").success);
  REQUIRE(p.mutate("memory", "observe", R"({"kind":"decision","title":"We use libcurl for HTTP","labels":["net"]})").success);
  REQUIRE(p.mutate("memory", "observe", R"({"kind":"risk","title":"Parsers fail on huge inputs"})").success);
  CHECK(kept_total(db).wrong.empty());
  CHECK(kept_total(db).total == 3);
  // Changes, uses, a retraction and a refused near-duplicate add no entry.
  REQUIRE(p.mutate("memory", "update", R"({"id":"M001","title":"Uploads need backoff with jitter"})").success);
  REQUIRE(p.mutate("memory", "applied", R"({"ids":["M001"]})").success);
  REQUIRE(p.mutate("memory", "retract", R"({"id":"M003","reason":"fixed upstream"})").success);
  CHECK(p.mutate("memory", "observe", R"({"kind":"decision","title":"We use libcurl for HTTP","labels":["net"]})").data["id"] ==
        json::Value("M002"));  // the same entry: a note, not a new one
  CHECK(kept_total(db).wrong.empty());
  CHECK(kept_total(db).total == 3);
  const std::vector<std::string> found = ids_of(p.query("memory", "find", R"({"query":"uploads libcurl"})"));
  CHECK(found == std::vector<std::string>{"M001", "M002"});

  SECTION("a restore counts the entries it brings back") {
    auto saved = p.mutate("system", "backup", R"({"note":"three"})");
    REQUIRE(saved.success);
    REQUIRE(p.mutate("memory", "observe", R"({"kind":"learning","title":"Backups come before restores"})").success);
    CHECK(kept_total(db).total == 4);
    const std::string name = std::filesystem::path(saved.data["file"].as_string()).filename().string();
    REQUIRE(p.mutate("system", "restore", "{\"file\":\"" + name + "\"}").success);
    CHECK(kept_total(db).wrong.empty());
    CHECK(kept_total(db).total == 3);
  }
  SECTION("a wrong total is reported and repaired; a lost one is counted meanwhile, and again by the next writer") {
    test::run_sql(db, "UPDATE memory_terms SET entries = 7 WHERE key = ''");
    CHECK(kept_total(db).wrong == "7/3");
    Envelope report = test::as_report(p.query("validate", "schema"));
    bool reported = false;
    for (const auto& problem : report.data["problems"].as_array())
      if (problem["check"] == json::Value("memory-total")) reported = problem["repairable"] == json::Value(true);
    CHECK(reported);
    Envelope fixed = p.mutate("validate", "fix");
    REQUIRE(fixed.success);
    CHECK(kept_total(db).wrong.empty());
    CHECK(kept_total(db).total == 3);

    test::run_sql(db, "DELETE FROM memory_terms WHERE key = ''");
    CHECK(kept_total(db).wrong == "missing/3");
    CHECK(kept_total(db).total == 3);  // counted
    CHECK(ids_of(p.query("memory", "find", R"({"query":"uploads libcurl"})")) == found);
    REQUIRE(p.mutate("memory", "observe", R"({"kind":"learning","title":"Counting again is cheap once"})").success);
    CHECK(kept_total(db).wrong.empty());
    CHECK(kept_total(db).total == 4);
  }
  SECTION("memory.import adds its entries to the total") {
    Envelope exported = p.query("memory", "export");
    REQUIRE(exported.success);
    test::Project other;
    write_file(other.dir() / "docs/memory.md", exported.data["markdown"].as_string());
    REQUIRE(other.mutate("memory", "import", R"({"file":"docs/memory.md"})").success);
    const auto other_db = other.dir() / ".cleo" / "tasks.db";
    CHECK(kept_total(other_db).wrong.empty());
    CHECK(kept_total(other_db).total == exported.data["entries"].as_int());  // the retracted one is not exported
    CHECK(kept_total(other_db).total == 2);
  }
  SECTION("a store made before the total was kept has it counted when it is next opened") {
    if (test::on_postgresql())
      test::run_sql(db, std::string(test::kDropV17) +
                            "DELETE FROM memory_terms WHERE key = ''; UPDATE meta SET value = '16' WHERE key = 'schema_version'");
    else
      test::downgrade_store(db, 16);
    Router later(registry(), Workspace::open(p.dir()), RouterOptions{},
                 std::make_unique<FixedClock>(*parse_iso8601("2026-01-02T00:00:00Z")));
    Envelope version = later.dispatch({Gateway::Query, "system", "version", test::parse_json("{}")});
    CHECK(version.data["schemaVersion"] == json::Value(store_schema_version()));
    CHECK(kept_total(db).wrong.empty());
    CHECK(kept_total(db).total == 3);
  }
}

TEST_CASE("memory.find: an entry goes stale when a task it is anchored to reopens or goes, whatever its keys name", "[memory][find]") {
  test::Project p;
  p.add(R"({"title":"Ship the parser"})");
  p.add(R"({"title":"Ship the lexer"})");
  p.add(R"({"title":"Ship the printer"})");
  REQUIRE(p.mutate("tasks", "complete", R"({"id":"T001","notes":"done"})").success);
  REQUIRE(p.mutate("tasks", "complete", R"({"id":"T002","notes":"done"})").success);
  REQUIRE(p.mutate("memory", "observe", R"({"kind":"learning","title":"Parsers want lookahead","taskId":"T001"})").success);
  REQUIRE(p.mutate("memory", "observe", R"({"kind":"learning","title":"Lexers want lookahead too","taskId":"T002"})").success);
  REQUIRE(p.mutate("memory", "observe", R"({"kind":"learning","title":"Printers want lookahead never","taskId":"T003"})").success);
  CHECK(ids_of(p.query("memory", "find", R"({"query":"lookahead"})")).size() == 3);
  // An entry's anchor its keys do not name (its task list changed after it was anchored): a find
  // that read the anchored tasks from the entries' `t:` keys alone would miss it.
  const auto db = p.dir() / ".cleo" / "tasks.db";
  {
    auto store = test::create_store(db);
    REQUIRE(store->begin(TxKind::Write));
    auto entry = store->get_memory("M003");
    REQUIRE(entry);
    REQUIRE(*entry);
    MemoryEntry changed = **entry;
    changed.source_task.clear();
    changed.anchors = {{"", "", 0, 0, "T001", "done"}};
    REQUIRE(store->put_memory(changed, memory::keys_of(changed)));
    REQUIRE(store->commit());
  }
  REQUIRE(p.mutate("tasks", "reopen", R"({"id":"T001","reason":"not done after all"})").success);
  REQUIRE(p.mutate("tasks", "delete", R"({"id":"T002","hard":true,"force":true})").success);
  CHECK(ids_of(p.query("memory", "find", R"({"query":"lookahead"})")).empty());
  Envelope stale = p.query("memory", "find", R"({"query":"lookahead","includeStale":true})");
  REQUIRE(ids_of(stale).size() == 3);
  std::map<std::string, std::string> what;
  for (const auto& row : stale.data.as_array()) what[row["id"].as_string()] = row["stale"]["what"].as_string() + " " + row["stale"]["task"].as_string();
  CHECK(what["M001"] == "reopened T001");
  CHECK(what["M002"] == "deleted T002");
  CHECK(what["M003"] == "reopened T001");
}

TEST_CASE("memory.find's candidates past the per-key cap are the same on every call: the newest, the range's last keys first", "[memory][find]") {
  // Before, the cap was a LIMIT without an order: on PostgreSQL which entries it kept followed the
  // plan, and the same find could read other candidates from one call to the next.
  test::Project p;
  for (const char* title : {"Parsers want lookahead", "Lexers need lookahead", "Printers keep lookahead",
                            "Linkers skip lookahead", "Loaders mind lookahead", "Caches speed lookup", "Tables help lookup"})
    REQUIRE(p.mutate("memory", "observe", std::string(R"({"kind":"learning","title":")") + title + "\"}").success);
  auto store = test::create_store(p.dir() / ".cleo" / "tasks.db");
  for (int call = 0; call < 3; ++call) {
    REQUIRE(store->begin(TxKind::Read));
    auto word = store->memory_numbers({{"w:lookahead", "w:lookahead "}}, 3);
    auto prefix = store->memory_numbers({{"w:look", "w:lool"}, {"w:lookahead", "w:lookahead "}}, 3);
    auto every = store->memory_numbers({{"w:look", "w:lool"}}, -1);
    store->rollback();
    REQUIRE(word);
    REQUIRE(prefix);
    REQUIRE(every);
    auto sorted = [](std::vector<std::int64_t> numbers) {
      std::sort(numbers.begin(), numbers.end());
      return numbers;
    };
    CHECK(sorted((*word)[0]) == std::vector<std::int64_t>{3, 4, 5});       // the word's newest three
    CHECK(sorted((*prefix)[0]) == std::vector<std::int64_t>{5, 6, 7});     // lookup's two, then lookahead's newest
    CHECK(sorted((*prefix)[1]) == std::vector<std::int64_t>{3, 4, 5});     // ranges read together keep their own caps
    CHECK(sorted((*every)[0]) == std::vector<std::int64_t>{1, 2, 3, 4, 5, 6, 7});
  }
}

// ---- hardening round 4 (issue 50) ------------------------------------------------------------

TEST_CASE("memory and evidence read no file that never ends: scope and evidence links out of the project are refused at once", "[memory][hardening]") {
  test::Project p;
  write_file(p.dir() / "src/a.cpp", "int a;");
  std::filesystem::create_symlink("/proc/self/pagemap", p.dir() / "src/pagemap");
  REQUIRE(::mkfifo((p.dir() / "src/fifo").c_str(), 0600) == 0);
  {
    std::ofstream(p.dir() / "big.bin") << "";
  }
  std::filesystem::resize_file(p.dir() / "big.bin", 3ULL << 30);  // sparse: no disk used
  Envelope observed = p.mutate("memory", "observe",
                               R"({"kind":"learning","title":"Scope with files that never end",)"
                               R"("files":["src/a.cpp","src/pagemap","src/fifo","big.bin"]})");
  REQUIRE(observed.success);
  CHECK(observed.data["anchoredFiles"] == json::Value(1));  // src/a.cpp alone
  std::string warnings;
  for (const auto& warning : test::warnings_of(observed)) warnings += warning + "\n";
  CHECK(warnings.find("src/pagemap cannot be anchored") != std::string::npos);
  CHECK(warnings.find("outside the project") != std::string::npos);
  CHECK(warnings.find("src/fifo cannot be anchored") != std::string::npos);
  CHECK(warnings.find("big.bin cannot be anchored") != std::string::npos);
  // The entry is still found, and a find does not read the files either.
  CHECK(ids_of(p.query("memory", "find", R"({"files":["src/pagemap"]})")) == std::vector<std::string>{"M001"});

  p.add(R"({"title":"Evidence that never ends"})");
  Envelope evidence = p.mutate("tasks", "evidence", R"({"id":"T001","evidence":{"files":["src/pagemap"]}})");
  CHECK(code_of(evidence) == ErrorCode::EvidenceInvalid);
  CHECK(evidence.error->message.find("outside the project") != std::string::npos);
  CHECK(code_of(p.mutate("tasks", "evidence", R"({"id":"T001","evidence":{"files":["big.bin"]}})")) ==
        ErrorCode::EvidenceInvalid);
  CHECK(code_of(p.mutate("tasks", "evidence", R"({"id":"T001","evidence":{"files":["src/fifo"]}})")) ==
        ErrorCode::EvidenceInvalid);

  // An import file that is such a link is refused too, and one naming it in a scope imports.
  std::filesystem::create_symlink("/proc/self/pagemap", p.dir() / "memory.md");
  CHECK(code_of(p.mutate("memory", "import", R"({"file":"memory.md"})")) == ErrorCode::Validation);
  write_file(p.dir() / "docs/memory.md", "## Learnings\n\n### M010 Imported scope\n\n- files: src/pagemap, src/a.cpp\n");
  Envelope imported = p.mutate("memory", "import", R"({"file":"docs/memory.md"})");
  REQUIRE(imported.success);
  CHECK(imported.data["added"] == test::parse_json(R"(["M010"])"));
}

TEST_CASE("memory.import: an alias id is the entry it names, never a new row over it; every change audited with its before", "[memory][hardening]") {
  test::Project p;
  REQUIRE(p.mutate("memory", "observe", R"({"kind":"learning","title":"Original text of the first entry"})").success);
  for (std::string alias : {"M01", "M1", "M0001"}) {
    write_file(p.dir() / "docs/memory.md", "## Learnings\n\n### " + alias + " Replaced text " + alias + "\n");
    Envelope imported = p.mutate("memory", "import", R"({"file":"docs/memory.md"})");
    REQUIRE(imported.success);
    CHECK(imported.data["added"].empty());
    CHECK(imported.data["changed"] == test::parse_json(R"(["M001"])"));
    CHECK(p.query("memory", "show", R"({"id":"M001"})").data["title"] == json::Value("Replaced text " + alias));
  }
  CHECK(p.query("memory", "stats").data["total"] == json::Value(1));
  // The audit row of the last import holds the entry as it was before it.
  Envelope log = p.query("system", "log", R"({"limit":1,"detail":"full"})");
  REQUIRE(log.success);
  const std::string row = log.data.dump();
  CHECK(row.find("Replaced text M1") != std::string::npos);   // before
  CHECK(row.find("Replaced text M0001") != std::string::npos);  // after
  // Two spellings of one id in one file are the same entry twice.
  write_file(p.dir() / "docs/memory.md", "## Learnings\n\n### M001 One\n\n### M01 Two\n");
  CHECK(code_of(p.mutate("memory", "import", R"({"file":"docs/memory.md"})")) == ErrorCode::Validation);
}

TEST_CASE("memory.import passes the checks of the operation that makes the same change, for the same caller", "[memory][hardening]") {
  test::Project p;
  REQUIRE(p.mutate("memory", "observe", R"({"kind":"convention","title":"Errors are values"})").success);
  REQUIRE(Person(p).mutate("memory", "verify", R"({"id":"M001"})").success);
  auto import_text = [&](const std::string& text) {
    write_file(p.dir() / "docs/memory.md", text);
    return p.mutate("memory", "import", R"({"file":"docs/memory.md"})");
  };
  // Retracting (or changing) what a person verified: a person's act, not an agent's import.
  Envelope retracted = import_text("## Conventions\n\n### M001 Errors are values\n\n- status: retracted\n- reason: no longer\n");
  CHECK(code_of(retracted) == ErrorCode::MutationDisabled);
  CHECK(retracted.error->details["verified"] == test::parse_json(R"(["M001"])"));
  CHECK(p.query("memory", "show", R"({"id":"M001"})").data["status"] == json::Value("active"));
  // A person's import may.
  write_file(p.dir() / "docs/memory.md", "## Conventions\n\n### M001 Errors are values\n\n- status: retracted\n- reason: no longer\n");
  REQUIRE(Person(p).mutate("memory", "import", R"({"file":"docs/memory.md"})").success);
  CHECK(p.query("memory", "show", R"({"id":"M001"})").data["status"] == json::Value("retracted"));
  // An attestation written into the file is not an agent's to make.
  Envelope forged = import_text("## Learnings\n\n### M002 Forged attestation\n\n- verified-by: alice\n");
  REQUIRE(forged.success);
  CHECK_FALSE(p.query("memory", "show", R"({"id":"M002"})").data.contains("verifiedBy"));
  CHECK_FALSE(forged.warnings.empty());
  // Text and scope rules of memory.observe.
  CHECK(code_of(import_text("## Learnings\n\n### M003 " + std::string(300, 'x') + "\n")) == ErrorCode::Validation);
  CHECK(code_of(import_text("## Learnings\n\n### M003 A title with \xE2\x80\xAE a bidi override\n")) == ErrorCode::Validation);
  CHECK(code_of(import_text("## Learnings\n\n### M003 Body too long\n\n" + std::string(5000, 'b') + "\n")) ==
        ErrorCode::Validation);
  CHECK(code_of(import_text("## Learnings\n\n### M003 Scope outside\n\n- files: ../secret.txt\n")) == ErrorCode::Validation);
  CHECK(code_of(import_text("## Learnings\n\n### M003 Scope absolute\n\n- files: /etc/passwd\n")) == ErrorCode::Validation);
  // An id with no room after it: refused, and memory.observe still numbers entries.
  CHECK(code_of(import_text("## Learnings\n\n### M999999999999999999 Far away\n")) == ErrorCode::Validation);
  CHECK(code_of(import_text("## Learnings\n\n### M1000000000 Just past the last id\n")) == ErrorCode::Validation);
  Envelope next = p.mutate("memory", "observe", R"({"kind":"learning","title":"Numbered after the refused import"})");
  REQUIRE(next.success);
  CHECK(next.data["id"] == json::Value("M003"));
  // Nothing of a refused import was kept.
  CHECK(p.query("memory", "stats").data["total"] == json::Value(3));
}

TEST_CASE("memory.import writes at most so many entries at once: a larger file is refused whole, with how to split it", "[memory][hardening]") {
  test::Project p;
  std::string text = "## Learnings\n\n";
  for (int i = 1; i <= 2001; ++i) text += "### M" + std::to_string(i) + " Learned thing number " + std::to_string(i) + "\n\n";
  write_file(p.dir() / "docs/memory.md", text);
  Envelope refused = p.mutate("memory", "import", R"({"file":"docs/memory.md"})");
  CHECK(code_of(refused) == ErrorCode::Validation);
  CHECK(refused.error->details["entries"] == json::Value(2001));
  CHECK(p.query("memory", "stats").data["total"] == json::Value(0));
  // The first 2,000 import; the rest follow, the imported ones now unchanged.
  write_file(p.dir() / "docs/part1.md", text.substr(0, text.find("### M2001 ")));
  REQUIRE(p.mutate("memory", "import", R"({"file":"docs/part1.md"})").success);
  Envelope rest = p.mutate("memory", "import", R"({"file":"docs/memory.md"})");
  REQUIRE(rest.success);
  CHECK(rest.data["added"] == test::parse_json(R"(["M2001"])"));
  CHECK(rest.data["unchanged"] == json::Value(2000));
}

TEST_CASE("memory.applied with an unknown entry says which entries were valid for the work", "[memory][hardening]") {
  test::Project p;
  write_file(p.dir() / "src/pay.cpp", "int pay;");
  p.add(R"({"title":"Card payments","files":["src/pay.cpp"]})");
  REQUIRE(p.mutate("memory", "observe", R"({"kind":"learning","title":"Card payments need idempotency keys","files":["src/pay.cpp"]})").success);
  Envelope wrong = p.mutate("memory", "applied", R"({"ids":["M009"],"taskId":"T001"})");
  CHECK(code_of(wrong) == ErrorCode::NotFound);
  CHECK(wrong.error->details["validIds"] == test::parse_json(R"(["M001"])"));
  CHECK(wrong.error->message.find("M001") != std::string::npos);
  // An alias is the entry itself.
  REQUIRE(p.mutate("memory", "applied", R"({"ids":["M1"],"taskId":"T001"})").success);
  CHECK(code_of(p.mutate("memory", "applied", R"({"ids":["M1","M001"],"taskId":"T001"})")) == ErrorCode::Validation);
}
