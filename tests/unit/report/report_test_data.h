// Snapshots and file helpers shared by the report tests.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "snapshot/snapshot_model.h"
#include "snapshot/snapshot_writer.h"

namespace vt_test {

using namespace vramtrace::snapshot;

// The snapshot behind data/summary_input.json and data/summary_golden.txt. Its numbers are
// consistent: each device's current_bytes is the sum of its live allocations, and
// allocation_count - free_count is their number.
//
//   allocation      size      device  api                stack -> call site
//   0x7f0000000000  2097152   0       cudaMalloc         1 -> make_buffer  train.cpp:42
//   0x7f0000200000  2097152   0       cudaMalloc         5 -> make_buffer  train.cpp:42 (other address)
//   0x7f0000400000  512       0       cudaMalloc         1 -> make_buffer  train.cpp:42
//   0x7f0010000000  8388608   0       cudaMallocManaged  2 -> load_weights model.cpp:17
//   0x7f0020000000  1048576   1       cudaMallocAsync    2 -> load_weights model.cpp:17
//   0x7f00aa000000  65536     host    cudaMallocHost     3 -> worker_thread (no file:line)
//   0x7f00ab000000  4096      host    cudaHostAlloc      0 (no stack)
//   0x7f0030000000  3145728   1       cuMemAlloc_v2      4 -> no call site (only libcudart)
//   0x7f0040000000  1000      0       cudaMalloc         6 -> unknown module
inline Snapshot golden_snapshot() {
    Snapshot s;
    ProcessInfo &p = s.process;
    p.pid = 4242;
    p.ppid = 4200;
    p.command_line = {"./train", "--epochs", "3", "--name", "my run"};
    p.executable = "/home/me/train";
    p.host = "node17";
    p.start_time_ns = 1764466245000000000ull;
    p.dump_time_ns = 1764466250250000000ull; // 5.25 s later
    p.driver_version = 13000;
    p.reason = "exit";
    p.vramtrace_version = "0.1.0";
    p.stack_depth = 32;

    // device, current, peak, allocations, frees, total allocated, total freed
    s.devices = {
        {-1, 69632, 1114112, 5, 3, 1380352, 1310720},
        {0, 12584424, 146800640, 120, 115, 1086326248, 1073741824},
        {1, 4194304, 6291456, 3, 1, 6291456, 2097152},
    };
    s.dropped_allocations = 0;
    s.dropped_stacks = 1;
    s.modules = {
        {"/home/me/train", 0x555555554000, "3b1f5c2a9d0e4f6a8b7c6d5e4f3a2b1c0d9e8f7a"},
        {"/usr/lib/x86_64-linux-gnu/libcudart.so.13", 0x7ffff7a00000, ""},
    };
    // address, module, module_offset, function, file, line
    s.frames = {
        {0x7ffff7a12345, 1, 0x12345, "cudaMalloc", "", 0},
        {0x555555555234, 0, 0x1234, "make_buffer(unsigned long)", "/src/train.cpp", 42},
        {0x555555555678, 0, 0x1678, "main", "/src/train.cpp", 90},
        {0x555555556abc, 0, 0x2abc, "load_weights(char const*)", "/src/model.cpp", 17},
        {0x555555557000, 0, 0x3000, "worker_thread()", "", 0},
        {0x7fffe0001000, -1, 0, "", "", 0},
        {0x555555555240, 0, 0x1240, "make_buffer(unsigned long)", "/src/train.cpp", 42},
    };
    s.stacks = {
        {1, {0, 1, 2}, 1},
        {2, {0, 3, 2}, 1},
        {3, {0, 4}, 1},
        {4, {0}, -1},
        {5, {0, 6, 2}, 1},
        {6, {5}, 0},
    };
    // address, size, kind, device, api, stream, thread_id, time_ns, stack
    s.allocations = {
        {0x7f0000000000, 2097152, "device", 0, "cudaMalloc", 0, 4242, 1000000, 1},
        {0x7f0000200000, 2097152, "device", 0, "cudaMalloc", 0, 4242, 2000000, 5},
        {0x7f0000400000, 512, "device", 0, "cudaMalloc", 0, 4242, 3000000, 1},
        {0x7f0010000000, 8388608, "managed", 0, "cudaMallocManaged", 0, 4243, 4000000, 2},
        {0x7f0020000000, 1048576, "device", 1, "cudaMallocAsync", 0x5555deadbeef, 4243, 5000000, 2},
        {0x7f00aa000000, 65536, "host_pinned", -1, "cudaMallocHost", 0, 4244, 6000000, 3},
        {0x7f00ab000000, 4096, "host_pinned", -1, "cudaHostAlloc", 0, 4244, 7000000, 0},
        {0x7f0030000000, 3145728, "device", 1, "cuMemAlloc_v2", 0, 4242, 8000000, 4},
        {0x7f0040000000, 1000, "device", 0, "cudaMalloc", 0, 4242, 9000000, 6},
    };
    return s;
}

// The example of docs/snapshot-format.md, as a Snapshot.
inline Snapshot doc_example_snapshot() {
    Snapshot s;
    ProcessInfo &p = s.process;
    p.pid = 4242;
    p.ppid = 4200;
    p.command_line = {"./train", "--epochs", "3"};
    p.executable = "/home/me/train";
    p.host = "node17";
    p.start_time_ns = 1764466245000000000ull;
    p.dump_time_ns = 1764466250000000000ull;
    p.driver_version = 13000;
    p.reason = "exit";
    p.vramtrace_version = "0.1.0";
    p.stack_depth = 32;
    s.devices = {{0, 1048576, 4194304, 7, 6, 9437184, 8388608}};
    s.modules = {
        {"/home/me/train", 0x5581c0000000, "3b1f5c2a9d0e4f6a8b7c6d5e4f3a2b1c0d9e8f7a"},
        {"/usr/lib/x86_64-linux-gnu/libcudart.so.13", 0x7f3b10000000, ""},
    };
    s.frames = {
        {0x7f3b10045a10, 1, 0x45a10, "cudaMalloc", "", 0},
        {0x5581c0001234, 0, 0x1234, "make_buffer(unsigned long)", "/src/train.cpp", 42},
        {0x5581c0001890, 0, 0x1890, "main", "/src/train.cpp", 97},
    };
    s.stacks = {{1, {0, 1, 2}, 1}};
    s.allocations = {{0x7f3a00000000, 1048576, "device", 0, "cudaMalloc", 0, 4242, 123456789, 1}};
    // Added within schema 1.
    p.dump_monotonic_ns = 130456789;
    p.rank = "0";
    s.devices[0].uuid = "GPU-8d3c6f2a-1b4e-4c5d-9e8f-7a6b5c4d3e2f";
    s.devices[0].pci_bus_id = "0000:3b:00.0";
    s.devices[0].total_memory_bytes = 85899345920ull;
    s.devices[0].process_used_bytes = 541065216ull;
    s.frames[1].inlined = {{"fill(float*, unsigned long)", "/src/util.h", 12}};
    s.stacks.push_back({2, {0, 2}, 1});
    s.oom_count = 1;
    s.peaks = {{0, 4194304, 120000000, {{2, 3145728, 1}, {1, 1048576, 1}}}};
    s.ooms = {{125000000, 0, 8589934592ull, "cudaMalloc", 0, 2, 4242, 2, 3221225472ull, 85899345920ull, 1048576}};
    s.pools = {{0x5581c1000000, 0, true, 2097152, 0, 4194304, 3145728}};
    s.events.capacity = 65536;
    s.events.recorded = 4;
    s.events.wrapped = false;
    s.events.complete_from_ns = 100000000;
    s.events.events = {
        {"mark", 110000000, -2, 0, 0, "", "", 0, 4242, "epoch 1"},
        {"alloc", 120000000, 0, 0x7f3a00200000, 3145728, "device", "cudaMalloc", 2, 4242, ""},
        {"free", 121000000, 0, 0x7f3a00200000, 3145728, "device", "cudaFree", 2, 4242, ""},
        {"oom", 125000000, 0, 0, 8589934592ull, "", "cudaMalloc", 2, 4242, ""},
    };
    return s;
}

inline std::string read_file(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// A directory removed (with its files) at the end of the test.
class TempDir {
public:
    TempDir() {
        std::string pattern = (std::filesystem::temp_directory_path() / "vt-report-XXXXXX").string();
        if (::mkdtemp(pattern.data())) path_ = pattern;
    }
    ~TempDir() {
        std::error_code ec;
        if (!path_.empty()) std::filesystem::remove_all(path_, ec);
    }
    TempDir(const TempDir &) = delete;
    TempDir &operator=(const TempDir &) = delete;
    std::string file(const std::string &name) const { return path_ + "/" + name; }
    std::string write(const std::string &name, const std::string &content) const {
        std::ofstream(file(name), std::ios::binary) << content;
        return file(name);
    }

private:
    std::string path_;
};

// The JSON the snapshot writer makes of s, through a file as the library writes it.
inline std::string snapshot_json(const vramtrace::snapshot::Snapshot &s) {
    TempDir dir;
    int fd = ::open(dir.file("s.json").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    REQUIRE(fd >= 0);
    REQUIRE(vramtrace::snapshot::write_snapshot_json(s, fd, nullptr));
    ::close(fd);
    return read_file(dir.file("s.json"));
}

} // namespace vt_test
