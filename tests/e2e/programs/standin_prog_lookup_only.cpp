// Initializes CUDA (the runtime bootstraps and looks up every driver function through
// cuGetProcAddress) but allocates nothing: like a launcher or a data-loader worker that imports a
// framework. Under vramtrace it must write no report and print nothing.
#include <cstdio>
#include <cuda_runtime_api.h>

int main() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) return 1;
  std::printf("devices: %d\n", count);
  return 0;
}
