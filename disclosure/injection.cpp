#include "disclosure/injection.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <system_error>

#include "core/text.h"
#include "disclosure/help.h"

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
  if (!fs::is_regular_file(path, ec))
    return fail(Error(ErrorCode::FileError, path.string() + " is not a regular file")
                    .with_fix("move it away or choose other targets"));
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return fail(Error(ErrorCode::FileError, "cannot read " + path.string()).with_fix("check the file's permissions"));
  std::ostringstream text;
  text << in.rdbuf();
  return std::optional<std::string>(text.str());
}

/// Writes through a temp file in the same directory and renames it over the target, keeping the
/// target's permissions: a reader sees the old file or the new one, never half of one.
Result<void> write_atomically(const fs::path& path, std::string_view content) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec)
    return fail(Error(ErrorCode::FileError, "cannot create " + path.parent_path().string() + ": " + ec.message())
                    .with_fix("check the directory's permissions"));
  fs::path temp = path.parent_path() / ("." + path.filename().string() + ".cleo-" + std::to_string(::getpid()));
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.flush();
    if (!out) {
      fs::remove(temp, ec);
      return fail(Error(ErrorCode::FileError, "cannot write " + temp.string()).with_fix("check free space and permissions"));
    }
  }
  if (fs::exists(path, ec)) fs::permissions(temp, fs::status(path, ec).permissions(), ec);
  fs::rename(temp, path, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(temp, ignored);
    return fail(Error(ErrorCode::FileError, "cannot replace " + path.string() + ": " + ec.message())
                    .with_fix("check the directory's permissions"));
  }
  return {};
}

Error malformed(std::string_view label, std::size_t line, std::string problem) {
  Error error(ErrorCode::Validation, std::string(label) + ":" + std::to_string(line) + ": " + std::move(problem));
  error.fix = "edit " + std::string(label) + " so it holds one " + std::string(kBlockStart) + " … " +
              std::string(kBlockEnd) + " pair (or none), then inject again";
  return std::move(error).with_detail("file", std::string(label)).with_detail("line", static_cast<std::int64_t>(line));
}

struct Planned {
  fs::path path;
  std::string label;
  std::string content;  // what the file should hold
  std::string action;   // outcome (write-mode wording)
};

}  // namespace

std::span<const std::string_view> instruction_files() { return kInstructionFiles; }

Result<std::optional<BlockSpan>> find_block(std::string_view text, std::string_view label) {
  struct Marker {
    bool start;
    std::size_t begin;  // start of the line
    std::size_t end;    // after the line's newline
    std::size_t line;
  };
  std::vector<Marker> markers;
  std::size_t pos = 0, line = 1;
  while (pos < text.size()) {
    std::size_t newline = text.find('\n', pos);
    std::size_t end = newline == std::string_view::npos ? text.size() : newline + 1;
    std::string_view content = trim(text.substr(pos, end - pos));
    if (content.starts_with(kBlockStart)) markers.push_back({true, pos, end, line});
    else if (content.starts_with(kBlockEnd)) markers.push_back({false, pos, end, line});
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
  return std::optional<BlockSpan>(BlockSpan{markers.front().begin, markers.back().end});
}

std::string with_block(std::string_view text, std::optional<BlockSpan> span, std::string_view body) {
  const std::string eol = text.find("\r\n") != std::string_view::npos ? "\r\n" : "\n";
  std::string block = std::string(kBlockStart) + eol;
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

Result<InjectReport> inject(const Registry& registry, const InjectOptions& options) {
  if (options.level != 0 && options.level != 1 && options.level != 3) {
    return fail(Error(ErrorCode::InvalidParams, "level: " + std::to_string(options.level) +
                                                    " is not an injection level; use 0 (the block holds level 0), 1 or 3")
                    .with_detail("field", "level"));
  }
  std::vector<std::string> targets;
  std::vector<std::string> valid(kInstructionFiles.begin(), kInstructionFiles.end());
  for (const auto& target : options.targets.empty() ? valid : options.targets) {
    if (std::find(valid.begin(), valid.end(), target) == valid.end())
      return fail(Error(ErrorCode::InvalidParams, "targets: unknown instruction file '" + target + "'")
                      .with_detail("field", "targets")
                      .with_choices(target, valid));
    if (std::find(targets.begin(), targets.end(), target) == targets.end()) targets.push_back(target);
  }

  const bool global = options.global_dirs.has_value();
  const fs::path templates_dir = global ? options.global_dirs->cleo_home / "templates" : options.root / ".cleo" / "templates";
  auto label_of = [&](const fs::path& path) {
    return global ? path.string() : path.lexically_relative(options.root).generic_string();
  };
  // Blocks refer to the rendered templates: relative to the project (hosts resolve @imports
  // from the file's directory), absolute for user-wide files.
  auto reference = [&](std::string_view name) {
    fs::path path = templates_dir / name;
    return global ? path.string() : label_of(path);
  };
  const Resolver files = [&](std::string_view name, const std::vector<std::string>&) -> Result<std::string> {
    if (name == "agent_file") return reference("AGENT-INJECTION.md");
    if (name == "protocol_file") return reference("CLEO-INJECTION.md");
    return fail(ErrorCode::NotFound, "");
  };

  InjectReport report;
  std::vector<Planned> writes;
  for (auto name : kTemplates) {
    CT_TRY_ASSIGN(std::string content, render(registry, name, files));
    fs::path path = templates_dir / name;
    CT_TRY_ASSIGN(std::optional<std::string> existing, read_file(path));
    std::string action = !existing ? "created" : *existing == content ? "unchanged" : "updated";
    report.templates.push_back({label_of(path), action});
    if (action != "unchanged") writes.push_back({path, label_of(path), std::move(content), action});
  }
  CT_TRY_ASSIGN(std::string body, render(registry, "injection/block-level" + std::to_string(options.level) + ".md", files));
  for (const auto& target : targets) {
    fs::path path = global ? options.global_dirs->home / global_file(target) : options.root / target;
    std::string label = label_of(path);
    CT_TRY_ASSIGN(std::optional<std::string> existing, read_file(path));
    if (!existing && !options.create) {
      report.targets.push_back({label, "absent"});
      continue;
    }
    std::optional<BlockSpan> span;
    if (existing) {
      CT_TRY_ASSIGN(span, find_block(*existing, label));
    }
    std::string content = with_block(existing ? *existing : std::string(), span, body);
    std::string action = !existing ? "created" : !span ? "inserted" : *existing == content ? "unchanged" : "updated";
    report.targets.push_back({label, action});
    if (action != "unchanged") writes.push_back({path, label, std::move(content), action});
  }
  report.changed = !writes.empty();

  if (options.check) {
    // The same plan in the words of a check: what a write would do, nothing written.
    auto checked = [](std::string& action) {
      if (action == "unchanged") action = "current";
      else if (action == "updated") action = "outdated";
      else if (action == "created" || action == "inserted") action = "missing";
    };
    for (auto& outcome : report.templates) checked(outcome.action);
    for (auto& outcome : report.targets) checked(outcome.action);
    return report;
  }
  for (const auto& write : writes) CT_TRY(write_atomically(write.path, write.content));
  return report;
}

}  // namespace ct::disclosure
