#include "triggers/prometheus.h"

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <new>
#include <sys/stat.h>
#include <unistd.h>
#include <unordered_map>
#include <unordered_set>

#include "core/clock.h"
#include "core/log.h"
#include "core/process_identity.h"
#include "core/tracker.h"
#include "dump/atomic_file.h"
#include "dump/dumper.h"
#include "dump/output_path.h"
#include "dump/snapshot_builder.h"
#include "dump/oom_log.h"
#include "triggers/prometheus_sweep.h"
#include "triggers/prometheus_text.h"
#include "triggers/trigger_config.h"
#include "report/text_format.h"

namespace vramtrace::triggers {
namespace {

std::string textfile_path(const std::string &host, const std::string &rank) {
    return expand_output_path(trigger_config().prometheus_textfile, static_cast<long>(getpid()), host.c_str(),
                              rank.c_str());
}

std::string own_command() {
    char buf[64];
    int fd = open("/proc/self/comm", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return "";
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return "";
    while (n > 0 && buf[n - 1] == '\n') --n;
    return std::string(buf, size_t(n));
}

// The file the last write renamed into place (device, inode; 0: none, or written in place): the
// only file the last reading may replace.
std::atomic<uint64_t> g_written_dev{0}, g_written_ino{0};

// The last reading, in the pieces the fatal-signal path writes without allocating (two slots: the
// reporter fills the one not published, then publishes it; a reading lasts a whole period, so a
// handler never reads a slot while it is refilled).
struct LastReading {
    PrometheusText text;
    long pid = 0;
    char path[PATH_MAX] = {};
    char temp[PATH_MAX] = {};
};
LastReading *g_slots[2] = {nullptr, nullptr};
std::atomic<int> g_published{-1};
std::atomic<bool> g_ended{false}; // the last reading (process_up 0) is written: no more updates

// A call site's labels from a symbolized snapshot's stack.
PrometheusSite site_of(const snapshot::Snapshot &s, const snapshot::Stack *stack) {
    PrometheusSite site;
    if (stack == nullptr) {
        site.function = "(no stack)";
        return site;
    }
    site.category = stack->category;
    const snapshot::Frame *frame = s.call_site_frame(*stack);
    if (frame == nullptr) {
        site.function = "(no call site)";
        return site;
    }
    site.function = !stack->site_label.empty() ? stack->site_label : frame->function;
    if (!frame->file.empty()) {
        site.file_line = frame->file + ":" + std::to_string(frame->line);
    } else if (const snapshot::Module *m = s.find_module(*frame)) {
        site.file_line = std::string(snapshot::path_basename(m->path)) + "+" + report::hex_u64(frame->module_offset);
    } else {
        site.file_line = report::hex_u64(frame->address);
    }
    return site;
}

// Only the stacks of live allocations are symbolized for a reading: those that only the event
// history, the peaks, the OOM list or the teardowns reference are dropped first, with their frames,
// so a reading's symbolization is bounded by the live table, not by VRAMTRACE_EVENTS.
void keep_only_live_stacks(snapshot::Snapshot &s) {
    s.events = snapshot::EventHistory{};
    s.peaks.clear();
    s.ooms.clear();
    s.teardowns.clear();
    std::unordered_set<uint32_t> live;
    for (const snapshot::Allocation &a : s.allocations) live.insert(a.stack);
    std::vector<snapshot::Frame> frames;
    std::unordered_map<uint32_t, uint32_t> new_index;
    size_t kept = 0;
    for (snapshot::Stack &st : s.stacks) {
        if (live.count(st.id) == 0) continue;
        for (uint32_t &f : st.frames) {
            if (f >= s.frames.size()) {
                f = UINT32_MAX; // out of range before, out of range after
                continue;
            }
            auto [it, inserted] = new_index.try_emplace(f, uint32_t(frames.size()));
            if (inserted) frames.push_back(std::move(s.frames[f]));
            f = it->second;
        }
        if (&s.stacks[kept] != &st) s.stacks[kept] = std::move(st); // never a self-move
        ++kept;
    }
    s.stacks.resize(kept);
    s.frames = std::move(frames);
}

void add_sites(snapshot::Snapshot &snapshot, PrometheusSample &sample, uint32_t top_n) {
    keep_only_live_stacks(snapshot);
    if (!symbolize_captured_snapshot(snapshot)) return;
    std::unordered_map<uint32_t, const snapshot::Stack *> stacks;
    for (const snapshot::Stack &st : snapshot.stacks) stacks.try_emplace(st.id, &st);
    std::vector<PrometheusSite> all;
    std::unordered_map<uint64_t, size_t> index; // (stack << 32 | device + 2) -> all[]
    for (const snapshot::Allocation &a : snapshot.allocations) {
        if (!snapshot::counts_as_held(a)) continue;
        uint64_t key = uint64_t(a.stack) << 32 | uint32_t(a.device + 2);
        auto [it, inserted] = index.try_emplace(key, all.size());
        if (inserted) {
            auto found = stacks.find(a.stack);
            PrometheusSite site = site_of(snapshot, a.stack == 0 || found == stacks.end() ? nullptr : found->second);
            site.device = a.device;
            all.push_back(std::move(site));
        }
        all[it->second].live_bytes += a.size;
        all[it->second].live_count += 1;
    }
    // Every device with a row gets its (other) series, also when nothing is live on it.
    for (const PrometheusDevice &d : sample.devices) {
        PrometheusSite none;
        none.device = d.device;
        all.push_back(none);
    }
    sample.sites = select_top_sites(std::move(all), top_n);
    sample.sites_on = true;
}

PrometheusSample take_sample(Tracker &t) {
    const TriggerConfig &cfg = trigger_config();
    PrometheusSample sample;
    sample.pid = static_cast<long>(getpid());
    sample.host = host_name();
    sample.rank = launcher_rank();
    sample.command = own_command();
    sample.start_ticks = own_start_ticks();
    sample.boot_id = own_boot_id();
    // One capture gives the counters, the live allocations, identity, NVML and pools of one moment,
    // so the call-site series of a device sum to its current bytes.
    snapshot::Snapshot snapshot = capture_snapshot(t, "prometheus");
    sample.start_time_ms = snapshot.process.start_time_ns / 1'000'000;
    sample.update_time_ms = wall_ns() / 1'000'000;
    sample.oom_count = snapshot.oom_count;
    for (const snapshot::DeviceTotals &d : snapshot.devices) {
        PrometheusDevice p;
        p.device = d.device;
        p.uuid = d.uuid;
        p.current_bytes = d.current_bytes;
        p.peak_bytes = d.peak_bytes;
        p.capacity_bytes = d.total_memory_bytes;
        p.nvml_used_bytes = d.process_used_bytes;
        if (d.graph_reserved_bytes) p.has_graph_memory = true, p.graph_reserved_bytes = *d.graph_reserved_bytes;
        for (const snapshot::Pool &pool : snapshot.pools)
            if (pool.device == d.device && !pool.is_graph_memory)
                p.pool_reserved_bytes = p.pool_reserved_bytes.value_or(0) + pool.reserved_bytes;
        p.oom_count = oom_count_on_device(d.device);
        sample.devices.push_back(std::move(p));
    }
    // A device whose only call failed for lack of memory has no counters row: its OOMs still count.
    for (unsigned dev = 0; dev < kOomDevices; ++dev) {
        uint64_t n = oom_count_on_device(int(dev));
        if (n == 0) continue;
        bool listed = false;
        for (const PrometheusDevice &d : sample.devices) listed |= d.device == int(dev);
        if (listed) continue;
        PrometheusDevice p;
        p.device = int(dev);
        p.oom_count = n;
        auto at = sample.devices.begin();
        while (at != sample.devices.end() && at->device >= 0 && at->device < int(dev)) ++at;
        sample.devices.insert(at, p);
    }
    if (cfg.prometheus_sites > 0) add_sites(snapshot, sample, cfg.prometheus_sites);
    return sample;
}

bool copy_c(char *dst, size_t cap, const std::string &src) {
    if (src.size() + 1 > cap) return false;
    memcpy(dst, src.c_str(), src.size() + 1);
    return true;
}

void publish(const PrometheusText &text, const std::string &path) {
    int next = g_published.load(std::memory_order_relaxed) == 0 ? 1 : 0;
    if (g_slots[next] == nullptr) g_slots[next] = new (std::nothrow) LastReading;
    LastReading *slot = g_slots[next];
    if (slot == nullptr) return;
    slot->text = text;
    slot->pid = static_cast<long>(getpid());
    if (!copy_c(slot->path, sizeof slot->path, path) ||
        !copy_c(slot->temp, sizeof slot->temp, temporary_name_for(path, slot->pid, 0) + ".end"))
        return;
    g_published.store(next, std::memory_order_release);
}

// Where the last reading went, for the sweep after it (the reporter's alone).
std::string g_sweep_path, g_sweep_host;
bool g_sweep_due = false;
// SweepOptions::file_lock. std::mutex: constant-initialized, trivially destructible (libstdc++).
std::mutex g_sweep_file_mutex;

void sweep_after_write(const std::string &path, const std::string &host, bool (*should_stop)()) {
    const TriggerConfig &cfg = trigger_config();
    std::string pattern = cfg.prometheus_textfile;
    size_t slash = path.rfind('/');
    size_t pattern_slash = pattern.rfind('/');
    SweepOptions o;
    o.directory = slash == std::string::npos ? "." : path.substr(0, slash == 0 ? 1 : slash);
    o.name_pattern = pattern_slash == std::string::npos ? pattern : pattern.substr(pattern_slash + 1);
    o.host = prometheus_header_host(host);
    o.now_ms = wall_ns() / 1'000'000;
    o.keep_ms = cfg.prometheus_keep_ns / 1'000'000;
    o.deadline_ns = monotonic_ns() + kSweepMaxNs;
    o.should_stop = should_stop;
    o.file_lock = &g_sweep_file_mutex;
    SweepResult r = sweep_textfile_directory(o);
    if (r.cut_short)
        log_debug("Prometheus sweep of %s stopped early (entry, time or exit bound); the next one starts over",
                  o.directory.c_str());
    if (r.marked != 0 || r.removed != 0)
        log_debug("Prometheus textfiles of processes that are gone: %u marked ended, %u removed", r.marked, r.removed);
}

// Async-signal-safe writes of a whole buffer.
bool write_all(int fd, const char *data, size_t size) {
    while (size > 0) {
        ssize_t n = write(fd, data, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        data += n;
        size -= size_t(n);
    }
    return true;
}

} // namespace

void write_prometheus_textfile() {
    Tracker *t = tracker();
    if (t == nullptr || trigger_config().prometheus_textfile == nullptr || g_ended.load(std::memory_order_acquire))
        return;
    PrometheusSample sample = take_sample(*t);
    PrometheusText parts = format_prometheus_parts(sample);
    std::string text = assemble_prometheus(parts, 0);
    std::string error;
    std::string path = textfile_path(sample.host, sample.rank);
    OutputFileOptions options;
    options.mode = 0644;
    options.fifo_without_waiting = true;
    options.dash_is_stdout = true;
    WrittenFile written;
    if (!write_output_file(path, &fill_from_string, &text, &error, options, &written)) {
        VT_WARN_ONCE("Prometheus textfile not written: %s (VRAMTRACE_PROMETHEUS_TEXTFILE)", error.c_str());
        return;
    }
    g_written_ino.store(0, std::memory_order_relaxed);
    g_written_dev.store(written.created ? written.dev : 0, std::memory_order_relaxed);
    g_written_ino.store(written.created ? written.ino : 0, std::memory_order_release);
    if (!written.created) return; // a device, a FIFO, standard output: no last reading, no directory
    publish(parts, path);
    g_sweep_path = path;
    g_sweep_host = sample.host;
    g_sweep_due = true;
}

void wait_for_prometheus_sweep_file() { std::lock_guard<std::mutex> wait(g_sweep_file_mutex); }

void reset_prometheus_sweep_after_fork() {
    new (&g_sweep_file_mutex) std::mutex;
    g_sweep_due = false;
}

void sweep_prometheus_textfiles(bool (*should_stop)()) {
    if (!g_sweep_due) return;
    g_sweep_due = false;
    sweep_after_write(g_sweep_path, g_sweep_host, should_stop);
}

void finish_prometheus_textfile() {
    if (trigger_config().prometheus_textfile == nullptr || g_ended.exchange(true, std::memory_order_acq_rel)) return;
    int slot = g_published.load(std::memory_order_acquire);
    if (slot < 0 || g_slots[slot]->pid != static_cast<long>(getpid())) return;
    const LastReading &last = *g_slots[slot];
    // Only over the file this process wrote: a device or FIFO it wrote in place, or a file someone
    // else put at the name since, stays as it is.
    struct stat st {};
    if (lstat(last.path, &st) != 0 || !S_ISREG(st.st_mode) || uint64_t(st.st_dev) != g_written_dev.load() ||
        uint64_t(st.st_ino) != g_written_ino.load())
        return;
    std::string text = assemble_prometheus(last.text, wall_ns() / 1'000'000);
    OutputFileOptions options;
    options.mode = 0644;
    options.fifo_without_waiting = true;
    std::string error;
    if (!write_output_file(last.path, &fill_from_string, &text, &error, options))
        VT_WARN_ONCE("Prometheus textfile: the last reading not written: %s", error.c_str());
}

void write_prometheus_textfile_from_signal() {
    // g_ended stays as it is: a handler of the program's may recover from the signal, and then the
    // reporter's next reading says process_up 1 again.
    if (g_ended.load(std::memory_order_acquire)) return;
    int index = g_published.load(std::memory_order_acquire);
    if (index < 0) return;
    const LastReading &last = *g_slots[index];
    if (last.pid != static_cast<long>(getpid())) return; // the parent's, in a fork child
    struct stat st {};
    if (lstat(last.path, &st) != 0 || !S_ISREG(st.st_mode) ||
        uint64_t(st.st_dev) != g_written_dev.load(std::memory_order_relaxed) ||
        uint64_t(st.st_ino) != g_written_ino.load(std::memory_order_relaxed))
        return;
    int fd = open(last.temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) return;
    char ended[32], seconds[32];
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t ms = uint64_t(ts.tv_sec) * 1000 + uint64_t(ts.tv_nsec) / 1'000'000;
    size_t ended_len = 0;
    {
        char digits[24];
        size_t n = 0;
        uint64_t v = ms;
        do digits[n++] = char('0' + v % 10), v /= 10;
        while (v != 0);
        while (n > 0) ended[ended_len++] = digits[--n];
        ended[ended_len++] = '\n';
    }
    size_t seconds_len = format_ms_as_seconds(ms, seconds);
    seconds[seconds_len++] = '\n';
    const PrometheusText &t = last.text;
    bool ok = fchmod(fd, 0644) == 0 && write_all(fd, t.header_prefix.data(), t.header_prefix.size()) &&
              write_all(fd, ended, ended_len) && write_all(fd, t.body.data(), t.body.size()) &&
              write_all(fd, t.up_head.data(), t.up_head.size()) && write_all(fd, "0\n", 2) &&
              write_all(fd, t.end_head.data(), t.end_head.size()) && write_all(fd, seconds, seconds_len);
    ok = close(fd) == 0 && ok;
    if (!ok || rename(last.temp, last.path) != 0) unlink(last.temp);
}

} // namespace vramtrace::triggers
