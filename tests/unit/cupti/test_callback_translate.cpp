// The CUPTI backend's translation, driven the way CUPTI drives it: a CUpti_CallbackData whose
// functionParams point at the real parameter structs of generated_cuda_meta.h, passed to the very
// callback function the library subscribes. A recording Sink stands for the tracker: its table is
// checked exactly (address, size, device, kind, api) after each sequence.
#include <catch2/catch.hpp>

#include <cstring>
#include <map>
#include <string>
#include <vector>

// The legacy 32-bit structs (cuMemAlloc_params, ...) are declared only for the driver's own build.
#define __CUDA_API_VERSION_INTERNAL 1
#include <cupti_callbacks.h>
#include <cupti_driver_cbid.h>
#include <generated_cuda_meta.h>

#include "cupti/callback_translate.h"
#include "cupti/cupti_callback.h"

using namespace vramtrace;
using namespace vramtrace::cupti;

namespace {

struct Entry {
    uint64_t size;
    int device;
    MemoryKind kind;
    std::string api;
    uint64_t stream;
    bool operator==(const Entry &) const = default;
};

// A table of its own; devices come from a fixed rule (pointer / 0x1000000 % 4) so that tests can
// tell which answer was used.
class RecordingSink final : public Sink {
public:
    std::map<uint64_t, Entry> table;
    std::map<uint64_t, std::vector<std::pair<uint64_t, Entry>>> pending;
    uint64_t next_token = 1;
    int stacks = 0, ooms = 0, freed = 0, restored = 0;
    uint64_t oom_requested = 0;
    bool capturing_now = false;
    uint64_t capture_graph = 0;
    std::vector<uint64_t> pools_created, pools_used;

    bool active() override { return true; }
    uint32_t capture_stack() override { return static_cast<uint32_t>(++stacks); }
    int device_of(MemoryKind kind, uint64_t a) override {
        if (kind == MemoryKind::HostPinned || kind == MemoryKind::HostRegistered) return kHostDevice;
        return static_cast<int>(a / 0x1000000 % 4);
    }
    int recorded_device(uint64_t a) override {
        auto it = table.find(a);
        return it == table.end() ? kUnknownDevice : it->second.device;
    }
    uint64_t range_size(uint64_t) override { return 4096; }
    bool capturing(uint64_t, bool, uint64_t *graph) override {
        *graph = capture_graph;
        return capturing_now;
    }
    void record(const NewAllocation &a) override {
        table[a.address] = Entry{a.size, a.device, a.kind, api_of(a.api), a.stream};
    }
    void out_of_memory(uint8_t, int, uint64_t requested, uint64_t, uint32_t, int) override {
        ++ooms;
        oom_requested = requested;
    }
    uint64_t take(uint64_t address) override {
        auto it = table.find(address);
        if (it == table.end()) return 0;
        uint64_t token = next_token++;
        pending[token].push_back(*it);
        table.erase(it);
        return token;
    }
    uint64_t take_graph(uint64_t graph) override {
        std::vector<std::pair<uint64_t, Entry>> taken;
        for (auto it = table.begin(); it != table.end();) {
            if (it->second.kind == MemoryKind::GraphPool && it->second.stream == graph) {
                taken.push_back(*it);
                it = table.erase(it);
            } else
                ++it;
        }
        if (taken.empty()) return 0;
        uint64_t token = next_token++;
        pending[token] = taken;
        return token;
    }
    void finish_free(uint64_t token, bool ok) override {
        for (auto &[a, e] : pending[token]) {
            if (ok) ++freed;
            else {
                ++restored;
                table[a] = e;
            }
        }
        pending.erase(token);
    }
    void pool_created(uint64_t pool, int) override { pools_created.push_back(pool); }
    void pool_destroyed(uint64_t) override {}
    void pool_used(uint64_t pool) override { pools_used.push_back(pool); }
    void default_pool_used(int) override {}
    void graph_memory_used(int) override {}

    static std::string api_of(uint8_t api) { return row_name(api); }
};

// One driver call as CUPTI reports it: the entry callback, then the exit with the result.
template <class P> void call(RecordingSink &sink, CUpti_CallbackId cbid, P &params, CUresult result) {
    CallbackFn fn = callback_function();
    uint64_t correlation = 0;
    CUpti_CallbackData d;
    std::memset(&d, 0, sizeof d);
    d.functionParams = &params;
    d.correlationData = &correlation;
    d.callbackSite = CUPTI_API_ENTER;
    fn(&sink, CUPTI_CB_DOMAIN_DRIVER_API, cbid, &d);
    d.callbackSite = CUPTI_API_EXIT;
    d.functionReturnValue = &result;
    fn(&sink, CUPTI_CB_DOMAIN_DRIVER_API, cbid, &d);
}


} // namespace

TEST_CASE("cuMemAlloc_v2 and cuMemFree_v2 become one record, then none") {
    RecordingSink sink;
    CUdeviceptr ptr = 0x2000100; // device 2 by the sink's rule
    cuMemAlloc_v2_params alloc{&ptr, 1 << 20};
    call(sink, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, alloc, CUDA_SUCCESS);
    REQUIRE(sink.table.size() == 1);
    const Entry &e = sink.table.at(0x2000100);
    CHECK(e.size == 1048576);
    CHECK(e.device == 2);
    CHECK(e.kind == MemoryKind::Device);
    CHECK(e.stream == 0);
    CHECK(sink.stacks == 1);
    CHECK(e.api == "cuMemAlloc_v2");

    // A free that fails puts the record back; one that succeeds ends it.
    cuMemFree_v2_params fr{0x2000100};
    call(sink, CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2, fr, CUDA_ERROR_INVALID_VALUE);
    CHECK(sink.table.size() == 1);
    CHECK(sink.restored == 1);
    call(sink, CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2, fr, CUDA_SUCCESS);
    CHECK(sink.table.empty());
    CHECK(sink.freed == 1);
    CHECK(sink.pending.empty());
}

TEST_CASE("a failed allocation records nothing, out of memory goes to the OOM trigger with the request") {
    RecordingSink sink;
    CUdeviceptr ptr = 0;
    cuMemAlloc_v2_params alloc{&ptr, 12345};
    call(sink, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, alloc, CUDA_ERROR_INVALID_VALUE);
    CHECK(sink.table.empty());
    CHECK(sink.ooms == 0);
    call(sink, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, alloc, CUDA_ERROR_OUT_OF_MEMORY);
    CHECK(sink.table.empty());
    CHECK(sink.ooms == 1);
    CHECK(sink.oom_requested == 12345);
    // Pitched: the request is width x height, before the driver chose a pitch.
    size_t pitch = 0;
    cuMemAllocPitch_v2_params pitched{&ptr, &pitch, 1000, 30, 4};
    call(sink, CUPTI_DRIVER_TRACE_CBID_cuMemAllocPitch_v2, pitched, CUDA_ERROR_OUT_OF_MEMORY);
    CHECK(sink.oom_requested == 30000);
}

TEST_CASE("every allocation family lands with its kind, size and device") {
    RecordingSink sink;
    CUdeviceptr d1 = 0x1000000, d2 = 0x3000000;
    size_t pitch = 1024;
    cuMemAllocPitch_v2_params pitched{&d1, &pitch, 1000, 30, 4};
    call(sink, CUPTI_DRIVER_TRACE_CBID_cuMemAllocPitch_v2, pitched, CUDA_SUCCESS);
    cuMemAllocManaged_params managed{&d2, 4096, 1};
    call(sink, CUPTI_DRIVER_TRACE_CBID_cuMemAllocManaged, managed, CUDA_SUCCESS);
    void *host = reinterpret_cast<void *>(0x7f0000001000);
    cuMemHostAlloc_params host_alloc{&host, 8192, 0};
    call(sink, CUPTI_DRIVER_TRACE_CBID_cuMemHostAlloc, host_alloc, CUDA_SUCCESS);
    void *host2 = reinterpret_cast<void *>(0x7f0000100000);
    cuMemAllocHost_v2_params host_alloc2{&host2, 100, };
    call(sink, CUPTI_DRIVER_TRACE_CBID_cuMemAllocHost_v2, host_alloc2, CUDA_SUCCESS);
    cuMemHostRegister_v2_params reg{reinterpret_cast<void *>(0x7f0000200000), 65536, 0};
    call(sink, CUPTI_DRIVER_TRACE_CBID_cuMemHostRegister_v2, reg, CUDA_SUCCESS);
    // Legacy 32-bit ABI.
    CUdeviceptr_v1 small = 0x200;
    cuMemAlloc_params legacy{&small, 77};
    call(sink, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc, legacy, CUDA_SUCCESS);
    // IPC: the size comes from the driver (the sink answers 4096), not counted.
    CUdeviceptr ipc = 0x5000000;
    cuIpcOpenMemHandle_v2_params ipc_open{};
    ipc_open.pdptr = &ipc;
    call(sink, CUPTI_DRIVER_TRACE_CBID_cuIpcOpenMemHandle_v2, ipc_open, CUDA_SUCCESS);
    // Arrays: keyed by the handle, size from the descriptor (float4 256 x 64 = 16 bytes each).
    CUarray arr = reinterpret_cast<CUarray>(0x9000000);
    CUDA_ARRAY3D_DESCRIPTOR desc{};
    desc.Width = 256;
    desc.Height = 64;
    desc.Format = CU_AD_FORMAT_FLOAT;
    desc.NumChannels = 4;
    cuArray3DCreate_v2_params arr3d{&arr, &desc};
    call(sink, CUPTI_DRIVER_TRACE_CBID_cuArray3DCreate_v2, arr3d, CUDA_SUCCESS);

    REQUIRE(sink.table.size() == 8);
    CHECK(sink.table.at(0x1000000) == Entry{1024 * 30, 1, MemoryKind::Device, "cuMemAllocPitch_v2", 0});
    CHECK(sink.table.at(0x3000000).kind == MemoryKind::Managed);
    CHECK(sink.table.at(0x3000000).size == 4096);
    CHECK(sink.table.at(0x3000000).device == 3);
    CHECK(sink.table.at(0x7f0000001000).kind == MemoryKind::HostPinned);
    CHECK(sink.table.at(0x7f0000001000).size == 8192);
    CHECK(sink.table.at(0x7f0000001000).device == kHostDevice);
    CHECK(sink.table.at(0x7f0000100000).size == 100);
    CHECK(sink.table.at(0x7f0000200000).kind == MemoryKind::HostRegistered);
    CHECK(sink.table.at(0x7f0000200000).size == 65536);
    CHECK(sink.table.at(0x200).size == 77);
    CHECK(sink.table.at(0x200).api == "cuMemAlloc");
    CHECK(sink.table.at(0x7f0000100000).api == "cuMemAllocHost_v2");
    CHECK(sink.table.at(0x5000000).api == "cuIpcOpenMemHandle_v2");
    CHECK(sink.table.at(0x5000000).kind == MemoryKind::IpcImported);
    CHECK(sink.table.at(0x5000000).size == 4096);
    CHECK(sink.table.at(0x9000000).kind == MemoryKind::Array);
    CHECK(sink.table.at(0x9000000).size == 256 * 64 * 16);
    CHECK(sink.stacks == 8);

    // The frees of each family.
    cuMemFreeHost_params fh{host};
    call(sink, CUPTI_DRIVER_TRACE_CBID_cuMemFreeHost, fh, CUDA_SUCCESS);
    cuMemHostUnregister_params unreg{reinterpret_cast<void *>(0x7f0000200000)};
    call(sink, CUPTI_DRIVER_TRACE_CBID_cuMemHostUnregister, unreg, CUDA_SUCCESS);
    cuIpcCloseMemHandle_params close{0x5000000};
    call(sink, CUPTI_DRIVER_TRACE_CBID_cuIpcCloseMemHandle, close, CUDA_SUCCESS);
    cuArrayDestroy_params destroy{arr};
    call(sink, CUPTI_DRIVER_TRACE_CBID_cuArrayDestroy, destroy, CUDA_SUCCESS);
    cuMemFree_params legacy_free{0x200};
    call(sink, CUPTI_DRIVER_TRACE_CBID_cuMemFree, legacy_free, CUDA_SUCCESS);
    CHECK(sink.table.size() == 3);
    CHECK(sink.freed == 5);
    // A pointer never recorded: nothing taken, nothing settled.
    cuMemFree_v2_params unknown{0xdead000};
    call(sink, CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2, unknown, CUDA_ERROR_INVALID_VALUE);
    CHECK(sink.table.size() == 3);
    CHECK(sink.restored == 0);
}

TEST_CASE("virtual memory: cuMemCreate on the device its properties name, cuMemMap on the handle's") {
    RecordingSink sink;
    CUmemGenericAllocationHandle h = 0x1234;
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 1;
    cuMemCreate_params create{&h, 2 << 20, &prop, 0};
    call(sink, CUPTI_DRIVER_TRACE_CBID_cuMemCreate, create, CUDA_SUCCESS);
    cuMemMap_params map{0x7000000, 2 << 20, 0, 0x1234, 0};
    call(sink, CUPTI_DRIVER_TRACE_CBID_cuMemMap, map, CUDA_SUCCESS);
    REQUIRE(sink.table.size() == 2);
    CHECK(sink.table.at(0x1234) == Entry{2 << 20, 1, MemoryKind::VmmPhysical, "cuMemCreate", 0});
    CHECK(sink.table.at(0x7000000) == Entry{2 << 20, 1, MemoryKind::VmmMapping, "cuMemMap", 0x1234});
    cuMemUnmap_params unmap{0x7000000, 2 << 20};
    call(sink, CUPTI_DRIVER_TRACE_CBID_cuMemUnmap, unmap, CUDA_SUCCESS);
    cuMemRelease_params release{0x1234};
    call(sink, CUPTI_DRIVER_TRACE_CBID_cuMemRelease, release, CUDA_SUCCESS);
    CHECK(sink.table.empty());
    CHECK(sink.freed == 2);
}

TEST_CASE("stream-ordered calls: pool allocations, and a captured stream gives graph memory") {
    RecordingSink sink;
    CUdeviceptr a = 0x1000400, b = 0x1000800, c = 0x1000c00;
    CUstream s = reinterpret_cast<CUstream>(0x55);
    cuMemAllocAsync_params async{&a, 1000, s};
    call(sink, CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync, async, CUDA_SUCCESS);
    CUmemoryPool pool = reinterpret_cast<CUmemoryPool>(0x77);
    cuMemAllocFromPoolAsync_ptsz_params from_pool{&b, 2000, pool, s};
    call(sink, CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync_ptsz, from_pool, CUDA_SUCCESS);
    CHECK(sink.table.at(0x1000400) == Entry{1000, 1, MemoryKind::Device, "cuMemAllocAsync", 0x55});
    CHECK(sink.table.at(0x1000800).size == 2000);
    CHECK(sink.table.at(0x1000800).api == "cuMemAllocFromPoolAsync_ptsz");
    CHECK(sink.pools_used == std::vector<uint64_t>{0x77});

    // A capture begins: the next stream-ordered allocation is a graph memory node of its graph.
    cuStreamBeginCapture_v2_params begin{s, CU_STREAM_CAPTURE_MODE_GLOBAL};
    call(sink, CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2, begin, CUDA_SUCCESS);
    sink.capturing_now = true;
    sink.capture_graph = 0x6000;
    cuMemAllocAsync_params captured{&c, 3000, s};
    call(sink, CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync, captured, CUDA_SUCCESS);
    CHECK(sink.table.at(0x1000c00) == Entry{3000, 1, MemoryKind::GraphPool, "cuMemAllocAsync", 0x6000});
    // A free during capture frees nothing now.
    cuMemFreeAsync_params captured_free{0x1000400, s};
    call(sink, CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync, captured_free, CUDA_SUCCESS);
    CHECK(sink.table.size() == 3);
    CUgraph graph = reinterpret_cast<CUgraph>(0x6000);
    cuStreamEndCapture_params end{s, &graph};
    call(sink, CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture, end, CUDA_SUCCESS);
    sink.capturing_now = false;
    // Destroying the graph ends its graph memory records; an ordinary free after capture frees.
    cuGraphDestroy_params destroy{graph};
    call(sink, CUPTI_DRIVER_TRACE_CBID_cuGraphDestroy, destroy, CUDA_SUCCESS);
    cuMemFreeAsync_params free_a{0x1000400, s};
    call(sink, CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync, free_a, CUDA_SUCCESS);
    REQUIRE(sink.table.size() == 1);
    CHECK(sink.table.count(0x1000800) == 1);
    CHECK(sink.freed == 2);
}

TEST_CASE("graph memory nodes and created pools") {
    RecordingSink sink;
    CUDA_MEM_ALLOC_NODE_PARAMS node{};
    node.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    node.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    node.poolProps.location.id = 3;
    node.bytesize = 2 << 20;
    node.dptr = 0x8000000;
    CUgraphNode out_node = nullptr;
    CUgraph graph = reinterpret_cast<CUgraph>(0x4400);
    cuGraphAddMemAllocNode_params add{&out_node, graph, nullptr, 0, &node};
    call(sink, CUPTI_DRIVER_TRACE_CBID_cuGraphAddMemAllocNode, add, CUDA_SUCCESS);
    REQUIRE(sink.table.size() == 1);
    CHECK(sink.table.at(0x8000000) == Entry{2 << 20, 3, MemoryKind::GraphPool, "cuGraphAddMemAllocNode", 0x4400});
    // A failed destroy puts the records back.
    cuGraphDestroy_params destroy{graph};
    call(sink, CUPTI_DRIVER_TRACE_CBID_cuGraphDestroy, destroy, CUDA_ERROR_INVALID_VALUE);
    CHECK(sink.table.size() == 1);
    CHECK(sink.restored == 1);

    CUmemoryPool pool = reinterpret_cast<CUmemoryPool>(0x99);
    CUmemPoolProps props{};
    props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = 1;
    cuMemPoolCreate_params create{&pool, &props};
    call(sink, CUPTI_DRIVER_TRACE_CBID_cuMemPoolCreate, create, CUDA_SUCCESS);
    CHECK(sink.pools_created == std::vector<uint64_t>{0x99});
}

TEST_CASE("the subscribed ids are every allocation, free, pool and capture row, each named") {
    uint32_t ids[256];
    size_t n = subscribed_callbacks(ids, 256);
    // The 24 driver allocation/free rows of hooks.def, plus 40 custom ones (stream-ordered, VMM
    // lifetimes, context creation and teardown, graph memory nodes and sampling, pools, capture
    // begin/end).
    CHECK(n == 64);
    for (size_t i = 0; i < n; ++i) CHECK(callback_name(ids[i]) != nullptr);
    CHECK(std::string(callback_name(CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync_ptsz)) == "cuMemFreeAsync_ptsz");
    CHECK(callback_name(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel) == nullptr);
}

TEST_CASE("other domains and ids are ignored") {
    RecordingSink sink;
    CUdeviceptr ptr = 0x100;
    cuMemAlloc_v2_params alloc{&ptr, 64};
    CUpti_CallbackData d;
    std::memset(&d, 0, sizeof d);
    d.functionParams = &alloc;
    CUresult ok = CUDA_SUCCESS;
    d.functionReturnValue = &ok;
    d.callbackSite = CUPTI_API_EXIT;
    callback_function()(&sink, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, &d);
    callback_function()(&sink, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemcpy, &d);
    CHECK(sink.table.empty());
}
