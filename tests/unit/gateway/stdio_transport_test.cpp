// The stdio transport: bounded memory for oversized lines (the line is skipped to its newline and
// answered once), and a reader that goes away ends the loop cleanly (no SIGPIPE death).
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdio>
#include <functional>
#include <string>
#include <thread>

#include "core/version.h"
#include "gateway/product.h"
#include "gateway/stdio_transport.h"
#include "unit/test_support.h"

using namespace ct;
using namespace ct::mcp;

namespace {

struct Pipe {
  int read = -1;
  int write = -1;
  Pipe() {
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    read = fds[0];
    write = fds[1];
  }
  ~Pipe() {
    if (read >= 0) ::close(read);
    if (write >= 0) ::close(write);
  }
};

void write_all(int fd, const std::string& data) {
  std::size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

std::string read_all(int fd) {
  std::string out;
  char buffer[4096];
  ssize_t n;
  while ((n = ::read(fd, buffer, sizeof buffer)) > 0) out.append(buffer, static_cast<std::size_t>(n));
  return out;
}

/// Serves `project` on stdio while `feed` writes the client's side into a pipe (then closes it, as
/// a client that goes away does); returns every reply line.
std::string serve(test::Project& project, const std::function<void(int fd)>& feed) {
  Protocol protocol(registry(), ServerInfo{"cleo", std::string(product_version()), "level zero"});
  Pipe input;
  Pipe output;
  std::thread client([&] {
    feed(input.write);
    ::close(input.write);
    input.write = -1;
  });
  std::FILE* in = ::fdopen(input.read, "r");
  std::FILE* out = ::fdopen(output.write, "w");
  input.read = -1;
  output.write = -1;
  std::string replies;
  std::thread reader([&] { replies = read_all(output.read); });
  CHECK(serve_stdio(protocol, project.router(), in, out) == 0);
  std::fclose(in);
  std::fclose(out);
  client.join();
  reader.join();
  return replies;
}

}  // namespace

TEST_CASE("an oversized line is answered once and skipped to its newline", "[mcp][stdio]") {
  test::Project project;
  const std::string replies = serve(project, [](int fd) {
    std::string huge(kMaxMessageBytes + 1000, 'x');
    write_all(fd, huge);  // no newline yet: the server must not keep all of it
    write_all(fd, "tail of the same line\n");
    write_all(fd, R"({"jsonrpc":"2.0","id":2,"method":"ping"})" "\n");
    write_all(fd, R"({"jsonrpc":"2.0","id":3,"method":"ping"})");  // a last line without newline
  });
  CHECK(replies == R"({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: message larger than 16 MiB"}})" "\n"
                   R"({"jsonrpc":"2.0","id":2,"result":{}})" "\n"
                   R"({"jsonrpc":"2.0","id":3,"result":{}})" "\n");
}

TEST_CASE("a client that stops reading ends the server cleanly, not by SIGPIPE", "[mcp][stdio]") {
  test::Project project;
  Protocol protocol(registry(), ServerInfo{"cleo", std::string(product_version()), "level zero"});
  Pipe input;
  Pipe output;
  ::close(output.read);  // nobody will ever read the replies
  output.read = -1;
  write_all(input.write, R"({"jsonrpc":"2.0","id":1,"method":"ping"})" "\n");
  write_all(input.write, R"({"jsonrpc":"2.0","id":2,"method":"ping"})" "\n");
  ::close(input.write);
  input.write = -1;
  std::FILE* in = ::fdopen(input.read, "r");
  std::FILE* out = ::fdopen(output.write, "w");
  input.read = -1;
  output.write = -1;
  CHECK(serve_stdio(protocol, project.router(), in, out) == 0);  // the process is still alive to check
  std::fclose(in);
  std::fclose(out);
}

TEST_CASE("a client that closes stdin lets go of its session's claim at once", "[mcp][stdio][lease]") {
  test::Project project;
  project.add(R"({"title":"Held task"})");
  const std::string replies = serve(project, [](int fd) {
    write_all(fd,
              R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"agent-x","version":"1"}}})" "\n"
              R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"cleo_mutate","arguments":{"domain":"session","operation":"start","params":{"scope":"global","name":"held"}}}})" "\n"
              R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"cleo_mutate","arguments":{"domain":"tasks","operation":"start","params":{"id":"T001"}}}})" "\n");
  });
  CHECK(replies.find(R"("id":3,"result")") != std::string::npos);
  // The task is free and the session suspended, both on the record as the client's agent.
  Envelope task = project.query("tasks", "show", R"({"id":"T001"})");
  CHECK(task.data["status"].as_string() == "pending");
  CHECK_FALSE(task.data.contains("claim"));
  Envelope sessions = project.query("session", "list", R"({"detail":"full"})");
  REQUIRE(sessions.data.as_array().size() == 1);
  CHECK(sessions.data.as_array()[0]["status"].as_string() == "suspended");
  Envelope log = project.query("system", "log", R"({"limit":2})");
  const std::string rows = log.data.dump();
  CHECK(rows.find("session.suspend") != std::string::npos);
  CHECK(rows.find("tasks.stop") != std::string::npos);
  CHECK(rows.find("stdio closed") != std::string::npos);
}
