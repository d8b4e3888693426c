#include "domains/router.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <set>

#include "core/version.h"
#include "core/json_parse.h"
#include "core/log.h"
#include "core/text.h"
#include "domains/context.h"
#include "domains/metrics.h"
#include "domains/params.h"
#include "domains/projection.h"
#include "engines/session_engine.h"
#include "engines/sqlite_store.h"


namespace ct {
namespace {

Result<void> check_route(const Registry& registry, const Request& request, const OperationSpec*& spec) {
  spec = registry.find(request.domain, request.operation);
  bool known_domain = spec != nullptr || std::any_of(registry.operations().begin(), registry.operations().end(),
                                                      [&](const auto& op) { return op.domain == request.domain; });
  if (!known_domain) {
    std::vector<std::string> domains = registry.domains(request.gateway);
    std::string message = "unknown domain '" + request.domain + "'";
    for (auto planned : canonical_domains())
      if (planned == request.domain) message = "domain '" + request.domain + "' has no operations in this version";
    Error error = Error(ErrorCode::InvalidDomain, std::move(message)).with_choices(request.domain, domains);
    const json::Value& guess = error.details["didYouMean"];
    error.fix = guess.is_string() ? "use domain '" + guess.as_string() + "'"
                                  : "use one of the domains in error.details.valid";
    return fail(std::move(error));
  }
  if (!spec) {
    Error error = Error(ErrorCode::InvalidOperation, "unknown operation '" + request.domain + "." +
                                                         request.operation + "' for " +
                                                         std::string(tool_name(request.gateway)))
                      .with_choices(request.operation, registry.operation_names(request.domain, request.gateway));
    // A word callers reach for ("get", "done") names its operation better than spelling does.
    if (const OperationSpec* meant = registry.find_alias(request.domain, request.operation, request.gateway)) {
      std::string suffix;
      if (const json::Value& spelled = error.details["didYouMean"]; spelled.is_string())
        suffix = " (did you mean '" + spelled.as_string() + "'?)";
      if (!suffix.empty() && error.message.ends_with(suffix)) error.message.resize(error.message.size() - suffix.size());
      error.message += " (did you mean '" + std::string(meant->name) + "'?)";
      error.details.set("didYouMean", std::string(meant->name));
    }
    const json::Value& guess = error.details["didYouMean"];
    const OperationSpec* suggested = guess.is_string() ? registry.find(request.domain, guess.as_string()) : nullptr;
    error.fix = suggested ? suggested->example_call()
                          : "use one of the operations in error.details.valid";
    return fail(std::move(error));
  }
  if (spec->gateway != request.gateway) {
    Error error(ErrorCode::InvalidGateway,
                spec->full_name() + " is a " + std::string(to_string(spec->gateway)) + " operation; call it through " +
                    std::string(tool_name(spec->gateway)));
    error.fix = std::string(tool_name(spec->gateway)) + " {domain:'" + request.domain + "', operation:'" +
                request.operation + "', params:{...}}";
    return fail(std::move(error).with_detail("tool", std::string(tool_name(spec->gateway))));
  }
  return {};
}

/// Router-level params understood by every operation; removed before spec validation.
struct CommonParams {
  bool meta = false;
  std::string reason;
  std::string idempotency_key;
};

/// A repeat of a keyed mutation within this window returns the first reply.
constexpr TimeMs kIdempotencyWindowMs = 24LL * 3600 * 1000;

Error common_param_error(std::string_view field, std::string message) {
  return Error(ErrorCode::InvalidParams, std::string(field) + ": " + std::move(message))
      .with_detail("field", std::string(field));
}

/// A string common param: valid UTF-8, no control characters, at most `max_chars` characters.
Result<std::string> common_string(const json::Value& value, std::string_view field, std::size_t max_chars) {
  if (!value.is_string()) return fail(common_param_error(field, "expected string"));
  const std::string& text = value.as_string();
  if (!valid_utf8(text)) return fail(common_param_error(field, "text is not valid UTF-8"));
  if (has_control_characters(text, /*allow_newlines=*/true))
    return fail(common_param_error(field, "control characters are not allowed"));
  if (utf8_length(text) > max_chars)
    return fail(common_param_error(field, "must be at most " + std::to_string(max_chars) + " characters"));
  return text;
}

/// The envelope of a remembered reply (only successes are remembered).
Envelope envelope_from_value(const json::Value& value) {
  Envelope envelope;
  envelope.data = value["data"];
  const json::Value& meta = value["_meta"];
  if (meta["warnings"].is_array())
    for (const auto& warning : meta["warnings"].as_array())
      if (warning.is_string()) envelope.warnings.push_back(warning.as_string());
  if (meta["code"].is_string()) envelope.note = parse_error_code(meta["code"].as_string());
  return envelope;
}

Result<CommonParams> take_common_params(const OperationSpec& spec, json::Value& params) {
  CommonParams common;
  if (!params.is_object()) return common;
  if (const json::Value* meta = params.find("meta")) {
    if (!meta->is_bool() && !meta->is_null())
      return fail(Error(ErrorCode::InvalidParams, "meta: expected boolean").with_detail("field", "meta"));
    common.meta = meta->is_bool() && meta->as_bool();
    params.erase("meta");
  }
  if (spec.gateway == Gateway::Mutate) {
    if (const json::Value* reason = params.find("reason"); reason && !reason->is_null()) {
      CT_TRY_ASSIGN(common.reason, common_string(*reason, "reason", 500));
    }
    // An operation that declares `reason` itself (tasks.delete) also receives it.
    if (!spec.find_param("reason")) params.erase("reason");
    if (const json::Value* key = params.find("idempotencyKey"); key && !key->is_null()) {
      CT_TRY_ASSIGN(common.idempotency_key, common_string(*key, "idempotencyKey", 128));
      if (common.idempotency_key.empty())
        return fail(common_param_error("idempotencyKey", "must not be empty"));
    }
    params.erase("idempotencyKey");
  }
  return common;
}

void fill_audit(AuditEntry& audit, Context& context, const OperationSpec& spec, const Params& params,
                const std::string& reason) {
  audit.at = context.now();
  audit.session = context.session;
  audit.agent = context.agent;
  // Writes record who made them: the agent named when the session started wins.
  if (!context.session.empty() && context.store) {
    if (auto session = context.store->get_session(context.session); session && *session && !(*session)->agent.empty())
      audit.agent = (*session)->agent;
  }
  audit.operation = spec.full_name();
  audit.params = params.json();
  audit.reason = reason;
  if (audit.task_id.empty()) {
    if (auto id = params.opt_str("id")) audit.task_id = *id;
  }
}

/// Sessions, before the handler runs (inside its transaction): a CLI call with no session adopts
/// the project's only active one, and a write of the tasks domain is checked against
/// session.enforcement and the bound session. Returns the warnings for the reply.
Result<std::vector<std::string>> check_session(const OperationSpec& spec, Context& context, bool adopt,
                                               const std::vector<std::string>& never_adopt) {
  if (!context.store) return std::vector<std::string>{};
  if (context.session.empty() && adopt) {
    SessionQuery active;
    active.statuses = {SessionStatus::Active};
    active.limit = static_cast<std::int64_t>(never_adopt.size()) + 2;
    CT_TRY_ASSIGN(std::vector<Session> sessions, context.store->list_sessions(active));
    // Another caller's session (bound to another terminal) is never taken over.
    std::erase_if(sessions, [&](const Session& s) {
      return std::find(never_adopt.begin(), never_adopt.end(), s.id) != never_adopt.end();
    });
    if (sessions.size() == 1) context.session = sessions.front().id;
  }
  if (!spec.session_checked()) return std::vector<std::string>{};
  // The clock is read only when a session is touched (a stepping test clock stays in step).
  SessionEngine sessions(*context.store, *context.config, context.session.empty() ? 0 : context.now(), nullptr);
  return sessions.check_write(context.session);
}

}  // namespace

std::string fallback_fix(ErrorCode code, const OperationSpec& spec, const std::string& id) {
  const std::string task = id.empty() ? "T001" : id;
  const std::string help = "cleo_query {domain:'system', operation:'help', params:{operation:'" + spec.full_name() + "'}}";
  switch (code) {
    case ErrorCode::NotFound:
    case ErrorCode::ParentNotFound:
      return "cleo_query {domain:'tasks', operation:'find', params:{query:'" + task + "'}}";
    case ErrorCode::LockTimeout:
      return "retry the call; if it keeps happening raise storage.busyTimeoutMs: cleo_mutate {domain:'system', "
             "operation:'config.set', params:{key:'storage.busyTimeoutMs', value:15000}}";
    case ErrorCode::ConcurrentModification:
    case ErrorCode::ChecksumMismatch:
      return "read it again (cleo_query {domain:'tasks', operation:'show', params:{id:'" + task +
             "'}}) and retry with its current version as ifVersion";
    case ErrorCode::FileError:
    case ErrorCode::NotInitialized:
      return "cleo_query {domain:'system', operation:'health'} says what is wrong with the store";
    case ErrorCode::ConfigError:
      return "cleo_query {domain:'system', operation:'config.get'} lists every key with its type and default";
    case ErrorCode::CircularReference:
      return "cleo_query {domain:'tasks', operation:'deps', params:{id:'" + task + "'}} shows the chain to break";
    case ErrorCode::HasChildren:
    case ErrorCode::InvalidParentType:
      return "cleo_query {domain:'tasks', operation:'tree', params:{id:'" + task + "'}} shows the children";
    case ErrorCode::DepthExceeded:
    case ErrorCode::SiblingLimit:
      return "cleo_query {domain:'system', operation:'config.get', params:{key:'" +
             std::string(code == ErrorCode::DepthExceeded ? "hierarchy.maxDepth" : "hierarchy.maxSiblings") +
             "'}} shows the limit; choose another parent";
    case ErrorCode::TaskCompleted:
      return "cleo_mutate {domain:'tasks', operation:'reopen', params:{id:'" + task + "'}} first";
    case ErrorCode::SessionRequired:
    case ErrorCode::SessionNotFound:
      return "cleo_mutate {domain:'session', operation:'start', params:{scope:'global'}}";
    case ErrorCode::Internal:
      return "this is a bug in ct: retry once, and if it happens again report the message (cleo_query "
             "{domain:'system', operation:'version'} names the version)";
    default:
      return help + " describes the call, its params and its errors";
  }
}

namespace {

/// Debug builds and test runs (CLEO_TEST_MODE=1 or CLEO_CHECK_ERRORS=1) check every failure
/// against the spec.
bool check_declared_errors() {
#ifndef NDEBUG
  return true;
#else
  static const bool enabled = [] {
    const char* flag = std::getenv("CLEO_CHECK_ERRORS");
    return test_mode() || (flag != nullptr && std::string_view(flag) == "1");
  }();
  return enabled;
#endif
}

bool worth_auditing_failure(ErrorCode code) {
  // Infrastructure failures cannot be written anyway (and would only add load to a busy store).
  return code != ErrorCode::LockTimeout && code != ErrorCode::FileError && code != ErrorCode::Internal &&
         code != ErrorCode::NotInitialized;
}

}  // namespace

int Envelope::exit_code() const {
  if (!success) return error ? error->exit_code() : 1;
  if (note) return ct::exit_code(*note);
  return 0;
}

json::Value error_to_value(const Error& error) {
  json::Value out = json::Value::object();
  out.set("code", to_string(error.code));
  out.set("exitCode", error.exit_code());
  out.set("message", error.message);
  if (!error.fix.empty()) out.set("fix", error.fix);
  if (!error.alternatives.empty()) {
    json::Value alternatives = json::Value::array();
    for (const auto& alt : error.alternatives) {
      json::Value item = json::Value::object();
      item.set("action", alt.action);
      item.set("operation", alt.operation);
      alternatives.push_back(std::move(item));
    }
    out.set("alternatives", std::move(alternatives));
  }
  out.set("retryable", error.retryable());
  if (!error.details.empty()) out.set("details", error.details);
  return out;
}

json::Value to_value(const Envelope& envelope) {
  json::Value out = json::Value::object();
  out.set("success", envelope.success);
  if (envelope.success) {
    out.set("data", envelope.data);
  } else if (envelope.error) {
    out.set("error", error_to_value(*envelope.error));
  }
  json::Value meta = envelope.meta.is_object() ? envelope.meta : json::Value::object();
  if (envelope.note) meta.set("code", to_string(*envelope.note));
  if (!envelope.warnings.empty()) meta.set("warnings", json::Value::array_of(envelope.warnings));
  if (envelope.page) {
    // The caller knows its own limit and offset: only what it does not know is sent.
    json::Value page = json::Value::object();
    if (envelope.page->total >= 0) page.set("total", envelope.page->total);
    page.set("hasMore", envelope.page->has_more());
    if (envelope.page->has_more()) page.set("nextOffset", envelope.page->next_offset());
    meta.set("page", std::move(page));
  }
  if (!meta.empty()) out.set("_meta", std::move(meta));
  return out;
}

std::string to_json(const Envelope& envelope) { return to_value(envelope).dump(); }

Envelope failure(Error error) {
  Envelope envelope;
  envelope.success = false;
  envelope.error = std::move(error);
  return envelope;
}

Router::Router(const Registry& registry, RouterOptions options, std::unique_ptr<Clock> clock)
    : registry_(registry), options_(std::move(options)), clock_(std::move(clock)) {}

Router::~Router() = default;

void Router::close_store() {
  store_.reset();
  config_.reset();
  project_.reset();
}

Result<Store*> Router::open_store() {
  if (store_) {
    refresh_config();
    return store_.get();
  }
  CT_TRY_ASSIGN(Project project, find_project(options_.project_dir));
  CT_TRY_ASSIGN(Config config, Config::load(project.config_path()));
  SqliteOptions sqlite;
  sqlite.busy_timeout_ms = static_cast<int>(config.get_int("storage.busyTimeoutMs"));
  sqlite.synchronous_full = config.get_string("storage.synchronous") == "full";
  sqlite.migration_backups = project.safety_backups_dir();
  sqlite.upgrade = !options_.read_only;  // read-only mode writes nothing, not even a schema upgrade
  sqlite.clock = clock_.get();
  CT_TRY_ASSIGN(store_, open_sqlite_store(project.db_path(), sqlite));
  config_stamp_ = file_stamp(project.config_path());
  project_ = std::move(project);
  config_ = std::make_unique<Config>(std::move(config));
  if (options_.check_integrity_on_open) check_integrity_once();
  return store_.get();
}

/// A long-running server checks the store once per process when it first opens it: a damaged
/// store found here is marked, and writes are refused until it is restored.
void Router::check_integrity_once() {
  static std::mutex mutex;
  static std::set<std::string> checked;
  {
    std::lock_guard lock(mutex);
    if (!checked.insert(project_->db_path().string()).second) return;
  }
  auto problems = store_->integrity_problems();
  if (problems && !problems->empty())
    log::error(project_->db_path().string() + " failed its integrity check (" + problems->front() +
               "); writes are refused until a restore (ct restore, or system.restore) brings a good backup back");
}

/// config.json is read again when it changed since it was loaded (another process ran
/// config.set): one stat per call. A file that no longer parses keeps the last good settings.
void Router::refresh_config() {
  if (!project_ || !config_) return;
  FileStamp now = file_stamp(project_->config_path());
  if (now == config_stamp_) return;
  config_stamp_ = now;
  auto reloaded = Config::load(project_->config_path());
  if (!reloaded) {
    log::warn("cannot reload " + project_->config_path().string() + ": " + reloaded.error().message +
              "; keeping the settings loaded before");
    return;
  }
  *config_ = std::move(*reloaded);
}

Envelope Router::dispatch(const Request& request) {
  auto started = std::chrono::steady_clock::now();
  const OperationSpec* spec = nullptr;
  if (auto routed = check_route(registry_, request, spec); !routed) return failure(std::move(routed.error()));

  json::Value raw = request.params;
  auto common = take_common_params(*spec, raw);
  if (!common) return failure(std::move(common.error()));

  Envelope envelope = [&]() -> Envelope {
    // Read-only mode refuses mutations, except a call whose dry_run param (a check, a dry run) is
    // set: it writes nothing, so it runs, and below its transaction is rolled back, unaudited.
    const bool read_only_mutate = spec->gateway == Gateway::Mutate && options_.read_only;
    auto dry_run_param = std::find_if(spec->params.begin(), spec->params.end(), [](const ParamSpec& p) { return p.dry_run; });
    auto refuse_mutation = [&]() {
      Error error(ErrorCode::MutationDisabled, "this server is read-only; " + spec->full_name() + " is disabled");
      error.fix = "restart without --read-only (or unset CLEO_READ_ONLY) to allow changes";
      if (dry_run_param != spec->params.end())
        error.fix += "; with " + std::string(dry_run_param->name) + ": true it runs here and changes nothing";
      return failure(std::move(error));
    };
    if (read_only_mutate && dry_run_param == spec->params.end()) return refuse_mutation();
    auto params = Params::validate(*spec, raw);
    if (read_only_mutate && (!params || !params->flag(dry_run_param->name))) return refuse_mutation();
    if (!params) return failure(std::move(params.error()));

    Context context;
    context.registry = &registry_;
    context.clock = clock_.get();
    context.project_dir = options_.project_dir;
    context.session = session_;
    context.agent = options_.agent;
    static const Config kDefaults;
    context.config = &kDefaults;
    context.outside_project_allowed = options_.outside_project_allowed;
    std::optional<Config> damaged_config;
    // A store that cannot be used — it does not open, or it is marked damaged — lets only the
    // operations made for that (recovery, health) run, without it.
    auto without_store = [&](Error why) -> Result<void> {
      const bool damaged = why.details["damaged"] == json::Value(true) || why.code == ErrorCode::NotInitialized;
      if (!spec->runs_on_damaged_store || !damaged) return fail(std::move(why));
      auto project = find_damaged_project(options_.project_dir);
      if (!project) return fail(std::move(why));
      close_store();
      context.store = nullptr;
      context.project = std::move(*project);
      context.store_error = std::move(why);
      if (auto config = Config::load(context.project->config_path())) damaged_config = std::move(*config);
      if (damaged_config) context.config = &*damaged_config;
      return {};
    };
    if (spec->needs_project) {
      auto store = open_store();
      if (store) {
        context.store = *store;
        context.project = project_;
        context.config = config_.get();
        if (config_->get_bool("security.allowOutsideProject")) context.outside_project_allowed = true;
      } else if (auto recovering = without_store(std::move(store.error())); !recovering) {
        return failure(std::move(recovering.error()));
      }
    }

    const bool mutate = spec->gateway == Gateway::Mutate;
    AuditEntry audit;
    if (mutate) context.audit = &audit;
    if (context.store) {
      // A dry run in read-only mode reads: its connection cannot take the write lock.
      const TxKind kind = mutate && !read_only_mutate ? TxKind::Write : TxKind::Read;
      auto begun = context.store->begin(kind);
      if (!begun && begun.error().details["reopen"] == json::Value(true)) {
        // The database file was replaced under this process (a restore, a new ct init): the
        // connection still reads the old one. Open the new file and go on.
        close_store();
        auto reopened = open_store();
        if (reopened) {
          context.store = *reopened;
          context.project = project_;
          context.config = config_.get();
          begun = context.store->begin(kind);
        } else {
          begun = std::unexpected(std::move(reopened.error()));
        }
      }
      if (!begun) {
        if (auto recovering = without_store(std::move(begun.error())); !recovering)
          return failure(std::move(recovering.error()));
      }
    }

    // A keyed mutation seen before (same call, within the window) returns its first reply.
    const bool keyed = mutate && !read_only_mutate && context.store && !common->idempotency_key.empty();
    std::string params_text = params->json().dump();
    if (keyed) {
      auto seen = context.store->find_idempotent(common->idempotency_key);
      if (!seen) {
        context.store->rollback();
        return failure(std::move(seen.error()));
      }
      if (*seen && (*seen)->at >= context.now() - kIdempotencyWindowMs) {
        context.store->rollback();
        if ((*seen)->operation == spec->full_name() && (*seen)->params == params_text) {
          if (auto first = json::parse((*seen)->reply); first) {
            Envelope replay = envelope_from_value(*first);
            replay.warnings.push_back("replayed: this idempotencyKey was used before; nothing ran again");
            return replay;
          }
        }
        Error error(ErrorCode::InvalidParams, "idempotencyKey '" + common->idempotency_key +
                                                  "' was already used for a different call (" + (*seen)->operation + ")");
        error.fix = "send a new idempotencyKey for a new call; repeat a call with the same params to get its result";
        return failure(std::move(error).with_detail("field", "idempotencyKey").with_detail("operation", (*seen)->operation));
      }
    }

    auto session_warnings = check_session(*spec, context, options_.adopt_only_active_session, never_adopt_);
    if (!session_warnings) {
      if (context.store) context.store->rollback();
      return failure(std::move(session_warnings.error()));
    }

    Result<Reply> reply = [&]() -> Result<Reply> {
      try {
        return spec->handler(context, *params);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "ct: internal error in %s: %s\n", spec->full_name().c_str(), e.what());
        return fail(ErrorCode::Internal, "internal error in " + spec->full_name() + ": " + e.what());
      }
    }();

    if (!reply && check_declared_errors() && !spec->declares(reply.error().code)) {
      // A test build refuses to let an operation answer a code its spec does not declare: help,
      // docs and agents rely on the declared list.
      std::fprintf(stderr, "ct: %s answered %s, which its spec does not declare\n", spec->full_name().c_str(),
                   std::string(to_string(reply.error().code)).c_str());
      reply = fail(ErrorCode::Internal, spec->full_name() + " answered undeclared " +
                                            std::string(to_string(reply.error().code)) + ": " + reply.error().message);
    }
    if (!reply) {
      if (context.store) context.store->rollback();
      if (context.store && mutate && !read_only_mutate && worth_auditing_failure(reply.error().code)) {
        // A failed mutation still leaves a trace of who tried what (best effort, own transaction).
        audit.changes.clear();
        fill_audit(audit, context, *spec, *params, common->reason);
        audit.outcome = std::string(to_string(reply.error().code));
        if (context.store->begin(TxKind::Write)) {
          if (context.store->append_audit(audit) && context.store->commit()) {
          } else {
            context.store->rollback();
          }
        }
      }
      return failure(std::move(reply.error()));
    }
    if (spec->list_like())
      shape_list_reply(*params, *reply,
                       options_.budget_replies ? context.config->get_int("output.maxReplyBytes") : INT64_MAX);
    Envelope ok;
    ok.data = std::move(reply->data);
    ok.warnings = std::move(reply->warnings);
    ok.warnings.insert(ok.warnings.end(), session_warnings->begin(), session_warnings->end());
    ok.page = reply->page;
    ok.note = reply->note;
    if (!context.store && context.store_error && mutate && !context.discard && !read_only_mutate) {
      // A recovery left a store behind: its first audit row says who recovered it and how.
      auto audited = [&]() -> Result<void> {
        CT_TRY_ASSIGN(Store * store, open_store());
        context.store = store;
        CT_TRY(store->begin(TxKind::Write));
        fill_audit(audit, context, *spec, *params, common->reason);
        audit.outcome = ok.note ? std::string(to_string(*ok.note)) : "ok";
        if (auto appended = store->append_audit(audit); !appended) {
          store->rollback();
          return std::unexpected(std::move(appended.error()));
        }
        return store->commit();
      }();
      if (!audited) ok.warnings.push_back("the change was made but could not be audited: " + audited.error().message);
      return ok;
    }
    if (!context.store) return ok;
    if (context.discard || read_only_mutate) {
      context.store->rollback();  // a dry run: nothing is kept, nothing is audited
      return ok;
    }
    // The audit row, the remembered reply and the change itself commit together or not at all.
    auto finish = [&]() -> Result<void> {
      if (!mutate) return {};
      fill_audit(audit, context, *spec, *params, common->reason);
      audit.outcome = ok.note ? std::string(to_string(*ok.note)) : "ok";
      CT_TRY(context.store->append_audit(audit));
      if (keyed) {
        TimeMs now = context.now();
        CT_TRY(context.store->remember_idempotent(
            {common->idempotency_key, spec->full_name(), params_text, to_json(ok), now}, now - kIdempotencyWindowMs));
      }
      return {};
    };
    if (auto finished = finish(); !finished) {
      context.store->rollback();
      return failure(std::move(finished.error()));
    }
    if (auto committed = context.store->commit(); !committed) {
      context.store->rollback();
      return failure(std::move(committed.error()));
    }
    if (context.rebind) session_ = std::move(*context.rebind);
    if (context.config_changed) refresh_config();
    return ok;
  }();

  // Every error carries a fix: where the code that raised it gave none, the code's own remedy.
  if (!envelope.success && envelope.error && envelope.error->fix.empty()) {
    const json::Value& id = raw["id"];
    envelope.error->fix = fallback_fix(envelope.error->code, *spec, id.is_string() ? id.as_string() : "");
  }
  auto elapsed = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started);
  CallMetrics::global().record(spec->full_name(), elapsed.count(), !envelope.success);
  if (common->meta) {
    json::Value meta = json::Value::object();
    meta.set("gateway", tool_name(spec->gateway));
    meta.set("domain", spec->domain);
    meta.set("operation", spec->name);
    meta.set("version", product_version());
    meta.set("timestamp", format_iso8601(clock_->now()));
    meta.set("durationMs", static_cast<double>(static_cast<std::int64_t>(elapsed.count() * 1000)) / 1000.0);
    envelope.meta = std::move(meta);
  }
  return envelope;
}

}  // namespace ct
