// The store benchmarks' workload: a fixed, seeded backlog of tasks.add calls (epics, tasks,
// subtasks, dependencies, labels, ~2000-word Zipf vocabulary) and the completions that follow.
// Shared by ct_bench_store (through the router) and ct_bench_mcp (through `ct mcp`), so both build
// the same stores from the same seed.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/json.h"

namespace ct::bench {

// ---------------------------------------------------------------------------------------------
// The workload. Only std::mt19937's raw output is used (its sequence is fixed by the standard);
// the mappings to ranges are our own, so every standard library builds the same stores.

class Rng {
 public:
  explicit Rng(std::uint32_t seed) : engine_(seed) {}
  std::uint32_t bits() { return static_cast<std::uint32_t>(engine_()); }
  /// Uniform in [0, n), n > 0.
  std::size_t below(std::size_t n) { return static_cast<std::size_t>((std::uint64_t{bits()} * n) >> 32); }
  /// Uniform in [low, high].
  std::size_t between(std::size_t low, std::size_t high) { return low + below(high - low + 1); }
  double unit() { return static_cast<double>(bits()) / 4294967296.0; }
  bool chance(double p) { return unit() < p; }

 private:
  std::mt19937 engine_;
};

/// ~2000 words: the everyday words of software tasks first, then made-up but pronounceable ones.
/// Text draws words by a Zipf law (rank r has weight 1/(r+1)), as real prose does, so a search for
/// a common word has thousands of matches and a rare one a handful.
class Vocabulary {
 public:
  Vocabulary(Rng& rng, std::size_t size) {
    static constexpr std::string_view kCommon[] = {
        "add", "fix", "update", "remove", "refactor", "test", "api", "auth", "login", "user", "session",
        "token", "cache", "schema", "migration", "database", "query", "index", "search", "config", "deploy",
        "build", "release", "docs", "readme", "error", "retry", "timeout", "queue", "worker", "job", "event",
        "log", "metric", "alert", "dashboard", "page", "form", "button", "modal", "layout", "style", "theme",
        "route", "handler", "endpoint", "request", "response", "client", "server", "socket", "stream",
        "upload", "download", "file", "storage", "bucket", "backup", "restore", "export", "import", "parser",
        "lexer", "compiler", "plugin", "module", "package", "dependency", "version", "upgrade", "lint",
        "format", "coverage", "benchmark", "profile", "memory", "leak", "crash", "bug", "regression",
        "flaky", "support", "validate", "permission", "role", "admin", "billing", "invoice", "payment",
        "email", "notification", "webhook", "scheduler", "cron", "report", "chart", "table", "filter",
        "sort", "pagination", "cursor", "batch", "bulk", "sync", "async", "thread", "lock", "mutex",
        "transaction", "rollback", "commit", "merge", "branch", "review", "pipeline", "docker", "cluster",
        "secret", "vault", "encrypt", "hash", "password", "oauth", "tenant", "account", "settings",
        "preference", "locale", "translation", "unicode", "timezone", "date", "calendar", "audit",
        "history", "trace", "span", "latency", "throughput", "mock", "fixture", "snapshot", "golden",
        "cli", "flag", "option", "help", "usage", "the", "for", "with", "when", "and", "from", "into"};
    static constexpr std::string_view kOnsets[] = {"b", "br", "c", "ch", "d", "dr", "f", "g", "gr", "h", "j",
                                                   "k", "l", "m", "n", "p", "pl", "r", "s", "sh", "st", "t",
                                                   "tr", "v", "w", "z"};
    static constexpr std::string_view kVowels[] = {"a", "e", "i", "o", "u", "ai", "ea", "ou", "y"};
    static constexpr std::string_view kCodas[] = {"", "", "", "n", "r", "s", "t", "l", "x", "nd", "m"};
    std::set<std::string> seen;
    for (auto word : kCommon)
      if (seen.insert(std::string(word)).second) words_.emplace_back(word);
    while (words_.size() < size) {
      std::string word;
      std::size_t syllables = rng.between(2, 3);
      for (std::size_t s = 0; s < syllables; ++s) {
        word += kOnsets[rng.below(std::size(kOnsets))];
        word += kVowels[rng.below(std::size(kVowels))];
      }
      word += kCodas[rng.below(std::size(kCodas))];
      if (seen.insert(word).second) words_.push_back(std::move(word));
    }
    double total = 0;
    for (std::size_t rank = 0; rank < words_.size(); ++rank) {
      total += 1.0 / static_cast<double>(rank + 1);
      cumulative_.push_back(total);
    }
  }

  const std::string& zipf(Rng& rng) const {
    double target = rng.unit() * cumulative_.back();
    auto it = std::upper_bound(cumulative_.begin(), cumulative_.end(), target);
    auto rank = std::min<std::size_t>(static_cast<std::size_t>(it - cumulative_.begin()), words_.size() - 1);
    return words_[rank];
  }
  const std::string& uniform(Rng& rng) const { return words_[rng.below(words_.size())]; }
  std::size_t size() const { return words_.size(); }

 private:
  std::vector<std::string> words_;
  std::vector<double> cumulative_;
};

enum class Kind { Epic, Task, Subtask };

struct PlannedAdd {
  json::Value params;
  Kind kind = Kind::Task;
  bool blocked = false;
};

/// The shape of a real backlog: 5% epics; of the rest 55% tasks under a recent epic, 20% subtasks
/// under a recent task, 25% top-level tasks. Priorities 5/20/50/25% critical/high/medium/low; 20%
/// depend on 1–2 recent tasks; most carry labels, many a description, some acceptance criteria,
/// files, a size, a phase or a first note; 2% start blocked.
class Workload {
 public:
  explicit Workload(std::uint32_t seed) : rng_(seed), vocabulary_(rng_, 2000) {}

  PlannedAdd plan_add() {
    PlannedAdd plan;
    json::Value& p = plan.params = json::Value::object();
    if (ids_.empty() || rng_.chance(0.05)) {
      plan.kind = Kind::Epic;
    } else {
      double roll = rng_.unit();
      if (roll < 0.20 && !tasks_.empty()) {
        plan.kind = Kind::Subtask;
        p.set("parent", recent(tasks_, 200));
      } else if (roll < 0.75) {
        p.set("parent", recent(epics_, 20));  // the first task is always an epic
      }
    }
    p.set("title", sentence(4, 9, true));
    if (plan.kind == Kind::Epic) p.set("type", "epic");
    if (rng_.chance(0.8)) p.set("description", sentence(15, 60, true) + ".");
    double priority = rng_.unit();
    p.set("priority", priority < 0.05 ? "critical" : priority < 0.25 ? "high" : priority < 0.75 ? "medium" : "low");
    if (plan.kind != Kind::Epic && !ids_.empty() && rng_.chance(0.2)) {
      std::set<std::string> depends;
      std::size_t count = rng_.between(1, 2);
      for (std::size_t i = 0; i < count; ++i) depends.insert(recent(ids_, 300));
      p.set("depends", json::Value::array_of(depends));
    }
    if (rng_.chance(0.6)) {
      static constexpr std::string_view kLabels[] = {"backend", "frontend", "api", "db", "infra", "docs",
                                                     "security", "perf", "ux", "testing", "ci", "tech-debt"};
      std::set<std::string> labels;
      std::size_t count = rng_.between(1, 2);
      for (std::size_t i = 0; i < count; ++i) labels.insert(std::string(kLabels[rng_.below(std::size(kLabels))]));
      p.set("labels", json::Value::array_of(labels));
    }
    if (rng_.chance(0.3)) {
      json::Value acceptance = json::Value::array();
      std::size_t count = rng_.between(1, 3);
      for (std::size_t i = 0; i < count; ++i) acceptance.push_back(sentence(4, 10, true));
      p.set("acceptance", std::move(acceptance));
    }
    if (rng_.chance(0.2)) {
      json::Value files = json::Value::array();
      std::size_t count = rng_.between(1, 3);
      for (std::size_t i = 0; i < count; ++i)
        files.push_back("src/" + vocabulary_.zipf(rng_) + "/" + vocabulary_.zipf(rng_) + ".cpp");
      p.set("files", std::move(files));
    }
    if (rng_.chance(0.5)) {
      static constexpr std::string_view kSizes[] = {"small", "medium", "large"};
      p.set("size", kSizes[rng_.below(std::size(kSizes))]);
    }
    if (rng_.chance(0.4)) {
      static constexpr std::string_view kPhases[] = {"setup", "core", "polish", "release"};
      p.set("phase", kPhases[rng_.below(std::size(kPhases))]);
    }
    if (rng_.chance(0.1)) p.set("notes", sentence(8, 30, true));
    if (plan.kind != Kind::Epic && rng_.chance(0.02)) {
      p.set("blockedBy", "waiting for the " + vocabulary_.zipf(rng_) + " review");
      plan.blocked = true;
    }
    return plan;
  }

  void created(const std::string& id, const PlannedAdd& plan) {
    ids_.push_back(id);
    blocked_.push_back(plan.blocked);
    if (plan.kind == Kind::Epic) epics_.push_back(id);
    if (plan.kind == Kind::Task) tasks_.push_back(id);
  }

  /// Ids to complete after the fill: ~30%, never a task that started blocked.
  std::vector<std::string> plan_completions() {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < ids_.size(); ++i)
      if (rng_.chance(0.3) && !blocked_[i]) out.push_back(ids_[i]);
    return out;
  }

  const std::string& random_id() { return ids_[rng_.below(ids_.size())]; }
  /// A search term: any vocabulary word, uniformly (so mostly rare words, sometimes very common ones).
  const std::string& random_word() { return vocabulary_.uniform(rng_); }
  std::size_t vocabulary_size() const { return vocabulary_.size(); }

 private:
  /// A random item among the last `window` of `items` (work clusters around recent tasks).
  const std::string& recent(const std::vector<std::string>& items, std::size_t window) {
    std::size_t span = std::min(window, items.size());
    return items[items.size() - 1 - rng_.below(span)];
  }

  std::string sentence(std::size_t min_words, std::size_t max_words, bool capitalise) {
    std::string out;
    std::size_t count = rng_.between(min_words, max_words);
    for (std::size_t i = 0; i < count; ++i) {
      if (i > 0) out += ' ';
      out += vocabulary_.zipf(rng_);
    }
    if (capitalise && !out.empty() && out[0] >= 'a' && out[0] <= 'z') out[0] = static_cast<char>(out[0] - 'a' + 'A');
    return out;
  }

  Rng rng_;
  Vocabulary vocabulary_;
  std::vector<std::string> ids_;
  std::vector<bool> blocked_;
  std::vector<std::string> epics_;
  std::vector<std::string> tasks_;  // type task: the parents subtasks may have
};

}  // namespace ct::bench
