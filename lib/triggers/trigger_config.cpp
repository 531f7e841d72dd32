#include "triggers/trigger_config.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "core/hot_flags.h"
#include "core/log.h"
#include "triggers/trigger_parse.h"

namespace vramtrace::triggers {
namespace {

TriggerConfig g_config;
const TriggerConfig kDefaults;
// 0: not read, 1: being read (by the first caller), 2: read and published.
std::atomic<int> g_state{0};

const char *setting(const char *name) {
    const char *v = getenv(name);
    return v != nullptr && *v != 0 ? v : nullptr;
}

// A number of seconds that may be 0 ("0", "0.0").
bool parse_interval(const char *v, uint64_t *ns) {
    if (auto n = parse_period_ns(v)) {
        *ns = *n;
        return true;
    }
    const char *p = v;
    while (*p == '0') ++p;
    if (*p == '.') for (++p; *p == '0'; ++p) {}
    if (*p != 0 || p == v) return false;
    *ns = 0;
    return true;
}

} // namespace

const TriggerConfig &trigger_config() {
    // Read on first use, from whichever comes first: the library constructor or a hook that runs
    // before it (another library's constructor may allocate first). One acquire load after that.
    int state = g_state.load(std::memory_order_acquire);
    if (state == 0) {
        load_trigger_config();
        state = g_state.load(std::memory_order_acquire);
    }
    return state == 2 ? g_config : kDefaults;
}

void load_trigger_config() {
    int expected = 0;
    if (!g_state.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) return; // read once
    TriggerConfig c;
    if (const char *v = setting("VRAMTRACE_SIGNAL")) {
        if (auto s = parse_signal(v)) {
            c.dump_signal = *s;
            c.dump_signal_explicit = true;
        } else {
            log_warning("VRAMTRACE_SIGNAL=\"%s\" is not a signal that can request a snapshot (SIGUSR1, SIGUSR2 "
                        "or SIGRTMIN+N, by name or number; 0 or none for off); using SIGUSR2", ShownValue(v).text);
        }
    }
    if (const char *v = setting("VRAMTRACE_WARN_BYTES")) {
        if (auto t = parse_byte_threshold(v)) {
            c.warn_bytes = t->bytes;
            c.warn_fraction = t->fraction;
        } else {
            log_warning("VRAMTRACE_WARN_BYTES=\"%s\" is not a size (bytes with an optional KiB/MiB/GiB "
                        "suffix) or a fraction (0.9, 90%%) of device memory; no warning", ShownValue(v).text);
        }
    }
    if (const char *v = setting("VRAMTRACE_WARN_INTERVAL")) {
        if (!parse_interval(v, &c.warn_interval_ns))
            log_warning("VRAMTRACE_WARN_INTERVAL=\"%s\" is not a number of seconds from 0 to 86400; using 10", ShownValue(v).text);
    }
    if (const char *v = setting("VRAMTRACE_PERIOD")) {
        if (auto ns = parse_period_ns(v)) c.period_ns = *ns;
        else log_warning("VRAMTRACE_PERIOD=\"%s\" is not a number of seconds above 0 (at most 86400); "
                         "no periodic snapshot", ShownValue(v).text);
    }
    c.prometheus_textfile = setting("VRAMTRACE_PROMETHEUS_TEXTFILE");
    if (const char *v = setting("VRAMTRACE_PROMETHEUS_PERIOD")) {
        if (auto ns = parse_period_ns(v)) c.prometheus_period_ns = *ns;
        else log_warning("VRAMTRACE_PROMETHEUS_PERIOD=\"%s\" is not a number of seconds above 0 (at most "
                         "86400); using 15", ShownValue(v).text);
    }
    if (const char *v = setting("VRAMTRACE_PROMETHEUS_SITES")) {
        char *end = nullptr;
        unsigned long n = strtoul(v, &end, 10);
        if (*v >= '0' && *v <= '9' && *end == 0 && n <= 1000) c.prometheus_sites = static_cast<uint32_t>(n);
        else log_warning("VRAMTRACE_PROMETHEUS_SITES=\"%s\" is not a whole number from 0 to 1000; using 10", ShownValue(v).text);
    }
    if (const char *v = setting("VRAMTRACE_PROMETHEUS_KEEP")) {
        if (!parse_interval(v, &c.prometheus_keep_ns))
            log_warning("VRAMTRACE_PROMETHEUS_KEEP=\"%s\" is not a number of seconds from 0 to 86400; using 900", ShownValue(v).text);
    }
    if (const char *v = setting("VRAMTRACE_OOM_SNAPSHOTS")) {
        char *end = nullptr;
        unsigned long n = strtoul(v, &end, 10);
        if (*v >= '0' && *v <= '9' && *end == 0 && n <= 1000) c.oom_snapshots = static_cast<uint32_t>(n);
        else log_warning("VRAMTRACE_OOM_SNAPSHOTS=\"%s\" is not a whole number from 0 to 1000; using 3", ShownValue(v).text);
    }
    if (const char *v = setting("VRAMTRACE_OOM_INTERVAL")) {
        if (!parse_interval(v, &c.oom_interval_ns))
            log_warning("VRAMTRACE_OOM_INTERVAL=\"%s\" is not a number of seconds from 0 to 86400; using 10", ShownValue(v).text);
    }
    if (const char *v = setting("VRAMTRACE_SIGNAL_REPORT")) {
        if (strcmp(v, "0") == 0) c.signal_report = false;
        else if (strcmp(v, "1") != 0)
            log_warning("VRAMTRACE_SIGNAL_REPORT=\"%s\" is not 0 or 1; using 1", ShownValue(v).text);
    }
    if (const char *v = setting("VRAMTRACE_SIGNAL_REPORT_TIMEOUT")) {
        auto ns = parse_period_ns(v);
        if (ns && *ns <= 600'000'000'000ull) c.signal_report_timeout_ns = *ns;
        else log_warning("VRAMTRACE_SIGNAL_REPORT_TIMEOUT=\"%s\" is not a number of seconds above 0 (at most "
                         "600); using 5", ShownValue(v).text);
    }
    g_config = c;
    g_state.store(2, std::memory_order_release);
    if (!c.threshold_on()) hot::set(hot::kNoThreshold);
}

} // namespace vramtrace::triggers
