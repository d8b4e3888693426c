// The research engine: the rules of a research manifest entry (docs/architecture.md §5, issue 11) and the
// reading of MANIFEST.jsonl, the file subagents append their outputs to. Nothing here touches the
// store; the research domain reads and writes it around these calls.
//
// Appending to the manifest: one entry is one line of compact JSON ending in "\n", written with a
// single write() on a file opened with O_APPEND, so that concurrent writers never interleave and a
// reader sees a line either whole or not yet ended. research.sync reads complete lines only; a last
// line without its "\n" (still being written) is left for the next sync.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/json.h"
#include "engines/rules/file_hashes.h"
#include "engines/store/research_store.h"

namespace ct {

/// ECMAScript pattern of an entry id: the task it started from, a dash and a lowercase slug.
inline constexpr std::string_view kResearchIdPattern = "^T[0-9]{3,}-[a-z0-9-]+$";
/// How many key findings an entry of agentType "research" must have (other types: a warning).
inline constexpr std::size_t kMinFindings = 3;
inline constexpr std::size_t kMaxFindings = 7;
/// Longest manifest line read; a longer complete line is reported as invalid.
inline constexpr std::size_t kMaxManifestLine = 64 * 1024;

/// The fields of an entry as they are written in the manifest and in research.add (camelCase;
/// the original CLEO's snake_case names are accepted in manifest lines too).
std::vector<std::string_view> research_field_names();

/// Builds and checks an entry from its JSON object (a manifest line or research.add's params):
/// required id, file, title, status; the id pattern; status complete|partial|blocked; confidence
/// 0..1; the date YYYY-MM-DD (default `today`); the file relative and inside `root`; 3–7 key
/// findings for agentType research (default), else outside that range a warning; unknown fields
/// refused. Fills file_checksum with the SHA-256 of the file (from `hashes`) when it exists (a different
/// checksum given by the writer is a warning). Errors are E_VALIDATION naming the field
/// (details.field) with a fix. Links are taken as given: the caller checks the tasks exist.
Result<ResearchEntry> parse_research_entry(const json::Value& object, const std::filesystem::path& root,
                                           std::string_view today, std::vector<std::string>& warnings,
                                           FileHashes& hashes);

/// The same rules without reading the file: fileChecksum is taken as written (validate.manifest
/// checks stored entries this way and compares the file's checksum itself).
Result<ResearchEntry> parse_research_fields(const json::Value& object, const std::filesystem::path& root,
                                            std::string_view today, std::vector<std::string>& warnings);

/// The entry as the manifest writes it (the fields of research_field_names(), empty ones left
/// out): research.show's reply without the store's own fields.
json::Value research_manifest_json(const ResearchEntry& entry);

/// Whether two entries say the same thing: every field an agent writes except linkedTasks (links
/// grow later through research.link) and fileChecksum (the file may be edited afterwards).
bool same_research_content(const ResearchEntry& a, const ResearchEntry& b);

/// A path inside the project, relative to it ("docs/x.md"); E_VALIDATION (details.field = `field`)
/// for an empty path, one that leaves the project ("../x", "/etc/x" outside it) or a NUL byte.
Result<std::string> project_relative_path(std::string_view path, const std::filesystem::path& root,
                                          std::string_view field);

/// One complete line of the manifest.
struct ManifestLine {
  std::int64_t number = 0;               // 1-based line number in the file
  std::string_view text;                 // without the "\n" (and a "\r" before it)
};

/// The complete lines of `bytes` (which starts at line `first_line`): every line that ends in
/// "\n"; a last line without one is not included. `consumed` is the byte count up to and
/// including the last "\n".
struct ManifestChunk {
  std::vector<ManifestLine> lines;
  std::int64_t consumed = 0;
};
ManifestChunk split_manifest_lines(std::string_view bytes, std::int64_t first_line);

/// A manifest line parsed into an entry: blank lines are skipped by the caller; text that is not
/// a JSON object, or an entry that breaks a rule, is an error whose message says why.
Result<ResearchEntry> parse_manifest_line(std::string_view line, const std::filesystem::path& root,
                                          std::string_view today, std::vector<std::string>& warnings,
                                          FileHashes& hashes);
/// The entry a manifest line (or research.add's params) describes, read without its file: what
/// a mutation's external step needs to know which file to hash (FileHashes); nullopt when the
/// line is no entry.
std::optional<ResearchEntry> manifest_line_fields(std::string_view line, const std::filesystem::path& root,
                                                  std::string_view today);

/// The text of the head hash a ManifestCursor keeps: SHA-256 of the first min(size, 4096) bytes.
std::string manifest_head_hash(std::string_view head);
inline constexpr std::size_t kManifestHeadBytes = 4096;

}  // namespace ct
