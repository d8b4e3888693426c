// Reading a file on a caller's behalf (core/file_read.h, issue 50 item 1): regular files only,
// bounded in bytes and time, never under a store's write lock — a file that never ends (a FIFO,
// /proc/self/pagemap) or a huge sparse one answers at once instead of hanging the call.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>

#include "core/file_read.h"
#include "unit/temp_dir.h"

using namespace ct;

namespace {

std::string reason_of(const Error& error) {
  return error.details["reason"].is_string() ? error.details["reason"].as_string() : std::string();
}

}  // namespace

TEST_CASE("a caller's file is read whole when it is a regular file within the limit", "[file_read]") {
  test::TempDir dir;
  const auto file = dir.path() / "a.txt";
  std::ofstream(file) << "hello\n";
  FileStamp stamp;
  auto text = read_regular_file(file, {1024, std::chrono::milliseconds(1000)}, &stamp);
  REQUIRE(text);
  CHECK(*text == "hello\n");
  CHECK(stamp.size == 6);
  auto hashed = hash_regular_file(file, kHashLimit);
  REQUIRE(hashed);
  CHECK(*hashed == "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03");
  auto part = read_regular_file_part(file, 2, {2, std::chrono::milliseconds(1000)});
  REQUIRE(part);
  CHECK(*part == "ll");
  auto missing = read_regular_file(dir.path() / "none", {1024});
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code == ErrorCode::NotFound);
}

TEST_CASE("a file that never ends, or is too large, is refused at once, never read to its end", "[file_read]") {
  test::TempDir dir;
  // A FIFO nobody writes to: opening it for reading would block forever.
  const auto fifo = dir.path() / "fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  auto from_fifo = read_regular_file(fifo, {1024});
  REQUIRE_FALSE(from_fifo);
  CHECK(reason_of(from_fifo.error()) == "notRegular");
  // A folder, a device.
  CHECK(reason_of(read_regular_file(dir.path(), {1024}).error()) == "notRegular");
  CHECK(reason_of(read_regular_file("/dev/zero", {1024}).error()) == "notRegular");
  // /proc's files say they are empty and read on (pagemap: 8 bytes per page of the address space).
  const auto started = std::chrono::steady_clock::now();
  auto pagemap = hash_regular_file("/proc/self/pagemap", {1 << 20, std::chrono::milliseconds(10000)});
  REQUIRE_FALSE(pagemap);
  CHECK(reason_of(pagemap.error()) == "tooLarge");
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(10));
  // A 3 GiB sparse file: refused by its size before a byte is read.
  const auto sparse = dir.path() / "sparse.bin";
  { std::ofstream(sparse) << ""; }
  REQUIRE(::truncate(sparse.c_str(), 3LL << 30) == 0);
  auto big = hash_regular_file(sparse, kHashLimit);
  REQUIRE_FALSE(big);
  CHECK(big.error().code == ErrorCode::Validation);
  CHECK(reason_of(big.error()) == "tooLarge");
  CHECK(big.error().details["size"] == json::Value(static_cast<std::int64_t>(3LL << 30)));
  // A part of a long file is what it asks for, not an error.
  auto head = read_regular_file_part(sparse, 0, {16, std::chrono::milliseconds(1000)});
  REQUIRE(head);
  CHECK(head->size() == 16);
}

TEST_CASE("no file is read for a caller while this thread holds a store's write lock", "[file_read]") {
  test::TempDir dir;
  const auto file = dir.path() / "a.txt";
  std::ofstream(file) << "x";
  CHECK_FALSE(write_lock_held());
  {
    WriteLockMark lock;
    CHECK(write_lock_held());
    auto refused = read_regular_file(file, {1024});
    REQUIRE_FALSE(refused);
    CHECK(refused.error().code == ErrorCode::Internal);
    CHECK_FALSE(hash_regular_file(file, kHashLimit));
  }
  CHECK_FALSE(write_lock_held());
  CHECK(read_regular_file(file, {1024}));
}
