// Per-thread NVTX range stacks (see thread_ranges.h).
#include "nvtx/thread_ranges.h"

#include <atomic>
#include <pthread.h>

#include "nvtx/range_table.h"
#include "tracking/raw_memory.h"

namespace vramtrace::nvtx {

constinit thread_local uint16_t t_range_stack __attribute__((tls_model("initial-exec"))) = 0;

namespace {

struct DomainStack {
    uint16_t domain;
    uint32_t depth;                // open ranges, those past kMaxDepth included
    struct {
        uint32_t name, category;
    } frames[kMaxDepth];
    uint16_t saved[kMaxDepth];     // the thread's stack id just before each push
};

struct ThreadRanges {
    ThreadRanges *next_free;
    uint32_t used;                 // entries of `domains` in use, in push order of first use
    DomainStack domains[kMaxThreadDomains];
};

// First-push order of each domain, process-wide (0: not pushed yet).
std::atomic<uint32_t> g_domain_order[kMaxDomains];
std::atomic<uint32_t> g_next_order{1};
std::atomic<uint64_t> g_too_deep{0};

// Blocks given back by exited threads.
std::atomic<ThreadRanges *> g_free{nullptr};
std::atomic<bool> g_free_lock{false};
pthread_key_t g_key;
// 0: no key yet, 1: being created, 2: ready. (Not pthread_once: glibc 2.34 moved it to a newer
// symbol version than the library may need; tests/abi/check_glibc_floor.sh.)
std::atomic<int> g_key_state{0};

thread_local ThreadRanges *t_ranges __attribute__((tls_model("initial-exec"))) = nullptr;

// Runs on the exiting thread: a push from a later destructor of that thread takes a fresh block.
void give_back(void *p) {
    auto *r = static_cast<ThreadRanges *>(p);
    if (t_ranges == r) t_ranges = nullptr;
    t_range_stack = 0;
    while (g_free_lock.exchange(true, std::memory_order_acquire)) {
    }
    r->next_free = g_free.load(std::memory_order_relaxed);
    g_free.store(r, std::memory_order_relaxed);
    g_free_lock.store(false, std::memory_order_release);
}

void make_key() {
    int expected = 0;
    if (g_key_state.compare_exchange_strong(expected, 1, std::memory_order_acquire)) {
        pthread_key_create(&g_key, &give_back);
        g_key_state.store(2, std::memory_order_release);
        return;
    }
    while (g_key_state.load(std::memory_order_acquire) != 2) {
    }
}

ThreadRanges *thread_block() {
    if (t_ranges != nullptr) return t_ranges;
    if (g_key_state.load(std::memory_order_acquire) != 2) make_key();
    ThreadRanges *r = nullptr;
    while (g_free_lock.exchange(true, std::memory_order_acquire)) {
    }
    r = g_free.load(std::memory_order_relaxed);
    if (r != nullptr) g_free.store(r->next_free, std::memory_order_relaxed);
    g_free_lock.store(false, std::memory_order_release);
    if (r == nullptr) r = static_cast<ThreadRanges *>(map_zeroed(sizeof(ThreadRanges)));
    if (r == nullptr) return nullptr;
    r->used = 0;
    r->next_free = nullptr;
    t_ranges = r;
    pthread_setspecific(g_key, r);
    return r;
}

uint32_t order_of(uint16_t domain) {
    uint32_t o = g_domain_order[domain].load(std::memory_order_relaxed);
    if (o != 0) return o;
    uint32_t fresh = g_next_order.fetch_add(1, std::memory_order_relaxed);
    uint32_t expected = 0;
    if (g_domain_order[domain].compare_exchange_strong(expected, fresh, std::memory_order_relaxed)) return fresh;
    return expected;
}

// Whether `ds` is the last domain, in the process-wide order, among the thread's domains with
// ranges open (itself excepted when it has none).
bool is_last(const ThreadRanges &r, const DomainStack &ds) {
    uint32_t mine = order_of(ds.domain);
    for (uint32_t i = 0; i < r.used; ++i) {
        const DomainStack &o = r.domains[i];
        if (&o != &ds && o.depth > 0 && order_of(o.domain) > mine) return false;
    }
    return true;
}

// The thread's stack id from its per-domain stacks, refreshing every saved id on the way.
void rebuild(ThreadRanges &r) {
    bool done[kMaxThreadDomains] = {};
    uint16_t id = 0;
    for (;;) {
        int next = -1;
        for (uint32_t i = 0; i < r.used; ++i)
            if (!done[i] && r.domains[i].depth > 0 &&
                (next < 0 || order_of(r.domains[i].domain) < order_of(r.domains[next].domain)))
                next = static_cast<int>(i);
        if (next < 0) break;
        done[next] = true;
        DomainStack &ds = r.domains[next];
        uint32_t kept = ds.depth < kMaxDepth ? ds.depth : kMaxDepth;
        for (uint32_t k = 0; k < kept; ++k) {
            ds.saved[k] = id;
            id = push_stack(id, ds.domain, ds.frames[k].name, ds.frames[k].category);
        }
    }
    t_range_stack = id;
}

DomainStack *domain_stack(ThreadRanges &r, uint16_t domain, bool create) {
    for (uint32_t i = 0; i < r.used; ++i)
        if (r.domains[i].domain == domain) return &r.domains[i];
    if (!create) return nullptr;
    // Reuse an entry whose domain has nothing open, else take a new one.
    for (uint32_t i = 0; i < r.used; ++i)
        if (r.domains[i].depth == 0) {
            r.domains[i].domain = domain;
            return &r.domains[i];
        }
    if (r.used == kMaxThreadDomains) return nullptr;
    DomainStack &ds = r.domains[r.used++];
    ds.domain = domain;
    ds.depth = 0;
    return &ds;
}

} // namespace

int push_range(uint16_t domain, uint32_t name, uint32_t category) {
    ThreadRanges *r = thread_block();
    if (r == nullptr) return -1;
    DomainStack *ds = domain_stack(*r, domain, true);
    if (ds == nullptr) {
        g_too_deep.fetch_add(1, std::memory_order_relaxed);
        return -1;
    }
    uint32_t level = ds->depth++;
    if (level >= kMaxDepth) {
        g_too_deep.fetch_add(1, std::memory_order_relaxed);
        return static_cast<int>(level);
    }
    ds->frames[level] = {name, category};
    if (is_last(*r, *ds)) {
        ds->saved[level] = t_range_stack;
        t_range_stack = push_stack(t_range_stack, domain, name, category);
    } else {
        rebuild(*r);
    }
    return static_cast<int>(level);
}

int pop_range(uint16_t domain) {
    ThreadRanges *r = t_ranges;
    if (r == nullptr) return -1;
    DomainStack *ds = domain_stack(*r, domain, false);
    if (ds == nullptr || ds->depth == 0) return -1;
    uint32_t level = --ds->depth;
    if (level >= kMaxDepth) return static_cast<int>(level);
    if (is_last(*r, *ds)) t_range_stack = ds->saved[level];
    else rebuild(*r);
    return static_cast<int>(level);
}

uint64_t ranges_too_deep() { return g_too_deep.load(std::memory_order_relaxed); }

void reset_thread_for_testing() {
    if (t_ranges != nullptr) t_ranges->used = 0;
    t_range_stack = 0;
}

} // namespace vramtrace::nvtx
