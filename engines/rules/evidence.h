// The rules of evidence (issue 35; engines/store/trust_store.h keeps the rows): what an atom of
// evidence may be, how a caller writes one, which acceptance criteria the atoms of a task cover or
// waive, and what verification.evidence asks for.
//
// An atom is one of: a commit (checked to exist in the project's git repository; whether HEAD
// reaches it is recorded), files (paths inside the project, each with its SHA-256), a test run (a
// validate.test.run record that passed), a pull request (checked through gh when it can be,
// otherwise recorded unverified) or a note (free text, never verified). A commit or files atom is
// verified only when it is the task's own work (issue 53; domains/evidence.h says how the change
// is found): a commit in the task's change, files the change touched. A waiver excuses
// acceptance criteria with a reason. Atoms are checked when recorded and again when the task is
// completed (domains/evidence.h runs the checks: git and gh are programs, run outside the write
// lock). An atom recorded again takes the place of the one before (replaces(); status replaced),
// with the criteria it covered unless it names its own: how stale evidence is refreshed.
//
// verification.evidence: off (atoms are kept as given, unchecked), advisory (checked; what would
// be refused in strict mode is a warning) or strict (a gate verification.required names needs
// checked atoms only; tasks.complete needs no stale atom and every acceptance criterion covered by
// a checked atom or waived).
#pragma once

#include <array>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/json.h"
#include "engines/project/config.h"
#include "engines/store/trust_store.h"

namespace ct::evidence {

inline constexpr std::array<std::string_view, 5> kAtomKinds = {"commit", "files", "test", "pr", "note"};
inline constexpr std::array<std::string_view, 3> kModes = {"off", "advisory", "strict"};
/// Most atoms (and waivers) one call records, and files one atom names.
inline constexpr std::size_t kMaxAtoms = 20;
inline constexpr std::size_t kMaxFiles = 50;
/// A commit as a caller may name it: a hash or a ref, never an option.
inline constexpr std::string_view kCommitPattern = "[A-Za-z0-9_][A-Za-z0-9._/^~@{}-]{0,199}";

enum class Mode { Off, Advisory, Strict };
Mode mode(const Config& config);

/// An atom as the caller wrote it, its shape checked; nothing outside has been looked at yet.
struct AtomInput {
  std::string kind;                  // one of kAtomKinds
  std::string ref;                   // commit, test run id, pull request, or the note's text
  std::vector<std::string> files;    // files: normal paths inside the project
  std::vector<std::int64_t> covers;  // acceptance criteria, numbered from 1
};

/// The atoms of `value`: one atom object, a list of them, or a string (a note). Each object names
/// exactly one of commit, files, test, pr, note, and may add covers:[criterion numbers].
/// E_INVALID_PARAMS (details.field "evidence[i]") for a wrong shape; E_VALIDATION for a path that
/// leaves the project or a commit name that is not one.
Result<std::vector<AtomInput>> parse_atoms(const json::Value& value, std::string_view field = "evidence");

struct Waiver {
  std::vector<std::int64_t> criteria;
  std::string reason;
};
/// `value`: [{criterion, reason}] (or one such object); the reason at least 10 characters.
Result<std::vector<Waiver>> parse_waivers(const json::Value& value, std::string_view field = "waive");

/// Criterion numbers must name criteria of the task (1 to `count`): E_VALIDATION otherwise.
Result<void> check_criteria(const std::vector<std::int64_t>& criteria, std::size_t count, std::string_view task_id,
                            std::string_view field);

/// Whether a commit or files atom was found outside the task's own change when it was recorded
/// (advisory verification.evidence keeps it, unverified, with detail.unrelated saying why).
bool is_unrelated(const EvidenceAtom& atom);

/// Which of a task's `count` acceptance criteria its current atoms cover, which are waived and
/// which neither. Atoms in `stale` cover nothing, nor do unrelated ones; with `verified_only`,
/// neither do unchecked ones.
struct Coverage {
  std::vector<std::int64_t> covered;
  std::vector<std::int64_t> waived;
  std::vector<std::int64_t> uncovered;
};
Coverage coverage(std::size_t count, const std::vector<EvidenceAtom>& atoms, const std::set<std::string>& stale,
                  bool verified_only);

/// Whether a fresh atom takes the place of `old` (how stale evidence is refreshed): the same kind,
/// for the same gate or either given at completion, and the same thing — any later commit or test
/// run, files naming at least the old atom's paths, the same pull request, a waiver of the same
/// criteria. Notes add up and replace nothing; an unrelated atom replaces only an unrelated one.
bool replaces(const EvidenceAtom& fresh, const EvidenceAtom& old);

/// An atom for replies: {id, kind, ref?, files?, covers?, gate?, verified, unrelated?, detail?, status?}.
json::Value atom_json(const EvidenceAtom& atom);
/// One line naming the atoms ("commit 1a2b3c4d, files (2), test run 5, note"): a gate's evidence
/// as lifecycle.gates shows it.
std::string summary(const std::vector<EvidenceAtom>& atoms);

}  // namespace ct::evidence
