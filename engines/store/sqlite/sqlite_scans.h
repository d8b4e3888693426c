// The consistency scans of engines/store/store.h (ScanKind) in SQLite's dialect: the one place that
// knows how the validator's checks read tasks.db (json_each over the JSON list columns, GLOB for
// ids, the FTS5 index, PRAGMA checks). Internal to the SQLite backend (engines/store/sqlite/sqlite_store.cpp).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "engines/store/store.h"

namespace ct::sqlite {

/// The query of `kind`; `one_task` narrows it to the task bound as ?1 (where ScanKind says the
/// scan narrows). ?2 is ScanScope::number. Both are bound as text. The TaskRules query returns
/// wide rows: the task, then for each rule of task_rules(), in order, its flag (1 when broken)
/// and its detail columns; only rows breaking at least one rule.
std::string scan_sql(ScanKind kind, bool one_task);

}  // namespace ct::sqlite
