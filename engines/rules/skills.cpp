#include "engines/rules/skills.h"

#include <algorithm>
#include <map>
#include <set>
#include <system_error>

#include "core/file_read.h"
#include "core/text.h"
#include "engines/project/project.h"

namespace ct {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kMaxDescription = 200;
constexpr std::size_t kMaxListItem = 40;
constexpr std::string_view kKnownKeys = "name, description, tags, protocols, level";
constexpr std::string_view kLayout =
    "start the file with a line ---, then `name: my-skill` and `description: One line.` (optional: tags: [a, b], "
    "protocols: [...], level: 0-3), a closing --- line, and the Markdown body";

Error malformed(std::string_view origin, int line, const std::string& what, std::string fix) {
  Error error(ErrorCode::Validation, std::string(origin) + ":" + std::to_string(line) + ": " + what);
  error.fix = std::move(fix);
  error.details.set("file", std::string(origin));
  error.details.set("line", line);
  return error;
}


std::string_view trim_right(std::string_view text) {
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

bool is_fence(std::string_view line) { return trim_right(line) == "---"; }

/// 'text' or "text" without its quotes ('' and \" inside become ' and ").
std::string unquote(std::string_view value) {
  value = trim(value);
  if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') && value.back() == value.front()) {
    const char quote = value.front();
    std::string_view inner = value.substr(1, value.size() - 2);
    std::string out;
    for (std::size_t i = 0; i < inner.size(); ++i) {
      if (quote == '\'' && inner[i] == '\'' && i + 1 < inner.size() && inner[i + 1] == '\'') ++i;
      else if (quote == '"' && inner[i] == '\\' && i + 1 < inner.size()) ++i;
      out += inner[i];
    }
    return out;
  }
  return std::string(value);
}

bool valid_name(std::string_view name) {
  if (name.size() < 2 || name.size() > 48 || name.front() < 'a' || name.front() > 'z') return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; });
}

bool valid_item(std::string_view item) {
  if (item.empty() || item.size() > kMaxListItem) return false;
  return std::all_of(item.begin(), item.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
  });
}

/// One key of the front matter as written: its value (scalar text, or list items) and lines.
struct Entry {
  int line = 0;
  std::string scalar;
  bool flow_list = false;
  std::vector<std::pair<std::string, int>> items;  // block or flow list items with their lines
};

/// `[a, b, "c"]` → items; E_VALIDATION when the brackets do not close on the line.
Result<std::vector<std::string>> flow_items(std::string_view value, std::string_view origin, int line,
                                            std::string_view key) {
  auto close = value.rfind(']');
  std::string_view after = close == std::string_view::npos ? std::string_view() : trim(value.substr(close + 1));
  if (close == std::string_view::npos || (!after.empty() && after.front() != '#'))
    return fail(malformed(origin, line, std::string(key) + ": the list opened with [ is not closed on this line",
                          "write the list on one line, e.g. " + std::string(key) + ": [a, b], or one '- item' per line"));
  std::vector<std::string> items;
  std::string_view inner = value.substr(1, close - 1);
  while (true) {
    auto comma = inner.find(',');
    std::string item = unquote(inner.substr(0, comma));
    if (!item.empty()) items.push_back(std::move(item));
    if (comma == std::string_view::npos) break;
    inner.remove_prefix(comma + 1);
  }
  return items;
}

Result<std::vector<std::string>> list_value(const Entry& entry, std::string_view key, std::string_view origin) {
  std::vector<std::pair<std::string, int>> raw = entry.items;
  if (!entry.scalar.empty()) {
    // A plain value is a list of one, or of several separated by commas: `tags: docs, readme`.
    std::string_view rest = entry.scalar;
    while (true) {
      auto comma = rest.find(',');
      std::string item = unquote(rest.substr(0, comma));
      if (!item.empty()) raw.emplace_back(std::move(item), entry.line);
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
  }
  std::vector<std::string> out;
  for (auto& [text, line] : raw) {
    std::string item = to_lower_ascii(text);
    if (!valid_item(item))
      return fail(malformed(origin, line,
                            std::string(key) + ": '" + text + "' is not a valid item (lowercase letters, digits, "
                                                              "- _ . and at most 40 characters)",
                            "write it as one word such as 'code-review', e.g. " + std::string(key) + ": [a, b]"));
    if (std::find(out.begin(), out.end(), item) == out.end()) out.push_back(std::move(item));
  }
  return out;
}

std::string missing_fix(std::string_view key) {
  if (key == "name")
    return "add a line `name: my-skill` (lowercase letters, digits and dashes) between the --- lines";
  return "add a line `description: One line on what the skill is for.` between the --- lines";
}

/// The keys of a front matter, by name.
using Entries = std::map<std::string, Entry, std::less<>>;

/// The line of the front matter's closing ---; E_VALIDATION for a control character anywhere, or
/// a front matter that is not opened on the first line or never closed.
Result<std::size_t> front_matter_end(const std::vector<std::string_view>& lines, std::string_view origin) {
  for (std::size_t i = 0; i < lines.size(); ++i)
    if (has_control_characters(lines[i], false))
      return fail(malformed(origin, static_cast<int>(i + 1), "a control character (other than tab) is in this line",
                            "remove it; a skill is plain Markdown text"));
  if (lines.empty() || !is_fence(lines[0]))
    return fail(malformed(origin, 1, "no front matter: the first line must be ---", std::string(kLayout)));
  std::size_t close = 1;
  while (close < lines.size() && !is_fence(lines[close])) ++close;
  if (close == lines.size())
    return fail(malformed(origin, 1, "the front matter opened here is never closed by a --- line",
                          "add a line --- after the last key, then the body"));
  return close;
}

/// The front matter's keys (lines 1 … close-1): `key: value`, `key: [a, b]`, or `key:` then
/// `- item` lines; comments and blank lines skipped, each key once.
Result<Entries> read_entries(const std::vector<std::string_view>& lines, std::size_t close, std::string_view origin) {
  Entries entries;
  std::string current;  // the key a block list continues
  for (std::size_t i = 1; i < close; ++i) {
    const int number = static_cast<int>(i + 1);
    std::string_view line = trim_right(lines[i]);
    std::string_view stripped = trim(line);
    if (stripped.empty() || stripped.front() == '#') continue;
    if (stripped == "-" || stripped.starts_with("- ")) {
      if (current.empty() || !entries[current].scalar.empty() || entries[current].flow_list)
        return fail(malformed(origin, number, "a list item without a key above it",
                              "put it under a key with no value on its own line, e.g. tags: then - item"));
      std::string item = unquote(stripped.substr(1));
      if (!item.empty()) entries[current].items.emplace_back(std::move(item), number);
      continue;
    }
    if (line.front() == ' ' || line.front() == '\t')
      return fail(malformed(origin, number, "unexpected indentation",
                            "start each key at the beginning of its line (only '- item' lines may be indented)"));
    auto colon = line.find(':');
    std::string key = colon == std::string_view::npos ? std::string() : std::string(trim(line.substr(0, colon)));
    if (key.empty() || key.find_first_of(" \t\"'") != std::string::npos)
      return fail(malformed(origin, number, "expected `key: value`, got '" + std::string(stripped) + "'",
                            "write one key per line: " + std::string(kKnownKeys)));
    if (auto seen = entries.find(key); seen != entries.end())
      return fail(malformed(origin, number,
                            key + " is given twice (first on line " + std::to_string(seen->second.line) + ")",
                            "keep one of the two lines"));
    Entry entry;
    entry.line = number;
    std::string_view value = trim(line.substr(colon + 1));
    if (value.starts_with("[")) {
      entry.flow_list = true;
      CT_TRY_ASSIGN(std::vector<std::string> items, flow_items(value, origin, number, key));
      for (auto& item : items) entry.items.emplace_back(std::move(item), number);
    } else {
      entry.scalar = unquote(value);
    }
    current = key;
    entries.emplace(key, std::move(entry));
  }
  return entries;
}

/// A key that takes one value: nullopt when absent, E_VALIDATION when given a list.
Result<std::optional<std::string>> scalar(const Entries& entries, std::string_view key, std::string_view origin) {
  auto found = entries.find(key);
  if (found == entries.end()) return std::optional<std::string>();
  if (found->second.flow_list || !found->second.items.empty())
    return fail(malformed(origin, found->second.line, std::string(key) + " must be one value, not a list",
                          "write `" + std::string(key) + ": value` on one line"));
  return std::optional<std::string>(found->second.scalar);
}

/// A kebab-case name close to `name`, for the fix of one that is not.
std::string kebab_case(const std::string& name) {
  std::string fixed;
  for (char c : to_lower_ascii(name)) {
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) fixed += c;
    else if (!fixed.empty() && fixed.back() != '-') fixed += '-';
  }
  while (!fixed.empty() && fixed.back() == '-') fixed.pop_back();
  while (!fixed.empty() && (fixed.front() < 'a' || fixed.front() > 'z')) fixed.erase(0, 1);
  if (fixed.size() < 2) fixed = "my-skill";
  return fixed.substr(0, 48);
}

/// name: kebab-case, 2–48 characters.
Result<std::string> read_name(const Entries& entries, std::string_view origin) {
  CT_TRY_ASSIGN(std::optional<std::string> name, scalar(entries, "name", origin));
  if (!name || name->empty())
    return fail(malformed(origin, name ? entries.find("name")->second.line : 1,
                          name ? "name is empty" : "the front matter has no name", missing_fix("name")));
  if (!valid_name(*name))
    return fail(malformed(origin, entries.find("name")->second.line,
                          "name '" + *name + "' is not kebab-case (a lowercase letter, then 1–47 lowercase letters, "
                                             "digits or dashes)",
                          "rename it, e.g. name: " + kebab_case(*name)));
  return *name;
}

/// description: one line of at most kMaxDescription characters.
Result<std::string> read_description(const Entries& entries, std::string_view origin) {
  CT_TRY_ASSIGN(std::optional<std::string> description, scalar(entries, "description", origin));
  if (!description || trim(*description).empty())
    return fail(malformed(origin, description ? entries.find("description")->second.line : 1,
                          description ? "description is empty" : "the front matter has no description",
                          missing_fix("description")));
  const int description_line = entries.find("description")->second.line;
  if (*description == "|" || *description == ">" || description->starts_with("|") || description->starts_with(">"))
    return fail(malformed(origin, description_line, "description must be one line (no | or > block)",
                          "write `description: …` as one sentence on its line"));
  if (utf8_length(*description) > kMaxDescription)
    return fail(malformed(origin, description_line,
                          "description is " + std::to_string(utf8_length(*description)) +
                              " characters; at most 200",
                          "shorten it to one sentence; put the detail in the body"));
  return std::string(trim(*description));
}

/// The optional keys: tags, protocols, level (0–3).
Result<void> read_optional(const Entries& entries, std::string_view origin, Skill& skill) {
  if (auto tags = entries.find("tags"); tags != entries.end()) {
    CT_TRY_ASSIGN(skill.tags, list_value(tags->second, "tags", origin));
  }
  if (auto protocols = entries.find("protocols"); protocols != entries.end()) {
    CT_TRY_ASSIGN(skill.protocols, list_value(protocols->second, "protocols", origin));
  }
  CT_TRY_ASSIGN(std::optional<std::string> level, scalar(entries, "level", origin));
  if (level) {
    if (level->size() != 1 || (*level)[0] < '0' || (*level)[0] > '3')
      return fail(malformed(origin, entries.find("level")->second.line,
                            "level must be an integer 0–3, got '" + *level + "'",
                            "write level: 1 (the help level the subagent gets: 0 entry, 1 operations, 2 one operation "
                            "in full, 3 the protocol), or leave it out for 1"));
    skill.level = (*level)[0] - '0';
  }
  return {};
}

/// The body: everything after the closing ---, without the blank lines around it; not empty, at
/// most kMaxSkillBytes.
Result<std::string> read_body(const std::vector<std::string_view>& lines, std::size_t close, std::string_view origin) {
  std::string body;
  std::size_t first = close + 1;
  while (first < lines.size() && trim(lines[first]).empty()) ++first;
  std::size_t last = lines.size();
  while (last > first && trim(lines[last - 1]).empty()) --last;
  for (std::size_t i = first; i < last; ++i) {
    body += trim_right(lines[i]);
    body += '\n';
  }
  const int body_line = static_cast<int>(std::min(first, lines.size() - 1) + 1);
  if (body.empty())
    return fail(malformed(origin, static_cast<int>(close + 1), "no body after the front matter",
                          "write the protocol in Markdown after the closing --- line"));
  if (body.size() > kMaxSkillBytes)
    return fail(malformed(origin, body_line,
                          "the body is " + std::to_string(body.size()) + " bytes; at most " +
                              std::to_string(kMaxSkillBytes),
                          "shorten the protocol: a subagent reads all of it in its prompt"));
  return body;
}

}  // namespace

Result<Skill> parse_skill(std::string_view text, std::string_view origin) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);  // a UTF-8 byte order mark
  const std::vector<std::string_view> lines = split_lines(text);
  CT_TRY_ASSIGN(std::size_t close, front_matter_end(lines, origin));
  CT_TRY_ASSIGN(Entries entries, read_entries(lines, close, origin));
  Skill skill;
  for (const auto& [key, entry] : entries) {
    if (key == "name" || key == "description" || key == "tags" || key == "protocols" || key == "level") continue;
    skill.warnings.push_back(std::string(origin) + ":" + std::to_string(entry.line) + ": unknown key '" + key +
                             "' ignored (known: " + std::string(kKnownKeys) + ")");
  }
  CT_TRY_ASSIGN(skill.name, read_name(entries, origin));
  CT_TRY_ASSIGN(skill.description, read_description(entries, origin));
  CT_TRY(read_optional(entries, origin, skill));
  CT_TRY_ASSIGN(skill.body, read_body(lines, close, origin));
  return skill;
}

Result<std::string> read_skill_file(const fs::path& path, const std::string& label) {
  auto text = read_regular_file(path, {static_cast<std::int64_t>(kMaxSkillBytes), std::chrono::milliseconds(5000)});
  if (text) return text;
  const Error& why = text.error();
  if (why.code == ErrorCode::NotFound) return fail(Error(ErrorCode::NotFound, "no file at " + label));
  if (why.details["reason"] == json::Value("tooLarge"))
    return fail(Error(ErrorCode::Validation, label + " is " +
                                                 (why.details["size"].is_int() ? std::to_string(why.details["size"].as_int()) + " bytes"
                                                                               : std::string("larger than that")) +
                                                 "; a skill file holds at most " + std::to_string(kMaxSkillBytes))
                    .with_fix("shorten the protocol: a subagent reads all of it in its prompt"));
  if (why.details["reason"] == json::Value("notRegular"))
    return fail(Error(ErrorCode::FileError, label + " is not a regular file").with_fix("name the skill's .md file itself"));
  return fail(Error(ErrorCode::FileError, "cannot read " + label).with_fix("check the file's permissions"));
}

SkillFolder load_skill_folder(const fs::path& folder, std::string_view source, std::string_view shown_as) {
  SkillFolder out;
  const std::string shown = shown_as.empty() ? folder.string() : std::string(shown_as);
  std::error_code ec;
  if (!fs::exists(folder, ec)) return out;
  if (!fs::is_directory(folder, ec)) {
    out.warnings.push_back(shown + " is not a folder: its skills were not read");
    return out;
  }
  std::vector<fs::path> files;
  for (auto it = fs::directory_iterator(folder, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const fs::path& path = it->path();
    if (path.extension() != ".md" || to_lower_ascii(path.filename().string()) == "readme.md") continue;
    files.push_back(path);
  }
  if (ec) out.warnings.push_back("cannot list " + shown + ": " + ec.message());
  std::sort(files.begin(), files.end());
  std::map<std::string, std::string> seen;  // name → file that gave it
  for (const auto& path : files) {
    const std::string label = shown + "/" + path.filename().string();
    // A file of the folder: a link leading out of it is not read (it would read whatever it names).
    if (!lies_within(path, folder)) {
      out.warnings.push_back(label + " leads outside " + shown + ": skipped");
      continue;
    }
    auto text = read_skill_file(path, label);
    if (!text) {
      out.warnings.push_back(text.error().message + ": skipped");
      continue;
    }
    auto parsed = parse_skill(*text, label);
    if (!parsed) {
      out.warnings.push_back(parsed.error().message + " (skipped; fix: " + parsed.error().fix.plain_text() + ")");
      continue;
    }
    if (auto dup = seen.find(parsed->name); dup != seen.end()) {
      out.warnings.push_back(label + " names skill '" + parsed->name + "', like " + dup->second +
                             " before it: skipped (rename one of them)");
      continue;
    }
    seen.emplace(parsed->name, label);
    for (auto& warning : parsed->warnings) out.warnings.push_back(warning);
    parsed->source = std::string(source);
    parsed->path = path;
    out.skills.push_back(std::move(*parsed));
  }
  return out;
}

Result<std::vector<Skill>> builtin_skills() {
  std::vector<Skill> out;
  for (const auto& file : embedded_skill_files()) {
    auto parsed = parse_skill(file.text, "templates/skills/" + std::string(file.name));
    if (!parsed)
      return fail(ErrorCode::Internal, "built-in skill " + std::string(file.name) + " does not parse: " +
                                           parsed.error().message);
    parsed->source = "builtin";
    out.push_back(std::move(*parsed));
  }
  return out;
}

Result<SkillCatalog> SkillCatalog::load(const fs::path& project_root, const std::optional<fs::path>& home) {
  SkillCatalog catalog;
  std::map<std::string, Skill, std::less<>> effective;
  auto add = [&](std::vector<Skill> skills) {
    for (auto& skill : skills) {
      auto existing = effective.find(skill.name);
      if (existing != effective.end()) {
        skill.overrides = existing->second.source;
        existing->second = std::move(skill);
      } else {
        effective.emplace(skill.name, std::move(skill));
      }
    }
  };
  CT_TRY_ASSIGN(std::vector<Skill> builtins, builtin_skills());
  add(std::move(builtins));
  if (home) {
    SkillFolder user = load_skill_folder(skills_folder(*home), "user", "~/.cleo/skills");
    catalog.warnings_.insert(catalog.warnings_.end(), user.warnings.begin(), user.warnings.end());
    add(std::move(user.skills));
  }
  if (!project_root.empty()) {
    SkillFolder project = load_skill_folder(skills_folder(project_root), "project", ".cleo/skills");
    catalog.warnings_.insert(catalog.warnings_.end(), project.warnings.begin(), project.warnings.end());
    add(std::move(project.skills));
  }
  for (auto& [name, skill] : effective) catalog.skills_.push_back(std::move(skill));
  return catalog;
}

const Skill* SkillCatalog::find(std::string_view name) const {
  auto found = std::lower_bound(skills_.begin(), skills_.end(), name,
                                [](const Skill& skill, std::string_view wanted) { return skill.name < wanted; });
  return found != skills_.end() && found->name == name ? &*found : nullptr;
}

std::vector<std::string> SkillCatalog::names() const {
  std::vector<std::string> out;
  for (const auto& skill : skills_) out.push_back(skill.name);
  return out;
}

namespace {

/// The distinct lowercase words (ASCII letters and digits) of a text.
std::set<std::string> words_of(std::string_view text) {
  std::set<std::string> out;
  std::string word;
  for (char c : text) {
    const char lower = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    if ((lower >= 'a' && lower <= 'z') || (lower >= '0' && lower <= '9')) {
      word += lower;
    } else if (!word.empty()) {
      out.insert(std::move(word));
      word.clear();
    }
  }
  if (!word.empty()) out.insert(std::move(word));
  return out;
}

/// A keyword matches a tag as written or as its plural ("specs" → spec).
bool keyword_matches(const std::string& word, const std::vector<std::string>& tags) {
  for (const auto& tag : tags)
    if (word == tag || (word.size() == tag.size() + 1 && word.back() == 's' && word.starts_with(tag))) return true;
  return false;
}

/// Words too common to say anything when they appear in a description.
bool common_word(const std::string& word) {
  static const std::set<std::string, std::less<>> kCommon = {
      "and", "are", "but", "for", "from", "has", "how", "its", "not", "one", "our", "that", "the", "this",
      "was", "what", "when", "with", "you", "your", "into", "all", "any", "can", "use"};
  return word.size() < 3 || kCommon.contains(word);
}

/// The name is the word, or one of its dash-separated parts starts with it ("write" → spec-writer;
/// not "it" → spec-writer).
bool names_word(std::string_view name, std::string_view word) {
  if (name == word) return true;
  if (word.size() < 3) return false;
  for (std::size_t start = 0; start < name.size();) {
    auto dash = name.find('-', start);
    if (name.substr(start, dash - start).starts_with(word)) return true;
    if (dash == std::string_view::npos) break;
    start = dash + 1;
  }
  return false;
}

std::string quoted_list(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "'" : ", '") + item + "'";
  return out;
}

}  // namespace

std::vector<SkillMatch> SkillCatalog::search(std::string_view query) const {
  // The query's distinct words in the order given.
  std::vector<std::string> words;
  std::string word;
  auto flush = [&] {
    if (!word.empty() && std::find(words.begin(), words.end(), word) == words.end()) words.push_back(word);
    word.clear();
  };
  for (char c : query) {
    const char lower = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    if ((lower >= 'a' && lower <= 'z') || (lower >= '0' && lower <= '9') || (lower == '-' && !word.empty())) word += lower;
    else flush();
  }
  flush();

  std::vector<SkillMatch> out;
  for (const auto& skill : skills_) {
    SkillMatch match{&skill, 0, {}};
    const std::set<std::string> described = words_of(skill.description);
    for (const auto& w : words) {
      int points = 0;
      if (keyword_matches(w, skill.tags)) points = 3;
      else if (names_word(skill.name, w)) points = 2;
      else if (!common_word(w) &&
               std::any_of(described.begin(), described.end(),
                           [&](const std::string& d) { return keyword_matches(d, {w}) || keyword_matches(w, {d}); }))
        points = 1;
      if (points == 0) continue;
      match.score += points;
      match.matched.push_back(w);
    }
    if (match.score > 0) out.push_back(std::move(match));
  }
  std::stable_sort(out.begin(), out.end(), [](const SkillMatch& a, const SkillMatch& b) { return a.score > b.score; });
  return out;
}

Result<SkillChoice> SkillCatalog::select(const Task& task, std::optional<std::string_view> explicit_name) const {
  if (explicit_name) {
    if (const Skill* named = find(*explicit_name)) return SkillChoice{named, "named by the caller"};
    Error error(ErrorCode::NotFound, "no skill named '" + std::string(*explicit_name) + "'");
    error.fix = call("skills.list") + " lists the skills there are";
    return fail(std::move(error).with_detail("field", "skill").with_choices(*explicit_name, names()));
  }
  if (task.type == TaskType::Epic)
    if (const Skill* architect = find("epic-architect"))
      return SkillChoice{architect, "task " + task.id + " is an epic: epic-architect decomposes epics"};

  // Labels weigh more than any number of keywords; ties go to the first name.
  std::vector<std::string> labels;
  for (const auto& label : task.labels) labels.push_back(to_lower_ascii(label));
  const std::set<std::string> keywords = words_of(task.title + " " + task.description);
  const Skill* best = nullptr;
  long best_score = 0;
  std::vector<std::string> best_labels, best_keywords;
  for (const auto& skill : skills_) {
    std::vector<std::string> by_label, by_keyword;
    for (const auto& label : labels)
      if (label == skill.name || std::find(skill.tags.begin(), skill.tags.end(), label) != skill.tags.end())
        by_label.push_back(label);
    for (const auto& word : keywords)
      if (keyword_matches(word, skill.tags)) by_keyword.push_back(word);
    const long score = 1000L * static_cast<long>(by_label.size()) + static_cast<long>(by_keyword.size());
    if (score > best_score) {
      best = &skill;
      best_score = score;
      best_labels = std::move(by_label);
      best_keywords = std::move(by_keyword);
    }
  }
  if (best) {
    if (!best_labels.empty()) {
      const bool names_it = best_labels.size() == 1 && best_labels.front() == best->name;
      std::string reason = best_labels.size() == 1 ? "label " : "labels ";
      reason += quoted_list(best_labels);
      reason += names_it ? " names " : (best_labels.size() == 1 ? " matches tag of " : " match tags of ");
      return SkillChoice{best, reason + best->name};
    }
    std::string reason = best_keywords.size() == 1 ? "keyword " : "keywords ";
    reason += quoted_list(best_keywords) + " of the title or description ";
    reason += best_keywords.size() == 1 ? "matches tag of " : "match tags of ";
    return SkillChoice{best, reason + best->name};
  }
  if (const Skill* fallback = find(kDefaultSkill))
    return SkillChoice{fallback, "default: no tag or keyword matched"};
  return fail(ErrorCode::Internal, "the default skill " + std::string(kDefaultSkill) + " is missing");
}

}  // namespace ct
