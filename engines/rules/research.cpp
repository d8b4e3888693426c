#include "engines/rules/research.h"

#include <algorithm>
#include <cmath>

#include "core/json_parse.h"
#include "core/pattern.h"
#include "core/sha256.h"
#include "core/text.h"

namespace ct {
namespace {

namespace fs = std::filesystem;

// Field limits (characters or items).
constexpr std::size_t kMaxTitle = 200;
constexpr std::size_t kMaxFile = 500;
constexpr std::size_t kMaxAgentType = 40;
constexpr std::size_t kMaxListItems = 20;
constexpr std::size_t kMaxTopic = 60;
constexpr std::size_t kMaxItemText = 500;
constexpr std::size_t kMaxLinks = 50;

/// Field name as written (camelCase) → the original CLEO's snake_case spelling.
struct FieldName {
  std::string_view name;
  std::string_view snake;
};
constexpr FieldName kFields[] = {
    {"id", "id"}, {"file", "file"}, {"title", "title"}, {"date", "date"}, {"status", "status"},
    {"agentType", "agent_type"}, {"topics", "topics"}, {"keyFindings", "key_findings"},
    {"actionable", "actionable"}, {"needsFollowup", "needs_followup"}, {"linkedTasks", "linked_tasks"},
    {"confidence", "confidence"}, {"fileChecksum", "file_checksum"},
};

Error invalid(std::string_view field, std::string message, Advice fix) {
  return Error(ErrorCode::Validation, std::move(message))
      .with_fix(std::move(fix))
      .with_detail("field", field);
}

Advice research_fix() {
  return "see " + call("system.help", {{"level", 2}, {"domain", "research"}, {"operation", "add"}});
}

/// The value of `field` under either spelling; null when absent.
const json::Value* field_value(const json::Value& object, const FieldName& field) {
  if (const json::Value* value = object.find(field.name)) return value;
  if (field.snake != field.name) return object.find(field.snake);
  return nullptr;
}

Result<std::string> text_field(const json::Value& object, const FieldName& field, bool required, std::size_t max,
                               bool single_line) {
  const json::Value* value = field_value(object, field);
  if (value == nullptr || value->is_null()) {
    if (required)
      return fail(invalid(field.name, std::string(field.name) + " is required", research_fix()));
    return std::string();
  }
  if (!value->is_string())
    return fail(invalid(field.name, std::string(field.name) + " must be a string, not " +
                                        std::string(json::to_string(value->type())), research_fix()));
  std::string text(trim(value->as_string()));
  if (required && text.empty())
    return fail(invalid(field.name, std::string(field.name) + " must not be empty", research_fix()));
  if (utf8_length(text) > max)
    return fail(invalid(field.name, std::string(field.name) + " is longer than " + std::to_string(max) + " characters",
                        "shorten it"));
  if (has_control_characters(text, !single_line))
    return fail(invalid(field.name, std::string(field.name) + " holds control characters" +
                                        (single_line ? " or line breaks" : ""), "remove them"));
  return text;
}

Result<std::vector<std::string>> list_field(const json::Value& object, const FieldName& field, std::size_t max_items,
                                            std::size_t max_chars) {
  std::vector<std::string> out;
  const json::Value* value = field_value(object, field);
  if (value == nullptr || value->is_null()) return out;
  if (!value->is_array())
    return fail(invalid(field.name, std::string(field.name) + " must be an array of strings", research_fix()));
  if (value->size() > max_items)
    return fail(invalid(field.name, std::string(field.name) + " has " + std::to_string(value->size()) +
                                        " items; at most " + std::to_string(max_items) + " are allowed",
                        "keep the most important ones"));
  for (const auto& item : value->as_array()) {
    if (!item.is_string())
      return fail(invalid(field.name, std::string(field.name) + " must be an array of strings", research_fix()));
    std::string text(trim(item.as_string()));
    if (text.empty()) continue;
    if (utf8_length(text) > max_chars)
      return fail(invalid(field.name, "an item of " + std::string(field.name) + " is longer than " +
                                          std::to_string(max_chars) + " characters", "shorten it"));
    if (has_control_characters(text, false))
      return fail(invalid(field.name, "an item of " + std::string(field.name) + " holds control characters or line breaks",
                          "write each item on one line"));
    if (std::find(out.begin(), out.end(), text) == out.end()) out.push_back(std::move(text));
  }
  return out;
}

bool is_digits(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool valid_date(std::string_view date) {
  if (date.size() != 10 || date[4] != '-' || date[7] != '-' || !is_digits(date.substr(0, 4)) ||
      !is_digits(date.substr(5, 2)) || !is_digits(date.substr(8, 2)))
    return false;
  const int year = std::stoi(std::string(date.substr(0, 4)));
  const int month = std::stoi(std::string(date.substr(5, 2)));
  const int day = std::stoi(std::string(date.substr(8, 2)));
  if (month < 1 || month > 12 || day < 1) return false;
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return day <= kDays[month - 1] + (month == 2 && leap ? 1 : 0);
}

/// "T1-x" → "T001-x": the task part written as task ids are (at least three digits).
std::string normalized_id(std::string id) {
  const std::size_t dash = id.find('-');
  if (!id.empty() && (id[0] == 'T' || id[0] == 't') && dash >= 2 && dash <= 3 &&
      is_digits(std::string_view(id).substr(1, dash - 1))) {
    std::string digits = id.substr(1, dash - 1);
    while (digits.size() < 3) digits.insert(digits.begin(), '0');
    return "T" + digits + id.substr(dash);
  }
  if (!id.empty() && id.front() == 't') id.front() = 'T';
  return id;
}


}  // namespace

std::vector<std::string_view> research_field_names() {
  std::vector<std::string_view> names;
  for (const auto& field : kFields) names.push_back(field.name);
  return names;
}

Result<std::string> project_relative_path(std::string_view path, const fs::path& root, std::string_view field) {
  std::string text(trim(path));
  if (text.empty()) return fail(invalid(field, std::string(field) + " is empty", "name a file inside the project"));
  if (text.find('\0') != std::string::npos)
    return fail(invalid(field, std::string(field) + " holds a NUL byte", "name a file inside the project"));
  fs::path given(text);
  fs::path relative;
  if (given.is_absolute()) {
    fs::path normal_root = root.lexically_normal();
    relative = given.lexically_normal().lexically_relative(normal_root);
    if (relative.empty()) relative = "..";  // another root name: outside
  } else {
    relative = given.lexically_normal();
  }
  std::string out = relative.generic_string();
  while (out.ends_with("/")) out.pop_back();
  if (out.empty() || out == "." || out == ".." || out.starts_with("../"))
    return fail(invalid(field, std::string(field) + " '" + text + "' is outside the project",
                        "write the file under the project root and name it relative to it, e.g. "
                        ".cleo/agent-outputs/T001-topic.md")
                    .with_detail("root", root.string()));
  return out;
}

Result<ResearchEntry> parse_research_fields(const json::Value& object, const fs::path& root, std::string_view today,
                                            std::vector<std::string>& warnings) {
  if (!object.is_object())
    return fail(invalid("", "an entry must be a JSON object", research_fix()));
  // Unknown fields are refused: a misspelt "keyfindings" must not vanish silently.
  for (const auto& [key, value] : object.as_object()) {
    bool known = false;
    for (const auto& field : kFields) known = known || key == field.name || key == field.snake;
    if (known) continue;
    std::vector<std::string> valid;
    for (const auto& field : kFields) valid.emplace_back(field.name);
    return fail(Error(ErrorCode::Validation, "unknown field '" + key + "'")
                    .with_fix("use only the manifest's fields: " + join(valid, ", "))
                    .with_detail("field", key)
                    .with_choices(key, valid));
  }
  ResearchEntry entry;
  CT_TRY_ASSIGN(std::string id, text_field(object, kFields[0], true, 120, true));
  entry.id = normalized_id(std::move(id));
  // The same pattern research.add's id param declares, matched by the same engine (RE2).
  static const Pattern id_pattern = *Pattern::compile(kResearchIdPattern);
  if (!id_pattern.matches(entry.id))
    return fail(invalid("id", "id '" + entry.id + "' must be a task id, a dash and a lowercase slug (" +
                                  std::string(kResearchIdPattern) + ")",
                        "e.g. T001-auth-options: the task the work started from, then words joined by dashes"));
  CT_TRY_ASSIGN(std::string file, text_field(object, kFields[1], true, kMaxFile, true));
  CT_TRY_ASSIGN(entry.file, project_relative_path(file, root, "file"));
  CT_TRY_ASSIGN(entry.title, text_field(object, kFields[2], true, kMaxTitle, true));
  CT_TRY_ASSIGN(entry.date, text_field(object, kFields[3], false, 10, true));
  if (entry.date.empty()) entry.date = std::string(today);
  if (!valid_date(entry.date))
    return fail(invalid("date", "date '" + entry.date + "' is not a calendar date YYYY-MM-DD",
                        "write the day the output was made, e.g. " + std::string(today)));
  CT_TRY_ASSIGN(std::string status, text_field(object, kFields[4], true, 20, true));
  auto parsed_status = parse_research_status(status);
  if (!parsed_status)
    return fail(invalid("status", "status '" + status + "' is not one of complete, partial, blocked",
                        "use complete, partial or blocked")
                    .with_choices(status, {"complete", "partial", "blocked"}));
  entry.status = *parsed_status;
  CT_TRY_ASSIGN(entry.agent_type, text_field(object, kFields[5], false, kMaxAgentType, true));
  if (entry.agent_type.empty()) entry.agent_type = "research";
  entry.agent_type = to_lower_ascii(entry.agent_type);
  CT_TRY_ASSIGN(entry.topics, list_field(object, kFields[6], kMaxListItems, kMaxTopic));
  for (auto& topic : entry.topics) topic = to_lower_ascii(topic);
  CT_TRY_ASSIGN(entry.key_findings, list_field(object, kFields[7], kMaxListItems, kMaxItemText));
  const std::size_t findings = entry.key_findings.size();
  if (findings < kMinFindings || findings > kMaxFindings) {
    std::string what = "keyFindings has " + std::to_string(findings) + " item" + (findings == 1 ? "" : "s") +
                       "; " + std::to_string(kMinFindings) + "–" + std::to_string(kMaxFindings) + " are expected";
    if (entry.agent_type == "research")
      return fail(invalid("keyFindings", what + " for agentType research",
                          "state the 3–7 most important findings, one sentence each"));
    warnings.push_back(entry.id + ": " + what);
  }
  if (const json::Value* value = field_value(object, kFields[8]); value != nullptr && !value->is_null()) {
    if (!value->is_bool()) return fail(invalid("actionable", "actionable must be true or false", research_fix()));
    entry.actionable = value->as_bool();
  }
  CT_TRY_ASSIGN(entry.needs_followup, list_field(object, kFields[9], kMaxListItems, kMaxItemText));
  CT_TRY_ASSIGN(std::vector<std::string> links, list_field(object, kFields[10], kMaxLinks, 20));
  for (auto& link : links) {
    if (link.size() < 2 || (link[0] != 'T' && link[0] != 't') || !is_digits(std::string_view(link).substr(1)))
      return fail(invalid("linkedTasks", "linkedTasks item '" + link + "' is not a task id", "e.g. T001"));
    std::string digits = link.substr(1);
    while (digits.size() > 3 && digits.front() == '0') digits.erase(digits.begin());
    while (digits.size() < 3) digits.insert(digits.begin(), '0');
    std::string id_text = "T" + digits;
    if (std::find(entry.linked_tasks.begin(), entry.linked_tasks.end(), id_text) == entry.linked_tasks.end())
      entry.linked_tasks.push_back(std::move(id_text));
  }
  if (const json::Value* value = field_value(object, kFields[11]); value != nullptr && !value->is_null()) {
    if (!value->is_number() || !std::isfinite(value->as_double()) || value->as_double() < 0 || value->as_double() > 1)
      return fail(invalid("confidence", "confidence must be a number from 0 to 1", "e.g. 0.8"));
    entry.confidence = value->as_double();
  }
  CT_TRY_ASSIGN(std::string given_checksum, text_field(object, kFields[12], false, 64, true));
  entry.file_checksum = to_lower_ascii(given_checksum);
  return entry;
}

Result<ResearchEntry> parse_research_entry(const json::Value& object, const fs::path& root, std::string_view today,
                                           std::vector<std::string>& warnings, FileHashes& hashes) {
  CT_TRY_ASSIGN(ResearchEntry entry, parse_research_fields(object, root, today, warnings));
  auto actual = hashes.hash(root, entry.file);
  if (actual) {
    if (!entry.file_checksum.empty() && entry.file_checksum != actual->sha256)
      warnings.push_back(entry.id + ": " + entry.file + " changed after its fileChecksum was written (the stored "
                         "checksum is the file's current one)");
    entry.file_checksum = actual->sha256;
  } else if (actual.error().code == ErrorCode::Internal) {
    return fail(std::move(actual.error()));
  } else if (actual.error().code != ErrorCode::NotFound) {
    warnings.push_back(entry.id + ": " + entry.file + " cannot be read (" + actual.error().message + ")");
  } else if (entry.status != ResearchStatus::Blocked) {
    warnings.push_back(entry.id + ": " + entry.file + " does not exist");
  }
  return entry;
}

json::Value research_manifest_json(const ResearchEntry& entry) {
  json::Value out = json::Value::object();
  out.set("id", entry.id);
  out.set("file", entry.file);
  out.set("title", entry.title);
  out.set("date", entry.date);
  out.set("status", to_string(entry.status));
  out.set("agentType", entry.agent_type);
  if (!entry.topics.empty()) out.set("topics", json::Value::array_of(entry.topics));
  if (!entry.key_findings.empty()) out.set("keyFindings", json::Value::array_of(entry.key_findings));
  out.set("actionable", entry.actionable);
  if (!entry.needs_followup.empty()) out.set("needsFollowup", json::Value::array_of(entry.needs_followup));
  if (!entry.linked_tasks.empty()) out.set("linkedTasks", json::Value::array_of(entry.linked_tasks));
  if (entry.confidence) out.set("confidence", *entry.confidence);
  if (!entry.file_checksum.empty()) out.set("fileChecksum", entry.file_checksum);
  return out;
}

bool same_research_content(const ResearchEntry& a, const ResearchEntry& b) {
  return a.id == b.id && a.file == b.file && a.title == b.title && a.date == b.date && a.status == b.status &&
         a.agent_type == b.agent_type && a.topics == b.topics && a.key_findings == b.key_findings &&
         a.actionable == b.actionable && a.needs_followup == b.needs_followup && a.confidence == b.confidence;
}

ManifestChunk split_manifest_lines(std::string_view bytes, std::int64_t first_line) {
  ManifestChunk chunk;
  std::size_t start = 0;
  std::int64_t number = first_line;
  while (start < bytes.size()) {
    const std::size_t end = bytes.find('\n', start);
    if (end == std::string_view::npos) break;  // being written: left for the next sync
    std::string_view text = bytes.substr(start, end - start);
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
    chunk.lines.push_back({number++, text});
    start = end + 1;
    chunk.consumed = static_cast<std::int64_t>(start);
  }
  return chunk;
}

namespace {
Result<json::Value> manifest_object(std::string_view line) {
  if (line.size() > kMaxManifestLine)
    return fail(Error(ErrorCode::Validation, "the line is longer than " + std::to_string(kMaxManifestLine) + " bytes")
                    .with_fix("keep details in the output file; the line holds the summary"));
  auto parsed = json::parse(line);
  if (!parsed)
    return fail(Error(ErrorCode::Validation, "not JSON: " + parsed.error().message)
                    .with_fix("write one compact JSON object per line"));
  if (!parsed->is_object())
    return fail(Error(ErrorCode::Validation, "not a JSON object").with_fix("write one compact JSON object per line"));
  return std::move(*parsed);
}
}  // namespace

Result<ResearchEntry> parse_manifest_line(std::string_view line, const fs::path& root, std::string_view today,
                                          std::vector<std::string>& warnings, FileHashes& hashes) {
  CT_TRY_ASSIGN(json::Value object, manifest_object(line));
  return parse_research_entry(object, root, today, warnings, hashes);
}

std::optional<ResearchEntry> manifest_line_fields(std::string_view line, const fs::path& root, std::string_view today) {
  auto object = manifest_object(line);
  if (!object) return std::nullopt;
  std::vector<std::string> ignored;
  auto entry = parse_research_fields(*object, root, today, ignored);
  if (!entry) return std::nullopt;
  return std::move(*entry);
}

std::string manifest_head_hash(std::string_view head) { return sha256_hex(head.substr(0, kManifestHeadBytes)); }

}  // namespace ct
