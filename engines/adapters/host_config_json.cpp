// JSON and JSONC host config files edited as text (engines/adapters/host_config.h): a reader that
// keeps where each value is (comments and trailing commas allowed), then one server entry set or
// merged, or CLEO's hook placed in a hooks.<event> array, every other byte kept.
#include <algorithm>
#include <cctype>
#include <optional>

#include "core/json_parse.h"
#include "engines/adapters/host_config.h"
#include "engines/adapters/host_config_text.h"

namespace ct::host_config {
namespace {

using detail::invalid;
using detail::keeping_bom;
using detail::kBom;
using detail::line_of;
using detail::with_eol;

std::string repeat(std::string_view unit, int times) {
  std::string out;
  for (int i = 0; i < times; ++i) out += unit;
  return out;
}

std::size_t line_start(std::string_view text, std::size_t pos) {
  if (pos == 0) return 0;
  std::size_t nl = text.rfind('\n', pos - 1);
  return nl == std::string_view::npos ? 0 : nl + 1;
}

bool only_space_before(std::string_view text, std::size_t pos) {
  for (std::size_t i = line_start(text, pos); i < pos; ++i)
    if (text[i] != ' ' && text[i] != '\t') return false;
  return true;
}


/// Whether `token` is a number as JSON's grammar writes one, whatever its size.
bool is_json_number(std::string_view token) {
  std::size_t i = 0;
  auto digits = [&] {
    std::size_t start = i;
    while (i < token.size() && std::isdigit(static_cast<unsigned char>(token[i]))) ++i;
    return i > start;
  };
  if (i < token.size() && token[i] == '-') ++i;
  if (i < token.size() && token[i] == '0') {
    ++i;
  } else if (!digits()) {
    return false;
  }
  if (i < token.size() && token[i] == '.') {
    ++i;
    if (!digits()) return false;
  }
  if (i < token.size() && (token[i] == 'e' || token[i] == 'E')) {
    ++i;
    if (i < token.size() && (token[i] == '+' || token[i] == '-')) ++i;
    if (!digits()) return false;
  }
  return i == token.size();
}

// ---- JSONC ---------------------------------------------------------------------------------

/// A value of the document with where its text is. Objects keep their members (in order) as
/// children, with the position of the closing brace and whether a comma follows the last member.
struct Node {
  std::string key;            // a member's key (children of an object)
  std::size_t key_begin = 0;  // where the member's key starts
  json::Value value;
  std::size_t begin = 0;
  std::size_t end = 0;
  std::vector<Node> children;  // object members
  std::size_t close = 0;       // '}' of an object
  bool trailing_comma = false;
};

class JsoncReader {
 public:
  JsoncReader(std::string_view text, std::string_view label) : text_(text), label_(label) {}

  /// The document's value; nullopt for a text holding only whitespace and comments.
  Result<std::optional<Node>> document() {
    CT_TRY(skip());
    if (pos_ == text_.size()) return std::optional<Node>();
    CT_TRY_ASSIGN(Node root, value(0));
    CT_TRY(skip());
    if (pos_ != text_.size()) return fail(here("unexpected text after the end of the document"));
    return std::optional<Node>(std::move(root));
  }

 private:
  Error here(std::string problem) const { return invalid(label_, line_of(text_, pos_), std::move(problem)); }

  Result<void> skip() {
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        ++pos_;
      } else if (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '/') {
        std::size_t nl = text_.find('\n', pos_);
        pos_ = nl == std::string_view::npos ? text_.size() : nl;
      } else if (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '*') {
        std::size_t close = text_.find("*/", pos_ + 2);
        if (close == std::string_view::npos) return fail(here("unterminated /* comment"));
        pos_ = close + 2;
      } else {
        break;
      }
    }
    return {};
  }

  Result<Node> value(int depth) {
    if (depth > 64) return fail(here("nested too deeply"));
    if (pos_ >= text_.size()) return fail(here("unexpected end of file"));
    char c = text_[pos_];
    if (c == '{') return object(depth);
    if (c == '[') return array(depth);
    Node node;
    node.begin = pos_;
    if (c == '"') {
      CT_TRY_ASSIGN(node.value, string());
    } else {
      std::size_t start = pos_;
      while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '-' ||
                                     text_[pos_] == '+' || text_[pos_] == '.'))
        ++pos_;
      std::string_view token = text_.substr(start, pos_ - start);
      auto parsed = token.empty() ? Result<json::Value>(fail(ErrorCode::InvalidInput, "")) : json::parse(token);
      if (!parsed && is_json_number(token)) {
        // Valid JSON beyond what a double or a 64-bit integer holds (1E400, a 30-digit id): its
        // text stays as it is in the file; the value stands in only for comparisons.
        parsed = json::Value(std::string(token));
      }
      if (!parsed || parsed->is_array() || parsed->is_object()) {
        pos_ = start;
        return fail(here(token.empty() ? "unexpected character '" + std::string(1, c) + "'"
                                       : "invalid value '" + std::string(token) + "'"));
      }
      node.value = std::move(*parsed);
    }
    node.end = pos_;
    return node;
  }

  Result<json::Value> string() {
    std::size_t start = pos_++;
    while (pos_ < text_.size() && text_[pos_] != '"') {
      if (text_[pos_] == '\n') return fail(here("unterminated string"));
      pos_ += text_[pos_] == '\\' ? 2 : 1;
    }
    if (pos_ >= text_.size()) return fail(here("unterminated string"));
    ++pos_;
    auto parsed = json::parse(text_.substr(start, pos_ - start));
    if (!parsed) {
      pos_ = start;
      return fail(here("invalid string: " + parsed.error().message));
    }
    return std::move(*parsed);
  }

  Result<Node> object(int depth) {
    Node node;
    node.begin = pos_++;
    node.value = json::Value::object();
    while (true) {
      CT_TRY(skip());
      if (pos_ >= text_.size()) return fail(here("unterminated object (a } is missing)"));
      if (text_[pos_] == '}') break;
      if (text_[pos_] != '"') return fail(here("expected a member name in double quotes or }"));
      std::size_t key_begin = pos_;
      CT_TRY_ASSIGN(json::Value key, string());
      CT_TRY(skip());
      if (pos_ >= text_.size() || text_[pos_] != ':') return fail(here("expected : after the member name"));
      ++pos_;
      CT_TRY(skip());
      CT_TRY_ASSIGN(Node child, value(depth + 1));
      child.key = key.as_string();
      child.key_begin = key_begin;
      node.value.set(child.key, child.value);
      node.children.push_back(std::move(child));
      CT_TRY(skip());
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        CT_TRY(skip());
        if (pos_ < text_.size() && text_[pos_] == '}') node.trailing_comma = true;
      } else if (pos_ >= text_.size() || text_[pos_] != '}') {
        return fail(here("expected , or } after a member"));
      }
    }
    node.close = pos_++;
    node.end = pos_;
    return node;
  }

  Result<Node> array(int depth) {
    Node node;
    node.begin = pos_++;
    node.value = json::Value::array();
    while (true) {
      CT_TRY(skip());
      if (pos_ >= text_.size()) return fail(here("unterminated array (a ] is missing)"));
      if (text_[pos_] == ']') break;
      CT_TRY_ASSIGN(Node item, value(depth + 1));
      node.value.push_back(std::move(item.value));
      CT_TRY(skip());
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
      } else if (pos_ >= text_.size() || text_[pos_] != ']') {
        return fail(here("expected , or ] after an array item"));
      }
    }
    node.close = pos_++;
    node.end = pos_;
    return node;
  }

  std::string_view text_;
  std::string_view label_;
  std::size_t pos_ = 0;
};

bool is_scalar(const json::Value& value) { return !value.is_array() && !value.is_object(); }

/// Indented JSON with the file's own indentation unit; arrays of scalars on one line, as people
/// write `"args": ["mcp"]`.
std::string render(const json::Value& value, std::string_view unit, const std::string& indent) {
  if (value.is_object()) {
    if (value.empty()) return "{}";
    std::string out = "{\n";
    bool first = true;
    for (const auto& [key, member] : value.as_object()) {
      if (!first) out += ",\n";
      first = false;
      out += indent + std::string(unit);
      json::write_string(out, key);
      out += ": " + render(member, unit, indent + std::string(unit));
    }
    return out + "\n" + indent + "}";
  }
  if (value.is_array()) {
    const auto& items = value.as_array();
    if (std::all_of(items.begin(), items.end(), is_scalar)) {
      std::string out = "[";
      for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + items[i].dump();
      return out + "]";
    }
    std::string out = "[\n";
    for (std::size_t i = 0; i < items.size(); ++i)
      out += (i ? ",\n" : "") + indent + std::string(unit) + render(items[i], unit, indent + std::string(unit));
    return out + "\n" + indent + "]";
  }
  return value.dump();
}

/// The file's indentation unit: the whitespace before the first member of the top-level object
/// when it starts a line; two spaces otherwise.
std::string indent_unit(std::string_view text, const Node& root) {
  if (!root.children.empty()) {
    std::size_t key = root.children.front().key_begin;
    if (only_space_before(text, key) && key > line_start(text, key))
      return std::string(text.substr(line_start(text, key), key - line_start(text, key)));
  }
  return "  ";
}

/// `text` with member `key: value` added as the last member of `object` (at nesting `depth`).
std::string insert_member(std::string_view text, const Node& object, int depth, std::string_view unit,
                          std::string_view key, const json::Value& value, bool crlf) {
  const std::string indent = repeat(unit, depth + 1);
  std::string member = indent;
  json::write_string(member, key);
  member += ": " + render(value, unit, indent);
  if (object.trailing_comma) member += ',';
  std::string out(text);
  std::size_t at;
  std::string insert;
  if (only_space_before(text, object.close)) {
    at = line_start(text, object.close);  // the new member goes on its own line before the brace
    insert = member + "\n";
  } else {
    at = object.close;
    insert = "\n" + member + "\n" + repeat(unit, depth);
  }
  out.insert(at, with_eol(std::move(insert), crlf));
  // The comma right after the last value (before any comment that follows it on its line).
  if (!object.children.empty() && !object.trailing_comma) out.insert(object.children.back().end, ",");
  return out;
}

bool is_owned(std::span<const std::string_view> owned, std::string_view key) {
  return std::find(owned.begin(), owned.end(), key) != owned.end();
}

/// The indentation of the line `pos` is on when only whitespace precedes it there.
std::optional<std::string> indent_at(std::string_view text, std::size_t pos) {
  if (!only_space_before(text, pos)) return std::nullopt;
  return std::string(text.substr(line_start(text, pos), pos - line_start(text, pos)));
}

/// The existing entry `object` merged with `entry`: the members `entry` names get its values,
/// other members named in `owned` go, every other member stays as written (the user's env, cwd,
/// timeout, disabled …); members added go after the last one kept. nullopt: nothing changes.
std::optional<std::string> merge_entry(std::string_view text, const Node& object, const json::Value& entry,
                                       std::span<const std::string_view> owned, std::string_view unit,
                                       const std::string& entry_indent, bool crlf) {
  const std::vector<Node>& members = object.children;
  std::vector<bool> kept(members.size(), true);
  std::vector<std::optional<std::string>> replaced(members.size());
  bool changed = false;
  for (std::size_t i = 0; i < members.size(); ++i) {
    const json::Value* wanted = entry.find(members[i].key);
    if (wanted) {
      if (members[i].value == *wanted) continue;
      const std::string indent = indent_at(text, members[i].key_begin).value_or(entry_indent + std::string(unit));
      replaced[i] = with_eol(render(*wanted, unit, indent), crlf);
      changed = true;
    } else if (is_owned(owned, members[i].key)) {
      kept[i] = false;
      changed = true;
    }
  }
  std::vector<std::pair<std::string, const json::Value*>> added;
  for (const auto& [key, value] : entry.as_object()) {
    bool present = std::any_of(members.begin(), members.end(), [&](const Node& m) { return m.key == key; });
    if (!present) added.emplace_back(key, &value);
  }
  if (!changed && added.empty()) return std::nullopt;
  std::vector<std::size_t> keep;
  for (std::size_t i = 0; i < members.size(); ++i)
    if (kept[i]) keep.push_back(i);
  if (keep.empty()) return with_eol(render(entry, unit, entry_indent), crlf);  // nothing of the user's to keep

  // The object rebuilt from the file's own pieces: what precedes the first member, each kept
  // member (its value replaced when it changes) followed by the separator that followed it, and
  // what followed the last member (a trailing comma, comments, the closing brace's indentation).
  const std::size_t first = members.front().key_begin;
  const std::string_view lead = text.substr(object.begin + 1, first - object.begin - 1);
  const std::string_view tail = text.substr(members.back().end, object.close - members.back().end);
  const bool multiline = lead.find('\n') != std::string_view::npos;
  const std::string member_indent = indent_at(text, first).value_or(entry_indent + std::string(unit));
  std::string out = "{" + std::string(lead);
  for (std::size_t j = 0; j < keep.size(); ++j) {
    const Node& member = members[keep[j]];
    if (replaced[keep[j]]) {
      out += text.substr(member.key_begin, member.begin - member.key_begin);
      out += *replaced[keep[j]];
    } else {
      out += text.substr(member.key_begin, member.end - member.key_begin);
    }
    if (j + 1 < keep.size()) {
      const std::size_t next = keep[j] + 1;  // the separator up to the next member of the file
      out += text.substr(member.end, members[next].key_begin - member.end);
    }
  }
  for (const auto& [key, value] : added) {
    std::string member = multiline ? "," + with_eol("\n", crlf) + member_indent : ", ";
    json::write_string(member, key);
    member += ": " + with_eol(render(*value, unit, member_indent), crlf);
    out += member;
  }
  out += tail;
  out += "}";
  return out;
}

/// The top-level object of a JSON(C) file; nullopt for one holding only whitespace and comments.
Result<std::optional<Node>> json_root(std::string_view text, std::string_view label) {
  CT_TRY_ASSIGN(std::optional<Node> root, JsoncReader(text, label).document());
  if (root && !root->value.is_object())
    return fail(invalid(label, line_of(text, root->begin), "the file holds a JSON " +
                                                               std::string(json::to_string(root->value.type())) +
                                                               ", not an object"));
  return root;
}

/// An empty (or comment-only) file with `document` written after what was there.
Edit new_json_document(std::string_view text, const json::Value& document) {
  const bool crlf = text.find("\r\n") != std::string_view::npos;
  std::string out(text);
  if (!out.empty() && out.back() != '\n') out += with_eol("\n", crlf);
  out += with_eol(render(document, "  ", "") + "\n", crlf);
  return Edit{std::move(out), true};
}

Result<Edit> set_json_document(std::string_view text, std::string_view servers_key, std::string_view name,
                               const json::Value& entry, std::span<const std::string_view> owned,
                               std::string_view label) {
  CT_TRY_ASSIGN(std::optional<Node> root, json_root(text, label));
  const bool crlf = text.find("\r\n") != std::string_view::npos;
  if (!root) {
    json::Value servers = json::Value::object();
    servers.set(name, entry);
    json::Value document = json::Value::object();
    document.set(servers_key, std::move(servers));
    return new_json_document(text, document);
  }
  const std::string unit = indent_unit(text, *root);
  const Node* servers = nullptr;
  for (const auto& child : root->children)
    if (child.key == servers_key) servers = &child;  // the last one counts, as in JSON parsers
  if (!servers) {
    json::Value members = json::Value::object();
    members.set(name, entry);
    return Edit{insert_member(text, *root, 0, unit, servers_key, members, crlf), true};
  }
  if (!servers->value.is_object())
    return fail(invalid(label, line_of(text, servers->begin), "\"" + std::string(servers_key) + "\" is a " +
                                                                  std::string(json::to_string(servers->value.type())) +
                                                                  ", not an object of servers"));
  const Node* existing = nullptr;
  for (const auto& child : servers->children)
    if (child.key == name) existing = &child;
  if (!existing) return Edit{insert_member(text, *servers, 1, unit, name, entry, crlf), true};
  const std::string indent = indent_at(text, existing->key_begin).value_or(repeat(unit, 2));
  std::optional<std::string> value;
  if (existing->value.is_object() && !existing->children.empty()) {
    value = merge_entry(text, *existing, entry, owned, unit, indent, crlf);
  } else if (existing->value != entry) {
    value = with_eol(render(entry, unit, indent), crlf);  // not an object of members to keep
  }
  if (!value) return Edit{std::string(text), false};
  std::string out(text);
  out.replace(existing->begin, existing->end - existing->begin, *value);
  return Edit{std::move(out), true};
}

Result<Edit> set_json_hook_document(std::string_view text, std::string_view event, const json::Value& entry,
                                    const std::function<bool(const json::Value&)>& is_ours, const json::Value& top,
                                    std::string_view label) {
  CT_TRY_ASSIGN(std::optional<Node> root, json_root(text, label));
  const bool crlf = text.find("\r\n") != std::string_view::npos;
  json::Value wanted = json::Value::array();
  wanted.push_back(entry);
  if (!root) {
    json::Value document = top.is_object() ? top : json::Value::object();
    json::Value hooks = json::Value::object();
    hooks.set(event, std::move(wanted));
    document.set("hooks", std::move(hooks));
    return new_json_document(text, document);
  }
  const std::string unit = indent_unit(text, *root);
  std::string out(text);
  bool changed = false;
  const Node* hooks = nullptr;
  for (const auto& child : root->children)
    if (child.key == "hooks") hooks = &child;
  if (!hooks) {
    json::Value members = json::Value::object();
    members.set(event, std::move(wanted));
    out = insert_member(out, *root, 0, unit, "hooks", members, crlf);
    changed = true;
  } else {
    if (!hooks->value.is_object())
      return fail(invalid(label, line_of(text, hooks->begin), "\"hooks\" is a " +
                                                                  std::string(json::to_string(hooks->value.type())) +
                                                                  ", not an object of events"));
    const Node* existing = nullptr;
    for (const auto& child : hooks->children)
      if (child.key == event) existing = &child;
    if (!existing) {
      out = insert_member(out, *hooks, 1, unit, event, wanted, crlf);
      changed = true;
    } else {
      if (!existing->value.is_array())
        return fail(invalid(label, line_of(text, existing->begin), "\"hooks." + std::string(event) + "\" is a " +
                                                                       std::string(json::to_string(existing->value.type())) +
                                                                       ", not an array of hooks"));
      // The user's hooks stay in their order; CLEO's one takes the place of the first it wrote.
      json::Value items = json::Value::array();
      bool placed = false;
      for (const auto& item : existing->value.as_array()) {
        if (!is_ours(item)) {
          items.push_back(item);
        } else if (!placed) {
          items.push_back(entry);
          placed = true;
        }
      }
      if (!placed) items.push_back(entry);
      if (items != existing->value) {
        const std::string indent = indent_at(text, existing->key_begin).value_or(repeat(unit, 2));
        out.replace(existing->begin, existing->end - existing->begin, with_eol(render(items, unit, indent), crlf));
        changed = true;
      }
    }
  }
  // Top-level members the host needs, when missing (re-read: the text may have moved).
  if (top.is_object()) {
    for (const auto& [key, value] : top.as_object()) {
      CT_TRY_ASSIGN(std::optional<Node> now, JsoncReader(out, label).document());
      bool present = std::any_of(now->children.begin(), now->children.end(), [&](const Node& m) { return m.key == key; });
      if (present) continue;
      out = insert_member(out, *now, 0, unit, key, value, crlf);
      changed = true;
    }
  }
  if (!changed) return Edit{std::string(text), false};
  return Edit{std::move(out), true};
}

}  // namespace

Result<json::Value> read_json(std::string_view text, std::string_view label) {
  if (text.starts_with(kBom)) text.remove_prefix(kBom.size());
  CT_TRY_ASSIGN(std::optional<Node> root, JsoncReader(text, label).document());
  return root ? std::move(root->value) : json::Value(nullptr);
}

Result<Edit> set_json_hook(std::string_view text, std::string_view event, const json::Value& entry,
                           const std::function<bool(const json::Value&)>& is_ours, const json::Value& top,
                           std::string_view label) {
  return keeping_bom(text, [&](std::string_view json) {
    return set_json_hook_document(json, event, entry, is_ours, top, label);
  });
}

Result<Edit> set_json_server(std::string_view text, std::string_view servers_key, std::string_view name,
                             const json::Value& entry, std::span<const std::string_view> owned,
                             std::string_view label) {
  return keeping_bom(text, [&](std::string_view json) {
    return set_json_document(json, servers_key, name, entry, owned, label);
  });
}

}  // namespace ct::host_config
