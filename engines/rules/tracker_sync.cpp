#include "engines/rules/tracker_sync.h"

#include <algorithm>
#include <cctype>

#include "core/text.h"

namespace ct::tracker_sync {
namespace {

constexpr std::size_t kTitleMax = 200;
constexpr std::size_t kDescriptionMax = 2000;
constexpr std::size_t kCriterionMax = 200;
constexpr std::size_t kListMax = 50;

/// Control characters a task's text may not hold become spaces (tabs too; newlines stay where allowed).
std::string clean(std::string_view text, bool allow_newlines) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\r') continue;
    if (c == '\n' && allow_newlines) {
      out += c;
    } else if (byte < 0x20 || byte == 0x7f) {
      out += ' ';
    } else {
      out += c;
    }
  }
  // Bidirectional overrides and other code points core/text.h refuses are dropped.
  while (auto bad = first_control_character(out, allow_newlines)) {
    std::string kept;
    std::size_t i = 0;
    while (i < out.size()) {
      const std::size_t at = i;
      if (next_code_point(out, i) != *bad) kept.append(out, at, i - at);
    }
    out = std::move(kept);
  }
  return out;
}

/// A task-list line ("- [ ] text", "* [x] text"): its text, or nullopt.
std::optional<std::string> task_list_item(std::string_view line) {
  line = trim(line);
  if (line.size() < 6 || (line[0] != '-' && line[0] != '*') || line[1] != ' ' || line[2] != '[' || line[4] != ']')
    return std::nullopt;
  if (line[3] != ' ' && line[3] != 'x' && line[3] != 'X') return std::nullopt;
  auto text = trim(line.substr(5));
  if (text.empty()) return std::nullopt;
  return std::string(text);
}

std::string lowered(std::string_view text) { return to_lower_ascii(text); }

}  // namespace

std::string_view state_of(TaskStatus status) {
  if (status == TaskStatus::Done) return "done";
  if (status == TaskStatus::Cancelled) return "cancelled";
  return "open";
}

std::string task_label(std::string_view label) {
  std::string out;
  for (char c : trim(label)) {
    const auto byte = static_cast<unsigned char>(c);
    const bool plain = std::isalnum(byte) != 0;
    const bool inner = c == '.' || c == '_' || c == ':' || c == '/' || c == '-';
    if (plain) {
      out += static_cast<char>(std::tolower(byte));
    } else if (!out.empty() && (inner || c == ' ') && out.back() != '-') {
      out += inner ? c : '-';
    }
  }
  while (!out.empty() && !std::isalnum(static_cast<unsigned char>(out.back()))) out.pop_back();
  if (out.size() > 50) out.resize(50);
  while (!out.empty() && !std::isalnum(static_cast<unsigned char>(out.back()))) out.pop_back();
  return out;
}

std::vector<std::int64_t> referenced_dependencies(std::string_view body) {
  std::vector<std::int64_t> out;
  const std::string text = lowered(body);
  for (std::string_view phrase : {"depends on", "blocked by"}) {
    for (auto at = text.find(phrase); at != std::string::npos; at = text.find(phrase, at + 1)) {
      std::size_t i = at + phrase.size();
      if (i < text.size() && text[i] == ':') ++i;
      // "#12", "#12, #13", "#12 and #13"
      while (true) {
        while (i < text.size() && (text[i] == ' ' || text[i] == ',')) ++i;
        if (text.compare(i, 4, "and ") == 0) i += 4;
        if (i >= text.size() || text[i] != '#') break;
        std::size_t j = ++i;
        std::int64_t number = 0;
        while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j])) && j - i < 12)
          number = number * 10 + (text[j++] - '0');
        if (j == i) break;
        if (std::find(out.begin(), out.end(), number) == out.end()) out.push_back(number);
        i = j;
      }
    }
  }
  return out;
}

std::string marker(std::string_view task_id) { return "<!-- cleo:" + std::string(task_id) + " -->"; }

std::optional<std::string> marked_task(std::string_view body) {
  constexpr std::string_view kOpen = "<!-- cleo:";
  auto at = body.find(kOpen);
  if (at == std::string_view::npos) return std::nullopt;
  auto end = body.find(" -->", at);
  if (end == std::string_view::npos) return std::nullopt;
  auto id = normalize_task_id(body.substr(at + kOpen.size(), end - at - kOpen.size()));
  return id;
}

Fields fields_of_item(const tracker::Item& item) {
  Fields out;
  std::string title = clean(trim(item.title), false);
  if (utf8_length(title) < 3) title = item.key.empty() ? "Untitled item" : item.key + " " + title;
  out.title = clip(trim(title), kTitleMax);
  std::string description;
  for (auto line : split_lines(item.body)) {
    if (auto criterion = task_list_item(line)) {
      if (out.acceptance.size() < kListMax) out.acceptance.push_back(clip(clean(*criterion, false), kCriterionMax));
      continue;
    }
    if (line.find("<!-- cleo:") != std::string_view::npos) continue;  // our own marker
    description.append(line);
    description += '\n';
  }
  description = clean(trim(description), true);
  out.description = clip(description, kDescriptionMax);
  if (out.description == out.title) out.description.clear();
  if (item.state == "closed")
    out.state = item.state_reason == "not_planned" ? "cancelled" : "done";
  else
    out.state = "open";
  for (const auto& label : item.labels) {
    auto mapped = task_label(label);
    if (!mapped.empty() && std::find(out.labels.begin(), out.labels.end(), mapped) == out.labels.end())
      out.labels.push_back(std::move(mapped));
  }
  std::sort(out.labels.begin(), out.labels.end());
  if (out.labels.size() > kListMax) out.labels.resize(kListMax);
  return out;
}

Fields fields_of_task(const Task& task) {
  Fields out;
  out.title = task.title;
  out.description = task.description;
  out.state = std::string(state_of(task.status));
  out.labels = task.labels;
  std::sort(out.labels.begin(), out.labels.end());
  out.acceptance = task.acceptance;
  return out;
}

json::Value field_value(const Fields& fields, std::string_view name) {
  if (name == "title") return fields.title;
  if (name == "description") return fields.description;
  if (name == "state") return fields.state;
  if (name == "labels") return json::Value::array_of(fields.labels);
  if (name == "acceptance") return json::Value::array_of(fields.acceptance);
  return json::Value();
}

bool set_field(Fields& fields, std::string_view name, const json::Value& value) {
  auto strings = [&](std::vector<std::string>& out) {
    if (!value.is_array()) return false;
    std::vector<std::string> list;
    for (const auto& item : value.as_array()) {
      if (!item.is_string()) return false;
      list.push_back(item.as_string());
    }
    out = std::move(list);
    return true;
  };
  if (name == "labels") return strings(fields.labels);
  if (name == "acceptance") return strings(fields.acceptance);
  std::string* text = name == "title" ? &fields.title
                      : name == "description" ? &fields.description
                      : name == "state" ? &fields.state
                                        : nullptr;
  if (!text || !value.is_string()) return false;
  *text = value.as_string();
  return true;
}

json::Value to_json(const Fields& fields) {
  json::Value out = json::Value::object();
  for (auto name : kFieldNames) out.set(name, field_value(fields, name));
  return out;
}

Fields from_json(const json::Value& value, const Fields& fallback) {
  Fields out = fallback;
  for (auto name : kFieldNames)
    if (const auto* member = value.find(name)) set_field(out, name, *member);
  return out;
}

Merge merge(const Fields& base, const Fields& here, const Fields& there) {
  Merge out{here, there, base, {}, {}, {}, json::Value::object()};
  for (auto name : kFieldNames) {
    const json::Value b = field_value(base, name);
    const json::Value h = field_value(here, name);
    const json::Value t = field_value(there, name);
    if (h == t) {
      if (h != b) out.agreed.emplace_back(name);
      set_field(out.base, name, h);
    } else if (h == b) {  // changed there only
      set_field(out.here, name, t);
      set_field(out.base, name, t);
      out.pulled.emplace_back(name);
    } else if (t == b) {  // changed here only
      set_field(out.there, name, h);
      set_field(out.base, name, h);
      out.pushed.emplace_back(name);
    } else {  // both, differently: neither side moves, the old base stays
      set_field(out.here, name, h);
      set_field(out.there, name, t);
      json::Value conflict = json::Value::object();
      conflict.set("base", b);
      conflict.set("here", h);
      conflict.set("there", t);
      out.conflicts.set(name, std::move(conflict));
    }
  }
  return out;
}

bool resolve(json::Value& base, const json::Value& conflict, std::string_view field, std::string_view take) {
  const json::Value* entry = conflict.is_object() ? conflict.find(field) : nullptr;
  if (!entry || (take != "here" && take != "there")) return false;
  if (!base.is_object()) base = json::Value::object();
  base.set(field, take == "here" ? (*entry)["there"] : (*entry)["here"]);
  return true;
}

}  // namespace ct::tracker_sync
