// The protocol stack of seed 003 (the original CLEO's lib/protocol-rules.ts, reference §5.3):
// research, consensus, specification, decomposition, implementation, contribution, release,
// validation and testing, each a list of rules with an id ("RSCH-006"), a level (MUST or SHOULD),
// what it requires and how to fix it, declared once in one table (protocols()) that
// validate.protocol, the docs and help read.
//
// check_protocol() evaluates one protocol's rules against evidence the caller collected (the
// subject task, its manifest entry, the output file, store facts): a failed MUST makes the
// report invalid, a failed SHOULD is a warning (invalid too with `strict`). A rule whose evidence
// this subject does not have is `skipped` with the reason, never passed; a report whose MUST
// rules were all skipped checked nothing and is not valid either. Score: 100 − 20 per failed
// MUST − 5 per failed SHOULD, at least 0. Nothing here touches the store.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/error.h"
#include "engines/store/compliance_store.h"
#include "engines/store/release_store.h"
#include "engines/store/research_store.h"
#include "engines/store/task.h"

namespace ct {

enum class Protocol { Research, Consensus, Specification, Decomposition, Implementation, Contribution, Release,
                      Validation, Testing };
enum class RuleLevel { Must, Should };
enum class RuleStatus { Pass, Fail, Skipped };

std::string_view to_string(Protocol protocol);   // "research"
std::string_view to_string(RuleLevel level);     // "MUST" | "SHOULD"
std::string_view to_string(RuleStatus status);   // "pass" | "fail" | "skipped"
std::optional<Protocol> parse_protocol(std::string_view name);
/// The nine names, in the stack's order (an Enum param's choices).
std::vector<std::string_view> protocol_names();

// ---- evidence -------------------------------------------------------------------------------

/// A file of the project as a rule reads it: its first bytes and the SHA-256 of all of it.
enum class FileState { Read, Missing, Outside, NotRegular, Unreadable };
std::string_view to_string(FileState state);  // "read" | "missing" | "outside" | "notRegular" | "unreadable"

struct ProjectFile {
  std::string path;                      // as named, relative to the project root
  FileState state = FileState::Missing;
  std::string content;                   // the first max_bytes bytes (when read)
  bool truncated = false;                // the file is longer than `content`
  std::uintmax_t size = 0;
  std::string sha256;                    // of the whole file, streamed (when read with checksum)
};

/// How much of a file the rules read: output files and task files are text a person could review.
inline constexpr std::size_t kMaxProtocolFileBytes = 256 * 1024;

/// Reads `relative` under `root`: Outside when the path, or a symbolic link on it, leads out of
/// the project (a rule never reads /etc/passwd because a manifest line named it). With
/// `checksum` false it stops after max_bytes and leaves sha256 empty (a task's files are searched,
/// never compared).
ProjectFile read_project_file(const std::filesystem::path& root, std::string_view relative,
                              std::size_t max_bytes = kMaxProtocolFileBytes, bool checksum = true);

/// The newest validate.test.run that counts for the subject (its own, or a project-wide run made
/// since the task was created), from the compliance table.
struct TestRunEvidence {
  TimeMs at = 0;
  bool passed = false;
  std::string task_id;                   // "" for a project-wide run
  std::optional<std::int64_t> failed;    // from the runner's summary line
  std::optional<double> coverage;        // percent, when the output had a coverage total
};

/// Another active task that lists one of the subject's files (contribution: session conflicts).
struct FileOverlap {
  std::string task_id;
  std::string file;
};

/// What the caller collected about one subject. Fields a protocol does not read may stay empty;
/// fields it reads must be collected (an empty optional means "none exists", not "not looked").
struct ProtocolEvidence {
  std::optional<Task> task;                      // the subject task
  std::optional<ResearchEntry> entry;            // the manifest entry of the output
  std::vector<std::string> missing_links;        // the entry's linkedTasks that name no task
  std::optional<ProjectFile> output;             // the entry's file
  std::vector<ProjectFile> task_files;           // the subject task's files (implementation, contribution)
  // decomposition: the unarchived tasks under the subject, its own depth (1 for a root task)
  // and the dependency cycles among them (engines/rules/graph.h).
  std::vector<Task> subtree;
  int depth = 1;
  std::vector<std::vector<std::string>> cycles;
  std::optional<TestRunEvidence> test_run;
  std::string test_command;                      // validate.testCommand
  std::int64_t coverage_threshold = 0;           // validate.coverageThreshold (0 = none)
  std::vector<ComplianceSummary> checks;         // the latest result of each check recorded about the task
  std::vector<std::string> required_gates;       // verification.required (contribution)
  std::vector<std::string> missing_gates;        // of those, the ones the task has not passed
  std::vector<FileOverlap> overlaps;
  std::optional<Release> release;                // the newest release that holds the task
  bool release_superseded = false;               // a release was shipped after it
  std::optional<ProjectFile> changelog;          // CHANGELOG.md
  std::vector<ProjectFile> version_files;        // VERSION, package.json, release.versionFile (those that exist)
};

// ---- rules and reports ----------------------------------------------------------------------

struct RuleOutcome {
  RuleStatus status = RuleStatus::Pass;
  std::string message;                   // why it failed or was skipped (or a note on a pass)
};

struct ProtocolInfo;
struct RuleInput {
  const ProtocolInfo& protocol;
  const ProtocolEvidence& evidence;
  std::string_view output_lower;         // the output file's text in lowercase ("" when unread)
};

struct ProtocolRule {
  std::string_view id;                   // "RSCH-006"
  RuleLevel level = RuleLevel::Must;
  std::string_view text;                 // what it requires
  /// What to do when it fails: a call or an edit. "{id}" and "{entryId}" stand for the subject.
  Advice fix;
  RuleOutcome (*check)(const RuleInput&) = nullptr;
  /// Raised when this rule fails instead of the protocol's code (testing: E_COVERAGE_INSUFFICIENT).
  std::optional<ErrorCode> code;
};

struct ProtocolInfo {
  Protocol protocol;
  std::string_view name;                 // "research"
  ErrorCode code;                        // E_PROTOCOL_RESEARCH (60) … E_TESTS_SKIPPED (69)
  std::string_view purpose;              // one line
  std::vector<std::string_view> agent_types;  // agentType values its manifest entries carry
  /// Its evidence is an output recorded in the manifest: without an entry its agentType rule fails
  /// (consensus, specification, validation, testing; research has RSCH-004 for it); the others
  /// check tasks and files, and an entry only adds its agentType.
  bool needs_entry = false;
  std::vector<ProtocolRule> rules;
};

/// The one table of the nine protocols and their rules.
std::span<const ProtocolInfo> protocols();
const ProtocolInfo& protocol_info(Protocol protocol);
/// The protocol an entry of `agent_type` is checked against when none is named ("research" →
/// research, "analysis" → consensus, …); nullopt for agent types no protocol owns alone.
std::optional<Protocol> protocol_for_agent_type(std::string_view agent_type);

struct RuleResult {
  const ProtocolRule* rule = nullptr;
  RuleStatus status = RuleStatus::Pass;
  std::string message;
  Advice fix;                            // the rule's fix with the subject filled in
};

struct ProtocolReport {
  Protocol protocol = Protocol::Research;
  bool strict = false;                   // SHOULD failures count as MUST failures
  std::vector<RuleResult> rules;         // in table order
  int score = 100;
  bool valid = true;
  int passed = 0, failed = 0, skipped = 0;
  /// The first failed rule that makes the report invalid; null when valid, or when invalid only
  /// because every MUST rule was skipped.
  const RuleResult* first_failure() const;
  /// The code a caller raises for an invalid report: the first failure's rule code, else the
  /// protocol's.
  ErrorCode error_code() const;
};

ProtocolReport check_protocol(Protocol protocol, const ProtocolEvidence& evidence, bool strict);

}  // namespace ct
