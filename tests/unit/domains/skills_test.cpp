// skills domain: list/show/find over the three sources (a temporary HOME, never the real one),
// install and remove in the project and the user scope, the outside-project policy for agents,
// and the built-in skills naming only operations that exist.
#include <catch2/catch.hpp>

#include <fstream>
#include <regex>
#include <sstream>

#include "gateway/mcp_syntax.h"
#include "gateway/product.h"
#include "engines/rules/skills.h"
#include "unit/test_support.h"

using namespace ct;
using ct::test::code_of;
namespace fs = std::filesystem;

namespace {

void spit(const fs::path& path, std::string_view text) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary);
  out << text;
}

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::string skill_text(std::string_view name, std::string_view description = "Reviews a change.",
                       std::string_view extra = "") {
  return "---\nname: " + std::string(name) + "\ndescription: " + std::string(description) +
         "\ntags: [review, pr]\n" + std::string(extra) + "---\n## Protocol\n\n1. Read the diff.\n";
}

/// A router on a fresh project with a temporary HOME; `person`: the CLI (may leave the project).
class SkillsProject {
 public:
  explicit SkillsProject(bool person = true) {
    fs::create_directories(home_.path());
    RouterOptions options;
    options.home = home_.path();
    if (person) caller_.principal = test::test_person();
    router_ = std::make_unique<Router>(registry(), Workspace::open(project_.dir()), options,
                                       std::make_unique<FixedClock>(*parse_iso8601("2026-01-01T00:00:00Z")));
  }
  Envelope query(std::string operation, std::string_view params = "{}") {
    return router_->dispatch({Gateway::Query, "skills", std::move(operation), test::parse_json(params), caller_});
  }
  Envelope mutate(std::string operation, std::string_view params = "{}") {
    return router_->dispatch({Gateway::Mutate, "skills", std::move(operation), test::parse_json(params), caller_});
  }
  const fs::path& dir() const { return project_.dir(); }
  const fs::path& home() const { return home_.path(); }

 private:
  test::Project project_;
  test::TempDir home_;
  Caller caller_;
  std::unique_ptr<Router> router_;
};

std::vector<std::string> names_of(const json::Value& rows) {
  std::vector<std::string> out;
  for (const auto& row : rows.as_array()) out.push_back(row["name"].as_string());
  return out;
}

}  // namespace

TEST_CASE("skills.list: the built-ins, then user and project skills with what they override", "[skills]") {
  SkillsProject p;
  Envelope builtins = p.query("list");
  REQUIRE(builtins.success);
  CHECK(names_of(builtins.data) == std::vector<std::string>{"documenter", "epic-architect", "researcher",
                                                            "spec-writer", "task-executor", "test-writer", "validator"});
  CHECK(builtins.data.as_array()[0] == test::parse_json(
                                R"({"name":"documenter","description":"Writes and updates user and developer documentation so it matches the code as it is.","tags":["docs","doc","documentation","document","readme","guide","changelog","tutorial"],"source":"builtin"})"));

  spit(skills_folder(p.home()) / "documenter.md", skill_text("documenter", "The user's documenter."));
  spit(skills_folder(p.dir()) / "reviewer.md", skill_text("reviewer"));
  spit(skills_folder(p.dir()) / "broken.md", "no front matter\n");
  Envelope all = p.query("list");
  REQUIRE(all.success);
  CHECK(names_of(all.data).size() == 8);
  CHECK(all.data.as_array()[0]["source"] == json::Value("user"));
  CHECK(all.data.as_array()[0]["overrides"] == json::Value("builtin"));
  REQUIRE(all.warnings.size() == 1);
  CHECK(test::warnings_of(all)[0].starts_with(".cleo/skills/broken.md:1: no front matter"));

  Envelope project = p.query("list", R"({"source":"project"})");
  CHECK(names_of(project.data) == std::vector<std::string>{"reviewer"});
  Envelope review = p.query("list", R"({"tag":"Review"})");
  CHECK(names_of(review.data) == std::vector<std::string>{"documenter", "reviewer", "validator"});
  Envelope full = p.query("list", R"({"source":"project","detail":"full"})");
  CHECK(full.data.as_array()[0]["path"] == json::Value(".cleo/skills/reviewer.md"));
  CHECK(full.data.as_array()[0]["level"] == json::Value(1));
  Envelope fields = p.query("list", R"({"fields":["name","source"]})");
  CHECK(fields.data.as_array()[1] == test::parse_json(R"({"name":"epic-architect","source":"builtin"})"));
  Envelope none = p.query("list", R"({"tag":"nothing-here"})");
  CHECK(none.success);
  CHECK(code_of(none) == "E_NO_DATA");
  Envelope paged = p.query("list", R"({"offset":6})");
  CHECK(names_of(paged.data) == std::vector<std::string>{"test-writer", "validator"});
}

TEST_CASE("skills.show: a skill in full; an unknown name is E_NOT_FOUND with did-you-mean", "[skills]") {
  SkillsProject p;
  Envelope shown = p.query("show", R"({"name":"task-executor"})");
  REQUIRE(shown.success);
  CHECK(shown.data["source"] == json::Value("builtin"));
  CHECK_FALSE(shown.data.contains("path"));
  CHECK(shown.data["body"].as_string().starts_with("## Protocol"));
  CHECK(shown.data["protocols"] == test::parse_json(R"(["implementation"])"));

  spit(skills_folder(p.dir()) / "reviewer.md", skill_text("reviewer"));
  Envelope project = p.query("show", R"({"name":"reviewer"})");
  CHECK(project.data["path"] == json::Value(".cleo/skills/reviewer.md"));
  CHECK(project.data["body"] == json::Value("## Protocol\n\n1. Read the diff.\n"));

  Envelope missing = p.query("show", R"({"name":"reviwer"})");
  REQUIRE_FALSE(missing.success);
  CHECK(code_of(missing) == "E_NOT_FOUND");
  CHECK(missing.error->details["didYouMean"] == json::Value("reviewer"));
  CHECK(mcp_text(missing.error->fix, registry()) == "cleo_query {domain:'skills', operation:'list', params:{}} lists every skill");
}

TEST_CASE("skills.find ranks matches; nothing found is an E_NO_DATA note", "[skills]") {
  SkillsProject p;
  Envelope found = p.query("find", R"({"query":"write tests"})");
  REQUIRE(found.success);
  CHECK(found.data.as_array()[0]["name"] == json::Value("test-writer"));
  CHECK(found.data.as_array()[0]["score"] == json::Value(5));
  Envelope none = p.query("find", R"({"query":"zebra"})");
  CHECK(none.success);
  CHECK(code_of(none) == "E_NO_DATA");
  CHECK(none.data.as_array().empty());
}

TEST_CASE("skills.install: validated, written atomically, E_ALREADY_EXISTS unless force", "[skills]") {
  SkillsProject p;
  spit(p.dir() / "docs/reviewer.md", skill_text("reviewer", "Reviews a change.", "colour: red\n"));
  Envelope installed = p.mutate("install", R"({"path":"docs/reviewer.md"})");
  REQUIRE(installed.success);
  CHECK(installed.data == test::parse_json(R"({"name":"reviewer","source":"project","path":".cleo/skills/reviewer.md"})"));
  REQUIRE(installed.warnings.size() == 1);
  CHECK(test::warnings_of(installed)[0].starts_with("docs/reviewer.md:5: unknown key 'colour'"));
  CHECK(slurp(skills_folder(p.dir()) / "reviewer.md") == slurp(p.dir() / "docs/reviewer.md"));

  CHECK(code_of(p.mutate("install", R"({"path":"docs/reviewer.md"})")) == "E_NO_CHANGE");

  spit(p.dir() / "docs/reviewer2.md", skill_text("reviewer", "Reviews better."));
  Envelope exists = p.mutate("install", R"({"path":"docs/reviewer2.md"})");
  CHECK(exists.success);
  CHECK(code_of(exists) == "E_ALREADY_EXISTS");
  CHECK(exists.data["installed"] == json::Value(false));
  CHECK(slurp(skills_folder(p.dir()) / "reviewer.md").find("Reviews a change.") != std::string::npos);

  Envelope forced = p.mutate("install", R"({"path":"docs/reviewer2.md","force":true})");
  REQUIRE(forced.success);
  CHECK(forced.data["replaced"] == json::Value(true));
  CHECK(slurp(skills_folder(p.dir()) / "reviewer.md").find("Reviews better.") != std::string::npos);

  SECTION("a skill kept under another file name is replaced by <name>.md") {
    spit(skills_folder(p.dir()) / "old-name.md", skill_text("auditor"));
    spit(p.dir() / "auditor.md", skill_text("auditor", "New auditor."));
    Envelope moved = p.mutate("install", R"({"path":"auditor.md","force":true})");
    REQUIRE(moved.success);
    CHECK(moved.data["path"] == json::Value(".cleo/skills/auditor.md"));
    CHECK_FALSE(fs::exists(skills_folder(p.dir()) / "old-name.md"));
  }
  SECTION("overriding a built-in says so") {
    spit(p.dir() / "mine/documenter.md", skill_text("documenter", "Our way."));
    Envelope over = p.mutate("install", R"({"path":"mine/documenter.md"})");
    REQUIRE(over.success);
    CHECK(over.data["overrides"] == json::Value("builtin"));
    CHECK(p.query("show", R"({"name":"documenter"})").data["source"] == json::Value("project"));
  }
}

TEST_CASE("skills.install refuses what is not a valid skill file", "[skills]") {
  SkillsProject p;
  Envelope missing = p.mutate("install", R"({"path":"nope.md"})");
  CHECK(code_of(missing) == "E_NOT_FOUND");
  CHECK(missing.error->details["field"] == json::Value("path"));

  fs::create_directories(p.dir() / "folder.md");
  CHECK(code_of(p.mutate("install", R"({"path":"folder.md"})")) == "E_FILE_ERROR");

  spit(p.dir() / "big.md", skill_text("big") + std::string(kMaxSkillBytes, 'x'));
  Envelope big = p.mutate("install", R"({"path":"big.md"})");
  CHECK(code_of(big) == "E_VALIDATION");
  CHECK(big.error->message.find("at most 16384") != std::string::npos);

  spit(p.dir() / "bad.md", skill_text("bad", "d", "level: 7\n"));
  Envelope bad = p.mutate("install", R"({"path":"bad.md"})");
  CHECK(code_of(bad) == "E_VALIDATION");
  CHECK(bad.error->details["file"] == json::Value("bad.md"));
  CHECK(bad.error->details["line"] == json::Value(5));
  CHECK_FALSE(fs::exists(skills_folder(p.dir())));
}

TEST_CASE("skills.install and remove in the user scope; agents need security.allowOutsideProject", "[skills]") {
  SkillsProject person(true);
  spit(person.dir() / "reviewer.md", skill_text("reviewer"));
  Envelope user = person.mutate("install", R"({"path":"reviewer.md","scope":"user"})");
  REQUIRE(user.success);
  CHECK(user.data["path"] == json::Value("~/.cleo/skills/reviewer.md"));
  CHECK(fs::exists(skills_folder(person.home()) / "reviewer.md"));
  CHECK(person.query("show", R"({"name":"reviewer"})").data["source"] == json::Value("user"));

  // A project skill of the same name shadows it: installing says so.
  spit(skills_folder(person.dir()) / "reviewer.md", skill_text("reviewer", "The project's."));
  spit(person.dir() / "reviewer-v2.md", skill_text("reviewer", "Second user version."));
  Envelope shadowed = person.mutate("install", R"({"path":"reviewer-v2.md","scope":"user","force":true})");
  REQUIRE(shadowed.success);
  REQUIRE(shadowed.warnings.size() == 1);
  CHECK(test::warnings_of(shadowed)[0] == "the project skill 'reviewer' (.cleo/skills/reviewer.md) takes precedence in this project");

  Envelope removed = person.mutate("remove", R"({"name":"reviewer","scope":"user"})");
  REQUIRE(removed.success);
  CHECK(removed.data == test::parse_json(
                           R"({"source":"user","path":"~/.cleo/skills/reviewer.md","removed":true,"effective":"project"})"));

  SkillsProject agent(false);
  spit(agent.dir() / "reviewer.md", skill_text("reviewer"));
  Envelope refused = agent.mutate("install", R"({"path":"reviewer.md","scope":"user"})");
  CHECK(code_of(refused) == "E_INVALID_INPUT");
  CHECK(refused.error->details["field"] == json::Value("scope"));
  // Its fix says who can let agents do it: a person, not the agent itself.
  CHECK(mcp_text(refused.error->fix, registry()).find("a person runs `ct config set security.allowOutsideProject true`") != std::string::npos);
  CHECK(code_of(agent.mutate("remove", R"({"name":"reviewer","scope":"user"})")) == "E_INVALID_INPUT");
  // Reading a file outside the project is refused too.
  test::TempDir elsewhere;
  spit(elsewhere.path() / "x.md", skill_text("outsider"));
  Envelope outside = agent.mutate("install", "{\"path\":\"" + (elsewhere.path() / "x.md").string() + "\"}");
  CHECK(code_of(outside) == "E_INVALID_INPUT");
  CHECK(outside.error->details["field"] == json::Value("path"));
  // ... also through a symlink inside the project.
  fs::create_symlink(elsewhere.path() / "x.md", agent.dir() / "link.md");
  CHECK(code_of(agent.mutate("install", R"({"path":"link.md"})")) == "E_INVALID_INPUT");
  // The project scope is fine for an agent.
  CHECK(agent.mutate("install", R"({"path":"reviewer.md"})").success);

  // A person may read it from anywhere.
  CHECK(person.mutate("install", "{\"path\":\"" + (elsewhere.path() / "x.md").string() + "\"}").success);
}

TEST_CASE("skills.remove: project skills go, built-ins stay, unknown names are E_NOT_FOUND", "[skills]") {
  SkillsProject p;
  spit(skills_folder(p.dir()) / "task-executor.md", skill_text("task-executor", "Ours."));
  spit(skills_folder(p.dir()) / "reviewer.md", skill_text("reviewer"));

  Envelope restored = p.mutate("remove", R"({"name":"task-executor"})");
  REQUIRE(restored.success);
  CHECK(restored.data["effective"] == json::Value("builtin"));
  CHECK(p.query("show", R"({"name":"task-executor"})").data["source"] == json::Value("builtin"));

  Envelope builtin = p.mutate("remove", R"({"name":"task-executor"})");
  CHECK(code_of(builtin) == "E_VALIDATION");
  CHECK(builtin.error->message == "'task-executor' is a built-in skill: built-ins cannot be removed");
  CHECK(mcp_text(builtin.error->fix, registry()).find("operation:'install'") != std::string::npos);

  Envelope missing = p.mutate("remove", R"({"name":"reviewr"})");
  CHECK(code_of(missing) == "E_NOT_FOUND");
  CHECK(missing.error->details["didYouMean"] == json::Value("reviewer"));

  Envelope gone = p.mutate("remove", R"({"name":"reviewer"})");
  REQUIRE(gone.success);
  CHECK_FALSE(gone.data.contains("effective"));
  CHECK_FALSE(fs::exists(skills_folder(p.dir()) / "reviewer.md"));
}

TEST_CASE("skills run outside a project: built-ins and user skills, no project scope", "[skills]") {
  test::TempDir nowhere, home;
  spit(skills_folder(home.path()) / "mine.md", skill_text("mine"));
  RouterOptions options;
  options.home = home.path();
  Router router(registry(), Workspace::open(nowhere.path()), options, std::make_unique<FixedClock>(*parse_iso8601("2026-01-01T00:00:00Z")));
  const Caller person{.principal = test::test_person()};
  Envelope listed = router.dispatch({Gateway::Query, "skills", "list", json::Value(), person});
  REQUIRE(listed.success);
  CHECK(listed.data.size() == 8);
  Envelope install = router.dispatch({Gateway::Mutate, "skills", "install", test::parse_json(R"({"path":"x.md"})"), person});
  CHECK(code_of(install) == "E_NOT_INITIALIZED");
}

TEST_CASE("the built-in skills name only operations that exist", "[skills]") {
  auto builtins = builtin_skills();
  REQUIRE(builtins);
  const std::regex operation(R"(`([a-z]+)\.([a-zA-Z.]+)`)");
  for (const auto& skill : *builtins) {
    INFO(skill.name);
    std::size_t named = 0;
    for (auto it = std::sregex_iterator(skill.body.begin(), skill.body.end(), operation); it != std::sregex_iterator();
         ++it) {
      INFO((*it)[0].str());
      ++named;
      CHECK(registry().find((*it)[1].str(), (*it)[2].str()) != nullptr);
    }
    CHECK(named >= 3);
  }
}
