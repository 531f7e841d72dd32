// The live protocol (docs/live.md): a viewer connects to a process's socket, writes one request
// line and reads one JSON document until the process closes the connection. Read-only: the one
// request that does something asks for a snapshot file, which the process writes as it writes any
// other trigger snapshot.
#pragma once

#include <cstddef>

namespace vramtrace::live {

inline constexpr const char *kFormatName = "vramtrace-live";
inline constexpr int kProtocolVersion = 1;

// Requests (one line each, '\n' included).
inline constexpr const char *kRequestReading = "reading\n";           // the current state
inline constexpr const char *kRequestReadingHistory = "reading history\n"; // ... plus the recent past
inline constexpr const char *kRequestSnapshot = "snapshot\n";         // write X.live-N.json now
inline constexpr size_t kMaxRequestBytes = 64;

// At most this many call sites (stack and device) are listed in a reading, the heaviest first;
// the rest are summed in "sites_left_out".
inline constexpr size_t kReadingSites = 256;
// The recent past of a reading with history: one figure per second over this many seconds.
inline constexpr unsigned kHistorySeconds = 120;
// ... and at most this many marks, the newest.
inline constexpr size_t kHistoryMarks = 32;

} // namespace vramtrace::live
