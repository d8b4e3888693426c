// Splitting a `ct` command line into its arguments the way a shell would, for tests that run the
// command lines help texts show.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ct::test {

/// Shell-style words: spaces split, '…' and "…" quote (with \" and \\ inside double quotes).
inline std::vector<std::string> shell_words(std::string_view line) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (std::size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quote) {
      if (c == quote) quote = 0;
      else if (quote == '"' && c == '\\' && i + 1 < line.size()) word += line[++i];
      else word += c;
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == ' ') {
      if (in_word) words.push_back(word);
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(word);
  return words;
}

}  // namespace ct::test
