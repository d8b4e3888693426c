// The research protocol of seed 003 (RSCH-…, engines/rules/protocol.h): an investigation written up
// as a document, changing no code, with its sources, linked tasks, manifest entry and 3–7 key
// findings. Its rules and their checks; protocol.cpp puts the nine in one table.
#include <algorithm>

#include "core/text.h"
#include "engines/rules/protocol.h"
#include "engines/rules/protocol_rules.h"

namespace ct::protocol_rules {
namespace {

RuleOutcome research_no_code(const RuleInput& in) {
  if (!in.evidence.entry) return skipped(no_entry(in));
  if (is_code_file(in.evidence.entry->file))
    return failed(in.evidence.entry->file + " is source code: research writes a document and changes no code");
  return passed("the output is a document (changes to code are in git, which this check does not read)");
}

RuleOutcome research_sources(const RuleInput& in) {
  if (auto unavailable = output_unavailable(in)) return *unavailable;
  const auto& output = *in.evidence.output;
  if (has_url(in.output_lower) ||
      has_heading_with(output.content, {"sources", "references", "bibliography", "citations", "links"}))
    return passed();
  return failed(output.path + " cites no sources: no URL and no Sources or References section" + partly(output));
}

RuleOutcome research_linked(const RuleInput& in) {
  if (!in.evidence.entry) return skipped(no_entry(in));
  const ResearchEntry& entry = *in.evidence.entry;
  if (entry.linked_tasks.empty()) return failed(entry.id + " links no task (linkedTasks is empty)");
  if (!in.evidence.missing_links.empty())
    return failed(entry.id + " links " + quoted_list(in.evidence.missing_links) + ", which do" +
                  (in.evidence.missing_links.size() == 1 ? "es" : "") + " not exist");
  if (in.evidence.task &&
      std::find(entry.linked_tasks.begin(), entry.linked_tasks.end(), in.evidence.task->id) == entry.linked_tasks.end())
    return failed(entry.id + " is not linked to " + in.evidence.task->id);
  return passed();
}

RuleOutcome research_entry(const RuleInput& in) {
  if (in.evidence.entry) return passed();
  return failed(entry_missing(in));
}

RuleOutcome research_output(const RuleInput& in) {
  if (auto unavailable = output_unavailable(in)) return *unavailable;
  const ResearchEntry& entry = *in.evidence.entry;
  const ProjectFile& output = *in.evidence.output;
  if (!entry.file_checksum.empty() && entry.file_checksum != output.sha256)
    return failed(output.path + " changed after it was recorded (its SHA-256 is not the entry's fileChecksum)");
  if (trim(output.content).empty()) return failed(output.path + " is empty");
  if (!has_heading(output.content))
    return failed(output.path + " has no Markdown heading: it is not the structured output (title, summary, "
                  "content, references)" + partly(output));
  return passed();
}

RuleOutcome research_findings(const RuleInput& in) {
  if (!in.evidence.entry) return skipped(no_entry(in));
  const std::size_t n = in.evidence.entry->key_findings.size();
  if (n >= 3 && n <= 7) return passed();
  return failed("keyFindings has " + std::to_string(n) + " item" + (n == 1 ? "" : "s") + "; 3–7 are required");
}

}  // namespace

ProtocolInfo research_protocol() {
  using enum RuleLevel;
  return {
      .protocol = Protocol::Research, .name = to_string(Protocol::Research), .code = ErrorCode::ProtocolResearch,
      .purpose = "Investigate and report findings, changing no code",
      .agent_types = {"research"}, .needs_entry = false,  // RSCH-004 itself requires the entry
      .rules = {
          {"RSCH-001", Must, "Changes no code: the output is a document, not source code",
           "write the findings to a Markdown file under .cleo/agent-outputs/ and record it with research.add",
           research_no_code},
          {"RSCH-002", Should, "Cites its sources (URLs, or a Sources or References section)",
           "add a References section with the URLs and documents used", research_sources},
          {"RSCH-003", Must, "Links its tasks through linkedTasks (tasks that exist)",
           call("research.link", {{"id", "{entryId}"}, {"taskId", "{id}"}}),
           research_linked},
          {"RSCH-004", Must, "Appends a manifest entry for its output",
           call("research.add", {{"id", "{entryId}"}, {"file", "…"}, {"title", "…"}, {"status", "complete"},
                                 {"keyFindings", json::Value::Array{"…"}}, {"linkedTasks", json::Value::Array{"{id}"}}}),
           research_entry},
          {"RSCH-005", Must, "Writes the structured output file (headings; unchanged since it was recorded)",
           "write the file the entry names with a title, Summary, Content and References sections, then record it "
           "again",
           research_output},
          {"RSCH-006", Must, "States 3–7 key findings", "state the 3–7 most important findings, one sentence each",
           research_findings},
          {"RSCH-007", Must, "Is recorded with agentType research", "record the entry with agentType 'research'",
           agent_type_rule},
      }};
}

}  // namespace ct::protocol_rules
