// Settings read once from the environment at start. Every variable is documented in README.md
// (the table under "Use"); garbage in any of them gives one warning and the default.
#pragma once

#include <cstdint>

namespace vramtrace {

struct Config {
    bool disabled = false;          // VRAMTRACE_DISABLE=1: forward everything, record nothing
    bool summary = true;            // VRAMTRACE_SUMMARY=0: no summary on stderr at exit
    bool debug = false;             // VRAMTRACE_DEBUG=1: say which layers are installed
    uint32_t stack_depth = 32;      // VRAMTRACE_STACK_DEPTH: frames kept per stack, 0..256
    bool hook_exports = true;       // VRAMTRACE_HOOK_EXPORTS=0: exported cuda*/cu* record nothing
    bool hook_dlsym = true;         // VRAMTRACE_HOOK_DLSYM=0: dlsym hands out no driver wrappers
    bool hook_procaddress = true;   // VRAMTRACE_HOOK_PROCADDRESS=0: no cuGetProcAddress substitution
    bool follow = true;             // VRAMTRACE_FOLLOW=0: trace this process only, not its children
    bool crash_dump = true;         // VRAMTRACE_CRASH_DUMP=0: no fatal-signal handlers, no crash snapshot
    bool python = true;             // VRAMTRACE_PYTHON=0: no Python frames in stacks (docs/python-frames.md)
    bool tsc_clock = true;          // VRAMTRACE_TSC=0: every time from the vDSO, no counter line (core/clock.h)
    uint32_t events = 65536;        // VRAMTRACE_EVENTS: events kept in the history ring (96 bytes
                                    // each), 0 = no history; at most 2^28
    const char *output = "vramtrace-%p.json"; // VRAMTRACE_OUTPUT; %p pid, %h host, %% a percent sign
    // VRAMTRACE_BACKEND (docs/cupti.md): 0 unset (preload, or CUPTI when the library was loaded only
    // through CUDA_INJECTION64_PATH), 1 "preload", 2 "cupti".
    uint8_t backend = 0;
    const char *cupti_library = nullptr; // VRAMTRACE_CUPTI_LIBRARY: the libcupti to dlopen
    const char *run_notes = nullptr; // VRAMTRACE_RUN_NOTES: the private directory `vramtrace run`
                                     // makes for its verdict line (lib/dump/run_notes.h)
    bool test_fail_mappings = false; // VRAMTRACE_TEST_FAIL_MAPPINGS=1 (tests only): once the tracker
                                     // is built, every later mapping for it fails, as when the
                                     // kernel has no memory left (drops are counted and reported)
};

// The settings in force. Zero-initialised defaults until load_config() runs.
const Config &config();
void load_config(); // reads the environment; called once from init

} // namespace vramtrace
