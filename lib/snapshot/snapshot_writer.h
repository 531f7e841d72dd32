// The JSON snapshot writer (schema: docs/snapshot-format.md). Linked into the preload library: no
// third-party dependencies, and nothing is thrown out of it.
#pragma once

#include <string>

#include "snapshot/snapshot_model.h"

namespace vramtrace::snapshot {

// Writes `snapshot` as one JSON document to `fd`, in the layout of docs/snapshot-format.md, through
// a fixed buffer of kSnapshotWriteBuffer bytes: the output is never assembled in memory, whatever
// the number of allocations. Strings are escaped as JSON requires; bytes that are not valid UTF-8
// are replaced by U+FFFD. Interrupted (EINTR) and short writes are resumed, and a non-blocking fd is
// waited on. The fd is neither synced nor closed: the caller owns it (and the temp-file + rename).
//
// Returns true when every byte was written. Returns false on the first failing write (ENOSPC, EIO,
// EPIPE, ...), on an invalid fd, or when memory ran out; then *error (when not null) says why, e.g.
// "write failed: No space left on device", and the fd holds a prefix of the document.
bool write_snapshot_json(const Snapshot &snapshot, int fd, std::string *error);

inline constexpr size_t kSnapshotWriteBuffer = 64 * 1024;

} // namespace vramtrace::snapshot
