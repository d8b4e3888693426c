// Calls through the router for the in-process benchmarks: requests built in one line, and a call
// that fails loudly (a benchmark of error replies would measure nothing).
#pragma once

#include <stdexcept>
#include <string>

#include "core/json.h"
#include "domains/router.h"

namespace ct::bench {

inline std::string describe(const Request& request) {
  return std::string(to_string(request.gateway)) + " " + request.domain + "." + request.operation + " " +
         request.params.dump();
}

/// Dispatches and serialises; throws when the call fails.
inline std::string call(Router& router, const Request& request) {
  Envelope envelope = router.dispatch(request);
  std::string out = to_json(envelope);
  if (!envelope.success) throw std::runtime_error(describe(request) + " failed: " + out);
  return out;
}

inline Request mutate(std::string domain, std::string operation, json::Value params) {
  return Request{Gateway::Mutate, std::move(domain), std::move(operation), std::move(params)};
}
inline Request query(std::string domain, std::string operation, json::Value params) {
  return Request{Gateway::Query, std::move(domain), std::move(operation), std::move(params)};
}

}  // namespace ct::bench
