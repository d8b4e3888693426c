// Multi-process safety of one project store, with the real `ct` binary (docs/architecture.md §4, issue 4):
//
//   ct_multiproc --ct PATH writers     8 writer processes × 200 mutations (4 sequences of `ct`
//                                      invocations, 4 `ct mcp` servers) → exactly the expected rows,
//                                      unique ids, a verifiable audit chain, a clean validate.schema
//   ct_multiproc --ct PATH claim-race  16 `ct mcp` servers, each in its own session, send
//                                      tasks.start for the same task at once → one wins, 15 get
//                                      E_TASK_CLAIMED
//   ct_multiproc --ct PATH config-reload  a running `ct mcp` follows config.json changed by `ct
//                                      config set` in another process, on its next call
//   ct_multiproc --ct PATH manifest-append  6 processes append 150 research lines each to
//                                      MANIFEST.jsonl (O_APPEND, one write per line) while `ct research
//                                      sync` runs again and again → after a last sync every id is
//                                      stored exactly once, no line was reported invalid
//   ct_multiproc --ct PATH lease       claims with leases: a claim outlives its SIGKILLed agent only
//                                      until the lease ends, then is taken over (audited); a `ct mcp`
//                                      whose stdin closes releases it at once; 16 racers for a lapsed
//                                      claim → one wins, never two holders
//   ct_multiproc --ct PATH kill        a `ct mcp` server fed a stream of mutations is killed with
//                                      SIGKILL mid-stream (three times) → validate.schema and
//                                      validate.audit pass, every acknowledged mutation is there
//   ct_multiproc --ct PATH plans       two orchestrators (`ct mcp` each) stage competing plans over
//                                      the same epic and commit at once, five rounds → exactly one
//                                      commits, the other gets E_CONCURRENT_MODIFICATION naming what
//                                      moved, rebases and commits; every task made once, the trail valid
//   ct_multiproc --ct PATH serve-stop  `ct serve` ends at once on SIGINT when idle (exit 0), and within
//                                      its --grace when a call is busy running a program, which
//                                      ends with it; acknowledged writes are kept (issue 50 item 1)
//   ct_multiproc --ct PATH big-values  a `ct mcp` server with a plug-in param patterned (a+)+$ and
//                                      one ^[a-z]+$, neither with a max, gets a 150 KB value and
//                                      29 a's and a '!' → E_VALIDATION for both, quickly, and it
//                                      still answers (issue 30 item 1)
//
// Children are started with posix_spawn (no shell) in an environment built from scratch; the
// store is inspected through `ct` and, for row-level facts, read-only with SQLite. No timing is
// asserted: contention shows up only as retries of E_LOCK_TIMEOUT (which the product marks
// retryable), and those are counted and printed.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>

#include "core/json.h"
#include "core/json_parse.h"
#include "support/child_process.h"
#include "support/ct_client.h"
#include "support/sandbox.h"
#include "support/store_checks.h"

namespace {

namespace fs = std::filesystem;
using ct::json::Value;
using ct::testing::CtCommand;
using ct::testing::CtRun;
using ct::testing::McpClient;
using ct::testing::succeeded;

std::unique_ptr<CtCommand> g_ct;  // the binary under test, in the sandbox's environment
fs::path g_dir;                   // the project directory
std::string g_pg_url;              // --postgresql: the server every process of the case shares
std::string g_pg_schema;           // and the schema of this run
std::atomic<int> g_failures{0};
std::atomic<int> g_retries{0};    // retried retryable failures of `ct mcp` calls (CLI: g_ct->retries())
std::mutex g_print;

void failure(const std::string& what) {
  std::lock_guard lock(g_print);
  std::fprintf(stderr, "FAILED: %s\n", what.c_str());
  ++g_failures;
}

#define EXPECT(condition, what)                                            \
  do {                                                                     \
    if (!(condition)) failure(std::string(#condition) + " — " + (what)); \
  } while (0)

std::string pad(int number) {
  char text[16];
  std::snprintf(text, sizeof text, "T%03d", number);
  return text;
}

bool exited_zero(const CtRun& ran) { return !ran.status.signaled && ran.status.code == 0; }

/// A started and initialised `ct mcp` server of the project (a failure is recorded otherwise).
std::unique_ptr<McpClient> start_server() {
  auto client = McpClient::start(g_ct->ct(), g_ct->env());
  if (!client) {
    failure(client.error());
    return nullptr;
  }
  auto server = std::make_unique<McpClient>(std::move(*client));
  EXPECT(server->initialize(), "mcp initialize");
  return server;
}

// -- the store, read directly ------------------------------------------------------------------

/// Rows of a query on the project's database, opened read-only, every column as text.
ct::testing::Rows db_rows(const std::string& sql) {
  auto rows = g_pg_url.empty() ? ct::testing::query_rows(g_dir / ".cleo" / "tasks.db", sql)
                               : ct::testing::query_pg_rows(g_pg_url, g_pg_schema, sql);
  if (!rows) {
    failure(rows.error());
    return {};
  }
  return std::move(*rows);
}

std::int64_t db_count(const std::string& sql) {
  auto rows = db_rows(sql);
  return rows.empty() ? -1 : std::stoll(rows[0][0]);
}

/// validate.schema and validate.audit through `ct`; returns the audit's row count.
std::int64_t expect_valid_store(const std::string& when) {
  ct::testing::Verdict schema = ct::testing::validate_schema(*g_ct);
  EXPECT(schema.valid, when + ": " + schema.problem);
  ct::testing::Verdict audit = ct::testing::validate_audit(*g_ct);
  EXPECT(audit.valid, when + ": " + audit.problem);
  return audit.rows;
}

// -- cases ---------------------------------------------------------------------------------------

constexpr int kMutationsPerWriter = 200;  // half adds, half updates of the task just added

void writers() {
  constexpr int kCliWriters = 4;
  constexpr int kMcpWriters = 4;
  std::mutex lock;
  std::vector<std::string> ids;
  std::set<std::string> titles;
  std::vector<std::thread> threads;
  for (int k = 0; k < kCliWriters; ++k) {
    threads.emplace_back([&, k] {
      int done = 0;
      for (int i = 0; i < kMutationsPerWriter / 2; ++i) {
        std::string title = "cli" + std::to_string(k) + " task " + std::to_string(i);
        CtRun added = g_ct->run_retrying({"add", title});
        std::string id = added.json["data"]["id"].is_string() ? added.json["data"]["id"].as_string() : "";
        EXPECT(exited_zero(added) && !id.empty(), "ct add: " + added.out);
        if (id.empty()) return;
        CtRun updated = g_ct->run_retrying({"update", id, "--priority", "high"});
        EXPECT(exited_zero(updated), "ct update: " + updated.out);
        std::lock_guard guard(lock);
        ids.push_back(id);
        titles.insert(title);
        done += 2;
      }
      EXPECT(done == kMutationsPerWriter, "cli writer " + std::to_string(k) + " finished " + std::to_string(done));
    });
  }
  for (int k = 0; k < kMcpWriters; ++k) {
    threads.emplace_back([&, k] {
      auto server = start_server();
      if (!server) return;
      int done = 0;
      for (int i = 0; i < kMutationsPerWriter / 2; ++i) {
        std::string key = "mcp" + std::to_string(k) + "-" + std::to_string(i);
        std::string title = "mcp" + std::to_string(k) + " task " + std::to_string(i);
        Value added = server->call_retrying("cleo_mutate", "tasks", "add",
                                            R"({"title":")" + title + R"(","idempotencyKey":"add-)" + key + "\"}",
                                            g_retries);
        std::string id = added["data"]["id"].is_string() ? added["data"]["id"].as_string() : "";
        EXPECT(!id.empty(), "mcp tasks.add: " + added.dump());
        if (id.empty()) return;
        Value updated = server->call_retrying(
            "cleo_mutate", "tasks", "update",
            R"({"id":")" + id + R"(","priority":"high","idempotencyKey":"upd-)" + key + "\"}", g_retries);
        EXPECT(succeeded(updated), "mcp tasks.update: " + updated.dump());
        std::lock_guard guard(lock);
        ids.push_back(id);
        titles.insert(title);
        done += 2;
      }
      EXPECT(done == kMutationsPerWriter, "mcp writer " + std::to_string(k) + " finished " + std::to_string(done));
    });
  }
  for (auto& thread : threads) thread.join();

  const int tasks = (kCliWriters + kMcpWriters) * kMutationsPerWriter / 2;
  std::set<std::string> unique(ids.begin(), ids.end());
  EXPECT(static_cast<int>(ids.size()) == tasks, "acknowledged adds: " + std::to_string(ids.size()));
  EXPECT(unique.size() == ids.size(), "an id was handed out twice");
  std::set<std::string> dense;
  for (int n = 1; n <= tasks; ++n) dense.insert(pad(n));
  EXPECT(unique == dense, "ids are not T001…T" + std::to_string(tasks));
  EXPECT(db_count("SELECT count(*) FROM tasks") == tasks, "rows in tasks");
  std::set<std::string> stored;
  for (const auto& row : db_rows("SELECT title FROM tasks")) stored.insert(row[0]);
  EXPECT(stored == titles, "stored titles differ from the acknowledged ones");
  EXPECT(db_count("SELECT count(*) FROM tasks WHERE priority = 'high' AND version = 2") == tasks,
         "every task updated exactly once");
  std::int64_t audit_rows = expect_valid_store("after the writers");
  EXPECT(audit_rows == 2 * tasks, "audit rows: " + std::to_string(audit_rows));
}

/// A `ct mcp` server bound to a new session of its own: the session id ("" on failure).
std::string start_session(McpClient& server, const std::string& name) {
  Value started = server.call_retrying("cleo_mutate", "session", "start",
                                       R"({"scope":"global","name":")" + name + "\"}", g_retries);
  EXPECT(started["data"]["id"].is_string(), "session.start: " + started.dump());
  return started["data"]["id"].is_string() ? started["data"]["id"].as_string() : "";
}

/// `count` `ct mcp` servers, each bound to a session of its own named `name` and its number; false
/// (the failure recorded) when one does not start.
bool start_agents(int count, const std::string& name, std::vector<std::unique_ptr<McpClient>>& servers,
                  std::vector<std::string>& sessions) {
  for (int k = 0; k < count; ++k) {
    servers.push_back(start_server());
    if (!servers.back()) return false;
    sessions.push_back(start_session(*servers.back(), name + " " + std::to_string(k)));
  }
  return true;
}

/// What a race of tasks.start {id:T001} from many servers came to.
struct Race {
  int won = 0;
  int refused = 0;                 // E_TASK_CLAIMED
  std::string winner;              // the (first) winner's session
  Value winning;                   // its reply
  std::vector<Value> winnings;     // every winner's reply, in the servers' order
  std::set<std::string> winners;   // every winner's session
  std::set<std::string> named;     // the holders the refusals named
};

/// Sends tasks.start T001 from every server back to back, then collects. A retryable failure
/// (E_LOCK_TIMEOUT) is no answer to the race: that racer claims again.
Race race_for_t001(std::vector<std::unique_ptr<McpClient>>& servers, const std::vector<std::string>& sessions) {
  const std::string claim = McpClient::tool_call_line(100, "cleo_mutate", "tasks", "start", R"({"id":"T001"})");
  for (auto& server : servers) server->send(claim);
  Race race;
  for (std::size_t k = 0; k < servers.size(); ++k) {
    McpClient& server = *servers[k];
    Value envelope = server.read_reply()["result"]["structuredContent"];
    for (int attempt = 1; attempt < 10 && ct::testing::retryable(envelope); ++attempt) {
      ++g_retries;
      server.send(claim);
      envelope = server.read_reply()["result"]["structuredContent"];
    }
    if (succeeded(envelope)) {
      if (++race.won == 1) {
        race.winner = sessions[k];
        race.winning = envelope;
      }
      race.winnings.push_back(envelope);
      race.winners.insert(sessions[k]);
    } else if (ct::testing::error_code(envelope) == "E_TASK_CLAIMED") {
      ++race.refused;
      const Value& holder = envelope["error"]["details"]["holder"];
      race.named.insert(holder.is_string() ? holder.as_string() : "?");
    } else {
      failure("unexpected reply to tasks.start: " + envelope.dump());
    }
  }
  return race;
}

void claim_race() {
  constexpr int kRacers = 16;
  CtRun added = g_ct->run_retrying({"add", "Contested task"});
  EXPECT(exited_zero(added), "ct add: " + added.out);
  std::vector<std::unique_ptr<McpClient>> servers;
  std::vector<std::string> sessions;
  if (!start_agents(kRacers, "racer", servers, sessions)) return;
  // Every server is up and bound to its session.
  Race race = race_for_t001(servers, sessions);
  EXPECT(race.won == 1, std::to_string(race.won) + " winners");
  EXPECT(race.refused == kRacers - 1, std::to_string(race.refused) + " got E_TASK_CLAIMED");
  EXPECT(race.named == std::set<std::string>{race.winner}, "E_TASK_CLAIMED names the winner");
  const std::string& winner = race.winner;
  auto focus = db_rows("SELECT session FROM focus WHERE task_id = 'T001'");
  EXPECT(focus.size() == 1 && focus[0][0] == winner, "exactly the winner holds T001");
  EXPECT(db_count("SELECT count(*) FROM tasks WHERE id = 'T001' AND status = 'active'") == 1, "T001 is active");
  servers.clear();
  expect_valid_store("after the race");
}

/// Reservations (issue 53) in strict reservations.mode: 16 agents, each its own `ct mcp` and
/// session, start 16 tasks at once whose declared files overlap in every way the rule knows —
/// src/shared.cpp, the folder src/, the glob src/*.cpp — but for four with docs of their own.
/// Exactly one src task and the four docs tasks are claimed; the other eleven are refused with
/// E_PATH_RESERVED naming the one winner; afterwards no two live exclusive reservations of
/// different sessions overlap, and a refused start left nothing behind. Then the winner stops and
/// the eleven race again: again exactly one wins.
void reservations() {
  constexpr int kRacers = 16;
  EXPECT(exited_zero(g_ct->run_retrying({"config", "set", "reservations.mode", "strict"})), "config set");
  const char* const kFiles[] = {"src/shared.cpp", "src/", "src/*.cpp"};
  std::vector<bool> src(kRacers);
  for (int k = 0; k < kRacers; ++k) {
    src[static_cast<std::size_t>(k)] = k % 4 != 3;
    const std::string file = src[static_cast<std::size_t>(k)] ? kFiles[k % 4] : "docs/" + std::to_string(k) + ".md";
    CtRun added = g_ct->run_retrying({"add", "Task of racer " + std::to_string(k), "--files", file});
    EXPECT(exited_zero(added), "ct add: " + added.out);
  }
  std::vector<std::unique_ptr<McpClient>> servers;
  std::vector<std::string> sessions;
  if (!start_agents(kRacers, "reserver", servers, sessions)) return;
  // Every racer whose `active` is true sends tasks.start of its own task at once; a lock timeout is
  // no answer (it starts again). Returns the racers that won; `refused` counts E_PATH_RESERVED.
  auto race = [&](const std::vector<bool>& active, int& refused, std::set<std::string>& named) {
    std::vector<int> won;
    auto claim = [](int k) {
      return McpClient::tool_call_line(200 + k, "cleo_mutate", "tasks", "start", R"({"id":")" + pad(k + 1) + "\"}");
    };
    for (int k = 0; k < kRacers; ++k)
      if (active[static_cast<std::size_t>(k)]) servers[static_cast<std::size_t>(k)]->send(claim(k));
    for (int k = 0; k < kRacers; ++k) {
      if (!active[static_cast<std::size_t>(k)]) continue;
      McpClient& server = *servers[static_cast<std::size_t>(k)];
      Value envelope = server.read_reply()["result"]["structuredContent"];
      for (int attempt = 1; attempt < 10 && ct::testing::error_code(envelope) == "E_LOCK_TIMEOUT"; ++attempt) {
        ++g_retries;
        server.send(claim(k));
        envelope = server.read_reply()["result"]["structuredContent"];
      }
      if (succeeded(envelope)) {
        won.push_back(k);
      } else if (ct::testing::error_code(envelope) == "E_PATH_RESERVED") {
        ++refused;
        const Value& conflicts = envelope["error"]["details"]["conflicts"];
        const bool some = conflicts.is_array() && !conflicts.as_array().empty();
        named.insert(some && conflicts.as_array()[0]["heldBy"]["session"].is_string()
                         ? conflicts.as_array()[0]["heldBy"]["session"].as_string()
                         : "?");
      } else {
        failure("unexpected reply to tasks.start: " + envelope.dump());
      }
    }
    return won;
  };
  // The invariant, read from the store: live reservations (their session still focuses the task;
  // nobody's lease runs out within the case) of different sessions never both hold src.
  auto check_held = [&](const std::string& when, std::size_t expected_src) {
    auto rows = db_rows("SELECT r.session, r.task_id, r.path, r.shared FROM reservations r JOIN focus f"
                        " ON f.session = r.session AND f.task_id = r.task_id");
    std::set<std::string> src_holders;
    for (const auto& row : rows) {
      EXPECT(row[3] == "0", when + ": exclusive by default");
      if (row[2].starts_with("src")) src_holders.insert(row[0]);
    }
    EXPECT(src_holders.size() == expected_src, when + ": sessions holding src: " + std::to_string(src_holders.size()));
    EXPECT(db_count("SELECT count(*) FROM reservations") == static_cast<std::int64_t>(rows.size()),
           when + ": a reservation outlived its claim");
    EXPECT(db_count("SELECT count(*) FROM focus") == static_cast<std::int64_t>(rows.size()),
           when + ": every claim reserves exactly its one file");
    EXPECT(db_count("SELECT count(*) FROM tasks WHERE status = 'active'") == static_cast<std::int64_t>(rows.size()),
           when + ": active tasks");
  };

  int refused = 0;
  std::set<std::string> named;
  std::vector<int> won = race(std::vector<bool>(kRacers, true), refused, named);
  std::vector<int> src_won;
  for (int k : won)
    if (src[static_cast<std::size_t>(k)]) src_won.push_back(k);
  EXPECT(src_won.size() == 1, std::to_string(src_won.size()) + " src winners");
  EXPECT(won.size() == 5, std::to_string(won.size()) + " winners");
  EXPECT(refused == kRacers - 5, std::to_string(refused) + " got E_PATH_RESERVED");
  if (src_won.size() != 1) return;
  const int winner = src_won.front();
  EXPECT(named == std::set<std::string>{sessions[static_cast<std::size_t>(winner)]}, "E_PATH_RESERVED names the winner");
  check_held("after the race", 1);

  // The winner stops: its reservation goes with its claim, and the losers race again.
  Value stopped = servers[static_cast<std::size_t>(winner)]->call_retrying("cleo_mutate", "tasks", "stop", "{}", g_retries);
  EXPECT(succeeded(stopped), "tasks.stop: " + stopped.dump());
  std::vector<bool> again(kRacers, false);
  for (int k = 0; k < kRacers; ++k)
    again[static_cast<std::size_t>(k)] = src[static_cast<std::size_t>(k)] && k != winner;
  refused = 0;
  named.clear();
  std::vector<int> second = race(again, refused, named);
  EXPECT(second.size() == 1, std::to_string(second.size()) + " winners of the second race");
  EXPECT(refused == 10, std::to_string(refused) + " refused in the second race");
  check_held("after the second race", 1);
  servers.clear();
  expect_valid_store("after the reservations");
}


/// Claims with leases (issue 33), with session.leaseSeconds 2: an agent killed with SIGKILL
/// mid-task keeps its claim until the lease runs out, then another agent takes the task over
/// (audited); an agent whose `ct mcp` sees stdin close lets go of it at once; 16 agents racing
/// for a lapsed claim: one wins, and no instant sees two holders.
void lease() {
  using Clock = std::chrono::steady_clock;
  constexpr auto kLease = std::chrono::seconds(2);
  EXPECT(exited_zero(g_ct->run_retrying({"config", "set", "session.leaseSeconds", "2"})), "config set");
  EXPECT(exited_zero(g_ct->run_retrying({"add", "Contested task"})), "ct add");
  const std::string claim = R"({"id":"T001"})";

  // 1. Killed mid-task: refused while the lease runs, taken over after it.
  auto first = start_server();
  if (!first) return;
  const std::string killed = start_session(*first, "killed");
  EXPECT(succeeded(first->call_retrying("cleo_mutate", "tasks", "start", claim, g_retries)), "the first claim");
  const auto claimed_at = Clock::now();
  first->process().kill(SIGKILL);
  first.reset();
  auto second = start_server();
  if (!second) return;
  const std::string taker = start_session(*second, "taker");
  Value early = second->call_retrying("cleo_mutate", "tasks", "start", claim, g_retries);
  if (Clock::now() - claimed_at < kLease - std::chrono::milliseconds(300)) {
    EXPECT(ct::testing::error_code(early) == "E_TASK_CLAIMED", "claimed while the lease runs: " + early.dump());
    EXPECT(early["error"]["details"]["holder"] == Value(killed) && early["error"]["details"]["leaseEnds"].is_string(),
           "the refusal names the holder and when its lease ends: " + early.dump());
  }
  std::this_thread::sleep_until(claimed_at + kLease + std::chrono::milliseconds(300));
  Value taken = second->call_retrying("cleo_mutate", "tasks", "start", claim, g_retries);
  EXPECT(succeeded(taken) && taken["data"]["takenOver"]["session"] == Value(killed),
         "after the lease the task is taken over: " + taken.dump());
  EXPECT(db_count("SELECT count(*) FROM audit_changes WHERE task_id = 'T001' AND field = 'holder'") == 1,
         "the audit trail records the takeover");
  auto focus = db_rows("SELECT session FROM focus WHERE task_id = 'T001'");
  EXPECT(focus.size() == 1 && focus[0][0] == taker, "the taker holds T001");

  // 2. stdin closed: the session is suspended and the claim released at once.
  second->process().close_stdin();
  auto exited = second->process().wait_for(std::chrono::seconds(30));
  EXPECT(exited && !exited->signaled && exited->code == 0, "ct mcp exits when stdin closes");
  second.reset();
  EXPECT(db_count("SELECT count(*) FROM focus WHERE task_id = 'T001'") == 0, "the claim is released");
  EXPECT(db_count("SELECT count(*) FROM sessions WHERE id = '" + taker + "' AND status = 'suspended'") == 1,
         "the session is suspended");
  auto third = start_server();
  if (!third) return;
  const std::string holder = start_session(*third, "holder");
  Value at_once = third->call_retrying("cleo_mutate", "tasks", "start", claim, g_retries);
  EXPECT(succeeded(at_once) && at_once["data"]["takenOver"].is_null(), "claimed at once: " + at_once.dump());

  // 3. 16 racers for a lapsed claim, watched all along.
  constexpr int kRacers = 16;
  std::vector<std::unique_ptr<McpClient>> racers;
  std::vector<std::string> sessions;
  for (int k = 0; k < kRacers; ++k) {
    racers.push_back(start_server());
    if (!racers.back()) return;
    sessions.push_back(start_session(*racers.back(), "racer " + std::to_string(k)));
  }
  third->process().kill(SIGKILL);
  third.reset();
  const auto silent_from = Clock::now();
  std::atomic<bool> racing{true};
  std::atomic<std::int64_t> most_holders{0}, samples{0};
  std::thread watcher([&] {
    while (racing) {
      std::int64_t holders = db_count("SELECT count(*) FROM focus WHERE task_id = 'T001'");
      if (holders > most_holders) most_holders = holders;
      ++samples;
    }
  });
  std::this_thread::sleep_until(silent_from + kLease + std::chrono::milliseconds(300));
  const auto race_from = Clock::now();
  Race race = race_for_t001(racers, sessions);
  const auto race_took = Clock::now() - race_from;
  racing = false;
  watcher.join();
  EXPECT(race.won + race.refused == kRacers, std::to_string(race.refused) + " got E_TASK_CLAIMED, " +
                                                 std::to_string(race.won) + " won");
  if (race_took < kLease) {
    EXPECT(race.won == 1, std::to_string(race.won) + " winners");
    EXPECT(race.named == std::set<std::string>{race.winner}, "E_TASK_CLAIMED names the winner");
    EXPECT(race.winning["data"]["takenOver"]["session"] == Value(holder),
           "taken from the silent holder: " + race.winning.dump());
  } else {
    // The race outlasted a lease (a loaded machine): a winner that made no call since its claim
    // lets it lapse, and a later racer takes it over, as it should. Still one holder at a time: each
    // claim taken from the silent holder or from a winner before it, the silent holder's once.
    std::printf("lease: the race took %lld ms, longer than the lease; %d winners\n",
                static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(race_took).count()),
                race.won);
    EXPECT(race.won >= 1, "no winner");
    int from_holder = 0;
    for (const Value& winning : race.winnings) {
      const Value& from = winning["data"]["takenOver"]["session"];
      if (from == Value(holder)) ++from_holder;
      else EXPECT(from.is_string() && race.winners.contains(from.as_string()),
                  "taken over from the holder or a winner: " + winning.dump());
    }
    EXPECT(from_holder == 1, std::to_string(from_holder) + " took the claim from the silent holder");
    for (const auto& named : race.named) EXPECT(race.winners.contains(named), "E_TASK_CLAIMED names a winner: " + named);
  }
  EXPECT(most_holders <= 1, std::to_string(most_holders.load()) + " holders seen at once");
  racers.clear();
  expect_valid_store("after the leases");
  std::printf("lease: taken over after SIGKILL, released on stdin close, 1 of %d racers won (%lld samples)\n",
              kRacers, static_cast<long long>(samples.load()));
}

void kill_mid_stream() {
  constexpr int kRounds = 3;
  constexpr int kStream = 400;       // requests queued per round
  constexpr int kKillAfter = 60;     // acknowledgements before the kill
  std::set<std::string> acknowledged;
  for (int round = 0; round < kRounds; ++round) {
    auto server = start_server();
    if (!server) return;
    std::vector<std::string> titles;
    for (int i = 0; i < kStream; ++i) titles.push_back("round " + std::to_string(round) + " write " + std::to_string(i));
    auto add_line = [&](int i) {
      std::string params = R"({"title":")" + titles[static_cast<std::size_t>(i)] + R"(","labels":["kill"]})";
      return McpClient::tool_call_line(1000 + i, "cleo_mutate", "tasks", "add", params);
    };
    // The requests go in from another thread, far ahead of the replies, so the server is busy
    // writing when it dies. Lines are shorter than PIPE_BUF, so a retry sent from this thread
    // never interleaves with them.
    std::thread feeder([&] {
      for (int i = 0; i < kStream; ++i)
        if (!server->send(add_line(i))) return;
    });
    int acks = 0;
    bool killed = false;
    while (true) {
      Value reply = server->read_reply();
      if (reply.is_null()) break;
      std::int64_t id = reply["id"].as_int();
      const Value& envelope = reply["result"]["structuredContent"];
      if (id >= 1000 && succeeded(envelope)) {
        acknowledged.insert(titles[static_cast<std::size_t>(id - 1000)]);
        ++acks;
      } else if (id >= 1000 && ct::testing::retryable(envelope)) {
        // Not written: send it again (answered later in the stream, unless the kill comes first).
        ++g_retries;
        if (!killed) server->send(add_line(static_cast<int>(id - 1000)));
      } else {
        failure("tasks.add failed: " + reply.dump());
      }
      if (acks == kKillAfter && !killed) {
        server->process().kill(SIGKILL);
        killed = true;  // replies already in the pipe still count: they were written after commit
      }
    }
    feeder.join();
    EXPECT(killed, "round " + std::to_string(round) + " ended before the kill (" + std::to_string(acks) + " acks)");
    server.reset();
    std::int64_t stored = db_count("SELECT count(*) FROM tasks");
    EXPECT(stored >= static_cast<std::int64_t>(acknowledged.size()), "rows: " + std::to_string(stored));
    std::int64_t audit_rows = expect_valid_store("after kill " + std::to_string(round + 1));
    EXPECT(audit_rows == stored, "one audit row per stored add: " + std::to_string(audit_rows) + " vs " +
                                     std::to_string(stored));
  }
  std::set<std::string> present;
  for (const auto& row : db_rows("SELECT title FROM tasks")) present.insert(row[0]);
  for (const auto& title : acknowledged) EXPECT(present.contains(title), "acknowledged but lost: " + title);
  // The search index took every committed write too (on PostgreSQL a generated column: the
  // search finds every task by its label instead).
  if (g_pg_url.empty()) {
    // Indexed, or noted for the index (tasks_fts_tail) and searched from its row.
    EXPECT(db_count("SELECT count(*) FROM tasks t WHERE t.num NOT IN (SELECT rowid FROM tasks_fts) AND "
                    "t.num NOT IN (SELECT num FROM tasks_fts_tail)") == 0,
           "search index rows");
  } else {
    EXPECT(db_count("SELECT count(*) FROM tasks WHERE search @@ to_tsquery('simple', 'kill')") ==
               db_count("SELECT count(*) FROM tasks"),
           "search vectors");
  }
  std::printf("kill: %zu acknowledged writes survived %d kills\n", acknowledged.size(), kRounds);
}

/// A running `ct mcp` sees configuration changed by another process on its next call: after
/// `ct config set session.enforcement strict` (another process), its sessionless write is refused;
/// set back to advisory, it is accepted again. The server's agent cannot set it back itself (a key
/// only people set, issue 52); a key anyone sets, set through the server, reaches the CLI.
void config_reload() {
  auto server = start_server();
  if (!server) return;
  Value before = server->call("cleo_mutate", "tasks", "add", R"({"title":"Advisory by default"})");
  EXPECT(succeeded(before), "add before the change: " + before.dump());
  CtRun strict = g_ct->run({"config", "set", "session.enforcement", "strict", "--json"});
  EXPECT(exited_zero(strict), "ct config set: " + strict.out);
  Value refused = server->call("cleo_mutate", "tasks", "add", R"({"title":"Needs a session now"})");
  EXPECT(ct::testing::error_code(refused) == "E_SESSION_REQUIRED",
         "the running server did not pick up session.enforcement strict: " + refused.dump());
  Value self = server->call("cleo_mutate", "system", "config.set", R"({"key":"session.enforcement","value":"advisory"})");
  EXPECT(ct::testing::error_code(self) == "E_MUTATION_DISABLED", "an agent does not lift the rule: " + self.dump());
  Value through = server->call("cleo_mutate", "system", "config.set", R"({"key":"output.maxReplyBytes","value":5000})");
  EXPECT(succeeded(through), "config.set through the server: " + through.dump());
  CtRun read = g_ct->run({"config", "get", "output.maxReplyBytes", "--json"});
  EXPECT(exited_zero(read) && read.out.find("5000") != std::string::npos, "the CLI reads the server's change: " + read.out);
  CtRun back = g_ct->run({"config", "set", "session.enforcement", "advisory", "--json"});
  EXPECT(exited_zero(back), "ct config set back: " + back.out);
  CtRun cli_add = g_ct->run({"add", "Accepted again from the CLI", "--json"});
  EXPECT(exited_zero(cli_add), "ct add after advisory again: " + cli_add.out);
  Value again = server->call("cleo_mutate", "tasks", "add", R"({"title":"Accepted again"})");
  EXPECT(succeeded(again), "add after advisory again: " + again.dump());
  std::printf("config-reload: a running ct mcp followed two config changes made by another process\n");
}

/// The project's config.json as `ct init` wrote it (nullopt, and a failure, when it cannot be read).
std::optional<Value> read_config() {
  std::ifstream in(g_dir / ".cleo" / "config.json");
  std::string text((std::istreambuf_iterator<char>(in)), {});
  auto config = ct::json::parse(text);
  EXPECT(config.has_value() && config->is_object(), "config.json after init: " + text);
  if (!config || !config->is_object()) return std::nullopt;
  return std::move(*config);
}

void write_config(const Value& config) { std::ofstream(g_dir / ".cleo" / "config.json") << config.dump(); }

/// Issue 30 item 1: one request could kill `ct mcp` — a plug-in param with a pattern and no max,
/// matched by std::regex, which recurses once per character (a 150 KB value overflowed the stack:
/// SIGSEGV) and backtracks exponentially ("(a+)+$": 18 s on 29 characters). The server answers
/// both at once with E_VALIDATION and goes on serving.
void big_values() {
  auto config = read_config();
  if (!config) return;
  config->set("engines", *ct::json::parse(R"({"demo.check": {"command": ["true"], "gateway": "query",
      "summary": "Check a value", "params": [{"name": "value", "type": "string", "pattern": "(a+)+$"},
                                             {"name": "word", "type": "string", "pattern": "^[a-z]+$"}]}})"));
  write_config(*config);
  auto server = start_server();
  if (!server) return;
  const std::string big(150'000, 'a');
  auto started = std::chrono::steady_clock::now();
  Value huge = server->call("cleo_query", "demo", "check", R"({"word":")" + big + R"("})");
  EXPECT(ct::testing::error_code(huge) == "E_VALIDATION", "150 KB against ^[a-z]+$: " + huge.dump().substr(0, 400));
  EXPECT(huge.dump().size() < 4000, "the refusal quotes the 150 KB value back: " + std::to_string(huge.dump().size()) + " bytes");
  Value nested = server->call("cleo_query", "demo", "check", R"({"value":")" + std::string(29, 'a') + R"(!"})");
  EXPECT(ct::testing::error_code(nested) == "E_VALIDATION", "(a+)+$ against 29 a's and a '!': " + nested.dump());
  auto took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count();
  EXPECT(took < 5000, "the two refusals took " + std::to_string(took) + " ms");
  Value alive = server->call("cleo_query", "system", "version", "{}");
  EXPECT(succeeded(alive), "the server after the two values: " + alive.dump());
  std::printf("big-values: a 150 KB value and (a+)+$ answered in %lld ms\n", static_cast<long long>(took));
}

/// Project memory from many processes at once (issue 34): 6 `ct mcp` agents each record 25 entries
/// (words of their own, a shared scope file) and declare others applied, while they run. Every
/// entry gets an id of its own, every use is counted once, and each agent's word finds exactly its
/// own entries afterwards (the keys and their counts stayed consistent under concurrent writes).
void memory_writers() {
  constexpr int kAgents = 6;
  constexpr int kEach = 25;
  std::mutex lock;
  std::set<std::string> ids;
  int applied = 0;
  std::vector<std::thread> threads;
  for (int k = 0; k < kAgents; ++k) {
    threads.emplace_back([&, k] {
      auto server = start_server();
      if (!server) return;
      const std::string word = "agentword" + std::string(1, static_cast<char>('a' + k));
      for (int i = 0; i < kEach; ++i) {
        const std::string title = word + " finding number " + std::to_string(i) + " about " +
                                  std::string(1, static_cast<char>('a' + i % 26)) + std::to_string(k * 100 + i) + "x";
        Value added = server->call_retrying(
            "cleo_mutate", "memory", "observe",
            R"({"kind":"learning","title":")" + title + R"(","files":["src/shared.cpp"],"force":true,"idempotencyKey":"mem-)" +
                std::to_string(k) + "-" + std::to_string(i) + "\"}",
            g_retries);
        std::string id = added["data"]["id"].is_string() ? added["data"]["id"].as_string() : "";
        EXPECT(!id.empty(), "memory.observe: " + added.dump());
        if (id.empty()) return;
        Value used = server->call_retrying("cleo_mutate", "memory", "applied", R"({"ids":[")" + id + "\"]}", g_retries);
        EXPECT(succeeded(used), "memory.applied: " + used.dump());
        std::lock_guard guard(lock);
        EXPECT(ids.insert(id).second, "an id given twice: " + id);
        applied += succeeded(used) ? 1 : 0;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT(static_cast<int>(ids.size()) == kAgents * kEach, "entries: " + std::to_string(ids.size()));
  auto server = start_server();
  if (!server) return;
  Value stats = server->call("cleo_query", "memory", "stats", "{}");
  EXPECT(stats["data"]["total"] == Value(static_cast<std::int64_t>(kAgents * kEach)), "memory.stats: " + stats.dump());
  EXPECT(stats["data"]["neverApplied"] == Value(std::int64_t{0}), "every entry applied once: " + stats.dump());
  for (int k = 0; k < kAgents; ++k) {
    const std::string word = "agentword" + std::string(1, static_cast<char>('a' + k));
    Value found = server->call("cleo_query", "memory", "find", R"({"query":")" + word + R"(","limit":50})");
    const std::size_t count = found["data"].is_array() ? found["data"].as_array().size() : 0;
    EXPECT(count == static_cast<std::size_t>(kEach), word + " finds " + std::to_string(count) + " entries: " + found.dump().substr(0, 300));
  }
  Value valid = server->call("cleo_query", "validate", "schema", "{}");
  EXPECT(succeeded(valid), "validate.schema: " + valid.dump().substr(0, 400));
  std::printf("memory: %d agents recorded %zu entries and %d uses, each once\n", kAgents, ids.size(), applied);
}

/// Two orchestrators decompose the same epic in plans of their own and commit at the same moment
/// (issue 36): one commit wins; the other is refused with E_CONCURRENT_MODIFICATION listing the
/// tasks that moved (the winner's, added under the epic), rebases — nothing it changes moved — and
/// commits. Five rounds, each over a new epic.
void plans() {
  constexpr int kRounds = 5;
  constexpr int kTasksPerPlan = 20;
  auto first = start_server();
  auto second = start_server();
  if (!first || !second) return;
  McpClient* servers[2] = {first.get(), second.get()};
  int conflicts = 0;
  for (int round = 0; round < kRounds; ++round) {
    Value epic = servers[0]->call_retrying("cleo_mutate", "tasks", "add",
                                           R"({"title":"Epic of round )" + std::to_string(round) + R"(","type":"epic"})",
                                           g_retries);
    const std::string epic_id = epic["data"]["id"].is_string() ? epic["data"]["id"].as_string() : "";
    EXPECT(!epic_id.empty(), "tasks.add epic: " + epic.dump());
    if (epic_id.empty()) return;
    std::string plan_ids[2];
    for (int k = 0; k < 2; ++k) {
      Value begun = servers[k]->call_retrying(
          "cleo_mutate", "plan", "begin",
          R"({"label":"orchestrator )" + std::to_string(k) + R"(","epicId":")" + epic_id + "\"}", g_retries);
      EXPECT(begun["data"]["plan"].is_string(), "plan.begin: " + begun.dump());
      if (!begun["data"]["plan"].is_string()) return;
      plan_ids[k] = begun["data"]["plan"].as_string();
      std::string ops = "[";
      for (int i = 1; i <= kTasksPerPlan; ++i) {
        ops += std::string(i > 1 ? "," : "") + R"({"operation":"tasks.add","params":{"title":"Step )" +
               std::to_string(i) + " of orchestrator " + std::to_string(k) + R"(","parent":")" + epic_id + "\"";
        if (i > 1) ops += R"(,"depends":["$)" + std::to_string(i - 1) + "\"]";
        ops += "}}";
      }
      ops += "]";
      Value applied = servers[k]->call_retrying("cleo_mutate", "plan", "apply",
                                                R"({"plan":")" + plan_ids[k] + R"(","ops":)" + ops + "}", g_retries);
      EXPECT(applied["data"]["ops"] == Value(std::int64_t{kTasksPerPlan}), "plan.apply: " + applied.dump().substr(0, 300));
    }
    // Both commit at once.
    for (int k = 0; k < 2; ++k)
      servers[k]->send(McpClient::tool_call_line(500 + round, "cleo_mutate", "plan", "commit",
                                                 R"({"plan":")" + plan_ids[k] + "\"}"));
    Value replies[2];
    for (int k = 0; k < 2; ++k) {
      replies[k] = servers[k]->read_reply()["result"]["structuredContent"];
      // A busy store is retried; a conflict is the answer under test.
      for (int attempt = 1; attempt < 10 && ct::testing::error_code(replies[k]) == "E_LOCK_TIMEOUT"; ++attempt) {
        ++g_retries;
        replies[k] = servers[k]->call("cleo_mutate", "plan", "commit", R"({"plan":")" + plan_ids[k] + "\"}");
      }
    }
    const int won = (succeeded(replies[0]) ? 1 : 0) + (succeeded(replies[1]) ? 1 : 0);
    EXPECT(won == 1, "round " + std::to_string(round) + ": " + std::to_string(won) + " commits won: " +
                         replies[0].dump().substr(0, 200) + " | " + replies[1].dump().substr(0, 200));
    if (won != 1) continue;
    const int loser = succeeded(replies[0]) ? 1 : 0;
    const Value& refused = replies[loser];
    EXPECT(ct::testing::error_code(refused) == "E_CONCURRENT_MODIFICATION", "the other commit: " + refused.dump().substr(0, 300));
    const Value& moved = refused["error"]["details"]["moved"];
    EXPECT(moved.is_array() && moved.size() == static_cast<std::size_t>(kTasksPerPlan),
           "what moved is the winner's tasks: " + moved.dump().substr(0, 200));
    ++conflicts;
    Value rebased = servers[loser]->call_retrying("cleo_mutate", "plan", "rebase",
                                                  R"({"plan":")" + plan_ids[loser] + "\"}", g_retries);
    EXPECT(succeeded(rebased), "plan.rebase: " + rebased.dump().substr(0, 300));
    Value committed = servers[loser]->call_retrying("cleo_mutate", "plan", "commit",
                                                    R"({"plan":")" + plan_ids[loser] + "\"}", g_retries);
    EXPECT(succeeded(committed), "the rebased commit: " + committed.dump().substr(0, 300));
    EXPECT(db_count("SELECT count(*) FROM tasks WHERE parent = '" + epic_id + "'") == 2 * kTasksPerPlan,
           "round " + std::to_string(round) + ": both plans' tasks, once each");
  }
  EXPECT(db_count("SELECT count(*) FROM plans WHERE status = 'committed'") == 2 * kRounds, "every plan committed");
  EXPECT(db_count("SELECT count(*) FROM audit WHERE operation = 'plan.commit' AND outcome = 'ok'") == 2 * kRounds,
         "one audit row per commit");
  expect_valid_store("after the plans");
  std::printf("plans: %d rounds, %d conflicts refused and rebased\n", kRounds, conflicts);
}

}  // namespace

/// research.sync while other processes append to the manifest (issue 11): appenders write whole
/// lines with O_APPEND, one write() each; a sync sees a line whole or not yet ended, and leaves a
/// line without its newline for the next sync.
void manifest_append() {
  constexpr int kAppenders = 6;
  constexpr int kLinesEach = 150;
  const fs::path manifest = g_dir / ".cleo" / "agent-outputs" / "MANIFEST.jsonl";
  fs::create_directories(manifest.parent_path());
  // The appenders are forked before any thread of this driver exists.
  std::vector<pid_t> children;
  for (int k = 0; k < kAppenders; ++k) {
    pid_t pid = fork();
    if (pid < 0) {
      failure("fork");
      break;
    }
    if (pid == 0) {
      int fd = ::open(manifest.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
      if (fd < 0) _exit(3);
      for (int i = 0; i < kLinesEach; ++i) {
        // Lines of different lengths (up to ~3 KiB: 3–7 findings of up to 480 characters), so that
        // some cross page boundaries.
        std::string findings;
        const int count = 3 + (i + k) % 5;
        for (int f = 0; f < count; ++f)
          findings += std::string(f == 0 ? "" : ",") + "\"finding " + std::to_string(f) + " " +
                      std::string(static_cast<std::size_t>((i * 37 + k * 101 + f * 53) % 480), 'x') + "\"";
        std::string line = R"({"id":"T001-w)" + std::to_string(k) + "-" + std::to_string(i) +
                           R"(","file":"out/w.md","title":"Writer )" + std::to_string(k) + " line " +
                           std::to_string(i) + R"(","status":"complete","keyFindings":[)" + findings + "]}\n";
        if (::write(fd, line.data(), line.size()) != static_cast<ssize_t>(line.size())) _exit(4);
        if (i % 5 == 0) {
          struct timespec pause{0, 5'000'000L * (k + 1)};
          nanosleep(&pause, nullptr);
        }
      }
      ::close(fd);
      _exit(0);
    }
    children.push_back(pid);
  }
  std::int64_t imported = 0;
  int syncs = 0;
  auto sync = [&] {
    CtRun ran = g_ct->run_retrying({"research", "sync"});
    ++syncs;
    // Exit 100–103 are notes (no manifest yet, nothing new): successes too.
    EXPECT(!ran.status.signaled && succeeded(ran.json), "ct research sync: " + ran.out);
    const Value& data = ran.json["data"];
    if (data["imported"].is_int()) imported += data["imported"].as_int();
    EXPECT(!data.contains("invalid"), "invalid lines reported: " + ran.out);
    EXPECT(!data.contains("conflicts"), "conflicts reported: " + ran.out);
  };
  std::size_t running = children.size();
  while (running > 0) {
    sync();
    for (auto& pid : children) {
      if (pid == 0) continue;
      int status = 0;
      if (waitpid(pid, &status, WNOHANG) == pid) {
        EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0, "an appender failed");
        pid = 0;
        --running;
      }
    }
  }
  sync();
  const std::int64_t expected = std::int64_t{kAppenders} * kLinesEach;
  EXPECT(imported == expected, "imported over " + std::to_string(syncs) + " syncs: " + std::to_string(imported));
  EXPECT(db_count("SELECT count(*) FROM research") == expected, "rows in research");
  EXPECT(db_count("SELECT count(DISTINCT id) FROM research") == expected, "distinct ids in research");
  std::set<std::string> stored;
  for (const auto& row : db_rows("SELECT id FROM research")) stored.insert(row[0]);
  std::set<std::string> appended;
  for (int k = 0; k < kAppenders; ++k)
    for (int i = 0; i < kLinesEach; ++i) appended.insert("T001-w" + std::to_string(k) + "-" + std::to_string(i));
  EXPECT(stored == appended, "stored ids differ from the appended ones");
  EXPECT(db_count("SELECT lines FROM research_sync") == expected, "lines consumed");
  CtRun again = g_ct->run({"research", "sync", "--json"});
  EXPECT(succeeded(again.json) && again.json["data"]["imported"].is_int() && again.json["data"]["imported"].as_int() == 0,
         "a last sync imports nothing: " + again.out);
  std::printf("manifest-append: %lld lines over %d syncs\n", static_cast<long long>(expected), syncs);
  expect_valid_store("after the appenders");
}


// -- two `ct serve` on one store: machines sharing a task graph -------------------------------

/// `ct serve --port 0` on the project, and an MCP-over-HTTP session with it.
class HttpServer {
 public:
  HttpServer() = default;
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;
  ~HttpServer() {
    if (child_) child_->stop(SIGTERM, std::chrono::seconds(10));
  }
  bool start(const std::vector<std::string>& flags = {}) {
    ct::testing::SpawnOptions options;
    options.env = g_ct->env();
    std::vector<std::string> argv = {g_ct->ct(), "serve", "--project", g_dir.string(), "--port", "0"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    auto child = ct::testing::ChildProcess::start(argv, options);
    if (!child) return failure("ct serve: " + child.error()), false;
    child_.emplace(std::move(*child));
    constexpr std::string_view kPrefix = "CLEO MCP server: http://";
    while (auto line = child_->read_line(std::chrono::seconds(30))) {
      auto at = line->find(kPrefix);
      if (at == std::string::npos) continue;
      std::string url = line->substr(at + kPrefix.size());
      port_ = std::atoi(url.c_str() + url.rfind(':') + 1);
      break;
    }
    if (port_ == 0) return failure("ct serve printed no URL"), false;
    post(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",)"
                      R"("capabilities":{},"clientInfo":{"name":"multiproc","version":"1"}}})");
    return !session_.empty();
  }
  /// One tools/call: the envelope (null when the server did not answer).
  Value call(std::string_view tool, std::string_view domain, std::string_view operation, std::string_view params) {
    std::string body = McpClient::tool_call_line(++id_, std::string(tool), std::string(domain), std::string(operation),
                                                 std::string(params));
    return post(body)["result"]["structuredContent"];
  }
  /// call(), repeated while the envelope is a retryable failure.
  Value call_retrying(std::string_view tool, std::string_view domain, std::string_view operation,
                      std::string_view params) {
    Value envelope = call(tool, domain, operation, params);
    for (int attempt = 1; attempt < 10 && ct::testing::retryable(envelope); ++attempt) {
      ++g_retries;
      envelope = call(tool, domain, operation, params);
    }
    return envelope;
  }
  int port() const { return port_; }
  ct::testing::ChildProcess& process() { return *child_; }

 private:
  Value post(const std::string& body) {
    httplib::Client client("127.0.0.1", port_);
    client.set_read_timeout(30, 0);
    httplib::Headers headers{{"Accept", "application/json, text/event-stream"}};
    if (!session_.empty()) {
      headers.emplace("Mcp-Session-Id", session_);
      headers.emplace("MCP-Protocol-Version", "2025-11-25");
    }
    auto result = client.Post("/mcp", headers, body, "application/json");
    if (!result || result->status != 200) return Value();
    if (session_.empty()) session_ = result->get_header_value("Mcp-Session-Id");
    auto parsed = ct::json::parse(result->body);
    return parsed ? std::move(*parsed) : Value();
  }

  std::optional<ct::testing::ChildProcess> child_;
  int port_ = 0;
  std::string session_;
  int id_ = 1;
};

/// Two `ct serve` processes (two machines) on one store: each sees the other's writes at once and
/// its dashboard hears of them; their writes interleave without loss; a claim raced from both is
/// won once; `ct dash` (a third process) sees all of it.
void serve_pair() {
  HttpServer a, b;
  if (!a.start() || !b.start()) return;

  // The dashboard of B listens for changes (Server-Sent Events) while A writes.
  std::atomic<bool> heard_change{false};
  std::atomic<bool> stop_listening{false};
  std::thread listener([&] {
    httplib::Client client("127.0.0.1", b.port());
    client.set_read_timeout(10, 0);
    client.Get("/events", [&](const char* data, std::size_t size) {
      if (std::string_view(data, size).find("event: change") != std::string_view::npos) heard_change = true;
      return !heard_change && !stop_listening;
    });
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // greeted, listening
  Value added = a.call_retrying("cleo_mutate", "tasks", "add", R"({"title":"Written through server A"})");
  EXPECT(succeeded(added), "add through A: " + added.dump());
  const std::string id = added["data"]["id"].is_string() ? added["data"]["id"].as_string() : "";
  Value shown = b.call("cleo_query", "tasks", "show", R"({"id":")" + id + "\"}");
  EXPECT(succeeded(shown) && shown["data"]["title"].is_string() &&
             shown["data"]["title"].as_string() == "Written through server A",
         "B reads A's write at once: " + shown.dump());
  for (int i = 0; i < 40 && !heard_change; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT(heard_change.load(), "B's dashboard heard of A's write");
  stop_listening = true;
  listener.join();

  // Interleaved writers on both servers: nothing lost.
  constexpr int kEach = 60;
  std::vector<std::thread> writers;
  std::atomic<int> acknowledged{0};
  for (HttpServer* server : {&a, &b})
    writers.emplace_back([&, server] {
      for (int i = 0; i < kEach; ++i) {
        Value reply = server->call_retrying("cleo_mutate", "tasks", "add",
                                            R"({"title":"Pair write )" + std::to_string(server->port()) + " " +
                                                std::to_string(i) + "\"}");
        if (succeeded(reply)) ++acknowledged;
      }
    });
  for (auto& writer : writers) writer.join();
  EXPECT(acknowledged == 2 * kEach, std::to_string(acknowledged.load()) + " of " + std::to_string(2 * kEach) + " acknowledged");
  EXPECT(db_count("SELECT count(*) FROM tasks WHERE title LIKE 'Pair write %'") == 2 * kEach, "every pair write stored");

  // A claim raced from both machines: one wins, the other is told who holds it.
  Value contested = a.call_retrying("cleo_mutate", "tasks", "add", R"({"title":"Contested across machines"})");
  const std::string target = contested["data"]["id"].is_string() ? contested["data"]["id"].as_string() : "";
  for (HttpServer* server : {&a, &b}) {
    Value started = server->call_retrying("cleo_mutate", "session", "start",
                                          R"({"scope":"global","name":"machine )" + std::to_string(server->port()) + "\"}");
    EXPECT(succeeded(started), "session.start: " + started.dump());
  }
  Value replies[2];
  std::thread race_a([&] { replies[0] = a.call_retrying("cleo_mutate", "tasks", "start", R"({"id":")" + target + "\"}"); });
  std::thread race_b([&] { replies[1] = b.call_retrying("cleo_mutate", "tasks", "start", R"({"id":")" + target + "\"}"); });
  race_a.join();
  race_b.join();
  int won = 0, claimed = 0;
  for (const auto& reply : replies) {
    if (succeeded(reply)) ++won;
    else if (ct::testing::error_code(reply) == "E_TASK_CLAIMED") ++claimed;
    else failure("unexpected reply to tasks.start: " + reply.dump());
  }
  EXPECT(won == 1 && claimed == 1, std::to_string(won) + " won, " + std::to_string(claimed) + " claimed");
  EXPECT(db_count("SELECT count(*) FROM focus WHERE task_id = '" + target + "'") == 1, "one holder");

  // `ct dash` of a third process sees both machines' work.
  CtRun dash = g_ct->run({"dash", "--json"});
  EXPECT(succeeded(dash.json) && dash.json["data"]["counts"]["total"].is_int() &&
             dash.json["data"]["counts"]["total"].as_int() == 2 + 2 * kEach,
         "ct dash counts every task: " + dash.out);
  std::printf("serve-pair: %d writes through two servers, claim won once\n", acknowledged.load());
  expect_valid_store("after the pair");
}


/// The pids of running processes whose command line is exactly `argv` (read from /proc).
std::vector<pid_t> processes_running(const std::vector<std::string>& argv) {
  std::string wanted;
  for (const auto& arg : argv) wanted += arg + '\0';
  std::vector<pid_t> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; })) continue;
    std::ifstream in(entry.path() / "cmdline", std::ios::binary);
    std::string cmdline((std::istreambuf_iterator<char>(in)), {});
    if (cmdline == wanted) found.push_back(static_cast<pid_t>(std::stol(name)));
  }
  return found;
}

/// Issue 50 item 1: `ct serve` ignored SIGINT while a worker was busy (a file that never ends, a
/// call that never returns): the stop waited for every worker. Now the first signal stops it
/// cleanly and, if calls still run after --grace seconds, the process ends anyway, ending what
/// the calls started; nothing acknowledged is lost.
void serve_stop() {
  auto config = read_config();
  if (!config) return;
  const std::string seconds = std::to_string(1000 + getpid() % 1000);  // a command line of this run's own
  config->set("validate.testCommand", "sleep " + seconds);
  write_config(*config);

  // Idle: the signal ends it at once, cleanly.
  {
    HttpServer idle;
    if (!idle.start()) return;
    EXPECT(succeeded(idle.call("cleo_mutate", "tasks", "add", R"({"title":"Written before the stop"})")), "add");
    idle.process().kill(SIGINT);
    auto status = idle.process().wait_for(std::chrono::seconds(20));
    EXPECT(status.has_value() && !status->signaled && status->code == 0,
           "an idle ct serve ends with 0 on SIGINT: " + (status ? std::to_string(status->code) : std::string("still running")));
  }

  // Busy: a call runs `sleep N` for its test run; SIGINT ends the server within its grace anyway.
  HttpServer busy;
  if (!busy.start({"--grace", "1"})) return;
  std::thread call([&] { (void)busy.call("cleo_mutate", "validate", "test.run", "{}"); });
  bool running = false;
  for (int i = 0; i < 100 && !running; ++i) {
    running = !processes_running({"sleep", seconds}).empty();
    if (!running) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT(running, "the call's test command runs");
  const auto signalled = std::chrono::steady_clock::now();
  busy.process().kill(SIGINT);
  auto status = busy.process().wait_for(std::chrono::seconds(60));
  const auto took =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - signalled).count();
  call.join();
  EXPECT(status.has_value(), "ct serve still ran 60 s after SIGINT with a call busy (grace 1 s)");
  EXPECT(!status || status->signaled || status->code != 0, "a stop forced by the grace period does not report 0");
  std::vector<pid_t> left;
  for (int i = 0; i < 50; ++i) {
    left = processes_running({"sleep", seconds});
    if (left.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT(left.empty(), "the call's test command outlived the server");
  for (pid_t pid : left) ::kill(pid, SIGKILL);
  CtRun listed = g_ct->run({"find", "Written before the stop", "--json"});
  EXPECT(listed.out.find("Written before the stop") != std::string::npos, "the acknowledged add is kept: " + listed.out);
  std::printf("serve-stop: an idle server stopped cleanly; a busy one ended %lld ms after SIGINT (grace 1 s)\n",
              static_cast<long long>(took));
  expect_valid_store("after the stops");
}

int main(int argc, char** argv) {
  std::string which;
  std::string ct_path;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--ct" && i + 1 < argc) {
      ct_path = argv[++i];
    } else if (arg == "--postgresql" && i + 1 < argc) {
      g_pg_url = argv[++i];
    } else {
      which = arg;
    }
  }
  std::map<std::string, std::function<void()>> cases = {
      {"writers", writers}, {"claim-race", claim_race}, {"lease", lease}, {"kill", kill_mid_stream}, {"config-reload", config_reload}, {"serve-pair", serve_pair},
      {"serve-stop", serve_stop},
      {"manifest-append", manifest_append}, {"big-values", big_values}, {"memory", memory_writers}, {"plans", plans},
      {"reservations", reservations}};
  if (ct_path.empty() || !cases.contains(which)) {
    std::fprintf(stderr, "usage: ct_multiproc --ct PATH [--postgresql URL] "
                         "writers|claim-race|lease|kill|config-reload|manifest-append|serve-pair|serve-stop|big-values|memory|plans|"
                         "reservations\n");
    return 2;
  }
  signal(SIGPIPE, SIG_IGN);  // a killed server's stdin

  auto sandbox = ct::testing::sandbox_or_complain("ct-multiproc");
  if (!sandbox) return 2;
  g_dir = sandbox->root();
  std::vector<std::string> env = sandbox->env_for(g_dir);
  if (!g_pg_url.empty()) {
    // Every process of the case shares one PostgreSQL store, in a schema of its own.
    g_pg_schema = "mp_" + which + "_" + std::to_string(getpid());
    std::replace(g_pg_schema.begin(), g_pg_schema.end(), '-', '_');
    env.push_back("CLEO_DATABASE_URL=" + g_pg_url);
    env.push_back("CLEO_DATABASE_SCHEMA=" + g_pg_schema);
  }
  g_ct = std::make_unique<CtCommand>(fs::absolute(ct_path).string(), std::move(env));

  CtRun init = g_ct->run({"init", "--json"});
  if (!exited_zero(init)) {
    std::fprintf(stderr, "ct init failed (%d): %s\n", init.status.code, init.out.c_str());
    sandbox->keep();
    return 1;
  }
  cases.at(which)();
  std::printf("%s: %d retries of retryable failures (ct: %d, ct mcp: %d)\n", which.c_str(),
              g_ct->retries() + g_retries.load(), g_ct->retries(), g_retries.load());
  if (g_failures == 0) {
    std::printf("%s: passed\n", which.c_str());
    return 0;
  }
  sandbox->keep();
  std::fprintf(stderr, "%s: %d failure(s); the store is kept in %s\n", which.c_str(), g_failures.load(),
               g_dir.c_str());
  return 1;
}
