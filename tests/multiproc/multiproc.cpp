// Multi-process safety of one project store, with the real `ct` binary (PRODUCT.md §4, issue 4):
//
//   ct_multiproc --ct PATH writers     8 writer processes × 200 mutations (4 sequences of `ct`
//                                      invocations, 4 `ct mcp` servers) → exactly the expected rows,
//                                      unique ids, a verifiable audit chain, a clean validate.schema
//   ct_multiproc --ct PATH claim-race  16 `ct mcp` servers, each in its own session, send
//                                      tasks.start for the same task at once → one wins, 15 get
//                                      E_TASK_CLAIMED
//   ct_multiproc --ct PATH kill        a `ct mcp` server fed a stream of mutations is killed with
//                                      SIGKILL mid-stream (three times) → validate.schema and
//                                      validate.audit pass, every acknowledged mutation is there
//
// Children are started with posix_spawn (no shell) in an environment built from scratch; the
// store is inspected through `ct` and, for row-level facts, read-only with SQLite. No timing is
// asserted: contention shows up only as retries of E_LOCK_TIMEOUT (which the product marks
// retryable), and those are counted and printed.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/json.h"
#include "core/json_parse.h"

extern char** environ;

namespace {

namespace fs = std::filesystem;
using ct::json::Value;

std::string g_ct;        // the binary under test
fs::path g_dir;          // the project directory
std::vector<std::string> g_env;
std::atomic<int> g_failures{0};
std::atomic<int> g_retries{0};
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

// -- processes -------------------------------------------------------------------------------

struct Child {
  pid_t pid = -1;
  int to_child = -1;    // its stdin (-1 when /dev/null)
  int from_child = -1;  // its stdout
};

/// Starts `ct args…` with its stdout on a pipe (and its stdin on one when `interactive`).
Child spawn_ct(const std::vector<std::string>& args, bool interactive) {
  int out[2], in[2] = {-1, -1};
  if (pipe2(out, O_CLOEXEC) != 0) std::abort();
  if (interactive && pipe2(in, O_CLOEXEC) != 0) std::abort();
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (interactive) {
    posix_spawn_file_actions_adddup2(&actions, in[0], STDIN_FILENO);
  } else {
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  }
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  std::vector<std::string> words{g_ct};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (auto& entry : g_env) envp.push_back(entry.data());
  envp.push_back(nullptr);
  Child child;
  int rc = posix_spawn(&child.pid, g_ct.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    std::fprintf(stderr, "cannot start %s: %s\n", g_ct.c_str(), std::strerror(rc));
    std::exit(2);
  }
  close(out[1]);
  child.from_child = out[0];
  if (interactive) {
    close(in[0]);
    child.to_child = in[1];
  }
  return child;
}

int wait_exit(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

struct Ran {
  int exit = 0;
  std::string out;
  Value json;  // stdout parsed, null when it is not JSON
};

Ran run_ct(const std::vector<std::string>& args) {
  Child child = spawn_ct(args, false);
  Ran ran;
  char buffer[65536];
  while (true) {
    ssize_t n = read(child.from_child, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    ran.out.append(buffer, static_cast<std::size_t>(n));
  }
  close(child.from_child);
  ran.exit = wait_exit(child.pid);
  if (auto parsed = ct::json::parse(ran.out)) ran.json = std::move(*parsed);
  return ran;
}

/// Runs `ct args… --json`, retrying a retryable failure (E_LOCK_TIMEOUT) a few times.
Ran run_ct_retrying(std::vector<std::string> args) {
  args.emplace_back("--json");
  for (int attempt = 0;; ++attempt) {
    Ran ran = run_ct(args);
    const Value& error = ran.json["error"];
    if (ran.exit == 0 || attempt == 4 || !error["retryable"].is_bool() || !error["retryable"].as_bool()) return ran;
    ++g_retries;
  }
}

/// A line-oriented JSON-RPC client of one `ct mcp` server.
class McpServer {
 public:
  McpServer() : child_(spawn_ct({"mcp"}, true)) {}
  ~McpServer() {
    if (child_.to_child >= 0) close(child_.to_child);
    if (child_.from_child >= 0) close(child_.from_child);
    if (child_.pid > 0) wait_exit(child_.pid);
  }
  McpServer(const McpServer&) = delete;
  McpServer& operator=(const McpServer&) = delete;

  pid_t pid() const { return child_.pid; }

  bool send(const std::string& line) {
    std::string text = line + "\n";
    std::size_t done = 0;
    while (done < text.size()) {
      ssize_t n = write(child_.to_child, text.data() + done, text.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      done += static_cast<std::size_t>(n);
    }
    return true;
  }

  /// The next line of output, nullopt at end of stream.
  std::optional<std::string> read_line() {
    while (true) {
      if (auto newline = buffer_.find('\n'); newline != std::string::npos) {
        std::string line = buffer_.substr(0, newline);
        buffer_.erase(0, newline + 1);
        return line;
      }
      char chunk[65536];
      ssize_t n = read(child_.from_child, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return std::nullopt;
      buffer_.append(chunk, static_cast<std::size_t>(n));
    }
  }

  /// The next reply that carries an id (notifications are skipped).
  std::optional<Value> read_reply() {
    while (auto line = read_line()) {
      auto parsed = ct::json::parse(*line);
      if (parsed && (*parsed)["id"].is_int()) return std::move(*parsed);
    }
    return std::nullopt;
  }

  bool initialize() {
    if (!send(R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25",)"
              R"("capabilities":{},"clientInfo":{"name":"multiproc","version":"1"}}})") ||
        !send(R"({"jsonrpc":"2.0","method":"notifications/initialized"})"))
      return false;
    auto reply = read_reply();
    return reply && (*reply)["result"].is_object();
  }

  static std::string call_line(std::int64_t id, std::string_view tool, std::string_view domain,
                               std::string_view operation, const std::string& params) {
    return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":"tools/call","params":{"name":")" +
           std::string(tool) + R"(","arguments":{"domain":")" + std::string(domain) + R"(","operation":")" +
           std::string(operation) + R"(","params":)" + params + "}}}";
  }

  /// One tool call; the envelope (structuredContent), or null when the server is gone. Retryable
  /// failures are retried (the same idempotencyKey, if any, goes with every attempt).
  Value call(std::string_view tool, std::string_view domain, std::string_view operation, const std::string& params) {
    for (int attempt = 0;; ++attempt) {
      if (!send(call_line(++id_, tool, domain, operation, params))) return Value();
      auto reply = read_reply();
      if (!reply) return Value();
      Value envelope = (*reply)["result"]["structuredContent"];
      const Value& error = envelope["error"];
      if (attempt == 4 || !error["retryable"].is_bool() || !error["retryable"].as_bool()) return envelope;
      ++g_retries;
    }
  }

 private:
  Child child_;
  std::string buffer_;
  std::int64_t id_ = 0;
};

// -- the store, read directly ------------------------------------------------------------------

/// Rows of a query on the project's database, opened read-only, every column as text.
std::vector<std::vector<std::string>> db_rows(const std::string& sql) {
  sqlite3* db = nullptr;
  std::vector<std::vector<std::string>> rows;
  if (sqlite3_open_v2((g_dir / ".cleo" / "tasks.db").c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    failure("cannot open the database");
    sqlite3_close(db);
    return rows;
  }
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK) {
    failure(std::string("bad query: ") + sqlite3_errmsg(db));
  } else {
    while (sqlite3_step(stmt) == SQLITE_ROW) {
      std::vector<std::string> row;
      for (int c = 0; c < sqlite3_column_count(stmt); ++c) {
        const unsigned char* text = sqlite3_column_text(stmt, c);
        row.emplace_back(text ? reinterpret_cast<const char*>(text) : "");
      }
      rows.push_back(std::move(row));
    }
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return rows;
}

std::int64_t db_count(const std::string& sql) {
  auto rows = db_rows(sql);
  return rows.empty() ? -1 : std::stoll(rows[0][0]);
}

/// validate.schema and validate.audit through `ct`; returns the audit's row count.
std::int64_t expect_valid_store(const std::string& when) {
  Ran schema = run_ct({"validate", "--limit", "20", "--json"});
  EXPECT(schema.exit == 0 && schema.json["data"]["valid"].is_bool() && schema.json["data"]["valid"].as_bool(),
         when + ": validate.schema: " + schema.out);
  Ran audit = run_ct({"validate", "audit", "--json"});
  EXPECT(audit.exit == 0 && audit.json["data"]["valid"].is_bool() && audit.json["data"]["valid"].as_bool(),
         when + ": validate.audit: " + audit.out);
  return audit.json["data"]["rows"].is_int() ? audit.json["data"]["rows"].as_int() : -1;
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
        Ran added = run_ct_retrying({"add", title});
        std::string id = added.json["data"]["id"].is_string() ? added.json["data"]["id"].as_string() : "";
        EXPECT(added.exit == 0 && !id.empty(), "ct add: " + added.out);
        if (id.empty()) return;
        Ran updated = run_ct_retrying({"update", id, "--priority", "high"});
        EXPECT(updated.exit == 0, "ct update: " + updated.out);
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
      McpServer server;
      EXPECT(server.initialize(), "mcp initialize");
      int done = 0;
      for (int i = 0; i < kMutationsPerWriter / 2; ++i) {
        std::string key = "mcp" + std::to_string(k) + "-" + std::to_string(i);
        std::string title = "mcp" + std::to_string(k) + " task " + std::to_string(i);
        Value added = server.call("cleo_mutate", "tasks", "add",
                                  R"({"title":")" + title + R"(","idempotencyKey":"add-)" + key + "\"}");
        std::string id = added["data"]["id"].is_string() ? added["data"]["id"].as_string() : "";
        EXPECT(!id.empty(), "mcp tasks.add: " + added.dump());
        if (id.empty()) return;
        Value updated = server.call("cleo_mutate", "tasks", "update",
                                    R"({"id":")" + id + R"(","priority":"high","idempotencyKey":"upd-)" + key + "\"}");
        EXPECT(updated["success"].is_bool() && updated["success"].as_bool(), "mcp tasks.update: " + updated.dump());
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

void claim_race() {
  constexpr int kRacers = 16;
  Ran added = run_ct({"add", "Contested task", "--json"});
  EXPECT(added.exit == 0, "ct add: " + added.out);
  std::vector<std::unique_ptr<McpServer>> servers;
  std::vector<std::string> sessions;
  for (int k = 0; k < kRacers; ++k) {
    servers.push_back(std::make_unique<McpServer>());
    EXPECT(servers.back()->initialize(), "mcp initialize");
    Value started = servers.back()->call("cleo_mutate", "session", "start",
                                         R"({"scope":"global","name":"racer )" + std::to_string(k) + "\"}");
    EXPECT(started["data"]["id"].is_string(), "session.start: " + started.dump());
    sessions.push_back(started["data"]["id"].is_string() ? started["data"]["id"].as_string() : "");
  }
  // Every server is up and bound to its session: send the claims back to back, then collect.
  for (auto& server : servers)
    server->send(McpServer::call_line(100, "cleo_mutate", "tasks", "start", R"({"id":"T001"})"));
  int won = 0, claimed = 0;
  std::string winner;
  std::set<std::string> holders;
  for (int k = 0; k < kRacers; ++k) {
    auto reply = servers[static_cast<std::size_t>(k)]->read_reply();
    Value envelope = reply ? (*reply)["result"]["structuredContent"] : Value();
    if (envelope["success"].is_bool() && envelope["success"].as_bool()) {
      ++won;
      winner = sessions[static_cast<std::size_t>(k)];
    } else if (envelope["error"]["code"].is_string() && envelope["error"]["code"].as_string() == "E_TASK_CLAIMED") {
      ++claimed;
      holders.insert(envelope["error"]["details"]["holder"].is_string()
                         ? envelope["error"]["details"]["holder"].as_string() : "?");
    } else {
      failure("unexpected reply to tasks.start: " + envelope.dump());
    }
  }
  EXPECT(won == 1, std::to_string(won) + " winners");
  EXPECT(claimed == kRacers - 1, std::to_string(claimed) + " got E_TASK_CLAIMED");
  EXPECT(holders == std::set<std::string>{winner}, "E_TASK_CLAIMED names the winner");
  auto focus = db_rows("SELECT session FROM focus WHERE task_id = 'T001'");
  EXPECT(focus.size() == 1 && focus[0][0] == winner, "exactly the winner holds T001");
  EXPECT(db_count("SELECT count(*) FROM tasks WHERE id = 'T001' AND status = 'active'") == 1, "T001 is active");
  servers.clear();
  expect_valid_store("after the race");
}

void kill_mid_stream() {
  constexpr int kRounds = 3;
  constexpr int kStream = 400;       // requests queued per round
  constexpr int kKillAfter = 60;     // acknowledgements before the kill
  std::set<std::string> acknowledged;
  for (int round = 0; round < kRounds; ++round) {
    McpServer server;
    EXPECT(server.initialize(), "mcp initialize");
    std::vector<std::string> titles;
    for (int i = 0; i < kStream; ++i) titles.push_back("round " + std::to_string(round) + " write " + std::to_string(i));
    // The requests go in from another thread, far ahead of the replies, so the server is busy
    // writing when it dies.
    std::thread feeder([&] {
      for (int i = 0; i < kStream; ++i) {
        std::string params = R"({"title":")" + titles[static_cast<std::size_t>(i)] + R"(","labels":["kill"]})";
        if (!server.send(McpServer::call_line(1000 + i, "cleo_mutate", "tasks", "add", params))) return;
      }
    });
    int acks = 0;
    bool killed = false;
    while (auto reply = server.read_reply()) {
      std::int64_t id = (*reply)["id"].as_int();
      const Value& envelope = (*reply)["result"]["structuredContent"];
      if (id >= 1000 && envelope["success"].is_bool() && envelope["success"].as_bool()) {
        acknowledged.insert(titles[static_cast<std::size_t>(id - 1000)]);
        ++acks;
      } else {
        failure("tasks.add failed before the kill: " + reply->dump());
      }
      if (acks == kKillAfter && !killed) {
        kill(server.pid(), SIGKILL);
        killed = true;  // replies already in the pipe still count: they were written after commit
      }
    }
    feeder.join();
    EXPECT(killed, "round " + std::to_string(round) + " ended before the kill (" + std::to_string(acks) + " acks)");
    std::int64_t stored = db_count("SELECT count(*) FROM tasks");
    EXPECT(stored >= static_cast<std::int64_t>(acknowledged.size()), "rows: " + std::to_string(stored));
    std::int64_t audit_rows = expect_valid_store("after kill " + std::to_string(round + 1));
    EXPECT(audit_rows == stored, "one audit row per stored add: " + std::to_string(audit_rows) + " vs " +
                                     std::to_string(stored));
  }
  std::set<std::string> present;
  for (const auto& row : db_rows("SELECT title FROM tasks")) present.insert(row[0]);
  for (const auto& title : acknowledged) EXPECT(present.contains(title), "acknowledged but lost: " + title);
  // The search index took every committed write too.
  EXPECT(db_count("SELECT count(*) FROM tasks_fts") == db_count("SELECT count(*) FROM tasks"), "search index rows");
  std::printf("kill: %zu acknowledged writes survived %d kills\n", acknowledged.size(), kRounds);
}

}  // namespace

int main(int argc, char** argv) {
  std::string which;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--ct" && i + 1 < argc) {
      g_ct = argv[++i];
    } else {
      which = arg;
    }
  }
  std::map<std::string, std::function<void()>> cases = {
      {"writers", writers}, {"claim-race", claim_race}, {"kill", kill_mid_stream}};
  if (g_ct.empty() || !cases.contains(which)) {
    std::fprintf(stderr, "usage: ct_multiproc --ct PATH writers|claim-race|kill\n");
    return 2;
  }
  signal(SIGPIPE, SIG_IGN);  // a killed server's stdin
  g_ct = fs::absolute(g_ct).string();

  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/ct-multiproc-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    std::perror("mkdtemp");
    return 2;
  }
  g_dir = pattern;
  fs::create_directories(g_dir / "home");
  g_env = {"PATH=" + std::string(std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin"),
           "HOME=" + (g_dir / "home").string(), "CLEO_ROOT=" + g_dir.string(), "LC_ALL=C.UTF-8", "NO_COLOR=1"};
  for (const char* name : {"ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"})
    if (const char* value = std::getenv(name)) g_env.push_back(std::string(name) + "=" + value);

  Ran init = run_ct({"init", "--json"});
  if (init.exit != 0) {
    std::fprintf(stderr, "ct init failed (%d): %s\n", init.exit, init.out.c_str());
    return 1;
  }
  cases.at(which)();
  std::printf("%s: %d retries of retryable failures\n", which.c_str(), g_retries.load());
  if (g_failures == 0) {
    std::error_code ec;
    fs::remove_all(g_dir, ec);
    std::printf("%s: passed\n", which.c_str());
    return 0;
  }
  std::fprintf(stderr, "%s: %d failure(s); the store is kept in %s\n", which.c_str(), g_failures.load(),
               g_dir.c_str());
  return 1;
}
