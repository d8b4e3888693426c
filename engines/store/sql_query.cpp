#include "engines/store/sql_query.h"

#include <algorithm>

namespace ct::sql {

void Where::add(std::string_view condition) {
  text += text.empty() ? " WHERE " : " AND ";
  text += condition;
}

std::string fill(std::string_view fragment, std::string_view value) {
  std::string out(fragment);
  if (auto at = out.find("{}"); at != std::string::npos) out.replace(at, 2, value);
  return out;
}

void Where::add(std::string_view condition, std::string_view value) { add(fill(condition, args(value))); }

void Where::add(std::string_view condition, std::int64_t value) { add(fill(condition, args(value))); }

std::optional<std::string_view> archived_condition(ArchivedFilter archived) {
  switch (archived) {
    case ArchivedFilter::Exclude: return "t.archived = 0";
    case ArchivedFilter::Only: return "t.archived = 1";
    case ArchivedFilter::Include: break;
  }
  return std::nullopt;
}

void append_task_filter(const Dialect& dialect, const TaskFilter& filter, bool with_statuses, Where& where) {
  if (with_statuses && !filter.statuses.empty()) {
    std::vector<std::string_view> statuses;
    for (auto status : kTaskStatuses)
      if (std::find(filter.statuses.begin(), filter.statuses.end(), status) != filter.statuses.end())
        statuses.push_back(to_string(status));
    where.add_in("t.status", statuses);
  }
  if (filter.parent) {
    if (filter.parent->empty()) {
      where.add("t.parent IS NULL");
    } else {
      where.add("t.parent = {}", *filter.parent);
    }
  }
  if (!filter.id_prefix.empty()) {
    // A range of the primary key (every backend compares ids as bytes): "T12" ≤ id < "T13".
    std::string end = filter.id_prefix;
    while (!end.empty() && static_cast<unsigned char>(end.back()) == 0xFF) end.pop_back();
    where.add("t.id >= {}", filter.id_prefix);
    if (!end.empty()) {
      end.back() = static_cast<char>(static_cast<unsigned char>(end.back()) + 1);
      where.add("t.id < {}", end);
    }
  }
  if (filter.type) where.add("t.type = {}", to_string(*filter.type));
  for (const auto& label : filter.labels) where.add(dialect.has_label, label);
  if (filter.under)
    where.add("t.id IN (WITH RECURSIVE below(id) AS (SELECT id FROM tasks WHERE parent = {}"
              " UNION SELECT c.id FROM tasks c JOIN below b ON c.parent = b.id) SELECT id FROM below)",
              *filter.under);
  constexpr std::string_view kWaiting =
      "EXISTS (SELECT 1 FROM task_deps d JOIN tasks u ON u.id = d.depends_on"
      " WHERE d.task_id = t.id AND u.status NOT IN ('done', 'cancelled'))";
  switch (filter.readiness) {
    case Readiness::Any: break;
    case Readiness::Ready:
      // As tasks.next sees it: nothing unfinished upstream, and an epic's work is its children.
      where.add("t.status = 'pending' AND NOT " + std::string(kWaiting) + " AND NOT (t.type = 'epic' AND " +
                std::string(dialect.open_children) + ")");
      break;
    case Readiness::Blocked:
      where.add("(t.status = 'blocked' OR (t.status IN ('pending', 'active') AND " + std::string(kWaiting) + "))");
      break;
  }
  if (filter.phase) where.add("t.phase = {}", *filter.phase);
  if (filter.priority) where.add("t.priority = {}", to_string(*filter.priority));
  if (auto archived = archived_condition(filter.archived)) where.add(*archived);
}

std::string task_where(const Dialect& dialect, const TaskFilter& filter, bool with_statuses, Args& args) {
  std::string where;
  Where conditions{where, args};
  append_task_filter(dialect, filter, with_statuses, conditions);
  return where;
}

std::string task_order_by(const Dialect& dialect, SortKey sort, bool descending) {
  const char* dir = descending ? " DESC" : "";
  std::string out = " ORDER BY ";
  auto key = [&](std::string_view expression, std::string_view nulls = "") {
    out += expression;
    out += dir;
    out += nulls;
    out += ", ";
  };
  switch (sort) {
    case SortKey::Position:
      key("t.parent", descending ? dialect.roots_last : dialect.roots_first);
      key("t.position");
      break;
    case SortKey::Priority:
      // By rank, not by name: ascending is low → critical. The index tasks_status_rank holds this
      // very expression (SQLite uses an expression index only when the text is the same).
      key("CASE t.priority WHEN 'critical' THEN 4 WHEN 'high' THEN 3 WHEN 'medium' THEN 2 ELSE 1 END");
      out += "t.position, ";
      break;
    case SortKey::Created: key("t.created_at"); break;
    case SortKey::Updated: key("t.updated_at"); break;
    case SortKey::Title: key(dialect.title_key); break;
    case SortKey::Status:
      key("CASE t.status WHEN 'pending' THEN 0 WHEN 'active' THEN 1 WHEN 'blocked' THEN 2 "
          "WHEN 'done' THEN 3 ELSE 4 END");
      break;
    case SortKey::Id: key("t.num"); break;
  }
  out += sort == SortKey::Position ? std::string("t.num") + dir : std::string("t.num");
  return out;
}

std::string live_claim(std::string_view cutoff) {
  const std::string mark(cutoff);
  return "EXISTS (SELECT 1 FROM focus f LEFT JOIN sessions s ON s.id = f.session WHERE f.task_id = t.id"
         " AND (f.session = '' OR " + mark + " IS NULL OR s.updated_at > " + mark + "))";
}

std::string session_where(const SessionQuery& query, Args& args) {
  std::string text;
  Where where{text, args};
  if (!query.statuses.empty()) {
    std::vector<std::string_view> statuses;
    for (auto status : query.statuses) statuses.push_back(to_string(status));
    where.add_in("status", statuses);
  }
  if (query.updated_before) where.add("updated_at < {}", std::int64_t{*query.updated_before});
  if (query.ended_before) where.add("ended_at < {}", std::int64_t{*query.ended_before});
  if (!query.include_archived) where.add("archived_at IS NULL");
  return text;
}

std::string compliance_where(const ComplianceQuery& query, bool with_passed, Args& args) {
  std::string text;
  Where where{text, args};
  if (query.id) where.add("c.id = {}", *query.id);
  if (query.task_id) where.add("c.task_id = {}", *query.task_id);
  if (query.check) where.add("c.check_name = {}", *query.check);
  if (query.agent) where.add("c.agent = {}", *query.agent);
  if (query.since) where.add("c.at >= {}", static_cast<std::int64_t>(*query.since));
  if (with_passed && query.passed) where.add("c.passed = {}", std::int64_t{*query.passed ? 1 : 0});
  return text;
}

void append_research_filter(const Dialect& dialect, const ResearchQuery& query, Where& where) {
  if (!query.statuses.empty()) {
    std::vector<std::string_view> statuses;
    for (auto status : {ResearchStatus::Complete, ResearchStatus::Partial, ResearchStatus::Blocked})
      if (std::find(query.statuses.begin(), query.statuses.end(), status) != query.statuses.end())
        statuses.push_back(to_string(status));
    where.add_in("r.status", statuses);
  }
  if (query.agent_type) where.add("r.agent_type = {}", *query.agent_type);
  if (query.topic) where.add(dialect.has_topic, *query.topic);
  if (query.task_id)
    where.add("EXISTS (SELECT 1 FROM research_links l WHERE l.research_id = r.id AND l.task_id = {})", *query.task_id);
  if (query.actionable) where.add(*query.actionable ? "r.actionable = 1" : "r.actionable = 0");
  if (query.needs_followup) where.add("r.needs_followup <> '[]'");
  if (query.date_before) where.add("r.date < {}", *query.date_before);
  switch (query.archived) {
    case ArchivedFilter::Exclude: where.add("r.archived = 0"); break;
    case ArchivedFilter::Only: where.add("r.archived = 1"); break;
    case ArchivedFilter::Include: break;
  }
}

}  // namespace ct::sql

namespace ct::sql {

std::string dollar_placeholders(std::string_view sql) {
  std::string out;
  out.reserve(sql.size());
  char quote = 0;
  for (std::size_t i = 0; i < sql.size(); ++i) {
    const char c = sql[i];
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '?' && i + 1 < sql.size() && sql[i + 1] >= '0' && sql[i + 1] <= '9') {
      out += '$';
      continue;
    }
    out += c;
  }
  return out;
}

}  // namespace ct::sql
