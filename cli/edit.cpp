#include "cli/edit.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <vector>

#include "core/text.h"

namespace ct::cli {
namespace {

// Single-line fields, in the order of the form.
constexpr std::array<std::string_view, 7> kScalars = {"title", "status", "priority", "type", "size", "phase", "blockedBy"};
// List fields: ids and labels also read as one comma-separated line.
constexpr std::array<std::string_view, 4> kLists = {"depends", "labels", "acceptance", "files"};
// Text blocks.
constexpr std::array<std::string_view, 2> kBlocks = {"description", "note"};

template <std::size_t N>
bool one_of(const std::array<std::string_view, N>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}


std::vector<std::string> list_of(const json::Value& value) {
  std::vector<std::string> out;
  if (value.is_array())
    for (const auto& item : value.as_array())
      if (item.is_string()) out.push_back(item.as_string());
  return out;
}

Error form_error(std::size_t line, std::string message) {
  return Error(ErrorCode::InvalidInput, "line " + std::to_string(line) + ": " + std::move(message))
      .with_fix("correct the line in the editor; fields: title, status, priority, type, size, phase, blockedBy, "
                "depends, labels, acceptance, files, description, note");
}

}  // namespace

std::string edit_form(const json::Value& task) {
  std::string out;
  out += "# ct edit " + task["id"].string_or_empty() + " (version " + task["version"].dump() +
         "). Save and quit to apply; leave it as it is to cancel.\n";
  out += "# status: pending|active|blocked (done: ct done; cancelled: ct rm)   priority: critical|high|medium|low\n";
  out += "# type: epic|task|subtask   size: small|medium|large   Lists: one '- item' per line.\n";
  out += "# Notes are never rewritten: write a new one under 'note: |'. Lines starting with # are ignored.\n";
  for (std::string_view key : kScalars) out += std::string(key) + ": " + task[key].string_or_empty() + "\n";
  for (std::string_view key : kLists) {
    std::vector<std::string> items = list_of(task[key]);
    if (key == "depends" || key == "labels") {
      out += std::string(key) + ": " + join(items, ", ") + "\n";
      continue;
    }
    out += std::string(key) + ":\n";
    for (const auto& item : items) out += "  - " + item + "\n";
  }
  out += "description: |\n";
  const std::string description = task["description"].string_or_empty();
  for (std::string_view line : split_lines(description)) out += line.empty() ? "\n" : "  " + std::string(line) + "\n";
  out += "note: |\n";
  return out;
}

Result<json::Value> edit_changes(const json::Value& task, std::string_view form) {
  json::Value fields = json::Value::object();  // what the form says, by field
  std::string current;                         // the list or block being read ("" = none)
  std::vector<std::string> items;
  std::string block;
  auto finish = [&]() {
    if (one_of(kLists, current)) fields.set(current, json::Value::array_of(items));
    if (one_of(kBlocks, current)) {
      while (block.ends_with('\n')) block.pop_back();
      fields.set(current, block);
    }
    current.clear();
    items.clear();
    block.clear();
  };
  std::size_t number = 0;
  for (std::string_view line : split_lines(form)) {
    ++number;
    if (line.starts_with('#')) continue;
    if (one_of(kBlocks, current) && (line.empty() || line.starts_with("  "))) {
      block += std::string(line.empty() ? line : line.substr(2)) + "\n";
      continue;
    }
    if (one_of(kLists, current) && trim(line).starts_with("- ")) {
      items.emplace_back(trim(trim(line).substr(2)));
      continue;
    }
    if (trim(line).empty()) continue;
    if (line.starts_with(' ') || line.starts_with('-'))
      return fail(form_error(number, "'" + std::string(trim(line)) + "' belongs to no field"));
    auto colon = line.find(':');
    if (colon == std::string_view::npos) return fail(form_error(number, "expected 'field: value'"));
    finish();
    std::string key(trim(line.substr(0, colon)));
    std::string value(trim(line.substr(colon + 1)));
    if (fields.contains(key)) return fail(form_error(number, key + " is given twice"));
    if (one_of(kScalars, key)) {
      fields.set(key, value);
    } else if (one_of(kLists, key)) {
      current = key;
      items = split_list(value);
    } else if (one_of(kBlocks, key)) {
      current = key;
      if (value != "|" && !value.empty()) block = value + "\n";
    } else {
      return fail(form_error(number, "unknown field '" + key + "'"));
    }
  }
  finish();

  // Only what differs from the task goes into the update; a field left out of the form is kept.
  json::Value changes = json::Value::object();
  for (std::string_view key : kScalars)
    if (fields.contains(key) && fields[key].as_string() != task[key].string_or_empty()) changes.set(key, fields[key]);
  bool lists_changed = false;
  for (std::string_view key : kLists) {
    if (!fields.contains(key)) continue;
    if (list_of(fields[key]) != list_of(task[key])) {
      changes.set(key, fields[key]);
      lists_changed = true;
    }
  }
  if (lists_changed) changes.set("mode", "replace");
  if (fields.contains("description") && fields["description"].as_string() != task["description"].string_or_empty())
    changes.set("description", fields["description"]);
  if (fields.contains("note") && !trim(fields["note"].as_string()).empty()) changes.set("notes", fields["note"]);
  return changes;
}

std::vector<std::string> editor_command() {
  const char* chosen = nullptr;
  for (const char* name : {"VISUAL", "EDITOR"}) {
    const char* value = std::getenv(name);
    if (value && *value) {
      chosen = value;
      break;
    }
  }
  std::vector<std::string> words;
  if (!chosen) return {"vi"};
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (const char* c = chosen; *c; ++c) {
    if (quote) {
      if (*c == quote) {
        quote = 0;
      } else {
        word += *c;
      }
    } else if (*c == '\'' || *c == '"') {
      quote = *c;
      in_word = true;
    } else if (*c == ' ' || *c == '\t') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else {
      word += *c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(std::move(word));
  if (words.empty()) return {"vi"};
  return words;
}

}  // namespace ct::cli
