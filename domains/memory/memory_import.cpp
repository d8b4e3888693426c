// memory domain — memory.import: the Markdown memory.export wrote (a file a team reviewed) read
// back, each entry checked as the operation that makes the same change checks it. The file is read
// and its scope files hashed in the external step; the whole file is judged before anything is
// written. An agent's import takes no attestation and changes nothing people verified; a new or
// changed entry of a kind people govern comes in proposed.
#include <algorithm>

#include "core/file_read.h"
#include "core/text.h"
#include "domains/bind.h"
#include "domains/memory/memory_common.h"
#include "domains/params.h"
#include "domains/registry.h"
#include "engines/project/project.h"

namespace ct::memory {
namespace {

bool same_import(const MemoryEntry& a, const MemoryEntry& b) {
  return a.hash == b.hash && a.status == b.status && a.confidence == b.confidence && a.verified_by == b.verified_by &&
         a.supersedes == b.supersedes && a.superseded_by == b.superseded_by && a.reason == b.reason;
}

/// The largest memory file an import reads.
constexpr ReadLimit kImportFile{8LL << 20, std::chrono::milliseconds(10000)};
/// The most entries one import adds or changes. They are written under the write lock, which
/// other writers wait for at most storage.busyTimeoutMs (5 s by default): 2,000 take a quarter of
/// a second on SQLite (docs/performance.md). A larger file is imported in parts.
constexpr std::size_t kMaxImportChanges = 2000;

/// The entries of the memory file `text`, each checked as the operation that makes the same
/// change checks it (memory.observe's params: kind, title, body, scope; memory.retract's reason),
/// ids in their one spelling (engines/rules/memory.h, from_markdown).
Result<std::vector<MemoryEntry>> checked_entries(Context& context, std::string_view text, const std::string& file) {
  auto parsed = from_markdown(text);
  if (!parsed) return fail(std::move(parsed.error()).with_detail("file", file));
  const OperationSpec* observe = context.registry->find("memory", "observe");
  const OperationSpec* retract = context.registry->find("memory", "retract");
  if (!observe || !retract) return fail(ErrorCode::Internal, "memory.import needs memory.observe and memory.retract");
  for (auto& entry : *parsed) {
    auto named = [&](Error error) {
      error.message = file + ", " + entry.id + ": " + error.message;
      return std::move(error).with_detail("file", file).with_detail("id", entry.id);
    };
    json::Value as_observed = json::Value::object();
    as_observed.set("kind", entry.kind);
    as_observed.set("title", entry.title);
    if (!entry.body.empty()) as_observed.set("body", entry.body);
    if (!entry.files.empty()) as_observed.set("files", json::Value::array_of(entry.files));
    if (!entry.labels.empty()) as_observed.set("labels", json::Value::array_of(entry.labels));
    if (!entry.tasks.empty()) as_observed.set("tasks", json::Value::array_of(entry.tasks));
    if (!entry.epic.empty()) as_observed.set("epic", entry.epic);
    if (auto checked = Params::validate(*observe, as_observed); !checked) return fail(named(std::move(checked.error())));
    if (!entry.reason.empty())
      if (auto checked = Params::check(*retract, "reason", json::Value(entry.reason)); !checked)
        return fail(named(std::move(checked.error())));
    for (auto& path : entry.files) {
      auto normal = normal_scope_path(path);
      if (!normal) return fail(named(std::move(normal.error()).with_detail("field", "files")));
      path = *normal;
    }
    // Who and what it came from: one line of plain text each.
    for (const std::string* field : {&entry.verified_by, &entry.source_agent, &entry.source_session, &entry.source_task})
      if (utf8_length(*field) > 200 || has_control_characters(*field, false))
        return fail(named(Error(ErrorCode::Validation, "a provenance field holds more than 200 characters or a control "
                                                       "character")
                              .with_fix("keep the fields `ct memory export` writes")));
    entry.hash = content_hash(entry);
  }
  return std::move(*parsed);
}

/// memory.import's external step: the file read (at most kImportFile, a regular file inside the
/// project unless a person allowed more), checked, and its entries' scope files hashed — all
/// before the transaction, which then only writes.
struct ImportArgs {
  std::string file;
  bool dry_run = false;
};

Result<Reply> read_import(Context& context, const ImportArgs& args) {
  const std::string& file = args.file;
  auto real = project_file(context.project->root, file, context.may_leave_project());
  if (!real) {
    Error error = std::move(real.error());
    if (error.message.find("outside the project") != std::string::npos) error.fix = Context::let_agents_leave_project();
    return fail(std::move(error).with_detail("file", file));
  }
  auto text = read_regular_file(*real, kImportFile);
  if (!text) {
    Error error = std::move(text.error());
    if (error.code == ErrorCode::NotFound)
      return fail(Error(ErrorCode::NotFound, "cannot read " + file)
                      .with_fix("write it first: ct memory export > " + file)
                      .with_detail("file", file));
    if (error.details["reason"] == json::Value("tooLarge")) error.fix = "split it by kind";
    return fail(std::move(error).with_detail("file", file));
  }
  CT_TRY_ASSIGN(std::vector<MemoryEntry> entries, checked_entries(context, *text, file));
  std::vector<std::string> files;
  for (const auto& entry : entries) files.insert(files.end(), entry.files.begin(), entry.files.end());
  json::Value data = json::Value::object();
  data.set("text", std::move(*text));
  data.set("files", read_scopes(context.work_root(), files));
  return Reply::of(std::move(data));
}

/// What changed between what is stored and what the file says, for the caller's governance:
/// content, status or the entries it replaces.
bool changes_entry(const MemoryEntry& stored, const MemoryEntry& next) {
  return stored.hash != next.hash || stored.status != next.status || stored.supersedes != next.supersedes ||
         stored.superseded_by != next.superseded_by || stored.reason != next.reason;
}

/// What an import would do, judged for the whole file before anything changes.
struct ImportPlan {
  std::vector<std::pair<std::optional<MemoryEntry>, MemoryEntry>> writes;  // stored (none: new), next
  json::Value proposed = json::Value::array();
  std::vector<std::string> attestations;  // verified-by an agent's import did not take
  std::vector<std::string> governed;      // verified entries an agent's import would change
  std::int64_t unchanged = 0;
};

/// What each entry of the file becomes: unchanged, refused (an agent changing what a person
/// verified), proposed (an agent's new or changed entry of a kind people govern), or written.
Result<ImportPlan> plan_import(Context& context, std::vector<MemoryEntry>& entries) {
  const bool person = context.is_person();
  ImportPlan plan;
  for (auto& entry : entries) {
    CT_TRY_ASSIGN(std::optional<MemoryEntry> stored, context.db().get_memory(entry.id));
    if (!person) {
      // An attestation is a person's act (memory.verify): an agent's import does not take one.
      const std::string stored_by = stored ? stored->verified_by : std::string();
      if (entry.verified_by != stored_by) {
        plan.attestations.push_back(entry.id);
        entry.verified_by = stored_by;
        entry.verified_at = stored ? stored->verified_at : std::nullopt;
      }
    }
    if (stored && same_import(*stored, entry)) {
      ++plan.unchanged;
      continue;
    }
    if (!person && stored && !stored->verified_by.empty() && changes_entry(*stored, entry)) {
      plan.governed.push_back(entry.id);
      continue;
    }
    CT_TRY(check_tasks(context, entry.tasks));
    if (!entry.epic.empty()) CT_TRY(check_tasks(context, {entry.epic}));
    // An agent's import changes nothing a person governs: a new or changed entry of such a kind is proposed.
    if (!person && needs_person(context, entry.kind) && entry.status == "active" &&
        (!stored || stored->hash != entry.hash || stored->status != "active")) {
      entry.status = "proposed";
      plan.proposed.push_back(entry.id);
    }
    plan.writes.emplace_back(std::move(stored), std::move(entry));
    if (plan.writes.size() > kMaxImportChanges) break;  // refused after: read no further under the lock
  }
  return plan;
}

/// An import that changes what people verified (for an agent), or more than kMaxImportChanges
/// entries, is refused whole.
Result<void> check_plan(const ImportPlan& plan, const std::string& file, std::size_t entries) {
  if (!plan.governed.empty())
    return fail(Error(ErrorCode::MutationDisabled,
                      file + " changes " + join(plan.governed, ", ") +
                          (plan.governed.size() == 1 ? ", which a person verified" : ", which people verified") +
                          ": an agent's import does not change what people verified")
                    .with_fix("ask a person to run: ct memory import " + file + "; or propose each change with " +
                              call("memory.supersede", {{"id", plan.governed.front()}, {"title", "…"}}))
                    .with_detail("file", file)
                    .with_detail("verified", json::Value::array_of(plan.governed)));
  if (plan.writes.size() > kMaxImportChanges)
    return fail(Error(ErrorCode::Validation, file + " would add or change more than " +
                                                 std::to_string(kMaxImportChanges) + " of its " +
                                                 std::to_string(entries) + " entries; one import writes at most " +
                                                 std::to_string(kMaxImportChanges) +
                                                 " (other writers wait while it holds the store)")
                    .with_fix("split the file (its ## sections by kind, or halves of a section) and import the parts "
                              "one after the other: entries already imported are skipped as unchanged")
                    .with_detail("file", file)
                    .with_detail("entries", static_cast<std::int64_t>(entries))
                    .with_detail("max", static_cast<std::int64_t>(kMaxImportChanges)));
  return {};
}

Result<Reply> import_markdown(Context& context, const ImportArgs& args) {
  const std::string& file = args.file;
  if (!context.external || !context.external->data["text"].is_string())
    return fail(ErrorCode::Internal, "memory.import: the file was not read before the transaction");
  CT_TRY_ASSIGN(std::vector<MemoryEntry> entries, checked_entries(context, context.external->data["text"].as_string(), file));
  // First what each entry becomes, then the writes: the whole file is judged before anything changes.
  CT_TRY_ASSIGN(ImportPlan plan, plan_import(context, entries));
  CT_TRY(check_plan(plan, file, entries.size()));
  std::vector<std::string> warnings;
  json::Value added = json::Value::array();
  json::Value changed = json::Value::array();
  for (auto& [stored, next] : plan.writes) {
    if (stored) {
      next.applied_count = stored->applied_count;
      next.ignored_count = stored->ignored_count;
      next.applied_at = stored->applied_at;
      next.applied_by = stored->applied_by;
      next.created_at = stored->created_at;
      next.anchors = stored->anchors;
    } else if (next.created_at == 0) {
      next.created_at = context.now();
    }
    next.updated_at = context.now();
    if (!stored || stored->hash != next.hash) CT_TRY(anchor(context, next, stored.has_value(), warnings));
    CT_TRY(save(context, stored, next));
    (stored ? changed : added).push_back(next.id);
  }
  if (!plan.attestations.empty())
    warnings.push_back("verified-by of " + join(plan.attestations, ", ") +
                       " not taken: an attestation is a person's (ct memory import " + file + " at a terminal, or ct memory verify)");
  json::Value data = json::Value::object();
  data.set("file", file);
  data.set("added", std::move(added));
  data.set("changed", std::move(changed));
  data.set("unchanged", plan.unchanged);
  if (!plan.proposed.empty()) data.set("proposed", std::move(plan.proposed));
  if (args.dry_run) data.set("dryRun", true);
  std::optional<ErrorCode> note;
  if (data["added"].empty() && data["changed"].empty()) note = ErrorCode::NoChange;
  return Reply::noted(std::move(data), note, std::move(warnings));
}

}  // namespace

void register_memory_import(Registry& registry) {
  const auto args =
      bind(field(&ImportArgs::file, {.name = "file", .type = ParamType::String, .required = true, .max = 500,
                                     .description = "The Markdown file, relative to the project root", .positional = true,
                                     .single_line = true}),
           field(&ImportArgs::dry_run, {.name = "dryRun", .type = ParamType::Bool, .default_json = "false",
                                        .description = "Report what would change; change nothing", .dry_run = true}));
  registry.add({.domain = "memory", .name = "import", .gateway = Gateway::Mutate,
                .summary = "Read memory back from the Markdown memory.export wrote",
                .params = args.specs(),
                .returns = "{file, added[], changed[], unchanged (count), proposed?[], dryRun?}; E_NO_CHANGE note when "
                           "the store already holds the file. Each entry is checked as memory.observe checks one; an "
                           "agent's import takes no verified-by and changes no verified entry (E_MUTATION_DISABLED); at "
                           "most 2,000 entries added or changed per import",
                .errors = {ErrorCode::NotFound, ErrorCode::Validation},
                .examples = {{R"({"file":"docs/memory.md"})", "take in the reviewed file"}},
                .idempotent = true, .tier = 2, .external = args.handler(read_import), .external_checks_only = true,
                .handler = args.handler(import_markdown)});
}

}  // namespace ct::memory
