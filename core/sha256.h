// SHA-256 (from Nettle, a small Debian-packaged library that loads in a fraction of a millisecond).
#pragma once

#include <string>
#include <string_view>

namespace ct {

/// Lowercase hex of the SHA-256 of `data`.
std::string sha256_hex(std::string_view data);

}  // namespace ct
