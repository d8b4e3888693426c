#include "domains/envelope.h"

#include "domains/call_check.h"

namespace ct {
namespace {

/// Each call of `advice` checked as every edge checks the calls it writes (under tests).
void check_calls(const Advice& advice, const Registry& registry) {
  for (const auto& part : advice.parts())
    if (part.call) (void)called_operation(*part.call, registry);
}

json::Value meta_value(const Envelope& envelope, const AdviceWriter& writer) {
  json::Value meta = envelope.meta.is_object() ? envelope.meta : json::Value::object();
  if (envelope.note) meta.set("code", to_string(*envelope.note));
  if (!envelope.warnings.empty()) {
    json::Value warnings = json::Value::array();
    for (const auto& warning : envelope.warnings) warnings.push_back(writer.write(warning));
    meta.set("warnings", std::move(warnings));
  }
  if (envelope.page) {
    // The caller knows its own limit and offset: only what it does not know is sent.
    json::Value page = json::Value::object();
    if (envelope.page->total >= 0) page.set(envelope.page->total_at_least ? "totalAtLeast" : "total", envelope.page->total);
    page.set("hasMore", envelope.page->has_more());
    if (envelope.page->has_more()) page.set("nextOffset", envelope.page->next_offset());
    meta.set("page", std::move(page));
  }
  return meta;
}

}  // namespace

int Envelope::exit_code() const {
  if (!success) return error ? error->exit_code() : 1;
  if (note) return ct::exit_code(*note);
  return 0;
}

Envelope failure(Error error) {
  Envelope envelope;
  envelope.success = false;
  envelope.error = std::move(error);
  return envelope;
}

void write_json(std::string& out, const json::Value& value, const AdviceWriter& writer) {
  if (value.is_array()) {
    out += '[';
    bool first = true;
    for (const auto& item : value.as_array()) {
      if (!first) out += ',';
      first = false;
      write_json(out, item, writer);
    }
    out += ']';
  } else if (value.is_object()) {
    if (Advice::is_value(value))
      if (std::optional<Advice> advice = Advice::from_value(value)) return writer.write(*advice).dump_to(out);
    out += '{';
    bool first = true;
    for (const auto& [key, item] : value.as_object()) {
      if (!first) out += ',';
      first = false;
      json::write_string(out, key);
      out += ':';
      write_json(out, item, writer);
    }
    out += '}';
  } else {
    value.dump_to(out);
  }
}

json::Value written(const json::Value& value, const AdviceWriter& writer) {
  if (value.is_array()) {
    json::Value out = json::Value::array();
    for (const auto& item : value.as_array()) out.push_back(written(item, writer));
    return out;
  }
  if (!value.is_object()) return value;
  if (Advice::is_value(value))
    if (std::optional<Advice> advice = Advice::from_value(value)) return writer.write(*advice);
  json::Value out = json::Value::object();
  for (const auto& [key, item] : value.as_object()) out.set(key, written(item, writer));
  return out;
}

std::string text_of(const Advice& advice, const AdviceWriter& writer) {
  json::Value text = writer.write(advice);
  return text.is_string() ? text.as_string() : text.dump();
}

json::Value error_to_value(const Error& error, const AdviceWriter& writer) {
  json::Value out = json::Value::object();
  out.set("code", to_string(error.code));
  out.set("exitCode", error.exit_code());
  out.set("message", error.message);
  if (!error.fix.empty()) out.set("fix", writer.write(error.fix));
  if (!error.alternatives.empty()) {
    json::Value alternatives = json::Value::array();
    for (const auto& alt : error.alternatives) {
      json::Value item = json::Value::object();
      item.set("action", alt.action);
      item.set("operation", alt.operation);
      alternatives.push_back(std::move(item));
    }
    out.set("alternatives", std::move(alternatives));
  }
  out.set("retryable", error.retryable());
  if (error.retry_after_seconds) out.set("retryAfter", *error.retry_after_seconds);
  if (!error.details.empty()) out.set("details", written(error.details, writer));
  return out;
}

json::Value to_value(const Envelope& envelope, const AdviceWriter& writer) {
  json::Value out = json::Value::object();
  out.set("success", envelope.success);
  if (envelope.success) {
    out.set("data", written(envelope.data, writer));
  } else if (envelope.error) {
    out.set("error", error_to_value(*envelope.error, writer));
  }
  json::Value meta = meta_value(envelope, writer);
  if (!meta.empty()) out.set("_meta", std::move(meta));
  return out;
}

std::string to_json(const Envelope& envelope, const AdviceWriter& writer) {
  // As to_value(…).dump(), without copying the data first.
  std::string out = envelope.success ? R"({"success":true)" : R"({"success":false)";
  if (envelope.success) {
    out += R"(,"data":)";
    write_json(out, envelope.data, writer);
  } else if (envelope.error) {
    out += R"(,"error":)";
    error_to_value(*envelope.error, writer).dump_to(out);
  }
  json::Value meta = meta_value(envelope, writer);
  if (!meta.empty()) {
    out += R"(,"_meta":)";
    meta.dump_to(out);
  }
  out += '}';
  return out;
}

Envelope envelope_from_value(const json::Value& value) {
  Envelope envelope;
  envelope.data = value["data"];
  const json::Value& meta = value["_meta"];
  if (meta["warnings"].is_array())
    for (const auto& warning : meta["warnings"].as_array()) {
      if (warning.is_string()) envelope.warnings.emplace_back(warning.as_string());
      else if (std::optional<Advice> advice = Advice::from_value(warning)) envelope.warnings.push_back(std::move(*advice));
    }
  if (meta["code"].is_string()) envelope.note = parse_error_code(meta["code"].as_string());
  return envelope;
}

json::Value AdviceAsValue::write(const Advice& advice) const {
  // Text alone stays text: a remembered warning without a call reads back as it was sent.
  if (!advice.has_calls()) return advice.plain_text();
  check_calls(advice, registry_);
  return advice.to_value();
}

json::Value AdviceAsJson::write(const Advice& advice) const {
  if (!advice.has_calls()) return advice.plain_text();
  check_calls(advice, registry_);
  return advice.parts_json();
}

}  // namespace ct
