// system.changes: the changes feed — what changed since an audit sequence number, as compact rows
// with the cursor to go on from, so a polling agent or orchestrator pays only for what changed.
#include <set>

#include "domains/bind.h"
#include "domains/changes.h"
#include "domains/context.h"
#include "domains/registry.h"
#include "engines/rules/session_engine.h"

namespace ct {
namespace {

struct ChangesArgs {
  std::int64_t since_seq = 0;
  std::optional<std::string> scope;
  std::int64_t limit = 0;
  bool subtrees = false;
};

Result<Reply> changes(Context& context, const ChangesArgs& args) {
  std::optional<std::set<std::string>> within;
  if (args.scope) {
    CT_TRY_ASSIGN(Scope scope, parse_scope(*args.scope));
    if (scope.kind != ScopeKind::Global) {
      SessionEngine sessions(context.db(), *context.config, 0, nullptr);  // reads only
      CT_TRY_ASSIGN(within, sessions.tasks_of(scope));
    }
  }
  CT_TRY_ASSIGN(ChangePage page, read_changes(context, args.since_seq, within ? &*within : nullptr, args.limit));
  json::Value data = json::Value::object();
  data.set("changes", changes_json(page.rows));
  data.set("next", page.next);
  if (page.more) data.set("more", true);
  if (args.subtrees) {
    CT_TRY_ASSIGN(std::vector<std::string> touched, subtrees(context, page.rows));
    data.set("subtrees", json::Value::array_of(touched));
  }
  return Reply::noted(std::move(data), no_data_if(page.rows.empty()));
}

}  // namespace

void register_system_changes(Registry& registry) {
  const auto args = bind(
      field(&ChangesArgs::since_seq, {.name = "sinceSeq", .type = ParamType::Int, .default_json = "0", .min = 0,
                                      .description = "Audit seq you have seen (the last reply's next)", .positional = true}),
      field(&ChangesArgs::scope, {.name = "scope", .type = ParamType::String, .max = 200,
                                  .description = "Only these tasks, as session scopes: epic:T1, subtree:T1, custom:T1,T2…"}),
      field(&ChangesArgs::limit, {.name = "limit", .type = ParamType::Int, .default_json = "50", .min = 1, .max = 500,
                                  .description = "Rows at most"}),
      field(&ChangesArgs::subtrees, {.name = "subtrees", .type = ParamType::Bool,
                                     .description = "Also list every task whose subtree these changes touched (the "
                                                    "changed tasks, their ancestors, where a moved or deleted task was)"}));
  registry.add({.domain = "system", .name = "changes", .gateway = Gateway::Query,
                .summary = "What changed since an audit seq, paged",
                .params = args.specs(),
                .returns = "{changes{columns,rows}: [seq,id,field,who?,at] oldest first, next (pass it as sinceSeq), "
                           "more?, subtrees?[id]}; E_NO_DATA note when nothing changed",
                .errors = {ErrorCode::ScopeInvalid, ErrorCode::NotFound},
                .examples = {{R"({"sinceSeq":120})", "what changed after audit row 120"},
                             {R"({"sinceSeq":120,"scope":"epic:T001"})", "only an epic's tasks"}},
                .idempotent = true, .tier = 2, .handler = args.handler(changes)});
}

}  // namespace ct
