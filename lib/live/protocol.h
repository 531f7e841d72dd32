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

// What a reading can hold, by construction of the server (lib/serve/live_reading.cpp checks each
// against its source): the viewer refuses a reading past any of them, so that what it parses,
// names and groups stays bounded whoever answers on the socket.
// The out-of-memory failures listed (dump/oom_log.h, kOomsKept), each with its stack.
inline constexpr size_t kReadingOoms = 16;
// Stacks: those of the sites and of the failures.
inline constexpr size_t kReadingStacks = kReadingSites + kReadingOoms;
// Frames per stack (StackDepot::kMaxDepth), and unique frames in all.
inline constexpr size_t kReadingStackFrames = 256;
inline constexpr size_t kReadingFrames = kReadingStacks * kReadingStackFrames;
// Bytes of a Python frame's function or file name (python::kMaxNameBytes).
inline constexpr size_t kReadingNameBytes = 1016;
// JSON values (each number, string, object and array) in a reading: at the bounds above, every
// frame a distinct Python frame (6 values each) and every stack full, about 490,000 plus the
// command line's arguments and the modules. The viewer counts them before it builds the document,
// whose size is what they cost (tens of bytes each), not the answer's bytes.
inline constexpr size_t kReadingValues = 1000000;
// Bytes of a whole answer: the viewer stops reading past this and refuses it. A real reading is
// tens of KiB; at the bounds above, every frame native and distinct, frames and stacks take about
// 5 MiB, which leaves room for long Python names and command lines.
inline constexpr size_t kMaxAnswerBytes = 32u << 20;

} // namespace vramtrace::live
