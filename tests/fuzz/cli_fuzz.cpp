// cli: `ct`'s argument handling without running anything (cli/command_tree.h). The input is argv
// without the program name, words separated by NUL bytes. find_route, the CommandTree and
// parse_command run as `ct` runs them, with an InputSource whose files and stdin are fixed text
// (no file is read). Server commands (`ct mcp`, `ct serve`) are routed but not started.
//   - nothing crashes and nothing throws out of the library;
//   - refusals carry the codes a user can get from parsing (E_INVALID_INPUT, E_INVALID_PARAMS,
//     E_INVALID_OPERATION, E_FILE_ERROR from the fake file reader);
//   - parsed params are an object, and the router's validation of them fails only with
//     E_INVALID_PARAMS (params that do not fit the spec) or E_VALIDATION (a value that breaks its
//     param's data rule: domains/params.h).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/command_tree.h"
#include "gateway/product.h"
#include "domains/params.h"
#include "fuzz_support.h"

using namespace ct;

namespace {

cli::InputSource fixed_input() {
  cli::InputSource input;
  input.read_file = [](const std::string& path) -> Result<std::string> {
    if (path.starts_with("missing")) return fail(ErrorCode::FileError, "cannot read " + path);
    return std::string(R"({"title":"From a file","labels":["docs"],"tasks":[{"title":"Imported"}]})");
  };
  input.read_stdin = []() -> Result<std::string> {
    return std::string(R"({"success":true,"data":{"title":"From stdin","depends":["T001"]}})");
  };
  return input;
}

bool parse_code(ErrorCode code) {
  return code == ErrorCode::InvalidInput || code == ErrorCode::InvalidParams || code == ErrorCode::FileError;
}

void run(const std::vector<std::string>& args, std::string_view input) {
  static const cli::InputSource source = fixed_input();
  const Registry& operations = registry();
  cli::Route route = cli::find_route(operations, args);
  if (route.error) {
    if (route.error->code != ErrorCode::InvalidInput && route.error->code != ErrorCode::InvalidOperation)
      fuzz::finding("routing failed with an unexpected code", input, route.error->message);
    return;
  }
  if (!route.server.empty()) return;
  cli::CommandTree tree(operations, route);
  auto parsed = cli::parse_command(tree, args, source);
  (void)tree.command();
  if (!parsed) {
    if (!parse_code(parsed.error().code))
      fuzz::finding("parsing failed with an unexpected code", input, parsed.error().message);
    return;
  }
  if (!parsed->help.empty()) return;
  if (!route.spec) {
    (void)tree.help();  // `ct tasks` alone prints the domain's help
    return;
  }
  if (!parsed->params.is_object()) fuzz::finding("parsed params are not an object", input, parsed->params.dump());
  auto params = Params::validate(*route.spec, parsed->params);
  if (!params && params.error().code != ErrorCode::InvalidParams && params.error().code != ErrorCode::Validation)
    fuzz::finding("validation of parsed params failed with an unexpected code", input, params.error().message);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view input = fuzz::as_text(data, size);
  std::vector<std::string> args;
  std::size_t start = 0;
  while (start <= input.size()) {
    std::size_t end = input.find('\0', start);
    if (end == std::string_view::npos) end = input.size();
    args.emplace_back(input.substr(start, end - start));
    start = end + 1;
  }
  if (!input.empty() && input.back() == '\0') args.pop_back();  // a trailing separator ends the last word
  if (input.empty()) args.clear();
  try {
    run(args, input);
  } catch (const std::exception& e) {
    fuzz::finding("an exception escaped the CLI parser", input, e.what());
  } catch (...) {
    fuzz::finding("a non-standard exception escaped the CLI parser", input);
  }
  return 0;
}
