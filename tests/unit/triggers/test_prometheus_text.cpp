// The Prometheus text exposition of lib/triggers/prometheus_text.h, byte for byte.
#include <catch2/catch.hpp>

#include "triggers/prometheus_text.h"

using namespace vramtrace::triggers;

TEST_CASE("prometheus: gauges per device and the OOM counter, labels escaped") {
    PrometheusSample s;
    s.pid = 4242;
    s.host = "node\"7\\";
    s.rank = "";
    s.devices = {{-1, "", 4096, 8192}, {0, "GPU-1", 1048576, 4194304}};
    s.oom_count = 2;
    CHECK(format_prometheus(s) ==
          "# HELP vramtrace_device_current_bytes Bytes this process holds on the device through intercepted CUDA allocations.\n"
          "# TYPE vramtrace_device_current_bytes gauge\n"
          "vramtrace_device_current_bytes{device=\"host\",uuid=\"\",pid=\"4242\",host=\"node\\\"7\\\\\",rank=\"\"} 4096\n"
          "vramtrace_device_current_bytes{device=\"0\",uuid=\"GPU-1\",pid=\"4242\",host=\"node\\\"7\\\\\",rank=\"\"} 1048576\n"
          "# HELP vramtrace_device_peak_bytes Highest vramtrace_device_current_bytes since the process started.\n"
          "# TYPE vramtrace_device_peak_bytes gauge\n"
          "vramtrace_device_peak_bytes{device=\"host\",uuid=\"\",pid=\"4242\",host=\"node\\\"7\\\\\",rank=\"\"} 8192\n"
          "vramtrace_device_peak_bytes{device=\"0\",uuid=\"GPU-1\",pid=\"4242\",host=\"node\\\"7\\\\\",rank=\"\"} 4194304\n"
          "# HELP vramtrace_oom_events_total Intercepted allocations that failed with out-of-memory.\n"
          "# TYPE vramtrace_oom_events_total counter\n"
          "vramtrace_oom_events_total{pid=\"4242\",host=\"node\\\"7\\\\\",rank=\"\"} 2\n");
}

TEST_CASE("prometheus: the graph pool gauge only for devices with graph memory nodes") {
    PrometheusSample s;
    s.pid = 7;
    s.host = "n";
    s.rank = "3";
    s.devices = {{0, "GPU-0", 100, 200}, {1, "GPU-1", 300, 400, true, 33554432}};
    std::string text = format_prometheus(s);
    CHECK(text.find("# TYPE vramtrace_device_graph_reserved_bytes gauge\n"
                    "vramtrace_device_graph_reserved_bytes{device=\"1\",uuid=\"GPU-1\",pid=\"7\",host=\"n\",rank=\"3\"} "
                    "33554432\n# HELP vramtrace_oom_events_total") != std::string::npos);
    CHECK(text.find("vramtrace_device_graph_reserved_bytes{device=\"0\"") == std::string::npos);
    s.devices[1].has_graph_memory = false;
    CHECK(format_prometheus(s).find("graph_reserved") == std::string::npos);
}
