// The one table of operations. Validation, the MCP tools' domain enums, help levels, the CLI
// subcommands and the docs are all projections of these specs; nothing describes an operation twice.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "core/error.h"
#include "core/json.h"

namespace ct {

class Context;
class Params;
struct Reply;

enum class Gateway { Query, Mutate };
std::string_view to_string(Gateway gateway);       // "query" | "mutate"
std::string_view tool_name(Gateway gateway);       // "cleo_query" | "cleo_mutate"

/// Scalar: a string, number or boolean, handed to the handler as its text ("20", "true") — for
/// values whose type depends on another param (system.config.set's value).
enum class ParamType { String, Int, Bool, Enum, Array, Object, TaskId, Scalar };
std::string_view to_string(ParamType type);

enum class EngineKind { Native, Subprocess, Hybrid };
std::string_view to_string(EngineKind kind);

inline constexpr std::int64_t kUnbounded = INT64_MIN;
/// The most tasks one bulk call (OperationSpec::bulk) changes.
inline constexpr std::int64_t kMaxBulkIds = 100;
/// Integer params without a declared bound still stay within ±10^9: no offset, position or
/// version needs more, and sums of two such values cannot overflow.
inline constexpr std::int64_t kMaxIntParam = 1'000'000'000;
/// A string param (or array item) with a pattern and no declared max is at most this many
/// characters: the registry sets it when the spec is added (so help and the tools' JSON schemas
/// show it). As long as the longest patterned value the registry itself admits (providers.install's url,
/// 2,000), so no value the patterns describe — ids, names, dates, versions — is refused by it;
/// it bounds what a plug-in's pattern is matched against and what an error can quote.
inline constexpr std::int64_t kMaxPatternedChars = 2000;

struct ParamSpec {
  std::string_view name;
  ParamType type = ParamType::String;
  bool required = false;
  std::string_view default_json;         // JSON text of the default; empty = none
  std::int64_t min = kUnbounded;         // String: min chars; Int: min value; Array: min items
  std::int64_t max = kUnbounded;         // String: max chars; Int: max value; Array: max items
  std::string_view pattern;              // RE2 regex each string (or array item) must match as a whole
                                         // (core/pattern.h); bounded by max/item_max, else kMaxPatternedChars
  std::vector<std::string_view> choices; // Enum values (and Array items when item_type is Enum);
                                         // Int: the only values allowed, as text ("0", "1", "3")
  ParamType item_type = ParamType::String;  // Array items: String, TaskId or Enum
  std::int64_t item_max = kUnbounded;    // Array of strings: max chars per item
  std::string_view description;
  bool positional = false;               // CLI: accepted as a positional argument (in order)
  /// Another name it is accepted under, as a CLI flag and as a params key ("target" for targets;
  /// "note", the earlier name of session's notes); help shows only `name`.
  std::string_view alias;
  /// Bool: when true, the call writes nothing (a check or dry run). The router lets such a call
  /// through in read-only mode, rolls its transaction back and audits nothing.
  bool dry_run = false;
  /// String: one line (titles, names) — line breaks are refused like other control characters.
  bool single_line = false;
  /// Object: a string is accepted too, handed on as it is (evidence: a note's text).
  bool or_text = false;
  /// Object, positional: on the command line a word that names an existing file or folder is not
  /// read by ct but passed, as its absolute path, in this other (String) param for the handler to
  /// read (tasks.import: the original CLEO's store is a folder of files, or a database); JSON text,
  /// @file and - are read by ct as for any Object param.
  std::string_view path_param;
};

/// A CLI verb that runs an operation with some params set (`ct ready` is tasks.list with
/// readiness:ready); what the person adds on the command line wins.
struct ShortcutView {
  std::string_view word;
  std::string_view params_json;
  std::string_view summary;
};

/// How `ct` shows a successful reply to a person; cli/render.cpp has one renderer per view (and
/// the line for a note: nothing found, nothing changed). `--json` and MCP send the data as it is.
enum class TextView {
  Generic,       // any data as aligned text (render_value)
  Created,       // "Created T5: <title>"
  TaskCard,      // one task, field by field
  TaskTable,     // rows of tasks as a table
  FoundTasks,    // a search's tasks as a table
  NextTasks,     // suggestions, with why
  TaskHistory,   // one task's audit rows
  AuditLog,      // the project's audit rows
  TaskTree,      // the hierarchy, drawn
  Dependencies,  // what a task waits on and what waits on it
  Blockers,      // what blocks a task, transitively
  Completed, Deleted, Imported, Undone,
  Updated, Restored, Reopened, Moved, Promoted, Reordered, Linked,  // "<Verb> T5: <fields changed>"
  Started, Stopped, CurrentTask, Exists, Archived,
  Json,          // the data itself as JSON (an export is meant for files)
  Initialised, HelpText, Injected, Dashboard, Version,
  Briefing,      // a session briefing; with `hook`, exactly the text an agent host's hook loads
  Markdown,      // data.markdown as it is (an export meant for a file)
  PlanDiff,      // each plan: what it adds, changes and removes, the graph before and after
};

struct Example {
  std::string_view params_json;  // the params object of a working call
  std::string_view description;
};

/// What a handler returns on success. Errors are returned as Error values.
struct Page {
  std::int64_t total = 0;   // rows in all; -1 when not counted (a reply cut to its budget: more follow)
  std::int64_t limit = 0;   // rows in this page
  std::int64_t offset = 0;  // rows skipped before it
  bool total_at_least = false;  // `total` is a lower bound: the matches past it were not counted (tasks.find)
  bool has_more() const { return total < 0 || offset + limit < total; }
  std::int64_t next_offset() const { return offset + limit; }
};

/// E_NO_CHANGE when `unchanged`: the note of a change that found everything already so.
inline std::optional<ErrorCode> no_change_if(bool unchanged) {
  return unchanged ? std::optional(ErrorCode::NoChange) : std::nullopt;
}
/// E_NO_DATA when `empty`: the note of a read that found nothing.
inline std::optional<ErrorCode> no_data_if(bool empty) {
  return empty ? std::optional(ErrorCode::NoData) : std::nullopt;
}
struct Reply {
  /// Advice in it is a value (Advice::to_value), which the edge writes its own way.
  json::Value data;
  std::vector<std::string> warnings;
  std::optional<Page> page;
  /// A success that carries a note: E_NO_DATA, E_ALREADY_EXISTS, E_NO_CHANGE or E_PROPOSED (exit 100–103).
  std::optional<ErrorCode> note;
  /// Warnings that suggest calls (core/advice.h), said after `warnings`: the edge writes each call.
  std::vector<Advice> advice_warnings{};

  /// The reply of `data` alone.
  static Reply of(json::Value data) { return {std::move(data), {}, {}, {}}; }
  /// `data` with warnings the caller should read.
  static Reply warned(json::Value data, std::vector<std::string> warnings) {
    return {std::move(data), std::move(warnings), {}, {}};
  }
  /// `data` with a note (none when `note` is empty), and any warnings.
  static Reply noted(json::Value data, std::optional<ErrorCode> note, std::vector<std::string> warnings = {}) {
    return {std::move(data), std::move(warnings), {}, note};
  }
  /// One page of rows (all of them when `page` is empty).
  static Reply paged(json::Value data, std::optional<Page> page) { return {std::move(data), {}, page, {}}; }
};

class NestedRuns;  // domains/nested_runs.h

/// What serves a call of an operation (its handler, or its external step): a function of the call's
/// Context and Params — or, for the few operations that run other operations' calls inside their
/// own (tasks.batch, the plans, tasks.import's memory, system.proposal.approve), of those and the
/// NestedRuns the router hands them (domains/nested_runs.h). Which of the two it is follows from
/// the function's parameters; no other handler can reach the router.
class Handler {
 public:
  Handler() = default;
  Handler(std::nullptr_t) {}
  template <typename F>
    requires(!std::is_same_v<std::remove_cvref_t<F>, Handler> &&
             std::is_invocable_r_v<Result<Reply>, F&, Context&, const Params&>)
  Handler(F serve) : plain_(std::move(serve)) {}
  template <typename F>
    requires(!std::is_same_v<std::remove_cvref_t<F>, Handler> &&
             !std::is_invocable_v<F&, Context&, const Params&> &&
             std::is_invocable_r_v<Result<Reply>, F&, Context&, const Params&, NestedRuns&>)
  Handler(F serve) : nesting_(std::move(serve)) {}

  explicit operator bool() const { return plain_ || nesting_; }
  /// Whether it runs other operations' calls (it takes NestedRuns).
  bool nests() const { return static_cast<bool>(nesting_); }
  /// Serves a call; a handler that nests is handed `runs`.
  Result<Reply> operator()(Context& context, const Params& params, NestedRuns& runs) const;
  /// Serves a call where there are no nested runs to hand (a batch's ops' external steps): a
  /// handler that nests answers E_INTERNAL.
  Result<Reply> operator()(Context& context, const Params& params) const;

 private:
  std::function<Result<Reply>(Context&, const Params&)> plain_;
  std::function<Result<Reply>(Context&, const Params&, NestedRuns&)> nesting_;
};
/// What a call does beyond its own operation, as approval.required names it (domains/approval.h):
/// tasks.undo of a task's creation deletes the task, memory.supersede of an entry updates it. A rule
/// matches a call when it matches the call's operation or any of its effects.
struct Effect {
  std::string operation;       // "tasks.delete"; "*": the operation of every rule with `condition`
  std::string id;              // the record it has the effect on: a task, a memory entry
  /// "" counts for every rule of `operation`; else only for the rules with this condition: an epic
  /// demoted is out of reach of every rule that names epics ("tasks.complete:epic"), so demoting one
  /// is {"*", id, "epic"}.
  std::string_view condition;
};

/// What a higher layer adds to an operation registered below it (Registry::add_step): it runs after
/// the handler succeeds, in the same transaction, and turns the handler's reply into the call's.
using Step = std::function<Result<Reply>(Context&, const Params&, Reply)>;

struct OperationSpec {
  std::string_view domain;
  std::string_view name;
  Gateway gateway = Gateway::Query;
  std::string_view summary;               // one line, imperative, for help level 1
  std::vector<ParamSpec> params;
  std::string_view returns;               // shape of `data`
  std::vector<ErrorCode> errors;          // error codes it may raise beyond the router's
  std::vector<Example> examples;
  EngineKind engine = EngineKind::Native;
  bool idempotent = false;
  bool destructive = false;
  /// A write the router checks against session.enforcement and the bound session's scope before
  /// the handler runs (every tasks mutation).
  bool needs_session = false;
  bool needs_project = true;              // false: runs without an initialised store (init, version)
  /// Runs even when the project's store cannot be opened (missing, empty, corrupt): the handler
  /// gets no store and Context::store_error says why (system.restore recovers, system.health
  /// reports). A successful mutation is audited in the store it leaves behind.
  bool runs_on_damaged_store = false;
  int tier = 1;                           // disclosure: 0 quick reference, 1 common, 2 advanced
  std::string_view shortcut;              // CLI verb: `ct add` for tasks.add; empty = none
  /// Other CLI verbs for the shortcut, the short ones people type (`ct ls`, `ct done`, `ct rm`).
  std::vector<std::string_view> shortcut_aliases;
  /// CLI verbs for this operation with params preset (`ct ready`, `ct blocked`).
  std::vector<ShortcutView> views;
  /// How `ct` shows its reply to people.
  TextView text_view = TextView::Generic;
  /// People may run it from the dashboard's page when the server allows writes
  /// (`ct serve --dashboard-write`); the page runs no other mutation.
  bool dashboard = false;
  /// List-like operations (data is an array of rows): every field a row can carry. When set, the
  /// registry adds the `detail` and `fields` params (domains/projection.h) and the router selects
  /// the fields and cuts the reply to output.maxReplyBytes, continuing at `offset`.
  std::vector<std::string_view> row_fields;
  /// Compact rows come back as a table (projection.h: rows_as_table): each field named once.
  bool table_rows = false;
  /// A read a caller may repeat cheaply: it takes `knownHash` and answers `_meta.hash`, or
  /// {unchanged:true} alone when the caller's hash is still the reply's (projection.h).
  bool known_hash = false;
  /// Takes `ids` in place of its `id`: the same call for each task, all in one transaction (one
  /// audit row each); data is {results:[{id,…} per task]}. The registry adds the `ids` param.
  bool bulk = false;
  /// A query that writes and takes it all back (plan.diff replays plans to read what they make):
  /// it runs in a write transaction, seeing the store as writers do, and keeps nothing.
  bool speculates = false;
  /// May be one op of an atomic batch or a plan (domains/batch.h): a change of tasks that runs
  /// inside another call's transaction and that tasks.undo takes back.
  bool batchable = false;
  /// Other words callers reach for ("done" for complete; from another domain with its domain:
  /// "system.safestop"): never routed, only suggested when an unknown operation is one of them.
  std::vector<std::string_view> aliases;
  /// The original CLEO's names of this operation, "domain.operation" in any domain
  /// ("orchestrate.skill.list" for skills.list): they run it, the reply warning with its name
  /// (domains/original_names.h). Help level 2 shows them; levels 0 and 1 never do.
  std::vector<std::string_view> original_names;
  /// What it needs from outside this process, checked by the capability resolver (capability/)
  /// before anything runs: "program:git" (on PATH), "git-repo" (the project is in a git work
  /// tree), "gh-auth" (gh is authenticated), "config:validate.testCommand" (a configured value is
  /// set). Empty for native operations: they never reach a probe.
  std::vector<std::string_view> needs;
  /// Native operations that do part of the job when this one is unavailable ("release.changelog").
  std::vector<std::string_view> alternatives;
  /// Work that runs before the store's transaction, holding no lock: a subprocess (git, gh, a test
  /// command, a plug-in). Its reply reaches `handler` as Context::external; with no handler, it is
  /// the call's reply (audited in a short transaction of its own).
  Handler external;
  /// The external step only reads and checks (git, files): it changes nothing outside the store,
  /// so a proposal's preview (domains/approval.h) may run it.
  bool external_checks_only = false;
  /// Long enough to wait for (a test suite, an agent, a release's gates and git) that an MCP client
  /// which takes tasks gets a task for the call rather than a reply it waits for
  /// (gateway/task_runner.h): true of the params of such calls. Null: never.
  std::function<bool(const json::Value& params)> runs_long;
  /// The effects a call has beyond its own operation (Effect), read in the store before it runs
  /// (domains/approval.h asks them when approval.required lists rules), given the call's params and
  /// its subjects (its id, or each of a bulk call's ids). Null: none.
  std::function<Result<std::vector<Effect>>(Context&, const Params&, const std::vector<std::string>& subjects)> effects;
  Handler handler;

  std::string full_name() const;          // "tasks.add"
  /// A working call from the first example, its params written as JSON.
  Advice example_call() const;
  /// A call of this operation with the given params object (JSON text), written as JSON.
  Advice call_with(std::string_view params_json) const;
  const ParamSpec* find_param(std::string_view param) const;
  bool list_like() const { return !row_fields.empty(); }
  /// Codes the router itself may answer for any call of this operation (validation, project,
  /// read-only mode, sessions, the store), beyond `errors`.
  std::vector<ErrorCode> router_errors() const;
  /// True when a call may fail with `code`: it is in `errors` or router_errors() (E_INTERNAL is
  /// always possible: it is a bug). Test builds check every failure against this.
  bool declares(ErrorCode code) const;
};

class Registry {
 public:
  void add(OperationSpec spec);
  const OperationSpec* find(std::string_view domain, std::string_view name) const;
  /// The operation that lists `word` among its aliases — in `domain`, else in another domain as
  /// "domain.word"; on `gateway`, else on the other — or null.
  const OperationSpec* find_alias(std::string_view domain, std::string_view word, Gateway gateway) const;
  /// The operation that the original CLEO's `domain`.`name` runs (OperationSpec::original_names), or null.
  const OperationSpec* find_original(std::string_view domain, std::string_view name) const;
  /// A higher layer's step after the handler of an operation registered below it (disclosure/
  /// writes the agent instructions after system.init). The operation declares what the step adds
  /// where it is declared, in its `returns`; nothing else of its spec changes.
  void add_step(std::string_view domain, std::string_view name, Step step);
  std::span<const OperationSpec> operations() const { return specs_; }
  /// Domains in the canonical order of docs/architecture.md §5 that have at least one operation
  /// (for `gateway`, only domains with an operation on that gateway), then plug-ins' own domains.
  std::vector<std::string> domains() const;
  std::vector<std::string> domains(Gateway gateway) const;
  std::vector<std::string> operation_names(std::string_view domain) const;
  std::vector<std::string> operation_names(std::string_view domain, Gateway gateway) const;

  /// Plug-in engines (capability/plugins.h): an operation declared at run time, in a new domain
  /// or replacing a native operation of the same name. Its strings must come from own().
  void add_plugin(OperationSpec spec);
  /// Keeps `text` alive as long as this registry (and its copies) and returns a view of it.
  std::string_view own(std::string text);

  /// How advice is written in what agents receive: the MCP tools' syntax (gateway/mcp_syntax.h),
  /// set where the product is assembled and kept by copies. A reply's size and hash are measured
  /// so (output.maxReplyBytes, knownHash), and session.briefing's budget and hook text are written
  /// so, whichever edge the reply goes to. A registry of domains/ alone keeps advice as its value.
  void set_agent_writer(const AdviceWriter* writer) { agent_writer_ = writer; }
  const AdviceWriter& agent_writer() const;

 private:
  OperationSpec* find_mutable(std::string_view domain, std::string_view name);

  std::vector<OperationSpec> specs_;
  std::vector<std::string_view> plugin_domains_;  // domains only plug-ins serve, in first-seen order
  std::shared_ptr<std::deque<std::string>> strings_;
  const AdviceWriter* agent_writer_ = nullptr;
};

/// Registers every operation implemented in domains/: calls the functions domains/operations.def
/// lists, in its order. The product's registry (these plus the
/// operations of higher layers such as disclosure/) is assembled by `registry()` in
/// gateway/product.h; handlers reach it through Context::registry, never through a global.
void register_domain_operations(Registry& registry);

/// Canonical order of all domains (docs/architecture.md §5), including those with no operations yet.
std::span<const std::string_view> canonical_domains();

}  // namespace ct
