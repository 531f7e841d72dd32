// The sweep of the textfile directory: a process that died without running any code (SIGKILL, the
// kernel's OOM killer, a power loss) leaves its last reading saying vramtrace_process_up 1. Every
// traced process that writes a textfile looks, on the reporter thread after each of its writes, at
// the other vramtrace textfiles in the same directory: one whose process is gone (its pid is not
// running, or runs another process: the start time in its header differs, or the host was
// rebooted: the boot id differs) is rewritten with vramtrace_process_up 0 and its last update as
// its end time; one whose process ended VRAMTRACE_PROMETHEUS_KEEP ago or more is removed.
//
// Only files that are vramtrace's own are touched: the name matches the file-name part of
// VRAMTRACE_PROMETHEUS_TEXTFILE (each placeholder standing for any non-empty text without '/'),
// it is a regular file (never a symlink: opened with O_NOFOLLOW) owned by this user, of at most
// kSweepMaxFileBytes, whose first line is a vramtrace header naming this host; and it is still the
// same file (device and inode) when it is replaced or removed.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>

namespace vramtrace::triggers {

inline constexpr size_t kSweepMaxEntries = 10000;        // directory entries looked at per sweep
inline constexpr size_t kSweepMaxFileBytes = 4u << 20;   // larger files are not ours
inline constexpr uint64_t kSweepMaxNs = 200'000'000;     // time one sweep may take (the reporter's)

struct SweepOptions {
    std::string directory;     // where this process's textfile is
    std::string name_pattern;  // the file-name part of VRAMTRACE_PROMETHEUS_TEXTFILE, placeholders kept
    std::string host;          // this host as the header names it (format_prometheus_parts)
    uint64_t now_ms = 0;       // wall clock
    uint64_t keep_ms = 0;      // VRAMTRACE_PROMETHEUS_KEEP
    uint64_t deadline_ns = 0;  // monotonic_ns() at which the sweep stops where it is; 0: none
    bool (*should_stop)() = nullptr; // asked before each entry: true ends the sweep (the process exits)
    // Held around each file's rewrite or removal, with should_stop asked again under it: the exit
    // takes it once after should_stop turns true, so no temporary file of a rewrite is left behind.
    std::mutex *file_lock = nullptr;
};

struct SweepResult {
    unsigned marked = 0;  // files rewritten with vramtrace_process_up 0
    unsigned removed = 0; // files removed
    bool cut_short = false; // stopped by kSweepMaxEntries, the deadline or should_stop
};

// Whether the process a header names still runs: false only when /proc says so for sure (no such
// pid, another start time, another boot id); a /proc that cannot be read counts as running.
using ProcessRunning = bool (*)(long pid, uint64_t start_ticks, const std::string &boot_id);
bool process_running(long pid, uint64_t start_ticks, const std::string &boot_id);

// Whether a file name matches the pattern (%p, %h, %r: any non-empty text without '/'; %%: '%'), in
// at most name length x pattern length steps: a name planted by another user costs no more.
bool textfile_name_matches(const std::string &name, const std::string &pattern);

SweepResult sweep_textfile_directory(const SweepOptions &options, ProcessRunning running = &process_running);

// This process's identity as the header carries it: /proc/self/stat field 22 and the boot id.
uint64_t own_start_ticks();
std::string own_boot_id();

} // namespace vramtrace::triggers
