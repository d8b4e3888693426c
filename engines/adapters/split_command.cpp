#include "engines/adapters/split_command.h"

namespace ct {
namespace {

Error invalid(std::string_view field, std::string message) {
  return Error(ErrorCode::InvalidInput, std::string(field) + ": " + std::move(message))
      .with_fix("write the command as plain words, e.g. \"ctest --test-dir build\"; it runs without a shell, so "
                "for pipes or && name a script, or sh -c '…' explicitly")
      .with_detail("field", std::string(field));
}

bool operator_char(char c) { return c == '|' || c == '&' || c == ';' || c == '<' || c == '>' || c == '`'; }

/// NAME=…, which a POSIX shell takes as a variable assignment before a command.
bool assignment_word(std::string_view word) {
  const auto equals = word.find('=');
  if (equals == 0 || equals == std::string_view::npos || (word[0] >= '0' && word[0] <= '9')) return false;
  for (char c : word.substr(0, equals))
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

/// The reserved words of POSIX sh (and bash's, zsh's), which in a command's place are syntax.
bool reserved_word(std::string_view word) {
  for (std::string_view reserved : {"if", "then", "else", "elif", "fi", "case", "esac", "for", "while", "until", "do",
                                    "done", "in", "function", "select", "time", "coproc", "foreach", "repeat", "end"})
    if (word == reserved) return true;
  return false;
}

}  // namespace

Result<std::vector<std::string>> split_command(std::string_view text, std::string_view field) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else if (c == '\'') {
      const std::size_t end = text.find('\'', i + 1);
      if (end == std::string_view::npos) return fail(invalid(field, "unterminated ' quote"));
      word.append(text.substr(i + 1, end - i - 1));
      in_word = true;
      i = end;
    } else if (c == '"') {
      in_word = true;
      bool closed = false;
      for (++i; i < text.size(); ++i) {
        const char d = text[i];
        if (d == '"') {
          closed = true;
          break;
        }
        if (d == '\\' && i + 1 < text.size() &&
            (text[i + 1] == '"' || text[i + 1] == '\\' || text[i + 1] == '$' || text[i + 1] == '`')) {
          word += text[++i];
        } else {
          word += d;
        }
      }
      if (!closed) return fail(invalid(field, "unterminated \" quote"));
    } else if (c == '\\') {
      if (i + 1 == text.size()) return fail(invalid(field, "a trailing backslash escapes nothing"));
      word += text[++i];
      in_word = true;
    } else if (operator_char(c) || (c == '$' && i + 1 < text.size() && text[i + 1] == '(')) {
      return fail(invalid(field, std::string("'") + c + "' is a shell operator, and no shell runs this command")
                      .with_detail("at", static_cast<std::int64_t>(i)));
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(std::move(word));
  if (words.empty()) return fail(invalid(field, "no program named"));
  return words;
}

std::string join_command(const std::vector<std::string>& argv) {
  std::string out;
  for (std::size_t i = 0; i < argv.size(); ++i) {
    const std::string& word = argv[i];
    if (i > 0) out += ' ';
    bool plain = !word.empty();
    for (char c : word) {
      const bool safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                        std::string_view("_./:=@%+,-").find(c) != std::string_view::npos;
      plain = plain && safe;
    }
    // A leading = is zsh's path expansion (=ls is /bin/ls), a leading % a job in bash and zsh. The
    // first word is the command: unquoted, NAME=value there is an assignment and `if`, `for` … are
    // reserved words, so either is quoted to stay the program's name.
    if (plain) plain = word.front() != '=' && word.front() != '%';
    if (plain && i == 0) plain = !assignment_word(word) && !reserved_word(word);
    if (plain) {
      out += word;
      continue;
    }
    out += '\'';
    for (char c : word) {
      if (c == '\'') out += "'\\''";
      else out += c;
    }
    out += '\'';
  }
  return out;
}

}  // namespace ct
