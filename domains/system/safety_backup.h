// Shared by system.restore and system.migrate: the copy of the live store each makes first.
#pragma once

#include <filesystem>
#include <string_view>

#include "core/clock.h"
#include "core/error.h"
#include "engines/project/project.h"

namespace ct {

/// A safety copy of the live store before it is replaced or migrated (.cleo/backups/safety/,
/// out of reach of backup.keep); defined in system_restore.cpp.
Result<std::filesystem::path> safety_backup(const Project& project, TimeMs now, std::string_view note);

}  // namespace ct
