// ct_bench_plan — atomic batches and plans (issue 36) on a store of --tasks tasks. The store is the
// seeded workload of ct_bench_store (epics, tasks, subtasks, dependencies, ~30% done), built
// through the router, plus three epics of its own: one the batches go under, one the committed
// plans go under, and one with 1,000 tasks under it (each depending on 0–2 of the 50 before it,
// the first 30 % done) that the compared plan decomposes further. Each timed call is
// Router::dispatch + to_json (median, p95, min over --runs calls), on 200 ops of tasks.add
// (workload text, the epic as parent, ~40 % depending on 1–2 of the 20 ops before: "$k"):
//   tasks.batch {ops}               200 adds in one transaction            target < 50 ms at 10k
//   plan.apply {plan, ops}          staging them (run, then rolled back)   (no target; reported)
//   plan.commit {plan}              a plan holding them, made at once      target < 50 ms at 10k
//   plan.diff {plans:[id]}          over the 1,000-task epic (compact)     target < 20 ms
//   plan.diff {plans:[id], full}    the same, with the lists               (no target; reported)
//   plan.begin                      on an empty epic, and on the 1,000-task one: the same (issue 56)
//   begin + apply + diff + commit   a plan of 20 adds over the 1,000-task epic   target < 20 ms
// After each timed batch and commit, tasks.undo (not timed) takes it back, so the store keeps its
// size; each commit is of a plan begun (not timed) and staged (timed, the apply line) afresh. A
// reply that is not a success (or a diff row that says the plan no longer applies) aborts the run.
// The report is Markdown on stdout, for docs/performance.md; progress goes to stderr.
//   ct_bench_plan [--tasks 10000] [--runs 30] [--postgresql URL] [--keep DIR]
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "bench/report.h"
#include "bench/pg_schema.h"
#include "bench/router_calls.h"
#include "core/clock.h"
#include "core/version.h"
#include "gateway/mcp_syntax.h"
#include "gateway/product.h"

namespace ct::bench {
namespace {

constexpr int kOps = 200;
constexpr std::int64_t kEpicSize = 1000;

using Options = StoreOptions;

void progress(const std::string& text) { std::cerr << text << std::endl; }

double elapsed_ms(Steady::time_point start) { return std::chrono::duration<double, std::milli>(Steady::now() - start).count(); }

/// Dispatches and serialises; throws with the whole envelope when the call fails. `ms` is the time
/// of both.
std::string timed_call(Router& router, const Request& request, double& ms) {
  const auto started = Steady::now();
  Envelope envelope = router.dispatch(request);
  std::string out = to_json(envelope, McpAdvice(router.operations()));
  ms = elapsed_ms(started);
  if (!envelope.success) throw std::runtime_error(describe(request) + " failed: " + out);
  return out;
}

/// Dispatches and serialises, timed (`ms`, `bytes` the reply's size); throws when the call fails.
Envelope json_check(Router& router, const Request& request, double& ms, std::size_t& bytes) {
  const auto started = Steady::now();
  Envelope envelope = router.dispatch(request);
  std::string out = to_json(envelope, McpAdvice(router.operations()));
  ms = elapsed_ms(started);
  bytes = out.size();
  if (!envelope.success) throw std::runtime_error(describe(request) + " failed: " + out);
  return envelope;
}

Envelope must(Router& router, const Request& request) {
  Envelope envelope = router.dispatch(request);
  if (!envelope.success) throw std::runtime_error(describe(request) + " failed: " + to_json(envelope, McpAdvice(router.operations())));
  return envelope;
}

std::int64_t count_tasks(Router& router) {
  json::Value params = json::Value::object();
  params.set("status", json::Value::array_of(std::vector<std::string>{"pending", "active", "blocked", "done", "cancelled"}));
  params.set("limit", 1);
  Envelope listed = must(router, query("tasks", "list", std::move(params)));
  if (!listed.page) throw std::runtime_error("tasks.list answered no page");
  return listed.page->total;
}

/// Takes back the caller's last change of tasks, which must be `operation`'s (not timed).
void undo(Router& router, std::string_view operation) {
  Envelope undone = must(router, mutate("tasks", "undo", json::Value::object()));
  if (undone.data["operation"] != json::Value(operation))
    throw std::runtime_error("tasks.undo took back " + undone.data["operation"].dump() + ", not " + std::string(operation));
}

/// 200 tasks.add ops under `epic`: the workload's text, ~40 % depending on 1–2 of the 20 ops before
/// ("$k"); with `existing`, ~20 % also on one of those tasks.
json::Value make_ops(Workload& workload, Rng& rng, const std::string& epic, const std::vector<std::string>& existing) {
  json::Value ops = json::Value::array();
  for (int i = 1; i <= kOps; ++i) {
    json::Value params = workload.plan_add().params;
    for (std::string_view field : {"parent", "depends", "blockedBy", "type"}) params.erase(field);
    params.set("parent", epic);
    std::vector<std::string> depends;
    if (i > 1 && rng.chance(0.4)) {
      const std::size_t window = std::min<std::size_t>(static_cast<std::size_t>(i - 1), 20);
      const std::size_t count = rng.between(1, 2);
      for (std::size_t d = 0; d < count; ++d) {
        std::string dep = "$" + std::to_string(i - 1 - static_cast<int>(rng.below(window)));
        if (std::find(depends.begin(), depends.end(), dep) == depends.end()) depends.push_back(std::move(dep));
      }
    }
    if (!existing.empty() && rng.chance(0.2)) depends.push_back(existing[rng.below(existing.size())]);
    if (!depends.empty()) params.set("depends", json::Value::array_of(depends));
    json::Value op = json::Value::object();
    op.set("operation", "tasks.add");
    op.set("params", std::move(params));
    ops.push_back(std::move(op));
  }
  return ops;
}

std::string add_epic(Router& router, const std::string& title) {
  json::Value epic = json::Value::object();
  epic.set("title", title);
  epic.set("type", "epic");
  return must(router, mutate("tasks", "add", std::move(epic))).data["id"].as_string();
}

std::string begin_plan(Router& router, const std::string& label, const std::string& epic) {
  json::Value params = json::Value::object();
  params.set("label", label);
  params.set("epicId", epic);
  return must(router, mutate("plan", "begin", std::move(params))).data["plan"].as_string();
}

Request apply_request(const std::string& plan, json::Value ops) {
  json::Value params = json::Value::object();
  params.set("plan", plan);
  params.set("ops", std::move(ops));
  return mutate("plan", "apply", std::move(params));
}

int run(const Options& options) {
  WorkDir work(options.keep, "ct-bench-plan");
  const fs::path& dir = work.path();
  const PgSchemaDrop schema(options.postgresql, write_bench_config(dir, options.postgresql, "bench_plan"),
                            options.keep.has_value());
  RouterOptions router_options;
  Router router(registry(), Workspace::open(dir), router_options, std::make_unique<SystemClock>());
  call(router, mutate("system", "init", json::Value::object()));

  // The store: the workload, then the three epics of the benchmark (the 1,000-task one last).
  const std::int64_t fill = options.tasks - 3 - kEpicSize;
  progress("adding " + std::to_string(fill) + " workload tasks");
  auto started = Steady::now();
  Workload workload(20261128);
  fill_store(router, workload, fill, [](std::int64_t, const std::string&, double) {});
  const std::string batch_epic = add_epic(router, "Batches of the benchmark");
  const std::string commit_epic = add_epic(router, "Committed plans of the benchmark");
  const std::string diff_epic = add_epic(router, "A 1,000-task epic a plan decomposes");
  progress("adding the 1,000-task epic " + diff_epic);
  Rng rng(20261128);
  std::vector<std::string> children;
  for (std::int64_t t = 0; t < kEpicSize; ++t) {
    json::Value params = json::Value::object();
    params.set("title", "Step " + std::to_string(t + 1) + " of the big epic");
    params.set("parent", diff_epic);
    std::vector<std::string> depends;
    const std::size_t window = std::min<std::size_t>(children.size(), 50);
    for (int d = 0; d < 2 && window > 0; ++d)
      if (rng.chance(0.6)) {
        const std::string& dep = children[children.size() - 1 - rng.below(window)];
        if (std::find(depends.begin(), depends.end(), dep) == depends.end()) depends.push_back(dep);
      }
    if (!depends.empty()) params.set("depends", json::Value::array_of(depends));
    children.push_back(must(router, mutate("tasks", "add", std::move(params))).data["id"].as_string());
  }
  for (std::size_t t = 0; t < children.size() * 3 / 10; ++t) {
    json::Value params = json::Value::object();
    params.set("id", children[t]);
    call(router, mutate("tasks", "complete", std::move(params)));
  }
  const std::int64_t size_before = count_tasks(router);
  progress("built " + std::to_string(size_before) + " tasks in " + format_fixed(elapsed_ms(started) / 1000, 1) + " s");

  TimedRow batch{"tasks.batch {200 × tasks.add}", {}, 0, 50, true};
  TimedRow apply{"plan.apply {200 × tasks.add} (staging: run, rolled back)", {}, 0, 0};
  TimedRow commit{"plan.commit (a plan of 200 × tasks.add)", {}, 0, 50, true};
  // One untimed round first (warms the statement and page caches), as timed_calls does.
  for (int run = -1; run < options.runs; ++run) {
    if ((run + 1) % 10 == 0) progress("batch and commit: run " + std::to_string(run + 1) + " of " + std::to_string(options.runs));
    double ms = 0;
    // (a) tasks.batch, taken back.
    json::Value params = json::Value::object();
    params.set("ops", make_ops(workload, rng, batch_epic, {}));
    std::string out = timed_call(router, mutate("tasks", "batch", std::move(params)), ms);
    if (run >= 0) {
      batch.ms.push_back(ms);
      batch.bytes = out.size();
    }
    undo(router, "tasks.batch");
    // (b) a plan begun and staged (apply timed as its own line), committed (timed), taken back.
    const std::string plan = begin_plan(router, "bench " + std::to_string(run + 1), commit_epic);
    out = timed_call(router, apply_request(plan, make_ops(workload, rng, commit_epic, {})), ms);
    if (run >= 0) {
      apply.ms.push_back(ms);
      apply.bytes = out.size();
    }
    json::Value commit_params = json::Value::object();
    commit_params.set("plan", plan);
    Request commit_request = mutate("plan", "commit", std::move(commit_params));
    const auto commit_started = Steady::now();
    Envelope committed = router.dispatch(commit_request);
    out = to_json(committed, McpAdvice(router.operations()));
    ms = elapsed_ms(commit_started);
    if (!committed.success) throw std::runtime_error(describe(commit_request) + " failed: " + out);
    if (committed.data["ids"].size() != static_cast<std::size_t>(kOps)) throw std::runtime_error("plan.commit made not 200 tasks: " + out);
    if (run >= 0) {
      commit.ms.push_back(ms);
      commit.bytes = out.size();
    }
    undo(router, "plan.commit");
  }
  const std::int64_t size_after = count_tasks(router);
  if (size_after != size_before)
    throw std::runtime_error("the store has " + std::to_string(size_after) + " tasks after the runs, " +
                             std::to_string(size_before) + " before");

  // (c) plan.diff of one plan staged once over the 1,000-task epic.
  progress("plan.diff over " + diff_epic);
  const std::string diff_plan = begin_plan(router, "decompose the big epic", diff_epic);
  {
    std::vector<std::string> open(children.begin() + static_cast<std::ptrdiff_t>(children.size() * 3 / 10), children.end());
    must(router, apply_request(diff_plan, make_ops(workload, rng, diff_epic, open)));
  }
  auto diff = [&](bool full) {
    return [&, full] {
      json::Value params = json::Value::object();
      params.set("plans", json::Value::array_of(std::vector<std::string>{diff_plan}));
      if (full) params.set("detail", "full");
      return query("plan", "diff", std::move(params));
    };
  };
  // A diff row of a plan that no longer applies is a success with an error in it: never timed.
  {
    Envelope checked = must(router, diff(false)());
    const json::Value& row = checked.data.as_array().at(0);
    if (row.contains("error") || row["adds"] != json::Value(kOps) || row.contains("moved"))
      throw std::runtime_error("plan.diff: " + to_json(checked, McpAdvice(router.operations())));
    progress("  before " + row["before"].dump() + "\n  after " + row["after"].dump());
  }
  TimedRow diff_compact{"plan.diff {plans:[a plan of 200 adds]} over a 1,000-task epic (compact)", {}, 0, 20};
  diff_compact.ms = timed_calls(router, diff(false), options.runs, diff_compact.bytes);
  TimedRow diff_full{"plan.diff {…, detail: full}", {}, 0, 0};
  diff_full.ms = timed_calls(router, diff(true), options.runs, diff_full.bytes);

  // (d) plan.begin on an empty epic and on the 1,000-task one (issue 56: independent of the epic's
  // size), each plan discarded (not timed); (e) a whole small plan over the 1,000-task epic: begin,
  // apply 20 adds, diff, commit (timed together), then taken back by tasks.undo (not timed).
  progress("plan.begin and a 20-task plan over " + diff_epic);
  const std::string empty_epic = add_epic(router, "An empty epic");
  TimedRow begin_empty{"plan.begin on an empty epic", {}, 0, 0};
  TimedRow begin_big{"plan.begin on the 1,000-task epic", {}, 0, 0};
  TimedRow round{"plan.begin + apply {20 × tasks.add} + diff + commit, over the 1,000-task epic", {}, 0, 20, true};
  for (int run = -1; run < options.runs; ++run) {
    for (auto [row, epic] : {std::pair{&begin_empty, &empty_epic}, std::pair{&begin_big, &diff_epic}}) {
      json::Value params = json::Value::object();
      params.set("label", "begun " + std::to_string(run + 1));
      params.set("epicId", *epic);
      double ms = 0;
      Envelope begun = json_check(router, mutate("plan", "begin", std::move(params)), ms, row->bytes);
      if (run >= 0) row->ms.push_back(ms);
      json::Value discard = json::Value::object();
      discard.set("plan", begun.data["plan"].as_string());
      must(router, mutate("plan", "discard", std::move(discard)));
    }
    json::Value ops = make_ops(workload, rng, diff_epic, {});
    ops.as_array().resize(20);  // its "$k" name earlier ops only
    const auto started_round = Steady::now();
    const std::string plan = begin_plan(router, "small " + std::to_string(run + 1), diff_epic);
    must(router, apply_request(plan, std::move(ops)));
    json::Value diff_params = json::Value::object();
    diff_params.set("plans", json::Value::array_of(std::vector<std::string>{plan}));
    Envelope diffed = must(router, query("plan", "diff", std::move(diff_params)));
    if (diffed.data.as_array().at(0).contains("error")) throw std::runtime_error("plan.diff of " + plan + " failed");
    json::Value commit_params = json::Value::object();
    commit_params.set("plan", plan);
    Envelope committed = must(router, mutate("plan", "commit", std::move(commit_params)));
    const std::string out = to_json(committed, McpAdvice(router.operations()));
    const double ms = elapsed_ms(started_round);
    if (run >= 0) {
      round.ms.push_back(ms);
      round.bytes = out.size();
    }
    undo(router, "plan.commit");
  }

  for (TimedRow* row : {&batch, &apply, &commit, &begin_empty, &begin_big, &round}) std::sort(row->ms.begin(), row->ms.end());
  const std::vector<TimedRow> rows = {std::move(batch),       std::move(apply),     std::move(commit),
                                      std::move(diff_compact), std::move(diff_full), std::move(begin_empty),
                                      std::move(begin_big),    std::move(round)};
  std::printf("ct_bench_plan (%s build, %s store of %lld tasks, ct %s), %d runs each, load average %s\n\n",
              CT_BENCH_BUILD_TYPE, options.postgresql ? "PostgreSQL" : "SQLite", static_cast<long long>(size_before),
              std::string(ct::product_version()).c_str(), options.runs, load_average().c_str());
  print_timed_rows("call", rows, options.postgresql.has_value());
  return 0;
}

}  // namespace
}  // namespace ct::bench

int main(int argc, char** argv) {
  using namespace ct::bench;
  auto parsed = parse_store_options(argc, argv, "ct_bench_plan", {.tasks = 10000, .runs = 30});
  if (!parsed) return 2;
  const Options& options = *parsed;
  if (options.tasks < kEpicSize + 3 || options.runs < 1) {
    std::fprintf(stderr, "ct_bench_plan: --tasks must be at least %lld (the 1,000-task epic and two more) and --runs at least 1\n",
                 static_cast<long long>(kEpicSize + 3));
    return 2;
  }
  try {
    return run(options);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ct_bench_plan: %s\n", e.what());
    return 1;
  }
}
