#include "engines/store/sqlite/write_turns.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <string>

namespace ct::sqlite {

namespace {

/// The file's one page, mapped whole (allocated on disk first, so that no write to it can fault).
constexpr std::size_t kTurnFileSize = 4096;

/// "ct-turn1" and the layout's size: a file made by another layout is made afresh.
std::uint64_t turn_magic(std::size_t layout) { return 0x6374'2d74'7572'6e31ULL ^ (std::uint64_t{layout} << 48); }

/// This boot's id; empty where the kernel does not say.
std::string boot_id() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(in, id);
  return id;
}

timespec deadline_after(std::chrono::milliseconds wait) {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  const auto ms = std::max<std::int64_t>(0, wait.count());
  now.tv_sec += static_cast<time_t>(ms / 1000);
  now.tv_nsec += static_cast<long>((ms % 1000) * 1'000'000);
  if (now.tv_nsec >= 1'000'000'000) {
    now.tv_sec += 1;
    now.tv_nsec -= 1'000'000'000;
  }
  return now;
}

}  // namespace

struct SharedTurn::Shared {
  std::uint64_t magic;  // written last, once the rest is made
  char boot[48];
  pthread_mutex_t mutex;
};

std::unique_ptr<SharedTurn> SharedTurn::open(const std::filesystem::path& database) {
  static_assert(sizeof(Shared) <= kTurnFileSize);
  const std::string path = database.string() + "-turn";
  struct stat store{};
  const mode_t mode = ::stat(database.c_str(), &store) == 0 ? (store.st_mode & 0666) : 0644;
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, mode);
  if (fd < 0) return nullptr;
  auto give_up = [fd] {
    ::close(fd);  // also lets go of the flock
    return nullptr;
  };
  // Making the turn is done by one process at a time; everyone after finds it made.
  while (::flock(fd, LOCK_EX) != 0)
    if (errno != EINTR) return give_up();
  struct stat st{};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return give_up();
  if (st.st_size < static_cast<off_t>(kTurnFileSize) && ::posix_fallocate(fd, 0, kTurnFileSize) != 0) return give_up();
  void* map = ::mmap(nullptr, kTurnFileSize, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) return give_up();
  auto* shared = static_cast<Shared*>(map);
  std::string boot = boot_id().substr(0, sizeof(shared->boot) - 1);
  const std::uint64_t magic = turn_magic(sizeof(Shared));
  const bool made = __atomic_load_n(&shared->magic, __ATOMIC_ACQUIRE) == magic &&
                    std::strncmp(shared->boot, boot.c_str(), sizeof(shared->boot)) == 0;
  if (!made) {
    // A new file, another layout's, or one from before this boot (its holders are all gone).
    std::memset(map, 0, kTurnFileSize);
    pthread_mutexattr_t attributes;
    pthread_mutexattr_init(&attributes);
    pthread_mutexattr_setpshared(&attributes, PTHREAD_PROCESS_SHARED);
    pthread_mutexattr_setrobust(&attributes, PTHREAD_MUTEX_ROBUST);
    pthread_mutexattr_settype(&attributes, PTHREAD_MUTEX_ERRORCHECK);
    const int rc = pthread_mutex_init(&shared->mutex, &attributes);
    pthread_mutexattr_destroy(&attributes);
    if (rc != 0) {
      ::munmap(map, kTurnFileSize);
      return give_up();
    }
    std::memcpy(shared->boot, boot.c_str(), boot.size() + 1);
    __atomic_store_n(&shared->magic, magic, __ATOMIC_RELEASE);
  }
  ::flock(fd, LOCK_UN);
  return std::unique_ptr<SharedTurn>(new SharedTurn(fd, shared));
}

SharedTurn::~SharedTurn() {
  ::munmap(shared_, kTurnFileSize);
  ::close(fd_);
}

SharedTurn::Taken SharedTurn::take(std::chrono::milliseconds wait) {
  const timespec deadline = deadline_after(wait);
  const int rc = pthread_mutex_clocklock(&shared_->mutex, CLOCK_MONOTONIC, &deadline);
  if (rc == 0) return Taken::yes;
  // Its holder died holding it (a killed agent): SQLite's own lock went with the process, and
  // the turn is only an order, so it is whole again.
  if (rc == EOWNERDEAD) {
    pthread_mutex_consistent(&shared_->mutex);
    return Taken::yes;
  }
  if (rc == ETIMEDOUT) return Taken::busy;
  return Taken::unavailable;
}

void SharedTurn::give_back() { pthread_mutex_unlock(&shared_->mutex); }

std::shared_ptr<WriteTurns> WriteTurns::of(dev_t device, ino_t inode) {
  static std::mutex mutex;
  static std::map<std::pair<dev_t, ino_t>, std::weak_ptr<WriteTurns>> turns;
  std::lock_guard lock(mutex);
  std::weak_ptr<WriteTurns>& slot = turns[{device, inode}];
  std::shared_ptr<WriteTurns> turn = slot.lock();
  if (!turn) {
    std::erase_if(turns, [](const auto& entry) { return entry.second.expired(); });
    turn = std::make_shared<WriteTurns>();
    turns[{device, inode}] = turn;
  }
  return turn;
}

SharedTurn* WriteTurns::shared_for(const std::filesystem::path& database) {
  std::call_once(opened_, [&] { shared_ = SharedTurn::open(database); });
  return shared_.get();
}

}  // namespace ct::sqlite
