#include "triggers/signal_trigger.h"

#include <cerrno>
#include <csignal>
#include <cstring>

#include "core/log.h"
#include "triggers/reporter.h"
#include "triggers/trigger_config.h"
#include "triggers/trigger_parse.h"

namespace vramtrace::triggers {
namespace {

// Written once before the handler is installed, read by the handler: plain static storage.
struct sigaction g_previous;
int g_installed_signal = 0; // 0: not installed

void on_dump_signal(int signo, siginfo_t *info, void *context) {
    int saved = errno;
    wake_reporter(kWakeSignal);
    // Chain: the previous handler runs as it would have. SIG_DFL/SIG_IGN were not chained (see
    // install_dump_signal: SIG_IGN installs nothing; SIG_DFL's action is replaced by the dump).
    if (g_previous.sa_flags & SA_SIGINFO) {
        if (g_previous.sa_sigaction != nullptr) g_previous.sa_sigaction(signo, info, context);
    } else if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN) {
        g_previous.sa_handler(signo);
    }
    errno = saved;
}

bool ours(const struct sigaction &a) {
    return (a.sa_flags & SA_SIGINFO) && a.sa_sigaction == &on_dump_signal;
}

} // namespace

void install_dump_signal() {
    const int signo = trigger_config().dump_signal;
    if (signo == 0 || g_installed_signal != 0) return;
    char name[32];
    signal_name(signo, name, sizeof name);
    struct sigaction previous;
    memset(&previous, 0, sizeof previous);
    if (sigaction(signo, nullptr, &previous) != 0) {
        log_warning("cannot read the disposition of %s (%s); snapshots on signal are off", name,
                    strerror(errno));
        return;
    }
    if (ours(previous)) { // already ours (a fork child keeps the parent's disposition)
        g_installed_signal = signo;
        return;
    }
    if (!(previous.sa_flags & SA_SIGINFO) && previous.sa_handler == SIG_IGN) {
        if (trigger_config().dump_signal_explicit)
            log_line("%s is ignored in this process (SIG_IGN); it is left ignored and requests no "
                     "snapshot (VRAMTRACE_SIGNAL)", name);
        else
            log_debug("%s is ignored in this process (SIG_IGN); snapshots on signal are off", name);
        return;
    }
    g_previous = previous;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = &on_dump_signal;
    // With SIG_DFL before: SA_RESTART, so that the program's blocking calls never see EINTR because
    // of a snapshot request. With a program handler before: its mask and its SA_RESTART, SA_ONSTACK
    // and SA_NODEFER keep their meaning (a program that relies on EINTR from its signal still gets it).
    const bool had_handler = (previous.sa_flags & SA_SIGINFO) || previous.sa_handler != SIG_DFL;
    action.sa_mask = previous.sa_mask;
    action.sa_flags = SA_SIGINFO | (had_handler ? previous.sa_flags & (SA_RESTART | SA_ONSTACK | SA_NODEFER)
                                                : SA_RESTART);
    if (sigaction(signo, &action, nullptr) != 0) {
        log_warning("cannot install the %s handler (%s); snapshots on signal are off", name, strerror(errno));
        return;
    }
    g_installed_signal = signo;
    log_debug("%s writes a snapshot (VRAMTRACE_SIGNAL)%s", name,
              had_handler ? "; the program's handler is chained"
                          : "; its default action is replaced");
}

void check_dump_signal_at_exit() {
    if (g_installed_signal == 0) return;
    struct sigaction now;
    memset(&now, 0, sizeof now);
    if (sigaction(g_installed_signal, nullptr, &now) != 0 || ours(now)) return;
    char name[32];
    signal_name(g_installed_signal, name, sizeof name);
    log_line("the program installed its own %s handler after vramtrace's: %s requested no snapshot "
             "from then on (set VRAMTRACE_SIGNAL to a signal the program does not use)", name, name);
}

} // namespace vramtrace::triggers
