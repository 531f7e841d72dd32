#include "triggers/prometheus.h"

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <unistd.h>

#include "core/log.h"
#include "core/tracker.h"
#include "dump/atomic_file.h"
#include "device/device_info.h"
#include "dump/output_path.h"
#include "dump/snapshot_builder.h"
#include "dump/oom_log.h"
#include "triggers/prometheus_text.h"
#include "triggers/trigger_config.h"

namespace vramtrace::triggers {
namespace {

std::string textfile_path(const std::string &host, const std::string &rank) {
    return expand_output_path(trigger_config().prometheus_textfile, static_cast<long>(getpid()), host.c_str(),
                              rank.c_str());
}

std::string this_host() {
    char host[256];
    if (gethostname(host, sizeof host) != 0) host[0] = 0;
    host[sizeof host - 1] = 0;
    return host;
}

bool fill_text(int fd, void *ctx, std::string *error) {
    const std::string &text = *static_cast<const std::string *>(ctx);
    for (size_t done = 0; done < text.size();) {
        ssize_t n = write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            *error = std::string("write: ") + strerror(errno);
            return false;
        }
        done += static_cast<size_t>(n);
    }
    return true;
}

// The file the last write renamed into place (device, inode; 0: none, or written in place): the
// only file remove_prometheus_textfile may remove.
std::atomic<uint64_t> g_written_dev{0}, g_written_ino{0};

} // namespace

void write_prometheus_textfile() {
    Tracker *t = tracker();
    if (t == nullptr || trigger_config().prometheus_textfile == nullptr) return;
    PrometheusSample sample;
    sample.pid = static_cast<long>(getpid());
    sample.host = this_host();
    sample.rank = rank_from_environment();
    sample.oom_count = oom_count();
    // The device identity (UUID) comes from the same cache as the snapshots' (device_info.h).
    report::Snapshot identity;
    t->counters.for_each_seen([&](const DeviceTotalsView &d) {
        report::DeviceTotals totals;
        totals.device = d.device;
        identity.devices.push_back(totals);
        sample.devices.push_back({d.device, "", d.current_bytes, d.peak_bytes});
    });
    fill_device_info(identity);
    for (size_t i = 0; i < sample.devices.size() && i < identity.devices.size(); ++i)
        sample.devices[i].uuid = identity.devices[i].uuid;
    // The graph pool, read here on the reporter thread (also after each graph instantiate, upload,
    // exec destroy and trim: interception/graph_hooks.cpp).
    if (graph_memory_in_use()) sample_graph_memory();
    for (PrometheusDevice &d : sample.devices) {
        GraphMemoryFigures g;
        if (sampled_graph_memory(d.device, &g)) d.has_graph_memory = true, d.graph_reserved_bytes = g.reserved_bytes;
    }
    std::string text = format_prometheus(sample);
    std::string error;
    std::string path = textfile_path(sample.host, sample.rank);
    OutputFileOptions options;
    options.mode = 0644;
    options.fifo_without_waiting = true;
    options.dash_is_stdout = true;
    WrittenFile written;
    if (!write_output_file(path, &fill_text, &text, &error, options, &written)) {
        VT_WARN_ONCE("Prometheus textfile not written: %s (VRAMTRACE_PROMETHEUS_TEXTFILE)", error.c_str());
        return;
    }
    g_written_ino.store(0, std::memory_order_relaxed);
    g_written_dev.store(written.created ? written.dev : 0, std::memory_order_relaxed);
    g_written_ino.store(written.created ? written.ino : 0, std::memory_order_release);
}

void remove_prometheus_textfile() {
    if (trigger_config().prometheus_textfile == nullptr) return;
    // Only the file this process created: a device or FIFO it wrote in place, or a file someone
    // else put at the name since, stays.
    WrittenFile written;
    written.ino = g_written_ino.load(std::memory_order_acquire);
    written.dev = g_written_dev.load(std::memory_order_relaxed);
    written.created = written.ino != 0;
    remove_written_file(textfile_path(this_host(), rank_from_environment()), written);
}

} // namespace vramtrace::triggers
