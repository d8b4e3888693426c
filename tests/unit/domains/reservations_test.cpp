// Reservations (issue 53, engines/rules/reservations.h): a claim reserves the paths it will touch,
// overlaps with another session's live reservation are warned (advisory) or refused (strict), and
// a reservation lives exactly as long as its claim. Agents on routers with clocks of their own, as
// separate processes would be.
#include <catch2/catch.hpp>

#include <memory>

#include "engines/adapters/subprocess.h"
#include "engines/rules/reservations.h"
#include "unit/test_support.h"

using namespace ct;
using ct::test::code_of;

namespace {

constexpr TimeMs kMinute = 60'000;

/// An agent on its own router with a clock of its own.
using Agent = test::LeaseAgent;

/// T001 (src/store/a.cpp), T002 (src/store/), T003 (docs/x.md), T004 (src/store/a.cpp, shared work).
void plant(test::Project& p) {
  p.add(R"({"title":"Edit store a","files":["src/store/a.cpp"]})");
  p.add(R"({"title":"Rework the store","files":["src/store/"]})");
  p.add(R"({"title":"Write the docs","files":["docs/x.md"]})");
  p.add(R"({"title":"Read the store","files":["src/store/a.cpp"]})");
}

void strict(test::Project& p) {
  REQUIRE(p.mutate_as_person("system", "config.set", R"({"key":"reservations.mode","value":"strict"})").success);
}

}  // namespace

TEST_CASE("reserved paths overlap when one could name a file the other does", "[reservations]") {
  using reservations::overlaps;
  // Plain paths: equal, or a folder holding the other; never a mere common prefix of names.
  CHECK(overlaps("src/a.cpp", "src/a.cpp"));
  CHECK(overlaps("src", "src/a.cpp"));
  CHECK(overlaps("src/a.cpp", "src"));
  CHECK_FALSE(overlaps("src/a.cpp", "src/b.cpp"));
  CHECK_FALSE(overlaps("src2/a.cpp", "src"));
  CHECK_FALSE(overlaps("src/a", "src/ab"));
  // A glob part against a plain one: whether it matches; `*` stays within a part.
  CHECK(overlaps("src/*.h", "src/a.h"));
  CHECK_FALSE(overlaps("src/*.h", "src/a.cpp"));
  CHECK_FALSE(overlaps("src/*.h", "src/sub/a.h"));
  CHECK(overlaps("src/*", "src/sub/a.h"));  // src/sub is a folder src/* names
  CHECK_FALSE(overlaps("*.md", "docs/a.md"));
  CHECK(overlaps("s?c/a.h", "src/a.h"));
  // Two globs: unless their fixed beginnings or endings differ.
  CHECK_FALSE(overlaps("src/*.h", "src/*.cpp"));
  CHECK(overlaps("src/a*", "src/*b"));  // "ab"
  CHECK_FALSE(overlaps("src/a*.h", "src/b*"));
  CHECK(overlaps("src/*.h", "src/*"));
  // `**` reaches any depth: conservative from there on.
  CHECK(overlaps("src/**/*.h", "src/x/y/z.cpp"));
  CHECK(overlaps("**/*.h", "docs/a.md"));
  CHECK_FALSE(overlaps("src/**", "docs/a.md"));
  // Symmetric.
  for (auto [a, b] : {std::pair{"src/*.h", "src/a.h"}, std::pair{"src/**", "docs"}, std::pair{"a/b", "a"}})
    CHECK(overlaps(a, b) == overlaps(b, a));
}

TEST_CASE("reserved paths are kept relative to the project, without dots or a trailing slash", "[reservations]") {
  CHECK(*reservations::normal_path("./src//store/", "paths") == "src/store");
  CHECK(*reservations::normal_path("src\\a.cpp", "paths") == "src/a.cpp");
  CHECK(*reservations::normal_path("src/**/*.h", "paths") == "src/**/*.h");
  for (const char* bad : {"", "  ", "/etc/passwd", "../elsewhere", "src/../../x", "./", "C:/x"}) {
    INFO(bad);
    auto refused = reservations::normal_path(bad, "paths");
    REQUIRE_FALSE(refused);
    CHECK(refused.error().code == ErrorCode::Validation);
    CHECK(refused.error().details["field"].as_string() == "paths");
  }
}

TEST_CASE("a claim reserves the task's files; another session's overlapping claim is warned", "[reservations]") {
  test::Project p;
  plant(p);
  Agent a(p, "alpha"), b(p, "beta");
  const std::string first = a.start_session("first");
  b.start_session("second");
  Envelope started = a.mutate("tasks", "start", R"({"id":"T001"})");
  REQUIRE(started.success);
  CHECK(started.data["reserved"].dump() == R"(["src/store/a.cpp"])");
  CHECK(started.warnings.empty());

  // src/store/ holds src/store/a.cpp: advisory mode keeps the claim and says whose the path is.
  Envelope overlapping = b.mutate("tasks", "start", R"({"id":"T002"})");
  REQUIRE(overlapping.success);
  const std::vector<std::string> warned = test::warnings_of(overlapping);
  REQUIRE(warned.size() == 1);
  CHECK(warned[0].find(R"("src/store" (overlaps "src/store/a.cpp") is reserved by session )" + first +
                                     " (alpha) for T001 until 2026-01-01T00:15:00Z") != std::string::npos);
  const json::Value& conflict = overlapping.data["conflicts"].as_array()[0];
  CHECK(conflict["path"].as_string() == "src/store");
  CHECK(conflict["heldBy"]["task"].as_string() == "T001");
  CHECK(conflict["heldBy"]["session"].as_string() == first);
  CHECK(conflict["heldBy"]["agent"].as_string() == "alpha");
  CHECK(conflict["heldBy"]["leaseEnds"].as_string() == "2026-01-01T00:15:00Z");

  // Both are live now; a path filter lists those that overlap it.
  Envelope listed = a.query("tasks", "reservations");
  REQUIRE(listed.success);
  REQUIRE(listed.data.size() == 2);
  Envelope filtered = a.query("tasks", "reservations", R"({"path":"src/store/a.cpp"})");
  CHECK(filtered.data.size() == 2);
  CHECK(a.query("tasks", "reservations", R"({"path":"docs"})").note == ErrorCode::NoData);
  CHECK(a.query("tasks", "reservations", R"({"task":"T002"})").data.as_array()[0]["path"].as_string() == "src/store");
  CHECK(code_of(a.query("tasks", "reservations", R"({"path":"../x"})")) == "E_VALIDATION");

  // Disjoint work meets nothing.
  Agent c(p);
  c.start_session("third");
  Envelope docs = c.mutate("tasks", "start", R"({"id":"T003"})");
  REQUIRE(docs.success);
  CHECK(docs.warnings.empty());
  CHECK_FALSE(docs.data.contains("conflicts"));
}

TEST_CASE("strict reservations.mode refuses an overlapping claim with the holder and when it lapses", "[reservations]") {
  test::Project p;
  plant(p);
  // Only a person makes it strict (or loosens it again).
  CHECK(code_of(p.mutate("system", "config.set", R"({"key":"reservations.mode","value":"strict"})")) ==
        "E_MUTATION_DISABLED");
  strict(p);
  Agent a(p, "alpha"), b(p, "beta");
  const std::string first = a.start_session("first");
  const std::string second = b.start_session("second");
  REQUIRE(a.mutate("tasks", "start", R"({"id":"T001"})").success);

  b.at(5 * kMinute);
  Envelope refused = b.mutate("tasks", "start", R"({"id":"T002"})");
  REQUIRE(code_of(refused) == "E_PATH_RESERVED");
  CHECK(refused.error->retryable());
  CHECK(refused.error->retry_after_seconds == 10 * 60);  // first's lease ends at 00:15
  CHECK(refused.error->details["conflicts"].as_array()[0]["heldBy"]["session"].as_string() == first);
  // The claim went with the refusal: T002 is nobody's, still pending, and reserved by nobody.
  Envelope t2 = b.query("tasks", "show", R"({"id":"T002"})");
  CHECK(t2.data["status"].as_string() == "pending");
  CHECK_FALSE(t2.data.contains("claim"));
  CHECK(b.query("tasks", "reservations", R"({"task":"T002"})").note == ErrorCode::NoData);

  // Shared work meets shared work, never exclusive work.
  Envelope shared_over_exclusive = b.mutate("tasks", "start", R"({"id":"T004","shared":true})");
  CHECK(code_of(shared_over_exclusive) == "E_PATH_RESERVED");
  // Paths named instead of the declared files.
  Envelope named = b.mutate("tasks", "start", R"({"id":"T002","paths":["src/store/b.cpp","src/*.h"]})");
  REQUIRE(named.success);
  CHECK(named.data["reserved"].dump() == R"(["src/*.h","src/store/b.cpp"])");

  // The first lease ends at 00:15 without a sign of life: its reservation lapses with its claim.
  b.at(16 * kMinute);
  REQUIRE(b.mutate("session", "heartbeat").success);
  Envelope after_lapse = b.mutate("tasks", "reserve", R"({"id":"T002","add":["src/store/a.cpp"]})");
  REQUIRE(after_lapse.success);
  CHECK(after_lapse.data["reserved"].dump() == R"(["src/*.h","src/store/a.cpp","src/store/b.cpp"])");
  // The first agent, back, is refused what the second holds now.
  a.at(17 * kMinute);
  Envelope back = a.mutate("tasks", "reserve", R"({"id":"T001","add":["src/store/a.cpp"]})");
  CHECK(code_of(back) == "E_PATH_RESERVED");
  CHECK(back.error->details["conflicts"].as_array()[0]["heldBy"]["session"].as_string() == second);
}

TEST_CASE("shared reservations overlap one another freely", "[reservations]") {
  test::Project p;
  plant(p);
  strict(p);
  Agent a(p), b(p), c(p);
  a.start_session("first");
  b.start_session("second");
  c.start_session("third");
  REQUIRE(a.mutate("tasks", "start", R"({"id":"T001","shared":true})").success);
  Envelope shared = b.mutate("tasks", "start", R"({"id":"T004","shared":true})");
  REQUIRE(shared.success);
  CHECK(shared.data["reserved"].dump() == R"([{"path":"src/store/a.cpp","shared":true}])");
  CHECK(code_of(c.mutate("tasks", "start", R"({"id":"T002"})")) == "E_PATH_RESERVED");
}

TEST_CASE("a reservation is released with its claim: stop, complete, session end, reclaim", "[reservations]") {
  test::Project p;
  plant(p);
  strict(p);
  Agent a(p), b(p);
  a.start_session("first");
  b.start_session("second");
  auto held = [&](const char* task) { return !a.query("tasks", "reservations", std::string(R"({"task":")") + task + "\"}").note; };

  REQUIRE(a.mutate("tasks", "start", R"({"id":"T001"})").success);
  CHECK(held("T001"));
  REQUIRE(a.mutate("tasks", "stop").success);
  CHECK_FALSE(held("T001"));
  REQUIRE(b.mutate("tasks", "start", R"({"id":"T002"})").success);  // free again
  REQUIRE(b.mutate("tasks", "stop").success);

  // Another focus of the same session releases the first one's paths.
  REQUIRE(a.mutate("tasks", "start", R"({"id":"T001"})").success);
  REQUIRE(a.mutate("tasks", "start", R"({"id":"T003"})").success);
  CHECK_FALSE(held("T001"));
  CHECK(held("T003"));

  REQUIRE(a.mutate("tasks", "complete", R"({"id":"T003"})").success);
  CHECK_FALSE(held("T003"));

  REQUIRE(a.mutate("tasks", "start", R"({"id":"T001"})").success);
  REQUIRE(a.mutate("session", "end").success);
  CHECK_FALSE(held("T001"));

  REQUIRE(b.mutate("tasks", "start", R"({"id":"T001"})").success);
  REQUIRE(p.mutate_as_person("tasks", "reclaim", R"({"id":"T001","reason":"its agent crashed"})").success);
  CHECK_FALSE(held("T001"));
  // Restarting it later reserves afresh (no row of the old claim comes back).
  REQUIRE(b.mutate("tasks", "start", R"({"id":"T002"})").success);
  CHECK(a.query("tasks", "reservations").data.size() == 1);
}

TEST_CASE("tasks.reserve widens and narrows the caller's own claim, audited", "[reservations]") {
  test::Project p;
  plant(p);
  Agent a(p), b(p);
  a.start_session("first");
  b.start_session("second");
  REQUIRE(a.mutate("tasks", "start", R"({"id":"T003"})").success);
  // Only the claim's own session reserves for it.
  CHECK(code_of(b.mutate("tasks", "reserve", R"({"id":"T003","add":["docs/y.md"]})")) == "E_ACTIVE_TASK_REQUIRED");
  CHECK(code_of(a.mutate("tasks", "reserve", R"({"id":"T001","add":["docs/y.md"]})")) == "E_ACTIVE_TASK_REQUIRED");
  CHECK(code_of(a.mutate("tasks", "reserve", R"({"id":"T003","add":["/etc/passwd"]})")) == "E_VALIDATION");

  Envelope wider = a.mutate("tasks", "reserve", R"({"id":"T003","add":["docs/y.md","docs/y.md/"]})");
  REQUIRE(wider.success);
  CHECK(wider.data["reserved"].dump() == R"(["docs/x.md","docs/y.md"])");
  Envelope again = a.mutate("tasks", "reserve", R"({"id":"T003","add":["docs/y.md"]})");
  CHECK(again.note == ErrorCode::NoChange);
  Envelope narrower = a.mutate("tasks", "reserve", R"({"id":"T003","remove":["docs/x.md"],"add":["README.md"],"shared":true})");
  REQUIRE(narrower.success);
  CHECK(narrower.data["reserved"].dump() == R"([{"path":"README.md","shared":true},"docs/y.md"])");

  // Each change is the audit row's `reserved` change of the task; the release on stop too.
  REQUIRE(a.mutate("tasks", "stop").success);
  Envelope history = a.query("tasks", "history", R"({"id":"T003"})");
  REQUIRE(history.success);
  const std::string trail = history.data.dump();
  CHECK(trail.find(R"("reserved")") != std::string::npos);
  CHECK(trail.find(R"(["docs/x.md","docs/y.md"])") != std::string::npos);
  CHECK(trail.find(R"([{"path":"README.md","shared":true},"docs/y.md"])") != std::string::npos);
}

TEST_CASE("only a person installs the git hook", "[reservations]") {
  test::Project p;
  ProcessSpec git;
  git.argv = {"git", "init", "-q"};
  git.cwd = p.dir();
  git.env = minimal_environment();
  auto ran = run_process(git);
  REQUIRE(ran);
  REQUIRE(ran->ok());
  CHECK(code_of(p.mutate("tasks", "githook")) == "E_MUTATION_DISABLED");
  CHECK_FALSE(std::filesystem::exists(p.dir() / ".git" / "hooks" / "pre-commit"));
}

TEST_CASE("tasks.next ranks tasks another session reserved last, orchestrate.ready defers them", "[reservations]") {
  test::Project p;
  p.add(R"({"title":"The epic","type":"epic"})");
  p.add(R"({"title":"Touch the store","parent":"T001","priority":"critical","files":["src/store/a.cpp"]})");
  p.add(R"({"title":"Write docs","parent":"T001","priority":"low","files":["docs/x.md"]})");
  p.add(R"({"title":"Unrelated store work","priority":"high"})");
  Agent a(p), b(p);
  const std::string first = a.start_session("first");
  b.start_session("second");
  REQUIRE(a.mutate("tasks", "start", R"({"id":"T004","paths":["src/store"]})").success);

  Envelope next = b.query("tasks", "next", R"({"count":2})");
  REQUIRE(next.success);
  REQUIRE(next.data.size() == 2);
  CHECK(next.data.as_array()[0]["id"].as_string() == "T003");  // low, but free
  CHECK(next.data.as_array()[1]["id"].as_string() == "T002");  // critical, but src/store is first's
  CHECK(next.data.as_array()[1]["reservedBy"]["session"].as_string() == first);
  CHECK(next.data.as_array()[1]["reservedBy"]["task"].as_string() == "T004");
  // The holder itself is not kept off its own paths.
  CHECK(a.query("tasks", "next", R"({"count":1})").data.as_array()[0]["id"].as_string() == "T002");

  Envelope ready = b.query("orchestrate", "ready", R"({"epicId":"T001"})");
  REQUIRE(ready.success);
  CHECK(ready.data["tasks"].size() == 1);
  CHECK(ready.data["tasks"].as_array()[0]["id"].as_string() == "T003");
  CHECK(ready.data["deferred"].as_array()[0]["id"].as_string() == "T002");
  CHECK(ready.data["deferred"].as_array()[0]["conflictsWith"].as_string() == "T004");
  CHECK(ready.data["deferred"].as_array()[0]["reservedBy"].as_string() == first);

  // Released, it is offered first again.
  REQUIRE(a.mutate("tasks", "stop").success);
  CHECK(b.query("tasks", "next", R"({"count":1})").data.as_array()[0]["id"].as_string() == "T002");
  CHECK(b.query("orchestrate", "ready", R"({"epicId":"T001"})").data["tasks"].size() == 2);
}

TEST_CASE("orchestrate.validate (and so spawn) names another session's reservation of the task's files",
          "[reservations]") {
  test::Project p;
  plant(p);
  Agent a(p), b(p);
  const std::string first = a.start_session("first");
  b.start_session("second");
  REQUIRE(a.mutate("tasks", "start", R"({"id":"T002"})").success);  // src/store/
  // Advisory: ready, with the overlap named in a recommendation.
  Envelope advisory = b.mutate("orchestrate", "validate", R"({"id":"T001"})");
  REQUIRE(advisory.success);
  CHECK(advisory.data["ready"].as_bool());
  CHECK(advisory.data["recommendations"].dump().find("src/store") != std::string::npos);
  CHECK(advisory.data["recommendations"].dump().find(first) != std::string::npos);
  // The holder's own reservation counts too (the subagent is another session); a task whose files
  // nobody holds says nothing of it.
  CHECK(a.mutate("orchestrate", "validate", R"({"id":"T001"})").data["recommendations"].dump().find("src/store") !=
        std::string::npos);
  CHECK(b.mutate("orchestrate", "validate", R"({"id":"T003"})").data["recommendations"].dump().find("reserved") ==
        std::string::npos);
  // Strict: a blocker of kind "reservation", with the conflicts.
  strict(p);
  Envelope refused = b.mutate("orchestrate", "validate", R"({"id":"T001"})");
  REQUIRE(refused.success);
  CHECK_FALSE(refused.data["ready"].as_bool());
  REQUIRE(refused.data["blockers"].size() == 1);
  CHECK(refused.data["blockers"].as_array()[0]["kind"].as_string() == "reservation");
  CHECK(refused.data["blockers"].as_array()[0]["conflicts"].as_array()[0]["heldBy"]["session"].as_string() == first);
  // Released: ready again.
  REQUIRE(a.mutate("tasks", "stop").success);
  CHECK(b.mutate("orchestrate", "validate", R"({"id":"T001"})").data["ready"].as_bool());
}

TEST_CASE("undoing a start takes its reservations back with its focus", "[reservations]") {
  test::Project p;
  plant(p);
  Agent a(p);
  a.start_session("first");
  REQUIRE(a.mutate("tasks", "start", R"({"id":"T001"})").success);
  Envelope undone = a.mutate("tasks", "undo");
  REQUIRE(undone.success);
  CHECK(a.query("tasks", "reservations").note == ErrorCode::NoData);
}
