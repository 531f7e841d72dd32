#include "snapshot/json_emitter.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>

#include <poll.h>
#include <unistd.h>

namespace vramtrace::snapshot {

namespace {

// Length of the well-formed UTF-8 sequence starting at p (2..4), or minus the length of its maximal
// ill-formed prefix (each such prefix becomes one U+FFFD, as Unicode recommends).
int utf8_sequence(const unsigned char *p, size_t n) {
    unsigned char c = p[0];
    int need;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) need = 1;
    else if (c == 0xE0) need = 2, lo = 0xA0;             // no overlong forms
    else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) need = 2;
    else if (c == 0xED) need = 2, hi = 0x9F;             // no surrogates
    else if (c == 0xF0) need = 3, lo = 0x90;             // no overlong forms
    else if (c >= 0xF1 && c <= 0xF3) need = 3;
    else if (c == 0xF4) need = 3, hi = 0x8F;             // nothing above U+10FFFF
    else return -1;
    for (int k = 1; k <= need; ++k) {
        if (size_t(k) >= n || p[k] < lo || p[k] > hi) return -k;
        lo = 0x80;
        hi = 0xBF;
    }
    return need + 1;
}

} // namespace

void JsonEmitter::raw(std::string_view s) {
    while (!s.empty() && !failed_) {
        if (len_ == cap_) flush();
        if (failed_) return;
        size_t n = std::min(s.size(), cap_ - len_);
        std::memcpy(buf_ + len_, s.data(), n);
        len_ += n;
        s.remove_prefix(n);
    }
}

void JsonEmitter::ch(char c) {
    if (len_ == cap_) flush();
    if (!failed_) buf_[len_++] = c;
}

void JsonEmitter::u64(uint64_t v) {
    char tmp[24];
    auto r = std::to_chars(tmp, tmp + sizeof tmp, v);
    raw(std::string_view(tmp, size_t(r.ptr - tmp)));
}

void JsonEmitter::i64(int64_t v) {
    char tmp[24];
    auto r = std::to_chars(tmp, tmp + sizeof tmp, v);
    raw(std::string_view(tmp, size_t(r.ptr - tmp)));
}

void JsonEmitter::hex(uint64_t v) {
    char tmp[24] = {'"', '0', 'x'};
    auto r = std::to_chars(tmp + 3, tmp + sizeof tmp - 1, v, 16);
    *r.ptr = '"';
    raw(std::string_view(tmp, size_t(r.ptr + 1 - tmp)));
}

void JsonEmitter::str(std::string_view s) {
    static constexpr char kHex[] = "0123456789abcdef";
    ch('"');
    auto p = reinterpret_cast<const unsigned char *>(s.data());
    size_t n = s.size(), i = 0;
    while (i < n && !failed_) {
        size_t run = i; // a run of bytes that need no escaping
        while (run < n && p[run] >= 0x20 && p[run] < 0x80 && p[run] != '"' && p[run] != '\\') ++run;
        if (run > i) {
            raw(s.substr(i, run - i));
            i = run;
            continue;
        }
        unsigned char c = p[i];
        if (c < 0x80) {
            switch (c) {
            case '"': raw("\\\""); break;
            case '\\': raw("\\\\"); break;
            case '\n': raw("\\n"); break;
            case '\r': raw("\\r"); break;
            case '\t': raw("\\t"); break;
            case '\b': raw("\\b"); break;
            case '\f': raw("\\f"); break;
            default: {
                char esc[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15]};
                raw(std::string_view(esc, 6));
            }
            }
            ++i;
            continue;
        }
        int len = utf8_sequence(p + i, n - i);
        if (len > 0) {
            raw(s.substr(i, size_t(len)));
            i += size_t(len);
        } else {
            raw("\xEF\xBF\xBD"); // U+FFFD REPLACEMENT CHARACTER
            i += size_t(-len);
        }
    }
    ch('"');
}

void JsonEmitter::key(std::string_view name) {
    ch('"');
    raw(name);
    raw("\": ");
}

void JsonEmitter::flush() {
    size_t off = 0;
    while (off < len_ && !failed_) {
        ssize_t n = ::write(fd_, buf_ + off, len_ - off);
        if (n > 0) {
            off += size_t(n);
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && when_full_ == WhenFull::wait) {
            pollfd pfd{fd_, POLLOUT, 0};
            if (::poll(&pfd, 1, -1) < 0 && errno != EINTR) fail(errno);
        } else {
            fail(n < 0 ? errno : EIO); // write() returning 0 for a non-empty buffer
        }
    }
    len_ = 0;
}

void JsonEmitter::fail(int err) {
    failed_ = true;
    errno_ = err;
}

} // namespace vramtrace::snapshot
