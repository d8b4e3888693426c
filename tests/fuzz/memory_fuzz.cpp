// memory: the Markdown memory.export writes and memory.import reads (engines/rules/memory.h).
//   - from_markdown fails only with E_VALIDATION;
//   - every id it gives is in its one spelling (M001, never M01 or M0001) and names an entry
//     the operations can reach (at most nine digits), as are supersedes and superseded-by;
//   - what to_markdown writes of the entries reads back to the same entries (in the writer's
//     order: grouped by kind, so compared as sets), and writing those again gives the same text
//     (export → import → export is stable).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "engines/rules/memory.h"
#include "fuzz_support.h"

using namespace ct;

namespace {

bool canonical(const std::string& id) {
  auto number = memory_number(id);
  return number && *number <= kMaxMemoryNumber && memory_id(*number) == id;
}

bool same(const MemoryEntry& a, const MemoryEntry& b) {
  return a.id == b.id && a.kind == b.kind && a.title == b.title && a.body == b.body && a.status == b.status &&
         a.confidence == b.confidence && a.files == b.files && a.labels == b.labels && a.tasks == b.tasks &&
         a.epic == b.epic && a.source_agent == b.source_agent && a.source_session == b.source_session &&
         a.source_task == b.source_task && a.verified_by == b.verified_by && a.verified_at == b.verified_at &&
         a.supersedes == b.supersedes && a.superseded_by == b.superseded_by && a.reason == b.reason &&
         a.created_at == b.created_at;
}

/// The entries in one order whatever order they were read in: to_markdown groups them by kind.
std::vector<MemoryEntry> in_one_order(std::vector<MemoryEntry> entries) {
  std::stable_sort(entries.begin(), entries.end(), [](const MemoryEntry& a, const MemoryEntry& b) {
    return std::tie(a.id, a.title, a.body) < std::tie(b.id, b.title, b.body);
  });
  return entries;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text = fuzz::as_text(data, size);
  auto entries = memory::from_markdown(text);
  if (!entries) {
    if (entries.error().code != ErrorCode::Validation)
      fuzz::finding("from_markdown failed with a code other than E_VALIDATION", text, entries.error().message);
    return 0;
  }
  for (const auto& entry : *entries) {
    if (!canonical(entry.id)) fuzz::finding("an entry id not in its one spelling", text, entry.id);
    if (!entry.supersedes.empty() && !canonical(entry.supersedes))
      fuzz::finding("supersedes not in its one spelling", text, entry.supersedes);
    if (!entry.superseded_by.empty() && !canonical(entry.superseded_by))
      fuzz::finding("superseded-by not in its one spelling", text, entry.superseded_by);
  }
  const std::string written = memory::to_markdown(*entries);
  auto again = memory::from_markdown(written);
  if (!again) fuzz::finding("what to_markdown wrote does not read back", text, written + "\n-> " + again.error().message);
  if (again->size() != entries->size()) fuzz::finding("to_markdown lost or added entries", text, written);
  const auto before = in_one_order(*entries), after = in_one_order(*again);
  for (std::size_t i = 0; i < before.size(); ++i)
    if (!same(before[i], after[i])) fuzz::finding("an entry read back differs from the entry written", text, written);
  if (memory::to_markdown(*again) != written) fuzz::finding("export → import → export is not stable", text, written);
  return 0;
}
