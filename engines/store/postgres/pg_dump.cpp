// The PostgreSQL store, part: dumps and loads (engines/store/store_dump.h) of a store, column by
// column as the server has them, through a cursor and in batches: a store of a million tasks is
// never held in memory whole.
#include "engines/store/postgres/pg_store_impl.h"

namespace ct::pg {
namespace {

/// A column of a copied table: its name and its PostgreSQL type.
struct Column {
  std::string name;
  std::string type;
};

/// Rows a load inserts per statement.
constexpr int kLoadBatch = 1000;

/// The columns of `table` a dump holds (not generated ones, not audit_changes.ord, SQLite's rowid,
/// which a dump's order keeps), in order.
Result<std::vector<Column>> copied_columns(Connection& db, std::string_view table) {
  CT_TRY_ASSIGN(Rows rows, db.query("SELECT a.attname, format_type(a.atttypid, a.atttypmod) FROM pg_attribute a "
                                    "WHERE a.attrelid = to_regclass(quote_ident(current_schema()) || '.' || "
                                    "quote_ident($1)) AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = '' "
                                    "AND a.attname <> 'ord' ORDER BY a.attnum",
                                    sql::values(table), "cannot read the store's columns"));
  std::vector<Column> out;
  for (int i = 0; i < rows.size(); ++i) out.push_back({std::string(rows.text(i, 0)), std::string(rows.text(i, 1))});
  if (out.empty())
    return fail(Error(ErrorCode::FileError, "the PostgreSQL store at " + db.location() + " has no table " +
                                                std::string(table))
                    .with_fix(corrupt_fix()));
  return out;
}

}  // namespace

Result<void> PgStore::dump(DumpSink& sink) {
  if (!in_transaction()) return fail(ErrorCode::Internal, "dump needs a transaction");
  for (const auto& table : dumped_tables()) {
    CT_TRY_ASSIGN(std::vector<Column> columns, copied_columns(*db_, table.name));
    std::vector<std::string> names;
    std::string list;
    for (const auto& column : columns) {
      list += (names.empty() ? "" : ", ") + quote_identifier(column.name);
      names.push_back(column.name);
    }
    std::string select = "SELECT " + list + " FROM " + quote_identifier(table.name);
    if (table.name == "meta") select += " WHERE " + std::string(kLocalMetaRows);
    select += " ORDER BY " + std::string(table.order.empty() ? "ord" : table.order);
    CT_TRY(sink.table(table.name, names));
    // Through a cursor, a batch at a time: a store of a million tasks is never held in memory whole.
    const std::string what = "cannot read " + std::string(table.name) + " for a copy";
    CT_TRY(db_->exec("DECLARE ct_copy NO SCROLL CURSOR FOR " + select, what));
    std::vector<std::optional<std::string_view>> values(names.size());
    while (true) {
      CT_TRY_ASSIGN(Rows rows, db_->script("FETCH FORWARD 2000 FROM ct_copy", what));
      if (rows.empty()) break;
      for (int r = 0; r < rows.size(); ++r) {
        for (std::size_t c = 0; c < values.size(); ++c) {
          const int column = static_cast<int>(c);
          if (rows.is_null(r, column)) {
            values[c].reset();
          } else {
            values[c] = rows.text(r, column);
          }
        }
        CT_TRY(sink.row(values));
      }
    }
    CT_TRY(db_->exec("CLOSE ct_copy", what));
  }
  return {};
}

Result<void> PgStore::load(const DumpSource& source) {
  if (!in_transaction()) return fail(ErrorCode::Internal, "load needs a write transaction");
  CT_TRY_ASSIGN(std::int64_t next_id, meta_int("next_task_num"));

  // Inserts the pushed rows a batch at a time, each column as a text array cast to the column's
  // type (unnest keeps the arrays' order, so audit_changes.ord follows the dump's order). Columns
  // this store does not have are left out. The old rows go when the first table arrives.
  class Loader final : public DumpSink {
   public:
    explicit Loader(PgStore& store) : store_(store) {}
    bool started() const { return started_; }

    Result<void> table(std::string_view name, const std::vector<std::string>& columns) override {
      CT_TRY(flush());
      if (!started_) {
        store_.audit_tail_.reset();  // the trail is about to be another one
        store_.tail_in_begun_ = false;
        // Children first (audit_changes references audit); this store's own meta rows stay.
        for (auto table = dumped_tables().rbegin(); table != dumped_tables().rend(); ++table) {
          std::string sql = "DELETE FROM " + quote_identifier(table->name);
          if (table->name == "meta") sql += " WHERE " + std::string(kLocalMetaRows);
          CT_TRY(store_.query(sql, "cannot clear " + std::string(table->name) + " for the restore"));
        }
        started_ = true;
      }
      table_ = std::string(name);
      CT_TRY_ASSIGN(std::vector<Column> ours, copied_columns(*store_.db_, name));
      kept_.clear();
      std::string list;
      std::string arrays;
      std::string values;
      std::string aliases;
      for (std::size_t i = 0; i < columns.size(); ++i) {
        auto column = std::find_if(ours.begin(), ours.end(), [&](const Column& c) { return c.name == columns[i]; });
        if (column == ours.end()) continue;
        const std::size_t n = kept_.size();
        const std::string c = "c" + std::to_string(n + 1);
        list += (n ? ", " : "") + quote_identifier(column->name);
        arrays += (n ? ", $" : "$") + std::to_string(n + 1) + "::text[]";
        values += (n ? ", u." : "u.") + c + "::" + column->type;
        aliases += (n ? ", " : "") + c;
        kept_.push_back(i);
      }
      insert_ = "INSERT INTO " + quote_identifier(name) + "(" + list + ") SELECT " + values + " FROM unnest(" + arrays +
                ") AS u(" + aliases + ")";
      batch_.assign(kept_.size(), {});
      return {};
    }

    Result<void> row(std::span<const std::optional<std::string_view>> values) override {
      for (std::size_t i = 0; i < kept_.size(); ++i) {
        const auto& value = values[kept_[i]];
        batch_[i].emplace_back(value ? std::optional<std::string>(std::string(*value)) : std::nullopt);
      }
      if (++rows_ == kLoadBatch) CT_TRY(flush());
      return {};
    }

    Result<void> flush() {
      if (rows_ == 0) return {};
      std::vector<sql::Value> params;
      for (auto& column : batch_) {
        params.emplace_back(text_array(column));
        column.clear();
      }
      rows_ = 0;
      CT_TRY(store_.query(insert_, params, "cannot restore " + table_));
      return {};
    }

   private:
    PgStore& store_;
    bool started_ = false;
    std::string table_;
    std::string insert_;
    std::vector<std::size_t> kept_;  // the pushed columns this store has, by index
    std::vector<std::vector<std::optional<std::string>>> batch_;
    int rows_ = 0;
  };

  Loader loader(*this);
  CT_TRY(source(loader));
  CT_TRY(loader.flush());
  if (!loader.started()) return {};
  // The memory entries' kept total is theirs, whatever the dump said (or did not: v18).
  CT_TRY(recount_memory());
  // Ids are never reused, not even the ones allocated after the dump was taken.
  CT_TRY(query("INSERT INTO meta(key, value) VALUES('next_task_num', $1::bigint::text) ON CONFLICT (key) DO UPDATE "
               "SET value = GREATEST(CASE WHEN meta.value ~ '^-?[0-9]+$' THEN meta.value::numeric ELSE 0 END, "
               "$1::bigint)::text",
               sql::values(next_id), "cannot restore the task id counter"));
  return {};
}

}  // namespace ct::pg
