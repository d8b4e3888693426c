#include "engines/rules/evidence.h"

#include <algorithm>

#include "core/json_parse.h"
#include "core/pattern.h"
#include "core/text.h"
#include "engines/rules/memory.h"

namespace ct::evidence {
namespace {

Error shape_error(std::string field, std::string message) {
  return Error(ErrorCode::InvalidParams, field + ": " + std::move(message)).with_detail("field", std::move(field));
}

Error rule_error(std::string field, std::string message) {
  return Error(ErrorCode::Validation, field + ": " + std::move(message)).with_detail("field", std::move(field));
}

/// A text of at most `max` characters, valid UTF-8 without control characters.
Result<std::string> text_of(const json::Value& value, const std::string& field, std::size_t max) {
  if (!value.is_string()) return fail(shape_error(field, "expected a string"));
  const std::string& text = value.as_string();
  if (!valid_utf8(text)) return fail(rule_error(field, "text is not valid UTF-8"));
  if (first_control_character(text, /*allow_newlines=*/true))
    return fail(rule_error(field, "control characters are refused in text"));
  if (trim(text).empty()) return fail(rule_error(field, "must not be empty"));
  if (utf8_length(text) > max) return fail(rule_error(field, "must be at most " + std::to_string(max) + " characters"));
  return std::string(trim(text));
}

Result<std::vector<std::int64_t>> numbers_of(const json::Value& value, const std::string& field) {
  std::vector<std::int64_t> out;
  json::Value::Array items;
  if (value.is_int()) items.push_back(value);
  else if (value.is_array()) items = value.as_array();
  else return fail(shape_error(field, "expected acceptance criterion numbers (1 for the first)"));
  if (items.size() > 50) return fail(rule_error(field, "takes at most 50 criteria"));
  for (const auto& item : items) {
    if (!item.is_int() || item.as_int() < 1 || item.as_int() > 1000)
      return fail(shape_error(field, "expected acceptance criterion numbers (1 for the first)"));
    if (std::find(out.begin(), out.end(), item.as_int()) == out.end()) out.push_back(item.as_int());
  }
  std::sort(out.begin(), out.end());
  return out;
}

Result<AtomInput> parse_atom(const json::Value& value, const std::string& field) {
  AtomInput atom;
  if (value.is_string()) {
    atom.kind = "note";
    CT_TRY_ASSIGN(atom.ref, text_of(value, field, 2000));
    return atom;
  }
  if (!value.is_object())
    return fail(shape_error(field, "expected an atom: {commit}, {files}, {test}, {pr} or {note}, with covers?"));
  for (const auto& [key, item] : value.as_object()) {
    if (key == "covers") {
      CT_TRY_ASSIGN(atom.covers, numbers_of(item, field + ".covers"));
      continue;
    }
    if (std::find(kAtomKinds.begin(), kAtomKinds.end(), key) == kAtomKinds.end())
      return fail(shape_error(field, "unknown key " + echo(key) + "; an atom is one of commit, files, test, pr, note, "
                                     "with covers?")
                      .with_choices(key, std::vector<std::string>(kAtomKinds.begin(), kAtomKinds.end())));
    if (!atom.kind.empty())
      return fail(shape_error(field, "names both " + atom.kind + " and " + key + "; give one kind per atom"));
    atom.kind = key;
    const std::string sub = field + "." + key;
    if (key == "files") {
      json::Value::Array paths;
      if (item.is_string()) paths.push_back(item);
      else if (item.is_array()) paths = item.as_array();
      else return fail(shape_error(sub, "expected a list of paths"));
      if (paths.empty()) return fail(rule_error(sub, "name at least one file"));
      if (paths.size() > kMaxFiles) return fail(rule_error(sub, "takes at most " + std::to_string(kMaxFiles) + " files"));
      for (std::size_t i = 0; i < paths.size(); ++i) {
        const std::string each = sub + "[" + std::to_string(i) + "]";
        CT_TRY_ASSIGN(std::string path, text_of(paths[i], each, 1000));
        auto normal = memory::normal_scope_path(path);
        if (!normal || normal->empty() || normal->back() == '/' || memory::is_glob(*normal))
          return fail(rule_error(each, echo(path) + " must name a file inside the project, relative to its root"));
        if (std::find(atom.files.begin(), atom.files.end(), *normal) == atom.files.end()) atom.files.push_back(*normal);
      }
    } else if (key == "test") {
      if (item.is_int() && item.as_int() > 0) {
        atom.ref = std::to_string(item.as_int());
      } else {
        CT_TRY_ASSIGN(std::string id, text_of(item, sub, 20));
        if (id.find_first_not_of("0123456789") != std::string::npos || id.front() == '0')
          return fail(rule_error(sub, "expected the record id validate.test.run answered (recorded), e.g. 12"));
        atom.ref = id;
      }
    } else if (key == "commit") {
      CT_TRY_ASSIGN(atom.ref, text_of(item, sub, 200));
      static const Pattern commit = *Pattern::compile(kCommitPattern);
      if (!commit.matches(atom.ref))
        return fail(rule_error(sub, echo(atom.ref) + " is not a commit hash or ref name"));
    } else {
      CT_TRY_ASSIGN(atom.ref, text_of(item, sub, key == "note" ? 2000 : 300));
      if (key == "pr" && atom.ref.front() == '-') return fail(rule_error(sub, "expected a pull request number or URL"));
    }
  }
  if (atom.kind.empty()) return fail(shape_error(field, "name one of commit, files, test, pr, note"));
  return atom;
}

}  // namespace

Mode mode(const Config& config) {
  const std::string& value = config.get_string("verification.evidence");
  return value == "off" ? Mode::Off : value == "strict" ? Mode::Strict : Mode::Advisory;
}

Result<std::vector<AtomInput>> parse_atoms(const json::Value& value, std::string_view field) {
  std::vector<AtomInput> atoms;
  if (value.is_null()) return atoms;
  if (!value.is_array()) {
    CT_TRY_ASSIGN(AtomInput atom, parse_atom(value, std::string(field)));
    atoms.push_back(std::move(atom));
    return atoms;
  }
  if (value.size() > kMaxAtoms)
    return fail(rule_error(std::string(field), "takes at most " + std::to_string(kMaxAtoms) + " atoms"));
  for (std::size_t i = 0; i < value.size(); ++i) {
    CT_TRY_ASSIGN(AtomInput atom, parse_atom(value.as_array()[i], std::string(field) + "[" + std::to_string(i) + "]"));
    atoms.push_back(std::move(atom));
  }
  return atoms;
}

Result<std::vector<Waiver>> parse_waivers(const json::Value& value, std::string_view field) {
  std::vector<Waiver> waivers;
  if (value.is_null()) return waivers;
  json::Value::Array items;
  if (value.is_array()) items = value.as_array();
  else items.push_back(value);
  if (items.size() > kMaxAtoms)
    return fail(rule_error(std::string(field), "takes at most " + std::to_string(kMaxAtoms) + " waivers"));
  for (std::size_t i = 0; i < items.size(); ++i) {
    const std::string each = std::string(field) + "[" + std::to_string(i) + "]";
    const json::Value& item = items[i];
    if (!item.is_object() || !item.contains("criterion") || !item.contains("reason"))
      return fail(shape_error(each, "expected {criterion, reason}"));
    for (const auto& [key, _] : item.as_object())
      if (key != "criterion" && key != "reason")
        return fail(shape_error(each, "unknown key " + echo(key) + "; a waiver is {criterion, reason}"));
    Waiver waiver;
    CT_TRY_ASSIGN(waiver.criteria, numbers_of(item["criterion"], each + ".criterion"));
    CT_TRY_ASSIGN(waiver.reason, text_of(item["reason"], each + ".reason", 1000));
    if (utf8_length(waiver.reason) < 10)
      return fail(rule_error(each + ".reason", "say why in at least 10 characters: a waiver is audited and shown on the task"));
    waivers.push_back(std::move(waiver));
  }
  return waivers;
}

Result<void> check_criteria(const std::vector<std::int64_t>& criteria, std::size_t count, std::string_view task_id,
                            std::string_view field) {
  for (auto criterion : criteria)
    if (criterion < 1 || static_cast<std::size_t>(criterion) > count)
      return fail(rule_error(std::string(field), std::string(task_id) + " has " + std::to_string(count) +
                                                     " acceptance criteria; there is no criterion " +
                                                     std::to_string(criterion))
                      .with_detail("criteria", static_cast<std::int64_t>(count)));
  return {};
}

Coverage coverage(std::size_t count, const std::vector<EvidenceAtom>& atoms, const std::set<std::string>& stale,
                  bool verified_only) {
  std::set<std::int64_t> covered, waived;
  for (const auto& atom : atoms) {
    if (atom.status != "current" || stale.contains(atom.id)) continue;
    if (atom.kind == "waiver") {
      waived.insert(atom.covers.begin(), atom.covers.end());
    } else if (is_unrelated(atom)) {
      continue;  // another change's work proves nothing of this task
    } else if (atom.verified || !verified_only) {
      covered.insert(atom.covers.begin(), atom.covers.end());
    }
  }
  Coverage out;
  for (std::int64_t criterion = 1; criterion <= static_cast<std::int64_t>(count); ++criterion) {
    if (covered.contains(criterion)) out.covered.push_back(criterion);
    else if (waived.contains(criterion)) out.waived.push_back(criterion);
    else out.uncovered.push_back(criterion);
  }
  return out;
}

bool is_unrelated(const EvidenceAtom& atom) { return atom.detail.is_object() && atom.detail.contains("unrelated"); }

bool replaces(const EvidenceAtom& fresh, const EvidenceAtom& old) {
  if (old.status != "current" || fresh.kind != old.kind) return false;
  if (is_unrelated(fresh) && !is_unrelated(old)) return false;  // another change's work refreshes nothing
  if (!fresh.gate.empty() && !old.gate.empty() && fresh.gate != old.gate) return false;
  if (fresh.kind == "files")
    return std::all_of(old.files.begin(), old.files.end(), [&](const EvidenceFile& file) {
      return std::any_of(fresh.files.begin(), fresh.files.end(),
                         [&](const EvidenceFile& other) { return other.path == file.path; });
    });
  if (fresh.kind == "commit" || fresh.kind == "test") return true;
  if (fresh.kind == "pr") return fresh.ref == old.ref;
  if (fresh.kind == "waiver") return fresh.covers == old.covers;
  return false;  // notes add up
}

json::Value atom_json(const EvidenceAtom& atom) {
  json::Value out = json::Value::object();
  out.set("id", atom.id);
  out.set("kind", atom.kind);
  if (!atom.ref.empty()) out.set(atom.kind == "waiver" ? "reason" : "ref", atom.ref);
  if (!atom.files.empty()) {
    json::Value files = json::Value::array();
    for (const auto& file : atom.files) files.push_back(file.path);
    out.set("files", std::move(files));
  }
  if (!atom.covers.empty()) out.set(atom.kind == "waiver" ? "waives" : "covers", json::Value::array_of(atom.covers));
  if (!atom.gate.empty()) out.set("gate", atom.gate);
  if (atom.kind != "waiver") out.set("verified", atom.verified);
  if (atom.detail.is_object() && atom.detail["unrelated"].is_string()) out.set("unrelated", true);
  if (atom.detail.is_object() && !atom.detail.empty()) out.set("detail", atom.detail);
  if (atom.status != "current") out.set("status", atom.status);
  if (!atom.agent.empty()) out.set("agent", atom.agent);
  return out;
}

std::string summary(const std::vector<EvidenceAtom>& atoms) {
  std::vector<std::string> parts;
  for (const auto& atom : atoms) {
    if (atom.kind == "commit") parts.push_back("commit " + atom.ref.substr(0, 12));
    else if (atom.kind == "files") parts.push_back("files (" + std::to_string(atom.files.size()) + ")");
    else if (atom.kind == "test") parts.push_back("test run " + atom.ref);
    else if (atom.kind == "pr") parts.push_back("pr " + atom.ref);
    else if (atom.kind == "note") parts.push_back("note: " + clip(atom.ref, 80));
  }
  return clip(join(parts, ", "), 500);
}

}  // namespace ct::evidence
