#include "engines/rules/memory_constraints.h"

#include <map>

#include "core/sha256.h"

namespace ct::memory {
namespace {

std::string_view trimmed(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t\r\n");
  return text.substr(first, last - first + 1);
}

std::size_t indent_of(std::string_view line) {
  std::size_t n = 0;
  while (n < line.size() && (line[n] == ' ' || line[n] == '\t')) ++n;
  return n;
}

/// The title of an H2 line ("## Steps" → "Steps", trailing #s dropped), or nullopt.
std::optional<std::string_view> h2_title(std::string_view line) {
  if (indent_of(line) > 3) return std::nullopt;
  line = line.substr(indent_of(line));
  if (!line.starts_with("##") || line.starts_with("###")) return std::nullopt;
  line.remove_prefix(2);
  if (!line.empty() && line[0] != ' ' && line[0] != '\t') return std::nullopt;
  line = trimmed(line);
  while (!line.empty() && line.back() == '#') line.remove_suffix(1);
  line = trimmed(line);
  if (line.empty()) return std::nullopt;
  return line;
}

bool is_h1(std::string_view line) {
  line = line.substr(indent_of(line));
  return line.starts_with("# ") || line == "#";
}

/// A top-level list item's text after its marker ("- a", "* a", "+ a", "1. a", "1) a"), or nullopt.
std::optional<std::string_view> item_text(std::string_view line) {
  if (indent_of(line) > 3) return std::nullopt;
  line = line.substr(indent_of(line));
  if (line.size() >= 2 && (line[0] == '-' || line[0] == '*' || line[0] == '+') && (line[1] == ' ' || line[1] == '\t'))
    return trimmed(line.substr(2));
  std::size_t digits = 0;
  while (digits < line.size() && digits < 9 && line[digits] >= '0' && line[digits] <= '9') ++digits;
  if (digits > 0 && digits + 1 < line.size() && (line[digits] == '.' || line[digits] == ')') &&
      (line[digits + 1] == ' ' || line[digits + 1] == '\t'))
    return trimmed(line.substr(digits + 2));
  return std::nullopt;
}

bool is_fence(std::string_view line) {
  line = line.substr(indent_of(line));
  return line.starts_with("```") || line.starts_with("~~~");
}

std::string hash_of(std::string_view text) { return sha256_hex(std::string(text)).substr(0, 16); }

}  // namespace

std::vector<Constraint> constraints_of(std::string_view text) {
  std::vector<Constraint> out;
  std::map<std::string, int> uses;  // how often each title was seen
  std::size_t section = std::string::npos;  // index in out of the open section
  std::size_t item = std::string::npos;     // index in out of the open list item
  int ordinal = 0;
  std::string body;
  bool in_fence = false;
  auto close_item = [&] {
    if (item != std::string::npos) {
      out[item].text = std::string(trimmed(out[item].text));
      out[item].text_hash = hash_of(out[item].text);
    }
    item = std::string::npos;
  };
  auto close_section = [&] {
    close_item();
    if (section != std::string::npos) {
      out[section].text = std::string(trimmed(body));
      out[section].text_hash = hash_of(out[section].text);
    }
    section = std::string::npos;
    body.clear();
  };
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    start = end + 1;
    if (!in_fence) {
      if (auto title = h2_title(line)) {
        close_section();
        std::string id(*title);
        if (const int seen = ++uses[id]; seen > 1) id += " (" + std::to_string(seen) + ")";
        out.push_back({id, std::string(*title), "", ""});
        section = out.size() - 1;
        ordinal = 0;
        continue;
      }
      if (is_h1(line)) {
        close_section();
        continue;
      }
    }
    if (section == std::string::npos) {
      if (is_fence(line)) in_fence = !in_fence;
      continue;
    }
    body += line;
    body += '\n';
    if (is_fence(line)) {
      in_fence = !in_fence;
      if (item != std::string::npos) out[item].text += std::string(line) + "\n";
      continue;
    }
    // Indented under an open item (2+ spaces): its continuation or a nested list, part of it.
    const bool nested = item != std::string::npos && indent_of(line) >= 2;
    if (!in_fence && !nested) {
      if (auto item_line = item_text(line)) {
        close_item();
        const std::string name = out[section].name;
        out.push_back({out[section].id + "/" + std::to_string(++ordinal), name, std::string(*item_line) + "\n", ""});
        item = out.size() - 1;
        continue;
      }
      // A line at the margin that is no item ends the list item; indented lines continue it.
      if (item != std::string::npos && !trimmed(line).empty() && indent_of(line) == 0) {
        close_item();
        continue;
      }
    }
    if (item != std::string::npos) out[item].text += std::string(trimmed(line)) + "\n";
  }
  close_section();
  return out;
}

ConstraintRef split_constraint_ref(std::string_view id) {
  const auto at = id.find(kConstraintSeparator);
  if (at == std::string_view::npos) return {std::string(id), std::nullopt};
  return {std::string(id.substr(0, at)), std::string(id.substr(at + 1))};
}

}  // namespace ct::memory
