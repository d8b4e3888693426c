#include "gateway/jsonrpc.h"

namespace ct::mcp {

std::string rpc_error(std::string_view id_json, RpcError code, std::string_view message, const json::Value& data) {
  std::string out = R"({"jsonrpc":"2.0","id":)";
  out += id_json;
  out += R"(,"error":{"code":)";
  out += std::to_string(static_cast<int>(code));
  out += R"(,"message":)";
  json::write_string(out, message);
  if (!data.is_null()) {
    out += R"(,"data":)";
    data.dump_to(out);
  }
  out += "}}";
  return out;
}

std::string rpc_result(std::string_view id_json, std::string_view result_json) {
  std::string out = R"({"jsonrpc":"2.0","id":)";
  out += id_json;
  out += R"(,"result":)";
  out += result_json;
  out += '}';
  return out;
}

}  // namespace ct::mcp
