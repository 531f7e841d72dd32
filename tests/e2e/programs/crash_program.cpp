// Allocates known buffers through the shared runtime, prints their expect-live lines, then dies by
// a fatal signal: the crash snapshot must list exactly those allocations, and the process must end
// exactly as it does without vramtrace.
// Usage: standin_prog_crash MODE
//   segv           NULL dereference (SIGSEGV raised by the kernel)
//   abort          abort() (SIGABRT sent to itself)
//   fpe            integer division by zero (SIGFPE raised by the kernel)
//   chain-in-main  installs its own SIGSEGV handler in main (after vramtrace's), which prints
//                  "program-handler ran" and calls the previous action (vramtrace's, or the
//                  default), then NULL dereference
//   disposition    prints "sigsegv-disposition default|handler" (the action in force in main),
//                  then NULL dereference
// With CRASH_EARLY_HANDLER=1, crash_early_handler.c installs a SIGSEGV handler before vramtrace.
// With CRASH_AFTER_FILE=PATH, it waits (up to 10 s) until PATH holds the text CRASH_AFTER_TEXT
// before dying (a Prometheus textfile reading taken after every allocation:
// tests/e2e/test_prometheus_lifecycle.cpp).
#include <cuda_runtime_api.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

#include "expect_live.h"

extern "C" int crash_early_handler_linked(void);

namespace {

void check(cudaError_t rc, const char *what) {
  if (rc != cudaSuccess) {
    std::fprintf(stderr, "standin_prog_crash: %s failed: %d\n", what, static_cast<int>(rc));
    std::exit(1);
  }
}

STANDIN_NOINLINE void allocate_weights() {
  void *p = nullptr;
  const int line = __LINE__; check(cudaMalloc(&p, 1u << 20), "cudaMalloc");
  print_expect_live(1u << 20, "cudaMalloc", 0, __func__, __FILE__, line);
}

STANDIN_NOINLINE void allocate_scratch() {
  void *freed = nullptr, *kept = nullptr;
  check(cudaMalloc(&freed, 5u << 20), "cudaMalloc");
  const int line = __LINE__; check(cudaMalloc(&kept, 3u << 20), "cudaMalloc");
  check(cudaFree(freed), "cudaFree");
  print_expect_live(3u << 20, "cudaMalloc", 0, __func__, __FILE__, line);
}

STANDIN_NOINLINE void stage_host() {
  void *p = nullptr;
  const int line = __LINE__; check(cudaMallocHost(&p, 65536), "cudaMallocHost");
  print_expect_live(65536, "cudaMallocHost", -1, __func__, __FILE__, line);
}

struct sigaction g_previous;

void program_handler(int sig, siginfo_t *info, void *context) {
  static const char kLine[] = "program-handler ran\n";
  ssize_t ignored = write(STDOUT_FILENO, kLine, sizeof kLine - 1);
  (void)ignored;
  if (g_previous.sa_flags & SA_SIGINFO) {
    g_previous.sa_sigaction(sig, info, context);
  } else if (g_previous.sa_handler == SIG_DFL || g_previous.sa_handler == SIG_IGN) {
    signal(sig, SIG_DFL); // returning runs the faulting instruction again: the default action
  } else {
    g_previous.sa_handler(sig);
  }
}

// Read through a volatile so that the compiler cannot see the null and drop the store.
int *volatile g_null_pointer = nullptr;
STANDIN_NOINLINE void crash_by_null_pointer() { *g_null_pointer = 42; }

volatile int g_zero = 0;
STANDIN_NOINLINE int divide_by_zero(int a) { return a / g_zero; }

bool file_holds(const char *path, const char *text) {
  FILE *f = std::fopen(path, "r");
  if (f == nullptr) return false;
  static char buf[1 << 16];
  size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  buf[n] = 0;
  return std::strstr(buf, text) != nullptr;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s segv|abort|fpe|chain-in-main|disposition\n", argv[0]);
    return 2;
  }
  const char *mode = argv[1];
  crash_early_handler_linked();
  if (std::strcmp(mode, "disposition") == 0) {
    struct sigaction current;
    sigaction(SIGSEGV, nullptr, &current);
    bool is_default = !(current.sa_flags & SA_SIGINFO) && current.sa_handler == SIG_DFL;
    std::printf("sigsegv-disposition %s\n", is_default ? "default" : "handler");
  }
  if (std::strcmp(mode, "chain-in-main") == 0) {
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = program_handler;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &g_previous);
  }
  check(cudaSetDevice(0), "cudaSetDevice");
  allocate_weights();
  allocate_scratch();
  stage_host();
  std::fflush(stdout);
  if (const char *wait_for = std::getenv("CRASH_AFTER_FILE")) {
    const char *text = std::getenv("CRASH_AFTER_TEXT");
    for (int i = 0; i < 1000 && !file_holds(wait_for, text ? text : ""); ++i) usleep(10000);
  }
  if (std::strcmp(mode, "abort") == 0) std::abort();
  if (std::strcmp(mode, "fpe") == 0) return divide_by_zero(1);
  crash_by_null_pointer();
  std::printf("still alive\n");
  return 0;
}
