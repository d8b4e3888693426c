// Writing CLEO's instructions where agent hosts read them. The templates are rendered into a
// templates directory (.cleo/templates/ of the project, or $CLEO_HOME/templates/), and a block
// between `<!-- CLEO:START -->` and `<!-- CLEO:END -->` goes into each instruction file
// (CLAUDE.md, AGENTS.md, GEMINI.md). Text outside the markers is never touched; every write is
// atomic (temp file + rename); running it again changes nothing; a check mode reports drift.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "domains/registry.h"

namespace ct::disclosure {

inline constexpr std::string_view kBlockStart = "<!-- CLEO:START -->";
inline constexpr std::string_view kBlockEnd = "<!-- CLEO:END -->";

/// The instruction files agent hosts load: CLAUDE.md (Claude Code), AGENTS.md (Codex and other
/// agents.md hosts), GEMINI.md (Gemini CLI).
std::span<const std::string_view> instruction_files();

/// Where the block sits in a file: from the start of the START marker's line to the end of the
/// END marker's line (its newline included).
struct BlockSpan {
  std::size_t begin = 0;
  std::size_t end = 0;
};

/// The block of `text` (markers count only at the start of a line), nullopt when there is none.
/// A START without END, an END without START or before it, or two blocks are E_VALIDATION errors
/// naming `label` and the line.
Result<std::optional<BlockSpan>> find_block(std::string_view text, std::string_view label);

/// `text` with its block replaced by one holding `body`, or with the block appended (after a
/// blank line) when `span` is empty. Keeps the file's line ending (\n or \r\n).
std::string with_block(std::string_view text, std::optional<BlockSpan> span, std::string_view body);

struct InjectOptions {
  std::vector<std::string> targets;     // among instruction_files(); empty = all of them
  int level = 0;                        // 0 (block holds level 0), 1 or 3 (block points at a template)
  bool check = false;                   // report drift, write nothing
  bool create = false;                  // create target files that do not exist
  /// Project mode: files go to root/<target>, templates to root/.cleo/templates/.
  /// Global mode (`global_dirs` set): targets are the hosts' user files under `home`
  /// (~/.claude/CLAUDE.md, ~/.codex/AGENTS.md, ~/.gemini/GEMINI.md), templates go to cleo_home/templates/.
  std::filesystem::path root;
  struct GlobalDirs {
    std::filesystem::path home;
    std::filesystem::path cleo_home;
  };
  std::optional<GlobalDirs> global_dirs;
};

/// What happened to one file. Writing: created, inserted (block added to an existing file),
/// updated, unchanged, absent (not there and not asked to create). Checking: current, outdated
/// (block or template differs), missing (no block yet, or a template not rendered), absent.
struct FileOutcome {
  std::string file;  // relative to the project root in project mode, absolute in global mode
  std::string action;
};

struct InjectReport {
  std::vector<FileOutcome> templates;
  std::vector<FileOutcome> targets;
  bool changed = false;  // something was (or, when checking, would be) written
};

/// Renders and writes (or checks). Validates every target before writing any: malformed markers
/// leave every file untouched. Unknown targets or level 2 are E_INVALID_PARAMS.
Result<InjectReport> inject(const Registry& registry, const InjectOptions& options);

/// The global directories from the environment: CLEO_HOME (default $HOME/.cleo) and HOME.
Result<InjectOptions::GlobalDirs> global_dirs_from_environment();

}  // namespace ct::disclosure
