// ct-docs: the documents generated from the registry. docs/operations.md: `ct-docs` prints it,
// `--write FILE` rewrites FILE when it differs, `--check FILE` exits 1 when FILE is stale (the
// ctest docs/operations). The manual pages (ct.1 and ct-<domain>.1, cli/man.h): `--write-man DIR`
// writes those that differ and removes pages of domains that are gone, `--check-man DIR` exits 1
// when one differs, is missing or is left over (the ctest docs/man).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "cli/man.h"
#include "disclosure/help_levels.h"
#include "gateway/product.h"

namespace {

namespace fs = std::filesystem;

struct Document {
  fs::path file;
  std::string text;
};

std::string read_text(const fs::path& file) {
  std::ifstream in{file, std::ios::binary};
  if (!in) return {};
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// The generated pages' own files in `dir`: ct.1 and ct-*.1 (other files are not ours).
std::vector<fs::path> existing_pages(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name == "ct.1" || (name.starts_with("ct-") && name.ends_with(".1"))) out.push_back(entry.path());
  }
  return out;
}

/// Writes (--write) or checks (--check) `documents`; `stale_pages` are files to remove (or report).
int sync(const std::vector<Document>& documents, const std::vector<fs::path>& stale_pages, bool write) {
  int stale = 0;
  for (const auto& document : documents) {
    if (read_text(document.file) == document.text) continue;
    if (!write) {
      std::fprintf(stderr, "%s is stale: it no longer matches the operation registry.\n", document.file.c_str());
      ++stale;
      continue;
    }
    std::ofstream out{document.file, std::ios::binary | std::ios::trunc};
    out << document.text;
    if (!out) {
      std::fprintf(stderr, "ct-docs: cannot write %s\n", document.file.c_str());
      return 1;
    }
    std::printf("wrote %s\n", document.file.c_str());
  }
  for (const auto& page : stale_pages) {
    if (!write) {
      std::fprintf(stderr, "%s is left over: no domain of the registry has this page.\n", page.c_str());
      ++stale;
      continue;
    }
    std::error_code ec;
    fs::remove(page, ec);
    if (ec) {
      std::fprintf(stderr, "ct-docs: cannot remove %s: %s\n", page.c_str(), ec.message().c_str());
      return 1;
    }
    std::printf("removed %s\n", page.c_str());
  }
  if (stale > 0) {
    std::fprintf(stderr, "Regenerate with: cmake --build <build dir> --target docs\n");
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string_view mode = argc > 1 ? argv[1] : "";
  if (argc == 3 && (mode == "--write-man" || mode == "--check-man")) {
    const fs::path dir = argv[2];
    std::error_code ec;
    if (mode == "--write-man") fs::create_directories(dir, ec);
    std::vector<Document> documents;
    std::set<fs::path> generated;
    for (auto& page : ct::cli::man_pages(ct::registry())) {
      generated.insert(dir / page.file);
      documents.push_back({dir / page.file, std::move(page.text)});
    }
    std::vector<fs::path> stale_pages;
    for (const auto& page : existing_pages(dir))
      if (!generated.contains(page)) stale_pages.push_back(page);
    return sync(documents, stale_pages, mode == "--write-man");
  }

  auto reference = ct::disclosure::operations_reference(ct::registry());
  if (!reference) {
    std::fprintf(stderr, "ct-docs: %s\n", reference.error().message.c_str());
    return 1;
  }
  if (argc == 1) {
    std::fwrite(reference->data(), 1, reference->size(), stdout);
    return 0;
  }
  if (argc != 3 || (mode != "--write" && mode != "--check")) {
    std::fprintf(stderr, "usage: ct-docs [--write FILE | --check FILE | --write-man DIR | --check-man DIR]\n");
    return 2;
  }
  return sync({{argv[2], std::move(*reference)}}, {}, mode == "--write");
}
