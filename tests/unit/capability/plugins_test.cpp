// Plug-in engines: declarations read from config.json's `engines`, operations added or replaced,
// and the program's envelope checked — a plug-in that hangs, lies or floods gets a precise error.
#include <catch2/catch.hpp>

#include <fstream>
#include <sys/stat.h>

#include "capability/plugins.h"
#include "capability/probes.h"
#include "gateway/mcp_syntax.h"
#include "unit/test_support.h"

using namespace ct;
using capability::with_plugins;
using test::parse_json;
namespace fs = std::filesystem;

namespace {

/// A project with scripts in it and a router serving the product's registry plus `engines`.
struct PluginProject {
  test::Project project;
  capability::PluginRegistry plugins;
  std::unique_ptr<Router> router;

  void script(const std::string& name, const std::string& body) {
    fs::path file = project.dir() / name;
    std::ofstream(file) << "#!/bin/sh\n" << body << "\n";
    ::chmod(file.c_str(), 0755);
  }
  void serve(std::string_view engines) {
    plugins = with_plugins(ct::registry(), parse_json(engines));
    RouterOptions options;
    router = std::make_unique<Router>(plugins.registry, Workspace::open(project.dir()), options,
                                      std::make_unique<FixedClock>(*parse_iso8601("2026-01-01T00:00:00Z")));
  }
  Envelope call(Gateway gateway, std::string domain, std::string operation, std::string_view params = "{}") {
    return router->dispatch({gateway, std::move(domain), std::move(operation), parse_json(params)});
  }
};

}  // namespace

TEST_CASE("declarations: a new operation in a new domain, with params in the registry's terms", "[plugins]") {
  auto loaded = with_plugins(ct::registry(), parse_json(R"({
    "deploy.run": {"command": ["./deploy.sh"], "gateway": "mutate", "summary": "Deploy the site",
                   "params": [{"name": "env", "type": "enum", "choices": ["staging", "prod"], "required": true},
                              {"name": "dryRun", "type": "boolean", "dryRun": true}]}
  })"));
  CHECK(loaded.warnings.empty());
  const OperationSpec* spec = loaded.registry.find("deploy", "run");
  REQUIRE(spec);
  CHECK(spec->gateway == Gateway::Mutate);
  CHECK(spec->engine == EngineKind::Subprocess);
  CHECK(spec->summary == "Deploy the site");
  REQUIRE(spec->find_param("env"));
  CHECK(spec->find_param("env")->choices.size() == 2);
  CHECK(spec->needs.empty());  // a program with a path: no PATH lookup
  auto domains = loaded.registry.domains(Gateway::Mutate);
  CHECK(std::find(domains.begin(), domains.end(), "deploy") != domains.end());
  CHECK(ct::registry().find("deploy", "run") == nullptr);  // the product's registry is untouched
}

TEST_CASE("declarations: invalid ones are skipped with the reason, the others load", "[plugins]") {
  auto loaded = with_plugins(ct::registry(), parse_json(R"({
    "Bad Name": {"command": ["x"]},
    "a.shellstring": {"command": "rm -rf /", "gateway": "query", "summary": "no"},
    "a.nogateway": {"command": ["x"], "summary": "s"},
    "a.badtype": {"command": ["x"], "gateway": "query", "summary": "s", "params": [{"name": "n", "type": "float"}]},
    "a.enumnochoices": {"command": ["x"], "gateway": "query", "summary": "s", "params": [{"name": "n", "type": "enum"}]},
    "a.slow": {"command": ["x"], "gateway": "query", "summary": "s", "timeoutSeconds": 0},
    "tasks.add": {"command": ["x"], "params": []},
    "a.good": {"command": ["tool", "--json"], "gateway": "query", "summary": "Fine", "extra": 1}
  })"));
  std::string all;
  for (const auto& warning : loaded.warnings) all += warning + "\n";
  INFO(all);
  CHECK(loaded.warnings.size() == 8);
  CHECK(all.find("engines.Bad Name ignored: name it domain.operation") != std::string::npos);
  CHECK(all.find("engines.a.shellstring ignored: command must be a non-empty array of strings (an argv; no shell") != std::string::npos);
  CHECK(all.find("engines.a.nogateway ignored: a new operation needs gateway") != std::string::npos);
  CHECK(all.find("type must be one of") != std::string::npos);
  CHECK(all.find("an enum needs choices") != std::string::npos);
  CHECK(all.find("timeoutSeconds must be an integer from 1 to 3600") != std::string::npos);
  CHECK(all.find("engines.tasks.add ignored: a native operation keeps its own params") != std::string::npos);
  CHECK(all.find("engines.a.good.extra is not a known field") != std::string::npos);
  REQUIRE(loaded.registry.find("a", "good"));
  CHECK(loaded.registry.find("a", "good")->needs == std::vector<std::string_view>{"program:tool"});
  CHECK_FALSE(loaded.registry.find("a", "nogateway"));
}

TEST_CASE("a plug-in serves a new operation: request on stdin, envelope on stdout", "[plugins]") {
  PluginProject p;
  p.script("echo.sh", R"(read -r line; printf '{"success":true,"data":%s,"warnings":["from the plug-in"]}' "$line")");
  p.serve(R"({"demo.echo": {"command": ["./echo.sh"], "gateway": "query", "summary": "Echo the request",
                             "params": [{"name": "word", "type": "string", "max": 10}]}})");
  Envelope ok = p.call(Gateway::Query, "demo", "echo", R"({"word":"hello"})");
  INFO(to_json(ok, McpAdvice(registry())));
  REQUIRE(ok.success);
  CHECK(ok.data["domain"].as_string() == "demo");
  CHECK(ok.data["operation"].as_string() == "echo");
  CHECK(ok.data["params"]["word"].as_string() == "hello");
  CHECK(ok.data["project"].as_string() == p.project.dir().string());
  CHECK(test::warnings_of(ok) == std::vector<std::string>{"from the plug-in"});
  // Params are validated before the program runs.
  Envelope bad = p.call(Gateway::Query, "demo", "echo", R"({"word":"far too long for it"})");
  CHECK(test::code_of(bad) == "E_VALIDATION");  // a string, too long: a data rule (domains/params.h)
  Envelope unknown = p.call(Gateway::Query, "demo", "echo", R"({"other":1})");
  CHECK(test::code_of(unknown) == "E_INVALID_PARAMS");
}

TEST_CASE("a plug-in replaces a native operation; its mutations are audited", "[plugins]") {
  PluginProject p;
  p.script("add.sh", R"(cat > request.json; echo '{"success":true,"data":{"id":"X1","title":"elsewhere"}}')");
  p.serve(R"({"tasks.add": {"command": ["./add.sh"]}})");
  Envelope added = p.call(Gateway::Mutate, "tasks", "add", R"({"title":"Goes to the plug-in"})");
  INFO(to_json(added, McpAdvice(registry())));
  REQUIRE(added.success);
  CHECK(added.data["id"].as_string() == "X1");
  std::ifstream request(p.project.dir() / "request.json");
  std::string text((std::istreambuf_iterator<char>(request)), {});
  CHECK(text.find(R"("title":"Goes to the plug-in")") != std::string::npos);
  // The native handler did not run: no task was created; the call is in the audit trail.
  CHECK(test::code_of(p.call(Gateway::Query, "tasks", "show", R"({"id":"T001"})")) == "E_NOT_FOUND");
  Envelope log = p.call(Gateway::Query, "system", "log", R"({"operation":"tasks.add"})");
  REQUIRE(log.data.as_array().size() == 1);
  // The native spec's validation still applies.
  CHECK(test::code_of(p.call(Gateway::Mutate, "tasks", "add", R"({})")) == "E_INVALID_PARAMS");
}

TEST_CASE("a misbehaving plug-in gets a precise error, never a hang or a crash", "[plugins]") {
  PluginProject p;
  p.script("hang.sh", "sleep 30");
  p.script("closed.sh", "exec >/dev/null 2>&1; sleep 20");
  p.script("garbage.sh", R"(printf 'not json at all')");
  p.script("notutf8.sh", R"(printf '\377\376')");
  p.script("fails.sh", R"(echo 'something broke' >&2; exit 3)");
  p.script("liar.sh", R"(echo '{"success":"yes"}')");
  p.script("error.sh", R"(echo '{"success":false,"error":{"code":"E_NOT_FOUND","message":"no such thing","fix":"try another"}}')");
  p.script("odd.sh", R"(echo '{"success":false,"error":{"code":"E_TASK_CLAIMED","message":"claimed"}}')");
  p.script("flood.sh", R"(head -c 6000000 /dev/zero)");
  p.serve(R"({
    "x.hang": {"command": ["./hang.sh"], "gateway": "query", "summary": "s", "timeoutSeconds": 1},
    "x.closed": {"command": ["./closed.sh"], "gateway": "query", "summary": "s", "timeoutSeconds": 1},
    "x.garbage": {"command": ["./garbage.sh"], "gateway": "query", "summary": "s"},
    "x.notutf8": {"command": ["./notutf8.sh"], "gateway": "query", "summary": "s"},
    "x.fails": {"command": ["./fails.sh"], "gateway": "query", "summary": "s"},
    "x.liar": {"command": ["./liar.sh"], "gateway": "query", "summary": "s"},
    "x.error": {"command": ["./error.sh"], "gateway": "query", "summary": "s"},
    "x.odd": {"command": ["./odd.sh"], "gateway": "query", "summary": "s"},
    "x.flood": {"command": ["./flood.sh"], "gateway": "query", "summary": "s"},
    "x.missing": {"command": ["./nothere.sh"], "gateway": "query", "summary": "s"}
  })");
  auto started = std::chrono::steady_clock::now();
  Envelope hang = p.call(Gateway::Query, "x", "hang");
  CHECK(test::code_of(hang) == "E_TIMEOUT");
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(10));
  // One that closes its stdout and stderr first is held to its limit all the same.
  started = std::chrono::steady_clock::now();
  CHECK(test::code_of(p.call(Gateway::Query, "x", "closed")) == "E_TIMEOUT");
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(5));
  Envelope garbage = p.call(Gateway::Query, "x", "garbage");
  CHECK(test::code_of(garbage) == "E_ENGINE_FAILED");
  CHECK(garbage.error->message.find("wrote no valid envelope: stdout is not JSON") != std::string::npos);
  CHECK(garbage.error->details["stdout"].as_string() == "not json at all");
  CHECK(p.call(Gateway::Query, "x", "notutf8").error->message.find("not UTF-8") != std::string::npos);
  Envelope fails = p.call(Gateway::Query, "x", "fails");
  CHECK(test::code_of(fails) == "E_ENGINE_FAILED");
  CHECK(to_json(fails, McpAdvice(registry())).find("something broke") != std::string::npos);
  CHECK(p.call(Gateway::Query, "x", "liar").error->message.find("no boolean 'success'") != std::string::npos);
  Envelope error = p.call(Gateway::Query, "x", "error");
  CHECK(test::code_of(error) == "E_NOT_FOUND");
  CHECK(mcp_text(error.error->fix, registry()) == "try another");
  Envelope odd = p.call(Gateway::Query, "x", "odd");  // a code the operation does not declare
  CHECK(test::code_of(odd) == "E_ENGINE_FAILED");
  CHECK(odd.error->details["pluginCode"].as_string() == "E_TASK_CLAIMED");
  Envelope flood = p.call(Gateway::Query, "x", "flood");
  CHECK(test::code_of(flood) == "E_ENGINE_FAILED");
  CHECK(flood.error->message.find("more than 4 MiB") != std::string::npos);
  CHECK(test::code_of(p.call(Gateway::Query, "x", "missing")) == "E_CAPABILITY_UNAVAILABLE");
  // The store is untouched and still answers.
  CHECK(p.call(Gateway::Query, "validate", "schema").success);
}

TEST_CASE("plug-ins are in the capability matrix", "[plugins][capability]") {
  PluginProject p;
  p.serve(R"({"x.tool": {"command": ["surely-not-installed-tool"], "gateway": "query", "summary": "s"}})");
  capability::ProbeResolver resolver({"PATH=/nonexistent"});
  RouterOptions options;
  options.capabilities = &resolver;
  Router router(p.plugins.registry, Workspace::open(p.project.dir()), options, std::make_unique<FixedClock>(*parse_iso8601("2026-01-01T00:00:00Z")));
  Envelope matrix = router.dispatch({Gateway::Query, "system", "capabilities", parse_json(R"({"domain":"x"})")});
  REQUIRE(matrix.success);
  REQUIRE(matrix.data.as_array().size() == 1);
  const json::Value& row = matrix.data.as_array()[0];
  CHECK(row["engine"].as_string() == "subprocess");
  CHECK_FALSE(row["available"].as_bool());
  CHECK(row["reason"].as_string() == "surely-not-installed-tool is not on PATH");
  Envelope refused = router.dispatch({Gateway::Query, "x", "tool", json::Value::object()});
  CHECK(test::code_of(refused) == "E_CAPABILITY_UNAVAILABLE");
}

TEST_CASE("a plug-in's pattern cannot stall or crash a worker", "[plugins][hardening3]") {
  // Issue 30 item 1: a param declared with a pattern and no max let one request kill the server
  // (std::regex recursed per character: 150 KB overflowed the stack) or stall it ("(a+)+$": 18 s
  // on 29 characters).
  PluginProject p;
  p.script("ok.sh", R"(cat >/dev/null; echo '{"success":true,"data":{}}')");
  p.serve(R"({"demo.check": {"command": ["./ok.sh"], "gateway": "query", "summary": "Check a value",
                              "params": [{"name": "value", "type": "string", "pattern": "(a+)+$"},
                                         {"name": "word", "type": "string", "pattern": "^[a-z]+$"}]}})");
  REQUIRE(p.plugins.warnings.empty());
  const OperationSpec* spec = p.plugins.registry.find("demo", "check");
  REQUIRE(spec);
  CHECK(spec->find_param("value")->max == kMaxPatternedChars);  // the default cap, shown in help too
  auto started = std::chrono::steady_clock::now();
  Envelope nested = p.call(Gateway::Query, "demo", "check", R"({"value":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!"})");
  CHECK(test::code_of(nested) == "E_VALIDATION");
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(1));
  CHECK(p.call(Gateway::Query, "demo", "check", R"({"value":"aaaa"})").success);
  // 150 KB: refused by the cap before any matching, and not quoted back whole.
  json::Value big = json::Value::object();
  big.set("word", std::string(150'000, 'a'));
  Envelope huge = p.router->dispatch({Gateway::Query, "demo", "check", big});
  CHECK(test::code_of(huge) == "E_VALIDATION");
  CHECK(huge.error->details["max"].as_int() == kMaxPatternedChars);
  CHECK(to_json(huge, McpAdvice(p.plugins.registry)).size() < 4000);
}

TEST_CASE("a plug-in's pattern must be one RE2 runs in linear time", "[plugins][hardening3]") {
  auto loaded = with_plugins(ct::registry(), parse_json(R"({
    "a.backref": {"command": ["x"], "gateway": "query", "summary": "s",
                  "params": [{"name": "n", "type": "string", "pattern": "^(a)\\1$"}]},
    "a.lookahead": {"command": ["x"], "gateway": "query", "summary": "s",
                    "params": [{"name": "n", "type": "string", "pattern": "^(?=a)a$"}]},
    "a.broken": {"command": ["x"], "gateway": "query", "summary": "s",
                 "params": [{"name": "n", "type": "string", "pattern": "(unclosed"}]},
    "a.fine": {"command": ["x"], "gateway": "query", "summary": "s",
               "params": [{"name": "n", "type": "string", "pattern": "^[a-z]{2,8}(-[a-z]+)*$"}]}
  })"));
  std::string all;
  for (const auto& warning : loaded.warnings) all += warning + "\n";
  INFO(all);
  CHECK(loaded.warnings.size() == 3);
  CHECK(all.find("engines.a.backref ignored: param 'n': pattern is not a regular expression RE2 accepts") != std::string::npos);
  CHECK(all.find("engines.a.lookahead ignored") != std::string::npos);
  CHECK(all.find("engines.a.broken ignored") != std::string::npos);
  CHECK(loaded.registry.find("a", "fine"));
}

TEST_CASE("what a plug-in writes reaches the caller neutralised: no raw ESC, NUL or bidi override", "[plugins][hardening3]") {
  // Issue 30 item 15: a plug-in's raw ESC/NUL bytes passed through to callers.
  PluginProject p;
  p.script("loud.sh", R"(cat >/dev/null; printf '{"success":true,"data":{"t\\u001bk":"\\u001b[31mred\\u0000 \\u202Eevil","n":[1,"\\u0007"]},"warnings":["\\u001b]0;title\\u0007"]}')");
  p.script("lies.sh", R"(cat >/dev/null; printf '{"success":false,"error":{"code":"E_NOT_FOUND","message":"gone\\u001b[2J","fix":"\\u202Eok"}}')");
  p.script("stderr.sh", R"(cat >/dev/null; printf 'bad \033[31mthing\000\n' >&2; exit 4)");
  p.serve(R"({"x.loud": {"command": ["./loud.sh"], "gateway": "query", "summary": "s"},
              "x.lies": {"command": ["./lies.sh"], "gateway": "query", "summary": "s"},
              "x.stderr": {"command": ["./stderr.sh"], "gateway": "query", "summary": "s"}})");
  Envelope loud = p.call(Gateway::Query, "x", "loud");
  INFO(to_json(loud, McpAdvice(registry())));
  REQUIRE(loud.success);
  CHECK(loud.data["t^[k"].as_string() == "^[[31mred^@ <U+202E>evil");
  CHECK(loud.data["n"].as_array()[1].as_string() == "^G");
  CHECK(test::warnings_of(loud) == std::vector<std::string>{"^[]0;title^G"});
  Envelope lies = p.call(Gateway::Query, "x", "lies");
  REQUIRE(lies.error);
  CHECK(lies.error->message == "gone^[[2J");
  CHECK(mcp_text(lies.error->fix, registry()) == "<U+202E>ok");
  Envelope stderr_out = p.call(Gateway::Query, "x", "stderr");
  REQUIRE(stderr_out.error);
  std::string all = to_json(stderr_out, McpAdvice(registry()));
  CHECK(all.find("\\u001b") == std::string::npos);
  CHECK(all.find("\\u0000") == std::string::npos);
  CHECK(stderr_out.error->details["stderr"].as_string().find("bad ^[[31mthing^@") != std::string::npos);
}
