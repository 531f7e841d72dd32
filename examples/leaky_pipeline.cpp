// leaky_pipeline: a small program shaped like a training pipeline that allocates CUDA memory with
// four runtime APIs from a few named functions, frees some of it and deliberately leaks the rest.
//
// It prints, for every allocation it leaves live at exit, one line on stdout:
//     expect-live <bytes> <api> <device> <function> <file-basename>:<line>
// (api: the runtime call used; device: the ordinal, -1 for pinned host memory; line: the line of
// the allocating call). These lines come from the program's own bookkeeping and are the oracle
// the vramtrace tests compare a snapshot against.
//
// Plain C++ on <cuda_runtime_api.h> only, so it builds against the stand-in runtime (tests) and
// with nvcc on a real GPU:  nvcc -x cu -g -O1 leaky_pipeline.cpp   (static cudart, the default)
//                           nvcc -x cu -g -O1 -cudart shared leaky_pipeline.cpp
// Usage: leaky_pipeline [--device N]
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define NOINLINE __attribute__((noinline))

// Every CUDA call is checked; a failure prints what failed and exits non-zero.
#define CUDA_CHECK(call) check_cuda((call), #call, __LINE__)

namespace {

constexpr std::size_t KiB = 1024;
constexpr std::size_t MiB = 1024 * KiB;

// Sizes are distinct and exact so each allocation can be told apart in a snapshot.
constexpr std::size_t kEmbeddingBytes = 1 * MiB;           // cudaMalloc, leaked
constexpr std::size_t kDenseBytes = 3 * MiB + 512;         // cudaMalloc, freed
constexpr std::size_t kActivationBytes = 2 * MiB + 256;    // cudaMallocAsync per step (+ step), freed
constexpr std::size_t kActivationCacheBytes = 5 * MiB + 128;  // cudaMallocAsync, leaked
constexpr std::size_t kWorkspaceBytes = 768 * KiB + 64;    // cudaMallocManaged, leaked
constexpr std::size_t kScratchBytes = 1 * KiB + 8;         // cudaMallocManaged, freed
constexpr std::size_t kStagingBytes = 4 * MiB + 1024;      // cudaMallocHost, leaked
constexpr std::size_t kLabelsBytes = 96 * KiB + 32;        // cudaHostAlloc, leaked
constexpr std::size_t kBounceBytes = 64 * KiB + 16;        // cudaHostAlloc, freed
constexpr int kSteps = 3;

struct LiveRecord {
  void* ptr;
  std::size_t bytes;
  const char* api;
  int device;
  const char* function;
  int line;
};

std::vector<LiveRecord>& live_records() {
  static std::vector<LiveRecord> records;
  return records;
}

void check_cuda(cudaError_t err, const char* what, int line) {
  if (err != cudaSuccess) {
    std::fprintf(stderr, "leaky_pipeline: line %d: %s failed: %s (%s)\n", line, what, cudaGetErrorName(err),
                 cudaGetErrorString(err));
    std::exit(1);
  }
}

void note_live(void* ptr, std::size_t bytes, const char* api, int device, const char* function, int line) {
  live_records().push_back(LiveRecord{ptr, bytes, api, device, function, line});
}

void note_freed(void* ptr) {
  auto& records = live_records();
  for (auto it = records.begin(); it != records.end(); ++it) {
    if (it->ptr == ptr) {
      records.erase(it);
      return;
    }
  }
}

const char* file_basename(const char* path) {
  const char* slash = std::strrchr(path, '/');
  return slash != nullptr ? slash + 1 : path;
}

}  // namespace

struct Model {
  void* embedding = nullptr;
  void* dense = nullptr;
};

struct Workspace {
  void* workspace = nullptr;
};

// Weights: two cudaMalloc buffers; the dense layer is freed at the end, the embedding leaks.
NOINLINE Model allocate_weights(int device) {
  Model m;
  const int embedding_line = __LINE__; CUDA_CHECK(cudaMalloc(&m.embedding, kEmbeddingBytes));
  note_live(m.embedding, kEmbeddingBytes, "cudaMalloc", device, __func__, embedding_line);
  const int dense_line = __LINE__; CUDA_CHECK(cudaMalloc(&m.dense, kDenseBytes));
  note_live(m.dense, kDenseBytes, "cudaMalloc", device, __func__, dense_line);
  CUDA_CHECK(cudaMemset(m.embedding, 0, kEmbeddingBytes));
  CUDA_CHECK(cudaMemset(m.dense, 0x3c, kDenseBytes));
  return m;
}

// Activations: stream-ordered allocations, one per step, freed on the stream; the last step also
// keeps an activation cache that is never freed.
NOINLINE void allocate_activations(cudaStream_t stream, int device, int step) {
  void* activations = nullptr;
  const std::size_t bytes = kActivationBytes + static_cast<std::size_t>(step);
  const int line = __LINE__; CUDA_CHECK(cudaMallocAsync(&activations, bytes, stream));
  note_live(activations, bytes, "cudaMallocAsync", device, __func__, line);
  CUDA_CHECK(cudaFreeAsync(activations, stream));
  note_freed(activations);
  if (step == kSteps - 1) {
    void* cache = nullptr;
    const int cache_line = __LINE__; CUDA_CHECK(cudaMallocAsync(&cache, kActivationCacheBytes, stream));
    note_live(cache, kActivationCacheBytes, "cudaMallocAsync", device, __func__, cache_line);
  }
}

// Workspace: managed memory; a scratch buffer is freed, the workspace leaks.
NOINLINE Workspace allocate_workspace(int device) {
  Workspace w;
  void* scratch = nullptr;
  const int scratch_line = __LINE__; CUDA_CHECK(cudaMallocManaged(&scratch, kScratchBytes, cudaMemAttachGlobal));
  note_live(scratch, kScratchBytes, "cudaMallocManaged", device, __func__, scratch_line);
  const int line = __LINE__; CUDA_CHECK(cudaMallocManaged(&w.workspace, kWorkspaceBytes, cudaMemAttachGlobal));
  note_live(w.workspace, kWorkspaceBytes, "cudaMallocManaged", device, __func__, line);
  CUDA_CHECK(cudaFree(scratch));
  note_freed(scratch);
  return w;
}

// Host staging: page-locked buffers (they count against no device: -1).
NOINLINE static void* stage_host_batch(const Model& model) {
  void* staging = nullptr;
  const int staging_line = __LINE__; CUDA_CHECK(cudaMallocHost(&staging, kStagingBytes));
  note_live(staging, kStagingBytes, "cudaMallocHost", -1, __func__, staging_line);
  void* labels = nullptr;
  const int labels_line = __LINE__; CUDA_CHECK(cudaHostAlloc(&labels, kLabelsBytes, cudaHostAllocPortable));
  note_live(labels, kLabelsBytes, "cudaHostAlloc", -1, __func__, labels_line);
  void* bounce = nullptr;
  const int bounce_line = __LINE__; CUDA_CHECK(cudaHostAlloc(&bounce, kBounceBytes, cudaHostAllocDefault));
  note_live(bounce, kBounceBytes, "cudaHostAlloc", -1, __func__, bounce_line);
  std::memset(staging, 0x5a, kStagingBytes);
  CUDA_CHECK(cudaMemcpy(model.embedding, staging, kEmbeddingBytes, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(bounce, model.embedding, kBounceBytes, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaFreeHost(bounce));
  note_freed(bounce);
  return staging;
}

NOINLINE void release_dense_layer(Model& model) {
  CUDA_CHECK(cudaFree(model.dense));
  note_freed(model.dense);
  model.dense = nullptr;
}

int main(int argc, char** argv) {
  int device = 0;
  bool choose_device = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--device") == 0 && i + 1 < argc) {
      device = std::atoi(argv[++i]);
      choose_device = true;
    } else {
      std::fprintf(stderr, "usage: %s [--device N]\n", argv[0]);
      return 2;
    }
  }

  int count = 0;
  CUDA_CHECK(cudaGetDeviceCount(&count));
  if (choose_device) CUDA_CHECK(cudaSetDevice(device));  // otherwise device 0, chosen lazily
  int current = -1;
  CUDA_CHECK(cudaGetDevice(&current));
  if (current != device) {
    std::fprintf(stderr, "leaky_pipeline: expected device %d, runtime says %d\n", device, current);
    return 1;
  }

  cudaStream_t stream = nullptr;
  CUDA_CHECK(cudaStreamCreate(&stream));

  Model model = allocate_weights(device);
  for (int step = 0; step < kSteps; ++step) allocate_activations(stream, device, step);
  Workspace workspace = allocate_workspace(device);
  void* staging = stage_host_batch(model);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  release_dense_layer(model);
  CUDA_CHECK(cudaDeviceSynchronize());
  CUDA_CHECK(cudaStreamDestroy(stream));
  CUDA_CHECK(cudaGetLastError());
  (void)workspace;
  (void)staging;

  std::printf("leaky_pipeline: %d steps on device %d of %d, %zu allocations left live\n", kSteps, device, count,
              live_records().size());
  const char* file = file_basename(__FILE__);
  for (const LiveRecord& r : live_records()) {
    std::printf("expect-live %zu %s %d %s %s:%d\n", r.bytes, r.api, r.device, r.function, file, r.line);
  }
  return 0;
}
