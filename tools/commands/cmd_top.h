// `vramtrace top` (commands/cmd_top.cpp) and its terminal UI (commands/cmd_top_tui.cpp).
#pragma once

#include <string>
#include <cstdint>
#include <sys/types.h>
#include <vector>

namespace vramtrace::cli {

struct TopOptions {
    pid_t pid = 0;          // 0: every traced process on this host
    size_t top = 10;        // call sites listed
    std::string log_path;   // `run --live`: where the program's output goes (shown by the TUI)
    pid_t child = 0;        // `run --live`: the program the TUI waits for (0: none)
};

// The terminal UI until `q` (or, with options.child, until the program ends). Returns an exit
// status; with options.child, *child_status gets the program's wait status.
int top_tui(const TopOptions &options, int *child_status);

// One line per traced process for the TUI's process list and `top --once`: pid, command, rank,
// devices (current, peak).
struct ProcessRow {
    pid_t pid = 0;
    std::string command, rank;
    struct Device {
        int device = 0;
        uint64_t current = 0, peak = 0;
    };
    std::vector<Device> devices;
};

} // namespace vramtrace::cli
