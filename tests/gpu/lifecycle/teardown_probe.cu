// Which memory a context teardown ends, asked of the real driver. One process per (route, kind):
// it makes one allocation of that kind in a context, tears the context down by the route
// (cudaDeviceReset, cuDevicePrimaryCtxReset_v2, the last cuDevicePrimaryCtxRelease_v2, cuCtxDestroy_v2
// of a created context), makes a fresh primary context current and asks the driver about the
// allocation again, only through queries that take an address or a device (a destroyed handle
// passed back to the driver is undefined behaviour). Prints "teardown ROUTE KIND ended|survives
// (evidence)". `teardown_probe exit` prints the context-related driver calls cudart makes after
// main returns, through CUPTI ("cupti-call exit NAME").
// Build: nvcc -cudart shared teardown_probe.cu -lcuda -ldl -o teardown_probe
// Usage: teardown_probe ROUTE KIND | teardown_probe exit
#include <cuda.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <cupti.h>

namespace {

const char *g_phase = "setup";
bool g_print_calls = false;

void CUPTIAPI on_driver_call(void *, CUpti_CallbackDomain, CUpti_CallbackId, const void *data) {
    auto *info = static_cast<const CUpti_CallbackData *>(data);
    if (!g_print_calls || info->callbackSite != CUPTI_API_ENTER || info->functionName == nullptr) return;
    const char *n = info->functionName;
    if (strstr(n, "Ctx") || strstr(n, "Reset") || strstr(n, "Release") || strstr(n, "Destroy") || strstr(n, "Free") ||
        strstr(n, "Unmap") || strstr(n, "Trim"))
        fprintf(stderr, "cupti-call %s %s\n", g_phase, n);
}

// CUPTI through dlopen, so the probe runs (without the call lists) where libcupti is missing.
void subscribe_cupti() {
    const char *paths[] = {"libcupti.so.13", "/usr/local/cuda/lib64/libcupti.so.13",
                           "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13"};
    void *h = nullptr;
    for (const char *p : paths)
        if ((h = dlopen(p, RTLD_NOW | RTLD_LOCAL)) != nullptr) break;
    if (h == nullptr) {
        printf("info no libcupti: no call lists\n");
        return;
    }
    auto sub = reinterpret_cast<CUptiResult (*)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *)>(
        dlsym(h, "cuptiSubscribe"));
    auto en = reinterpret_cast<CUptiResult (*)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain)>(
        dlsym(h, "cuptiEnableDomain"));
    CUpti_SubscriberHandle s;
    if (sub == nullptr || en == nullptr || sub(&s, on_driver_call, nullptr) != CUPTI_SUCCESS ||
        en(1, s, CUPTI_CB_DOMAIN_DRIVER_API) != CUPTI_SUCCESS)
        printf("info cupti subscribe failed: no call lists\n");
}

#define CK(x)                                                                                  \
    do {                                                                                       \
        CUresult r_ = (x);                                                                     \
        if (r_ != CUDA_SUCCESS) {                                                              \
            printf("error %s:%d %s -> %d\n", __FILE__, __LINE__, #x, static_cast<int>(r_));    \
            exit(2);                                                                           \
        }                                                                                      \
    } while (0)

constexpr size_t kBig = size_t{1} << 30;  // large enough to show in cuMemGetInfo
constexpr size_t kHost = size_t{64} << 20;

size_t free_bytes() {
    size_t f = 0, t = 0;
    CK(cuMemGetInfo(&f, &t));
    return f;
}

bool pointer_alive(CUdeviceptr p) {
    size_t range = 0;
    return cuPointerGetAttribute(&range, CU_POINTER_ATTRIBUTE_RANGE_SIZE, p) == CUDA_SUCCESS && range != 0;
}
bool host_alive(void *p) {
    unsigned flags = 0;
    return cuMemHostGetFlags(&flags, p) == CUDA_SUCCESS;
}

CUmemAllocationProp vmm_prop() {
    CUmemAllocationProp p{};
    p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    p.location.id = 0;
    return p;
}

void say(const char *route, const char *kind, bool alive, const std::string &evidence) {
    printf("teardown %s %s %s (%s)\n", route, kind, alive ? "survives" : "ended", evidence.c_str());
}

// What the allocation left behind for the check: an address to ask about, or only free memory.
struct Made {
    CUdeviceptr device_ptr = 0;
    void *host_ptr = nullptr;
    CUdeviceptr reservation = 0;
    bool graph = false;
    bool by_free_memory = false;  // device memory taken: compare cuMemGetInfo
};

Made allocate(const std::string &kind, const CUipcMemHandle *ipc) {
    Made m;
    if (kind == "device") {
        CK(cuMemAlloc(&m.device_ptr, kBig));
        m.by_free_memory = true;
    } else if (kind == "managed") {
        CK(cuMemAllocManaged(&m.device_ptr, kBig, CU_MEM_ATTACH_GLOBAL));
    } else if (kind == "host_pinned") {
        CK(cuMemAllocHost(&m.host_ptr, kHost));
    } else if (kind == "host_pinned_portable") {
        CK(cuMemHostAlloc(&m.host_ptr, kHost, CU_MEMHOSTALLOC_PORTABLE));
    } else if (kind == "host_registered") {
        m.host_ptr = aligned_alloc(4096, kHost);
        CK(cuMemHostRegister(m.host_ptr, kHost, 0));
    } else if (kind == "array") {
        CUarray a;
        CUDA_ARRAY_DESCRIPTOR ad{};
        ad.Width = 8192;
        ad.Height = 8192;
        ad.Format = CU_AD_FORMAT_FLOAT;
        ad.NumChannels = 4;
        CK(cuArrayCreate(&a, &ad));
        m.by_free_memory = true;
    } else if (kind == "async_default_pool") {
        CK(cuMemAllocAsync(&m.device_ptr, kBig, nullptr));
        CK(cuCtxSynchronize());
        m.by_free_memory = true;
    } else if (kind == "async_created_pool") {
        CUmemoryPool pool;
        CUmemPoolProps pp{};
        pp.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
        pp.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        pp.location.id = 0;
        CK(cuMemPoolCreate(&pool, &pp));
        CK(cuMemAllocFromPoolAsync(&m.device_ptr, kBig, pool, nullptr));
        CK(cuCtxSynchronize());
        m.by_free_memory = true;
    } else if (kind == "vmm_handle" || kind == "vmm_mapped" || kind == "vmm_released_mapped") {
        CUmemAllocationProp prop = vmm_prop();
        CUmemGenericAllocationHandle h;
        CK(cuMemCreate(&h, kBig, &prop, 0));
        m.by_free_memory = true;
        if (kind != "vmm_handle") {
            CK(cuMemAddressReserve(&m.device_ptr, kBig, 0, 0, 0));
            CK(cuMemMap(m.device_ptr, kBig, 0, h, 0));
            CUmemAccessDesc acc{};
            acc.location = prop.location;
            acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
            CK(cuMemSetAccess(m.device_ptr, kBig, &acc, 1));
            if (kind == "vmm_released_mapped") CK(cuMemRelease(h));
        }
    } else if (kind == "va_reservation") {
        CK(cuMemAddressReserve(&m.reservation, kBig, 0, 0, 0));
    } else if (kind == "ipc_import") {
        if (ipc == nullptr) return m;
        CK(cuIpcOpenMemHandle(&m.device_ptr, *ipc, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
    } else if (kind == "graph_memory") {
        CUgraph g;
        CK(cuGraphCreate(&g, 0));
        CUDA_MEM_ALLOC_NODE_PARAMS np{};
        np.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
        np.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        np.poolProps.location.id = 0;
        np.bytesize = kBig;
        CUgraphNode node;
        CK(cuGraphAddMemAllocNode(&node, g, nullptr, 0, &np));
        CUgraphExec exec;
        CK(cuGraphInstantiate(&exec, g, 0));
        CK(cuGraphLaunch(exec, nullptr));
        CK(cuCtxSynchronize());
        m.device_ptr = np.dptr;
        m.graph = true;
        m.by_free_memory = true;
    } else {
        printf("error unknown kind %s\n", kind.c_str());
        exit(2);
    }
    return m;
}

void check(const char *route, const std::string &kind, const Made &m, size_t free_before) {
    std::string ev;
    bool alive = false;
    char buf[160];
    if (m.device_ptr != 0 && !m.graph) {
        alive = pointer_alive(m.device_ptr);
        ev = "cuPointerGetAttribute RANGE_SIZE";
    }
    if (m.host_ptr != nullptr) {
        alive = host_alive(m.host_ptr);
        ev = "cuMemHostGetFlags";
    }
    if (m.reservation != 0) {
        CUresult fr = cuMemAddressFree(m.reservation, kBig);
        alive = fr == CUDA_SUCCESS;
        snprintf(buf, sizeof buf, "cuMemAddressFree -> %d", static_cast<int>(fr));
        ev = buf;
    }
    if (m.graph) {
        unsigned long long used = 0, reserved = 0;
        cuDeviceGetGraphMemAttribute(0, CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT, &used);
        cuDeviceGetGraphMemAttribute(0, CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT, &reserved);
        alive = reserved != 0;
        snprintf(buf, sizeof buf, "graph memory used %llu reserved %llu", used, reserved);
        ev = buf;
    }
    if (m.by_free_memory) {
        long long held = (static_cast<long long>(free_before) - static_cast<long long>(free_bytes())) >> 20;
        bool held_alive = held > 512;
        if (ev.empty()) alive = held_alive;
        snprintf(buf, sizeof buf, "%s%s%lld MiB of device memory still held", ev.c_str(), ev.empty() ? "" : "; ", held);
        ev = buf;
    }
    say(route, kind.c_str(), alive, ev);
}

CUcontext retain_primary() {
    CUcontext c;
    CK(cuDevicePrimaryCtxRetain(&c, 0));
    CK(cuCtxSetCurrent(c));
    return c;
}

int primary_active() {
    unsigned flags = 0;
    int active = -1;
    cuDevicePrimaryCtxGetState(0, &flags, &active);
    return active;
}

}  // namespace

// The IPC exporter: a child started before the parent touches CUDA. It allocates, writes the
// handle to the pipe and waits until the parent closes its end.
static void exporter(int wfd, int rfd) {
    CK(cuInit(0));
    retain_primary();
    CUdeviceptr b;
    CK(cuMemAlloc(&b, 64 << 20));
    CUipcMemHandle h;
    CK(cuIpcGetMemHandle(&h, b));
    if (write(wfd, &h, sizeof h) != sizeof h) _exit(3);
    char c1;
    while (read(rfd, &c1, 1) > 0) {
    }
    _exit(0);
}

int main(int argc, char **argv) {
    setvbuf(stdout, nullptr, _IOLBF, 0);
    if (argc == 2 && std::string(argv[1]) == "exit") {
        subscribe_cupti();
        cudaSetDevice(0);
        void *p = nullptr;
        cudaMalloc(&p, 1 << 20);
        g_phase = "exit";
        g_print_calls = true;
        printf("exit phase: cudart's handlers run after this line\n");
        return 0;
    }
    if (argc != 3) return 2;
    const char *route = argv[1];
    std::string kind = argv[2];
    int to_parent[2], to_child[2];
    CUipcMemHandle handle;
    bool have_ipc = false;
    pid_t child = -1;
    if (kind == "ipc_import") {
        if (pipe(to_parent) != 0 || pipe(to_child) != 0) return 2;
        child = fork();
        if (child == 0) {
            close(to_parent[0]);
            close(to_child[1]);
            exporter(to_parent[1], to_child[0]);
        }
        close(to_parent[1]);
        close(to_child[0]);
        have_ipc = read(to_parent[0], &handle, sizeof handle) == sizeof handle;
    }
    std::string r = route;
    CUresult rc = CUDA_SUCCESS;
    size_t base = 0;
    Made m;
    if (r == "cudaDeviceReset") {
        cudaSetDevice(0);
        cudaFree(nullptr);  // the runtime's primary context, current on this thread
        base = free_bytes();
        m = allocate(kind, have_ipc ? &handle : nullptr);
        rc = static_cast<CUresult>(cudaDeviceReset());
    } else if (r == "cuDevicePrimaryCtxReset") {
        CK(cuInit(0));
        retain_primary();
        base = free_bytes();
        m = allocate(kind, have_ipc ? &handle : nullptr);
        rc = cuDevicePrimaryCtxReset(0);
        cuDevicePrimaryCtxRelease(0);
    } else if (r == "last-cuDevicePrimaryCtxRelease") {
        CK(cuInit(0));
        retain_primary();
        base = free_bytes();
        m = allocate(kind, have_ipc ? &handle : nullptr);
        CK(cuCtxSetCurrent(nullptr));
        rc = cuDevicePrimaryCtxRelease(0);
        printf("info primary context active after the release: %d\n", primary_active());
    } else if (r == "cuCtxDestroy") {
        CK(cuInit(0));
        retain_primary();
        base = free_bytes();
        CUcontext created;
        CK(cuCtxCreate(&created, nullptr, 0, 0));
        m = allocate(kind, have_ipc ? &handle : nullptr);
        rc = cuCtxDestroy(created);
    } else {
        return 2;
    }
    printf("call %s -> %d\n", route, static_cast<int>(rc));
    retain_primary();
    if (kind == "ipc_import" && !have_ipc) printf("teardown %s ipc_import unknown (no handle)\n", route);
    else check(route, kind, m, base);
    if (child > 0) {
        close(to_child[1]);
        waitpid(child, nullptr, 0);
    }
    return 0;
}
