// The CUPTI backend's translation: one driver-API callback (its id, whether it is the entry or the
// exit of the call, the call's parameter struct and, at exit, its result) becomes the same table
// operations the preload hooks perform (lib/interception/hook_scope.h):
//   allocation rows of hooks.def: at exit, when the call succeeded, a record of the row's kind,
//     address and size (the row's own expressions, read from the parameter struct, whose members are
//     the row's parameters in the same order); a failed one with out-of-memory goes to the OOM trigger;
//   free rows: at entry the record is taken out (so another thread may get the address back from
//     the driver at once), at exit it is accounted as freed, or put back when the free failed.
// What the operations do is the Sink's business, so that unit tests can drive this with synthetic
// callback records (the parameter structs of generated_cuda_meta.h) and a table of their own.
// No CUDA or CUPTI header here: the library declares its own ABI types (device/cuda_abi.h).
#pragma once

#include <cstddef>
#include <cstdint>

#include "tracking/allocation_record.h"

namespace vramtrace::cupti {

enum class Site : uint8_t { Enter, Exit };

// One CUPTI driver-API callback, reduced to what the translation reads.
struct Event {
    uint32_t cbid = 0;              // CUpti_driver_api_trace_cbid
    Site site = Site::Enter;
    const void *params = nullptr;   // the <name>_params struct of generated_cuda_meta.h
    int result = 0;                 // CUresult at exit (CUpti_CallbackData::functionReturnValue)
    uint64_t *correlation = nullptr; // kept by CUPTI from the entry to the exit of one call
};

// What a successful allocation creates (AllocationRecord without the fields the sink fills:
// time, thread).
struct NewAllocation {
    uint8_t api = 0;     // ApiId of the row
    MemoryKind kind = MemoryKind::Device;
    uint64_t address = 0;
    uint64_t size = 0;
    uint64_t stream = 0;
    int device = kUnknownDevice;
    uint32_t stack = 0;
};

class Sink {
public:
    virtual ~Sink() = default;
    // False: record nothing for this callback (tracking off, or the thread is inside vramtrace).
    virtual bool active() = 0;
    virtual uint32_t capture_stack() = 0;
    // The device holding `kind` memory at `address` (device/device_choice.h's device_holding).
    virtual int device_of(MemoryKind kind, uint64_t address) = 0;
    // The device of a stream-ordered allocation on `stream` (device/device_choice.h's stream_ordered_device),
    // or, when by_pointer (a pool argument, a captured allocation, any capture active), the
    // pointer's. The default, for sinks without a driver: device_of(Device, address).
    virtual int stream_alloc_device(uint64_t stream, bool by_pointer, uint64_t address) {
        (void)stream, (void)by_pointer;
        return device_of(MemoryKind::Device, address);
    }
    // The device of an already recorded allocation (a VMM handle), kUnknownDevice when none.
    virtual int recorded_device(uint64_t address) = 0;
    // The size of the allocation containing `address` (cuMemGetAddressRange), 0 when unknown.
    virtual uint64_t range_size(uint64_t address) = 0;
    // Whether `stream` is being captured now; *graph = the capture's graph.
    virtual bool capturing(uint64_t stream, bool per_thread, uint64_t *graph) = 0;
    virtual void record(const NewAllocation &a) = 0;
    virtual void out_of_memory(uint8_t api, int device, uint64_t requested, uint64_t stream, uint32_t stack,
                               int result) = 0;
    // Takes the record at `address` out of the table; returns a non-zero token for finish_free, 0
    // when nothing was recorded there.
    virtual uint64_t take(uint64_t address) = 0;
    // Takes every GraphPool record of `graph`; a token as for take (0: none).
    virtual uint64_t take_graph(uint64_t graph) = 0;
    // The call that took `token` returned: account the records as freed, or put them back.
    virtual void finish_free(uint64_t token, bool succeeded) = 0;
    // Pools and graph memory the dump asks about (device/device_info.h).
    virtual void pool_created(uint64_t pool, int device) = 0;
    virtual void pool_destroyed(uint64_t pool) = 0;
    virtual void pool_used(uint64_t pool) = 0;
    virtual void default_pool_used(int device) = 0;
    virtual void graph_memory_used(int device) = 0;

    // Lifetimes the driver ends without a free call per allocation (interception/vmm_lifetime.h,
    // interception/context_teardown.h). The take_* calls come at a call's entry and return a token for
    // finish_free as take does. The defaults, for sinks that keep no such books, treat a release
    // and an unmap as a free of the handle / the mapped address, and contexts as nothing.
    virtual uint64_t take_release(uint64_t handle) { return take(handle); }
    virtual uint64_t take_unmap(uint64_t ptr, uint64_t size) {
        (void)size;
        return take(ptr);
    }
    virtual void vmm_retained(uint64_t handle) { (void)handle; }
    virtual void vmm_mapped(uint64_t handle, uint64_t size) { (void)handle, (void)size; }
    virtual void context_created(uint64_t context, int device) { (void)context, (void)device; }
    // cuCtxDestroy* of `context` / cuDevicePrimaryCtxReset* of `device`: `api` is the call's ApiId.
    virtual uint64_t take_context(uint8_t api, uint64_t context) { return (void)api, (void)context, 0; }
    virtual uint64_t take_primary(uint8_t api, int device) { return (void)api, (void)device, 0; }
    // At the entry of a cuDevicePrimaryCtxRelease* of `device`: a token for finish_free, whose
    // success ends the context's records when the release turned out to be its last.
    virtual uint64_t take_primary_release(uint8_t api, int device) { return (void)api, (void)device, 0; }
    // A graph was instantiated, uploaded or destroyed, or graph memory trimmed.
    virtual void graph_memory_changed() {}
};

// Applies one callback to the sink. Callback ids that are not ours are ignored.
void translate(const Event &event, Sink &sink);

// The callback ids the backend enables (every allocation, free, pool and capture row of hooks.def
// that has a CUPTI id). Writes at most `capacity`; returns how many there are.
size_t subscribed_callbacks(uint32_t *out, size_t capacity);

// The hooks.def row name of an ApiId (NewAllocation::api), "unknown" outside the table.
const char *row_name(uint8_t api);

// The hooks.def row name of a callback id we translate, nullptr for others (messages, tests).
const char *callback_name(uint32_t cbid);

} // namespace vramtrace::cupti
