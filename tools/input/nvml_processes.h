// Every GPU of this host and every process on it, as NVML (libnvidia-ml.so.1, what nvidia-smi
// reads) lists them: `vramtrace top` shows the processes that are not traced beside the traced
// ones, and each GPU's memory as traced + untraced + free. NVML is dlopen'ed when asked; a host
// without it has no such list (not an error: the traced processes are still shown).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace vramtrace::cli {

struct NvmlProcess {
    pid_t pid = 0;                         // as NVML gives it (the host's pid namespace)
    std::string name;                      // nvmlSystemGetProcessName, else /proc/PID/comm; "" unknown
    std::optional<uint64_t> used_bytes;    // usedGpuMemory: the process's whole footprint on this GPU
                                           // (context, modules, pools); none when NVML cannot say
};

struct NvmlGpu {
    unsigned index = 0;                    // NVML's index (physical order, not CUDA_VISIBLE_DEVICES)
    std::string uuid;                      // "GPU-..." as nvidia-smi prints it; devices[].uuid of a
                                           // traced reading names the same GPU
    uint64_t total_bytes = 0, free_bytes = 0, used_bytes = 0; // nvmlDeviceGetMemoryInfo
    std::vector<NvmlProcess> processes;    // compute processes (nvmlDeviceGetComputeRunningProcesses)
};

// The GPUs in NVML's order. False when NVML is not there or does not initialise (*error: one line
// saying which, empty when the library is simply missing).
bool read_nvml_gpus(std::vector<NvmlGpu> *out, std::string *error);

} // namespace vramtrace::cli
