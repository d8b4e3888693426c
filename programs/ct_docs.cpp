// ct-docs: docs/operations.md from the registry. `ct-docs` prints it, `--write FILE` rewrites
// FILE when it differs, `--check FILE` exits 1 when FILE is stale (the ctest docs/operations).
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#include "disclosure/help_levels.h"
#include "disclosure/product.h"

int main(int argc, char** argv) {
  auto reference = ct::disclosure::operations_reference(ct::registry());
  if (!reference) {
    std::fprintf(stderr, "ct-docs: %s\n", reference.error().message.c_str());
    return 1;
  }
  if (argc == 1) {
    std::fwrite(reference->data(), 1, reference->size(), stdout);
    return 0;
  }
  std::string_view mode = argv[1];
  if (argc != 3 || (mode != "--write" && mode != "--check")) {
    std::fprintf(stderr, "usage: ct-docs [--write FILE | --check FILE]\n");
    return 2;
  }
  std::string current;
  if (std::ifstream in{argv[2], std::ios::binary}) {
    std::ostringstream text;
    text << in.rdbuf();
    current = text.str();
  }
  if (current == *reference) return 0;
  if (mode == "--check") {
    std::fprintf(stderr,
                 "%s is stale: it no longer matches the operation registry.\n"
                 "Regenerate it with: cmake --build <build dir> --target docs\n",
                 argv[2]);
    return 1;
  }
  std::ofstream out{argv[2], std::ios::binary | std::ios::trunc};
  out << *reference;
  if (!out) {
    std::fprintf(stderr, "ct-docs: cannot write %s\n", argv[2]);
    return 1;
  }
  std::printf("wrote %s\n", argv[2]);
  return 0;
}
