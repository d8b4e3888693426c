// Manual pages of `ct`, generated from what the command line is built from: ct(1) from the
// command tree (commands, domains, server commands, global options), the error table (exit
// status), the environment variables and files ct reads; ct-<domain>(1) from each domain's
// operation specs (usage, options with their help, what it returns, examples as command lines,
// errors). programs/ct_docs.cpp writes them to docs/man/; nothing in them is written by hand.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "domains/registry.h"

namespace ct::cli {

/// An environment variable ct (or ct serve, or a library it loads) reads, for ct(1).
struct EnvironmentVariable {
  std::string_view name;
  std::string_view meaning;
};
std::span<const EnvironmentVariable> environment_variables();

/// A file or folder ct reads or writes, for ct(1).
struct ProjectFile {
  std::string_view path;
  std::string_view meaning;
};
std::span<const ProjectFile> project_files();

struct ManPage {
  std::string file;  // "ct.1", "ct-tasks.1"
  std::string text;  // roff (man macros), ASCII only
};

/// ct.1, then ct-<domain>.1 for each domain of `registry` in its order. The pages carry no date
/// and no version, so they change only when what they describe changes (ct --version says it).
std::vector<ManPage> man_pages(const Registry& registry);

/// Text as roff: backslashes escaped, '-' as \- (the ASCII minus options are typed with),
/// non-ASCII characters as \[uXXXX], a line that would start with a control character ('.' or ')
/// made literal, and a break point (\:) after a '|', ',', ')' or ']' that more text follows.
std::string roff_text(std::string_view text);

}  // namespace ct::cli
