// Reading a snapshot file at simdjson's speed, for merge (libsimdjson-dev). A rank's snapshot is
// mostly its event history (65,536 records of about 170 bytes: 90% of the file), which merge does
// not keep, and the streaming reader's lexer takes about 5 ns a byte.
//
// SimdSnapshotSource is the byte source of one file for the streaming reader (read_snapshot_source).
// It hands the reader the document's bytes, except the records of some top-level arrays, which it
// parses itself with simdjson's DOM parser in windows of whole lines (a raw newline is never inside
// a JSON string, so a window cut after one never splits a token), then hands the reader the array's
// closing bracket:
//   - "events": each record is checked against the schema's rules for events (snapshot_schema.h:
//     the required members type, time_ns and thread_id; the types and ranges of the others; the
//     four event types; a device in range) and the stack it names is noted, as merge's sink would
//     note it; the reader sees an empty history;
//   - "modules", "frames", "stacks", "allocations" (when asked for): each record is handed to the
//     reader as the SAX events its own parser would have made of it, where it stands in the
//     document, and the reader checks it as ever.
//
// It only ever accepts: anything it cannot vouch for (a member of an event it does not know or
// that is repeated, a record across lines so that a window does not parse, an array that does not
// close on a line of its own or, for events, at the end of the document, "-0" (a signed integer to
// the reader, 0 to simdjson), JSON simdjson refuses, a record the reader refuses) makes it
// decline, and the caller reads the file again with the reader alone, which gives its own result
// and message. So a file reads the same, and fails with the same message, either way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <streambuf>
#include <string>

#include <simdjson.h>

#include "snapshot/reader/snapshot_reader.h"

namespace vramtrace::cli {

class Progress;

// What the check found in one file's events.
struct EventCheck {
    snapshot::StackReferences stacks; // stack id (not 0) -> index of the first event that names it
    size_t count = 0;       // records checked
    bool used = false;      // the file was read with the check (a regular file)
    bool declined = false;  // the check gave up: read the file again without it
};

class SimdSnapshotSource final : public snapshot::RecordSource {
public:
    // Reads `fd` (not owned) through a window of kWindowBytes; `progress` may be null. With
    // `records`, the records of modules, frames, stacks and allocations are parsed here too and
    // handed to the reader as its SAX events.
    SimdSnapshotSource(int fd, Progress *progress, EventCheck *check, bool records);
    ~SimdSnapshotSource() override;
    SimdSnapshotSource(const SimdSnapshotSource &) = delete;
    SimdSnapshotSource &operator=(const SimdSnapshotSource &) = delete;

    void attach(snapshot::SaxEvents *reader) override { sax_ = reader; }
    bool saw_nul() const override { return saw_nul_; }
    int error_number() const { return errno_; }

    static constexpr size_t kWindowBytes = 1 << 20;
    struct Parser; // the window and the simdjson parser (simd_snapshot_source.cpp)

protected:
    int_type underflow() override;

private:
    enum class Array { None, Events, Records };
    // Reads more input after end_ (moving what is unread to the front first); false at the end of
    // the input, on a read error or when the window is full.
    bool fill();
    // Scans [from, end_) as the bytes handed to the reader, for the opening bracket of a top-level
    // array taken here; returns where the bytes handed on end (after that bracket, or end_).
    size_t scan(size_t from);
    // The records of the array just opened, up to its closing bracket (pos_ then stands on it);
    // false when the check declined.
    bool check_events();
    bool hand_records();
    // One window: the records in [begin, close) (`last`: the array closes at `close`).
    // The records between begin and close as one simdjson array (false: left to the reader).
    bool parse_window(size_t begin, size_t close, simdjson::dom::array *records);
    bool check_window(size_t begin, size_t close, bool last);
    bool records_window(size_t begin, size_t close, bool last);
    bool emit(simdjson::dom::element e);

    int fd_;
    Progress *progress_;
    EventCheck *check_;
    bool records_;
    snapshot::SaxEvents *sax_ = nullptr;
    std::unique_ptr<Parser> parser_;
    char *buf_ = nullptr;      // parser_'s window
    size_t pos_ = 1, end_ = 1; // unread bytes; buf_[0] stays free for a window's opening bracket
    bool eof_ = false, saw_nul_ = false;
    int errno_ = 0;
    std::string text_;         // a key or string handed to the reader
    size_t records_handed_ = 0;
    // The scanner's state over the bytes handed to the reader.
    enum class Expect { Nothing, Colon, Bracket } expect_ = Expect::Nothing;
    int depth_ = 0;
    bool in_string_ = false, escaped_ = false;
    char key_[16];
    size_t key_length_ = 0;    // bytes of the current depth-1 string (sizeof key_: not one taken here)
    Array next_ = Array::None; // the array the last depth-1 key opens, if it is one taken here
    Array pending_ = Array::None; // opened: taken at the next underflow
};

} // namespace vramtrace::cli
