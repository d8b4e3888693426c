// Task rows of the SQLite backend: read_task() over a statement (engines/store/store_rows.h holds the
// column order and the codecs every backend shares). Internal to the SQLite backend.
#pragma once

#include <sqlite3.h>

#include "engines/store/store_rows.h"

namespace ct::sqlite {

/// Reads one task from a statement positioned on a row selected with kTaskColumns first.
Result<Task> read_task(sqlite3_stmt* stmt);

}  // namespace ct::sqlite
