// The report model: what a snapshot holds, independent of where it came from. The preload library
// builds it from the live table at dump time; the CLI builds it by reading a snapshot file. The JSON
// writer and the summary formatter take only this model, so both sides print the same thing.
// Schema and units: docs/snapshot-format.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace vramtrace::report {

inline constexpr int kSchemaVersion = 1;
inline constexpr const char *kFormatName = "vramtrace-snapshot";

struct ProcessInfo {
    int64_t pid = 0;
    int64_t ppid = 0;
    std::vector<std::string> command_line;
    std::string executable;        // /proc/self/exe at dump time
    std::string host;
    uint64_t start_time_ns = 0;    // wall clock (Unix epoch, ns) when the library initialised
    uint64_t dump_time_ns = 0;     // wall clock (Unix epoch, ns) when this snapshot was taken
    int driver_version = 0;        // cuDriverGetVersion, e.g. 13000; 0 when not known
    std::string reason;            // "exit", "api", ... (why the snapshot was written)
    std::string vramtrace_version;
    uint32_t stack_depth = 0;      // VRAMTRACE_STACK_DEPTH in force
};

// Per-device counters; device -1 is host-pinned memory.
struct DeviceTotals {
    int device = 0;
    uint64_t current_bytes = 0;
    uint64_t peak_bytes = 0;
    uint64_t allocation_count = 0;
    uint64_t free_count = 0;
    uint64_t total_allocated_bytes = 0;
    uint64_t total_freed_bytes = 0;
};

struct Module {
    std::string path;
    uint64_t base = 0;      // load address (the ELF's l_addr, so address = base + offset)
    std::string build_id;   // hex of NT_GNU_BUILD_ID, empty when absent
};

struct Frame {
    uint64_t address = 0;       // absolute return address as seen in the process
    int module = -1;            // index into Snapshot::modules, -1 when unknown
    uint64_t module_offset = 0; // address - module base
    std::string function;       // demangled, empty when unknown
    std::string file;           // source file, empty when no debug info
    uint32_t line = 0;          // 0 when no debug info
};

struct Stack {
    uint32_t id = 0;              // id shared with Allocation::stack
    std::vector<uint32_t> frames; // indices into Snapshot::frames, leaf first
    int call_site = -1;           // index into this->frames: first frame outside vramtrace, the CUDA
                                  // runtime and the driver; -1 when every frame is inside them
};

struct Allocation {
    uint64_t address = 0;
    uint64_t size = 0;       // bytes
    std::string kind;        // "device" | "managed" | "host_pinned"
    int device = 0;          // ordinal, -1 host, -2 unknown
    std::string api;         // outermost intercepted entry point, e.g. "cudaMalloc"
    uint64_t stream = 0;
    uint32_t thread_id = 0;
    uint64_t time_ns = 0;    // CLOCK_MONOTONIC ns
    uint32_t stack = 0;      // Stack::id, 0 = none
};

struct Snapshot {
    int schema_version = kSchemaVersion;
    ProcessInfo process;
    std::vector<DeviceTotals> devices; // ascending ordinal
    uint64_t dropped_allocations = 0;  // records the table could not hold
    uint64_t dropped_stacks = 0;       // stacks the depot could not hold
    std::vector<Module> modules;
    std::vector<Frame> frames;
    std::vector<Stack> stacks;         // those referenced by allocations
    std::vector<Allocation> allocations;

    const Stack *find_stack(uint32_t id) const;
};

} // namespace vramtrace::report
