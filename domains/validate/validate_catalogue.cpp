// validate.catalogue (issue 54, seed 004): the governed catalogue of memory entries and skills
// (engines/rules/catalogue.h) — its deterministic governance hash, counts by status, what is due
// for review, the hot skills — and its integrity: every stored hash against the one recomputed now.
// A memory entry whose content or governance no longer hashes as recorded was changed behind the
// operations' back, and fails the check (E_VALIDATION); a skill file changed since a spawn last
// recorded it is reported (it is a file people edit), and recorded as a new version at its next use.
#include <algorithm>
#include <map>

#include "domains/bind.h"
#include "domains/context.h"
#include "domains/registry.h"
#include "domains/skills/skills.h"
#include "domains/verdict.h"
#include "engines/rules/catalogue.h"
#include "engines/rules/memory.h"

namespace ct {
namespace {

constexpr std::size_t kListed = 20;

json::Value broken_row(const std::string& id, std::string_view what, const std::string& stored, const std::string& actual) {
  json::Value row = json::Value::object();
  row.set("id", id);
  row.set("what", what);
  row.set("stored", stored);
  row.set("actual", actual);
  return row;
}

Result<Reply> check(Context& context, const NoArgs&) {
  std::vector<std::string> warnings;
  CT_TRY_ASSIGN(SkillCatalog skills, load_skill_catalog(context, warnings));
  MemoryQuery all;
  all.limit = -1;
  CT_TRY_ASSIGN(std::vector<MemoryEntry> entries, context.db().list_memory(all));
  CT_TRY_ASSIGN(std::vector<CatalogueRow> rows, context.db().list_catalogue(""));
  std::map<std::string, const CatalogueRow*, std::less<>> row_of;
  for (const auto& row : rows) row_of[row.subject] = &row;
  auto find_row = [&](const std::string& subject) -> std::optional<CatalogueRow> {
    auto found = row_of.find(subject);
    if (found == row_of.end()) return std::nullopt;
    return *found->second;
  };

  std::vector<catalogue::Governance> items;
  json::Value broken = json::Value::array();
  json::Value changed = json::Value::array();
  for (const auto& entry : entries) {
    const std::optional<CatalogueRow> row = find_row(entry.id);
    catalogue::Governance governance = catalogue::of(entry, row);
    const std::string content = memory::content_hash(entry);
    if (content != entry.hash) broken.push_back(broken_row(entry.id, "content", entry.hash, content));
    if (row && !row->gov_hash.empty()) {
      const std::string actual = catalogue::projection_hash(governance);
      if (actual != row->gov_hash) broken.push_back(broken_row(entry.id, "governance", row->gov_hash, actual));
    }
    items.push_back(std::move(governance));
  }
  for (const auto& skill : skills.skills()) {
    const std::string subject = std::string(catalogue::kSkillPrefix) + skill.name;
    const std::optional<CatalogueRow> row = find_row(subject);
    if (row && row->body_hash != catalogue::skill_hash(skill)) {
      json::Value item = json::Value::object();
      item.set("id", subject);
      item.set("version", row->version);
      item.set("source", skill.source);
      changed.push_back(std::move(item));
    }
    items.push_back(catalogue::of(skill, row));
  }

  std::map<std::string, std::int64_t> by_status;
  for (auto status : catalogue::kStatuses) by_status[std::string(status)] = 0;
  std::vector<const catalogue::Governance*> due;
  for (const auto& item : items) {
    ++by_status[item.status];
    if (item.next_review_due && *item.next_review_due <= context.now()) due.push_back(&item);
  }
  std::stable_sort(due.begin(), due.end(), [](const auto* a, const auto* b) { return *a->next_review_due < *b->next_review_due; });

  json::Value data = json::Value::object();
  data.set("hash", catalogue::catalogue_hash(items));
  data.set("entries", static_cast<std::int64_t>(items.size()));
  json::Value statuses = json::Value::object();
  for (auto status : catalogue::kStatuses) statuses.set(status, by_status[std::string(status)]);
  data.set("byStatus", std::move(statuses));
  data.set("dueTotal", static_cast<std::int64_t>(due.size()));
  json::Value due_rows = json::Value::array();
  for (std::size_t i = 0; i < due.size() && i < kListed; ++i) {
    json::Value row = json::Value::object();
    row.set("id", due[i]->id);
    row.set("title", due[i]->title);
    row.set("nextReviewDue", format_iso8601(*due[i]->next_review_due));
    due_rows.push_back(std::move(row));
  }
  if (!due_rows.empty()) data.set("due", std::move(due_rows));
  CT_TRY_ASSIGN(std::vector<CatalogueRow> hot, context.db().hot_catalogue(catalogue::kSkillPrefix, 10));
  json::Value hot_rows = json::Value::array();
  for (const auto& row : hot) {
    json::Value item = json::Value::object();
    item.set("skill", row.subject.substr(catalogue::kSkillPrefix.size()));
    item.set("used", row.used);
    if (row.used_at) item.set("lastUsedAt", format_iso8601(*row.used_at));
    hot_rows.push_back(std::move(item));
  }
  if (!hot_rows.empty()) data.set("hot", std::move(hot_rows));
  if (!changed.empty()) {
    warnings.push_back(std::to_string(changed.size()) +
                       " skill file(s) changed since a spawn last recorded them: their next use records a new version");
    data.set("changed", std::move(changed));
  }
  const bool valid = broken.empty();
  std::string summary;
  if (!valid) {
    summary = std::to_string(broken.size()) + " catalogue hash(es) differ from what was recorded, first " +
              broken.as_array().front()["id"].as_string() + " (" + broken.as_array().front()["what"].as_string() +
              "): changed outside the memory operations";
    data.set("broken", std::move(broken));
  }
  return verdict(valid, std::move(data), std::move(warnings), std::move(summary),
                 "restore the newest backup whose catalogue verifies: " + call("system.restore", {{"dryRun", true}}));
}

}  // namespace

void register_validate_catalogue(Registry& registry) {
  registry.add({.domain = "validate", .name = "catalogue", .gateway = Gateway::Query,
                .summary = "Verify the memory and skills catalogue's hashes",
                .returns = "{valid, hash (governance fields of every entry and skill, bodies excluded), entries, "
                           "byStatus{draft,review,approved,deprecated}, dueTotal, due?[{id,title,nextReviewDue}] (20), "
                           "hot?[{skill,used,lastUsedAt}] (10), changed?[{id,version,source}] (skill files changed "
                           "since last used), broken?[{id, what content|governance, stored, actual}]}; a broken hash "
                           "fails with E_VALIDATION (exit 6), the report in error.details",
                .errors = {ErrorCode::Validation},
                .examples = {{R"({})", "the catalogue's governance hash and integrity"}},
                .idempotent = true, .tier = 2, .handler = no_args(check)});
}

}  // namespace ct
