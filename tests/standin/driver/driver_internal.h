// Internal state of the stand-in CUDA driver (libcuda.so.1 for tests). Nothing here is exported:
// the library is built with -fvisibility=hidden and a version script that keeps only cu* names.
#pragma once

#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>

#include <atomic>
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
  int device_count = 2;                        // devices this process sees (CUDA_VISIBLE_DEVICES)
  int physical_count = 2;                      // STANDIN_CUDA_DEVICES
  int physical[kMaxDevices] = {0, 1};          // the physical index of each ordinal
  std::size_t device_bytes = std::size_t{1} << 30;  // STANDIN_CUDA_DEVICE_BYTES
  bool trace = false;                          // STANDIN_CUDA_TRACE=1
};
// Parsed from the environment on first use, never destroyed.
const Config& config();
// The physical device behind an ordinal: what its UUID, PCI bus id and name follow, so that two
// processes with different CUDA_VISIBLE_DEVICES see one GPU under one UUID.
int physical_of(CUdevice dev);

// printf-style line on stderr, prefixed "[standin-cuda] ", only when STANDIN_CUDA_TRACE=1.
void trace(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
const char* result_name(CUresult r);  // "CUDA_SUCCESS", ...; "CUDA_ERROR_<n>" style for unknown

// Contexts (contexts.cpp): one primary context per device, plus those of cuCtxCreate*, handed out
// as CUcontext. A Context object is never freed, so a handle that another thread still has current
// stays safe to look at; a destroyed one is marked and no longer accepted.
struct Context {
  std::uint32_t magic;
  int device;
  int retain_count;        // primary: retains (guarded by State::mu); created: unused
  bool primary = false;
  std::atomic<bool> destroyed{false};  // created contexts after cuCtxDestroy*
  unsigned int flags = 0;
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
  device,           // cuMemAlloc_v2
  device_async,     // cuMemAllocAsync(_ptsz), cuMemAllocFromPoolAsync(_ptsz): from a pool (Allocation::pool)
  managed,          // cuMemAllocManaged
  host_pinned,      // cuMemAllocHost_v2 / cuMemHostAlloc
  device_low32,     // legacy cuMemAlloc / cuMemAllocPitch (32-bit CUdeviceptr_v1): mapped below 2 GiB
  pitched,          // cuMemAllocPitch_v2: size = pitch * height
  host_registered,  // cuMemHostRegister(_v2): the caller's memory, owned by the caller
  ipc_import,       // cuIpcOpenMemHandle(_v2): a second mapping of an exported allocation's pages
  vmm_mapping,      // cuMemMap: [va, va + size) maps a cuMemCreate handle (holds no memory itself)
  graph,            // a graph memory node's address (cuGraphAddMemAllocNode, or cuMemAllocAsync* on a
                    // capturing stream): counted through the device's graph pool while a launch has
                    // it allocated (graph_exec.cpp)
};
constexpr unsigned kind_bit(MemKind k) { return 1u << static_cast<unsigned>(k); }

// The kinds cuIpcGetMemHandle exports. Those of at least kSharedMappingMinBytes (and every legacy
// one, which is mmap'ed anyway) are MAP_SHARED anonymous mappings, so that cuIpcOpenMemHandle can
// map the same pages a second time (mremap with old_size 0). Smaller ones come from the heap like
// every other kind: mmap costs tens of microseconds, too much for small allocations in a loop.
constexpr unsigned kExportableKinds =
    kind_bit(MemKind::device) | kind_bit(MemKind::pitched) | kind_bit(MemKind::device_low32);
constexpr std::size_t kSharedMappingMinBytes = std::size_t{64} << 10;
constexpr bool shared_mapping(MemKind kind, std::size_t bytes) {
  return kind == MemKind::device_low32 ||
         ((kExportableKinds & kind_bit(kind)) != 0 && bytes >= kSharedMappingMinBytes);
}

// A stream-ordered memory pool: one default pool per device (never destroyed) plus the pools of
// cuMemPoolCreate. Allocations come from host memory one by one; the pool only keeps the books:
// `used` = exact bytes of its live allocations, `reserved` = used rounded up to kPoolChunk (what
// it takes from the device's capacity). Nothing is cached after a free, so cuMemPoolTrimTo has
// nothing to give back.
constexpr std::size_t kPoolChunk = std::size_t{2} << 20;
struct Pool {
  std::uint32_t magic;
  int device;
  bool is_default;
  bool destroyed;             // cuMemPoolDestroy called; deleted when `live` reaches 0
  std::size_t max_size;       // CUmemPoolProps::maxSize, 0 = the device's capacity
  std::size_t used;           // guarded by State::mu, like everything below
  std::size_t reserved;
  std::size_t used_high;
  std::size_t reserved_high;
  std::size_t live;           // live allocations
  CUmemPoolProps props;
};
constexpr std::uint32_t kPoolMagic = 0x4c4f4f50;  // "POOL"

// The kinds a context teardown ends (cuCtxDestroy*, cuDevicePrimaryCtxReset*, the last
// cuDevicePrimaryCtxRelease*), as measured on an H200 with driver 580: memory that the context owns.
// Stream-ordered, VMM and graph memory outlive the context. Registered host memory is unregistered
// (it stays the program's), IPC imports are closed, the rest goes to the device's rewind list.
constexpr unsigned kContextOwnedKinds = kind_bit(MemKind::device) | kind_bit(MemKind::managed) |
                                        kind_bit(MemKind::host_pinned) | kind_bit(MemKind::device_low32) |
                                        kind_bit(MemKind::pitched) | kind_bit(MemKind::host_registered) |
                                        kind_bit(MemKind::ipc_import);
// Of those, the ones whose memory the driver obtained: their addresses are handed out again.
constexpr unsigned kRewindKinds = kind_bit(MemKind::device) | kind_bit(MemKind::managed) |
                                  kind_bit(MemKind::host_pinned) | kind_bit(MemKind::device_low32) |
                                  kind_bit(MemKind::pitched);

struct Allocation {
  std::size_t size;
  int device;  // device it counts against; for host_pinned/host_registered the allocating context's
  MemKind kind;
  Context* context = nullptr;          // kContextOwnedKinds: the context it was made in
  std::uint64_t serial = 0;            // unique per allocation; IPC handles carry it
  Pool* pool = nullptr;                // device_async: the pool it came from
  std::uintptr_t source = 0;           // ipc_import: the exporting allocation's address
  std::uint64_t source_serial = 0;     // ipc_import: and its serial
  int import_refs = 0;                 // ipc_import: opens not yet closed
  bool import_aliases = false;         // ipc_import: mremap'ed alias (else a heap copy)
  CUmemGenericAllocationHandle handle = 0;  // vmm_mapping: the mapped handle
  std::size_t offset = 0;                   // vmm_mapping: offset into it
};

// Memory ended by a teardown, waiting to be handed out again (per device, oldest first): the next
// allocation of the same kind and size on that device takes the first matching block, so a
// program that allocates, resets and allocates the same sizes again gets the same addresses.
struct Rewound {
  std::uintptr_t address;
  std::size_t size;
  MemKind kind;
};

// Virtual memory management (vmm.cpp). Physical memory (cuMemCreate) is a memfd, so that its
// shareable handle (the fd) lets another process map the same pages. It lives while any handle
// refers to it; a handle lives while it has references (cuMemCreate, cuMemRetainAllocationHandle,
// cuMemImportFromShareableHandle: one each; cuMemRelease drops one) or mappings.
constexpr std::size_t kVmmGranularity = std::size_t{2} << 20;
struct PhysicalMemory {
  std::size_t size;
  int device;                // the exporter's device for an import from another process
  CUmemAllocationProp prop;
  int fd;                    // memfd; cuMemMap maps it at the reserved VA
  std::uint64_t file_dev, file_ino;  // its identity: an import of a dup of it in this process finds it
  bool charged;              // counted against `device` (false: imported from another process)
  int handles;               // handle entries referring to it
};
struct PhysicalAllocation {  // one handle value
  PhysicalMemory* memory;
  int refs;                  // 0: the value is no longer accepted (kept while mapped)
  std::size_t mappings;
};
struct Reservation {  // cuMemAddressReserve: PROT_NONE anonymous mapping
  std::size_t size;
};

struct State {
  std::mutex mu;
  std::map<std::uintptr_t, Allocation> allocations;  // by start address, never overlapping
  std::vector<std::size_t> used;                     // bytes per device
  std::vector<Context> contexts;                     // primary contexts, one per device
  std::set<Context*> created;                        // live contexts of cuCtxCreate*
  std::vector<Context*> retired;                     // destroyed ones: kept, and reachable
  std::vector<std::vector<Rewound>> rewind;          // per device, in original allocation order
  std::set<Stream*> streams;                         // live streams
  std::vector<Pool*> default_pools;                  // one per device
  std::set<Pool*> pools;                             // valid pool handles (default ones included)
  std::map<CUmemGenericAllocationHandle, PhysicalAllocation> physical;
  std::map<std::uintptr_t, Reservation> reservations;
  std::uint64_t next_serial = 1;
  CUmemGenericAllocationHandle next_handle = 0;
};
// Created on first use and never destroyed (driver calls may come from late exit handlers).
State& state();

bool initialized();
void mark_initialized();

// The calling thread's context stack (cuCtxPushCurrent/PopCurrent); the current context is its top
// (nullptr when empty or when the top has been destroyed). set_current_context replaces the top
// (nullptr pops it).
constexpr int kContextStackDepth = 32;
Context* current_context();
void set_current_context(Context* ctx);
bool push_context(Context* ctx);  // false when the stack is full
Context* pop_context();           // nullptr when empty
void forget_context_on_thread(Context* ctx);  // removes every entry of ctx from this thread's stack
Context* context_from_handle(CUcontext h);  // nullptr when h is not a live context of ours (locks State::mu)

// Ends every allocation that ctx owns (kContextOwnedKinds, CUDA arrays), as a teardown does.
// Takes State::mu; returns how many were ended.
std::size_t end_context_allocations(Context* ctx);
// Under State::mu: ends ctx's CUDA arrays (arrays.cpp); returns how many.
std::size_t end_context_arrays(State& st, Context* ctx);
// Gives back an IPC import's view (munmap or free); the record is already erased.
void unmap_import(std::uintptr_t address, const Allocation& a);
bool valid_device(CUdevice dev);

// Device of a stream-ordered call: the stream's device, or the current context's for the
// NULL / legacy / per-thread stream. Returns CUDA_SUCCESS or an error.
CUresult stream_device(CUstream s, int* device);
bool valid_stream(CUstream s);

// Allocates `bytes` of `kind` counted against `device`. With a pool (device_async): on the pool's
// device, counted through the pool's reserve; a pool that is not (or no longer) a valid handle is
// CUDA_ERROR_INVALID_VALUE. Size 0: CUDA_ERROR_INVALID_VALUE; over capacity (or over the pool's
// maxSize): CUDA_ERROR_OUT_OF_MEMORY.
CUresult allocate(MemKind kind, int device, std::size_t bytes, std::uintptr_t* out, Pool* pool = nullptr);
// Frees `address` if it is the start of a live allocation whose kind is in `allowed` (bit mask
// of 1 << MemKind); CUDA_ERROR_INVALID_VALUE otherwise.
CUresult release(std::uintptr_t address, unsigned allowed);

// Under State::mu: capacity accounting of one device.
bool fits(const State& st, int device, std::size_t bytes);
// Under State::mu: a pool allocation of `bytes` would grow the reserve by *delta (false: the
// pool's maxSize does not allow it).
bool pool_growth(const Pool& pool, std::size_t bytes, std::size_t* delta);
Pool* pool_from_handle(const State& st, CUmemoryPool h);  // under State::mu; nullptr if invalid

// Finds the allocation containing [address, address + length); false when none.
bool find_range(std::uintptr_t address, std::size_t length, std::uintptr_t* start, Allocation* out);
// Under State::mu: the live allocation overlapping [address, address + length), or end().
std::map<std::uintptr_t, Allocation>::iterator find_overlap(State& st, std::uintptr_t address, std::size_t length);

std::size_t page_size();
// n rounded up to a multiple of m (> 0); false when that overflows.
inline bool round_up(std::size_t n, std::size_t m, std::size_t* out) {
  const std::size_t r = n % m;
  if (r == 0) {
    *out = n;
    return true;
  }
  if (n > SIZE_MAX - (m - r)) return false;
  *out = n + (m - r);
  return true;
}

// Stream capture and graph memory (graphs.cpp, graph_exec.cpp). The graph a stream is capturing
// into, or nullptr (created streams only: the NULL, legacy and per-thread streams are never
// captured here).
struct Graph;
Graph* capturing_graph(CUstream s);
// Adds a graph memory node of `bytes` on `device` to g; *out = its address.
CUresult graph_alloc(Graph* g, int device, std::size_t bytes, std::uintptr_t* out);
// Adds a free node of `address` to g: the address must be a graph node's or a live allocation of a
// kind that stream-ordered frees take.
CUresult graph_free(Graph* g, std::uintptr_t address);
// cuMemFree*/cuMemFreeAsync* of a graph node's address (outside any capture): the node's memory
// goes back to the device's graph pool. CUDA_ERROR_INVALID_VALUE when it is not allocated now.
CUresult free_graph_node(std::uintptr_t address);
void forget_capture(CUstream s);  // the stream is being destroyed: its capture (if any) ends
// A call that a global-mode capture does not allow was made on the capturing stream s: the capture
// is invalidated and cuStreamEndCapture fails with CUDA_ERROR_STREAM_CAPTURE_INVALIDATED. Modelled
// for cuStreamGetDevice (seen on the H200, driver 580: asked about a stream in a global-mode
// capture, it made cudaStreamEndCapture fail).
void unsafe_call_on(CUstream s);

// Traces "<call> -> <result>" when tracing is on; returns r.
CUresult traced(CUresult r, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

}  // namespace standin_driver
