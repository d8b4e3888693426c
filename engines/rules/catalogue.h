// The governed catalogue (issue 54, seed 004's instruction index): memory entries and skills under
// one governance model. Per subject — a memory entry ("M001") or a skill ("skill:<name>") — a version
// bumped on each recorded change, an owner, a status on the seed's review flow, a tier that sets
// when it is due for review, a change log and what it supersedes (engines/store/catalogue_store.h
// keeps the rows). The seed's flow maps onto people's verification, it is not kept twice:
//
//   memory proposed (waits for a person)            → review
//   memory active, no person verified it            → draft     (an agent's word, served)
//   memory active, verified by a person             → approved
//   memory superseded or retracted                  → deprecated
//   skill built in (reviewed with the product)      → approved
//   skill of the user or the project                → draft     (a file nobody reviewed here)
//
// Tiers and review cadence: P1 (convention, decision, risk) every 30 days, P2 (pattern, skills) 60,
// P3 (learning) 90, P4 (observation) 180 — from the last person's verification, else from when it
// was recorded. A deprecated subject is never due.
//
// The governance hash is a projection of governance fields (id, kind, title, version, owner,
// status, tier, nextReviewDue, supersedes) — never the body: an edit recorded through the catalogue
// is a new version, so it changes the hash; a body changed behind the catalogue's back does not,
// and is what the integrity check finds (stored hashes against recomputed ones).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/error.h"
#include "core/json.h"
#include "engines/rules/skills.h"
#include "engines/store/catalogue_store.h"
#include "engines/store/memory_store.h"

namespace ct::catalogue {

inline constexpr std::array<std::string_view, 4> kStatuses = {"draft", "review", "approved", "deprecated"};
inline constexpr std::string_view kSkillPrefix = "skill:";

/// The seed's status of a memory entry or a skill (see above).
std::string_view status_of(const MemoryEntry& entry);
std::string_view status_of(const Skill& skill);
/// P1..P4 of a memory kind; "skill" for a skill.
std::string_view tier_of(std::string_view kind);
/// Days between reviews in a tier.
std::int64_t review_days(std::string_view tier);

/// One subject's governance fields: what the governance hash projects.
struct Governance {
  std::string id;          // "M001" | "skill:<name>"
  std::string kind;        // a memory kind, or "skill"
  std::string title;       // a memory title, a skill's description
  std::int64_t version = 1;
  std::string owner;
  std::string status;      // draft | review | approved | deprecated
  std::string tier;        // P1..P4
  std::optional<TimeMs> next_review_due;
  std::string supersedes;
};

/// A memory entry's governance, with its catalogue row when it has one (an entry recorded before
/// the catalogue existed is version 1, owned by whoever recorded it).
Governance of(const MemoryEntry& entry, const std::optional<CatalogueRow>& row);
/// A skill's governance, with its catalogue row when it has one (a skill no spawn used yet is
/// version 1, owned by its source).
Governance of(const Skill& skill, const std::optional<CatalogueRow>& row);

/// The projection as one line of JSON, its fields always in the same order.
std::string projection(const Governance& governance);
/// The SHA-256 of one projection (a row's gov_hash).
std::string projection_hash(const Governance& governance);
/// The catalogue-wide governance hash: the projections sorted by id, joined by "\n", SHA-256.
/// Deterministic: the same fields give the same hash whatever order they came in.
std::string catalogue_hash(std::vector<Governance> items);
/// The projection as a reply's object (nextReviewDue in ISO 8601).
json::Value governance_json(const Governance& governance);

/// The content hash of a skill (its name, description, tags and body): what a row records and
/// the integrity check recomputes.
std::string skill_hash(const Skill& skill);

/// What changed between two versions of an entry, in a few words ("recorded", "title, body",
/// "status proposed→active, verified"); empty when nothing the catalogue governs changed.
std::string change_summary(const std::optional<MemoryEntry>& before, const MemoryEntry& after);

/// Records a change of a memory entry: its next version (the row it had, else 1 for a new entry
/// and 2 for one recorded before the catalogue), owner (kept; `owner` for a new row), hashes and a
/// change-log row. Nothing is recorded when change_summary() is empty.
Result<void> record_memory(CatalogueStore& store, const std::optional<MemoryEntry>& before, const MemoryEntry& after,
                           const std::string& owner, const std::string& by, TimeMs now);
/// Counts a use of a skill (injected into a spawn prompt): its row made at version 1 on first use,
/// a new version when its content hash changed since the last recorded one.
Result<CatalogueRow> record_skill_use(CatalogueStore& store, const Skill& skill, const std::string& by, TimeMs now);

/// A verified convention a text touches, and whether the text may break it.
struct Touch {
  const MemoryEntry* entry = nullptr;
  bool may_break = false;
  std::vector<std::string> words;  // the shared words whose sense differs (may_break) or that touched it
  std::string why;
};
/// Checks `text` against `conventions` (entries a person verified): an entry is touched when the
/// text names one of its scope paths or shares its title's words (two, or its only one); a touched
/// entry may be broken when a word they share is negated in one and not in the other ("never",
/// "not", "skip", "without", "instead of" … within three words before it). Touched entries in the
/// order given, the ones that may break first.
std::vector<Touch> review(std::string_view text, const std::vector<MemoryEntry>& conventions);

}  // namespace ct::catalogue
