// The JSON of the tracker contract's shapes (engines/adapters/tracker.h): what plug-ins read and write.
#include "engines/adapters/tracker.h"

namespace ct::tracker {
namespace {

json::Value strings(const std::vector<std::string>& list) { return json::Value::array_of(list); }

Result<std::vector<std::string>> read_strings(const json::Value& value, std::string_view what) {
  std::vector<std::string> out;
  if (value.is_null()) return out;
  if (!value.is_array()) return fail(ErrorCode::EngineFailed, "the tracker's " + std::string(what) + " is not a list");
  for (const auto& item : value.as_array()) {
    if (!item.is_string())
      return fail(ErrorCode::EngineFailed, "the tracker's " + std::string(what) + " holds a value that is not text");
    out.push_back(item.as_string());
  }
  return out;
}

Result<std::string> read_text(const json::Value& value, std::string_view key, bool required) {
  const auto& member = value[key];
  if (member.is_string()) return member.as_string();
  if (member.is_int()) return std::to_string(member.as_int());
  if (member.is_null() && !required) return std::string();
  return fail(ErrorCode::EngineFailed, "the tracker's reply has no text " + std::string(key));
}

}  // namespace

json::Value to_json(const Item& item) {
  json::Value out = json::Value::object();
  out.set("id", item.id);
  out.set("key", item.key);
  out.set("url", item.url);
  out.set("version", item.version);
  out.set("updatedAt", item.updated_at);
  out.set("title", item.title);
  out.set("body", item.body);
  out.set("state", item.state);
  out.set("stateReason", item.state_reason);
  out.set("labels", strings(item.labels));
  out.set("milestone", item.milestone);
  out.set("parent", item.parent);
  out.set("blockedBy", strings(item.blocked_by));
  out.set("assignees", strings(item.assignees));
  out.set("author", item.author);
  out.set("pullRequest", item.pull_request);
  return out;
}

json::Value to_json(const Comment& comment) {
  json::Value out = json::Value::object();
  out.set("id", comment.id);
  out.set("item", comment.item);
  out.set("author", comment.author);
  out.set("createdAt", comment.created_at);
  out.set("body", comment.body);
  return out;
}

json::Value to_json(const Edit& edit) {
  json::Value out = json::Value::object();
  out.set("id", edit.id);
  if (edit.title) out.set("title", *edit.title);
  if (edit.body) out.set("body", *edit.body);
  if (edit.state) out.set("state", *edit.state);
  if (edit.state_reason) out.set("stateReason", *edit.state_reason);
  if (edit.labels) out.set("labels", strings(*edit.labels));
  return out;
}

Result<Item> item_from_json(const json::Value& value) {
  if (!value.is_object()) return fail(ErrorCode::EngineFailed, "the tracker's item is not an object");
  Item item;
  CT_TRY_ASSIGN(item.id, read_text(value, "id", true));
  if (item.id.empty()) return fail(ErrorCode::EngineFailed, "the tracker's item has an empty id");
  CT_TRY_ASSIGN(item.key, read_text(value, "key", false));
  CT_TRY_ASSIGN(item.url, read_text(value, "url", false));
  CT_TRY_ASSIGN(item.version, read_text(value, "version", false));
  CT_TRY_ASSIGN(item.updated_at, read_text(value, "updatedAt", false));
  CT_TRY_ASSIGN(item.title, read_text(value, "title", true));
  CT_TRY_ASSIGN(item.body, read_text(value, "body", false));
  CT_TRY_ASSIGN(item.state, read_text(value, "state", true));
  if (item.state != "open" && item.state != "closed")
    return fail(ErrorCode::EngineFailed, "the tracker's item " + item.id + " has state \"" + item.state +
                                             "\" (open or closed)");
  CT_TRY_ASSIGN(item.state_reason, read_text(value, "stateReason", false));
  CT_TRY_ASSIGN(item.labels, read_strings(value["labels"], "labels"));
  CT_TRY_ASSIGN(item.milestone, read_text(value, "milestone", false));
  CT_TRY_ASSIGN(item.parent, read_text(value, "parent", false));
  CT_TRY_ASSIGN(item.blocked_by, read_strings(value["blockedBy"], "blockedBy"));
  CT_TRY_ASSIGN(item.assignees, read_strings(value["assignees"], "assignees"));
  CT_TRY_ASSIGN(item.author, read_text(value, "author", false));
  item.pull_request = value["pullRequest"] == json::Value(true);
  return item;
}

Result<Comment> comment_from_json(const json::Value& value) {
  if (!value.is_object()) return fail(ErrorCode::EngineFailed, "the tracker's comment is not an object");
  Comment comment;
  CT_TRY_ASSIGN(comment.id, read_text(value, "id", true));
  CT_TRY_ASSIGN(comment.item, read_text(value, "item", false));
  CT_TRY_ASSIGN(comment.author, read_text(value, "author", false));
  CT_TRY_ASSIGN(comment.created_at, read_text(value, "createdAt", false));
  CT_TRY_ASSIGN(comment.body, read_text(value, "body", true));
  return comment;
}

}  // namespace ct::tracker
