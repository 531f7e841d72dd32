// The JSON emitter both snapshot writers stream through (the library's, snapshot_writer.cpp; the
// crash handler's, lib/triggers/crash_writer.cpp): a fixed buffer that the caller owns, flushed
// with write(2). No allocation, no lock, no stdio, no locale, so that it is safe inside a signal
// handler. Strings are escaped as JSON requires and every ill-formed UTF-8 sequence becomes U+FFFD
// (docs/snapshot-format.md, "Encoding rules").
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace vramtrace::snapshot {

class JsonEmitter {
public:
    // What a flush does when a non-blocking descriptor takes no more (EAGAIN).
    enum class WhenFull {
        wait, // poll until it does (the snapshot writer: a slow reader of a pipe)
        fail, // the write fails with EAGAIN (the crash writer: a signal handler does not poll)
    };

    // buffer: at least 64 bytes, owned by the caller for the emitter's lifetime.
    JsonEmitter(int fd, char *buffer, size_t capacity, WhenFull when_full)
        : fd_(fd), buf_(buffer), cap_(capacity), when_full_(when_full) {}

    // The first write error (errno), after which nothing more is written.
    bool failed() const { return failed_; }
    int error_number() const { return errno_; }

    void raw(std::string_view s);
    void ch(char c);
    void u64(uint64_t v);
    void i64(int64_t v);
    // "0x..." in lower case without padding, quoted (the schema's hex string).
    void hex(uint64_t v);
    void boolean(bool v) { raw(v ? "true" : "false"); }
    // A quoted, escaped string.
    void str(std::string_view s);
    // `"name": ` (a member name of snapshot_fields.h: nothing to escape).
    void key(std::string_view name);

    // Writes out what the buffer holds, resuming interrupted and short writes.
    void flush();

private:
    void fail(int err);

    int fd_;
    char *buf_;
    size_t cap_;
    WhenFull when_full_;
    size_t len_ = 0;
    bool failed_ = false;
    int errno_ = 0;
};

} // namespace vramtrace::snapshot
