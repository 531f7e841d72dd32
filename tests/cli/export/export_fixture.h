// The one snapshot that every export golden file is made from: two GPUs and host-pinned memory, a
// frame with an inlined function, a frame without a name, an allocation without a stack, an event
// history with a free, a mark (with characters every format must escape) and an OOM, and peaks.
#pragma once

#include "snapshot/snapshot_model.h"

namespace vt_export_test {

inline vramtrace::snapshot::Snapshot fixture_snapshot() {
    using namespace vramtrace::snapshot;
    constexpr uint64_t kS = 1000000000;
    Snapshot s;
    s.process.pid = 4242;
    s.process.ppid = 4200;
    s.process.command_line = {"./train", "--epochs", "3"};
    s.process.executable = "/home/me/train";
    s.process.host = "node17";
    s.process.start_time_ns = 1764466245000000000;
    s.process.dump_time_ns = 1764466250000000000;
    s.process.dump_monotonic_ns = 6 * kS; // so the process started at monotonic 1 s
    s.process.reason = "exit";
    s.process.vramtrace_version = "0.1.0";
    s.process.stack_depth = 32;
    s.devices = {
        {-1, 4096, 4096, 1, 0, 4096, 0},
        {0, 1048576, 4194304, 2, 1, 4194304, 3145728},
        {1, 2097152, 2097152, 1, 0, 2097152, 0},
    };
    s.modules = {{"/home/me/train", 0x5581c0000000, "3b1f5c2a"},
                 {"/usr/lib/x86_64-linux-gnu/libcudart.so.13", 0x7f3b10000000, ""}};
    Frame cuda_malloc{0x7f3b10045a10, 1, 0x45a10, "cudaMalloc", "", 0, {}};
    Frame make_buffer{0x5581c0001234, 0, 0x1234, "make_buffer(unsigned long)", "/src/train.cpp", 42,
                      {{"alloc_helper<float>(unsigned long)", "/src/alloc.h", 7}}};
    Frame main_frame{0x5581c0001890, 0, 0x1890, "main", "/src/train.cpp", 97, {}};
    Frame unnamed{0x5581c0002000, 0, 0x2000, "", "", 0, {}};
    Frame worker{0x5581c0003000, 0, 0x3000, "worker(int)", "/src/train.cpp", 120, {}};
    s.frames = {cuda_malloc, make_buffer, main_frame, unnamed, worker};
    s.stacks = {{1, {0, 1, 2}, 1}, {2, {0, 3, 2}, 1}, {3, {0, 4}, 1}};
    s.allocations = {
        {0x7f0000000000, 4096, "host_pinned", -1, "cudaHostAlloc", 0, 4242, 4500000000, 0},
        {0x7f3a00000000, 1048576, "device", 0, "cudaMalloc", 0, 4242, 1500000000, 1},
        {0x7f4a00000000, 2097152, "device", 1, "cudaMallocAsync", 0x55, 4243, 3500000000, 3},
    };
    s.peaks = {
        {-1, 4096, 4500000000, {{0, 4096, 1}}},
        {0, 4194304, 2000000000, {{2, 3145728, 1}, {1, 1048576, 1}}},
        {1, 2097152, 3500000000, {{3, 2097152, 1}}},
    };
    OomEvent oom;
    oom.time_ns = 4000000000;
    oom.device = 0;
    oom.requested_bytes = 8589934592;
    oom.api = "cudaMalloc";
    oom.stack = 1;
    oom.thread_id = 4242;
    oom.result = 2;
    oom.device_free_bytes = 1073741824;
    oom.device_total_bytes = 85899345920;
    oom.tracked_bytes = 1048576;
    s.ooms = {oom};
    s.oom_count = 1;
    s.events.capacity = 1024;
    s.events.recorded = 7;
    s.events.complete_from_ns = 1 * kS;
    auto ev = [](std::string type, uint64_t t, int device, uint64_t address, uint64_t size, std::string kind,
                 std::string api, uint32_t stack, uint32_t tid, std::string label = "") {
        return Event{std::move(type), t, device, address, size, std::move(kind), std::move(api), stack, tid, std::move(label)};
    };
    s.events.events = {
        ev("alloc", 1500000000, 0, 0x7f3a00000000, 1048576, "device", "cudaMalloc", 1, 4242),
        ev("alloc", 2000000000, 0, 0x7f3a00200000, 3145728, "device", "cudaMalloc", 2, 4242),
        ev("mark", 2500000000, -2, 0, 0, "", "", 0, 4242, "epoch \"1\" <a;b>"),
        ev("free", 3000000000, 0, 0x7f3a00200000, 3145728, "device", "cudaFree", 2, 4242),
        ev("alloc", 3500000000, 1, 0x7f4a00000000, 2097152, "device", "cudaMallocAsync", 3, 4243),
        ev("oom", 4000000000, 0, 0, 8589934592, "", "cudaMalloc", 1, 4242),
        ev("alloc", 4500000000, -1, 0x7f0000000000, 4096, "host_pinned", "cudaHostAlloc", 0, 4242),
    };
    return s;
}

} // namespace vt_export_test
