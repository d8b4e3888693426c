// The rules of tracker sync (issue 55): how an external item (engines/adapters/tracker.h) becomes a
// task's fields, and how each field is merged three ways — the value both sides agreed on at the
// last sync (the base, kept in tracker_links), the task's value here, the item's value there. The
// orchestration (pulling pages, one short write per page, pushing) is domains/issues/issues_sync.cpp.
//
// Mapping (docs/sync.md): title → title (clipped to 200), body → description (task-list lines
// taken out, clipped to 2000), `- [ ]`/`- [x]` lines → acceptance criteria, labels → labels
// (lowercased, characters a label may not hold become '-'), open → pending, closed+not_planned →
// cancelled, any other close → done; a milestone → an epic of its own; the parent item → the
// parent task; "blocked by" items and "depends on #n" in the body → dependencies; assignees and
// the author → metadata only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json.h"
#include "engines/adapters/tracker.h"
#include "engines/store/task.h"

namespace ct::tracker_sync {

/// The fields kept in step, in one side's terms (the task's): what a base holds.
struct Fields {
  std::string title;
  std::string description;
  std::string state;  // "open" | "done" | "cancelled"
  std::vector<std::string> labels;       // sorted, lowercase
  std::vector<std::string> acceptance;
  friend bool operator==(const Fields&, const Fields&) = default;
};

/// The field names, in the order replies list them.
inline constexpr std::string_view kFieldNames[] = {"title", "description", "state", "labels", "acceptance"};

/// An item's fields as a task would hold them.
Fields fields_of_item(const tracker::Item& item);
/// A task's fields.
Fields fields_of_task(const Task& task);
/// A task's state word for a status: done, cancelled, else open.
std::string_view state_of(TaskStatus status);
/// The label a task holds for a tracker's label ("good first issue" → "good-first-issue"); "" when
/// nothing of it can be a label.
std::string task_label(std::string_view label);
/// The numbers an item's body says it depends on ("depends on #12", "blocked by #3, #4").
std::vector<std::int64_t> referenced_dependencies(std::string_view body);
/// The task a body's marker names ("<!-- cleo:T012 -->", written into items created from tasks).
std::optional<std::string> marked_task(std::string_view body);
/// The marker written into an item created from `task_id`.
std::string marker(std::string_view task_id);

json::Value to_json(const Fields& fields);
/// A base read back; a field absent from `value` stays as in `fallback`.
Fields from_json(const json::Value& value, const Fields& fallback);
/// One field's value as JSON (a string, or a list for labels and acceptance).
json::Value field_value(const Fields& fields, std::string_view name);
/// Sets one field from its JSON value (as field_value writes it); false for an unknown name or shape.
bool set_field(Fields& fields, std::string_view name, const json::Value& value);

/// What the 3-way comparison decides for one link.
struct Merge {
  Fields here;                       // what the task should become (== task's fields when nothing is pulled)
  Fields there;                      // what the item should become
  Fields base;                       // the new base: the agreed values (a conflicting field keeps its old base)
  std::vector<std::string> pulled;   // fields the item changed, taken here
  std::vector<std::string> pushed;   // fields the task changed, to send there
  std::vector<std::string> agreed;   // fields both changed to the same value
  json::Value conflicts = json::Value::object();  // {field: {base, here, there}}: both changed, differently
};

/// Per field: unchanged on both sides → kept; changed on one side since `base` → that side wins;
/// changed on both to the same value → agreed; to different values → a conflict, neither side
/// changed and the base kept, so it is reported again until resolved.
Merge merge(const Fields& base, const Fields& here, const Fields& there);

/// Resolving a conflict: `take` "here" keeps the task's value (it is pushed at the next sync),
/// "there" the item's (it is pulled): the base of the field becomes the losing side's value.
/// False when `take` is neither or the field is not in conflict.
bool resolve(json::Value& base, const json::Value& conflict, std::string_view field, std::string_view take);

}  // namespace ct::tracker_sync
