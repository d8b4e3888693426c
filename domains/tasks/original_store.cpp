#include "domains/tasks/original_store.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <system_error>
#include <tuple>

#include "core/json_parse.h"
#include "core/sha256.h"
#include "core/file_read.h"
#include "core/text.h"
#include "domains/tasks/original_brain.h"
#include "engines/store/open/open_store.h"
#include "engines/store/task.h"

namespace ct::tasks {
namespace {

namespace fs = std::filesystem;

/// A value that says something: not null, not empty, not false.
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


/// A file of the store (or of records), read whole but bounded (core/file_read.h: a regular file,
/// at most kMaxImportFileBytes, within a deadline). Missing: nullopt.
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

/// A JSON file (or JSON Lines) read and parsed; a clear error naming it when it does not parse —
/// a file cut short by a crash or a full disk is the usual reason.
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

constexpr std::string_view kJsonFiles[] = {"todo.json", "todo-archive.json", "sessions.json", "todo-log.json"};

}  // namespace

bool looks_like_original_file(const json::Value& value) {
  if (!value.is_object() || !value["_meta"].is_object()) return false;
  return value["tasks"].is_array() || value["archivedTasks"].is_array();
}

Result<ImportSource> read_import_source(const fs::path& path) {
  std::error_code ec;
  ImportSource source;
  if (fs::is_directory(path, ec)) {
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

namespace {

/// Where a field of the source is reported: JSON files by "task.parentId", "session.focus.nextAction";
/// the database by its table and column, "tasks.parent_id".
struct Naming {
  std::string prefix;                                   // "task.", "tasks."
  std::map<std::string, std::string, std::less<>> columns;  // a field's column where it differs

  std::string operator()(std::string_view field) const {
    if (auto found = columns.find(field); found != columns.end()) return found->second;
    return prefix + std::string(field);
  }
};

/// Reads the original's records: where each field goes, and what has no place (with counts).
class Reader {
 public:
  Reader(ForeignFile& file, const OperationSpec& add) : file_(file), limits_(add) {}

  void mapped(const std::string& field, std::string_view to) {
    if (!file_.mapped.contains(field)) file_.mapped.set(field, std::string(to));
  }
  void lost(const std::string& field, std::int64_t count = 1) {
    if (count <= 0) return;
    const json::Value& had = file_.unmapped[field];
    file_.unmapped.set(field, (had.is_int() ? had.as_int() : 0) + count);
  }
  /// A value changed on the way in (active → pending …): said once, with how many.
  void note_change(const std::string& what) { ++changes_[what]; }

  /// One of the original's tasks (its JSON shape; the database's rows are brought to it first) as
  /// a tasks.import record that keeps its id.
  json::Value task(const json::Value& task, bool in_archive, const Naming& name) {
    if (!task.is_object()) return task;  // refused by the record check, with its place
    json::Value out = json::Value::object();
    static const std::set<std::string_view> kSilent = {"positionVersion"};  // derived bookkeeping
    static const std::set<std::string_view> kRead = {
        "id", "title", "description", "status", "priority", "type", "parentId", "position", "size", "phase", "files",
        "acceptance", "depends", "labels", "notes", "blockedBy", "relates", "createdAt", "updatedAt", "completedAt",
        "cancelledAt", "cancellationReason", "origin", "_archive"};
    for (const auto& [key, value] : task.as_object())
      if (!kRead.contains(key) && !kSilent.contains(key) && meaningful(value)) lost(name(key));

    auto copy = [&](std::string_view from, std::string_view to) {
      const json::Value& value = task[from];
      if (value.is_null()) return;
      out.set(to, value);
      mapped(name(from), to);
    };
    const json::Value& id = task["id"];
    out.set("id", id.is_string() ? normalize_task_id(trim(id.as_string())).value_or(id.as_string()) : id);
    mapped(name("id"), "id (kept)");
    copy("title", "title");
    // The original did not always keep a description apart from its title; here it must say more.
    if (const json::Value& description = task["description"]; !description.is_null()) {
      if (description.is_string() && task["title"].is_string() &&
          to_lower_ascii(trim(description.as_string())) == to_lower_ascii(trim(task["title"].as_string()))) {
        note_change("description that repeated its title: left out");
      } else if (!description.is_string() || !trim(description.as_string()).empty()) {
        out.set("description", description);
      }
      mapped(name("description"), "description");
    }
    copy("priority", "priority");
    copy("size", "size");
    copy("phase", "phase");
    copy("files", "files");
    copy("blockedBy", "blockedBy");
    copy("createdAt", "createdAt");
    copy("updatedAt", "updatedAt");
    copy("completedAt", "completedAt");
    copy("cancelledAt", "cancelledAt");
    copy("cancellationReason", "cancellationReason");
    if (const json::Value& position = task["position"]; position.is_number()) {
      out.set("position", position);  // orders siblings; read_original sorts by it, then drops it
      mapped(name("position"), "position (order among siblings)");
    }

    const json::Value& parent = task["parentId"];
    if (parent.is_string() && !trim(parent.as_string()).empty()) {
      out.set("parent", normalize_task_id(trim(parent.as_string())).value_or(parent.as_string()));
    } else if (!parent.is_null() && !parent.is_string()) {
      out.set("parent", parent);  // refused: not an id
    }
    if (!parent.is_null()) mapped(name("parentId"), "parent");

    if (const json::Value& depends = task["depends"]; !depends.is_null()) {
      mapped(name("depends"), "depends");
      out.set("depends", ids(depends));
    }

    labels(out, task["labels"]);
    if (!task["labels"].is_null()) mapped(name("labels"), "labels");
    if (const json::Value& origin = task["origin"]; origin.is_string() && !origin.as_string().empty()) {
      add_label(out, "origin:" + origin.as_string());
      mapped(name("origin"), "labels (origin:<value>)");
    }

    // Status: the archive keeps done and cancelled tasks; the database marks them 'archived'.
    const std::string status = task["status"].string_or_empty();
    const json::Value& archive = task["_archive"];
    bool archived = in_archive || status == "archived";
    if (status == "archived") {
      bool cancelled = task["cancelledAt"].is_string() || task["cancellationReason"].is_string() ||
                       archive["reason"] == json::Value("cancelled");
      out.set("status", cancelled ? "cancelled" : "done");
      note_change(std::string("status archived → ") + (cancelled ? "cancelled" : "done") + ", archived");
    } else if (status == "active") {
      out.set("status", "pending");
      note_change("status active → pending (claims are made with tasks.start here)");
    } else if (status == "proposed") {
      out.set("status", "pending");
      add_label(out, "proposed");
      note_change("status proposed → pending with the label proposed");
    } else if (!task["status"].is_null()) {
      out.set("status", task["status"]);  // pending, blocked, done, cancelled; anything else is refused
    }
    if (!task["status"].is_null()) mapped(name("status"), "status");
    if (out["status"] == json::Value("blocked") && !meaningful(task["blockedBy"])) {
      out.set("blockedBy", "blocked in the original CLEO");
      note_change("blocked task without a reason: blockedBy 'blocked in the original CLEO'");
    }
    if (out["status"] == json::Value("cancelled") && !meaningful(task["cancellationReason"])) {
      std::string reason = archive["cancellationDetails"]["cancellationReason"].string_or_empty();
      out.set("cancellationReason", reason.empty() ? std::string("cancelled in the original CLEO") : reason);
    }
    if (!out.contains("cancelledAt") && archive["cancellationDetails"]["cancelledAt"].is_string())
      out.set("cancelledAt", archive["cancellationDetails"]["cancelledAt"]);
    out.set("archived", archived);
    if (archive.is_object()) {
      static const std::set<std::string_view> kDerived = {"cycleTimeDays", "relationshipState", "restoreInfo",
                                                          "cancellationDetails"};
      for (const auto& [key, value] : archive.as_object()) {
        if (key == "archivedAt") {
          out.set("archivedAt", value);
          mapped(name("_archive.archivedAt"), "archivedAt");
        } else if (key == "reason") {
          out.set("archiveReason", value);
          mapped(name("_archive.reason"), "archiveReason");
        } else if (!kDerived.contains(key) && meaningful(value)) {
          lost(name("_archive." + key));
        }
      }
    }

    // Type: only epic, task and subtask are known here; an epic stands at the top.
    if (const json::Value& type = task["type"]; !type.is_null()) {
      mapped(name("type"), "type");
      std::string kind = type.string_or_empty();
      if (kind == "saga") {
        kind = "epic";
        note_change("type saga → epic");
      }
      if (kind == "epic" && out.contains("parent")) {
        add_label(out, "epic");
        note_change("epic under a parent → task with the label epic");
      } else if (!kind.empty() || !type.is_string()) {
        out.set("type", kind.empty() ? type : json::Value(kind));
      }
    }

    notes(out, task["notes"], task["createdAt"]);
    if (!task["notes"].is_null()) mapped(name("notes"), "notes (with their times)");
    acceptance(out, task["acceptance"]);
    if (!task["acceptance"].is_null()) mapped(name("acceptance"), "acceptance");
    if (const json::Value& relates = task["relates"]; !relates.is_null()) {
      mapped(name("relates"), "relates");
      if (!relates.is_array()) {
        out.set("relates", relates);
      } else {
        json::Value links = json::Value::array();
        for (const auto& link : relates.as_array()) {
          json::Value item = json::Value::object();
          const json::Value& target = link["taskId"];
          item.set("id", target.is_string() ? normalize_task_id(trim(target.as_string())).value_or(target.as_string()) : target);
          item.set("type", link["type"]);
          if (!link["reason"].is_null()) item.set("reason", link["reason"]);
          links.push_back(std::move(item));
        }
        out.set("relates", std::move(links));
      }
    }
    return out;
  }

  /// One session (sessions.json's, a history entry, or the database's brought to that shape).
  json::Value session(const json::Value& session, bool history, const Naming& name) {
    if (!session.is_object()) return session;
    json::Value out = json::Value::object();
    static const std::set<std::string_view> kRead = {"id",        "name",   "status",     "agentId",    "scope",
                                                     "focus",     "startedAt", "lastActivity", "endedAt", "archivedAt",
                                                     "endNote",   "notes",  "handoff",    "debrief"};
    static const std::set<std::string_view> kDerived = {"computedTaskIds", "computedAt", "includeDescendants"};
    for (const auto& [key, value] : session.as_object())
      if (!kRead.contains(key) && meaningful(value)) lost(name(key));
    const std::string was = session["id"].string_or_empty();
    out.set("id", was.empty() ? json::Value() : json::Value(session_id_for(was)));
    out.set("was", session["id"]);
    mapped(name("id"), "id (ses_ and its letters and digits)");
    const json::Value& given_name = session["name"];
    out.set("name", meaningful(given_name) ? given_name : json::Value(was));
    if (!given_name.is_null()) mapped(name("name"), "name");

    // Status: a session nobody works in here is suspended; what ended stays ended.
    std::string status = history ? "ended" : session["status"].string_or_empty();
    if (status == "active") {
      status = "suspended";
      note_change("session active → suspended (nobody works in it here; session.resume picks it up)");
    } else if (status == "archived" || status == "orphaned") {
      note_change("session " + status + " → ended");
      status = "ended";
    }
    out.set("status", status.empty() && !history ? session["status"] : json::Value(status));
    if (!history) mapped(name("status"), "status");

    if (const json::Value& agent = session["agentId"]; meaningful(agent)) {
      out.set("agent", agent);
      mapped(name("agentId"), "agent");
    }
    const json::Value& scope = session["scope"];
    out.set("scope", scope_text(scope, name));
    mapped(name("scope"), "scope");
    for (const auto& [key, value] : scope.is_object() ? scope.as_object() : json::Value::Object{})
      if (key != "type" && key != "rootTaskId" && key != "epicId" && key != "explicitTaskIds" &&
          !kDerived.contains(key) && meaningful(value))
        lost(name("scope." + key));

    const json::Value& focus = session["focus"];
    std::string note;
    if (meaningful(focus["sessionNote"])) {
      note = focus["sessionNote"].string_or_empty();
      mapped(name("focus.sessionNote"), "note");
    }
    if (meaningful(session["endNote"])) {
      note = session["endNote"].string_or_empty();
      mapped(name("endNote"), "note");
    }
    if (const json::Value& notes = session["notes"]; notes.is_array() && !notes.empty()) {
      for (const auto& line : notes.as_array())
        if (meaningful(line)) note += (note.empty() ? "" : "\n") + (line.is_string() ? line.as_string() : line.dump());
      mapped(name("notes"), "note");
    }
    // The handoff a session left for the next (tasks.db's handoff_json, or the one inside its
    // debrief_json): its note and next action come along; what it computed from the tasks
    // (lastTask, nextSuggested, openBlockers …) is counted. The debrief's own additions too.
    const json::Value& debrief = session["debrief"];
    const bool own_handoff = session["handoff"].is_object();
    const json::Value& handoff = own_handoff ? session["handoff"] : debrief["handoff"];
    const std::string handoff_name = own_handoff ? name("handoff") : name("debrief") + ".handoff";
    if (meaningful(handoff["note"])) {
      note += (note.empty() ? "" : "\n") + handoff["note"].string_or_empty();
      mapped(handoff_name + ".note", "note");
    }
    for (const auto& [key, value] : handoff.is_object() ? handoff.as_object() : json::Value::Object{})
      if (key != "note" && key != "nextAction" && meaningful(value)) lost(handoff_name + "." + key);
    static const std::set<std::string_view> kDebriefSame = {"handoff", "sessionId", "agentIdentifier", "startedAt",
                                                            "endedAt", "durationMinutes"};  // the session's own
    for (const auto& [key, value] : debrief.is_object() ? debrief.as_object() : json::Value::Object{})
      if (!kDebriefSame.contains(key) && meaningful(value)) lost(name("debrief") + "." + key);
    if (!debrief.is_null() && !debrief.is_object()) lost(name("debrief"));
    if (!session["handoff"].is_null() && !own_handoff) lost(name("handoff"));

    if (!note.empty()) out.set("note", note);
    // The next action the session handed off, else the one its focus held.
    if (meaningful(handoff["nextAction"])) {
      out.set("nextAction", handoff["nextAction"]);
      mapped(handoff_name + ".nextAction", "nextAction");
    } else if (meaningful(focus["nextAction"])) {
      out.set("nextAction", focus["nextAction"]);
      mapped(name("focus.nextAction"), "nextAction");
    }
    for (const auto& [key, value] : focus.is_object() ? focus.as_object() : json::Value::Object{})
      if (key != "sessionNote" && key != "nextAction" && meaningful(value)) lost(name("focus." + key));

    out.set("createdAt", session["startedAt"]);
    mapped(name("startedAt"), "createdAt");
    json::Value updated = session["lastActivity"];
    if (updated.is_null()) updated = session["endedAt"];
    if (updated.is_null()) updated = session["startedAt"];
    out.set("updatedAt", updated);
    if (!session["lastActivity"].is_null()) mapped(name("lastActivity"), "updatedAt");
    if (!session["endedAt"].is_null()) {
      out.set("endedAt", session["endedAt"]);
      mapped(name("endedAt"), "endedAt");
    }
    if (!session["archivedAt"].is_null() || session["status"].string_or_empty() == "archived") {
      json::Value at = session["archivedAt"];
      out.set("archivedAt", at.is_null() ? updated : at);
      mapped(name("archivedAt"), "archivedAt");
    }
    return out;
  }

  /// The warnings of the values changed on the way in, one per kind, with how many.
  void summarise() {
    for (const auto& [what, count] : changes_) file_.warnings.push_back(std::to_string(count) + " × " + what);
    changes_.clear();
  }

 private:
  static json::Value ids(const json::Value& list) {
    if (!list.is_array()) return list;  // refused by the record check
    json::Value out = json::Value::array();
    for (const auto& item : list.as_array())
      out.push_back(item.is_string() ? json::Value(normalize_task_id(trim(item.as_string())).value_or(item.as_string())) : item);
    return out;
  }

  static void add_label(json::Value& out, std::string label) {
    json::Value labels = out["labels"].is_array() ? out["labels"] : json::Value::array();
    for (const auto& existing : labels.as_array())
      if (existing == json::Value(label)) return;
    labels.push_back(std::move(label));
    out.set("labels", std::move(labels));
  }

  static void labels(json::Value& out, const json::Value& given) {
    if (given.is_null()) return;
    if (!given.is_array()) {
      out.set("labels", given);  // refused by the record check
      return;
    }
    for (const auto& label : given.as_array()) {
      if (!label.is_string()) {
        out.set("labels", given);
        return;
      }
      add_label(out, label.as_string());
    }
  }

  /// Notes with the time their text starts with: the CLI wrote "2026-02-11 14:30:00 UTC: text",
  /// the MCP engine "[2026-02-11T14:30:00Z] text". A note without one takes the time of the note
  /// before it (the first, the task's createdAt).
  void notes(json::Value& out, const json::Value& given, const json::Value& created) {
    if (given.is_null()) return;
    if (!given.is_array()) {
      out.set("notes", given);  // refused by the record check
      return;
    }
    std::optional<TimeMs> last = created.is_string() ? parse_iso8601(created.as_string()) : std::nullopt;
    json::Value notes = out["notes"].is_array() ? out["notes"] : json::Value::array();
    for (const auto& note : given.as_array()) {
      std::string text;
      std::optional<TimeMs> at;
      if (note.is_string()) {
        std::tie(at, text) = split_note(note.as_string());
      } else if (note.is_object()) {
        text = (note["text"].is_null() ? note["note"] : note["text"]).string_or_empty();
        const json::Value& when = note["at"].is_null() ? note["timestamp"] : note["at"];
        if (when.is_string()) at = parse_iso8601(when.as_string());
      } else {
        out.set("notes", given);  // refused by the record check
        return;
      }
      if (trim(text).empty()) continue;
      if (!at) at = last;
      if (!at) note_change("note without a time: given the task's createdAt");
      json::Value item = json::Value::object();
      if (at) item.set("at", format_iso8601(*at));
      item.set("text", std::string(trim(text)));
      notes.push_back(std::move(item));
      last = at;
    }
    if (!notes.empty()) out.set("notes", std::move(notes));
  }

  static std::pair<std::optional<TimeMs>, std::string> split_note(const std::string& note) {
    std::string_view text = trim(note);
    if (text.starts_with("[")) {
      auto close = text.find(']');
      if (close != std::string_view::npos && close < 40)
        if (auto at = parse_iso8601(trim(text.substr(1, close - 1))))
          return {at, std::string(trim(text.substr(close + 1)))};
    }
    if (text.size() > 19 && std::isdigit(static_cast<unsigned char>(text[0]))) {
      auto colon = text.find(": ", 19);
      if (colon != std::string_view::npos && colon < 40) {
        std::string_view stamp = trim(text.substr(0, colon));
        if (stamp.ends_with(" UTC")) stamp = trim(stamp.substr(0, stamp.size() - 4));
        if (auto at = parse_iso8601(stamp)) return {at, std::string(trim(text.substr(colon + 2)))};
      }
    }
    return {std::nullopt, std::string(text)};
  }

  /// Criteria past what a task holds here (count or length) become notes, never lost.
  void acceptance(json::Value& out, const json::Value& given) {
    if (given.is_null()) return;
    if (!given.is_array()) {
      out.set("acceptance", given);  // refused by the record check
      return;
    }
    json::Value items = json::Value::array();
    json::Value notes = out["notes"].is_array() ? out["notes"] : json::Value::array();
    for (const auto& item : given.as_array()) {
      if (!item.is_string()) {
        out.set("acceptance", given);
        return;
      }
      std::string text(trim(item.as_string()));
      if (text.empty()) continue;
      if (utf8_length(text) > limits_.acceptance_item || items.size() >= limits_.acceptance_items) {
        json::Value note = json::Value::object();
        note.set("text", clip("Acceptance: " + text, limits_.note));
        notes.push_back(std::move(note));
        note_change("acceptance criterion past the 50 of 200 characters a task holds: kept as a note");
        continue;
      }
      items.push_back(std::move(text));
    }
    if (!items.empty()) out.set("acceptance", std::move(items));
    if (!notes.empty()) out.set("notes", std::move(notes));
  }

  /// A scope object ({type, rootTaskId | epicId, explicitTaskIds}) in this store's words.
  std::string scope_text(const json::Value& scope, const Naming& name) {
    if (scope.is_string()) return scope.as_string();
    if (!scope.is_object() || scope.empty() || scope["type"] == json::Value("global")) return "global";
    std::string type = scope["type"].string_or_empty();
    std::string root = (scope["rootTaskId"].is_null() ? scope["epicId"] : scope["rootTaskId"]).string_or_empty();
    if (type == "custom") {
      std::vector<std::string> listed;
      for (const auto& id : scope["explicitTaskIds"].is_array() ? scope["explicitTaskIds"].as_array() : json::Value::Array{})
        listed.push_back(id.string_or_empty());
      return "custom:" + join(listed, ",");
    }
    if (type == "epicPhase") {
      lost(name("scope.phaseFilter (epicPhase)"));
      type = "epic";
    }
    return type + ":" + root;  // parse_scope refuses a kind it does not know
  }

  ForeignFile& file_;
  TaskLimits limits_;
  std::map<std::string, std::int64_t> changes_;
};

// --- config.json -----------------------------------------------------------------------------

/// The original's keys that have an equivalent here, and how a value turns into ours. Keys that
/// run programs (release.gates, validation.testing.command) are not taken from another store's
/// file: a person sets them here.
struct ConfigMapping {
  std::string_view theirs;
  std::string_view ours;
  json::Value (*convert)(const json::Value&);
};

json::Value same(const json::Value& value) { return value; }
json::Value enforcement(const json::Value& value) {
  std::string text = value.string_or_empty();
  if (text == "warn") return "advisory";
  if (text == "off") return "none";
  return value;
}
json::Value hours_to_minutes(const json::Value& value) {
  return value.is_int() ? json::Value(value.as_int() * 60) : value;
}

constexpr ConfigMapping kConfigMap[] = {
    {"hierarchy.maxDepth", "hierarchy.maxDepth", same},
    {"hierarchy.maxSiblings", "hierarchy.maxSiblings", same},
    {"session.enforcement", "session.enforcement", enforcement},
    {"session.maxConcurrent", "session.maxConcurrent", same},
    {"session.sessionTimeoutHours", "session.idleMinutes", hours_to_minutes},
    {"retention.autoArchiveEndedAfterDays", "session.archiveDays", same},
    {"backup.maxSnapshots", "backup.keep", same},
    {"orchestrator.contextThresholds.warning", "orchestrator.contextWarning", same},
    {"orchestrator.contextThresholds.critical", "orchestrator.contextCritical", same},
    {"analyze.staleDetection.pendingDays", "analyze.stalePendingDays", same},
    {"analyze.staleDetection.blockedDays", "analyze.staleBlockedDays", same},
    {"lifecycleEnforcement.mode", "lifecycle.enforcement", same},
    {"output.defaultFormat", "output.format", same},
};

void flatten(const json::Value& value, const std::string& path, std::vector<std::pair<std::string, json::Value>>& out) {
  if (value.is_object() && !value.empty()) {
    for (const auto& [key, inner] : value.as_object()) flatten(inner, path.empty() ? key : path + "." + key, out);
    return;
  }
  out.emplace_back(path, value);
}

void read_config(Reader& reader, ForeignFile& file, const json::Value& config) {
  std::vector<std::pair<std::string, json::Value>> leaves;
  flatten(config, "", leaves);
  std::string manifest_dir, manifest_file;
  for (const auto& [key, value] : leaves) {
    // Bookkeeping of the file itself, and the health report the original computed into it.
    if (key == "$schema" || key == "version" || key.starts_with("_meta.") || key.starts_with("project.status.")) continue;
    if (key == "agentOutputs.directory" || key == "research.outputDir") {
      manifest_dir = value.string_or_empty();
      reader.mapped("config." + key, "research.manifestFile");
      continue;
    }
    if (key == "agentOutputs.manifestFile" || key == "research.manifestFile") {
      manifest_file = value.string_or_empty();
      reader.mapped("config." + key, "research.manifestFile");
      continue;
    }
    const ConfigMapping* mapping = nullptr;
    for (const auto& entry : kConfigMap)
      if (entry.theirs == key) mapping = &entry;
    if (!mapping) {
      if (meaningful(value) || value == json::Value(false) || value.is_number()) reader.lost("config." + key);
      continue;
    }
    reader.mapped("config." + key, mapping->ours);
    file.config.set(mapping->ours, mapping->convert(value));
  }
  if (!manifest_dir.empty() || !manifest_file.empty()) {
    std::string dir = manifest_dir.empty() ? "claudedocs/agent-outputs" : manifest_dir;
    while (dir.ends_with("/")) dir.pop_back();
    file.config.set("research.manifestFile", dir + "/" + (manifest_file.empty() ? "MANIFEST.jsonl" : manifest_file));
  }
}

/// The log: counted by action, never written into this store's audit trail.
void count_log(Reader& reader, const json::Value& entries, std::string_view prefix) {
  if (!entries.is_array()) return;
  std::map<std::string, std::int64_t> actions;
  for (const auto& entry : entries.as_array()) {
    std::string action = entry["action"].string_or_empty();
    if (action.empty()) action = entry["operation"].string_or_empty();
    ++actions[action.empty() ? std::string("(no action)") : action];
  }
  for (const auto& [action, count] : actions) reader.lost(std::string(prefix) + action, count);
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

// --- the JSON files (v0.x) ------------------------------------------------------------------

Result<void> read_json_store(const OriginalSource& source, Reader& reader, ForeignFile& file) {
  std::vector<std::string> read;
  CT_TRY_ASSIGN(std::optional<json::Value> todo, read_json(source.todo));
  if (!todo) return fail(Error(ErrorCode::NotFound, source.todo.string() + " is missing").with_detail("file", source.todo.string()));
  if (!todo->is_object() || !(*todo)["tasks"].is_array())
    return fail(Error(ErrorCode::InvalidInput, source.todo.string() + " has no tasks list: it is not the original CLEO's "
                                                                      "todo.json")
                    .with_fix("name the original's .cleo/ folder or its todo.json")
                    .with_detail("file", source.todo.string()));
  read.push_back(source.todo.filename().string());
  const Naming task_names{"task.", {}};
  for (const auto& task : (*todo)["tasks"].as_array()) file.records.push_back(reader.task(task, false, task_names));
  const json::Value& project = (*todo)["project"];
  if (project.is_object()) {
    if (meaningful(project["currentPhase"])) {
      file.config.set("project.currentPhase", project["currentPhase"]);
      reader.mapped("todo.json project.currentPhase", "project.currentPhase (config)");
    }
    for (std::string_view part : {"phases", "phaseHistory", "releases"})
      if (meaningful(project[part])) reader.lost("todo.json project." + std::string(part), static_cast<std::int64_t>(project[part].size()));
  }
  if (const json::Value& focus = (*todo)["focus"]; focus.is_object())
    for (const auto& [key, value] : focus.as_object())
      if (meaningful(value)) reader.lost("todo.json focus." + key);

  std::error_code ec;
  const fs::path archive_file = source.dir / "todo-archive.json";
  CT_TRY_ASSIGN(std::optional<json::Value> archive, read_json(archive_file));
  if (archive) {
    const json::Value& tasks = (*archive)["archivedTasks"].is_array() ? (*archive)["archivedTasks"] : (*archive)["tasks"];
    if (!tasks.is_array())
      return fail(Error(ErrorCode::InvalidInput, archive_file.string() + " has no archivedTasks list")
                      .with_fix("repair it, or move it aside to import without the archive")
                      .with_detail("file", archive_file.string()));
    for (const auto& task : tasks.as_array()) file.records.push_back(reader.task(task, true, task_names));
    read.emplace_back("todo-archive.json");
  } else {
    file.warnings.push_back("todo-archive.json is not in " + source.dir.string() + ": no archived tasks were read");
  }

  const fs::path sessions_file = source.dir / "sessions.json";
  CT_TRY_ASSIGN(std::optional<json::Value> sessions, read_json(sessions_file));
  if (sessions) {
    if (!(*sessions)["sessions"].is_array() && !(*sessions)["sessionHistory"].is_array())
      return fail(Error(ErrorCode::InvalidInput, sessions_file.string() + " has no sessions list")
                      .with_fix("repair it, or move it aside to import without sessions")
                      .with_detail("file", sessions_file.string()));
    std::set<std::string> seen;
    for (const auto& session : (*sessions)["sessions"].is_array() ? (*sessions)["sessions"].as_array() : json::Value::Array{}) {
      file.sessions.push_back(reader.session(session, false, Naming{"session.", {}}));
      seen.insert(session["id"].string_or_empty());
    }
    for (const auto& entry : (*sessions)["sessionHistory"].is_array() ? (*sessions)["sessionHistory"].as_array() : json::Value::Array{}) {
      if (seen.contains(entry["id"].string_or_empty())) continue;  // the same session, already read
      file.sessions.push_back(reader.session(entry, true, Naming{"sessionHistory.", {}}));
    }
    read.emplace_back("sessions.json");
  }

  const fs::path log_file = source.dir / "todo-log.json";
  if (auto log = read_json(log_file); !log) {
    file.warnings.push_back("todo-log.json was not read (" + log.error().message + "); nothing of it would be imported");
  } else if (*log) {
    count_log(reader, (**log)["entries"], "todo-log.json ");
    read.emplace_back("todo-log.json");
  }

  const fs::path config_file = source.dir / "config.json";
  CT_TRY_ASSIGN(std::optional<json::Value> config, read_json(config_file));
  if (config) {
    read_config(reader, file, *config);
    read.emplace_back("config.json");
  }
  file.source = source.todo.filename() == "todo.json" ? source.dir.string() : source.todo.string();
  file.warnings.insert(file.warnings.begin(), "read " + join(read, ", ") + " in " + source.dir.string());
  return {};
}

// --- the SQLite store (tasks.db, cleo.db) -------------------------------------------------------

/// The database's relation types in the original's JSON words; the others are kept in the reason.
json::Value relation(const json::Value& row) {
  std::string type = row["relation_type"].string_or_empty();
  json::Value link = json::Value::object();
  link.set("taskId", row["related_to"]);
  std::string reason = row["reason"].string_or_empty();
  if (type == "related" || type.empty()) {
    link.set("type", "relates-to");
  } else if (type == "duplicates" || type == "supersedes") {
    link.set("type", type);
  } else {
    link.set("type", "relates-to");
    reason = type + (reason.empty() ? "" : ": " + reason);
  }
  if (!reason.empty()) link.set("reason", clip(reason, 200));
  return link;
}

/// A JSON column's value (labels_json …): parsed, or the text as it is (then refused with its task).
json::Value json_column(const json::Value& value) {
  if (!value.is_string()) return value;
  auto parsed = json::parse(value.as_string());
  return parsed ? std::move(*parsed) : value;
}

Result<void> read_sqlite_store(const OriginalSource& source, Reader& reader, ForeignFile& file) {
  const std::string p = source.prefix;
  const std::string tasks_table = p + "tasks", deps_table = p + "task_dependencies", rel_table = p + "task_relations",
                    labels_table = p + "task_labels", ac_table = p + "task_acceptance_criteria",
                    sessions_table = p + "sessions";
  CT_TRY_ASSIGN(ForeignDatabase db, read_foreign_sqlite(source.database, {tasks_table, deps_table, rel_table, labels_table,
                                                                          ac_table, sessions_table}));
  const ForeignTable* tasks = db.find(tasks_table);
  if (!tasks) return fail(Error(ErrorCode::Internal, "the tasks table went while it was read"));

  // What the other tables add to each task, by its id.
  std::map<std::string, json::Value> depends, relates, labels, criteria;
  auto rows = [&](const std::string& name) -> const json::Value::Array& {
    static const json::Value::Array kNone;
    const ForeignTable* table = db.find(name);
    return table ? table->records.as_array() : kNone;
  };
  auto append = [](std::map<std::string, json::Value>& into, const json::Value& id, json::Value item) {
    json::Value& list = into[id.string_or_empty()];
    if (!list.is_array()) list = json::Value::array();
    list.push_back(std::move(item));
  };
  for (const auto& row : rows(deps_table)) append(depends, row["task_id"], row["depends_on"]);
  if (!rows(deps_table).empty()) reader.mapped(deps_table, "depends");
  for (const auto& row : rows(rel_table)) append(relates, row["task_id"], relation(row));
  if (!rows(rel_table).empty()) reader.mapped(rel_table, "relates");
  for (const auto& row : rows(labels_table)) append(labels, row["task_id"], row["label"]);
  if (!rows(labels_table).empty()) reader.mapped(labels_table, "labels");
  {
    std::vector<const json::Value*> ordered;
    for (const auto& row : rows(ac_table)) ordered.push_back(&row);
    std::ranges::stable_sort(ordered, {}, [](const json::Value* row) {
      return (*row)["ordinal"].is_number() ? (*row)["ordinal"].as_double() : 0.0;
    });
    for (const json::Value* row : ordered) append(criteria, (*row)["task_id"], (*row)["text"]);
    if (!ordered.empty()) reader.mapped(ac_table, "acceptance");
  }

  // The table's columns in the JSON files' words, so that one reading serves both generations.
  static const std::map<std::string, std::string, std::less<>> kTaskColumns = {
      {"parent_id", "parentId"},           {"position_version", "positionVersion"}, {"labels_json", "labels"},
      {"notes_json", "notes"},             {"acceptance_json", "acceptance"},       {"files_json", "files"},
      {"blocked_by", "blockedBy"},         {"epic_lifecycle", "epicLifecycle"},     {"no_auto_complete", "noAutoComplete"},
      {"created_at", "createdAt"},         {"updated_at", "updatedAt"},             {"completed_at", "completedAt"},
      {"cancelled_at", "cancelledAt"},     {"cancellation_reason", "cancellationReason"},
      {"verification_json", "verification"}, {"created_by", "createdBy"},          {"modified_by", "modifiedBy"},
      {"session_id", "sessionId"},         {"pipeline_stage", "pipelineStage"},     {"ivtr_state", "ivtrState"}};
  static const std::set<std::string_view> kBookkeeping = {"cycle_time_days", "idempotency_key"};
  Naming names{tasks_table + ".", {}};
  for (const auto& [column, field] : kTaskColumns) names.columns.emplace(field, tasks_table + "." + column);
  names.columns.emplace("_archive.archivedAt", tasks_table + ".archived_at");
  names.columns.emplace("_archive.reason", tasks_table + ".archive_reason");
  names.columns.emplace("depends", deps_table);
  names.columns.emplace("relates", rel_table);
  for (const auto& row : tasks->records.as_array()) {
    json::Value task = json::Value::object();
    json::Value archive = json::Value::object();
    for (const auto& [column, value] : row.as_object()) {
      if (value.is_null() || kBookkeeping.contains(column)) continue;
      if (column == "archived_at") {
        archive.set("archivedAt", value);
      } else if (column == "archive_reason") {
        archive.set("reason", value);
      } else if (column == "no_auto_complete") {
        task.set("noAutoComplete", value != json::Value(0));
      } else if (auto field = kTaskColumns.find(column); field != kTaskColumns.end()) {
        task.set(field->second, column.ends_with("_json") ? json_column(value) : value);
      } else {
        task.set(column, value);
      }
    }
    if (!archive.empty()) task.set("_archive", std::move(archive));
    const std::string id = row["id"].string_or_empty();
    if (auto found = depends.find(id); found != depends.end()) task.set("depends", found->second);
    if (auto found = relates.find(id); found != relates.end()) task.set("relates", found->second);
    for (auto* extra : {&labels, &criteria}) {
      auto found = extra->find(id);
      if (found == extra->end()) continue;
      const char* field = extra == &labels ? "labels" : "acceptance";
      if (!task[field].is_null() && !task[field].is_array()) continue;  // refused with its task
      json::Value merged = task[field].is_array() ? task[field] : json::Value::array();
      for (const auto& item : found->second.as_array())
        if (std::ranges::find(merged.as_array(), item) == merged.as_array().end()) merged.push_back(item);
      task.set(field, std::move(merged));
    }
    file.records.push_back(reader.task(task, false, names));
  }

  if (const ForeignTable* sessions = db.find(sessions_table)) {
    Naming session_names{sessions_table + ".", {{"agentId", sessions_table + ".agent"},
                                                {"scope", sessions_table + ".scope_json"},
                                                {"notes", sessions_table + ".notes_json"},
                                                {"handoff", sessions_table + ".handoff_json"},
                                                {"debrief", sessions_table + ".debrief_json"},
                                                {"startedAt", sessions_table + ".started_at"},
                                                {"endedAt", sessions_table + ".ended_at"},
                                                {"lastActivity", sessions_table + ".last_activity"}}};
    static const std::map<std::string, std::string, std::less<>> kSessionColumns = {
        {"agent", "agentId"},       {"scope_json", "scope"},   {"notes_json", "notes"},
        {"handoff_json", "handoff"}, {"debrief_json", "debrief"},
        {"started_at", "startedAt"}, {"ended_at", "endedAt"},   {"last_activity", "lastActivity"}};
    for (const auto& row : sessions->records.as_array()) {
      json::Value session = json::Value::object();
      for (const auto& [column, value] : row.as_object()) {
        if (value.is_null()) continue;
        if (column == "owner_auth_token") continue;  // a secret of the original's: never copied or reported by value
        auto field = kSessionColumns.find(column);
        session.set(field != kSessionColumns.end() ? field->second : column,
                    column.ends_with("_json") ? json_column(value) : value);
      }
      file.sessions.push_back(reader.session(session, false, session_names));
    }
  }

  // The tables that have no place here, with their rows: the log (audit_log), focus and work
  // history, lifecycle pipelines, manifests, decisions … Bookkeeping and derived tables are left
  // out; in cleo.db only the tasks_ tables are the tasks domain's.
  static const std::set<std::string_view> kSilentTables = {"schema_meta", "__drizzle_migrations", "acceptance_projection_state",
                                                           "acceptance_projection_dirty"};
  std::int64_t others = 0;
  for (const auto& table : db.tables) {
    if (table.name == tasks_table || table.name == deps_table || table.name == rel_table || table.name == labels_table ||
        table.name == ac_table || table.name == sessions_table)
      continue;
    if (!p.empty() && !table.name.starts_with(p)) {
      if (table.rows > 0 && !is_brain_table(table.name)) ++others;  // the brain is read by read_brain
      continue;
    }
    if (kSilentTables.contains(std::string_view(table.name).substr(p.size()))) continue;
    reader.lost(table.name, table.rows);
  }
  if (others > 0)
    file.warnings.push_back(std::to_string(others) + " table(s) of " + source.database.filename().string() +
                            " outside the tasks domain and its memory (nexus, conduit …) were not read");

  std::error_code ec;
  std::vector<std::string> beside;
  for (std::string_view name : kJsonFiles)
    if (fs::exists(source.dir / name, ec)) beside.emplace_back(name);
  if (!beside.empty())
    file.warnings.push_back(join(beside, ", ") + " beside " + source.database.filename().string() +
                            " were not read: the original kept them as the copy it moved from");
  const fs::path config_file = source.dir / "config.json";
  CT_TRY_ASSIGN(std::optional<json::Value> config, read_json(config_file));
  if (config) read_config(reader, file, *config);
  file.source = source.database.string();
  return {};
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

Result<ForeignFile> read_original(const OriginalSource& source, const OperationSpec& add_spec,
                                  const OperationSpec& observe_spec) {
  ForeignFile file;
  file.format = "original";
  file.generation = source.generation;
  Reader reader(file, add_spec);
  if (source.generation == "sqlite") {
    CT_TRY(read_sqlite_store(source, reader, file));
  } else {
    CT_TRY(read_json_store(source, reader, file));
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
