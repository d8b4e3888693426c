// The person key every test sandbox lists in its home and hands its `ct` commands (CT_PERSON_KEY):
// `ct` without a terminal is an agent (cli/person.h), so tests speak as a person's script by
// default and play an agent with a shell by adding a host's marker (CLAUDECODE=1 …).
#pragma once

#include <string_view>

namespace ct::testing {

inline constexpr std::string_view kTestPersonKey = "ctpk_7e577e577e577e577e577e577e577e577e577e577e577e577e577e577e577e57";
/// Its SHA-256, as engines/project/person_keys.h lists it.
inline constexpr std::string_view kTestPersonKeySha256 = "b2f09f61b002f94cd493bbe59ddd167c2dcc4271f14e3db413896bcec30121b5";
/// ~/.config/cleo/person-keys.json listing it (write it with mode 0600).
inline constexpr std::string_view kTestPersonKeysJson =
    R"({"keys":[{"name":"tests","sha256":"b2f09f61b002f94cd493bbe59ddd167c2dcc4271f14e3db413896bcec30121b5","createdAt":"2026-01-01T00:00:00Z"}]})";

}  // namespace ct::testing
