#include "cli/table.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>

namespace ct::cli {
namespace {

struct Range {
  char32_t first;
  char32_t last;
};

// Zero-width code points: combining marks, zero-width spaces and joiners, variation selectors,
// emoji skin-tone modifiers, tags.
constexpr std::array<Range, 20> kZeroWidth = {{
    {0x0300, 0x036F}, {0x0483, 0x0489}, {0x0591, 0x05BD}, {0x0610, 0x061A}, {0x064B, 0x065F},
    {0x0E31, 0x0E31}, {0x0E34, 0x0E3A}, {0x0E47, 0x0E4E}, {0x1AB0, 0x1AFF}, {0x1DC0, 0x1DFF},
    {0x200B, 0x200F}, {0x202A, 0x202E}, {0x2060, 0x2064}, {0x20D0, 0x20FF}, {0xFE00, 0xFE0F},
    {0xFE20, 0xFE2F}, {0xFEFF, 0xFEFF}, {0x1F3FB, 0x1F3FF}, {0xE0000, 0xE007F}, {0xE0100, 0xE01EF},
}};

// East Asian Wide / Fullwidth and emoji presentation (two columns), sorted.
constexpr std::array<Range, 47> kWide = {{
    {0x1100, 0x115F},   {0x231A, 0x231B},   {0x2329, 0x232A},   {0x23E9, 0x23EC},   {0x23F0, 0x23F0},
    {0x23F3, 0x23F3},   {0x25FD, 0x25FE},   {0x2614, 0x2615},   {0x2648, 0x2653},   {0x267F, 0x267F},
    {0x2693, 0x2693},   {0x26A1, 0x26A1},   {0x26AA, 0x26AB},   {0x26BD, 0x26BE},   {0x26C4, 0x26C5},
    {0x26CE, 0x26CE},   {0x26D4, 0x26D4},   {0x26EA, 0x26EA},   {0x26F2, 0x26F3},   {0x26F5, 0x26F5},
    {0x26FA, 0x26FA},   {0x26FD, 0x26FD},   {0x2705, 0x2705},   {0x270A, 0x270B},   {0x2728, 0x2728},
    {0x274C, 0x274C},   {0x274E, 0x274E},   {0x2753, 0x2755},   {0x2757, 0x2757},   {0x2795, 0x2797},
    {0x27B0, 0x27B0},   {0x27BF, 0x27BF},   {0x2B1B, 0x2B1C},   {0x2B50, 0x2B50},   {0x2B55, 0x2B55},
    {0x2E80, 0x303E},   {0x3041, 0xA4CF},   {0xA960, 0xA97F},   {0xAC00, 0xD7A3},   {0xF900, 0xFAFF},
    {0xFE10, 0xFE19},   {0xFE30, 0xFE6F},   {0xFF00, 0xFF60},   {0xFFE0, 0xFFE6},   {0x16FE0, 0x18AFF},
    {0x1B000, 0x1B2FF}, {0x1F004, 0x3FFFD},
}};

template <std::size_t N>
bool in_ranges(char32_t c, const std::array<Range, N>& ranges) {
  for (const auto& range : ranges)
    if (c >= range.first && c <= range.last) return true;
  return false;
}

/// Emoji and symbols between U+1F004 and U+3FFFD are wide except for a few narrow blocks.
bool narrow_in_supplementary(char32_t c) {
  return (c >= 0x1F100 && c <= 0x1F18D) || (c >= 0x1F650 && c <= 0x1F67F) || (c >= 0x1F700 && c <= 0x1F7DF) ||
         (c >= 0x1F800 && c <= 0x1F8FF) || (c >= 0x1FB00 && c <= 0x1FFFF);
}

int code_point_width(char32_t c) {
  if (c < 0x20 || c == 0x7F) return 0;
  if (c < 0x300) return 1;
  if (in_ranges(c, kZeroWidth)) return 0;
  if (in_ranges(c, kWide) && !narrow_in_supplementary(c)) return 2;
  return 1;
}

}  // namespace

std::string Style::paint(std::string_view text, std::string_view sgr) const {
  if (!color || sgr.empty() || text.empty()) return std::string(text);
  return "\x1b[" + std::string(sgr) + "m" + std::string(text) + "\x1b[0m";
}

std::string_view status_sgr(std::string_view status) {
  if (status == "done") return "32";
  if (status == "active") return "36";
  if (status == "blocked") return "31";
  if (status == "cancelled") return "2";
  return "";
}

bool color_enabled(int fd) {
  const char* no_color = std::getenv("NO_COLOR");
  if (no_color && *no_color) return false;
  const char* force = std::getenv("FORCE_COLOR");
  if (force && *force && std::string_view(force) != "0") return true;
  return ::isatty(fd) == 1;
}

std::size_t terminal_width(int fd) {
  if (::isatty(fd) != 1) return 0;
  struct winsize size {};
  if (::ioctl(fd, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  return 80;
}

std::size_t display_width(std::string_view text) {
  std::size_t width = 0;
  for (std::size_t i = 0; i < text.size();) width += static_cast<std::size_t>(code_point_width(next_code_point(text, i)));
  return width;
}

std::string truncate_to_width(std::string_view text, std::size_t width) {
  if (display_width(text) <= width) return std::string(text);
  if (width == 0) return "";
  std::size_t used = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t start = i;
    auto w = static_cast<std::size_t>(code_point_width(next_code_point(text, i)));
    if (used + w > width - 1) {
      i = start;
      break;
    }
    used += w;
  }
  return std::string(text.substr(0, i)) + "…";
}

void Table::add_row(std::vector<Cell> row) {
  for (auto& cell : row) {
    if (cell.text.find_first_of("\n\r\t") == std::string::npos) continue;
    std::string one_line;
    for (std::size_t i = 0; i < cell.text.size(); ++i) {
      const char c = cell.text[i];
      if (c == '\r' && i + 1 < cell.text.size() && cell.text[i + 1] == '\n') continue;
      if (c == '\n' || c == '\r') one_line += " \u21b5 ";
      else if (c == '\t') one_line += ' ';
      else one_line += c;
    }
    cell.text = std::move(one_line);
  }
  rows_.push_back(std::move(row));
}

std::string Table::render(const Style& style, std::size_t max_width, std::string_view indent) const {
  std::size_t columns = headers_.size();
  std::vector<std::size_t> widths(columns, 0);
  for (std::size_t c = 0; c < columns; ++c) widths[c] = display_width(headers_[c]);
  for (const auto& row : rows_)
    for (std::size_t c = 0; c < columns && c < row.size(); ++c) widths[c] = std::max(widths[c], display_width(row[c].text));
  std::size_t before_last = display_width(indent);
  for (std::size_t c = 0; c + 1 < columns; ++c) before_last += widths[c] + 2;
  // Only cut when the last column keeps a useful width.
  std::size_t last_room = max_width > before_last + 10 ? max_width - before_last : 0;

  auto line = [&](const std::vector<Table::Cell>& cells, bool header) {
    std::string out(indent);
    for (std::size_t c = 0; c < columns; ++c) {
      std::string text = c < cells.size() ? cells[c].text : "";
      bool last = c + 1 == columns;
      if (last && last_room > 0) text = truncate_to_width(text, last_room);
      std::string padded = last ? text : pad_to(text, widths[c]);
      std::string sgr = header ? "1" : (c < cells.size() ? cells[c].sgr : "");
      if (!sgr.empty() && style.color) {
        // Colour the text only, not the padding.
        std::size_t text_length = text.size();
        padded = style.paint(padded.substr(0, text_length), sgr) + padded.substr(text_length);
      }
      out += padded;
      if (!last) out += "  ";
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::vector<Table::Cell> header_cells;
  for (const auto& header : headers_) header_cells.push_back({header, ""});
  std::string out = line(header_cells, true);
  for (const auto& row : rows_) out += line(row, false);
  return out;
}

std::string pad_to(std::string_view text, std::size_t width) {
  std::string out(text);
  std::size_t used = display_width(text);
  if (used < width) out.append(width - used, ' ');
  return out;
}

}  // namespace ct::cli
