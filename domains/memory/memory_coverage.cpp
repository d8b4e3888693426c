// memory.coverage (issue 54, seed 001): which files and symbols under a path have live, stale or
// no memory. It reads files and may run ctags, so all of it is the operation's external step: the
// entries (and their tasks) are read in a short transaction of their own, then files are walked,
// hashed and indexed holding no lock (docs/architecture.md §2, "external step").
#include <algorithm>
#include <set>
#include <system_error>

#include "domains/bind.h"
#include "domains/memory/memory_common.h"
#include "domains/pipeline.h"
#include "domains/registry.h"

namespace ct::memory {
namespace {

namespace fs = std::filesystem;

struct CoverageArgs {
  std::string path;
  bool symbols = false;
  Paging page;
};

/// The entries that may cover `path`: scoped under it (its prefix) or to a folder above it.
std::vector<MemoryKeyRange> covering_ranges(const std::string& path) {
  std::vector<MemoryKeyRange> ranges;
  std::string end = "f:" + path;
  end.back() = static_cast<char>(end.back() + 1);
  ranges.push_back({"f:" + path, end});
  for (const auto& key : file_lookup_keys(path))
    if (key != "f:" + path) ranges.push_back({key, key + " "});
  return ranges;
}

/// The files `path` names: itself, or those under a folder. E_NOT_FOUND, or E_VALIDATION for the
/// whole project or more than kFolderFileLimit files.
Result<std::vector<std::string>> files_under(const fs::path& root, std::string& path) {
  std::error_code ec;
  if (!path.empty() && path.back() != '/' && fs::is_directory(root / path, ec)) path += '/';
  if (path.empty() || path.find('#') != std::string::npos || is_glob(path))
    return fail(Error(ErrorCode::Validation, path.empty() ? "the whole project is too wide a path for coverage"
                                                          : "coverage is of a file or a folder, not of '" + path + "'")
                    .with_fix("name a file or a folder under the project root, such as src/")
                    .with_detail("field", "path"));
  if (path.back() != '/') {
    if (file_stamp(root / path).size < 0)
      return fail(Error(ErrorCode::NotFound, path + " does not exist").with_detail("path", path));
    return std::vector<std::string>{path};
  }
  CT_TRY_ASSIGN(std::vector<std::string> files, covered_files(root, path));
  if (files.size() > kFolderFileLimit)
    return fail(Error(ErrorCode::Validation, path + " holds more than " + std::to_string(kFolderFileLimit) + " files")
                    .with_fix("ask for a narrower folder")
                    .with_detail("field", "path"));
  return files;
}

/// An entry's standing for coverage: its id and whether it is stale.
struct Covering {
  std::string id;
  bool stale = false;
};

/// "live" when a fresh entry covers it, "stale" when only stale ones do, "none".
std::string standing(const std::vector<Covering>& by) {
  if (by.empty()) return "none";
  return std::any_of(by.begin(), by.end(), [](const Covering& c) { return !c.stale; }) ? "live" : "stale";
}

void set_ids(json::Value& row, const std::vector<Covering>& by) {
  json::Value live = json::Value::array();
  json::Value stale = json::Value::array();
  for (const auto& item : by) (item.stale ? stale : live).push_back(item.id);
  if (!live.empty()) row.set("live", std::move(live));
  if (!stale.empty()) row.set("stale", std::move(stale));
}

struct Counts {
  std::int64_t live = 0, stale = 0, none = 0;
  void add(const std::string& what) { (what == "live" ? live : what == "stale" ? stale : none) += 1; }
  json::Value json(bool with_none) const {
    json::Value out = json::Value::object();
    out.set("live", live);
    out.set("stale", stale);
    if (with_none) out.set("none", none);
    return out;
  }
};

Result<Reply> coverage(Context& context, const CoverageArgs& args) {
  const fs::path root = context.work_root();
  CT_TRY_ASSIGN(std::string path, normal_scope_path(args.path));
  CT_TRY_ASSIGN(std::vector<std::string> files, files_under(root, path));
  struct Loaded {
    std::vector<MemoryEntry> entries;
    std::map<std::string, std::pair<TaskStatus, TimeMs>> tasks;
  };
  CT_TRY_ASSIGN(Loaded loaded, pipeline::read_in_own_transaction(context, [&]() -> Result<Loaded> {
                  CT_TRY_ASSIGN(auto numbers, context.db().memory_numbers(covering_ranges(path), -1));
                  std::set<std::int64_t> unique;
                  for (const auto& list : numbers) unique.insert(list.begin(), list.end());
                  Loaded out;
                  CT_TRY_ASSIGN(out.entries, context.db().get_memories({unique.begin(), unique.end()}));
                  std::erase_if(out.entries, [](const MemoryEntry& e) { return e.status != "active"; });
                  std::vector<const MemoryEntry*> pointers;
                  for (const auto& entry : out.entries) pointers.push_back(&entry);
                  CT_TRY_ASSIGN(out.tasks, anchored_tasks(context.db(), pointers));
                  return out;
                }));
  std::sort(loaded.entries.begin(), loaded.entries.end(),
            [](const MemoryEntry& a, const MemoryEntry& b) { return *memory_number(a.id) < *memory_number(b.id); });
  // Staleness out of any transaction: files are hashed, changed symbols' files indexed.
  std::vector<bool> stale;
  ScopeHasher hasher(process_hasher());
  for (const auto& entry : loaded.entries) stale.push_back(staleness(entry, root, loaded.tasks, hasher).has_value());

  const auto begin = static_cast<std::size_t>(std::min<std::int64_t>(args.page.offset, std::ssize(files)));
  const auto end = static_cast<std::size_t>(std::min<std::int64_t>(args.page.offset + args.page.limit, std::ssize(files)));
  Counts file_counts, symbol_counts;
  std::vector<std::string> warnings;
  json::Value rows = json::Value::array();
  for (std::size_t f = 0; f < files.size(); ++f) {
    const std::string& file = files[f];
    std::vector<Covering> whole;
    std::map<std::string, std::vector<Covering>> by_symbol;  // a symbol as an entry names it
    for (std::size_t e = 0; e < loaded.entries.size(); ++e) {
      const MemoryEntry& entry = loaded.entries[e];
      bool covers = false;
      for (const auto& scope : entry.files) {
        const SymbolScope parts = split_symbol(scope);
        if (!parts.symbol.empty()) {
          if (parts.file == file) by_symbol[parts.symbol].push_back({entry.id, stale[e]});
        } else if (scope_match(scope, file) > 0) {
          covers = true;
        }
      }
      if (covers) whole.push_back({entry.id, stale[e]});
    }
    std::vector<Covering> all = whole;
    for (const auto& [symbol, by] : by_symbol) all.insert(all.end(), by.begin(), by.end());
    file_counts.add(standing(all));
    if (f < begin || f >= end) continue;
    json::Value row = json::Value::object();
    row.set("file", file);
    row.set("memory", standing(all));
    set_ids(row, whole);
    json::Value symbol_rows = json::Value::array();
    auto symbol_row = [&](const std::string& name, const std::vector<Covering>& by, std::int64_t line) {
      json::Value item = json::Value::object();
      item.set("name", name);
      if (line > 0) item.set("line", line);
      item.set("memory", standing(by));
      set_ids(item, by);
      symbol_counts.add(standing(by));
      symbol_rows.push_back(std::move(item));
    };
    if (args.symbols) {
      // Every definition ctags finds, with the entries whose symbol names it.
      auto symbols = symbols_of(root, file);
      if (!symbols) {
        if (warnings.empty() || symbols.error().code != ErrorCode::CapabilityUnavailable)
          warnings.push_back(file + ": " + symbols.error().message);
        symbols = std::vector<Symbol>();
      }
      std::set<std::string> named;
      for (const auto& symbol : *symbols) {
        std::vector<Covering> by;
        for (const auto& [written, entries] : by_symbol)
          if (symbol_names(written, symbol.name)) {
            by.insert(by.end(), entries.begin(), entries.end());
            named.insert(written);
          }
        symbol_row(symbol.name, by, symbol.line);
      }
      for (const auto& [written, by] : by_symbol)
        if (!named.contains(written)) symbol_row(written, by, 0);  // no longer defined: its entries went stale
    } else {
      for (const auto& [written, by] : by_symbol) symbol_row(written, by, 0);
    }
    if (!symbol_rows.empty()) row.set("symbols", std::move(symbol_rows));
    rows.push_back(std::move(row));
  }
  json::Value data = json::Value::object();
  data.set("path", path);
  json::Value file_summary = file_counts.json(true);
  file_summary.set("total", std::ssize(files));
  data.set("files", std::move(file_summary));
  data.set("symbols", symbol_counts.json(args.symbols));
  data.set("rows", std::move(rows));
  Reply reply = Reply::warned(std::move(data), std::move(warnings));
  if (std::ssize(files) > args.page.offset + args.page.limit)
    reply.page = Page{std::ssize(files), args.page.limit, args.page.offset};
  return reply;
}

}  // namespace

void register_coverage(Registry& registry) {
  const auto coverage_args = bind(
      field(&CoverageArgs::path, {.name = "path", .type = ParamType::String, .required = true, .max = 300,
                                  .description = "A file or folder, relative to the project root", .positional = true,
                                  .single_line = true}),
      field(&CoverageArgs::symbols, {.name = "symbols", .type = ParamType::Bool,
                                     .description = "Also each file's symbols without memory (runs ctags)"}),
      paging(&CoverageArgs::page, "50"));
  registry.add({.domain = "memory", .name = "coverage", .gateway = Gateway::Query,
                .summary = "Which files and symbols under a path have live, stale or no memory",
                .params = coverage_args.specs(),
                .returns = "{path, files{live,stale,none,total}, symbols{live,stale,none?} (of this page), "
                           "rows[{file, memory (live|stale|none), live?[ids], stale?[ids], "
                           "symbols?[{name, line?, memory, live?, stale?}]}]}; _meta.page when there are more files",
                .errors = {ErrorCode::NotFound, ErrorCode::Validation},
                .examples = {{R"({"path":"src/net/"})", "what is known under src/net/"},
                             {R"({"path":"src/retry.cpp","symbols":true})", "each function of a file"}},
                .idempotent = true, .tier = 2, .external = coverage_args.handler(coverage),
                .external_checks_only = true});
}

}  // namespace ct::memory
