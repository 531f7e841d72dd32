// The trigger settings, read once with the rest of the configuration (core/config.cpp calls
// load_trigger_config()). Every variable is documented in docs/triggers.md and README.md; a value
// that cannot be parsed gives one warning and the default.
#pragma once

#include <csignal>
#include <cstdint>

namespace vramtrace::triggers {

struct TriggerConfig {
    int dump_signal = SIGUSR2;             // VRAMTRACE_SIGNAL; 0: off
    bool dump_signal_explicit = false;     // VRAMTRACE_SIGNAL was set (say so when it cannot work)
    uint64_t warn_bytes = 0;               // VRAMTRACE_WARN_BYTES in bytes; 0: see warn_fraction
    double warn_fraction = 0.0;            // ... as a fraction of each device's total memory; 0: off
    uint64_t warn_interval_ns = 10'000'000'000ull; // VRAMTRACE_WARN_INTERVAL: per device, 0: every crossing
    uint64_t period_ns = 0;                // VRAMTRACE_PERIOD; 0: no periodic snapshot
    const char *prometheus_textfile = nullptr; // VRAMTRACE_PROMETHEUS_TEXTFILE; nullptr: off
    uint64_t prometheus_period_ns = 15'000'000'000ull; // VRAMTRACE_PROMETHEUS_PERIOD
    uint32_t prometheus_sites = 10;        // VRAMTRACE_PROMETHEUS_SITES: top call sites per device; 0: none
    uint64_t prometheus_keep_ns = 900'000'000'000ull; // VRAMTRACE_PROMETHEUS_KEEP: a dead process's file
    uint32_t oom_snapshots = 3;            // VRAMTRACE_OOM_SNAPSHOTS: the most OOM snapshot files
    uint64_t oom_interval_ns = 10'000'000'000ull; // VRAMTRACE_OOM_INTERVAL: at least this apart
    bool signal_report = true;             // VRAMTRACE_SIGNAL_REPORT=0: a terminating signal writes nothing
    uint64_t signal_report_timeout_ns = 5'000'000'000ull; // VRAMTRACE_SIGNAL_REPORT_TIMEOUT: the
                                           // longest a terminating signal waits for the exit report

    bool threshold_on() const { return warn_bytes != 0 || warn_fraction > 0.0; }
};

// The settings, read from the environment on first use (from the constructor, or from a hook that
// runs before it); while another thread is reading them, the defaults.
const TriggerConfig &trigger_config();
void load_trigger_config(); // reads them now unless already read; idempotent

} // namespace vramtrace::triggers
