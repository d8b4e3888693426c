// A tracker served by a program (engines/adapters/tracker.h, open_plugin_tracker): one run of the
// program per request, through the subprocess adapter (argv, no shell, the project as working
// directory, the minimal environment, a time limit, capped output). The protocol is in docs/sync.md.
#include <utility>

#include "core/json_parse.h"
#include "engines/adapters/subprocess.h"
#include "engines/adapters/tracker.h"

namespace ct::tracker {
namespace {

constexpr int kProtocol = 1;

class PluginTracker final : public Tracker {
 public:
  PluginTracker(std::string name, std::vector<std::string> command, Settings settings)
      : name_(std::move(name)), command_(std::move(command)), settings_(std::move(settings)) {}

  std::string_view name() const override { return name_; }

  Result<Page> pull(const PullOptions& options) override {
    json::Value request = json::Value::object();
    request.set("cursor", options.cursor);
    request.set("pullRequests", options.include_pull_requests);
    request.set("pageSize", static_cast<std::int64_t>(options.page_size));
    request.set("comments", options.comments);
    CT_TRY_ASSIGN(json::Value data, call("pull", std::move(request)));
    Page page;
    if (!data["items"].is_array()) return fail(broken("pull", "no items list"));
    for (const auto& value : data["items"].as_array()) {
      CT_TRY_ASSIGN(Item item, item_from_json(value));
      page.items.push_back(std::move(item));
    }
    if (options.comments && data["comments"].is_array())
      for (const auto& value : data["comments"].as_array()) {
        CT_TRY_ASSIGN(Comment comment, comment_from_json(value));
        if (comment.item.empty()) return fail(broken("pull", "a comment that names no item"));
        page.comments.push_back(std::move(comment));
      }
    page.cursor = data["cursor"].string_or_empty();
    page.more = data["more"] == json::Value(true);
    return page;
  }

  Result<std::vector<Comment>> comments(const std::string& item, const std::string& since) override {
    json::Value request = json::Value::object();
    request.set("item", item);
    request.set("since", since);
    CT_TRY_ASSIGN(json::Value data, call("comments", std::move(request)));
    if (!data.is_array()) return fail(broken("comments", "not a list"));
    std::vector<Comment> out;
    for (const auto& value : data.as_array()) {
      CT_TRY_ASSIGN(Comment comment, comment_from_json(value));
      out.push_back(std::move(comment));
    }
    return out;
  }

  Result<Item> push(const Edit& edit) override {
    json::Value request = json::Value::object();
    request.set("edit", to_json(edit));
    CT_TRY_ASSIGN(json::Value data, call("push", std::move(request)));
    return item_from_json(data);
  }

  Result<Item> create(const Item& draft) override {
    json::Value request = json::Value::object();
    request.set("draft", to_json(draft));
    CT_TRY_ASSIGN(json::Value data, call("create", std::move(request)));
    return item_from_json(data);
  }

  Result<Comment> comment(const std::string& item, std::string_view body) override {
    json::Value request = json::Value::object();
    request.set("item", item);
    request.set("body", body);
    CT_TRY_ASSIGN(json::Value data, call("comment", std::move(request)));
    return comment_from_json(data);
  }

 private:
  Error broken(std::string_view op, std::string_view what) const {
    return Error(ErrorCode::EngineFailed,
                 "the tracker plug-in " + name_ + " answered " + std::string(op) + " with " + std::string(what))
        .with_fix("check the plug-in against the protocol in docs/sync.md");
  }

  /// Runs the program with one request; the reply's data, or its error.
  Result<json::Value> call(std::string_view op, json::Value request) {
    request.set("protocol", kProtocol);
    request.set("op", op);
    request.set("repository", settings_.repository);
    request.set("options", settings_.options);
    ProcessSpec spec;
    spec.argv = command_;
    spec.cwd = settings_.root;
    spec.env = minimal_environment();
    spec.stdin_data = request.dump();
    spec.timeout = std::chrono::seconds(60);
    spec.max_stdout = 64 * 1024 * 1024;
    CT_TRY_ASSIGN(ProcessResult ran, run_process(spec));
    if (!ran.ok()) return fail(process_error(spec, ran, "the tracker plug-in " + name_));
    if (ran.out_truncated) return fail(broken(op, "more than 64 MiB"));
    auto reply = json::parse(ran.out);
    if (!reply || !reply->is_object()) return fail(broken(op, "output that is not a JSON object"));
    if ((*reply)["success"] == json::Value(true)) return (*reply)["data"];
    const auto& error = (*reply)["error"];
    if ((*reply)["success"] != json::Value(false) || !error.is_object()) return fail(broken(op, "no success flag"));
    std::string message = error["message"].string_or_empty();
    if (message.empty()) message = "failed";
    // "invalid": the tracker refused the values (as GitHub's 422): E_VALIDATION, not worth retrying.
    const bool refused = error["code"] == json::Value("invalid");
    Error out(refused ? ErrorCode::Validation : ErrorCode::EngineFailed,
              "the tracker plug-in " + name_ + ": " + std::string(op) + ": " + message);
    if (refused && error["field"].is_string()) out.details.set("field", error["field"].as_string());
    if (error["retryAfter"].is_int()) out.retry_after_seconds = error["retryAfter"].as_int();
    if (error["code"].is_string()) out.details.set("pluginCode", error["code"].as_string());
    return fail(std::move(out));
  }

  std::string name_;
  std::vector<std::string> command_;
  Settings settings_;
};

}  // namespace

Result<std::unique_ptr<Tracker>> open_plugin_tracker(std::string name, std::vector<std::string> command,
                                                     const Settings& settings) {
  if (command.empty() || command.front().empty())
    return fail(Error(ErrorCode::Validation, "the tracker plug-in " + name + " names no command")
                    .with_fix("set its command: ct config set trackers.<name>.command '[\"program\", …]'"));
  return std::unique_ptr<Tracker>(new PluginTracker(std::move(name), std::move(command), settings));
}

}  // namespace ct::tracker
