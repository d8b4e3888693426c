// The constraints of memory entries as the memory domain serves and attests them (issue 54, seed
// 000; the parsing is engines/rules/memory_constraints.h): their ids in memory.find's rows (also
// of unchanged ones), whole in memory.show, the refusal of one an entry does not have, and the
// host's session id every attestation carries.
#pragma once

#include <string>

#include "core/json.h"
#include "domains/context.h"
#include "engines/rules/memory_constraints.h"
#include "engines/store/memory_store.h"

namespace ct::memory {

/// The id an agent copies into memory.applied: the owner's id (an entry's "M012", a skill's
/// "skill:task-executor"), '#', the constraint's ("M012#Steps/2").
std::string constraint_ref(std::string_view owner, const Constraint& constraint);
/// A skill's owner id in a constraint's ("skill:" and its name).
inline constexpr std::string_view kSkillPrefix = "skill:";
/// Sets `constraints` on a row to the ids of the entry's constraints (none: left out).
void set_constraint_ids(json::Value& row, const MemoryEntry& entry);
/// The constraints of `owner`'s `body`, [{id, name, text, textHash}] (memory.show, detail:'full',
/// skills.show).
json::Value constraints_json(std::string_view owner, std::string_view body);
/// The constraint `local` of `owner`'s `body`, or E_CONSTRAINT_UNKNOWN (retryable):
/// details.validConstraints [{id, name, text}], details.valid and didYouMean
/// (Error::with_choices), and as its fix `again` (the call as given) with `given` replaced by the
/// nearest valid id, or by the owner's id alone when it has no constraints.
Result<Constraint> constraint_of(std::string_view owner, std::string_view body, const std::string& local,
                                 const std::string& given, const json::Value& again);
/// The external step of memory.applied: the bodies of the skills `refs` name ("skill:<name>…"),
/// read before the call's transaction (skill files are files), as {skills:{name: body}, names:[…]
/// (every skill, for a did-you-mean)}; nothing is read when no ref names a skill.
Result<Reply> read_named_skills(Context& context, const std::vector<std::string>& refs);

/// The host's own session or thread id bound to the caller's session (session.start hostSession);
/// "" without a session or a binding.
Result<std::string> caller_host_session(Context& context);

}  // namespace ct::memory
