// The original CLEO's config.json and log as tasks.import reads them (domains/tasks/original_reader.h):
// the keys with an equivalent here become those keys (kConfigMap), the others are reported; the
// log is only counted, by action.
#include <map>
#include <utility>
#include <vector>

#include "domains/tasks/original_reader.h"

namespace ct::tasks::original {
namespace {

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

}  // namespace

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

}  // namespace ct::tasks::original
