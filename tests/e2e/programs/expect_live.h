// Shared by the stand-in test programs: the "expect-live" oracle lines each program prints on
// stdout for the allocations it leaves live at exit, from its own bookkeeping:
//     expect-live <bytes> <api> <device> <function> <file-basename>:<line>
#pragma once

#include <cstddef>
#include <cstdio>
#include <cstring>

#define STANDIN_NOINLINE __attribute__((noinline))

inline const char* standin_basename(const char* path) {
  const char* slash = std::strrchr(path, '/');
  return slash != nullptr ? slash + 1 : path;
}

inline void print_expect_live(std::size_t bytes, const char* api, int device, const char* function,
                              const char* file, int line) {
  std::printf("expect-live %zu %s %d %s %s:%d\n", bytes, api, device, function, standin_basename(file), line);
}
