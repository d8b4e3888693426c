// The operations that a suggestion made below the edges may name (core/advice.h: call()),
// declared once. call() takes a name only when it is listed here — any other name does not
// compile — and the product checks every name against its registry when it starts
// (domains/call_check.h: check_suggested_operations), so no fix can name an operation that was
// renamed or removed.
#pragma once

#include <string_view>

namespace ct {

inline constexpr std::string_view kSuggestedOperations[] = {
    "lifecycle.check", "lifecycle.gate.pass", "lifecycle.gates", "lifecycle.record", "lifecycle.reset",
    "lifecycle.skip",
    "memory.applied", "memory.find", "memory.observe", "memory.show", "memory.supersede", "memory.timeline",
    "memory.update",
    "orchestrate.ready", "orchestrate.spawn", "orchestrate.validate",
    "plan.apply", "plan.begin", "plan.diff", "plan.discard", "plan.list", "plan.rebase", "plan.resolve",
    "release.changelog", "release.create", "release.list", "release.plan", "release.rollback", "release.tag",
    "research.add", "research.archive", "research.find", "research.link", "research.show", "research.unlink",
    "session.ack", "session.end", "session.gc", "session.inbox", "session.list", "session.note", "session.resume",
    "session.send", "session.show", "session.start",
    "skills.list",
    "system.backup", "system.changes", "system.config.get", "system.config.set", "system.health", "system.help",
    "system.init", "system.log", "system.proposal.list", "system.restore", "system.version",
    "tasks.add", "tasks.analyze", "tasks.archive", "tasks.blockers", "tasks.complete", "tasks.delete", "tasks.deps",
    "tasks.evidence", "tasks.find", "tasks.history", "tasks.import", "tasks.list", "tasks.next", "tasks.promote",
    "tasks.reopen", "tasks.reparent", "tasks.restore", "tasks.show", "tasks.start", "tasks.stop", "tasks.tree",
    "tasks.undo", "tasks.update",
    "validate.audit", "validate.compliance", "validate.compliance.record", "validate.fix", "validate.protocol",
    "validate.schema", "validate.test.run",
};

/// A name kSuggestedOperations lists, checked where the program is compiled.
class OperationName {
 public:
  consteval OperationName(const char* name) : name_(name) {
    bool listed = false;
    for (std::string_view known : kSuggestedOperations) listed = listed || known == name_;
    // Not a constant expression, so a call() naming an undeclared operation does not compile.
    if (!listed) throw "call() names an operation kSuggestedOperations does not list (core/suggested_operations.h)";
  }
  std::string_view view() const { return name_; }

 private:
  std::string_view name_;
};

}  // namespace ct
