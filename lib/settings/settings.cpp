#include "settings/settings.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <strings.h>

namespace vramtrace::settings {

const char *text(Id id) {
    const char *v = secure_getenv(info(id).name);
    return v != nullptr && *v != 0 ? v : nullptr;
}

const char *accepts(const Info &s, char *buf, size_t size) {
    unsigned long long max = s.max;
    switch (s.kind) {
    case Kind::Bool: snprintf(buf, size, "a boolean (use 0 or 1)"); break;
    case Kind::Count: snprintf(buf, size, "a whole number from 0 to %llu", max); break;
    case Kind::Seconds: snprintf(buf, size, "a number of seconds above 0 (at most %llu)", max); break;
    case Kind::SecondsOrZero: snprintf(buf, size, "a number of seconds from 0 to %llu", max); break;
    case Kind::Text: snprintf(buf, size, "any text"); break;
    case Kind::AbsolutePath: snprintf(buf, size, "an absolute path"); break;
    case Kind::Backend: snprintf(buf, size, "preload or cupti"); break;
    case Kind::Signal:
        snprintf(buf, size, "a signal that can request a snapshot (SIGUSR1, SIGUSR2 or SIGRTMIN+N, by name or "
                            "number; 0 or none for off)");
        break;
    case Kind::Threshold:
        snprintf(buf, size, "a size (bytes with an optional KiB/MiB/GiB suffix) or a fraction (0.9, 90%%) of "
                            "device memory");
        break;
    }
    return buf;
}

const char *fallback(const Info &s, char *buf, size_t size) {
    if (!strcmp(s.shown_default, "off") || !strcmp(s.shown_default, "unset"))
        snprintf(buf, size, "left %s", s.shown_default);
    else
        snprintf(buf, size, "using the default %s", s.shown_default);
    return buf;
}

std::optional<bool> parse_bool(const char *v) {
    if (v == nullptr) return std::nullopt;
    if (!strcmp(v, "1") || !strcasecmp(v, "true") || !strcasecmp(v, "yes") || !strcasecmp(v, "on")) return true;
    if (!strcmp(v, "0") || !strcasecmp(v, "false") || !strcasecmp(v, "no") || !strcasecmp(v, "off")) return false;
    return std::nullopt;
}

std::optional<uint64_t> parse_count(const char *v, uint64_t max) {
    if (v == nullptr || *v < '0' || *v > '9') return std::nullopt;
    char *end = nullptr;
    int saved = errno;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    bool ok = errno == 0 && *end == 0 && n <= max;
    errno = saved;
    if (!ok) return std::nullopt;
    return n;
}

std::optional<uint8_t> parse_backend(const char *v) {
    if (v == nullptr) return std::nullopt;
    if (!strcasecmp(v, "preload")) return 1;
    if (!strcasecmp(v, "cupti")) return 2;
    return std::nullopt;
}

} // namespace vramtrace::settings
