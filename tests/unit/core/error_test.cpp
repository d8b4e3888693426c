// Integrity of the one error table (in the spirit of DuckDB's verify_enum_integrity.py) and the
// "did you mean" helpers.
//
// Two independent checks guard the table: an explicit list of every enumerator kept in this file,
// and a compile-time scan of the enum's values 0..kScanLimit-1 (GCC/Clang name enumerators in
// __PRETTY_FUNCTION__). Adding an ErrorCode without a table row, or a row without updating this
// list, fails here.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"

namespace {

using ct::ErrorCode;

struct Expected {
  ErrorCode code;
  std::string_view enumerator;
};

// Every enumerator of ErrorCode. Keep in declaration order.
constexpr std::array kAllCodes = std::to_array<Expected>({
    {ErrorCode::General, "General"},
    {ErrorCode::InvalidInput, "InvalidInput"},
    {ErrorCode::FileError, "FileError"},
    {ErrorCode::NotFound, "NotFound"},
    {ErrorCode::DependencyError, "DependencyError"},
    {ErrorCode::Validation, "Validation"},
    {ErrorCode::LockTimeout, "LockTimeout"},
    {ErrorCode::ConfigError, "ConfigError"},
    {ErrorCode::ParentNotFound, "ParentNotFound"},
    {ErrorCode::DepthExceeded, "DepthExceeded"},
    {ErrorCode::SiblingLimit, "SiblingLimit"},
    {ErrorCode::InvalidParentType, "InvalidParentType"},
    {ErrorCode::CircularReference, "CircularReference"},
    {ErrorCode::OrphanDetected, "OrphanDetected"},
    {ErrorCode::HasChildren, "HasChildren"},
    {ErrorCode::TaskCompleted, "TaskCompleted"},
    {ErrorCode::CascadeFailed, "CascadeFailed"},
    {ErrorCode::HasDependents, "HasDependents"},
    {ErrorCode::ChecksumMismatch, "ChecksumMismatch"},
    {ErrorCode::ConcurrentModification, "ConcurrentModification"},
    {ErrorCode::IdCollision, "IdCollision"},
    {ErrorCode::Outdated, "Outdated"},
    {ErrorCode::PathReserved, "PathReserved"},
    {ErrorCode::RateLimited, "RateLimited"},
    {ErrorCode::SessionOwned, "SessionOwned"},
    {ErrorCode::SessionExists, "SessionExists"},
    {ErrorCode::SessionNotFound, "SessionNotFound"},
    {ErrorCode::ScopeConflict, "ScopeConflict"},
    {ErrorCode::ScopeInvalid, "ScopeInvalid"},
    {ErrorCode::TaskNotInScope, "TaskNotInScope"},
    {ErrorCode::TaskClaimed, "TaskClaimed"},
    {ErrorCode::SessionRequired, "SessionRequired"},
    {ErrorCode::SessionCloseBlocked, "SessionCloseBlocked"},
    {ErrorCode::ActiveTaskRequired, "ActiveTaskRequired"},
    {ErrorCode::NotesRequired, "NotesRequired"},
    {ErrorCode::VerificationInitFailed, "VerificationInitFailed"},
    {ErrorCode::GateUpdateFailed, "GateUpdateFailed"},
    {ErrorCode::InvalidGate, "InvalidGate"},
    {ErrorCode::InvalidAgent, "InvalidAgent"},
    {ErrorCode::MaxRoundsExceeded, "MaxRoundsExceeded"},
    {ErrorCode::GateDependency, "GateDependency"},
    {ErrorCode::VerificationLocked, "VerificationLocked"},
    {ErrorCode::RoundMismatch, "RoundMismatch"},
    {ErrorCode::ContextWarning, "ContextWarning"},
    {ErrorCode::ContextCaution, "ContextCaution"},
    {ErrorCode::ContextCritical, "ContextCritical"},
    {ErrorCode::ContextEmergency, "ContextEmergency"},
    {ErrorCode::ContextStale, "ContextStale"},
    {ErrorCode::ProtocolResearch, "ProtocolResearch"},
    {ErrorCode::ProtocolConsensus, "ProtocolConsensus"},
    {ErrorCode::ProtocolSpecification, "ProtocolSpecification"},
    {ErrorCode::ProtocolDecomposition, "ProtocolDecomposition"},
    {ErrorCode::ProtocolImplementation, "ProtocolImplementation"},
    {ErrorCode::ProtocolContribution, "ProtocolContribution"},
    {ErrorCode::ProtocolRelease, "ProtocolRelease"},
    {ErrorCode::ProtocolGeneric, "ProtocolGeneric"},
    {ErrorCode::ProtocolValidation, "ProtocolValidation"},
    {ErrorCode::TestsSkipped, "TestsSkipped"},
    {ErrorCode::CoverageInsufficient, "CoverageInsufficient"},
    {ErrorCode::LifecycleGateFailed, "LifecycleGateFailed"},
    {ErrorCode::AuditMissing, "AuditMissing"},
    {ErrorCode::CircularValidation, "CircularValidation"},
    {ErrorCode::LifecycleTransitionInvalid, "LifecycleTransitionInvalid"},
    {ErrorCode::ProvenanceRequired, "ProvenanceRequired"},
    {ErrorCode::EvidenceInvalid, "EvidenceInvalid"},
    {ErrorCode::EvidenceStale, "EvidenceStale"},
    {ErrorCode::EvidenceUnverified, "EvidenceUnverified"},
    {ErrorCode::AcCoverageIncomplete, "AcCoverageIncomplete"},
    {ErrorCode::ConstraintUnknown, "ConstraintUnknown"},
    {ErrorCode::NoData, "NoData"},
    {ErrorCode::AlreadyExists, "AlreadyExists"},
    {ErrorCode::NoChange, "NoChange"},
    {ErrorCode::Proposed, "Proposed"},
    {ErrorCode::InvalidGateway, "InvalidGateway"},
    {ErrorCode::InvalidDomain, "InvalidDomain"},
    {ErrorCode::InvalidOperation, "InvalidOperation"},
    {ErrorCode::InvalidParams, "InvalidParams"},
    {ErrorCode::MutationDisabled, "MutationDisabled"},
    {ErrorCode::CapabilityUnavailable, "CapabilityUnavailable"},
    {ErrorCode::EngineFailed, "EngineFailed"},
    {ErrorCode::Timeout, "Timeout"},
    {ErrorCode::Internal, "Internal"},
    {ErrorCode::NotInitialized, "NotInitialized"},
    {ErrorCode::StoreUnavailable, "StoreUnavailable"},
});

// ---- compile-time scan of the enum ---------------------------------------------------------

constexpr int kScanLimit = 512;  // raise if codes ever go beyond it (the test below checks)

template <ErrorCode V>
constexpr std::string_view pretty_name() {
  return __PRETTY_FUNCTION__;  // "... [with ct::ErrorCode V = ct::ErrorCode::NotFound; ...]"
}

// The enumerator's bare name, or empty when the value names no enumerator ("(ct::ErrorCode)9").
template <ErrorCode V>
std::string_view enumerator_name() {
  std::string_view text = pretty_name<V>();
  auto start = text.find("V = ");
  if (start == std::string_view::npos) return {};
  start += 4;
  auto end = text.find_first_of(";]", start);
  std::string_view value = text.substr(start, end - start);
  if (value.empty() || value.front() == '(') return {};
  auto colons = value.rfind("::");
  return colons == std::string_view::npos ? value : value.substr(colons + 2);
}

template <int... I>
std::map<int, std::string_view> scan_enum(std::integer_sequence<int, I...>) {
  std::map<int, std::string_view> found;
  ((enumerator_name<static_cast<ErrorCode>(I)>().empty()
        ? void()
        : void(found.emplace(I, enumerator_name<static_cast<ErrorCode>(I)>()))),
   ...);
  return found;
}

std::map<int, std::string_view> declared_enumerators() {
  return scan_enum(std::make_integer_sequence<int, kScanLimit>{});
}

// "ConcurrentModification" → "E_CONCURRENT_MODIFICATION".
std::string wire_name_for(std::string_view enumerator) {
  std::string out = "E_";
  for (std::size_t i = 0; i < enumerator.size(); ++i) {
    char c = enumerator[i];
    if (c >= 'A' && c <= 'Z') {
      if (i > 0) out += '_';
      out += c;
    } else {
      out += static_cast<char>(c - 'a' + 'A');
    }
  }
  return out;
}

int number(ErrorCode code) { return static_cast<int>(code); }

}  // namespace

TEST_CASE("the enum scan sees every enumerator of ErrorCode", "[core][error]") {
  auto declared = declared_enumerators();
  REQUIRE_FALSE(declared.empty());
  CHECK(declared.at(4) == "NotFound");  // the scan itself works on this compiler

  // The explicit list and the declared enum agree both ways.
  std::map<int, std::string_view> listed;
  for (const auto& e : kAllCodes) {
    INFO("listed twice: " << e.enumerator);
    CHECK(listed.emplace(number(e.code), e.enumerator).second);
  }
  for (const auto& [value, name] : declared) {
    INFO("ErrorCode::" << name << " = " << value << " is missing from this test's kAllCodes");
    CHECK(listed.count(value) == 1);
    if (listed.count(value)) CHECK(listed.at(value) == name);
  }
  for (const auto& [value, name] : listed) {
    INFO("kAllCodes names " << name << " = " << value << ", which the enum does not declare");
    CHECK(declared.count(value) == 1);
  }
  CHECK(std::max_element(kAllCodes.begin(), kAllCodes.end(), [](const auto& a, const auto& b) {
          return number(a.code) < number(b.code);
        })->code < static_cast<ErrorCode>(kScanLimit));
}

TEST_CASE("every ErrorCode appears in the table exactly once", "[core][error]") {
  auto table = ct::error_table();
  CHECK(table.size() == kAllCodes.size());
  for (const auto& e : kAllCodes) {
    auto rows = std::count_if(table.begin(), table.end(),
                              [&](const ct::ErrorInfo& info) { return info.code == e.code; });
    INFO("ErrorCode::" << e.enumerator);
    CHECK(rows == 1);
    CHECK(ct::error_info(e.code).code == e.code);
  }
  // Rows follow the enum's order.
  for (std::size_t i = 1; i < table.size(); ++i) {
    INFO("row " << i << ": " << table[i].name);
    CHECK(number(table[i - 1].code) < number(table[i].code));
  }
}

TEST_CASE("wire names are unique, well-formed and derived from the enumerator", "[core][error]") {
  const std::regex pattern("^E_[A-Z_]+$");
  std::set<std::string_view> seen;
  for (const auto& e : kAllCodes) {
    std::string_view name = ct::to_string(e.code);
    INFO("ErrorCode::" << e.enumerator << " → " << name);
    CHECK(std::regex_match(std::string(name), pattern));
    CHECK(seen.insert(name).second);
    CHECK(name == wire_name_for(e.enumerator));
    CHECK_FALSE(ct::error_info(e.code).summary.empty());
  }
}

TEST_CASE("exit codes", "[core][error]") {
  for (const auto& e : kAllCodes) {
    INFO("ErrorCode::" << e.enumerator);
    int code = number(e.code);
    int exit = ct::exit_code(e.code);
    CHECK(exit >= 1);
    CHECK(exit <= 255);
    if (code >= 1 && code <= 103) CHECK(exit == code);
    CHECK(ct::Error(e.code, "x").exit_code() == exit);
  }
  // Spot checks from docs/architecture.md §3.3.
  CHECK(ct::exit_code(ErrorCode::InvalidInput) == 2);
  CHECK(ct::exit_code(ErrorCode::NotFound) == 4);
  CHECK(ct::exit_code(ErrorCode::LockTimeout) == 7);
  CHECK(ct::exit_code(ErrorCode::HasDependents) == 19);
  CHECK(ct::exit_code(ErrorCode::NotesRequired) == 39);
  CHECK(ct::exit_code(ErrorCode::ProvenanceRequired) == 84);
  CHECK(ct::to_string(ErrorCode::NotFound) == "E_NOT_FOUND");
  CHECK(ct::to_string(ErrorCode::NoChange) == "E_NO_CHANGE");
}

TEST_CASE("success notes are exactly 100 to 103", "[core][error]") {
  std::set<int> notes;
  for (const auto& e : kAllCodes)
    if (ct::is_success_note(e.code)) notes.insert(number(e.code));
  CHECK(notes == std::set<int>{100, 101, 102, 103});
}

TEST_CASE("the retryable set is exactly the transient failures", "[core][error]") {
  std::set<ErrorCode> retryable;
  for (const auto& e : kAllCodes) {
    if (ct::Error(e.code, "x").retryable()) retryable.insert(e.code);
  }
  // docs/architecture.md §3.3, written out independently of the table: 7, 20–22 and transient engine and
  // store-server failures, and 89, whose details name what to retry with.
  CHECK(retryable == std::set<ErrorCode>{ErrorCode::LockTimeout, ErrorCode::ChecksumMismatch,
                                         ErrorCode::ConcurrentModification, ErrorCode::IdCollision,
                                         ErrorCode::Timeout, ErrorCode::StoreUnavailable,
                                         ErrorCode::ConstraintUnknown});
}

TEST_CASE("edit_distance", "[core][error]") {
  CHECK(ct::edit_distance("", "") == 0);
  CHECK(ct::edit_distance("abc", "") == 3);
  CHECK(ct::edit_distance("", "abc") == 3);
  CHECK(ct::edit_distance("list", "list") == 0);
  CHECK(ct::edit_distance("lsit", "list") == 1);  // two neighbours swapped: one slip
  CHECK(ct::edit_distance("ad", "add") == 1);
  CHECK(ct::edit_distance("kitten", "sitting") == 3);
  CHECK(ct::edit_distance("flaw", "lawn") == 2);
  CHECK(ct::edit_distance("abc", "xyz") == 3);
  CHECK(ct::edit_distance("show", "shw") == 1);
  // Symmetric.
  CHECK(ct::edit_distance("complete", "compleet") == ct::edit_distance("compleet", "complete"));
}

TEST_CASE("nearest suggests the closest candidate or nothing", "[core][error]") {
  const std::vector<std::string> ops = {"add", "list", "show", "update", "complete", "delete",
                                        "find"};
  CHECK(ct::nearest("lsit", ops) == "list");
  CHECK(ct::nearest("ad", ops) == "add");
  CHECK(ct::nearest("ls", ops) == "list");
  CHECK(ct::nearest("shwo", ops) == "show");
  CHECK(ct::nearest("compelte", ops) == "complete");
  CHECK(ct::nearest("updte", ops) == "update");
  CHECK(ct::nearest("list", ops) == "list");
  CHECK(ct::nearest("xyzzyq", ops).empty());
  CHECK(ct::nearest("frobnicate", ops).empty());
  CHECK(ct::nearest("", ops).empty());
  CHECK(ct::nearest("list", {}).empty());
}

TEST_CASE("nearest ranks slips above look-alikes (issue 17)", "[core][error]") {
  const std::vector<std::string> commands = {"add", "complete", "completion", "gc", "list", "log", "delete",
                                             "remove", "start", "stats", "status"};
  // A word three edits from an operation is not taken for it.
  CHECK(ct::nearest("completion", {"add", "complete", "delete"}).empty());
  CHECK(ct::nearest("completon", commands) == "completion");
  CHECK(ct::nearest("compelte", commands) == "complete");
  // Two letters that share nothing with a command are not a guess for it.
  CHECK(ct::nearest("rm", {"gc", "log", "add"}).empty());
  CHECK(ct::nearest("rm", commands) == "remove");
  CHECK(ct::nearest("ls", commands) == "list");
  // Equal distances: the longer shared beginning wins.
  CHECK(ct::nearest("stat", commands) == "stats");
}

TEST_CASE("Error::with_choices fills valid and didYouMean and adds a hint", "[core][error]") {
  const std::vector<std::string> valid = {"add", "list", "show"};

  ct::Error error = ct::Error(ErrorCode::InvalidOperation, "unknown operation 'lsit'")
                        .with_choices("lsit", valid);
  CHECK(error.code == ErrorCode::InvalidOperation);
  CHECK(error.message == "unknown operation 'lsit' (did you mean 'list'?)");
  REQUIRE(error.details.is_object());
  CHECK(error.details["valid"].dump() == R"(["add","list","show"])");
  CHECK(error.details["didYouMean"] == ct::json::Value("list"));

  ct::Error far = ct::Error(ErrorCode::InvalidDomain, "unknown domain 'zzzzzzzz'")
                      .with_choices("zzzzzzzz", valid);
  CHECK(far.message == "unknown domain 'zzzzzzzz'");
  CHECK(far.details["valid"].size() == 3);
  CHECK_FALSE(far.details.contains("didYouMean"));

  // Other details survive, and the builder chain keeps everything.
  ct::Error chained = ct::Error(ErrorCode::InvalidParams, "bad status")
                          .with_detail("field", "status")
                          .with_choices("pendng", {"pending", "active", "done"})
                          .with_fix("ct list --status pending")
                          .with_alternative("List all tasks", "tasks.list");
  CHECK(chained.details.dump() ==
        R"({"field":"status","valid":["pending","active","done"],"didYouMean":"pending"})");
  CHECK(chained.fix.plain_text() == "ct list --status pending");
  REQUIRE(chained.alternatives.size() == 1);
  CHECK(chained.alternatives[0].operation == "tasks.list");
}

TEST_CASE("fail and CT_TRY propagate errors as values", "[core][error]") {
  auto parse_positive = [](int n) -> ct::Result<int> {
    if (n <= 0) return ct::fail(ErrorCode::InvalidInput, "not positive");
    return n;
  };
  auto doubled = [&](int n) -> ct::Result<int> {
    CT_TRY_ASSIGN(int value, parse_positive(n));
    return value * 2;
  };
  auto checked = [&](int n) -> ct::Result<void> {
    CT_TRY(parse_positive(n));
    return {};
  };
  CHECK(doubled(4).value() == 8);
  REQUIRE_FALSE(doubled(-1).has_value());
  CHECK(doubled(-1).error().code == ErrorCode::InvalidInput);
  CHECK(doubled(-1).error().message == "not positive");
  CHECK(checked(1).has_value());
  CHECK(checked(0).error().exit_code() == 2);

  ct::Error default_error;
  CHECK(default_error.code == ErrorCode::Internal);
  CHECK(default_error.details.is_object());
}
