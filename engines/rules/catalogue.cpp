#include "engines/rules/catalogue.h"

#include <algorithm>
#include <unordered_set>

#include "core/sha256.h"
#include "core/text.h"
#include "engines/rules/memory.h"

namespace ct::catalogue {
namespace {

constexpr TimeMs kDayMs = 24LL * 60 * 60 * 1000;

bool is_word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/// Every word of a text in order, lowercased, stop words kept (negations are stop words).
std::vector<std::string> tokens(std::string_view text) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && !is_word_char(text[i])) ++i;
    const std::size_t start = i;
    while (i < text.size() && is_word_char(text[i])) ++i;
    if (i > start) out.push_back(to_lower_ascii(text.substr(start, std::min<std::size_t>(i - start, 40))));
  }
  return out;
}

bool is_negation(std::string_view word) {
  static const std::unordered_set<std::string_view> kWords = {
      "not",   "never",   "no",     "without", "skip",   "skipping", "skipped", "don",    "dont",  "doesn",
      "isn",   "won",     "avoid",  "bypass",  "ignore", "ignoring", "disable", "remove", "drop",  "stop",
      "instead", "nor",   "cannot", "forbid",  "forbidden"};
  return kWords.contains(word);
}

/// The words of `toks` that are negated somewhere: a negation within three words before them.
std::unordered_set<std::string> negated(const std::vector<std::string>& toks) {
  std::unordered_set<std::string> out;
  for (std::size_t i = 0; i < toks.size(); ++i)
    for (std::size_t back = 1; back <= 3 && back <= i; ++back)
      if (is_negation(toks[i - back])) {
        out.insert(toks[i]);
        break;
      }
  return out;
}

std::string iso_or_null(const std::optional<TimeMs>& at) { return at ? format_iso8601(*at) : std::string(); }

}  // namespace

std::string_view status_of(const MemoryEntry& entry) {
  if (entry.status == "proposed") return "review";
  if (entry.status == "superseded" || entry.status == "retracted") return "deprecated";
  return entry.verified_by.empty() ? "draft" : "approved";
}

std::string_view status_of(const Skill& skill) { return skill.source == "builtin" ? "approved" : "draft"; }

std::string_view tier_of(std::string_view kind) {
  if (kind == "convention" || kind == "decision" || kind == "risk") return "P1";
  if (kind == "pattern" || kind == "skill") return "P2";
  if (kind == "learning") return "P3";
  return "P4";
}

std::int64_t review_days(std::string_view tier) {
  if (tier == "P1") return 30;
  if (tier == "P2") return 60;
  if (tier == "P3") return 90;
  return 180;
}

Governance of(const MemoryEntry& entry, const std::optional<CatalogueRow>& row) {
  Governance out;
  out.id = entry.id;
  out.kind = entry.kind;
  out.title = entry.title;
  out.version = row ? row->version : 1;
  out.owner = row && !row->owner.empty() ? row->owner : entry.source_agent;
  out.status = std::string(status_of(entry));
  out.tier = std::string(tier_of(entry.kind));
  if (out.status != "deprecated")
    out.next_review_due = entry.verified_at.value_or(entry.created_at) + review_days(out.tier) * kDayMs;
  out.supersedes = entry.supersedes;
  return out;
}

Governance of(const Skill& skill, const std::optional<CatalogueRow>& row) {
  Governance out;
  out.id = std::string(kSkillPrefix) + skill.name;
  out.kind = "skill";
  out.title = skill.description;
  out.version = row ? row->version : 1;
  out.owner = row && !row->owner.empty() ? row->owner : skill.source;
  out.status = std::string(status_of(skill));
  out.tier = std::string(tier_of("skill"));
  if (row) out.next_review_due = row->updated_at + review_days(out.tier) * kDayMs;
  if (!skill.overrides.empty()) out.supersedes = std::string(kSkillPrefix) + skill.name + "@" + skill.overrides;
  return out;
}

std::string projection(const Governance& governance) {
  json::Value out = json::Value::object();
  out.set("id", governance.id);
  out.set("kind", governance.kind);
  out.set("title", governance.title);
  out.set("version", governance.version);
  out.set("owner", governance.owner);
  out.set("status", governance.status);
  out.set("tier", governance.tier);
  out.set("nextReviewDue", iso_or_null(governance.next_review_due));
  out.set("supersedes", governance.supersedes);
  return out.dump();
}

std::string projection_hash(const Governance& governance) { return sha256_hex(projection(governance)); }

std::string catalogue_hash(std::vector<Governance> items) {
  std::sort(items.begin(), items.end(), [](const Governance& a, const Governance& b) { return a.id < b.id; });
  std::string joined;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) joined += '\n';
    joined += projection(items[i]);
  }
  return sha256_hex(joined);
}

json::Value governance_json(const Governance& governance) {
  json::Value out = json::Value::object();
  out.set("version", governance.version);
  if (!governance.owner.empty()) out.set("owner", governance.owner);
  out.set("status", governance.status);
  out.set("tier", governance.tier);
  if (governance.next_review_due) out.set("nextReviewDue", format_iso8601(*governance.next_review_due));
  return out;
}

std::string skill_hash(const Skill& skill) {
  std::string tags;
  for (const auto& tag : skill.tags) tags += tag + ",";
  return sha256_hex(skill.name + "\n" + skill.description + "\n" + tags + "\n" + skill.body).substr(0, 16);
}

std::string change_summary(const std::optional<MemoryEntry>& before, const MemoryEntry& after) {
  if (!before) return "recorded (" + after.status + ")";
  std::vector<std::string> parts;
  if (before->kind != after.kind) parts.push_back("kind " + before->kind + "→" + after.kind);
  if (before->title != after.title) parts.push_back("title");
  if (before->body != after.body) parts.push_back("body");
  if (before->files != after.files || before->labels != after.labels || before->tasks != after.tasks ||
      before->epic != after.epic)
    parts.push_back("scope");
  if (before->confidence != after.confidence) parts.push_back("confidence");
  if (before->status != after.status) parts.push_back("status " + before->status + "→" + after.status);
  if (before->verified_by != after.verified_by || before->verified_at != after.verified_at) parts.push_back("verified");
  if (before->superseded_by != after.superseded_by) parts.push_back("superseded by " + after.superseded_by);
  if (before->supersedes != after.supersedes) parts.push_back("supersedes " + after.supersedes);
  if (before->reason != after.reason) parts.push_back("reason");
  std::string out;
  for (const auto& part : parts) out += (out.empty() ? "" : ", ") + part;
  return out;
}

Result<void> record_memory(CatalogueStore& store, const std::optional<MemoryEntry>& before, const MemoryEntry& after,
                           const std::string& owner, const std::string& by, TimeMs now) {
  const std::string summary = change_summary(before, after);
  if (summary.empty()) return {};
  CT_TRY_ASSIGN(std::optional<CatalogueRow> found, store.get_catalogue(after.id));
  CatalogueRow row = found.value_or(CatalogueRow{.subject = after.id, .version = before ? 1 : 0, .owner = owner});
  if (row.owner.empty()) row.owner = !owner.empty() ? owner : after.source_agent;
  ++row.version;
  row.body_hash = after.hash;
  row.updated_at = now;
  row.gov_hash = projection_hash(of(after, row));
  CT_TRY(store.put_catalogue(row));
  return store.add_catalogue_change({after.id, row.version, now, by, summary});
}

Result<CatalogueRow> record_skill_use(CatalogueStore& store, const Skill& skill, const std::string& by, TimeMs now) {
  const std::string subject = std::string(kSkillPrefix) + skill.name;
  const std::string hash = skill_hash(skill);
  CT_TRY_ASSIGN(std::optional<CatalogueRow> found, store.get_catalogue(subject));
  CatalogueRow row = found.value_or(CatalogueRow{.subject = subject, .version = 0});
  std::string summary;
  if (!found) summary = "recorded (" + skill.source + ")";
  else if (row.body_hash != hash) summary = "content changed (" + skill.source + ")";
  if (!summary.empty()) {
    ++row.version;
    if (row.owner.empty()) row.owner = skill.source == "builtin" ? std::string("builtin") : by;
    row.body_hash = hash;
    row.updated_at = now;
  }
  ++row.used;
  row.used_at = now;
  row.gov_hash = projection_hash(of(skill, row));
  CT_TRY(store.put_catalogue(row));
  if (!summary.empty()) CT_TRY(store.add_catalogue_change({subject, row.version, now, by, summary}));
  return row;
}

std::vector<Touch> review(std::string_view text, const std::vector<MemoryEntry>& conventions) {
  const std::vector<std::string> text_tokens = tokens(text);
  const std::unordered_set<std::string> text_words(text_tokens.begin(), text_tokens.end());
  const std::unordered_set<std::string> text_negated = negated(text_tokens);
  std::vector<Touch> breaks;
  std::vector<Touch> follows;
  for (const auto& entry : conventions) {
    Touch touch{.entry = &entry};
    for (const auto& file : entry.files)
      if (file.size() >= 3 && text.find(file) != std::string_view::npos) {
        touch.why = "names " + file;
        break;
      }
    const std::vector<std::string> title_words = memory::words(entry.title);
    std::vector<std::string> shared_title;
    for (const auto& word : title_words)
      if (text_words.contains(word)) shared_title.push_back(word);
    const std::size_t needed = std::min<std::size_t>(2, title_words.size());
    if (touch.why.empty() && (needed == 0 || shared_title.size() < needed)) continue;
    if (touch.why.empty()) touch.why = "shares its words";
    const std::vector<std::string> entry_tokens = tokens(entry.title + "\n" + entry.body);
    const std::unordered_set<std::string> entry_negated = negated(entry_tokens);
    for (const auto& word : memory::words(entry.title + "\n" + entry.body)) {
      if (!text_words.contains(word)) continue;
      if (text_negated.contains(word) != entry_negated.contains(word)) touch.words.push_back(word);
    }
    if (!touch.words.empty()) {
      touch.may_break = true;
      touch.why = text_negated.contains(touch.words.front())
                      ? "the text negates '" + touch.words.front() + "', which " + entry.id + " asks for"
                      : "the text asks for '" + touch.words.front() + "', which " + entry.id + " rules out";
      breaks.push_back(std::move(touch));
    } else {
      touch.words = shared_title;
      follows.push_back(std::move(touch));
    }
  }
  for (auto& touch : follows) breaks.push_back(std::move(touch));
  return breaks;
}

}  // namespace ct::catalogue
