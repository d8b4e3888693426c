// TaskStore::expect: the reads a call makes next, named by the role methods that make them, turned
// into the statements those methods run — the same text, the same values — and handed to the
// runner to send ahead (sql::Runner::read_ahead) where that saves round trips.
#include <span>
#include <vector>

#include "engines/store/lifecycle_store.h"
#include "engines/store/message_store.h"
#include "engines/store/research_store.h"
#include "engines/store/task_store.h"
#include "engines/store/tracker_store.h"
#include "engines/store/trust_store.h"

namespace ct {

void TaskStore::expect(std::initializer_list<Expected> reads) {
  sql::Runner& runner = sql_runner();
  if (!runner.reads_ahead()) return;  // in-process (SQLite): nothing to save, nothing built
  // What each statement is and binds, as its role method builds them (the runner copies them).
  std::vector<std::string> texts;
  std::vector<sql::Args> values(reads.size());
  std::vector<sql::Runner::StatementRef> statements;
  texts.reserve(reads.size());
  statements.reserve(reads.size());
  std::size_t i = 0;
  for (const Expected& read : reads) {
    sql::Args& bound = values[i++];
    switch (read.read) {
      case ExpectedRead::Task:
        bound.bind(read.of);
        statements.push_back({get_task_sql(), bound, "cannot read a task"});
        break;
      case ExpectedRead::Claim:
        bound.bind(read.of);
        statements.push_back({claim_on_sql(), bound, "cannot read focus"});
        break;
      case ExpectedRead::TaskThreadSize:
        bound.bind("task").bind(read.of).bind(sql::limit_of(MessageStore::kUncapped));
        statements.push_back({MessageStore::kThreadSizeSql, bound, "cannot count the thread"});
        break;
      case ExpectedRead::TaskLinks:
        bound.bind(read.of);
        statements.push_back({TrackerStore::task_links_sql(), bound, "cannot read the task's tracker links"});
        break;
      case ExpectedRead::OpenChildCount:
        texts.push_back(count_tasks_sql(open_children_filter(read.of), bound));
        statements.push_back({texts.back(), bound, "cannot count tasks"});
        break;
      case ExpectedRead::MaxPosition:
        if (!read.of.empty()) bound.bind(read.of);
        statements.push_back({max_position_sql(read.of.empty()), bound, "cannot read positions"});
        break;
      case ExpectedRead::Research:
        bound.bind(read.of);
        statements.push_back({ResearchStore::kResearchForTaskSql, bound, "cannot read research links"});
        break;
      case ExpectedRead::Gates:
      case ExpectedRead::Stages:
        bound.bind(read.of).bind(to_string(read.read == ExpectedRead::Gates ? LifecycleKind::Gate : LifecycleKind::Stage));
        statements.push_back({LifecycleStore::lifecycle_states_sql(), bound, "cannot read lifecycle states"});
        break;
      case ExpectedRead::Evidence:
        bound.bind(read.of);
        statements.push_back({TrustStore::task_evidence_sql(false), bound, "cannot read the task's evidence"});
        break;
    }
  }
  runner.read_ahead(statements);
}

}  // namespace ct
