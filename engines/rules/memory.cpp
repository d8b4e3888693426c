#include "engines/rules/memory.h"

#include <algorithm>
#include <fstream>
#include <mutex>
#include <set>
#include <unordered_set>

#include "core/json.h"
#include "core/pattern.h"
#include "core/sha256.h"
#include "core/text.h"
#include "engines/project/config.h"
#include "engines/rules/memory_symbols.h"

namespace ct::memory {
namespace fs = std::filesystem;

namespace {

// memory.verifyKinds lists kinds (engines/project/config.cpp declares the key).
const bool kVerifyKindsRegistered =
    register_config_rule({.key = "memory.verifyKinds", .choices = {kKinds.begin(), kKinds.end()}});

bool is_word_byte(unsigned char c) { return std::isalnum(c) || c >= 0x80; }

const std::unordered_set<std::string_view>& stop_words() {
  static const std::unordered_set<std::string_view> words = {
      "the", "and", "for", "are", "but", "not", "you", "all", "any", "can", "has", "had", "was", "its", "our",
      "out", "use", "with", "that", "this", "from", "into", "when", "then", "than", "them", "they", "what",
      "which", "who", "will", "would", "should", "there", "their", "these", "those", "been", "being", "have",
      "does", "did", "done", "only", "also", "each", "other", "some", "such", "more", "most", "very", "just",
      "an", "as", "at", "be", "by", "do", "if", "in", "is", "it", "no", "of", "on", "or", "so", "to", "up", "we"};
  return words;
}

std::string scope_json(const MemoryEntry& entry) {
  json::Value scope = json::Value::object();
  scope.set("files", json::Value::array_of(entry.files));
  scope.set("labels", json::Value::array_of(entry.labels));
  scope.set("tasks", json::Value::array_of(entry.tasks));
  scope.set("epic", entry.epic);
  return scope.dump();
}

/// A glob as an RE2 pattern: ** any path, * any name part, ? one character of a name.
std::string glob_pattern(std::string_view glob) {
  std::string out;
  for (std::size_t i = 0; i < glob.size(); ++i) {
    const char c = glob[i];
    if (c == '*' && i + 1 < glob.size() && glob[i + 1] == '*') {
      if (i + 2 < glob.size() && glob[i + 2] == '/') {
        out += "(?:.*/)?";
        i += 2;
      } else {
        out += ".*";
        i += 1;
      }
    } else if (c == '*') {
      out += "[^/]*";
    } else if (c == '?') {
      out += "[^/]";
    } else {
      if (!std::isalnum(static_cast<unsigned char>(c)) && static_cast<unsigned char>(c) < 0x80) out += '\\';
      out += c;
    }
  }
  return out;
}

bool glob_matches(std::string_view glob, std::string_view file) {
  static std::mutex mutex;
  static std::unordered_map<std::string, std::optional<Pattern>> compiled;
  std::lock_guard lock(mutex);
  auto found = compiled.find(std::string(glob));
  if (found == compiled.end()) {
    if (compiled.size() > 4096) compiled.clear();
    auto pattern = Pattern::compile(glob_pattern(glob));
    found = compiled.emplace(std::string(glob), pattern ? std::optional<Pattern>(std::move(*pattern)) : std::nullopt).first;
  }
  return found->second && found->second->matches(file);
}

std::string markdown_heading(std::string_view kind) {
  std::string heading(kind);
  heading[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(heading[0])));
  return heading + "s";
}

}  // namespace

std::string glob_folder(std::string_view glob) {
  const auto wild = glob.find_first_of("*?[");
  const auto slash = glob.rfind('/', wild);
  return slash == std::string_view::npos ? std::string() : std::string(glob.substr(0, slash + 1));
}

std::string content_hash(const MemoryEntry& entry) {
  return sha256_hex(entry.kind + "\n" + entry.title + "\n" + entry.body + "\n" + scope_json(entry)).substr(0, 16);
}

std::vector<std::string> words(std::string_view text) {
  std::vector<std::string> out;
  std::unordered_set<std::string> seen;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && !is_word_byte(static_cast<unsigned char>(text[i]))) ++i;
    std::size_t start = i;
    while (i < text.size() && is_word_byte(static_cast<unsigned char>(text[i]))) ++i;
    if (i - start < 2) continue;
    std::string word = to_lower_ascii(text.substr(start, std::min<std::size_t>(i - start, 40)));
    if (stop_words().contains(word)) continue;
    if (seen.insert(word).second) out.push_back(std::move(word));
  }
  return out;
}

std::vector<std::string> keys_of(const MemoryEntry& entry) {
  std::vector<std::string> keys;
  for (auto& word : words(entry.title + " " + entry.body)) {
    if (keys.size() >= 400) break;  // a long body is found by its first words
    keys.push_back("w:" + word);
  }
  for (const auto& file : entry.files) {
    // A symbol is found by its file, its name as written and its last part (memory_symbols.h).
    if (const SymbolScope parts = split_symbol(file); !parts.symbol.empty()) {
      keys.push_back("f:" + parts.file);
      keys.push_back("s:" + parts.symbol);
      keys.push_back("s:" + symbol_leaf(parts.symbol));
      continue;
    }
    keys.push_back("f:" + (is_glob(file) ? glob_folder(file) : file));
  }
  for (const auto& label : entry.labels) keys.push_back("l:" + to_lower_ascii(label));
  for (const auto& task : entry.tasks) keys.push_back("t:" + task);
  if (!entry.source_task.empty()) keys.push_back("t:" + entry.source_task);
  if (!entry.epic.empty()) keys.push_back("e:" + entry.epic);
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  return keys;
}

bool is_glob(std::string_view scope) { return scope.find_first_of("*?[") != std::string_view::npos; }

Result<std::string> normal_scope_path(std::string_view path) {
  if (const auto hash = path.find('#'); hash != std::string_view::npos) {
    // `file#symbol`: a file's path, then a symbol's name (memory_symbols.h).
    const std::string symbol(trim(path.substr(hash + 1)));
    auto invalid = [&](std::string why) {
      return fail(Error(ErrorCode::Validation, "symbol scope '" + std::string(path) + "' " + why)
                      .with_fix("name a file and a symbol defined in it, such as src/retry.cpp#RetryPolicy::backoff")
                      .with_detail("field", "files"));
    };
    if (symbol.empty() || symbol.find_first_of("# \t\r\n") != std::string::npos) return invalid("needs a symbol name after '#'");
    CT_TRY_ASSIGN(std::string file, normal_scope_path(path.substr(0, hash)));
    if (file.empty() || file.back() == '/' || is_glob(file)) return invalid("names a symbol of a folder or glob, not of a file");
    return file + "#" + symbol;
  }
  std::string text(trim(path));
  std::replace(text.begin(), text.end(), '\\', '/');
  auto invalid = [&](std::string why) {
    return fail(Error(ErrorCode::Validation, "scope path '" + std::string(path) + "' " + why)
                    .with_fix("give a path relative to the project root, such as src/store/ or src/**/*.cpp")
                    .with_detail("field", "files"));
  };
  if (text.empty()) return invalid("is empty");
  if (text.front() == '/' || (text.size() > 1 && text[1] == ':')) return invalid("is absolute");
  const bool folder = text.back() == '/';
  std::string out;
  for (const auto& part : split_list(text, '/')) {
    if (part.empty() || part == ".") continue;
    if (part == "..") return invalid("leaves the project");
    out += (out.empty() ? "" : "/") + part;
  }
  if (out.empty()) return std::string();  // "./": the whole project
  if (folder) out += "/";
  return out;
}

std::vector<std::string> file_lookup_keys(std::string_view scope) {
  const SymbolScope parts = split_symbol(scope);
  const std::string_view file = std::string_view(scope).substr(0, parts.file.size());
  std::vector<std::string> keys = {"f:" + std::string(file)};
  if (!parts.symbol.empty()) {
    keys.push_back("s:" + parts.symbol);
    keys.push_back("s:" + symbol_leaf(parts.symbol));
  }
  for (auto slash = file.rfind('/'); slash != std::string_view::npos; slash = slash == 0 ? std::string_view::npos : file.rfind('/', slash - 1))
    keys.push_back("f:" + std::string(file.substr(0, slash + 1)));
  keys.emplace_back("f:");
  return keys;
}

int scope_match(std::string_view scope, std::string_view file) {
  if (scope == file) return 2;
  // A symbol scope covers part of its file; a file, folder or glob covers a symbol of its files.
  if (const auto hash = scope.find('#'); hash != std::string_view::npos) {
    const std::string_view query_file = file.substr(0, file.find('#'));
    return scope.substr(0, hash) == query_file && query_file.size() == file.size() ? 1 : 0;
  }
  if (const auto hash = file.find('#'); hash != std::string_view::npos) return scope_match(scope, file.substr(0, hash)) > 0 ? 1 : 0;
  if (is_glob(scope)) return glob_matches(scope, file) ? 1 : 0;
  if (scope.empty()) return 1;  // the whole project
  if (scope.back() == '/' && file.starts_with(scope)) return 1;
  return 0;
}

std::vector<MemoryAnchor> anchors_of(const MemoryEntry& entry, const fs::path& root,
                                     const std::map<std::string, TaskStatus>& tasks, FileHashes& hasher,
                                     std::vector<Skipped>* skipped) {
  std::vector<MemoryAnchor> anchors;
  for (const auto& file : entry.files) {
    if (file.empty()) continue;  // the whole project: nothing to anchor
    auto hashed = hasher.hash(root, file);
    if (!hashed) {
      std::error_code ec;
      // A folder named without its slash is a folder scope: nothing to anchor.
      if (skipped && !fs::is_directory(root / file, ec)) skipped->push_back({file, std::move(hashed.error())});
      continue;
    }
    anchors.push_back({file, hashed->sha256, hashed->stamp.size, hashed->stamp.mtime_ns, "", ""});
  }
  std::set<std::string> task_ids(entry.tasks.begin(), entry.tasks.end());
  if (!entry.source_task.empty()) task_ids.insert(entry.source_task);
  for (const auto& id : task_ids)
    if (auto found = tasks.find(id); found != tasks.end())
      anchors.push_back({"", "", 0, 0, id, std::string(to_string(found->second))});
  return anchors;
}

std::optional<Staleness> staleness(const MemoryEntry& entry, const fs::path& root,
                                   const std::map<std::string, std::pair<TaskStatus, TimeMs>>& tasks,
                                   ScopeHasher& hasher) {
  for (const auto& anchor : entry.anchors) {
    if (!anchor.file.empty()) {
      // A file's stamp, a symbol's file's, a folder's or glob's files' (memory_symbols.h).
      const ScopeStamp stamp = hasher.stamp(root, anchor.file);
      if (stamp.size < 0) return Staleness{anchor.file, "", "missing", entry.updated_at};
      if (stamp.size == anchor.size && stamp.mtime_ns == anchor.mtime_ns) continue;  // untouched: not hashed
      auto hashed = hasher.hash(root, anchor.file);
      if (!hashed)
        return Staleness{anchor.file, "", hashed.error().code == ErrorCode::NotFound ? "missing" : "unreadable",
                         hashed.error().code == ErrorCode::NotFound ? entry.updated_at : stamp.latest_ms};
      if (hashed->sha256 != anchor.sha256) return Staleness{anchor.file, "", "changed", stamp.latest_ms};
      continue;
    }
    auto found = tasks.find(anchor.task);
    if (found == tasks.end()) return Staleness{"", anchor.task, "deleted", entry.updated_at};
    const auto [status, changed] = found->second;
    if (status == TaskStatus::Cancelled) return Staleness{"", anchor.task, "deleted", changed};
    if (anchor.task_status == "done" && status != TaskStatus::Done) return Staleness{"", anchor.task, "reopened", changed};
  }
  return std::nullopt;
}

double similarity(const MemoryEntry& a, const MemoryEntry& b) {
  const auto left = words(a.title + " " + a.body);
  const auto right = words(b.title + " " + b.body);
  if (left.empty() || right.empty()) return 0;
  std::unordered_set<std::string_view> set(left.begin(), left.end());
  std::size_t shared = 0;
  for (const auto& word : right) shared += set.contains(word) ? 1 : 0;
  return static_cast<double>(shared) / static_cast<double>(left.size() + right.size() - shared);
}

// -- Markdown ------------------------------------------------------------------------------------

std::string to_markdown(const std::vector<MemoryEntry>& entries) {
  std::string out =
      "# Project memory\n\n"
      "<!-- Written by `ct memory export`; `ct memory import` reads it back. Entries are grouped by kind and "
      "keep their ids. Edit a title, the body or a `- key: value` line and import the file: the entry is "
      "changed. Usage counts stay in the store. -->\n";
  for (auto kind : kKinds) {
    std::vector<const MemoryEntry*> of_kind;
    for (const auto& entry : entries)
      if (entry.kind == kind) of_kind.push_back(&entry);
    if (of_kind.empty()) continue;
    std::sort(of_kind.begin(), of_kind.end(), [](const MemoryEntry* x, const MemoryEntry* y) {
      return memory_number(x->id).value_or(0) < memory_number(y->id).value_or(0);
    });
    out += "\n## " + markdown_heading(kind) + "\n";
    for (const MemoryEntry* entry : of_kind) {
      out += "\n### " + entry->id + " " + entry->title + "\n\n";
      auto field = [&](std::string_view key, const std::string& value) {
        if (!value.empty()) out += "- " + std::string(key) + ": " + value + "\n";
      };
      field("status", entry->status);
      field("files", join(entry->files, ", "));
      field("labels", join(entry->labels, ", "));
      field("tasks", join(entry->tasks, ", "));
      field("epic", entry->epic);
      if (entry->confidence) {
        char text[32];
        std::snprintf(text, sizeof text, "%.2f", *entry->confidence);
        field("confidence", text);
      }
      field("verified-by", entry->verified_by);
      if (entry->verified_at) field("verified-at", format_iso8601(*entry->verified_at));
      field("source-agent", entry->source_agent);
      field("source-session", entry->source_session);
      field("source-task", entry->source_task);
      field("supersedes", entry->supersedes);
      field("superseded-by", entry->superseded_by);
      field("reason", entry->reason);
      field("created", format_iso8601(entry->created_at));
      if (!entry->body.empty()) {
        out += "\n";
        for (std::string_view line : split_lines(entry->body)) {
          // A body line that would read as a heading, a field or a comment is escaped with a backslash.
          if (line.starts_with("#") || line.starts_with("- ") || line.starts_with("\\") || line.starts_with("<!--"))
            out += "\\";
          out += std::string(line) + "\n";
        }
      }
    }
  }
  return out;
}

namespace {

/// E_VALIDATION naming the line of a memory file that cannot be read.
std::unexpected<Error> bad_line(int line, std::string why) {
  return fail(Error(ErrorCode::Validation, "line " + std::to_string(line) + ": " + why)
                  .with_fix("keep the layout `ct memory export` writes: ## Kinds, ### Mnnn title, - key: value lines, "
                            "then the body")
                  .with_detail("line", static_cast<std::int64_t>(line)));
}

/// An entry's `### Mnnn title` heading (`rest` after the hashes): its id in its one spelling (M01
/// and M0001 are M001) and its title, of `kind`.
Result<MemoryEntry> read_heading(std::string_view rest, const std::string& kind, int line) {
  const auto space = rest.find(' ');
  MemoryEntry entry;
  const std::string id(rest.substr(0, space));
  auto number = memory_number(id);
  if (!number) return bad_line(line, "'" + clip(id, 40) + "' is not an entry id (M001)");
  if (*number > kMaxMemoryNumber)
    return bad_line(line, "'" + clip(id, 40) + "' is beyond the last entry id (M" + std::to_string(kMaxMemoryNumber) + ")");
  entry.id = memory_id(*number);
  entry.title = space == std::string_view::npos ? std::string() : std::string(trim(rest.substr(space + 1)));
  if (entry.title.empty()) return bad_line(line, entry.id + " has no title");
  entry.kind = kind;
  return entry;
}

/// One `- key: value` line of an entry's fields.
Result<void> read_field(std::string_view line, MemoryEntry& entry, int number) {
  const auto colon = line.find(':');
  if (colon == std::string_view::npos) return bad_line(number, "a field line without ':'");
  const std::string key(trim(line.substr(2, colon - 2)));
  const std::string value(trim(line.substr(colon + 1)));
  auto list = [&] {
    std::vector<std::string> items;
    for (auto& item : split_list(value, ',')) {
      std::string trimmed(trim(item));
      if (!trimmed.empty()) items.push_back(std::move(trimmed));
    }
    return items;
  };
  if (key == "status") {
    if (std::find(kStatuses.begin(), kStatuses.end(), value) == kStatuses.end())
      return bad_line(number, "status '" + value + "' is not one of active, proposed, superseded, retracted");
    entry.status = value;
  } else if (key == "files") entry.files = list();
  else if (key == "labels") entry.labels = list();
  else if (key == "tasks") entry.tasks = list();
  else if (key == "epic") entry.epic = value;
  else if (key == "confidence") {
    char* end = nullptr;
    const double confidence = std::strtod(value.c_str(), &end);
    if (value.empty() || end != value.c_str() + value.size() || !(confidence >= 0 && confidence <= 1))
      return bad_line(number, "confidence '" + value + "' is not a number from 0 to 1");
    entry.confidence = confidence;
  } else if (key == "verified-by") entry.verified_by = value;
  else if (key == "verified-at" || key == "created") {
    auto at = parse_iso8601(value);
    if (!at) return bad_line(number, key + " '" + value + "' is not a time (2026-11-27T10:00:00Z)");
    if (key == "created") entry.created_at = *at;
    else entry.verified_at = *at;
  } else if (key == "source-agent") entry.source_agent = value;
  else if (key == "source-session") entry.source_session = value;
  else if (key == "source-task") entry.source_task = value;
  else if (key == "supersedes" || key == "superseded-by") {
    auto id = memory_number(value);
    if (!value.empty() && (!id || *id > kMaxMemoryNumber))
      return bad_line(number, key + " '" + clip(value, 40) + "' is not an entry id (M001)");
    (key == "supersedes" ? entry.supersedes : entry.superseded_by) = value.empty() ? value : memory_id(*id);
  }
  else if (key == "reason") entry.reason = value;
  else return bad_line(number, "unknown field '" + key + "'");
  return {};
}

}  // namespace

std::string normalized_body(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\r') {
      out += text[i];
    } else {
      out += '\n';
      if (i + 1 < text.size() && text[i + 1] == '\n') ++i;
    }
  }
  return std::string(trim(out));
}

Result<std::vector<MemoryEntry>> from_markdown(std::string_view raw) {
  // Line breaks of any spelling are one (a body's bare CR would otherwise end a line only on the
  // way back in).
  const std::string normalized = normalized_body(raw);
  const std::string_view text = normalized;
  std::vector<MemoryEntry> entries;
  std::string kind;
  int line_number = 0;
  bool in_fields = false;
  bool in_comment = false;
  auto finish_body = [&] {
    if (entries.empty()) return;
    std::string& body = entries.back().body;
    body = std::string(trim(body));
  };
  for (std::string_view line : split_lines(text)) {
    ++line_number;
    if (in_comment) {
      if (line.find("-->") != std::string_view::npos) in_comment = false;
      continue;
    }
    if (line.starts_with("<!--")) {
      in_comment = line.find("-->") == std::string_view::npos;
      continue;
    }
    if (line.starts_with("# ")) continue;
    if (line.starts_with("## ")) {
      finish_body();
      std::string heading = to_lower_ascii(trim(line.substr(3)));
      if (heading.ends_with("s")) heading.pop_back();
      if (std::find(kKinds.begin(), kKinds.end(), heading) == kKinds.end())
        return bad_line(line_number, "'" + std::string(trim(line.substr(3))) + "' is not a kind of entry (Decisions, "
                        "Conventions, Learnings, Risks, Patterns, Observations)");
      kind = heading;
      in_fields = false;
      continue;
    }
    if (line.starts_with("### ")) {
      finish_body();
      if (kind.empty()) return bad_line(line_number, "an entry before its kind's ## heading");
      CT_TRY_ASSIGN(MemoryEntry entry, read_heading(trim(line.substr(4)), kind, line_number));
      entries.push_back(std::move(entry));
      in_fields = true;
      continue;
    }
    if (entries.empty()) {
      if (!trim(line).empty()) return bad_line(line_number, "text before the first entry");
      continue;
    }
    MemoryEntry& entry = entries.back();
    if (in_fields && trim(line).empty()) continue;  // blank lines around the fields
    if (in_fields && line.starts_with("- ")) {
      CT_TRY(read_field(line, entry, line_number));
      continue;
    }
    in_fields = false;
    std::string_view body_line = line;
    if (body_line.starts_with("\\")) body_line.remove_prefix(1);
    entry.body += std::string(body_line) + "\n";
  }
  finish_body();
  std::set<std::string> ids;
  for (const auto& entry : entries)
    if (!ids.insert(entry.id).second)
      return fail(Error(ErrorCode::Validation, entry.id + " appears twice in the file")
                      .with_fix("keep one entry per id")
                      .with_detail("id", entry.id));
  return entries;
}

}  // namespace ct::memory
