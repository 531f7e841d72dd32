// What the driver queries that a tracer might make per allocation cost on a real driver: ns per call
// of each, from 1 thread and from T threads at once (each on its own stream and its own live
// allocation), next to the allocation pair they would be added to. Not a test: a measurement that
// decides which query may sit on the hook path (docs/performance.md).
//
//   nvcc -O2 -std=c++17 driver_calls.cu -o driver_calls -lcuda
//   driver_calls [CALLS_PER_THREAD [THREADS...]]
// Prints one line per (query, threads):
//   RESULT bench=driver_call query=cuPointerGetAttribute(DEVICE_ORDINAL) threads=4 ns_per_call=...
// ns_per_call is wall time * threads / calls: what one call costs a thread while the others call too.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <cuda.h>
#include <cuda_runtime_api.h>

namespace {

struct PerThread {
    cudaStream_t stream = nullptr;
    void *ptr = nullptr;
};

using Query = std::function<void(PerThread &)>;

double time_query(const Query &q, std::vector<PerThread> &state, int threads, long calls) {
    auto body = [&](int t) {
        cudaSetDevice(0);
        for (long i = 0; i < calls; ++i) q(state[static_cast<size_t>(t)]);
    };
    auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) pool.emplace_back(body, t);
    for (auto &th : pool) th.join();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return s * 1e9 / static_cast<double>(calls); // each thread makes `calls` calls in that wall time
}

} // namespace

int main(int argc, char **argv) {
    long calls = argc > 1 ? std::atol(argv[1]) : 100000;
    std::vector<int> thread_counts;
    for (int i = 2; i < argc; ++i) thread_counts.push_back(std::atoi(argv[i]));
    if (thread_counts.empty()) thread_counts = {1, 4, 16};
    int max_threads = 1;
    for (int t : thread_counts) max_threads = t > max_threads ? t : max_threads;

    if (cudaSetDevice(0) != cudaSuccess || cudaFree(nullptr) != cudaSuccess) {
        std::fprintf(stderr, "no CUDA device\n");
        return 1;
    }
    std::vector<PerThread> state(static_cast<size_t>(max_threads));
    for (auto &s : state) {
        cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking);
        cudaMallocAsync(&s.ptr, 1 << 20, s.stream);
        cudaStreamSynchronize(s.stream);
    }

    std::vector<std::pair<std::string, Query>> queries = {
        {"cuPointerGetAttribute(DEVICE_ORDINAL)",
         [](PerThread &s) {
             int dev = -1;
             cuPointerGetAttribute(&dev, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, reinterpret_cast<CUdeviceptr>(s.ptr));
         }},
        {"cuPointerGetAttribute(CONTEXT)",
         [](PerThread &s) {
             CUcontext c = nullptr;
             cuPointerGetAttribute(&c, CU_POINTER_ATTRIBUTE_CONTEXT, reinterpret_cast<CUdeviceptr>(s.ptr));
         }},
        {"cuMemGetAddressRange",
         [](PerThread &s) {
             CUdeviceptr base = 0;
             size_t size = 0;
             cuMemGetAddressRange(&base, &size, reinterpret_cast<CUdeviceptr>(s.ptr));
         }},
        {"cuCtxGetDevice",
         [](PerThread &) {
             CUdevice d = -1;
             cuCtxGetDevice(&d);
         }},
        {"cuCtxGetCurrent",
         [](PerThread &) {
             CUcontext c = nullptr;
             cuCtxGetCurrent(&c);
         }},
        {"cuStreamGetDevice",
         [](PerThread &s) {
             CUdevice d = -1;
             cuStreamGetDevice(reinterpret_cast<CUstream>(s.stream), &d);
         }},
        {"cuStreamGetCtx",
         [](PerThread &s) {
             CUcontext c = nullptr;
             cuStreamGetCtx(reinterpret_cast<CUstream>(s.stream), &c);
         }},
        {"cuStreamIsCapturing",
         [](PerThread &s) {
             CUstreamCaptureStatus st;
             cuStreamIsCapturing(reinterpret_cast<CUstream>(s.stream), &st);
         }},
        {"clock_gettime(MONOTONIC)",
         [](PerThread &) {
             timespec ts;
             clock_gettime(CLOCK_MONOTONIC, &ts);
         }},
        {"cudaMallocAsync+cudaFreeAsync",
         [](PerThread &s) {
             void *p = nullptr;
             cudaMallocAsync(&p, 1 << 20, s.stream);
             cudaFreeAsync(p, s.stream);
         }},
    };
    for (int threads : thread_counts) {
        for (auto &[name, q] : queries) {
            time_query(q, state, threads, calls / 10 + 1); // warm-up
            double ns = time_query(q, state, threads, calls);
            std::printf("RESULT bench=driver_call query=%s threads=%d ns_per_call=%.1f\n", name.c_str(), threads, ns);
        }
    }
    // Sanity: the device the pointer query names.
    int dev = -1;
    CUresult rc = cuPointerGetAttribute(&dev, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, reinterpret_cast<CUdeviceptr>(state[0].ptr));
    std::printf("check: cuPointerGetAttribute rc=%d device=%d\n", static_cast<int>(rc), dev);
    return 0;
}
