// The session tree (issue 54, seed 002): a parent session delegates an intent and a scope — its
// tasks (the child's session scope) and the paths it may touch — to a child session, which another
// agent resumes and works in; the child's end is its report, which reaches the parent as a message
// (domains/messages.h) and stays on the child for session.show of the parent. Only the parent's
// caller (its owner, as the transport established it) or a person acts for a child it no longer
// owns; a child's scope stays inside its parent's.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "domains/context.h"
#include "domains/registry.h"
#include "engines/rules/session_engine.h"

namespace ct::session {

/// What a parent hands a child.
struct Delegation {
  std::string parent;
  std::string intent;
  std::vector<std::string> paths;
};

/// session.start {parent, goal, paths?}: a child of `delegation.parent` (the caller's, or any for
/// a person) with `scope` inside the parent's, made suspended until its agent resumes it; the
/// caller stays bound where it was. {id, status}.
Result<Reply> start_child(Context& context, const std::string& scope, const std::string& name, const std::string& agent,
                          const Delegation& delegation);

/// Whether the caller may act for `session` as its parent's owner (session.end, note, suspend of a
/// child the caller started for another agent).
Result<bool> acts_for_child(Context& context, const Session& session);

/// When `session` is a child that just finished: its `notes` become its report, sent to the parent
/// session as a message.
Result<void> report_to_parent(Context& context, const Session& session, const std::string& notes);

/// {parent, goal, paths?, report?} of a child session; null for a session without a parent.
Result<json::Value> delegated_json(Context& context, const std::string& id);

/// [{id, status, agent?, goal, paths?, report?, writes}] of a parent's children (null when none):
/// `writes` counts their audit rows (session.history {id, children:true} reads them).
Result<json::Value> children_json(Context& context, const std::string& parent, bool with_writes);

/// The sessions of the tree under `root` (itself first, then its children, theirs…), at most `cap`.
Result<std::vector<std::string>> subtree(Context& context, const std::string& root, std::size_t cap);

/// The parent of each of `ids` that has one.
Result<std::map<std::string, std::string>> parents_of(Context& context, const std::vector<std::string>& ids);

}  // namespace ct::session
