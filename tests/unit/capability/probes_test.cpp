// The capability resolver: probes of programs, the git work tree, gh's authentication and
// configured values; their cache; and the router refusing an unavailable operation before it runs.
#include <catch2/catch.hpp>

#include <fstream>
#include <sys/stat.h>

#include "capability/probes.h"
#include "gateway/mcp_syntax.h"
#include "engines/project/config.h"
#include "unit/test_support.h"

using namespace ct;
using capability::ProbeResolver;
namespace fs = std::filesystem;

namespace {

/// A directory of fake programs, and an environment whose PATH is that directory plus the
/// system's (for git).
struct FakeBin {
  test::TempDir dir;
  void program(const std::string& name, const std::string& script) {
    fs::path file = dir.path() / name;
    std::ofstream(file) << "#!/bin/sh\n" << script << "\n";
    ::chmod(file.c_str(), 0755);
  }
  std::vector<std::string> env(bool with_system = true) const {
    std::string path = dir.path().string();
    if (with_system) path += ":/usr/local/bin:/usr/bin:/bin";
    return {"PATH=" + path, "HOME=" + dir.path().string(), "LANG=C"};
  }
};

OperationSpec needing(std::vector<std::string_view> needs) {
  OperationSpec spec;
  spec.domain = "release";
  spec.name = "probe";
  spec.needs = std::move(needs);
  return spec;
}

}  // namespace

TEST_CASE("a program need: on PATH with its version, or the fix to install it", "[capability]") {
  FakeBin bin;
  bin.program("gh", "echo 'gh version 2.4.0'; echo second line");
  bin.program("frob", "touch ran; echo 'frob 1.2.3'");
  ProbeResolver resolver(bin.env(false));
  Config config;
  auto found = resolver.probe("program:gh", bin.dir.path(), config);
  CHECK(found.available);
  CHECK(found.detail == "gh version 2.4.0");
  // Any other program (a plug-in) is found, never run to ask its version.
  auto other = resolver.probe("program:frob", bin.dir.path(), config);
  CHECK(other.available);
  CHECK(other.detail == (bin.dir.path() / "frob").string());
  CHECK_FALSE(fs::exists(bin.dir.path() / "ran"));
  auto missing = resolver.probe("program:nothere", bin.dir.path(), config);
  CHECK_FALSE(missing.available);
  CHECK(missing.reason == "nothere is not on PATH");
  CHECK(mcp_text(missing.fix, registry()).find("install nothere") != std::string::npos);
  auto git = ProbeResolver(bin.env(false)).probe("program:git", bin.dir.path(), config);
  CHECK(mcp_text(git.fix, registry()).find("apt-get install -y git") != std::string::npos);
}

TEST_CASE("spawned probes are cached for their time to live", "[capability]") {
  FakeBin bin;
  bin.program("git", "echo git version 9");
  Config config;
  ProbeResolver cached(bin.env(false), std::chrono::seconds(60));
  cached.probe("program:git", bin.dir.path(), config);
  cached.probe("program:git", bin.dir.path(), config);
  CHECK(cached.spawned() == 1);
  ProbeResolver fresh(bin.env(false), std::chrono::milliseconds(0));
  fresh.probe("program:git", bin.dir.path(), config);
  fresh.probe("program:git", bin.dir.path(), config);
  CHECK(fresh.spawned() == 2);
  // Configured values are read every time and spawn nothing.
  cached.probe("config:validate.testCommand", bin.dir.path(), config);
  CHECK(cached.spawned() == 1);
}

TEST_CASE("gh-auth: gh present and authenticated", "[capability]") {
  FakeBin bin;
  Config config;
  bin.program("gh", R"(if [ "$1" = auth ]; then echo 'not logged in' >&2; exit 1; fi; echo 'gh version 2.0')");
  auto out = ProbeResolver(bin.env(false)).probe("gh-auth", bin.dir.path(), config);
  CHECK_FALSE(out.available);
  CHECK(out.reason == "gh is not authenticated");
  CHECK(mcp_text(out.fix, registry()).find("gh auth login") != std::string::npos);
  bin.program("gh", R"(echo 'gh version 2.0')");
  CHECK(ProbeResolver(bin.env(false)).probe("gh-auth", bin.dir.path(), config).available);
  FakeBin empty;
  auto no_gh = ProbeResolver(empty.env(false)).probe("gh-auth", empty.dir.path(), config);
  CHECK(no_gh.reason == "gh is not on PATH");
}

TEST_CASE("git-repo: the project inside a git work tree", "[capability]") {
  FakeBin bin;
  test::TempDir project;
  Config config;
  ProbeResolver resolver(bin.env(), std::chrono::milliseconds(0));
  REQUIRE(resolver.probe("program:git", project.path(), config).available);  // scripts/setup.sh installs git
  auto outside = resolver.probe("git-repo", project.path(), config);
  CHECK_FALSE(outside.available);
  CHECK(mcp_text(outside.fix, registry()).find("git init") != std::string::npos);
  ProcessSpec init;
  init.argv = {"git", "init", "-q"};
  init.cwd = project.path();
  init.env = bin.env();
  REQUIRE(run_process(init));
  auto inside = resolver.probe("git-repo", project.path(), config);
  CHECK(inside.available);
  CHECK(inside.detail == fs::canonical(project.path()).string());
}

TEST_CASE("a config need: set or the command that sets it", "[capability]") {
  FakeBin bin;
  Config config;
  ProbeResolver resolver(bin.env(false));
  auto unset = resolver.probe("config:output.format", bin.dir.path(), config);  // a default is a value
  CHECK(unset.available);
  auto unknown = resolver.probe("config:no.such.key", bin.dir.path(), config);
  CHECK_FALSE(unknown.available);
  CHECK(mcp_text(unknown.fix, registry()) == R"(cleo_mutate {domain:'system', operation:'config.set', params:{key:'no.such.key', value:"<value>"}})");
  // A key only people set: the fix is a person's command line, not a call an agent would be refused.
  auto command = resolver.probe("config:validate.testCommand", bin.dir.path(), config);
  CHECK_FALSE(command.available);
  CHECK(mcp_text(command.fix, registry()).starts_with("a person runs `ct config set validate.testCommand '<value>'` in a terminal"));
  auto weird = resolver.probe("telepathy", bin.dir.path(), config);
  CHECK_FALSE(weird.available);
  CHECK(weird.reason == "unknown need 'telepathy'");
}

TEST_CASE("check: the first unmet need decides; no needs, no probe", "[capability]") {
  FakeBin bin;
  bin.program("frob", "echo frob 1");
  Config config;
  ProbeResolver resolver(bin.env(false));
  CHECK(resolver.check(needing({}), bin.dir.path(), config).available);
  CHECK(resolver.spawned() == 0);  // and a program other than git or gh is only looked for
  auto out = resolver.check(needing({"program:frob", "program:nothere", "program:alsonot"}), bin.dir.path(), config);
  CHECK_FALSE(out.available);
  CHECK(out.need == "program:nothere");
  json::Value rows = resolver.probes({"program:frob", "program:nothere"}, bin.dir.path(), config);
  REQUIRE(rows.as_array().size() == 2);
  CHECK(rows.as_array()[0]["available"].as_bool());
  CHECK(rows.as_array()[0]["detail"].as_string() == (bin.dir.path() / "frob").string());
  // The fix is advice, which the edge writes (domains/envelope.h).
  std::optional<Advice> fix = Advice::from_value(rows.as_array()[1]["fix"]);
  REQUIRE(fix);
  CHECK(fix->plain_text().find("install nothere") != std::string::npos);
}

TEST_CASE("the router refuses an unavailable operation before anything runs", "[capability][router]") {
  test::Project project;
  FakeBin bin;
  ProbeResolver resolver(bin.env(false));
  Registry registry;
  bool ran = false;
  for (const auto& spec : ct::registry().operations())
    if (spec.domain == "tasks" && spec.name == "list") registry.add(spec);
  OperationSpec spec = needing({"program:nothere"});
  spec.gateway = Gateway::Mutate;
  spec.alternatives = {"tasks.list"};
  spec.handler = [&](Context&, const Params&) -> Result<Reply> {
    ran = true;
    return Reply{};
  };
  spec.external = spec.handler;
  registry.add(spec);
  RouterOptions options;
  options.capabilities = &resolver;
  Router router(registry, Workspace::open(project.dir()), options, std::make_unique<FixedClock>(*parse_iso8601("2026-01-01T00:00:00Z")));
  Envelope refused = router.dispatch({Gateway::Mutate, "release", "probe", json::Value::object()});
  REQUIRE_FALSE(refused.success);
  CHECK(refused.error->code == ErrorCode::CapabilityUnavailable);
  CHECK(refused.exit_code() == 5);
  CHECK(refused.error->message == "release.probe is unavailable here: nothere is not on PATH");
  CHECK(mcp_text(refused.error->fix, registry).find("install nothere") != std::string::npos);
  CHECK(refused.error->details["need"].as_string() == "program:nothere");
  REQUIRE(refused.error->alternatives.size() == 1);
  CHECK(refused.error->alternatives[0].operation == "tasks.list");
  CHECK_FALSE(ran);
  // Nothing was audited: the call never ran.
  Envelope log = project.query("system", "log", R"({"operation":"release.probe"})");
  CHECK(log.data.as_array().empty());
}

TEST_CASE("system.capabilities lists the matrix; health summarises it", "[capability]") {
  test::Project project;
  FakeBin bin;
  ProbeResolver resolver(bin.env(false));
  RouterOptions options;
  options.capabilities = &resolver;
  Router router(ct::registry(), Workspace::open(project.dir()), options, std::make_unique<FixedClock>(*parse_iso8601("2026-01-01T00:00:00Z")));
  Envelope all = router.dispatch({Gateway::Query, "system", "capabilities", test::parse_json(R"({"domain":"tasks"})")});
  REQUIRE(all.success);
  REQUIRE_FALSE(all.data.as_array().empty());
  for (const auto& row : all.data.as_array()) {
    CHECK(row["operation"].as_string().starts_with("tasks."));
    CHECK(row["engine"].as_string() == "native");
    // tasks.githook runs git (it needs program:git), which this PATH lacks; the rest need nothing.
    CHECK(row["available"].as_bool() == (row["operation"].as_string() != "tasks.githook"));
  }
  Envelope bad = router.dispatch({Gateway::Query, "system", "capabilities", test::parse_json(R"({"domain":"taks"})")});
  CHECK(test::code_of(bad) == "E_VALIDATION");
  CHECK(bad.error->details["didYouMean"].as_string() == "tasks");
  Envelope health = router.dispatch({Gateway::Query, "system", "health", json::Value::object()});
  bool summarised = false;
  for (const auto& check : health.data["checks"].as_array())
    if (check["name"].as_string() == "capabilities") summarised = check["detail"].as_string().find(" operations, ") != std::string::npos;
  CHECK(summarised);
}
