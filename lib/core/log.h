// Messages from the library to the host's stderr. Every line starts with "vramtrace: " so it never
// mixes with the program's own output. Written with write(2) in one call per line; no stdio
// buffering, no locks, no allocation.
#pragma once

namespace vramtrace {

void log_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2))); // only with VRAMTRACE_DEBUG
void log_raw(const char *text, unsigned long length); // text already prefixed, any length

// A setting's value as warnings show it: at most 64 bytes (cut on a UTF-8 character boundary, then
// "..."), control characters as '?', so that a long value cannot push the rest of the warning (the
// default used) past the 1 KiB line and a value with a newline cannot start a line of its own.
// Use as ShownValue(v).text within one call. No allocation.
struct ShownValue {
    char text[72];
    explicit ShownValue(const char *value);
};

// Says something once per process: the flag is the caller's static.
#define VT_WARN_ONCE(...)                                                                          \
    do {                                                                                           \
        static bool vt_warned_;                                                                    \
        if (!__atomic_exchange_n(&vt_warned_, true, __ATOMIC_RELAXED)) ::vramtrace::log_warning(__VA_ARGS__); \
    } while (0)

} // namespace vramtrace
