#include "core/sha256.h"

#include <nettle/sha2.h>

#include <cstdint>

namespace ct {

std::string sha256_hex(std::string_view data) {
  Sha256 hash;
  hash.update(data);
  return hash.hex();
}

Sha256::Sha256() : context_(std::make_unique<sha256_ctx>()) { sha256_init(context_.get()); }
Sha256::~Sha256() = default;
Sha256::Sha256(Sha256&&) noexcept = default;
Sha256& Sha256::operator=(Sha256&&) noexcept = default;

void Sha256::update(std::string_view data) {
  sha256_update(context_.get(), data.size(), reinterpret_cast<const std::uint8_t*>(data.data()));
}

// sha256_digest also resets the context, so the object can hash again.
std::string Sha256::hex() {
  static constexpr char kHex[] = "0123456789abcdef";
  std::uint8_t digest[SHA256_DIGEST_SIZE];
  sha256_digest(context_.get(), SHA256_DIGEST_SIZE, digest);
  std::string out;
  out.reserve(2 * SHA256_DIGEST_SIZE);
  for (std::uint8_t byte : digest) {
    out += kHex[byte >> 4];
    out += kHex[byte & 0xF];
  }
  return out;
}

}  // namespace ct
