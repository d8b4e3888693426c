#include "domains/remedies.h"

#include "engines/project/config.h"

namespace ct {

Advice fallback_fix(ErrorCode code, const OperationSpec& spec, const std::string& id) {
  const std::string task = id.empty() ? "T001" : id;
  switch (code) {
    case ErrorCode::NotFound:
    case ErrorCode::ParentNotFound:
      return call("tasks.find", {{"query", task}});
    case ErrorCode::LockTimeout:
      // storage.busyTimeoutMs is a person's to raise (engines/project/config.cpp): the fix says so.
      return "retry the call; if it keeps happening, " + config_set_fix("storage.busyTimeoutMs", json::Value(15000));
    case ErrorCode::StoreUnavailable:
      return "retry in a few seconds; " + call("system.health") + " says whether the store's server answers";
    case ErrorCode::ConcurrentModification:
    case ErrorCode::ChecksumMismatch:
      return "read it again (" + call("tasks.show", {{"id", task}}) + ") and retry with its current version as ifVersion";
    case ErrorCode::FileError:
    case ErrorCode::NotInitialized:
      return call("system.health") + " says what is wrong with the store";
    case ErrorCode::ConfigError:
      return call("system.config.get") + " lists every key with its type and default";
    case ErrorCode::CircularReference:
      return call("tasks.deps", {{"id", task}}) + " shows the chain to break";
    case ErrorCode::HasChildren:
    case ErrorCode::InvalidParentType:
      return call("tasks.tree", {{"id", task}}) + " shows the children";
    case ErrorCode::DepthExceeded:
    case ErrorCode::SiblingLimit:
      return call("system.config.get",
                  {{"key", code == ErrorCode::DepthExceeded ? "hierarchy.maxDepth" : "hierarchy.maxSiblings"}}) +
             " shows the limit; choose another parent";
    case ErrorCode::TaskCompleted:
      return call("tasks.reopen", {{"id", task}}) + " first";
    case ErrorCode::SessionRequired:
    case ErrorCode::SessionNotFound:
      return call("session.start", {{"scope", "global"}});
    case ErrorCode::Internal:
      return "this is a bug in ct: retry once, and if it happens again report the message (" + call("system.version") +
             " names the version)";
    default:
      return call("system.help", {{"operation", spec.full_name()}}) + " describes the call, its params and its errors";
  }
}

}  // namespace ct
