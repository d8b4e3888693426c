// ct_bench_mcp — the MCP transport benchmark. It builds one store of --tasks tasks (default 10k)
// by driving `ct mcp` over stdio with the store benchmark's seeded workload (bench/workload.h),
// then, each time on a fresh copy of that store, measures the round trip of tools/call
// tasks.show, tasks.find and tasks.add as an agent host sees it:
//   - stdio: `ct mcp --project DIR` on pipes, with one client, then with --clients processes
//     each driven by its own thread;
//   - HTTP: one `ct serve --project DIR --port 0`, with one client, then --clients concurrent
//     clients, each with its own session and keep-alive connection (cpp-httplib's client);
// plus the time from process start to the initialize reply (`ct mcp` and `ct serve`) and the
// servers' resident memory (VmRSS, VmHWM). The report is Markdown on stdout, ready for
// docs/performance.md; progress goes to stderr.
#include <httplib.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <barrier>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "bench/report.h"
#include "bench/workload.h"
#include "core/json.h"
#include "core/text.h"
#include "support/child_process.h"

namespace ct::bench {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kUsage = R"(usage: ct_bench_mcp --ct PATH [options]

  --ct PATH          the ct binary (`ct serve` runs the ct-serve next to it)
  --tasks N          tasks in the store (default 10000)
  --iterations N     timed calls per operation and run, split across the clients (default 1000;
                     a client stops early once the operation has run --budget seconds and it has
                     made 10 calls)
  --budget S         seconds per operation and run before stopping early (default 3)
  --clients N        concurrent clients in the concurrent runs (default 8)
  --starts N         process starts timed per server kind (default 50)
  --client-nodelay B 1 (default): HTTP clients set TCP_NODELAY, as curl, Node and Python clients
                     do; 0: leave Nagle's algorithm on, as cpp-httplib's client does by default
  --keep DIR         build the store in DIR/store and keep it (DIR/store must not exist)
  --seed N           workload seed (default 20260101, as ct_bench_store)
  --find-words W,... the words tasks.find searches, in turn (default: a uniform vocabulary word
                     each; schema,migration,database are in a quarter of the tasks: issue 56)
)";

/// The issue's targets.
constexpr double kStdioShowTargetUs = 60.0;
// Issue 16: a round trip through `ct mcp` against the same request echoed by `cat`.
constexpr double kShowFloorRatioTarget = 1.3;
constexpr double kAddFloorRatioTarget = 3.0;
constexpr double kHttpShowTargetUs = 250.0;
constexpr double kStartTargetUs = 10000.0;
constexpr double kIdleRssTargetKb = 10.0 * 1024.0;

/// Timed calls each client makes at least, whatever the budget.
constexpr std::size_t kMinCalls = 10;

/// Every read or write to a server gives up after this long: a hung server fails the run.
constexpr int kTimeoutMs = 30000;

constexpr std::string_view kProtocolVersion = "2025-11-25";
/// The store benchmark's clock, so both build the same rows.
constexpr std::string_view kFixedTime = "2026-01-01T00:00:00Z";

struct Options {
  fs::path ct;
  std::int64_t tasks = 10000;
  int iterations = 1000;
  double budget_s = 3.0;
  bool client_nodelay = true;
  int clients = 8;
  int starts = 50;
  std::optional<fs::path> keep;
  std::uint32_t seed = 20260101;
  std::vector<std::string> find_words;
};


Options parse_options(int argc, char** argv) {
  Options options;
  bool have_ct = false;
  std::vector<std::string_view> args(argv + 1, argv + argc);
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string_view flag = args[i];
    if (flag == "--help" || flag == "-h") {
      std::cout << kUsage;
      std::exit(0);
    }
    if (i + 1 >= args.size()) throw std::invalid_argument(std::string(flag) + ": missing value (see --help)");
    std::string_view value = args[++i];
    if (flag == "--ct") {
      options.ct = fs::absolute(fs::path(value));
      have_ct = true;
    } else if (flag == "--tasks") {
      options.tasks = std::max<std::int64_t>(1, parse_number<std::int64_t>(flag, value));
    } else if (flag == "--iterations") {
      options.iterations = std::max(1, parse_number<int>(flag, value));
    } else if (flag == "--budget") {
      options.budget_s = std::max(0.1, parse_number<double>(flag, value));
    } else if (flag == "--client-nodelay") {
      if (value != "0" && value != "1") throw std::invalid_argument("--client-nodelay: 0 or 1");
      options.client_nodelay = value == "1";
    } else if (flag == "--clients") {
      options.clients = std::max(1, parse_number<int>(flag, value));
    } else if (flag == "--starts") {
      options.starts = std::max(1, parse_number<int>(flag, value));
    } else if (flag == "--keep") {
      options.keep = fs::path(value);
    } else if (flag == "--seed") {
      options.seed = parse_number<std::uint32_t>(flag, value);
    } else if (flag == "--find-words") {
      for (std::size_t at = 0; at <= value.size();) {
        const std::size_t comma = std::min(value.find(',', at), value.size());
        if (comma > at) options.find_words.emplace_back(value.substr(at, comma - at));
        at = comma + 1;
      }
    } else {
      throw std::invalid_argument("unknown option '" + std::string(flag) + "' (see --help)");
    }
  }
  if (!have_ct) throw std::invalid_argument("--ct PATH is required (see --help)");
  return options;
}

void progress(const std::string& text) { std::cerr << text << std::endl; }


std::string errno_text(int error) { return std::strerror(error); }

// ---------------------------------------------------------------------------------------------
// Statistics (as ct_bench_store: nearest-rank percentiles over microseconds).

struct Stats {
  std::size_t n = 0;
  double median = 0;
  double p95 = 0;
  double min = 0;
};

Stats summarize(std::vector<double> samples) {
  Stats stats;
  if (samples.empty()) return stats;
  std::sort(samples.begin(), samples.end());
  stats.n = samples.size();
  stats.median = nearest_rank(samples, 0.50);
  stats.p95 = nearest_rank(samples, 0.95);
  stats.min = samples.front();
  return stats;
}

// ---------------------------------------------------------------------------------------------
// Processes.

/// The environment for servers: ours, without CLEO_ROOT/CLEO_READ_ONLY, with the fixed clock.
std::vector<std::string> server_environment() {
  std::vector<std::string> out = testing::inherited_environment({"CLEO_ROOT=", "CLEO_READ_ONLY=", "CLEO_FIXED_TIME="});
  out.push_back("CLEO_FIXED_TIME=" + std::string(kFixedTime));
  return out;
}

/// Starts `argv` with stdin/stdout on pipes (or /dev/null) and stderr appended to `stderr_file`.
testing::ChildProcess spawn(const std::vector<std::string>& argv, const std::vector<std::string>& env, bool pipe_in,
                            bool pipe_out, const fs::path& stderr_file) {
  testing::SpawnOptions options;
  options.pipe_stdin = pipe_in;
  options.pipe_stdout = pipe_out;
  options.stderr_path = stderr_file.string();
  options.env = env;
  auto child = testing::ChildProcess::start(argv, options);
  if (!child) throw std::runtime_error(child.error());
  return std::move(*child);
}

std::string read_text(const fs::path& file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// What /proc/<pid>/status says about memory and threads, in kB.
struct Memory {
  long rss_kb = 0;
  long anon_kb = 0;   // heap, stacks: the server's own memory
  long file_kb = 0;   // mapped files: code of the executable and libraries, SQLite's mmap of the
                      // database (counted once per mapping, i.e. per connection)
  long shmem_kb = 0;  // shared memory (SQLite's -shm WAL index)
  long hwm_kb = 0;
  long threads = 0;
};

Memory memory_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  Memory memory;
  std::string line;
  auto value = [](const std::string& text) {
    return std::strtol(text.c_str() + text.find(':') + 1, nullptr, 10);
  };
  while (std::getline(in, line)) {
    if (line.starts_with("VmRSS:")) memory.rss_kb = value(line);
    else if (line.starts_with("VmHWM:")) memory.hwm_kb = value(line);
    else if (line.starts_with("RssAnon:")) memory.anon_kb = value(line);
    else if (line.starts_with("RssFile:")) memory.file_kb = value(line);
    else if (line.starts_with("RssShmem:")) memory.shmem_kb = value(line);
    else if (line.starts_with("Threads:")) memory.threads = value(line);
  }
  return memory;
}

// ---------------------------------------------------------------------------------------------
// MCP messages.

std::string rpc_request(std::int64_t id, std::string_view method, const std::string& params_json) {
  return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":")" + std::string(method) +
         R"(","params":)" + params_json + "}";
}

std::string initialize_request(std::int64_t id) {
  return rpc_request(id, "initialize",
                     R"({"protocolVersion":")" + std::string(kProtocolVersion) +
                         R"(","capabilities":{},"clientInfo":{"name":"ct_bench_mcp","version":"1"}})");
}

constexpr std::string_view kInitializedNotification = R"({"jsonrpc":"2.0","method":"notifications/initialized"})";

std::string tool_call(std::int64_t id, bool mutate, std::string_view domain, std::string_view operation,
                      const json::Value& params) {
  return rpc_request(id, "tools/call",
                     std::string(R"({"name":")") + (mutate ? "cleo_mutate" : "cleo_query") +
                         R"(","arguments":{"domain":")" + std::string(domain) + R"(","operation":")" +
                         std::string(operation) + R"(","params":)" + params.dump() + "}}");
}

/// The reply's prefix for request `id`: the server writes jsonrpc first, then the id.
std::string reply_prefix(std::int64_t id) { return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + ","; }

/// A successful tool result for request `id`, or throws with the reply.
void check_tool_reply(const std::string& reply, std::int64_t id, const std::string& what) {
  if (!reply.starts_with(reply_prefix(id)) || reply.find(R"("isError":false)") == std::string::npos)
    throw std::runtime_error(what + " failed: " + reply.substr(0, 400));
}

/// One request/response exchange with an MCP server, whatever the transport.
class Client {
 public:
  virtual ~Client() = default;
  /// Sends one JSON-RPC request and returns its reply (throws on transport failure).
  virtual std::string call(const std::string& message) = 0;
  /// The server process serving this client.
  virtual pid_t server_pid() const = 0;
};

// ---- stdio ----

class StdioClient final : public Client {
 public:
  StdioClient(const fs::path& ct, const fs::path& project, const std::vector<std::string>& env,
              const fs::path& stderr_file)
      : stderr_file_(stderr_file),
        child_(spawn({ct.string(), "mcp", "--project", project.string()}, env, true, true, stderr_file)) {}
  StdioClient(const StdioClient&) = delete;
  StdioClient& operator=(const StdioClient&) = delete;

  void send(std::string_view message) {
    if (!child_.write_line(message)) throw std::runtime_error("cannot write to `ct mcp`: " + errno_text(errno) + note());
  }

  std::string read_line() {
    auto line = child_.read_line(std::chrono::milliseconds(kTimeoutMs));
    if (!line) {
      throw std::runtime_error(child_.end() == testing::ReadEnd::Timeout ? "`ct mcp` did not reply in time" + note()
                                                                         : "`ct mcp` closed its stdout" + note());
    }
    return *line;
  }

  std::string call(const std::string& message) override {
    send(message);
    return read_line();
  }
  pid_t server_pid() const override { return child_.pid(); }

  /// Closes stdin (the client is done) and checks that the server exits 0.
  void finish() {
    child_.close_stdin();
    testing::ExitStatus status = child_.stop(0, std::chrono::milliseconds(kTimeoutMs));
    if (status.signaled || status.code != 0)
      throw std::runtime_error("`ct mcp` ended with " + testing::describe(status) + " after its stdin closed");
  }

 private:
  std::string note() const {
    std::string text = read_text(stderr_file_);
    return text.empty() ? "" : "; its stderr: " + text.substr(0, 400);
  }

  fs::path stderr_file_;
  testing::ChildProcess child_;
};

/// The floor of a stdio round trip: `cat` echoing the request, on the same kind of pipes and through
/// the same client code, so that `ct mcp`'s own cost is the difference (issue 16's ratio).
class PipeFloor final : public Client {
 public:
  explicit PipeFloor(const fs::path& stderr_file) : child_(spawn({"/bin/cat"}, {}, true, true, stderr_file)) {}
  std::string call(const std::string& message) override {
    if (!child_.write_line(message)) throw std::runtime_error("cannot write to `cat`: " + errno_text(errno));
    auto line = child_.read_line(std::chrono::milliseconds(kTimeoutMs));
    if (!line) throw std::runtime_error("`cat` did not echo the request");
    return *line;
  }
  pid_t server_pid() const override { return child_.pid(); }

 private:
  testing::ChildProcess child_;
};

/// initialize + notifications/initialized over stdio.
void initialize_stdio(StdioClient& client) {
  std::string reply = client.call(initialize_request(0));
  if (!reply.starts_with(reply_prefix(0)) || reply.find(R"("protocolVersion")") == std::string::npos)
    throw std::runtime_error("initialize failed: " + reply.substr(0, 400));
  client.send(kInitializedNotification);
}

// ---- HTTP ----

struct Endpoint {
  std::string host;
  int port = 0;
  std::string path;
};

Endpoint parse_url(const std::string& url) {
  constexpr std::string_view kScheme = "http://";
  auto slash = url.find('/', kScheme.size());
  auto colon = url.rfind(':', slash);
  if (!url.starts_with(kScheme) || slash == std::string::npos || colon == std::string::npos || colon < kScheme.size())
    throw std::runtime_error("cannot read the endpoint '" + url + "'");
  Endpoint endpoint;
  endpoint.host = url.substr(kScheme.size(), colon - kScheme.size());
  endpoint.port = std::atoi(url.substr(colon + 1, slash - colon - 1).c_str());
  endpoint.path = url.substr(slash);
  return endpoint;
}

/// `ct serve --project DIR --port 0`, and the URL it prints.
class HttpServerProcess {
 public:
  HttpServerProcess(const fs::path& ct, const fs::path& project, const std::vector<std::string>& env,
                    const fs::path& stderr_file)
      : stderr_file_(stderr_file),
        child_(spawn({ct.string(), "serve", "--project", project.string(), "--port", "0"}, env, false, true,
                     stderr_file)) {
    constexpr std::string_view kPrefix = "CLEO MCP server: ";
    std::string out;
    auto deadline = Steady::now() + std::chrono::milliseconds(kTimeoutMs);
    while (true) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Steady::now());
      auto line = child_.read_line(std::max(left, std::chrono::milliseconds(0)));
      if (!line && child_.end() == testing::ReadEnd::EndOfFile)
        throw std::runtime_error("`ct serve` closed its stdout before printing its URL" + note());
      if (!line) throw std::runtime_error("`ct serve` did not print its URL; stdout: " + out.substr(0, 300) + note());
      if (line->starts_with(kPrefix)) {
        endpoint_ = parse_url(std::string(trim(std::string_view(*line).substr(kPrefix.size()))));
        return;
      }
      out += *line + "\n";
    }
  }
  ~HttpServerProcess() { child_.stop(SIGTERM, std::chrono::seconds(10)); }
  HttpServerProcess(const HttpServerProcess&) = delete;
  HttpServerProcess& operator=(const HttpServerProcess&) = delete;

  const Endpoint& endpoint() const { return endpoint_; }
  pid_t pid() const { return child_.pid(); }

  /// SIGTERM, and checks that the server exits 0.
  void finish() {
    testing::ExitStatus status = child_.stop(SIGTERM, std::chrono::milliseconds(kTimeoutMs));
    if (status.signaled || status.code != 0)
      throw std::runtime_error("`ct serve` ended with " + testing::describe(status) + " after SIGTERM" + note());
  }

 private:
  std::string note() const {
    std::string text = read_text(stderr_file_);
    return text.empty() ? "" : "; its stderr: " + text.substr(0, 400);
  }

  fs::path stderr_file_;
  testing::ChildProcess child_;
  Endpoint endpoint_;
};

/// One MCP session on its own keep-alive connection, as an agent host keeps one.
class HttpClient final : public Client {
 public:
  HttpClient(const Endpoint& endpoint, pid_t server, bool nodelay) : endpoint_(endpoint), server_(server) {
    client_ = std::make_unique<httplib::Client>(endpoint.host, endpoint.port);
    client_->set_keep_alive(true);
    client_->set_tcp_nodelay(nodelay);
    client_->set_connection_timeout(kTimeoutMs / 1000, 0);
    client_->set_read_timeout(kTimeoutMs / 1000, 0);
    client_->set_write_timeout(kTimeoutMs / 1000, 0);
  }
  ~HttpClient() override {
    if (!session_.empty()) client_->Delete(endpoint_.path, headers());
  }
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  /// POSTs one message; the body (empty for 202) or throws.
  std::string post(const std::string& message, int expected_status) {
    auto result = client_->Post(endpoint_.path, headers(), message, "application/json");
    if (!result) throw std::runtime_error("POST failed: " + httplib::to_string(result.error()));
    if (result->status != expected_status)
      throw std::runtime_error("POST answered HTTP " + std::to_string(result->status) + ": " + result->body.substr(0, 300));
    if (session_.empty() && result->has_header("Mcp-Session-Id")) session_ = result->get_header_value("Mcp-Session-Id");
    return std::move(result->body);
  }

  void initialize() {
    std::string reply = post(initialize_request(0), 200);
    if (!reply.starts_with(reply_prefix(0)) || session_.empty())
      throw std::runtime_error("initialize failed (session '" + session_ + "'): " + reply.substr(0, 400));
    post(std::string(kInitializedNotification), 202);
  }

  std::string call(const std::string& message) override { return post(message, 200); }
  pid_t server_pid() const override { return server_; }

 private:
  httplib::Headers headers() const {
    httplib::Headers h{{"Accept", "application/json, text/event-stream"}};
    if (!session_.empty()) {
      h.emplace("Mcp-Session-Id", session_);
      h.emplace("MCP-Protocol-Version", std::string(kProtocolVersion));
    }
    return h;
  }

  Endpoint endpoint_;
  pid_t server_;
  std::unique_ptr<httplib::Client> client_;
  std::string session_;
};

// ---------------------------------------------------------------------------------------------
// Building the store: system.init, then every tasks.add and tasks.complete of the workload,
// pipelined over one `ct mcp` (a window of requests in flight; ids are predicted and checked).

struct FillReport {
  double seconds = 0;
  std::size_t completed = 0;
  double db_megabytes = 0;
};


std::string task_id(std::int64_t number) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "T%03lld", static_cast<long long>(number));
  return buffer;
}

FillReport fill_store(const Options& options, Workload& workload, const fs::path& project, const fs::path& scratch,
                      const std::vector<std::string>& env) {
  FillReport report;
  fs::create_directories(project);
  auto started = Steady::now();
  StdioClient client(options.ct, project, env, scratch / "fill.stderr");
  initialize_stdio(client);
  std::int64_t next_id = 1;
  {
    std::string reply = client.call(tool_call(next_id, true, "system", "init", json::Value::object()));
    check_tool_reply(reply, next_id++, "system.init");
  }

  // Replies are a few hundred bytes and requests under a few KB: a window of 32 stays well inside
  // the pipe buffers, so neither side blocks on a full pipe.
  constexpr std::size_t kWindow = 32;
  struct Pending {
    std::int64_t rpc_id;
    std::string expected_task;  // for adds: the id the store must give
    std::string what;
  };
  std::vector<Pending> in_flight;
  auto drain = [&] {
    for (const auto& pending : in_flight) {
      std::string reply = client.read_line();
      check_tool_reply(reply, pending.rpc_id, pending.what);
      if (!pending.expected_task.empty() &&
          reply.find(R"("structuredContent":{"success":true,"data":{"id":")" + pending.expected_task + "\"") ==
              std::string::npos)
        throw std::runtime_error(pending.what + ": expected the new task " + pending.expected_task +
                                 ", got: " + reply.substr(0, 300));
    }
    in_flight.clear();
  };

  std::int64_t step = std::max<std::int64_t>(1, options.tasks / 10);
  for (std::int64_t i = 0; i < options.tasks; ++i) {
    PlannedAdd plan = workload.plan_add();
    std::string id = task_id(i + 1);
    workload.created(id, plan);  // later plans may refer to it: it exists by the time they run
    client.send(tool_call(next_id, true, "tasks", "add", plan.params));
    in_flight.push_back({next_id++, id, "tasks.add #" + std::to_string(i + 1)});
    if (in_flight.size() >= kWindow) drain();
    if ((i + 1) % step == 0) progress("  added " + std::to_string(i + 1));
  }
  drain();
  for (const auto& id : workload.plan_completions()) {
    json::Value params = json::Value::object();
    params.set("id", id);
    client.send(tool_call(next_id, true, "tasks", "complete", params));
    in_flight.push_back({next_id++, "", "tasks.complete " + id});
    if (in_flight.size() >= kWindow) drain();
    ++report.completed;
  }
  drain();
  client.finish();
  report.seconds = micros_since(started) / 1e6;
  report.db_megabytes = megabytes_of(project / ".cleo");
  return report;
}

/// A fresh copy of the filled store for one run (every run starts from the same N tasks).
fs::path copy_store(const fs::path& pristine, const fs::path& root, const std::string& name) {
  fs::path target = root / name;
  fs::remove_all(target);
  fs::copy(pristine, target, fs::copy_options::recursive);
  return target;
}

// ---------------------------------------------------------------------------------------------
// Round trips.

enum class Op { Show, Find, Add };
constexpr std::array<Op, 3> kOps = {Op::Show, Op::Find, Op::Add};
std::string_view op_name(Op op) {
  switch (op) {
    case Op::Show: return "show";
    case Op::Find: return "find (one word)";
    case Op::Add: return "add";
  }
  return "?";
}

/// A message and its JSON-RPC id.
struct Message {
  std::int64_t id = 0;
  std::string text;
};

/// Everything one client sends in a run, rendered before the clock starts.
struct ClientScript {
  std::vector<Message> warmup;
  std::array<std::vector<Message>, 3> timed;  // by Op
};

/// Requests as ct_bench_store makes them: show a random existing id, find a uniform vocabulary
/// word, add the workload's next planned task. Ids start at 1 (0 was initialize).
std::vector<ClientScript> make_scripts(Workload& workload, int clients, int per_client,
                                       const std::vector<std::string>& find_words) {
  std::vector<ClientScript> scripts(static_cast<std::size_t>(clients));
  std::size_t next_word = 0;
  for (auto& script : scripts) {
    std::int64_t next = 1;
    auto make = [&](Op op) {
      Message message;
      message.id = next++;
      json::Value params = json::Value::object();
      switch (op) {
        case Op::Show:
          params.set("id", workload.random_id());
          message.text = tool_call(message.id, false, "tasks", "show", params);
          break;
        case Op::Find:
          params.set("query", find_words.empty() ? workload.random_word()
                                                 : find_words[next_word++ % find_words.size()]);
          message.text = tool_call(message.id, false, "tasks", "find", params);
          break;
        case Op::Add:
          message.text = tool_call(message.id, true, "tasks", "add", workload.plan_add().params);
          break;
      }
      return message;
    };
    for (int i = 0; i < 3; ++i)
      for (Op op : kOps) script.warmup.push_back(make(op));
    for (Op op : kOps) {
      auto& list = script.timed[static_cast<std::size_t>(op)];
      for (int i = 0; i < per_client; ++i) list.push_back(make(op));
    }
  }
  return scripts;
}

struct OpResult {
  Stats stats;
  double calls_per_second = 0;
  double mean_reply_bytes = 0;
  double server_cpu_us = 0;  // server CPU time per call
  std::optional<Stats> floor;  // the same requests through the pipe floor, interleaved (1 stdio client)
};

struct RunResult {
  std::array<OpResult, 3> ops;  // by Op
};

/// Drives every client from its own thread: warm-up, then each operation in turn, all clients
/// starting it together (a barrier between operations), so a row is N clients doing that one call.
/// With `floor` (one client only), every timed request also goes through the floor right after the
/// server's reply, so both see the same moments of a noisy machine.
RunResult drive(std::vector<Client*> clients, const std::vector<ClientScript>& scripts, std::vector<pid_t> servers,
                double budget_s, Client* floor = nullptr) {
  if (floor != nullptr && clients.size() != 1) throw std::logic_error("a pipe floor needs exactly one client");
  const std::size_t count = clients.size();
  // Barrier phases: 0 after warm-up, then one after each operation.
  std::array<Steady::time_point, 4> marks{};
  std::array<std::int64_t, 4> cpu{};
  std::size_t phase = 0;
  auto on_phase = [&]() noexcept {
    marks[phase] = Steady::now();
    std::int64_t total = 0;
    try {
      for (pid_t pid : servers) total += cpu_ns_of(pid);
    } catch (...) {
    }
    cpu[phase] = total;
    ++phase;
  };
  std::barrier sync(static_cast<std::ptrdiff_t>(count), on_phase);

  std::vector<std::array<std::vector<double>, 3>> samples(count);
  std::array<std::vector<double>, 3> floor_samples;
  std::vector<std::array<double, 3>> bytes(count, std::array<double, 3>{});
  std::vector<std::exception_ptr> errors(count);
  std::vector<std::thread> threads;
  for (std::size_t c = 0; c < count; ++c) {
    threads.emplace_back([&, c] {
      Client& client = *clients[c];
      const ClientScript& script = scripts[c];
      auto step = [&](auto&& work) {
        if (!errors[c]) {
          try {
            work();
          } catch (...) {
            errors[c] = std::current_exception();
          }
        }
        sync.arrive_and_wait();
      };
      step([&] {
        for (const auto& message : script.warmup) check_tool_reply(client.call(message.text), message.id, "warm-up call");
      });
      for (Op op : kOps) {
        step([&] {
          auto index = static_cast<std::size_t>(op);
          auto& out = samples[c][index];
          out.reserve(script.timed[index].size());
          const auto started = Steady::now();
          for (const auto& message : script.timed[index]) {
            if (out.size() >= kMinCalls && micros_since(started) > budget_s * 1e6) break;
            auto t0 = Steady::now();
            std::string reply = client.call(message.text);
            out.push_back(micros_since(t0));
            check_tool_reply(reply, message.id, std::string(op_name(op)));
            bytes[c][index] += static_cast<double>(reply.size());
            if (floor != nullptr) {
              auto f0 = Steady::now();
              floor->call(message.text);
              floor_samples[index].push_back(micros_since(f0));
            }
          }
        });
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (const auto& error : errors)
    if (error) std::rethrow_exception(error);

  RunResult result;
  for (Op op : kOps) {
    auto index = static_cast<std::size_t>(op);
    std::vector<double> all;
    double total_bytes = 0;
    for (std::size_t c = 0; c < count; ++c) {
      all.insert(all.end(), samples[c][index].begin(), samples[c][index].end());
      total_bytes += bytes[c][index];
    }
    OpResult& out = result.ops[index];
    double calls = static_cast<double>(all.size());
    double wall_s = std::chrono::duration<double>(marks[index + 1] - marks[index]).count();
    out.calls_per_second = wall_s > 0 ? calls / wall_s : 0;
    out.mean_reply_bytes = calls > 0 ? total_bytes / calls : 0;
    out.server_cpu_us = calls > 0 ? static_cast<double>(cpu[index + 1] - cpu[index]) / 1000.0 / calls : 0;
    out.stats = summarize(std::move(all));
    if (floor != nullptr) out.floor = summarize(std::move(floor_samples[index]));
  }
  return result;
}

struct Row {
  std::string op;
  std::string transport;
  int clients = 1;
  OpResult result;
  std::optional<double> target_us;
};

struct MemoryRow {
  std::string server;
  std::string moment;
  Memory memory;
  bool has_target = false;
};

void add_rows(std::vector<Row>& rows, const RunResult& run, std::string_view transport, int clients) {
  for (Op op : kOps) {
    Row row;
    row.op = std::string(op_name(op));
    row.transport = std::string(transport);
    row.clients = clients;
    row.result = run.ops[static_cast<std::size_t>(op)];
    if (op == Op::Show && clients == 1) row.target_us = transport == "stdio" ? kStdioShowTargetUs : kHttpShowTargetUs;
    rows.push_back(std::move(row));
  }
}

int per_client(const Options& options, int clients) {
  return std::max(static_cast<int>(kMinCalls), options.iterations / clients);
}

void run_stdio(const Options& options, Workload& workload, const fs::path& project, const fs::path& scratch,
               const std::vector<std::string>& env, int clients, std::vector<Row>& rows,
               std::vector<MemoryRow>& memory) {
  progress("stdio, " + std::to_string(clients) + " client(s)");
  std::vector<std::unique_ptr<StdioClient>> owned;
  for (int c = 0; c < clients; ++c) {
    owned.push_back(std::make_unique<StdioClient>(options.ct, project, env,
                                                  scratch / ("stdio-" + std::to_string(c) + ".stderr")));
    initialize_stdio(*owned.back());
  }
  // The notification has no reply; a ping round trip makes sure it has been read.
  for (auto& client : owned) {
    std::string reply = client->call(rpc_request(-1, "ping", "{}"));
    if (!reply.starts_with(reply_prefix(-1))) throw std::runtime_error("ping failed: " + reply.substr(0, 300));
  }
  if (clients == 1) memory.push_back({"`ct mcp`", "idle, after initialize", memory_of(owned[0]->server_pid()), true});
  std::vector<Client*> pointers;
  std::vector<pid_t> pids;
  for (auto& client : owned) {
    pointers.push_back(client.get());
    pids.push_back(client->server_pid());
  }
  auto scripts = make_scripts(workload, clients, per_client(options, clients), options.find_words);
  std::optional<PipeFloor> floor;
  if (clients == 1) floor.emplace(scratch / "floor.stderr");
  RunResult run = drive(pointers, scripts, pids, options.budget_s, floor ? &*floor : nullptr);
  add_rows(rows, run, "stdio", clients);
  if (clients == 1) {
    memory.push_back({"`ct mcp`", "after the 1-client run", memory_of(pids[0]), false});
  } else {
    Memory largest;
    for (pid_t pid : pids) {
      Memory m = memory_of(pid);
      if (m.rss_kb > largest.rss_kb) largest = m;
    }
    memory.push_back({"`ct mcp`", "after the " + std::to_string(clients) + "-client run (largest of " +
                                      std::to_string(clients) + " processes)",
                      largest, false});
  }
  for (auto& client : owned) client->finish();
}

void run_http(const Options& options, Workload& workload, const fs::path& project, const fs::path& scratch,
              const std::vector<std::string>& env, int clients, std::vector<Row>& rows,
              std::vector<MemoryRow>& memory) {
  progress("HTTP, " + std::to_string(clients) + " client(s)");
  HttpServerProcess server(options.ct, project, env, scratch / ("http-" + std::to_string(clients) + ".stderr"));
  {
    std::vector<std::unique_ptr<HttpClient>> owned;
    for (int c = 0; c < clients; ++c) {
      owned.push_back(std::make_unique<HttpClient>(server.endpoint(), server.pid(), options.client_nodelay));
      owned.back()->initialize();
    }
    if (clients == 1) memory.push_back({"`ct serve`", "idle, after initialize", memory_of(server.pid()), true});
    std::vector<Client*> pointers;
    for (auto& client : owned) pointers.push_back(client.get());
    auto scripts = make_scripts(workload, clients, per_client(options, clients), options.find_words);
    RunResult run = drive(pointers, scripts, {server.pid()}, options.budget_s);
    add_rows(rows, run, "HTTP", clients);
    memory.push_back({"`ct serve`", "after the " + std::to_string(clients) + "-client run", memory_of(server.pid()),
                      false});
  }  // the clients end their sessions (DELETE) and close their connections
  server.finish();
}

// ---------------------------------------------------------------------------------------------
// Start to initialize.

struct StartRow {
  std::string server;
  Stats stats;
  std::optional<Stats> listening;  // HTTP: until the port accepted a connection
  bool has_target = true;
};

Stats time_stdio_starts(const Options& options, const fs::path& project, const fs::path& scratch,
                        const std::vector<std::string>& env) {
  std::vector<double> samples;
  const std::string request = initialize_request(0);
  for (int run = -2; run < options.starts; ++run) {  // two untimed runs warm the page cache
    auto t0 = Steady::now();
    StdioClient client(options.ct, project, env, scratch / "start-stdio.stderr");
    std::string reply = client.call(request);
    double elapsed = micros_since(t0);
    if (!reply.starts_with(reply_prefix(0))) throw std::runtime_error("initialize failed: " + reply.substr(0, 300));
    client.finish();
    if (run >= 0) samples.push_back(elapsed);
  }
  return summarize(std::move(samples));
}

/// A port nobody listens on right now (bound to 0 and released).
int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error("socket: " + errno_text(errno));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof address;
  // The sockets API takes its addresses as sockaddr*.
  auto* generic = reinterpret_cast<sockaddr*>(&address);
  if (::bind(fd, generic, sizeof address) != 0 || ::getsockname(fd, generic, &length) != 0) {
    int error = errno;
    ::close(fd);
    throw std::runtime_error("bind: " + errno_text(error));
  }
  ::close(fd);
  return ntohs(address.sin_port);
}

/// One HTTP/1.1 POST on a fresh connection `fd` (Connection: close); the whole response.
std::string raw_post(int fd, int port, const std::string& body) {
  std::string request = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
                        "\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\n"
                        "Connection: close\r\nContent-Length: " +
                        std::to_string(body.size()) + "\r\n\r\n" + body;
  std::size_t sent = 0;
  while (sent < request.size()) {
    ssize_t n = ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::runtime_error("send: " + errno_text(errno));
    sent += static_cast<std::size_t>(n);
  }
  std::string response;
  char chunk[16384];
  while (true) {
    pollfd ready{fd, POLLIN, 0};
    if (::poll(&ready, 1, kTimeoutMs) <= 0) throw std::runtime_error("no HTTP response within the timeout");
    ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw std::runtime_error("recv: " + errno_text(errno));
    if (n == 0) return response;  // the server closes after the response
    response.append(chunk, static_cast<std::size_t>(n));
  }
}

struct HttpStarts {
  Stats listening;  // spawn until a connect succeeds
  Stats replied;    // spawn until the initialize response is read
};

/// An HTTP server from spawn until its initialize response is read: connect() is retried every
/// 100 µs until the port accepts, then one POST. `argv_prefix` is the server's command without
/// --project/--port (`ct serve`, or `ct-serve` run directly).
HttpStarts time_http_starts(const Options& options, const std::vector<std::string>& argv_prefix,
                            const fs::path& project, const fs::path& scratch, const std::vector<std::string>& env) {
  std::vector<double> listening;
  std::vector<double> replied;
  const std::string request = initialize_request(0);
  const fs::path stderr_file = scratch / "start-http.stderr";
  for (int run = -2; run < options.starts; ++run) {  // two untimed runs warm the page cache
    int port = free_port();
    std::vector<std::string> argv = argv_prefix;
    argv.insert(argv.end(), {"--project", project.string(), "--port", std::to_string(port)});
    auto t0 = Steady::now();
    testing::ChildProcess child = spawn(argv, env, false, false, stderr_file);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons(static_cast<std::uint16_t>(port));
    int fd = -1;
    while (true) {
      fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (fd < 0) throw std::runtime_error("socket: " + errno_text(errno));
      // The sockets API takes its addresses as sockaddr*.
      if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0) break;
      int error = errno;
      ::close(fd);
      if (error != ECONNREFUSED && error != EINTR) throw std::runtime_error("connect: " + errno_text(error));
      if (auto status = child.wait_for(std::chrono::milliseconds(0)))
        throw std::runtime_error(argv[0] + " ended with " + testing::describe(*status) + " before listening; stderr: " +
                                 read_text(stderr_file).substr(0, 300));
      if (micros_since(t0) > kTimeoutMs * 1000.0) {
        child.stop(SIGKILL, std::chrono::milliseconds(kTimeoutMs));
        throw std::runtime_error(argv[0] + " did not listen on port " + std::to_string(port));
      }
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    double listen_us = micros_since(t0);
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    std::string response;
    try {
      response = raw_post(fd, port, request);
    } catch (...) {
      ::close(fd);
      child.stop(SIGKILL, std::chrono::milliseconds(kTimeoutMs));
      throw;
    }
    double reply_us = micros_since(t0);
    ::close(fd);
    auto body = response.find("\r\n\r\n");
    if (!response.starts_with("HTTP/1.1 200") || body == std::string::npos ||
        !std::string_view(response).substr(body + 4).starts_with(reply_prefix(0)))
      throw std::runtime_error("initialize failed: " + response.substr(0, 300));
    testing::ExitStatus status = child.stop(SIGTERM, std::chrono::milliseconds(kTimeoutMs));
    if (status.signaled || status.code != 0)
      throw std::runtime_error(argv[0] + " ended with " + testing::describe(status) + " after SIGTERM");
    if (run >= 0) {
      listening.push_back(listen_us);
      replied.push_back(reply_us);
    }
  }
  return {summarize(std::move(listening)), summarize(std::move(replied))};
}

// ---------------------------------------------------------------------------------------------
// Report.



std::string format_mb(long kb) { return format_fixed(static_cast<double>(kb) / 1024.0, 1) + " MB"; }





struct Report {
  std::string command;
  std::string load_before;
  FillReport fill;
  std::vector<Row> rows;
  std::vector<StartRow> starts;
  std::vector<MemoryRow> memory;
  double total_seconds = 0;
};

void print_report(const Options& options, const Report& report) {
  std::ostream& out = std::cout;
#ifdef NDEBUG
  const char* asserts = "off";
#else
  const char* asserts = "on";
#endif
  out << "## ct_bench_mcp\n\n";
  out << "- Command: `" << report.command << "`\n";
  out << "- Machine: " << cpu_model() << ", " << sysconf(_SC_NPROCESSORS_ONLN) << " CPUs online, " << kernel()
      << "\n";
  out << "- Build: " << CT_BENCH_BUILD_TYPE << " (assertions " << asserts << "), g++ " << __VERSION__
      << ", cpp-httplib " << CPPHTTPLIB_VERSION << " (client)\n";
  out << "- Load average (1 min): " << report.load_before << " before, " << load_average() << " after\n";
  out << "- Store: " << options.tasks << " tasks + " << report.fill.completed
      << " completed (seed " << options.seed << ", as ct_bench_store), built through one `ct mcp` (pipelined) in "
      << format_fixed(report.fill.seconds, 1) << " s, " << format_fixed(report.fill.db_megabytes, 1)
      << " MB; every run starts on a fresh copy\n";
  out << "- Calls: up to " << options.iterations << " timed calls per operation and run, split across the clients "
      << "(a client stops after " << options.budget_s << " s with at least " << kMinCalls
      << " calls), after 3 untimed calls of each; HTTP clients " << (options.client_nodelay ? "set" : "do not set")
      << " TCP_NODELAY; total run " << format_fixed(report.total_seconds, 1) << " s\n\n";

  out << "### Round trips (tools/call)\n\n";
  out << "| op | transport | clients | n | median | p95 | min | calls/s | server CPU/call | reply | target | ok? |\n";
  out << "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|:---:|\n";
  for (const auto& row : report.rows) {
    const OpResult& r = row.result;
    std::string target = row.target_us ? "< " + format_duration(*row.target_us) : "—";
    std::string ok = row.target_us ? (r.stats.median < *row.target_us ? "yes" : "**no**") : "—";
    out << "| " << row.op << " | " << row.transport << " | " << row.clients << " | " << r.stats.n << " | "
        << format_duration(r.stats.median) << " | " << format_duration(r.stats.p95) << " | "
        << format_duration(r.stats.min) << " | " << format_fixed(r.calls_per_second, 0) << " | "
        << format_duration(r.server_cpu_us) << " | " << format_fixed(r.mean_reply_bytes, 0) << " B | " << target
        << " | " << ok << " |\n";
  }
  out << "\n### Against the pipe floor (stdio, 1 client)\n\n";
  out << "Each request also went through `cat` right after `ct mcp` replied (same pipes, same client code), "
         "so the ratio compares moments of the same load.\n\n";
  out << "| op | `ct mcp` median | `cat` median | ratio | target | ok? |\n|---|---:|---:|---:|---:|:---:|\n";
  for (const auto& row : report.rows) {
    if (!row.result.floor || row.result.floor->median <= 0) continue;
    double ratio = row.result.stats.median / row.result.floor->median;
    std::optional<double> target;
    if (row.op == "show") target = kShowFloorRatioTarget;
    if (row.op == "add") target = kAddFloorRatioTarget;
    out << "| " << row.op << " | " << format_duration(row.result.stats.median) << " | "
        << format_duration(row.result.floor->median) << " | " << format_fixed(ratio, 2) << "× | "
        << (target ? "≤ " + format_fixed(*target, 1) + "×" : std::string("—")) << " | "
        << (target ? (ratio <= *target ? "yes" : "**no**") : std::string("—")) << " |\n";
  }
  out << "\n### Start to initialize\n\n";
  out << "| server | runs | median | p95 | min | listening (median) | target | ok? |\n";
  out << "|---|---:|---:|---:|---:|---:|---:|:---:|\n";
  for (const auto& row : report.starts) {
    out << "| " << row.server << " | " << row.stats.n << " | " << format_duration(row.stats.median) << " | "
        << format_duration(row.stats.p95) << " | " << format_duration(row.stats.min) << " | "
        << (row.listening ? format_duration(row.listening->median) : std::string("—")) << " | ";
    if (row.has_target)
      out << "< " << format_duration(kStartTargetUs) << " | " << (row.stats.median < kStartTargetUs ? "yes" : "**no**");
    else
      out << "— | —";
    out << " |\n";
  }
  out << "\n### Resident memory (/proc/PID/status)\n\n";
  out << "| server | when | VmRSS | anon | file | shmem | VmHWM | threads | target | ok? |\n";
  out << "|---|---|---:|---:|---:|---:|---:|---:|---:|:---:|\n";
  for (const auto& row : report.memory) {
    out << "| " << row.server << " | " << row.moment << " | " << format_mb(row.memory.rss_kb) << " | "
        << format_mb(row.memory.anon_kb) << " | " << format_mb(row.memory.file_kb) << " | "
        << format_mb(row.memory.shmem_kb) << " | " << format_mb(row.memory.hwm_kb) << " | " << row.memory.threads
        << " | "
        << (row.has_target ? "< " + format_mb(static_cast<long>(kIdleRssTargetKb)) : std::string("—")) << " | "
        << (row.has_target ? (static_cast<double>(row.memory.rss_kb) < kIdleRssTargetKb ? "yes" : "**no**")
                           : std::string("—"))
        << " |\n";
  }
  out << "\nA round trip is from writing the request to reading the whole reply (stdio: one line on the "
         "pipes; HTTP: one POST on a kept-alive connection). `ok?` compares the median with the issue's "
         "target (single client). `calls/s` is all clients' calls over the wall time of that operation; "
         "`server CPU/call` is the server processes' CPU time (schedstat) over the same interval divided by "
         "the calls; `reply` is the mean reply size. Start to initialize runs from spawning the process "
         "until the initialize reply is read (HTTP: connect() retried every 100 µs until the port accepts, "
         "`listening`, then one POST on that connection). Memory: `anon` + `file` + `shmem` = VmRSS "
         "(RssAnon, RssFile, RssShmem); file pages are shared, clean and reclaimable, and the database's "
         "pages count once per mapping.\n";
}

int run(int argc, char** argv) {
  Options options = parse_options(argc, argv);
  ::signal(SIGPIPE, SIG_IGN);
  if (!fs::exists(options.ct)) throw std::runtime_error(options.ct.string() + " does not exist");
  Report report;
  report.command = command_line(argc, argv);
  report.load_before = load_average();
  auto started = Steady::now();

  if (options.keep && fs::exists(fs::absolute(*options.keep) / "store"))
    throw std::runtime_error((fs::absolute(*options.keep) / "store").string() +
                             " already exists; remove it or choose another --keep directory");
  const WorkDir work(options.keep, "ct-bench-mcp");
  const fs::path& root = work.path();

  const auto env = server_environment();
  const fs::path pristine = root / "store";
  const fs::path scratch = root / "scratch";
  fs::create_directories(scratch);

  progress("building a store of " + std::to_string(options.tasks) + " tasks in " + pristine.string());
  Workload workload(options.seed);
  report.fill = fill_store(options, workload, pristine, scratch, env);
  progress("  filled in " + format_fixed(report.fill.seconds, 1) + " s");

  const int many = options.clients;
  {
    auto project = copy_store(pristine, root, "run");
    run_stdio(options, workload, project, scratch, env, 1, report.rows, report.memory);
  }
  if (many > 1) {
    auto project = copy_store(pristine, root, "run");
    run_stdio(options, workload, project, scratch, env, many, report.rows, report.memory);
  }
  {
    auto project = copy_store(pristine, root, "run");
    run_http(options, workload, project, scratch, env, 1, report.rows, report.memory);
  }
  if (many > 1) {
    auto project = copy_store(pristine, root, "run");
    run_http(options, workload, project, scratch, env, many, report.rows, report.memory);
  }
  {
    auto project = copy_store(pristine, root, "run");
    progress("start to initialize: `ct mcp` x " + std::to_string(options.starts));
    report.starts.push_back({"`ct mcp` (stdio)", time_stdio_starts(options, project, scratch, env), std::nullopt, true});
    progress("start to initialize: `ct serve` x " + std::to_string(options.starts));
    HttpStarts serve = time_http_starts(options, {options.ct.string(), "serve"}, project, scratch, env);
    report.starts.push_back({"`ct serve` (HTTP)", serve.replied, serve.listening, true});
    progress("start to initialize: `ct-serve` (no `ct` hop) x " + std::to_string(options.starts));
    HttpStarts direct =
        time_http_starts(options, {(options.ct.parent_path() / "ct-serve").string(), "serve"}, project, scratch, env);
    report.starts.push_back({"`ct-serve` run directly (HTTP, for comparison)", direct.replied, direct.listening, false});
  }
  std::error_code ec;
  fs::remove_all(root / "run", ec);
  fs::remove_all(scratch, ec);
  report.total_seconds = micros_since(started) / 1e6;
  print_report(options, report);
  return 0;
}

}  // namespace
}  // namespace ct::bench

int main(int argc, char** argv) {
  try {
    return ct::bench::run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "ct_bench_mcp: " << e.what() << "\n";
    return 1;
  }
}
