// Terminal text layout: display width of UTF-8 (wide and zero-width characters), truncation,
// ANSI colour that honours NO_COLOR / FORCE_COLOR / TTY, and tables aligned by display width.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/json.h"
#include "core/text.h"  // terminal_safe(): stored text reaches people through it

namespace ct::cli {

/// ANSI colour, applied only when enabled (a TTY, NO_COLOR unset, or FORCE_COLOR set).
struct Style {
  bool color = false;

  std::string paint(std::string_view text, std::string_view sgr) const;
  std::string bold(std::string_view text) const { return paint(text, "1"); }
  std::string dim(std::string_view text) const { return paint(text, "2"); }
  std::string red(std::string_view text) const { return paint(text, "31"); }
  std::string green(std::string_view text) const { return paint(text, "32"); }
  std::string yellow(std::string_view text) const { return paint(text, "33"); }
  std::string cyan(std::string_view text) const { return paint(text, "36"); }
};

/// The SGR code for a task status ("done" green, "active" cyan, "blocked" red, "cancelled" dim).
std::string_view status_sgr(std::string_view status);

/// Whether output to `fd` should be coloured: NO_COLOR (non-empty) turns colour off, FORCE_COLOR
/// (non-empty, not "0") turns it on, otherwise only a terminal gets colour.
bool color_enabled(int fd);
/// Columns of the terminal on `fd`, or 0 when it is not a terminal.
std::size_t terminal_width(int fd);

/// Columns a string occupies in a terminal: East Asian wide characters and emoji count 2,
/// combining marks and zero-width characters 0.
std::size_t display_width(std::string_view text);
/// Cuts `text` to at most `width` columns, ending with "…" when something was cut.
std::string truncate_to_width(std::string_view text, std::size_t width);

/// Columns padded to the widest cell by display width; colour is applied after padding so it never
/// disturbs alignment. The last column is not padded (no trailing spaces).
class Table {
 public:
  struct Cell {
    std::string text;
    std::string sgr;  // ANSI style of this cell, empty for none
  };
  explicit Table(std::vector<std::string> headers) : headers_(std::move(headers)) {}
  /// A row is one line: a cell's line breaks become " ↵ " and its tabs spaces (a memory entry's
  /// body, a note), so no cell breaks the columns.
  void add_row(std::vector<Cell> row);
  bool empty() const { return rows_.empty(); }
  /// `max_width` > 0 truncates the last column so lines fit (terminals only).
  std::string render(const Style& style, std::size_t max_width = 0, std::string_view indent = "") const;

 private:
  std::vector<std::string> headers_;
  std::vector<std::vector<Cell>> rows_;
};

/// `text` followed by spaces up to `width` display columns.
std::string pad_to(std::string_view text, std::size_t width);

}  // namespace ct::cli
