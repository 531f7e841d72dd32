/*
 * vramtrace public C API.
 *
 * A program may include this header and call these functions whether or not libvramtrace.so is
 * loaded: each inline function below looks the library's exported entry point up at run time
 * (dlsym on RTLD_DEFAULT) and returns VRAMTRACE_ERROR_NOT_LOADED when it is absent. Link with -ldl
 * on glibc older than 2.34. Python users can reach the same exported symbols with ctypes:
 *     ctypes.CDLL(None).vramtrace_dump(b"/tmp/snap.json")
 *
 * Units: bytes for sizes, nanoseconds for times. All functions are thread-safe. None of them may be
 * called from a signal handler.
 */
#ifndef VRAMTRACE_VRAMTRACE_H
#define VRAMTRACE_VRAMTRACE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Return codes. */
#define VRAMTRACE_OK 0
#define VRAMTRACE_ERROR_NOT_LOADED (-1)   /* libvramtrace.so is not in this process */
#define VRAMTRACE_ERROR_IO (-2)           /* the snapshot could not be written (details on stderr) */
#define VRAMTRACE_ERROR_INVALID (-3)      /* a bad argument (NULL where one is required) */
#define VRAMTRACE_ERROR_DISABLED (-4)     /* tracking was turned off after an internal failure */

/* The most bytes of a vramtrace_mark label kept in the event history. */
#define VRAMTRACE_MARK_LABEL_MAX 63

/* Device ordinal used for pinned host memory (cudaMallocHost, cudaHostAlloc, cuMemHostAlloc, ...). */
#define VRAMTRACE_HOST_DEVICE (-1)

/* Counters of one device, as tracked by vramtrace since the process started. They cover only the
 * memory that passed through an intercepted entry point (not the CUDA context, loaded modules, ...). */
typedef struct vramtrace_device_stats {
    int32_t device;                 /* CUDA device ordinal, or VRAMTRACE_HOST_DEVICE */
    uint32_t reserved_;             /* padding, always 0 */
    uint64_t current_bytes;         /* bytes live now */
    uint64_t peak_bytes;            /* highest current_bytes seen */
    uint64_t allocation_count;      /* successful allocations */
    uint64_t free_count;            /* frees of tracked allocations */
    uint64_t total_allocated_bytes; /* sum of sizes ever allocated */
    uint64_t total_freed_bytes;     /* sum of sizes ever freed */
} vramtrace_device_stats;

/* The scoped peak of one device (vramtrace_scope_stats): the highest current_bytes since the last
 * vramtrace_scope_reset, or since the process started when there was none. */
typedef struct vramtrace_scope_peak {
    int32_t device;         /* CUDA device ordinal, or VRAMTRACE_HOST_DEVICE */
    uint32_t reserved_;     /* padding, always 0 */
    uint64_t current_bytes; /* bytes live now */
    uint64_t peak_bytes;    /* highest current_bytes since the reset; at least current_bytes at the
                               reset (memory live before the reset counts while it stays live) */
} vramtrace_scope_peak;

#if defined(VRAMTRACE_BUILDING_LIBRARY)
/* The exported definitions, implemented in lib/start/public_api.cpp. */
int vramtrace_dump(const char *path);
int vramtrace_stats(vramtrace_device_stats *out, int capacity);
int vramtrace_mark(const char *label);
int vramtrace_scope_reset(void);
int vramtrace_scope_stats(vramtrace_scope_peak *out, int capacity);
#else
#include <dlfcn.h>

static inline void *vramtrace_lookup_(const char *name) { return dlsym(RTLD_DEFAULT, name); }

/* Write a snapshot now. path: the file to write (written to a temporary name, then renamed, mode
 * 0600), or NULL for the configured VRAMTRACE_OUTPUT. Returns VRAMTRACE_OK or a VRAMTRACE_ERROR_*. */
static inline int vramtrace_dump(const char *path) {
    typedef int (*fn_t)(const char *);
    fn_t fn = (fn_t)vramtrace_lookup_("vramtrace_dump");
    return fn ? fn(path) : VRAMTRACE_ERROR_NOT_LOADED;
}

/* Fill out[0..capacity) with the counters of each device seen so far, in ascending ordinal order
 * (the host, -1, first when pinned memory was used). Returns the number of devices seen (which may
 * exceed capacity: call again with a larger array), or a VRAMTRACE_ERROR_*. out may be NULL when
 * capacity is 0. */
static inline int vramtrace_stats(vramtrace_device_stats *out, int capacity) {
    typedef int (*fn_t)(vramtrace_device_stats *, int);
    fn_t fn = (fn_t)vramtrace_lookup_("vramtrace_stats");
    return fn ? fn(out, capacity) : VRAMTRACE_ERROR_NOT_LOADED;
}

/* Record a "mark" in the event history of the snapshot (VRAMTRACE_EVENTS): an event of type "mark"
 * with the CLOCK_MONOTONIC time in ns, the calling thread and a copy of label, so that allocations
 * can be placed between program phases ("epoch 3", "after optimizer.step"). The label is copied
 * before the call returns; only its first VRAMTRACE_MARK_LABEL_MAX bytes are kept (cut before a
 * partial UTF-8 character). Returns VRAMTRACE_OK (also when the history is off, VRAMTRACE_EVENTS=0:
 * then nothing is kept), VRAMTRACE_ERROR_INVALID for a NULL label, VRAMTRACE_ERROR_DISABLED or
 * VRAMTRACE_ERROR_NOT_LOADED. Thread-safe and lock-free: it never waits for another thread. */
static inline int vramtrace_mark(const char *label) {
    typedef int (*fn_t)(const char *);
    fn_t fn = (fn_t)vramtrace_lookup_("vramtrace_mark");
    return fn ? fn(label) : VRAMTRACE_ERROR_NOT_LOADED;
}

/* Start a new scope on every device: each device's scoped peak becomes its current bytes. Meant for
 * a per-interval peak (a test, a training step, a notebook cell): reset, run the interval, read
 * vramtrace_scope_stats. It does not touch peak_bytes of vramtrace_stats, the snapshot's peak or
 * its call sites. One process-wide scope: two threads that reset share it.
 * Exactness under threads: the scoped peak is the highest current_bytes after any tracked
 * allocation, taken from the same atomic counter as peak_bytes, so with one scope it is exact for
 * every allocation that returned after vramtrace_scope_reset returned. An allocation on another
 * thread that runs while the reset does may count on either side of it; one still running while
 * vramtrace_scope_stats reads may be missing from that reading. Returns VRAMTRACE_OK,
 * VRAMTRACE_ERROR_DISABLED or VRAMTRACE_ERROR_NOT_LOADED. */
static inline int vramtrace_scope_reset(void) {
    typedef int (*fn_t)(void);
    fn_t fn = (fn_t)vramtrace_lookup_("vramtrace_scope_reset");
    return fn ? fn() : VRAMTRACE_ERROR_NOT_LOADED;
}

/* Fill out[0..capacity) with the scoped peak of each device seen so far, in the order and with the
 * return value of vramtrace_stats (the number of devices seen, or a VRAMTRACE_ERROR_*). */
static inline int vramtrace_scope_stats(vramtrace_scope_peak *out, int capacity) {
    typedef int (*fn_t)(vramtrace_scope_peak *, int);
    fn_t fn = (fn_t)vramtrace_lookup_("vramtrace_scope_stats");
    return fn ? fn(out, capacity) : VRAMTRACE_ERROR_NOT_LOADED;
}
#endif

#ifdef __cplusplus
}
#endif

#endif /* VRAMTRACE_VRAMTRACE_H */
