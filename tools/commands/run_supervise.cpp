#include "commands/run_supervise.h"

#include <cerrno>
#include <ctime>
#include <sys/wait.h>
#include <vector>

#include "commands/run_verdict.h"

namespace vramtrace::cli {
namespace {

constexpr int kPassedOn[] = {SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGXCPU, SIGALRM};
constexpr long kForwardDelayNs = 100'000'000;

long long now_ns() {
    timespec ts {};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<long long>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

struct Held {
    int sig;
    long long due_ns;
};

} // namespace

sigset_t supervised_signals() {
    sigset_t set;
    sigemptyset(&set);
    for (int s : kPassedOn) sigaddset(&set, s);
    sigaddset(&set, SIGCHLD);
    return set;
}

bool supervise(pid_t pid, const std::string &notes_dir, int *status) {
    const sigset_t watched = supervised_signals();
    std::vector<Held> held;
    for (;;) {
        pid_t done = ::waitpid(pid, status, WNOHANG);
        if (done == pid) return true;
        if (done < 0 && errno != EINTR) return false;
        long long now = now_ns();
        for (size_t i = 0; i < held.size();) {
            if (held[i].due_ns > now) {
                ++i;
                continue;
            }
            if (!take_signal_note(notes_dir, pid)) ::kill(pid, held[i].sig);
            held.erase(held.begin() + long(i));
        }
        long long wait_ns = 100'000'000;
        for (const Held &h : held)
            if (h.due_ns - now < wait_ns) wait_ns = h.due_ns - now > 0 ? h.due_ns - now : 0;
        timespec ts{static_cast<time_t>(wait_ns / 1'000'000'000), static_cast<long>(wait_ns % 1'000'000'000)};
        siginfo_t info {};
        int sig = ::sigtimedwait(&watched, &info, &ts);
        if (sig <= 0 || sig == SIGCHLD) continue;
        if ((sig == SIGINT || sig == SIGQUIT) && info.si_code == SI_KERNEL) continue;
        held.push_back({sig, now_ns() + kForwardDelayNs});
    }
}

} // namespace vramtrace::cli
