// The Prometheus text exposition of lib/triggers/prometheus_text.h, byte for byte, and the parts
// the sweep relies on: the header, marking a file ended, the call-site selection.
#include <catch2/catch.hpp>

#include "report/text_safety.h"
#include "triggers/prometheus_text.h"

using namespace vramtrace::triggers;

namespace {

PrometheusSample two_devices() {
    PrometheusSample s;
    s.pid = 4242;
    s.host = "node\"7\\";
    s.rank = "";
    s.command = "train";
    s.start_ticks = 777;
    s.boot_id = "b00t-1d";
    s.start_time_ms = 1700000000125;
    s.update_time_ms = 1700000015007;
    PrometheusDevice host{-1, "", 4096, 8192};
    PrometheusDevice gpu{0, "GPU-1", 1048576, 4194304};
    gpu.capacity_bytes = 67108864;
    gpu.nvml_used_bytes = 3145728;
    gpu.oom_count = 2;
    s.devices = {gpu, host};
    s.oom_count = 2;
    return s;
}

const std::string kProc = "pid=\"4242\",host=\"node\\\"7\\\\\",rank=\"\",command=\"train\"";
const std::string kDev0 = "device=\"0\",uuid=\"GPU-1\"," + kProc;
const std::string kHost = "device=\"host\",uuid=\"\"," + kProc;

} // namespace

TEST_CASE("prometheus: every family of a reading, byte for byte") {
    PrometheusSample s = two_devices();
    s.sites_on = true;
    PrometheusSite a{0, "make(int)", "/src/a.cpp:7", "activation", 1048576, 2};
    PrometheusSite other{0};
    other.other = true;
    PrometheusSite host_other{-1};
    host_other.other = true;
    host_other.live_bytes = 4096;
    host_other.live_count = 1;
    s.sites = {a, other, host_other};
    const std::string a_labels = "device=\"0\",uuid=\"GPU-1\",function=\"make(int)\",file_line=\"/src/a.cpp:7\",category=\"activation\"," + kProc;
    const std::string o_labels = "device=\"0\",uuid=\"GPU-1\",function=\"(other)\",file_line=\"\",category=\"\"," + kProc;
    const std::string h_labels = "device=\"host\",uuid=\"\",function=\"(other)\",file_line=\"\",category=\"\"," + kProc;
    const std::string body =
        "# HELP vramtrace_device_current_bytes Bytes this process holds on the device through intercepted CUDA allocations.\n"
        "# TYPE vramtrace_device_current_bytes gauge\n"
        "vramtrace_device_current_bytes{" + kDev0 + "} 1048576\n"
        "vramtrace_device_current_bytes{" + kHost + "} 4096\n"
        "# HELP vramtrace_device_peak_bytes Highest vramtrace_device_current_bytes since the process started.\n"
        "# TYPE vramtrace_device_peak_bytes gauge\n"
        "vramtrace_device_peak_bytes{" + kDev0 + "} 4194304\n"
        "vramtrace_device_peak_bytes{" + kHost + "} 8192\n"
        "# HELP vramtrace_device_capacity_bytes The device's memory capacity (cuMemGetInfo total).\n"
        "# TYPE vramtrace_device_capacity_bytes gauge\n"
        "vramtrace_device_capacity_bytes{" + kDev0 + "} 67108864\n"
        "# HELP vramtrace_device_nvml_used_bytes Bytes NVML charges this process on the device (context, modules and all memory).\n"
        "# TYPE vramtrace_device_nvml_used_bytes gauge\n"
        "vramtrace_device_nvml_used_bytes{" + kDev0 + "} 3145728\n"
        "# HELP vramtrace_device_untracked_bytes vramtrace_device_nvml_used_bytes minus tracked and graph memory (0 when below).\n"
        "# TYPE vramtrace_device_untracked_bytes gauge\n"
        "vramtrace_device_untracked_bytes{" + kDev0 + "} 2097152\n"
        "# HELP vramtrace_device_oom_events_total Intercepted allocations on the device that failed with out-of-memory.\n"
        "# TYPE vramtrace_device_oom_events_total counter\n"
        "vramtrace_device_oom_events_total{" + kDev0 + "} 2\n"
        "vramtrace_device_oom_events_total{" + kHost + "} 0\n"
        "# HELP vramtrace_oom_events_total Intercepted allocations that failed with out-of-memory.\n"
        "# TYPE vramtrace_oom_events_total counter\n"
        "vramtrace_oom_events_total{" + kProc + "} 2\n"
        "# HELP vramtrace_call_site_live_bytes Live bytes by call site: the top sites of each device and one (other) series with the rest.\n"
        "# TYPE vramtrace_call_site_live_bytes gauge\n"
        "vramtrace_call_site_live_bytes{" + a_labels + "} 1048576\n"
        "vramtrace_call_site_live_bytes{" + o_labels + "} 0\n"
        "vramtrace_call_site_live_bytes{" + h_labels + "} 4096\n"
        "# HELP vramtrace_call_site_live_allocations Live allocations by call site, the same series as vramtrace_call_site_live_bytes.\n"
        "# TYPE vramtrace_call_site_live_allocations gauge\n"
        "vramtrace_call_site_live_allocations{" + a_labels + "} 2\n"
        "vramtrace_call_site_live_allocations{" + o_labels + "} 0\n"
        "vramtrace_call_site_live_allocations{" + h_labels + "} 1\n"
        "# HELP vramtrace_process_start_time_seconds When vramtrace started in the process (Unix time).\n"
        "# TYPE vramtrace_process_start_time_seconds gauge\n"
        "vramtrace_process_start_time_seconds{" + kProc + "} 1700000000.125\n"
        "# HELP vramtrace_process_last_update_time_seconds When this reading was taken (Unix time).\n"
        "# TYPE vramtrace_process_last_update_time_seconds gauge\n"
        "vramtrace_process_last_update_time_seconds{" + kProc + "} 1700000015.007\n"
        "# HELP vramtrace_process_up 1 while the process runs; 0 once it has exited, died or was found gone.\n"
        "# TYPE vramtrace_process_up gauge\n"
        "vramtrace_process_up{" + kProc + "} ";
    const std::string header = "# vramtrace textfile v1 host=node_7_ pid=4242 start_ticks=777 boot_id=b00t-1d updated_ms=1700000015007 ended_ms=";
    CHECK(format_prometheus(s) == header + "0\n" + body + "1\n");
    CHECK(assemble_prometheus(format_prometheus_parts(s), 1700000020500) ==
          header + "1700000020500\n" + body + "0\n"
          "# HELP vramtrace_process_end_time_seconds When the process exited or died (Unix time); its last update when it was found gone.\n"
          "# TYPE vramtrace_process_end_time_seconds gauge\n"
          "vramtrace_process_end_time_seconds{" + kProc + "} 1700000020.500\n");
    CHECK(vramtrace::report::is_valid_utf8(format_prometheus(s)));
}

TEST_CASE("prometheus: the graph pool and pool gauges only for the devices that have them") {
    PrometheusSample s;
    s.pid = 7;
    s.host = "n";
    s.rank = "3";
    s.devices = {{0, "GPU-0", 100, 200}, {1, "GPU-1", 300, 400, true, 33554432}};
    s.devices[0].pool_reserved_bytes = 2097152;
    s.devices[1].nvml_used_bytes = 100; // below tracked + graph memory: no gap
    std::string text = format_prometheus(s);
    const std::string proc = ",pid=\"7\",host=\"n\",rank=\"3\",command=\"\"";
    CHECK(text.find("# TYPE vramtrace_device_graph_reserved_bytes gauge\n"
                    "vramtrace_device_graph_reserved_bytes{device=\"1\",uuid=\"GPU-1\"" + proc + "} 33554432\n# HELP") !=
          std::string::npos);
    CHECK(text.find("vramtrace_device_graph_reserved_bytes{device=\"0\"") == std::string::npos);
    CHECK(text.find("\nvramtrace_device_pool_reserved_bytes{device=\"0\",uuid=\"GPU-0\"" + proc + "} 2097152\n# HELP") !=
          std::string::npos);
    CHECK(text.find("vramtrace_device_pool_reserved_bytes{device=\"1\"") == std::string::npos);
    CHECK(text.find("\nvramtrace_device_untracked_bytes{device=\"1\",uuid=\"GPU-1\"" + proc + "} 0\n# HELP") != std::string::npos);
    CHECK(text.find("capacity_bytes") == std::string::npos); // no device told its capacity
    CHECK(text.find("call_site") == std::string::npos);      // VRAMTRACE_PROMETHEUS_SITES=0
    s.devices[1].has_graph_memory = false;
    CHECK(format_prometheus(s).find("graph_reserved") == std::string::npos);
}

TEST_CASE("prometheus: the top N sites per device and one (other) series with the exact rest") {
    std::vector<PrometheusSite> in = {
        {0, "a()", "a.cpp:1", "", 100, 1}, {0, "b()", "b.cpp:2", "", 300, 1}, {0, "c()", "c.cpp:3", "", 200, 2},
        {0, "d()", "d.cpp:4", "", 200, 1}, {1, "e()", "e.cpp:5", "", 50, 1},  {0, "b()", "b.cpp:2", "", 5, 1},
        {2, "f()", "f.cpp:6", "", 0, 0},
    };
    std::vector<PrometheusSite> out = select_top_sites(in, 2);
    REQUIRE(out.size() == 6);
    CHECK((out[0].function == "b()" && out[0].live_bytes == 305 && out[0].live_count == 2 && !out[0].other));
    CHECK((out[1].function == "c()" && out[1].live_bytes == 200 && out[1].live_count == 2)); // more allocations first
    CHECK((out[2].other && out[2].device == 0 && out[2].live_bytes == 300 && out[2].live_count == 2));
    CHECK((out[3].function == "e()" && out[3].device == 1 && out[3].live_bytes == 50));
    CHECK((out[4].other && out[4].device == 1 && out[4].live_bytes == 0));
    // Device 2 had only an empty site: it gets its (other) series all the same.
    CHECK((out[5].other && out[5].device == 2 && out[5].live_bytes == 0));
    CHECK(select_top_sites(in, 0).size() == 3);
    CHECK(select_top_sites(in, 0)[0].live_bytes == 805);
}

TEST_CASE("prometheus: label values bounded on character boundaries, sites equal once bounded are one series") {
    std::string long_path = "/" + std::string(300, 'd') + "/\xc3\xa9t\xc3\xa9.py:9";
    std::string bounded = bound_label_value(long_path, kFileLineLabelBytes, true);
    CHECK(bounded.size() <= kFileLineLabelBytes);
    CHECK(bounded.substr(0, 3) == "...");
    CHECK(bounded.substr(bounded.size() - 10) == "\xc3\xa9t\xc3\xa9.py:9");
    CHECK(vramtrace::report::is_valid_utf8(bounded));
    std::string cut = bound_label_value(std::string(254, 'f') + "\xc3\xa9\xc3\xa9", kFunctionLabelBytes, false);
    CHECK(cut == std::string(253, 'f') + "...");
    CHECK(bound_label_value("bad\xff", 10, false) == "bad\xef\xbf\xbd");
    std::vector<PrometheusSite> in = {{0, std::string(300, 'g') + "1", "x:1", "", 10, 1},
                                      {0, std::string(300, 'g') + "2", "x:1", "", 20, 1}};
    std::vector<PrometheusSite> out = select_top_sites(in, 10);
    REQUIRE(out.size() == 2);
    CHECK(out[0].live_bytes == 30);
    CHECK(out[0].function == std::string(253, 'g') + "...");
}

TEST_CASE("prometheus: the header is parsed back, a file is marked ended once, as the exit writes it") {
    PrometheusSample s = two_devices();
    std::string up = format_prometheus(s);
    PrometheusFileHeader h;
    REQUIRE(parse_prometheus_header(up, &h));
    CHECK(h.host == "node_7_");
    CHECK(h.pid == 4242);
    CHECK(h.start_ticks == 777);
    CHECK(h.boot_id == "b00t-1d");
    CHECK(h.updated_ms == 1700000015007);
    CHECK(h.ended_ms == 0);
    std::string ended;
    REQUIRE(mark_prometheus_ended(up, h.updated_ms, &ended));
    CHECK(ended == assemble_prometheus(format_prometheus_parts(s), 1700000015007));
    std::string again;
    CHECK_FALSE(mark_prometheus_ended(ended, 1700000016000, &again)); // already ended
    REQUIRE(parse_prometheus_header(ended, &h));
    CHECK(h.ended_ms == 1700000015007);
    // Not ours: no header, another first line, a header with a field missing or unknown.
    CHECK_FALSE(parse_prometheus_header("# HELP x y\n", &h));
    CHECK_FALSE(parse_prometheus_header("# vramtrace textfile v1 host=a pid=1 start_ticks=2 boot_id=b updated_ms=3\n", &h));
    CHECK_FALSE(parse_prometheus_header("# vramtrace textfile v1 host=a pid=1 start_ticks=2 boot_id=b updated_ms=3 ended_ms=0 x=1\n", &h));
    CHECK_FALSE(parse_prometheus_header("# vramtrace textfile v1 host=a pid=0 start_ticks=2 boot_id=b updated_ms=3 ended_ms=0\n", &h));
    CHECK_FALSE(mark_prometheus_ended("# vramtrace textfile v1 host=a pid=1 start_ticks=2 boot_id=b updated_ms=3 ended_ms=0\n", 3, &again));
}

TEST_CASE("prometheus: milliseconds as seconds") {
    char buf[32];
    CHECK(std::string(buf, format_ms_as_seconds(0, buf)) == "0.000");
    CHECK(std::string(buf, format_ms_as_seconds(1005, buf)) == "1.005");
    CHECK(std::string(buf, format_ms_as_seconds(18446744073709551615ull, buf)) == "18446744073709551.615");
}
