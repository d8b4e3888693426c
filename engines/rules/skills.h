// Skills: Markdown protocol files an orchestrator puts into a subagent's spawn prompt. Each starts
// with a small front matter (name, description, tags, protocols, level) between `---` lines.
// Three sources, the higher shadowing the lower by name: the built-ins of templates/skills/
// (compiled in), the user's <home>/.cleo/skills/ and the project's .cleo/skills/. A malformed
// user or project file is skipped with a warning; it never breaks the catalog.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "engines/store/task.h"

namespace ct {

struct Skill {
  std::string name;
  std::string description;
  std::vector<std::string> tags;
  std::vector<std::string> protocols;
  int level = 1;                    // help level for a subagent using it (0–3)
  std::string body;                 // the Markdown after the front matter
  std::string source;               // "builtin" | "user" | "project"
  std::filesystem::path path;       // empty for built-ins
  std::string overrides;            // source it shadows ("builtin", "user"), "" when none
  /// What parse_skill accepted but noticed, "<origin>:<line>: …" (unknown keys).
  std::vector<std::string> warnings;
};

/// The largest skill file (and body) accepted: 16 KiB.
inline constexpr std::size_t kMaxSkillBytes = 16 * 1024;

/// A skill file read as any file a caller names (core/file_read.h: regular, at most
/// kMaxSkillBytes, quickly); an error says why in words about `label` (the path as shown):
/// E_NOT_FOUND, E_FILE_ERROR (not a regular file, unreadable) or E_VALIDATION (too large).
Result<std::string> read_skill_file(const std::filesystem::path& path, const std::string& label);

/// Parses one skill file; E_VALIDATION (with details.file, details.line, a fix) when malformed.
Result<Skill> parse_skill(std::string_view text, std::string_view origin /* file name for messages */);

/// The skills of one folder: every `*.md` in it, by file name, parsed with source `source`. A file
/// that cannot be read, is larger than kMaxSkillBytes, does not parse, or repeats a name seen in
/// an earlier file is skipped with a warning (README.md is not a skill and is left alone). A missing
/// folder has no skills and no warnings. Messages name the folder `shown_as` (".cleo/skills",
/// "~/.cleo/skills"; default: its path).
struct SkillFolder {
  std::vector<Skill> skills;
  std::vector<std::string> warnings;
};
SkillFolder load_skill_folder(const std::filesystem::path& folder, std::string_view source,
                              std::string_view shown_as = {});

/// The folder of one source's skills: <base>/.cleo/skills (base: the project root or the home).
inline std::filesystem::path skills_folder(const std::filesystem::path& base) { return base / ".cleo" / "skills"; }

struct SkillChoice {
  const Skill* skill = nullptr;
  std::string reason;               // "named by the caller" | "label 'docs' matches tag of documenter" | "default: no tag or keyword matched" …
};

struct SkillMatch {
  const Skill* skill = nullptr;
  int score = 0;
  std::vector<std::string> matched;  // the query's words that matched, in query order
};

class SkillCatalog {
 public:
  /// Built-ins, then <home>/.cleo/skills (when home is given), then <project_root>/.cleo/skills
  /// (when project_root is not empty). E_INTERNAL only when a built-in does not parse (a bug).
  static Result<SkillCatalog> load(const std::filesystem::path& project_root,
                                   const std::optional<std::filesystem::path>& home);
  const std::vector<Skill>& skills() const { return skills_; }      // effective skills, sorted by name
  const Skill* find(std::string_view name) const;
  const std::vector<std::string>& warnings() const { return warnings_; } // files skipped and why
  /// The names of the effective skills, sorted (for did-you-mean).
  std::vector<std::string> names() const;
  /// The skill for a task: `explicit_name` when given (E_NOT_FOUND with did-you-mean/list fix when
  /// unknown); otherwise scored by task labels matching tags (strong) and keywords of title and
  /// description matching tags (weak), epics prefer epic-architect; ties by name; the default is
  /// task-executor. The reason says which rule chose it.
  /// In order: the named skill; an epic → epic-architect; the most labels equal to a skill's tag
  /// or name (any label outweighs every keyword), then the most title/description words equal to
  /// a tag (or its plural); ties → the first by name; nothing matched → kDefaultSkill.
  Result<SkillChoice> select(const Task& task, std::optional<std::string_view> explicit_name) const;
  /// Skills matching the words of `query`, best first: per word, a tag equal to it (or to its
  /// singular) scores 3, a part of the name starting with it 2 ("write" → spec-writer), a word of
  /// the description equal to it or its plural 1 (not common words such as "the"); ties by name.
  /// Skills matching no word are left out.
  std::vector<SkillMatch> search(std::string_view query) const;

 private:
  std::vector<Skill> skills_;
  std::vector<std::string> warnings_;
};

inline constexpr std::string_view kDefaultSkill = "task-executor";

/// The built-in skill files (templates/skills/*.md), compiled in at build time by
/// cmake/embed_files.cmake; sorted by file name.
struct EmbeddedSkillFile {
  std::string_view name;  // file name, e.g. "task-executor.md"
  std::string_view text;
};
std::span<const EmbeddedSkillFile> embedded_skill_files();

/// The built-in skills, parsed (source "builtin"); E_INTERNAL when one does not parse.
Result<std::vector<Skill>> builtin_skills();

}  // namespace ct
