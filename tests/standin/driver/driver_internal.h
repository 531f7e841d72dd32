// Internal state of the stand-in CUDA driver (libcuda.so.1 for tests). Nothing here is exported:
// the library is built with -fvisibility=hidden and a version script that keeps only cu* names.
#pragma once

#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <vector>

// Every entry point is defined with this: C linkage, default visibility. The library is linked
// with -Bsymbolic, so the addresses it takes of its own entry points (the cuGetProcAddress
// table) are its own definitions even when a preloaded library exports the same names.
#define STANDIN_CU_API extern "C" __attribute__((visibility("default")))

namespace standin_driver {

constexpr int kDriverVersion = 13000;
constexpr std::size_t kAlignment = 256;
constexpr int kMaxDevices = 64;

struct Config {
  int device_count = 2;                        // STANDIN_CUDA_DEVICES
  std::size_t device_bytes = std::size_t{1} << 30;  // STANDIN_CUDA_DEVICE_BYTES
  bool trace = false;                          // STANDIN_CUDA_TRACE=1
};
// Parsed from the environment on first use, never destroyed.
const Config& config();

// printf-style line on stderr, prefixed "[standin-cuda] ", only when STANDIN_CUDA_TRACE=1.
void trace(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
const char* result_name(CUresult r);  // "CUDA_SUCCESS", ...; "CUDA_ERROR_<n>" style for unknown

// Contexts: one primary context per device, handed out as CUcontext.
struct Context {
  std::uint32_t magic;
  int device;
  int retain_count;  // guarded by State::mu
};
// Streams created by cuStreamCreate: fake handles remembering their device.
struct Stream {
  std::uint32_t magic;
  int device;
  unsigned int flags;
};
constexpr std::uint32_t kContextMagic = 0x43545853;  // "SXTC"
constexpr std::uint32_t kStreamMagic = 0x4d525453;   // "STRM"

enum class MemKind {
  device,        // cuMemAlloc_v2
  device_async,  // cuMemAllocAsync(_ptsz)
  managed,       // cuMemAllocManaged
  host_pinned,   // cuMemAllocHost_v2 / cuMemHostAlloc
  device_low32,  // legacy cuMemAlloc (32-bit CUdeviceptr_v1): mapped below 4 GiB
};

struct Allocation {
  std::size_t size;
  int device;  // device it counts against; for host_pinned the device of the allocating context
  MemKind kind;
};

struct State {
  std::mutex mu;
  std::map<std::uintptr_t, Allocation> allocations;  // by start address
  std::vector<std::size_t> used;                     // bytes per device
  std::vector<Context> contexts;                     // primary contexts, one per device
  std::set<Stream*> streams;                         // live streams
};
// Created on first use and never destroyed (driver calls may come from late exit handlers).
State& state();

bool initialized();
void mark_initialized();

// The calling thread's current context (nullptr when none).
Context* current_context();
void set_current_context(Context* ctx);
Context* context_from_handle(CUcontext h);  // nullptr when h is not one of ours

// Device of a stream-ordered call: the stream's device, or the current context's for the
// NULL / legacy / per-thread stream. Returns CUDA_SUCCESS or an error.
CUresult stream_device(CUstream s, int* device);
bool valid_stream(CUstream s);

CUresult allocate(MemKind kind, int device, std::size_t bytes, std::uintptr_t* out);
// Frees `address` if it is the start of a live allocation whose kind is in `allowed` (bit mask
// of 1 << MemKind); CUDA_ERROR_INVALID_VALUE otherwise.
CUresult release(std::uintptr_t address, unsigned allowed);
constexpr unsigned kind_bit(MemKind k) { return 1u << static_cast<unsigned>(k); }

// Finds the allocation containing [address, address + length); false when none.
bool find_range(std::uintptr_t address, std::size_t length, std::uintptr_t* start, Allocation* out);

}  // namespace standin_driver
