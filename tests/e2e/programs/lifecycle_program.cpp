// Process life cycle under the preload library, on the stand-in CUDA runtime. One program, several
// modes (argv[1]); each prints the "expect-live" oracle lines for what it leaves live. Lines of
// other processes it starts are prefixed "child <pid> " so the test can tell whose they are.
//
//   fork          leaks one buffer, then forks three children: one that uses CUDA (leaks one buffer
//                 of its own, frees one of the parent's), one that exits without touching CUDA, one
//                 that only execs /bin/true
//   spawn         leaks one buffer, then fork+execs itself in mode exec-child (which leaks one)
//   exec-child    prints its LD_PRELOAD, leaks one buffer
//   exit-threads  leaks one buffer, then exit(0) while 4 threads still allocate and free 12345 bytes
//   exit-signal   leaks one buffer; a thread keeps allocating and freeing 12345 bytes while another
//                 sends SIGUSR1 to the main thread, whose handler calls exit(7)
//   underscore-exit  leaks one buffer, then _exit(3)
#include <cuda_runtime_api.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <pthread.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "expect_live.h"

namespace {

constexpr size_t kChurnBytes = 12345;
std::atomic<int> g_threads_running{0};
pthread_t g_main_thread;

void print_child_expect_live(size_t bytes, const char *api, const char *function, int line) {
    std::printf("child %d ", static_cast<int>(getpid()));
    print_expect_live(bytes, api, 0, function, __FILE__, line);
}

int wait_status(pid_t pid) {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

} // namespace

STANDIN_NOINLINE void *leak_in_parent(size_t bytes, int *line) {
    void *p = nullptr;
    *line = __LINE__; if (cudaMalloc(&p, bytes) != cudaSuccess) std::exit(20);
    return p;
}

STANDIN_NOINLINE void child_uses_cuda(void *parents_buffer) {
    void *kept = nullptr, *temp = nullptr;
    const int line = __LINE__; if (cudaMalloc(&kept, 3u << 20) != cudaSuccess) _exit(21);
    if (cudaMalloc(&temp, 4096) != cudaSuccess || cudaFree(temp) != cudaSuccess) _exit(22);
    // The parent's allocation, freed in the child: the driver decides; the child's report does not
    // count it (it was never the child's).
    cudaFree(parents_buffer);
    print_child_expect_live(3u << 20, "cudaMalloc", "child_uses_cuda", line);
    std::fflush(stdout);
    std::exit(0);
}

STANDIN_NOINLINE void churn_forever() {
    g_threads_running.fetch_add(1);
    for (;;) {
        void *p = nullptr;
        if (cudaMalloc(&p, kChurnBytes) == cudaSuccess) cudaFree(p);
    }
}

STANDIN_NOINLINE void exec_child() {
    const char *preload = std::getenv("LD_PRELOAD");
    std::printf("child %d ld_preload=%s\n", static_cast<int>(getpid()), preload ? preload : "(unset)");
    void *kept = nullptr;
    const int line = __LINE__; if (cudaMalloc(&kept, 5u << 20) != cudaSuccess) std::exit(23);
    print_child_expect_live(5u << 20, "cudaMalloc", "exec_child", line);
}

extern "C" void exit_from_handler(int) { std::exit(7); }

int main(int argc, char **argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s MODE\n", argv[0]);
        return 2;
    }
    const char *mode = argv[1];
    if (!std::strcmp(mode, "exec-child")) {
        exec_child();
        return 0;
    }
    int line = 0;
    void *buffer = leak_in_parent(1u << 20, &line);
    // Printed first: some modes never return from main.
    print_expect_live(1u << 20, "cudaMalloc", 0, "leak_in_parent", __FILE__, line);
    std::fflush(stdout);

    if (!std::strcmp(mode, "fork")) {
        pid_t with_cuda = fork();
        if (with_cuda == 0) child_uses_cuda(buffer);
        pid_t quiet = fork();
        if (quiet == 0) {
            std::printf("child %d exits without CUDA\n", static_cast<int>(getpid()));
            std::exit(0);
        }
        pid_t execs = fork();
        if (execs == 0) {
            execl("/bin/true", "true", static_cast<char *>(nullptr));
            _exit(127);
        }
        int a = wait_status(with_cuda), b = wait_status(quiet), c = wait_status(execs);
        std::printf("children exit statuses: %d %d %d\n", a, b, c);
        return a == 0 && b == 0 && c == 0 ? 0 : 1;
    }
    if (!std::strcmp(mode, "spawn")) {
        pid_t child = fork();
        if (child == 0) {
            execl("/proc/self/exe", argv[0], "exec-child", static_cast<char *>(nullptr));
            _exit(127);
        }
        int status = wait_status(child);
        std::printf("child exit status: %d\n", status);
        return status;
    }
    if (!std::strcmp(mode, "exit-threads")) {
        for (int i = 0; i < 4; ++i) std::thread(churn_forever).detach();
        while (g_threads_running.load() < 4) usleep(1000);
        usleep(50 * 1000);
        std::exit(0); // the other threads are still in cudaMalloc/cudaFree
    }
    if (!std::strcmp(mode, "exit-signal")) {
        g_main_thread = pthread_self();
        struct sigaction sa {};
        sa.sa_handler = exit_from_handler;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGUSR1, &sa, nullptr);
        std::thread(churn_forever).detach();
        std::thread([] {
            while (g_threads_running.load() < 1) usleep(1000);
            usleep(30 * 1000);
            pthread_kill(g_main_thread, SIGUSR1);
        }).detach();
        for (;;) pause();
    }
    if (!std::strcmp(mode, "underscore-exit")) _exit(3);
    std::fprintf(stderr, "unknown mode %s\n", mode);
    return 2;
}
