// The tracker contract (issue 55): what a team's issue tracker (GitHub Issues, and through plug-ins
// Linear, Jira, GitLab…) must answer for its issues to be kept in step with tasks. One interface;
// GitHub is its first native implementation (open_github_tracker), and a plug-in speaks the same
// shapes as JSON over a subprocess. The sync (which task each item is, what changed on which side,
// conflicts) is above this: a Tracker only reads and writes the outside.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/json.h"

namespace ct::tracker {

/// One external item (an issue) as the tracker sees it.
struct Item {
  std::string id;                       // stable external id (GitHub: the node id)
  std::string key;                      // what people call it: "owner/name#123"
  std::string url;                      // where a person opens it
  std::string version;                  // opaque, changes whenever the item changes (GitHub: updated_at)
  std::string updated_at;               // ISO-8601 UTC
  std::string title;
  std::string body;
  std::string state;                    // "open" | "closed"
  std::string state_reason;             // "completed" | "not_planned" | "reopened" | ""
  std::vector<std::string> labels;
  std::string milestone;                // its title, "" for none
  std::string parent;                   // external id of the parent item, "" for none
  std::vector<std::string> blocked_by;  // external ids of the items this one waits on
  std::vector<std::string> assignees;   // logins, kept as metadata
  std::string author;                   // login
  bool pull_request = false;
};

struct Comment {
  std::string id;           // stable external id
  std::string item;         // the item's external id
  std::string author;
  std::string created_at;   // ISO-8601 UTC
  std::string body;
};

/// One page of what changed since a cursor, oldest change first; `cursor` resumes after it. With
/// PullOptions::comments, the comments made or edited on the repository's items since the cursor
/// come too (on any page: GitHub sends them on the pages after the items'); Comment::item is the
/// item's id, or "#<number>" when the tracker knows only its number.
struct Page {
  std::vector<Item> items;
  std::vector<Comment> comments;
  std::string cursor;
  bool more = false;
};

struct PullOptions {
  std::string cursor;                 // "" for everything
  bool include_pull_requests = false;
  bool comments = false;              // also the comments made since the cursor (Page::comments)
  std::size_t page_size = 100;
};

/// A change made here, pushed to the item. Only the fields set are changed.
struct Edit {
  std::string id;
  std::optional<std::string> title;
  std::optional<std::string> body;
  std::optional<std::string> state;         // "open" | "closed"
  std::optional<std::string> state_reason;  // with state "closed": "completed" | "not_planned"
  std::optional<std::vector<std::string>> labels;
};

/// What a tracker tells of a wait in words ("waiting 60 s: secondary rate limit"); the sync passes
/// it to whoever watches (core/progress.h). Pages are told by the sync, which counts what it kept.
using Progress = std::function<void(std::string_view message)>;

class Tracker {
 public:
  virtual ~Tracker() = default;
  virtual std::string_view name() const = 0;  // "github", or the plug-in's name
  /// Items changed since options.cursor. Calls it again with the returned cursor while `more`.
  virtual Result<Page> pull(const PullOptions& options) = 0;
  /// Comments on an item made after `since` ("" for all), oldest first.
  virtual Result<std::vector<Comment>> comments(const std::string& item, const std::string& since) = 0;
  /// Applies an edit; returns the item as it is after it. A tracker that refuses the edit's values
  /// (GitHub's 422 Validation Failed; a plug-in's error code "invalid") answers E_VALIDATION, with
  /// the tracker's message and `field` when it names one: that item is not changed, and retrying
  /// the same edit would not help.
  virtual Result<Item> push(const Edit& edit) = 0;
  /// Creates an item from a draft (title, body, labels, milestone by its title, state); returns it
  /// with its ids. A milestone the tracker does not have is left out (the item says which it got).
  /// Refused values: E_VALIDATION, as push.
  virtual Result<Item> create(const Item& draft) = 0;
  /// Adds a comment to an item; returns it with its id.
  virtual Result<Comment> comment(const std::string& item, std::string_view body) = 0;
  /// The key of an item this tracker has not pulled in this process (the sync keeps it with the
  /// item's link), for a tracker whose API addresses items by key (GitHub: the number in "o/r#12").
  virtual void know(const std::string& item, std::string_view key) {
    (void)item;
    (void)key;
  }
};

/// Where a tracker lives and how to reach it.
struct Settings {
  std::string repository;          // GitHub: "owner/name"
  std::string api_url;             // "" for the default (GitHub: $GITHUB_API_URL, else https://api.github.com)
  std::filesystem::path root;      // the project root (a plug-in's working directory)
  json::Value options = json::Value::object();  // tracker-specific settings from config
  Progress progress;               // may be empty
};

/// The GitHub Issues tracker (engines/adapters/github*). Its token comes from GITHUB_TOKEN, GH_TOKEN
/// or `gh auth token`, read at open and never stored by us.
Result<std::unique_ptr<Tracker>> open_github_tracker(const Settings& settings);

/// A tracker served by a program (docs/sync.md, "Tracker plug-ins"): `command` is its argv, run in
/// settings.root through the subprocess adapter once per request, which it reads as JSON on stdin
/// ({"protocol":1, "op", "repository", "options", …the op's arguments}) and answers on stdout
/// ({"success":true,"data":…} or {"success":false,"error":{"code","message"}}), each shape below's JSON.
Result<std::unique_ptr<Tracker>> open_plugin_tracker(std::string name, std::vector<std::string> command,
                                                     const Settings& settings);

/// The JSON of the contract's shapes, as plug-ins speak them (camelCase keys).
json::Value to_json(const Item& item);
json::Value to_json(const Comment& comment);
json::Value to_json(const Edit& edit);
Result<Item> item_from_json(const json::Value& value);
Result<Comment> comment_from_json(const json::Value& value);

}  // namespace ct::tracker
