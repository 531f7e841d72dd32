// NVML's processes split into traced and untraced (host_gpus.h).
#include "analysis/host_gpus.h"

#include <algorithm>

namespace vramtrace::cli {

HostGpus split_host_gpus(const std::vector<NvmlGpu> &gpus, const std::vector<TracedProcess> &traced) {
    HostGpus out;
    out.have_nvml = true;
    for (const NvmlGpu &g : gpus) {
        GpuSplit split;
        split.gpu = g;
        for (const TracedProcess &t : traced)
            for (const snapshot::DeviceTotals &d : t.devices)
                if (!g.uuid.empty() && d.uuid == g.uuid) split.traced_bytes += d.process_used_bytes.value_or(d.current_bytes);
        for (const NvmlProcess &p : g.processes) {
            bool is_traced = std::any_of(traced.begin(), traced.end(), [&](const TracedProcess &t) { return t.pid == p.pid; });
            if (is_traced) continue;
            split.untraced_bytes += p.used_bytes.value_or(0);
            out.untraced.push_back({p.pid, p.name, g.index, g.uuid, p.used_bytes});
        }
        out.gpus.push_back(std::move(split));
    }
    return out;
}

HostGpus read_host_gpus(const std::vector<TracedProcess> &traced) {
    std::vector<NvmlGpu> gpus;
    std::string error;
    if (!read_nvml_gpus(&gpus, &error)) {
        HostGpus none;
        none.error = error;
        return none;
    }
    return split_host_gpus(gpus, traced);
}

} // namespace vramtrace::cli
