#include "device/device_info.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <dlfcn.h>
#include <unistd.h>

#include "core/hot_flags.h"
#include "core/thread_state.h"
#include "device/cuda_abi.h"
#include "device/real_functions.h"
#include "tracking/allocation_record.h"

namespace vramtrace {
namespace {

constexpr int kMaxDevices = 64;  // device ordinals 0..63 (the bit masks below)
constexpr int kMaxPools = 256;   // pools remembered; more are not reported

// ---- driver functions we call ourselves (the driver's own, never our wrappers) ----
std::atomic<void *> g_fn[8];
enum Fn { kGetUuidV2, kGetUuid, kPciBusId, kTotalMem, kPoolAttr, kDefaultPool, kGraphMemAttr, kFnCount };
constexpr const char *kFnNames[kFnCount] = {"cuDeviceGetUuid_v2", "cuDeviceGetUuid", "cuDeviceGetPCIBusId",
                                            "cuDeviceTotalMem_v2", "cuMemPoolGetAttribute",
                                            "cuDeviceGetDefaultMemPool", "cuDeviceGetGraphMemAttribute"};
void *driver_fn(Fn f) {
    void *p = g_fn[f].load(std::memory_order_acquire);
    if (p == nullptr) {
        p = driver_symbol(kFnNames[f]);
        if (p != nullptr) g_fn[f].store(p, std::memory_order_release);
    }
    return p;
}

// ---- device identity: written once per device by the thread that wins `state`, read after ----
struct Identity {
    std::atomic<int> state; // 0 unknown, 1 being asked, 2 ready, 3 failed
    char uuid[41];
    char pci[32];
    uint64_t total_bytes;
    bool have_total;
};
Identity g_identity[kMaxDevices];

// ---- pools and devices seen ----
struct PoolSlot {
    std::atomic<uint64_t> handle;
    std::atomic<int> device; // -2 unknown (a pool the program passed us; resolved at dump time)
};
PoolSlot g_pools[kMaxPools];
// A slot's handle while the thread that claimed it writes its device (no pool has this handle).
constexpr uint64_t kClaimedSlot = ~uint64_t{0};
bool is_pool(uint64_t handle) { return handle != 0 && handle != kClaimedSlot; }
std::atomic<int> g_pool_slots_used{0}; // slots [0, used) have been handed out at least once
std::atomic<uint64_t> g_default_pool_devices{0};
std::atomic<uint64_t> g_graph_devices{0};

// ---- the exit sample (see device_info.h) ----
struct Sample {
    int pool_count;
    snapshot::Pool pools[kMaxPools + 2 * kMaxDevices];
    bool have_used[kMaxDevices];
    uint64_t process_used[kMaxDevices];
};
Sample *g_exit_sample = nullptr; // set once by the atexit handler; never freed
std::atomic<bool> g_exit_registered{false};

bool valid_device(int device) { return device >= 0 && device < kMaxDevices; }

void ask_identity(int device) {
    Identity &id = g_identity[device];
    unsigned char bytes[16];
    using UuidFn = CUresult (*)(unsigned char *, int);
    auto uuid_fn = reinterpret_cast<UuidFn>(driver_fn(kGetUuidV2));
    if (uuid_fn == nullptr) uuid_fn = reinterpret_cast<UuidFn>(driver_fn(kGetUuid));
    if (uuid_fn != nullptr && uuid_fn(bytes, device) == cuda::kSuccess) format_gpu_uuid(bytes, id.uuid);
    auto pci_fn = reinterpret_cast<CUresult (*)(char *, int, int)>(driver_fn(kPciBusId));
    char pci[sizeof id.pci] = {};
    if (pci_fn != nullptr && pci_fn(pci, sizeof pci - 1, device) == cuda::kSuccess) {
        // nvidia-smi and NVML spell the bus id with lowercase hex digits.
        for (char &c : pci) c = (c >= 'A' && c <= 'F') ? static_cast<char>(c - 'A' + 'a') : c;
        memcpy(id.pci, pci, sizeof pci);
    }
    auto total_fn = reinterpret_cast<CUresult (*)(size_t *, int)>(driver_fn(kTotalMem));
    size_t total = 0;
    if (total_fn != nullptr && total_fn(&total, device) == cuda::kSuccess) {
        id.total_bytes = total;
        id.have_total = true;
    }
}

bool pool_attr(uint64_t pool, int attr, uint64_t *value) {
    auto fn = reinterpret_cast<CUresult (*)(void *, int, void *)>(driver_fn(kPoolAttr));
    uint64_t v = 0;
    if (fn == nullptr || fn(reinterpret_cast<void *>(pool), attr, &v) != cuda::kSuccess) return false;
    *value = v;
    return true;
}

bool graph_attr(int device, int attr, uint64_t *value) {
    auto fn = reinterpret_cast<CUresult (*)(int, int, void *)>(driver_fn(kGraphMemAttr));
    uint64_t v = 0;
    if (fn == nullptr || fn(device, attr, &v) != cuda::kSuccess) return false;
    *value = v;
    return true;
}

bool read_graph_memory(int device, GraphMemoryFigures *out) {
    GraphMemoryFigures g;
    if (!graph_attr(device, cuda::kGraphMemAttrReservedMemCurrent, &g.reserved_bytes) ||
        !graph_attr(device, cuda::kGraphMemAttrUsedMemCurrent, &g.used_bytes))
        return false;
    graph_attr(device, cuda::kGraphMemAttrReservedMemHigh, &g.reserved_high_bytes);
    graph_attr(device, cuda::kGraphMemAttrUsedMemHigh, &g.used_high_bytes);
    *out = g;
    return true;
}

// The reporter thread's last reading of each device's graph memory (words written with relaxed
// atomics; a reader may see a mix of two readings, each figure itself whole).
struct GraphSample {
    std::atomic<bool> valid{false};
    std::atomic<uint64_t> reserved{0}, used{0}, reserved_high{0}, used_high{0};
};
GraphSample g_graph_sample[kMaxDevices];

uint64_t default_pool_of(int device) {
    auto fn = reinterpret_cast<CUresult (*)(void **, int)>(driver_fn(kDefaultPool));
    void *pool = nullptr;
    if (fn == nullptr || fn(&pool, device) != cuda::kSuccess) return 0;
    return reinterpret_cast<uint64_t>(pool);
}

bool read_pool(uint64_t handle, int device, bool is_default, snapshot::Pool *out) {
    snapshot::Pool p;
    p.handle = handle;
    p.device = device;
    p.is_default = is_default;
    if (!pool_attr(handle, cuda::kPoolAttrReservedMemCurrent, &p.reserved_bytes) ||
        !pool_attr(handle, cuda::kPoolAttrUsedMemCurrent, &p.used_bytes))
        return false; // destroyed meanwhile, or not a pool of this driver
    pool_attr(handle, cuda::kPoolAttrReservedMemHigh, &p.reserved_high_bytes);
    pool_attr(handle, cuda::kPoolAttrUsedMemHigh, &p.used_high_bytes);
    *out = p;
    return true;
}

// Every pool seen and each device's graph memory, asked of the driver now. `add` is called per pool.
template <class Add> void query_pools(Add &&add) {
    uint64_t defaults[kMaxDevices] = {};
    uint64_t default_devices = g_default_pool_devices.load(std::memory_order_relaxed);
    int slots = g_pool_slots_used.load(std::memory_order_acquire);
    // Default pools: of the devices that used cudaMallocAsync, and any the program passed us.
    bool any_unknown = false;
    for (int i = 0; i < slots; ++i)
        if (is_pool(g_pools[i].handle.load(std::memory_order_acquire)) &&
            g_pools[i].device.load(std::memory_order_relaxed) == kUnknownDevice)
            any_unknown = true;
    for (int d = 0; d < kMaxDevices; ++d) {
        bool wanted = (default_devices >> d) & 1;
        if (!wanted && !(any_unknown && g_identity[d].state.load(std::memory_order_acquire) == 2)) continue;
        defaults[d] = default_pool_of(d);
        snapshot::Pool p;
        if (wanted && defaults[d] != 0 && read_pool(defaults[d], d, true, &p)) add(p);
    }
    for (int i = 0; i < slots; ++i) {
        uint64_t h = g_pools[i].handle.load(std::memory_order_acquire);
        if (!is_pool(h)) continue;
        int device = g_pools[i].device.load(std::memory_order_relaxed);
        bool is_default = false;
        for (int d = 0; d < kMaxDevices; ++d) {
            if (defaults[d] != 0 && defaults[d] == h) {
                device = d;
                is_default = true;
            }
        }
        if (is_default && ((default_devices >> device) & 1)) continue; // listed above
        snapshot::Pool p;
        if (read_pool(h, device, is_default, &p)) add(p);
    }
    uint64_t graph_devices = g_graph_devices.load(std::memory_order_relaxed);
    for (int d = 0; d < kMaxDevices; ++d) {
        if (!((graph_devices >> d) & 1)) continue;
        snapshot::Pool p;
        p.device = d;
        p.is_graph_memory = true;
        GraphMemoryFigures g;
        if (!read_graph_memory(d, &g)) continue;
        p.reserved_bytes = g.reserved_bytes;
        p.used_bytes = g.used_bytes;
        p.reserved_high_bytes = g.reserved_high_bytes;
        p.used_high_bytes = g.used_high_bytes;
        add(p);
    }
}

// ---- NVML, declared here (nvml.h is not needed): loaded at dump time only, never required ----
using nvmlReturn_t = int;
using nvmlDevice_t = void *;
struct nvmlProcessInfo_t { // nvmlProcessInfo_v2_t, what the _v2/_v3 process queries fill
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
};
constexpr nvmlReturn_t kNvmlSuccess = 0;
constexpr nvmlReturn_t kNvmlInsufficientSize = 7;
constexpr unsigned long long kNvmlValueNotAvailable = ~0ull;

// NVML's usedGpuMemory of this process on each device with a known PCI bus id.
void query_nvml(bool have[kMaxDevices], uint64_t used[kMaxDevices]) {
    bool any = false;
    for (int d = 0; d < kMaxDevices; ++d)
        any |= g_identity[d].state.load(std::memory_order_acquire) == 2 && g_identity[d].pci[0] != 0;
    if (!any) return;
    // Atomics: the exit handler (sample_before_exit) does not hold the dump mutex, so it can run
    // while the reporter thread writes a snapshot (found by tests/sanitizers/run_tsan_e2e.sh). One
    // thread loads NVML; a thread that comes meanwhile waits for it (a dlopen: milliseconds), so the
    // exit sample does not go without NVML's figure because the reporter thread happened to be
    // loading it. Not when the loader is this very thread (the program called exit() from a signal
    // handler that interrupted the load): that one goes without NVML's figure, as does a waiter
    // after 2 s, which then stops later calls from waiting too (a child forked during the load).
    static std::atomic<int> load_state{0}; // 0 not tried, 1 being loaded, 2 done
    static std::atomic<uint32_t> loader{0};
    static std::atomic<void *> loaded{nullptr};
    int expected = 0;
    if (load_state.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) {
        loader.store(current_tid(), std::memory_order_relaxed);
        loaded.store(dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL), std::memory_order_release);
        load_state.store(2, std::memory_order_release);
    } else {
        const timespec one_ms{0, 1000 * 1000};
        int ms = 0;
        for (; ms < 2000 && load_state.load(std::memory_order_acquire) == 1 &&
               loader.load(std::memory_order_relaxed) != current_tid();
             ++ms)
            nanosleep(&one_ms, nullptr);
        if (ms == 2000) {
            expected = 1;
            load_state.compare_exchange_strong(expected, 2, std::memory_order_acq_rel);
        }
    }
    void *lib = loaded.load(std::memory_order_acquire);
    if (lib == nullptr) return;
    auto init = reinterpret_cast<nvmlReturn_t (*)()>(dlsym(lib, "nvmlInit_v2"));
    auto shutdown = reinterpret_cast<nvmlReturn_t (*)()>(dlsym(lib, "nvmlShutdown"));
    auto by_pci = reinterpret_cast<nvmlReturn_t (*)(const char *, nvmlDevice_t *)>(
        dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2"));
    using ProcFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int *, nvmlProcessInfo_t *);
    auto procs = reinterpret_cast<ProcFn>(dlsym(lib, "nvmlDeviceGetComputeRunningProcesses_v3"));
    if (procs == nullptr) procs = reinterpret_cast<ProcFn>(dlsym(lib, "nvmlDeviceGetComputeRunningProcesses_v2"));
    if (init == nullptr || shutdown == nullptr || by_pci == nullptr || procs == nullptr) return;
    if (init() != kNvmlSuccess) return;
    const unsigned self = static_cast<unsigned>(getpid());
    for (int d = 0; d < kMaxDevices; ++d) {
        const Identity &id = g_identity[d];
        if (id.state.load(std::memory_order_acquire) != 2 || id.pci[0] == 0) continue;
        nvmlDevice_t dev = nullptr;
        if (by_pci(id.pci, &dev) != kNvmlSuccess) continue;
        // Ask for the count, then for that many (plus room for processes that start meanwhile).
        unsigned count = 0;
        nvmlReturn_t r = procs(dev, &count, nullptr);
        if (r != kNvmlSuccess && r != kNvmlInsufficientSize) continue;
        for (int attempt = 0; attempt < 3 && count > 0; ++attempt) {
            unsigned capacity = count + 8;
            auto *infos = static_cast<nvmlProcessInfo_t *>(calloc(capacity, sizeof(nvmlProcessInfo_t)));
            if (infos == nullptr) break;
            count = capacity;
            r = procs(dev, &count, infos);
            if (r == kNvmlSuccess) {
                for (unsigned i = 0; i < count && i < capacity; ++i) {
                    if (infos[i].pid == self && infos[i].usedGpuMemory != kNvmlValueNotAvailable) {
                        used[d] = infos[i].usedGpuMemory;
                        have[d] = true;
                    }
                }
            }
            free(infos);
            if (r != kNvmlInsufficientSize) break;
        }
    }
    shutdown();
}

void sample_before_exit() {
    // Taken while CUDA is still up (atexit handlers run before the libraries' destructors).
    static Sample sample; // static storage: outlives nothing it needs to
    sample.pool_count = 0;
    query_pools([&](const snapshot::Pool &p) {
        if (sample.pool_count < static_cast<int>(sizeof sample.pools / sizeof sample.pools[0]))
            sample.pools[sample.pool_count++] = p;
    });
    query_nvml(sample.have_used, sample.process_used);
    g_exit_sample = &sample;
}

bool use_exit_sample(const snapshot::Snapshot &s) {
    return s.process.reason == "exit" || s.process.reason == "crash";
}

} // namespace

void format_gpu_uuid(const unsigned char b[16], char out[41]) {
    snprintf(out, 41, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
             b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

void note_device_seen_slow(int device) {
    if (!valid_device(device)) return;
    Identity &id = g_identity[device];
    if (id.state.load(std::memory_order_acquire) >= 2) {
        hot::set(hot::device_bit(device));
        return;
    }
    int expected = 0;
    if (!id.state.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) return;
    ask_identity(device);
    id.state.store(2, std::memory_order_release);
    if (!g_exit_registered.exchange(true, std::memory_order_acq_rel)) atexit(&sample_before_exit);
}

void note_pool_created(uint64_t pool, int device) {
    if (pool == 0) return;
    int used = g_pool_slots_used.load(std::memory_order_acquire);
    for (int i = 0; i < used; ++i) {
        if (g_pools[i].handle.load(std::memory_order_acquire) == pool) {
            if (device != kUnknownDevice) g_pools[i].device.store(device, std::memory_order_relaxed);
            return;
        }
    }
    for (int i = 0; i < kMaxPools; ++i) {
        uint64_t empty = 0;
        // Claim the slot, then publish the device before the handle, so a reader that sees the
        // handle sees its device. (Writing the device before claiming let a thread that lost the
        // slot overwrite the winner's device.)
        if (g_pools[i].handle.load(std::memory_order_relaxed) != 0) continue;
        if (g_pools[i].handle.compare_exchange_strong(empty, kClaimedSlot, std::memory_order_acq_rel)) {
            g_pools[i].device.store(device, std::memory_order_relaxed);
            g_pools[i].handle.store(pool, std::memory_order_release);
            int seen = g_pool_slots_used.load(std::memory_order_relaxed);
            while (seen < i + 1 && !g_pool_slots_used.compare_exchange_weak(seen, i + 1)) {
            }
            return;
        }
    }
}

void note_pool_destroyed(uint64_t pool) {
    if (pool == 0) return;
    int used = g_pool_slots_used.load(std::memory_order_acquire);
    for (int i = 0; i < used; ++i) {
        uint64_t expected = pool;
        if (g_pools[i].handle.compare_exchange_strong(expected, 0, std::memory_order_acq_rel)) return;
    }
}

void note_pool_used(uint64_t pool) { note_pool_created(pool, kUnknownDevice); }

void note_default_pool_used_slow(int device) {
    if (!valid_device(device)) return;
    uint64_t bit = uint64_t{1} << device;
    if ((g_default_pool_devices.load(std::memory_order_relaxed) & bit) == 0)
        g_default_pool_devices.fetch_or(bit, std::memory_order_relaxed);
    hot::set(hot::pool_bit(device));
}

void note_graph_memory_used(int device) {
    if (!valid_device(device)) return;
    uint64_t bit = uint64_t{1} << device;
    if ((g_graph_devices.load(std::memory_order_relaxed) & bit) == 0)
        g_graph_devices.fetch_or(bit, std::memory_order_relaxed);
}

void fill_device_info(snapshot::Snapshot &s) {
    bool have[kMaxDevices] = {};
    uint64_t used[kMaxDevices] = {};
    if (use_exit_sample(s)) {
        if (g_exit_sample != nullptr) {
            memcpy(have, g_exit_sample->have_used, sizeof have);
            memcpy(used, g_exit_sample->process_used, sizeof used);
        }
    } else {
        query_nvml(have, used);
    }
    for (snapshot::DeviceTotals &d : s.devices) {
        if (!valid_device(d.device)) continue;
        const Identity &id = g_identity[d.device];
        if (id.state.load(std::memory_order_acquire) != 2) continue;
        d.uuid = id.uuid;
        d.pci_bus_id = id.pci;
        if (id.have_total) d.total_memory_bytes = id.total_bytes;
        if (have[d.device]) d.process_used_bytes = used[d.device];
    }
}

bool graph_memory_in_use() { return g_graph_devices.load(std::memory_order_relaxed) != 0; }

void sample_graph_memory() {
    uint64_t graph_devices = g_graph_devices.load(std::memory_order_relaxed);
    for (int d = 0; d < kMaxDevices; ++d) {
        GraphMemoryFigures g;
        if (!((graph_devices >> d) & 1) || !read_graph_memory(d, &g)) continue;
        GraphSample &x = g_graph_sample[d];
        x.reserved.store(g.reserved_bytes, std::memory_order_relaxed);
        x.used.store(g.used_bytes, std::memory_order_relaxed);
        x.reserved_high.store(g.reserved_high_bytes, std::memory_order_relaxed);
        x.used_high.store(g.used_high_bytes, std::memory_order_relaxed);
        x.valid.store(true, std::memory_order_release);
    }
}

bool sampled_graph_memory(int device, GraphMemoryFigures *out) {
    if (!valid_device(device) || !g_graph_sample[device].valid.load(std::memory_order_acquire)) return false;
    const GraphSample &x = g_graph_sample[device];
    out->reserved_bytes = x.reserved.load(std::memory_order_relaxed);
    out->used_bytes = x.used.load(std::memory_order_relaxed);
    out->reserved_high_bytes = x.reserved_high.load(std::memory_order_relaxed);
    out->used_high_bytes = x.used_high.load(std::memory_order_relaxed);
    return true;
}

namespace {

// A graph memory reading goes into its device's row (added, in ordinal order, when the device had
// no counted allocation); every other pool into the pools list.
void place_pool(snapshot::Snapshot &s, const snapshot::Pool &p) {
    if (p.is_graph_memory) snapshot::add_graph_memory_to_device(s, p);
    else s.pools.push_back(p);
}

} // namespace

void fill_pools(snapshot::Snapshot &s) {
    if (use_exit_sample(s)) {
        if (g_exit_sample != nullptr)
            for (int i = 0; i < g_exit_sample->pool_count; ++i) place_pool(s, g_exit_sample->pools[i]);
        return;
    }
    query_pools([&](const snapshot::Pool &p) { place_pool(s, p); });
}

} // namespace vramtrace
