// CUDA_VISIBLE_DEVICES as the stand-in driver and NVML read it: a comma-separated list of physical
// device indices; the process sees them as ordinals 0, 1, ... in that order. As with the real
// driver, the list ends at the first entry that is not a valid index (so "" or "-1" hides every
// device); an index is valid below `physical_count`. Unset: every device, in order.
#pragma once

#include <cstdlib>
#include <cstring>

namespace standin {

// Fills physical[ordinal] and returns how many devices the process sees (at most `capacity`).
inline int visible_devices(int physical_count, int* physical, int capacity) {
  const char* list = std::getenv("CUDA_VISIBLE_DEVICES");
  if (list == nullptr) {
    int n = physical_count < capacity ? physical_count : capacity;
    for (int i = 0; i < n; ++i) physical[i] = i;
    return n;
  }
  int n = 0;
  for (const char* p = list; *p != '\0' && n < capacity;) {
    char* end = nullptr;
    long v = std::strtol(p, &end, 10);
    if (end == p || v < 0 || v >= physical_count || (*end != ',' && *end != '\0')) break;
    bool repeated = false;
    for (int i = 0; i < n; ++i) repeated |= physical[i] == static_cast<int>(v);
    if (repeated) break;
    physical[n++] = static_cast<int>(v);
    p = *end == ',' ? end + 1 : end;
  }
  return n;
}

}  // namespace standin
