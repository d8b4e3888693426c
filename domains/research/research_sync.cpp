// research domain — research.sync: the new complete lines of the manifest file subagents append to
// (research.manifestFile), read before the write transaction (at most 16 MiB a sync) and imported
// in it, idempotently.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>

#include "core/file_read.h"
#include "core/text.h"
#include "domains/bind.h"
#include "domains/context.h"
#include "domains/pipeline.h"
#include "domains/registry.h"
#include "domains/research/research_common.h"
#include "engines/project/project.h"
#include "engines/rules/research.h"

namespace ct {
namespace {

using namespace research;

namespace fs = std::filesystem;

/// What one sync reads of the manifest at most: complete lines beyond it wait for the next sync.
constexpr std::int64_t kManifestReadBytes = 16LL << 20;

json::Value cursor_json(const std::optional<ManifestCursor>& cursor) {
  if (!cursor) return json::Value();
  json::Value out = json::Value::object();
  out.set("offset", cursor->offset);
  out.set("lines", cursor->lines);
  out.set("headHash", cursor->head_hash);
  return out;
}

/// research.sync's external step: where the manifest stands (its cursor), and what is new in it,
/// read — with the output files its new lines name hashed — before the transaction, which reads
/// no file (core/file_read.h).
struct SyncArgs {
  bool dry_run = false;
};

Result<Reply> read_manifest(Context& context, const SyncArgs&) {
  const std::string configured = context.config->get_string("research.manifestFile");
  auto relative = project_relative_path(configured, context.project->root, "research.manifestFile");
  auto outside = [&] {
    return fail(Error(ErrorCode::ConfigError, "research.manifestFile '" + configured + "' is outside the project")
                    .with_fix(config_set_fix("research.manifestFile", json::Value(".cleo/agent-outputs/MANIFEST.jsonl"))));
  };
  if (!relative) return outside();
  auto real = project_file(context.project->root, *relative);
  if (!real) return outside();
  json::Value data = json::Value::object();
  data.set("file", *relative);
  std::error_code ec;
  if (fs::status(*real, ec).type() == fs::file_type::not_found) {
    data.set("absent", true);
    return Reply::of(std::move(data));
  }
  auto read = [&](std::int64_t offset, std::int64_t max) -> Result<std::string> {
    auto part = read_regular_file_part(*real, offset, {max, std::chrono::milliseconds(10000)});
    if (!part)
      return fail(Error(ErrorCode::FileError, *relative + " is not a readable file: " + part.error().message)
                      .with_fix("research.manifestFile must name a regular file (one JSON line per entry)")
                      .with_detail("file", *relative));
    return part;
  };
  // Where to continue: the cursor, unless the file shrank or its head changed (rotated or
  // replaced): then from the start, and ids already imported are skipped.
  CT_TRY_ASSIGN(std::string head, read(0, static_cast<std::int64_t>(kManifestHeadBytes)));
  CT_TRY_ASSIGN(std::optional<ManifestCursor> cursor, pipeline::read_in_own_transaction(context, [&] {
                  return context.db().get_manifest_cursor(*relative);
                }));
  std::int64_t start = 0;
  std::int64_t first_line = 1;
  bool rescanned = false;
  if (cursor && cursor->offset > 0) {
    std::error_code size_ec;
    const auto size = static_cast<std::int64_t>(fs::file_size(*real, size_ec));
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
  CT_TRY_ASSIGN(std::string bytes, read(start, kManifestReadBytes));
  std::vector<std::string> files;
  const std::string day = today(context);
  for (const auto& line : split_manifest_lines(bytes, first_line).lines)
    if (auto entry = manifest_line_fields(line.text, context.project->root, day)) files.push_back(entry->file);
  data.set("cursor", cursor_json(cursor));
  data.set("head", std::move(head));
  data.set("bytes", std::move(bytes));
  data.set("start", start);
  data.set("firstLine", first_line);
  if (rescanned) data.set("rescanned", true);
  data.set("files", read_files(context.project->root, files, process_hasher()));
  return Reply::of(std::move(data));
}

/// What the lines of one sync came to.
struct Tally {
  std::int64_t imported = 0, skipped = 0, invalid_count = 0, conflict_count = 0;
  json::Value invalid = json::Value::array();    // {line, error, field?}: the first kListedInReply
  json::Value conflicts = json::Value::array();  // {line, id}
  json::Value ids = json::Value::array();        // of the entries imported
  std::vector<std::string> warnings;
};

/// Each complete line imported as an entry, checked as research.add checks one and its tasks
/// existing; an id stored with the same content is skipped, with other content a conflict (the
/// stored entry is kept).
Result<void> import_lines(Context& context, const ManifestChunk& chunk, ReadFiles& outputs, Tally& tally) {
  const std::string day = today(context);
  for (const auto& line : chunk.lines) {
    if (trim(line.text).empty()) continue;
    std::vector<std::string> line_warnings;
    auto entry = parse_manifest_line(line.text, context.project->root, day, line_warnings, outputs);
    std::optional<Error> problem;
    if (!entry) problem = std::move(entry.error());
    if (!problem) {
      CT_TRY_ASSIGN(std::optional<std::string> missing, missing_task(context, entry->linked_tasks));
      if (missing) problem = task_not_found(*missing);
    }
    if (problem) {
      ++tally.invalid_count;
      if (tally.invalid.size() < kListedInReply) {
        json::Value item = json::Value::object();
        item.set("line", line.number);
        item.set("error", problem->message);
        if (const json::Value* field = problem->details.find("field"); field && field->is_string() &&
                                                                     !field->as_string().empty())
          item.set("field", *field);
        tally.invalid.push_back(std::move(item));
      }
      continue;
    }
    CT_TRY_ASSIGN(std::optional<ResearchEntry> existing, context.db().get_research(entry->id));
    if (existing) {
      if (same_research_content(*existing, *entry)) {
        ++tally.skipped;
      } else {
        ++tally.conflict_count;
        if (tally.conflicts.size() < kListedInReply) {
          json::Value item = json::Value::object();
          item.set("line", line.number);
          item.set("id", entry->id);
          tally.conflicts.push_back(std::move(item));
        }
      }
      continue;
    }
    entry->created_at = entry->updated_at = context.now();
    CT_TRY(context.db().put_research(*entry));
    record(context, std::nullopt, *entry);
    ++tally.imported;
    if (tally.ids.size() < kListedInReply) tally.ids.push_back(entry->id);
    for (auto& warning : line_warnings)
      if (tally.warnings.size() < 20) tally.warnings.push_back("line " + std::to_string(line.number) + ": " + warning);
  }
  return {};
}

/// The cursor after this read: past the lines consumed, with the hash of the file's head as
/// consumed — the bytes before `start` (checked against the stored cursor's hash), then this read.
ManifestCursor next_cursor(const std::string& relative, const json::Value& read, const ManifestChunk& chunk,
                           TimeMs now) {
  const std::string& head = read["head"].as_string();
  const std::int64_t start = read["start"].as_int();
  const std::string_view rest = read["bytes"].as_string();
  ManifestCursor next;
  next.file = relative;
  next.offset = start + chunk.consumed;
  next.lines = read["firstLine"].as_int() - 1 + std::ssize(chunk.lines);
  const std::string consumed_head =
      head.substr(0, std::min(head.size(), static_cast<std::size_t>(start))) + std::string(rest.substr(0, kManifestHeadBytes));
  next.head_hash = manifest_head_hash(std::string_view(consumed_head).substr(
      0, static_cast<std::size_t>(std::min<std::int64_t>(next.offset, kManifestHeadBytes))));
  next.synced_at = now;
  return next;
}

Result<Reply> sync(Context& context, const SyncArgs& args) {
  if (!context.external) return fail(ErrorCode::Internal, "research.sync: the manifest was not read before the transaction");
  const json::Value& read = context.external->data;
  const std::string relative = read["file"].as_string();
  json::Value data = json::Value::object();
  data.set("file", relative);
  if (read["absent"] == json::Value(true)) {
    data.set("imported", 0);
    return Reply::noted(std::move(data), ErrorCode::NoData, {"no manifest yet: subagents create " + relative + " with their first line"});
  }
  // What was read continues from the cursor as it was then: another sync since would be imported twice.
  CT_TRY_ASSIGN(std::optional<ManifestCursor> cursor, context.db().get_manifest_cursor(relative));
  if (cursor_json(cursor) != read["cursor"])
    return fail(Error(ErrorCode::ConcurrentModification,
                      "another research.sync of " + relative + " ran while this one read the file")
                    .with_fix("retry: the next sync continues where that one stopped")
                    .with_detail("file", relative));
  const std::string_view rest = read["bytes"].as_string();
  ManifestChunk chunk = split_manifest_lines(rest, read["firstLine"].as_int());
  ReadFiles outputs(read["files"]);
  Tally tally;
  CT_TRY(import_lines(context, chunk, outputs, tally));
  const ManifestCursor next = next_cursor(relative, read, chunk, context.now());
  const bool moved = !cursor || cursor->offset != next.offset || cursor->lines != next.lines ||
                     cursor->head_hash != next.head_hash;
  if (moved) CT_TRY(context.db().put_manifest_cursor(next));

  std::vector<std::string> warnings = std::move(tally.warnings);
  data.set("imported", tally.imported);
  data.set("skipped", tally.skipped);
  data.set("ids", std::move(tally.ids));
  if (tally.invalid_count > 0) {
    data.set("invalid", std::move(tally.invalid));
    warnings.push_back(std::to_string(tally.invalid_count) + " invalid line(s) not imported: fix them and add the "
                       "entries with research.add (the manifest is never rewritten)");
  }
  if (tally.conflict_count > 0) {
    data.set("conflicts", std::move(tally.conflicts));
    warnings.push_back(std::to_string(tally.conflict_count) + " line(s) reuse an id stored with different content; the "
                       "stored entries were kept");
  }
  data.set("lines", next.lines);
  data.set("offset", next.offset);
  const auto partial = std::ssize(rest) - chunk.consumed;
  if (partial > 0) data.set("partialBytes", static_cast<std::int64_t>(partial));
  if (args.dry_run) data.set("dryRun", true);
  if (read["rescanned"] == json::Value(true)) {
    data.set("rescanned", true);
    warnings.push_back(relative + " shrank or was replaced since the last sync: read again from the start");
  }
  std::optional<ErrorCode> note;
  if (tally.imported == 0 && tally.invalid_count == 0 && tally.conflict_count == 0) note = ErrorCode::NoChange;
  return Reply::noted(std::move(data), note, std::move(warnings));
}

}  // namespace

void register_research_sync(Registry& registry) {
  const auto args = bind(field(&SyncArgs::dry_run, {.name = "dryRun", .type = ParamType::Bool, .default_json = "false",
                                                   .description = "Report what would be imported; change nothing",
                                                   .dry_run = true}));
  registry.add({.domain = "research", .name = "sync", .gateway = Gateway::Mutate,
                .summary = "Import new lines of the manifest file (research.manifestFile)",
                .params = args.specs(),
                .returns = "{file, imported, skipped (ids stored with the same content), ids[], invalid?[{line, "
                           "error, field?}], conflicts?[{line, id}], lines, offset, partialBytes? (a last line still "
                           "being written, left for the next sync), dryRun?, rescanned?}; E_NO_DATA note without a manifest, "
                           "E_NO_CHANGE when nothing is new",
                .errors = {ErrorCode::FileError, ErrorCode::ConfigError, ErrorCode::ConcurrentModification},
                .examples = {{R"({})", "import what subagents appended"}},
                .idempotent = true, .tier = 2, .external = args.handler(read_manifest), .external_checks_only = true,
                .handler = args.handler(sync)});
}

}  // namespace ct
