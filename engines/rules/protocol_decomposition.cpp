// The decomposition protocol of seed 003 (DCMP-…, engines/rules/protocol.h): an epic split into
// parts that do not overlap, with dependencies without cycles, at most 3 levels and 7 siblings,
// atomic leaves and no time estimates. Its rules and their checks; protocol.cpp puts the nine in
// one table.
#include <map>

#include "core/text.h"
#include "engines/rules/protocol.h"
#include "engines/rules/protocol_rules.h"

namespace ct::protocol_rules {
namespace {

constexpr int kMaxDepth = 3;
constexpr std::size_t kMaxSiblings = 7;

/// The subject's open subtree: children per parent, cancelled tasks left out.
struct Tree {
  std::map<std::string, std::vector<const Task*>> children;
  std::vector<const Task*> tasks;
};

Tree open_tree(const ProtocolEvidence& evidence) {
  Tree tree;
  for (const auto& task : evidence.subtree) {
    if (task.status == TaskStatus::Cancelled) continue;
    tree.tasks.push_back(&task);
    tree.children[task.parent].push_back(&task);
  }
  return tree;
}

RuleOutcome dcmp_mece(const RuleInput& in) {
  if (!in.evidence.task) return skipped(no_task());
  const Task& root = *in.evidence.task;
  Tree tree = open_tree(in.evidence);
  auto found = tree.children.find(root.id);
  if (found == tree.children.end() || found->second.empty())
    return failed(root.id + " has no open subtasks: nothing is decomposed");
  for (const auto& [parent, kids] : tree.children) {
    std::map<std::string, std::string> titles;
    for (const Task* kid : kids) {
      auto [at, inserted] = titles.emplace(to_lower_ascii(trim(kid->title)), kid->id);
      if (!inserted)
        return failed(at->second + " and " + kid->id + " under " + parent + " have the same title: the parts overlap");
    }
  }
  return passed("no two parts share a title (whether they cover the whole is for a reviewer)");
}

RuleOutcome dcmp_cycles(const RuleInput& in) {
  if (!in.evidence.task) return skipped(no_task());
  if (in.evidence.cycles.empty()) return passed();
  const auto& cycle = in.evidence.cycles.front();
  std::string path = join(cycle, " → ");
  if (!cycle.empty()) path += " → " + cycle.front();
  return failed(std::to_string(in.evidence.cycles.size()) + " dependency cycle" +
                (in.evidence.cycles.size() == 1 ? "" : "s") + " among the subtasks: " + path);
}

RuleOutcome dcmp_depth(const RuleInput& in) {
  if (!in.evidence.task) return skipped(no_task());
  const Task& root = *in.evidence.task;
  std::map<std::string, int> depth{{root.id, in.evidence.depth}};
  int deepest = in.evidence.depth;
  std::string deepest_id = root.id;
  // graph_tasks orders parents before their children only within one level; iterate to a fixpoint.
  bool changed = true;
  while (changed) {
    changed = false;
    for (const auto& task : in.evidence.subtree) {
      if (depth.contains(task.id)) continue;
      auto parent = depth.find(task.parent);
      if (parent == depth.end()) continue;
      depth[task.id] = parent->second + 1;
      changed = true;
      if (parent->second + 1 > deepest) deepest = parent->second + 1, deepest_id = task.id;
    }
  }
  if (deepest <= kMaxDepth) return passed("depth " + std::to_string(deepest));
  return failed(deepest_id + " is at depth " + std::to_string(deepest) + "; at most 3 levels (epic > task > subtask)");
}

RuleOutcome dcmp_atomic(const RuleInput& in) {
  if (!in.evidence.task) return skipped(no_task());
  Tree tree = open_tree(in.evidence);
  std::vector<std::string> vague;
  std::size_t leaves = 0;
  for (const Task* task : tree.tasks) {
    if (tree.children.contains(task->id)) continue;
    ++leaves;
    if (task->acceptance.empty() && task->size != TaskSize::Small) vague.push_back(task->id);
  }
  if (leaves == 0) return skipped(in.evidence.task->id + " has no open subtasks (DCMP-001)");
  if (vague.empty()) return passed(std::to_string(leaves) + " leaves");
  return failed(quoted_list(vague) + (vague.size() == 1 ? " has" : " have") +
                " neither acceptance criteria nor size small: not atomic");
}

RuleOutcome dcmp_estimates(const RuleInput& in) {
  if (!in.evidence.task) return skipped(no_task());
  std::vector<const Task*> all{&*in.evidence.task};
  for (const auto& task : in.evidence.subtree)
    if (task.status != TaskStatus::Cancelled) all.push_back(&task);
  for (const Task* task : all) {
    for (const std::string* text : {&task->title, &task->description}) {
      if (auto estimate = time_estimate(*text))
        return failed(task->id + "'s " + (text == &task->title ? "title" : "description") +
                      " holds a time estimate: '" + *estimate + "'");
    }
  }
  return passed();
}

RuleOutcome dcmp_siblings(const RuleInput& in) {
  if (!in.evidence.task) return skipped(no_task());
  Tree tree = open_tree(in.evidence);
  for (const auto& [parent, kids] : tree.children)
    if (kids.size() > kMaxSiblings)
      return failed(parent + " has " + std::to_string(kids.size()) + " open subtasks; at most 7 siblings");
  return passed();
}

}  // namespace

ProtocolInfo decomposition_protocol() {
  using enum RuleLevel;
  return {
      .protocol = Protocol::Decomposition, .name = to_string(Protocol::Decomposition), .code = ErrorCode::ProtocolDecomposition,
      .purpose = "Split an epic into atomic, ordered tasks",
      .agent_types = {"specification"}, .needs_entry = false,
      .rules = {
          {"DCMP-001", Must, "Splits the work into parts that do not overlap (MECE)",
           call("tasks.add", {{"title", "…"}, {"parent", "{id}"}}) + "; merge parts that overlap",
           dcmp_mece},
          {"DCMP-002", Must, "Maps dependencies without cycles",
           call("tasks.analyze", {{"epicId", "{id}"}}) + " shows the cycle; remove one dependency of it",
           dcmp_cycles},
          {"DCMP-003", Must, "Stays within 3 levels (epic > task > subtask)",
           call("tasks.reparent", {{"id", "…"}, {"parent", "…"}}) + " to flatten it",
           dcmp_depth},
          {"DCMP-004", Must, "Ends in atomic leaves: acceptance criteria, or size small",
           call("tasks.update", {{"id", "…"}, {"acceptance", json::Value::Array{"…"}}}), dcmp_atomic},
          {"DCMP-005", Must, "Has no time estimates in titles or descriptions",
           "remove the estimate; use size small|medium|large instead", dcmp_estimates},
          {"DCMP-006", Must, "Keeps at most 7 siblings under one parent",
           "group the subtasks under intermediate tasks", dcmp_siblings},
          {"DCMP-007", Must, "Is recorded with agentType specification",
           "record the entry with agentType 'specification'", agent_type_rule},
      }};
}

}  // namespace ct::protocol_rules
