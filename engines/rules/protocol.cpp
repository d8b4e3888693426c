// The protocol stack (engines/rules/protocol.h): the table of the nine protocols in their order,
// each protocol's rules and checks in a file of its own (protocol_research.cpp …
// protocol_testing.cpp, through protocol_rules.h); reading a project file the rules name; and
// check_protocol, which runs one protocol's rules and scores the report.
#include "engines/rules/protocol.h"

#include <algorithm>
#include <array>

#include "core/file_read.h"
#include "core/sha256.h"
#include "core/text.h"
#include "engines/project/project.h"
#include "engines/rules/protocol_rules.h"

namespace ct {
namespace {

namespace fs = std::filesystem;

/// The nine names, in the stack's order, which is the enum's: what names a protocol (its table
/// entry takes its name from here), built into the program, so that validate.protocol's enum
/// costs no process the table of rules (issue 56: 0.16 M instructions of every `ct` command).
constexpr std::array<std::string_view, 9> kProtocolNames = {
    "research",       "consensus",    "specification", "decomposition", "implementation",
    "contribution",   "release",      "validation",    "testing"};

/// The nine in the stack's order.
std::vector<ProtocolInfo> build_protocols() {
  namespace rules = protocol_rules;
  return {rules::research_protocol(),       rules::consensus_protocol(),      rules::specification_protocol(),
          rules::decomposition_protocol(),  rules::implementation_protocol(), rules::contribution_protocol(),
          rules::release_protocol(),        rules::validation_protocol(),     rules::testing_protocol()};
}

/// The rule's fix with the subject's ids in place of "{id}" and "{entryId}".
Advice filled_fix(const ProtocolRule& rule, const ProtocolEvidence& evidence) {
  std::string id = evidence.task ? evidence.task->id : "";
  if (id.empty() && evidence.entry) id = evidence.entry->id.substr(0, evidence.entry->id.find('-'));
  if (id.empty()) id = "T001";
  const std::string entry_id = evidence.entry ? evidence.entry->id : id + "-topic";
  return Advice(rule.fix).substitute("{entryId}", entry_id).substitute("{id}", id);
}

}  // namespace

std::string_view to_string(Protocol protocol) { return kProtocolNames[static_cast<std::size_t>(protocol)]; }

std::string_view to_string(RuleLevel level) { return level == RuleLevel::Must ? "MUST" : "SHOULD"; }

std::string_view to_string(RuleStatus status) {
  switch (status) {
    case RuleStatus::Pass: return "pass";
    case RuleStatus::Fail: return "fail";
    case RuleStatus::Skipped: return "skipped";
  }
  return "fail";
}

std::string_view to_string(FileState state) {
  switch (state) {
    case FileState::Read: return "read";
    case FileState::Missing: return "missing";
    case FileState::Outside: return "outside";
    case FileState::NotRegular: return "notRegular";
    case FileState::Unreadable: return "unreadable";
  }
  return "unreadable";
}

std::span<const ProtocolInfo> protocols() {
  static const std::vector<ProtocolInfo> table = build_protocols();
  return table;
}

const ProtocolInfo& protocol_info(Protocol protocol) {
  for (const auto& info : protocols())
    if (info.protocol == protocol) return info;
  return protocols().front();  // unreachable: the table holds every enumerator
}

std::optional<Protocol> parse_protocol(std::string_view name) {
  for (std::size_t i = 0; i < kProtocolNames.size(); ++i)
    if (kProtocolNames[i] == name) return static_cast<Protocol>(i);
  return std::nullopt;
}

std::vector<std::string_view> protocol_names() { return {kProtocolNames.begin(), kProtocolNames.end()}; }

std::optional<Protocol> protocol_for_agent_type(std::string_view agent_type) {
  // Each protocol's first agent type is its own; the first protocol in the stack that owns it wins
  // (specification before decomposition, implementation before contribution).
  for (const auto& info : protocols())
    if (!info.agent_types.empty() && info.agent_types.front() == agent_type) return info.protocol;
  return std::nullopt;
}

ProjectFile read_project_file(const fs::path& root, std::string_view relative, std::size_t max_bytes,
                              bool checksum) {
  ProjectFile file;
  file.path = std::string(relative);
  const fs::path given(file.path);
  // Resolved with its symbolic links: a link inside the project may point anywhere.
  auto real = given.is_absolute() || file.path.find('\0') != std::string::npos
                  ? Result<fs::path>(fail(ErrorCode::Validation, "outside"))
                  : project_file(root, given);
  if (!real) {
    file.state = FileState::Outside;
    return file;
  }
  auto state_of = [](const Error& error) {
    if (error.code == ErrorCode::NotFound) return FileState::Missing;
    if (error.details["reason"] == json::Value("notRegular")) return FileState::NotRegular;
    return FileState::Unreadable;  // larger than kHashLimit, slower than its deadline, or refused by the system
  };
  // Its first bytes for the rules to read, and (with `checksum`) the hash of all of it — a file
  // read on a caller's behalf: regular, at most kHashLimit, within a deadline (core/file_read.h).
  auto content = read_regular_file_part(*real, 0, {static_cast<std::int64_t>(max_bytes), kHashLimit.deadline});
  if (!content) {
    file.state = state_of(content.error());
    return file;
  }
  FileStamp stamp;
  if (checksum) {
    auto hashed = hash_regular_file(*real, kHashLimit, &stamp);
    if (!hashed) {
      file.state = state_of(hashed.error());
      return file;
    }
    file.sha256 = std::move(*hashed);
  } else {
    stamp = file_stamp(*real);
  }
  file.content = std::move(*content);
  file.size = static_cast<std::uintmax_t>(std::max<std::int64_t>(stamp.size, 0));
  file.size = std::max<std::uintmax_t>(file.size, file.content.size());
  file.state = FileState::Read;
  file.truncated = file.size > file.content.size();
  return file;
}

const RuleResult* ProtocolReport::first_failure() const {
  for (const auto& result : rules)
    if (result.status == RuleStatus::Fail && (strict || result.rule->level == RuleLevel::Must)) return &result;
  return nullptr;
}

ErrorCode ProtocolReport::error_code() const {
  if (const RuleResult* failure = first_failure(); failure && failure->rule->code) return *failure->rule->code;
  return protocol_info(protocol).code;
}

ProtocolReport check_protocol(Protocol protocol, const ProtocolEvidence& evidence, bool strict) {
  const ProtocolInfo& info = protocol_info(protocol);
  const std::string output_lower = evidence.output && evidence.output->state == FileState::Read
                                       ? to_lower_ascii(evidence.output->content)
                                       : std::string();
  const RuleInput input{info, evidence, output_lower};
  ProtocolReport report;
  report.protocol = protocol;
  report.strict = strict;
  int musts_checked = 0;
  bool blocked = false;
  for (const auto& rule : info.rules) {
    RuleOutcome outcome = rule.check(input);
    RuleResult result{&rule, outcome.status, std::move(outcome.message), filled_fix(rule, evidence)};
    const bool must = rule.level == RuleLevel::Must;
    switch (result.status) {
      case RuleStatus::Pass: ++report.passed; break;
      case RuleStatus::Skipped: ++report.skipped; break;
      case RuleStatus::Fail:
        ++report.failed;
        report.score -= must ? 20 : 5;
        blocked = blocked || must || strict;
        break;
    }
    if (must && result.status != RuleStatus::Skipped) ++musts_checked;
    report.rules.push_back(std::move(result));
  }
  report.score = std::max(report.score, 0);
  report.valid = !blocked && musts_checked > 0;
  return report;
}

}  // namespace ct
