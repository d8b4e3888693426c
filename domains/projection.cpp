#include "domains/projection.h"

#include <algorithm>

#include "domains/envelope.h"
#include "domains/params.h"

namespace ct {
namespace {

bool selected(std::span<const std::string> fields, std::string_view key) {
  return std::find(fields.begin(), fields.end(), key) != fields.end();
}

json::Value select_row(const json::Value& row, std::span<const std::string> fields) {
  if (!row.is_object()) return row;
  json::Value out = json::Value::object();
  for (const auto& [key, value] : row.as_object()) {
    if (key == "children" && value.is_array()) {
      out.set(key, select_fields(value, fields));
    } else if (selected(fields, key)) {
      out.set(key, value);
    }
  }
  return out;
}

}  // namespace

ParamSpec detail_param(std::string_view default_json) {
  return ParamSpec{.name = "detail", .type = ParamType::Enum, .default_json = default_json,
                   .choices = {"compact", "full"}, .description = "compact: key fields only; full: every field"};
}

ParamSpec known_hash_param() {
  return ParamSpec{.name = "knownHash", .type = ParamType::String, .max = 64,
                   .description = "The _meta.hash of a reply you have: unchanged, it is not sent again (\"\" to get one)"};
}

ParamSpec fields_param(std::span<const std::string_view> row_fields) {
  return ParamSpec{.name = "fields", .type = ParamType::Array, .min = 1,
                   .choices = {row_fields.begin(), row_fields.end()}, .item_type = ParamType::Enum,
                   .description = "Only these fields of each row, e.g. [\"id\",\"title\"] (cheaper replies)"};
}

void add_projection_params(OperationSpec& spec) {
  if (spec.known_hash && !spec.find_param("knownHash")) spec.params.push_back(known_hash_param());
  if (!spec.list_like()) return;
  if (!spec.find_param("detail")) spec.params.push_back(detail_param(R"("compact")"));
  if (!spec.find_param("fields")) spec.params.push_back(fields_param(spec.row_fields));
}

ParamSpec limit_param(std::string_view default_json) {
  return {.name = "limit", .type = ParamType::Int, .default_json = default_json, .min = 1, .max = 500,
          .description = "Rows per page"};
}

ParamSpec offset_param() {
  return {.name = "offset", .type = ParamType::Int, .default_json = "0", .min = 0,
          .description = "Rows to skip (from _meta.page.nextOffset)"};
}

bool wants_full(const Params& params) {
  return params.has("fields") || (params.has("detail") && params.str("detail") == "full");
}

json::Value select_fields(const json::Value& rows, std::span<const std::string> fields) {
  if (!rows.is_array()) return select_row(rows, fields);
  json::Value out = json::Value::array();
  for (const auto& row : rows.as_array()) out.push_back(select_row(row, fields));
  return out;
}

std::size_t rows_within(const json::Value& data, std::int64_t max_bytes, const AdviceWriter& agents) {
  if (!data.is_array()) return 0;
  const auto& rows = data.as_array();
  std::int64_t used = 2;  // []
  std::string text;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    text.clear();
    write_json(text, rows[i], agents);
    used += static_cast<std::int64_t>(text.size()) + (i > 0 ? 1 : 0);
    if (used > max_bytes && i > 0) return i;
  }
  return rows.size();
}

json::Value rows_as_table(const json::Value& rows) {
  if (!rows.is_array()) return rows;
  std::vector<std::string> columns;
  for (const auto& row : rows.as_array()) {
    if (!row.is_object()) return rows;
    for (const auto& [key, value] : row.as_object())
      if (std::find(columns.begin(), columns.end(), key) == columns.end()) columns.push_back(key);
  }
  json::Value every = json::Value::object();
  if (rows.size() >= 2) {
    for (const auto& column : columns) {
      const json::Value& first = rows.as_array().front()[column];
      bool same = !first.is_null();
      for (const auto& row : rows.as_array()) same = same && row[column] == first;
      if (same) every.set(column, first);
    }
  }
  json::Value table = json::Value::object();
  json::Value names = json::Value::array();
  for (const auto& column : columns)
    if (!every.contains(column)) names.push_back(column);
  json::Value out_rows = json::Value::array();
  for (const auto& row : rows.as_array()) {
    json::Value cells = json::Value::array();
    for (const auto& name : names.as_array()) cells.push_back(row[name.as_string()]);
    out_rows.push_back(std::move(cells));
  }
  table.set("columns", std::move(names));
  table.set("rows", std::move(out_rows));
  if (!every.empty()) table.set("every", std::move(every));
  return table;
}

json::Value table_as_rows(const json::Value& table) {
  if (!table.is_object() || !table["columns"].is_array() || !table["rows"].is_array()) return table;
  json::Value rows = json::Value::array();
  const auto& columns = table["columns"].as_array();
  for (const auto& cells : table["rows"].as_array()) {
    json::Value row = json::Value::object();
    for (std::size_t i = 0; i < columns.size() && cells.is_array() && i < cells.size(); ++i)
      if (!cells.as_array()[i].is_null()) row.set(columns[i].as_string(), cells.as_array()[i]);
    if (table["every"].is_object())
      for (const auto& [key, value] : table["every"].as_object()) row.set(key, value);
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<json::Value> reply_rows(const json::Value& data) {
  json::Value rows = table_as_rows(data);
  return rows.is_array() ? std::move(rows.as_array()) : std::vector<json::Value>{};
}

void shape_list_reply(const OperationSpec& spec, const Params& params, Reply& reply, std::int64_t max_bytes,
                      const AdviceWriter& agents) {
  if (!reply.data.is_array()) return;
  if (params.has("fields")) reply.data = select_fields(reply.data, params.strings("fields"));
  const std::size_t rows = reply.data.size();
  const std::size_t kept = rows_within(reply.data, max_bytes, agents);
  if (kept < rows) {
    Page page;
    page.offset = reply.page ? reply.page->offset : params.opt_integer("offset").value_or(0);
    page.limit = static_cast<std::int64_t>(kept);
    page.total = reply.page ? reply.page->total : -1;
    page.total_at_least = reply.page && reply.page->total_at_least;
    reply.data.as_array().resize(kept);
    reply.page = page;
    std::string of = page.total >= 0 ? (page.total_at_least ? " of at least " : " of ") + std::to_string(page.total) : "";
    reply.warnings.push_back("cut to " + std::to_string(kept) + of + " rows to stay under output.maxReplyBytes (" +
                             std::to_string(max_bytes) + "): continue with offset " +
                             std::to_string(page.next_offset()) + ", or ask for fewer fields");
  }
  if (reply.page && !reply.page->has_more() && reply.page->offset == 0) reply.page.reset();
  if (spec.table_rows && !(params.has("detail") && params.str("detail") == "full")) reply.data = rows_as_table(reply.data);
}

void drop_echoes(const json::Value& sent, json::Value& data) {
  if (!data.is_object() || !sent.is_object() || sent["detail"] == json::Value("full")) return;
  std::vector<std::string> echoed;
  for (const auto& [key, value] : data.as_object())
    if (sent.contains(key) && sent[key] == value) echoed.push_back(key);
  for (const auto& key : echoed) data.erase(key);
}

}  // namespace ct
