// Who is calling — a person or which agent — as the transport established it (issue 52).
#pragma once

#include <string>
#include <string_view>

#include "core/text.h"

namespace ct {

/// A caller's principal. Only transports make one (the CLI from its terminal, environment and
/// person key; MCP from its connection; the dashboard from a person's login): nothing in params,
/// names, `_meta` or the store sets it, and it is fixed for a connection. Rights compare `id`;
/// the name an agent goes by (clientInfo, session.start's agent) is a label and decides nothing.
struct Principal {
  enum class Kind { Agent, Person };
  Kind kind = Kind::Agent;
  /// "person:<user>" for a person; "agent:<transport>:<connection>" for an agent (an MCP stdio
  /// process, an HTTP MCP session, `ct` run by an agent host's shell).
  std::string id;
  /// How the transport knows: "terminal", "person-key" or "dashboard-login" for a person;
  /// "connection" for an agent on an MCP connection; "environment" for `ct` run without a terminal
  /// or inside an agent host; "" for in-process callers (tests, embedders).
  std::string proof;

  bool is_person() const { return kind == Kind::Person; }

  static Principal person(std::string user, std::string proof) {
    return {Kind::Person, "person:" + std::move(user), std::move(proof)};
  }
  static Principal agent(std::string id, std::string proof) { return {Kind::Agent, "agent:" + std::move(id), std::move(proof)}; }
};

/// Where a caller works (issue 53): the git work tree (its top-level directory, absolute) and the
/// branch its HEAD names, as the transport knows them once — `ct` and `ct mcp` from their process's
/// working directory (engines/project/git_worktree.h); over HTTP the server cannot know, and it
/// stays "". Never read from params. Sessions record it when they start or resume, when it is a
/// worktree of the project's own repository (Context::project_place).
struct Place {
  std::string worktree;
  std::string branch;
};

/// Whether an agent may go by `label`: names that read as a person or as the product itself
/// ("person", "human@dashboard", "people", "cleo", "system", "person:…") are reserved, so the
/// audit trail and a proposal's author never show an agent as one of them.
inline bool is_reserved_label(std::string_view label) {
  std::string lower = to_lower_ascii(label);
  std::erase_if(lower, [](char c) { return c == ' ' || c == '-' || c == '_' || c == '.'; });
  for (std::string_view word : {"person", "human", "people", "user", "owner", "admin", "dashboard", "cleo", "ct", "system"}) {
    if (lower == word) return true;
    if (lower.starts_with(word) && (lower.size() == word.size() || lower[word.size()] == '@' || lower[word.size()] == ':'))
      return true;
  }
  return label.find('@') != std::string_view::npos && lower.find("dashboard") != std::string::npos;
}

}  // namespace ct
