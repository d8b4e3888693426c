// chain: the audit chain (engines/store/audit_chain.h) over any values a call can carry. A row is
// hashed over its values as written when it is appended, and again over the values read back from
// what the store kept (each JSON value's text, parsed) when validate.audit verifies the chain:
//   - what is written parses again;
//   - the hash over the values as read back is the hash over them as written, for every value —
//     numbers of every kind (-0.0, 1e300, 2^63, 1.0), strings with every escape, any nesting.
// (Issue 50 item 4: intent.confidence -0.0 was written "-0", read back as the integer 0, and the
// chain reported tampering from that row on, for good.)
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/json_parse.h"
#include "engines/store/audit_chain.h"
#include "fuzz_support.h"

using namespace ct;

namespace {

/// A value as a store keeps it and gives it back: its text, parsed.
json::Value kept(const json::Value& value, std::string_view input) {
  if (value.is_null()) return value;
  const std::string text = value.dump();
  auto back = json::parse(text);
  if (!back) fuzz::finding("a value as written does not parse", input, text + " -> " + back.error().message);
  return std::move(*back);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text = fuzz::as_text(data, size);
  auto parsed = json::parse(text);
  if (!parsed) return 0;
  AuditEntry row;
  row.seq = 7;
  row.at = 1767225600000;
  row.agent = "fuzz";
  row.operation = "tasks.update";
  row.task_id = "T001";
  if (parsed->is_object()) {
    row.params = *parsed;
    row.intent = (*parsed)["intent"];
  } else {
    row.params.set("value", *parsed);
  }
  row.changes.push_back({"T001", "priority", *parsed, row.params});
  if (parsed->is_array())
    for (const auto& item : parsed->as_array()) row.changes.push_back({"T001", "notes", item, json::Value()});
  const std::string appended = audit_hash("previous", row);

  AuditEntry read = row;
  read.params = kept(row.params, text);
  read.intent = kept(row.intent, text);
  for (auto& change : read.changes) {
    change.before = kept(change.before, text);
    change.after = kept(change.after, text);
  }
  const std::string verified = audit_hash("previous", read);
  if (verified != appended)
    fuzz::finding("a row's hash over its values as read back differs from the hash it was written with", text,
                  row.params.dump() + " -> " + read.params.dump());
  return 0;
}
