// The original CLEO's store as tasks.import finds and reads it (domains/tasks/original_store.h):
// what a path names (its folder, a file of it, or a file of records), its files read bounded, and
// read_original, which puts the parts together — the JSON files (original_json.cpp) or the SQLite
// store (original_sqlite.cpp), then its brain (original_brain.h).
#include "domains/tasks/original_store.h"

#include <algorithm>
#include <cctype>
#include <system_error>

#include "core/file_read.h"
#include "core/json_parse.h"
#include "core/sha256.h"
#include "core/text.h"
#include "domains/tasks/original_brain.h"
#include "domains/tasks/original_reader.h"
#include "engines/store/open/open_store.h"

namespace ct::tasks {

namespace fs = std::filesystem;

namespace original {

bool meaningful(const json::Value& value) {
  switch (value.type()) {
    case json::Type::Null: return false;
    case json::Type::Bool: return value.as_bool();
    case json::Type::String: return !trim(value.as_string()).empty();
    case json::Type::Array:
    case json::Type::Object: return !value.empty();
    default: return true;
  }
}

Result<std::optional<std::string>> read_bounded(const fs::path& file) {
  auto text = read_regular_file(file, {static_cast<std::int64_t>(kMaxImportFileBytes), std::chrono::milliseconds(30000)});
  if (text) return std::optional<std::string>(std::move(*text));
  Error error = std::move(text.error());
  if (error.code == ErrorCode::NotFound) return std::optional<std::string>();
  if (error.details["reason"] == json::Value("notRegular"))
    return fail(Error(ErrorCode::InvalidInput, file.string() + " is not a regular file")
                    .with_fix("name the original CLEO's .cleo/ folder, its todo.json or its tasks.db")
                    .with_detail("file", file.string()));
  if (error.details["reason"] == json::Value("tooLarge"))
    return fail(Error(ErrorCode::Validation, file.string() + " holds " +
                                                 (error.details["size"].is_int()
                                                      ? std::to_string(error.details["size"].as_int() >> 20) + " MiB, more"
                                                      : std::string("more")) +
                                                 " than the " + std::to_string(kMaxImportFileBytes >> 20) +
                                                 " MiB a file to import may")
                    .with_fix("split it, or import a smaller store")
                    .with_detail("file", file.string()));
  return fail(std::move(error).with_fix("check its permissions"));
}

Result<std::optional<json::Value>> read_json(const fs::path& file) {
  CT_TRY_ASSIGN(std::optional<std::string> text, read_bounded(file));
  if (!text) return std::optional<json::Value>();
  auto parsed = json::parse(*text);
  if (parsed) return std::optional<json::Value>(std::move(*parsed));
  if (auto lines = json::parse_lines(*text)) return std::optional<json::Value>(std::move(*lines));
  return fail(Error(ErrorCode::InvalidInput, file.string() + " is not valid JSON (" + parsed.error().message +
                                                 "): cut short or damaged")
                  .with_fix("repair it, or take it from the original's backups (.cleo/backups/), then import again")
                  .with_detail("file", file.string()));
}

}  // namespace original

namespace {

using original::kJsonFiles;
using original::read_json;

bool is_sqlite_file(const fs::path& file) {
  auto header = read_regular_file_part(file, 0, {16, std::chrono::milliseconds(5000)});
  return header && *header == std::string_view("SQLite format 3\0", 16);
}

bool has_columns(const ForeignTable& table, std::initializer_list<std::string_view> wanted) {
  return std::ranges::all_of(wanted, [&](std::string_view column) {
    return std::ranges::find(table.columns, column) != table.columns.end();
  });
}

/// Which of the original's SQLite stores `file` is ("" for tasks.db's tables, "tasks_" for
/// cleo.db's), or why it is none.
Result<std::string> original_tables(const fs::path& file) {
  CT_TRY_ASSIGN(ForeignDatabase db, read_foreign_sqlite(file, {}));
  for (std::string prefix : {"tasks_", ""}) {
    const ForeignTable* tasks = db.find(prefix + "tasks");
    if (tasks && has_columns(*tasks, {"id", "title", "status", "parent_id"})) return prefix;
  }
  const ForeignTable* ours = db.find("tasks");
  if (ours && db.find("meta") && has_columns(*ours, {"num", "id", "title"}))
    return fail(Error(ErrorCode::InvalidInput, file.string() + " is a store of this program (CLEO in C++), not one the "
                                                               "original CLEO kept")
                    .with_fix("to move its tasks, export them there (ct export > tasks.json) and import that file; "
                              "to put a backup of this store back, use system.restore")
                    .with_detail("file", file.string()));
  std::vector<std::string> names;
  for (const auto& table : db.tables) names.push_back(table.name);
  if (names.size() > 12) {
    names.resize(12);
    names.push_back("…");
  }
  return fail(Error(ErrorCode::InvalidInput, file.string() + " is a SQLite database without the original CLEO's tables "
                                                             "(tasks with id, title, status and parent_id); it holds " +
                                                             (names.empty() ? std::string("no tables") : join(names, ", ")))
                  .with_fix("name the original CLEO's .cleo/tasks.db (or its folder)")
                  .with_detail("file", file.string())
                  .with_detail("tables", json::Value::array_of(names)));
}

/// The store in a folder: the original's .cleo/, or the project around it.
Result<ImportSource> store_in_folder(const fs::path& path) {
  std::error_code ec;
  ImportSource source;
  // The project around .cleo/ names it as well as .cleo/ itself.
  fs::path dir = path;
  auto holds_store = [&](const fs::path& folder) {
    for (std::string_view name : {"todo.json", "tasks.db", "cleo.db"})
      if (fs::exists(folder / name, ec)) return true;
    return false;
  };
  if (!holds_store(dir) && fs::is_directory(dir / ".cleo", ec)) dir /= ".cleo";
  OriginalSource original;
  original.dir = dir;
  // The newest store first: cleo.db's tasks_ tables (the original's main branch) hold what
  // tasks.db held before; tasks.db what todo.json held (the JSON files stay as its copy).
  if (fs::exists(dir / "cleo.db", ec)) {
    auto prefix = original_tables(dir / "cleo.db");
    if (prefix && *prefix == "tasks_") {
      original.generation = "sqlite";
      original.database = dir / "cleo.db";
      original.prefix = *prefix;
      source.original = std::move(original);
      return source;
    }
  }
  if (fs::exists(dir / "tasks.db", ec)) {
    CT_TRY_ASSIGN(original.prefix, original_tables(dir / "tasks.db"));
    original.generation = "sqlite";
    original.database = dir / "tasks.db";
    source.original = std::move(original);
    return source;
  }
  if (fs::exists(dir / "todo.json", ec)) {
    original.generation = "json";
    original.todo = dir / "todo.json";
    source.original = std::move(original);
    return source;
  }
  std::vector<std::string> present;
  for (std::string_view name : kJsonFiles)
    if (fs::exists(dir / name, ec)) present.emplace_back(name);
  return fail(Error(ErrorCode::NotFound,
                    "no store of the original CLEO in " + dir.string() + ": it holds neither todo.json nor tasks.db" +
                        (present.empty() ? std::string() : " (only " + join(present, ", ") + ")"))
                  .with_fix("name the original's .cleo/ folder (where its todo.json or tasks.db is)")
                  .with_detail("file", dir.string()));
}

/// Siblings in the original's order (position, then the order read), parents' records first is
/// not needed: tasks.import places parents first itself.
void order_by_position(json::Value& records) {
  auto& list = records.as_array();
  std::stable_sort(list.begin(), list.end(), [](const json::Value& a, const json::Value& b) {
    auto key = [](const json::Value& record) {
      const json::Value& position = record["position"];
      return position.is_number() ? position.as_double() : 1e18;
    };
    return key(a) < key(b);
  });
  for (auto& record : list)
    if (record.is_object()) record.erase("position");
}

/// The original's memory (original_brain.h): cleo.db's brain_ tables when it has them (a brain.db
/// beside it is then the copy the original moved them from), else the brain.db beside the store.
Result<void> read_brain(const OriginalSource& source, const OperationSpec& observe_spec, ForeignFile& file) {
  std::error_code ec;
  const fs::path beside = source.dir / "brain.db";
  const bool has_beside = fs::is_regular_file(beside, ec);
  if (source.generation == "sqlite" && !source.prefix.empty()) {
    CT_TRY_ASSIGN(ForeignDatabase listing, read_foreign_sqlite(source.database, {}));
    if (std::ranges::any_of(listing.tables, [](const ForeignTable& table) { return is_brain_table(table.name); })) {
      CT_TRY(read_original_brain(source.database, /*whole_file=*/false, observe_spec, file));
      if (has_beside)
        file.warnings.push_back("brain.db beside " + source.database.filename().string() +
                                " was not read: the original kept it as the copy it moved its memory from");
      return {};
    }
  }
  if (!has_beside) return {};
  return read_original_brain(beside, /*whole_file=*/true, observe_spec, file);
}

}  // namespace

bool looks_like_original_file(const json::Value& value) {
  if (!value.is_object() || !value["_meta"].is_object()) return false;
  return value["tasks"].is_array() || value["archivedTasks"].is_array();
}

Result<ImportSource> read_import_source(const fs::path& path) {
  std::error_code ec;
  ImportSource source;
  if (fs::is_directory(path, ec)) return store_in_folder(path);
  if (!fs::exists(path, ec))
    return fail(Error(ErrorCode::NotFound, "nothing at " + path.string())
                    .with_fix("check the path (relative paths start at the project root)")
                    .with_detail("file", path.string()));
  if (fs::is_regular_file(path, ec) && is_sqlite_file(path)) {
    OriginalSource original;
    original.dir = path.parent_path();
    original.generation = "sqlite";
    original.database = path;
    CT_TRY_ASSIGN(original.prefix, original_tables(path));
    source.original = std::move(original);
    return source;
  }
  CT_TRY_ASSIGN(std::optional<json::Value> value, read_json(path));
  if (!value) return fail(Error(ErrorCode::NotFound, "nothing at " + path.string()).with_detail("file", path.string()));
  if (looks_like_original_file(*value)) {
    // A file of the store names the store: todo.json (or a copy shaped like it) with its siblings.
    OriginalSource original;
    original.dir = path.parent_path();
    original.generation = "json";
    original.todo = (*value)["tasks"].is_array() ? path : path.parent_path() / "todo.json";
    if (!fs::exists(original.todo, ec))
      return fail(Error(ErrorCode::NotFound, path.string() + " is the original CLEO's archive, but its todo.json is not "
                                                             "beside it in " + original.dir.string())
                      .with_fix("name the original's .cleo/ folder, where todo.json and the archive are")
                      .with_detail("file", path.string()));
    source.original = std::move(original);
    return source;
  }
  // A file `ct … --json` wrote holds the reply's envelope: its data are the records.
  if ((*value)["success"] == json::Value(true) && value->contains("data")) {
    json::Value data = (*value)["data"];
    source.records = std::move(data);
    return source;
  }
  source.records = std::move(*value);
  return source;
}

std::string session_id_for(std::string_view original_id) {
  std::string_view rest = trim(original_id);
  for (std::string_view word : {"session", "ses"})
    if (rest.size() > word.size() && rest.substr(0, word.size()) == word && !std::isalnum(static_cast<unsigned char>(rest[word.size()]))) {
      rest.remove_prefix(word.size());
      break;
    }
  std::string id;
  for (char c : rest)
    if (std::isalnum(static_cast<unsigned char>(c))) id += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (id.empty() || id.size() > 40) id = sha256_hex(original_id).substr(0, 16);
  return "ses_" + id;
}

Result<ForeignFile> read_original(const OriginalSource& source, const OperationSpec& add_spec,
                                  const OperationSpec& observe_spec) {
  ForeignFile file;
  file.format = "original";
  file.generation = source.generation;
  original::Reader reader(file, add_spec);
  if (source.generation == "sqlite") {
    CT_TRY(original::read_sqlite_store(source, reader, file));
  } else {
    CT_TRY(original::read_json_store(source, reader, file));
  }
  CT_TRY(read_brain(source, observe_spec, file));
  constexpr std::size_t kMaxTasks = 100'000;
  if (file.records.size() > kMaxTasks || file.sessions.size() > kMaxTasks || file.memory.size() > kMaxTasks)
    return fail(Error(ErrorCode::Validation, file.source + " holds more than " + std::to_string(kMaxTasks) +
                                                 " tasks, sessions or memory entries, more than one import takes")
                    .with_detail("file", file.source));
  order_by_position(file.records);
  reader.summarise();
  return file;
}

}  // namespace ct::tasks
