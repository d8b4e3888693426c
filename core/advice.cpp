#include "core/advice.h"

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

Advice call(OperationName operation, json::Value::Object params) {
  return Advice(Call{std::string(operation.view()), json::Value(std::move(params))});
}

Advice call(OperationName operation) { return Advice(Call{std::string(operation.view()), json::Value()}); }

}  // namespace ct
