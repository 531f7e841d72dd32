// fork() while other threads are inside the tracker: 4 threads allocate and free without pause
// (through a lock-free fixture driver, so the stand-in driver's lock cannot be inherited held), a
// fifth writes snapshots with vramtrace_dump in a loop, and the main thread forks CHILDREN children
// one after another. Each child allocates and frees 200 times, leaks one buffer of its own size and
// exits normally; its lines are prefixed "child <pid> ". A child that hangs is killed by alarm().
// Usage: fork_stress_program DUMP_PATH [CHILDREN]
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "expect_live.h"

typedef unsigned long long CUdeviceptr;
extern "C" int cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytes);
extern "C" int cuMemFree_v2(CUdeviceptr dptr);

namespace {
std::atomic<bool> g_stop{false};
std::atomic<int> g_running{0};
}

STANDIN_NOINLINE void churn() {
    g_running.fetch_add(1);
    while (!g_stop.load(std::memory_order_relaxed)) {
        CUdeviceptr p = 0;
        if (cuMemAlloc_v2(&p, 1000) == 0) cuMemFree_v2(p);
    }
}

STANDIN_NOINLINE void dump_loop(const char *path) {
    // The tracer's API when it is loaded, nothing otherwise.
    auto dump = reinterpret_cast<int (*)(const char *)>(dlsym(RTLD_DEFAULT, "vramtrace_dump"));
    g_running.fetch_add(1);
    while (!g_stop.load(std::memory_order_relaxed)) {
        if (dump) dump(path);
        else usleep(1000);
    }
}

STANDIN_NOINLINE void child_work(int index) {
    alarm(30);
    for (int i = 0; i < 200; ++i) {
        CUdeviceptr p = 0;
        if (cuMemAlloc_v2(&p, 512 + i) != 0 || cuMemFree_v2(p) != 0) _exit(30);
    }
    CUdeviceptr kept = 0;
    const size_t bytes = 70000 + index;
    const int line = __LINE__; if (cuMemAlloc_v2(&kept, bytes) != 0) _exit(31);
    std::printf("child %d ", static_cast<int>(getpid()));
    print_expect_live(bytes, "cuMemAlloc_v2", 0, "child_work", __FILE__, line);
    std::fflush(stdout);
    std::exit(0);
}

STANDIN_NOINLINE CUdeviceptr parent_leak(int *line) {
    CUdeviceptr p = 0;
    *line = __LINE__; if (cuMemAlloc_v2(&p, 60000) != 0) std::exit(32);
    return p;
}

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    const int children = argc > 2 ? std::atoi(argv[2]) : 20;
    std::vector<std::thread> threads;
    for (int i = 0; i < 4; ++i) threads.emplace_back(churn);
    threads.emplace_back(dump_loop, argv[1]);
    while (g_running.load() < 5) usleep(100);
    std::fflush(stdout);
    int failures = 0;
    for (int i = 0; i < children; ++i) {
        usleep(2000 + 997 * (i % 7));
        std::fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) child_work(i);
        int status = 0;
        waitpid(pid, &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            std::printf("child %d failed: status %#x\n", static_cast<int>(pid), status);
            ++failures;
        }
    }
    g_stop = true;
    for (auto &t : threads) t.join();
    int line = 0;
    parent_leak(&line);
    print_expect_live(60000, "cuMemAlloc_v2", 0, "parent_leak", __FILE__, line);
    std::printf("children failed: %d\n", failures);
    return failures == 0 ? 0 : 1;
}
