// SHA-256 (from Nettle, a small Debian-packaged library that loads in a fraction of a millisecond).
#pragma once

#include <memory>
#include <string>
#include <string_view>

struct sha256_ctx;  // Nettle's state, kept out of this header

namespace ct {

/// Lowercase hex of the SHA-256 of `data`.
std::string sha256_hex(std::string_view data);

/// SHA-256 over data fed in pieces, for files read in chunks (a checksum without holding the
/// whole file in memory).
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(Sha256&&) noexcept;
  Sha256& operator=(Sha256&&) noexcept;
  void update(std::string_view data);
  /// Lowercase hex of the digest of everything fed so far; the hash starts over afterwards.
  std::string hex();

 private:
  std::unique_ptr<sha256_ctx> context_;
};

}  // namespace ct
