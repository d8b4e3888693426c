// ct_fault — the store under storage faults, with the real `ct` binary (issue "Hardening";
// docs/architecture.md §8 "nothing is half-written").
//
//   ct_fault --ct PATH --shim LIB disk-full      a full disk through the LD_PRELOAD shim (fault_shim.cpp):
//       1. budget sweep: `ct add`, `ct update --notes`, `ct update --priority` and `ct complete`,
//          each run with a per-process write budget of 0, 1531, 3062 … bytes until it succeeds, so
//          ENOSPC strikes at every stage of the write (WAL header, frames, commit frame, -shm);
//       2. a shared quota just above the store's size: `ct add` with 1.5 KB descriptions until
//          the disk is full, then `ct update`, and `ct backup` on the full disk;
//       3. space returns: the store opens, passes integrity_check, validate and validate audit,
//          holds every acknowledged write whole and none of the failed ones, and takes writes and
//          a backup again.
//       Every failure must be E_FILE_ERROR, exit 3, with a message that says the disk is full and
//       names the file; nothing may crash. A failed backup must leave no file in .cleo/backups/.
//   ct_fault --ct PATH disk-full-tmpfs           the same on a real 1 MiB tmpfs mounted over the project
//       (exit 77, skipped, when mounting is not permitted here).
//   ct_fault --ct PATH --shim LIB readonly-fs    .cleo/ on a read-only file system through the shim
//       (EROFS): `ct --read-only list`, `show` and `find` answer; `ct add` and `ct update` fail with
//       E_FILE_ERROR (exit 3), never a crash or E_INTERNAL; `ct --read-only add` is refused; nothing
//       in .cleo/ changes (names, sizes, contents, modification times).
//   ct_fault --ct PATH readonly-fs-mount         the same on a read-only bind mount of .cleo/ (exit 77
//       when mounting is not permitted).
//   ct_fault --ct PATH readonly-perms            the same with `ct` run as the user nobody on a .cleo/
//       whose permissions make it read-only to that user (exit 77 unless run as root with setpriv).
//   Each read-only case runs twice: on a store closed cleanly (no -wal/-shm) and on one with the
//   -wal and -shm files a killed writer leaves.
//
// Each check prints PASS or FAIL with what it saw; the exit status is 1 when any failed. Temp
// dirs only (the sandbox is kept on failure and its path printed).
#include <fcntl.h>
#include <signal.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/json.h"
#include "support/ct_client.h"
#include "support/sandbox.h"
#include "support/store_checks.h"

namespace {

namespace fs = std::filesystem;
using ct::json::Value;
using ct::testing::CtCommand;
using ct::testing::CtRun;
using ct::testing::succeeded;

constexpr int kSkipped = 77;

struct Options {
  std::string ct;
  std::string shim;
  std::string which;
};

/// The checks of one case: each passes or fails with what it saw.
class Checks {
 public:
  bool check(bool ok, const std::string& what, const std::string& saw = "") {
    std::printf("%s %s%s%s\n", ok ? "PASS" : "FAIL", what.c_str(), saw.empty() ? "" : ": ", saw.c_str());
    std::fflush(stdout);
    if (!ok) failed_.push_back(what);
    return ok;
  }
  void note(const std::string& text) {
    std::printf("     %s\n", text.c_str());
    std::fflush(stdout);
  }
  bool failed() const { return !failed_.empty(); }
  const std::vector<std::string>& failures() const { return failed_; }

 private:
  std::vector<std::string> failed_;
};

std::string cut(const std::string& text, std::size_t length = 600) {
  std::string out = text.size() > length ? text.substr(0, length) + "…" : text;
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

bool exited(const CtRun& ran, int code) { return !ran.status.signaled && ran.status.code == code; }

std::string how_it_ended(const CtRun& ran) {
  if (ran.timed_out) return "timed out";
  if (ran.status.signaled) return "killed by signal " + std::to_string(ran.status.code - 128);
  return "exit " + std::to_string(ran.status.code);
}

enum class Fault { DiskFull, ReadOnly };

/// "" when `ran` is the clean failure a storage fault must give: the JSON envelope of
/// E_FILE_ERROR with exitCode 3, process exit 3, a message saying what is wrong with the disk and
/// naming the file (or its directory). Otherwise what is wrong with it.
std::string unclean_failure(const CtRun& ran, Fault fault, const fs::path& cleo) {
  if (ran.timed_out || ran.status.signaled) return how_it_ended(ran) + ", output: " + cut(ran.out);
  if (!ran.json.is_object()) return how_it_ended(ran) + " without a JSON envelope: " + cut(ran.out);
  if (succeeded(ran.json)) return "it succeeded";
  const Value& error = ran.json["error"];
  std::string problems;
  auto add = [&](const std::string& problem) { problems += (problems.empty() ? "" : "; ") + problem; };
  const std::string code = ct::testing::error_code(ran.json);
  if (code != "E_FILE_ERROR") add("code " + code + ", not E_FILE_ERROR");
  if (!(error["exitCode"] == Value(3))) add("exitCode " + error["exitCode"].dump() + ", not 3");
  if (!exited(ran, 3)) add(how_it_ended(ran) + ", not exit 3");
  const std::string message = error["message"].is_string() ? error["message"].as_string() : "";
  const std::string fix = error["fix"].is_string() ? error["fix"].as_string() : "";
  static const std::regex kFull(R"(full|space|enospc)");
  static const std::regex kReadOnly(R"(read.?only|erofs)");
  if (!std::regex_search(lower(message), fault == Fault::DiskFull ? kFull : kReadOnly))
    add(std::string("the message does not say the disk is ") + (fault == Fault::DiskFull ? "full" : "read-only"));
  if (message.find(cleo.string()) == std::string::npos && message.find(".cleo") == std::string::npos)
    add("the message does not name the file");
  if (problems.empty()) return "";
  return problems + " — " + cut(ran.json.dump());
}

// -- the directory, byte for byte -----------------------------------------------------------------

struct Entry {
  std::uintmax_t size = 0;
  std::int64_t mtime = 0;
  std::size_t content = 0;  // hash of the bytes (regular files)
  bool directory = false;
  friend bool operator==(const Entry&, const Entry&) = default;
};
using Snapshot = std::map<std::string, Entry>;

Snapshot snapshot(const fs::path& dir) {
  Snapshot out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    Entry entry;
    entry.directory = it->is_directory(ec);
    entry.mtime = it->last_write_time(ec).time_since_epoch().count();
    if (!entry.directory) {
      entry.size = it->file_size(ec);
      std::ifstream in(it->path(), std::ios::binary);
      std::stringstream bytes;
      bytes << in.rdbuf();
      entry.content = std::hash<std::string>{}(bytes.str());
    }
    out[fs::relative(it->path(), dir).string()] = entry;
  }
  return out;
}

std::string changes(const Snapshot& before, const Snapshot& after) {
  std::string out;
  auto add = [&](const std::string& text) { out += (out.empty() ? "" : ", ") + text; };
  for (const auto& [name, entry] : after) {
    auto found = before.find(name);
    if (found == before.end()) add("new " + name);
    else if (!(found->second == entry)) add("changed " + name);
  }
  for (const auto& [name, entry] : before)
    if (!after.contains(name)) add("removed " + name);
  return out;
}

std::uintmax_t usage(const fs::path& dir) {
  std::uintmax_t total = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec))
    if (it->is_regular_file(ec)) total += it->file_size(ec);
  return total;
}

// -- the project ---------------------------------------------------------------------------------

/// A project in the sandbox with `ct` as it is and `ct` under a fault.
struct Project {
  fs::path dir;
  fs::path cleo;
  fs::path db;
  std::vector<std::string> env;
  std::unique_ptr<CtCommand> ct;      // no fault
  std::unique_ptr<CtCommand> faulty;  // under the fault (set by the case)
  fs::path fault_log;

  Project(const ct::testing::Sandbox& sandbox, const std::string& ct_path, const fs::path& where)
      : dir(where), cleo(where / ".cleo"), db(where / ".cleo" / "tasks.db"), env(sandbox.env_for(where)),
        ct(std::make_unique<CtCommand>(ct_path, env)), fault_log(sandbox.root() / "fault.log") {}

  /// `ct` under the shim with these CT_FAULT_* settings (the log goes to fault_log).
  void use_shim(const std::string& shim, const std::vector<std::string>& settings) {
    std::vector<std::string> faulty_env = env;
    faulty_env.push_back("LD_PRELOAD=" + shim);
    faulty_env.push_back("CT_FAULT_DIR=" + cleo.string());
    faulty_env.push_back("CT_FAULT_LOG=" + fault_log.string());
    faulty_env.insert(faulty_env.end(), settings.begin(), settings.end());
    // Under AddressSanitizer the shim is loaded before the ASan runtime; that is fine for it.
    bool asan = false;
    for (auto& entry : faulty_env)
      if (entry.starts_with("ASAN_OPTIONS=")) {
        entry += ":verify_asan_link_order=0";
        asan = true;
      }
    if (!asan) faulty_env.push_back("ASAN_OPTIONS=verify_asan_link_order=0");
    faulty = std::make_unique<CtCommand>(ct->ct(), faulty_env);
  }

  /// `ct` with these CT_FAULT_* settings replaced (same shim).
  std::unique_ptr<CtCommand> with(const std::vector<std::string>& settings) const {
    std::vector<std::string> changed;
    for (const auto& entry : faulty->env()) {
      bool replaced = false;
      for (const auto& setting : settings)
        replaced = replaced || entry.substr(0, entry.find('=')) == setting.substr(0, setting.find('='));
      if (!replaced) changed.push_back(entry);
    }
    changed.insert(changed.end(), settings.begin(), settings.end());
    return std::make_unique<CtCommand>(ct->ct(), changed);
  }

  std::size_t faults_logged() const {
    std::ifstream in(fault_log);
    std::size_t lines = 0;
    for (std::string line; std::getline(in, line);) ++lines;
    return lines;
  }
};

/// Runs `ct` setup commands (each retried while retryable); false after the first that fails.
bool run_setup(Checks& checks, const Project& project, const std::vector<std::vector<std::string>>& commands) {
  for (const auto& command : commands) {
    CtRun ran = project.ct->run_retrying(command);
    if (!checks.check(succeeded(ran.json), "setup: ct " + command.front(), cut(ran.out))) return false;
  }
  return true;
}

/// The stored tasks by id, through `ct tasks export` (archived ones included).
std::map<std::string, Value> stored_tasks(const CtCommand& ct) {
  std::map<std::string, Value> out;
  CtRun ran = ct.run_retrying({"tasks", "export", "--archived", "include"});
  if (!succeeded(ran.json)) return out;
  for (const Value& task : ran.json["data"]["tasks"].as_array()) out[task["id"].as_string()] = task;
  return out;
}

std::vector<std::string> note_texts(const Value& task) {
  std::vector<std::string> out;
  if (task["notes"].is_array())
    for (const Value& note : task["notes"].as_array()) out.push_back(note["text"].as_string());
  return out;
}

std::string description_for(int n) {
  std::string text = "Description " + std::to_string(n) + ":";
  while (text.size() < 1500) text += " filler " + std::to_string(n);
  return text;
}

std::vector<std::string> backup_files(const fs::path& cleo) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(cleo / "backups", ec)) out.push_back(entry.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : " ") + item;
  return out.empty() ? "(none)" : out;
}

// -- a full disk ---------------------------------------------------------------------------------

/// What a full disk let through, to check once space returns.
struct Writes {
  std::map<std::string, std::string> added;            // acknowledged tasks.add: id → title
  std::map<std::string, std::string> descriptions;     // id → description, when sent
  std::set<std::string> failed_titles;                 // tasks.add that failed
  std::map<std::string, std::vector<std::string>> notes;  // acknowledged notes per task
  std::set<std::string> failed_notes;
};

/// `ct add` until the disk is full (five failures in a row); each failure must be clean.
void fill(Checks& checks, const Project& project, const CtCommand& ct, Writes& writes, const std::string& prefix,
          int limit) {
  int successes = 0, failures = 0, in_a_row = 0, unclean = 0;
  for (int n = 1; n <= limit && in_a_row < 5; ++n) {
    std::string title = prefix + " " + std::to_string(n);
    std::string description = description_for(n);
    CtRun ran = ct.run({"add", title, "--description", description, "--json"});
    if (succeeded(ran.json) && exited(ran, 0)) {
      std::string id = ran.json["data"]["id"].as_string();
      writes.added[id] = title;
      writes.descriptions[id] = description;
      ++successes;
      in_a_row = 0;
      continue;
    }
    ++failures;
    ++in_a_row;
    writes.failed_titles.insert(title);
    if (std::string why = unclean_failure(ran, Fault::DiskFull, project.cleo); !why.empty()) {
      if (unclean++ < 3) checks.check(false, "`ct add` on the full disk fails cleanly", why);
    } else if (failures == 1) {
      checks.note("first failure, after " + std::to_string(successes) + " adds: " + cut(ran.json["error"].dump(), 400));
    }
  }
  checks.check(successes > 0 && in_a_row >= 5,
               "`ct add` fills the disk (" + prefix + ")",
               std::to_string(successes) + " acknowledged, then " + std::to_string(failures) + " failed");
  checks.check(unclean == 0, "every failed `ct add` on the full disk was E_FILE_ERROR, exit 3, disk full, the file named",
               std::to_string(unclean) + " of " + std::to_string(failures) + " were not");
}

/// `ct backup` on the full disk fails cleanly and leaves nothing in .cleo/backups/.
void backup_on_full_disk(Checks& checks, const Project& project, const CtCommand& ct) {
  std::vector<std::string> before = backup_files(project.cleo);
  CtRun ran = ct.run({"backup", "--json"});
  std::string why = unclean_failure(ran, Fault::DiskFull, project.cleo);
  checks.check(why.empty(), "`ct backup` on the full disk fails with E_FILE_ERROR, exit 3, disk full, the file named", why);
  std::vector<std::string> after = backup_files(project.cleo);
  checks.check(after == before, "a failed `ct backup` leaves no file behind in .cleo/backups/",
               "before: " + joined(before) + "; after: " + joined(after));
}

/// Space is back: the store is sound, holds exactly what was acknowledged, and takes writes again.
void after_space_returns(Checks& checks, const Project& project, const Writes& writes) {
  for (const auto& problem : ct::testing::store_problems(*project.ct, project.db))
    checks.check(false, "the store passes integrity_check, validate and validate audit", problem);
  auto stored = stored_tasks(*project.ct);
  int missing = 0, partial = 0, ghosts = 0;
  for (const auto& [id, title] : writes.added) {
    auto found = stored.find(id);
    if (found == stored.end() || found->second["title"] != Value(title)) {
      if (missing++ < 3) checks.check(false, "acknowledged task " + id + " \"" + title + "\" is stored");
      continue;
    }
    auto description = writes.descriptions.find(id);
    if (description != writes.descriptions.end() && found->second["description"] != Value(description->second))
      if (partial++ < 3) checks.check(false, "acknowledged task " + id + " is stored whole", cut(found->second.dump()));
  }
  for (const auto& [id, task] : stored)
    if (writes.failed_titles.contains(task["title"].as_string()) && ghosts++ < 3)
      checks.check(false, "a `ct add` that reported failure wrote nothing",
                   id + " \"" + task["title"].as_string() + "\" is stored");
  for (const auto& [id, notes] : writes.notes) {
    std::vector<std::string> have = stored.contains(id) ? note_texts(stored[id]) : std::vector<std::string>{};
    std::vector<std::string> expected = notes;
    checks.check(have == expected, "task " + id + " has exactly its acknowledged notes",
                 "expected [" + joined(expected) + "], stored [" + joined(have) + "]");
  }
  checks.check(missing == 0 && partial == 0 && ghosts == 0,
               "every acknowledged write is stored whole and no failed one is (" + std::to_string(writes.added.size()) +
                   " acknowledged adds, " + std::to_string(writes.failed_titles.size()) + " failed)",
               std::to_string(missing) + " missing, " + std::to_string(partial) + " partial, " + std::to_string(ghosts) +
                   " failed-but-stored");
  auto tasks = ct::testing::query_rows(
      project.db, "SELECT (SELECT count(*) FROM tasks), (SELECT count(*) FROM tasks t WHERE t.num IN "
                  "(SELECT rowid FROM tasks_fts) OR t.num IN (SELECT num FROM tasks_fts_tail))");
  checks.check(tasks && (*tasks)[0][0] == (*tasks)[0][1],
               "every task is in the search index or noted for it (tasks_fts_tail)",
               tasks ? (*tasks)[0][0] + " tasks, " + (*tasks)[0][1] + " indexed or noted" : tasks.error());
  CtRun added = project.ct->run({"add", "Written after space returned", "--json"});
  checks.check(succeeded(added.json) && exited(added, 0), "`ct add` works again once space returns", cut(added.out));
  CtRun backup = project.ct->run({"backup", "--json"});
  checks.check(succeeded(backup.json) && exited(backup, 0), "`ct backup` works again once space returns", cut(backup.out));
}

/// One command run under write budgets 0, step, 2·step … until it succeeds; every failure clean,
/// the store sound after each. Returns whether it ever succeeded.
bool sweep(Checks& checks, const Project& project, const std::string& what,
           const std::function<std::vector<std::string>(int)>& command,
           const std::function<void(int, const CtRun&)>& record) {
  constexpr int kStep = 1531;  // not a divisor of the 4096-byte page nor of the 24-byte frame header
  int unclean = 0, unsound = 0, failures = 0;
  // From one step up: a budget of 0 (no byte at all, not even for the -shm file SQLite creates
  // when it opens the store) is the case disk-full-at-open.
  for (int attempt = 1; attempt < 400; ++attempt) {
    const int budget = attempt * kStep;
    auto ct = project.with({"CT_FAULT_BUDGET=" + std::to_string(budget)});
    std::vector<std::string> args = command(attempt);
    args.push_back("--json");
    CtRun ran = ct->run(args);
    record(attempt, ran);
    bool ok = succeeded(ran.json) && exited(ran, 0);
    if (!ok) {
      ++failures;
      if (std::string why = unclean_failure(ran, Fault::DiskFull, project.cleo); !why.empty() && unclean++ < 3)
        checks.check(false, what + " with a write budget of " + std::to_string(budget) + " bytes fails cleanly", why);
    }
    if (std::string problem = ct::testing::integrity_problem(project.db); !problem.empty() && unsound++ < 3)
      checks.check(false, "integrity_check after " + what + " with a budget of " + std::to_string(budget), problem);
    if (ok) {
      checks.check(failures > 0 && unclean == 0 && unsound == 0,
                   what + " fails cleanly and leaves a sound store under every write budget below what it needs",
                   std::to_string(failures) + " budgets (" + std::to_string(kStep) + "–" + std::to_string(budget - kStep) +
                       " bytes) failed, " + std::to_string(unclean) + " of them uncleanly, " + std::to_string(unsound) +
                       " unsound stores; it succeeded with " + std::to_string(budget));
      return true;
    }
  }
  checks.check(false, what + " succeeds once the budget is large enough");
  return false;
}

void disk_full(Checks& checks, const Options& options, ct::testing::Sandbox& sandbox) {
  Project project(sandbox, options.ct, sandbox.root() / "project");
  fs::create_directories(project.dir);
  if (!run_setup(checks, project, {{"init"}, {"add", "Seed task for notes"}, {"add", "Seed task for priority"},
                                    {"add", "Seed task to complete"}}))
    return;
  project.use_shim(options.shim, {"CT_FAULT_MODE=enospc"});
  Writes writes;

  // 1. Budget sweeps: ENOSPC at every stage of one write.
  std::printf("-- 1. write budget sweeps (CT_FAULT_BUDGET)\n");
  sweep(checks, project, "`ct add`", [](int n) { return std::vector<std::string>{"add", "Sweep add " + std::to_string(n)}; },
        [&](int n, const CtRun& ran) {
          std::string title = "Sweep add " + std::to_string(n);
          if (succeeded(ran.json)) writes.added[ran.json["data"]["id"].as_string()] = title;
          else writes.failed_titles.insert(title);
        });
  checks.check(project.faults_logged() > 0, "the shim injected ENOSPC (CT_FAULT_LOG has entries)",
               std::to_string(project.faults_logged()) + " faults logged");
  sweep(checks, project, "`ct update --notes`",
        [](int n) { return std::vector<std::string>{"update", "T001", "--notes", "Sweep note " + std::to_string(n)}; },
        [&](int n, const CtRun& ran) {
          if (succeeded(ran.json)) writes.notes["T001"].push_back("Sweep note " + std::to_string(n));
        });
  bool priority_changed = sweep(
      checks, project, "`ct update --priority`",
      [](int) { return std::vector<std::string>{"update", "T002", "--priority", "critical"}; }, [](int, const CtRun&) {});
  bool completed = sweep(checks, project, "`ct complete`", [](int) { return std::vector<std::string>{"complete", "T003"}; },
                         [](int, const CtRun&) {});
  auto stored = stored_tasks(*project.ct);
  checks.check(stored["T002"]["priority"] == Value(priority_changed ? "critical" : "medium"),
               "T002's priority is exactly what was acknowledged", stored["T002"]["priority"].dump());
  checks.check(stored["T003"]["status"] == Value(completed ? "done" : "pending"),
               "T003's status is exactly what was acknowledged", stored["T003"]["status"].dump());

  // 2. A disk that is full for everyone: a quota just above what the store takes now.
  std::printf("-- 2. a shared quota (CT_FAULT_QUOTA): the disk fills up\n");
  const std::uintmax_t quota = usage(project.cleo) + 32768 /* -shm */ + 96 * 1024;
  auto full = project.with({"CT_FAULT_QUOTA=" + std::to_string(quota)});
  checks.note("quota " + std::to_string(quota) + " bytes; the store takes " + std::to_string(usage(project.cleo)));
  fill(checks, project, *full, writes, "Quota task", 500);
  CtRun note = full->run({"update", "T001", "--notes", "Note on a full disk", "--json"});
  if (succeeded(note.json)) {
    writes.notes["T001"].push_back("Note on a full disk");
    checks.note("`ct update --notes` on the full disk succeeded (it fit in the WAL)");
  } else {
    checks.check(unclean_failure(note, Fault::DiskFull, project.cleo).empty(),
                 "`ct update --notes` on the full disk fails cleanly", unclean_failure(note, Fault::DiskFull, project.cleo));
  }
  CtRun listed = full->run({"list", "--json"});
  checks.note(std::string("reads on the full disk: `ct list` ") +
              (succeeded(listed.json) ? "works" : "fails: " + cut(listed.out, 300)));
  backup_on_full_disk(checks, project, *full);

  // 3. Space returns.
  std::printf("-- 3. space returns\n");
  after_space_returns(checks, project, writes);
}

// -- a real tmpfs ---------------------------------------------------------------------------------

/// A mount that is undone when the case ends, however it ends.
class Mount {
 public:
  explicit Mount(std::string target) : target_(std::move(target)) {}
  ~Mount() {
    if (::umount2(target_.c_str(), 0) != 0) ::umount2(target_.c_str(), MNT_DETACH);
  }
  Mount(const Mount&) = delete;
  Mount& operator=(const Mount&) = delete;

 private:
  std::string target_;
};

/// A fresh 1 MiB tmpfs at <sandbox>/tmpfs; nullptr with `error` set when mounting is not permitted.
std::unique_ptr<Mount> mount_tmpfs(const ct::testing::Sandbox& sandbox, std::string& error) {
  const fs::path where = sandbox.root() / "tmpfs";
  fs::create_directories(where);
  if (::mount("ct-fault", where.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=0755") != 0) {
    error = std::string("cannot mount a tmpfs here (mount: ") + std::strerror(errno) + ")";
    return nullptr;
  }
  return std::make_unique<Mount>(where.string());
}

void disk_full_tmpfs(Checks& checks, const Options& options, ct::testing::Sandbox& sandbox, int& status) {
  std::string error;
  auto mounted = mount_tmpfs(sandbox, error);
  if (!mounted) {
    std::printf("SKIPPED: %s; the LD_PRELOAD case fault/disk-full covers a full disk without mounting\n",
                error.c_str());
    status = kSkipped;
    return;
  }
  const fs::path where = sandbox.root() / "tmpfs";
  Project project(sandbox, options.ct, where);
  CtRun init = project.ct->run({"init", "--json"});
  if (!checks.check(succeeded(init.json), "ct init on a 1 MiB tmpfs", cut(init.out))) return;
  Writes writes;
  std::printf("-- the 1 MiB tmpfs fills up\n");
  fill(checks, project, *project.ct, writes, "Tmpfs task", 2000);
  backup_on_full_disk(checks, project, *project.ct);
  std::printf("-- space returns (the tmpfs grows to 16 MiB)\n");
  if (::mount("ct-fault", where.c_str(), "tmpfs", MS_REMOUNT | MS_NOSUID | MS_NODEV, "size=16m") != 0) {
    checks.check(false, "remount the tmpfs with 16 MiB", std::strerror(errno));
    return;
  }
  after_space_returns(checks, project, writes);
}

// -- no byte free when `ct` starts ----------------------------------------------------------------

/// `ct` on a disk with no byte free: opening the store must create its -shm file (SQLite's
/// wal-index, 32 KiB), so the store cannot even be opened. The failure must still say so.
void full_at_open_checks(Checks& checks, const Project& project, const CtCommand& full, const std::string& where,
                         Writes& writes) {
  const std::string title = "Added on a disk with no space";
  CtRun added = full.run({"add", title, "--json"});
  writes.failed_titles.insert(title);
  checks.check(unclean_failure(added, Fault::DiskFull, project.cleo).empty(),
               "`ct add` with no byte free (" + where + ") fails with E_FILE_ERROR, exit 3, disk full, the file named",
               unclean_failure(added, Fault::DiskFull, project.cleo));
  CtRun updated = full.run({"update", "T001", "--notes", "Note on a disk with no space", "--json"});
  checks.check(unclean_failure(updated, Fault::DiskFull, project.cleo).empty(),
               "`ct update --notes` with no byte free (" + where +
                   ") fails with E_FILE_ERROR, exit 3, disk full, the file named",
               unclean_failure(updated, Fault::DiskFull, project.cleo));
  CtRun listed = full.run({"list", "--json"});
  checks.note(std::string("reads with no byte free (") + where + "): `ct list` " +
              (succeeded(listed.json) ? "works" : "fails: " + cut(listed.out, 400)));
}

/// Fills the file system holding `dir` to the last byte with a file there; its path.
fs::path fill_to_the_brim(const fs::path& dir) {
  const fs::path filler = dir / "filler";
  int fd = ::open(filler.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  std::vector<char> zeros(4096, 0);
  for (std::size_t size = zeros.size(); fd >= 0 && size > 0; size /= 2)
    while (::write(fd, zeros.data(), size) == static_cast<ssize_t>(size)) {
    }
  if (fd >= 0) ::close(fd);
  return filler;
}

void disk_full_at_open(Checks& checks, const Options& options, ct::testing::Sandbox& sandbox) {
  std::printf("-- the shim: a write budget of 0 bytes\n");
  {
    Project project(sandbox, options.ct, sandbox.root() / "project");
    fs::create_directories(project.dir);
    Writes writes;
    if (!run_setup(checks, project, {{"init"}, {"add", "Seed task for notes"}})) return;
    writes.added["T001"] = "Seed task for notes";
    writes.notes["T001"] = {};
    project.use_shim(options.shim, {"CT_FAULT_MODE=enospc", "CT_FAULT_BUDGET=0"});
    full_at_open_checks(checks, project, *project.faulty, "shim", writes);
    after_space_returns(checks, project, writes);
  }
  std::printf("-- a real 1 MiB tmpfs filled to the last byte\n");
  std::string error;
  auto mounted = mount_tmpfs(sandbox, error);
  if (!mounted) {
    std::printf("SKIPPED the tmpfs part: %s\n", error.c_str());
    return;
  }
  Project project(sandbox, options.ct, sandbox.root() / "tmpfs");
  Writes writes;
  if (!run_setup(checks, project, {{"init"}, {"add", "Seed task for notes"}})) return;
  writes.added["T001"] = "Seed task for notes";
  writes.notes["T001"] = {};
  const fs::path filler = fill_to_the_brim(project.dir);
  full_at_open_checks(checks, project, *project.ct, "tmpfs", writes);
  std::error_code ec;
  fs::remove(filler, ec);
  after_space_returns(checks, project, writes);
}

// -- a read-only file system ------------------------------------------------------------------------

void readonly_checks(Checks& checks, const Project& project, const CtCommand& ro, const std::string& state,
                     const std::set<std::string>& ids) {
  const Snapshot before = snapshot(project.cleo);
  const std::string when = " (" + state + ")";

  CtRun listed = ro.run({"--read-only", "list", "--json"});
  std::set<std::string> listed_ids;
  if (succeeded(listed.json) && listed.json["data"].is_array())
    for (const Value& row : listed.json["data"].as_array()) listed_ids.insert(row["id"].as_string());
  checks.check(listed_ids == ids && exited(listed, 0), "`ct --read-only list` lists the tasks" + when, cut(listed.out));
  CtRun shown = ro.run({"--read-only", "show", "T001", "--json"});
  checks.check(succeeded(shown.json) && shown.json["data"]["title"] == Value("Readable task one") && exited(shown, 0),
               "`ct --read-only show T001` shows it" + when, cut(shown.out));
  CtRun found = ro.run({"--read-only", "find", "Readable", "--json"});
  bool hit = false;
  // tasks.find answers a table whose first column is the id.
  if (succeeded(found.json) && found.json["data"]["rows"].is_array())
    for (const Value& row : found.json["data"]["rows"].as_array()) hit = hit || row.as_array().at(0) == Value("T001");
  checks.check(hit && exited(found, 0), "`ct --read-only find Readable` finds T001" + when, cut(found.out));

  CtRun added = ro.run({"add", "Written on a read-only disk", "--json"});
  std::string why = unclean_failure(added, Fault::ReadOnly, project.cleo);
  checks.check(why.empty(), "`ct add` fails with E_FILE_ERROR, exit 3, saying read-only" + when, why);
  CtRun updated = ro.run({"update", "T001", "--notes", "Written on a read-only disk", "--json"});
  why = unclean_failure(updated, Fault::ReadOnly, project.cleo);
  checks.check(why.empty(), "`ct update --notes` fails with E_FILE_ERROR, exit 3, saying read-only" + when, why);
  CtRun refused = ro.run({"--read-only", "add", "Refused in read-only mode", "--json"});
  const std::string code = ct::testing::error_code(refused.json);
  checks.check(!refused.status.signaled && (code == "E_MUTATION_DISABLED" || code == "E_FILE_ERROR"),
               "`ct --read-only add` is refused (E_MUTATION_DISABLED or E_FILE_ERROR), not a crash or E_INTERNAL" + when,
               how_it_ended(refused) + ": " + cut(refused.out));

  const std::string changed = changes(before, snapshot(project.cleo));
  checks.check(changed.empty(), "nothing in .cleo/ was written" + when, changed);
}

/// A project with two tasks, made before the disk turns read-only; the store is closed cleanly
/// (no -wal or -shm file left).
bool readonly_setup(Checks& checks, const Project& project) {
  return run_setup(checks, project,
                   {{"init"}, {"add", "Readable task one", "--notes", "first note"}, {"add", "Readable task two"}});
}

/// A third task written by a `ct mcp` server that is then killed with SIGKILL: its write sits in
/// the -wal file, with the -shm file beside it, as a crashed writer leaves a store.
bool leave_wal_behind(Checks& checks, const Project& project) {
  auto client = ct::testing::McpClient::start(project.ct->ct(), project.env);
  if (!checks.check(client.has_value(), "setup: start ct mcp", client ? "" : client.error())) return false;
  Value added = client->initialize() ? client->call("cleo_mutate", "tasks", "add", R"({"title":"Readable task three"})")
                                     : Value();
  client->process().kill(SIGKILL);
  client->process().wait();
  std::error_code ec;
  const auto wal = fs::file_size(project.cleo / "tasks.db-wal", ec);
  return checks.check(succeeded(added) && !ec && wal > 0,
                      "setup: a killed `ct mcp` left its acknowledged add in tasks.db-wal",
                      cut(added.dump()) + "; -wal " + (ec ? ec.message() : std::to_string(wal) + " bytes"));
}

const std::string kClean = "store closed cleanly";
const std::string kWalLeft = "-wal and -shm left by a killed writer";

void readonly_fs(Checks& checks, const Options& options, ct::testing::Sandbox& sandbox) {
  Project project(sandbox, options.ct, sandbox.root() / "project");
  fs::create_directories(project.dir);
  if (!readonly_setup(checks, project)) return;
  project.use_shim(options.shim, {"CT_FAULT_MODE=erofs"});
  readonly_checks(checks, project, *project.faulty, kClean, {"T001", "T002"});
  if (!leave_wal_behind(checks, project)) return;
  readonly_checks(checks, project, *project.faulty, kWalLeft, {"T001", "T002", "T003"});
  std::ifstream log(project.fault_log);
  std::set<std::string> refused;
  for (std::string line; std::getline(log, line);) refused.insert(line.substr(line.find(' ') + 1));
  checks.note("writes the shim refused with EROFS (call, path): " + std::to_string(refused.size()));
  for (const auto& line : refused) checks.note("  " + line);
}

/// .cleo/ bind-mounted read-only onto itself; nullptr (and `status` skipped) when not permitted.
std::unique_ptr<Mount> mount_readonly(const fs::path& dir, int& status) {
  const char* path = dir.c_str();
  if (::mount(path, path, nullptr, MS_BIND, nullptr) != 0) {
    std::printf("SKIPPED: cannot bind-mount here (mount: %s); the LD_PRELOAD case fault/readonly-fs covers a "
                "read-only disk without mounting\n",
                std::strerror(errno));
    status = kSkipped;
    return nullptr;
  }
  auto mounted = std::make_unique<Mount>(dir.string());
  if (::mount(nullptr, path, nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY, nullptr) != 0) {
    std::printf("SKIPPED: cannot make the bind mount read-only (mount: %s)\n", std::strerror(errno));
    status = kSkipped;
    return nullptr;
  }
  return mounted;
}

void readonly_fs_mount(Checks& checks, const Options& options, ct::testing::Sandbox& sandbox, int& status) {
  Project project(sandbox, options.ct, sandbox.root() / "project");
  fs::create_directories(project.dir);
  if (!readonly_setup(checks, project)) return;
  {
    auto mounted = mount_readonly(project.cleo, status);
    if (!mounted) return;
    readonly_checks(checks, project, *project.ct, kClean, {"T001", "T002"});
  }
  if (!leave_wal_behind(checks, project)) return;
  auto mounted = mount_readonly(project.cleo, status);
  if (!mounted) return;
  readonly_checks(checks, project, *project.ct, kWalLeft, {"T001", "T002", "T003"});
}

/// `ct` run as the user nobody (through setpriv), for a store its files' permissions make
/// read-only; nullptr (and `status` skipped) when that is not possible here.
std::unique_ptr<CtCommand> ct_as_nobody(const ct::testing::Sandbox& sandbox, const Project& project, int& status) {
  const fs::path setpriv = "/usr/bin/setpriv";
  if (::geteuid() != 0 || !fs::exists(setpriv)) {
    std::printf("SKIPPED: running `ct` as another user needs root and %s\n", setpriv.c_str());
    status = kSkipped;
    return nullptr;
  }
  const fs::path wrapper = sandbox.root() / "ct-as-nobody";
  std::ofstream(wrapper) << "#!/bin/sh\nexec " << setpriv.string()
                         << " --reuid=65534 --regid=65534 --clear-groups " << project.ct->ct() << " \"$@\"\n";
  fs::permissions(wrapper, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                               fs::perms::others_read | fs::perms::others_exec);
  // The sandbox (mkdtemp: 0700) must be reachable for nobody; .cleo/ and its files only readable.
  const auto readable_dir = fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                            fs::perms::others_read | fs::perms::others_exec;
  for (const fs::path& dir : {sandbox.root(), sandbox.root() / "home", project.dir}) fs::permissions(dir, readable_dir);
  // The sandbox's person keys are another user's to nobody (refused: cli/person.h): it runs as an
  // agent's script, which reads and writes tasks all the same.
  std::vector<std::string> env = project.env;
  std::erase_if(env, [](const std::string& entry) { return entry.starts_with("CT_PERSON_KEY="); });
  return std::make_unique<CtCommand>(wrapper.string(), env);
}

/// Takes write permission away from .cleo/ and everything in it (nobody may still read).
void make_read_only(const fs::path& cleo) {
  std::error_code ec;
  fs::permissions(cleo, fs::perms::owner_write | fs::perms::group_write | fs::perms::others_write,
                  fs::perm_options::remove, ec);
  for (auto it = fs::recursive_directory_iterator(cleo, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    fs::permissions(it->path(), fs::perms::others_read | fs::perms::group_read, fs::perm_options::add, ec);
    if (it->is_directory(ec))
      fs::permissions(it->path(), fs::perms::others_exec | fs::perms::group_exec, fs::perm_options::add, ec);
    fs::permissions(it->path(), fs::perms::owner_write | fs::perms::group_write | fs::perms::others_write,
                    fs::perm_options::remove, ec);
  }
}

void readonly_perms(Checks& checks, const Options& options, ct::testing::Sandbox& sandbox, int& status) {
  Project project(sandbox, options.ct, sandbox.root() / "project");
  fs::create_directories(project.dir);
  if (!readonly_setup(checks, project)) return;
  auto nobody = ct_as_nobody(sandbox, project, status);
  if (!nobody) return;
  make_read_only(project.cleo);
  readonly_checks(checks, project, *nobody, kClean + ", files read-only to the user", {"T001", "T002"});
  fs::permissions(project.cleo, fs::perms::owner_write, fs::perm_options::add);
  if (!leave_wal_behind(checks, project)) return;
  make_read_only(project.cleo);
  readonly_checks(checks, project, *nobody, kWalLeft + ", files read-only to the user", {"T001", "T002", "T003"});
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--ct" && i + 1 < argc) options.ct = fs::absolute(argv[++i]).string();
    else if (arg == "--shim" && i + 1 < argc) options.shim = fs::absolute(argv[++i]).string();
    else options.which = arg;
  }
  const std::set<std::string> shim_cases{"disk-full", "disk-full-at-open", "readonly-fs"};
  const std::set<std::string> mount_cases{"disk-full-tmpfs", "readonly-fs-mount", "readonly-perms"};
  if (options.ct.empty() || (!shim_cases.contains(options.which) && !mount_cases.contains(options.which)) ||
      (shim_cases.contains(options.which) && options.shim.empty())) {
    std::fprintf(stderr, "usage: ct_fault --ct PATH [--shim LIB] "
                         "disk-full|disk-full-at-open|disk-full-tmpfs|readonly-fs|readonly-fs-mount|readonly-perms\n");
    return 2;
  }
  signal(SIGPIPE, SIG_IGN);
  auto sandbox = ct::testing::sandbox_or_complain("ct-fault");
  if (!sandbox) return 2;
  Checks checks;
  int status = 0;
  if (options.which == "disk-full") disk_full(checks, options, *sandbox);
  if (options.which == "disk-full-at-open") disk_full_at_open(checks, options, *sandbox);
  if (options.which == "disk-full-tmpfs") disk_full_tmpfs(checks, options, *sandbox, status);
  if (options.which == "readonly-fs") readonly_fs(checks, options, *sandbox);
  if (options.which == "readonly-fs-mount") readonly_fs_mount(checks, options, *sandbox, status);
  if (options.which == "readonly-perms") readonly_perms(checks, options, *sandbox, status);
  if (checks.failed()) {
    sandbox->keep();
    std::printf("%s: %zu check(s) failed; the sandbox is kept in %s\n", options.which.c_str(),
                checks.failures().size(), sandbox->root().c_str());
    return 1;
  }
  if (status == kSkipped) return kSkipped;
  std::printf("%s: passed\n", options.which.c_str());
  return 0;
}
