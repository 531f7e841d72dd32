// NVML's GPUs and their processes for `vramtrace top` (nvml_processes.h). nvml.h is not needed:
// the few entry points and structs used are declared here with NVML's published layouts.
#include "input/nvml_processes.h"

#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <fstream>

namespace vramtrace::cli {
namespace {

using nvmlReturn_t = int;
using nvmlDevice_t = void *;
struct nvmlMemory_t {
    unsigned long long total, free, used;
};
struct nvmlProcessInfo_t { // nvmlProcessInfo_v2_t, what the _v3 query fills
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId, computeInstanceId;
};
constexpr nvmlReturn_t kSuccess = 0, kInsufficientSize = 7;
constexpr unsigned long long kValueNotAvailable = ~0ull;

std::string proc_comm(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/comm");
    std::string name;
    std::getline(in, name);
    return name;
}

} // namespace

bool read_nvml_gpus(std::vector<NvmlGpu> *out, std::string *error) {
    out->clear();
    error->clear();
    // Loaded once and kept: NVML's own threads and atexit handlers outlive a dlclose badly.
    static void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) return false;
    auto init = reinterpret_cast<nvmlReturn_t (*)()>(dlsym(lib, "nvmlInit_v2"));
    auto count_fn = reinterpret_cast<nvmlReturn_t (*)(unsigned *)>(dlsym(lib, "nvmlDeviceGetCount_v2"));
    auto by_index = reinterpret_cast<nvmlReturn_t (*)(unsigned, nvmlDevice_t *)>(dlsym(lib, "nvmlDeviceGetHandleByIndex_v2"));
    auto uuid_fn = reinterpret_cast<nvmlReturn_t (*)(nvmlDevice_t, char *, unsigned)>(dlsym(lib, "nvmlDeviceGetUUID"));
    auto memory = reinterpret_cast<nvmlReturn_t (*)(nvmlDevice_t, nvmlMemory_t *)>(dlsym(lib, "nvmlDeviceGetMemoryInfo"));
    using ProcFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned *, nvmlProcessInfo_t *);
    auto procs = reinterpret_cast<ProcFn>(dlsym(lib, "nvmlDeviceGetComputeRunningProcesses_v3"));
    auto name_fn = reinterpret_cast<nvmlReturn_t (*)(unsigned, char *, unsigned)>(dlsym(lib, "nvmlSystemGetProcessName"));
    if (!init || !count_fn || !by_index || !memory || !procs) {
        *error = "NVML (libnvidia-ml.so.1) lacks the entry points for the GPU process list";
        return false;
    }
    // Started once and kept for the viewer's life: nvmlInit costs tens of milliseconds per GPU,
    // and the TUI's process list asks every second.
    static nvmlReturn_t started = init();
    if (started != kSuccess) {
        *error = "NVML does not start (nvmlInit_v2: " + std::to_string(started) + ")";
        return false;
    }
    unsigned count = 0;
    if (count_fn(&count) != kSuccess) count = 0;
    for (unsigned i = 0; i < count; ++i) {
        nvmlDevice_t dev = nullptr;
        if (by_index(i, &dev) != kSuccess) continue;
        NvmlGpu gpu;
        gpu.index = i;
        char uuid[96] = {};
        if (uuid_fn != nullptr && uuid_fn(dev, uuid, sizeof uuid) == kSuccess) gpu.uuid = uuid;
        nvmlMemory_t m{};
        if (memory(dev, &m) == kSuccess) gpu.total_bytes = m.total, gpu.free_bytes = m.free, gpu.used_bytes = m.used;
        // The list can grow between the size query and the fill: ask again with the new size.
        std::vector<nvmlProcessInfo_t> infos(16);
        for (int attempt = 0; attempt < 4; ++attempt) {
            unsigned n = unsigned(infos.size());
            nvmlReturn_t r = procs(dev, &n, infos.data());
            if (r == kInsufficientSize) {
                infos.resize(size_t(n) + 8);
                continue;
            }
            if (r != kSuccess) n = 0;
            for (unsigned k = 0; k < n; ++k) {
                NvmlProcess p;
                p.pid = pid_t(infos[k].pid);
                if (infos[k].usedGpuMemory != kValueNotAvailable) p.used_bytes = infos[k].usedGpuMemory;
                char name[256] = {};
                if (name_fn != nullptr && name_fn(infos[k].pid, name, sizeof name) == kSuccess) p.name = name;
                if (p.name.empty()) p.name = proc_comm(p.pid);
                gpu.processes.push_back(std::move(p));
            }
            break;
        }
        out->push_back(std::move(gpu));
    }
    return true;
}

} // namespace vramtrace::cli
