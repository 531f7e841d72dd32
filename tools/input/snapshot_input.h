// Reading snapshot files from disk for the streaming commands (diff, merge): a file is fed to the
// SAX reader (snapshot_reader.h) through a fixed read buffer, with a progress line on stderr when
// stderr is a terminal. Memory used here: one buffer of kInputBufferBytes, whatever the file size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "snapshot/reader/snapshot_reader.h"

namespace vramtrace::cli {

inline constexpr size_t kInputBufferBytes = 256 * 1024;
inline constexpr uint64_t kProgressIntervalNs = 500000000; // 0.5 s

// A progress line ("vramtrace: reading FILE: 42% of 1.00 GiB", with "[i/n]" when several files are
// read), first drawn after kProgressIntervalNs of reading, then redrawn in place at most every
// kProgressIntervalNs, and erased by done(). Does nothing unless enabled; enabled_for_stderr() says
// whether stderr is a terminal (never in the tests, whose stderr is a file).
class Progress {
public:
    explicit Progress(bool enabled) : enabled_(enabled) {}
    ~Progress() { done(); }
    Progress(const Progress &) = delete;
    Progress &operator=(const Progress &) = delete;

    static bool enabled_for_stderr();
    bool enabled() const { return enabled_; }

    // The next files read are file `index` (from 1) of `count` (shown when count > 1).
    void set_file_number(size_t index, size_t count) { index_ = index, count_ = count; }
    // A new file of `size` bytes (0: unknown) is being read.
    void start_file(const std::string &name, uint64_t size);
    // `bytes` more bytes of it were read.
    void advance(uint64_t bytes);
    // Erases the line (if one was drawn).
    void done();

private:
    void draw();

    bool enabled_ = false;
    bool drawn_ = false;
    std::string name_;
    uint64_t size_ = 0, read_ = 0;
    size_t index_ = 0, count_ = 0;
    uint64_t last_draw_ns_ = 0;
};

// Streams the snapshot file at `path` through `sink` (read_snapshot_stream), reporting progress
// to `progress` (may be null). With `name_frames`, the frames of a crash snapshot are named on the
// way (SymbolizingSink); a caller that keeps every frame can instead call symbolize_offline itself.
// Refuses a directory and a file that cannot be opened or read. On failure returns false with
// *error = "PATH: what is wrong" (one line).
//
// With `events`, a regular file is read through SimdSnapshotSource (simd_snapshot_source.h): its
// event history is checked at parse speed instead of reaching the sink (the sink gets no on_event,
// and *events holds the stacks the events name), and its modules, frames, stacks and allocations
// are parsed by simdjson. When it declines, the read fails with events->declined set: read the
// file again without `events` for the reader's own result. A FIFO, read once, always reaches the
// sink whole (events->used stays false).
struct EventCheck;
bool stream_snapshot_file(const std::string &path, snapshot::SnapshotSink &sink, Progress *progress, std::string *error,
                          bool name_frames = true, EventCheck *events = nullptr);

} // namespace vramtrace::cli
