#include "disclosure/cli_syntax.h"

#include <algorithm>
#include <cctype>
#include <vector>

namespace ct::disclosure {
namespace {

/// One value of a flag or positional as typed on a command line.
std::string argument_text(const json::Value& value) {
  if (value.is_string()) return shell_quote(value.as_string());
  if (value.is_number() || value.is_bool()) return value.dump();
  return shell_quote(value.dump());
}

bool all_strings(const json::Value& value) {
  for (const auto& item : value.as_array())
    if (!item.is_string()) return false;
  return true;
}

void append_flag(std::string& out, const ParamSpec* param, std::string_view name, const json::Value& value) {
  std::string flag = "--" + kebab_case(name);
  if (value.is_bool()) {
    bool default_true = param && param->default_json == "true";
    if (value.as_bool()) {
      out += " " + flag;
    } else {
      out += default_true ? " --no-" + kebab_case(name) : " " + flag + "=false";
    }
    return;
  }
  if (value.is_array() && all_strings(value)) {
    bool commas = param && splits_on_commas(*param);
    std::string joined;
    for (const auto& item : value.as_array()) {
      if (item.as_string().find(',') != std::string::npos) commas = false;
      if (!joined.empty()) joined += ',';
      joined += item.as_string();
    }
    if (commas && !value.empty()) {
      out += " " + flag + " " + shell_quote(joined);
    } else {
      for (const auto& item : value.as_array()) out += " " + flag + " " + shell_quote(item.as_string());
    }
    return;
  }
  out += " " + flag + " " + argument_text(value);
}

}  // namespace

char short_flag(std::string_view param) {
  static constexpr std::pair<std::string_view, char> kShort[] = {
      {"priority", 'p'}, {"labels", 'l'}, {"parent", 'P'}, {"description", 'd'},
      {"status", 's'},   {"type", 't'},   {"notes", 'm'},  {"limit", 'n'},
      {"label", 'l'},  // the filter of tasks.list: -l api as when adding
  };
  for (const auto& [name, letter] : kShort)
    if (name == param) return letter;
  return '\0';
}

std::string kebab_case(std::string_view camel) {
  std::string out;
  for (std::size_t i = 0; i < camel.size(); ++i) {
    char c = camel[i];
    bool upper = std::isupper(static_cast<unsigned char>(c)) != 0;
    if (upper && i > 0) {
      char before = camel[i - 1];
      bool after_lower = std::islower(static_cast<unsigned char>(before)) || std::isdigit(static_cast<unsigned char>(before));
      bool acronym_end = std::isupper(static_cast<unsigned char>(before)) && i + 1 < camel.size() &&
                         std::islower(static_cast<unsigned char>(camel[i + 1]));
      if (after_lower || acronym_end) out += '-';
    }
    out += upper ? static_cast<char>(std::tolower(static_cast<unsigned char>(c))) : c;
  }
  return out;
}

bool splits_on_commas(const ParamSpec& param) {
  if (param.type != ParamType::Array) return false;
  return param.item_type == ParamType::TaskId || param.item_type == ParamType::Enum || !param.pattern.empty();
}

std::string command_prefix(const OperationSpec& spec) {
  if (!spec.shortcut.empty()) return "ct " + std::string(spec.shortcut);
  return "ct " + std::string(spec.domain) + " " + std::string(spec.name);
}

std::string shell_quote(std::string_view text) {
  auto safe = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("_./:@%+=,-").find(c) != std::string_view::npos;
  };
  bool plain = !text.empty();
  for (char c : text) plain = plain && safe(c);
  if (plain) return std::string(text);
  if (text.find_first_of("\"$`\\!") == std::string_view::npos) return "\"" + std::string(text) + "\"";
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::string command_line(const OperationSpec& spec, const json::Value& params) {
  std::string out = command_prefix(spec);
  std::vector<std::string> used;
  bool in_order = true;
  for (const auto& param : spec.params) {
    if (!param.positional) continue;
    const json::Value* value = params.is_object() ? params.find(param.name) : nullptr;
    bool usable = value && !value->is_null() && !value->is_bool() &&
                  !(value->is_string() && (value->as_string().empty() || value->as_string().front() == '-'));
    if (!usable || !in_order) {
      in_order = false;
      continue;
    }
    if (value->is_array() && param.type == ParamType::Array) {
      // A list positional is its items, one word each (`ct plan diff PL001 PL002`).
      for (const auto& item : value->as_array()) out += " " + argument_text(item);
      used.emplace_back(param.name);
      in_order = false;  // nothing positional can follow a list
      continue;
    }
    out += " " + argument_text(*value);
    used.emplace_back(param.name);
  }
  if (params.is_object()) {
    for (const auto& [name, value] : params.as_object()) {
      if (std::find(used.begin(), used.end(), name) != used.end() || value.is_null()) continue;
      append_flag(out, spec.find_param(name), name, value);
    }
  }
  return out;
}

}  // namespace ct::disclosure
