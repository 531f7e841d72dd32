// The report `vramtrace merge` prints: processes, devices (matched by UUID), how the ranks
// compare (merge_imbalance.cpp), call sites, and NVTX range stacks per device role.
#include <set>
#include <string>

#include "analysis/merge_core.h"
#include "common/text_table.h"
#include "snapshot/snapshot_model.h"
#include "report/text_format.h"

namespace vramtrace::cli {

std::string format_merge_text(const Merger &merger, size_t top, const SiteKeyOptions &keys) {
    std::string out;
    const auto &procs = merger.processes();
    std::set<std::string> hosts;
    for (const snapshot::MergedProcess &p : procs) hosts.insert(p.host);
    std::vector<MergedDeviceRow> devices = merger.devices();
    out += "merged " + std::to_string(merger.files()) + " snapshot" + (merger.files() == 1 ? "" : "s") + ": " +
           std::to_string(procs.size()) + " process" + (procs.size() == 1 ? "" : "es") + " on " +
           std::to_string(hosts.size()) + " host" + (hosts.size() == 1 ? "" : "s") + ", " +
           std::to_string(devices.size()) + " device" + (devices.size() == 1 ? "" : "s") + "\n";
    out += "live at the dumps: " + report::format_bytes_exact(merger.live_bytes()) + " in " +
           std::to_string(merger.live_count()) + " allocation" + (merger.live_count() == 1 ? "" : "s") + "\n";
    if (merger.dropped_allocations() || merger.dropped_stacks())
        out += "warning: the inputs dropped " + std::to_string(merger.dropped_allocations()) + " allocation records and " +
               std::to_string(merger.dropped_stacks()) + " stacks\n";

    // Per process: its devices' current and peak (summed over its devices), and what was live.
    std::vector<std::vector<const snapshot::MergedDevice *>> by_process(procs.size());
    for (const snapshot::MergedDevice &d : merger.process_devices())
        if (d.input < by_process.size()) by_process[d.input].push_back(&d);
    out += "\nprocesses (current and peak summed over each process's devices; OOM: out-of-memory failures)\n";
    TextTable table({"#", "host", "pid", "rank", "devices", "current", "peak", "live at dump", "OOM", "file"});
    for (const snapshot::MergedProcess &p : procs) {
        uint64_t current = 0, peak = 0;
        std::string device_list;
        for (const snapshot::MergedDevice *d : by_process[p.input]) {
            current += d->current_bytes;
            peak += d->peak_bytes;
            if (!device_list.empty()) device_list += ",";
            device_list += report::device_label(d->device);
        }
        std::string live = std::to_string(p.live_allocations) + " (" + report::format_bytes(p.live_bytes) + ")";
        if (p.reason == "exit" && p.live_allocations > 0) live += " leaked";
        table.add({std::to_string(p.input), one_line(p.host.empty() ? "?" : p.host), std::to_string(p.pid),
                   p.rank >= 0 ? std::to_string(p.rank) : "-", device_list.empty() ? "-" : device_list,
                   report::format_bytes(current), report::format_bytes(peak), live,
                   p.oom_count ? std::to_string(*p.oom_count) : "n/a", one_line(p.file)});
    }
    out += table.render("  ");

    out += "\ndevices (matched by UUID when the snapshots have one, else by host + ordinal)\n";
    TextTable dev({"device", "processes", "current", "peak (sum)", "peak (max of one process)"});
    for (const MergedDeviceRow &d : devices)
        dev.add({one_line(d.identity), std::to_string(d.processes), report::format_bytes(d.current_bytes),
                 report::format_bytes(d.peak_sum), report::format_bytes(d.peak_max)});
    out += dev.render("  ");

    out += format_imbalance_text(merger.imbalance(), top, [&](uint32_t stack) { return merger.site_key_of_stack(stack); });

    std::vector<MergedSiteRow> sites = merger.sites();
    size_t shown = top == 0 ? sites.size() : std::min(top, sites.size());
    out += "\ncall sites, all inputs (" + std::to_string(sites.size()) + ", by live bytes; keys on " +
           std::to_string(keys.frames) + (keys.frames == 1 ? " frame" : " frames") + ")\n";
    if (!sites.empty()) {
        TextTable st({"live", "allocations", "files", "site"});
        for (size_t i = 0; i < shown; ++i)
            st.add({report::format_bytes_exact(sites[i].live_bytes), std::to_string(sites[i].live_count),
                    std::to_string(sites[i].files) + " of " + std::to_string(merger.files()), one_line(sites[i].key)});
        out += st.render("  ");
        if (shown < sites.size()) out += "  ... and " + std::to_string(sites.size() - shown) + " more (--top 0 lists all)\n";
    }

    // NVTX range stacks per device role, when an input has any.
    std::vector<MergedRoleRanges> roles = merger.ranges_by_role();
    if (!roles.empty()) {
        bool peaks = merger.has_peak_composition();
        out += "\nby NVTX range, all inputs (the push/pop ranges open on the allocating thread, outermost first; at "
               "peak: what each held at each input's peak of the device, summed" +
               std::string(peaks ? "" : "; n/a: an input does not record what made up its peaks") + ")\n";
        bool several_gpus = false;
        for (const MergedRoleRanges &r : roles) several_gpus = several_gpus || (r.role.first == 0 && r.role.second > 0);
        for (const MergedRoleRanges &r : roles) {
            out += "  " + device_role_title(r.role, several_gpus) + "\n";
            TextTable t({"live", "allocations", "at peak", "range"});
            size_t listed = top == 0 ? r.rows.size() : std::min(top, r.rows.size());
            for (size_t i = 0; i < listed; ++i) {
                const MergedRangeRow &row = r.rows[i];
                t.add({report::format_bytes_exact(row.live_bytes), std::to_string(row.live_count),
                       peaks ? report::format_bytes_exact(row.peak_bytes) : "n/a", one_line(merger.range_label(row.range))});
            }
            out += t.render("    ");
            if (listed < r.rows.size())
                out += "    ... and " + std::to_string(r.rows.size() - listed) + " more (--top 0 lists all)\n";
        }
    }
    return out;
}

} // namespace vramtrace::cli
