// The release protocol of seed 003 (RLSE-…, engines/rules/protocol.h): a semantic version with its
// changelog section, tag, version files and a rollback plan. Its rules and their checks;
// protocol.cpp puts the nine in one table.
#include "core/text.h"
#include "engines/rules/protocol.h"
#include "engines/rules/protocol_rules.h"
#include "engines/rules/release_engine.h"

namespace ct::protocol_rules {
namespace {

std::string no_release(const RuleInput& in) {
  return (in.evidence.task ? in.evidence.task->id : std::string("the subject")) + " is in no release";
}

RuleOutcome release_semver(const RuleInput& in) {
  if (!in.evidence.task) return skipped(no_task());
  if (!in.evidence.release) return failed(no_release(in));
  if (normalize_semver(in.evidence.release->version)) return passed(in.evidence.release->version);
  return failed("'" + in.evidence.release->version + "' is not a semantic version");
}

RuleOutcome release_changelog(const RuleInput& in) {
  if (!in.evidence.release) return skipped(no_release(in));
  const std::string& version = in.evidence.release->version;
  const auto& changelog = in.evidence.changelog;
  if (!changelog || changelog->state == FileState::Missing) return failed("CHANGELOG.md does not exist");
  if (changelog->state != FileState::Read)
    return failed("CHANGELOG.md cannot be read (" + std::string(to_string(changelog->state)) + ")");
  if (changelog_section(changelog->content, version)) return passed();
  return failed("CHANGELOG.md has no section for " + version + partly(*changelog));
}

RuleOutcome release_tag_rule(const RuleInput& in) {
  if (!in.evidence.release) return skipped(no_release(in));
  const Release& release = *in.evidence.release;
  if (release.tag.empty()) return skipped(release.version + " is not tagged yet");
  if (release.tag == release_tag(release.version)) return passed(release.tag);
  return failed("the tag " + release.tag + " does not name the version " + release.version + " (" +
                release_tag(release.version) + ")");
}

RuleOutcome release_versions(const RuleInput& in) {
  if (!in.evidence.release) return skipped(no_release(in));
  const Release& release = *in.evidence.release;
  if (release.status != ReleaseStatus::Released) return skipped(release.version + " is not shipped yet");
  if (in.evidence.release_superseded) return skipped("a later release was shipped after " + release.version);
  std::vector<std::string> stale, checked;
  for (const auto& file : in.evidence.version_files) {
    if (file.state != FileState::Read) continue;
    checked.push_back(file.path);
    if (file.content.find(release.version) == std::string::npos) stale.push_back(file.path);
  }
  if (checked.empty()) return skipped("no VERSION, package.json or release.versionFile to compare");
  if (stale.empty()) return passed(quoted_list(checked));
  return failed(quoted_list(stale) + (stale.size() == 1 ? " does" : " do") + " not state " + release.version);
}

RuleOutcome release_rollback(const RuleInput& in) {
  if (!in.evidence.release) return skipped(no_release(in));
  const Release& release = *in.evidence.release;
  std::string text = to_lower_ascii(release.notes);
  if (in.evidence.changelog && in.evidence.changelog->state == FileState::Read)
    if (auto section = changelog_section(in.evidence.changelog->content, release.version))
      text += "\n" + to_lower_ascii(*section);
  if (contains_any_word(text, {"rollback", "roll back", "revert", "downgrade"})) return passed();
  return failed("neither the notes of " + release.version + " nor its changelog section describe a rollback");
}

}  // namespace

ProtocolInfo release_protocol() {
  using enum RuleLevel;
  return {
      .protocol = Protocol::Release, .name = to_string(Protocol::Release), .code = ErrorCode::ProtocolRelease,
      .purpose = "Ship a versioned, documented, tagged release",
      .agent_types = {"release", "documentation"}, .needs_entry = false,
      .rules = {
          {"RLSE-001", Must, "Ships in a release with a semantic version",
           call("release.plan", {{"version", "1.0.0"}, {"add", json::Value::Array{"{id}"}}}),
           release_semver},
          {"RLSE-002", Must, "Has a changelog entry",
           call("release.changelog", {{"version", "…"}}), release_changelog},
          {"RLSE-003", Should, "Passes the tests", call("validate.test.run", {{"id", "{id}"}}), tests_pass_rule},
          {"RLSE-004", Must, "Tags git with the version (v<version>)",
           call("release.tag", {{"version", "…"}}), release_tag_rule},
          {"RLSE-005", Must, "States the same version in VERSION, package.json and release.versionFile",
           "set release.versionFile and ship again, or edit the file", release_versions},
          {"RLSE-006", Should, "Has a rollback plan", "describe the rollback in the release notes",
           release_rollback},
          {"RLSE-007", Must, "Is recorded with agentType release or documentation",
           "record the entry with agentType 'release'", agent_type_rule},
      }};
}

}  // namespace ct::protocol_rules
