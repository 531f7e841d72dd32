// The live server (docs/live.md): each traced process serves its live state on a Unix domain
// socket, from its reporter thread (lib/triggers/reporter.cpp), which blocks in poll() on the
// listening socket, its clients and its own wake descriptor: nothing wakes while nobody connects.
//
// - Started by the reporter thread (so after the first CUDA allocation); VRAMTRACE_LIVE=0 turns it
//   off. The socket is DIR/PID.sock (live/socket_dir.h), mode 0600; a directory or socket path that
//   fails the checks there is refused with one stderr line, and the process runs on unserved.
// - A request is one line; the answer is one JSON document, then the connection is closed. Answers
//   are written without blocking: a viewer that stops reading (or is killed mid-read) holds one of
//   kMaxClients slots until it goes away, never the reporter.
// - Only connections from the process's own uid are served (SO_PEERCRED).
// - A program that closes the socket or the wake descriptor (or puts its own under their numbers:
//   checked by identity before each wait) turns the server off, said once; the numbers are never
//   used again. Out of descriptors, the socket is left out of the wait for a second.
// - Removed at exit (after the exit snapshot); in a fork child the parent's socket is closed, not
//   removed, and the child's reporter opens its own.
#pragma once

#include <cstdint>

namespace vramtrace::serve {

// On the reporter thread, once it starts. Returns whether the server runs.
bool start_live_server();
bool live_server_running();

// On the reporter thread: waits up to timeout_ns in poll() for the wake descriptor, a connection or
// a client, and serves whatever is ready. Returns false at once (having waited for nothing) when
// the server does not run: the caller then waits as it would without it.
bool serve_until(uint64_t timeout_ns);

// Async-signal-safe, errno preserved: makes a serve_until in progress return (wake_reporter).
void wake_live_server();

// Process exit, after the exit snapshot: removes the socket file (the descriptors close with the
// process; the reporter may be answering a viewer at that moment).
void stop_live_server();

// pthread_atfork child handler: closes the parent's descriptors without removing its socket.
void live_server_after_fork_in_child();

} // namespace vramtrace::serve
