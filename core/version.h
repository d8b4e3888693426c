#pragma once
#include <string_view>
namespace ct {
/// The product version (from CMake's project version).
std::string_view product_version();
}  // namespace ct
