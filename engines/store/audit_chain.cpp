#include "engines/store/audit_chain.h"

#include <cerrno>
#include <cstring>
#include <fstream>

#include "core/atomic_file.h"
#include "core/json.h"
#include "core/json_parse.h"
#include "core/sha256.h"

namespace ct {

AuditText audit_text(const AuditEntry& entry) {
  AuditText text;
  text.params = entry.params.is_null() ? std::string("{}") : entry.params.dump();
  if (!entry.intent.is_null()) text.intent = entry.intent.dump();
  text.changes.reserve(entry.changes.size());
  for (const auto& change : entry.changes)
    text.changes.emplace_back(change.before.is_null() ? std::nullopt : std::optional<std::string>(change.before.dump()),
                              change.after.is_null() ? std::nullopt : std::optional<std::string>(change.after.dump()));
  return text;
}

std::string audit_hash(std::string_view previous_hash, std::int64_t seq, const AuditEntry& entry, const AuditText& text) {
  // The content as stored: JSON texts of params and before/after values, changes in order.
  std::string content(previous_hash);
  content += '\n';
  json::Writer w(content);
  w.begin_array();
  w.value(seq).value(static_cast<std::int64_t>(entry.at)).value(entry.session).value(entry.agent);
  w.value(entry.operation).value(entry.task_id).value(text.params).value(entry.outcome).value(entry.reason);
  // Optional trailing fields keep the hashes of rows from before them; a principal always follows
  // an intent slot (null when none), so one field is never read as the other.
  if (text.intent) w.value(*text.intent);
  else if (!entry.principal.empty()) w.null();
  if (!entry.principal.empty()) w.value(entry.principal);
  w.begin_array();
  for (std::size_t i = 0; i < entry.changes.size(); ++i) {
    const auto& change = entry.changes[i];
    const auto& [before, after] = text.changes[i];
    w.begin_array().value(change.task_id).value(change.field);
    if (before) w.value(*before); else w.null();
    if (after) w.value(*after); else w.null();
    w.end_array();
  }
  w.end_array().end_array();
  return sha256_hex(content);
}

std::string audit_hash(std::string_view previous_hash, const AuditEntry& entry) {
  return audit_hash(previous_hash, entry.seq, entry, audit_text(entry));
}

Result<AuditLink> next_link(AuditLog& store, const AuditEntry& entry, std::int64_t last_seq, std::string last_hash) {
  if (last_seq == 0) {
    // A compacted trail continues from its anchor (system.gc).
    CT_TRY_ASSIGN(std::optional<AuditAnchor> anchor, store.audit_anchor());
    if (anchor) {
      last_seq = anchor->seq;
      last_hash = anchor->hash;
    }
  }
  AuditLink link;
  link.seq = last_seq + 1;
  link.text = audit_text(entry);
  link.hash = audit_hash(last_hash, link.seq, entry, link.text);
  return link;
}

Result<ChainReport> verify_audit_chain(AuditLog& store, const std::optional<AuditAnchor>& from,
                                       const std::function<void(const AuditEntry&)>& each) {
  ChainReport report;
  std::string previous;
  std::int64_t expected_seq = 0;  // with an anchor: the seq the first row must have
  CT_TRY_ASSIGN(std::optional<AuditAnchor> anchor, store.audit_anchor());
  if (from && (!anchor || from->seq > anchor->seq)) anchor = from;
  if (anchor) {
    report.anchor = anchor->seq;
    previous = anchor->hash;
    expected_seq = anchor->seq + 1;
  }
  AuditQuery query;
  query.ascending = true;
  query.limit = 1000;
  if (anchor) query.after_seq = anchor->seq;
  while (true) {
    CT_TRY_ASSIGN(std::vector<AuditEntry> batch, store.read_audit(query));
    for (const auto& entry : batch) {
      ++report.rows;
      if (each) each(entry);
      std::string expected = audit_hash(previous, entry);
      // Rows removed right after the anchor leave a gap the hashes alone would not show.
      bool gap = expected_seq != 0 && entry.seq != expected_seq;
      expected_seq = 0;
      if ((gap || expected != entry.hash) && !report.first_broken) {
        report.first_broken = entry.seq;
        report.expected = expected;
        report.actual = entry.hash;
      }
      previous = entry.hash;
    }
    if (batch.size() < static_cast<std::size_t>(query.limit)) break;
    query.after_seq = batch.back().seq;
  }
  return report;
}

namespace {

Error archive_error(std::string_view what, const std::filesystem::path& file, int error_number) {
  return Error(ErrorCode::FileError, std::string(what) + " " + file.string() + ": " + std::strerror(error_number))
      .with_fix("check the permissions and free space of " + file.parent_path().string());
}

void archive_row(std::string& out, const AuditEntry& entry) {
  json::Writer w(out);
  w.begin_object();
  w.key("seq").value(entry.seq).key("at").value(static_cast<std::int64_t>(entry.at));
  w.key("session").value(entry.session).key("agent").value(entry.agent);
  w.key("operation").value(entry.operation).key("taskId").value(entry.task_id);
  w.key("params").value(entry.params).key("outcome").value(entry.outcome).key("reason").value(entry.reason);
  if (!entry.intent.is_null()) w.key("intent").value(entry.intent);
  if (!entry.principal.empty()) w.key("principal").value(entry.principal);
  w.key("changes").begin_array();
  for (const auto& change : entry.changes) {
    w.begin_object().key("taskId").value(change.task_id).key("field").value(change.field);
    w.key("before").value(change.before).key("after").value(change.after).end_object();
  }
  w.end_array();
  w.key("hash").value(entry.hash).end_object();
  out += '\n';
}

std::optional<AuditEntry> parse_archive_row(const json::Value& row) {
  auto text = [&](std::string_view key) -> std::optional<std::string> {
    return row[key].is_string() ? std::optional<std::string>(row[key].as_string()) : std::nullopt;
  };
  AuditEntry entry;
  if (!row["seq"].is_int() || !row["at"].is_int() || !row["params"].is_object() || !row["changes"].is_array())
    return std::nullopt;
  entry.seq = row["seq"].as_int();
  entry.at = row["at"].as_int();
  auto session = text("session"), agent = text("agent"), operation = text("operation"), task = text("taskId"),
       outcome = text("outcome"), reason = text("reason"), hash = text("hash");
  if (!session || !agent || !operation || !task || !outcome || !reason || !hash) return std::nullopt;
  entry.session = *session;
  entry.agent = *agent;
  entry.operation = *operation;
  entry.task_id = *task;
  entry.params = row["params"];
  entry.outcome = *outcome;
  entry.reason = *reason;
  entry.intent = row["intent"];
  if (auto principal = text("principal")) entry.principal = *principal;
  entry.hash = *hash;
  for (const auto& change : row["changes"].as_array()) {
    if (!change["taskId"].is_string() || !change["field"].is_string()) return std::nullopt;
    entry.changes.push_back({change["taskId"].as_string(), change["field"].as_string(), change["before"], change["after"]});
  }
  return entry;
}

}  // namespace

Result<ArchiveReport> write_audit_archive(AuditLog& store, const std::filesystem::path& file,
                                          const std::optional<AuditAnchor>& previous, std::int64_t to) {
  namespace fs = std::filesystem;
  ArchiveReport report;
  report.previous = previous ? previous->hash : "";
  fs::path dir = file.parent_path();
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return fail(archive_error("cannot create", dir, ec.value()));
  CT_TRY_ASSIGN(AtomicFile out, AtomicFile::create(file));
  // The header names the range, which is known only from the rows: they are counted first.
  AuditQuery query;
  query.ascending = true;
  query.limit = 1000;
  if (previous) query.after_seq = previous->seq;
  std::string body;
  bool first = true;
  while (true) {
    CT_TRY_ASSIGN(std::vector<AuditEntry> batch, store.read_audit(query));
    body.clear();
    bool done = batch.size() < static_cast<std::size_t>(query.limit);
    for (const auto& entry : batch) {
      if (entry.seq > to) {
        done = true;
        break;
      }
      if (first) {
        report.from = entry.seq;
        json::Writer w(body);
        w.begin_object().key("cleoAuditArchive").value(1).key("from").value(entry.seq).key("to").value(to);
        w.key("previous").value(report.previous).end_object();
        body += '\n';
        first = false;
      }
      archive_row(body, entry);
      report.to = entry.seq;
      report.last_hash = entry.hash;
      ++report.rows;
    }
    CT_TRY(out.write(body));
    if (done || batch.empty()) break;
    query.after_seq = batch.back().seq;
  }
  if (report.rows == 0) return report;  // no file: `out` removes its temp file
  // Exclusive: an archive already there is never replaced, as its rows may exist nowhere else.
  auto published = out.commit(Publish::Exclusive);
  if (!published && is_target_exists(published.error()))
    return fail(Error(ErrorCode::FileError, "the audit archive " + file.string() + " already exists; nothing was removed")
                    .with_fix("move " + file.string() + " out of .cleo/audit-archive/ (it holds rows of another "
                              "trail), then run system.gc again"));
  CT_TRY(published);
  return report;
}

Result<ArchiveReport> verify_audit_archive(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) return fail(archive_error("cannot read", file, errno));
  auto unreadable = [&](std::size_t line) {
    return Error(ErrorCode::FileError, file.string() + " line " + std::to_string(line) + " is not an audit archive row")
        .with_fix("the archive was edited or truncated; restore it from a copy");
  };
  ArchiveReport report;
  std::string line;
  std::size_t number = 0;
  std::string previous;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty()) continue;
    auto value = json::parse(line);
    if (!value || !value->is_object()) return fail(unreadable(number));
    if (number == 1) {
      if (!(*value)["cleoAuditArchive"].is_int() || !(*value)["previous"].is_string()) return fail(unreadable(number));
      report.previous = previous = (*value)["previous"].as_string();
      continue;
    }
    auto entry = parse_archive_row(*value);
    if (!entry) return fail(unreadable(number));
    if (report.rows == 0) report.from = entry->seq;
    bool gap = report.rows > 0 && entry->seq != report.to + 1;
    ++report.rows;
    report.to = entry->seq;
    if ((gap || audit_hash(previous, *entry) != entry->hash) && !report.first_broken) report.first_broken = entry->seq;
    previous = entry->hash;
    report.last_hash = entry->hash;
  }
  if (number == 0) return fail(unreadable(1));
  return report;
}

}  // namespace ct
