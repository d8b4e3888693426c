#include "domains/memory/memory_constraints.h"

#include <algorithm>

#include "core/advice.h"
#include "domains/skills/skills.h"

namespace ct::memory {

std::string constraint_ref(std::string_view owner, const Constraint& constraint) {
  return std::string(owner) + kConstraintSeparator + constraint.id;
}

void set_constraint_ids(json::Value& row, const MemoryEntry& entry) {
  const std::vector<Constraint> constraints = constraints_of(entry.body);
  if (constraints.empty()) return;
  json::Value ids = json::Value::array();
  for (const auto& constraint : constraints) ids.push_back(json::Value(constraint_ref(entry.id, constraint)));
  row.set("constraints", std::move(ids));
}

json::Value constraints_json(std::string_view owner, std::string_view body) {
  json::Value out = json::Value::array();
  for (const auto& constraint : constraints_of(body)) {
    json::Value row = json::Value::object();
    row.set("id", constraint_ref(owner, constraint));
    row.set("name", constraint.name);
    row.set("text", constraint.text);
    row.set("textHash", constraint.text_hash);
    out.push_back(std::move(row));
  }
  return out;
}

Result<Constraint> constraint_of(std::string_view owner, std::string_view body, const std::string& local,
                                 const std::string& given, const json::Value& again) {
  const std::string whole(owner);
  const std::vector<Constraint> constraints = constraints_of(body);
  for (const auto& constraint : constraints)
    if (constraint.id == local) return constraint;
  std::vector<std::string> valid;
  json::Value rows = json::Value::array();
  for (const auto& constraint : constraints) {
    valid.push_back(constraint_ref(owner, constraint));
    json::Value row = json::Value::object();
    row.set("id", valid.back());
    row.set("name", constraint.name);
    row.set("text", constraint.text);
    rows.push_back(std::move(row));
  }
  Error error(ErrorCode::ConstraintUnknown,
              valid.empty() ? given + " is no constraint: " + whole + " has no H2 section; attest it whole as " + whole
                            : given + " is not a constraint of " + whole + "; retry with one of: " + [&] {
                                std::string list;
                                for (const auto& id : valid) list += (list.empty() ? "" : ", ") + id;
                                return list;
                              }());
  error = std::move(error).with_choices(given, valid).with_detail("validConstraints", std::move(rows));
  // The call again, with the nearest valid id (or the entry whole) in place of the wrong one.
  std::string instead = valid.empty() ? whole : valid.front();
  if (const json::Value* near = error.details.find("didYouMean"); near && near->is_string()) instead = near->as_string();
  json::Value fixed = again;
  for (const char* list : {"ids", "ignored"})
    if (json::Value* ids = fixed.find(list); ids && ids->is_array())
      for (auto& id : ids->as_array())
        if (id.is_string() && id.as_string() == given) id = json::Value(instead);
  error.fix = call("memory.applied", std::move(fixed.as_object()));
  return fail(std::move(error));
}

Result<Reply> read_named_skills(Context& context, const std::vector<std::string>& refs) {
  json::Value data = json::Value::object();
  if (std::none_of(refs.begin(), refs.end(), [](const std::string& ref) { return ref.starts_with(kSkillPrefix); }))
    return Reply::of(std::move(data));
  std::vector<std::string> warnings;
  CT_TRY_ASSIGN(SkillCatalog catalog, load_skill_catalog(context, warnings));
  json::Value bodies = json::Value::object();
  for (const auto& ref : refs) {
    if (!ref.starts_with(kSkillPrefix)) continue;
    const std::string name = split_constraint_ref(ref).entry.substr(kSkillPrefix.size());
    if (const Skill* skill = catalog.find(name)) bodies.set(name, skill->body);
  }
  data.set("skills", std::move(bodies));
  data.set("names", json::Value::array_of(catalog.names()));
  return Reply::of(std::move(data));
}

Result<std::string> caller_host_session(Context& context) {
  if (context.session.empty()) return std::string();
  return context.db().host_session(context.session);
}

}  // namespace ct::memory
