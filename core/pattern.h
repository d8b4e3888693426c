// Regular expressions that cannot stall or crash the process: RE2, whose matching takes time
// linear in the text and uses no recursion, for every pattern the product checks text against —
// the registry's param patterns, the ones plug-ins declare in config.json, and fixed patterns of
// the engines. std::regex (libstdc++) is not used for them: it recurses once per character
// (a ~150 KB value overflows the stack) and backtracks exponentially (`(a+)+$`).
//
// The syntax is RE2's, a subset of ECMAScript's: no backreferences and no lookaround. Matching is
// on the whole text (`^`/`$` are optional), in UTF-8.
#pragma once

#include <expected>
#include <memory>
#include <string>
#include <string_view>

namespace re2 {
class RE2;
}

namespace ct {

class Pattern {
 public:
  /// The compiled pattern, or why it cannot be compiled (RE2's own words: a backreference, a
  /// lookahead, a repeat over 1000, a program over RE2's memory budget).
  static std::expected<Pattern, std::string> compile(std::string_view pattern);
  /// True when the whole of `text` matches.
  bool matches(std::string_view text) const;

 private:
  std::shared_ptr<const re2::RE2> re_;
};

}  // namespace ct
