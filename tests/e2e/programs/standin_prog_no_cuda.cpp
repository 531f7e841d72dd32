// Never touches CUDA: a process the preload library must leave entirely alone.
#include <cstdio>

int main() {
  std::printf("standin_prog_no_cuda: no CUDA here\n");
  return 0;
}
