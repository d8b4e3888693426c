#include "core/text.h"

#include <atomic>
#include <cstdio>
#include <random>

#include "core/clock.h"

namespace ct {

std::size_t utf8_length(std::string_view text) {
  std::size_t count = 0;
  for (unsigned char c : text)
    if ((c & 0xC0) != 0x80) ++count;
  return count;
}

std::string join(const std::vector<std::string>& items, std::string_view separator) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += separator;
    out += items[i];
  }
  return out;
}

std::string clip(std::string_view text, std::size_t max_chars) {
  if (max_chars == 0) return "";
  if (utf8_length(text) <= max_chars) return std::string(text);
  std::size_t kept = 0, end = 0;
  for (; end < text.size(); ++end) {
    if ((static_cast<unsigned char>(text[end]) & 0xC0) != 0x80 && kept++ == max_chars - 1) break;
  }
  return std::string(text.substr(0, end)) + "…";
}

bool has_control_characters(std::string_view text, bool allow_newlines) {
  for (unsigned char c : text) {
    if (c == '\t') continue;
    if ((c == '\n' || c == '\r') && allow_newlines) continue;
    if (c < 0x20 || c == 0x7F) return true;
  }
  return false;
}

std::string_view trim(std::string_view text) {
  const char* spaces = " \t\r\n\f\v";
  auto begin = text.find_first_not_of(spaces);
  if (begin == std::string_view::npos) return {};
  auto end = text.find_last_not_of(spaces);
  return text.substr(begin, end - begin + 1);
}

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    auto newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    if (newline == std::string_view::npos) break;
    text.remove_prefix(newline + 1);
  }
  return lines;
}

std::vector<std::string> split_list(std::string_view text, char separator) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t at = text.find(separator, start);
    std::string_view piece = trim(text.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (!piece.empty()) out.emplace_back(piece);
    if (at == std::string_view::npos) break;
    start = at + 1;
  }
  return out;
}

std::string to_lower_ascii(std::string_view text) {
  std::string out(text);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

std::string random_hex(std::size_t bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes * 2);
  if (test_mode()) {
    static std::atomic<unsigned long long> counter{1};
    unsigned long long value = counter++;
    for (std::size_t i = 0; i < bytes * 2; ++i) {
      out += kHex[value & 0xF];
      value >>= 4;
    }
    return out;
  }
  // std::random_device reads the kernel's CSPRNG (getrandom / /dev/urandom) on Linux.
  std::random_device device;
  for (std::size_t i = 0; i < bytes; i += 4) {
    unsigned int word = device();
    for (std::size_t j = 0; j < 4 && i + j < bytes; ++j) {
      unsigned char byte = static_cast<unsigned char>(word >> (j * 8));
      out += kHex[byte >> 4];
      out += kHex[byte & 0xF];
    }
  }
  return out;
}

}  // namespace ct
