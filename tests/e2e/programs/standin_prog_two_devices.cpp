// Device attribution across two devices (the stand-in's default of 2), one scenario per run:
//   cross   a cudaMalloc on device 1 freed after the thread switched to device 0; a device-1 pointer
//           freed by a thread that never made a context current (cuMemFree_v2 through the driver);
//           a cudaMallocAsync on a stream of device 1 from a thread whose current device is 0
//           (left live); cudaMallocManaged with device 1 current (left live); one cudaMalloc on
//           device 0 (left live)
//   only1   everything on device 1: the tracer must not make a context on device 0 (the test
//           compares the driver's trace of context calls traced and untraced)
//   ipc     exports a 3 MiB cudaMalloc of device 1 (left live) and runs this program again as
//           "ipc-import HANDLE_HEX", which makes device 0 current and opens the handle (left open):
//           two processes, the import on the exporter's device 1 in a process that allocates
//           nothing on device 1 itself. The child prints its own oracle line, prefixed "child ".
// Oracle lines: expect-live <bytes> <api> <device> <function> <file>:<line>. Exits 0.
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

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

// A stream of device 0 is used, destroyed, and its handle comes back for a stream of device 1 (the
// stand-in's streams are heap objects of one size, so the next one usually takes the freed memory):
// the allocation on the new stream is device 1's, whatever was answered for the old one. Prints
// "same-handle 1" when the handle was reused, so the test knows it checked the reuse.
static int scenario_reuse() {
  CHECK(cudaSetDevice(0));
  cudaStream_t first = nullptr;
  CHECK(cudaStreamCreate(&first));
  for (int i = 0; i < 3; ++i) {
    void* p = nullptr;
    CHECK(cudaMallocAsync(&p, 64 * 1024, first));
    CHECK(cudaFreeAsync(p, first));
  }
  CHECK(cudaStreamSynchronize(first));
  CHECK(cudaStreamDestroy(first));
  CHECK(cudaSetDevice(1));
  cudaStream_t second = nullptr;
  CHECK(cudaStreamCreate(&second));
  std::printf("same-handle %d\n", second == first ? 1 : 0);
  CHECK(cudaSetDevice(0));
  void* q = nullptr;
  int line = __LINE__ + 1;
  CHECK(cudaMallocAsync(&q, 2 << 20, second));
  CHECK(cudaStreamSynchronize(second));
  print_expect_live(2 << 20, "cudaMallocAsync", 1, "scenario_reuse", __FILE__, line);
  return 0;
}

STANDIN_NOINLINE int scenario_ipc(const char* self) {
  CHECK(cudaSetDevice(1));
  void* p = nullptr;
  int line = __LINE__ + 1;
  CHECK(cudaMalloc(&p, 3 << 20));
  print_expect_live(3 << 20, "cudaMalloc", 1, "scenario_ipc", __FILE__, line);
  cudaIpcMemHandle_t handle;
  CHECK(cudaIpcGetMemHandle(&handle, p));
  char hex[2 * sizeof handle.reserved + 1];
  for (size_t i = 0; i < sizeof handle.reserved; ++i)
    std::snprintf(hex + 2 * i, 3, "%02x", static_cast<unsigned char>(handle.reserved[i]));
  pid_t child = fork();
  if (child == 0) {
    execl(self, self, "ipc-import", hex, static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "standin_prog_two_devices: the importer failed (status %d)\n", status);
    return 1;
  }
  return 0;
}

STANDIN_NOINLINE int scenario_ipc_import(const char* hex) {
  cudaIpcMemHandle_t handle{};
  if (std::strlen(hex) != 2 * sizeof handle.reserved) return 2;
  for (size_t i = 0; i < sizeof handle.reserved; ++i) {
    unsigned byte = 0;
    if (std::sscanf(hex + 2 * i, "%2x", &byte) != 1) return 2;
    handle.reserved[i] = static_cast<char>(byte);
  }
  CHECK(cudaSetDevice(0));
  void* imported = nullptr;
  int line = __LINE__ + 1;
  CHECK(cudaIpcOpenMemHandle(&imported, handle, cudaIpcMemLazyEnablePeerAccess));
  std::printf("child ");
  print_expect_live(3 << 20, "cudaIpcOpenMemHandle", 1, "scenario_ipc_import", __FILE__, line);
  return 0;
}

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  std::string which = argc > 1 ? argv[1] : "";
  if (which == "cross") return scenario_cross();
  if (which == "only1") return scenario_only1();
  if (which == "reuse") return scenario_reuse();
  if (which == "ipc") return scenario_ipc(argv[0]);
  if (which == "ipc-import" && argc > 2) return scenario_ipc_import(argv[2]);
  std::fprintf(stderr, "usage: standin_prog_two_devices cross|only1|ipc\n");
  return 2;
}
