#include "core/stored_text.h"

#include <algorithm>
#include <array>

#include "core/sha256.h"
#include "core/text.h"

namespace ct {
namespace {

constexpr char32_t kIgnored = 0;

/// Characters that show nothing (zero-width spaces and joiners, the byte-order mark, soft hyphen,
/// variation selectors, tags): a reader does not see them, so the checks skip them.
bool invisible(char32_t cp) {
  return cp == 0xAD || cp == 0x34F || cp == 0x61C || cp == 0x115F || cp == 0x1160 || cp == 0x17B4 || cp == 0x17B5 ||
         (cp >= 0x180B && cp <= 0x180F) || (cp >= 0x200B && cp <= 0x200F) || (cp >= 0x202A && cp <= 0x202E) ||
         (cp >= 0x2060 && cp <= 0x206F) || (cp >= 0xFE00 && cp <= 0xFE0F) || cp == 0xFEFF ||
         (cp >= 0xE0000 && cp <= 0xE0FFF);
}

/// Spaces other than ASCII's that indent a line as well.
bool wide_space(char32_t cp) {
  return cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

/// The ASCII character a reader takes `cp` for, for the few that matter here (the fence's hex, the
/// marks that open a heading, fence, tag, quote or rule, a role marker's letters and colon); ASCII
/// letters in lower case; kIgnored for an invisible character; else `cp` itself.
char32_t folded(char32_t cp) {
  if (invisible(cp)) return kIgnored;
  if (cp >= 'A' && cp <= 'Z') return folded(cp + ('a' - 'A'));
  if (cp >= 0xFF01 && cp <= 0xFF5E) return folded(cp - 0xFEE0);  // fullwidth forms
  // Digits of other scripts and styles.
  for (char32_t zero : {0x660u, 0x6F0u, 0x966u, 0x9E6u, 0x1D7CEu, 0x1D7D8u, 0x1D7E2u, 0x1D7ECu, 0x1D7F6u, 0x2080u})
    if (cp >= zero && cp <= zero + 9) return U'0' + (cp - zero);
  if (cp == 0x2070) return U'0';
  if (cp == 0xB9) return U'1';
  if (cp == 0xB2 || cp == 0xB3) return U'0' + (cp - 0xB0);
  if (cp >= 0x2074 && cp <= 0x2079) return U'0' + (cp - 0x2070);
  switch (cp) {
    // Letters that look like the hex digits a–f (Cyrillic, Greek), and o and l, which look like 0 and 1.
    case 0x430: case 0x410: case 0x391: case 0x3B1: return U'a';
    case 0x412: case 0x392: case 0x44C: return U'b';
    case 0x441: case 0x421: case 0x3F2: case 0x3F9: return U'c';
    case 0x501: return U'd';
    case 0x435: case 0x415: case 0x395: return U'e';
    case 'o': case 0x43E: case 0x41E: case 0x3BF: case 0x39F: return U'0';
    case 'l': case 'i': case 0x406: case 0x456: case 0x4C0: case 0x399: case 0x131: return U'1';
    // Marks that open a line's structure.
    case 0xFE5F: case 0x266F: return U'#';
    case 0x2039: case 0x3008: case 0x27E8: case 0xFE64: case 0x2C2: case 0x1438: case 0x276E: case 0x300A: return U'<';
    case 0x203A: case 0x3009: case 0x27E9: case 0xFE65: case 0x2C3: case 0x276F: case 0x300B: return U'>';
    case 0x2CB: case 0x1FEF: return U'`';
    case 0x2DC: case 0x301C: case 0x223C: return U'~';
    case 0x2010: case 0x2011: case 0x2012: case 0x2013: case 0x2014: case 0x2015: case 0x2212: case 0xFE58:
    case 0xFE63: case 0x2500: case 0x2501: return U'-';
    case 0x2550: return U'=';
    case 0x2217: case 0x2731: return U'*';
    case 0xFE4D: case 0xFE4E: case 0xFE4F: return U'_';
    case 0xFE55: case 0x2236: return U':';
    default: return cp;
  }
}

/// `text` folded character by character (invisible ones dropped), for the nonce check.
std::string folded_text(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t start = i;
    const char32_t cp = folded(next_code_point(text, i));
    if (cp == kIgnored) continue;
    if (cp < 0x80) out += static_cast<char>(cp);
    else out.append(text.substr(start, i - start));
  }
  return out;
}

/// Whether `line` would read as structure of the prompt around it (neutralised()).
bool structural(std::string_view line) {
  std::u32string visible;  // its first visible characters, folded
  std::size_t i = 0;
  bool indenting = true;
  while (i < line.size() && visible.size() < 16) {
    const char32_t cp = folded(next_code_point(line, i));
    if (cp == kIgnored) continue;
    if (indenting && (cp == ' ' || cp == '\t' || wide_space(cp))) continue;
    indenting = false;
    visible += cp;
  }
  if (visible.empty()) return false;
  if (std::u32string_view(U"#`~<>").find(visible[0]) != std::u32string_view::npos) return true;
  for (char32_t mark : {U'-', U'=', U'*', U'_'})
    if (visible.size() >= 3 && visible[0] == mark && visible[1] == mark && visible[2] == mark) return true;
  // A role marker: the word, then a colon (spaces between allowed), compared as folded() spells both.
  for (std::u32string_view role : {U"system", U"user", U"assistant", U"human", U"developer"}) {
    std::u32string spelt;
    for (char32_t c : role) spelt += folded(c);
    if (visible.starts_with(spelt)) {
      std::size_t at = spelt.size();
      while (at < visible.size() && visible[at] == ' ') ++at;
      if (at < visible.size() && visible[at] == ':') return true;
    }
  }
  return false;
}

/// Line breaks as LF: CRLF, a lone CR, U+2028 and U+2029.
std::string line_feeds(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\r') {
      out += '\n';
      if (i + 1 < text.size() && text[i + 1] == '\n') ++i;
    } else if (c == '\xE2' && i + 2 < text.size() && text[i + 1] == '\x80' && (text[i + 2] == '\xA8' || text[i + 2] == '\xA9')) {
      out += '\n';
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string quoted_line(std::string_view text, std::size_t max_chars) {
  const std::string cut = max_chars == std::string_view::npos ? std::string(text) : clip(text, max_chars);
  const std::string safe = terminal_safe(line_feeds(cut));
  std::string out = "\"";
  out.reserve(safe.size() + 2);
  for (char c : safe) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string neutralised(std::string_view text) {
  const std::string safe = terminal_safe(line_feeds(text));
  std::string_view rest = safe;
  while (!rest.empty() && rest.back() == '\n') rest.remove_suffix(1);
  std::string out;
  out.reserve(rest.size() + 16);
  for (std::size_t start = 0; start <= rest.size();) {
    const std::size_t end = std::min(rest.find('\n', start), rest.size());
    const std::string_view line = rest.substr(start, end - start);
    if (start > 0) out += '\n';
    if (structural(line)) out += '\\';
    out.append(line);
    start = end + 1;
  }
  return out;
}

std::string fence_nonce(std::string_view text) {
  const std::string folded = folded_text(text);
  for (std::size_t attempt = 0;; ++attempt) {
    const std::size_t length = std::min<std::size_t>(64, 4 + 2 * (attempt / 4));
    const std::string nonce =
        sha256_hex(attempt == 0 ? std::string(text) : std::string(text) + "\n" + std::to_string(attempt)).substr(0, length);
    if (folded.find(nonce) == std::string::npos) return nonce;
  }
}

std::string fenced(std::string_view text, const StoredLabel& label) {
  const std::string body = neutralised(text);
  // The nonce is checked against the text as it is shown, and as it was stored.
  const std::string nonce = fence_nonce(body + "\n" + std::string(text));
  std::string out = "<data-" + nonce;
  if (!label.what.empty()) out += " what=" + quoted_line(label.what);
  if (!label.by.empty()) out += " by=" + quoted_line(label.by);
  if (label.unreviewed) out += " unreviewed";
  out += ">\n";
  if (!body.empty()) out += body + "\n";
  return out + "</data-" + nonce + ">\n";
}

}  // namespace ct
