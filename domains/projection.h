// Token-saving projections of list-like operations (docs/architecture.md §6; issue 5): the `detail` and
// `fields` params are defined here once. The registry adds them to every operation that declares
// `row_fields`, handlers build compact or full rows (wants_full), and the router selects the
// fields and cuts a reply larger than output.maxReplyBytes — with `_meta.page` {hasMore,
// nextOffset} and a warning, never silently — so the caller continues with `offset`.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/json.h"
#include "domains/registry.h"

namespace ct {

class Params;

/// `detail`: compact (key fields) or full (every field); `default_json` is "\"compact\"" or "\"full\"".
ParamSpec detail_param(std::string_view default_json);
/// `fields`: the row fields to keep, each one of `row_fields` (an unknown name is E_INVALID_PARAMS
/// with the valid names and a did-you-mean).
ParamSpec fields_param(std::span<const std::string_view> row_fields);
/// Appends `detail` (compact by default, unless the spec declares its own) and `fields` to a
/// list-like spec's params, and `knownHash` to a spec with known_hash. Called by Registry::add.
void add_projection_params(OperationSpec& spec);

/// `knownHash`, of a spec with `known_hash`: with it, the reply carries `_meta.hash` (16 hex, of
/// its data and page), or only {unchanged:true} when the caller's hash is still the reply's — a
/// caller re-reading a task or a page pays only for a change ("" asks for a first hash).
/// pipeline::shape answers it.
ParamSpec known_hash_param();

/// The paging params of a list-like operation: `limit` (1–500, rows per page) and `offset` (rows
/// to skip, from _meta.page.nextOffset).
ParamSpec limit_param(std::string_view default_json);
ParamSpec offset_param();

/// Whether a handler must build full rows: detail 'full', or a `fields` selection (which may name
/// any field of a full row).
bool wants_full(const Params& params);

/// Each row of `rows` keeps only `fields`, in the row's own order; nested `children` (a tree)
/// are kept and projected the same way.
json::Value select_fields(const json::Value& rows, std::span<const std::string> fields);

/// Cuts an array `data` to the rows that fit in `max_bytes` of compact JSON, advice in them as
/// `agents` writes it (at least one row, so a caller always makes progress). Returns the number of
/// rows kept (all of them when it fits).
std::size_t rows_within(const json::Value& data, std::int64_t max_bytes, const AdviceWriter& agents);

/// Rows of flat objects as a table, each field named once:
/// {"columns":[…],"rows":[[…],…],"every":{field: value}} — a column whose value is the same in
/// every row (of two or more) moves to `every`; a row without a field has null in its column.
/// Anything else (not an array, or a row that is not an object) comes back unchanged.
json::Value rows_as_table(const json::Value& rows);
/// The inverse: a table back to rows of objects (null cells left out); other values unchanged.
json::Value table_as_rows(const json::Value& table);
/// The rows of a list reply as objects, whether it came as rows or as a table; none for any other
/// value.
std::vector<json::Value> reply_rows(const json::Value& data);

/// What the router does with a list-like operation's reply: selects `fields`, cuts it to
/// `max_bytes` (page: offset and the rows kept; warning: how to get the rest), drops a page
/// that says nothing (first page, nothing more), and turns compact rows into a table when the
/// operation declares `table_rows`.
void shape_list_reply(const OperationSpec& spec, const Params& params, Reply& reply, std::int64_t max_bytes,
                      const AdviceWriter& agents);

/// What the router does with the reply of a kept change: a mutation answers only what the caller
/// does not already know, so each top-level field of an object `data` whose value is exactly what
/// the call sent under the same name (`sent`: the params as written; the id, a value set as given)
/// is left out. A value made canonical ("T1" kept as "T001", "epic:t1" as "epic:T001") differs and
/// stays. Nothing is left out with detail 'full', which asks for the whole record.
void drop_echoes(const json::Value& sent, json::Value& data);

}  // namespace ct
