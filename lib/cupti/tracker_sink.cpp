// Applies translated CUPTI callbacks to the tracker. Mirrors hook_scope.h: the stack is captured
// inside the callback (the frames above libcupti and libcuda are the caller's; the report's call
// site skips them), records go in with record_new, frees take the record out at the call's entry
// and settle it at its exit. Every piece of our own work runs under the reentrancy guard, so the
// driver queries it makes are never recorded.
#include "cupti/tracker_sink.h"

#include <atomic>
#include <new>
#include <vector>

#include "core/thread_state.h"
#include "cupti/callback_translate.h"
#include "interception/hook_scope.h"
#include "reporting/device_info.h"

namespace vramtrace::cupti {
namespace {

// Records taken out at a free's entry, until its exit. A fixed pool claimed with a compare-and-swap
// (no lock, no thread-local storage: the library may be dlopen'ed by the driver, where static TLS
// is scarce). More frees in flight than slots: the record is accounted as freed at once.
struct Pending {
    std::atomic<uint32_t> busy{0};
    AllocationRecord record;
    std::vector<AllocationRecord> *many = nullptr; // cuGraphDestroy: every record of the graph
};
constexpr uint64_t kSlots = 1024;
Pending g_pending[kSlots];

uint64_t claim(const AllocationRecord *one, std::vector<AllocationRecord> *many) {
    uint64_t start = current_tid() % kSlots;
    for (uint64_t i = 0; i < kSlots; ++i) {
        Pending &p = g_pending[(start + i) % kSlots];
        uint32_t expected = 0;
        if (p.busy.compare_exchange_strong(expected, 1, std::memory_order_acquire)) {
            if (one) p.record = *one;
            p.many = many;
            return (start + i) % kSlots + 1;
        }
    }
    return 0;
}

void settle(Tracker &t, const AllocationRecord &r, bool freed) {
    if (freed) {
        account_free(t, r);
        triggers::after_tracked_free(counts_toward_device(r.kind), r.device, r.size);
    } else {
        restore_allocation(t, r);
    }
}

class TrackerSink final : public Sink {
public:
    bool active() override { return !ReentrancyGuard::inside() && tracker() != nullptr; }
    uint32_t capture_stack() override {
        Tracker *t = tracker();
        if (t == nullptr) return 0;
        ReentrancyGuard guard;
        return capture_and_intern_stack(*t);
    }
    int device_of(MemoryKind kind, uint64_t address) override {
        ReentrancyGuard guard;
        return device_holding(kind, address);
    }
    int stream_alloc_device(uint64_t stream, bool by_pointer, uint64_t address) override {
        ReentrancyGuard guard;
        return by_pointer ? pointer_device_or_current(address) : vramtrace::stream_alloc_device(stream, address);
    }
    int recorded_device(uint64_t address) override {
        AllocationRecord r;
        Tracker *t = tracker();
        return t != nullptr && t->table.find(address, &r) ? r.device : kUnknownDevice;
    }
    uint64_t range_size(uint64_t address) override {
        ReentrancyGuard guard;
        return allocation_size_at(address);
    }
    bool capturing(uint64_t stream, bool per_thread, uint64_t *graph) override {
        ReentrancyGuard guard;
        return driver_stream_capturing(stream, per_thread, graph);
    }
    void record(const NewAllocation &a) override {
        Tracker *t = tracker();
        if (t == nullptr) return;
        note_cuda_seen();
        ReentrancyGuard guard;
        AllocRequest req{static_cast<ApiId>(a.api), a.kind, a.stream};
        record_new(*t, req, a.address, a.size, a.device, a.stack);
        triggers::after_recorded_alloc(*t, counts_toward_device(a.kind), a.device, a.size);
    }
    void out_of_memory(uint8_t api, int device, uint64_t requested, uint64_t stream, uint32_t stack,
                       int result) override {
        Tracker *t = tracker();
        if (t == nullptr) return;
        note_cuda_seen();
        ReentrancyGuard guard;
        triggers::OomRequest oom;
        oom.api = api;
        oom.requested_bytes = requested;
        oom.stream = stream;
        oom.device = device;
        oom.stack = stack;
        oom.result = result;
        triggers::on_allocation_oom(*t, oom);
    }
    uint64_t take(uint64_t address) override {
        Tracker *t = tracker();
        if (t == nullptr) return 0;
        note_cuda_seen();
        ReentrancyGuard guard;
        AllocationRecord r;
        if (!take_allocation(*t, address, &r)) return 0;
        uint64_t token = claim(&r, nullptr);
        if (token == 0) settle(*t, r, true);
        return token;
    }
    uint64_t take_graph(uint64_t graph) override {
        Tracker *t = tracker();
        if (t == nullptr) return 0;
        ReentrancyGuard guard;
        std::vector<uint64_t> addresses;
        t->table.for_each([&](const AllocationRecord &r) {
            if (r.kind == MemoryKind::GraphPool && r.stream == graph) addresses.push_back(r.address);
        });
        if (addresses.empty()) return 0;
        auto *taken = new std::vector<AllocationRecord>;
        for (uint64_t a : addresses) {
            AllocationRecord r;
            if (take_allocation(*t, a, &r)) taken->push_back(r);
        }
        uint64_t token = claim(nullptr, taken);
        if (token == 0) {
            for (const AllocationRecord &r : *taken) settle(*t, r, true);
            delete taken;
        }
        return token;
    }
    void finish_free(uint64_t token, bool succeeded) override {
        if (token == 0 || token > kSlots) return;
        Pending &p = g_pending[token - 1];
        if (p.busy.load(std::memory_order_acquire) != 1) return;
        Tracker *t = tracker();
        ReentrancyGuard guard;
        if (t != nullptr) {
            if (p.many != nullptr)
                for (const AllocationRecord &r : *p.many) settle(*t, r, succeeded);
            else
                settle(*t, p.record, succeeded);
        }
        delete p.many;
        p.many = nullptr;
        p.busy.store(0, std::memory_order_release);
    }
    void pool_created(uint64_t pool, int device) override { note_pool_created(pool, device); }
    void pool_destroyed(uint64_t pool) override { note_pool_destroyed(pool); }
    void pool_used(uint64_t pool) override { note_pool_used(pool); }
    void default_pool_used(int device) override { note_default_pool_used(device); }
    void graph_memory_used(int device) override { note_graph_memory_used(device); }
};

} // namespace

Sink *tracker_sink() {
    // Built in place and never destroyed: callbacks may come from late exit handlers.
    alignas(TrackerSink) static unsigned char storage[sizeof(TrackerSink)];
    static TrackerSink *sink = new (storage) TrackerSink;
    return sink;
}

} // namespace vramtrace::cupti
