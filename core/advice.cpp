#include "core/advice.h"

#include <algorithm>
#include <utility>

namespace ct {
namespace {

void map_strings(json::Value& params, const std::function<std::string(const std::string&)>& change) {
  if (params.is_string()) params.as_string() = change(params.as_string());
  if (params.is_array())
    for (auto& item : params.as_array()) map_strings(item, change);
  if (params.is_object())
    for (auto& [key, item] : params.as_object()) map_strings(item, change);
}

/// The one member of an advice value (Advice::to_value).
constexpr std::string_view kValueKey = "$advice";

/// The parts as JSON; `keep_form` keeps how a call's params are written (Call::json_params).
json::Value parts_value(const std::vector<Advice::Part>& parts, bool keep_form) {
  json::Value out = json::Value::array();
  for (const auto& part : parts) {
    if (!part.call) {
      out.push_back(part.text);
      continue;
    }
    json::Value call = json::Value::object();
    call.set("operation", part.call->operation);
    if (!part.call->params.is_null()) call.set("params", part.call->params);
    if (keep_form && part.call->json_params) call.set("json", true);
    out.push_back(std::move(call));
  }
  return out;
}

}  // namespace

std::string_view Call::domain() const {
  std::string_view full(operation);
  return full.substr(0, full.find('.'));
}

std::string_view Call::name() const {
  std::string_view full(operation);
  std::size_t dot = full.find('.');
  return dot == std::string_view::npos ? std::string_view() : full.substr(dot + 1);
}

Advice::Advice(std::string text) {
  if (!text.empty()) parts_.push_back({std::move(text), std::nullopt});
}

Advice::Advice(Call call) { parts_.push_back({{}, std::move(call)}); }

const Call* Advice::only_call() const {
  return parts_.size() == 1 && parts_.front().call ? &*parts_.front().call : nullptr;
}

bool Advice::has_calls() const {
  return std::any_of(parts_.begin(), parts_.end(), [](const Part& part) { return part.call.has_value(); });
}

std::string Advice::render(const std::function<std::string(const Call&)>& write) const {
  std::string out;
  for (const auto& part : parts_) out += part.call ? write(*part.call) : part.text;
  return out;
}

std::string Advice::plain_text() const {
  return render([](const Call& call) { return call.operation; });
}

Advice& Advice::substitute(std::string_view placeholder, std::string_view value) {
  return map_text([&](const std::string& text) {
    std::string out = text;
    for (std::size_t at = out.find(placeholder); at != std::string::npos; at = out.find(placeholder, at + value.size()))
      out.replace(at, placeholder.size(), value);
    return out;
  });
}

Advice& Advice::map_text(const std::function<std::string(const std::string&)>& change) {
  for (auto& part : parts_) {
    if (part.call) map_strings(part.call->params, change);
    else part.text = change(part.text);
  }
  return *this;
}

Advice& Advice::operator+=(Advice more) {
  for (auto& part : more.parts_) {
    // Adjacent text stays one part.
    if (!part.call && !parts_.empty() && !parts_.back().call) parts_.back().text += part.text;
    else parts_.push_back(std::move(part));
  }
  return *this;
}

bool Advice::is_value(const json::Value& value) {
  return value.is_object() && value.size() == 1 && value.as_object().front().first == kValueKey;
}

json::Value Advice::to_value() const {
  json::Value out = json::Value::object();
  out.set(kValueKey, parts_value(parts_, /*keep_form=*/true));
  return out;
}

std::optional<Advice> Advice::from_value(const json::Value& value) {
  if (!is_value(value) || !value.as_object().front().second.is_array()) return std::nullopt;
  Advice out;
  for (const auto& part : value.as_object().front().second.as_array()) {
    if (part.is_string()) {
      out += Advice(part.as_string());
    } else if (part.is_object() && part["operation"].is_string()) {
      out += Advice(Call{part["operation"].as_string(), part["params"], part["json"] == json::Value(true)});
    } else {
      return std::nullopt;
    }
  }
  return out;
}

json::Value Advice::parts_json() const { return parts_value(parts_, /*keep_form=*/false); }

Advice call(OperationName operation, json::Value::Object params) {
  return Advice(Call{std::string(operation.view()), json::Value(std::move(params))});
}

Advice call(OperationName operation) { return Advice(Call{std::string(operation.view()), json::Value()}); }

}  // namespace ct
