// issues.sync and issues.sync.status (issue 55): a team's tracker kept in step with the tasks.
// The rules (mapping, the 3-way merge per field) are engines/rules/tracker_sync.h; the tracker is
// engines/adapters/tracker.h (GitHub, or a plug-in). The work is the operation's external step, so
// no network call is made inside a store transaction: each page is fetched first, then written in
// one short write transaction of its own (its tasks, links, the cursor after it and an audit row),
// so a sync killed mid-way resumes after the last page it kept, and items are matched by their
// external id, so nothing is made twice. Pushes go out one item at a time, each followed by a short
// write of what was agreed. docs/sync.md says what maps to what and why.
#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <span>

#include "core/progress.h"
#include "core/stored_text.h"
#include "core/text.h"
#include "domains/bind.h"
#include "domains/context.h"
#include "domains/registry.h"
#include "engines/adapters/tracker.h"
#include "engines/rules/task_engine.h"
#include "engines/rules/tracker_sync.h"
#include "engines/store/store.h"

namespace ct {
namespace {

namespace ts = tracker_sync;

struct SyncArgs {
  std::string tracker;
  std::string repo;
  std::optional<bool> dry_run;
  bool push = true;
  bool pull_requests = false;
  std::string resolve;  // a task whose conflict is resolved
  std::string take;     // here | there
  std::string field;    // one field of it ("" = every field in conflict)
  std::string push_new; // an epic whose new children are created in the tracker from now on
};

struct StatusArgs {
  std::string tracker;
  std::string repo;
};

/// The tracker a call names and where it is.
struct Target {
  std::string tracker;
  std::string repository;
  json::Value settings = json::Value::object();  // trackers.<name> from config
};

Result<Target> target_of(Context& context, std::string_view tracker, std::string_view repo) {
  Target out;
  out.tracker = tracker.empty() ? "github" : std::string(tracker);
  const json::Value& trackers = context.config->get("trackers");
  if (const auto* settings = trackers.is_object() ? trackers.find(out.tracker) : nullptr; settings && settings->is_object())
    out.settings = *settings;
  else if (out.tracker != "github") {
    std::vector<std::string> known = {"github"};
    if (trackers.is_object())
      for (const auto& [name, _] : trackers.as_object()) known.push_back(name);
    return fail(Error(ErrorCode::Validation, "no tracker named " + out.tracker + " is configured")
                    .with_fix("a person declares it: ct config set trackers." + out.tracker +
                              " '{\"command\":[\"program\"],\"repository\":\"owner/name\"}'")
                    .with_choices(out.tracker, known));
  }
  out.repository = repo.empty() ? out.settings["repository"].string_or_empty() : std::string(repo);
  if (out.repository.empty())
    return fail(Error(ErrorCode::Validation, "which repository? pass repo (OWNER/NAME)")
                    .with_fix("pass repo, or a person sets trackers." + out.tracker + ".repository")
                    .with_detail("field", "repo"));
  return out;
}

Result<std::unique_ptr<tracker::Tracker>> open_tracker(Context& context, const Target& target) {
  tracker::Settings settings;
  settings.repository = target.repository;
  settings.api_url = target.settings["apiUrl"].string_or_empty();
  settings.root = context.root();
  settings.options = target.settings;
  settings.progress = [](std::string_view message) { report_progress(message); };
  const json::Value& command = target.settings["command"];
  if (command.is_array()) {
    std::vector<std::string> argv;
    for (const auto& part : command.as_array())
      if (part.is_string()) argv.push_back(part.as_string());
    return tracker::open_plugin_tracker(target.tracker, std::move(argv), settings);
  }
  if (target.tracker == "github") return tracker::open_github_tracker(settings);
  return fail(Error(ErrorCode::Validation, "the tracker " + target.tracker + " has no command")
                  .with_fix("a person sets trackers." + target.tracker + ".command to the plug-in's argv"));
}

/// One short write transaction: `body` runs in it with a task engine whose changes go into one audit
/// row of issues.sync (kept only when something changed).
/// The longest a sync's write transaction held the store's write lock (begin to commit), in ms.
thread_local double longest_write_ms = 0;

template <typename Body>
Result<void> write(Context& context, const Target& target, std::string_view what, Body&& body) {
  Store& store = context.db();
  CT_TRY(store.begin(TxKind::Write));
  const auto began = std::chrono::steady_clock::now();
  struct Held {
    std::chrono::steady_clock::time_point began;
    ~Held() {
      longest_write_ms = std::max(
          longest_write_ms, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - began).count());
    }
  } held{began};
  AuditEntry audit;
  audit.at = context.now();
  audit.session = context.session;
  audit.agent = context.agent;
  audit.principal = context.principal.id;
  audit.operation = "issues.sync";
  audit.outcome = "ok";
  audit.params.set("tracker", target.tracker);
  audit.params.set("repo", target.repository);
  audit.params.set("step", what);
  TaskEngine engine(store, *context.config, audit.at, context.session,
                    [&audit](FieldChange change) { audit.changes.push_back(std::move(change)); });
  auto done = body(store, engine, audit);
  if (!done) {
    store.rollback();
    return done;
  }
  if (!audit.changes.empty()) {
    if (auto appended = store.append_audit(audit); !appended) {
      store.rollback();
      return fail(std::move(appended.error()));
    }
  }
  return store.commit();
}

/// A failure of the store itself (a page is then not kept), not a task rule refusing one item.
bool store_failure(ErrorCode code) {
  return code == ErrorCode::FileError || code == ErrorCode::LockTimeout || code == ErrorCode::Internal ||
         code == ErrorCode::ChecksumMismatch || code == ErrorCode::ConcurrentModification ||
         code == ErrorCode::IdCollision || code == ErrorCode::General;
}

/// Counts and lists of one sync, for the reply.
struct Outcome {
  std::int64_t pages = 0, pulled = 0, created = 0, updated = 0, pushed = 0, comments = 0, skipped = 0,
               created_there = 0, notes = 0;
  json::Value conflicts = json::Value::array();  // [{id, key, fields{…}}]
  json::Value refused = json::Value::array();    // [{id, key, field?, message, fix}]: the tracker said no
  std::set<std::string> to_push;                 // items pulled whose task holds changes to push
  std::int64_t checked_seq = 0;                  // the push step saw the audit trail up to this row
  std::set<std::string> to_relink;               // items pulled that name a parent or blockers
  std::int64_t new_links = 0;                    // items linked for the first time (they may resolve others)
  std::vector<std::string> warnings;
};

/// The epic of a milestone: its link ("milestone:<title>"), made with its task when missing.
Result<std::string> milestone_epic(Store& store, TaskEngine& engine, const Target& target, const std::string& title,
                                   TimeMs now) {
  const std::string id = "milestone:" + title;
  CT_TRY_ASSIGN(auto link, store.get_link(target.tracker, target.repository, id));
  if (link) return link->task_id;
  NewTask epic;
  epic.title = clip(title.size() < 3 ? "Milestone " + title : title, 200);
  epic.type = TaskType::Epic;
  epic.labels = {"milestone"};
  CT_TRY_ASSIGN(Task made, engine.add(std::move(epic)));
  TrackerLink made_link;
  made_link.tracker = target.tracker;
  made_link.repository = target.repository;
  made_link.external_id = id;
  made_link.task_id = made.id;
  made_link.key = target.repository + " milestone " + title;
  made_link.synced_at = now;
  made_link.meta.set("milestone", true);
  CT_TRY(store.put_link(made_link));
  return made.id;
}

/// Makes the task's state the one given ("open" | "done" | "cancelled"), by the task rules' own moves.
Result<void> move_to(TaskEngine& engine, const Task& task, std::string_view state, const std::string& why) {
  if (ts::state_of(task.status) == state) return {};
  if (state == "done") {
    if (task.status == TaskStatus::Cancelled) CT_TRY(engine.restore(task.id));
    CT_TRY(engine.complete(task.id, why, std::nullopt));
    return {};
  }
  if (state == "cancelled") {
    DeleteOptions options;
    options.children = ChildStrategy::Orphan;
    options.reason = why;
    CT_TRY(engine.remove(task.id, options, std::nullopt));
    return {};
  }
  if (task.status == TaskStatus::Done) {
    CT_TRY(engine.reopen(task.id, why, std::nullopt));
  } else if (task.status == TaskStatus::Cancelled) {
    CT_TRY(engine.restore(task.id));
  }
  return {};
}

/// Writes the fields `names` of `wanted` into the task (the state through move_to).
Result<void> apply_fields(TaskEngine& engine, const Task& task, const ts::Fields& wanted,
                          const std::vector<std::string>& names, const std::string& key) {
  TaskPatch patch;
  bool any = false;
  for (const auto& name : names) {
    if (name == "title") patch.title = wanted.title, any = true;
    if (name == "description") patch.description = wanted.description, any = true;
    if (name == "labels") patch.labels = wanted.labels, any = true;
    if (name == "acceptance") patch.acceptance = wanted.acceptance, any = true;
  }
  const bool state = std::find(names.begin(), names.end(), "state") != names.end();
  // Reopened there: reopen first, so that the other fields can change; closed there: close last.
  if (state && wanted.state == "open") CT_TRY(move_to(engine, task, wanted.state, "reopened in " + key));
  if (any) {
    patch.mode = ArrayMode::Replace;
    CT_TRY_ASSIGN(Task now, engine.get(task.id));
    if (now.archived) return fail(ErrorCode::Validation, task.id + " is archived: its fields are not changed");
    CT_TRY(engine.update(task.id, patch, std::nullopt));
  }
  if (state && wanted.state != "open") {
    CT_TRY_ASSIGN(Task now, engine.get(task.id));
    CT_TRY(move_to(engine, now, wanted.state, "closed in " + key));
  }
  return {};
}

json::Value item_meta(const tracker::Item& item, const ts::Fields& there) {
  json::Value meta = json::Value::object();
  meta.set("seen", ts::to_json(there));
  meta.set("labels", json::Value::array_of(item.labels));  // as the tracker spells them
  if (!item.milestone.empty()) meta.set("milestone", item.milestone);
  if (!item.parent.empty()) meta.set("parent", item.parent);
  if (!item.blocked_by.empty()) meta.set("blockedBy", json::Value::array_of(item.blocked_by));
  if (const auto refs = ts::referenced_dependencies(item.body); !refs.empty()) meta.set("refs", json::Value::array_of(refs));
  if (!item.assignees.empty()) meta.set("assignees", json::Value::array_of(item.assignees));
  if (!item.author.empty()) meta.set("author", item.author);
  return meta;
}

/// The number after the last '#' of a key or reference ("o/r#12", "#12"); 0 when there is none.
std::int64_t number_after_hash(std::string_view text) {
  auto hash = text.rfind('#');
  if (hash == std::string_view::npos || hash + 1 == text.size()) return 0;
  std::int64_t number = 0;
  for (char c : text.substr(hash + 1)) {
    if (c < '0' || c > '9' || number > 1'000'000'000'000) return 0;
    number = number * 10 + (c - '0');
  }
  return number;
}

/// Points a link at an item: which tracker and repository, its id, key, URL and number.
void point_at(TrackerLink& link, const Target& target, const tracker::Item& item) {
  link.tracker = target.tracker;
  link.repository = target.repository;
  link.external_id = item.id;
  link.key = item.key;
  link.url = item.url;
  link.number = number_after_hash(item.key);
}

/// One pulled item written: a new task (or the task its marker names), or the 3-way merge of a linked one.
Result<void> apply_item(Context& context, Store& store, TaskEngine& engine, const Target& target,
                        const tracker::Item& item, Outcome& outcome) {
  const ts::Fields there = ts::fields_of_item(item);
  CT_TRY_ASSIGN(auto existing, store.get_link(target.tracker, target.repository, item.id));
  TrackerLink link = existing ? std::move(*existing) : TrackerLink{};
  point_at(link, target, item);
  link.meta = item_meta(item, there);
  if (!existing) outcome.new_links++;
  if (link.meta.contains("parent") || link.meta.contains("blockedBy") || link.meta.contains("refs"))
    outcome.to_relink.insert(item.id);
  link.synced_at = context.now();
  std::optional<Task> task;
  if (existing) {
    CT_TRY_ASSIGN(auto found, store.get_task(link.task_id));
    task = std::move(found);
  } else if (auto marked = ts::marked_task(item.body)) {  // an item we created, its link lost to a crash
    CT_TRY_ASSIGN(auto found, store.get_task(*marked));
    CT_TRY_ASSIGN(auto links, store.task_links(*marked));
    if (found && links.empty()) {
      task = std::move(found);
      link.task_id = task->id;
      link.base = ts::to_json(there);
    }
  }
  if (!task && existing) {  // the task was removed here: kept as a link a person decides about
    link.state = "deleted";
    link.version = item.version;
    CT_TRY(store.put_link(link));
    outcome.skipped++;
    return {};
  }
  if (!task) {
    NewTask spec;
    spec.title = there.title;
    spec.description = there.description;
    spec.labels = there.labels;
    spec.acceptance = there.acceptance;
    if (!item.milestone.empty()) {
      CT_TRY_ASSIGN(spec.parent, milestone_epic(store, engine, target, item.milestone, link.synced_at));
    }
    CT_TRY_ASSIGN(Task made, engine.add(std::move(spec)));
    if (there.state != "open") CT_TRY(move_to(engine, made, there.state, "closed in " + item.key));
    link.task_id = made.id;
    link.base = ts::to_json(there);
    link.version = item.version;
    link.state = "synced";
    link.conflict = json::Value();
    CT_TRY(store.put_link(link));
    outcome.created++;
    return {};
  }
  const ts::Fields here = ts::fields_of_task(*task);
  const ts::Fields base = ts::from_json(link.base, there);
  ts::Merge merged = ts::merge(base, here, there);
  bool pulled = true;
  if (!merged.pulled.empty()) {
    CT_TRY(store.savepoint("fields"));
    if (auto applied = apply_fields(engine, *task, merged.here, merged.pulled, item.key); !applied) {
      if (store_failure(applied.error().code)) return applied;
      CT_TRY(store.rollback_to("fields"));
      outcome.warnings.push_back(task->id + " (" + item.key + "): not updated: " + applied.error().message);
      pulled = false;
    } else {
      CT_TRY(store.release("fields"));
      outcome.updated++;
    }
  }
  // The new base: what both sides now hold; a field to push keeps its old base until it is pushed
  // (so the push step finds it), a conflict keeps its old base until it is resolved, and a field
  // the task rules refused to take keeps it too (it is pulled again at the next sync).
  ts::Fields next = merged.base;
  for (const auto& name : merged.pushed) ts::set_field(next, name, ts::field_value(base, name));
  if (!pulled)
    for (const auto& name : merged.pulled) ts::set_field(next, name, ts::field_value(base, name));
  if (!merged.pushed.empty()) outcome.to_push.insert(item.id);
  link.base = ts::to_json(next);
  link.version = item.version;
  if (merged.conflicts.empty()) {
    link.state = "synced";
    link.conflict = json::Value();
  } else {
    link.state = "conflict";
    link.conflict = merged.conflicts;
    json::Value entry = json::Value::object();
    entry.set("id", task->id);
    entry.set("key", item.key);
    entry.set("fields", merged.conflicts);
    outcome.conflicts.push_back(std::move(entry));
  }
  CT_TRY(store.put_link(link));
  return {};
}

/// A comment made in the tracker, kept as a note of its item's task: who wrote it and when, the
/// comment's id as a marker (`[github comment <id>]`) so that it is kept once, however often it is
/// pulled (an edited comment comes again: notes are append-only, the first text stays). A comment
/// this product wrote (a completion's, marked `<!-- cleo:`) is not pulled back.
Result<void> apply_comment(Store& store, TaskEngine& engine, const Target& target, const tracker::Comment& comment,
                           Outcome& outcome) {
  constexpr std::size_t kNoteBody = 4000;  // a note holds ≤ 5000 characters; the heading fits in the rest
  if (comment.id.empty() || comment.body.find("<!-- cleo:") != std::string::npos) return {};
  std::optional<TrackerLink> link;
  if (comment.item.starts_with("#")) {
    CT_TRY_ASSIGN(link, store.link_by_number(target.tracker, target.repository, number_after_hash(comment.item)));
  } else {
    CT_TRY_ASSIGN(link, store.get_link(target.tracker, target.repository, comment.item));
  }
  if (!link || link->external_id.starts_with("milestone:")) return {};  // not an item linked here
  CT_TRY_ASSIGN(auto task, store.get_task(link->task_id));
  if (!task) return {};
  const std::string mark = "[" + target.tracker + " comment " + comment.id + "]";
  for (const auto& note : task->notes)
    if (note.text.find(mark) != std::string::npos) return {};
  const std::string who = comment.author.empty() ? std::string("someone") : "@" + comment.author;
  TaskPatch patch;
  patch.note = who + " commented on " + link->key + (comment.created_at.empty() ? "" : " at " + comment.created_at) +
               " " + mark + ":\n" + clip(std::string(trim(comment.body)), kNoteBody);
  CT_TRY(engine.update(task->id, patch, std::nullopt));
  outcome.notes++;
  return {};
}

/// The task a link's external id is, in this repository.
Result<std::string> task_of(Store& store, const Target& target, const std::string& external_id) {
  CT_TRY_ASSIGN(auto link, store.get_link(target.tracker, target.repository, external_id));
  return link ? link->task_id : std::string();
}

/// Parents and dependencies the items name, set once both ends are tasks (after every page, since
/// an item may name one on a later page).
Result<void> relink_chunk(Store& store, TaskEngine& engine, const Target& target,
                          const std::map<std::int64_t, std::string>& by_number, std::span<TrackerLink> links,
                          Outcome& outcome);

Result<void> relink(Context& context, const Target& target, Outcome& outcome) {
  // What to do is read first (no write lock), then done a chunk of links per short write.
  // Only links that name others are read: those pulled now; and when items were linked for the
  // first time (they may be what an older link waited for), every link not yet resolved. The
  // numbers' tasks only when one of them names an item by number.
  Store& db = context.db();
  CT_TRY(db.begin(TxKind::Read));
  Result<std::vector<TrackerLink>> unresolved = std::vector<TrackerLink>{};
  if (outcome.new_links > 0) {
    unresolved = db.unresolved_links(target.tracker, target.repository);
  } else {
    for (const auto& id : outcome.to_relink) {
      auto link = db.get_link(target.tracker, target.repository, id);
      if (!link) {
        unresolved = fail(std::move(link.error()));
        break;
      }
      if (*link) unresolved->push_back(std::move(**link));
    }
  }
  if (!unresolved) {
    db.rollback();
    return fail(std::move(unresolved.error()));
  }
  std::map<std::int64_t, std::string> by_number;
  std::vector<TrackerLink> pending;
  bool by_numbers = false;
  for (auto& link : *unresolved) {
    const bool refers = link.meta.contains("parent") || link.meta.contains("blockedBy") || link.meta.contains("refs");
    if (!refers || link.meta["resolved"] == json::Value(true)) continue;
    by_numbers = by_numbers || link.meta.contains("refs") ||
                 link.meta["parent"].string_or_empty().starts_with("#") || link.meta["blockedBy"].dump().find("\"#") != std::string::npos;
    pending.push_back(std::move(link));
  }
  if (by_numbers) {
    auto numbers = db.link_numbers(target.tracker, target.repository);
    if (!numbers) {
      db.rollback();
      return fail(std::move(numbers.error()));
    }
    by_number = std::move(*numbers);
  }
  db.rollback();
  constexpr std::size_t kChunk = 100;
  for (std::size_t from = 0; from < pending.size(); from += kChunk) {
    auto chunk = [&](Store& store, TaskEngine& engine, AuditEntry&) -> Result<void> {
      return relink_chunk(store, engine, target, by_number,
                          std::span(pending).subspan(from, std::min(kChunk, pending.size() - from)), outcome);
    };
    CT_TRY(write(context, target, "relink", chunk));
  }
  return {};
}

/// relink's work on some links, in the caller's write transaction.
Result<void> relink_chunk(Store& store, TaskEngine& engine, const Target& target,
                          const std::map<std::int64_t, std::string>& by_number, std::span<TrackerLink> links,
                          Outcome& outcome) {
  {
    for (auto& link : links) {
      CT_TRY_ASSIGN(auto task, store.get_task(link.task_id));
      if (!task || task->archived) continue;
      // A reference is an external id, or "#n" (a tracker that names items by number).
      auto task_named = [&](const std::string& ref) -> Result<std::string> {
        if (ref.starts_with("#")) {
          auto found = by_number.find(number_after_hash(ref));
          return found == by_number.end() ? std::string() : found->second;
        }
        return task_of(store, target, ref);
      };
      bool complete = true;
      if (const auto& parent = link.meta["parent"]; parent.is_string()) {
        CT_TRY_ASSIGN(std::string parent_task, task_named(parent.as_string()));
        if (parent_task.empty()) {
          complete = false;
        } else if (task->parent != parent_task) {
          if (auto moved = engine.reparent(task->id, parent_task, std::nullopt); !moved)
            outcome.warnings.push_back(task->id + " (" + link.key + "): its parent " + parent_task +
                                       " is not kept: " + moved.error().message);
        }
      }
      std::vector<std::string> depends;
      if (const auto& blocked = link.meta["blockedBy"]; blocked.is_array())
        for (const auto& id : blocked.as_array()) {
          CT_TRY_ASSIGN(std::string other, task_named(id.string_or_empty()));
          if (other.empty()) complete = false;
          else depends.push_back(other);
        }
      if (const auto& refs = link.meta["refs"]; refs.is_array())
        for (const auto& number : refs.as_array()) {
          auto found = number.is_int() ? by_number.find(number.as_int()) : by_number.end();
          if (found == by_number.end()) complete = false;
          else if (found->second != task->id) depends.push_back(found->second);
        }
      std::vector<std::string> missing;
      // A finished task waits on nothing: its dependencies are left as they are.
      if (task->status == TaskStatus::Done || task->status == TaskStatus::Cancelled) depends.clear();
      for (const auto& dep : depends)
        if (std::find(task->depends.begin(), task->depends.end(), dep) == task->depends.end() &&
            std::find(missing.begin(), missing.end(), dep) == missing.end())
          missing.push_back(dep);
      if (!missing.empty()) {
        TaskPatch patch;
        patch.depends = missing;
        patch.mode = ArrayMode::Append;
        if (auto added = engine.update(task->id, patch, std::nullopt); !added)
          outcome.warnings.push_back(task->id + " (" + link.key + "): dependencies not kept: " + added.error().message);
      }
      if (complete) {
        link.meta.set("resolved", true);
        CT_TRY(store.put_link(link));
      }
    }
    return {};
  }
}

/// The body an item gets for a task's description and acceptance criteria (lossless through fields_of_item).
std::string body_of(const ts::Fields& fields) {
  std::string body = fields.description;
  if (!fields.acceptance.empty()) {
    if (!body.empty()) body += "\n\n";
    for (const auto& criterion : fields.acceptance) body += "- [ ] " + criterion + "\n";
  }
  return body;
}

/// The tracker's spelling of the task's labels: a label the item had keeps its spelling.
std::vector<std::string> tracker_labels(const std::vector<std::string>& labels, const json::Value& spelled) {
  std::vector<std::string> out;
  for (const auto& label : labels) {
    std::string name = label;
    if (spelled.is_array())
      for (const auto& original : spelled.as_array())
        if (original.is_string() && ts::task_label(original.as_string()) == label) name = original.as_string();
    out.push_back(std::move(name));
  }
  return out;
}

/// What a completion says in the item: the task's last note and its evidence, marked so that a
/// resumed sync does not say it twice.
Result<std::string> completion_comment(Store& store, const Task& task) {
  std::string body = "Done in CLEO (" + task.id + ").";
  if (!task.notes.empty()) body += "\n\n" + task.notes.back().text;
  CT_TRY_ASSIGN(auto atoms, store.task_evidence(task.id, false));
  if (!atoms.empty()) {
    body += "\n\nEvidence:";
    for (const auto& atom : atoms) {
      body += "\n- " + atom.kind;
      if (!atom.ref.empty()) body += ": " + atom.ref;
      for (const auto& file : atom.files) body += "\n  - " + file.path + " (sha256 " + file.sha256.substr(0, 12) + ")";
    }
  }
  body += "\n\n<!-- cleo:" + task.id + ":done:" + std::to_string(task.completed_at.value_or(0)) + " -->";
  return body;
}

/// What an agent does about a value the tracker refused.
std::string refusal_fix(const std::string& task_id, const std::string& field) {
  if (field == "title") return "shorten " + task_id + "'s title (tasks.update); the next issues.sync sends it again";
  if (field == "body" || field == "description")
    return "shorten " + task_id + "'s description or acceptance criteria (tasks.update); the next issues.sync sends "
           "them again";
  if (field == "labels" || field == "name")
    return "change " + task_id + "'s labels (tasks.update); the next issues.sync sends them again";
  return "change what the tracker refused in " + task_id + " (tasks.update); the next issues.sync sends it again";
}

/// A refusal of the tracker (E_VALIDATION: GitHub's 422) for one task: told in the reply's
/// `refused`, kept on its link (state "refused", meta.refused) so that the next sync sends it again,
/// and not retried in this one. Anything else stops the sync.
Result<void> refused(Context& context, const Target& target, const std::string& task_id, const TrackerLink* link,
                     const Error& error, Outcome& outcome) {
  const std::string field = error.details["field"].string_or_empty();
  json::Value entry = json::Value::object();
  entry.set("id", task_id);
  if (link) entry.set("key", link->key);
  if (!field.empty()) entry.set("field", field);
  entry.set("message", error.message);
  entry.set("fix", refusal_fix(task_id, field));
  outcome.refused.push_back(entry);
  if (!link) return {};
  return write(context, target, "refused", [&](Store& db, TaskEngine&, AuditEntry&) -> Result<void> {
    CT_TRY_ASSIGN(auto current, db.get_link(target.tracker, target.repository, link->external_id));
    if (!current) return {};
    if (current->state != "conflict") current->state = "refused";
    json::Value why = json::Value::object();
    if (!field.empty()) why.set("field", field);
    why.set("message", error.message);
    current->meta.set("refused", std::move(why));
    return db.put_link(*current);
  });
}

/// Pushes what changed here since the base, one item at a time: the network call first, then a short
/// write of the new base. Only the links that may have something to push are read: of tasks changed
/// here since the last push step read them (the audit trail after its row `after_seq`, the watermark
/// kept in the cursor's summary as checkedSeq; 0 reads every changed task), of items pulled now whose
/// task holds changes, of a refused push, of the task whose conflict was resolved.
Result<void> push_changes(Context& context, const Target& target, tracker::Tracker& tracker, Outcome& outcome,
                          const std::string& resolved, std::int64_t after_seq) {
  Store& store = context.db();
  CT_TRY(store.begin(TxKind::Read));
  // The watermark first: a change committed after it has a higher seq, whatever this read sees.
  auto watermark = store.last_audit_row();
  if (!watermark) {
    store.rollback();
    return fail(std::move(watermark.error()));
  }
  outcome.checked_seq = *watermark;
  auto links = store.links_to_push(target.tracker, target.repository, after_seq);
  if (!links) {
    store.rollback();
    return fail(std::move(links.error()));
  }
  auto epics = store.push_new_links(target.tracker, target.repository);
  if (!epics) {
    store.rollback();
    return fail(std::move(epics.error()));
  }
  {
    std::set<std::string> have;
    for (const auto& link : *links) have.insert(link.external_id);
    std::vector<std::string> more(outcome.to_push.begin(), outcome.to_push.end());
    if (!resolved.empty()) {
      auto of_task = store.task_links(resolved);
      if (!of_task) {
        store.rollback();
        return fail(std::move(of_task.error()));
      }
      for (const auto& link : *of_task)
        if (link.tracker == target.tracker && link.repository == target.repository) more.push_back(link.external_id);
    }
    for (const auto& id : more) {
      if (have.contains(id)) continue;
      auto link = store.get_link(target.tracker, target.repository, id);
      if (!link) {
        store.rollback();
        return fail(std::move(link.error()));
      }
      if (*link) {
        have.insert(id);
        links->push_back(std::move(**link));
      }
    }
  }
  struct Job {
    TrackerLink link;
    Task task;
    ts::Merge merged;
    std::string comment;
  };
  std::vector<Job> jobs;
  for (auto& link : *links) {
    if (link.external_id.starts_with("milestone:") || link.state == "deleted") continue;
    auto task = store.get_task(link.task_id);
    if (!task) {
      store.rollback();
      return fail(std::move(task.error()));
    }
    if (!*task) continue;
    const ts::Fields seen = ts::from_json(link.meta["seen"], ts::from_json(link.base, ts::Fields{}));
    const ts::Fields base = ts::from_json(link.base, seen);
    ts::Merge merged = ts::merge(base, ts::fields_of_task(**task), seen);
    if (merged.pushed.empty()) continue;
    Job job{std::move(link), std::move(**task), std::move(merged), ""};
    if (job.task.status == TaskStatus::Done &&
        std::find(job.merged.pushed.begin(), job.merged.pushed.end(), "state") != job.merged.pushed.end()) {
      auto comment = completion_comment(store, job.task);
      if (!comment) {
        store.rollback();
        return fail(std::move(comment.error()));
      }
      job.comment = std::move(*comment);
    }
    jobs.push_back(std::move(job));
  }
  // New tasks under an epic that opted in (pushNew): made in the tracker, each with a marker that
  // links it back if the sync is cut off before the link is kept.
  struct Draft {
    Task task;
    std::string milestone;  // the title of the epic's milestone, "" when the epic is an item's
  };
  std::vector<Draft> drafts;
  for (const auto& link : *epics) {
    const std::string milestone =
        link.external_id.starts_with("milestone:") ? link.external_id.substr(std::string_view("milestone:").size()) : "";
    auto children = store.children_of(link.task_id, false);
    if (!children) {
      store.rollback();
      return fail(std::move(children.error()));
    }
    for (const auto& child_id : *children) {
      auto child_links = store.task_links(child_id);
      auto child = store.get_task(child_id);
      if (!child_links || !child) {
        store.rollback();
        return fail(Error(ErrorCode::FileError, "cannot read the new tasks of " + link.task_id));
      }
      if (child_links->empty() && *child && (*child)->status != TaskStatus::Cancelled)
        drafts.push_back({**child, milestone});
    }
  }
  store.rollback();  // a read: nothing to keep
  for (const auto& [task, milestone] : drafts) {
    tracker::Item draft;
    const ts::Fields fields = ts::fields_of_task(task);
    draft.title = fields.title;
    draft.body = body_of(fields);
    draft.body += (draft.body.empty() ? "" : "\n\n") + ts::marker(task.id);
    draft.labels = fields.labels;
    draft.milestone = milestone;
    draft.state = "open";
    auto created = tracker.create(draft);
    if (!created && created.error().code == ErrorCode::Validation) {
      CT_TRY(refused(context, target, task.id, nullptr, created.error(), outcome));
      continue;
    }
    if (!created) return fail(std::move(created.error()));
    const tracker::Item& made = *created;
    outcome.created_there++;
    report_progress("created " + std::to_string(outcome.created_there) + " of " + std::to_string(drafts.size()) +
                    " items");
    if (made.milestone != milestone)
      outcome.warnings.push_back(task.id + " (" + made.key + "): made without its milestone " + quoted_line(milestone) +
                                 ", which " + target.repository + " does not have");
    auto create_step = [&](Store& db, TaskEngine&, AuditEntry& audit) -> Result<void> {
      TrackerLink link;
      point_at(link, target, made);
      link.task_id = task.id;
      link.version = made.version;
      const ts::Fields there = ts::fields_of_item(made);
      link.base = ts::to_json(there);
      link.meta = item_meta(made, there);
      link.synced_at = context.now();
      audit.changes.push_back(FieldChange{task.id, "tracker.created", json::Value(), json::Value(made.key)});
      return db.put_link(link);
    };
    CT_TRY(write(context, target, "create", create_step));
  }
  for (auto& job : jobs) {
    tracker.know(job.link.external_id, job.link.key);
    tracker::Edit edit;
    edit.id = job.link.external_id;
    const ts::Fields& here = job.merged.there;  // the item as it should become
    for (const auto& name : job.merged.pushed) {
      if (name == "title") edit.title = here.title;
      if (name == "description" || name == "acceptance") edit.body = body_of(here);
      if (name == "labels") edit.labels = tracker_labels(here.labels, job.link.meta["labels"]);
      if (name == "state") {
        edit.state = here.state == "open" ? "open" : "closed";
        if (here.state != "open") edit.state_reason = here.state == "done" ? "completed" : "not_planned";
      }
    }
    if (!job.comment.empty()) {
      // Said once: a resumed sync finds its own marker among the item's comments.
      auto said = tracker.comments(job.link.external_id, "");
      if (!said) return fail(std::move(said.error()));
      const std::string mark = job.comment.substr(job.comment.rfind("<!-- cleo:"));
      bool already = false;
      for (const auto& comment : *said) already = already || comment.body.find(mark) != std::string::npos;
      if (!already) {
        auto commented = tracker.comment(job.link.external_id, job.comment);
        if (!commented && commented.error().code == ErrorCode::Validation) {
          CT_TRY(refused(context, target, job.task.id, &job.link, commented.error(), outcome));
          continue;
        }
        if (!commented) return fail(std::move(commented.error()));
        outcome.comments++;
      }
    }
    auto pushed = tracker.push(edit);
    if (!pushed && pushed.error().code == ErrorCode::Validation) {
      CT_TRY(refused(context, target, job.task.id, &job.link, pushed.error(), outcome));
      continue;
    }
    if (!pushed) return fail(std::move(pushed.error()));
    const tracker::Item& after = *pushed;
    outcome.pushed++;
    report_progress("pushed " + std::to_string(outcome.pushed) + " of " + std::to_string(jobs.size()) + " changes");
    auto push_step = [&](Store& db, TaskEngine&, AuditEntry& audit) -> Result<void> {
      CT_TRY_ASSIGN(auto current, db.get_link(target.tracker, target.repository, job.link.external_id));
      if (!current) return {};
      TrackerLink link = std::move(*current);
      ts::Fields base = ts::from_json(link.base, ts::Fields{});
      for (const auto& name : job.merged.pushed) {
        ts::set_field(base, name, ts::field_value(here, name));
        audit.changes.push_back(FieldChange{job.task.id, "tracker." + name, ts::field_value(job.merged.base, name),
                                            ts::field_value(here, name)});
      }
      link.base = ts::to_json(base);
      json::Value meta = link.meta;
      meta.set("seen", ts::to_json(ts::fields_of_item(after)));
      meta.erase("refused");
      link.meta = std::move(meta);
      if (link.state == "refused") link.state = "synced";
      link.version = after.version;
      link.synced_at = context.now();
      return db.put_link(link);
    };
    CT_TRY(write(context, target, "push", push_step));
  }
  return {};
}

/// Resolves the conflict of `task` (one field, or all of them) before the sync runs.
Result<void> resolve_conflict(Context& context, const Target& target, const SyncArgs& args) {
  return write(context, target, "resolve", [&](Store& store, TaskEngine&, AuditEntry& audit) -> Result<void> {
    CT_TRY_ASSIGN(auto links, store.task_links(args.resolve));
    TrackerLink* link = nullptr;
    for (auto& candidate : links)
      if (candidate.tracker == target.tracker && candidate.repository == target.repository) link = &candidate;
    if (!link || link->state != "conflict" || !link->conflict.is_object())
      return fail(Error(ErrorCode::NotFound, args.resolve + " has no sync conflict with " + target.repository)
                      .with_fix("issues.sync.status lists the conflicts"));
    std::vector<std::string> fields;
    for (const auto& [name, _] : link->conflict.as_object())
      if (args.field.empty() || args.field == name) fields.push_back(name);
    if (fields.empty())
      return fail(Error(ErrorCode::Validation, args.resolve + "'s " + args.field + " is not in conflict")
                      .with_detail("field", "field"));
    for (const auto& name : fields) {
      json::Value loser = link->conflict[name][args.take == "here" ? "there" : "here"];
      ts::resolve(link->base, link->conflict, name, args.take);
      // The losing value stays in the audit trail.
      audit.changes.push_back(FieldChange{args.resolve, "tracker." + name + ".conflict", std::move(loser),
                                          json::Value(args.take)});
      link->conflict.erase(name);
    }
    if (link->conflict.empty()) {
      link->conflict = json::Value();
      link->state = "synced";
    }
    // Pulled again at this sync, so that "there" takes effect now.
    link->version.clear();
    return store.put_link(*link);
  });
}

/// An epic linked to this repository (a milestone's, or an item's) opts in: its new children are
/// created in the tracker.
Result<void> opt_in(Context& context, const Target& target, const std::string& epic) {
  auto step = [&](Store& store, TaskEngine& engine, AuditEntry& audit) -> Result<void> {
    CT_TRY_ASSIGN(Task task, engine.get(epic));
    if (task.type != TaskType::Epic)
      return fail(Error(ErrorCode::Validation, epic + " is not an epic: only an epic's new tasks are created there")
                      .with_detail("field", "pushNew"));
    CT_TRY_ASSIGN(auto links, store.task_links(epic));
    for (auto& link : links) {
      if (link.tracker != target.tracker || link.repository != target.repository) continue;
      if (!link.push_new) audit.changes.push_back(FieldChange{epic, "tracker.pushNew", json::Value(false), json::Value(true)});
      link.push_new = true;
      return store.put_link(link);
    }
    return fail(Error(ErrorCode::NotFound, epic + " is not linked to " + target.repository +
                                               ": only a linked epic (a milestone's) creates items there")
                    .with_detail("field", "pushNew"));
  };
  return write(context, target, "opt-in", step);
}

Result<std::optional<TrackerCursor>> read_cursor(Context& context, const Target& target) {
  Store& store = context.db();
  CT_TRY(store.begin(TxKind::Read));
  auto cursor = store.get_cursor(target.tracker, target.repository);
  store.rollback();
  return cursor;
}

/// Applies the conflicts of links that were not pulled this time (their item did not change) as
/// a pull does: what the resolution said "there" wins.
Result<void> settle_resolved(Context& context, const Target& target, const std::string& task_id, Outcome& outcome) {
  return write(context, target, "settle", [&](Store& store, TaskEngine& engine, AuditEntry&) -> Result<void> {
    CT_TRY_ASSIGN(auto links, store.task_links(task_id));
    for (auto& link : links) {
      if (link.tracker != target.tracker || link.repository != target.repository) continue;
      CT_TRY_ASSIGN(auto task, store.get_task(task_id));
      if (!task) continue;
      const ts::Fields seen = ts::from_json(link.meta["seen"], ts::Fields{});
      const ts::Fields base = ts::from_json(link.base, seen);
      ts::Merge merged = ts::merge(base, ts::fields_of_task(*task), seen);
      if (merged.pulled.empty()) continue;
      CT_TRY(apply_fields(engine, *task, merged.here, merged.pulled, link.key));
      ts::Fields next = merged.base;
      for (const auto& name : merged.pushed) ts::set_field(next, name, ts::field_value(base, name));
      link.base = ts::to_json(next);
      CT_TRY(store.put_link(link));
      outcome.updated++;
    }
    return {};
  });
}

Result<Reply> sync_external(Context& context, const SyncArgs& args) {
  longest_write_ms = 0;
  CT_TRY_ASSIGN(Target target, target_of(context, args.tracker, args.repo));
  if (!args.resolve.empty() && args.take.empty())
    return fail(Error(ErrorCode::Validation, "resolve needs take: here (keep the task's value) or there (the item's)")
                    .with_detail("field", "take"));
  CT_TRY_ASSIGN(std::optional<TrackerCursor> saved, read_cursor(context, target));
  // The first sync of a repository is a dry run unless asked otherwise: it shows what it would bring in.
  const bool dry = args.dry_run.value_or(!saved.has_value());
  Outcome outcome;
  if (!args.resolve.empty() && !dry) CT_TRY(resolve_conflict(context, target, args));
  if (!args.push_new.empty() && !dry) CT_TRY(opt_in(context, target, args.push_new));
  CT_TRY_ASSIGN(auto tracker, open_tracker(context, target));
  tracker::PullOptions options;
  options.cursor = saved ? saved->cursor : "";
  options.include_pull_requests = args.pull_requests;
  options.comments = !dry;  // the tracker's comments come back as the tasks' notes
  if (target.settings["pageSize"].is_int())
    options.page_size = static_cast<std::size_t>(std::clamp<std::int64_t>(target.settings["pageSize"].as_int(), 1, 100));
  std::set<std::string> seen_ids;
  std::int64_t would_create = 0;
  while (true) {
    CT_TRY_ASSIGN(tracker::Page page, tracker->pull(options));  // the network call, no lock held
    outcome.pages++;
    if (dry) {
      CT_TRY(context.db().begin(TxKind::Read));
      for (const auto& item : page.items) {
        if (item.pull_request && !args.pull_requests) continue;
        if (!seen_ids.insert(item.id).second) continue;
        auto link = context.db().get_link(target.tracker, target.repository, item.id);
        if (!link) {
          context.db().rollback();
          return fail(std::move(link.error()));
        }
        outcome.pulled++;
        if (!*link) would_create++;
      }
      context.db().rollback();
    } else {
      auto pull_step = [&](Store& store, TaskEngine& engine, AuditEntry& audit) -> Result<void> {
        for (const auto& item : page.items) {
          if (item.pull_request && !args.pull_requests) continue;
          outcome.pulled++;
          // An item the task rules refuse is told and left out; the rest of the page is kept.
          const std::size_t changes = audit.changes.size();
          CT_TRY(store.savepoint("item"));
          if (auto applied = apply_item(context, store, engine, target, item, outcome); !applied) {
            if (store_failure(applied.error().code)) return applied;
            CT_TRY(store.rollback_to("item"));
            audit.changes.resize(changes);
            outcome.warnings.push_back(item.key + ": not kept: " + applied.error().message);
            continue;
          }
          CT_TRY(store.release("item"));
        }
        for (const auto& comment : page.comments) {
          const std::size_t changes = audit.changes.size();
          CT_TRY(store.savepoint("comment"));
          if (auto kept = apply_comment(store, engine, target, comment, outcome); !kept) {
            if (store_failure(kept.error().code)) return kept;
            CT_TRY(store.rollback_to("comment"));
            audit.changes.resize(changes);
            outcome.warnings.push_back(comment.item + ": comment " + comment.id + " not kept: " + kept.error().message);
            continue;
          }
          CT_TRY(store.release("comment"));
        }
        // The cursor moves in the transaction that keeps the page: a sync killed after it resumes here.
        TrackerCursor cursor;
        cursor.tracker = target.tracker;
        cursor.repository = target.repository;
        cursor.cursor = page.cursor;
        cursor.synced_at = context.now();
        if (saved) cursor.summary = saved->summary;
        return store.put_cursor(cursor);
      };
      CT_TRY(write(context, target, "pull", pull_step));
    }
    options.cursor = page.cursor;
    report_progress((dry ? "read " : "pulled ") + std::to_string(outcome.pulled) + " items" +
                    (outcome.notes > 0 ? ", " + std::to_string(outcome.notes) + " comments as notes" : std::string()) +
                    " (" + std::to_string(outcome.pages) + (outcome.pages == 1 ? " page)" : " pages)"));
    if (!page.more) break;
  }
  json::Value data = json::Value::object();
  data.set("tracker", target.tracker);
  data.set("repo", target.repository);
  if (dry) {
    data.set("dryRun", true);
    data.set("pulled", outcome.pulled);
    data.set("wouldCreate", would_create);
    data.set("wouldUpdate", outcome.pulled - would_create);
    std::vector<std::string> warnings;
    if (!args.dry_run) warnings.push_back("a first sync is a dry run: pass dryRun:false to bring the items in");
    return Reply::warned(std::move(data), std::move(warnings));
  }
  CT_TRY(relink(context, target, outcome));
  if (!args.resolve.empty()) CT_TRY(settle_resolved(context, target, args.resolve, outcome));
  const json::Value& last = saved ? saved->summary : json::Value();
  const std::int64_t after_seq = last["checkedSeq"].is_int() ? last["checkedSeq"].as_int() : 0;
  if (args.push) CT_TRY(push_changes(context, target, *tracker, outcome, args.resolve, after_seq));
  std::int64_t open_conflicts = 0;
  auto cursor_step = [&](Store& store, TaskEngine&, AuditEntry&) -> Result<void> {
    CT_TRY_ASSIGN(open_conflicts, store.count_links(target.tracker, target.repository, "conflict"));
    CT_TRY_ASSIGN(auto cursor, store.get_cursor(target.tracker, target.repository));
    TrackerCursor next = cursor.value_or(TrackerCursor{target.tracker, target.repository, options.cursor, "", {}, 0});
    json::Value summary = json::Value::object();
    summary.set("pulled", outcome.pulled);
    summary.set("created", outcome.created);
    summary.set("updated", outcome.updated);
    summary.set("pushed", outcome.pushed);
    summary.set("conflicts", open_conflicts);
    summary.set("at", format_iso8601(context.now()));
    // Where the next push step starts to look (only a push step that ran moves it).
    if (args.push) summary.set("checkedSeq", outcome.checked_seq);
    else if (after_seq > 0) summary.set("checkedSeq", after_seq);
    next.summary = std::move(summary);
    next.synced_at = context.now();
    return store.put_cursor(next);
  };
  CT_TRY(write(context, target, "cursor", cursor_step));
  data.set("pulled", outcome.pulled);
  data.set("created", outcome.created);
  data.set("updated", outcome.updated);
  data.set("pushed", outcome.pushed);
  if (outcome.created_there > 0) data.set("createdThere", outcome.created_there);
  data.set("comments", outcome.comments);
  data.set("notes", outcome.notes);
  data.set("conflicts", open_conflicts);
  if (!outcome.refused.empty()) data.set("refused", std::move(outcome.refused));
  if (!outcome.conflicts.empty()) data.set("newConflicts", std::move(outcome.conflicts));
  data.set("longestWriteMs", static_cast<double>(static_cast<std::int64_t>(longest_write_ms * 10)) / 10.0);
  return Reply::warned(std::move(data), std::move(outcome.warnings));
}

json::Value link_json(const TrackerLink& link) {
  json::Value out = json::Value::object();
  out.set("id", link.task_id);
  out.set("key", link.key);
  out.set("state", link.state);
  if (link.conflict.is_object()) out.set("conflict", link.conflict);
  return out;
}

Result<Reply> sync_status(Context& context, const StatusArgs& args) {
  CT_TRY_ASSIGN(Target target, target_of(context, args.tracker, args.repo));
  Store& store = context.db();
  CT_TRY_ASSIGN(auto cursor, store.get_cursor(target.tracker, target.repository));
  CT_TRY_ASSIGN(auto links, store.links(target.tracker, target.repository, ""));
  json::Value data = json::Value::object();
  data.set("tracker", target.tracker);
  data.set("repo", target.repository);
  data.set("linked", static_cast<std::int64_t>(links.size()));
  if (cursor && !cursor->summary.is_null()) data.set("last", cursor->summary);
  json::Value out_of_step = json::Value::array();
  json::Value conflicts = json::Value::array();
  for (const auto& link : links) {
    if (link.external_id.starts_with("milestone:")) continue;
    if (link.state == "conflict") {
      conflicts.push_back(link_json(link));
      continue;
    }
    CT_TRY_ASSIGN(auto task, store.get_task(link.task_id));
    if (!task) {
      json::Value row = link_json(link);
      row.set("state", "deleted");
      out_of_step.push_back(std::move(row));
      continue;
    }
    const ts::Fields seen = ts::from_json(link.meta["seen"], ts::from_json(link.base, ts::Fields{}));
    ts::Merge merged = ts::merge(ts::from_json(link.base, seen), ts::fields_of_task(*task), seen);
    if (merged.pushed.empty() && merged.pulled.empty()) continue;
    json::Value row = link_json(link);
    row.set("state", link.state == "refused" ? "refused" : "changed");
    if (link.meta.contains("refused")) row.set("refused", link.meta["refused"]);
    if (!merged.pushed.empty()) row.set("push", json::Value::array_of(merged.pushed));
    if (!merged.pulled.empty()) row.set("pull", json::Value::array_of(merged.pulled));
    out_of_step.push_back(std::move(row));
  }
  data.set("outOfStep", std::move(out_of_step));
  data.set("conflicts", std::move(conflicts));
  if (!cursor) {
    std::vector<std::string> warnings = {"never synced: issues.sync shows what it would bring in (a dry run)"};
    return Reply::warned(std::move(data), std::move(warnings));
  }
  return Reply::of(std::move(data));
}

ParamSpec tracker_param() {
  return {.name = "tracker", .type = ParamType::String, .max = 64, .pattern = "^[a-z][a-z0-9_-]*$",
          .description = "github (default) or a plug-in named in config trackers"};
}
ParamSpec repo_param() {
  return {.name = "repo", .type = ParamType::String, .max = 200, .pattern = "^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$",
          .description = "OWNER/NAME; default: config trackers.<tracker>.repository"};
}

}  // namespace

void register_issues_sync(Registry& registry) {
  const auto sync_args = bind(
      field(&SyncArgs::tracker, tracker_param()), field(&SyncArgs::repo, repo_param()),
      field(&SyncArgs::dry_run, {.name = "dryRun", .type = ParamType::Bool,
                                 .description = "Only count what would change (default: true at a repository's first sync)"}),
      field(&SyncArgs::push, {.name = "push", .type = ParamType::Bool, .default_json = "true",
                              .description = "Also send what changed here"}),
      field(&SyncArgs::pull_requests, {.name = "pullRequests", .type = ParamType::Bool,
                                       .description = "Bring pull requests in as tasks too"}),
      field(&SyncArgs::resolve, {.name = "resolve", .type = ParamType::TaskId,
                                 .description = "A task whose sync conflict to resolve first"}),
      field(&SyncArgs::take, {.name = "take", .type = ParamType::Enum, .choices = {"here", "there"},
                              .description = "With resolve: keep the task's value (here) or the item's (there)"}),
      field(&SyncArgs::push_new, {.name = "pushNew", .type = ParamType::TaskId,
                                  .description = "A linked epic whose new tasks are created in the tracker"}),
      field(&SyncArgs::field, {.name = "field", .type = ParamType::Enum,
                               .choices = {"title", "description", "state", "labels", "acceptance"},
                               .description = "With resolve: only this field"}));
  registry.add({.domain = "issues", .name = "sync", .gateway = Gateway::Mutate,
                .summary = "Keep a tracker's issues and the tasks in step, both ways",
                .params = sync_args.specs(),
                .returns = "{tracker, repo, pulled, created, updated, pushed, comments (said there), notes (the tracker's "
                           "comments kept as notes), conflicts (open), longestWriteMs "
                           "(the longest write transaction), createdThere? (new tasks of a pushNew epic), newConflicts?[{id, key, fields{field: {base, here, there}}}], "
                           "refused?[{id, key, field, message, fix}] (values the tracker refused: sent again next time)}; dry run: "
                           "{dryRun, pulled, wouldCreate, wouldUpdate}",
                .errors = {ErrorCode::EngineFailed, ErrorCode::Timeout, ErrorCode::NotFound},
                .examples = {{R"({"repo":"octo/app"})", "what a first sync would bring in"},
                             {R"({"repo":"octo/app","dryRun":false})", "bring the issues in and push what changed"},
                             {R"({"repo":"octo/app","resolve":"T012","take":"here"})", "keep the task's side of a conflict"}},
                .engine = EngineKind::Hybrid, .tier = 2, .shortcut = "sync github",
                .external = sync_args.handler(sync_external),
                // Pages of a thousand issues and the rate limits' waits: minutes, not a reply's wait.
                .runs_long = [](const json::Value& params) { return params["dryRun"] != json::Value(true); }});
  const auto status_args = bind(field(&StatusArgs::tracker, tracker_param()), field(&StatusArgs::repo, repo_param()));
  registry.add({.domain = "issues", .name = "sync.status", .gateway = Gateway::Query,
                .summary = "Show what is out of step with a tracker, and its conflicts",
                .params = status_args.specs(),
                .returns = "{tracker, repo, linked, last?{pulled, created, updated, pushed, conflicts, at, checkedSeq}, "
                           "outOfStep[{id, key, state, push?[fields], pull?[fields], refused?}], conflicts[{id, key, state, conflict}]}",
                .examples = {{R"({"repo":"octo/app"})", "what the next sync would do, and the conflicts"}},
                .idempotent = true, .tier = 2, .shortcut = "sync status", .handler = status_args.handler(sync_status)});
}

}  // namespace ct
