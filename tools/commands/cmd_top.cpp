// `vramtrace top [--pid PID] [--once [--json]] [--snapshot] [--top N]`: the live state of traced
// processes on this host (docs/live.md).
#include "commands/cmd_top.h"

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "analysis/host_gpus.h"
#include "commands/top_model.h"
#include "commands/cli_options.h"
#include "common/cli.h"
#include "common/text_table.h"
#include "input/live_client.h"
#include "live/protocol.h"
#include "report/text_safety.h"
#include "report/text_format.h"

namespace vramtrace::cli {

const char *const kTopHelp =
    "usage: vramtrace top [--pid PID] [--top N]\n"
    "       vramtrace top --once [--json] [--pid PID] [--top N]\n"
    "       vramtrace top --snapshot --pid PID\n"
    "\n"
    "Shows the device memory of running traced processes (every program run under\n"
    "libvramtrace.so serves its live state on a socket in $XDG_RUNTIME_DIR/vramtrace, else\n"
    "/tmp/vramtrace-UID, from its first CUDA allocation until it exits), and with NVML\n"
    "(libnvidia-ml.so.1) the GPU processes that are not traced and each GPU as traced +\n"
    "untraced + free. Without --once: a terminal UI listing the processes on this host, and for\n"
    "one: per-device bars and the recent past, the top call sites by live bytes with their growth\n"
    "over 10 s and since the first reading (refreshed every second), OOMs and marks; a process that\n"
    "exits keeps its last reading. Keys: arrows or j/k move, Enter opens a process or expands a\n"
    "site's stack, Esc/Backspace goes back, d picks the device, o changes the sort (bytes,\n"
    "allocations, growth, call site), s writes a snapshot (X.live-N.json beside the exit\n"
    "snapshot), ? shows the keys, q quits. NO_COLOR turns colour off.\n"
    "\n"
    "options:\n"
    "  --pid PID     this process only\n"
    "  --once        print one reading and exit: the process list, or with --pid the process\n"
    "  --json        with --once: JSON (docs/live.md)\n"
    "  --snapshot    ask process PID to write a snapshot now; prints its path\n"
    "  --top N       call sites listed (default 10)\n"
    "  -h, --help    show this help\n"
    "\n"
    "Exit status: 0 success, 1 no such process or it cannot be read, 2 usage error.\n";

namespace {

std::string command_text(const std::vector<std::string> &argv) {
    std::string out;
    for (const std::string &a : argv) {
        if (!out.empty()) out += ' ';
        out += a;
    }
    return report::one_line(out);
}

// The hint of an empty list: how to get a process into it.
const char *const kNoProcessText =
    "no traced process serves a live view on this host; start one with\n"
    "  vramtrace run -- PROGRAM ARGS...      (or LD_PRELOAD=/path/to/libvramtrace.so PROGRAM)\n"
    "or watch one in this terminal: vramtrace run --live -- PROGRAM ARGS...\n";

nlohmann::json gpus_json(const HostGpus &host) {
    nlohmann::json gpus = nlohmann::json::array();
    for (const GpuSplit &g : host.gpus)
        gpus.push_back({{"index", g.gpu.index}, {"uuid", g.gpu.uuid}, {"total_bytes", g.gpu.total_bytes},
                        {"free_bytes", g.gpu.free_bytes}, {"used_bytes", g.gpu.used_bytes},
                        {"traced_bytes", g.traced_bytes}, {"untraced_bytes", g.untraced_bytes}});
    return gpus;
}

// NVML's processes that serve no live view, one entry per pid with the GPUs it is on.
void add_untraced_json(const HostGpus &host, nlohmann::json &rows) {
    for (size_t i = 0; i < host.untraced.size(); ++i) {
        const UntracedProcess &u = host.untraced[i];
        bool seen = false;
        for (size_t k = 0; k < i; ++k) seen |= host.untraced[k].pid == u.pid;
        if (seen) continue;
        nlohmann::json gpus = nlohmann::json::array();
        for (const UntracedProcess &v : host.untraced) {
            if (v.pid != u.pid) continue;
            nlohmann::json g = {{"index", v.gpu}, {"uuid", v.uuid}};
            g["used_bytes"] = v.used_bytes ? nlohmann::json(*v.used_bytes) : nlohmann::json(nullptr);
            gpus.push_back(std::move(g));
        }
        rows.push_back({{"pid", u.pid}, {"name", report::one_line(u.name)}, {"traced", false}, {"gpus", gpus}});
    }
}

std::string gpus_text(const HostGpus &host) {
    if (host.gpus.empty()) return "";
    TextTable gpus({"gpu", "uuid", "traced", "untraced", "free", "total"});
    for (const GpuSplit &g : host.gpus)
        gpus.add({std::to_string(g.gpu.index), g.gpu.uuid, report::format_bytes(g.traced_bytes),
                  report::format_bytes(g.untraced_bytes), report::format_bytes(g.gpu.free_bytes),
                  report::format_bytes(g.gpu.total_bytes)});
    std::string out = "\nGPUs (NVML):\n" + gpus.render("");
    if (host.untraced.empty()) return out;
    TextTable untraced({"pid", "name", "gpu", "used (NVML)", ""});
    for (const UntracedProcess &u : host.untraced)
        untraced.add({std::to_string(u.pid), report::one_line(u.name), std::to_string(u.gpu),
                      u.used_bytes ? report::format_bytes(*u.used_bytes) : "-", "not traced"});
    return out + "\nGPU processes not traced:\n" + untraced.render("");
}

int list_processes(bool json_out) {
    std::vector<std::string> warnings;
    std::vector<LiveEndpoint> endpoints = find_live_processes(&warnings);
    for (const std::string &w : warnings) log_warning(w);
    nlohmann::json rows = nlohmann::json::array();
    std::vector<TracedProcess> traced;
    TextTable table({"pid", "command", "rank", "device", "current", "peak"});
    for (const LiveEndpoint &e : endpoints) {
        std::string answer, error;
        LiveNamer namer;
        LiveView view;
        if (!live_request(e, live::kRequestReading, &answer, &error, 5000) ||
            !parse_live_reading(answer, namer, -3, &view, &error, false)) {
            log_warning("process " + std::to_string(e.pid) + ": " + error);
            continue;
        }
        nlohmann::json devs = nlohmann::json::array();
        TracedProcess t;
        t.pid = e.pid;
        for (const LiveDevice &d : view.devices) {
            nlohmann::json dev = {{"device", d.totals.device}, {"current_bytes", d.totals.current_bytes},
                                  {"peak_bytes", d.totals.peak_bytes}};
            if (d.totals.process_used_bytes) dev["process_used_bytes"] = *d.totals.process_used_bytes;
            if (!d.totals.uuid.empty()) dev["uuid"] = d.totals.uuid;
            devs.push_back(std::move(dev));
            table.add({std::to_string(e.pid), command_text(view.command_line), view.rank.empty() ? "-" : view.rank,
                           report::device_label(d.totals.device), report::format_bytes(d.totals.current_bytes),
                           report::format_bytes(d.totals.peak_bytes)});
            t.devices.push_back(d.totals);
        }
        traced.push_back(std::move(t));
        rows.push_back({{"pid", e.pid}, {"command_line", view.command_line}, {"rank", view.rank}, {"traced", true}, {"devices", devs}});
    }
    const HostGpus host = read_host_gpus(traced);
    if (!host.error.empty()) log_warning(host.error);
    if (json_out) {
        add_untraced_json(host, rows);
        nlohmann::json doc = {{"processes", rows}};
        if (host.have_nvml) doc["gpus"] = gpus_json(host);
        return write_stdout(doc.dump(2) + "\n") ? kExitOk : kExitFailure;
    }
    std::string text = traced.empty() ? kNoProcessText : table.render("");
    return write_stdout(text + gpus_text(host)) ? kExitOk : kExitFailure;
}

std::string view_text(const LiveView &v, size_t top) {
    std::string out = "process " + std::to_string(v.pid) + ": " + command_text(v.command_line);
    if (!v.rank.empty()) out += " (rank " + report::one_line(v.rank) + ")";
    out += "\n";
    TextTable devices({"device", "current", "peak", "NVML (process)"});
    for (const LiveDevice &d : v.devices)
        devices.add({report::device_label(d.totals.device), report::format_bytes_exact(d.totals.current_bytes),
                         report::format_bytes_exact(d.totals.peak_bytes),
                         d.totals.process_used_bytes ? report::format_bytes(*d.totals.process_used_bytes) : "-"});
    out += devices.render("");
    out += "\ntop call sites by live bytes (" + std::to_string(v.live_allocations) + " live allocations, " +
           report::format_bytes_exact(v.live_bytes) + "):\n";
    TextTable sites({"live", "allocs", "category", "call site"});
    for (size_t i = 0; i < v.sites.size() && i < top; ++i)
        sites.add({report::format_bytes(v.sites[i].bytes), std::to_string(v.sites[i].count),
                       v.sites[i].category.empty() ? "-" : v.sites[i].category, report::one_line(v.sites[i].location)});
    out += sites.render("");
    if (v.oom_count != 0) out += "out-of-memory failures: " + std::to_string(v.oom_count) + "\n";
    return out;
}

int show_process(pid_t pid, bool json_out, size_t top) {
    LiveEndpoint e;
    std::string error, answer;
    if (!live_endpoint_of(pid, &e, &error)) {
        log_error("top: " + error);
        return kExitFailure;
    }
    LiveNamer namer;
    LiveView view;
    if (!live_request(e, live::kRequestReadingHistory, &answer, &error) ||
        !parse_live_reading(answer, namer, -3, &view, &error)) {
        log_error("top: process " + std::to_string(pid) + ": " + error);
        return kExitFailure;
    }
    return write_stdout(json_out ? live_view_json(view, top) : view_text(view, top)) ? kExitOk : kExitFailure;
}

int ask_snapshot(pid_t pid) {
    LiveEndpoint e;
    std::string error, answer, path;
    if (!live_endpoint_of(pid, &e, &error)) {
        log_error("top: " + error);
        return kExitFailure;
    }
    if (!live_request(e, live::kRequestSnapshot, &answer, &error, 120000) || !parse_snapshot_answer(answer, &path, &error)) {
        log_error("top: process " + std::to_string(pid) + ": " + error);
        return kExitFailure;
    }
    return write_stdout(path + "\n") ? kExitOk : kExitFailure;
}

int top_body(int argc, char **argv) {
    OptionReader opts(argc, argv, "top", kTopHelp);
    TopOptions options;
    bool once = false, json_out = false, snapshot = false;
    while (opts.next()) {
        std::string_view value;
        if (opts.is("-h") || opts.is("--help")) return write_stdout(kTopHelp) ? kExitOk : kExitFailure;
        if (opts.is("--once")) once = true;
        else if (opts.is("--json")) json_out = true;
        else if (opts.is("--snapshot")) snapshot = true;
        else if (opts.with_value("--pid", &value)) {
            size_t n = 0;
            if (!parse_count(value, n) || n == 0 || n > 0x3fffffff)
                return opts.error("--pid needs a process id, got '" + std::string(value) + "'");
            options.pid = pid_t(n);
        } else if (opts.with_value("--top", &value)) {
            if (!parse_count(value, options.top)) return opts.error("--top needs a number, got '" + std::string(value) + "'");
        } else if (opts.positional()) {
            return opts.error("takes no operand, got '" + std::string(opts.arg()) + "'");
        } else if (!opts.failed()) {
            return opts.unknown();
        }
    }
    if (opts.failed()) return kExitUsage;
    if (json_out && !once) return opts.error("--json goes with --once");
    if (snapshot) {
        if (options.pid == 0) return opts.error("--snapshot needs --pid");
        return ask_snapshot(options.pid);
    }
    if (once) return options.pid != 0 ? show_process(options.pid, json_out, options.top) : list_processes(json_out);
    return top_tui(options, nullptr);
}

} // namespace

int top_command(int argc, char **argv) { return run_reporting_exceptions("top", kExitFailure, &top_body, argc, argv); }

} // namespace vramtrace::cli
