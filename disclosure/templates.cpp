#include "disclosure/templates.h"

#include <algorithm>

namespace ct::disclosure {
namespace {

std::size_t line_of(std::string_view text, std::size_t pos) {
  return 1 + static_cast<std::size_t>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(pos), '\n'));
}

std::vector<std::string> words(std::string_view text) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && text[i] == ' ') ++i;
    std::size_t start = i;
    while (i < text.size() && text[i] != ' ') ++i;
    if (i > start) out.emplace_back(text.substr(start, i - start));
  }
  return out;
}

Error template_error(std::string_view name, std::string_view text, std::size_t pos, std::string message) {
  return Error(ErrorCode::Internal, "template " + std::string(name) + ":" + std::to_string(line_of(text, pos)) + ": " +
                                        std::move(message))
      .with_fix("fix the template under templates/ and rebuild");
}

}  // namespace

Result<std::string_view> template_text(std::string_view name) {
  for (const auto& entry : embedded_templates())
    if (entry.name == name) return entry.text;
  return fail(Error(ErrorCode::Internal, "template " + std::string(name) + " is not built into this binary")
                  .with_fix("add templates/" + std::string(name) + " and rebuild"));
}

Result<std::string> expand(std::string_view text, std::string_view template_name, const Resolver& resolve) {
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t open = text.find("{{", i);
    if (open == std::string_view::npos) break;
    out.append(text.substr(i, open - i));
    std::size_t close = text.find("}}", open + 2);
    std::size_t newline = text.find('\n', open + 2);
    if (close == std::string_view::npos || (newline != std::string_view::npos && newline < close))
      return fail(template_error(template_name, text, open, "'{{' without '}}' on the same line"));
    std::vector<std::string> parts = words(text.substr(open + 2, close - open - 2));
    if (parts.empty()) return fail(template_error(template_name, text, open, "empty placeholder"));
    std::string name = parts.front();
    parts.erase(parts.begin());
    auto value = resolve(name, parts);
    if (!value) return fail(template_error(template_name, text, open, "{{" + name + "}}: " + value.error().message));
    out += *value;
    i = close + 2;
  }
  out.append(text.substr(std::min(i, text.size())));
  return out;
}

}  // namespace ct::disclosure
