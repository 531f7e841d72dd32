// Parsers for the trigger settings (VRAMTRACE_SIGNAL, VRAMTRACE_WARN_BYTES, the periods). Pure
// functions with no side effects, so the unit tests can check every accepted and refused spelling;
// lib/triggers/trigger_config.cpp turns a refusal into one warning and the default.
#pragma once

#include <cstdint>
#include <optional>

namespace vramtrace::triggers {

// A signal by name ("SIGUSR2", "USR2", "usr2", "SIGRTMIN+3") or number ("12"). 0 means off: "0",
// "none", "off". Only SIGUSR1, SIGUSR2 and the real-time signals SIGRTMIN..SIGRTMAX are accepted:
// any other signal (SIGINT, SIGTERM, SIGPIPE, SIGCHLD, the faults, those that cannot be caught)
// already means something to the program or the tools around it. Refused (nullopt) too: unknown
// names and numbers.
std::optional<int> parse_signal(const char *text);
// The name of a signal for messages: "SIGUSR2", "SIGRTMIN+3", or "signal 42".
const char *signal_name(int signo, char *buf, unsigned long size);

// VRAMTRACE_WARN_BYTES: either bytes (a whole or decimal number with an optional suffix: B, K/KiB,
// M/MiB, G/GiB, T/TiB (powers of 1024), KB, MB, GB, TB (powers of 1000); "1.5GiB" = 1610612736)
// or a fraction of the device's total memory: a number without suffix containing '.' in (0, 1]
// ("0.9") or a percentage in (0, 100] ("90%"). Exactly one of bytes/fraction is set on success.
struct ByteThreshold {
    uint64_t bytes = 0;     // > 0 when given in bytes
    double fraction = 0.0;  // in (0, 1] when given as a fraction or percentage
};
std::optional<ByteThreshold> parse_byte_threshold(const char *text);

// A period in seconds, whole or decimal ("15", "0.5"), > 0 and at most a day; nanoseconds out.
std::optional<uint64_t> parse_period_ns(const char *text);

} // namespace vramtrace::triggers
