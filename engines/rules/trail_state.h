// The tasks as the audit trail says they are: the after-value of the last change of each field of
// each task the live trail changed, read row by row while validate.audit verifies the chain, and
// compared with the tasks stored. The chain shows an edited trail; this shows a store edited
// behind the trail's back (a row of the tasks table changed, inserted or deleted by hand): its
// fields no longer read as the trail's last word on them.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/error.h"
#include "core/json.h"
#include "engines/store/audit_log.h"
#include "engines/store/task_store.h"

namespace ct {

class TrailState {
 public:
  /// Takes in one row of the trail, oldest first.
  void take(const AuditEntry& row);

  struct Difference {
    std::string id;
    std::string field;     // a task field, or "task" (the task itself: missing, or not in the trail)
    json::Value trail;     // what the trail's last change says
    json::Value stored;    // what the store holds
    std::int64_t seq = 0;  // the row of that change (0: none)
  };
  /// The tasks whose stored fields differ from the trail's last changes: a task the trail changed
  /// that is gone without its deletion, one deleted that is there, a field whose value is not the
  /// last change's after-value; and a task created after the trail's first row that no row
  /// created. `checked` is how many tasks were compared.
  Result<std::vector<Difference>> compare(TaskStore& tasks, std::int64_t& checked) const;

 private:
  struct Last {
    std::int64_t seq = 0;
    std::int64_t order = 0;  // the how-manieth change taken: later changes of one row come later
    json::Value after;
  };
  std::map<std::string, std::map<std::string, Last, std::less<>>> tasks_;  // id → field → last change
  TimeMs first_at_ = -1;                                                   // the oldest row read
  std::int64_t taken_ = 0;                                                 // changes taken so far
};

}  // namespace ct
