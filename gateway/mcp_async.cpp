// What the server sends later or unasked: resource subscriptions (resources/subscribe of the
// handshake revisions, subscriptions/listen of 2026-07-28) and long calls as MCP tasks (the tasks
// utility of 2025-11-25, the io.modelcontextprotocol/tasks extension of 2026-07-28). Members of
// Protocol (mcp_protocol.h); the watcher and the runner are resource_watch.h and task_runner.h.
#include <algorithm>
#include <charconv>
#include <functional>
#include <memory>

#include "core/clock.h"
#include "core/log.h"
#include "gateway/mcp_primitives.h"
#include "gateway/mcp_progress.h"
#include "gateway/mcp_protocol.h"
#include "gateway/outbox.h"
#include "gateway/resource_watch.h"
#include "gateway/task_runner.h"

namespace ct::mcp {
namespace {

/// tasks/list's page size.
constexpr std::size_t kTaskPage = 50;

std::string error_reply(const std::string& id_json, const PrimitiveAnswer& refusal) {
  return rpc_error(id_json, *refusal.error, refusal.message, refusal.data);
}

/// A task's status as a revision names it: a call that failed is "failed" in 2025-11-25 (its
/// result says isError), "completed" in the extension (failed is for JSON-RPC errors only).
std::string_view wire_status(const TaskRunner::Snapshot& task, bool extension) {
  switch (task.status) {
    case TaskRunner::Status::Working: return "working";
    case TaskRunner::Status::Cancelled: return "cancelled";
    case TaskRunner::Status::Done: return task.call_failed && !extension ? "failed" : "completed";
  }
  return "working";
}

/// The Task object's members (no braces): 2025-11-25 names ttl and pollInterval, the extension
/// ttlMs and pollIntervalMs.
void write_task(json::Writer& w, const TaskRunner::Snapshot& task, bool extension) {
  w.key("taskId").value(task.id);
  w.key("status").value(wire_status(task, extension));
  if (!task.message.empty()) w.key("statusMessage").value(task.message);
  w.key("createdAt").value(format_iso8601(task.created_at));
  w.key("lastUpdatedAt").value(format_iso8601(task.updated_at));
  w.key(extension ? "ttlMs" : "ttl").value(task.ttl_ms);
  w.key(extension ? "pollIntervalMs" : "pollInterval").value(task.poll_interval_ms);
}

std::string task_object(const TaskRunner::Snapshot& task, bool extension) {
  std::string out;
  json::Writer w(out);
  w.begin_object();
  write_task(w, task, extension);
  w.end_object();
  return out;
}

/// tasks/result of a finished task (2025-11-25): exactly the call's result, with the task named
/// in its _meta; a cancelled task has no result.
std::string task_result_reply(const std::string& id_json, const TaskRunner::Snapshot& task) {
  if (task.status == TaskRunner::Status::Cancelled || task.result.empty()) {
    json::Value data = json::Value::object();
    data.set("taskId", task.id);
    data.set("status", std::string(wire_status(task, false)));
    return rpc_error(id_json, RpcError::InvalidParams,
                     "Invalid params: task " + task.id + " was cancelled, so it has no result", data);
  }
  std::string result = task.result;
  result.pop_back();
  result += R"(,"_meta":{")" + std::string(kRelatedTaskKey) + R"(":{"taskId":)";
  json::write_string(result, task.id);
  result += "}}}";
  return rpc_result(id_json, result);
}

std::string no_task(const std::string& id_json, const json::Value& params) {
  json::Value data = json::Value::object();
  if (params["taskId"].is_string()) data.set("taskId", params["taskId"].as_string().substr(0, 64));
  return rpc_error(id_json, RpcError::InvalidParams,
                   "Invalid params: no task " +
                       (params["taskId"].is_string() ? params["taskId"].as_string().substr(0, 64) : std::string("named")) +
                       " (taskId is required; a finished task is kept for its ttl)",
                   data);
}

/// tasks/cancel of a task that had begun writing its changes, once it has ended (2025-11-25): the
/// refusal any finished task gets, saying why it ran on and what it became.
/// tasks/list's result: the owner's tasks from `cursor` (a nextCursor: the offset as text), a page
/// of them; none when the cursor is not one.
std::optional<std::string> task_page(TaskRunner& tasks, const std::string& owner, const json::Value& cursor) {
  std::size_t offset = 0;
  if (!cursor.is_null()) {
    const std::string text = cursor.is_string() ? cursor.as_string() : std::string("?");
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), offset);
    if (ec != std::errc() || end != text.data() + text.size() || text.size() > 9) return std::nullopt;
  }
  bool more = false;
  std::string result = R"({"tasks":[)";
  bool first = true;
  for (const auto& task : tasks.list(owner, offset, kTaskPage, more)) {
    if (!first) result += ',';
    result += task_object(task, false);
    first = false;
  }
  result += ']';
  if (more) result += R"(,"nextCursor":")" + std::to_string(offset + kTaskPage) + "\"";
  result += '}';
  return result;
}

/// A reply sent on `channel` once the task has ended (`reply` writes it), the channel closed after
/// it when each request has a stream of its own (HTTP).
void answer_when_finished(TaskRunner& tasks, const std::string& owner, const std::string& id,
                          std::shared_ptr<Outbox> channel, bool closes,
                          std::function<std::string(const TaskRunner::Snapshot&)> reply) {
  tasks.when_finished(owner, id, [channel = std::move(channel), closes, reply = std::move(reply)](
                                     const TaskRunner::Snapshot& finished) {
    channel->send(reply(finished));
    if (closes) channel->close();
  });
}

std::string too_late_to_cancel(const std::string& id_json, const TaskRunner::Snapshot& task) {
  json::Value data = json::Value::object();
  data.set("taskId", task.id);
  data.set("status", std::string(wire_status(task, false)));
  return rpc_error(id_json, RpcError::InvalidParams,
                   "Invalid params: cannot cancel task " + task.id +
                       ": it had begun writing its changes, so it ran to its end and is " +
                       std::string(wire_status(task, false)) + " (tasks/result has its result)",
                   data);
}

}  // namespace

// ---- resource subscriptions ----------------------------------------------------------------

namespace {

/// The JSON-RPC error of a subscription the watch refused for a limit.
std::string limit_reply(const std::string& id_json, const std::string& uri, const ResourceWatch::Subscribed& refused,
                        Outcome& outcome) {
  json::Value data = json::Value::object();
  data.set("uri", uri);
  data.set("limit", static_cast<std::int64_t>(refused.limit));
  const bool client = refused.outcome == ResourceWatch::Outcome::ClientLimit;
  const RpcError code = client ? RpcError::InvalidParams : RpcError::InternalError;
  if (outcome.stateless) outcome.error_code = static_cast<int>(code);
  return rpc_error(id_json, code,
                   client ? "Invalid params: this client watches as many resources as one may (" +
                                std::to_string(refused.limit) + "); resources/unsubscribe from one first"
                          : "Internal error: the server watches resources for as many subscribers as it serves (" +
                                std::to_string(refused.limit) + "); try again later",
                   data);
}

}  // namespace

std::string Protocol::subscribe(const json::Value& params, const std::string& id_json, Connection& connection,
                                Router& router, Outcome& outcome) const {
  const json::Value& uri = params["uri"];
  if (!uri.is_string()) return rpc_error(id_json, RpcError::InvalidParams, "Invalid params: uri (string) is required");
  PrimitiveAnswer refusal;
  auto canonical = existing_subscribable_uri(registry_, uri.as_string(), router,
                                             connection.caller(), refusal);
  if (!canonical) return error_reply(id_json, refusal);
  if (!connection.outbox)
    return rpc_error(id_json, RpcError::InternalError, "Internal error: this transport cannot send notifications");
  ResourceWatch& watch = *services_.watch;
  ResourceWatch::Subscribed subscribed{ResourceWatch::Outcome::NoSubscriber, 0};
  // The connection's subscriber, made now if it has none — or none any more: the watch lets a
  // subscriber that could be told nothing go when the server is full.
  for (int attempt = 0; attempt < 2 && subscribed.outcome == ResourceWatch::Outcome::NoSubscriber; ++attempt) {
    if (!connection.subscriber) connection.subscriber = watch.add(connection.outbox, std::nullopt, connection.task_owner);
    if (!connection.subscriber) break;  // the server is stopping
    subscribed = watch.subscribe(*connection.subscriber, *canonical);
    if (subscribed.outcome == ResourceWatch::Outcome::NoSubscriber) connection.subscriber.reset();
  }
  if (subscribed.outcome == ResourceWatch::Outcome::NoSubscriber)
    return rpc_error(id_json, RpcError::InternalError, "Internal error: the server is stopping");
  if (!subscribed) return limit_reply(id_json, *canonical, subscribed, outcome);
  return rpc_result(id_json, "{}");
}

std::string Protocol::unsubscribe(const json::Value& params, const std::string& id_json, Connection& connection) const {
  const json::Value& uri = params["uri"];
  if (!uri.is_string()) return rpc_error(id_json, RpcError::InvalidParams, "Invalid params: uri (string) is required");
  PrimitiveAnswer refusal;
  // Unsubscribing from what is not watched changes nothing, and is no error.
  if (auto canonical = subscribable_uri(uri.as_string(), refusal); canonical && connection.subscriber)
    services_.watch->unsubscribe(*connection.subscriber, *canonical);
  return rpc_result(id_json, "{}");
}

std::optional<std::string> Protocol::listen(const json::Value& params, const std::string& id_json, bool tasks_extension,
                                            const Caller& caller, Connection& base, Router& router,
                                            Outcome& outcome) const {
  auto refuse = [&](RpcError code, std::string message, json::Value data = json::Value()) {
    outcome.error_code = static_cast<int>(code);
    return rpc_error(id_json, code, message, data);
  };
  const json::Value& wanted = params["notifications"];
  if (!wanted.is_object())
    return refuse(RpcError::InvalidParams,
                  "Invalid params: notifications {resourceSubscriptions: [uri…]} is required (the notifications to "
                  "receive)");
  // Task notifications need the tasks extension: a client without it cannot read them.
  if (wanted.contains("taskIds") && !tasks_extension)
    return refuse(RpcError::MissingRequiredClientCapability, "Missing required client capability",
                  required_tasks_extension());
  const json::Value& resources = wanted["resourceSubscriptions"];
  if (!resources.is_null() && !resources.is_array())
    return refuse(RpcError::InvalidParams, "Invalid params: notifications.resourceSubscriptions must be an array of URIs");
  // What is honoured: task and epic resources that exist, inboxes the caller may read (the rest of the filter is not: no list
  // here ever changes while the server runs, and task status notifications are not sent — poll
  // tasks/get). No more are read than one client may watch.
  ResourceWatch& watch = *services_.watch;
  std::vector<std::string> uris;
  if (resources.is_array())
    for (const auto& uri : resources.as_array()) {
      if (uris.size() >= watch.options().max_per_client) break;
      PrimitiveAnswer refusal;
      if (!uri.is_string()) continue;
      auto canonical = existing_subscribable_uri(registry_, uri.as_string(), router, caller, refusal);
      if (canonical && std::find(uris.begin(), uris.end(), *canonical) == uris.end()) uris.push_back(*canonical);
    }
  std::shared_ptr<Outbox> channel = late_channel(base, outcome);
  if (!channel) return refuse(RpcError::InternalError, "Internal error: this transport cannot send notifications");
  // Its client: the stdio process it was sent on (whose resources/subscribe counts too); over
  // HTTP, where the stateless revision has no session, the stream itself.
  auto subscriber = watch.add(channel, id_json, base.task_owner);
  if (!subscriber) {
    outcome.stream.reset();
    return refuse(RpcError::InternalError, "Internal error: the server is stopping");
  }
  std::vector<std::string> honoured;
  std::optional<ResourceWatch::Subscribed> limited;
  for (const auto& uri : uris) {
    auto subscribed = watch.subscribe(*subscriber, uri);
    if (subscribed) {
      honoured.push_back(uri);
    } else {
      limited = subscribed;
      break;
    }
  }
  if (honoured.empty()) watch.remove(*subscriber);
  if (honoured.empty() && limited) {
    // Nothing could be watched for a limit: the clear error, rather than a stream that carries nothing.
    outcome.stream.reset();
    return limit_reply(id_json, uris.front(), *limited, outcome);
  }
  // The acknowledgment is the first message of the subscription: it was added with nothing
  // watched, and what it watches changes nothing before the watcher's next read.
  std::string ack;
  json::Writer w(ack);
  w.begin_object().key("jsonrpc").value("2.0").key("method").value("notifications/subscriptions/acknowledged");
  w.key("params").begin_object();
  w.key("_meta").begin_object().key(kSubscriptionIdKey).raw(id_json).end_object();
  w.key("notifications").begin_object();
  if (!honoured.empty()) {
    w.key("resourceSubscriptions").begin_array();
    for (const auto& uri : honoured) w.value(uri);
    w.end_array();
  }
  w.end_object().end_object().end_object();
  channel->send(ack);
  if (honoured.empty()) {
    // A stream that would carry nothing holds nothing open: it ends at once, gracefully.
    channel->send(listen_end(id_json));
    if (base.streams_replies) channel->close();
    return std::nullopt;
  }
  if (!base.streams_replies) base.listens[id_json] = *subscriber;  // stdio: notifications/cancelled ends it
  return std::nullopt;  // no reply: the stream stays open until the client ends it
}

// ---- tasks -----------------------------------------------------------------------------------

std::string Protocol::call_as_task(const json::Value& params, const std::string& id_json, Connection& connection,
                                   Router& router, Outcome& outcome, const std::string& owner, bool extension) const {
  auto refuse = [&](RpcError code, std::string message) {
    if (outcome.stateless) outcome.error_code = static_cast<int>(code);
    return rpc_error(id_json, code, message);
  };
  // 2025-11-25: only cleo_mutate declares taskSupport; a task asked of cleo_query is refused.
  if (!extension && params["name"] == json::Value("cleo_query"))
    return refuse(RpcError::MethodNotFound,
                  "Method not found: cleo_query calls do not run as tasks (execution.taskSupport is only on cleo_mutate)");
  ToolCall call = read_tool_call(params, id_json, connection, outcome);
  if (call.rpc_error) return *call.rpc_error;
  std::optional<std::int64_t> ttl;
  if (const json::Value& asked = params["task"]["ttl"]; asked.is_int()) ttl = asked.as_int();
  std::string what = call.request ? "Running " + call.request->domain + "." + call.request->operation
                                  : std::string("Answering a malformed call");
  const bool stateless = outcome.stateless;
  auto created = [&](const TaskRunner::Snapshot& task) {
    std::string result;
    json::Writer w(result);
    w.begin_object();
    if (extension) {
      w.key("resultType").value("task");
      write_task(w, task, true);
    } else {
      w.key("task").raw(task_object(task, false));
    }
    w.end_object();
    if (extension) {
      result.pop_back();
      result += "," + server_meta_ + "}";
    }
    return rpc_result(id_json, result);
  };
  if (!long_call(params)) {
    // Only the long calls run as tasks. 2025-11-25 lets a client ask a task of any cleo_mutate call,
    // and a server that accepts one answers with its task: a call that is not long runs now, before
    // the reply, and its task is already finished — its result what tasks/result answers, a cancel
    // refused as for any finished task. Nothing is left running that a cancel could not stop.
    Envelope envelope = call.refused ? std::move(*call.refused) : router.dispatch(*call.request);
    if (envelope.rebind) connection.session = *envelope.rebind;
    return created(services_.tasks->finished(owner, std::move(what), ttl,
                                             tool_result(registry_, server_meta_, envelope, stateless), !envelope.success));
  }
  // The work holds copies, never `this`: the runner's thread may still be answering when the
  // Protocol is gone (stdin closed while a task ran). The registry lives as long as the process.
  // A progressToken stays good for the task's life: its notes go where the connection's late
  // messages go (stdio's output, an HTTP session's GET stream), besides the task's status.
  std::optional<std::string> token = progress_token(params);
  std::shared_ptr<Outbox> told = token ? connection.outbox : nullptr;
  TaskRunner::Work work = [registry = &registry_, meta = server_meta_, request = call.request,
                           refused = call.refused, stateless, token, told](Router& task_router) {
    std::optional<ProgressScope> watched;
    if (told) watched.emplace(progress_sender(*token, told));
    Envelope envelope = request ? task_router.dispatch(*request) : *refused;
    return std::pair{tool_result(*registry, meta, envelope, stateless), !envelope.success};
  };
  auto started = services_.tasks->start(owner, std::move(what), ttl, std::move(work));
  if (!started) return refuse(RpcError::InvalidRequest, "Invalid Request: " + started.error().message);
  return created(*started);
}

std::optional<std::string> Protocol::task_method(const std::string& method, const json::Value& params,
                                                 const std::string& id_json, Connection& connection, Outcome& outcome,
                                                 bool extension) const {
  auto refuse = [&](RpcError code, std::string message, json::Value data = json::Value()) {
    if (outcome.stateless) outcome.error_code = static_cast<int>(code);
    return rpc_error(id_json, code, message, data);
  };
  auto missing = [&] {
    if (outcome.stateless) outcome.error_code = static_cast<int>(RpcError::InvalidParams);
    return no_task(id_json, params);
  };
  // The extension's results all say they are complete results, and name the server.
  auto complete = [&](std::string result) {
    if (extension) {
      result.pop_back();
      result += std::string(result.size() > 1 ? "," : "") + R"("resultType":"complete",)" + server_meta_ + "}";
    }
    return rpc_result(id_json, result);
  };
  const std::string owner = extension ? std::string() : connection.task_owner;
  const std::string id = params["taskId"].string_or_empty();
  TaskRunner& tasks = *services_.tasks;

  if (method == "tasks/list") {
    if (extension) return std::nullopt;
    auto page = task_page(tasks, owner, params["cursor"]);
    if (!page) return refuse(RpcError::InvalidParams, "Invalid params: unknown cursor (pass the nextCursor of tasks/list)");
    return rpc_result(id_json, *page);
  }
  if (id.empty() || id.size() > 64) return missing();
  if (method == "tasks/get") {
    auto task = tasks.get(owner, id);
    if (!task) return missing();
    std::string result;
    json::Writer w(result);
    w.begin_object();
    write_task(w, *task, extension);
    // The extension inlines what tasks/result answers in 2025-11-25.
    if (extension && task->status == TaskRunner::Status::Done && !task->result.empty())
      w.key("result").raw(task->result);
    w.end_object();
    return complete(std::move(result));
  }
  if (method == "tasks/update") {
    // No CLEO call asks its client for input: there is never an outstanding input request, so
    // whatever is sent is ignored (as the extension says of keys not outstanding).
    if (!tasks.get(owner, id)) return missing();
    return complete("{}");
  }
  if (method == "tasks/cancel") {
    auto cancelled = tasks.cancel(owner, id);
    if (!cancelled) {
      if (cancelled.error().code == ErrorCode::NotFound) return missing();
      // Already finished: 2025-11-25 refuses (-32602); the extension acknowledges (cooperative).
      if (extension) return complete("{}");
      json::Value data = json::Value::object();
      data.set("taskId", id);
      return refuse(RpcError::InvalidParams, "Invalid params: " + cancelled.error().message, data);
    }
    // The extension acknowledges either way: tasks/get tells whether it was cancelled or ran on.
    if (extension) return complete("{}");
    if (cancelled->status == TaskRunner::Status::Working) {
      // Past its commit point (core/cancel.h) the call runs to its end: 2025-11-25 must not answer
      // it cancelled. The answer comes once it has ended (a write transaction is short), as for
      // any finished task: refused, naming what it became.
      std::shared_ptr<Outbox> channel = late_channel(connection, outcome);
      if (!channel) return refuse(RpcError::InternalError, "Internal error: this transport cannot answer later");
      answer_when_finished(tasks, owner, id, channel, connection.streams_replies,
                           [id_json](const TaskRunner::Snapshot& finished) { return too_late_to_cancel(id_json, finished); });
      return std::string();  // answered later
    }
    return rpc_result(id_json, task_object(*cancelled, false));
  }
  if (method == "tasks/result") {
    if (extension) return std::nullopt;
    auto task = tasks.get(owner, id);
    if (!task) return missing();
    if (task->status != TaskRunner::Status::Working) return task_result_reply(id_json, *task);
    // Still working: the reply comes when it finishes (HTTP: on this request's event stream).
    std::shared_ptr<Outbox> channel = late_channel(connection, outcome);
    if (!channel) return refuse(RpcError::InternalError, "Internal error: this transport cannot answer later");
    answer_when_finished(tasks, owner, id, channel, connection.streams_replies,
                         [id_json](const TaskRunner::Snapshot& finished) { return task_result_reply(id_json, finished); });
    return std::string();  // answered later
  }
  return std::nullopt;
}

}  // namespace ct::mcp
