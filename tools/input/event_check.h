// The event history of a snapshot checked at parse speed, for a command that does not keep the
// events (merge): most of a rank's snapshot is its event history (65,536 records of about 170
// bytes: 90% of the file), and the streaming reader's lexer takes about 5 ns a byte.
//
// EventCheckingBuf is the byte source of one file for the streaming reader. It hands every byte to
// the reader unchanged, except the records of the top-level "events" array: those it parses itself
// with simdjson (On-Demand, libsimdjson-dev), in windows of whole lines (a raw newline is never
// inside a JSON string, so a window cut after one never splits a token), and then hands the reader
// the array's closing bracket: the reader sees an empty history. Each record is checked against
// the schema's rules for events (snapshot_schema.h: the required members type, time_ns and
// thread_id; the types and ranges of the others; the four event types; a device in range), and the
// stack each names is noted, as the reader's sink would note it.
//
// The check only ever accepts: anything it cannot vouch for (a member it does not know, a
// duplicate member, an escape in a string it compares, a control byte other than a newline, a
// record across windows that do not end in one, a history that is not the last member, JSON that
// does not parse) makes it decline, and the file is then read again without it, by the reader
// alone, which gives its own result and message. So a file reads the same, and fails with the
// same message, with and without the check.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <streambuf>

#include "snapshot/reader/snapshot_reader.h"

namespace vramtrace::cli {

class Progress;

// What the check found in one file's events.
struct EventCheck {
    StackReferences stacks; // stack id (not 0) -> index of the first event that names it
    size_t count = 0;       // records checked
    bool used = false;      // the file was read with the check (a regular file)
    bool declined = false;  // the check gave up: read the file again without it
};

class EventCheckingBuf final : public std::streambuf {
public:
    // Reads `fd` (not owned) through a buffer of kWindowBytes; `progress` may be null.
    EventCheckingBuf(int fd, Progress *progress, EventCheck *check);
    ~EventCheckingBuf() override;
    EventCheckingBuf(const EventCheckingBuf &) = delete;
    EventCheckingBuf &operator=(const EventCheckingBuf &) = delete;

    int error_number() const { return errno_; }

    static constexpr size_t kWindowBytes = 1 << 20;
    struct Parser; // the window and the simdjson parser (event_check.cpp)

protected:
    int_type underflow() override;

private:
    // Reads more input after end_ (moving what is unread to the front first); false at the end of
    // the input or on a read error.
    bool fill();
    // Scans [pos_, end_) for the opening bracket of the top-level "events" array, as the reader's
    // bytes; returns where the bytes handed to the reader end (after that bracket, or end_).
    size_t scan(size_t from);
    // Checks the records of the events array; true when they were all accepted and pos_ is at the
    // array's closing bracket, false when the check declined.
    bool check_events();
    // Checks the records in [begin, close) (`last`: the array closes at `close`).
    bool check_window(size_t begin, size_t close, bool last);

    int fd_;
    Progress *progress_;
    EventCheck *check_;
    std::unique_ptr<Parser> parser_;
    char *buf_ = nullptr; // parser_'s window
    size_t pos_ = 1, end_ = 1; // unread bytes; buf_[0] stays free for a window's opening bracket
    bool eof_ = false;
    int errno_ = 0;
    // The scanner's state over the bytes handed to the reader.
    enum class Expect { Nothing, Colon, Bracket } expect_ = Expect::Nothing;
    int depth_ = 0;
    bool in_string_ = false, escaped_ = false, key_is_events_ = false;
    size_t key_length_ = 0;    // bytes of the current depth-1 string so far
    bool key_matches_ = false; // ... and they are a prefix of "events"
    bool found_ = false;       // the events array was opened: check it next
    bool done_ = false;        // the events were checked (or declined): pass the rest through
};

} // namespace vramtrace::cli
