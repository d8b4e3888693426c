#include "disclosure/product.h"

#include <cstdio>
#include <cstdlib>

#include "disclosure/disclosure_ops.h"
#include "domains/call_text.h"

namespace ct {

const Registry& registry() {
  static const Registry instance = [] {
    Registry r;
    register_domain_operations(r);
    disclosure::register_disclosure_operations(r);
    // Every operation a layer below the edges may suggest is one of the product's (under tests,
    // when the process starts; a release build runs the code the tests ran).
    if (checking_contracts()) {
      for (std::string_view unknown : unknown_suggested_operations(r)) {
        std::fprintf(stderr, "ct: core/suggested_operations.h names %.*s, which is no operation\n",
                     static_cast<int>(unknown.size()), unknown.data());
        std::abort();
      }
    }
    return r;
  }();
  return instance;
}

}  // namespace ct
