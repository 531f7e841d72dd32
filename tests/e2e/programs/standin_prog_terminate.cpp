// How a terminating signal ends a traced program (tests/e2e/termination_test.sh).
//   standin_prog_terminate MODE READY_FILE
// Holds 4 MiB (hold_params) and 2 MiB (hold_cache) and prints their expect-live lines, prints the
// dispositions it sees ("seen ..." lines, identical traced and untraced), writes its pid to
// READY_FILE, then
// waits for a signal (at most 30 s) and exits 0. MODE:
//   default       nothing more (SIGINT, SIGTERM, ... keep SIG_DFL)
//   handler-exit  a SIGTERM handler installed after the first CUDA call; the program prints
//                 "handler-ran N" and exits 0 when it has run
//   ignore        SIGTERM set to SIG_IGN after the first CUDA call; the program waits 1 s after
//                 READY_FILE, prints "still-running" and exits 0
//   many          like default, with 2,000 more live allocations of 4 KiB (a snapshot larger than
//                 a pipe's buffer; their expect-live lines are not printed; STANDIN_TERMINATE_EXTRA
//                 sets the count, for bench/signal_report_time.sh)
//   restore       SIGINT handled by the program before CUDA, then set back to SIG_DFL with
//                 signal() after it (as Python does at its exit)
#include <cuda_runtime_api.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <time.h>
#include <unistd.h>

#include "expect_live.h"

namespace {

volatile sig_atomic_t g_handler_calls = 0;
void on_term(int) { g_handler_calls = g_handler_calls + 1; }
void on_int_early(int) {}

void sleep_ms(long ms) {
  timespec ts{ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, nullptr);
}

// What sigaction() answers for SIGNO: handler kind, flags and whether SIGNO is in the mask.
void print_seen(const char* when, int signo) {
  struct sigaction now;
  std::memset(&now, 0, sizeof now);
  int rc = sigaction(signo, nullptr, &now);
  const char* kind = (now.sa_flags & SA_SIGINFO)        ? "siginfo"
                     : now.sa_handler == SIG_DFL        ? "default"
                     : now.sa_handler == SIG_IGN        ? "ignore"
                                                        : "handler";
  std::printf("seen %s %d rc=%d %s flags=0x%x self-masked=%d\n", when, signo, rc, kind,
              static_cast<unsigned>(now.sa_flags), sigismember(&now.sa_mask, signo));
}

}  // namespace

static STANDIN_NOINLINE void* hold_params() {
  void* p = nullptr;
  if (cudaMalloc(&p, 4 << 20) != cudaSuccess) std::exit(1);
  print_expect_live(4 << 20, "cudaMalloc", 0, "hold_params", __FILE__, __LINE__ - 1);
  return p;
}

static STANDIN_NOINLINE void* hold_cache() {
  void* p = nullptr;
  if (cudaMalloc(&p, 2 << 20) != cudaSuccess) std::exit(1);
  print_expect_live(2 << 20, "cudaMalloc", 0, "hold_cache", __FILE__, __LINE__ - 1);
  return p;
}

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  const std::string mode = argv[1];
  if (mode == "restore") signal(SIGINT, &on_int_early);
  void* params = hold_params();
  void* cache = hold_cache();
  // many: more allocations of 4 KiB (2,000, or STANDIN_TERMINATE_EXTRA), so that the snapshot is
  // larger than a pipe's buffer, or as large as a benchmark wants it.
  const char* extra_text = std::getenv("STANDIN_TERMINATE_EXTRA");
  const long extra = extra_text != nullptr ? std::atol(extra_text) : 2000;
  if (mode == "many")
    for (long i = 0; i < extra; ++i) {
      void* p = nullptr;
      if (cudaMalloc(&p, 4096) != cudaSuccess) return 1;
    }
  print_seen("after-cuda", SIGTERM);
  print_seen("after-cuda", SIGINT);
  if (mode == "handler-exit") {
    sighandler_t before = signal(SIGTERM, &on_term);
    std::printf("seen signal-returned %s\n", before == SIG_DFL ? "default" : "other");
  } else if (mode == "ignore") {
    signal(SIGTERM, SIG_IGN);
  } else if (mode == "restore") {
    sighandler_t before = signal(SIGINT, SIG_DFL);
    std::printf("seen signal-returned %s\n", before == &on_int_early ? "program-handler" : "other");
    print_seen("restored", SIGINT);
  }
  print_seen("final", SIGTERM);
  std::fflush(stdout);
  // The ready file holds the pid, written whole before the file has its final name.
  std::string ready = argv[2];
  std::string temp = ready + ".tmp";
  if (FILE* f = std::fopen(temp.c_str(), "w")) {
    std::fprintf(f, "%ld\n", static_cast<long>(getpid()));
    std::fclose(f);
    std::rename(temp.c_str(), ready.c_str());
  }
  if (mode == "ignore") {
    sleep_ms(1000);
    std::printf("still-running\n");
    return 0;
  }
  for (int i = 0; i < 3000 && g_handler_calls == 0; ++i) sleep_ms(10);
  if (mode == "handler-exit") std::printf("handler-ran %d\n", static_cast<int>(g_handler_calls));
  (void)params;
  (void)cache;
  return 0;
}
