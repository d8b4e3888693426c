#include "disclosure/injection.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <functional>
#include <map>
#include <system_error>

#include "core/atomic_file.h"
#include "core/file_read.h"
#include "core/text.h"
#include "disclosure/help_levels.h"
#include "domains/providers/providers.h"

namespace ct::disclosure {
namespace {

namespace fs = std::filesystem;

constexpr std::array<std::string_view, 3> kInstructionFiles = {"CLAUDE.md", "AGENTS.md", "GEMINI.md"};
constexpr std::array<std::string_view, 2> kTemplates = {"AGENT-INJECTION.md", "CLEO-INJECTION.md"};

/// Where each host keeps its user-wide instructions, relative to the home directory.
fs::path global_file(std::string_view target) {
  if (target == "CLAUDE.md") return fs::path(".claude") / "CLAUDE.md";
  if (target == "AGENTS.md") return fs::path(".codex") / "AGENTS.md";
  return fs::path(".gemini") / "GEMINI.md";
}

Result<std::optional<std::string>> read_file(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return std::optional<std::string>();
  // An agent instruction file is read as any file of the user's: regular, bounded (core/file_read.h).
  auto text = read_regular_file(path, {4LL << 20, std::chrono::milliseconds(10000)});
  if (!text)
    return fail(std::move(text.error()).with_fix("move it away or choose other targets"));
  return std::optional<std::string>(std::move(*text));
}

/// The file a path names: an existing file's canonical path (through symlinks), the target of a
/// dangling symlink (writing creates it, the link stays), else the path itself.
fs::path resolved(const fs::path& path) {
  std::error_code ec;
  fs::path canonical = fs::canonical(path, ec);
  if (!ec) return canonical;
  if (fs::is_symlink(fs::symlink_status(path, ec))) {
    fs::path target = fs::read_symlink(path, ec);
    if (!ec) return target.is_absolute() ? target : path.parent_path() / target;
  }
  return path;
}

/// Writes through a temp file in the same directory, creating the directory first (a reader sees
/// the old file or the new one, never half of one). `path` is the resolved file (a symlink's
/// target), so links survive; the file keeps its permissions.
Result<void> write_atomically(const fs::path& path, std::string_view content) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec)
    return fail(Error(ErrorCode::FileError, "cannot create " + path.parent_path().string() + ": " + ec.message())
                    .with_fix("check the directory's permissions"));
  return write_file_atomically(path, content);
}

/// Whether a (trimmed) line is a START marker, and the level it records.
struct StartMarker {
  std::string_view level;  // the text after level=, empty when there is none
};
std::optional<StartMarker> parse_start(std::string_view line) {
  constexpr std::string_view kOpen = "<!-- CLEO:START";
  if (!line.starts_with(kOpen)) return std::nullopt;
  std::string_view rest = line.substr(kOpen.size());
  std::size_t close = rest.find("-->");
  if (close == std::string_view::npos || (close > 0 && rest.front() != ' ' && rest.front() != '\t')) return std::nullopt;
  StartMarker marker;
  std::string_view attributes = rest.substr(0, close);
  while (!(attributes = trim(attributes)).empty()) {
    std::size_t space = attributes.find_first_of(" \t");
    std::string_view word = attributes.substr(0, space);
    if (word.starts_with("level=")) marker.level = word.substr(6);
    attributes = space == std::string_view::npos ? std::string_view() : attributes.substr(space);
  }
  return marker;
}

Error malformed(std::string_view label, std::size_t line, std::string problem) {
  Error error(ErrorCode::Validation, std::string(label) + ":" + std::to_string(line) + ": " + std::move(problem));
  error.fix = "edit " + std::string(label) + " so it holds one " + std::string(kBlockStart) + " … " +
              std::string(kBlockEnd) + " pair (or none), then inject again";
  return std::move(error).with_detail("file", std::string(label)).with_detail("line", static_cast<std::int64_t>(line));
}

struct Planned {
  fs::path path;  // resolved: the file itself, not a symlink to it
  std::string label;
  std::string content;  // what the file should hold
  std::string action;   // outcome (write-mode wording)
};

/// The placeholders of the blocks that name the rendered templates, each as `reference` writes a
/// template's path.
Resolver template_files(std::function<std::string(std::string_view)> reference) {
  return [reference = std::move(reference)](std::string_view name, const std::vector<std::string>&) -> Result<std::string> {
    if (name == "agent_file") return reference("AGENT-INJECTION.md");
    if (name == "protocol_file") return reference("CLEO-INJECTION.md");
    return fail(ErrorCode::NotFound, "");
  };
}

/// Where a project's rendered templates are, as its instruction files name them.
std::string project_template(std::string_view name) { return ".cleo/templates/" + std::string(name); }

}  // namespace

Result<std::string> project_block(const Registry& registry, int level) {
  return render(registry, "injection/block-level" + std::to_string(level) + ".md", template_files(project_template));
}

std::span<const std::string_view> instruction_files() { return kInstructionFiles; }

std::string start_marker(int level) {
  // Level 0, the default, needs no record: the always-loaded block stays as small as it can.
  return level == 0 ? std::string(kBlockStart) : "<!-- CLEO:START level=" + std::to_string(level) + " -->";
}

Result<std::optional<BlockSpan>> find_block(std::string_view text, std::string_view label) {
  struct Marker {
    bool start;
    std::size_t begin;  // start of the line
    std::size_t end;    // after the line's newline
    std::size_t line;
    std::string_view level;  // START: the text after level=
  };
  std::vector<Marker> markers;
  std::size_t pos = 0, line = 1;
  while (pos < text.size()) {
    std::size_t newline = text.find('\n', pos);
    std::size_t end = newline == std::string_view::npos ? text.size() : newline + 1;
    std::string_view content = trim(text.substr(pos, end - pos));
    if (auto start = parse_start(content)) markers.push_back({true, pos, end, line, start->level});
    else if (content.starts_with(kBlockEnd)) markers.push_back({false, pos, end, line, {}});
    pos = end;
    ++line;
  }
  if (markers.empty()) return std::optional<BlockSpan>();
  std::size_t starts = static_cast<std::size_t>(std::count_if(markers.begin(), markers.end(), [](const auto& m) { return m.start; }));
  if (starts > 1 || markers.size() - starts > 1) {
    const Marker& second = starts > 1 ? *std::find_if(markers.begin() + 1, markers.end(), [](const auto& m) { return m.start; })
                                      : markers.back();
    return fail(malformed(label, second.line, "more than one CLEO block (" + std::to_string(starts) + " START and " +
                                                  std::to_string(markers.size() - starts) + " END markers)"));
  }
  if (starts == 0) return fail(malformed(label, markers.front().line, std::string(kBlockEnd) + " without " + std::string(kBlockStart)));
  if (markers.size() == 1) return fail(malformed(label, markers.front().line, std::string(kBlockStart) + " without " + std::string(kBlockEnd)));
  if (!markers.front().start)
    return fail(malformed(label, markers.front().line, std::string(kBlockEnd) + " comes before " + std::string(kBlockStart)));
  BlockSpan span{markers.front().begin, markers.back().end, std::nullopt};
  std::string_view level = markers.front().level;
  if (level == "0" || level == "1" || level == "3") {
    span.level = level.front() - '0';
  } else if (!level.empty()) {
    Error error = malformed(label, markers.front().line, "level=" + std::string(level) +
                                                            " in the START marker is not an injection level (0, 1 or 3)");
    error.fix = "set level=0, 1 or 3 in the START marker of " + std::string(label) + " (or remove it), then inject again";
    return fail(std::move(error));
  }
  return std::optional<BlockSpan>(span);
}

std::string with_block(std::string_view text, std::optional<BlockSpan> span, std::string_view body, int level) {
  const std::string eol = text.find("\r\n") != std::string_view::npos ? "\r\n" : "\n";
  std::string block = start_marker(level) + eol;
  std::string_view rest = body;
  while (!rest.empty()) {
    std::size_t newline = rest.find('\n');
    block.append(rest.substr(0, newline));
    block += eol;
    rest = newline == std::string_view::npos ? std::string_view() : rest.substr(newline + 1);
  }
  block += std::string(kBlockEnd) + eol;
  if (span) return std::string(text.substr(0, span->begin)) + block + std::string(text.substr(span->end));
  std::string out(text);
  if (!out.empty()) {
    if (out.back() != '\n') out += eol;
    out += eol;
  }
  return out + block;
}

Result<InjectOptions::GlobalDirs> global_dirs_from_environment() {
  const char* home = std::getenv("HOME");
  if (!home || !*home)
    return fail(Error(ErrorCode::ConfigError, "HOME is not set, so the global instruction files cannot be found")
                    .with_fix("set HOME (and optionally CLEO_HOME) and run it again"));
  InjectOptions::GlobalDirs dirs;
  dirs.home = home;
  const char* cleo_home = std::getenv("CLEO_HOME");
  dirs.cleo_home = cleo_home && *cleo_home ? fs::path(cleo_home) : dirs.home / ".cleo";
  return dirs;
}

namespace {

/// The instruction files to inject, each once: the options' (every one when none), each a file
/// instruction_files() names; a level that is not 0, 1 or 3 is refused.
Result<std::vector<std::string>> checked_targets(const InjectOptions& options) {
  if (options.level && *options.level != 0 && *options.level != 1 && *options.level != 3) {
    return fail(Error(ErrorCode::Validation, "level: " + std::to_string(*options.level) +
                                                    " is not an injection level; use 0 (the block holds level 0), 1 or 3")
                    .with_fix("pass level 0, 1 (imports AGENT-INJECTION.md) or 3 (imports CLEO-INJECTION.md), or "
                              "none to keep each block's level")
                    .with_detail("field", "level"));
  }
  std::vector<std::string> targets;
  std::vector<std::string> valid(kInstructionFiles.begin(), kInstructionFiles.end());
  for (const auto& target : options.targets.empty() ? valid : options.targets) {
    if (std::find(valid.begin(), valid.end(), target) == valid.end())
      return fail(Error(ErrorCode::Validation, "targets: unknown instruction file " + echo(target))
                      .with_detail("field", "targets")
                      .with_choices(target, valid));
    if (std::find(targets.begin(), targets.end(), target) == targets.end()) targets.push_back(target);
  }
  return targets;
}

/// An injection planned before anything is written: the templates rendered, then each target's
/// block; every file checked (inside the project, markers well formed) before any is written.
class Injection {
 public:
  Injection(const Registry& registry, const InjectOptions& options)
      : registry_(registry), options_(options), global_(options.global_dirs.has_value()),
        templates_dir_(global_ ? options.global_dirs->cleo_home / "templates" : options.root / ".cleo" / "templates"),
        // Blocks refer to the rendered templates: relative to the project (hosts resolve @imports
        // from the file's directory), absolute for user-wide files.
        files_(template_files([this](std::string_view name) {
          fs::path path = templates_dir_ / name;
          return global_ ? path.string() : label_of(path);
        })) {
    std::error_code root_ec;
    root_ = global_ ? fs::path() : fs::weakly_canonical(options.root, root_ec);
  }
  Injection(const Injection&) = delete;
  Injection& operator=(const Injection&) = delete;

  /// AGENT-INJECTION.md and CLEO-INJECTION.md rendered into the templates folder.
  Result<void> plan_templates() {
    for (auto name : kTemplates) {
      CT_TRY_ASSIGN(std::string content, render(registry_, name, files_));
      fs::path path = templates_dir_ / name;
      CT_TRY_ASSIGN(std::optional<std::string> existing, read_file(path));
      std::string action = !existing ? "created" : *existing == content ? "unchanged" : "updated";
      report_.templates.push_back({label_of(path), action, std::nullopt});
      if (action != "unchanged") {
        CT_TRY(check_inside(resolved(path), path));
        writes_.push_back({resolved(path), label_of(path), std::move(content), action});
      }
    }
    return {};
  }

  /// Each target's CLEO block at its level (the options', else the block's own, else 0). Two
  /// targets can be one file (CLAUDE.md a symlink to AGENTS.md): it is written once, under the
  /// name that is not a link (else the first), and the other reports "same file as …".
  Result<void> plan_targets(const std::vector<std::string>& targets) {
    std::vector<Target> planned;
    for (const auto& target : targets) {
      fs::path path = global_ ? options_.global_dirs->home / global_file(target) : options_.root / target;
      std::error_code ec;
      planned.push_back({path, resolved(path), label_of(path), fs::is_symlink(fs::symlink_status(path, ec))});
    }
    for (const auto& target : planned) {
      if (const Target& owner = owner_of(planned, target); &owner != &target) {
        report_.targets.push_back({target.label, "same file as " + owner.label, std::nullopt});
        continue;
      }
      CT_TRY(plan_target(target));
    }
    return {};
  }

  /// The report; with `check` the plan in the words of a check, nothing written, else every
  /// planned file written.
  Result<InjectReport> finish() {
    report_.changed = !writes_.empty();
    if (options_.check) {
      // The same plan in the words of a check: what a write would do, nothing written.
      auto checked = [](std::string& action) {
        if (action == "unchanged") action = "current";
        else if (action == "updated") action = "outdated";
        else if (action == "created" || action == "inserted") action = "missing";
      };
      for (auto& outcome : report_.templates) checked(outcome.action);
      for (auto& outcome : report_.targets) checked(outcome.action);
      return report_;
    }
    for (const auto& write : writes_) CT_TRY(write_atomically(write.path, write.content));
    return report_;
  }

 private:
  struct Target {
    fs::path path;
    fs::path file;  // resolved
    std::string label;
    bool link = false;
  };

  static const Target& owner_of(const std::vector<Target>& planned, const Target& target) {
    const Target* first = nullptr;
    for (const auto& other : planned) {
      if (other.file != target.file) continue;
      if (!other.link) return other;
      if (!first) first = &other;
    }
    return *first;
  }

  Result<void> plan_target(const Target& target) {
    CT_TRY_ASSIGN(std::optional<std::string> existing, read_file(target.file));
    if (!existing && !options_.create) {
      report_.targets.push_back({target.label, "absent", std::nullopt});
      return {};
    }
    std::optional<BlockSpan> span;
    if (existing) {
      CT_TRY_ASSIGN(span, find_block(*existing, target.label));
    }
    const int level = options_.level ? *options_.level : span && span->level ? *span->level : 0;
    if (!bodies_.contains(level)) {
      CT_TRY_ASSIGN(std::string body, render(registry_, "injection/block-level" + std::to_string(level) + ".md", files_));
      bodies_.emplace(level, std::move(body));
    }
    std::string content = with_block(existing ? *existing : std::string(), span, bodies_.at(level), level);
    std::string action = !existing ? "created" : !span ? "inserted" : *existing == content ? "unchanged" : "updated";
    report_.targets.push_back({target.label, action, level});
    if (action != "unchanged") {
      CT_TRY(check_inside(target.file, target.path));
      writes_.push_back({target.file, target.label, std::move(content), action});
    }
    return {};
  }

  std::string label_of(const fs::path& path) const {
    return global_ ? path.string() : path.lexically_relative(options_.root).generic_string();
  }

  /// Every file written must lie inside the project, whatever symlinks lead elsewhere, unless the
  /// caller allows it.
  Result<void> check_inside(const fs::path& file, const fs::path& named) const {
    if (global_ || options_.allow_outside) return {};
    fs::path relative = file.lexically_relative(root_);
    if (!relative.empty() && relative.native().rfind("..", 0) != 0 && !relative.is_absolute()) return {};
    return fail(Error(ErrorCode::InvalidInput, label_of(named) + " leads outside the project (to " + file.string() +
                                                   "); nothing was written")
                    .with_fix("replace the symlink with a file, or on the command line: ct inject --allow-outside")
                    .with_detail("field", "targets")
                    .with_detail("file", label_of(named)));
  }

  const Registry& registry_;
  const InjectOptions& options_;
  const bool global_;
  const fs::path templates_dir_;
  const Resolver files_;
  fs::path root_;
  InjectReport report_;
  std::vector<Planned> writes_;
  std::map<int, std::string> bodies_;  // the block of each level, rendered once
};

}  // namespace

Result<InjectReport> inject(const Registry& registry, const InjectOptions& options) {
  CT_TRY_ASSIGN(std::vector<std::string> targets, checked_targets(options));
  Injection injection(registry, options);
  CT_TRY(injection.plan_templates());
  CT_TRY(injection.plan_targets(targets));
  return injection.finish();
}

std::optional<std::string> block_pointer_instructions(const Registry& registry, const fs::path& root,
                                                      std::string_view client_name) {
  const providers::Provider* host = providers::find_client(client_name);
  if (!host) return std::nullopt;
  InjectOptions options;
  options.targets = {std::string(host->inject_target)};
  options.check = true;
  options.root = root;
  auto report = inject(registry, options);
  if (!report || report->targets.size() != 1 || report->targets.front().action != "current") return std::nullopt;
  const std::string file(host->inject_target);
  auto text = render(registry, "help/instructions-block.md",
                     [&file](std::string_view name, const std::vector<std::string>&) -> Result<std::string> {
                       if (name == "host_file") return file;
                       return fail(ErrorCode::NotFound, "");
                     });
  return text ? std::optional(*text) : std::nullopt;
}

}  // namespace ct::disclosure
