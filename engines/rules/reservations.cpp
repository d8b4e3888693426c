#include "engines/rules/reservations.h"

#include <algorithm>

#include "core/advice.h"
#include "core/stored_text.h"
#include "core/text.h"
#include "engines/rules/claim_lease.h"
#include "engines/rules/memory.h"

namespace ct::reservations {
namespace {

/// A part of a path that matches more than itself: `*` or `?` (memory's globs: `[` is literal).
bool wild(std::string_view part) { return part.find_first_of("*?") != std::string_view::npos; }

/// Whether two parts (no `/` in either, neither a `**`) could be the same name.
bool parts_meet(std::string_view a, std::string_view b) {
  const bool wa = wild(a);
  const bool wb = wild(b);
  if (!wa && !wb) return a == b;
  if (wa != wb) return memory::scope_match(wa ? a : b, wa ? b : a) > 0;
  // Two globs: a name both match starts with both fixed beginnings and ends with both endings.
  const auto head = [](std::string_view p) { return p.substr(0, p.find_first_of("*?")); };
  const auto tail = [](std::string_view p) { return p.substr(p.find_last_of("*?") + 1); };
  const std::string_view ha = head(a), hb = head(b), ta = tail(a), tb = tail(b);
  const bool heads = ha.size() <= hb.size() ? hb.starts_with(ha) : ha.starts_with(hb);
  const bool tails = ta.size() <= tb.size() ? tb.ends_with(ta) : ta.ends_with(tb);
  return heads && tails;
}

std::string holder_text(const Reservation& held, const Config& config) {
  std::string who = held.holder.session.empty() ? std::string("work outside any session")
                                                : "session " + held.holder.session;
  if (!held.holder.agent.empty()) who += " (" + held.holder.agent + ")";
  std::string text = who + " for " + held.holder.task_id;
  if (std::optional<TimeMs> end = lease_end(held.holder, config)) text += " until " + format_iso8601(*end);
  return text;
}

}  // namespace

Result<std::string> normal_path(std::string_view path, std::string_view field) {
  auto invalid = [&](std::string why) {
    return fail(Error(ErrorCode::Validation, "path '" + std::string(path) + "' " + why)
                    .with_fix("name paths relative to the project root: a file (src/a.cpp), a folder (src/store) or a "
                              "glob (src/**/*.h)")
                    .with_detail("field", std::string(field)));
  };
  auto normal = memory::normal_scope_path(path);
  if (!normal) return invalid(trim(path).empty() ? "is empty" : "is absolute or leaves the project");
  std::string out = std::move(*normal);
  while (!out.empty() && out.back() == '/') out.pop_back();
  if (out.empty()) return invalid("names the whole project: reserve the folders or files the work touches");
  return out;
}

std::vector<std::string> declared_paths(const std::vector<std::string>& files) {
  std::vector<std::string> out;
  for (const auto& file : files)
    if (auto normal = normal_path(file, "files"); normal && std::ranges::find(out, *normal) == out.end())
      out.push_back(std::move(*normal));
  return out;
}

bool overlaps(std::string_view a, std::string_view b) {
  const std::vector<std::string> pa = split_list(a, '/');
  const std::vector<std::string> pb = split_list(b, '/');
  for (std::size_t i = 0; i < pa.size() && i < pb.size(); ++i) {
    // `**` (or a part holding it) reaches any depth: from here on anything may meet.
    if (pa[i].find("**") != std::string::npos || pb[i].find("**") != std::string::npos) return true;
    if (!parts_meet(pa[i], pb[i])) return false;
  }
  // One is the other, or a folder (or a glob naming one) that holds it.
  return true;
}

std::string head_of(std::string_view path) {
  const std::string_view first = path.substr(0, path.find('/'));
  return wild(first) ? std::string("*") : std::string(first);
}

Result<Held> held(TaskStore& store, const Config& config, TimeMs now, std::span<const std::string> near) {
  // The heads of `near`: a glob among them may overlap anything, so then every row is read.
  std::vector<std::string> heads;
  bool all = near.empty();
  for (const auto& path : near) {
    std::string head = head_of(path);
    if (head == "*") all = true;
    if (std::ranges::find(heads, head) == heads.end()) heads.push_back(std::move(head));
  }
  CT_TRY_ASSIGN(std::vector<Reservation> rows, store.claimed_reservations({}, all ? nullptr : &heads));
  const std::optional<TimeMs> cutoff = lapsed_before(config, now);
  Held out;
  for (auto& row : rows) (lapsed_by(row.holder, cutoff) ? out.lapsed : out.live).push_back(std::move(row));
  return out;
}

Result<std::vector<Reservation>> live(TaskStore& store, const Config& config, TimeMs now, std::string_view task_id) {
  CT_TRY_ASSIGN(std::vector<Reservation> rows, store.claimed_reservations(task_id));
  const std::optional<TimeMs> cutoff = lapsed_before(config, now);
  std::erase_if(rows, [&](const Reservation& row) { return lapsed_by(row.holder, cutoff); });
  return rows;
}

std::vector<Conflict> conflicts(std::span<const std::string> paths, bool shared, const std::string* session,
                                const std::vector<Reservation>& held) {
  std::vector<Conflict> out;
  for (const auto& path : paths)
    for (const auto& other : held) {
      if ((session && other.holder.session == *session) || (shared && other.shared)) continue;
      if (overlaps(path, other.path)) out.push_back({path, other});
    }
  return out;
}

bool strict(const Config& config) { return config.get_string("reservations.mode") == "strict"; }

json::Value reservation_json(const Reservation& reservation, const Config& config) {
  json::Value out = json::Value::object();
  out.set("path", reservation.path);
  if (reservation.shared) out.set("shared", true);
  out.set("task", reservation.holder.task_id);
  out.set("session", reservation.holder.session);
  if (!reservation.holder.agent.empty()) out.set("agent", reservation.holder.agent);
  if (std::optional<TimeMs> end = lease_end(reservation.holder, config)) out.set("leaseEnds", format_iso8601(*end));
  return out;
}

json::Value conflicts_json(const std::vector<Conflict>& found, const Config& config) {
  json::Value out = json::Value::array();
  for (const auto& conflict : found) {
    json::Value row = json::Value::object();
    row.set("path", conflict.path);
    row.set("heldBy", reservation_json(conflict.held, config));
    out.push_back(std::move(row));
  }
  return out;
}

std::string describe(const std::vector<Conflict>& found, const Config& config) {
  std::string text;
  for (const auto& conflict : found) {
    if (!text.empty()) text += "; ";
    // Paths are text agents chose: quoted, as stored text is wherever it reaches a model.
    text += quoted_line(conflict.path, 300);
    if (conflict.held.path != conflict.path) text += " (overlaps " + quoted_line(conflict.held.path, 300) + ")";
    text += " is reserved by " + holder_text(conflict.held, config);
  }
  return text;
}

std::string kept_warning(const std::vector<Conflict>& found, const Config& config) {
  return "reserved anyway (reservations.mode advisory): " + describe(found, config);
}

Error refusal(const std::vector<Conflict>& found, const Config& config, TimeMs now) {
  Error error(ErrorCode::PathReserved, describe(found, config));
  error.fix = call("tasks.next", {}) + " for other work: the paths are free once their holder stops, finishes or "
                                      "its lease ends";
  error = std::move(error)
              .with_detail("conflicts", conflicts_json(found, config));
  // The refusal ends by itself once every holder's lease has ended: the last of them.
  std::optional<TimeMs> last_end;
  for (const auto& conflict : found) {
    std::optional<TimeMs> end = lease_end(conflict.held.holder, config);
    if (!end) return error;  // one never lapses
    last_end = last_end ? std::max(*last_end, *end) : *end;
  }
  if (last_end) error = std::move(error).retry_after(std::max<std::int64_t>(1, (*last_end - now + 999) / 1000));
  return error;
}

json::Value audit_value(const std::vector<Reservation>& rows) {
  json::Value out = json::Value::array();
  for (const auto& row : rows) {
    if (!row.shared) {
      out.push_back(row.path);
      continue;
    }
    json::Value item = json::Value::object();
    item.set("path", row.path);
    item.set("shared", true);
    out.push_back(std::move(item));
  }
  return out;
}

}  // namespace ct::reservations
