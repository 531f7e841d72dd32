#include "triggers/trigger_parse.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <strings.h>

namespace vramtrace::triggers {
namespace {

struct NamedSignal {
    const char *name; // without "SIG"
    int number;
};
constexpr NamedSignal kSignals[] = {
    {"HUP", SIGHUP},   {"INT", SIGINT},     {"QUIT", SIGQUIT},     {"ILL", SIGILL},     {"TRAP", SIGTRAP},
    {"ABRT", SIGABRT}, {"BUS", SIGBUS},     {"FPE", SIGFPE},       {"KILL", SIGKILL},   {"USR1", SIGUSR1},
    {"SEGV", SIGSEGV}, {"USR2", SIGUSR2},   {"PIPE", SIGPIPE},     {"ALRM", SIGALRM},   {"TERM", SIGTERM},
    {"STKFLT", SIGSTKFLT}, {"CHLD", SIGCHLD}, {"CONT", SIGCONT},   {"STOP", SIGSTOP},   {"TSTP", SIGTSTP},
    {"TTIN", SIGTTIN}, {"TTOU", SIGTTOU},   {"URG", SIGURG},       {"XCPU", SIGXCPU},   {"XFSZ", SIGXFSZ},
    {"VTALRM", SIGVTALRM}, {"PROF", SIGPROF}, {"WINCH", SIGWINCH}, {"IO", SIGIO},       {"PWR", SIGPWR},
    {"SYS", SIGSYS},
};

// A whole decimal number (all of text, no sign); nullopt otherwise.
std::optional<long> whole_number(const char *text) {
    if (*text < '0' || *text > '9') return std::nullopt;
    char *end = nullptr;
    int saved = errno;
    errno = 0;
    long n = strtol(text, &end, 10);
    bool ok = errno == 0 && *end == 0;
    errno = saved;
    return ok ? std::optional<long>(n) : std::nullopt;
}

// A non-negative decimal number ("12", "1.5", ".5") at the start of text, kept exact as
// integer / 10^scale (no strtod: the host's locale may want a decimal comma).
struct Decimal {
    unsigned __int128 digits = 0;
    unsigned __int128 scale = 1; // 10^(digits after the point)
    bool has_point = false;
};
std::optional<Decimal> leading_decimal(const char *text, const char **end) {
    Decimal d;
    const char *p = text;
    int count = 0;
    for (; *p >= '0' && *p <= '9'; ++p, ++count) {
        if (count > 30) return std::nullopt;
        d.digits = d.digits * 10 + static_cast<unsigned>(*p - '0');
    }
    if (*p == '.') {
        d.has_point = true;
        for (++p; *p >= '0' && *p <= '9'; ++p, ++count) {
            if (count > 30) return std::nullopt;
            d.digits = d.digits * 10 + static_cast<unsigned>(*p - '0');
            d.scale *= 10;
        }
    }
    if (count == 0) return std::nullopt;
    *end = p;
    return d;
}

} // namespace

std::optional<int> parse_signal(const char *text) {
    if (text == nullptr) return std::nullopt;
    if (!strcmp(text, "0") || !strcasecmp(text, "none") || !strcasecmp(text, "off")) return 0;
    int signo = -1;
    if (auto n = whole_number(text)) {
        signo = *n <= SIGRTMAX ? static_cast<int>(*n) : -1;
    } else {
        const char *name = strncasecmp(text, "SIG", 3) == 0 ? text + 3 : text;
        for (const NamedSignal &s : kSignals)
            if (!strcasecmp(name, s.name)) signo = s.number;
        if (signo < 0 && !strncasecmp(name, "RTMIN", 5)) {
            if (name[5] == 0) signo = SIGRTMIN;
            else if (name[5] == '+') {
                auto n = whole_number(name + 6);
                if (n && *n <= SIGRTMAX - SIGRTMIN) signo = SIGRTMIN + static_cast<int>(*n);
            }
        } else if (signo < 0 && !strncasecmp(name, "RTMAX", 5)) {
            if (name[5] == 0) signo = SIGRTMAX;
            else if (name[5] == '-') {
                auto n = whole_number(name + 6);
                if (n && *n <= SIGRTMAX - SIGRTMIN) signo = SIGRTMAX - static_cast<int>(*n);
            }
        }
    }
    // Only signals that mean nothing else to the program or to the tools around it: a dump on
    // SIGINT, SIGTERM, SIGPIPE or SIGCHLD would take away what they do.
    if (signo != SIGUSR1 && signo != SIGUSR2 && !(signo >= SIGRTMIN && signo <= SIGRTMAX)) return std::nullopt;
    return signo;
}

const char *signal_name(int signo, char *buf, unsigned long size) {
    for (const NamedSignal &s : kSignals)
        if (s.number == signo) {
            snprintf(buf, size, "SIG%s", s.name);
            return buf;
        }
    if (signo >= SIGRTMIN && signo <= SIGRTMAX) snprintf(buf, size, "SIGRTMIN+%d", signo - SIGRTMIN);
    else snprintf(buf, size, "signal %d", signo);
    return buf;
}

std::optional<ByteThreshold> parse_byte_threshold(const char *text) {
    if (text == nullptr) return std::nullopt;
    const char *end = nullptr;
    auto d = leading_decimal(text, &end);
    if (!d) return std::nullopt;
    struct Suffix {
        const char *text;
        uint64_t multiplier;
    };
    static constexpr Suffix kSuffixes[] = {
        {"B", 1},
        {"K", 1ull << 10}, {"KiB", 1ull << 10}, {"KB", 1000ull},
        {"M", 1ull << 20}, {"MiB", 1ull << 20}, {"MB", 1000000ull},
        {"G", 1ull << 30}, {"GiB", 1ull << 30}, {"GB", 1000000000ull},
        {"T", 1ull << 40}, {"TiB", 1ull << 40}, {"TB", 1000000000000ull},
    };
    ByteThreshold t;
    if (*end == 0 || *end == '%') {
        bool percent = *end == '%';
        if (percent && end[1] != 0) return std::nullopt;
        if (!percent && !d->has_point) { // plain bytes
            if (d->digits == 0 || d->digits > UINT64_MAX) return std::nullopt;
            t.bytes = static_cast<uint64_t>(d->digits);
            return t;
        }
        unsigned __int128 scale = d->scale * (percent ? 100 : 1);
        if (d->digits == 0 || d->digits > scale) return std::nullopt; // (0, 1]
        t.fraction = static_cast<double>(d->digits) / static_cast<double>(scale);
        return t;
    }
    const char *suffix = *end == ' ' ? end + 1 : end;
    for (const Suffix &s : kSuffixes) {
        if (strcasecmp(suffix, s.text) != 0) continue;
        unsigned __int128 bytes = d->digits * s.multiplier / d->scale;
        if (bytes == 0 || bytes > UINT64_MAX) return std::nullopt;
        t.bytes = static_cast<uint64_t>(bytes);
        return t;
    }
    return std::nullopt;
}

std::optional<uint64_t> parse_period_ns(const char *text) {
    if (text == nullptr) return std::nullopt;
    const char *end = nullptr;
    auto d = leading_decimal(text, &end);
    if (!d || *end != 0) return std::nullopt;
    unsigned __int128 ns = d->digits * 1000000000ull / d->scale;
    if (ns == 0 || ns > 86400ull * 1000000000ull) return std::nullopt;
    return static_cast<uint64_t>(ns);
}

} // namespace vramtrace::triggers
