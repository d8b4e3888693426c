// ct_bench_http_load — `ct serve` under many clients and hostile sockets. It builds (or reuses) a
// store of --tasks tasks through the router with the store benchmark's seeded workload, starts
// `ct serve` on it, and runs, each --runs times for --duration seconds:
//   - load: --clients keep-alive clients, each an MCP session (initialize, then
//     notifications/initialized, then tools/call tasks.show of random tasks in a closed loop, no
//     think time): throughput, latency percentiles, and fairness (calls per client; clients
//     never answered);
//   - hostile: the same load with --idle silent sockets and --slow slow-header sockets open (a
//     header line every --slow-interval seconds; a socket the server closes is opened again),
//     plus a normal client that, every 250 ms, connects, initializes and calls tasks.show;
//   - sockets: only the idle and slow sockets and the normal client.
// All load clients and hostile sockets run in one thread on non-blocking sockets and epoll (one
// thread keeps 700 sockets busy at a fraction of one core, and leaves the other core to the
// server); the normal client is a blocking client on a thread of its own. Markdown on stdout;
// progress on stderr.
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "bench/report.h"
#include "bench/router_calls.h"
#include "bench/workload.h"
#include "core/clock.h"
#include "core/json.h"
#include "core/text.h"
#include "gateway/product.h"
#include "domains/router.h"

extern char** environ;

namespace ct::bench {
namespace {

constexpr std::string_view kUsage = R"(usage: ct_bench_http_load --ct PATH [options]

  --ct PATH            the ct binary whose `ct serve` is measured (it runs the ct-serve next to it)
  --label TEXT         the server's name in the report (default: the path)
  --server-args "..."  extra `ct serve` arguments, split on spaces (e.g. "--threads 4")
  --store DIR          serve the store in DIR: built there when DIR/.cleo is missing, else reused
                       (tasks.show only reads, so runs and servers can share it); default: a
                       temporary store, removed at exit
  --tasks N            tasks in a new store (default 10000)
  --clients N          concurrent keep-alive clients (default 500)
  --duration S         seconds of load per run (default 10)
  --idle N             silent sockets in the hostile scenarios (default 200)
  --slow N             slow-header sockets in the hostile scenarios (default 16)
  --slow-interval S    seconds between two header lines of a slow socket (default 5)
  --probe-timeout S    the normal client gives up on a reply after S seconds (default 30)
  --runs R             runs per scenario; the report shows each and their median (default 3)
  --scenarios LIST     any of load,hostile,sockets (default: all three)
  --seed N             workload seed (default 20260101, as ct_bench_store)
  --add-share P        a share P (0–1) of the load clients' calls are tasks.add of the workload's
                       next planned task instead of tasks.show, so the store grows during the run;
                       the report then also shows each run in slices of --slice seconds (store size,
                       calls/s, p50, the server's anonymous and file-backed resident memory). Use a
                       --store of its own: the adds stay in it (default 0)
  --slice S            seconds per slice with --add-share (default 5)
)";

constexpr std::string_view kProtocolVersion = "2025-11-25";
constexpr std::string_view kFixedTime = "2026-01-01T00:00:00Z";

struct Options {
  fs::path ct;
  std::string label;
  std::vector<std::string> server_args;
  std::optional<fs::path> store;
  std::int64_t tasks = 10000;
  int clients = 500;
  double duration_s = 10;
  int idle = 200;
  int slow = 16;
  double slow_interval_s = 5;
  double probe_timeout_s = 30;
  int runs = 3;
  std::vector<std::string> scenarios{"load", "hostile", "sockets"};
  std::uint32_t seed = 20260101;
  double add_share = 0;
  double slice_s = 5;
};

std::vector<std::string> split(std::string_view text, char separator) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(separator, start);
    if (end == std::string_view::npos) end = text.size();
    if (end > start) out.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

Options parse_options(int argc, char** argv) {
  Options options;
  std::vector<std::string_view> args(argv + 1, argv + argc);
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string_view flag = args[i];
    if (flag == "--help" || flag == "-h") {
      std::cout << kUsage;
      std::exit(0);
    }
    if (i + 1 >= args.size()) throw std::invalid_argument(std::string(flag) + ": missing value (see --help)");
    std::string_view value = args[++i];
    if (flag == "--ct") options.ct = fs::absolute(fs::path(value));
    else if (flag == "--label") options.label = value;
    else if (flag == "--server-args") options.server_args = split(value, ' ');
    else if (flag == "--store") options.store = fs::absolute(fs::path(value));
    else if (flag == "--tasks") options.tasks = std::max<std::int64_t>(1, parse_number<std::int64_t>(flag, value));
    else if (flag == "--clients") options.clients = std::max(1, parse_number<int>(flag, value));
    else if (flag == "--duration") options.duration_s = std::max(0.5, parse_number<double>(flag, value));
    else if (flag == "--idle") options.idle = std::max(0, parse_number<int>(flag, value));
    else if (flag == "--slow") options.slow = std::max(0, parse_number<int>(flag, value));
    else if (flag == "--slow-interval") options.slow_interval_s = std::max(0.01, parse_number<double>(flag, value));
    else if (flag == "--probe-timeout") options.probe_timeout_s = std::max(0.1, parse_number<double>(flag, value));
    else if (flag == "--runs") options.runs = std::max(1, parse_number<int>(flag, value));
    else if (flag == "--scenarios") options.scenarios = split(value, ',');
    else if (flag == "--seed") options.seed = parse_number<std::uint32_t>(flag, value);
    else if (flag == "--add-share") options.add_share = std::clamp(parse_number<double>(flag, value), 0.0, 1.0);
    else if (flag == "--slice") options.slice_s = std::max(0.5, parse_number<double>(flag, value));
    else throw std::invalid_argument("unknown option '" + std::string(flag) + "' (see --help)");
  }
  if (options.ct.empty()) throw std::invalid_argument("--ct PATH is required (see --help)");
  for (const auto& scenario : options.scenarios)
    if (scenario != "load" && scenario != "hostile" && scenario != "sockets")
      throw std::invalid_argument("--scenarios: unknown scenario '" + scenario + "'");
  if (options.label.empty()) options.label = options.ct.string();
  return options;
}

void progress(const std::string& text) { std::cerr << text << std::endl; }

double seconds_between(Steady::time_point from, Steady::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

// ---------------------------------------------------------------------------------------------
// The store.

/// Builds the store in `dir` (tasks.add from the seeded workload, then its completions, through
/// one router) unless it is there; returns the task ids.
std::vector<std::string> prepare_store(const fs::path& dir, const Options& options) {
  fs::path ids_file = dir / "bench-ids.txt";
  if (fs::exists(dir / ".cleo") && fs::exists(ids_file)) {
    std::vector<std::string> ids;
    std::ifstream in(ids_file);
    for (std::string line; std::getline(in, line);)
      if (!line.empty()) ids.push_back(line);
    if (!ids.empty()) {
      progress("reusing the store in " + dir.string() + " (" + std::to_string(ids.size()) + " tasks)");
      return ids;
    }
  }
  fs::create_directories(dir);
  RouterOptions router_options;
  Router router(registry(), Workspace::open(dir), router_options, std::make_unique<FixedClock>(*parse_iso8601(std::string(kFixedTime))));
  call(router, mutate("system", "init", json::Value::object()));
  Workload workload(options.seed);
  std::vector<std::string> ids;
  auto started = Steady::now();
  fill_store(router, workload, options.tasks, [&](std::int64_t i, const std::string& id, double) {
    ids.push_back(id);
    if ((i + 1) % 2000 == 0) progress("  store: added " + std::to_string(i + 1));
  });
  std::ofstream out(ids_file);
  for (const auto& id : ids) out << id << '\n';
  progress("  store: built in " + format_fixed(seconds_between(started, Steady::now()), 1) + " s");
  return ids;
}

// ---------------------------------------------------------------------------------------------
// The server process.

std::vector<std::string> server_environment() {
  std::vector<std::string> out;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    std::string_view text(*entry);
    if (text.starts_with("CLEO_ROOT=") || text.starts_with("CLEO_READ_ONLY=") || text.starts_with("CLEO_FIXED_TIME="))
      continue;
    out.emplace_back(text);
  }
  out.push_back("CLEO_FIXED_TIME=" + std::string(kFixedTime));
  return out;
}

/// A /proc/PID/status field in kB (or a count), 0 when missing.
long status_field(pid_t pid, std::string_view name) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);)
    if (line.starts_with(name) && line.size() > name.size() && line[name.size()] == ':')
      return std::strtol(line.c_str() + name.size() + 1, nullptr, 10);
  return 0;
}

/// `ct serve --project DIR --port 0 [args]`, and the port it prints.
class ServerProcess {
 public:
  ServerProcess(const Options& options, const fs::path& project, const fs::path& stderr_file) {
    std::vector<std::string> argv = {options.ct.string(), "serve", "--project", project.string(), "--port", "0"};
    argv.insert(argv.end(), options.server_args.begin(), options.server_args.end());
    int out_pipe[2];
    if (::pipe2(out_pipe, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, out_pipe[1], STDOUT_FILENO);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, stderr_file.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    std::vector<char*> argv_ptrs;
    for (auto& word : argv) argv_ptrs.push_back(word.data());
    argv_ptrs.push_back(nullptr);
    std::vector<std::string> env = server_environment();
    std::vector<char*> env_ptrs;
    for (auto& entry : env) env_ptrs.push_back(entry.data());
    env_ptrs.push_back(nullptr);
    int error = posix_spawn(&pid_, argv[0].c_str(), &actions, nullptr, argv_ptrs.data(), env_ptrs.data());
    posix_spawn_file_actions_destroy(&actions);
    ::close(out_pipe[1]);
    out_ = out_pipe[0];
    if (error != 0) throw std::runtime_error("cannot start " + argv[0] + ": " + std::strerror(error));
    constexpr std::string_view kPrefix = "CLEO MCP server: http://";
    std::string text;
    auto deadline = Steady::now() + std::chrono::seconds(30);
    while (true) {
      if (auto at = text.find(kPrefix); at != std::string::npos) {
        auto end = text.find('\n', at);
        if (end != std::string::npos) {
          std::string url = text.substr(at + kPrefix.size(), end - at - kPrefix.size());
          auto colon = url.rfind(':');
          port_ = std::atoi(url.c_str() + colon + 1);
          return;
        }
      }
      pollfd p{out_, POLLIN, 0};
      if (Steady::now() > deadline || ::poll(&p, 1, 1000) < 0) throw std::runtime_error("`ct serve` printed no URL");
      char chunk[4096];
      ssize_t n = ::read(out_, chunk, sizeof chunk);
      if (n == 0) throw std::runtime_error("`ct serve` ended before printing its URL: " + text);
      if (n > 0) text.append(chunk, static_cast<std::size_t>(n));
    }
  }
  ~ServerProcess() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      auto deadline = Steady::now() + std::chrono::seconds(20);
      int status = 0;
      while (::waitpid(pid_, &status, WNOHANG) == 0) {
        if (Steady::now() > deadline) {
          ::kill(pid_, SIGKILL);
          ::waitpid(pid_, &status, 0);
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    }
    if (out_ >= 0) ::close(out_);
  }
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  int port() const { return port_; }
  pid_t pid() const { return pid_; }

  /// SIGTERM and the seconds until the process has exited (the clients' sockets may still be open).
  double stop() {
    auto started = Steady::now();
    ::kill(pid_, SIGTERM);
    int status = 0;
    auto deadline = started + std::chrono::seconds(20);
    while (::waitpid(pid_, &status, WNOHANG) == 0) {
      if (Steady::now() > deadline) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
        pid_ = -1;
        return -1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    pid_ = -1;
    return seconds_between(started, Steady::now());
  }

 private:
  pid_t pid_ = -1;
  int out_ = -1;
  int port_ = 0;
};

// ---------------------------------------------------------------------------------------------
// HTTP on raw sockets.

std::string http_post(int port, std::string_view body, const std::string& session) {
  std::string request = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
                        "\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\n";
  if (!session.empty())
    request += "Mcp-Session-Id: " + session + "\r\nMCP-Protocol-Version: " + std::string(kProtocolVersion) + "\r\n";
  request += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n";
  request += body;
  return request;
}

std::string initialize_body(std::int64_t id) {
  return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) +
         R"(,"method":"initialize","params":{"protocolVersion":")" + std::string(kProtocolVersion) +
         R"(","capabilities":{},"clientInfo":{"name":"ct_bench_http_load","version":"1"}}})";
}

constexpr std::string_view kInitialized = R"({"jsonrpc":"2.0","method":"notifications/initialized"})";

std::string show_body(std::int64_t id, const std::string& task) {
  return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) +
         R"(,"method":"tools/call","params":{"name":"cleo_query","arguments":{"domain":"tasks","operation":"show","params":{"id":")" +
         task + R"("}}}})";
}

std::string add_body(std::int64_t id, const json::Value& params) {
  return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) +
         R"(,"method":"tools/call","params":{"name":"cleo_mutate","arguments":{"domain":"tasks","operation":"add","params":)" +
         params.dump() + "}}}";
}

/// The id in a tasks.add reply ("" when there is none).
std::string added_id(std::string_view body) {
  constexpr std::string_view kKey = R"("data":{"id":")";
  auto at = body.find(kKey);
  if (at == std::string_view::npos) return {};
  at += kKey.size();
  auto end = body.find('"', at);
  return end == std::string_view::npos ? std::string() : std::string(body.substr(at, end - at));
}

struct ParsedResponse {
  int status = 0;
  std::string session;
  std::string body;
};

/// Takes one whole response off the front of `buffer`, if it holds one.
std::optional<ParsedResponse> take_response(std::string& buffer) {
  auto head_end = buffer.find("\r\n\r\n");
  if (head_end == std::string::npos) return std::nullopt;
  std::string head = to_lower_ascii(std::string_view(buffer).substr(0, head_end + 2));
  std::size_t length = 0;
  if (auto at = head.find("\r\ncontent-length:"); at != std::string::npos)
    length = std::strtoul(head.c_str() + at + 17, nullptr, 10);
  if (buffer.size() < head_end + 4 + length) return std::nullopt;
  ParsedResponse response;
  if (head.size() > 12) response.status = std::atoi(head.c_str() + 9);
  if (auto at = head.find("\r\nmcp-session-id:"); at != std::string::npos) {
    std::size_t start = at + 17;
    std::size_t end = head.find("\r\n", start);
    response.session = std::string(trim(std::string_view(buffer).substr(start, end - start)));
  }
  response.body = buffer.substr(head_end + 4, length);
  buffer.erase(0, head_end + 4 + length);
  return response;
}

int connect_nonblocking(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  int on = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 && errno != EINPROGRESS) {
    int error = errno;
    ::close(fd);
    throw std::runtime_error(std::string("connect: ") + std::strerror(error));
  }
  return fd;
}

// ---------------------------------------------------------------------------------------------
// The load: clients and hostile sockets on one epoll loop.

enum class Role { Client, Idle, Slow };
enum class Stage { Initialize, Initialized, Show };

struct Socket {
  Role role = Role::Client;
  int fd = -1;
  std::size_t index = 0;  // client number (clients only)
  // Clients.
  Stage stage = Stage::Initialize;
  std::string session;
  std::string out;
  std::size_t out_sent = 0;
  std::string in;
  Steady::time_point sent_at;
  std::int64_t next_id = 1;
  std::optional<PlannedAdd> adding;  // the tasks.add in flight, if the last request was one
  // Slow sockets.
  Steady::time_point next_line;
  int lines = 0;
};

struct ClientStats {
  bool initialized = false;
  std::int64_t shows = 0;
  double initialize_ms = -1;
};

/// A stretch of a run with --add-share: how the server kept up as its store grew.
struct Slice {
  double end_s = 0;            // from the start of the run
  std::size_t tasks = 0;       // in the store at the end of the slice
  std::int64_t calls = 0;      // round trips completed in the slice (shows and adds)
  std::int64_t adds = 0;
  double p50_ms = 0;
  long anon_kb = 0, file_kb = 0;  // the server's RssAnon and RssFile at the end of the slice
};

struct LoadResult {
  std::vector<double> latencies_us;  // round trips completed inside the window (tasks.show, and tasks.add with --add-share)
  std::vector<ClientStats> clients;
  std::int64_t errors = 0;           // unexpected statuses or bodies
  std::int64_t reconnects = 0;       // a client's connection closed by the server
  std::int64_t hostile_reopened = 0; // idle or slow sockets the server closed (and we reopened)
  double window_s = 0;
  double client_cpu_s = 0;
  std::vector<Slice> slices;         // with --add-share
};

class LoadLoop {
 public:
  LoadLoop(int port, pid_t server, const Options& options, std::vector<std::string> ids, int clients, int idle, int slow)
      : port_(port), server_(server), options_(options), ids_(std::move(ids)), rng_(options.seed + 7),
        workload_(options.seed + 11) {
    epoll_ = ::epoll_create1(EPOLL_CLOEXEC);
    result_.clients.resize(static_cast<std::size_t>(clients));
    for (int i = 0; i < idle; ++i) open(Role::Idle, 0);
    for (int i = 0; i < slow; ++i) open(Role::Slow, 0);
    for (int i = 0; i < clients; ++i) open(Role::Client, static_cast<std::size_t>(i));
  }
  ~LoadLoop() {
    for (auto& socket : sockets_)
      if (socket && socket->fd >= 0) ::close(socket->fd);
    ::close(epoll_);
  }

  /// Runs until `end`; returns what the clients saw.
  LoadResult run(Steady::time_point start, Steady::time_point end) {
    start_ = start;
    end_ = end;
    rusage before{};
    ::getrusage(RUSAGE_THREAD, &before);
    std::vector<epoll_event> events(1024);
    const auto slice = std::chrono::duration_cast<Steady::duration>(std::chrono::duration<double>(options_.slice_s));
    auto slice_end = start + slice;
    while (Steady::now() < end) {
      int n = ::epoll_wait(epoll_, events.data(), static_cast<int>(events.size()), 20);
      for (int i = 0; i < n; ++i) handle(*static_cast<Socket*>(events[static_cast<std::size_t>(i)].data.ptr));
      tick();
      for (auto& dead : closed_) reopen(dead);
      closed_.clear();
      if (options_.add_share > 0 && Steady::now() >= slice_end) {
        close_slice(seconds_between(start, Steady::now()));
        slice_end += slice;
      }
    }
    if (options_.add_share > 0 && slice_calls_ > 0) close_slice(seconds_between(start, Steady::now()));
    rusage after{};
    ::getrusage(RUSAGE_THREAD, &after);
    auto seconds = [](const rusage& r) {
      return static_cast<double>(r.ru_utime.tv_sec + r.ru_stime.tv_sec) +
             static_cast<double>(r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1e6;
    };
    result_.client_cpu_s = seconds(after) - seconds(before);
    result_.window_s = seconds_between(start, end);
    return std::move(result_);
  }

 private:
  void open(Role role, std::size_t index) {
    auto socket = std::make_unique<Socket>();
    socket->role = role;
    socket->index = index;
    socket->fd = connect_nonblocking(port_);
    epoll_event event{};
    event.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
    event.data.ptr = socket.get();
    ::epoll_ctl(epoll_, EPOLL_CTL_ADD, socket->fd, &event);
    if (role == Role::Client) {
      socket->out = http_post(port_, initialize_body(0), "");
      socket->sent_at = Steady::now();
    } else if (role == Role::Slow) {
      socket->out = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port_) + "\r\n";
      socket->next_line = Steady::now() + interval();
    }
    sockets_.push_back(std::move(socket));
  }

  std::chrono::nanoseconds interval() const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(options_.slow_interval_s));
  }

  /// The server closed `socket`: open a new one in its place (a client starts a new session).
  void reopen(Socket* socket) {
    ::close(socket->fd);
    socket->fd = -1;
    if (Steady::now() >= end_) return;
    if (socket->role == Role::Client) ++result_.reconnects;
    else ++result_.hostile_reopened;
    Role role = socket->role;
    std::size_t index = socket->index;
    for (auto& owned : sockets_)
      if (owned.get() == socket) owned.reset();
    open(role, index);
  }

  void flush(Socket& socket) {
    while (socket.out_sent < socket.out.size()) {
      ssize_t n = ::send(socket.fd, socket.out.data() + socket.out_sent, socket.out.size() - socket.out_sent, MSG_NOSIGNAL);
      if (n > 0) {
        socket.out_sent += static_cast<std::size_t>(n);
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
      if (n < 0 && errno == ENOTCONN) return;  // still connecting
      mark_closed(socket);
      return;
    }
    socket.out.clear();
    socket.out_sent = 0;
  }

  void mark_closed(Socket& socket) {
    if (std::find(closed_.begin(), closed_.end(), &socket) == closed_.end()) closed_.push_back(&socket);
  }

  void send_request(Socket& socket, std::string body) {
    socket.out = http_post(port_, body, socket.session);
    socket.out_sent = 0;
    socket.sent_at = Steady::now();
    flush(socket);
  }

  void handle(Socket& socket) {
    if (socket.fd < 0) return;
    flush(socket);
    char chunk[65536];
    while (true) {
      ssize_t n = ::recv(socket.fd, chunk, sizeof chunk, 0);
      if (n > 0) {
        if (socket.role == Role::Client) socket.in.append(chunk, static_cast<std::size_t>(n));
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) break;
      if (n < 0 && errno == ENOTCONN) break;
      mark_closed(socket);  // end of stream or an error
      break;
    }
    if (socket.role != Role::Client) return;
    while (auto response = take_response(socket.in)) on_response(socket, *response);
  }

  void close_slice(double at_s) {
    Slice slice;
    slice.end_s = at_s;
    slice.tasks = ids_.size();
    slice.calls = slice_calls_;
    slice.adds = slice_adds_;
    std::sort(slice_latencies_.begin(), slice_latencies_.end());
    slice.p50_ms = nearest_rank(slice_latencies_, 0.5) / 1000.0;
    slice.anon_kb = status_field(server_, "RssAnon");
    slice.file_kb = status_field(server_, "RssFile");
    result_.slices.push_back(slice);
    slice_calls_ = slice_adds_ = 0;
    slice_latencies_.clear();
  }

  void on_response(Socket& socket, const ParsedResponse& response) {
    auto now = Steady::now();
    ClientStats& stats = result_.clients[socket.index];
    switch (socket.stage) {
      case Stage::Initialize:
        if (response.status != 200 || response.session.empty()) {
          ++result_.errors;
          mark_closed(socket);
          return;
        }
        socket.session = response.session;
        if (!stats.initialized) stats.initialize_ms = seconds_between(start_, now) * 1000.0;
        stats.initialized = true;
        socket.stage = Stage::Initialized;
        send_request(socket, std::string(kInitialized));
        return;
      case Stage::Initialized:
        if (response.status != 202) ++result_.errors;
        socket.stage = Stage::Show;
        break;
      case Stage::Show:
        if (response.status == 200 && response.body.find(R"("isError":false)") != std::string::npos) {
          if (socket.adding) {
            std::string id = added_id(response.body);
            if (id.empty()) ++result_.errors;
            else {
              workload_.created(id, *socket.adding);
              ids_.push_back(std::move(id));
              ++slice_adds_;
            }
          }
          if (now <= end_) {
            double micros = std::chrono::duration<double, std::micro>(now - socket.sent_at).count();
            result_.latencies_us.push_back(micros);
            ++stats.shows;
            ++slice_calls_;
            if (options_.add_share > 0) slice_latencies_.push_back(micros);
          }
        } else {
          ++result_.errors;
        }
        break;
    }
    socket.adding.reset();
    if (options_.add_share > 0 && (ids_.empty() || rng_.unit() < options_.add_share)) {
      socket.adding = workload_.plan_add();
      send_request(socket, add_body(socket.next_id++, socket.adding->params));
      return;
    }
    send_request(socket, show_body(socket.next_id++, ids_[rng_.below(ids_.size())]));
  }

  /// Slow sockets send their next header line when it is due.
  void tick() {
    auto now = Steady::now();
    for (auto& socket : sockets_) {
      if (!socket || socket->role != Role::Slow || socket->fd < 0 || now < socket->next_line) continue;
      socket->out += "X-Slow-" + std::to_string(socket->lines++) + ": 1\r\n";
      socket->next_line = now + interval();
      flush(*socket);
    }
  }

  int port_;
  pid_t server_;
  const Options& options_;
  std::vector<std::string> ids_;  // grows with the adds
  Rng rng_;
  Workload workload_;  // plans the adds (parents and dependencies among the tasks it created)
  std::int64_t slice_calls_ = 0, slice_adds_ = 0;
  std::vector<double> slice_latencies_;
  int epoll_ = -1;
  std::vector<std::unique_ptr<Socket>> sockets_;
  std::vector<Socket*> closed_;
  LoadResult result_;
  Steady::time_point start_;
  Steady::time_point end_;
};

// ---------------------------------------------------------------------------------------------
// The normal client: a fresh connection, initialize, notifications/initialized, tasks.show.

struct ProbeResult {
  std::vector<double> total_ms;  // connect → tasks.show reply, for probes that finished
  int attempts = 0;
  int timed_out = 0;             // no reply within --probe-timeout (or the server closed)
};

class Probe {
 public:
  Probe(int port, const std::string& task, double timeout_s) : port_(port), task_(task), timeout_s_(timeout_s) {}

  /// One probe; its milliseconds, or nullopt when a reply did not come in time.
  std::optional<double> once() {
    auto started = Steady::now();
    auto deadline = started + std::chrono::duration_cast<Steady::duration>(std::chrono::duration<double>(timeout_s_));
    int fd = connect_nonblocking(port_);
    std::string buffer;
    std::string session;
    bool ok = exchange(fd, http_post(port_, initialize_body(1), ""), buffer, deadline, 200, &session) &&
              exchange(fd, http_post(port_, kInitialized, session), buffer, deadline, 202, nullptr) &&
              exchange(fd, http_post(port_, show_body(2, task_), session), buffer, deadline, 200, nullptr);
    ::close(fd);
    if (!ok) return std::nullopt;
    return seconds_between(started, Steady::now()) * 1000.0;
  }

 private:
  bool exchange(int fd, const std::string& request, std::string& buffer, Steady::time_point deadline, int status,
                std::string* session) {
    std::size_t sent = 0;
    while (sent < request.size()) {
      ssize_t n = ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
      if (n > 0) {
        sent += static_cast<std::size_t>(n);
        continue;
      }
      if (n < 0 && errno != EAGAIN && errno != ENOTCONN && errno != EINTR) return false;
      if (!wait(fd, POLLOUT, deadline)) return false;
    }
    while (true) {
      if (auto response = take_response(buffer)) {
        if (session) *session = response->session;
        return response->status == status;
      }
      if (!wait(fd, POLLIN, deadline)) return false;
      char chunk[16384];
      ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
      if (n == 0) return false;
      if (n > 0) buffer.append(chunk, static_cast<std::size_t>(n));
      else if (errno != EAGAIN && errno != EINTR) return false;
    }
  }

  static bool wait(int fd, short events, Steady::time_point deadline) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Steady::now()).count();
    if (left <= 0) return false;
    pollfd p{fd, events, 0};
    return ::poll(&p, 1, static_cast<int>(left)) > 0;
  }

  int port_;
  std::string task_;
  double timeout_s_;
};

// ---------------------------------------------------------------------------------------------
// Runs and the report.

struct RunResult {
  std::string scenario;
  int clients = 0;
  double throughput = 0;  // tasks.show per second
  double p50_ms = 0, p95_ms = 0, p99_ms = 0, max_ms = 0;
  std::int64_t per_client_min = 0, per_client_median = 0, per_client_max = 0;
  int clients_answered = 0;  // clients with at least one tasks.show answered
  double init_max_ms = -1;   // the slowest first initialize reply, from the start of the run
  std::int64_t errors = 0, reconnects = 0, hostile_reopened = 0;
  double server_cpu_ms_per_call = 0;
  double client_cpu_share = 0;  // the load thread's CPU over the window
  int probes = 0, probes_timed_out = 0;
  double probe_median_ms = -1, probe_max_ms = -1;
  long server_hwm_kb = 0, server_threads = 0;
  double stop_s = 0;
  std::vector<Slice> slices;
};

RunResult run_scenario(const std::string& scenario, const Options& options, const fs::path& project,
                       const fs::path& scratch, const std::vector<std::string>& ids) {
  RunResult result;
  result.scenario = scenario;
  int clients = scenario == "sockets" ? 0 : options.clients;
  int idle = scenario == "load" ? 0 : options.idle;
  int slow = scenario == "load" ? 0 : options.slow;
  bool probe = scenario != "load";
  result.clients = clients;

  ServerProcess server(options, project, scratch / "server.stderr");
  // Wait until it answers one request before loading it (a fresh process pages in its code).
  {
    Probe warm(server.port(), ids.front(), 30);
    if (!warm.once()) throw std::runtime_error("`ct serve` does not answer");
  }
  std::int64_t cpu_before = cpu_ns_of(server.pid());
  auto start = Steady::now();
  auto end = start + std::chrono::duration_cast<Steady::duration>(std::chrono::duration<double>(options.duration_s));
  LoadLoop loop(server.port(), server.pid(), options, ids, clients, idle, slow);

  ProbeResult probes;
  std::thread prober;
  if (probe) {
    prober = std::thread([&] {
      Probe client(server.port(), ids[ids.size() / 2], options.probe_timeout_s);
      std::this_thread::sleep_for(std::chrono::milliseconds(500));  // the other sockets are open by now
      while (Steady::now() < end) {
        ++probes.attempts;
        if (auto ms = client.once()) probes.total_ms.push_back(*ms);
        else ++probes.timed_out;
        std::this_thread::sleep_for(std::chrono::milliseconds(250));
      }
    });
  }
  LoadResult load = loop.run(start, end);
  std::int64_t cpu_after = cpu_ns_of(server.pid());
  result.server_hwm_kb = status_field(server.pid(), "VmHWM");
  result.server_threads = status_field(server.pid(), "Threads");
  if (prober.joinable()) prober.join();

  std::sort(load.latencies_us.begin(), load.latencies_us.end());
  result.throughput = static_cast<double>(load.latencies_us.size()) / load.window_s;
  result.p50_ms = nearest_rank(load.latencies_us, 0.50) / 1000.0;
  result.p95_ms = nearest_rank(load.latencies_us, 0.95) / 1000.0;
  result.p99_ms = nearest_rank(load.latencies_us, 0.99) / 1000.0;
  result.max_ms = load.latencies_us.empty() ? 0 : load.latencies_us.back() / 1000.0;
  std::vector<std::int64_t> per_client;
  for (const auto& client : load.clients) {
    per_client.push_back(client.shows);
    if (client.shows > 0) ++result.clients_answered;
    result.init_max_ms = std::max(result.init_max_ms, client.initialized ? client.initialize_ms : options.duration_s * 1000);
  }
  std::sort(per_client.begin(), per_client.end());
  if (!per_client.empty()) {
    result.per_client_min = per_client.front();
    result.per_client_median = per_client[per_client.size() / 2];
    result.per_client_max = per_client.back();
  }
  result.errors = load.errors;
  result.slices = load.slices;
  result.reconnects = load.reconnects;
  result.hostile_reopened = load.hostile_reopened;
  if (!load.latencies_us.empty())
    result.server_cpu_ms_per_call =
        static_cast<double>(cpu_after - cpu_before) / 1e6 / static_cast<double>(load.latencies_us.size());
  result.client_cpu_share = load.client_cpu_s / load.window_s;
  result.probes = probes.attempts;
  result.probes_timed_out = probes.timed_out;
  if (!probes.total_ms.empty()) {
    result.probe_median_ms = percentile(probes.total_ms, 0.5);
    result.probe_max_ms = *std::max_element(probes.total_ms.begin(), probes.total_ms.end());
  }
  result.stop_s = server.stop();  // SIGTERM with every socket of the run still open
  return result;
}

std::string ms(double value) {
  if (value < 0) return "—";
  return value < 10 ? format_fixed(value, 2) : value < 100 ? format_fixed(value, 1) : format_fixed(value, 0);
}

template <typename Field>
double median_of(const std::vector<RunResult>& runs, Field field) {
  std::vector<double> values;
  for (const auto& run : runs) values.push_back(static_cast<double>(field(run)));
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

void print_row(std::ostream& out, const std::string& name, const RunResult& r, const Options& options) {
  out << "| " << name << " | " << r.clients << " | " << format_fixed(r.throughput, 0) << " | " << ms(r.p50_ms) << " | "
      << ms(r.p95_ms) << " | " << ms(r.p99_ms) << " | " << ms(r.max_ms) << " | " << r.clients_answered << "/" << r.clients
      << " | " << r.per_client_min << " / " << r.per_client_median << " / " << r.per_client_max << " | "
      << ms(r.init_max_ms) << " | " << ms(r.server_cpu_ms_per_call) << " | " << format_fixed(r.client_cpu_share * 100, 0)
      << "% | ";
  if (r.probes > 0)
    out << ms(r.probe_median_ms) << " / " << ms(r.probe_max_ms) << " (" << r.probes - r.probes_timed_out << "/" << r.probes
        << (r.probes_timed_out > 0 ? ", " + std::to_string(r.probes_timed_out) + " > " +
                                         format_fixed(options.probe_timeout_s, 0) + " s or cut"
                                   : std::string())
        << ")";
  else
    out << "—";
  out << " | " << r.errors << " / " << r.reconnects << " / " << r.hostile_reopened << " | "
      << format_fixed(static_cast<double>(r.server_hwm_kb) / 1024.0, 1) << " MB, " << r.server_threads << " | "
      << (r.stop_s < 0 ? "killed" : format_fixed(r.stop_s, 2) + " s") << " |\n";
}

int run(int argc, char** argv) {
  Options options = parse_options(argc, argv);
  std::signal(SIGPIPE, SIG_IGN);
  if (rlimit files{}; ::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &files);
  }
  WorkDir work(std::nullopt, "ct-bench-http-load");
  fs::path project = options.store ? *options.store : work.path() / "store";
  std::vector<std::string> ids = prepare_store(project, options);
  fs::path scratch = work.path() / "scratch";
  fs::create_directories(scratch);

  std::ostringstream report;
  report << "## ct_bench_http_load: " << options.label << "\n\n";
  report << "- Command: `" << command_line(argc, argv) << "`\n";
  report << "- Machine: " << cpu_model() << ", " << std::thread::hardware_concurrency() << " CPUs online, " << kernel()
         << "\n";
  report << "- Build of this program: " << CT_BENCH_BUILD_TYPE << " (the server's is that of `--ct`)\n";
  report << "- Load average (1 min) before: " << load_average() << "\n";
  report << "- Store: " << ids.size() << " tasks (seed " << options.seed << "); tasks.show of random tasks"
         << (options.add_share > 0 ? ", and tasks.add in " + format_fixed(options.add_share * 100, 0) + " % of the calls" : std::string())
         << "\n";
  report << "- Each run: " << format_fixed(options.duration_s, 0) << " s; hostile sockets: " << options.idle
         << " idle + " << options.slow << " slow-header (a line every " << format_fixed(options.slow_interval_s, 1)
         << " s)\n\n";
  report << "| scenario | clients | calls/s | p50 ms | p95 ms | p99 ms | max ms | clients answered | calls per "
            "client min / median / max | last first-initialize ms | server CPU ms/call | load thread CPU | normal "
            "client ms median / max (answered/tried) | errors / reconnects / hostile reopened | server VmHWM, threads "
            "| stop |\n";
  report << "|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---|---|---|---:|\n";
  std::map<std::string, std::vector<Slice>> growth;
  for (const auto& scenario : options.scenarios) {
    std::vector<RunResult> runs;
    for (int i = 0; i < options.runs; ++i) {
      progress(options.label + ": " + scenario + " run " + std::to_string(i + 1) + "/" + std::to_string(options.runs));
      runs.push_back(run_scenario(scenario, options, project, scratch, ids));
      print_row(std::cerr, scenario, runs.back(), options);
    }
    for (std::size_t i = 0; i < runs.size(); ++i)
      print_row(report, scenario + " (run " + std::to_string(i + 1) + ")", runs[i], options);
    for (std::size_t i = 0; i < runs.size(); ++i)
      if (!runs[i].slices.empty()) growth[scenario + " run " + std::to_string(i + 1)] = runs[i].slices;
    if (runs.size() > 1) {
      RunResult median = runs.front();
      median.throughput = median_of(runs, [](const RunResult& r) { return r.throughput; });
      median.p50_ms = median_of(runs, [](const RunResult& r) { return r.p50_ms; });
      median.p95_ms = median_of(runs, [](const RunResult& r) { return r.p95_ms; });
      median.p99_ms = median_of(runs, [](const RunResult& r) { return r.p99_ms; });
      median.max_ms = median_of(runs, [](const RunResult& r) { return r.max_ms; });
      median.clients_answered = static_cast<int>(median_of(runs, [](const RunResult& r) { return r.clients_answered; }));
      median.per_client_min = static_cast<std::int64_t>(median_of(runs, [](const RunResult& r) { return r.per_client_min; }));
      median.per_client_median =
          static_cast<std::int64_t>(median_of(runs, [](const RunResult& r) { return r.per_client_median; }));
      median.per_client_max = static_cast<std::int64_t>(median_of(runs, [](const RunResult& r) { return r.per_client_max; }));
      median.init_max_ms = median_of(runs, [](const RunResult& r) { return r.init_max_ms; });
      median.server_cpu_ms_per_call = median_of(runs, [](const RunResult& r) { return r.server_cpu_ms_per_call; });
      median.client_cpu_share = median_of(runs, [](const RunResult& r) { return r.client_cpu_share; });
      median.probe_median_ms = median_of(runs, [](const RunResult& r) { return r.probe_median_ms; });
      median.probe_max_ms = median_of(runs, [](const RunResult& r) { return r.probe_max_ms; });
      median.probes = static_cast<int>(median_of(runs, [](const RunResult& r) { return r.probes; }));
      median.probes_timed_out = static_cast<int>(median_of(runs, [](const RunResult& r) { return r.probes_timed_out; }));
      median.errors = static_cast<std::int64_t>(median_of(runs, [](const RunResult& r) { return r.errors; }));
      median.reconnects = static_cast<std::int64_t>(median_of(runs, [](const RunResult& r) { return r.reconnects; }));
      median.hostile_reopened =
          static_cast<std::int64_t>(median_of(runs, [](const RunResult& r) { return r.hostile_reopened; }));
      median.server_hwm_kb = static_cast<long>(median_of(runs, [](const RunResult& r) { return r.server_hwm_kb; }));
      median.server_threads = static_cast<long>(median_of(runs, [](const RunResult& r) { return r.server_threads; }));
      median.stop_s = median_of(runs, [](const RunResult& r) { return r.stop_s; });
      print_row(report, "**" + scenario + " (median of " + std::to_string(runs.size()) + ")**", median, options);
    }
  }
  report << "\ncalls/s and the percentiles are over the tasks.show round trips completed inside the window "
            "(request written → whole reply read); `clients answered` counts clients with at least one tasks.show "
            "answered; `last first-initialize` is when the slowest client got its initialize reply (the window "
            "length when one never did); the normal client opens a new connection every 250 ms and times "
            "connect → initialize → notifications/initialized → tasks.show; `stop` is SIGTERM → exit with every "
            "socket still open. Load average after: "
         << load_average() << ".\n";
  for (const auto& [name, slices] : growth) {
    report << "\n### " << name << ": " << format_fixed(options.add_share * 100, 0) << " % tasks.add, in slices of "
           << format_fixed(options.slice_s, 1) << " s\n\n";
    report << "| until | tasks in the store | calls/s | adds/s | p50 ms | server RssAnon | server RssFile |\n";
    report << "|---:|---:|---:|---:|---:|---:|---:|\n";
    double previous = 0;
    for (const auto& slice : slices) {
      double length = std::max(1e-9, slice.end_s - previous);
      previous = slice.end_s;
      report << "| " << format_fixed(slice.end_s, 1) << " s | " << slice.tasks << " | "
             << format_fixed(static_cast<double>(slice.calls) / length, 0) << " | "
             << format_fixed(static_cast<double>(slice.adds) / length, 0) << " | " << ms(slice.p50_ms) << " | "
             << format_fixed(static_cast<double>(slice.anon_kb) / 1024.0, 1) << " MB | "
             << format_fixed(static_cast<double>(slice.file_kb) / 1024.0, 1) << " MB |\n";
    }
  }
  std::cout << report.str();
  return 0;
}

}  // namespace
}  // namespace ct::bench

int main(int argc, char** argv) {
  try {
    return ct::bench::run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "ct_bench_http_load: " << e.what() << "\n";
    return 1;
  }
}
