// The tracking core alone, without interception: what a hook does to the live table, the stack
// depot and the counters, from 1 to N threads, against a mutex + std::unordered_map table under the
// same load; and the tracker's memory per live allocation and per unique stack.
//
//   bench_tracking [--threads-max=N] [google benchmark flags]
//
// Load per thread: a ring of `live` addresses of its own (1,024: the table's first level is mostly
// empty and larger than the caches; 65,536: both tables are larger than the caches); each iteration
// frees the oldest (erase) and allocates a new one (insert), so the table holds threads x live
// records.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "tracking/allocation_record.h"
#include "tracking/device_counters.h"
#include "tracking/live_table.h"
#include "tracking/stack_depot.h"

using namespace vramtrace;

namespace {

inline uint64_t address_for(int thread, uint64_t n) {
    // Distinct per thread, 256-byte aligned like device pointers.
    return (uint64_t{0x7f00} + static_cast<uint64_t>(thread)) << 32 | ((n % (1u << 23)) << 8);
}

inline AllocationRecord make_record(uint64_t address) {
    AllocationRecord r;
    r.address = address;
    r.size = 4096;
    r.stack_id = 1;
    r.device = 0;
    return r;
}

// ---- LiveTable -----------------------------------------------------------------------------------

LiveTable *g_table = nullptr;

// The timed loop of both table benchmarks: thread t keeps `window` live entries, freeing the oldest
// and inserting a new one per iteration. Returns the next serial (entries [next - window, next)
// are still live).
uint64_t churn(benchmark::State &state, LiveTable &table, int t, uint64_t window) {
    uint64_t next = 0;
    for (auto _ : state) {
        if (next == 0) { // the initial live set, untimed (after the loop's start barrier)
            state.PauseTiming();
            for (; next < window; ++next) table.insert(make_record(address_for(t, next)));
            state.ResumeTiming();
        }
        AllocationRecord out;
        benchmark::DoNotOptimize(table.erase(address_for(t, next - window), &out));
        table.insert(make_record(address_for(t, next)));
        ++next;
    }
    state.SetItemsProcessed(state.iterations());
    return next;
}

void BM_LiveTable(benchmark::State &state) {
    if (state.thread_index() == 0) g_table = new LiveTable(); // leaked: the table never unmaps
    // (the loop's start is a barrier: every thread sees the new table)
    const int t = state.thread_index();
    churn(state, *g_table, t, static_cast<uint64_t>(state.range(0)));
    if (t == 0) state.counters["levels"] = g_table->levels();
}

// The same work on a table of each thread's own: nothing shared between threads, so its scaling is
// what the machine itself allows (cores, caches, memory); the shared table's is judged against it.
void BM_LiveTablePrivate(benchmark::State &state) {
    // One table per thread index, kept for the next runs (a table never unmaps): each run erases
    // what it left live, so the next starts from an empty table whose pages are already touched.
    static LiveTable *tables[256];
    const int t = state.thread_index();
    if (tables[t] == nullptr) tables[t] = new LiveTable();
    const uint64_t window = static_cast<uint64_t>(state.range(0));
    const uint64_t next = churn(state, *tables[t], t, window);
    for (uint64_t i = next > window ? next - window : 0; i < next; ++i) tables[t]->erase(address_for(t, i), nullptr);
}

// The worst case of sharding: a free of an address the table never saw (memory allocated before
// the library was loaded, or by an untracked path) looks in every shard that holds entries.
// Arg: shards in use (threads that inserted one entry each before the timing).
void BM_LiveTableEraseUnknown(benchmark::State &state) {
    auto *table = new LiveTable(); // leaked: the table never unmaps
    for (int64_t t = 1; t < state.range(0); ++t)
        std::thread([&] { table->insert(make_record(address_for(100 + static_cast<int>(t), 0))); }).join();
    uint64_t n = 0;
    for (auto _ : state) benchmark::DoNotOptimize(table->erase(address_for(99, ++n), nullptr));
    state.counters["shards_used"] = table->shards_used();
}

// ---- Baseline: one mutex around std::unordered_map -------------------------------------------------

struct MutexTable {
    std::mutex mu;
    std::unordered_map<uint64_t, AllocationRecord> map;
    bool insert(const AllocationRecord &r) {
        std::lock_guard<std::mutex> lock(mu);
        return map.emplace(r.address, r).second;
    }
    bool erase(uint64_t address, AllocationRecord *out) {
        std::lock_guard<std::mutex> lock(mu);
        auto it = map.find(address);
        if (it == map.end()) return false;
        *out = it->second;
        map.erase(it);
        return true;
    }
};
MutexTable *g_mutex_table = nullptr;

void BM_MutexMap(benchmark::State &state) {
    if (state.thread_index() == 0) {
        delete g_mutex_table;
        g_mutex_table = new MutexTable();
    }
    const int t = state.thread_index();
    const uint64_t window = static_cast<uint64_t>(state.range(0));
    uint64_t next = 0;
    for (auto _ : state) {
        if (next == 0) { // the initial live set, untimed (after the loop's start barrier)
            state.PauseTiming();
            for (; next < window; ++next) g_mutex_table->insert(make_record(address_for(t, next)));
            state.ResumeTiming();
        }
        AllocationRecord out;
        benchmark::DoNotOptimize(g_mutex_table->erase(address_for(t, next - window), &out));
        g_mutex_table->insert(make_record(address_for(t, next)));
        ++next;
    }
    state.SetItemsProcessed(state.iterations());
}

// ---- Everything a hook does besides unwinding --------------------------------------------------------
// intern a depth-32 stack (already known: the common case), clock, insert, counters; then erase and
// counters for the free. This is the "table update" half of the 300 ns target.

StackDepot *g_depot = nullptr;
DeviceCounters *g_counters = nullptr;

void fake_stack(uintptr_t *frames, uint32_t depth, uint64_t seed) {
    for (uint32_t i = 0; i < depth; ++i) frames[i] = 0x400000 + (seed * 7919 + i * 131) * 16 + 5;
}

void BM_HookBookkeeping(benchmark::State &state) {
    if (state.thread_index() == 0) {
        g_table = new LiveTable();
        g_depot = new StackDepot();
        g_counters = new DeviceCounters();
    }
    const int t = state.thread_index();
    const uint32_t depth = static_cast<uint32_t>(state.range(0));
    const uint64_t window = static_cast<uint64_t>(state.range(1)); // live allocations per thread
    constexpr int kStacks = 64;
    std::vector<uintptr_t> stacks(kStacks * depth);
    for (int s = 0; s < kStacks; ++s) fake_stack(&stacks[s * depth], depth, s);
    uint64_t next = 0;
    for (auto _ : state) {
        if (next == 0) { // the initial live set, untimed (after the loop's start barrier)
            state.PauseTiming();
            for (; next < window; ++next) g_table->insert(make_record(address_for(t, next)));
            state.ResumeTiming();
        }
        // free of the oldest
        AllocationRecord out;
        if (g_table->erase(address_for(t, next - window), &out)) g_counters->on_free(out.device, out.size);
        // allocation
        uint32_t id = g_depot->intern(&stacks[(next % kStacks) * depth], depth);
        timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        AllocationRecord r = make_record(address_for(t, next));
        r.stack_id = id;
        r.time_ns = static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
        if (g_table->insert(r)) g_counters->on_alloc(r.device, r.size);
        ++next;
    }
    state.SetItemsProcessed(state.iterations());
}

// ---- StackDepot alone -----------------------------------------------------------------------------------

void BM_DepotInternHit(benchmark::State &state) {
    if (state.thread_index() == 0) g_depot = new StackDepot();
    const uint32_t depth = static_cast<uint32_t>(state.range(0));
    constexpr int kStacks = 64;
    std::vector<uintptr_t> stacks(kStacks * depth);
    for (int s = 0; s < kStacks; ++s) fake_stack(&stacks[s * depth], depth, s);
    uint64_t n = 0;
    for (auto _ : state) benchmark::DoNotOptimize(g_depot->intern(&stacks[(n++ % kStacks) * depth], depth));
    state.SetItemsProcessed(state.iterations());
}

// ---- Memory -----------------------------------------------------------------------------------------

void BM_MemoryPerLiveAllocation(benchmark::State &state) {
    const uint64_t n = static_cast<uint64_t>(state.range(0));
    double bytes = 0;
    for (auto _ : state) {
        auto *table = new LiveTable(); // the tracker's default size
        for (uint64_t i = 1; i <= n; ++i) table->insert(make_record(address_for(0, i)));
        bytes = static_cast<double>(table->mapped_bytes());
        state.counters["levels"] = table->levels();
        state.counters["longest_probe"] = table->longest_probe();
    }
    state.counters["live"] = static_cast<double>(n);
    state.counters["mapped_MiB"] = bytes / (1 << 20);
    state.counters["bytes_per_live"] = bytes / static_cast<double>(n);
}

void BM_MemoryPerUniqueStack(benchmark::State &state) {
    const uint64_t n = static_cast<uint64_t>(state.range(0));
    const uint32_t depth = static_cast<uint32_t>(state.range(1));
    std::vector<uintptr_t> frames(depth);
    double bytes = 0, base = 0;
    for (auto _ : state) {
        auto *depot = new StackDepot(); // the tracker's default size
        base = static_cast<double>(depot->mapped_bytes());
        for (uint64_t i = 1; i <= n; ++i) {
            fake_stack(frames.data(), depth, i);
            depot->intern(frames.data(), depth);
        }
        bytes = static_cast<double>(depot->mapped_bytes());
        if (depot->size() != n) state.SkipWithError("stacks were not all distinct");
    }
    state.counters["stacks"] = static_cast<double>(n);
    state.counters["depth"] = depth;
    state.counters["mapped_MiB"] = bytes / (1 << 20);
    state.counters["empty_depot_MiB"] = base / (1 << 20);
    state.counters["bytes_per_stack"] = bytes / static_cast<double>(n);
    state.counters["bytes_per_stack_above_empty"] = (bytes - base) / static_cast<double>(n);
}

double minimum(const std::vector<double> &v) { return v.empty() ? 0 : *std::min_element(v.begin(), v.end()); }

} // namespace

int main(int argc, char **argv) {
    int max_threads = static_cast<int>(std::thread::hardware_concurrency());
    std::vector<char *> args;
    for (int i = 0; i < argc; ++i) {
        if (std::strncmp(argv[i], "--threads-max=", 14) == 0)
            max_threads = std::atoi(argv[i] + 14);
        else
            args.push_back(argv[i]);
    }
    if (max_threads < 1) max_threads = 1;
    if (max_threads > 256) max_threads = 256; // BM_LiveTablePrivate keeps a table per thread index
    auto threads = [&](benchmark::internal::Benchmark *b) {
        for (int t = 1; t < max_threads; t *= 2) b->Threads(t);
        b->Threads(max_threads);
        b->UseRealTime();
        b->ComputeStatistics("min", minimum);
    };
    for (int64_t live : {1024, 65536}) {
        threads(benchmark::RegisterBenchmark("LiveTable/insert+erase", BM_LiveTable)->Arg(live)->ArgName("live"));
        threads(benchmark::RegisterBenchmark("MutexMap/insert+erase", BM_MutexMap)->Arg(live)->ArgName("live"));
        threads(benchmark::RegisterBenchmark("LiveTable/private_per_thread", BM_LiveTablePrivate)->Arg(live)->ArgName("live"));
    }
    benchmark::RegisterBenchmark("LiveTable/erase_unknown", BM_LiveTableEraseUnknown)
        ->Arg(1)->Arg(2)->Arg(16)->ArgName("shards")->ComputeStatistics("min", minimum);
    threads(benchmark::RegisterBenchmark("HookBookkeeping", BM_HookBookkeeping)
                ->Args({32, 1024})->ArgNames({"depth", "live"}));
    // One live allocation at a time (alloc, free, alloc, ...): everything stays in L1, as in the
    // hook benchmark; the row above keeps 1024 live per thread in a table of 64 Ki slots.
    benchmark::RegisterBenchmark("HookBookkeeping", BM_HookBookkeeping)
        ->Args({32, 1})->ArgNames({"depth", "live"})->ComputeStatistics("min", minimum);
    threads(benchmark::RegisterBenchmark("StackDepot/intern_hit", BM_DepotInternHit)->Arg(32)->ArgName("depth"));
    benchmark::RegisterBenchmark("Memory/per_live_allocation", BM_MemoryPerLiveAllocation)
        ->Arg(100000)->Arg(1000000)->Iterations(1)->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark("Memory/per_unique_stack", BM_MemoryPerUniqueStack)
        ->Args({100000, 16})->Args({100000, 32})->Args({100000, 64})->Iterations(1)
        ->Unit(benchmark::kMillisecond);
    int n = static_cast<int>(args.size());
    benchmark::Initialize(&n, args.data());
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
