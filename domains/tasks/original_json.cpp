// The original CLEO's v0.x JSON files as tasks.import reads them (domains/tasks/original_reader.h):
// todo.json's tasks and project, the archive's tasks, sessions.json's sessions and history,
// todo-log.json counted, config.json. todo.json must be there; the others may be missing (said in
// warnings).
#include <set>
#include <system_error>

#include "core/text.h"
#include "domains/tasks/original_reader.h"

namespace ct::tasks::original {

namespace fs = std::filesystem;

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

}  // namespace ct::tasks::original
