#include "core/pattern.h"

#include <re2/re2.h>

namespace ct {

std::expected<Pattern, std::string> Pattern::compile(std::string_view pattern) {
  RE2::Options options;
  options.set_log_errors(false);     // the caller reports the error; RE2 would also write it to stderr
  options.set_never_capture(true);   // only whether it matches is asked
  auto re = std::make_shared<const re2::RE2>(re2::StringPiece(pattern.data(), pattern.size()), options);
  if (!re->ok()) return std::unexpected(re->error());
  Pattern out;
  out.re_ = std::move(re);
  return out;
}

bool Pattern::matches(std::string_view text) const {
  return re_ && RE2::FullMatch(re2::StringPiece(text.data(), text.size()), *re_);
}

}  // namespace ct
