#include "core/version.h"
namespace ct {
std::string_view product_version() { return CT_VERSION; }
}  // namespace ct
