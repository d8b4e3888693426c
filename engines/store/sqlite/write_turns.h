// The turn of a store's writers: who goes next to SQLite's write lock. SQLite's own lock is what
// keeps a store whole; a writer that meets it held sleeps in SQLite's busy handler (1, 2, 5, 10 …
// 100 ms steps) and is not woken when it frees, so writers of many processes queue by sleeping:
// with 32 agents a write's p99 was SQLite's 100 ms steps added up (issue 56). Here writers queue
// on a lock that wakes the next one the moment the write before ends: first among the threads of
// one process (a mutex), then among processes (a robust process-shared mutex in `<store>-turn`,
// mapped by every writer). A turn is an order, never a guarantee: whoever cannot take part (no
// such file can be made, another program writes the store) still meets SQLite's lock as before.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <mutex>

namespace ct::sqlite {

/// The turn among processes: a robust, process-shared mutex in a small file beside the store.
/// A process that dies holding it hands it on (the next one is told, and goes on); the file
/// records the boot it was made in, and a turn left locked by a machine that went down is made
/// afresh by the first writer after the boot.
class SharedTurn {
 public:
  /// The turn of the store `database` (its file `<database>-turn`, made with the store's mode),
  /// or null when it cannot be had (a read-only directory, no space, no such support).
  static std::unique_ptr<SharedTurn> open(const std::filesystem::path& database);
  ~SharedTurn();
  SharedTurn(const SharedTurn&) = delete;
  SharedTurn& operator=(const SharedTurn&) = delete;

  /// Waits at most `wait` for the turn: `busy` when another writer kept it that long,
  /// `unavailable` when the turn is broken (the writer goes to SQLite's lock without it). The
  /// thread that takes it gives it back.
  enum class Taken { yes, busy, unavailable };
  Taken take(std::chrono::milliseconds wait);
  void give_back();

 private:
  struct Shared;
  SharedTurn(int fd, Shared* shared) : fd_(fd), shared_(shared) {}
  int fd_;
  Shared* shared_;
};

/// The turns of one database file (by device and inode), shared by this process's connections
/// to it: the threads' mutex, and the processes' turn once a writer has opened it.
class WriteTurns {
 public:
  static std::shared_ptr<WriteTurns> of(dev_t device, ino_t inode);

  std::timed_mutex threads;
  /// Opened by the first writer of this process (`shared_for`), null if it could not be.
  SharedTurn* shared_for(const std::filesystem::path& database);

 private:
  std::once_flag opened_;
  std::unique_ptr<SharedTurn> shared_;
};

}  // namespace ct::sqlite
