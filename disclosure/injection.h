// Writing CLEO's instructions where agent hosts read them. The templates are rendered into a
// templates directory (.cleo/templates/ of the project, or $CLEO_HOME/templates/), and a block
// between `<!-- CLEO:START -->` (`<!-- CLEO:START level=N -->` for level 1 or 3) and
// `<!-- CLEO:END -->` goes into each instruction file
// (CLAUDE.md, AGENTS.md, GEMINI.md). Text outside the markers is never touched; every write is
// atomic (temp file + rename, onto the file a symlink points at); running it again changes
// nothing; a check mode reports drift. The level recorded in the marker is kept until asked.
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

/// The START marker as people write it; the block's own carries its level (`start_marker`).
/// Any line beginning `<!-- CLEO:START` + space or `-->` is a START marker: `<!-- CLEO:START -->`,
/// `<!-- CLEO:START level=3 -->`, the original CLEO's `<!-- CLEO:START v0.91.0 -->`.
inline constexpr std::string_view kBlockStart = "<!-- CLEO:START -->";
inline constexpr std::string_view kBlockEnd = "<!-- CLEO:END -->";

/// `<!-- CLEO:START level=N -->`, or plain `<!-- CLEO:START -->` for level 0 (the default).
std::string start_marker(int level);

/// The instruction files agent hosts load: CLAUDE.md (Claude Code), AGENTS.md (Codex and other
/// agents.md hosts), GEMINI.md (Gemini CLI).
std::span<const std::string_view> instruction_files();

/// Where the block sits in a file: from the start of the START marker's line to the end of the
/// END marker's line (its newline included).
struct BlockSpan {
  std::size_t begin = 0;
  std::size_t end = 0;
  std::optional<int> level;  // level=N of the START marker; none in a plain marker
};

/// The block of `text` (markers count only at the start of a line), nullopt when there is none.
/// A START without END, an END without START or before it, two blocks, or a level= other than 0,
/// 1 or 3 are E_VALIDATION errors naming `label` and the line.
Result<std::optional<BlockSpan>> find_block(std::string_view text, std::string_view label);

/// `text` with its block replaced by one holding `body` (its START marker recording `level`), or
/// with the block appended (after a blank line) when `span` is empty. Keeps the file's line
/// ending (\n or \r\n).
std::string with_block(std::string_view text, std::optional<BlockSpan> span, std::string_view body, int level);

struct InjectOptions {
  std::vector<std::string> targets;     // among instruction_files(); empty = all of them
  /// 0 (the block holds level 0), 1 or 3 (it imports a template). None: each file keeps the
  /// level its block records (0 for a new block or a plain marker).
  std::optional<int> level;
  bool check = false;                   // report drift, write nothing
  bool create = false;                  // create target files that do not exist
  /// Project mode: write through a symlink that leads outside the project (without it such a
  /// target is refused before anything is written).
  bool allow_outside = false;
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
/// A target that is the same file as another one (a symlink to it) is "same file as <other>",
/// and only the other one is written.
struct FileOutcome {
  std::string file;  // relative to the project root in project mode, absolute in global mode
  std::string action;
  std::optional<int> level;  // targets: the level of the block the file holds (or would hold)
};

struct InjectReport {
  std::vector<FileOutcome> templates;
  std::vector<FileOutcome> targets;
  bool changed = false;  // something was (or, when checking, would be) written
};

/// Renders and writes (or checks). Validates every target before writing any: malformed markers
/// leave every file untouched. Unknown targets or level 2 are E_INVALID_PARAMS.
Result<InjectReport> inject(const Registry& registry, const InjectOptions& options);

/// The MCP `initialize` instructions for a client that need not repeat level 0: when
/// `client_name` is a host of the providers table whose instruction file in project `root` holds
/// a current CLEO block (which the host loads into the agent's context anyway), one line pointing
/// at that block (templates/help/instructions-block.md). None otherwise: level 0 serves it.
std::optional<std::string> block_pointer_instructions(const Registry& registry, const std::filesystem::path& root,
                                                      std::string_view client_name);

/// The block `ct inject` writes into a project's instruction files at `level` (its body, without
/// the markers): what a host loads from CLAUDE.md, AGENTS.md or GEMINI.md.
Result<std::string> project_block(const Registry& registry, int level = 0);

/// The global directories from the environment: CLEO_HOME (default $HOME/.cleo) and HOME.
Result<InjectOptions::GlobalDirs> global_dirs_from_environment();

}  // namespace ct::disclosure
