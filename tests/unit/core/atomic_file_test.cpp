// Files published whole: replace, exclusive publish, abandoned writes, modes, temp names.
#include "core/atomic_file.h"

#include <catch2/catch.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "unit/temp_dir.h"

namespace ct {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

std::string read(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename().string());
  return names;
}

unsigned mode_of(const fs::path& file) {
  struct stat info {};
  REQUIRE(::stat(file.c_str(), &info) == 0);
  return info.st_mode & 07777;
}

/// Sets the process umask for one scope.
class UmaskGuard {
 public:
  explicit UmaskGuard(mode_t mask) : previous_(::umask(mask)) {}
  ~UmaskGuard() { ::umask(previous_); }
  UmaskGuard(const UmaskGuard&) = delete;
  UmaskGuard& operator=(const UmaskGuard&) = delete;

 private:
  mode_t previous_;
};

}  // namespace

TEST_CASE("write_file_atomically creates and replaces a file, leaving no temp file", "[core][atomic_file]") {
  TempDir dir;
  fs::path file = dir.path() / "data.txt";
  REQUIRE(write_file_atomically(file, "first"));
  CHECK(read(file) == "first");
  REQUIRE(write_file_atomically(file, "second, longer than the first"));
  CHECK(read(file) == "second, longer than the first");
  REQUIRE(write_file_atomically(file, ""));
  CHECK(read(file).empty());
  CHECK(names_in(dir.path()) == std::vector<std::string>{"data.txt"});
}

TEST_CASE("a missing directory is E_FILE_ERROR naming the path and the reason", "[core][atomic_file]") {
  TempDir dir;
  auto failed = write_file_atomically(dir.path() / "missing-dir" / "x.txt", "data");
  REQUIRE_FALSE(failed);
  CHECK(failed.error().code == ErrorCode::FileError);
  CHECK(failed.error().message.find((dir.path() / "missing-dir").string()) != std::string::npos);
  CHECK(failed.error().message.find("No such file or directory") != std::string::npos);
  CHECK(!failed.error().fix.empty());
  CHECK_FALSE(is_target_exists(failed.error()));
}

TEST_CASE("Publish::Exclusive never replaces an existing file", "[core][atomic_file]") {
  TempDir dir;
  fs::path file = dir.path() / "archive.jsonl";
  REQUIRE(write_file_atomically(file, "rows of another trail\n", Publish::Exclusive));
  CHECK(read(file) == "rows of another trail\n");

  auto refused = write_file_atomically(file, "new rows\n", Publish::Exclusive);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == ErrorCode::FileError);
  CHECK(is_target_exists(refused.error()));
  CHECK(refused.error().message.find(file.string()) != std::string::npos);
  CHECK(!refused.error().fix.empty());
  CHECK(read(file) == "rows of another trail\n");
  CHECK(names_in(dir.path()) == std::vector<std::string>{"archive.jsonl"});
}

TEST_CASE("an AtomicFile dropped before commit leaves no trace", "[core][atomic_file]") {
  TempDir dir;
  fs::path file = dir.path() / "config.json";
  {
    auto out = AtomicFile::create(file);
    REQUIRE(out);
    CHECK(fs::exists(out->temp()));
    CHECK(out->temp().parent_path() == dir.path());
    REQUIRE(out->write("half of a"));
  }
  CHECK(names_in(dir.path()).empty());

  REQUIRE(write_file_atomically(file, "old"));
  {
    auto out = AtomicFile::create(file);
    REQUIRE(out);
    REQUIRE(out->write("new"));
  }
  CHECK(read(file) == "old");
  CHECK(names_in(dir.path()) == std::vector<std::string>{"config.json"});
}

TEST_CASE("an AtomicFile streams repeated writes into one file", "[core][atomic_file]") {
  TempDir dir;
  fs::path file = dir.path() / "rows.jsonl";
  auto out = AtomicFile::create(file);
  REQUIRE(out);
  std::string expected;
  for (int batch = 0; batch < 50; ++batch) {
    std::string rows;
    for (int row = 0; row < 100; ++row) rows += "{\"batch\":" + std::to_string(batch) + ",\"row\":" + std::to_string(row) + "}\n";
    REQUIRE(out->write(rows));
    expected += rows;
  }
  CHECK_FALSE(fs::exists(file));  // nothing is visible before commit
  REQUIRE(out->commit());
  CHECK(read(file) == expected);
  CHECK(names_in(dir.path()) == std::vector<std::string>{"rows.jsonl"});

  // Published once: later use is refused, and the file stays.
  auto again = out->write("more");
  REQUIRE_FALSE(again);
  CHECK(again.error().code == ErrorCode::Internal);
  CHECK_FALSE(out->commit());
  CHECK(read(file) == expected);
}

TEST_CASE("a replaced file keeps its mode; a new one gets 0666 less the umask", "[core][atomic_file]") {
  TempDir dir;
  UmaskGuard mask(027);
  fs::path fresh = dir.path() / "fresh.md";
  REQUIRE(write_file_atomically(fresh, "new"));
  CHECK(mode_of(fresh) == 0640);

  fs::path kept = dir.path() / "private.md";
  REQUIRE(write_file_atomically(kept, "v1"));
  REQUIRE(::chmod(kept.c_str(), 0600) == 0);
  REQUIRE(write_file_atomically(kept, "v2"));
  CHECK(read(kept) == "v2");
  CHECK(mode_of(kept) == 0600);

  REQUIRE(::chmod(kept.c_str(), 0664) == 0);
  REQUIRE(write_file_atomically(kept, "v3"));
  CHECK(mode_of(kept) == 0664);
}

TEST_CASE("AtomicFiles written on several threads at once get distinct temp files", "[core][atomic_file]") {
  TempDir dir;
  fs::path file = dir.path() / "shared.md";
  constexpr int kThreads = 8;
  constexpr int kRounds = 25;
  std::mutex lock;
  std::set<std::string> temps;
  std::vector<std::string> failures;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < kRounds; ++round) {
        auto out = AtomicFile::create(file);
        if (!out) {
          std::lock_guard guard(lock);
          failures.push_back(out.error().message);
          continue;
        }
        {
          std::lock_guard guard(lock);
          temps.insert(out->temp().string());
        }
        std::string content(4096, static_cast<char>('a' + t));
        auto written = out->write(content);
        auto committed = written ? out->commit() : Result<void>(std::unexpected(written.error()));
        if (!committed) {
          std::lock_guard guard(lock);
          failures.push_back(committed.error().message);
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  CHECK(failures.empty());
  CHECK(temps.size() == static_cast<std::size_t>(kThreads * kRounds));
  // The survivor is one writer's whole content, never a mix.
  std::string last = read(file);
  REQUIRE(last.size() == 4096);
  CHECK(last == std::string(4096, last.front()));
  CHECK(names_in(dir.path()) == std::vector<std::string>{"shared.md"});
}

TEST_CASE("Links::Follow writes through a symlink, refusing a dangling link or a loop; the default replaces the link", "[core][atomic_file]") {
  TempDir dir;
  fs::path real = dir.path() / "dotfiles" / "config.json";
  fs::create_directories(real.parent_path());
  REQUIRE(write_file_atomically(real, "v1"));
  REQUIRE(::chmod(real.c_str(), 0600) == 0);
  fs::path link = dir.path() / "config.json";
  fs::create_symlink("dotfiles/config.json", link);
  fs::path chain = dir.path() / "chain.json";
  fs::create_symlink("config.json", chain);  // a link to a link
  auto through = AtomicFile::create(chain, Links::Follow);
  REQUIRE(through);
  CHECK(through->target() == dir.path() / "dotfiles" / "config.json");
  REQUIRE(through->write("v2"));
  REQUIRE(through->commit());
  CHECK(fs::is_symlink(fs::symlink_status(link)));
  CHECK(fs::is_symlink(fs::symlink_status(chain)));
  CHECK(read(real) == "v2");
  CHECK(mode_of(real) == 0600);
  auto target = write_target(chain);
  REQUIRE(target);
  CHECK(*target == dir.path() / "dotfiles" / "config.json");
  // The temp file was beside the file written, not beside the link.
  CHECK(names_in(real.parent_path()) == std::vector<std::string>{"config.json"});

  fs::path dangling = dir.path() / "dangling.json";
  fs::create_symlink("nowhere/x.json", dangling);
  auto refused = AtomicFile::create(dangling, Links::Follow);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == ErrorCode::FileError);
  CHECK(refused.error().message.find("which does not exist") != std::string::npos);
  CHECK(refused.error().details["reason"].as_string() == "link");
  CHECK(fs::is_symlink(fs::symlink_status(dangling)));
  CHECK_FALSE(fs::exists(dir.path() / "nowhere"));

  fs::path a = dir.path() / "a.json";
  fs::create_symlink("b.json", a);
  fs::create_symlink("a.json", dir.path() / "b.json");
  auto loop = AtomicFile::create(a, Links::Follow);
  REQUIRE_FALSE(loop);
  CHECK(loop.error().message.find("loop") != std::string::npos);
  CHECK(fs::is_symlink(fs::symlink_status(a)));

  // By default a link is never written through: the new file takes its place.
  REQUIRE(write_file_atomically(link, "own"));
  CHECK_FALSE(fs::is_symlink(fs::symlink_status(link)));
  CHECK(read(link) == "own");
  CHECK(read(real) == "v2");
}

TEST_CASE("a read-only target is refused and left as it was", "[core][atomic_file]") {
  TempDir dir;
  fs::path file = dir.path() / "locked.toml";
  REQUIRE(write_file_atomically(file, "mine"));
  REQUIRE(::chmod(file.c_str(), 0444) == 0);
  auto refused = write_file_atomically(file, "theirs");
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == ErrorCode::FileError);
  CHECK(refused.error().details["reason"].as_string() == "read-only");
  CHECK(refused.error().fix.plain_text().find("chmod u+w") != std::string::npos);
  CHECK_FALSE(may_replace(file));
  CHECK(may_replace(dir.path() / "absent"));
  CHECK(read(file) == "mine");
  CHECK(mode_of(file) == 0444);
  CHECK(names_in(dir.path()) == std::vector<std::string>{"locked.toml"});
}

TEST_CASE("the bytes are private until published; the published file keeps the owner and chosen attributes",
          "[core][atomic_file]") {
  TempDir dir;
  UmaskGuard mask(022);
  fs::path file = dir.path() / "secret.json";
  auto out = AtomicFile::create(file);
  REQUIRE(out);
  CHECK(mode_of(out->temp()) == 0600);  // nobody else can open the temp file while it fills
  REQUIRE(out->write("token"));
  REQUIRE(out->commit());
  CHECK(mode_of(file) == 0644);  // a new file: 0666 less the umask

  // A copy given another file's attributes (a backup of a private file).
  fs::path copy = dir.path() / "secret.json.bak";
  auto backup = AtomicFile::create(copy);
  REQUIRE(backup);
  const bool root = ::geteuid() == 0;
  backup->set_attributes({0600, root ? 4321u : ::geteuid(), root ? 4322u : ::getegid()});
  REQUIRE(backup->write("token"));
  REQUIRE(backup->commit(Publish::Exclusive));
  CHECK(mode_of(copy) == 0600);
  if (root) {
    struct stat info {};
    REQUIRE(::stat(copy.c_str(), &info) == 0);
    CHECK(info.st_uid == 4321u);
    CHECK(info.st_gid == 4322u);
    // A replaced file keeps its owner.
    REQUIRE(::chown(file.c_str(), 4321, 4322) == 0);
    REQUIRE(write_file_atomically(file, "token 2"));
    REQUIRE(::stat(file.c_str(), &info) == 0);
    CHECK(info.st_uid == 4321u);
    CHECK(info.st_gid == 4322u);
  }
}

TEST_CASE("a FolderLock is held by one holder at a time", "[core][atomic_file]") {
  TempDir dir;
  std::atomic<int> inside{0};
  std::atomic<int> most{0};
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&] {
      for (int round = 0; round < 5; ++round) {
        auto lock = FolderLock::acquire(dir.path());
        if (!lock) {
          ++failures;
          continue;
        }
        int now = ++inside;
        most = std::max(most.load(), now);
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        --inside;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  CHECK(failures == 0);
  CHECK(most == 1);
  CHECK_FALSE(FolderLock::acquire(dir.path() / "missing"));
}

}  // namespace ct
