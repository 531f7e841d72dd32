/* A library that installs its own SIGSEGV handler from its constructor, as a library loaded with
 * the program can: the dynamic linker runs the constructors of the program's DT_NEEDED libraries
 * before those of LD_PRELOAD'ed ones, so this handler is in place BEFORE vramtrace's (which then
 * keeps it as the previous action and must chain to it). Only when CRASH_EARLY_HANDLER=1.
 * The handler says so on stdout, puts back the default action and returns: the faulting
 * instruction runs again and the process ends by SIGSEGV. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void early_handler(int sig, siginfo_t *info, void *context) {
  (void)info;
  (void)context;
  static const char kLine[] = "early-handler ran\n";
  ssize_t ignored = write(STDOUT_FILENO, kLine, sizeof kLine - 1);
  (void)ignored;
  signal(sig, SIG_DFL);
}

__attribute__((constructor)) static void install_early_handler(void) {
  const char *on = getenv("CRASH_EARLY_HANDLER");
  if (on == NULL || strcmp(on, "1") != 0) return;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = early_handler;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGSEGV, &sa, NULL);
}

/* Referenced by the program so that the library stays linked. */
int crash_early_handler_linked(void) { return 1; }
