// memory domain, writes (issue 34): record an entry (near-duplicates are reported, not added),
// change, supersede or retract it, verify it (a person's review of what an agent proposed, and the
// re-anchoring of its files), declare which entries a piece of work applied. memory.import (the
// Markdown of memory.export read back) is memory_import.cpp's. People govern: the kinds memory.verifyKinds names start as proposed
// when an agent records them, and only a person — never the agent that proposed one — verifies it.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <set>

#include "core/text.h"
#include "domains/bind.h"
#include "domains/memory/memory_common.h"
#include "domains/memory/memory_constraints.h"
#include "domains/pipeline.h"
#include "domains/registry.h"

namespace ct {
namespace {

using namespace memory;
namespace fs = std::filesystem;

/// The params of the writes of one entry (observe, update, supersede, verify), each bound to the
/// fields it takes (entry_fields); a scope param not given leaves the entry's as it was.
struct EntryArgs {
  std::string id;
  std::optional<std::string> kind;
  std::optional<std::string> title;
  std::optional<std::string> body;
  std::optional<std::vector<std::string>> files;
  std::optional<std::vector<std::string>> labels;
  std::optional<std::vector<std::string>> tasks;
  std::optional<std::string> epic;
  std::optional<std::string> confidence;  // a Scalar: its text
  std::optional<std::string> task_id;     // the source task
  bool force = false;
  json::Value call;  // the call as given, for observe's fix
};

Result<double> confidence_of(const std::string& text) {
  double number = -1;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (ec != std::errc() || end != text.data() + text.size() || number < 0 || number > 1)
    return fail(Error(ErrorCode::Validation, "confidence must be a number from 0 to 1, not '" + text + "'")
                    .with_fix("pass a number such as 0.8")
                    .with_detail("field", "confidence"));
  return number;
}

/// The scope params into `entry` (only those given): files normalised, tasks and epic checked.
Result<void> read_scope(Context& context, const EntryArgs& args, MemoryEntry& entry) {
  if (args.files) {
    entry.files.clear();
    for (const auto& file : *args.files) {
      CT_TRY_ASSIGN(std::string normal, normal_scope_path(file));
      if (std::find(entry.files.begin(), entry.files.end(), normal) == entry.files.end()) entry.files.push_back(normal);
    }
  }
  if (args.labels) entry.labels = *args.labels;
  if (args.tasks) {
    entry.tasks = *args.tasks;
    CT_TRY(check_tasks(context, entry.tasks));
  }
  if (args.epic) {
    CT_TRY(check_tasks(context, {*args.epic}));
    entry.epic = *args.epic;
  }
  if (args.confidence) {
    CT_TRY_ASSIGN(entry.confidence, confidence_of(*args.confidence));
  }
  return {};
}

/// Entries that say nearly what `entry` says: active or proposed ones sharing its words, with how
/// much (memory::similarity), the most similar first.
Result<std::vector<std::pair<double, MemoryEntry>>> similar_entries(Context& context, const MemoryEntry& entry) {
  // A near-duplicate shares most words, so it shares the rarest ones: read the entries of the six
  // rarest words the store holds, and compare the ones that hold at least half of them.
  std::vector<std::string> keys;
  for (auto& word : words(entry.title + " " + entry.body)) {
    if (keys.size() >= 40) break;
    keys.push_back("w:" + word);
  }
  CT_TRY_ASSIGN(auto counts, context.db().memory_term_counts(keys));
  std::vector<std::pair<std::int64_t, std::string>> rarest;
  for (const auto& [key, count] : counts)
    if (count > 0) rarest.emplace_back(count, key);
  std::sort(rarest.begin(), rarest.end());
  if (rarest.size() > 6) rarest.resize(6);
  std::vector<MemoryKeyRange> ranges;
  for (const auto& [count, key] : rarest) ranges.push_back({key, key + " "});
  CT_TRY_ASSIGN(auto hits, context.db().memory_numbers(ranges, 500));
  std::map<std::int64_t, int> shared;
  for (const auto& numbers : hits)
    for (std::int64_t number : numbers) ++shared[number];
  std::vector<std::pair<int, std::int64_t>> order;
  const int needed = std::max<int>(1, static_cast<int>(rarest.size() + 1) / 2);
  for (const auto& [number, count] : shared)
    if (count >= needed) order.emplace_back(count, number);
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first > b.first || (a.first == b.first && a.second < b.second); });
  if (order.size() > 10) order.resize(10);
  std::vector<std::int64_t> numbers;
  for (const auto& [count, number] : order) numbers.push_back(number);
  CT_TRY_ASSIGN(std::vector<MemoryEntry> candidates, context.db().get_memories(numbers));
  std::vector<std::pair<double, MemoryEntry>> out;
  for (auto& candidate : candidates) {
    if (candidate.id == entry.id || (candidate.status != "active" && candidate.status != "proposed")) continue;
    const double score = similarity(entry, candidate);
    if (score >= kNearDuplicate || candidate.hash == entry.hash) out.emplace_back(score, std::move(candidate));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  return out;
}

json::Value written_json(const MemoryEntry& entry) {
  json::Value out = json::Value::object();
  out.set("id", entry.id);
  out.set("kind", entry.kind);
  out.set("title", entry.title);
  out.set("status", entry.status);
  out.set("hash", entry.hash);
  std::int64_t files = 0;
  for (const auto& anchor : entry.anchors) files += anchor.file.empty() ? 0 : 1;
  if (files > 0) out.set("anchoredFiles", files);
  if (!entry.supersedes.empty()) out.set("supersedes", entry.supersedes);
  return out;
}


/// Refuses an agent where a person must act on an entry of a kind people govern.
Result<void> person_only(Context& context, const MemoryEntry& entry, std::string_view action, std::string_view cli) {
  if (context.is_person() || !needs_person(context, entry.kind)) return {};
  return fail(Error(ErrorCode::MutationDisabled, "a " + entry.kind + " is governed by people (memory.verifyKinds): an agent may not " +
                                                     std::string(action) + " " + entry.id)
                  .with_fix("ask a person to run: " + std::string(cli))
                  .with_detail("id", entry.id)
                  .with_detail("kind", entry.kind));
}

Result<Reply> observe(Context& context, const EntryArgs& args) {
  MemoryEntry entry;
  entry.kind = args.kind.value_or("");
  entry.title = std::string(trim(args.title.value_or("")));
  entry.body = normalized_body(args.body.value_or(""));
  CT_TRY(read_scope(context, args, entry));
  CT_TRY_ASSIGN(entry.source_task, source_task(context, args.task_id));
  CT_TRY_ASSIGN(entry.source_agent, who(context));
  entry.source_session = context.session;
  entry.hash = content_hash(entry);
  CT_TRY_ASSIGN(auto similar, similar_entries(context, entry));
  for (const auto& [score, other] : similar)
    if (other.hash == entry.hash) return Reply::noted(written_json(other), ErrorCode::AlreadyExists);
  if (!similar.empty() && !args.force) {
    const MemoryEntry& best = similar.front().second;
    json::Value rows = json::Value::array();
    for (const auto& [score, other] : similar) {
      json::Value row = json::Value::object();
      row.set("id", other.id);
      row.set("title", other.title);
      row.set("similarity", std::round(score * 100) / 100);
      rows.push_back(std::move(row));
    }
    json::Value again = args.call;
    again.set("force", true);
    return fail(Error(ErrorCode::AlreadyExists, best.id + " already says nearly the same: \"" + best.title + "\"")
                    .with_fix(Advice("add to it: ") + call("memory.update", {{"id", best.id}, {"body", "…"}}) +
                              Advice("; or record yours anyway: ") + call("memory.observe", std::move(again.as_object())))
                    .with_detail("similar", std::move(rows)));
  }
  std::vector<std::string> warnings;
  CT_TRY_ASSIGN(MemoryEntry added, add_entry(context, std::move(entry), warnings));
  if (context.audit) context.audit->task_id = added.id;
  return Reply::warned(written_json(added), std::move(warnings));
}

Result<void> check_open(const MemoryEntry& entry) {
  if (entry.status != "retracted" && entry.status != "superseded") return {};
  return fail(Error(ErrorCode::Validation, entry.id + " is " + entry.status + "; it is kept as a record and not changed")
                  .with_fix(entry.superseded_by.empty() ? call("memory.observe", {{"kind", entry.kind}, {"title", "…"}})
                                                        : call("memory.show", {{"id", entry.superseded_by}}))
                  .with_detail("id", entry.id)
                  .with_detail("status", entry.status));
}

/// An agent's change of what a person verified: the verified entry stays served, and the change
/// becomes a proposed entry that replaces it once a person verifies it (as memory.supersede does).
/// A revision already pending for it (proposed, unverified) is changed instead of adding another.
Result<Reply> propose_revision(Context& context, const EntryArgs& args, MemoryEntry verified, MemoryEntry changed) {
  std::vector<std::string> warnings;
  if (!verified.superseded_by.empty()) {
    CT_TRY_ASSIGN(std::optional<MemoryEntry> pending, context.db().get_memory(verified.superseded_by));
    if (pending && pending->status == "proposed") {
      if (pending->hash == changed.hash) return Reply::noted(written_json(*pending), ErrorCode::AlreadyExists);
      const MemoryEntry before = *pending;
      pending->kind = changed.kind;
      pending->title = changed.title;
      pending->body = changed.body;
      pending->files = changed.files;
      pending->labels = changed.labels;
      pending->tasks = changed.tasks;
      pending->epic = changed.epic;
      pending->confidence = changed.confidence;
      pending->hash = content_hash(*pending);
      CT_TRY(anchor(context, *pending, true, warnings));
      pending->updated_at = context.now();
      CT_TRY(save(context, before, *pending));
      warnings.push_back(verified.id + " was verified by a person and stays served: your change is in " + pending->id +
                         ", its proposed revision, until a person verifies it (ct memory verify " + pending->id + ")");
      return Reply::warned(written_json(*pending), std::move(warnings));
    }
  }
  MemoryEntry revision = std::move(changed);
  revision.id.clear();
  revision.status = "proposed";
  revision.verified_by.clear();
  revision.verified_at.reset();
  revision.reason.clear();
  revision.superseded_by.clear();
  revision.supersedes = verified.id;
  revision.anchors.clear();
  revision.applied_count = revision.ignored_count = 0;
  revision.applied_at.reset();
  revision.applied_by.clear();
  CT_TRY_ASSIGN(revision.source_task, source_task(context, args.task_id));
  CT_TRY_ASSIGN(revision.source_agent, who(context));
  revision.source_session = context.session;
  std::vector<std::string> ignored;
  CT_TRY_ASSIGN(MemoryEntry added, add_entry(context, std::move(revision), ignored));
  for (auto& warning : ignored)
    if (warning.find(" is proposed: ") == std::string::npos) warnings.push_back(std::move(warning));
  const MemoryEntry before = verified;
  verified.superseded_by = added.id;
  verified.updated_at = context.now();
  CT_TRY(save(context, before, verified));
  warnings.push_back(verified.id + " was verified by a person and stays served: your change is proposed as " + added.id +
                     ", which replaces it once a person verifies it (ct memory verify " + added.id + ")");
  json::Value data = written_json(added);
  return Reply::warned(std::move(data), std::move(warnings));
}

Result<Reply> update(Context& context, const EntryArgs& args) {
  CT_TRY_ASSIGN(MemoryEntry entry, load(context, args.id));
  CT_TRY(check_open(entry));
  const MemoryEntry before = entry;
  if (args.kind) entry.kind = *args.kind;
  if (args.title) entry.title = std::string(trim(*args.title));
  if (args.body) entry.body = normalized_body(*args.body);
  CT_TRY(read_scope(context, args, entry));
  entry.hash = content_hash(entry);
  if (entry.hash == before.hash && entry.confidence == before.confidence)
    return Reply::noted(written_json(entry), ErrorCode::NoChange);
  std::vector<std::string> warnings;
  const bool agent = !context.is_person();
  if (agent && !before.verified_by.empty() && entry.hash != before.hash) {
    // What a person verified is not rewritten by an agent: a governed kind's change waits for a
    // person as a revision; another kind's verification was of the old text and does not carry over.
    if (needs_person(context, before.kind) || needs_person(context, entry.kind))
      return propose_revision(context, args, before, std::move(entry));
    warnings.push_back(entry.id + " was verified by " + before.verified_by + " as it read before: the changed text is unverified");
    entry.verified_by.clear();
    entry.verified_at.reset();
  }
  CT_TRY(anchor(context, entry, true, warnings));
  // An agent's change of a governed kind waits for a person again.
  if (entry.hash != before.hash && needs_person(context, entry.kind) && agent && entry.status == "active") {
    entry.status = "proposed";
    warnings.push_back(entry.id + " is proposed again: a changed " + entry.kind +
                       " is served once a person verifies it (ct memory verify " + entry.id + ")");
  }
  entry.updated_at = context.now();
  CT_TRY(save(context, before, entry));
  return Reply::warned(written_json(entry), std::move(warnings));
}

Result<Reply> supersede(Context& context, const EntryArgs& args) {
  CT_TRY_ASSIGN(MemoryEntry old, load(context, args.id));
  CT_TRY(check_open(old));
  MemoryEntry entry;
  entry.kind = args.kind.value_or(old.kind);
  entry.title = std::string(trim(args.title.value_or("")));
  entry.body = normalized_body(args.body.value_or(""));
  entry.files = old.files;
  entry.labels = old.labels;
  entry.tasks = old.tasks;
  entry.epic = old.epic;
  entry.confidence = old.confidence;
  CT_TRY(read_scope(context, args, entry));
  CT_TRY_ASSIGN(entry.source_task, source_task(context, args.task_id));
  CT_TRY_ASSIGN(entry.source_agent, who(context));
  entry.source_session = context.session;
  entry.supersedes = old.id;
  std::vector<std::string> warnings;
  CT_TRY_ASSIGN(MemoryEntry added, add_entry(context, std::move(entry), warnings));
  const MemoryEntry before = old;
  old.superseded_by = added.id;
  // A proposed replacement leaves the old entry served until a person verifies the new one.
  if (added.status == "active") old.status = "superseded";
  else warnings.push_back(old.id + " stays active until " + added.id + " is verified");
  old.updated_at = context.now();
  CT_TRY(save(context, before, old));
  return Reply::warned(written_json(added), std::move(warnings));
}

struct RetractArgs {
  std::string id;
  std::string reason;
};

Result<Reply> retract(Context& context, const RetractArgs& args) {
  CT_TRY_ASSIGN(MemoryEntry entry, load(context, args.id));
  if (entry.status == "retracted") return Reply::noted(written_json(entry), ErrorCode::NoChange);
  if (!entry.verified_by.empty() && !context.is_person())
    return fail(Error(ErrorCode::MutationDisabled, entry.id + " was verified by " + entry.verified_by +
                                                       ": an agent does not retract what a person verified")
                    .with_fix("ask a person to run: ct memory retract " + entry.id + " --reason \"…\"; or propose a "
                              "correction: " + call("memory.supersede", {{"id", entry.id}, {"title", "…"}}))
                    .with_detail("id", entry.id)
                    .with_detail("verifiedBy", entry.verified_by));
  const MemoryEntry before = entry;
  entry.status = "retracted";
  entry.reason = args.reason;
  entry.updated_at = context.now();
  CT_TRY(save(context, before, entry));
  return Reply::of(written_json(entry));
}

Result<Reply> verify(Context& context, const EntryArgs& args) {
  CT_TRY_ASSIGN(MemoryEntry entry, load(context, args.id));
  CT_TRY(check_open(entry));
  CT_TRY(person_only(context, entry, "verify", "ct memory verify " + entry.id));
  CT_TRY_ASSIGN(std::string name, who(context));
  if (entry.status == "proposed") {
    const bool same_agent = !entry.source_agent.empty() && entry.source_agent == name && !context.is_person();
    const bool same_session = !entry.source_session.empty() && entry.source_session == context.session;
    if (same_agent || same_session)
      return fail(Error(ErrorCode::MutationDisabled, entry.id + " was proposed by " +
                                                         (same_agent ? entry.source_agent : "session " + entry.source_session) +
                                                         ": whoever proposed an entry does not verify it")
                      .with_fix("ask another person to run: ct memory verify " + entry.id)
                      .with_detail("id", entry.id)
                      .with_detail("proposedBy", entry.source_agent));
  }
  const MemoryEntry before = entry;
  std::vector<std::string> warnings;
  CT_TRY(anchor(context, entry, false, warnings));
  entry.status = "active";
  entry.verified_by = name;
  entry.verified_at = entry.updated_at = context.now();
  CT_TRY(save(context, before, entry));
  // A verified replacement takes over from the entry it supersedes.
  if (!entry.supersedes.empty()) {
    CT_TRY_ASSIGN(std::optional<MemoryEntry> old, context.db().get_memory(entry.supersedes));
    if (old && old->status == "active" && old->superseded_by == entry.id) {
      const MemoryEntry old_before = *old;
      old->status = "superseded";
      old->updated_at = context.now();
      CT_TRY(save(context, old_before, *old));
    }
  }
  json::Value data = written_json(entry);
  data.set("verifiedBy", entry.verified_by);
  return Reply::warned(std::move(data), std::move(warnings));
}

/// The entries an applied declaration may name for `task`: those memory serves for it (what its
/// prompt and briefing showed), else the newest active ones; for the refusal of an unknown id.
Result<std::vector<std::string>> valid_for(Context& context, const std::string& task) {
  std::vector<std::string> out;
  if (!task.empty()) {
    CT_TRY_ASSIGN(std::vector<Found> found, for_task(context, task));
    for (const auto& item : found) out.push_back(item.entry.id);
  }
  return out;
}

struct AppliedArgs {
  std::vector<std::string> ids;
  std::vector<std::string> ignored;
  std::optional<std::string> task_id;
  json::Value call;  // the call as given, for the fix of an unknown id
};

Result<Reply> applied(Context& context, const AppliedArgs& args) {
  CT_TRY_ASSIGN(std::string task, source_task(context, args.task_id));
  CT_TRY_ASSIGN(std::string name, who(context));
  // The host's own session id, carried on every attestation (memory_constraints.h).
  CT_TRY_ASSIGN(const std::string host, caller_host_session(context));
  // Ids as the store spells them: M1 is M001, named once; a constraint keeps its part ("M1#Steps").
  auto canonical = [](std::vector<std::string> ids) {
    for (auto& id : ids) {
      ConstraintRef ref = split_constraint_ref(id);
      if (auto number = memory_number(ref.entry)) id = memory_id(*number) + (ref.constraint ? kConstraintSeparator + *ref.constraint : "");
    }
    return ids;
  };
  std::set<std::pair<std::string, bool>> counted;  // an entry is counted once per call, however many constraints
  std::vector<std::string> used = canonical(args.ids);
  std::vector<std::string> ignored = canonical(args.ignored);
  std::set<std::string> seen;
  for (const auto& id : used)
    if (!seen.insert(id).second)
      return fail(Error(ErrorCode::Validation, id + " is named twice").with_fix("name each entry once").with_detail("id", id));
  for (const auto& id : ignored)
    if (!seen.insert(id).second)
      return fail(Error(ErrorCode::Validation, id + " is both applied and ignored")
                      .with_fix("name it in ids or in ignored, not both")
                      .with_detail("id", id));
  auto declare = [&](const std::string& given, bool was_applied) -> Result<void> {
    const ConstraintRef ref = split_constraint_ref(given);
    const std::string& id = ref.entry;
    if (id.starts_with(kSkillPrefix)) {
      // A skill's constraint (skills.show lists them): its body was read by the external step.
      const std::string skill = id.substr(kSkillPrefix.size());
      const json::Value* read = context.external ? context.external->data.find("skills") : nullptr;
      const json::Value* body = read ? read->find(skill) : nullptr;
      if (!body || !body->is_string()) {
        std::vector<std::string> names;
        if (const json::Value* all = context.external ? context.external->data.find("names") : nullptr; all && all->is_array())
          for (const auto& one : all->as_array()) names.push_back(one.as_string());
        return fail(Error(ErrorCode::NotFound, "no skill named '" + skill + "'")
                        .with_fix(call("skills.list"))
                        .with_detail("id", id)
                        .with_choices(skill, names));
      }
      std::string constraint;
      if (ref.constraint) {
        CT_TRY_ASSIGN(Constraint found, constraint_of(id, body->as_string(), *ref.constraint, given, args.call));
        constraint = found.id;
      }
      CT_TRY(context.db().add_memory_usage({id, context.now(), was_applied, name, context.session, task, constraint, host, false}));
      context.record(FieldChange{"", given + (was_applied ? ".applied" : ".ignored"), json::Value(),
                                 host.empty() ? json::Value(true) : json::Value(host)});
      return {};
    }
    auto entry = load(context, id);
    if (!entry) {
      // Say what would have been valid: the entries served for this work.
      CT_TRY_ASSIGN(std::vector<std::string> valid, valid_for(context, task));
      Error error = std::move(entry.error());
      error.message += valid.empty() ? std::string(task.empty() ? "" : "; memory serves no entry for " + task)
                                     : "; the entries served for " + task + ": " + join(valid, ", ");
      error = std::move(error).with_detail("validIds", json::Value::array_of(valid));
      if (!valid.empty()) {
        json::Value again = args.call;
        std::vector<std::string> fixed = used;
        std::erase_if(fixed, [&](const std::string& other) { return other == id; });
        if (std::find(fixed.begin(), fixed.end(), valid.front()) == fixed.end()) fixed.push_back(valid.front());
        again.set("ids", json::Value::array_of(fixed));
        again.erase("ignored");
        error.fix = call("memory.applied", std::move(again.as_object()));
      }
      return fail(std::move(error));
    }
    std::string constraint;
    if (ref.constraint) {
      CT_TRY_ASSIGN(Constraint found, constraint_of(entry->id, entry->body, *ref.constraint, given, args.call));
      constraint = found.id;
    }
    const bool count = counted.insert({entry->id, was_applied}).second;
    CT_TRY(context.db().add_memory_usage(
        {entry->id, context.now(), was_applied, name, context.session, task, constraint, host, count}));
    if (count)
      context.record(FieldChange{"", "memory." + entry->id + (was_applied ? ".applied" : ".ignored"),
                                 json::Value(was_applied ? entry->applied_count : entry->ignored_count),
                                 json::Value((was_applied ? entry->applied_count : entry->ignored_count) + 1)});
    // The constraint attested, with the host's session id when one is bound, in the trail.
    if (!constraint.empty())
      context.record(FieldChange{"", "memory." + given + (was_applied ? ".applied" : ".ignored"), json::Value(),
                                 host.empty() ? json::Value(true) : json::Value(host)});
    return {};
  };
  for (const auto& id : used) CT_TRY(declare(id, true));
  for (const auto& id : ignored) CT_TRY(declare(id, false));
  json::Value data = json::Value::object();
  data.set("applied", json::Value::array_of(used));
  if (!ignored.empty()) data.set("ignored", json::Value::array_of(ignored));
  if (!task.empty()) data.set("taskId", task);
  if (context.audit && !task.empty()) context.audit->task_id = task;
  return Reply::of(std::move(data));
}

/// The scope files a write of one entry anchors, for its external step: those the call names,
/// else the stored entry's (read in a transaction of its own).
Result<std::vector<std::string>> files_to_anchor(Context& context, const EntryArgs& args, bool stored_too) {
  std::vector<std::string> files;
  if (args.files) {
    for (const auto& file : *args.files)
      if (auto normal = normal_scope_path(file)) files.push_back(*normal);
    return files;
  }
  if (stored_too && !args.id.empty()) {
    CT_TRY_ASSIGN(std::optional<MemoryEntry> stored, pipeline::read_in_own_transaction(context, [&] {
                    return context.db().get_memory(args.id);
                  }));
    if (stored) files = stored->files;
  }
  return files;
}

Result<Reply> hash_named_files(Context& context, const EntryArgs& args) {
  CT_TRY_ASSIGN(std::vector<std::string> files, files_to_anchor(context, args, false));
  return hash_scope_files(context, files);
}

Result<Reply> hash_entry_files(Context& context, const EntryArgs& args) {
  CT_TRY_ASSIGN(std::vector<std::string> files, files_to_anchor(context, args, true));
  return hash_scope_files(context, files);
}

/// The scope params, each into its EntryArgs member: observe, update and supersede take them all.
void add_scope_fields(std::vector<Field<EntryArgs>>& fields) {
  fields.push_back(field(&EntryArgs::files, {.name = "files", .type = ParamType::Array, .max = 50, .item_max = 300,
                                             .description = "Scope: files, symbols (a.cpp#Class::fn), folders (src/store/) or "
                                                            "globs (src/**/*.cpp); checksummed"}));
  fields.push_back(field(&EntryArgs::labels, {.name = "labels", .type = ParamType::Array, .max = 20, .item_max = 60,
                                              .description = "Scope: labels"}));
  fields.push_back(field(&EntryArgs::tasks, {.name = "tasks", .type = ParamType::Array, .max = 20,
                                             .item_type = ParamType::TaskId, .description = "Scope: tasks"}));
  fields.push_back(field(&EntryArgs::epic, {.name = "epic", .type = ParamType::TaskId, .description = "Scope: an epic"}));
  fields.push_back(field(&EntryArgs::confidence,
                         {.name = "confidence", .type = ParamType::Scalar, .max = 20, .description = "How sure, 0 to 1"}));
}

Field<EntryArgs> title_field(bool required) {
  return field(&EntryArgs::title, {.name = "title", .type = ParamType::String, .required = required, .min = 3, .max = 200,
                                   .description = "What it says, in one line", .single_line = true});
}

Field<EntryArgs> body_field() {
  return field(&EntryArgs::body,
               {.name = "body", .type = ParamType::String, .max = 4000, .description = "The detail: why, where, how"});
}

Field<EntryArgs> source_field() {
  return field(&EntryArgs::task_id, {.name = "taskId", .type = ParamType::TaskId,
                                     .description = "The task it was learned in (default: the session's focus)"});
}

/// The fields of a write of one entry: `head` (id, kind, title, body), the scope, then `tail`.
Binding<EntryArgs> entry_fields(std::vector<Field<EntryArgs>> head, std::vector<Field<EntryArgs>> tail = {}) {
  add_scope_fields(head);
  for (auto& more : tail) head.push_back(std::move(more));
  return Binding<EntryArgs>(std::move(head));
}

Field<EntryArgs> entry_id_field() { return field(&EntryArgs::id, memory_id_param()); }


void register_observe(Registry& registry) {
  const auto observe_args = entry_fields(
      {field(&EntryArgs::kind, {.name = "kind", .type = ParamType::Enum, .required = true, .choices = kind_choices(),
                                .description = "decision, convention, learning, risk, pattern or observation"}),
       title_field(true), body_field()},
      {source_field(),
       field(&EntryArgs::force,
             {.name = "force", .type = ParamType::Bool, .description = "Record it even when an entry says nearly the same"}),
       call_params(&EntryArgs::call)});
  registry.add({.domain = "memory", .name = "observe", .gateway = Gateway::Mutate,
                .summary = "Keep a decision, convention or learning",
                .params = observe_args.specs(),
                .returns = "{id, kind, title, status (active|proposed), hash, anchoredFiles?}; E_ALREADY_EXISTS note when "
                           "the same entry is stored; warnings for scope files that do not exist",
                .errors = {ErrorCode::AlreadyExists, ErrorCode::NotFound, ErrorCode::Validation},
                .examples = {{R"({"kind":"learning","title":"The store tests need CLEO_TEST_MODE=1",)"
                              R"("body":"Without it the contract checks stay off","files":["tests/unit/"]})",
                              "record a learning about a folder"}},
                .tier = 1, .aliases = {"add", "remember", "record"}, .external = observe_args.handler(hash_named_files),
                .external_checks_only = true, .handler = observe_args.handler(observe)});
}

void register_applied(Registry& registry) {
  const auto applied_args = bind(
      field(&AppliedArgs::ids, {.name = "ids", .type = ParamType::Array, .required = true, .min = 1, .max = 50,
                                .pattern = kRefPattern, .item_max = 200,
                                .description = "Entries, or constraints as find and skills.show return them (M012#Steps/2), the work followed"}),
      field(&AppliedArgs::ignored, {.name = "ignored", .type = ParamType::Array, .max = 50, .pattern = kRefPattern,
                                    .item_max = 200, .description = "Entries or constraints served that did not apply"}),
      field(&AppliedArgs::task_id,
            {.name = "taskId", .type = ParamType::TaskId, .description = "The work (default: the session's focus)"}),
      call_params(&AppliedArgs::call));
  registry.add({.domain = "memory", .name = "applied", .gateway = Gateway::Mutate,
                .summary = "Say which entries or constraints you applied",
                .params = applied_args.specs(),
                .returns = "{applied[], ignored?[], taskId?}; E_CONSTRAINT_UNKNOWN (retryable) with "
                           "details.validConstraints[{id,name,text}] for a constraint the entry does not have",
                .errors = {ErrorCode::NotFound, ErrorCode::Validation, ErrorCode::ConstraintUnknown},
                .examples = {{R"({"ids":["M001"],"taskId":"T001"})", "T001's work followed M001"},
                             {R"({"ids":["M002#Steps/2"]})", "the work followed the second step of M002"}},
                .tier = 1, .aliases = {"used", "apply"},
                .external = applied_args.handler([](Context& context, const AppliedArgs& args) {
                  std::vector<std::string> refs = args.ids;
                  refs.insert(refs.end(), args.ignored.begin(), args.ignored.end());
                  return read_named_skills(context, refs);
                }),
                .external_checks_only = true, .handler = applied_args.handler(applied)});
}

void register_update(Registry& registry) {
  const auto update_args = entry_fields(
      {entry_id_field(),
       field(&EntryArgs::kind, {.name = "kind", .type = ParamType::Enum, .choices = kind_choices(), .description = "New kind"}),
       title_field(false), body_field()});
  registry.add({.domain = "memory", .name = "update", .gateway = Gateway::Mutate,
                .summary = "Change an entry; an agent's change of a governed kind awaits review",
                .params = update_args.specs(),
                .returns = "{id, kind, title, status, hash, anchoredFiles?, supersedes?}; E_NO_CHANGE note when nothing "
                           "changed. An agent's change of what a person verified is a proposed revision (its own id, "
                           "supersedes the entry), the verified text served until a person verifies it",
                .errors = {ErrorCode::NotFound, ErrorCode::Validation},
                .examples = {{R"({"id":"M001","body":"Also under CI"})", "add to M001"}},
                .idempotent = true, .tier = 2, .external = update_args.handler(hash_entry_files),
                .external_checks_only = true, .handler = update_args.handler(update)});
}

void register_supersede(Registry& registry) {
  const auto supersede_args = entry_fields({entry_id_field(),
                                            field(&EntryArgs::kind, {.name = "kind", .type = ParamType::Enum,
                                                                     .choices = kind_choices(),
                                                                     .description = "Kind of the new entry (default the old one's)"}),
                                            title_field(true), body_field()},
                                           {source_field()});
  registry.add({.domain = "memory", .name = "supersede", .gateway = Gateway::Mutate,
                .summary = "Replace an entry with a new one (scope kept unless given)",
                .params = supersede_args.specs(),
                .returns = "{id (the new entry), kind, title, status, hash, supersedes}",
                .errors = {ErrorCode::NotFound, ErrorCode::Validation},
                .examples = {{R"({"id":"M001","title":"Tests need CLEO_TEST_MODE=1 and a temp HOME"})", "M001, corrected"}},
                .tier = 2, .external = supersede_args.handler(hash_entry_files), .external_checks_only = true,
                // Replacing an entry changes it (it is superseded): approval.required's
                // "memory.update:verified" holds for it as for memory.update.
                .effects = [](Context&, const Params&, const std::vector<std::string>& subjects)
                    -> Result<std::vector<Effect>> {
                  std::vector<Effect> out;
                  for (const auto& id : subjects) out.push_back({"memory.update", id, {}});
                  return out;
                },
                .handler = supersede_args.handler(supersede)});
}

void register_retract(Registry& registry) {
  const auto retract_args =
      bind(field(&RetractArgs::id, memory_id_param()),
           field(&RetractArgs::reason, {.name = "reason", .type = ParamType::String, .required = true, .min = 3, .max = 500,
                                        .description = "Why it no longer holds"}));
  registry.add({.domain = "memory", .name = "retract", .gateway = Gateway::Mutate,
                .summary = "Withdraw an entry that was wrong, with the reason",
                .params = retract_args.specs(),
                .returns = "{id, kind, title, status:'retracted', hash}; E_NO_CHANGE note when already retracted",
                .errors = {ErrorCode::NotFound, ErrorCode::MutationDisabled},
                .examples = {{R"({"id":"M001","reason":"the flag was removed in v2"})", "withdraw M001"}},
                .idempotent = true, .tier = 2, .dashboard = true, .handler = retract_args.handler(retract)});
}

void register_verify(Registry& registry) {
  // verify takes the id alone; its external step re-anchors the stored entry's files.
  const auto verify_args = bind(entry_id_field());
  registry.add({.domain = "memory", .name = "verify", .gateway = Gateway::Mutate,
                .summary = "Verify an entry after review: serve a proposed one, re-anchor files",
                .params = verify_args.specs(),
                .returns = "{id, kind, title, status:'active', hash, verifiedBy, anchoredFiles?}",
                .errors = {ErrorCode::NotFound, ErrorCode::Validation, ErrorCode::MutationDisabled},
                .examples = {{R"({"id":"M001"})", "M001 was reviewed and holds"}},
                .tier = 2, .dashboard = true, .external = verify_args.handler(hash_entry_files), .external_checks_only = true,
                .handler = verify_args.handler(verify)});
}

}  // namespace

void register_memory_mutations(Registry& registry) {
  register_observe(registry);
  register_applied(registry);
  register_update(registry);
  register_supersede(registry);
  register_retract(registry);
  register_verify(registry);
}

}  // namespace ct
