#include "core/error.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <cstdint>
#include <optional>
#include <tuple>

namespace ct {
namespace {

constexpr std::array kErrors = std::to_array<ErrorInfo>({
    {ErrorCode::General, "E_GENERAL", 1, false, "unspecified failure"},
    {ErrorCode::InvalidInput, "E_INVALID_INPUT", 2, false, "bad arguments"},
    {ErrorCode::FileError, "E_FILE_ERROR", 3, false, "filesystem or database file failure"},
    {ErrorCode::NotFound, "E_NOT_FOUND", 4, false, "resource not found"},
    {ErrorCode::DependencyError, "E_DEPENDENCY_ERROR", 5, false, "required program missing"},
    {ErrorCode::Validation, "E_VALIDATION", 6, false, "data validation failed"},
    {ErrorCode::LockTimeout, "E_LOCK_TIMEOUT", 7, true, "store locked past the busy timeout"},
    {ErrorCode::ConfigError, "E_CONFIG_ERROR", 8, false, "configuration error"},
    {ErrorCode::ParentNotFound, "E_PARENT_NOT_FOUND", 10, false, "parent task missing"},
    {ErrorCode::DepthExceeded, "E_DEPTH_EXCEEDED", 11, false, "hierarchy too deep"},
    {ErrorCode::SiblingLimit, "E_SIBLING_LIMIT", 12, false, "sibling limit reached"},
    {ErrorCode::InvalidParentType, "E_INVALID_PARENT_TYPE", 13, false, "a subtask cannot have children"},
    {ErrorCode::CircularReference, "E_CIRCULAR_REFERENCE", 14, false, "cycle"},
    {ErrorCode::OrphanDetected, "E_ORPHAN_DETECTED", 15, false, "invalid parent reference"},
    {ErrorCode::HasChildren, "E_HAS_CHILDREN", 16, false, "task has children"},
    {ErrorCode::TaskCompleted, "E_TASK_COMPLETED", 17, false, "task already completed"},
    {ErrorCode::CascadeFailed, "E_CASCADE_FAILED", 18, false, "cascade stopped part-way"},
    {ErrorCode::HasDependents, "E_HAS_DEPENDENTS", 19, false, "other tasks depend on it"},
    {ErrorCode::ChecksumMismatch, "E_CHECKSUM_MISMATCH", 20, true, "data changed underneath"},
    {ErrorCode::ConcurrentModification, "E_CONCURRENT_MODIFICATION", 21, true, "modified by someone else"},
    {ErrorCode::IdCollision, "E_ID_COLLISION", 22, true, "id collision"},
    {ErrorCode::Outdated, "E_OUTDATED", 23, false, "generated instructions out of date"},
    {ErrorCode::PathReserved, "E_PATH_RESERVED", 24, false, "path reserved by another session"},
    {ErrorCode::RateLimited, "E_RATE_LIMITED", 26, false, "sent too fast (retryAfter)"},
    {ErrorCode::SessionOwned, "E_SESSION_OWNED", 29, false, "another caller's session"},
    {ErrorCode::SessionExists, "E_SESSION_EXISTS", 30, false, "session already exists"},
    {ErrorCode::SessionNotFound, "E_SESSION_NOT_FOUND", 31, false, "session not found"},
    {ErrorCode::ScopeConflict, "E_SCOPE_CONFLICT", 32, false, "scope conflicts with another session"},
    {ErrorCode::ScopeInvalid, "E_SCOPE_INVALID", 33, false, "bad or empty scope"},
    {ErrorCode::TaskNotInScope, "E_TASK_NOT_IN_SCOPE", 34, false, "task outside the session scope"},
    {ErrorCode::TaskClaimed, "E_TASK_CLAIMED", 35, false, "task active in another session"},
    {ErrorCode::SessionRequired, "E_SESSION_REQUIRED", 36, false, "write needs a session"},
    {ErrorCode::SessionCloseBlocked, "E_SESSION_CLOSE_BLOCKED", 37, false, "open tasks in scope"},
    {ErrorCode::ActiveTaskRequired, "E_ACTIVE_TASK_REQUIRED", 38, false, "no active task"},
    {ErrorCode::NotesRequired, "E_NOTES_REQUIRED", 39, false, "notes required"},
    {ErrorCode::VerificationInitFailed, "E_VERIFICATION_INIT_FAILED", 40, false, "verification init failed"},
    {ErrorCode::GateUpdateFailed, "E_GATE_UPDATE_FAILED", 41, false, "gate update failed"},
    {ErrorCode::InvalidGate, "E_INVALID_GATE", 42, false, "invalid gate"},
    {ErrorCode::InvalidAgent, "E_INVALID_AGENT", 43, false, "invalid agent"},
    {ErrorCode::MaxRoundsExceeded, "E_MAX_ROUNDS_EXCEEDED", 44, false, "escalate to a human"},
    {ErrorCode::GateDependency, "E_GATE_DEPENDENCY", 45, false, "prerequisite gate not passed"},
    {ErrorCode::VerificationLocked, "E_VERIFICATION_LOCKED", 46, false, "verification locked"},
    {ErrorCode::RoundMismatch, "E_ROUND_MISMATCH", 47, false, "round mismatch"},
    {ErrorCode::ContextWarning, "E_CONTEXT_WARNING", 50, false, "context 70-84% used"},
    {ErrorCode::ContextCaution, "E_CONTEXT_CAUTION", 51, false, "context 85-89% used"},
    {ErrorCode::ContextCritical, "E_CONTEXT_CRITICAL", 52, false, "context 90-94% used"},
    {ErrorCode::ContextEmergency, "E_CONTEXT_EMERGENCY", 53, false, "context 95%+ used"},
    {ErrorCode::ContextStale, "E_CONTEXT_STALE", 54, false, "context state stale"},
    {ErrorCode::ProtocolResearch, "E_PROTOCOL_RESEARCH", 60, false, "research protocol violated"},
    {ErrorCode::ProtocolConsensus, "E_PROTOCOL_CONSENSUS", 61, false, "consensus protocol violated"},
    {ErrorCode::ProtocolSpecification, "E_PROTOCOL_SPECIFICATION", 62, false, "specification protocol violated"},
    {ErrorCode::ProtocolDecomposition, "E_PROTOCOL_DECOMPOSITION", 63, false, "decomposition protocol violated"},
    {ErrorCode::ProtocolImplementation, "E_PROTOCOL_IMPLEMENTATION", 64, false, "implementation protocol violated"},
    {ErrorCode::ProtocolContribution, "E_PROTOCOL_CONTRIBUTION", 65, false, "contribution protocol violated"},
    {ErrorCode::ProtocolRelease, "E_PROTOCOL_RELEASE", 66, false, "release protocol violated"},
    {ErrorCode::ProtocolGeneric, "E_PROTOCOL_GENERIC", 67, false, "protocol violated"},
    {ErrorCode::ProtocolValidation, "E_PROTOCOL_VALIDATION", 68, false, "validation protocol violated"},
    {ErrorCode::TestsSkipped, "E_TESTS_SKIPPED", 69, false, "tests not run"},
    {ErrorCode::CoverageInsufficient, "E_COVERAGE_INSUFFICIENT", 70, false, "coverage insufficient"},
    {ErrorCode::LifecycleGateFailed, "E_LIFECYCLE_GATE_FAILED", 80, false, "prerequisite stages missing"},
    {ErrorCode::AuditMissing, "E_AUDIT_MISSING", 81, false, "audit missing"},
    {ErrorCode::CircularValidation, "E_CIRCULAR_VALIDATION", 82, false, "agent validating its own work"},
    {ErrorCode::LifecycleTransitionInvalid, "E_LIFECYCLE_TRANSITION_INVALID", 83, false, "invalid lifecycle transition"},
    {ErrorCode::ProvenanceRequired, "E_PROVENANCE_REQUIRED", 84, false, "provenance required"},
    {ErrorCode::EvidenceInvalid, "E_EVIDENCE_INVALID", 85, false, "evidence failed its check"},
    {ErrorCode::EvidenceStale, "E_EVIDENCE_STALE", 86, false, "recorded evidence no longer holds"},
    {ErrorCode::EvidenceUnverified, "E_EVIDENCE_UNVERIFIED", 87, false, "gate needs checked evidence"},
    {ErrorCode::AcCoverageIncomplete, "E_AC_COVERAGE_INCOMPLETE", 88, false, "acceptance criteria not covered"},
    {ErrorCode::ConstraintUnknown, "E_CONSTRAINT_UNKNOWN", 89, true, "unknown constraint"},
    {ErrorCode::NoData, "E_NO_DATA", 100, false, "empty result"},
    {ErrorCode::AlreadyExists, "E_ALREADY_EXISTS", 101, false, "already exists"},
    {ErrorCode::NoChange, "E_NO_CHANGE", 102, false, "nothing to change"},
    {ErrorCode::Proposed, "E_PROPOSED", 103, false, "kept for a person's approval"},
    {ErrorCode::InvalidGateway, "E_INVALID_GATEWAY", 2, false, "wrong tool for this operation"},
    {ErrorCode::InvalidDomain, "E_INVALID_DOMAIN", 2, false, "unknown domain"},
    {ErrorCode::InvalidOperation, "E_INVALID_OPERATION", 2, false, "unknown operation"},
    {ErrorCode::InvalidParams, "E_INVALID_PARAMS", 2, false, "parameters do not match the spec"},
    {ErrorCode::MutationDisabled, "E_MUTATION_DISABLED", 9, false, "read-only, or a person's act"},
    {ErrorCode::CapabilityUnavailable, "E_CAPABILITY_UNAVAILABLE", 5, false, "engine unavailable here"},
    {ErrorCode::EngineFailed, "E_ENGINE_FAILED", 1, false, "engine failed"},
    {ErrorCode::Timeout, "E_TIMEOUT", 1, true, "engine timed out"},
    {ErrorCode::Internal, "E_INTERNAL", 1, false, "internal error"},
    {ErrorCode::NotInitialized, "E_NOT_INITIALIZED", 3, false, "no CLEO project here"},
    {ErrorCode::StoreUnavailable, "E_STORE_UNAVAILABLE", 7, true, "store server down"},
});

}  // namespace

std::span<const ErrorInfo> error_table() { return kErrors; }

const ErrorInfo& error_info(ErrorCode code) {
  for (const auto& info : kErrors)
    if (info.code == code) return info;
  assert(false && "ErrorCode missing from the table");
  return kErrors.back();
}

std::string_view to_string(ErrorCode code) { return error_info(code).name; }
std::optional<ErrorCode> parse_error_code(std::string_view name) {
  for (const auto& info : kErrors)
    if (info.name == name) return info.code;
  return std::nullopt;
}

int exit_code(ErrorCode code) { return error_info(code).exit_code; }
bool is_retryable(ErrorCode code) { return error_info(code).retryable; }
bool is_success_note(ErrorCode code) {
  return code == ErrorCode::NoData || code == ErrorCode::AlreadyExists || code == ErrorCode::NoChange ||
         code == ErrorCode::Proposed;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // Optimal string alignment: insertions, deletions, substitutions and swaps of two neighbours,
  // each one edit — "lsit" is one slip of the fingers from "list", not two.
  std::vector<std::size_t> before(b.size() + 1), previous(b.size() + 1), row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      row[j] = std::min({previous[j] + 1, row[j - 1] + 1, previous[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) row[j] = std::min(row[j], before[j - 2] + 1);
    }
    before.swap(previous);
    previous.swap(row);
  }
  return previous[b.size()];
}

namespace {

/// Whether every letter of `short_form` appears in `word` in order, starting with the same
/// letter: "ls" → "list", "rm" → "remove", never "rm" → "gc".
bool abbreviates(std::string_view short_form, std::string_view word) {
  if (short_form.size() < 2 || short_form.size() >= word.size() || short_form.front() != word.front()) return false;
  std::size_t at = 0;
  for (char c : word)
    if (at < short_form.size() && c == short_form[at]) ++at;
  return at == short_form.size();
}

std::size_t common_prefix(std::string_view a, std::string_view b) {
  std::size_t n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
  return n;
}

}  // namespace

std::string nearest(std::string_view given, const std::vector<std::string>& candidates) {
  if (given.empty()) return {};
  // A guess is worth showing when it is a slip away: one edit in a short word, one in four in a
  // long one — so "completion" is not taken for "complete" (three edits), nor "rm" for "gc".
  const std::size_t allowed = std::max<std::size_t>(1, given.size() / 4);
  // Ranked by distance; among equals a letter left out ("lst") beats one too many ("ls"), then
  // the longer shared beginning wins.
  using Rank = std::tuple<std::size_t, bool, std::size_t>;  // distance, shorter than typed, -prefix
  std::string best;
  std::optional<Rank> best_rank;
  for (const auto& candidate : candidates) {
    // Far longer than the candidate: at least the difference away, and no abbreviation of it (a
    // 500 KB value is not compared character by character with every choice).
    if (given.size() > candidate.size() + allowed) continue;
    std::size_t d = edit_distance(given, candidate);
    // An abbreviation ("ls") or a leading part ("comp") is as good as one slip.
    if (abbreviates(given, candidate) || (given.size() >= 3 && candidate.starts_with(given))) d = std::min<std::size_t>(d, 1);
    if (d > allowed) continue;
    Rank rank{d, candidate.size() < given.size(), SIZE_MAX - common_prefix(given, candidate)};
    if (!best_rank || rank < *best_rank) {
      best_rank = rank;
      best = candidate;
    }
  }
  return best;
}

Error Error::with_choices(std::string_view given, const std::vector<std::string>& valid) && {
  json::Value list = json::Value::array();
  for (const auto& name : valid) list.push_back(name);
  details.set("valid", std::move(list));
  std::string guess = nearest(given, valid);
  if (!guess.empty()) {
    details.set("didYouMean", guess);
    message += " (did you mean '" + guess + "'?)";
  }
  return std::move(*this);
}

}  // namespace ct
