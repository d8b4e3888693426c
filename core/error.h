// Error values shared by every layer: a stable code, the exit code it maps to, a message, and
// what the caller can do next. Codes are never renumbered; `retryable` is derived from the code.
#pragma once

#include <expected>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/advice.h"
#include "core/json.h"

namespace ct {

/// Stable error identities. The numeric value is the code's identity and never changes;
/// the process exit code comes from the table in error.cpp (several codes may share one).
enum class ErrorCode : int {
  // 1–8 general
  General = 1,                 // unspecified failure
  InvalidInput = 2,            // bad arguments
  FileError = 3,               // filesystem or database file failure
  NotFound = 4,                // the named resource does not exist
  DependencyError = 5,         // a required program or library is missing
  Validation = 6,              // data violates a rule
  LockTimeout = 7,             // the store stayed locked past the busy timeout
  ConfigError = 8,             // configuration is invalid
  // 10–19 hierarchy
  ParentNotFound = 10,         // parent task does not exist
  DepthExceeded = 11,          // hierarchy deeper than hierarchy.maxDepth
  SiblingLimit = 12,           // hierarchy.maxSiblings reached
  InvalidParentType = 13,      // a subtask cannot have children
  CircularReference = 14,      // dependency or parent cycle
  OrphanDetected = 15,         // a task points at a missing parent
  HasChildren = 16,            // operation needs a children strategy
  TaskCompleted = 17,          // task is done; the operation does not apply
  CascadeFailed = 18,          // a cascade stopped part-way
  HasDependents = 19,          // other tasks depend on this one
  // 20–23 concurrency and drift
  ChecksumMismatch = 20,       // data changed between read and write
  ConcurrentModification = 21, // ifVersion did not match the row version
  IdCollision = 22,            // id allocation collided
  Outdated = 23,               // a generated file (injected instructions) differs from what CLEO renders now
  // 24, 26 the fleet (issue 53)
  PathReserved = 24,           // a path overlaps another session's live reservation (reservations.mode strict)
  RateLimited = 26,            // a sender sent more than messages.perMinute (retryable by its retryAfter)
  // 29 principals (issue 52)
  SessionOwned = 29,           // the session belongs to another caller (another connection or agent)
  // 30–39 session
  SessionExists = 30,
  SessionNotFound = 31,
  ScopeConflict = 32,
  ScopeInvalid = 33,
  TaskNotInScope = 34,
  TaskClaimed = 35,
  SessionRequired = 36,
  SessionCloseBlocked = 37,
  ActiveTaskRequired = 38,
  NotesRequired = 39,
  // 40–47 verification gates
  VerificationInitFailed = 40,
  GateUpdateFailed = 41,
  InvalidGate = 42,
  InvalidAgent = 43,
  MaxRoundsExceeded = 44,
  GateDependency = 45,
  VerificationLocked = 46,
  RoundMismatch = 47,
  // 50–54 context budget
  ContextWarning = 50,
  ContextCaution = 51,
  ContextCritical = 52,
  ContextEmergency = 53,
  ContextStale = 54,
  // 60–70 protocol violations
  ProtocolResearch = 60,
  ProtocolConsensus = 61,
  ProtocolSpecification = 62,
  ProtocolDecomposition = 63,
  ProtocolImplementation = 64,
  ProtocolContribution = 65,
  ProtocolRelease = 66,
  ProtocolGeneric = 67,
  ProtocolValidation = 68,
  TestsSkipped = 69,
  CoverageInsufficient = 70,
  // 80–84 lifecycle
  LifecycleGateFailed = 80,
  AuditMissing = 81,
  CircularValidation = 82,
  LifecycleTransitionInvalid = 83,
  ProvenanceRequired = 84,
  // 85–88 evidence (issue 35)
  EvidenceInvalid = 85,        // an evidence atom failed its check when recorded
  EvidenceStale = 86,          // recorded evidence no longer holds (a file changed, a commit is gone)
  EvidenceUnverified = 87,     // strict evidence: a required gate needs checked evidence
  AcCoverageIncomplete = 88,   // strict evidence: an acceptance criterion is neither covered nor waived
  // 89 attestation (issue 54)
  ConstraintUnknown = 89,      // memory.applied named a constraint the entry does not have (retry with a valid one)
  // 100–103 successful outcomes that carry a note
  NoData = 100,
  AlreadyExists = 101,
  NoChange = 102,
  Proposed = 103,              // approval.required: the call was kept as a proposal for a person
  // 200+ gateway and engine errors (identities only; their exit codes are in the table)
  InvalidGateway = 200,        // query tool used for a mutate operation or vice versa
  InvalidDomain = 201,         // unknown domain
  InvalidOperation = 202,      // unknown operation in a known domain
  InvalidParams = 203,         // parameters do not match the operation's spec
  MutationDisabled = 204,      // read-only mode
  CapabilityUnavailable = 205, // the engine serving the operation is not available here
  EngineFailed = 206,          // an engine failed while serving the operation
  Timeout = 207,               // an engine exceeded its time limit
  Internal = 208,              // a bug: an invariant was broken
  NotInitialized = 209,        // no .cleo/ project found
  StoreUnavailable = 210,      // the store's server is down, restarting or unreachable (transient)
};

struct ErrorInfo {
  ErrorCode code;
  std::string_view name;  // wire name, e.g. "E_NOT_FOUND"
  int exit_code;
  bool retryable;
  std::string_view summary;
};

/// The one table of codes. Order follows ErrorCode.
std::span<const ErrorInfo> error_table();
const ErrorInfo& error_info(ErrorCode code);
std::string_view to_string(ErrorCode code);
/// "E_NOT_FOUND" → ErrorCode::NotFound; nullopt for an unknown name.
std::optional<ErrorCode> parse_error_code(std::string_view name);
int exit_code(ErrorCode code);
bool is_retryable(ErrorCode code);
/// Codes 100–103: the operation succeeded and the code is a note for the caller.
bool is_success_note(ErrorCode code);

struct Alternative {
  std::string action;     // what a person would call it: "List all tasks"
  std::string operation;  // "tasks.list"
};

struct Error {
  ErrorCode code = ErrorCode::Internal;
  std::string message;
  Advice fix;                             // what to do next: a concrete call where there is one
  std::vector<Alternative> alternatives;
  json::Value details = json::Value::object();
  /// A condition that ends by itself at a known time (a claim whose lease runs out): the same call
  /// may succeed this many seconds from now, so the error is retryable then, whatever its code.
  std::optional<std::int64_t> retry_after_seconds;

  Error() = default;
  Error(ErrorCode c, std::string msg) : code(c), message(std::move(msg)) {}

  // The builders of a temporary return a value, not a reference to it: `error =
  // std::move(error).with_detail(…)` then moves through a new Error instead of assigning the error
  // to itself (which emptied its message); a result left unused is a compile error, never an
  // error quietly emptied.
  Error& with_fix(Advice f) & { fix = std::move(f); return *this; }
  [[nodiscard]] Error with_fix(Advice f) && { fix = std::move(f); return std::move(*this); }
  [[nodiscard]] Error with_alternative(std::string action, std::string operation) && {
    alternatives.push_back({std::move(action), std::move(operation)});
    return std::move(*this);
  }
  [[nodiscard]] Error with_detail(std::string_view key, json::Value value) && {
    details.set(key, std::move(value));
    return std::move(*this);
  }
  /// A list of valid names plus the nearest one to `given`, as `details.valid` / `details.didYouMean`.
  [[nodiscard]] Error with_choices(std::string_view given, const std::vector<std::string>& valid) &&;

  int exit_code() const { return ct::exit_code(code); }
  bool retryable() const { return ct::is_retryable(code) || retry_after_seconds.has_value(); }
  [[nodiscard]] Error retry_after(std::int64_t seconds) && {
    retry_after_seconds = seconds;
    return std::move(*this);
  }
};

template <typename T>
using Result = std::expected<T, Error>;

inline std::unexpected<Error> fail(ErrorCode code, std::string message) {
  return std::unexpected<Error>(Error(code, std::move(message)));
}
inline std::unexpected<Error> fail(Error error) { return std::unexpected<Error>(std::move(error)); }

/// Levenshtein distance, for "did you mean".
std::size_t edit_distance(std::string_view a, std::string_view b);
/// The nearest candidate within a sensible distance, or empty.
std::string nearest(std::string_view given, const std::vector<std::string>& candidates);

}  // namespace ct

/// Propagate an error from an expression returning Result<T>; binds the value to `var`.
#define CT_TRY_CONCAT_(a, b) a##b
#define CT_TRY_CONCAT(a, b) CT_TRY_CONCAT_(a, b)
#define CT_TRY_ASSIGN(var, expr)                                         \
  auto CT_TRY_CONCAT(ct_try_, __LINE__) = (expr);                        \
  if (!CT_TRY_CONCAT(ct_try_, __LINE__))                                 \
    return std::unexpected(std::move(CT_TRY_CONCAT(ct_try_, __LINE__).error())); \
  var = std::move(*CT_TRY_CONCAT(ct_try_, __LINE__))
/// Propagate an error from an expression returning Result<void> (or any Result, value ignored).
#define CT_TRY(expr)                                                     \
  do {                                                                   \
    auto ct_try_result_ = (expr);                                        \
    if (!ct_try_result_) return std::unexpected(std::move(ct_try_result_.error())); \
  } while (0)
