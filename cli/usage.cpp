#include "cli/usage.h"

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "cli/args.h"
#include "core/json_parse.h"
#include "disclosure/help_levels.h"

namespace ct::cli {
namespace {

std::string json_scalar_text(const json::Value& value) {
  if (value.is_string()) return value.as_string();
  return value.dump();
}

// ---- a small reader for the JavaScript-style object literals used in `fix` texts -----------

class LiteralReader {
 public:
  explicit LiteralReader(std::string_view text) : text_(text) {}

  std::optional<json::Value> value() {
    skip_space();
    if (at_end()) return std::nullopt;
    char c = text_[pos_];
    if (c == '{') return object();
    if (c == '[') return array();
    if (c == '\'' || c == '"') return string_literal();
    if (c == '-' || std::isdigit(static_cast<unsigned char>(c))) return number();
    std::string word = identifier();
    if (word == "true") return json::Value(true);
    if (word == "false") return json::Value(false);
    if (word == "null") return json::Value(nullptr);
    return std::nullopt;
  }
  std::size_t position() const { return pos_; }

 private:
  bool at_end() const { return pos_ >= text_.size(); }
  void skip_space() {
    while (!at_end() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool take(char c) {
    skip_space();
    if (at_end() || text_[pos_] != c) return false;
    ++pos_;
    return true;
  }
  std::string identifier() {
    std::string out;
    while (!at_end() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_' ||
                         text_[pos_] == '.')) {
      out += text_[pos_++];
    }
    return out;
  }
  std::optional<json::Value> string_literal() {
    char quote = text_[pos_++];
    std::string out;
    while (!at_end() && text_[pos_] != quote) {
      if (text_[pos_] == '\\' && pos_ + 1 < text_.size()) ++pos_;
      out += text_[pos_++];
    }
    if (at_end()) return std::nullopt;
    ++pos_;
    return json::Value(std::move(out));
  }
  std::optional<json::Value> number() {
    std::size_t start = pos_;
    if (text_[pos_] == '-') ++pos_;
    while (!at_end() && (std::isdigit(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '.')) ++pos_;
    auto parsed = json::parse(text_.substr(start, pos_ - start));
    if (!parsed || !parsed->is_number()) return std::nullopt;
    return *parsed;
  }
  std::optional<json::Value> array() {
    ++pos_;
    json::Value out = json::Value::array();
    if (take(']')) return out;
    do {
      auto item = value();
      if (!item) return std::nullopt;
      out.push_back(std::move(*item));
    } while (take(','));
    if (!take(']')) return std::nullopt;
    return out;
  }
  std::optional<json::Value> object() {
    ++pos_;
    json::Value out = json::Value::object();
    if (take('}')) return out;
    do {
      skip_space();
      std::string key;
      if (!at_end() && (text_[pos_] == '\'' || text_[pos_] == '"')) {
        auto quoted = string_literal();
        if (!quoted) return std::nullopt;
        key = quoted->as_string();
      } else {
        key = identifier();
      }
      if (key.empty() || !take(':')) return std::nullopt;
      auto item = value();
      if (!item) return std::nullopt;
      out.set(key, std::move(*item));
    } while (take(','));
    if (!take('}')) return std::nullopt;
    return out;
  }

  std::string_view text_;
  std::size_t pos_ = 0;
};

}  // namespace

std::string param_help(const ParamSpec& param) {
  std::vector<std::string> facts;
  if (param.required) facts.emplace_back("required");
  switch (param.type) {
    case ParamType::String: {
      std::string r = disclosure::range_text(param, " chars");
      facts.push_back(r.empty() ? "text" : "text, " + r);
      if (!param.pattern.empty()) facts.push_back("matching " + std::string(param.pattern));
      break;
    }
    case ParamType::Int: {
      std::string r = param.choices.empty() ? disclosure::range_text(param) : disclosure::choices_text(param);
      facts.push_back(r.empty() ? "integer" : "integer " + r);
      break;
    }
    case ParamType::Bool: break;
    case ParamType::Enum: facts.push_back("one of " + disclosure::choices_text(param)); break;
    case ParamType::TaskId: facts.emplace_back("task id"); break;
    case ParamType::Object: facts.emplace_back("JSON text, @file, or - for stdin"); break;
    case ParamType::Scalar: break;
    case ParamType::Array: {
      std::string items = param.item_type == ParamType::TaskId ? "task ids"
                          : param.item_type == ParamType::Enum  ? disclosure::choices_text(param)
                                                                : "text";
      if (auto each = disclosure::bounds_text(kUnbounded, param.item_max, " chars"); !each.empty())
        items += " (" + each + " each)";
      std::string r = disclosure::range_text(param, " items");
      facts.push_back("list of " + items + (r.empty() ? "" : ", " + r));
      facts.emplace_back(splits_on_commas(param) ? "repeat the flag or separate with commas" : "repeat the flag");
      break;
    }
  }
  if (!param.default_json.empty()) {
    if (param.type == ParamType::Bool) {
      if (param.default_json == "true") facts.push_back("on by default; --no-" + kebab_case(param.name) + " turns it off");
    } else {
      auto parsed = json::parse(param.default_json);
      facts.push_back("default " + (parsed ? json_scalar_text(*parsed) : std::string(param.default_json)));
    }
  }
  std::string out(param.description);
  if (!facts.empty()) {
    out += " [";
    for (std::size_t i = 0; i < facts.size(); ++i) out += (i ? "; " : "") + facts[i];
    out += "]";
  }
  return out;
}

std::string operation_footer(const OperationSpec& spec) {
  std::string out;
  if (!spec.returns.empty()) out += "Returns: " + std::string(spec.returns) + "\n";
  if (!spec.examples.empty()) {
    out += "\nExamples:\n";
    for (const auto& example : spec.examples) {
      auto params = json::parse(example.params_json);
      if (!params) continue;
      if (!example.description.empty()) out += "  # " + std::string(example.description) + "\n";
      out += "  " + command_line(spec, *params) + "\n";
    }
  }
  if (!spec.errors.empty()) {
    out += "\nErrors:";
    for (std::size_t i = 0; i < spec.errors.size(); ++i) {
      out += (i ? ", " : " ") + std::string(to_string(spec.errors[i])) + " (exit " +
             std::to_string(exit_code(spec.errors[i])) + ")";
    }
    out += "\n";
  }
  std::vector<std::string> traits;
  if (spec.idempotent) traits.emplace_back("idempotent");
  if (spec.destructive) traits.emplace_back("destructive");
  if (spec.needs_session) traits.emplace_back("session-checked");
  if (!spec.needs_project) traits.emplace_back("works without a project");
  out += "\nOver MCP: " + std::string(tool_name(spec.gateway)) + " {domain:'" + std::string(spec.domain) +
         "', operation:'" + std::string(spec.name) + "', params:{…}}";
  for (const auto& trait : traits) out += " · " + trait;
  if (!spec.shortcut.empty()) {
    out += "\nAlso reachable as: ct " + std::string(spec.domain) + " " + std::string(spec.name);
  }
  out += "\nGlobal options: --json, --project DIR, --meta, --read-only";
  if (spec.gateway == Gateway::Mutate) out += ", --reason TEXT";
  out += " (see ct --help)\n";
  return out;
}

std::optional<CallAsCommand> call_as_command(std::string_view text, const Registry& registry) {
  std::size_t start = 0;
  for (std::string_view tool : {tool_name(Gateway::Query), tool_name(Gateway::Mutate)}) {
    if (text.starts_with(tool) && text.size() > tool.size() && text[tool.size()] == ' ') start = tool.size() + 1;
  }
  if (start == 0) return std::nullopt;
  LiteralReader reader(text.substr(start));
  auto call = reader.value();
  if (!call || !call->is_object()) return std::nullopt;
  const json::Value& domain = (*call)["domain"];
  const json::Value& operation = (*call)["operation"];
  if (!domain.is_string() || !operation.is_string()) return std::nullopt;
  const OperationSpec* spec = registry.find(domain.as_string(), operation.as_string());
  if (!spec) return std::nullopt;
  const json::Value& params = (*call)["params"];
  return CallAsCommand{command_line(*spec, params.is_object() ? params : json::Value::object()),
                       start + reader.position()};
}

std::string fix_for_people(std::string_view fix, const Registry& registry) {
  if (fix.find("`ct ") != std::string_view::npos) return std::string(fix);
  if (auto whole = call_as_command(fix, registry); whole && whole->length == fix.size()) return whole->command;
  std::string out;
  std::size_t i = 0;
  while (i < fix.size()) {
    std::size_t next = fix.find("cleo_", i);
    if (next == std::string_view::npos) break;
    out.append(fix.substr(i, next - i));
    if (auto call = call_as_command(fix.substr(next), registry)) {
      out += "`" + call->command + "`";
      i = next + call->length;
    } else {
      out += "cleo_";
      i = next + 5;
    }
  }
  out.append(fix.substr(i));
  return out;
}

}  // namespace ct::cli
