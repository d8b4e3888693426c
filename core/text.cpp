#include "core/text.h"

#include <algorithm>
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

bool is_template_variable(std::string_view text) {
  auto word = [](std::string_view name, bool digits_only) {
    if (name.empty() || name.size() > 64) return false;
    const bool all_digits = std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (digits_only || all_digits) return all_digits;
    if (name.front() >= '0' && name.front() <= '9') return false;
    return std::all_of(name.begin(), name.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    });
  };
  if (text.starts_with("${") && text.ends_with('}')) return word(text.substr(2, text.size() - 3), false);
  if (text.starts_with("{{") && text.ends_with("}}")) return word(trim(text.substr(2, text.size() - 4)), false);
  if (text.starts_with('$')) return word(text.substr(1), false);
  return false;
}

char32_t next_code_point(std::string_view text, std::size_t& i, bool* valid) {
  auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  unsigned char lead = byte(i);
  std::size_t length = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xE ? 3 : (lead >> 3) == 0x1E ? 4 : 0;
  auto as_itself = [&] {
    ++i;
    if (valid) *valid = lead < 0x80;
    return static_cast<char32_t>(lead);
  };
  if (length <= 1 || i + length > text.size()) return as_itself();
  char32_t c = lead & (0x7F >> length);
  for (std::size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return as_itself();
    c = (c << 6) | (byte(i + k) & 0x3F);
  }
  // What UTF-8 forbids, as any strict decoder (simdjson's among them): overlong forms, UTF-16
  // surrogates, code points beyond U+10FFFF.
  static constexpr char32_t kLeast[] = {0, 0, 0x80, 0x800, 0x10000};
  if (c < kLeast[length] || (c >= 0xD800 && c <= 0xDFFF) || c > 0x10FFFF) return as_itself();
  i += length;
  if (valid) *valid = true;
  return c;
}

namespace {

bool is_bidi_control(char32_t c) { return (c >= 0x202A && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069); }

}  // namespace

std::optional<char32_t> first_control_character(std::string_view text, bool allow_newlines) {
  for (std::size_t i = 0; i < text.size();) {
    // ASCII first, byte by byte: nearly all text is, and only multi-byte sequences need decoding.
    unsigned char b = static_cast<unsigned char>(text[i]);
    if (b < 0x80) {
      ++i;
      if (b == '\t' || (b >= 0x20 && b != 0x7F)) continue;
      if (allow_newlines && (b == '\n' || (b == '\r' && i < text.size() && text[i] == '\n'))) continue;
      return static_cast<char32_t>(b);
    }
    char32_t c = next_code_point(text, i);
    if ((c >= 0x80 && c <= 0x9F) || is_bidi_control(c)) return c;
  }
  return std::nullopt;
}

bool has_control_characters(std::string_view text, bool allow_newlines) {
  return first_control_character(text, allow_newlines).has_value();
}

std::string code_point_name(char32_t code_point) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string digits;
  for (char32_t c = code_point; c != 0 || digits.size() < 4; c >>= 4) digits.insert(digits.begin(), kHex[c & 0xF]);
  return "U+" + digits;
}

std::string terminal_safe(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 8);
  for (std::size_t i = 0; i < text.size();) {
    std::size_t start = i;
    bool valid = true;
    char32_t cp = next_code_point(text, i, &valid);
    if (cp < 0x20 && cp != '\t' && cp != '\n') {
      out += '^';
      out += static_cast<char>(cp + 0x40);
    } else if (cp == 0x7F) {
      out += "^?";
    } else if ((cp >= 0x80 && cp <= 0x9F) || is_bidi_control(cp)) {
      out += "<" + code_point_name(cp) + ">";
    } else if (!valid) {
      out += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER
    } else {
      out.append(text.substr(start, i - start));
    }
  }
  return out;
}

void make_terminal_safe(json::Value& value) {
  if (value.is_string()) {
    value.as_string() = terminal_safe(value.as_string());
  } else if (value.is_array()) {
    for (auto& item : value.as_array()) make_terminal_safe(item);
  } else if (value.is_object()) {
    for (auto& [key, item] : value.as_object()) {
      key = terminal_safe(key);
      make_terminal_safe(item);
    }
  }
}

std::string echo(std::string_view text) {
  std::size_t length = utf8_length(text);
  if (length <= kEchoChars) return "'" + terminal_safe(text) + "'";
  // Cut before making it safe: only the part shown is looked at.
  std::size_t end = 0;
  for (std::size_t kept = 0; end < text.size() && kept < kEchoChars; ++kept) next_code_point(text, end);
  return "'" + terminal_safe(text.substr(0, end)) + "…' (" + std::to_string(length) + " characters)";
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

std::size_t estimate_tokens(std::string_view text) {
  // o200k averages about 3.9 bytes per token on these texts (markdown prose, JSON, identifiers).
  return (text.size() * 10 + 38) / 39;
}

}  // namespace ct
