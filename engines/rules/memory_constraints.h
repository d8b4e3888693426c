// The referable constraints of a text (issue 54, seed 000): each H2 section of a memory entry's
// body (or a skill's), and each top-level list item inside one, with a stable id an agent copies
// into memory.applied to attest the exact constraint its work followed.
//
// Ids: a section is its H2 title ("Steps"); a list item is the title and its ordinal within the
// section ("Steps/1", "Steps/2"). A title repeated in one text gets " (2)", " (3)" … after its
// first use, so every id of a text is distinct. An entry's constraint is named by the entry's id,
// '#', and the local id ("M012#Steps/2"): what memory.find and memory.show return, whole.
// Headings and list markers inside fenced code blocks are text, not structure. A text without an
// H2 section has no constraints: its entry is attested whole by its id, as before.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ct::memory {

struct Constraint {
  std::string id;         // local: "Steps", "Steps/2"
  std::string name;       // the H2 title, for display and grouping
  std::string text;       // the section's body, or the list item's text (marker left out)
  std::string text_hash;  // 16 hex digits of the text's SHA-256
};

/// The constraints of a Markdown text, in the order they appear (a section, then its items).
std::vector<Constraint> constraints_of(std::string_view text);

/// "M012#Steps/2" → {"M012", "Steps/2"}; an id without '#' has no constraint part.
struct ConstraintRef {
  std::string entry;
  std::optional<std::string> constraint;
};
ConstraintRef split_constraint_ref(std::string_view id);

/// The separator between an entry's id and a constraint's local id.
inline constexpr char kConstraintSeparator = '#';
/// An entry's id or a skill's ("skill:task-executor"), or one of their constraints'
/// ("M012#Steps/2"): what memory.applied takes.
inline constexpr std::string_view kRefPattern = "^(M[0-9]{1,9}|skill:[^#\\n]{1,100})(#[^\\n]{1,180})?$";

}  // namespace ct::memory
