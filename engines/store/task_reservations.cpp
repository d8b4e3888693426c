// TaskStore's reservations (engines/store/task_store.h): the paths a claim holds, in the table
// ddl::kReservations. A row is read with its claim — the focus row of its session and task, the
// session's agent, last renewal and worktree — so that whether it is live is read, never kept: the
// rules (engines/rules/reservations.h) test the lease as they test a claim's.
#include <algorithm>
#include <iterator>
#include <tuple>

#include "engines/store/task_store.h"

namespace ct {
namespace {

using sql::Value;

/// Reservations with their holder; the inner join with focus keeps only those whose session still
/// focuses their task.
constexpr std::string_view kClaimedSelect =
    "SELECT r.path, r.shared, r.created_at, r.task_id, r.session, coalesce(s.agent, ''), s.updated_at,"
    " coalesce(s.worktree, '') FROM reservations r"
    " JOIN focus f ON f.session = r.session AND f.task_id = r.task_id"
    " LEFT JOIN sessions s ON s.id = r.session";

Reservation read_reservation(const sql::Cursor& row) {
  Reservation out;
  out.path = std::string(row.text(0));
  out.shared = row.integer(1) != 0;
  out.created_at = row.integer(2);
  out.holder = Claim{std::string(row.text(3)), std::string(row.text(4)), std::string(row.text(5)), row.optional_int(6)};
  out.worktree = std::string(row.text(7));
  return out;
}

}  // namespace

Result<std::vector<Reservation>> TaskStore::claimed_reservations(std::string_view task_id,
                                                                const std::vector<std::string>* heads) {
  std::vector<Reservation> rows;
  if (heads) {
    // The rows that can overlap these paths: a head of theirs, or a glob head ("*"). A statement a
    // head (each row has one): SQLite would build a temporary index for an IN list.
    const std::string sql = std::string(kClaimedSelect) + " WHERE r.head = ?1" + (task_id.empty() ? "" : " AND r.task_id = ?2");
    const auto read_head = [&](std::string_view head) -> Result<void> {
      const Value args[] = {Value(head), Value(task_id)};
      CT_TRY_ASSIGN(std::vector<Reservation> found,
                    sql_runner().all(sql, std::span<const Value>(args, task_id.empty() ? 1 : 2),
                                     "cannot read reservations", read_reservation));
      std::ranges::move(found, std::back_inserter(rows));
      return {};
    };
    CT_TRY(read_head("*"));
    for (const auto& head : *heads)
      if (head != "*") CT_TRY(read_head(head));
  } else {
    sql::Args args;
    std::string sql(kClaimedSelect);
    if (!task_id.empty()) sql += " WHERE r.task_id = " + args(task_id);
    CT_TRY_ASSIGN(rows, sql_runner().all(sql, args, "cannot read reservations", read_reservation));
  }
  // Sorted here, not by the query: the rows are few, and SQLite would sort them in a temporary B-tree.
  std::ranges::sort(rows, {}, [](const Reservation& row) { return std::tie(row.holder.task_id, row.holder.session, row.path); });
  return rows;
}

Result<std::vector<Reservation>> TaskStore::session_reservations(std::string_view session) {
  const Value args[] = {Value(session)};
  return sql_runner().all(
      "SELECT path, shared, created_at, task_id, session, '', NULL, '' FROM reservations WHERE session = ?1"
      " ORDER BY task_id, path",  // the key's order: no sort
      args, "cannot read reservations", read_reservation);
}

Result<void> TaskStore::put_reservations(std::string_view session, std::string_view task_id,
                                         const std::vector<Reservation>& rows) {
  if (rows.empty()) return {};
  sql::Args args;
  const std::string who = args(session);
  const std::string task = args(task_id);
  std::string sql = "INSERT INTO reservations(session, task_id, path, head, shared, created_at) VALUES ";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Reservation& row = rows[i];
    sql += (i == 0 ? "(" : ", (") + who + ", " + task + ", " + args(row.path) + ", " + args(row.head) + ", " +
           args(std::int64_t{row.shared ? 1 : 0}) + ", " + args(row.created_at) + ")";
  }
  sql += " ON CONFLICT(session, task_id, path) DO UPDATE SET shared = excluded.shared";
  return sql_runner().run(sql, args, "cannot reserve paths");
}

Result<void> TaskStore::drop_reservation(std::string_view session, std::string_view path) {
  const Value args[] = {Value(session), Value(path)};
  return sql_runner().run("DELETE FROM reservations WHERE session = ?1 AND path = ?2", args,
                          "cannot release a reservation");
}

Result<void> TaskStore::drop_reservations(std::string_view session) {
  const Value args[] = {Value(session)};
  return sql_runner().run("DELETE FROM reservations WHERE session = ?1", args, "cannot release reservations");
}

}  // namespace ct
