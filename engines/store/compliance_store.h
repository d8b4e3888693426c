// The compliance role of the storage seam (engines/store/store.h): recorded protocol-check
// results (validate.compliance*).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/error.h"
#include "engines/store/sql_runner.h"

namespace ct {

/// One recorded protocol-check result (validate.compliance.record).
struct ComplianceRecord {
  std::int64_t id = 0;                   // assigned by the store
  TimeMs at = 0;
  std::string task_id;                   // "" when the check was not about one task
  std::string check;                     // the check's name, e.g. "protocol.implementation"
  bool passed = false;
  std::optional<std::int64_t> score;     // 0–100, when the check grades
  std::string details;                   // JSON text, "" when none
  std::string session;
  std::string agent;
};

/// What compliance_summary sums over: each check, each agent, or each agent's results per check.
enum class ComplianceGroup { Check, Agent, CheckAndAgent };

struct ComplianceQuery {
  std::optional<std::int64_t> id;        // the one result with this id
  std::optional<std::string> task_id;
  std::optional<std::string> check;
  std::optional<std::string> agent;      // results attributed to this agent
  std::optional<TimeMs> since;           // results at or after this time
  std::optional<bool> passed;            // list_compliance only: only passes / only failures
  std::int64_t limit = -1;               // list_compliance only; newest first
  ComplianceGroup group = ComplianceGroup::Check;  // compliance_summary only
};

/// Results of one group (ComplianceQuery::group) over a ComplianceQuery.
struct ComplianceSummary {
  std::string check;                     // "" when grouped by agent alone
  std::string agent;                     // "" when grouped by check alone, or for results of no agent
  std::int64_t runs = 0;
  std::int64_t passed = 0;
  std::optional<double> average_score;   // over the results that carry a score
  TimeMs last_at = 0;
  bool last_passed = false;
};

/// Protocol-check results.
class ComplianceStore {
 public:
  [[nodiscard]] Result<std::int64_t> insert_compliance(const ComplianceRecord& record);
  /// One summary per group (query.group) over the query's filters (limit and passed ignored),
  /// ordered by check name, then agent.
  [[nodiscard]] Result<std::vector<ComplianceSummary>> compliance_summary(const ComplianceQuery& query);
  [[nodiscard]] Result<std::vector<ComplianceRecord>> list_compliance(const ComplianceQuery& query);

 protected:
  virtual sql::Runner& sql_runner() = 0;
  ~ComplianceStore() = default;  // a role of a Store: never owned or deleted through it
};

}  // namespace ct
