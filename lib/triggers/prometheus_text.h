// The Prometheus text exposition (format 0.0.4) of one process's counters, for node_exporter's
// textfile collector. Pure formatting: lib/triggers/prometheus.cpp gathers the values.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace vramtrace::triggers {

struct PrometheusDevice {
    int device = 0;          // ordinal; -1 host-pinned memory, -2 unknown
    std::string uuid;        // "" when unknown
    uint64_t current_bytes = 0;
    uint64_t peak_bytes = 0;
    bool has_graph_memory = false;  // graph memory nodes were seen on the device
    uint64_t graph_reserved_bytes = 0;
};

struct PrometheusSample {
    long pid = 0;
    std::string host;
    std::string rank;        // "" when none
    std::vector<PrometheusDevice> devices; // ascending ordinal
    uint64_t oom_count = 0;
};

// Metrics (gauges per device, a counter per process), every sample labelled with pid, host, rank:
//   vramtrace_device_current_bytes{device="0",uuid="GPU-...",pid="42",host="n1",rank="0"} 1048576
//   vramtrace_device_peak_bytes{...} 4194304
//   vramtrace_device_graph_reserved_bytes{...} 33554432   (devices with graph memory nodes only: the
//       driver's graph pool, read on the reporter thread; not part of current_bytes)
//   vramtrace_oom_events_total{pid="42",host="n1",rank="0"} 0
// device is the ordinal, "host" for pinned host memory, "unknown" when the driver could not tell.
// Label values are escaped as the format requires (\\, \", \n).
std::string format_prometheus(const PrometheusSample &sample);

} // namespace vramtrace::triggers
