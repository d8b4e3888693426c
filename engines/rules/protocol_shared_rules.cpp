// The rules several protocols hold, and the reasons the others give (engines/rules/protocol_rules.h):
// the entry's agent type, the latest test run, the recorded checks, @task provenance.
#include <algorithm>

#include "core/text.h"
#include "engines/rules/protocol_rules.h"

namespace ct::protocol_rules {

std::string entry_missing(const RuleInput& in) {
  std::vector<std::string> types(in.protocol.agent_types.begin(), in.protocol.agent_types.end());
  return "no " + join(types, " or ") + " entry" +
         (in.evidence.task ? " is linked to " + in.evidence.task->id : std::string(" is named")) +
         " (name one with entryId)";
}

std::optional<RuleOutcome> output_unavailable(const RuleInput& in) {
  if (!in.evidence.entry) return skipped(no_entry(in));
  const auto& output = in.evidence.output;
  if (!output) return skipped("the output file was not read");
  switch (output->state) {
    case FileState::Read: return std::nullopt;
    case FileState::Missing: return failed("the output file " + output->path + " does not exist");
    case FileState::Outside: return failed("the output file " + output->path + " leads outside the project");
    case FileState::NotRegular: return failed("the output file " + output->path + " is not a regular file");
    case FileState::Unreadable: return failed("the output file " + output->path + " cannot be read");
  }
  return failed("the output file cannot be read");
}

std::string partly(const ProjectFile& file) {
  return file.truncated ? " (in its first " + std::to_string(file.content.size() / 1024) + " KiB)" : "";
}

RuleOutcome agent_type_rule(const RuleInput& in) {
  const auto& types = in.protocol.agent_types;
  std::vector<std::string> names(types.begin(), types.end());
  if (!in.evidence.entry) return in.protocol.needs_entry ? failed(entry_missing(in)) : skipped(no_entry(in));
  const ResearchEntry& entry = *in.evidence.entry;
  if (std::find(types.begin(), types.end(), entry.agent_type) != types.end()) return passed();
  return failed(entry.id + " has agentType '" + entry.agent_type + "'; " + std::string(in.protocol.name) +
                " output has agentType " + join(names, " or "));
}

RuleOutcome tests_pass_rule(const RuleInput& in) {
  const auto& run = in.evidence.test_run;
  if (!run)
    return failed("no validate.test.run is recorded" +
                  (in.evidence.task ? " for " + in.evidence.task->id + " or since it was created" : std::string()));
  if (!run->passed || run->failed.value_or(0) > 0)
    return failed("the latest test run (" + when(run->at) + ") failed" +
                  (run->failed ? ": " + std::to_string(*run->failed) + " failing" : std::string()));
  return passed("the test run of " + when(run->at) + " passed");
}

RuleOutcome recorded_checks_rule(const RuleInput& in) {
  if (!in.evidence.task) return skipped(no_task());
  const std::string own = "protocol." + std::string(in.protocol.name);
  std::vector<std::string> failing;
  std::size_t others = 0;
  for (const auto& check : in.evidence.checks) {
    if (check.check == own) continue;
    ++others;
    if (!check.last_passed) failing.push_back(check.check);
  }
  if (others == 0)
    return skipped("no other check is recorded for " + in.evidence.task->id +
                   " (validate.compliance.record, validate.test.run {id})");
  if (!failing.empty()) return failed("the latest result of " + quoted_list(failing) + " failed");
  return passed(std::to_string(others) + " recorded check" + (others == 1 ? "" : "s") + " passed");
}

RuleOutcome provenance_rule(const RuleInput& in) {
  if (!in.evidence.task) return skipped(no_task());
  const Task& task = *in.evidence.task;
  if (task.files.empty()) return skipped(task.id + " lists no files (tasks.update {id, files})");
  std::vector<std::string> untagged, missing, unreadable;
  std::size_t checked = 0;
  for (const auto& file : in.evidence.task_files) {
    if (file.state == FileState::Read) {
      ++checked;
      if (!has_task_tag(file.content, task.id)) untagged.push_back(file.path + partly(file));
    } else if (file.state == FileState::Missing) {
      missing.push_back(file.path);
    } else {
      unreadable.push_back(file.path + " (" + std::string(to_string(file.state)) + ")");
    }
  }
  if (checked == 0) {
    std::vector<std::string> all = missing;
    all.insert(all.end(), unreadable.begin(), unreadable.end());
    return skipped("none of " + task.id + "'s files can be read: " + quoted_list(all));
  }
  if (!untagged.empty())
    return failed(quoted_list(untagged) + (untagged.size() == 1 ? " has" : " have") + " no @task " + task.id + " tag");
  std::string note = std::to_string(checked) + " file" + (checked == 1 ? "" : "s") + " tagged";
  if (!missing.empty()) note += "; not there: " + quoted_list(missing);
  return passed(std::move(note));
}

}  // namespace ct::protocol_rules
