// The cost of an NVTX push/pop pair as a program pays it with vramtrace attached: the NVTX3 header's
// own dispatch (an indirect call through its slot) into the library's callbacks, which keep the
// thread's range stack and its interned id (lib/nvtx/thread_ranges.h). Run with
// NVTX_INJECTION64_PATH=BUILD/lib/libvramtrace.so (the library then attaches at the first call);
// without it the same loop measures NVTX's own no-ops. Target: <= 20 ns per push or pop of an
// already-seen string (docs/nvtx.md, docs/performance.md).
// The CUPTI backend's route (no target): add VRAMTRACE_BACKEND=cupti and VRAMTRACE_CUPTI_LIBRARY=
// BUILD/standin/libcupti.so.13; NVTX is then handed to that libcupti, whose NVTX callbacks reach the
// library's translation (cupti/nvtx_callbacks.cpp). With the stand-in this measures the translation
// behind a minimal dispatcher; a real libcupti's own dispatch comes on top.
#include <benchmark/benchmark.h>

#include <nvtx3/nvToolsExt.h>

namespace {

void BM_push_pop_registered(benchmark::State &state) {
    nvtxDomainHandle_t domain = nvtxDomainCreateA("bench");
    nvtxEventAttributes_t a{};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = nvtxDomainRegisterStringA(domain, "forward");
    for (auto _ : state) {
        benchmark::DoNotOptimize(nvtxDomainRangePushEx(domain, &a));
        benchmark::DoNotOptimize(nvtxDomainRangePop(domain));
    }
    state.counters["ns_per_call"] =
        benchmark::Counter(2 * state.iterations(), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_push_pop_ascii(benchmark::State &state) {
    for (auto _ : state) {
        benchmark::DoNotOptimize(nvtxRangePushA("optimizer.step"));
        benchmark::DoNotOptimize(nvtxRangePop());
    }
    state.counters["ns_per_call"] =
        benchmark::Counter(2 * state.iterations(), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// A push under an open outer range (the stack's id is one node look-up from its parent's).
void BM_push_pop_nested_ascii(benchmark::State &state) {
    nvtxRangePushA("step");
    for (auto _ : state) {
        benchmark::DoNotOptimize(nvtxRangePushA("aten::mm, seq = 17, op_id = 3"));
        benchmark::DoNotOptimize(nvtxRangePop());
    }
    nvtxRangePop();
    state.counters["ns_per_call"] =
        benchmark::Counter(2 * state.iterations(), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

} // namespace

BENCHMARK(BM_push_pop_registered);
BENCHMARK(BM_push_pop_ascii);
BENCHMARK(BM_push_pop_nested_ascii);
BENCHMARK_MAIN();
