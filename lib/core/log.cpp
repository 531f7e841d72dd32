#include "core/log.h"

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <unistd.h>

#include "core/config.h"

namespace vramtrace {
namespace {

void emit(const char *prefix, const char *fmt, va_list ap) {
    int saved = errno;
    char buf[1024];
    int n = snprintf(buf, sizeof buf, "vramtrace: %s", prefix);
    int m = vsnprintf(buf + n, sizeof buf - n - 1, fmt, ap);
    if (m < 0) m = 0;
    bool cut = static_cast<size_t>(m) >= sizeof buf - n - 1;
    size_t len = static_cast<size_t>(n) + (cut ? sizeof buf - n - 2 : static_cast<size_t>(m));
    // One line, whatever a path or value in it holds: control characters (a newline, ESC) become
    // '?', and a line cut at the buffer's end says so (not inside a UTF-8 character).
    for (size_t i = static_cast<size_t>(n); i < len; ++i) {
        unsigned char c = static_cast<unsigned char>(buf[i]);
        if (c < 0x20 || c == 0x7f) buf[i] = '?';
    }
    if (cut) {
        len -= 3;
        while (len > static_cast<size_t>(n) && (static_cast<unsigned char>(buf[len]) & 0xC0) == 0x80) --len;
        buf[len++] = '.', buf[len++] = '.', buf[len++] = '.';
    }
    buf[len++] = '\n';
    log_raw(buf, len);
    errno = saved;
}

} // namespace

void log_raw(const char *text, unsigned long length) {
    int saved = errno;
    while (length > 0) {
        ssize_t w = write(STDERR_FILENO, text, length);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) break;
        text += w;
        length -= static_cast<unsigned long>(w);
    }
    errno = saved;
}

ShownValue::ShownValue(const char *value) {
    constexpr size_t kShown = 64;
    size_t n = 0;
    while (value[n] != 0 && n < kShown) ++n;
    bool cut = value[n] != 0;
    if (cut)
        while (n > 0 && (static_cast<unsigned char>(value[n]) & 0xC0) == 0x80) --n; // not inside a character
    for (size_t i = 0; i < n; ++i) {
        unsigned char c = static_cast<unsigned char>(value[i]);
        text[i] = c < 0x20 || c == 0x7f ? '?' : static_cast<char>(c);
    }
    if (cut) text[n++] = '.', text[n++] = '.', text[n++] = '.';
    text[n] = 0;
}

void log_line(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    emit("", fmt, ap);
    va_end(ap);
}

void log_warning(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    emit("warning: ", fmt, ap);
    va_end(ap);
}

void log_debug(const char *fmt, ...) {
    if (!config().debug) return;
    va_list ap;
    va_start(ap, fmt);
    emit("debug: ", fmt, ap);
    va_end(ap);
}

} // namespace vramtrace
