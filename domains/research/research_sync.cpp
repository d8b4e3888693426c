// research domain — research.sync: the new complete lines of the manifest file subagents append to
// (research.manifestFile), imported in one write transaction, idempotently.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include "core/text.h"
#include "domains/context.h"
#include "domains/params.h"
#include "domains/registry.h"
#include "domains/research/research_common.h"
#include "engines/rules/research.h"

namespace ct {
namespace {

using namespace research;

namespace fs = std::filesystem;

/// At most `max` bytes of `file` from `offset` (to its end as it is now: appenders may go on).
Result<std::string> read_from(const fs::path& file, std::int64_t offset,
                              std::size_t max = std::numeric_limits<std::size_t>::max()) {
  std::ifstream in(file, std::ios::binary);
  if (!in)
    return fail(Error(ErrorCode::FileError, "cannot read " + file.string() + ": " + std::strerror(errno))
                    .with_fix("check that the file is readable by this user"));
  in.seekg(offset);
  std::string out;
  char buffer[65536];
  while (out.size() < max && in.read(buffer, static_cast<std::streamsize>(std::min(sizeof buffer, max - out.size()))))
    out.append(buffer, static_cast<std::size_t>(in.gcount()));
  if (out.size() < max) out.append(buffer, static_cast<std::size_t>(in.gcount()));
  if (in.bad())
    return fail(Error(ErrorCode::FileError, "cannot read " + file.string()).with_fix("check the disk and retry"));
  return out;
}

Result<Reply> sync(Context& context, const Params& params) {
  const std::string configured = context.config->get_string("research.manifestFile");
  auto relative = project_relative_path(configured, context.project->root, "research.manifestFile");
  if (!relative)
    return fail(Error(ErrorCode::ConfigError, "research.manifestFile '" + configured + "' is outside the project")
                    .with_fix(config_set_fix("research.manifestFile", json::Value(".cleo/agent-outputs/MANIFEST.jsonl"))));
  const fs::path path = context.project->root / *relative;
  json::Value data = json::Value::object();
  data.set("file", *relative);
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (status.type() == fs::file_type::not_found) {
    data.set("imported", 0);
    return Reply{std::move(data), {"no manifest yet: subagents create " + *relative + " with their first line"}, {},
                 ErrorCode::NoData};
  }
  if (ec || !fs::is_regular_file(status))
    return fail(Error(ErrorCode::FileError, path.string() + " is not a readable file")
                    .with_fix("research.manifestFile must name a regular file (one JSON line per entry)")
                    .with_detail("file", *relative));

  // Where to continue: the cursor, unless the file shrank or its head changed (rotated or
  // replaced): then from the start, and ids already imported are skipped.
  CT_TRY_ASSIGN(std::string head, read_from(path, 0, kManifestHeadBytes));
  CT_TRY_ASSIGN(std::optional<ManifestCursor> cursor, context.db().get_manifest_cursor(*relative));
  std::int64_t start = 0;
  std::int64_t first_line = 1;
  bool rescanned = false;
  if (cursor && cursor->offset > 0) {
    std::error_code size_ec;
    const auto size = static_cast<std::int64_t>(fs::file_size(path, size_ec));
    const bool same = !size_ec && size >= cursor->offset &&
                      manifest_head_hash(std::string_view(head).substr(
                          0, static_cast<std::size_t>(std::min<std::int64_t>(cursor->offset, kManifestHeadBytes)))) ==
                          cursor->head_hash;
    if (same) {
      start = cursor->offset;
      first_line = cursor->lines + 1;
    } else {
      rescanned = true;
    }
  }
  CT_TRY_ASSIGN(std::string bytes, read_from(path, start));
  const std::string_view rest = bytes;
  ManifestChunk chunk = split_manifest_lines(rest, first_line);

  std::vector<std::string> warnings;
  json::Value invalid = json::Value::array();
  json::Value conflicts = json::Value::array();
  json::Value ids = json::Value::array();
  std::int64_t imported = 0, skipped = 0, invalid_count = 0, conflict_count = 0;
  const std::string day = today(context);
  for (const auto& line : chunk.lines) {
    if (trim(line.text).empty()) continue;
    std::vector<std::string> line_warnings;
    auto entry = parse_manifest_line(line.text, context.project->root, day, line_warnings);
    std::optional<Error> problem;
    if (!entry) problem = std::move(entry.error());
    if (!problem) {
      CT_TRY_ASSIGN(std::optional<std::string> missing, missing_task(context, entry->linked_tasks));
      if (missing) problem = task_not_found(*missing);
    }
    if (problem) {
      ++invalid_count;
      if (invalid.size() < kListedInReply) {
        json::Value item = json::Value::object();
        item.set("line", line.number);
        item.set("error", problem->message);
        if (const json::Value* field = problem->details.find("field"); field && field->is_string() &&
                                                                     !field->as_string().empty())
          item.set("field", *field);
        invalid.push_back(std::move(item));
      }
      continue;
    }
    CT_TRY_ASSIGN(std::optional<ResearchEntry> existing, context.db().get_research(entry->id));
    if (existing) {
      if (same_research_content(*existing, *entry)) {
        ++skipped;
      } else {
        ++conflict_count;
        if (conflicts.size() < kListedInReply) {
          json::Value item = json::Value::object();
          item.set("line", line.number);
          item.set("id", entry->id);
          conflicts.push_back(std::move(item));
        }
      }
      continue;
    }
    entry->created_at = entry->updated_at = context.now();
    CT_TRY(context.db().put_research(*entry));
    record(context, std::nullopt, *entry);
    ++imported;
    if (ids.size() < kListedInReply) ids.push_back(entry->id);
    for (auto& warning : line_warnings)
      if (warnings.size() < 20) warnings.push_back("line " + std::to_string(line.number) + ": " + warning);
  }
  ManifestCursor next;
  next.file = *relative;
  next.offset = start + chunk.consumed;
  next.lines = first_line - 1 + std::ssize(chunk.lines);
  // The head as consumed: the bytes before `start` (checked above against the cursor's hash), then
  // this read.
  const std::string consumed_head =
      head.substr(0, std::min(head.size(), static_cast<std::size_t>(start))) + std::string(rest.substr(0, kManifestHeadBytes));
  next.head_hash = manifest_head_hash(std::string_view(consumed_head).substr(
      0, static_cast<std::size_t>(std::min<std::int64_t>(next.offset, kManifestHeadBytes))));
  next.synced_at = context.now();
  const bool moved = !cursor || cursor->offset != next.offset || cursor->lines != next.lines ||
                     cursor->head_hash != next.head_hash;
  if (moved) CT_TRY(context.db().put_manifest_cursor(next));

  data.set("imported", imported);
  data.set("skipped", skipped);
  data.set("ids", std::move(ids));
  if (invalid_count > 0) {
    data.set("invalid", std::move(invalid));
    warnings.push_back(std::to_string(invalid_count) + " invalid line(s) not imported: fix them and add the "
                       "entries with research.add (the manifest is never rewritten)");
  }
  if (conflict_count > 0) {
    data.set("conflicts", std::move(conflicts));
    warnings.push_back(std::to_string(conflict_count) + " line(s) reuse an id stored with different content; the "
                       "stored entries were kept");
  }
  data.set("lines", next.lines);
  data.set("offset", next.offset);
  const auto partial = std::ssize(rest) - chunk.consumed;
  if (partial > 0) data.set("partialBytes", static_cast<std::int64_t>(partial));
  if (params.flag("dryRun")) data.set("dryRun", true);
  if (rescanned) {
    data.set("rescanned", true);
    warnings.push_back(*relative + " shrank or was replaced since the last sync: read again from the start");
  }
  std::optional<ErrorCode> note;
  if (imported == 0 && invalid_count == 0 && conflict_count == 0) note = ErrorCode::NoChange;
  return Reply{std::move(data), std::move(warnings), {}, note};
}

}  // namespace

void register_research_sync(Registry& registry) {
  registry.add({.domain = "research", .name = "sync", .gateway = Gateway::Mutate,
                .summary = "Import new lines of the manifest file (research.manifestFile)",
                .params = {{.name = "dryRun", .type = ParamType::Bool, .default_json = "false",
                            .description = "Report what would be imported; change nothing", .dry_run = true}},
                .returns = "{file, imported, skipped (ids stored with the same content), ids[], invalid?[{line, "
                           "error, field?}], conflicts?[{line, id}], lines, offset, partialBytes? (a last line still "
                           "being written, left for the next sync), dryRun?, rescanned?}; E_NO_DATA note without a manifest, "
                           "E_NO_CHANGE when nothing is new",
                .errors = {ErrorCode::FileError, ErrorCode::ConfigError},
                .examples = {{R"({})", "import what subagents appended"}},
                .idempotent = true, .tier = 2, .handler = sync});
}

}  // namespace ct
