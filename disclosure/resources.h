// The MCP resources: what an agent (or a person, by mentioning it in a host: @cleo:cleo://task/T001)
// can put in its context without a tool call. Each resource is what one cleo_query operation
// answers, read through the router when it is asked for: a task is tasks.show, a session's
// briefing session.briefing, a help level system.help… so nothing is described twice. Tasks,
// epics and inboxes can be subscribed to (gateway/: notifications/resources/updated when they change).
//
//   cleo://task/{id}                 tasks.show (the whole record)                 JSON
//   cleo://epic/{id}                 tasks.show, tasks.tree, orchestrate.analyze   JSON
//   cleo://session/{id}/briefing     session.briefing                              JSON
//   cleo://inbox/{name}              session.inbox {of: an agent's label, a session}  Markdown
//   cleo://research/{id}             research.show                                 JSON
//   cleo://skill/{name}              skills.show: the protocol                     Markdown
//   cleo://help/{level}              system.help, level 0–3                        Markdown
//   cleo://instructions              the block `ct inject` writes into CLAUDE.md…  Markdown
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "disclosure/suggest.h"
#include "domains/registry.h"
#include "domains/router.h"

namespace ct::disclosure {

inline constexpr std::string_view kResourceScheme = "cleo://";

struct ResourceTemplate {
  std::string_view uri_template;  // RFC 6570 level 1: cleo://task/{id}
  std::string_view name;          // "task"
  std::string_view title;
  std::string_view description;
  std::string_view mime_type;
  std::string_view variable;      // the one variable ("" for a fixed URI)
  ValueKind kind = ValueKind::TaskId;  // what completion/complete suggests for it
  bool subscribable = false;      // resources/subscribe: notified when it changes
};

/// Every kind of resource, cleo://instructions (a fixed URI) included.
std::span<const ResourceTemplate> resource_templates();
const ResourceTemplate* find_template(std::string_view uri_template);

/// A URI this server serves: its kind and its variable's value (canonical: T001, not t001).
struct ResourceRef {
  const ResourceTemplate* kind = nullptr;
  std::string value;
  std::string uri() const;  // canonical
};
/// The resource `uri` names, or nullopt when it names none this server could serve (another
/// scheme, an unknown kind, a value of the wrong shape). Whether it exists is read later.
std::optional<ResourceRef> parse_resource_uri(std::string_view uri);

struct ResourceItem {
  std::string uri;
  std::string name;
  std::string title;
  std::string description;
  std::string mime_type;
};
struct ResourcePage {
  std::vector<ResourceItem> items;
  std::optional<std::string> next_cursor;  // opaque; none on the last page
};

/// resources/list: the instructions, the help levels, the skills, the open sessions' briefings,
/// then the epics and the open tasks (newest first) — `page_size` at a time from `cursor` (""
/// for the first page). E_INVALID_PARAMS for a cursor this server did not give out. Without a
/// project only the first four kinds are listed.
Result<ResourcePage> list_resources(Router& router, const Caller& caller, std::string_view cursor,
                                    std::size_t page_size = 100);

struct ResourceText {
  std::string uri;
  std::string mime_type;
  std::string text;
};

/// resources/read: the resource's text, read now. E_NOT_FOUND (details.uri) for a URI this server
/// does not serve or whose subject does not exist; other errors are the read's (no project…).
Result<ResourceText> read_resource(const Registry& registry, Router& router, const Caller& caller, std::string_view uri);

}  // namespace ct::disclosure
