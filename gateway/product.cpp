#include "gateway/product.h"

#include <cstdio>
#include <cstdlib>

#include "disclosure/disclosure_ops.h"
#include "gateway/mcp_syntax.h"
#include "domains/call_check.h"

namespace ct {
namespace {

/// The product's operations, and how what agents receive writes advice (Registry::agent_writer).
struct Product {
  Registry operations;
  McpAdvice agents{operations};

  Product() {
    register_domain_operations(operations);
    disclosure::register_disclosure_operations(operations);
    operations.set_agent_writer(&agents);
    // Every operation a layer below the edges may suggest is one of the product's (under tests,
    // when the process starts; a release build runs the code the tests ran).
    if (checking_contracts()) {
      for (std::string_view unknown : unknown_suggested_operations(operations)) {
        std::fprintf(stderr, "ct: core/suggested_operations.h names %.*s, which is no operation\n",
                     static_cast<int>(unknown.size()), unknown.data());
        std::abort();
      }
    }
  }
};

}  // namespace

const Registry& registry() {
  // Never destroyed: freeing the registry at exit cost every `ct` command ~325,000 instructions
  // (issue 56), and the process's memory goes back whole when it ends.
  static const Product* const product = new Product;
  return product->operations;
}

}  // namespace ct
