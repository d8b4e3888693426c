// Symbol, folder and glob scopes of project memory (issue 54, seed 001; engines/rules/memory_symbols.h):
// a symbol located with universal-ctags goes stale when its own lines change, not on any edit of
// its file, and follows the symbol when it moves; a folder or glob goes stale when a file it covers
// changes, comes or goes; memory.find by symbol; memory.coverage; a scoped find counts the rest.
// Runs on both backends (ctags is installed by scripts/setup.sh).
#include <catch2/catch.hpp>

#include <cstdlib>

#include "engines/rules/memory.h"
#include "engines/rules/memory_symbols.h"
#include "unit/project_edits.h"
#include "unit/test_support.h"

using namespace ct;

namespace {

using test::write_file;

std::vector<std::string> ids_of(const Envelope& e) {
  std::vector<std::string> ids;
  if (e.data.is_array())
    for (const auto& row : e.data.as_array()) ids.push_back(row["id"].as_string());
  return ids;
}

std::string retry_source(std::string_view before, std::string_view backoff_body) {
  return std::string(before) +
         "namespace net {\n"
         "class RetryPolicy {\n"
         " public:\n"
         "  int backoff(int attempt) const;\n"
         "  int jitter() const { return 3; }\n"
         "};\n"
         "\n"
         "int RetryPolicy::backoff(int attempt) const {\n"
         "  return " + std::string(backoff_body) + ";\n"
         "}\n"
         "}  // namespace net\n"
         "int free_fn() { return 1; }\n";
}

/// Sets PATH for the test's scope (a missing program), and back.
struct PathFor {
  std::string saved;
  explicit PathFor(const char* path) : saved(std::getenv("PATH") ? std::getenv("PATH") : "") { ::setenv("PATH", path, 1); }
  ~PathFor() { ::setenv("PATH", saved.c_str(), 1); }
};

}  // namespace

TEST_CASE("memory symbols: scope paths, keys, matching and names", "[memory][symbols]") {
  using namespace memory;
  CHECK(*normal_scope_path("./src//retry.cpp#RetryPolicy::backoff") == "src/retry.cpp#RetryPolicy::backoff");
  CHECK_FALSE(normal_scope_path("src/#backoff"));       // a folder's symbol
  CHECK_FALSE(normal_scope_path("src/*.cpp#backoff"));  // a glob's
  CHECK_FALSE(normal_scope_path("src/retry.cpp#"));
  CHECK_FALSE(normal_scope_path("src/retry.cpp#a b"));
  CHECK_FALSE(normal_scope_path("../retry.cpp#backoff"));

  MemoryEntry entry;
  entry.title = "Backoff doubles";
  entry.files = {"src/retry.cpp#RetryPolicy::backoff"};
  const auto keys = keys_of(entry);
  for (const char* key : {"f:src/retry.cpp", "s:RetryPolicy::backoff", "s:backoff"})
    CHECK(std::find(keys.begin(), keys.end(), key) != keys.end());
  CHECK(file_lookup_keys("src/retry.cpp#RetryPolicy::backoff") ==
        std::vector<std::string>{"f:src/retry.cpp", "s:RetryPolicy::backoff", "s:backoff", "f:src/", "f:"});

  CHECK(scope_match("src/retry.cpp#RetryPolicy::backoff", "src/retry.cpp") == 1);
  CHECK(scope_match("src/retry.cpp#RetryPolicy::backoff", "src/retry.cpp#RetryPolicy::backoff") == 2);
  CHECK(scope_match("src/retry.cpp#RetryPolicy::backoff", "src/retry.cpp#RetryPolicy::jitter") == 0);
  CHECK(scope_match("src/retry.cpp#RetryPolicy::backoff", "src/retry.cc") == 0);
  CHECK(scope_match("src/", "src/retry.cpp#RetryPolicy::backoff") == 1);
  CHECK(scope_match("src/retry.cpp", "src/retry.cpp#RetryPolicy::backoff") == 1);

  CHECK(symbol_names("backoff", "net::RetryPolicy::backoff"));
  CHECK(symbol_names("RetryPolicy::backoff", "net::RetryPolicy::backoff"));
  CHECK(symbol_names("A.m", "pkg.A.m"));
  CHECK_FALSE(symbol_names("off", "net::RetryPolicy::backoff"));
  CHECK_FALSE(symbol_names("Policy::backoff", "net::RetryPolicy::backoff"));
  CHECK(symbol_leaf("net::RetryPolicy::backoff") == "backoff");
  CHECK(symbol_leaf("A.m") == "m");
  CHECK(is_wide_scope("src/"));
  CHECK(is_wide_scope("src/**/*.h"));
  CHECK_FALSE(is_wide_scope("src/a.cpp"));
  CHECK_FALSE(is_wide_scope(""));
}

TEST_CASE("memory symbols: ctags locates definitions with their lines", "[memory][symbols]") {
  test::Project p;
  write_file(p.dir() / "src/retry.cpp", retry_source("", "attempt * 2"));
  write_file(p.dir() / "tool/a.py", "class A:\n    def m(self):\n        return 1\n");
  auto symbols = memory::symbols_of(p.dir(), "src/retry.cpp");
  REQUIRE(symbols);
  auto named = [&](std::string_view name) {
    return std::find_if(symbols->begin(), symbols->end(), [&](const memory::Symbol& s) { return s.name == name; });
  };
  REQUIRE(named("net::RetryPolicy::backoff") != symbols->end());
  CHECK(named("net::RetryPolicy::backoff")->line == 8);
  CHECK(named("net::RetryPolicy::backoff")->end == 10);
  CHECK(named("free_fn") != symbols->end());
  auto python = memory::symbols_of(p.dir(), "tool/a.py");
  REQUIRE(python);
  CHECK(std::any_of(python->begin(), python->end(), [](const memory::Symbol& s) { return s.name == "A.m"; }));
  CHECK(memory::symbols_of(p.dir(), "src/none.cpp").error().code == ErrorCode::NotFound);
  CHECK(memory::symbols_of(p.dir(), "../outside.cpp").error().code == ErrorCode::Validation);
}

TEST_CASE("memory: a symbol's entry goes stale when that symbol's text changes, and follows it when it moves",
          "[memory][symbols]") {
  test::Project p;
  write_file(p.dir() / "src/retry.cpp", retry_source("", "attempt * 2"));
  Envelope backoff = p.mutate("memory", "observe",
                              R"({"kind":"decision","title":"Backoff doubles each attempt","files":["src/retry.cpp#RetryPolicy::backoff"]})");
  REQUIRE(backoff.success);
  CHECK(backoff.warnings.empty());
  CHECK(backoff.data["anchoredFiles"] == json::Value(1));
  REQUIRE(p.mutate("memory", "observe",
                   R"({"kind":"learning","title":"Jitter is a constant for now","files":["src/retry.cpp#jitter"]})").success);
  REQUIRE(p.mutate("memory", "observe", R"({"kind":"learning","title":"The retry file is small","files":["src/retry.cpp"]})").success);

  // Another function changes, and the backoff moves down three lines: both symbols stay fresh.
  write_file(p.dir() / "src/retry.cpp", retry_source("#include <a>\n#include <b>\n\n", "attempt * 2"));
  CHECK_FALSE(p.query("memory", "show", R"({"id":"M001"})").data.contains("stale"));
  CHECK_FALSE(p.query("memory", "show", R"({"id":"M002"})").data.contains("stale"));
  CHECK(p.query("memory", "show", R"({"id":"M003"})").data["stale"]["what"] == json::Value("changed"));

  // Its own lines change: only its entry goes stale, named by its symbol.
  write_file(p.dir() / "src/retry.cpp", retry_source("#include <a>\n#include <b>\n\n", "attempt * 3"));
  Envelope shown = p.query("memory", "show", R"({"id":"M001"})");
  CHECK(shown.data["stale"]["file"] == json::Value("src/retry.cpp#RetryPolicy::backoff"));
  CHECK(shown.data["stale"]["what"] == json::Value("changed"));
  CHECK_FALSE(p.query("memory", "show", R"({"id":"M002"})").data.contains("stale"));

  // Verified again, it is anchored to the text as it is now; the symbol removed, it is missing.
  REQUIRE(p.mutate("memory", "verify", R"({"id":"M001"})").success);
  CHECK_FALSE(p.query("memory", "show", R"({"id":"M001"})").data.contains("stale"));
  write_file(p.dir() / "src/retry.cpp", "int free_fn() { return 1; }\n");
  CHECK(p.query("memory", "show", R"({"id":"M001"})").data["stale"]["what"] == json::Value("missing"));

  // A symbol the file does not define is said at once, and kept as a scope.
  Envelope unknown = p.mutate("memory", "observe",
                              R"({"kind":"learning","title":"Nothing called nowhere","files":["src/retry.cpp#nowhere"]})");
  REQUIRE(unknown.success);
  REQUIRE(unknown.warnings.size() == 1);
  CHECK(unknown.warnings[0].plain_text().find("does not exist") != std::string::npos);
}

TEST_CASE("memory.find by symbol: the entries of that symbol first, by its name or its file", "[memory][symbols]") {
  test::Project p;
  write_file(p.dir() / "src/retry.cpp", retry_source("", "attempt * 2"));
  REQUIRE(p.mutate("memory", "observe", R"({"kind":"decision","title":"Backoff doubles","files":["src/retry.cpp#RetryPolicy::backoff"]})").success);
  REQUIRE(p.mutate("memory", "observe", R"({"kind":"learning","title":"Jitter is fixed","files":["src/retry.cpp#RetryPolicy::jitter"]})").success);
  REQUIRE(p.mutate("memory", "observe", R"({"kind":"learning","title":"Unrelated","files":["src/other.cpp"]})").success);
  CHECK(ids_of(p.query("memory", "find", R"({"symbol":"backoff"})")) == std::vector<std::string>{"M001"});
  CHECK(ids_of(p.query("memory", "find", R"({"symbol":"net::RetryPolicy::jitter"})")) == std::vector<std::string>{"M002"});
  CHECK(ids_of(p.query("memory", "find", R"({"files":["src/retry.cpp#RetryPolicy::jitter"]})")).front() == "M002");
  auto in_file = ids_of(p.query("memory", "find", R"({"files":["src/retry.cpp"]})"));
  std::sort(in_file.begin(), in_file.end());
  CHECK(in_file == std::vector<std::string>{"M001", "M002"});
  CHECK(p.query("memory", "find", R"({"symbol":"nothing"})").note == ErrorCode::NoData);
}

TEST_CASE("memory: a folder or glob scope goes stale when what it covers changes, comes or goes", "[memory][symbols]") {
  test::Project p;
  write_file(p.dir() / "src/net/a.cpp", "int a;");
  write_file(p.dir() / "src/net/a.h", "int a();");
  write_file(p.dir() / "src/net/deep/b.h", "int b();");
  Envelope folder = p.mutate("memory", "observe", R"({"kind":"convention","title":"Net code never blocks","files":["src/net/"]})");
  REQUIRE(folder.success);
  CHECK(folder.data["anchoredFiles"] == json::Value(1));
  REQUIRE(p.mutate("memory", "observe", R"({"kind":"convention","title":"Headers declare only","files":["src/**/*.h"]})").success);
  auto stale = [&](const char* id) { return p.query("memory", "show", std::string(R"({"id":")") + id + "\"}").data["stale"]; };
  CHECK(stale("M001").is_null());
  CHECK(stale("M002").is_null());

  // A hidden file, and a file touched with the same text, change nothing.
  write_file(p.dir() / "src/net/.swap", "x");
  write_file(p.dir() / "src/net/a.h", "int a();");
  CHECK(stale("M001").is_null());
  CHECK(stale("M002").is_null());

  // A .cpp file changes: the folder is stale, the glob of headers is not.
  write_file(p.dir() / "src/net/a.cpp", "int a = 1;");
  CHECK(stale("M001")["what"] == json::Value("changed"));
  CHECK(stale("M001")["file"] == json::Value("src/net/"));
  CHECK(stale("M002").is_null());
  // A header comes: the glob is stale.
  write_file(p.dir() / "src/net/deep/c.h", "int c();");
  CHECK(stale("M002")["what"] == json::Value("changed"));
  // Re-verified, both hold; the folder removed, it is missing.
  for (const char* id : {"M001", "M002"}) {
    Envelope verified = p.mutate_as_person("memory", "verify", std::string(R"({"id":")") + id + "\"}");
    INFO(to_json(verified, McpAdvice(registry())));
    REQUIRE(verified.success);
  }
  CHECK(stale("M001").is_null());
  CHECK(stale("M002").is_null());
  std::filesystem::remove_all(p.dir() / "src/net");
  CHECK(stale("M001")["what"] == json::Value("missing"));
}

TEST_CASE("memory.coverage: files and symbols with live, stale or no memory", "[memory][symbols]") {
  test::Project p;
  write_file(p.dir() / "src/retry.cpp", retry_source("", "attempt * 2"));
  write_file(p.dir() / "src/net/a.cpp", "int a;");
  write_file(p.dir() / "src/util.cpp", "int u;");
  REQUIRE(p.mutate("memory", "observe", R"({"kind":"decision","title":"Backoff doubles","files":["src/retry.cpp#RetryPolicy::backoff"]})").success);
  REQUIRE(p.mutate("memory", "observe", R"({"kind":"learning","title":"Net code never blocks","files":["src/net/"]})").success);
  write_file(p.dir() / "src/net/a.cpp", "int a = 2;");  // M002 stale

  Envelope all = p.query("memory", "coverage", R"({"path":"src"})");
  REQUIRE(all.success);
  CHECK(all.data["path"] == json::Value("src/"));
  CHECK(all.data["files"]["total"] == json::Value(3));
  CHECK(all.data["files"]["live"] == json::Value(1));
  CHECK(all.data["files"]["stale"] == json::Value(1));
  CHECK(all.data["files"]["none"] == json::Value(1));
  const auto& rows = all.data["rows"].as_array();
  REQUIRE(rows.size() == 3);
  CHECK(rows[0]["file"] == json::Value("src/net/a.cpp"));
  CHECK(rows[0]["memory"] == json::Value("stale"));
  CHECK(rows[0]["stale"] == json::Value::array_of(std::vector<std::string>{"M002"}));
  CHECK(rows[1]["file"] == json::Value("src/retry.cpp"));
  CHECK(rows[1]["memory"] == json::Value("live"));
  CHECK(rows[1]["symbols"].as_array().size() == 1);
  CHECK(rows[1]["symbols"].as_array().front()["name"] == json::Value("RetryPolicy::backoff"));
  CHECK(rows[2]["memory"] == json::Value("none"));

  Envelope symbols = p.query("memory", "coverage", R"({"path":"src/retry.cpp","symbols":true})");
  REQUIRE(symbols.success);
  const auto& listed = symbols.data["rows"].as_array().front()["symbols"].as_array();
  auto symbol = [&](std::string_view name) -> const json::Value& {
    for (const auto& row : listed)
      if (row["name"].as_string() == name) return row;
    FAIL("no symbol " << name);
    return listed.front();
  };
  CHECK(symbol("net::RetryPolicy::backoff")["memory"] == json::Value("live"));
  CHECK(symbol("net::RetryPolicy::backoff")["line"] == json::Value(8));
  CHECK(symbol("free_fn")["memory"] == json::Value("none"));
  CHECK(symbols.data["symbols"]["live"] == json::Value(1));
  CHECK(symbols.data["symbols"]["none"].as_int() >= 3);

  // Paged: one file at a time.
  Envelope page = p.query("memory", "coverage", R"({"path":"src/","limit":1,"offset":1})");
  REQUIRE(page.page);
  CHECK(page.page->total == 3);
  CHECK(page.data["rows"].as_array().size() == 1);

  CHECK(p.query("memory", "coverage", R"({"path":"."})").error->code == ErrorCode::Validation);
  CHECK(p.query("memory", "coverage", R"({"path":"src/*.cpp"})").error->code == ErrorCode::Validation);
  CHECK(p.query("memory", "coverage", R"({"path":"nowhere/"})").error->code == ErrorCode::NotFound);
  CHECK(p.query("memory", "coverage", R"({"path":"../"})").error->code == ErrorCode::Validation);
}

TEST_CASE("memory.find with a scope gives the best few and says how many more there are", "[memory][symbols]") {
  test::Project p;
  write_file(p.dir() / "src/store/a.cpp", "int a;");
  for (int i = 0; i < 7; ++i)
    REQUIRE(p.mutate("memory", "observe",
                     R"({"kind":"learning","title":"Store fact )" + std::string(1, static_cast<char>('a' + i)) +
                         R"( differs )" + std::to_string(i * 7919) + R"(","files":["src/store/"],"force":true})")
                .success);
  Envelope few = p.query("memory", "find", R"({"files":["src/store/a.cpp"],"limit":3})");
  REQUIRE(few.success);
  CHECK(few.data.as_array().size() == 3);
  REQUIRE(few.page);
  CHECK(few.page->total == 7);
  CHECK(few.page->next_offset() == 3);
  Envelope rest = p.query("memory", "find", R"({"files":["src/store/a.cpp"],"limit":10})");
  CHECK(rest.data.as_array().size() == 7);
  CHECK_FALSE(rest.page);
  // Words alone: no count (the query is not scoped).
  CHECK_FALSE(p.query("memory", "find", R"({"query":"store fact","limit":3})").page);
}

TEST_CASE("memory: without ctags a symbol scope is kept and said unanchored, and coverage still answers",
          "[memory][symbols]") {
  test::Project p;
  write_file(p.dir() / "src/gone.cpp", "int lonely() { return 0; }\n");
  const auto empty = p.dir() / "empty-path";
  std::filesystem::create_directories(empty);
  PathFor no_ctags(empty.c_str());
  Envelope kept = p.mutate("memory", "observe", R"({"kind":"learning","title":"Lonely is alone","files":["src/gone.cpp#lonely"]})");
  REQUIRE(kept.success);
  REQUIRE(kept.warnings.size() == 1);
  CHECK(kept.warnings[0].plain_text().find("ctags is not installed") != std::string::npos);
  CHECK(kept.data["anchoredFiles"].is_null());
  CHECK(ids_of(p.query("memory", "find", R"({"symbol":"lonely"})")) == std::vector<std::string>{"M001"});
  Envelope coverage = p.query("memory", "coverage", R"({"path":"src/","symbols":true})");
  REQUIRE(coverage.success);
  REQUIRE(coverage.warnings.size() == 1);
  CHECK(coverage.warnings[0].plain_text().find("ctags is not installed") != std::string::npos);
  CHECK(coverage.data["rows"].as_array().front()["symbols"].as_array().front()["name"] == json::Value("lonely"));
}
