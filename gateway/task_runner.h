// Long calls as MCP tasks (the tasks utility of 2025-11-25, and the io.modelcontextprotocol/tasks
// extension that succeeds it in 2026-07-28): a tools/call the client lets become a task is run on
// a thread of its own, with a router of its own, and answered at once with the task's handle; the
// client polls (tasks/get), waits (tasks/result) or cancels (tasks/cancel). A cancel stops only
// what can still be stopped (core/cancel.h): a call that has not reached its commit point stops
// there, changing nothing (its child process is stopped); one past it runs to its end, and its
// task reports what it did. A call that is not long, asked as a task, runs before the reply and
// is kept as a task already finished (finished()). Tasks live in this process only, each until
// its time to live ends after it finished; their ids are 128 random bits, and a task of a
// handshake connection is seen only by that connection (a stdio process, an HTTP session).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/cancel.h"
#include "core/clock.h"
#include "core/error.h"
#include "gateway/router_pool.h"

namespace ct::mcp {

class TaskRunner {
 public:
  struct Options {
    std::int64_t default_ttl_ms = 30 * 60 * 1000;       // kept this long after it started, unless asked
    std::int64_t max_ttl_ms = 24 * 60 * 60 * 1000;     // a longer ttl asked for is cut to this
    std::int64_t poll_interval_ms = 2000;               // the pace suggested to pollers
    std::size_t max_running_per_owner = 4;              // calls one connection may have running at once
    std::size_t max_running = 16;                       // in the process
    std::size_t max_kept = 1000;                        // tasks kept (finished ones expire first)
  };

  enum class Status { Working, Done, Cancelled };

  /// A task as the client sees it.
  struct Snapshot {
    std::string id;
    Status status = Status::Working;
    bool committing = false;    // working, past its commit point: it runs to its end, a cancel is refused
    bool call_failed = false;   // done, and the call's envelope says success:false
    std::string message;        // statusMessage
    TimeMs created_at = 0;
    TimeMs updated_at = 0;
    std::int64_t ttl_ms = 0;
    std::int64_t poll_interval_ms = 0;
    std::string result;         // done: the tools/call result (compact JSON)
  };

  /// The call a task runs, with a router of the runner's; returns the tools/call result (compact
  /// JSON) and whether the call failed.
  using Work = std::function<std::pair<std::string, bool>(Router& router)>;

  TaskRunner(RouterFactory make_router, Options options, std::unique_ptr<Clock> clock = nullptr);
  explicit TaskRunner(RouterFactory make_router) : TaskRunner(std::move(make_router), Options{}) {}
  /// Cancels what is running and waits for it.
  ~TaskRunner();
  TaskRunner(const TaskRunner&) = delete;
  TaskRunner& operator=(const TaskRunner&) = delete;

  /// Starts `work` as a task of `owner` ("" for the stateless revision: any caller with its id).
  /// E_INVALID_INPUT when the owner (or the process) has its most tasks running.
  Result<Snapshot> start(const std::string& owner, std::string what, std::optional<std::int64_t> ttl_ms, Work work);
  /// The task, or nullopt when `owner` has no such task (never had, or it expired).
  std::optional<Snapshot> get(const std::string& owner, const std::string& id);
  /// Calls `done` once the task is finished or cancelled (at once when it is); false when there is
  /// no such task. `done` runs on the task's thread or the caller's.
  bool when_finished(const std::string& owner, const std::string& id, std::function<void(const Snapshot&)> done);
  /// A call that ran before its reply, kept as a task of `owner` already finished with `result`
  /// (the tools/call result) — what a client that asked for a task of a call that is not long
  /// gets. Never refused: the oldest finished task makes room.
  Snapshot finished(const std::string& owner, std::string what, std::optional<std::int64_t> ttl_ms, std::string result,
                    bool call_failed);
  /// Cancels a working task that has not reached its commit point: it stops before it changes
  /// anything (its child process is stopped), and is answered cancelled. A task past that point
  /// is answered as it stands — working, `committing` — and runs to its end (when_finished tells
  /// its outcome). E_NOT_FOUND for no such task, E_VALIDATION for a task already finished or
  /// cancelled.
  Result<Snapshot> cancel(const std::string& owner, const std::string& id);
  /// `owner`'s tasks, newest first, from `offset`; `more` when others follow.
  std::vector<Snapshot> list(const std::string& owner, std::size_t offset, std::size_t limit, bool& more);

 private:
  struct Entry {
    std::string owner;
    Snapshot state;
    CancelFlag cancel;
    std::vector<std::function<void(const Snapshot&)>> waiters;
    std::thread thread;
    bool running = true;
  };

  void run(const std::string& id, Work work, CancelFlag cancel);
  /// A new entry of `owner`, working (the oldest finished task makes room when max_kept are kept);
  /// null when every kept task is running, unless `always` (then it is kept beyond max_kept).
  Entry* add_locked(const std::string& owner, std::string what, std::optional<std::int64_t> ttl_ms, TimeMs now,
                    bool always = false);
  /// The entry as its owner sees it now.
  static Snapshot snapshot_of(const Entry& entry);
  /// Forgets finished tasks past their time to live; their threads go to retired_.
  void expire_locked(TimeMs now);
  /// Joins the threads of forgotten tasks (they have returned, or are about to).
  void join_retired();
  Entry* find_locked(const std::string& owner, const std::string& id);

  RouterFactory make_router_;
  Options options_;
  std::unique_ptr<Clock> clock_;
  std::mutex mutex_;
  std::map<std::string, std::unique_ptr<Entry>> tasks_;
  std::vector<std::thread> retired_;
  RouterPool routers_;
  bool stopping_ = false;
};

std::string_view to_string(TaskRunner::Status status);

}  // namespace ct::mcp
