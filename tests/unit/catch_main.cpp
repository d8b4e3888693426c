#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdlib>

int main(int argc, char** argv) {
  // The router checks every failure against the operation's declared errors (domains/router.cpp).
  setenv("CLEO_CHECK_ERRORS", "1", 1);
  return Catch::Session().run(argc, argv);
}
