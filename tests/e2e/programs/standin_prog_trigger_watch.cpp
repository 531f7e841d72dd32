// The watching triggers as a program sees them (tests/e2e/test_triggers.cpp).
//   standin_prog_trigger_watch threshold
//       device 0: 6 MiB (hold_a) + 3 MiB (hold_b), free hold_b, 4 MiB (hold_c), 1 MiB (hold_d);
//       with VRAMTRACE_WARN_BYTES=8MiB that crosses upward twice (at 9 MiB and at 10 MiB).
//   standin_prog_trigger_watch threshold-churn
//       device 0: 6 MiB (hold_a) + 3 MiB (hold_b), then at once frees hold_b and allocates and
//       frees 1 MiB (churn_once) 2,000 times, then 1 MiB (hold_d); with VRAMTRACE_WARN_BYTES=8MiB
//       that crosses upward once (at 9 MiB), while the live set keeps changing after it.
//   standin_prog_trigger_watch periodic
//       holds 2 MiB (hold_a), prints "ready", then sleeps (the test kills it with SIGKILL).
//   standin_prog_trigger_watch prometheus FILE   (each %p in FILE: this process's pid)
//       device 0: 6 MiB (hold_a) + 3 MiB (hold_b), frees hold_b; device 1: 1 MiB (hold_e);
//       so device 0 has current 6 MiB, peak 9 MiB. Waits (up to 10 s) until FILE shows
//       device 1's 1 MiB, then prints the file between "--- begin" / "--- end", "mode <octal>"
//       and "returning-at-ns <CLOCK_MONOTONIC ns>" as main returns.
//   standin_prog_trigger_watch serve DIR   (tests/e2e/prometheus/prometheus_e2e.py)
//       device 0: 6 MiB (hold_a), 4 MiB (hold_c), 1 MiB (hold_d); device 1: 1 MiB (hold_e) and
//       1 MiB from the default pool (hold_from_pool: 2 MiB reserved); prints
//       "ready PID"; when DIR/oom-PID appears, asks for 64 MiB more on device 0 (fails with
//       out-of-memory on a 64 MiB stand-in device) and prints "oom"; when DIR/exit-PID appears,
//       exits 0. Gives up after 120 s (exit 1).
// Every live allocation is printed as an expect-live line.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "expect_live.h"

namespace {

constexpr size_t kMiB = 1 << 20;

}  // namespace

// Outside the anonymous namespace: the call sites are named plainly in the reports.
#define HOLD(name, bytes, device)                                                        \
  static STANDIN_NOINLINE void* name(bool print) {                                              \
    void* p = nullptr;                                                                   \
    if (cudaSetDevice(device) != cudaSuccess || cudaMalloc(&p, bytes) != cudaSuccess) std::exit(1); \
    if (print) print_expect_live(bytes, "cudaMalloc", device, #name, __FILE__, __LINE__); \
    return p;                                                                            \
  }
HOLD(hold_a, 6 * kMiB, 0)
HOLD(hold_b, 3 * kMiB, 0)
HOLD(hold_c, 4 * kMiB, 0)
HOLD(hold_d, 1 * kMiB, 0)
HOLD(hold_e, 1 * kMiB, 1)
#undef HOLD

// One allocation and its free on device 0, after the threshold crossing of mode threshold-churn.
static STANDIN_NOINLINE void churn_once() {
  void* p = nullptr;
  if (cudaMalloc(&p, kMiB) != cudaSuccess || cudaFree(p) != cudaSuccess) std::exit(1);
}

// From device 1's default stream-ordered pool, which reserves it rounded up to 2 MiB.
static STANDIN_NOINLINE void* hold_from_pool(bool print) {
  void* p = nullptr;
  if (cudaSetDevice(1) != cudaSuccess || cudaMallocAsync(&p, kMiB, nullptr) != cudaSuccess ||
      cudaStreamSynchronize(nullptr) != cudaSuccess)
    std::exit(1);
  if (print) print_expect_live(kMiB, "cudaMallocAsync", 1, "hold_from_pool", __FILE__, __LINE__ - 3);
  return p;
}

void sleep_ms(long ms) {
  timespec ts{ms / 1000, (ms % 1000) * 1000 * 1000};
  nanosleep(&ts, nullptr);
}

std::string read_file(const char* path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}



int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const std::string mode = argv[1];
  if (mode == "threshold") {
    hold_a(true);
    void* b = hold_b(false);
    cudaFree(b);
    hold_c(true);
    hold_d(true);
    return 0;
  }
  if (mode == "threshold-churn") {
    hold_a(true);
    void* b = hold_b(false);
    cudaFree(b);
    for (int i = 0; i < 2000; ++i) churn_once();
    hold_d(true);
    return 0;
  }
  if (mode == "periodic") {
    hold_a(true);
    std::printf("ready\n");
    std::fflush(stdout);
    for (int i = 0; i < 300; ++i) sleep_ms(100);
    return 1;
  }
  if (mode == "prometheus" && argc == 3) {
    std::string path = argv[2];  // "%p" stands for this process's pid
    for (size_t at = path.find("%p"); at != std::string::npos; at = path.find("%p", at))
      path.replace(at, 2, std::to_string(getpid()));
    hold_a(true);
    void* b = hold_b(false);
    cudaFree(b);
    hold_e(true);
    std::string text;
    for (int i = 0; i < 1000; ++i) {
      text = read_file(path.c_str());
      // Device 1's row with hold_e's bytes: a reading taken while hold_e's cudaMalloc ran can
      // already list the device (its context is current) with 0 bytes.
      size_t row = text.find("vramtrace_device_current_bytes{device=\"1\"");
      size_t end = row == std::string::npos ? row : text.find('}', row);
      if (end != std::string::npos && text.compare(end, 10, "} 1048576\n") == 0) break;
      sleep_ms(10);
    }
    struct stat st;
    if (stat(path.c_str(), &st) != 0) return 1;
    std::printf("--- begin\n%s--- end\nmode %o\n", text.c_str(), static_cast<unsigned>(st.st_mode & 07777));
    // When main returns (CLOCK_MONOTONIC, ns): what the exit costs is measured from here.
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    std::printf("returning-at-ns %lld\n", static_cast<long long>(now.tv_sec) * 1000000000LL + now.tv_nsec);
    return 0;
  }
  if (mode == "serve" && argc == 3) {
    const std::string dir = argv[2];
    const std::string pid = std::to_string(getpid());
    hold_a(true);
    hold_c(true);
    hold_d(true);
    hold_e(true);
    hold_from_pool(true);
    std::printf("ready %s\n", pid.c_str());
    std::fflush(stdout);
    struct stat st;
    bool oom_done = false;
    for (int i = 0; i < 12000; ++i) {
      if (!oom_done && stat((dir + "/oom-" + pid).c_str(), &st) == 0) {
        void* p = nullptr;
        if (cudaSetDevice(0) != cudaSuccess || cudaMalloc(&p, 64 * kMiB) != cudaErrorMemoryAllocation) return 1;
        oom_done = true;
        std::printf("oom\n");
        std::fflush(stdout);
      }
      if (stat((dir + "/exit-" + pid).c_str(), &st) == 0) return 0;
      sleep_ms(10);
    }
    return 1;
  }
  return 2;
}
