// The snapshot model: what a snapshot holds, independent of where it came from. The preload
// library builds it from the live table at dump time; the CLI builds it by reading a snapshot file.
// The JSON writer and the summary formatter take only this model, so both sides print the same
// thing. Schema and units: docs/snapshot-format.md. How reports write its figures as text:
// report/text_format.h; its allocations grouped by call site: report/call_site_groups.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace vramtrace::snapshot {

inline constexpr int kSchemaVersion = 1;
inline constexpr const char *kFormatName = "vramtrace-snapshot";

struct ProcessInfo {
    int64_t pid = 0;
    int64_t ppid = 0;
    std::vector<std::string> command_line;
    std::string executable;        // /proc/self/exe at dump time
    std::string host;
    uint64_t start_time_ns = 0;    // wall clock (Unix epoch, ns) when the library initialised
    uint64_t dump_time_ns = 0;     // wall clock (Unix epoch, ns) when this snapshot was taken
    int driver_version = 0;        // cuDriverGetVersion, e.g. 13000; 0 when not known
    std::string reason;            // "exit", "api", ... (why the snapshot was written)
    std::string vramtrace_version;
    uint32_t stack_depth = 0;      // VRAMTRACE_STACK_DEPTH in force
    // Optional within schema 1 (absent in older files):
    uint64_t dump_monotonic_ns = 0; // CLOCK_MONOTONIC at the dump, to place the monotonic times of
                                    // allocations/events on the wall clock; 0 when not known
    std::string rank;               // RANK / SLURM_PROCID / OMPI_COMM_WORLD_RANK; "" when none set
    bool symbolized = true;         // false: frames carry only addresses (a crash dump written from
                                    // a signal handler); the CLI symbolizes them from the modules
    std::string signal;             // Optional: the signal that made the process write this
                                    // snapshot: with reason "crash" the fatal one ("SIGSEGV",
                                    // "SIGBUS", "SIGABRT", "SIGFPE", "SIGILL"); with reason "exit"
                                    // the terminating one that ended it ("SIGTERM", "SIGINT", ...);
                                    // "" otherwise (the writer then leaves the member out)
    int64_t signal_sender_pid = 0;  // Optional: with `signal` on an exit report, the pid of the
                                    // process that sent it (siginfo si_pid); 0 when the kernel
                                    // sent it (a terminal's Ctrl-C, a CPU limit) or not known
    int64_t signal_sender_uid = -1; // ... and its real uid (si_uid); -1 when not known
    std::string python;             // Optional within schema 1: the CPython version whose frames the
                                    // stacks carry ("3.11.2"); "" when no interpreter was found or
                                    // VRAMTRACE_PYTHON=0 (the writer then leaves the member out)

    bool operator==(const ProcessInfo &) const = default;
};

// Per-device counters; device -1 is host-pinned memory.
struct DeviceTotals {
    int device = 0;
    uint64_t current_bytes = 0;
    uint64_t peak_bytes = 0;
    uint64_t allocation_count = 0;
    uint64_t free_count = 0;
    uint64_t total_allocated_bytes = 0;
    uint64_t total_freed_bytes = 0;
    // Optional within schema 1 (absent in older files):
    std::string uuid;        // "GPU-8d3c..." (cuDeviceGetUuid, formatted as nvidia-smi does); "" unknown/host
    std::string pci_bus_id;  // "0000:3b:00.0" (cuDeviceGetPCIBusId); "" unknown/host
    std::optional<uint64_t> total_memory_bytes;  // the device's capacity (cuMemGetInfo total)
    std::optional<uint64_t> process_used_bytes;  // what the driver charges this process on the
                                                 // device at the dump (NVML usedGpuMemory: context,
                                                 // modules, everything); absent when NVML is not there
    // The device's graph memory pool (cuDeviceGetGraphMemAttribute CU_GRAPH_MEM_ATTR_*) at the
    // dump: what graphs with memory nodes hold once uploaded or launched. Not in current_bytes
    // (no allocation call makes it); absent when no graph memory node was seen on the device.
    std::optional<uint64_t> graph_reserved_bytes;      // RESERVED_MEM_CURRENT
    std::optional<uint64_t> graph_used_bytes;          // USED_MEM_CURRENT
    std::optional<uint64_t> graph_reserved_high_bytes; // RESERVED_MEM_HIGH
    std::optional<uint64_t> graph_used_high_bytes;     // USED_MEM_HIGH

    bool operator==(const DeviceTotals &) const = default;
};

// Copies a device's ordinal and its six counters, the members that DeviceTotals, MergedDevice, the
// tracker's DeviceTotalsView and the C API's vramtrace_device_stats all have, by the same names.
template <class From, class To> void copy_device_counters(const From &from, To &to) {
    to.device = from.device;
    to.current_bytes = from.current_bytes;
    to.peak_bytes = from.peak_bytes;
    to.allocation_count = from.allocation_count;
    to.free_count = from.free_count;
    to.total_allocated_bytes = from.total_allocated_bytes;
    to.total_freed_bytes = from.total_freed_bytes;
}

struct Module {
    std::string path;
    uint64_t base = 0;      // load address (the ELF's l_addr, so address = base + offset)
    std::string build_id;   // hex of NT_GNU_BUILD_ID, empty when absent

    bool operator==(const Module &) const = default;
};

struct Frame {
    uint64_t address = 0;       // absolute return address as seen in the process
    int module = -1;            // index into Snapshot::modules, -1 when unknown
    uint64_t module_offset = 0; // address - module base
    std::string function;       // demangled, empty when unknown
    std::string file;           // source file, empty when no debug info
    uint32_t line = 0;          // 0 when no debug info
    // Optional within schema 1: functions inlined at this address, innermost first; the frame's own
    // function/file/line then describe the outermost (real) function and the call position in it.
    struct Inlined {
        std::string function;
        std::string file;
        uint32_t line = 0;
        bool operator==(const Inlined &) const = default;
    };
    std::vector<Inlined> inlined;
    // Optional within schema 1: a frame of Python code (docs/python-frames.md): function is the
    // code's qualified name, file:line the line it was executing; address is a tag, not code
    // (module -1). Written as "python": true, left out when false.
    bool python = false;

    bool operator==(const Frame &) const = default;
};

struct Stack {
    uint32_t id = 0;              // id shared with Allocation::stack
    std::vector<uint32_t> frames; // indices into Snapshot::frames, leaf first
    int call_site = -1;           // index into this->frames of the frame that asked (the frame rules,
                                  // docs/attribution.md); -1 when there is none
    // Optional: index into this->frames of the framework entry the call site went through, -1
    // (left out) when none; and the stack's memory category ("parameter", "optimizer_state",
    // "activation", "backward", "library_workspace", "communication", "other"), "" (left out)
    // when the rules were not applied (files written before them).
    int via = -1;
    std::string category;
    // Not in the file: how reports name the call site and the via frame, set with them when the
    // frame rules are applied (lib/symbolize/call_site.h). "": describe the frame (describe_frame).
    std::string site_label;
    std::string via_label;

    bool operator==(const Stack &) const = default;
};

struct Allocation {
    uint64_t address = 0;
    uint64_t size = 0;       // bytes
    std::string kind;        // "device" | "managed" | "host_pinned"
    int device = 0;          // ordinal, -1 host, -2 unknown
    std::string api;         // outermost intercepted entry point, e.g. "cudaMalloc"
    uint64_t stream = 0;
    uint32_t thread_id = 0;
    uint64_t time_ns = 0;    // CLOCK_MONOTONIC ns
    uint32_t stack = 0;      // Stack::id, 0 = none
    // Optional within schema 1: true when `size` is computed by vramtrace rather than told by the
    // driver (CUDA arrays: width x height x depth x element size, ignoring the driver's padding).
    bool size_is_estimate = false;
    // Optional: the context generation whose teardown ends this allocation (Teardown::context);
    // 0 (left out) for memory no context teardown frees (stream-ordered, VMM, graph memory).
    uint32_t context = 0;
    // Optional: the allocating thread's open NVTX push/pop ranges (RangeStack::id); 0 (left out):
    // none open, or NVTX not in use.
    uint32_t range = 0;

    bool operator==(const Allocation &) const = default;
};

// What was live on one device at the moment its tracked bytes were highest, grouped by stack.
// The sum of sites[].bytes equals peak_bytes exactly.
struct PeakSite {
    uint32_t stack = 0;      // Stack::id (0: allocations with no stack)
    uint64_t bytes = 0;
    uint64_t count = 0;
    bool operator==(const PeakSite &) const = default;
};
// What one NVTX range stack (RangeStack::id; 0: no range open) held at a device's peak.
struct RangePeak {
    uint32_t range = 0;
    uint64_t bytes = 0;
    uint64_t count = 0;
    bool operator==(const RangePeak &) const = default;
};
struct DevicePeak {
    int device = 0;
    uint64_t peak_bytes = 0;
    uint64_t time_ns = 0;    // CLOCK_MONOTONIC when the peak was reached
    std::vector<PeakSite> sites; // bytes descending, then stack ascending
    // Optional (empty when no allocation of the device had an NVTX range open): the same peak by
    // range stack, bytes descending, then range ascending; the bytes sum to peak_bytes.
    std::vector<RangePeak> ranges;
    bool operator==(const DevicePeak &) const = default;
};

// One entry of the event history (a bounded ring, VRAMTRACE_EVENTS).
struct Event {
    std::string type;        // "alloc" | "free" | "mark" | "oom"
    uint64_t time_ns = 0;    // CLOCK_MONOTONIC
    int device = -2;         // alloc/free/oom: the device; mark: -2
    uint64_t address = 0;    // alloc/free; 0 otherwise
    uint64_t size = 0;       // alloc/free: bytes; oom: the bytes requested
    std::string kind;        // alloc/free: memory kind as in Allocation::kind; "" otherwise
    std::string api;         // alloc/free/oom: the entry point; "" for marks
    uint32_t stack = 0;      // alloc/oom: Stack::id; free: the freed allocation's; 0 none
    uint32_t thread_id = 0;
    std::string label;       // mark: the text given to vramtrace_mark; "" otherwise
    // Optional, frees only: "context_reset" | "context_destroy" | "context_release" when a context
    // teardown freed the allocation (no free call of the program's); "" otherwise.
    std::string freed_by;
    // Optional, alloc/free only: the allocation's NVTX push/pop range stack (RangeStack::id); 0: none.
    uint32_t range = 0;
    bool operator==(const Event &) const = default;
};
struct EventHistory {
    uint64_t capacity = 0;        // ring size in events (0: history off)
    uint64_t recorded = 0;        // events recorded since start (more than capacity: it wrapped)
    bool wrapped = false;
    uint64_t complete_from_ns = 0; // CLOCK_MONOTONIC from which `events` is complete (the oldest
                                   // kept event's time when wrapped; the start otherwise)
    std::vector<Event> events;    // oldest first
    bool operator==(const EventHistory &) const = default;
};

// An allocation that failed with out-of-memory, captured inside the failing call.
struct OomEvent {
    uint64_t time_ns = 0;       // CLOCK_MONOTONIC
    int device = -2;
    uint64_t requested_bytes = 0;
    std::string api;
    uint64_t stream = 0;
    uint32_t stack = 0;          // Stack::id of the failing call
    uint32_t thread_id = 0;
    int result = 0;              // the code the real call returned (2 = CUDA_ERROR_OUT_OF_MEMORY /
                                 // cudaErrorMemoryAllocation)
    std::optional<uint64_t> device_free_bytes;   // cuMemGetInfo right after the failure
    std::optional<uint64_t> device_total_bytes;
    uint64_t tracked_bytes = 0;  // tracked bytes live on the device at that moment
    bool operator==(const OomEvent &) const = default;
};

// A stream-ordered memory pool (cudaMemPool_t / CUmemoryPool) seen at dump time, from the pool's
// attributes (CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT / _USED_MEM_CURRENT / ..._HIGH).
struct Pool {
    uint64_t handle = 0;
    int device = -2;
    bool is_default = false;     // the device's default pool (cudaMallocAsync without a pool)
    uint64_t reserved_bytes = 0;
    uint64_t used_bytes = 0;
    uint64_t reserved_high_bytes = 0;
    uint64_t used_high_bytes = 0;
    // Files written before DeviceTotals::graph_memory listed a device's graph memory here, with
    // handle 0; the reader moves such an entry into its device's row, so the model holds none.
    bool is_graph_memory = false;
    bool operator==(const Pool &) const = default;
};

// A context teardown (a reset, a destroy, the last release of a primary context) and what it ended:
// the allocations still live in that context then, by call site.
struct Teardown {
    uint64_t time_ns = 0;       // CLOCK_MONOTONIC
    std::string api;            // "cuDevicePrimaryCtxReset_v2" (cudaDeviceReset), "cuCtxDestroy_v2", ...
    std::string cause;          // "context_reset" | "context_destroy" | "context_release"
    int device = -2;
    uint32_t context = 0;       // Allocation::context of the records it ended
    uint64_t ended_count = 0;   // allocations ended
    uint64_t ended_bytes = 0;   // their bytes that counted toward the device
    uint64_t ended_host_bytes = 0; // their pinned and registered host memory (counted on the host)
    std::vector<PeakSite> sites; // the heaviest call sites, bytes descending (at most 16)
    uint64_t other_bytes = 0;   // the call sites past those, summed
    uint64_t other_count = 0;
    bool operator==(const Teardown &) const = default;
};

// Optional top-level members written by `vramtrace merge` (docs/cli.md): one record per process
// that went into a merged snapshot, and one per device of such a process, so that merging merged
// snapshots still lists every process. Plain snapshots have neither; within schema 1 both are
// optional (a reader that does not know them skips them).
// One NVTX push/pop range stack of a thread: its open ranges, outermost first, each with its domain
// ("" for NVTX's default domain), its name (the message after normalisation: docs/nvtx.md) and its
// category (nvtxEventAttributes_t::category: the name the program gave it in that domain, else the
// number in decimal; "" for none).
struct RangeStack {
    uint32_t id = 0;                   // Allocation::range, RangePeak::range; never 0
    std::vector<std::string> domains;
    std::vector<std::string> names;    // as many as domains
    std::vector<std::string> categories; // optional: empty when no range of the stack has a category
    bool operator==(const RangeStack &) const = default;
};

// A region that a pool registered through the NVTX memory API (nvtxMemRegionsRegister) and had not
// unregistered at the dump, inside the tracked allocation that backs it (the pool's segment).
struct NvtxRegion {
    uint64_t address = 0;
    uint64_t size = 0;            // bytes
    uint64_t segment = 0;         // Allocation::address of the segment it lies in
    uint64_t segment_size = 0;    // that segment's size
    uint64_t heap = 0;            // the base address of the heap it was registered in; 0: none
    int device = -2;              // the segment's device
    uint32_t range = 0;           // RangeStack::id open on the registering thread; 0: none
    uint32_t thread_id = 0;       // the registering thread
    // Merged snapshots: the MergedProcess::input of the process that registered it (two ranks of
    // one program have the same segment addresses); absent in a process's own snapshot.
    std::optional<uint64_t> input;
    bool operator==(const NvtxRegion &) const = default;
};

// An NVTX start/end range (nvtxRangeStart*/End, nvtxDomainRangeStartEx/End): a time interval, which
// may start on one thread and end on another; never attached to allocations (docs/nvtx.md).
struct NvtxInterval {
    std::string domain;           // "" for NVTX's default domain
    std::string name;             // the message after normalisation (docs/nvtx.md)
    uint64_t start_ns = 0;        // CLOCK_MONOTONIC
    uint64_t end_ns = 0;          // CLOCK_MONOTONIC; 0: still open at the dump
    uint32_t start_thread = 0;    // thread id of the start
    uint32_t end_thread = 0;      // thread id of the end; 0 while open
    std::string category;         // as RangeStack::categories; "" for none
    std::optional<uint64_t> input; // as NvtxRegion::input: the process it is of, merged snapshots only
    bool operator==(const NvtxInterval &) const = default;
};

struct MergedProcess {
    uint32_t input = 0;                    // row number in the merged snapshot, from 0
    std::string file;                      // the snapshot file the process wrote
    int64_t pid = 0;
    std::string host;
    std::vector<std::string> command_line;
    std::string reason;                    // process.reason of that snapshot
    int64_t rank = -1;                     // process.rank when it is a number; -1: not known
    uint64_t live_bytes = 0;               // bytes and number of its live allocations at the dump
    uint64_t live_allocations = 0;
    uint64_t dropped_allocations = 0;
    uint64_t dropped_stacks = 0;
    // Optional member "oom_count" (left out when not known): the process's out-of-memory failures
    // since start (its snapshot's oom_count); nullopt for a snapshot of before OOM recording.
    std::optional<uint64_t> oom_count;

    bool operator==(const MergedProcess &) const = default;
};
struct MergedDevice {
    uint32_t input = 0;                    // MergedProcess::input of the process
    int device = 0;                        // ordinal as that process saw it (-1 host-pinned)
    std::string uuid;                      // devices[].uuid of that process; "" when not known
    uint64_t current_bytes = 0;
    uint64_t peak_bytes = 0;
    uint64_t allocation_count = 0;
    uint64_t free_count = 0;
    uint64_t total_allocated_bytes = 0;
    uint64_t total_freed_bytes = 0;

    bool operator==(const MergedDevice &) const = default;
};

// Optional top-level members written by `vramtrace merge` (docs/cli.md, "Imbalance"): how the
// ranks compare on one device role (role "gpu" and role_index k: the k-th GPU of each rank, its
// devices in ordinal order; "host": host-pinned memory; "unknown": device -2). Medians are the
// lower middle value; inputs are MergedProcess::input, ranks MergedProcess::rank (-1: none).
struct ImbalanceRole {
    std::string role;
    uint32_t role_index = 0;
    uint64_t ranks = 0;                    // processes with this role
    uint64_t current_min_bytes = 0, current_min_input = 0;
    int64_t current_min_rank = -1;
    uint64_t current_median_bytes = 0;
    uint64_t current_max_bytes = 0, current_max_input = 0;
    int64_t current_max_rank = -1;
    uint64_t peak_min_bytes = 0, peak_min_input = 0;
    int64_t peak_min_rank = -1;
    uint64_t peak_median_bytes = 0;
    uint64_t peak_max_bytes = 0, peak_max_input = 0;
    int64_t peak_max_rank = -1;
    uint64_t peak_mad_bytes = 0;           // median absolute deviation of the peaks
    uint64_t scale_bytes = 0;              // max(MAD, 1% of the median peak, 1 MiB)
    uint64_t outliers = 0;                 // records in imbalance_outliers for this role
    bool operator==(const ImbalanceRole &) const = default;
};
// A rank whose peak is an outlier of its role: |0.6745 (peak - median) / scale| > 3.5.
struct ImbalanceOutlier {
    uint32_t imbalance = 0;                // index into Snapshot::imbalance
    uint32_t input = 0;
    int64_t rank = -1;
    std::string host;
    int device = 0;
    uint64_t peak_bytes = 0;
    bool sites_known = true;               // false: from a merged input, whose peaks are sums
    // The call sites whose bytes at this rank's peak exceed their median over the role's ranks
    // (a site a rank lacks counts 0 there): `stack` one stack of the call site, `bytes` the bytes
    // above the median, `count` the rank's allocations there at its peak; bytes descending.
    std::vector<PeakSite> sites;
    bool operator==(const ImbalanceOutlier &) const = default;
};
// The modified z-score of a peak: 0.6745 (peak - median) / scale (Iglewicz and Hoaglin).
inline double imbalance_z(const ImbalanceRole &r, uint64_t peak) {
    return r.scale_bytes == 0 ? 0.0 : 0.6745 * (double(peak) - double(r.peak_median_bytes)) / double(r.scale_bytes);
}
inline constexpr double kImbalanceZ = 3.5;

struct Snapshot {
    int schema_version = kSchemaVersion;
    ProcessInfo process;
    std::vector<DeviceTotals> devices; // ascending ordinal
    uint64_t dropped_allocations = 0;  // records the table could not hold
    uint64_t dropped_stacks = 0;       // stacks the depot could not hold
    // Optional (0 in older files): allocations whose
    // call site got no peak counter (no memory could be mapped for it); their bytes are counted
    // under stack 0 in `peaks`, so the sums stay exact.
    uint64_t dropped_peak_sites = 0;
    std::vector<Module> modules;
    std::vector<Frame> frames;
    std::vector<Stack> stacks;         // those referenced by allocations
    std::vector<Allocation> allocations;
    // Optional within schema 1 (empty in older files):
    std::vector<DevicePeak> peaks;     // one per device that saw an allocation, ascending ordinal
    std::vector<OomEvent> ooms;        // the most recent out-of-memory failures, oldest first
    uint64_t oom_count = 0;            // all of them since start (ooms may hold fewer)
    std::vector<Pool> pools;
    // Optional (absent in older files and when no context was torn down): the first teardowns, and
    // how many there were in all.
    std::vector<Teardown> teardowns;
    uint64_t teardown_count = 0;
    EventHistory events;
    // Optional (merged snapshots only): the ranks compared per device role.
    std::vector<ImbalanceRole> imbalance;
    std::vector<ImbalanceOutlier> imbalance_outliers;
    // Stacks referenced by peaks, ooms and events are in `stacks` too.
    // Optional (empty when the program made no NVTX push): the range stacks that allocations and
    // peaks name, ascending id, and the NVTX records vramtrace could not keep (docs/nvtx.md).
    std::vector<RangeStack> range_stacks;
    uint64_t dropped_range_stacks = 0;
    uint64_t dropped_range_names = 0;
    // Optional (empty/0 when no pool used the NVTX memory API): its live regions, by segment then
    // address; registrations the bounded tables refused; regions that lay in no tracked
    // allocation (not listed: never trusted); unregisters of a region or heap that was not live.
    std::vector<NvtxRegion> nvtx_regions;
    uint64_t dropped_nvtx_regions = 0;
    uint64_t nvtx_regions_outside = 0;
    uint64_t nvtx_unregisters_unknown = 0;
    // Optional (empty/0 when the program started no NVTX start/end range): the intervals, by
    // start_ns; the starts beyond vramtrace's table (counted, not listed).
    std::vector<NvtxInterval> nvtx_intervals;
    uint64_t dropped_nvtx_intervals = 0;

    // The range stack with this id, or nullptr.
    const RangeStack *find_range(uint32_t id) const;

    // The stack with this id, or nullptr (id 0, or not in `stacks`). O(log n) when `stacks` is in
    // ascending id order (as the library writes it), O(n) otherwise.
    const Stack *find_stack(uint32_t id) const;
    // The call-site frame of a stack (frames[stack.frames[stack.call_site]]), or nullptr when the
    // stack has no call site or an index is out of range.
    const Frame *call_site_frame(const Stack &stack) const;
    // The module a frame points into, or nullptr when unknown (-1 or out of range).
    const Module *find_module(const Frame &frame) const;

    bool operator==(const Snapshot &) const = default;
};

// The row of device `ordinal` in `devices`, whose rows are in ascending ordinal order: a zero row
// is inserted where it belongs when the device has none.
DeviceTotals &device_row(std::vector<DeviceTotals> &devices, int ordinal);

// Puts a reading of a device's graph memory pool (a Pool with is_graph_memory) into that device's
// row as DeviceTotals::graph_*, adding the row, in ordinal order, when the device has none.
void add_graph_memory_to_device(Snapshot &snapshot, const Pool &graph_memory);

// Files written before DeviceTotals::graph_* listed each device's graph memory as a pool with
// is_graph_memory: moves such entries into their device's row (add_graph_memory_to_device), so
// that the rest of the CLI sees one model.
void adopt_graph_memory_pools(Snapshot &snapshot);

// Whether an allocation's bytes are memory this process holds (false for ipc_imported and
// vmm_mapping records, which are listed but not counted).
bool counts_as_held(const Allocation &a);

// The last component of a path ("/usr/lib/libcudart.so.13" -> "libcudart.so.13"). Here rather
// than in report/text_format.h because symbolize/, a layer below report/, names modules with it.
std::string_view path_basename(std::string_view path);

} // namespace vramtrace::snapshot
