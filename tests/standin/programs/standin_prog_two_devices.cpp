// Device attribution across two devices (the stand-in's default of 2), one scenario per run:
//   cross   a cudaMalloc on device 1 freed after the thread switched to device 0; a device-1 pointer
//           freed by a thread that never made a context current (cuMemFree_v2 through the driver);
//           a cudaMallocAsync on a stream of device 1 from a thread whose current device is 0
//           (left live); cudaMallocManaged with device 1 current (left live); one cudaMalloc on
//           device 0 (left live)
//   only1   everything on device 1: the tracer must not make a context on device 0 (the test
//           compares the driver's trace of context calls traced and untraced)
// Oracle lines: expect-live <bytes> <api> <device> <function> <file>:<line>. Exits 0.
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "expect_live.h"

static void check(cudaError_t e, const char* what, int line) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "standin_prog_two_devices: line %d: %s failed: %s\n", line, what, cudaGetErrorName(e));
    std::exit(1);
  }
}
static void check_cu(CUresult r, const char* what, int line) {
  if (r != CUDA_SUCCESS) {
    std::fprintf(stderr, "standin_prog_two_devices: line %d: %s failed: CUresult %d\n", line, what,
                 static_cast<int>(r));
    std::exit(1);
  }
}
#define CHECK(x) check((x), #x, __LINE__)
#define CHECK_CU(x) check_cu((x), #x, __LINE__)

static int scenario_cross() {
  const size_t kib = 1024;
  // Allocated on device 1, freed with device 0 current.
  CHECK(cudaSetDevice(1));
  void* moved = nullptr;
  CHECK(cudaMalloc(&moved, 100 * kib));
  CHECK(cudaSetDevice(0));
  CHECK(cudaFree(moved));
  // A device-1 pointer freed by a thread with no current context.
  CHECK(cudaSetDevice(1));
  void* orphan = nullptr;
  CHECK(cudaMalloc(&orphan, 200 * kib));
  std::thread([&] { CHECK_CU(cuMemFree_v2(reinterpret_cast<CUdeviceptr>(orphan))); }).join();
  // A stream of device 1 used from a thread whose current device is 0.
  cudaStream_t stream1 = nullptr;
  CHECK(cudaStreamCreate(&stream1));
  CHECK(cudaSetDevice(0));
  void* async = nullptr;
  int async_line = __LINE__ + 1;
  CHECK(cudaMallocAsync(&async, 300 * kib, stream1));
  CHECK(cudaStreamSynchronize(stream1));
  print_expect_live(300 * kib, "cudaMallocAsync", 1, "scenario_cross", __FILE__, async_line);
  // Managed memory made with device 1 current is recorded on device 1.
  CHECK(cudaSetDevice(1));
  void* managed = nullptr;
  int managed_line = __LINE__ + 1;
  CHECK(cudaMallocManaged(&managed, 400 * kib, cudaMemAttachGlobal));
  print_expect_live(400 * kib, "cudaMallocManaged", 1, "scenario_cross", __FILE__, managed_line);
  CHECK(cudaSetDevice(0));
  void* zero = nullptr;
  int zero_line = __LINE__ + 1;
  CHECK(cudaMalloc(&zero, 500 * kib));
  print_expect_live(500 * kib, "cudaMalloc", 0, "scenario_cross", __FILE__, zero_line);
  return 0;
}

static int scenario_only1() {
  CHECK(cudaSetDevice(1));
  void* p = nullptr;
  CHECK(cudaMalloc(&p, 1 << 20));
  CHECK(cudaFree(p));
  void* q = nullptr;
  int line = __LINE__ + 1;
  CHECK(cudaMallocAsync(&q, 1 << 20, nullptr));
  CHECK(cudaDeviceSynchronize());
  print_expect_live(1 << 20, "cudaMallocAsync", 1, "scenario_only1", __FILE__, line);
  return 0;
}

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  std::string which = argc > 1 ? argv[1] : "";
  if (which == "cross") return scenario_cross();
  if (which == "only1") return scenario_only1();
  std::fprintf(stderr, "usage: standin_prog_two_devices cross|only1\n");
  return 2;
}
