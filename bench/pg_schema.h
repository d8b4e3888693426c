// A benchmark's store on PostgreSQL is a schema of its own on the server (write_bench_config);
// PgSchemaDrop takes it away, with everything in it, when the run is done with it, so that
// repeated runs leave nothing behind on the server. With --keep the schema stays, as the
// directory does.
#pragma once

#include <cstdio>
#include <optional>
#include <string>
#include <utility>

#include "support/store_checks.h"

namespace ct::bench {

class PgSchemaDrop {
 public:
  /// Drops `schema` on the server at `url` at the end of the scope, unless `keep` (or on SQLite:
  /// no url, or an empty name). Declare it before the Router that opens the store, so that the
  /// store's connections are closed first.
  PgSchemaDrop(std::optional<std::string> url, std::string schema, bool keep)
      : url_(keep ? std::nullopt : std::move(url)), schema_(std::move(schema)) {}
  ~PgSchemaDrop() {
    if (!url_ || schema_.empty()) return;
    if (auto dropped = testing::drop_pg_schema(*url_, schema_); !dropped)
      std::fprintf(stderr, "could not drop the benchmark's schema %s: %s\n", schema_.c_str(), dropped.error().c_str());
  }
  PgSchemaDrop(const PgSchemaDrop&) = delete;
  PgSchemaDrop& operator=(const PgSchemaDrop&) = delete;

 private:
  std::optional<std::string> url_;
  std::string schema_;
};

}  // namespace ct::bench
