// MCP over JSON-RPC 2.0, independent of the transport. Two eras on one endpoint:
//  - the handshake revisions (2025-11-25, 2025-06-18, 2025-03-26): initialize negotiates a
//    version and the connection (a stdio process, an HTTP session) keeps it, with ping;
//  - the stateless revision (2026-07-28): no handshake, every request carries its version and
//    the client's capabilities in `_meta` (request_meta.h); server/discover describes the server.
// Both serve tools/list with exactly two tools (tools.h) and tools/call routed to the router.
// Only this layer knows JSON-RPC; `to_json(Envelope)` is the one mapping of results to the wire.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "domains/registry.h"
#include "domains/router.h"
#include "gateway/jsonrpc.h"
#include "gateway/mcp_logging.h"
#include "gateway/request_meta.h"

namespace ct::mcp {

class EventStream;
class Outbox;
class ResourceWatch;
class TaskRunner;

/// Protocol revisions served with the initialize handshake, newest first. (The stateless ones
/// are stateless_versions() in request_meta.h.)
std::span<const std::string_view> handshake_versions();
bool is_handshake_version(std::string_view version);
inline constexpr std::string_view kLatestHandshakeVersion = "2025-11-25";

/// How long a client may keep a tools/list or server/discover result of the stateless revision
/// (`ttlMs`): both are fixed for the life of the server process (the registry, plug-ins included,
/// is read when it starts), so a client sees a restarted server's new list within 5 minutes.
inline constexpr int kCacheTtlMs = 300'000;

/// Protocol state of one MCP connection (a stdio process or an HTTP session) of the handshake
/// revisions. Requests of the stateless revision never read or change it.
struct Connection {
  std::string protocol_version;  // negotiated; empty before initialize
  bool initialized = false;      // notifications/initialized received
  std::string client_name;
  std::string client_version;
  /// The CLEO session this connection is bound to ("" = none): sent with each call, and changed
  /// by the replies that rebind it (routers keep no caller state).
  std::string session;

  // ---- what the transport sets ----
  /// Who is at the other end (domains/principal.h): an agent, one per connection; the label it
  /// goes by is client_name, fixed at initialize.
  Principal principal;
  /// Where it works (domains/principal.h): stdio's process's git work tree; "" over HTTP.
  Place place;
  /// Where messages go that the client did not just ask for (notifications, a late reply): stdio's
  /// standard output, an HTTP session's GET stream. Null: nowhere (no subscriptions, no late replies).
  std::shared_ptr<Outbox> outbox;
  /// HTTP: a late reply goes out on its own request's response, as an event stream (Outcome::stream).
  bool streams_replies = false;
  /// Whose MCP tasks this connection sees: "stdio", an HTTP session's id. Also the client its
  /// resource subscriptions count against (ResourceWatch::Options::max_per_client).
  std::string task_owner;

  // ---- protocol state ----
  bool client_tasks = false;  // initialize (2025-11-25) declared the tasks capability
  /// Its log (MCP's logging utility: mcp_logging.h): off until logging/setLevel, or, for a
  /// stateless request, its _meta's logLevel.
  std::shared_ptr<LogGate> log = std::make_shared<LogGate>();
  /// Its resources/subscribe subscriber (ResourceWatch::Id), once it subscribed.
  std::optional<std::uint64_t> subscriber;
  /// stdio, 2026-07-28: each open subscriptions/listen (the request id's JSON) and its subscriber,
  /// so that notifications/cancelled can end it.
  std::map<std::string, std::uint64_t> listens;

  /// The caller of each call it makes.
  Caller caller() const { return {.principal = principal, .place = place, .session = session, .agent = client_name}; }
};

enum class MessageKind { Request, Notification, Response, Batch, Invalid };

struct Outcome {
  std::optional<std::string> reply;  // compact JSON to send back; none for notifications/responses
  MessageKind kind = MessageKind::Invalid;
  bool initialize_succeeded = false; // the message was an initialize request that succeeded
  bool stateless = false;            // answered by the rules of the stateless revision
  int error_code = 0;                // stateless: the JSON-RPC error code of the reply, 0 for a result
  /// HTTP: the reply is this event stream rather than `reply` — a subscription, or a reply that
  /// comes when a task finishes (Connection::streams_replies).
  std::shared_ptr<EventStream> stream;
  /// Messages to send before `reply`, which they are about: the log of the call
  /// (notifications/message). stdio writes them as lines before it; HTTP answers with an event
  /// stream of them and then the reply.
  std::vector<std::string> notifications;
};

/// What a server process runs beside its requests: the watcher of resource subscriptions and the
/// MCP tasks. A Protocol without them declares neither, and answers resources/subscribe,
/// subscriptions/listen and tasks/* with -32601.
struct Services {
  ResourceWatch* watch = nullptr;
  TaskRunner* tasks = nullptr;
};

struct ServerInfo {
  std::string name = "cleo";
  std::string version;
  std::string instructions;  // the initialize (and server/discover) result's `instructions`
  /// When set: instructions tailored to a client by its clientInfo.name, or none (then
  /// `instructions` serve it).
  std::function<std::optional<std::string>(std::string_view client_name)> tailored_instructions;
  std::optional<std::string> tailored(std::string_view client_name) const {
    return tailored_instructions ? tailored_instructions(client_name) : std::nullopt;
  }
};

/// The data of a -32021 (MissingRequiredClientCapability) for what only a client that declared
/// the tasks extension may ask: {requiredCapabilities: {extensions: {io.modelcontextprotocol/tasks: {}}}}.
json::Value required_tasks_extension();

/// Whether a message is answered by the rules of the stateless revision: it claims the
/// per-request `_meta` (claims_request_meta), it is server/discover (which exists only there),
/// or its MCP-Protocol-Version header names a stateless revision. Anything else belongs to the
/// handshake revisions and is answered with its connection's state. `headers` is null on stdio.
bool is_stateless_message(const json::Value& message, const MirroredHeaders* headers);

class Protocol {
 public:
  Protocol(const Registry& registry, ServerInfo info, Services services = {});

  /// Handles one message as received (a stdio line or an HTTP body). `headers` (HTTP only) are
  /// checked against the body of a stateless request.
  Outcome handle(std::string_view message, Connection& connection, Router& router,
                 const MirroredHeaders* headers = nullptr) const;
  /// The same for a message the transport has already parsed; `text`, when given, is the message
  /// as received (ids that are not 64-bit integers are echoed from it exactly).
  Outcome handle_parsed(const json::Value& message, Connection& connection, Router& router,
                        std::string_view text = {}, const MirroredHeaders* headers = nullptr) const;

  /// The connection is gone (stdin closed, the HTTP session deleted): what it subscribed to is
  /// forgotten, and the CLEO session bound to it is suspended and its claim released at once, so
  /// that another agent can take its task without waiting for the lease
  /// (engines/rules/claim_lease.h). Both are audited as the connection's agent, with the reason.
  /// Returns the session it suspended ("" = none).
  std::string disconnect(Connection& connection, Router& router, std::string_view why) const;

  /// The cached tools/list result of the handshake revisions (compact JSON): stable and small.
  const std::string& tools_list_result() const { return tools_list_; }
  /// The cached tools/list result of the stateless revision: the same tools, with the fields it
  /// requires (resultType, ttlMs, cacheScope).
  const std::string& stateless_tools_list_result() const { return stateless_tools_list_; }
  /// The server/discover result for a client (by its clientInfo.name; "" when it gave none).
  std::string discover_result(std::string_view client_name) const;
  const ServerInfo& info() const { return info_; }
  const Services& services() const { return services_; }

 private:
  std::optional<std::string> handle_object(const json::Value& message, std::string_view text,
                                           Connection& connection, Router& router, Outcome& outcome,
                                           const MirroredHeaders* headers, bool in_batch) const;
  std::string handle_stateless(const std::string& method, const json::Value& params, const std::string& id_json,
                               const MirroredHeaders* headers, Connection& base, Router& router, Outcome& outcome) const;
  void capabilities(json::Writer& w, bool tasks_utility, bool tasks_extension) const;
  /// A notification (no reply): notifications/initialized, notifications/cancelled.
  void notified(const std::string& method, const json::Value& params, Connection& connection, bool stateless) const;
  /// Where a reply that comes later goes: an event stream of its own over HTTP (set as the
  /// outcome's stream), the connection's outbox on stdio. Null when there is none.
  std::shared_ptr<Outbox> late_channel(const Connection& connection, Outcome& outcome) const;

  // Resource subscriptions (gateway/mcp_async.cpp); `router` checks that a resource exists.
  std::string subscribe(const json::Value& params, const std::string& id_json, Connection& connection,
                        Router& router, Outcome& outcome) const;
  std::string unsubscribe(const json::Value& params, const std::string& id_json, Connection& connection) const;
  /// `caller`: who the request's transport and _meta say is asking (the inboxes it may watch);
  /// `base`: the transport's connection, where the stream's notifications go.
  std::optional<std::string> listen(const json::Value& params, const std::string& id_json, bool tasks_extension,
                                    const Caller& caller, Connection& base, Router& router, Outcome& outcome) const;
  // MCP tasks (gateway/mcp_async.cpp): the 2025-11-25 utility and the 2026-07-28 extension. A call
  // that is not long runs on `router` before the reply (its task already finished).
  std::string call_as_task(const json::Value& params, const std::string& id_json, Connection& connection,
                           Router& router, Outcome& outcome, const std::string& owner, bool extension) const;
  /// Whether the tools/call `params` name a long call (OperationSpec::runs_long, with its tool and
  /// params; under our name or the original CLEO's): only those run as MCP tasks.
  bool long_call(const json::Value& params) const;
  std::optional<std::string> task_method(const std::string& method, const json::Value& params,
                                         const std::string& id_json, Connection& connection, Outcome& outcome,
                                         bool extension) const;
  /// What a tools/call asks for: the routed request; or, for arguments of the wrong shape, the
  /// error envelope to answer as its result; or, for an unknown tool, a JSON-RPC error.
  struct ToolCall {
    std::optional<Request> request;
    std::optional<Envelope> refused;
    std::optional<std::string> rpc_error;
  };
  ToolCall read_tool_call(const json::Value& params, const std::string& id_json, const Connection& connection,
                          Outcome& outcome) const;
  /// The tools/call result of an envelope; `stateless` adds resultType and the server's _meta
  /// (`server_meta`). Static: a task's thread answers with it and may outlive the Protocol.
  static std::string tool_result(const Registry& registry, const std::string& server_meta, const Envelope& envelope,
                                 bool stateless);
  std::string call_tool(const json::Value& params, const std::string& id_json, Connection& connection,
                        Router& router, Outcome& outcome) const;
  /// prompts/*, resources/* and completion/complete (gateway/mcp_primitives.h).
  std::string answer(const std::string& method, const json::Value& params, const std::string& id_json,
                     Connection& connection, Router& router, Outcome& outcome) const;

  const Registry& registry_;
  ServerInfo info_;
  Services services_;
  std::string server_meta_;  // `"_meta":{"io.modelcontextprotocol/serverInfo":…}` for stateless results
  std::string tools_list_;
  std::string tools_list_with_tasks_;  // 2025-11-25 clients that declared tasks: cleo_mutate may be a task
  std::string stateless_tools_list_;
};

}  // namespace ct::mcp
