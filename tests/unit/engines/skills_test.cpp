// Skills (engines/rules/skills.h): the front matter parser and each way a file can be malformed, the
// built-ins, the three sources with their precedence, files skipped with a warning, search, and
// the rules select() applies to choose a task's skill.
#include "gateway/mcp_syntax.h"
#include "engines/rules/skills.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <set>

#include "unit/temp_dir.h"
#include "gateway/product.h"

namespace ct {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

void spit(const fs::path& path, std::string_view text) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary);
  out << text;
}

std::string skill_text(std::string_view name, std::string_view description = "Does one thing well.",
                       std::string_view extra = "") {
  return "---\nname: " + std::string(name) + "\ndescription: " + std::string(description) + "\n" + std::string(extra) +
         "---\n## Protocol\n\n1. Do it.\n";
}

/// The parse error of `text`: message, line and fix.
Error parse_error(std::string_view text) {
  auto parsed = parse_skill(text, "x.md");
  REQUIRE_FALSE(parsed);
  CHECK(parsed.error().code == ErrorCode::Validation);
  CHECK(parsed.error().details["file"] == json::Value("x.md"));
  CHECK(!parsed.error().fix.empty());
  return parsed.error();
}

int line_of(const Error& error) { return static_cast<int>(error.details["line"].as_int()); }

bool contains(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

Task task_with(std::string title, std::vector<std::string> labels = {}, std::string description = "") {
  Task task;
  task.id = "T001";
  task.title = std::move(title);
  task.labels = std::move(labels);
  task.description = std::move(description);
  return task;
}

}  // namespace

TEST_CASE("parse_skill reads the front matter and the body", "[skills]") {
  auto skill = parse_skill("---\n"
                           "name: task-executor\n"
                           "description: Implements one task end to end.\n"
                           "tags: [implementation, Code, 'bugfix']\n"
                           "protocols:\n"
                           "  - implementation\n"
                           "  - \"testing\"\n"
                           "# a comment\n"
                           "level: 2\n"
                           "---\n"
                           "\n"
                           "## Protocol\n"
                           "Steps.\n"
                           "\n",
                           "task-executor.md");
  REQUIRE(skill);
  CHECK(skill->name == "task-executor");
  CHECK(skill->description == "Implements one task end to end.");
  CHECK(skill->tags == std::vector<std::string>{"implementation", "code", "bugfix"});
  CHECK(skill->protocols == std::vector<std::string>{"implementation", "testing"});
  CHECK(skill->level == 2);
  CHECK(skill->body == "## Protocol\nSteps.\n");
  CHECK(skill->warnings.empty());
  CHECK(skill->source.empty());
  CHECK(skill->path.empty());
}

TEST_CASE("parse_skill: defaults, CRLF, a byte order mark, quoted values, comma lists", "[skills]") {
  auto skill = parse_skill("\xEF\xBB\xBF---\r\nname: \"doc-writer\"\r\ndescription: 'It''s short.'\r\n"
                           "tags: docs, readme\r\n---\r\nBody\r\n",
                           "d.md");
  REQUIRE(skill);
  CHECK(skill->name == "doc-writer");
  CHECK(skill->description == "It's short.");
  CHECK(skill->tags == std::vector<std::string>{"docs", "readme"});
  CHECK(skill->protocols.empty());
  CHECK(skill->level == 1);
  CHECK(skill->body == "Body\n");
}

TEST_CASE("parse_skill: an unknown key is a warning naming file and line, not an error", "[skills]") {
  auto skill = parse_skill(skill_text("reviewer", "Reviews.", "color: red\n"), "reviewer.md");
  REQUIRE(skill);
  REQUIRE(skill->warnings.size() == 1);
  CHECK(skill->warnings[0] == "reviewer.md:4: unknown key 'color' ignored (known: name, description, tags, "
                              "protocols, level)");
}

TEST_CASE("parse_skill: each malformed front matter names the file, the line and a fix", "[skills]") {
  SECTION("no opening ---") {
    Error e = parse_error("name: x\n---\nbody\n");
    CHECK(line_of(e) == 1);
    CHECK(e.message == "x.md:1: no front matter: the first line must be ---");
  }
  SECTION("an empty file") {
    Error e = parse_error("");
    CHECK(line_of(e) == 1);
    CHECK(contains(e.message, "no front matter"));
  }
  SECTION("no closing ---") {
    Error e = parse_error("---\nname: abc\ndescription: d\n## Protocol\n");
    CHECK(line_of(e) == 1);
    CHECK(contains(e.message, "never closed"));
  }
  SECTION("no name") {
    Error e = parse_error("---\ndescription: d\n---\nbody\n");
    CHECK(contains(e.message, "has no name"));
    CHECK(contains(mcp_text(e.fix, registry()), "name: my-skill"));
  }
  SECTION("an empty name") {
    Error e = parse_error("---\nname:\ndescription: d\n---\nbody\n");
    CHECK(line_of(e) == 2);
    CHECK(contains(e.message, "name is empty"));
  }
  SECTION("no description") {
    Error e = parse_error("---\nname: abc\n---\nbody\n");
    CHECK(contains(e.message, "has no description"));
  }
  SECTION("a name that is not kebab-case: the fix suggests one") {
    Error e = parse_error(skill_text("Code Review"));
    CHECK(line_of(e) == 2);
    CHECK(contains(e.message, "name 'Code Review' is not kebab-case"));
    CHECK(contains(mcp_text(e.fix, registry()), "name: code-review"));
    CHECK(contains(parse_error(skill_text("x")).message, "not kebab-case"));  // too short
    CHECK(contains(parse_error(skill_text("9lives")).message, "not kebab-case"));
    CHECK(contains(parse_error(skill_text(std::string(49, 'a'))).message, "not kebab-case"));
    CHECK(parse_skill(skill_text(std::string(48, 'a')), "x.md"));
  }
  SECTION("a description over 200 characters, or on several lines") {
    Error e = parse_error(skill_text("abc", std::string(201, 'd')));
    CHECK(line_of(e) == 3);
    CHECK(contains(e.message, "201 characters; at most 200"));
    CHECK(parse_skill(skill_text("abc", std::string(200, 'd')), "x.md"));
    CHECK(contains(parse_error("---\nname: abc\ndescription: |\n---\nbody\n").message, "one line"));
  }
  SECTION("a bad level") {
    for (std::string level : {"4", "-1", "one", "1.5", "12"}) {
      INFO(level);
      Error e = parse_error(skill_text("abc", "d", "level: " + level + "\n"));
      CHECK(line_of(e) == 4);
      CHECK(contains(e.message, "level must be an integer 0–3, got '" + level + "'"));
    }
    for (int level = 0; level <= 3; ++level) {
      auto ok = parse_skill(skill_text("abc", "d", "level: " + std::to_string(level) + "\n"), "x.md");
      REQUIRE(ok);
      CHECK(ok->level == level);
    }
  }
  SECTION("a body over 16 KiB") {
    std::string text = skill_text("abc") + std::string(kMaxSkillBytes, 'b') + "\n";
    Error e = parse_error(text);
    CHECK(line_of(e) == 5);
    CHECK(contains(e.message, "bytes; at most 16384"));
  }
  SECTION("no body") {
    Error e = parse_error("---\nname: abc\ndescription: d\n---\n\n\n");
    CHECK(line_of(e) == 4);
    CHECK(contains(e.message, "no body"));
  }
  SECTION("a line that is not key: value") {
    Error e = parse_error("---\nname: abc\njust words\ndescription: d\n---\nbody\n");
    CHECK(line_of(e) == 3);
    CHECK(contains(e.message, "expected `key: value`"));
  }
  SECTION("a key given twice") {
    Error e = parse_error("---\nname: abc\ndescription: d\nname: abd\n---\nbody\n");
    CHECK(line_of(e) == 4);
    CHECK(contains(e.message, "name is given twice (first on line 2)"));
  }
  SECTION("a list item with no key, an unclosed flow list, a bad item, a list for a scalar") {
    CHECK(line_of(parse_error("---\n- a\nname: abc\ndescription: d\n---\nb\n")) == 2);
    Error unclosed = parse_error(skill_text("abc", "d", "tags: [a, b\n"));
    CHECK(line_of(unclosed) == 4);
    CHECK(contains(unclosed.message, "not closed"));
    Error item = parse_error(skill_text("abc", "d", "tags:\n  - ok\n  - two words\n"));
    CHECK(line_of(item) == 6);
    CHECK(contains(item.message, "'two words' is not a valid item"));
    CHECK(contains(parse_error(skill_text("abc", "d", "level: [1]\n")).message, "must be one value"));
  }
  SECTION("indentation and control characters") {
    CHECK(contains(parse_error("---\nname: abc\n  description: d\n---\nb\n").message, "unexpected indentation"));
    Error control = parse_error(skill_text("abc") + "bell \x07\n");
    CHECK(line_of(control) == 8);
    CHECK(contains(control.message, "control character"));
  }
}

TEST_CASE("the built-in skills parse cleanly and include the default", "[skills]") {
  auto builtins = builtin_skills();
  REQUIRE(builtins);
  std::set<std::string> names;
  for (const auto& skill : *builtins) {
    INFO(skill.name);
    names.insert(skill.name);
    CHECK(skill.source == "builtin");
    CHECK(skill.warnings.empty());
    CHECK(skill.path.empty());
    CHECK(skill.tags.size() >= 4);
    CHECK(!skill.protocols.empty());
    CHECK(skill.body.size() < 3000);  // a few hundred tokens: it goes into every spawn prompt
    CHECK(contains(skill.body, "tasks.complete"));
  }
  CHECK(names == std::set<std::string>{"documenter", "epic-architect", "researcher", "spec-writer", "task-executor",
                                       "test-writer", "validator"});
  CHECK(names.contains(std::string(kDefaultSkill)));
  CHECK(embedded_skill_files().size() == builtins->size());
}

TEST_CASE("SkillCatalog: project over user over built-in, with what each overrides", "[skills]") {
  TempDir project, home;
  spit(skills_folder(home.path()) / "task-executor.md", skill_text("task-executor", "The user's executor."));
  spit(skills_folder(home.path()) / "mine.md", skill_text("mine", "The user's own."));
  spit(skills_folder(home.path()) / "shared.md", skill_text("shared", "The user's shared."));
  spit(skills_folder(project.path()) / "shared.md", skill_text("shared", "The project's shared."));
  spit(skills_folder(project.path()) / "documenter.md", skill_text("documenter", "The project's documenter."));

  auto catalog = SkillCatalog::load(project.path(), home.path());
  REQUIRE(catalog);
  CHECK(catalog->warnings().empty());
  std::vector<std::string> names;
  for (const auto& skill : catalog->skills()) names.push_back(skill.name);
  CHECK(names == std::vector<std::string>{"documenter", "epic-architect", "mine", "researcher", "shared",
                                          "spec-writer", "task-executor", "test-writer", "validator"});
  CHECK(catalog->names() == names);

  const Skill* executor = catalog->find("task-executor");
  REQUIRE(executor);
  CHECK(executor->source == "user");
  CHECK(executor->overrides == "builtin");
  CHECK(executor->description == "The user's executor.");
  CHECK(executor->path == skills_folder(home.path()) / "task-executor.md");

  const Skill* shared = catalog->find("shared");
  REQUIRE(shared);
  CHECK(shared->source == "project");
  CHECK(shared->overrides == "user");

  const Skill* documenter = catalog->find("documenter");
  REQUIRE(documenter);
  CHECK(documenter->source == "project");
  CHECK(documenter->overrides == "builtin");

  const Skill* mine = catalog->find("mine");
  REQUIRE(mine);
  CHECK(mine->source == "user");
  CHECK(mine->overrides.empty());

  const Skill* researcher = catalog->find("researcher");
  REQUIRE(researcher);
  CHECK(researcher->source == "builtin");
  CHECK(researcher->overrides.empty());
  CHECK(catalog->find("nope") == nullptr);

  SECTION("without a home and a project: the built-ins only") {
    auto builtins = SkillCatalog::load({}, std::nullopt);
    REQUIRE(builtins);
    CHECK(builtins->skills().size() == 7);
    CHECK(builtins->find("task-executor")->source == "builtin");
  }
}

TEST_CASE("SkillCatalog: a malformed or duplicate file is skipped with a warning", "[skills]") {
  TempDir project, home;
  spit(skills_folder(project.path()) / "bad-level.md", skill_text("bad-level", "d", "level: 9\n"));
  spit(skills_folder(project.path()) / "good.md", skill_text("good"));
  spit(skills_folder(project.path()) / "other.md", skill_text("good", "Same name."));
  spit(skills_folder(project.path()) / "README.md", "# not a skill\n");
  spit(skills_folder(project.path()) / "notes.txt", "ignored\n");
  spit(skills_folder(project.path()) / "huge.md", skill_text("huge") + std::string(kMaxSkillBytes, 'x'));
  fs::create_directories(skills_folder(project.path()) / "folder.md");
  spit(skills_folder(home.path()) / "nofront.md", "just text\n");
  spit(skills_folder(home.path()) / "odd.md", skill_text("odd", "d", "colour: blue\n"));

  auto catalog = SkillCatalog::load(project.path(), home.path());
  REQUIRE(catalog);
  CHECK(catalog->find("good"));
  CHECK(catalog->find("good")->description == "Does one thing well.");  // the first file by name wins
  CHECK(catalog->find("odd"));  // an unknown key does not skip the file
  CHECK_FALSE(catalog->find("bad-level"));
  CHECK_FALSE(catalog->find("huge"));
  const auto& warnings = catalog->warnings();
  REQUIRE(warnings.size() == 6);
  auto has = [&](std::string_view a, std::string_view b) {
    return std::any_of(warnings.begin(), warnings.end(), [&](const std::string& w) { return contains(w, a) && contains(w, b); });
  };
  CHECK(has("~/.cleo/skills/nofront.md:1: no front matter", "skipped"));
  CHECK(has("~/.cleo/skills/odd.md:4: unknown key 'colour'", "ignored"));
  CHECK(has(".cleo/skills/bad-level.md:4: level must be", "skipped; fix:"));
  CHECK(has(".cleo/skills/other.md names skill 'good', like .cleo/skills/good.md before it", "skipped"));
  CHECK(has(".cleo/skills/huge.md is", "at most 16384: skipped"));
  CHECK(has(".cleo/skills/folder.md", "not a regular file"));
  for (const auto& warning : warnings) CHECK_FALSE(contains(warning, project.path().string()));
}

TEST_CASE("SkillCatalog::search ranks a tag over a name over the description", "[skills]") {
  auto catalog = SkillCatalog::load({}, std::nullopt);
  REQUIRE(catalog);
  auto matches = catalog->search("write tests");
  REQUIRE(!matches.empty());
  CHECK(matches[0].skill->name == "test-writer");
  CHECK(matches[0].score == 5);  // tests: tag 3, write: name 2
  CHECK(matches[0].matched == std::vector<std::string>{"write", "tests"});

  auto docs = catalog->search("README");
  REQUIRE(docs.size() == 1);
  CHECK(docs[0].skill->name == "documenter");
  CHECK(docs[0].score == 3);

  auto by_name = catalog->search("architect");
  REQUIRE(!by_name.empty());
  CHECK(by_name[0].skill->name == "epic-architect");
  CHECK(by_name[0].score == 2);

  auto by_description = catalog->search("sources");  // the researcher's description: "with sources"
  REQUIRE(by_description.size() == 1);
  CHECK(by_description[0].skill->name == "researcher");
  CHECK(by_description[0].score == 1);

  CHECK(catalog->search("zebra quantum").empty());
  CHECK(catalog->search("the and it").empty());  // common words say nothing about a description
  CHECK(catalog->search("").empty());
}

TEST_CASE("SkillCatalog::select: explicit, epic, labels, keywords, ties and the default", "[skills]") {
  TempDir project;
  // Two project skills sharing a tag, to show ties go to the first name.
  spit(skills_folder(project.path()) / "zeta.md", skill_text("zeta", "d", "tags: [shared-tag]\n"));
  spit(skills_folder(project.path()) / "alpha.md", skill_text("alpha", "d", "tags: [shared-tag]\n"));
  auto catalog = SkillCatalog::load(project.path(), std::nullopt);
  REQUIRE(catalog);

  SECTION("a name given by the caller wins over everything") {
    Task epic = task_with("Write the docs", {"docs"});
    epic.type = TaskType::Epic;
    auto choice = catalog->select(epic, "validator");
    REQUIRE(choice);
    CHECK(choice->skill->name == "validator");
    CHECK(choice->reason == "named by the caller");
  }
  SECTION("an unknown name is E_NOT_FOUND with did-you-mean and the list call") {
    auto choice = catalog->select(task_with("x"), "documentor");
    REQUIRE_FALSE(choice);
    CHECK(choice.error().code == ErrorCode::NotFound);
    CHECK(choice.error().details["didYouMean"] == json::Value("documenter"));
    CHECK(choice.error().details["valid"].size() == 9);
    CHECK(contains(mcp_text(choice.error().fix, registry()), "operation:'list'"));
  }
  SECTION("an epic gets epic-architect") {
    Task epic = task_with("Ship version one", {"docs"});
    epic.type = TaskType::Epic;
    auto choice = catalog->select(epic, std::nullopt);
    REQUIRE(choice);
    CHECK(choice->skill->name == "epic-architect");
    CHECK(choice->reason == "task T001 is an epic: epic-architect decomposes epics");
  }
  SECTION("a label matching a tag outweighs keywords") {
    auto choice = catalog->select(task_with("Write tests for the test coverage", {"Docs"}), std::nullopt);
    REQUIRE(choice);
    CHECK(choice->skill->name == "documenter");
    CHECK(choice->reason == "label 'docs' matches tag of documenter");
  }
  SECTION("a label naming a skill") {
    auto choice = catalog->select(task_with("Look into caching", {"researcher"}), std::nullopt);
    REQUIRE(choice);
    CHECK(choice->skill->name == "researcher");
    CHECK(choice->reason == "label 'researcher' names researcher");
  }
  SECTION("more labels win") {
    auto choice = catalog->select(task_with("x", {"docs", "qa", "review"}), std::nullopt);
    REQUIRE(choice);
    CHECK(choice->skill->name == "validator");
    CHECK(choice->reason == "labels 'qa', 'review' match tags of validator");
  }
  SECTION("keywords of the title and description, plurals included") {
    auto choice = catalog->select(task_with("Raise coverage", {}, "Add tests for the parser"), std::nullopt);
    REQUIRE(choice);
    CHECK(choice->skill->name == "test-writer");
    CHECK(choice->reason == "keywords 'coverage', 'tests' of the title or description match tags of test-writer");
    auto specs = catalog->select(task_with("Draft the specs"), std::nullopt);
    REQUIRE(specs);
    CHECK(specs->skill->name == "spec-writer");
    CHECK(specs->reason == "keyword 'specs' of the title or description matches tag of spec-writer");
  }
  SECTION("a tie goes to the first name") {
    auto choice = catalog->select(task_with("x", {"shared-tag"}), std::nullopt);
    REQUIRE(choice);
    CHECK(choice->skill->name == "alpha");
  }
  SECTION("nothing matched: the default") {
    auto choice = catalog->select(task_with("Make the login page faster"), std::nullopt);
    REQUIRE(choice);
    CHECK(choice->skill->name == kDefaultSkill);
    CHECK(choice->reason == "default: no tag or keyword matched");
  }
}

TEST_CASE("select uses a project skill that overrides a built-in", "[skills]") {
  TempDir project;
  spit(skills_folder(project.path()) / "documenter.md", skill_text("documenter", "Ours.", "tags: [docs]\n"));
  auto catalog = SkillCatalog::load(project.path(), std::nullopt);
  REQUIRE(catalog);
  auto choice = catalog->select(task_with("x", {"docs"}), std::nullopt);
  REQUIRE(choice);
  CHECK(choice->skill->source == "project");
  CHECK(choice->skill->description == "Ours.");
}

}  // namespace ct
