// For test_host_umask.cpp: the library must never change the process's umask, not even for an
// instant (a host thread creating a file then would get vramtrace's mode instead of its own).
//   umask_program SOCKET_DIR FILES_DIR ROUNDS
// Run under umask 022. ROUNDS times, a forked child (a fresh start of the library's per-process
// state: its first allocation starts the reporter and the live server) runs a thread that
// creates files in FILES_DIR in a loop, checking each one's mode is 0644, while the child's main
// thread makes its first cudaMalloc and waits until its socket SOCKET_DIR/PID.sock exists. Then
// the parent goes through the other start-up paths itself: its own first allocation (socket,
// whose mode must be 0600 once it accepts connections; reporter; crash handler), an OOM (its snapshot written by the reporter), vramtrace_dump and the
// first Prometheus textfile (VRAMTRACE_PROMETHEUS_TEXTFILE, waited for). The umask is read from
// /proc/self/status (reading it through umask() would change it) at main and after each path.
// Prints one line per check; exits 0 when it could run every check (the test compares the lines).
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include <cuda_runtime_api.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vramtrace/vramtrace.h>

namespace {

// The umask from /proc/self/status ("Umask:\t0022"), -1 when it cannot be read.
int current_umask() {
    FILE *f = fopen("/proc/self/status", "r");
    if (f == nullptr) return -1;
    char line[256];
    int mask = -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "Umask:", 6) == 0) mask = int(strtol(line + 6, nullptr, 8));
    fclose(f);
    return mask;
}

// Waits up to 10 s for path to exist.
bool wait_for(const std::string &path) {
    struct stat st;
    for (int i = 0; i < 200000; ++i) {
        if (stat(path.c_str(), &st) == 0) return true;
        usleep(50);
    }
    return false;
}

// Waits up to 10 s until the socket at path accepts a connection (the server listens).
bool wait_until_listening(const std::string &path) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (path.size() >= sizeof addr.sun_path) return false;
    memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    for (int i = 0; i < 10000; ++i) {
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        bool up = fd >= 0 && connect(fd, reinterpret_cast<sockaddr *>(&addr), sizeof addr) == 0;
        if (fd >= 0) close(fd);
        if (up) return true;
        usleep(1000);
    }
    return false;
}

// Exit codes of a round's child (bits).
constexpr int kWrongMode = 1, kUmaskChanged = 2, kNoSocket = 4, kNoFile = 8;

int one_round(const std::string &socket_dir, const std::string &files_dir) {
    int result = 0;
    if (current_umask() != 022) result |= kUmaskChanged; // after the library's fork handlers
    std::atomic<bool> stop{false};
    std::atomic<int> created{0}, wrong{0};
    std::string prefix = files_dir + "/f-" + std::to_string(getpid()) + "-";
    std::thread creator([&] {
        for (int k = 0; !stop.load(std::memory_order_relaxed); ++k) {
            std::string name = prefix + std::to_string(k);
            int fd = open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
            if (fd < 0) continue;
            struct stat st;
            if (fstat(fd, &st) != 0 || (st.st_mode & 07777) != 0644) wrong.fetch_add(1);
            close(fd);
            unlink(name.c_str());
            created.fetch_add(1, std::memory_order_release);
        }
    });
    while (created.load(std::memory_order_acquire) == 0) usleep(10);
    void *p = nullptr;
    if (cudaMalloc(&p, 1 << 20) != cudaSuccess) result |= kNoSocket;
    else if (!wait_for(socket_dir + "/" + std::to_string(getpid()) + ".sock")) result |= kNoSocket;
    stop.store(true);
    creator.join();
    if (wrong.load() != 0) result |= kWrongMode;
    if (current_umask() != 022) result |= kUmaskChanged;
    return result;
}

} // namespace

int main(int argc, char **argv) {
    if (argc < 4) return 2;
    std::string socket_dir = argv[1], files_dir = argv[2];
    int rounds = atoi(argv[3]);
    printf("umask-at-main %04o\n", current_umask());

    int counts[4] = {0, 0, 0, 0}; // wrong mode, umask changed, no socket, no child
    for (int r = 0; r < rounds; ++r) {
        fflush(stdout);
        pid_t child = fork();
        if (child == 0) _exit(one_round(socket_dir, files_dir)); // _exit: no snapshot per round
        int status = 0;
        if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status)) {
            ++counts[3];
            continue;
        }
        for (int bit = 0; bit < 3; ++bit) counts[bit] += (WEXITSTATUS(status) >> bit) & 1;
        unlink((socket_dir + "/" + std::to_string(child) + ".sock").c_str()); // left by _exit
    }
    printf("rounds %d wrong-modes %d umask-changed %d no-socket %d failed %d\n", rounds, counts[0], counts[1],
           counts[2], counts[3]);

    void *p = nullptr;
    std::string socket = socket_dir + "/" + std::to_string(getpid()) + ".sock";
    struct stat st {};
    // Its mode once anyone can connect (bind makes the path a moment before its mode is set).
    bool served = cudaMalloc(&p, 2 << 20) == cudaSuccess && wait_until_listening(socket) &&
                  stat(socket.c_str(), &st) == 0;
    printf("umask-after-first-allocation %04o, socket %s\n", current_umask(),
           served ? (S_ISSOCK(st.st_mode) && (st.st_mode & 07777) == 0600 ? "0600" : "not 0600") : "missing");
    void *too_big = nullptr;
    bool oom = cudaMalloc(&too_big, size_t(64) << 30) != cudaSuccess;
    const char *oom_file = getenv("OOM_SNAPSHOT");
    bool oom_written = oom && oom_file != nullptr && wait_for(oom_file);
    printf("umask-after-oom-snapshot %04o%s\n", current_umask(), oom_written ? "" : " (no OOM snapshot)");
    std::string dumped = files_dir + "/dump.json";
    bool dump_ok = vramtrace_dump(dumped.c_str()) == 0;
    printf("umask-after-dump %04o%s\n", current_umask(), dump_ok ? "" : " (dump failed)");
    const char *prom = getenv("VRAMTRACE_PROMETHEUS_TEXTFILE");
    bool prom_written = prom != nullptr && wait_for(prom);
    printf("umask-after-prometheus %04o%s\n", current_umask(), prom_written ? "" : " (no textfile)");
    cudaFree(p);
    return 0;
}
