// What the release domain's files share (release_domain.cpp: the releases and their changelog;
// release_ship.cpp: ship, tag and rollback through git): the version param, loading a release,
// its record in the audit trail, its finished tasks.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/text.h"
#include "domains/context.h"
#include "domains/registry.h"
#include "engines/rules/release_engine.h"

namespace ct::release {

/// The words of a command line from config, split at spaces and tabs (never given to a shell).
inline std::vector<std::string> split_words(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  for (char c : text) {
    if (c == ' ' || c == '\t') {
      if (!word.empty()) words.push_back(std::move(word));
      word.clear();
    } else {
      word += c;
    }
  }
  if (!word.empty()) words.push_back(std::move(word));
  return words;
}

/// The version as stored ("v1.2.0" → "1.2.0"); the param's pattern (version_spec) already checked it.
inline std::string normalized(const std::string& version) {
  auto semver = normalize_semver(version);
  return semver ? *semver : version;
}

inline Error release_not_found(const std::string& version) {
  return Error(ErrorCode::NotFound, "Release " + version + " not found")
      .with_fix(call("release.list") + " lists the releases; " + call("release.create", {{"version", version}}) +
                " creates it")
      .with_detail("version", version);
}

inline Result<Release> load(Context& context, const std::string& version) {
  CT_TRY_ASSIGN(std::optional<Release> release, context.db().get_release(version));
  if (!release) return fail(release_not_found(version));
  return std::move(*release);
}

/// The record of a release in the audit trail (before/after of a change).
inline json::Value audit_json(const Release& release) {
  json::Value out = json::Value::object();
  out.set("status", to_string(release.status));
  out.set("tasks", json::Value::array_of(release.tasks));
  if (!release.tag.empty()) out.set("tag", release.tag);
  if (!release.commit.empty()) out.set("commit", release.commit);
  if (release.pushed) out.set("pushed", true);
  return out;
}

inline void record(Context& context, const std::optional<Release>& before, const Release& after) {
  context.record(FieldChange{"", "release." + after.version, before ? audit_json(*before) : json::Value(),
                             audit_json(after)});
}

inline ReleaseStatus unreleased_status(const Release& release) {
  return release.tasks.empty() ? ReleaseStatus::Planned : ReleaseStatus::Active;
}

inline Result<std::vector<Task>> done_tasks(Context& context, const Release& release) {
  CT_TRY_ASSIGN(std::vector<Task> tasks, context.db().get_tasks(release.tasks));
  std::vector<Task> done;
  // In the release's order (get_tasks may return them in any order).
  for (const auto& id : release.tasks)
    for (auto& task : tasks)
      if (task.id == id && task.status == TaskStatus::Done) done.push_back(task);
  return done;
}

inline std::string day_of(TimeMs at) { return format_iso8601(at).substr(0, 10); }

inline ParamSpec version_spec() {
  return {.name = "version", .type = ParamType::String, .required = true, .min = 5, .max = 64,
          .pattern = kSemverPattern, .description = "Semantic version, e.g. 1.2.0 (a leading v is dropped)",
          .positional = true, .single_line = true};
}

}  // namespace ct::release
