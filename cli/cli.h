// The `ct` command line: parses argv with CLI11 (subcommands generated from the registry),
// dispatches through the router and prints text or the JSON envelope. Returns the exit code.
#pragma once

namespace ct::cli {
int run(int argc, char** argv);
}  // namespace ct::cli
