#include "disclosure/product.h"

#include "disclosure/disclosure_ops.h"

namespace ct {

const Registry& registry() {
  static const Registry instance = [] {
    Registry r;
    register_domain_operations(r);
    disclosure::register_disclosure_operations(r);
    return r;
  }();
  return instance;
}

}  // namespace ct
