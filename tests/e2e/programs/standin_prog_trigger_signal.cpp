// The snapshot signal (VRAMTRACE_SIGNAL) as a program sees it (tests/e2e/test_triggers.cpp).
//   standin_prog_trigger_signal MODE SIGNO WAIT_FILE
// Holds 4 MiB (hold_before), sends itself SIGNO, waits up to 10 s for WAIT_FILE ("-": does not
// wait), then allocates 2 MiB more (hold_after) and exits 0: the signal snapshot must list exactly
// the first buffer, the exit snapshot both. MODE says what the program does with SIGNO itself:
//   plain          nothing (the disposition was SIG_DFL)
//   chain-before   installs an SA_SIGINFO handler before its first CUDA call (chained by vramtrace)
//   handler-after  installs a plain handler after its first CUDA call (replacing vramtrace's)
//   ignored        sets SIG_IGN before its first CUDA call
// It prints "program-handler <calls> <si_signo> <si_pid-is-self>" after the wait.
#include <cuda_runtime_api.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "expect_live.h"

namespace {

volatile sig_atomic_t handler_calls = 0;
volatile sig_atomic_t handler_signo = 0;
volatile sig_atomic_t handler_pid_is_self = 0;

void on_siginfo(int signo, siginfo_t* info, void*) {
  handler_calls = handler_calls + 1;
  handler_signo = info != nullptr ? info->si_signo : -1;
  handler_pid_is_self = info != nullptr && info->si_pid == getpid();
  (void)signo;
}

void on_plain(int signo) {
  handler_calls = handler_calls + 1;
  handler_signo = signo;
}

}  // namespace

// Outside the anonymous namespace: the call sites are named plainly in the reports.
static STANDIN_NOINLINE void* hold_before() {
  void* p = nullptr;
  if (cudaMalloc(&p, 4 << 20) != cudaSuccess) std::exit(1);
  print_expect_live(4 << 20, "cudaMalloc", 0, "hold_before", __FILE__, __LINE__ - 1);
  return p;
}

static STANDIN_NOINLINE void* hold_after() {
  void* p = nullptr;
  if (cudaMalloc(&p, 2 << 20) != cudaSuccess) std::exit(1);
  print_expect_live(2 << 20, "cudaMalloc", 0, "hold_after", __FILE__, __LINE__ - 1);
  return p;
}

bool wait_for(const char* path) {
  struct stat st;
  for (int i = 0; i < 1000; ++i) {
    if (stat(path, &st) == 0) return true;
    timespec ten_ms{0, 10 * 1000 * 1000};
    nanosleep(&ten_ms, nullptr);
  }
  return false;
}



int main(int argc, char** argv) {
  if (argc != 4) return 2;
  const std::string mode = argv[1];
  const int signo = std::atoi(argv[2]);
  const char* wait_file = argv[3];
  if (mode == "chain-before") {
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = &on_siginfo;
    sa.sa_flags = SA_SIGINFO;
    sigaction(signo, &sa, nullptr);
  } else if (mode == "ignored") {
    signal(signo, SIG_IGN);
  }
  void* before = hold_before();
  if (mode == "handler-after") signal(signo, &on_plain);
  std::fflush(stdout);
  kill(getpid(), signo);
  bool appeared = std::strcmp(wait_file, "-") == 0 || wait_for(wait_file);
  std::printf("program-handler %d %d %d\n", static_cast<int>(handler_calls), static_cast<int>(handler_signo),
              static_cast<int>(handler_pid_is_self));
  std::printf("wait-file %s\n", appeared ? "appeared" : "absent");
  void* after = hold_after();
  (void)before;
  (void)after;
  return 0;
}
