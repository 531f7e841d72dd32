#include "device/real_functions.h"

#include <atomic>
#include <cstring>
#include <dlfcn.h>
#include <link.h>

#include "core/log.h"
#include "device/current_context.h"
#include "tracking/allocation_record.h"

namespace vramtrace {
namespace {

std::atomic<void *> g_real_dlsym{nullptr};
std::atomic<void *> g_driver_handle{nullptr};
std::atomic<void *> g_cu_pointer_get_attribute{nullptr};
std::atomic<void *> g_cu_mem_get_address_range{nullptr};
std::atomic<void *> g_cu_stream_get_device{nullptr};
// In a slot: the loaded driver was asked and does not have the function (older than its release).
void *const kAbsent = reinterpret_cast<void *>(1);

std::atomic<int> g_driver_version{0};

bool is_pseudo_handle(void *h) { return h == RTLD_NEXT || h == RTLD_DEFAULT; }

} // namespace

void *cached_driver_symbol(std::atomic<void *> &slot, const char *name) {
    void *p = slot.load(std::memory_order_acquire);
    if (p == nullptr) {
        p = driver_symbol(name);
        if (p != nullptr) slot.store(p, std::memory_order_release);
    }
    return p;
}

DlsymFn real_dlsym() {
    void *p = g_real_dlsym.load(std::memory_order_acquire);
    if (p == nullptr) {
        // dlvsym is not interposed by us, so this reaches glibc. Prefer the current version; glibc
        // before 2.34 only has the old one. Both are the same function in glibc >= 2.34.
        p = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
        if (p == nullptr) p = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
        g_real_dlsym.store(p, std::memory_order_release);
    }
    return reinterpret_cast<DlsymFn>(p);
}

void note_driver_handle(void *handle) {
    if (handle == nullptr || is_pseudo_handle(handle)) return;
    void *expected = nullptr;
    g_driver_handle.compare_exchange_strong(expected, handle, std::memory_order_acq_rel);
}

void *driver_handle() {
    void *h = g_driver_handle.load(std::memory_order_acquire);
    if (h != nullptr) return h;
    // Only find a driver that is already loaded: loading libcuda on our own would change the process.
    // Asked once: dlopen takes the loader's lock, and a driver of another name (or one loaded later)
    // is still learned from the handle the program passes to dlsym (note_driver_handle).
    static std::atomic<bool> asked{false};
    if (asked.exchange(true, std::memory_order_acq_rel)) return nullptr;
    h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (h != nullptr) note_driver_handle(h);
    return g_driver_handle.load(std::memory_order_acquire);
}

void *driver_symbol(const char *name) {
    void *h = driver_handle();
    return h ? real_dlsym()(h, name) : nullptr;
}

namespace {

// A runtime (libcudart.so*) that dlsym(RTLD_NEXT) cannot see: one loaded as a dependency of a library
// dlopen'ed with RTLD_LOCAL (Python imports extension modules that way; ctypes.CDLL's default too).
// The program's calls still reach our exported hooks (the preloaded library is in the global scope),
// so without this every runtime call would fail with 999. The loaded objects' paths are collected
// inside dl_iterate_phdr and opened after it returns (the callback runs under the loader's write
// lock; dlopen or dlsym there would take the loader's other lock in the opposite order to a
// concurrent dlopen). The handle from dlopen(RTLD_NOLOAD) is kept (never closed), so the function
// stays mapped. With several runtimes loaded locally the first in load order is used, which may not
// be the caller's: said once on stderr.
struct LocalRuntimes {
    static constexpr int kMax = 4;
    char path[kMax][512];
    int count = 0;
};

int collect_local_runtime(dl_phdr_info *info, size_t, void *data) {
    auto *found = static_cast<LocalRuntimes *>(data);
    const char *path = info->dlpi_name;
    if (path == nullptr || *path == 0 || found->count == LocalRuntimes::kMax) return 0;
    const char *base = strrchr(path, '/');
    base = base != nullptr ? base + 1 : path;
    if (strncmp(base, "libcudart.so", 12) != 0 || strlen(path) >= sizeof found->path[0]) return 0;
    strcpy(found->path[found->count++], path);
    return 0;
}

void *local_runtime_symbol(DlsymFn dl, const char *name) {
    LocalRuntimes runtimes;
    dl_iterate_phdr(&collect_local_runtime, &runtimes);
    void *found = nullptr;
    int with_symbol = 0, chosen = 0;
    for (int i = 0; i < runtimes.count; ++i) {
        void *h = dlopen(runtimes.path[i], RTLD_LAZY | RTLD_NOLOAD);
        void *p = h != nullptr ? dl(h, name) : nullptr;
        if (p == nullptr) continue;
        if (found == nullptr) found = p, chosen = i;
        ++with_symbol;
    }
    static std::atomic<bool> warned{false};
    if (with_symbol > 1 && !warned.exchange(true, std::memory_order_relaxed))
        log_warning("%d CUDA runtimes are loaded outside the global scope; runtime calls go to the first "
                    "(%s), which may not be the caller's", with_symbol, runtimes.path[chosen]);
    return found;
}

// Whether `p` is code of this library: then a look-up found one of our own definitions of the
// name (the exported one or a handed-out entry point), never a function to forward to.
bool in_this_library(void *p) {
    static void *own_base = [] {
        Dl_info self{};
        return dladdr(reinterpret_cast<void *>(&detail::look_up_real), &self) != 0 ? self.dli_fbase : nullptr;
    }();
    Dl_info where{};
    return own_base != nullptr && dladdr(p, &where) != 0 && where.dli_fbase == own_base;
}

} // namespace

std::atomic<void *> detail::g_real[kApiCount];

void *detail::look_up_real(ApiId id) {
    const int i = static_cast<int>(id);
    void *p = nullptr;
    const ApiInfo &info = api_info(id);
    DlsymFn dl = real_dlsym();
    if (dl == nullptr) return nullptr;
    if (info.family == HookFamily::Driver) {
        void *h = driver_handle();
        p = h ? dl(h, info.name) : dl(RTLD_NEXT, info.name);
    } else {
        p = dl(RTLD_NEXT, info.name);
        if (p == nullptr) p = local_runtime_symbol(dl, info.name);
    }
    if (p != nullptr && in_this_library(p)) p = nullptr; // never forward to ourselves
    // Absence is not cached: the library that defines it may be loaded later.
    if (p != nullptr) g_real[i].store(p, std::memory_order_release);
    return p;
}

void *detail::look_up_real_or_warn(ApiId id) {
    void *p = look_up_real(id);
    if (p == nullptr)
        log_warning("cannot find the real %s; the call fails with error 999 (unknown)", api_info(id).name);
    return p;
}

int current_device_ordinal() { return current_context().device; }

int stream_device_ordinal(uint64_t stream) {
    // cuStreamGetDevice came with CUDA 12.8. On an older driver its absence is remembered, so the
    // hook does not pay a failed dlsym per allocation.
    void *p = g_cu_stream_get_device.load(std::memory_order_acquire);
    if (p == nullptr && driver_handle() != nullptr) {
        p = driver_symbol("cuStreamGetDevice");
        g_cu_stream_get_device.store(p != nullptr ? p : kAbsent, std::memory_order_release);
    }
    if (p == nullptr || p == kAbsent) return kUnknownDevice;
    int device = kUnknownDevice;
    auto get = reinterpret_cast<CUresult (*)(void *, int *)>(p);
    if (get(reinterpret_cast<void *>(stream), &device) != cuda::kSuccess) return kUnknownDevice;
    return device;
}

int visible_device_count() {
    // -1: not asked yet; 0: the driver did not answer (asked once only: a missing or failing entry
    // point does not start to answer later in a process whose allocations succeed).
    static std::atomic<int> count{-1};
    int n = count.load(std::memory_order_relaxed);
    if (n >= 0) return n;
    auto get = reinterpret_cast<CUresult (*)(int *)>(driver_symbol("cuDeviceGetCount"));
    int asked = 0;
    if (get == nullptr || get(&asked) != cuda::kSuccess || asked < 0) asked = 0;
    count.store(asked, std::memory_order_relaxed);
    return asked;
}

int pointer_device_ordinal(uint64_t ptr) {
    void *p = cached_driver_symbol(g_cu_pointer_get_attribute, "cuPointerGetAttribute");
    if (p == nullptr) return kUnknownDevice;
    int device = kUnknownDevice;
    auto get = reinterpret_cast<CUresult (*)(void *, int, CUdeviceptr)>(p);
    if (get(&device, cuda::kPointerAttributeDeviceOrdinal, ptr) != cuda::kSuccess) return kUnknownDevice;
    return device;
}

uint64_t allocation_size_at(uint64_t ptr) {
    void *p = cached_driver_symbol(g_cu_mem_get_address_range, "cuMemGetAddressRange_v2");
    if (p == nullptr) return 0;
    CUdeviceptr base = 0;
    size_t size = 0;
    auto get = reinterpret_cast<CUresult (*)(CUdeviceptr *, size_t *, CUdeviceptr)>(p);
    return get(&base, &size, ptr) == cuda::kSuccess ? size : 0;
}

int primary_context_active(int device) {
    static std::atomic<void *> fn{nullptr};
    auto get = reinterpret_cast<CUresult (*)(int, unsigned *, int *)>(cached_driver_symbol(fn, "cuDevicePrimaryCtxGetState"));
    unsigned flags = 0;
    int active = -1;
    if (get == nullptr || get(device, &flags, &active) != cuda::kSuccess) return -1;
    return active;
}

int handle_device_ordinal(uint64_t handle) {
    static std::atomic<void *> fn{nullptr};
    auto get = reinterpret_cast<CUresult (*)(cuda::CUmemAllocationPropPrefix *, uint64_t)>(
        cached_driver_symbol(fn, "cuMemGetAllocationPropertiesFromHandle"));
    // The driver writes the whole CUmemAllocationProp (32 bytes in CUDA 13): give it room.
    struct {
        cuda::CUmemAllocationPropPrefix prefix;
        unsigned char rest[64];
    } prop{};
    if (get == nullptr || get(&prop.prefix, handle) != cuda::kSuccess) return kUnknownDevice;
    return prop.prefix.location.type == cuda::kMemLocationTypeDevice ? prop.prefix.location.id : kHostDevice;
}

int driver_version() {
    int v = g_driver_version.load(std::memory_order_relaxed);
    if (v != 0) return v;
    auto get = reinterpret_cast<CUresult (*)(int *)>(driver_symbol("cuDriverGetVersion"));
    if (get != nullptr && get(&v) == cuda::kSuccess) g_driver_version.store(v, std::memory_order_relaxed);
    return g_driver_version.load(std::memory_order_relaxed);
}

int cached_driver_version() { return g_driver_version.load(std::memory_order_relaxed); }

} // namespace vramtrace
