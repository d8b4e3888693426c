// ct_crashloop — the crash loop: rounds of concurrent writers on one store, every writer killed
// with SIGKILL at a random moment, then the store is checked (issue "Hardening").
//
//   ct_crashloop --ct PATH [--rounds N] [--seed S] [--min-ms A] [--max-ms B] [--only-with-env NAME]
//
// Each round, four writers work on the same store (.cleo/tasks.db), each in its own session and
// on its own tasks: two CLI writers (a loop of `ct …` processes) and two `ct mcp` writers (one
// server each, fed tools/call lines on stdin, one request in flight). They mix tasks.add,
// tasks.update (notes, priority), tasks.start, tasks.stop, tasks.complete and tasks.delete (which
// cancels and archives). A writer retries what the product marks retryable (E_LOCK_TIMEOUT); MCP
// writers send the same idempotencyKey with each attempt. Every ACKNOWLEDGED write — a success
// envelope received, from a process that may have died right after printing it — is applied to
// the writer's model of its tasks. After a random delay (A..B ms, then up to 200 ms more per
// writer) all four are killed with SIGKILL; the one write each may have had in flight is allowed
// to be either fully there or fully absent. Then:
//   1. PRAGMA integrity_check is ok (before any `ct` touches the crashed store);
//   2. `ct validate` and `ct validate audit` say valid;
//   3. `ct tasks export --label crash-rN` equals each writer's model exactly (ids, titles,
//      priority, status, archived, notes in order) — every acknowledged write is there, nothing
//      half-written, nothing extra;
//   4. the search index has one row per task, and one acknowledged task is found again with
//      `ct show` (by id) and `ct find` (by its unique title word).
// At the end every round's tasks are exported again and compared (later rounds changed nothing
// they did not own), and the figures are printed.
//
// The seed (printed; --seed or CT_CRASHLOOP_SEED) fixes each writer's sequence of operations and
// the kill delays; how far each writer gets before its kill depends on timing and is not
// reproducible. --rounds may be overridden by CT_CRASHLOOP_ROUNDS. With --only-with-env NAME the
// program exits 77 (ctest: skipped) unless NAME=1 — the 50-round ctest case `crashloop` is opt-in.
// On a failure the store is kept and its path printed.
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/json.h"
#include "core/json_parse.h"
#include "support/ct_client.h"
#include "support/sandbox.h"
#include "support/store_checks.h"

namespace {

namespace fs = std::filesystem;
using ct::json::Value;
using ct::testing::ChildProcess;
using ct::testing::CtCommand;
using ct::testing::CtRun;
using ct::testing::McpClient;
using Clock = std::chrono::steady_clock;

struct Options {
  std::string ct;
  int rounds = 50;
  std::uint64_t seed = 20260101;
  int min_ms = 300;
  int max_ms = 1500;
  std::string only_with_env;
};

// -- the model of one writer's tasks -----------------------------------------------------------

struct Task {
  std::string id;
  std::string title;
  std::string priority = "medium";
  std::string status = "pending";
  bool archived = false;
  std::vector<std::string> notes;

  friend bool operator==(const Task&, const Task&) = default;
};

enum class OpKind { Add, Notes, Priority, Start, Stop, Complete, Delete };

const char* to_string(OpKind kind) {
  switch (kind) {
    case OpKind::Add: return "tasks.add";
    case OpKind::Notes: return "tasks.update(notes)";
    case OpKind::Priority: return "tasks.update(priority)";
    case OpKind::Start: return "tasks.start";
    case OpKind::Stop: return "tasks.stop";
    case OpKind::Complete: return "tasks.complete";
    case OpKind::Delete: return "tasks.delete";
  }
  return "?";
}

struct Op {
  OpKind kind = OpKind::Add;
  std::string target;  // the task (not for add and stop)
  std::string text;    // add: the title; notes: the note; priority: the new priority
  std::string key;     // idempotencyKey (MCP)
};

/// What one writer's acknowledged writes made of its tasks.
struct Model {
  std::map<std::string, Task> tasks;  // by id
  std::string focus;                  // the task its session holds, "" when none

  /// The effect of `op` (for an add, `new_id` is the id it got).
  void apply(const Op& op, const std::string& new_id) {
    auto stop_focus = [&] {
      if (!focus.empty() && tasks.contains(focus) && tasks[focus].status == "active") tasks[focus].status = "pending";
      focus.clear();
    };
    switch (op.kind) {
      case OpKind::Add:
        tasks[new_id] = Task{.id = new_id, .title = op.text};
        break;
      case OpKind::Notes:
        tasks[op.target].notes.push_back(op.text);
        break;
      case OpKind::Priority:
        tasks[op.target].priority = op.text;
        break;
      case OpKind::Start:
        if (focus != op.target) stop_focus();
        tasks[op.target].status = "active";
        focus = op.target;
        break;
      case OpKind::Stop:
        stop_focus();
        break;
      case OpKind::Complete:
        tasks[op.target].status = "done";
        if (focus == op.target) focus.clear();
        break;
      case OpKind::Delete:
        tasks[op.target].status = "cancelled";
        tasks[op.target].archived = true;
        if (focus == op.target) focus.clear();
        break;
    }
  }
};

std::string describe(const Task& task) {
  std::string notes;
  for (const auto& note : task.notes) notes += (notes.empty() ? "" : " | ") + note;
  return task.id + " \"" + task.title + "\" " + task.priority + " " + task.status + (task.archived ? " archived" : "") +
         " notes[" + notes + "]";
}

/// Where two sets of tasks differ first, "" when they are equal.
std::string difference(const std::map<std::string, Task>& expected, const std::map<std::string, Task>& actual) {
  for (const auto& [id, task] : expected) {
    auto found = actual.find(id);
    if (found == actual.end()) return "missing: " + describe(task);
    if (!(found->second == task)) return "expected " + describe(task) + ", stored " + describe(found->second);
  }
  for (const auto& [id, task] : actual)
    if (!expected.contains(id)) return "not written by an acknowledged call: " + describe(task);
  return "";
}

// -- writers -----------------------------------------------------------------------------------

enum class WriterKind { Cli, Mcp };

struct Figures {
  int rounds = 0;
  long acknowledged = 0;       // success envelopes received
  long acknowledged_cli = 0;
  long acknowledged_mcp = 0;
  long verified = 0;           // acknowledged writes whose effect was found in the store
  int kills = 0;               // processes killed with SIGKILL
  int in_flight = 0;           // writes in flight at a kill
  int in_flight_committed = 0; // … that turned out committed
  int retries = 0;             // retried retryable failures
};

class Writer {
 public:
  Writer(WriterKind kind, std::string name, std::uint64_t seed, const CtCommand& ct, int round)
      : kind_(kind), name_(std::move(name)), rng_(seed), ct_(ct), label_("crash-r" + std::to_string(round)) {}

  const std::string& name() const { return name_; }
  WriterKind kind() const { return kind_; }
  Model& model() { return model_; }
  const std::optional<Op>& pending() const { return pending_; }
  int acknowledged() const { return acknowledged_; }
  int retries() const { return retries_; }
  const std::vector<std::string>& failures() const { return failures_; }

  /// The writer's loop, until it is killed.
  void run() { kind_ == WriterKind::Cli ? run_cli() : run_mcp(); }

  /// SIGKILL to its process (the running `ct` command or the `ct mcp` server); the loop ends.
  /// False when no process was running (a CLI writer between two commands).
  bool kill() {
    std::lock_guard lock(lock_);
    stopped_ = true;
    if (current_ == nullptr) return false;
    current_->kill(SIGKILL);
    return true;
  }

 private:
  Op next_op() {
    Op op;
    op.key = name_ + "-" + std::to_string(++sequence_);
    std::vector<std::string> live;
    for (const auto& [id, task] : model_.tasks)
      if (task.status != "done" && task.status != "cancelled") live.push_back(id);
    const int roll = std::uniform_int_distribution<int>(0, 99)(rng_);
    auto pick = [&] { return live[std::uniform_int_distribution<std::size_t>(0, live.size() - 1)(rng_)]; };
    if (live.empty() || roll < 30) {
      op.kind = OpKind::Add;
      op.text = name_ + " n" + std::to_string(sequence_) + " write";
    } else if (roll < 52) {
      op.kind = OpKind::Notes;
      op.target = pick();
      op.text = "note " + std::to_string(sequence_) + " by " + name_;
    } else if (roll < 70) {
      op.kind = OpKind::Priority;
      op.target = pick();
      static const char* kPriorities[] = {"critical", "high", "medium", "low"};
      do {
        op.text = kPriorities[std::uniform_int_distribution<int>(0, 3)(rng_)];
      } while (op.text == model_.tasks[op.target].priority);
    } else if (roll < 80) {
      op.kind = OpKind::Start;
      op.target = pick();
    } else if (roll < 85) {
      op.kind = OpKind::Stop;
    } else if (roll < 94) {
      op.kind = OpKind::Complete;
      op.target = pick();
    } else {
      op.kind = OpKind::Delete;
      op.target = pick();
    }
    return op;
  }

  std::vector<std::string> cli_args(const Op& op) const {
    std::vector<std::string> args;
    switch (op.kind) {
      case OpKind::Add: args = {"add", op.text, "--labels", label_}; break;
      case OpKind::Notes: args = {"update", op.target, "--notes", op.text}; break;
      case OpKind::Priority: args = {"update", op.target, "--priority", op.text}; break;
      case OpKind::Start: args = {"start", op.target}; break;
      case OpKind::Stop: args = {"stop"}; break;
      case OpKind::Complete: args = {"complete", op.target}; break;
      case OpKind::Delete: args = {"delete", op.target}; break;
    }
    args.insert(args.end(), {"--session", session_, "--json"});
    return args;
  }

  static std::string quoted(const std::string& text) {
    std::string out;
    ct::json::write_string(out, text);
    return out;
  }

  std::string mcp_params(const Op& op) const {
    std::string params = "{";
    switch (op.kind) {
      case OpKind::Add: params += R"("title":)" + quoted(op.text) + R"(,"labels":[)" + quoted(label_) + "],"; break;
      case OpKind::Notes: params += R"("id":)" + quoted(op.target) + R"(,"notes":)" + quoted(op.text) + ","; break;
      case OpKind::Priority: params += R"("id":)" + quoted(op.target) + R"(,"priority":)" + quoted(op.text) + ","; break;
      case OpKind::Stop: break;
      case OpKind::Start:
      case OpKind::Complete:
      case OpKind::Delete: params += R"("id":)" + quoted(op.target) + ","; break;
    }
    return params + R"("idempotencyKey":)" + quoted(op.key) + "}";
  }

  static const char* operation(OpKind kind) {
    switch (kind) {
      case OpKind::Add: return "add";
      case OpKind::Notes:
      case OpKind::Priority: return "update";
      case OpKind::Start: return "start";
      case OpKind::Stop: return "stop";
      case OpKind::Complete: return "complete";
      case OpKind::Delete: return "delete";
    }
    return "?";
  }

  /// A reply to `op`: applied when it is a success; true when the op is settled (false: retry).
  bool settle(const Op& op, const Value& envelope) {
    if (ct::testing::succeeded(envelope)) {
      const Value& new_id = envelope["data"]["id"];
      std::string id = op.kind == OpKind::Add && new_id.is_string() ? new_id.as_string() : "";
      if (op.kind == OpKind::Add && id.empty())
        failures_.push_back(name_ + ": tasks.add without an id: " + envelope.dump());
      model_.apply(op, id);
      ++acknowledged_;
      return true;
    }
    if (ct::testing::retryable(envelope)) {
      ++retries_;
      return false;
    }
    failures_.push_back(name_ + ": " + to_string(op.kind) + " " + op.target + " failed: " + envelope.dump());
    return true;
  }

  void run_cli() {
    CtRun started = ct_.run_retrying({"session", "start", "global", "--name", name_});
    if (!ct::testing::succeeded(started.json)) {
      std::lock_guard lock(lock_);
      if (!stopped_) failures_.push_back(name_ + ": session start failed: " + started.out);
      return;
    }
    session_ = started.json["data"]["id"].as_string();
    std::optional<Op> op;
    while (true) {
      if (!op) op = next_op();
      std::vector<std::string> argv{ct_.ct()};
      for (auto& arg : cli_args(*op)) argv.push_back(std::move(arg));
      ct::testing::SpawnOptions spawn;
      spawn.env = ct_.env();
      std::optional<ChildProcess> child;
      {
        std::lock_guard lock(lock_);
        if (stopped_) return;
        auto started_child = ChildProcess::start(argv, spawn);
        if (!started_child) {
          failures_.push_back(started_child.error());
          return;
        }
        child.emplace(std::move(*started_child));
        current_ = &*child;
      }
      std::string out = child->read_all();
      ct::testing::ExitStatus status = child->wait();
      bool stopped;
      {
        std::lock_guard lock(lock_);
        current_ = nullptr;
        stopped = stopped_;
      }
      auto parsed = ct::json::parse(out);
      if (!parsed) {
        // Killed before it printed its whole reply: the write may or may not be committed.
        if (stopped && status.signaled) pending_ = op;
        else failures_.push_back(name_ + ": `ct` exited " + std::to_string(status.code) + " without JSON: " + out);
        return;
      }
      if (settle(*op, *parsed)) op.reset();
      if (stopped) return;  // (a retryable failure wrote nothing: no write in flight)
    }
  }

  void run_mcp() {
    {
      std::lock_guard lock(lock_);
      if (stopped_) return;
      auto client = McpClient::start(ct_.ct(), ct_.env());
      if (!client) {
        failures_.push_back(client.error());
        return;
      }
      server_.emplace(std::move(*client));
      current_ = &server_->process();
    }
    bool ready = server_->initialize();
    Value session = ready ? server_->call_retrying("cleo_mutate", "session", "start",
                                                   R"({"scope":"global","name":)" + quoted(name_) + "}", retries_)
                          : Value();
    if (!ct::testing::succeeded(session)) {
      std::lock_guard lock(lock_);
      if (!stopped_) failures_.push_back(name_ + ": session.start failed: " + session.dump());
      return;
    }
    std::optional<Op> op;
    while (true) {
      if (!op) op = next_op();
      {
        std::lock_guard lock(lock_);
        if (stopped_) return;
      }
      Value envelope = server_->call("cleo_mutate", "tasks", operation(op->kind), mcp_params(*op));
      if (envelope.is_null()) {  // the server is gone: the request may or may not be committed
        pending_ = op;
        return;
      }
      if (settle(*op, envelope)) op.reset();
    }
  }

  const WriterKind kind_;
  const std::string name_;
  std::mt19937_64 rng_;
  const CtCommand& ct_;
  const std::string label_;
  std::string session_;
  Model model_;
  std::optional<Op> pending_;
  int sequence_ = 0;
  int acknowledged_ = 0;
  std::atomic<int> retries_{0};
  std::vector<std::string> failures_;
  std::optional<McpClient> server_;

  std::mutex lock_;                  // guards the fields below against kill() from another thread
  bool stopped_ = false;
  ChildProcess* current_ = nullptr;  // the process to kill
};

// -- checks ------------------------------------------------------------------------------------

struct Run {
  Options options;
  std::unique_ptr<CtCommand> ct;
  fs::path project;
  fs::path db;
  Figures figures;
  std::vector<std::string> failures;
  std::map<int, std::vector<Model>> rounds;  // settled models of every round, for the final check

  void fail(const std::string& what) {
    std::fprintf(stderr, "FAILED: %s\n", what.c_str());
    failures.push_back(what);
  }
};

/// The stored tasks of round `round`, through `ct tasks export` (archived ones included).
std::optional<std::map<std::string, Task>> export_round(Run& run, int round) {
  CtRun ran = run.ct->run_retrying(
      {"tasks", "export", "--label", "crash-r" + std::to_string(round), "--archived", "include"});
  if (!ct::testing::succeeded(ran.json) || !ran.json["data"]["tasks"].is_array()) {
    run.fail("round " + std::to_string(round) + ": ct tasks export failed: " + ran.out.substr(0, 2000));
    return std::nullopt;
  }
  if (ran.json["_meta"]["page"]["hasMore"].is_bool() && ran.json["_meta"]["page"]["hasMore"].as_bool()) {
    run.fail("round " + std::to_string(round) + ": ct tasks export was cut (hasMore)");
    return std::nullopt;
  }
  std::map<std::string, Task> out;
  for (const Value& record : ran.json["data"]["tasks"].as_array()) {
    Task task;
    task.id = record["id"].as_string();
    task.title = record["title"].as_string();
    task.priority = record["priority"].as_string();
    task.status = record["status"].as_string();
    task.archived = record["archived"].is_bool() && record["archived"].as_bool();
    if (record["notes"].is_array())
      for (const Value& note : record["notes"].as_array()) task.notes.push_back(note["text"].as_string());
    out[task.id] = std::move(task);
  }
  return out;
}

/// The tasks of `stored` whose title belongs to the writer `name`.
std::map<std::string, Task> owned_by(const std::map<std::string, Task>& stored, const std::string& name) {
  std::map<std::string, Task> out;
  for (const auto& [id, task] : stored)
    if (task.title.starts_with(name + " ")) out[id] = task;
  return out;
}

/// Checks one writer after the kill and settles its model: the store must hold exactly its
/// acknowledged writes, plus possibly its one write in flight, complete.
void check_writer(Run& run, Writer& writer, const std::map<std::string, Task>& stored) {
  Model& model = writer.model();
  const std::map<std::string, Task> mine = owned_by(stored, writer.name());
  std::string without = difference(model.tasks, mine);
  if (without.empty()) {
    run.figures.verified += writer.acknowledged();
    return;
  }
  if (const auto& op = writer.pending()) {
    Model with = model;
    std::string new_id;
    if (op->kind == OpKind::Add)
      for (const auto& [id, task] : mine)
        if (task.title == op->text) new_id = id;
    if (op->kind != OpKind::Add || !new_id.empty()) {
      with.apply(*op, new_id);
      if (difference(with.tasks, mine).empty()) {
        model = std::move(with);
        run.figures.verified += writer.acknowledged();
        ++run.figures.in_flight_committed;
        return;
      }
    }
  }
  std::string in_flight = writer.pending() ? std::string(to_string(writer.pending()->kind)) + " " +
                                                 writer.pending()->target + " " + writer.pending()->text
                                           : "none";
  run.fail(writer.name() + ": the store does not hold its acknowledged writes (" +
           std::to_string(writer.acknowledged()) + " acknowledged; in flight: " + in_flight + "): " + without);
}

/// One acknowledged task found again by id (`ct show`) and by its unique title word (`ct find`).
void check_lookups(Run& run, const Task& task) {
  CtRun shown = run.ct->run_retrying({"show", task.id});
  if (!ct::testing::succeeded(shown.json) || shown.json["data"]["title"] != Value(task.title))
    run.fail("ct show " + task.id + " does not show \"" + task.title + "\": " + shown.out.substr(0, 500));
  // The title ("r3w1 n17 write") is unique to the task.
  CtRun found = run.ct->run_retrying({"find", task.title, "--include-archived", "--limit", "100"});
  bool hit = false;
  // tasks.find answers a table whose first column is the id.
  if (ct::testing::succeeded(found.json) && found.json["data"]["rows"].is_array())
    for (const Value& row : found.json["data"]["rows"].as_array()) hit = hit || row.as_array().at(0) == Value(task.id);
  if (!hit) run.fail("ct find \"" + task.title + "\" does not find " + task.id + ": " + found.out.substr(0, 500));
}

void check_search_index(Run& run, const std::string& when) {
  // Every task is indexed or noted for the index (tasks_fts_tail, searched from its row), and
  // every index row is a task's.
  auto tasks = ct::testing::query_rows(
      run.db,
      "SELECT (SELECT count(*) FROM tasks), (SELECT count(*) FROM tasks t WHERE t.num IN (SELECT rowid FROM tasks_fts) "
      "OR t.num IN (SELECT num FROM tasks_fts_tail)), (SELECT count(*) FROM tasks_fts)");
  if (!tasks) {
    run.fail(when + ": cannot count rows: " + tasks.error());
  } else if ((*tasks)[0][0] != (*tasks)[0][1] || std::stoll((*tasks)[0][2]) > std::stoll((*tasks)[0][0])) {
    run.fail(when + ": " + (*tasks)[0][0] + " tasks, " + (*tasks)[0][1] + " of them indexed or noted, " +
             (*tasks)[0][2] + " rows in the search index");
  }
}

void check_store(Run& run, const std::string& when) {
  for (const auto& problem : ct::testing::store_problems(*run.ct, run.db)) run.fail(when + ": " + problem);
}

// -- the loop ------------------------------------------------------------------------------------

std::uint64_t mix(std::uint64_t seed, std::uint64_t a, std::uint64_t b) {
  std::seed_seq sequence{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32),
                         static_cast<std::uint32_t>(a), static_cast<std::uint32_t>(b)};
  std::uint32_t out[2];
  sequence.generate(out, out + 2);
  return (static_cast<std::uint64_t>(out[0]) << 32) | out[1];
}

void round_of_writers(Run& run, int round) {
  const std::string when = "round " + std::to_string(round);
  std::mt19937_64 rng(mix(run.options.seed, static_cast<std::uint64_t>(round), 0xC0FFEE));
  std::vector<std::unique_ptr<Writer>> writers;
  const WriterKind kinds[] = {WriterKind::Cli, WriterKind::Mcp, WriterKind::Cli, WriterKind::Mcp};
  for (int w = 0; w < 4; ++w) {
    std::string name = "r" + std::to_string(round) + "w" + std::to_string(w);
    writers.push_back(std::make_unique<Writer>(kinds[w], name, mix(run.options.seed, static_cast<std::uint64_t>(round),
                                                                   static_cast<std::uint64_t>(w + 1)),
                                               *run.ct, round));
  }
  const int base = std::uniform_int_distribution<int>(run.options.min_ms, run.options.max_ms)(rng);
  std::vector<std::pair<int, int>> kills;  // (ms after the start, writer)
  for (int w = 0; w < 4; ++w) kills.emplace_back(base + std::uniform_int_distribution<int>(0, 200)(rng), w);
  std::sort(kills.begin(), kills.end());

  const auto start = Clock::now();
  std::vector<std::thread> threads;
  for (auto& writer : writers) threads.emplace_back([&writer] { writer->run(); });
  for (const auto& [at, w] : kills) {
    std::this_thread::sleep_until(start + std::chrono::milliseconds(at));
    if (writers[static_cast<std::size_t>(w)]->kill()) ++run.figures.kills;
  }
  for (auto& thread : threads) thread.join();

  int acknowledged = 0;
  for (auto& writer : writers) {
    for (const auto& failure : writer->failures()) run.fail(when + ": " + failure);
    acknowledged += writer->acknowledged();
    run.figures.acknowledged += writer->acknowledged();
    (writer->kind() == WriterKind::Cli ? run.figures.acknowledged_cli : run.figures.acknowledged_mcp) +=
        writer->acknowledged();
    run.figures.retries += writer->retries();
    if (writer->pending()) ++run.figures.in_flight;
  }

  // The crashed store as the kill left it: SQLite's own check first, then the product's.
  if (std::string problem = ct::testing::integrity_problem(run.db); !problem.empty()) run.fail(when + ": " + problem);
  ct::testing::Verdict schema = ct::testing::validate_schema(*run.ct);
  if (!schema.valid) run.fail(when + ": " + schema.problem);
  ct::testing::Verdict audit = ct::testing::validate_audit(*run.ct);
  if (!audit.valid) run.fail(when + ": " + audit.problem);

  auto stored = export_round(run, round);
  if (stored) {
    std::size_t owned = 0;
    for (auto& writer : writers) {
      check_writer(run, *writer, *stored);
      owned += owned_by(*stored, writer->name()).size();
    }
    if (owned != stored->size()) run.fail(when + ": the export holds tasks no writer of the round wrote");
    std::vector<const Task*> candidates;
    for (auto& writer : writers)
      for (const auto& [id, task] : writer->model().tasks) candidates.push_back(&task);
    if (!candidates.empty())
      check_lookups(run, *candidates[std::uniform_int_distribution<std::size_t>(0, candidates.size() - 1)(rng)]);
  }
  check_search_index(run, when);

  for (auto& writer : writers) run.rounds[round].push_back(writer->model());
  int in_flight = 0;
  for (auto& writer : writers) in_flight += writer->pending() ? 1 : 0;
  std::printf("round %d: kill after %d ms; %d writes acknowledged (cli %d+%d, mcp %d+%d); %d in flight; %s\n", round,
              base, acknowledged, writers[0]->acknowledged(), writers[2]->acknowledged(), writers[1]->acknowledged(),
              writers[3]->acknowledged(), in_flight, run.failures.empty() ? "store ok" : "FAILED");
  std::fflush(stdout);
  ++run.figures.rounds;
}

/// Every round's tasks again, against the settled models: nothing acknowledged went missing later.
void final_check(Run& run) {
  long tasks = 0;
  for (auto& [round, models] : run.rounds) {
    auto stored = export_round(run, round);
    if (!stored) return;
    std::map<std::string, Task> expected;
    for (const auto& model : models) {
      expected.insert(model.tasks.begin(), model.tasks.end());
      tasks += static_cast<long>(model.tasks.size());
    }
    if (std::string diff = difference(expected, *stored); !diff.empty())
      run.fail("final check, round " + std::to_string(round) + ": " + diff);
  }
  auto count = ct::testing::query_rows(run.db, "SELECT count(*) FROM tasks");
  if (!count || std::stol((*count)[0][0]) != tasks)
    run.fail("final check: " + (count ? (*count)[0][0] : count.error()) + " tasks stored, " + std::to_string(tasks) +
             " expected");
  check_store(run, "final check");
  check_search_index(run, "final check");
}

std::optional<Options> parse_options(int argc, char** argv) try {
  Options options;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (i + 1 >= argc) return std::nullopt;
    std::string value = argv[++i];
    if (arg == "--ct") options.ct = value;
    else if (arg == "--rounds") options.rounds = std::stoi(value);
    else if (arg == "--seed") options.seed = std::stoull(value);
    else if (arg == "--min-ms") options.min_ms = std::stoi(value);
    else if (arg == "--max-ms") options.max_ms = std::stoi(value);
    else if (arg == "--only-with-env") options.only_with_env = value;
    else return std::nullopt;
  }
  if (const char* seed = std::getenv("CT_CRASHLOOP_SEED"); seed && *seed) options.seed = std::stoull(seed);
  if (const char* rounds = std::getenv("CT_CRASHLOOP_ROUNDS"); rounds && *rounds) options.rounds = std::stoi(rounds);
  if (options.ct.empty() || options.rounds < 1 || options.min_ms < 0 || options.max_ms < options.min_ms)
    return std::nullopt;
  return options;
} catch (const std::exception&) {  // a number that does not parse
  return std::nullopt;
}

}  // namespace

int main(int argc, char** argv) {
  auto options = parse_options(argc, argv);
  if (!options) {
    std::fprintf(stderr,
                 "usage: ct_crashloop --ct PATH [--rounds N] [--seed S] [--min-ms A] [--max-ms B] "
                 "[--only-with-env NAME]\n  (CT_CRASHLOOP_SEED and CT_CRASHLOOP_ROUNDS override --seed and --rounds)\n");
    return 2;
  }
  if (!options->only_with_env.empty()) {
    const char* gate = std::getenv(options->only_with_env.c_str());
    if (gate == nullptr || std::string(gate) != "1") {
      std::printf("skipped: the %d-round crash loop runs only with %s=1 (e.g. `%s=1 ctest -L crashloop`)\n",
                  options->rounds, options->only_with_env.c_str(), options->only_with_env.c_str());
      return 77;
    }
  }
  signal(SIGPIPE, SIG_IGN);  // a killed server's stdin

  auto sandbox = ct::testing::sandbox_or_complain("ct-crashloop");
  if (!sandbox) return 2;
  Run run;
  run.options = *options;
  run.project = sandbox->root();
  run.db = run.project / ".cleo" / "tasks.db";
  run.ct = std::make_unique<CtCommand>(fs::absolute(options->ct).string(), sandbox->env_for(run.project));
  std::printf("crash loop: %d rounds, seed %llu (CT_CRASHLOOP_SEED), kills after %d–%d ms (+0–200 ms per writer), "
              "store %s\n",
              options->rounds, static_cast<unsigned long long>(options->seed), options->min_ms, options->max_ms,
              run.db.c_str());
  std::fflush(stdout);

  for (const std::vector<std::string>& setup :
       {std::vector<std::string>{"init"}, {"config", "set", "session.maxConcurrent", "0"},
        {"config", "set", "output.maxReplyBytes", "10000000"}}) {
    CtRun ran = run.ct->run_retrying(setup);
    if (!ct::testing::succeeded(ran.json)) {
      std::fprintf(stderr, "setup `ct %s` failed: %s\n", setup.front().c_str(), ran.out.c_str());
      sandbox->keep();
      return 1;
    }
  }

  const auto started = Clock::now();
  for (int round = 1; round <= options->rounds && run.failures.empty(); ++round) round_of_writers(run, round);
  if (run.failures.empty()) final_check(run);
  const double seconds = std::chrono::duration<double>(Clock::now() - started).count();

  const Figures& f = run.figures;
  std::printf("\ncrash loop figures (seed %llu):\n", static_cast<unsigned long long>(options->seed));
  std::printf("  rounds                      %d\n", f.rounds);
  std::printf("  processes killed (SIGKILL)  %d\n", f.kills);
  std::printf("  writes acknowledged         %ld (CLI %ld, MCP %ld)\n", f.acknowledged, f.acknowledged_cli,
              f.acknowledged_mcp);
  std::printf("  writes verified in store    %ld\n", f.verified);
  std::printf("  writes in flight at a kill  %d (found committed: %d, absent: %d)\n", f.in_flight,
              f.in_flight_committed, f.in_flight - f.in_flight_committed);
  std::printf("  retried retryable failures  %d\n", f.retries);
  std::printf("  duration                    %.1f s\n", seconds);
  if (run.failures.empty() && f.verified == f.acknowledged) {
    std::printf("crash loop: passed\n");
    return 0;
  }
  if (run.failures.empty()) run.fail("only " + std::to_string(f.verified) + " of " + std::to_string(f.acknowledged) +
                                     " acknowledged writes were verified");
  sandbox->keep();
  std::fprintf(stderr, "crash loop: %zu failure(s); the store is kept in %s\n", run.failures.size(),
               run.project.c_str());
  return 1;
}
