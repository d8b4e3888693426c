#include "disclosure/resources.h"

#include <algorithm>
#include <charconv>

#include "core/stored_text.h"
#include "core/text.h"
#include "domains/projection.h"
#include "disclosure/injection.h"

namespace ct::disclosure {
namespace {

constexpr std::string_view kJson = "application/json";
constexpr std::string_view kMarkdown = "text/markdown";

const std::vector<ResourceTemplate>& templates() {
  static const std::vector<ResourceTemplate> all = {
      {"cleo://task/{id}", "task", "A task", "One task, every field (tasks.show)", kJson, "id", ValueKind::TaskId, true},
      {"cleo://epic/{id}", "epic", "An epic",
       "An epic (or any parent task): the task, its tree, waves, critical path and bottlenecks (tasks.show, tasks.tree, "
       "orchestrate.analyze)",
       kJson, "id", ValueKind::EpicId, true},
      {"cleo://session/{id}/briefing", "briefing", "A session's briefing",
       "All an agent needs to carry on a session (session.briefing)", kJson, "id", ValueKind::SessionId, false},
      {"cleo://inbox/{name}", "inbox", "An inbox",
       "Messages to an agent (by its label) or a session, unread first (session.inbox); subscribe to be told of new ones",
       kMarkdown, "name", ValueKind::SessionId, true},
      {"cleo://research/{id}", "research", "A research entry", "One research entry (research.show)", kJson, "id",
       ValueKind::ResearchId, false},
      {"cleo://skill/{name}", "skill", "A skill", "A subagent protocol (skills.show)", kMarkdown, "name", ValueKind::Skill,
       false},
      {"cleo://help/{level}", "help", "CLEO help", "Help level 0 (entry), 1 (operations) or 3 (protocol) (system.help)",
       kMarkdown, "level", ValueKind::HelpLevel, false},
      {"cleo://instructions", "instructions", "CLEO instructions",
       "The block ct inject writes into CLAUDE.md, AGENTS.md and GEMINI.md", kMarkdown, "", ValueKind::HelpLevel, false},
  };
  return all;
}

const ResourceTemplate& template_named(std::string_view name) {
  for (const auto& t : templates())
    if (t.name == name) return t;
  return templates().front();
}

/// %XX escapes decoded; nullopt for a malformed escape or a decoded control character.
std::optional<std::string> percent_decoded(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out += text[i];
      continue;
    }
    if (i + 2 >= text.size()) return std::nullopt;
    unsigned value = 0;
    auto [end, ec] = std::from_chars(text.data() + i + 1, text.data() + i + 3, value, 16);
    if (ec != std::errc() || end != text.data() + i + 3) return std::nullopt;
    out += static_cast<char>(value);
    i += 2;
  }
  if (has_control_characters(out, false)) return std::nullopt;
  return out;
}

bool all_digits(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

/// The value as the store spells it, or nullopt when it cannot name one of `kind`.
std::optional<std::string> canonical_value(ValueKind kind, std::string value) {
  switch (kind) {
    case ValueKind::TaskId:
    case ValueKind::OpenTaskId:
    case ValueKind::EpicId:
      if (value.size() < 2 || value.size() > 20 || (value[0] != 'T' && value[0] != 't') ||
          !all_digits(std::string_view(value).substr(1)))
        return std::nullopt;
      value[0] = 'T';
      return value;
    case ValueKind::SessionId:
      if (!value.starts_with("ses_") || value.size() > 40 ||
          !std::all_of(value.begin() + 4, value.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z'); }))
        return std::nullopt;
      return value;
    case ValueKind::HelpLevel:
      if (value != "0" && value != "1" && value != "3") return std::nullopt;
      return value;
    default:
      if (value.empty() || value.size() > 120) return std::nullopt;
      return value;
  }
}

Result<json::Value> read(Router& router, const Caller& caller, std::string domain, std::string operation, json::Value params) {
  Envelope reply = router.dispatch({Gateway::Query, std::move(domain), std::move(operation), std::move(params), caller});
  if (!reply.success) return fail(std::move(*reply.error));
  // A resource is read by agents: the calls its data suggests in their tools' syntax.
  return written(reply.data, router.operations().agent_writer());
}

json::Value params(std::initializer_list<std::pair<std::string_view, json::Value>> members) {
  json::Value out = json::Value::object();
  for (const auto& [key, value] : members) out.set(key, value);
  return out;
}


/// An inbox as a model reads it: a line per message and its body in a fence of its own.
std::string inbox_text(const std::string& name, const json::Value& inbox) {
  const std::int64_t unread = inbox["unread"].is_int() ? inbox["unread"].as_int() : 0;
  std::string out = "Inbox of " + quoted_line(name) + ": " + std::to_string(unread) + " unread (session.inbox; session.ack " +
                    "marks them read). " + std::string(kStoredDataNote) + "\n";
  if (inbox["messages"].is_array())
    for (const auto& message : inbox["messages"].as_array()) {
      const std::string id = message["id"].string_or_empty();
      const std::string from = message["from"].string_or_empty();
      out += "\n" + id + " from " + quoted_line(from) + " to " + quoted_line(message["to"].string_or_empty()) + " at " +
             message["at"].string_or_empty() + (message["read"] == json::Value(true) ? "" : " (unread)") + "\n";
      const std::string what = "message " + id;
      out += fenced(message["body"].string_or_empty(), {.what = what, .by = from});
    }
  return out;
}

ResourceItem task_item(const json::Value& row, bool epic) {
  const std::string id = row["id"].string_or_empty();
  ResourceItem item;
  item.uri = std::string(epic ? "cleo://epic/" : "cleo://task/") + id;
  item.name = id;
  item.title = (epic ? "Epic " : "") + id + ": " + row["title"].string_or_empty();
  item.description = row["status"].string_or_empty() + (row["priority"].is_string() ? ", " + row["priority"].string_or_empty() : "") +
                     (epic ? " — its tree, waves and critical path" : "");
  item.mime_type = std::string(kJson);
  return item;
}

// resources/list walks these sections in order; a cursor is "<section>.<offset>".
enum Section { kFixed = 0, kSkills, kSessions, kEpics, kTasks, kSectionCount };

/// Up to `want` items of `section` from `offset`; `total` is how many the section has (-1: more
/// than those read, unknown).
Result<std::vector<ResourceItem>> section_items(Router& router, const Caller& caller, Section section, std::int64_t offset,
                                                std::int64_t want, bool& more) {
  std::vector<ResourceItem> items;
  more = false;
  auto slice = [&](std::vector<ResourceItem> all) {
    for (std::int64_t i = offset; i < std::ssize(all) && std::ssize(items) < want; ++i)
      items.push_back(std::move(all[static_cast<std::size_t>(i)]));
    more = offset + want < std::ssize(all);
  };
  switch (section) {
    case kFixed: {
      std::vector<ResourceItem> all;
      const ResourceTemplate& block = template_named("instructions");
      all.push_back({"cleo://instructions", "instructions", std::string(block.title), std::string(block.description),
                     std::string(kMarkdown)});
      for (auto [level, what] : {std::pair{"0", "the entry every agent gets"}, std::pair{"1", "every operation"},
                                 std::pair{"3", "the protocol: sessions, lifecycle, orchestration, errors"}})
        all.push_back({"cleo://help/" + std::string(level), "help-" + std::string(level),
                       "CLEO help level " + std::string(level), what, std::string(kMarkdown)});
      slice(std::move(all));
      return items;
    }
    case kSkills: {
      Envelope listed = router.dispatch({Gateway::Query, "skills", "list", json::Value::object(), caller});
      std::vector<ResourceItem> all;
      if (listed.success)
        for (const auto& row : reply_rows(listed.data)) {
          std::string name = row["name"].string_or_empty();
          if (name.empty()) continue;
          all.push_back({"cleo://skill/" + name, name, "Skill " + name, row["description"].string_or_empty(), std::string(kMarkdown)});
        }
      slice(std::move(all));
      return items;
    }
    case kSessions: {
      std::vector<ResourceItem> all;
      for (std::string_view status : {"active", "suspended"}) {
        Envelope listed = router.dispatch(
            {Gateway::Query, "session", "list", params({{"status", json::Value(status)}, {"limit", 100}}), caller});
        if (!listed.success) break;  // no project: nothing to brief on
        for (const auto& row : reply_rows(listed.data)) {
          std::string id = row["id"].string_or_empty();
          if (id.empty()) continue;
          std::string name = row["name"].string_or_empty();
          all.push_back({"cleo://session/" + id + "/briefing", id,
                         "Briefing of " + (name.empty() ? id : name + " (" + id + ")"),
                         std::string(status) + " session, scope " + row["scope"].string_or_empty(), std::string(kJson)});
        }
      }
      slice(std::move(all));
      return items;
    }
    case kEpics:
    case kTasks: {
      json::Value query = params({{"fields", json::Value::array_of(std::vector<std::string>{"id", "title", "status", "priority", "type"})},
                                  {"sort", "created"}, {"order", "desc"}, {"limit", want}, {"offset", offset}});
      if (section == kEpics) {
        query.set("type", "epic");
      } else {
        query.set("status", json::Value::array_of(std::vector<std::string>{"pending", "active", "blocked"}));
      }
      Envelope listed = router.dispatch({Gateway::Query, "tasks", "list", query, caller});
      if (!listed.success) {
        if (listed.error && listed.error->code == ErrorCode::NotInitialized) return items;  // no project: no tasks
        return fail(std::move(*listed.error));
      }
      for (const auto& row : reply_rows(listed.data)) {
        // An epic is listed among the epics; the tasks section has the rest.
        if (section == kTasks && row["type"] == json::Value("epic")) continue;
        items.push_back(task_item(row, section == kEpics));
      }
      more = listed.page && listed.page->has_more();
      return items;
    }
    case kSectionCount: break;
  }
  return items;
}

}  // namespace

std::span<const ResourceTemplate> resource_templates() { return templates(); }

const ResourceTemplate* find_template(std::string_view uri_template) {
  for (const auto& t : templates())
    if (t.uri_template == uri_template) return &t;
  return nullptr;
}

std::string ResourceRef::uri() const {
  std::string out(kind->uri_template);
  if (auto open = out.find('{'); open != std::string::npos) out.replace(open, out.find('}') - open + 1, value);
  return out;
}

std::optional<ResourceRef> parse_resource_uri(std::string_view uri) {
  if (uri.size() > 2000 || !uri.starts_with(kResourceScheme)) return std::nullopt;
  std::string_view rest = uri.substr(kResourceScheme.size());
  if (auto query = rest.find_first_of("?#"); query != std::string_view::npos) rest = rest.substr(0, query);
  for (const auto& t : templates()) {
    std::string_view pattern = std::string_view(t.uri_template).substr(kResourceScheme.size());
    auto open = pattern.find('{');
    if (open == std::string_view::npos) {
      if (rest == pattern) return ResourceRef{&t, ""};
      continue;
    }
    std::string_view before = pattern.substr(0, open);
    std::string_view after = pattern.substr(pattern.find('}') + 1);
    if (rest.size() <= before.size() + after.size() || !rest.starts_with(before) || !rest.ends_with(after)) continue;
    std::string_view raw = rest.substr(before.size(), rest.size() - before.size() - after.size());
    if (raw.find('/') != std::string_view::npos) continue;
    auto decoded = percent_decoded(raw);
    if (!decoded) return std::nullopt;
    // An inbox is named by an agent's label or a session id: a word, not only a session's shape.
    auto value = t.name == "inbox" ? canonical_value(ValueKind::Skill, std::move(*decoded))
                                   : canonical_value(t.kind, std::move(*decoded));
    if (value && t.name == "inbox" && value->find_first_of(" \t") != std::string::npos) return std::nullopt;
    if (!value) return std::nullopt;
    return ResourceRef{&t, std::move(*value)};
  }
  return std::nullopt;
}

Result<ResourcePage> list_resources(Router& router, const Caller& caller, std::string_view cursor, std::size_t page_size) {
  int section = kFixed;
  std::int64_t offset = 0;
  if (!cursor.empty()) {
    auto dot = cursor.find('.');
    bool ok = dot != std::string_view::npos && all_digits(cursor.substr(0, dot)) && all_digits(cursor.substr(dot + 1)) &&
              cursor.size() <= 24;
    if (ok) {
      auto first = std::from_chars(cursor.data(), cursor.data() + dot, section);
      auto second = std::from_chars(cursor.data() + dot + 1, cursor.data() + cursor.size(), offset);
      ok = first.ec == std::errc() && second.ec == std::errc() && section >= kFixed && section < kSectionCount &&
           offset >= 0 && offset <= 1'000'000'000;
    }
    if (!ok) return fail(Error(ErrorCode::InvalidParams, "unknown cursor: pass the nextCursor of a resources/list reply"));
  }
  ResourcePage page;
  const auto size = static_cast<std::int64_t>(std::clamp<std::size_t>(page_size, 1, 500));
  while (section < kSectionCount) {
    const std::int64_t want = size - std::ssize(page.items);
    if (want <= 0) {
      page.next_cursor = std::to_string(section) + "." + std::to_string(offset);
      break;
    }
    bool more = false;
    CT_TRY_ASSIGN(std::vector<ResourceItem> items,
                  section_items(router, caller, static_cast<Section>(section), offset, want, more));
    for (auto& item : items) page.items.push_back(std::move(item));
    if (more) {
      offset += want;
      page.next_cursor = std::to_string(section) + "." + std::to_string(offset);
      break;
    }
    ++section;
    offset = 0;
  }
  return page;
}

Result<ResourceText> read_resource(const Registry& registry, Router& router, const Caller& caller, std::string_view uri) {
  auto ref = parse_resource_uri(uri);
  if (!ref)
    return fail(Error(ErrorCode::NotFound, "no resource " + std::string(uri.substr(0, 200)) +
                                               ": this server serves cleo://task/T001, cleo://epic/T001, cleo://inbox/<label or session>, "
                                               "cleo://session/ses_…/briefing, cleo://research/…, cleo://skill/…, "
                                               "cleo://help/0|1|3 and cleo://instructions")
                    .with_detail("uri", std::string(uri.substr(0, 2000))));
  ResourceText out{ref->uri(), std::string(ref->kind->mime_type), ""};
  const std::string_view kind = ref->kind->name;
  auto not_found_is_the_uri = [&](Error error) {
    if (error.code == ErrorCode::NotFound) error = std::move(error).with_detail("uri", out.uri);
    return error;
  };
  if (kind == "task") {
    auto data = read(router, caller, "tasks", "show", params({{"id", ref->value}, {"detail", "full"}}));
    if (!data) return fail(not_found_is_the_uri(std::move(data.error())));
    out.text = data->dump();
  } else if (kind == "epic") {
    json::Value whole = json::Value::object();
    auto task = read(router, caller, "tasks", "show", params({{"id", ref->value}, {"detail", "compact"}}));
    if (!task) return fail(not_found_is_the_uri(std::move(task.error())));
    whole.set("epic", std::move(*task));
    CT_TRY_ASSIGN(json::Value tree, read(router, caller, "tasks", "tree", params({{"id", ref->value}})));
    whole.set("tree", std::move(tree));
    CT_TRY_ASSIGN(json::Value analysis, read(router, caller, "orchestrate", "analyze", params({{"epicId", ref->value}})));
    whole.set("analysis", std::move(analysis));
    out.text = whole.dump();
  } else if (kind == "briefing") {
    auto data = read(router, caller, "session", "briefing", params({{"id", ref->value}}));
    if (!data) {
      Error error = std::move(data.error());
      if (error.code == ErrorCode::SessionNotFound) error.code = ErrorCode::NotFound;
      return fail(not_found_is_the_uri(std::move(error)));
    }
    out.text = data->dump();
  } else if (kind == "inbox") {
    // Its messages with their bodies fenced as data (core/stored_text.h): they are agents' words.
    auto data = read(router, caller, "session", "inbox", params({{"of", ref->value}, {"limit", 50}}));
    if (!data) {
      Error error = std::move(data.error());
      if (error.code == ErrorCode::SessionNotFound) error.code = ErrorCode::NotFound;
      return fail(not_found_is_the_uri(std::move(error)));
    }
    out.text = inbox_text(ref->value, *data);
  } else if (kind == "research") {
    auto data = read(router, caller, "research", "show", params({{"id", ref->value}}));
    if (!data) return fail(not_found_is_the_uri(std::move(data.error())));
    out.text = data->dump();
  } else if (kind == "skill") {
    auto data = read(router, caller, "skills", "show", params({{"name", ref->value}}));
    if (!data) return fail(not_found_is_the_uri(std::move(data.error())));
    out.text = "Skill " + (*data)["name"].string_or_empty() + ": " + (*data)["description"].string_or_empty() + "\n\n" +
               std::string(trim((*data)["body"].string_or_empty())) + "\n";
  } else if (kind == "help") {
    CT_TRY_ASSIGN(json::Value help,
                  read(router, caller, "system", "help", params({{"level", static_cast<std::int64_t>(ref->value[0] - '0')}})));
    out.text = help["content"].string_or_empty();
  } else {
    CT_TRY_ASSIGN(out.text, project_block(registry));
  }
  return out;
}

}  // namespace ct::disclosure
