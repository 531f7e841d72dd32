// The GPUs of this host as `vramtrace top` shows them: NVML's processes split into the traced
// ones (they serve a live view) and the rest, and each GPU's memory as traced + untraced + free.
#pragma once

#include <cstdint>
#include <string>
#include <sys/types.h>
#include <vector>

#include "input/nvml_processes.h"
#include "snapshot/snapshot_model.h"

namespace vramtrace::cli {

// A traced process's devices from its reading (uuid, tracked bytes, NVML's figure when known).
struct TracedProcess {
    pid_t pid = 0;
    std::vector<snapshot::DeviceTotals> devices;
};

struct UntracedProcess {
    pid_t pid = 0;
    std::string name;
    unsigned gpu = 0;          // NvmlGpu::index
    std::string uuid;
    std::optional<uint64_t> used_bytes; // NVML usedGpuMemory, exactly as nvidia-smi reports it
};

struct GpuSplit {
    NvmlGpu gpu;
    // What traced processes have on it: each one's NVML figure, else its tracked bytes (a reading
    // has NVML's figure only where the process could load NVML).
    uint64_t traced_bytes = 0;
    uint64_t untraced_bytes = 0; // NVML's figures of the processes that are not traced
};

struct HostGpus {
    bool have_nvml = false;
    std::string error;                      // why NVML could not be read; "" when it is missing
    std::vector<GpuSplit> gpus;             // NVML's order
    std::vector<UntracedProcess> untraced;  // by GPU, then NVML's order
};

// Splits `gpus` (read_nvml_gpus) by which pids are traced; a traced device whose uuid names no
// GPU of the list (no uuid known) is left out of the bars.
HostGpus split_host_gpus(const std::vector<NvmlGpu> &gpus, const std::vector<TracedProcess> &traced);

// read_nvml_gpus then split_host_gpus.
HostGpus read_host_gpus(const std::vector<TracedProcess> &traced);

} // namespace vramtrace::cli
