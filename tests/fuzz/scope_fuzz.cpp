// scope: the session scope parser, parse_scope() in engines/rules/session_engine.h.
//   - never crashes; a refusal is E_SCOPE_INVALID;
//   - a parsed scope is well shaped (global has no ids; every kind but custom has one; ids are
//     normalised task ids, without repeats) and its canonical text parses to the same scope.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "engines/rules/session_engine.h"
#include "engines/store/task.h"
#include "fuzz_support.h"

using namespace ct;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text = fuzz::as_text(data, size);
  auto scope = parse_scope(text);
  if (!scope) {
    if (scope.error().code != ErrorCode::ScopeInvalid)
      fuzz::finding("parse_scope failed with a code other than E_SCOPE_INVALID", text, scope.error().message);
    return 0;
  }
  if (scope->kind == ScopeKind::Global) {
    if (!scope->ids.empty() || scope->text != "global") fuzz::finding("a global scope with ids", text, scope->text);
  } else {
    if (scope->ids.empty()) fuzz::finding("a scope without ids", text, scope->text);
    if (scope->kind != ScopeKind::Custom && scope->ids.size() != 1)
      fuzz::finding("a single-root scope with several ids", text, scope->text);
  }
  for (std::size_t i = 0; i < scope->ids.size(); ++i) {
    const std::string& id = scope->ids[i];
    auto normal = normalize_task_id(id);
    if (!normal || *normal != id) fuzz::finding("a scope id that is not a normalised task id", text, id);
    if (std::count(scope->ids.begin(), scope->ids.end(), id) != 1) fuzz::finding("a repeated scope id", text, id);
  }
  auto again = parse_scope(scope->text);
  if (!again) fuzz::finding("the canonical text of a parsed scope does not parse", text, scope->text);
  if (again->kind != scope->kind || again->ids != scope->ids || again->text != scope->text)
    fuzz::finding("the canonical text parses to another scope", text, scope->text + " -> " + again->text);
  return 0;
}
