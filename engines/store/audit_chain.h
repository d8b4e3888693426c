// The audit trail's hash chain: each row's hash covers its content and the previous row's hash,
// so an edited, inserted or deleted row breaks the chain from that point on (validate.audit).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.h"
#include "engines/store/audit_log.h"

namespace ct {

/// A row's JSON values as the store keeps them: each one's text, written once for both the hash
/// and the row (params an object, never null; null before/after values absent).
struct AuditText {
  std::string params;
  std::optional<std::string> intent;
  std::vector<std::pair<std::optional<std::string>, std::optional<std::string>>> changes;  // before, after
};
AuditText audit_text(const AuditEntry& entry);

/// SHA-256 (hex) of `previous_hash` followed by the row's canonical content (seq included).
std::string audit_hash(std::string_view previous_hash, const AuditEntry& entry);
/// The same, with the row's values already written (`text`) and its seq given.
std::string audit_hash(std::string_view previous_hash, std::int64_t seq, const AuditEntry& entry, const AuditText& text);

/// Where `entry` goes in the trail when it follows the last row `last_seq` with `last_hash` (0
/// and "" when the trail holds no row: then it follows the compaction anchor, if any): its seq,
/// its values' text and its chained hash. Every backend appends through this, inside its write
/// transaction, storing `text` as it was hashed.
struct AuditLink {
  std::int64_t seq = 0;
  std::string hash;
  AuditText text;
};
Result<AuditLink> next_link(AuditLog& store, const AuditEntry& entry, std::int64_t last_seq, std::string last_hash);

struct ChainReport {
  std::int64_t rows = 0;
  std::optional<std::int64_t> anchor;        // the trail was compacted up to this seq (system.gc)
  std::optional<std::int64_t> first_broken;  // seq of the first row whose hash does not verify
  std::string expected;                      // the hash the chain implies for that row
  std::string actual;                        // the hash stored
};

/// Reads the whole trail oldest first (in batches) and recomputes every hash. A compacted trail
/// starts from its anchor: the first row must follow the anchor's seq and chain to its hash. With
/// `from` (a row known good: a sealed epoch's), only the rows after it, chained to its hash.
/// `each`, when given, sees every row read (validate.audit reads the trail's state on the way).
Result<ChainReport> verify_audit_chain(AuditLog& store, const std::optional<AuditAnchor>& from = std::nullopt,
                                       const std::function<void(const AuditEntry&)>& each = nullptr);

// Audit archives: system.gc writes the rows it compacts to a JSON-lines file before deleting
// them. Line 1 is a header {"cleoAuditArchive":1,"from","to","previous"} (previous: the hash the
// first row chains to, "" at the start of the trail); then one row per line, oldest first, with
// every field the hash covers and the hash itself. Its last hash is the anchor's.

struct ArchiveReport {
  std::int64_t rows = 0;
  std::int64_t from = 0;                     // first and last seq in the file
  std::int64_t to = 0;
  std::string previous;                      // the hash the file's first row chains to
  std::string last_hash;                     // the hash of its last row
  std::optional<std::int64_t> first_broken;  // seq of the first row whose hash does not verify
};

/// Writes the rows after `previous` (nullopt: from the start of the trail) up to seq `to` to
/// `file`: through a temp file that is fsynced and renamed into place, so the archive is
/// complete on disk before the caller deletes anything. Reads the store in batches.
Result<ArchiveReport> write_audit_archive(AuditLog& store, const std::filesystem::path& file,
                                          const std::optional<AuditAnchor>& previous, std::int64_t to);

/// Re-reads an archive and recomputes its chain. E_FILE_ERROR when it cannot be read or parsed.
Result<ArchiveReport> verify_audit_archive(const std::filesystem::path& file);

}  // namespace ct
