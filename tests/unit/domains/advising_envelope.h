// An envelope carrying advice in each place it can: in its data (a value and a row's field) and in
// its warnings — what the envelope tests of domains/ and of the edges (cli/) write.
#pragma once

#include "core/advice.h"
#include "domains/envelope.h"

namespace ct::test {

inline Envelope advising() {
  Envelope envelope;
  envelope.data = json::Value::object();
  envelope.data.set("fix", (call("tasks.show", {{"id", "T001"}}) + " shows it").to_value());
  json::Value rows = json::Value::array();
  rows.push_back(json::Value(json::Value::Object{{"check", "db"}, {"fix", call("system.health").to_value()}}));
  envelope.data.set("rows", std::move(rows));
  envelope.warnings.emplace_back("plain");
  envelope.warnings.push_back("reopen it: " + call("tasks.reopen", {{"id", "T001"}}));
  return envelope;
}

}  // namespace ct::test
