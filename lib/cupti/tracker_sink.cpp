// Applies translated CUPTI callbacks to the tracker. Mirrors hook_scope.h: the stack is captured
// inside the callback (the frames above libcupti and libcuda are the caller's; the report's call
// site skips them), records go in with record_new, frees take the record out at the call's entry
// and settle it at its exit. Every piece of our own work runs under the reentrancy guard, so the
// driver queries it makes are never recorded.
#include "cupti/tracker_sink.h"

#include <atomic>
#include <new>
#include <vector>

#include "interception/context_teardown.h"
#include "core/thread_state.h"
#include "interception/vmm_lifetime.h"
#include "cupti/callback_translate.h"
#include "interception/hook_scope.h"
#include "device/device_info.h"
#include "triggers/reporter.h"

namespace vramtrace::cupti {
namespace {

// Records taken out at a free's entry, until its exit. A fixed pool claimed with a compare-and-swap
// (no lock, no thread-local storage: the library may be dlopen'ed by the driver, where static TLS
// is scarce). More frees in flight than slots: the record is accounted as freed at once.
struct Pending {
    std::atomic<uint32_t> busy{0};
    AllocationRecord record;
    std::vector<AllocationRecord> *many = nullptr; // cuGraphDestroy: every record of the graph
    // What settles `many` at the call's exit, beyond accounting it as freed.
    enum class Op : uint8_t { Free, Release, Unmap, Teardown, PrimaryRelease } op = Op::Free;
    uint64_t handle = 0;                 // Release: the handle
    std::vector<uint16_t> *ids = nullptr; // Teardown: the context generations
    TeardownCause cause = TeardownCause::None;
    uint8_t api = 0;
    int device = kUnknownDevice;
};
constexpr uint64_t kSlots = 1024;
Pending g_pending[kSlots];

Pending *claim_slot(uint64_t *token) {
    uint64_t start = current_tid() % kSlots;
    for (uint64_t i = 0; i < kSlots; ++i) {
        Pending &p = g_pending[(start + i) % kSlots];
        uint32_t expected = 0;
        if (p.busy.compare_exchange_strong(expected, 1, std::memory_order_acquire)) {
            *token = (start + i) % kSlots + 1;
            p.op = Pending::Op::Free;
            p.ids = nullptr;
            return &p;
        }
    }
    *token = 0;
    return nullptr;
}

uint64_t claim(const AllocationRecord *one, std::vector<AllocationRecord> *many) {
    uint64_t token = 0;
    Pending *p = claim_slot(&token);
    if (p == nullptr) return 0;
    if (one) p->record = *one;
    p->many = many;
    return token;
}

// Settles a Release / Unmap / Teardown slot's records.
void settle_op(Tracker &t, const Pending &p, bool succeeded) {
    switch (p.op) {
    case Pending::Op::Release: vmm_after_release(t, p.handle, *p.many, succeeded); return;
    case Pending::Op::Unmap: vmm_after_unmap(t, *p.many, succeeded); return;
    case Pending::Op::Teardown:
        if (succeeded) end_context_records(t, *p.many, *p.ids, p.cause, p.api, p.device);
        else restore_context_records(t, *p.many);
        return;
    case Pending::Op::PrimaryRelease: // as context_hooks.cpp's primary_released
        if (succeeded && !process_exiting() && primary_context_active(p.device) == 0)
            end_context_records(t, take_context_records(t, *p.ids), *p.ids, TeardownCause::LastRelease, p.api, p.device);
        return;
    case Pending::Op::Free: return;
    }
}

void settle(Tracker &t, const AllocationRecord &r, bool freed) {
    if (freed) account_free(t, r);
    else restore_allocation(t, r);
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
        return stream_ordered_device(stream, by_pointer, address);
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
        uint64_t live_after = record_new(*t, req, a.address, a.size, a.device, a.stack);
        triggers::after_recorded_alloc(*t, a.device, a.size, live_after);
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
            if (p.op != Pending::Op::Free)
                settle_op(*t, p, succeeded);
            else if (p.many != nullptr)
                for (const AllocationRecord &r : *p.many) settle(*t, r, succeeded);
            else
                settle(*t, p.record, succeeded);
        }
        delete p.many;
        delete p.ids;
        p.many = nullptr;
        p.ids = nullptr;
        p.busy.store(0, std::memory_order_release);
    }
    uint64_t take_release(uint64_t handle) override {
        Tracker *t = tracker();
        if (t == nullptr) return 0;
        note_cuda_seen();
        ReentrancyGuard guard;
        return pending_op(*t, Pending::Op::Release, vmm_before_release(*t, handle), [&](Pending &p) { p.handle = handle; });
    }
    uint64_t take_unmap(uint64_t ptr, uint64_t size) override {
        Tracker *t = tracker();
        if (t == nullptr) return 0;
        note_cuda_seen();
        ReentrancyGuard guard;
        return pending_op(*t, Pending::Op::Unmap, vmm_before_unmap(*t, ptr, size), [](Pending &) {});
    }
    void vmm_retained(uint64_t handle) override {
        if (Tracker *t = tracker()) t->vmm.retained(handle);
    }
    void vmm_mapped(uint64_t handle, uint64_t size) override {
        Tracker *t = tracker();
        if (t == nullptr) return;
        ReentrancyGuard guard;
        vmm_after_map(*t, handle, size);
    }
    void context_created(uint64_t context, int device) override {
        if (Tracker *t = tracker()) t->contexts.note_created(context, device);
    }
    uint64_t take_context(uint8_t api, uint64_t context) override {
        Tracker *t = tracker();
        if (t == nullptr || context == 0 || process_exiting()) return 0;
        std::vector<uint16_t> ids = live_context_ids(*t, context);
        if (ids.empty()) return 0;
        int device = t->contexts.device_of(ids.front());
        return take_teardown(*t, std::move(ids), TeardownCause::Destroy, api, device);
    }
    uint64_t take_primary(uint8_t api, int device) override {
        Tracker *t = tracker();
        if (t == nullptr || process_exiting()) return 0;
        std::vector<uint16_t> ids = live_primary_ids(*t, device);
        if (ids.empty()) return 0; // nothing was ever allocated in it: nothing to end or log
        return take_teardown(*t, std::move(ids), TeardownCause::Reset, api, device);
    }
    uint64_t take_primary_release(uint8_t api, int device) override {
        Tracker *t = tracker();
        if (t == nullptr || process_exiting()) return 0;
        std::vector<uint16_t> ids = live_primary_ids(*t, device);
        if (ids.empty()) return 0;
        ReentrancyGuard guard;
        if (t->contexts.used() < ContextRegistry::kCapacity / 2)
            t->contexts.supersede(ids.data(), static_cast<uint32_t>(ids.size()));
        uint64_t token = 0;
        Pending *p = claim_slot(&token);
        if (p == nullptr) return 0; // no slot: the release goes by as one that was not the last
        p->op = Pending::Op::PrimaryRelease;
        p->many = new std::vector<AllocationRecord>();
        p->ids = new std::vector<uint16_t>(std::move(ids));
        p->api = api;
        p->device = device;
        return token;
    }
    void graph_memory_changed() override {
        if (graph_memory_in_use() && triggers::g_triggers_started.load(std::memory_order_acquire))
            triggers::wake_reporter(triggers::kWakeGraphMemory);
    }

private:
    // Parks `taken` in a pending slot for finish_free; with no slot free the call is taken to
    // succeed at once (as take does).
    template <class Fill>
    uint64_t pending_op(Tracker &t, Pending::Op op, std::vector<AllocationRecord> taken, Fill &&fill) {
        uint64_t token = 0;
        Pending *p = claim_slot(&token);
        if (p == nullptr) {
            Pending local;
            local.op = op;
            local.many = &taken;
            fill(local);
            settle_op(t, local, true);
            local.many = nullptr;
            return 0;
        }
        p->op = op;
        p->many = new std::vector<AllocationRecord>(std::move(taken));
        fill(*p);
        return token;
    }
    uint64_t take_teardown(Tracker &t, std::vector<uint16_t> ids, TeardownCause cause, uint8_t api, int device) {
        ReentrancyGuard guard;
        t.contexts.supersede(ids.data(), static_cast<uint32_t>(ids.size())); // as context_hooks.cpp
        std::vector<AllocationRecord> taken = take_context_records(t, ids);
        uint64_t token = 0;
        Pending *p = claim_slot(&token);
        if (p == nullptr) { // no slot: taken to succeed, as take does
            end_context_records(t, taken, ids, cause, api, device);
            return 0;
        }
        p->op = Pending::Op::Teardown;
        p->many = new std::vector<AllocationRecord>(std::move(taken));
        p->ids = new std::vector<uint16_t>(std::move(ids));
        p->cause = cause;
        p->api = api;
        p->device = device;
        return token;
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
