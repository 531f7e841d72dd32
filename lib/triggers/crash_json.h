// A JSON emitter that is safe inside a signal handler: a fixed buffer it does not own, flushed with
// write(2); no malloc, no lock, no stdio, no locale. Used by the crash snapshot writer only (the
// ordinary writer, lib/snapshot/snapshot_writer.cpp, allocates its buffer and is not safe there).
// Strings are escaped as JSON requires and every ill-formed UTF-8 sequence becomes U+FFFD, as the
// ordinary writer does (docs/snapshot-format.md, "Encoding rules").
#pragma once

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <unistd.h>

namespace vramtrace::crash {

class SignalSafeJson {
public:
    // buffer: at least 64 bytes, owned by the caller (static storage in the crash writer).
    SignalSafeJson(int fd, char *buffer, size_t capacity) : fd_(fd), buf_(buffer), cap_(capacity) {}

    bool failed() const { return failed_; }
    int error_number() const { return errno_; }

    void raw(const char *s, size_t n) {
        while (n > 0 && !failed_) {
            if (len_ == cap_) flush();
            size_t take = cap_ - len_ < n ? cap_ - len_ : n;
            for (size_t i = 0; i < take; ++i) buf_[len_ + i] = s[i];
            len_ += take;
            s += take;
            n -= take;
        }
    }
    void raw(const char *s) {
        size_t n = 0;
        while (s[n]) ++n;
        raw(s, n);
    }
    void ch(char c) { raw(&c, 1); }

    void u64(uint64_t v) {
        char tmp[24];
        size_t i = sizeof tmp;
        do {
            tmp[--i] = static_cast<char>('0' + v % 10);
            v /= 10;
        } while (v != 0);
        raw(tmp + i, sizeof tmp - i);
    }
    void i64(int64_t v) {
        if (v < 0) {
            ch('-');
            u64(~static_cast<uint64_t>(v) + 1);
        } else {
            u64(static_cast<uint64_t>(v));
        }
    }
    // "0x..." in lower case without padding, quoted (the schema's hex string).
    void hex(uint64_t v) {
        static const char kDigits[] = "0123456789abcdef";
        char tmp[20];
        size_t i = sizeof tmp;
        tmp[--i] = '"';
        do {
            tmp[--i] = kDigits[v & 15];
            v >>= 4;
        } while (v != 0);
        tmp[--i] = 'x';
        tmp[--i] = '0';
        tmp[--i] = '"';
        raw(tmp + i, sizeof tmp - i);
    }
    // `"name": ` (a member name of snapshot/snapshot_fields.h: nothing to escape).
    void key(std::string_view name) {
        ch('"');
        raw(name.data(), name.size());
        raw("\": ");
    }
    // A quoted, escaped string of n bytes.
    void str(const char *s, size_t n) {
        static const char kHex[] = "0123456789abcdef";
        const auto *p = reinterpret_cast<const unsigned char *>(s);
        ch('"');
        size_t i = 0;
        while (i < n && !failed_) {
            unsigned char c = p[i];
            if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
                ch(static_cast<char>(c));
                ++i;
                continue;
            }
            if (c < 0x80) {
                char esc[6] = {'\\', static_cast<char>(c), 0, 0, 0, 0};
                size_t len = 2;
                switch (c) {
                case '"': case '\\': break;
                case '\n': esc[1] = 'n'; break;
                case '\r': esc[1] = 'r'; break;
                case '\t': esc[1] = 't'; break;
                case '\b': esc[1] = 'b'; break;
                case '\f': esc[1] = 'f'; break;
                default:
                    esc[1] = 'u', esc[2] = '0', esc[3] = '0', esc[4] = kHex[c >> 4], esc[5] = kHex[c & 15];
                    len = 6;
                }
                raw(esc, len);
                ++i;
                continue;
            }
            int seq = utf8_sequence(p + i, n - i);
            if (seq > 0) {
                raw(s + i, static_cast<size_t>(seq));
                i += static_cast<size_t>(seq);
            } else {
                raw("\xEF\xBF\xBD", 3); // U+FFFD
                i += static_cast<size_t>(-seq);
            }
        }
        ch('"');
    }
    void str(const char *s) {
        size_t n = 0;
        while (s[n]) ++n;
        str(s, n);
    }

    void flush() {
        size_t off = 0;
        while (off < len_ && !failed_) {
            ssize_t w = ::write(fd_, buf_ + off, len_ - off);
            if (w > 0) off += static_cast<size_t>(w);
            else if (w < 0 && errno == EINTR) continue;
            else failed_ = true, errno_ = w < 0 ? errno : EIO;
        }
        len_ = 0;
    }

private:
    // Length (2..4) of the well-formed UTF-8 sequence at p, or minus the length of its maximal
    // ill-formed prefix (which becomes one U+FFFD).
    static int utf8_sequence(const unsigned char *p, size_t n) {
        unsigned char c = p[0], lo = 0x80, hi = 0xBF;
        int need;
        if (c >= 0xC2 && c <= 0xDF) need = 1;
        else if (c == 0xE0) need = 2, lo = 0xA0;
        else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) need = 2;
        else if (c == 0xED) need = 2, hi = 0x9F;
        else if (c == 0xF0) need = 3, lo = 0x90;
        else if (c >= 0xF1 && c <= 0xF3) need = 3;
        else if (c == 0xF4) need = 3, hi = 0x8F;
        else return -1;
        for (int k = 1; k <= need; ++k) {
            if (static_cast<size_t>(k) >= n || p[k] < lo || p[k] > hi) return -k;
            lo = 0x80, hi = 0xBF;
        }
        return need + 1;
    }

    int fd_;
    char *buf_;
    size_t cap_;
    size_t len_ = 0;
    bool failed_ = false;
    int errno_ = 0;
};

} // namespace vramtrace::crash
