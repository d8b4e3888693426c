// memory domain, the governed catalogue (issue 54, seed 004; engines/rules/catalogue.h has the
// rules): an entry's governance for memory.show, the entries due for review (memory.list's `due`),
// and memory.review, which checks a prompt or a plan against the conventions people verified.
#include "domains/memory/memory_catalogue.h"

#include <algorithm>

#include "domains/bind.h"
#include "domains/memory/memory_common.h"
#include "domains/registry.h"
#include "engines/rules/catalogue.h"

namespace ct::memory {

Result<json::Value> governance_json(Context& context, const MemoryEntry& entry) {
  CT_TRY_ASSIGN(std::optional<CatalogueRow> row, context.db().get_catalogue(entry.id));
  json::Value out = catalogue::governance_json(catalogue::of(entry, row));
  CT_TRY_ASSIGN(std::vector<CatalogueChange> changes, context.db().catalogue_changes(entry.id, 10));
  json::Value log = json::Value::array();
  for (const auto& change : changes) {
    json::Value item = json::Value::object();
    item.set("version", change.version);
    item.set("at", format_iso8601(change.at));
    if (!change.by.empty()) item.set("by", change.by);
    item.set("summary", change.summary);
    log.push_back(std::move(item));
  }
  if (!log.empty()) out.set("changes", std::move(log));
  return out;
}

Result<std::vector<MemoryEntry>> due_for_review(Context& context, MemoryQuery query) {
  query.limit = -1;
  query.offset = 0;
  CT_TRY_ASSIGN(std::vector<MemoryEntry> entries, context.db().list_memory(query));
  std::vector<std::pair<TimeMs, MemoryEntry>> due;
  for (auto& entry : entries) {
    const catalogue::Governance governance = catalogue::of(entry, std::nullopt);
    if (governance.next_review_due && *governance.next_review_due <= context.now())
      due.emplace_back(*governance.next_review_due, std::move(entry));
  }
  std::stable_sort(due.begin(), due.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<MemoryEntry> out;
  out.reserve(due.size());
  for (auto& [at, entry] : due) out.push_back(std::move(entry));
  return out;
}

namespace {

/// The verified conventions a text is checked against: active convention and decision entries a
/// person verified (at most kMaxChecked of each kind, newest change first).
constexpr std::int64_t kMaxChecked = 2000;

struct ReviewArgs {
  std::string text;
};

Result<Reply> review(Context& context, const ReviewArgs& args) {
  std::vector<MemoryEntry> conventions;
  for (std::string_view kind : {"convention", "decision"}) {
    MemoryQuery query;
    query.statuses = {"active"};
    query.kind = std::string(kind);
    query.limit = kMaxChecked;
    CT_TRY_ASSIGN(std::vector<MemoryEntry> entries, context.db().list_memory(query));
    for (auto& entry : entries)
      if (!entry.verified_by.empty()) conventions.push_back(std::move(entry));
  }
  const std::vector<catalogue::Touch> touched = catalogue::review(args.text, conventions);
  json::Value may_break = json::Value::array();
  json::Value touches = json::Value::array();
  for (const auto& touch : touched) {
    json::Value row = json::Value::object();
    row.set("id", touch.entry->id);
    row.set("title", touch.entry->title);
    if (touch.may_break) row.set("words", json::Value::array_of(touch.words));
    row.set("why", touch.why);
    (touch.may_break ? may_break : touches).push_back(std::move(row));
  }
  json::Value data = json::Value::object();
  data.set("checked", static_cast<std::int64_t>(conventions.size()));
  data.set("mayBreak", std::move(may_break));
  data.set("touches", std::move(touches));
  return Reply::of(std::move(data));
}

}  // namespace

void register_memory_catalogue(Registry& registry) {
  const auto review_args = bind(field(&ReviewArgs::text, {.name = "text", .type = ParamType::String, .required = true,
                                                         .min = 1, .max = 10000,
                                                         .description = "The prompt or plan to check",
                                                         .positional = true}));
  registry.add({.domain = "memory", .name = "review", .gateway = Gateway::Query,
                .summary = "Check a prompt or plan against verified conventions",
                .params = review_args.specs(),
                .returns = "{checked (verified conventions and decisions), mayBreak[{id, title, words[], why}] (a word "
                           "it negates that the entry asks for, or the reverse), touches[{id, title, why}] (entries "
                           "it names or shares words with, to follow)}",
                .examples = {{R"({"text":"Skip the retry backoff in src/net/client.cpp"})", "may this plan break a convention?"}},
                .idempotent = true, .tier = 2, .handler = review_args.handler(review)});
}

}  // namespace ct::memory
