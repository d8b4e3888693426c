// Command lines written as one string (config values such as validate.testCommand) turned into an
// argv array — split into words the way a POSIX shell splits them, but with no shell: nothing
// expands and nothing is interpreted. Operators a shell would act on (| & ; < > ` $( ) are refused
// unless quoted, so "make test && ctest" fails loudly instead of passing "&&" to make.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace ct {

/// The words of `text`: spaces and tabs separate; '…' is literal; inside "…" only \" \\ \$ and \`
/// are escapes; outside quotes a backslash makes the next character literal; adjacent parts join
/// ("a"'b'c is abc). E_INVALID_INPUT for an unterminated quote, an unquoted shell operator, or no
/// word at all (details.field is `field`).
[[nodiscard]] Result<std::vector<std::string>> split_command(std::string_view text, std::string_view field);

/// The argv as one line a POSIX shell (sh, bash, zsh, dash) runs as that program with those words:
/// a word with anything but [A-Za-z0-9_./:=@%+,-], or that starts with = or %, is single-quoted (a '
/// in it written '\''), and so is a first word that the shell would not take as the program's name
/// (NAME=value, a reserved word such as `if`).
std::string join_command(const std::vector<std::string>& argv);

}  // namespace ct
