// Modules `ct` loads on first use, so that its start-up never pays for what they link (libpq for
// a PostgreSQL store, cpp-httplib and OpenSSL for the GitHub tracker).
#pragma once

#include <string>
#include <string_view>

namespace ct {

/// dlopen (RTLD_NOW | RTLD_LOCAL) of `file` beside this program (a build tree), else in
/// ../lib/cleo (an installed one): its handle; null with `why` saying why not.
void* load_module(std::string_view file, std::string& why);

}  // namespace ct
