// Process-wide state of the stand-in driver: configuration, devices, contexts, streams and the
// map of live allocations (served from host memory).
#include "driver_internal.h"
#include "../visible_devices.h"

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>

namespace standin_driver {
namespace {

// Parses a plain non-negative decimal integer; false on anything else (sign, suffix, overflow).
bool parse_plain_integer(const char* text, unsigned long long* out) {
  if (text == nullptr || *text == '\0') return false;
  for (const char* p = text; *p != '\0'; ++p) {
    if (*p < '0' || *p > '9') return false;
  }
  errno = 0;
  char* end = nullptr;
  unsigned long long value = std::strtoull(text, &end, 10);
  if (errno != 0 || end == nullptr || *end != '\0') return false;
  *out = value;
  return true;
}

Config* load_config() {
  auto* cfg = new Config();  // never freed
  unsigned long long value = 0;
  if (const char* env = std::getenv("STANDIN_CUDA_DEVICES"); env != nullptr) {
    if (parse_plain_integer(env, &value) && value <= static_cast<unsigned long long>(kMaxDevices)) {
      cfg->physical_count = static_cast<int>(value);
    } else {
      std::fprintf(stderr, "[standin-cuda] ignoring STANDIN_CUDA_DEVICES=%s (want 0..%d)\n", env,
                   kMaxDevices);
    }
  }
  if (const char* env = std::getenv("STANDIN_CUDA_DEVICE_BYTES"); env != nullptr) {
    if (parse_plain_integer(env, &value)) {
      cfg->device_bytes = static_cast<std::size_t>(value);
    } else {
      std::fprintf(stderr, "[standin-cuda] ignoring STANDIN_CUDA_DEVICE_BYTES=%s (want a plain integer)\n",
                   env);
    }
  }
  if (const char* env = std::getenv("STANDIN_CUDA_TRACE"); env != nullptr) {
    cfg->trace = std::strcmp(env, "1") == 0;
  }
  cfg->device_count = standin::visible_devices(cfg->physical_count, cfg->physical, kMaxDevices);
  return cfg;
}

std::atomic<bool> g_initialized{false};
// Trivially destructible, so that calls from exit handlers after thread-local destructors still work.
thread_local Context* tl_stack[kContextStackDepth] = {};
thread_local int tl_depth = 0;

}  // namespace

const Config& config() {
  static const Config* cfg = load_config();
  return *cfg;
}

void trace(const char* fmt, ...) {
  if (!config().trace) return;
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  std::fprintf(stderr, "[standin-cuda] %s\n", line);
}

CUresult traced(CUresult r, const char* fmt, ...) {
  if (!config().trace) return r;
  char call[768];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(call, sizeof call, fmt, ap);
  va_end(ap);
  trace("%s -> %s", call, result_name(r));
  return r;
}

std::size_t page_size() {
  static const std::size_t size = [] {
    const long v = sysconf(_SC_PAGESIZE);
    return v > 0 ? static_cast<std::size_t>(v) : std::size_t{4096};
  }();
  return size;
}

State& state() {
  static State* s = [] {
    auto* st = new State();  // never freed
    const int n = config().device_count;
    st->used.assign(static_cast<std::size_t>(n), 0);
    st->rewind.resize(static_cast<std::size_t>(n));
    st->contexts = std::vector<Context>(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
      Context& c = st->contexts[static_cast<std::size_t>(i)];
      c.magic = kContextMagic;
      c.device = i;
      c.retain_count = 0;
      c.primary = true;
      auto* pool = new Pool{};  // never freed: default pools cannot be destroyed
      pool->magic = kPoolMagic;
      pool->device = i;
      pool->is_default = true;
      pool->props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
      pool->props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
      pool->props.location.id = i;
      st->default_pools.push_back(pool);
      st->pools.insert(pool);
    }
    // Handles of cuMemCreate: 0xcafe000000000000 + 0x100 * n. Not a canonical user-space address,
    // so a handle never equals the address of anything an interposer records.
    st->next_handle = 0xcafe000000000000ULL;
    return st;
  }();
  return *s;
}

bool valid_device(CUdevice dev) { return dev >= 0 && dev < config().device_count; }
int physical_of(CUdevice dev) { return valid_device(dev) ? config().physical[dev] : dev; }

bool initialized() { return g_initialized.load(std::memory_order_acquire); }
void mark_initialized() { g_initialized.store(true, std::memory_order_release); }

Context* current_context() {
  if (tl_depth == 0) return nullptr;
  Context* c = tl_stack[tl_depth - 1];
  return c != nullptr && !c->destroyed.load(std::memory_order_acquire) ? c : nullptr;
}

void set_current_context(Context* ctx) {
  if (ctx == nullptr) {
    if (tl_depth > 0) --tl_depth;
  } else if (tl_depth == 0) {
    tl_stack[tl_depth++] = ctx;
  } else {
    tl_stack[tl_depth - 1] = ctx;
  }
}

bool push_context(Context* ctx) {
  if (tl_depth == kContextStackDepth) return false;
  tl_stack[tl_depth++] = ctx;
  return true;
}

Context* pop_context() {
  if (tl_depth == 0) return nullptr;
  return tl_stack[--tl_depth];
}

void forget_context_on_thread(Context* ctx) {
  int kept = 0;
  for (int i = 0; i < tl_depth; ++i) {
    if (tl_stack[i] != ctx) tl_stack[kept++] = tl_stack[i];
  }
  tl_depth = kept;
}

Context* context_from_handle(CUcontext h) {
  if (h == nullptr) return nullptr;
  State& st = state();
  for (Context& c : st.contexts) {
    if (reinterpret_cast<CUcontext>(&c) == h) return &c;
  }
  std::lock_guard<std::mutex> lock(st.mu);
  auto it = st.created.find(reinterpret_cast<Context*>(h));
  return it == st.created.end() ? nullptr : *it;
}

bool valid_stream(CUstream s) {
  if (s == nullptr || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD) return true;
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mu);
  return st.streams.count(reinterpret_cast<Stream*>(s)) != 0;
}

CUresult stream_device(CUstream s, int* device) {
  if (s == nullptr || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD) {
    Context* ctx = current_context();
    if (ctx == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
    *device = ctx->device;
    return CUDA_SUCCESS;
  }
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mu);
  auto* stream = reinterpret_cast<Stream*>(s);
  if (st.streams.count(stream) == 0) return CUDA_ERROR_INVALID_HANDLE;
  *device = stream->device;
  return CUDA_SUCCESS;
}

bool fits(const State& st, int device, std::size_t bytes) {
  const std::size_t capacity = config().device_bytes;
  const std::size_t used = st.used[static_cast<std::size_t>(device)];
  return bytes <= capacity && used <= capacity - bytes;
}

bool pool_growth(const Pool& pool, std::size_t bytes, std::size_t* delta) {
  if (bytes > SIZE_MAX - pool.used) return false;
  std::size_t reserved = 0;
  if (!round_up(pool.used + bytes, kPoolChunk, &reserved)) return false;
  if (pool.max_size != 0 && reserved > pool.max_size) return false;
  *delta = reserved - pool.reserved;
  return true;
}

Pool* pool_from_handle(const State& st, CUmemoryPool h) {
  auto* pool = reinterpret_cast<Pool*>(h);
  if (h == nullptr || st.pools.count(pool) == 0) return nullptr;
  return pool;
}

namespace {

// How an allocation's memory was obtained (and must be given back).
void* map_memory(MemKind kind, std::size_t bytes) {
  void* mem = nullptr;
  if (shared_mapping(kind, bytes)) {
    int flags = MAP_SHARED | MAP_ANONYMOUS;
    // The legacy 32-bit entry points hand out CUdeviceptr_v1 (unsigned int): map below 2 GiB.
    if (kind == MemKind::device_low32) flags |= MAP_32BIT;
    mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, flags, -1, 0);
    if (mem == MAP_FAILED) mem = nullptr;
  } else {
    std::size_t rounded = 0;
    if (round_up(bytes, kAlignment, &rounded)) mem = std::aligned_alloc(kAlignment, rounded);
  }
  return mem;
}

void unmap_memory(MemKind kind, std::uintptr_t address, std::size_t bytes) {
  if (shared_mapping(kind, bytes)) {
    std::size_t rounded = 0;
    if (round_up(bytes, page_size(), &rounded)) munmap(reinterpret_cast<void*>(address), rounded);
  } else {
    std::free(reinterpret_cast<void*>(address));
  }
}

}  // namespace

namespace {

// Under State::mu: takes the oldest rewound block of (kind, bytes) on device; 0 when none.
std::uintptr_t take_rewound(State& st, int device, MemKind kind, std::size_t bytes) {
  auto& list = st.rewind[static_cast<std::size_t>(device)];
  for (auto it = list.begin(); it != list.end(); ++it) {
    if (it->kind == kind && it->size == bytes) {
      const std::uintptr_t address = it->address;
      list.erase(it);
      return address;
    }
  }
  return 0;
}

// Under State::mu: records a new allocation and charges it.
void record(State& st, std::uintptr_t address, MemKind kind, int device, std::size_t bytes, std::size_t charge,
            bool counts) {
  Allocation a{bytes, device, kind};
  a.serial = st.next_serial++;
  if ((kContextOwnedKinds & kind_bit(kind)) != 0) a.context = current_context();
  st.allocations[address] = a;
  if (counts) st.used[static_cast<std::size_t>(device)] += charge;
}

}  // namespace

CUresult allocate(MemKind kind, int device, std::size_t bytes, std::uintptr_t* out, Pool* pool) {
  if (bytes == 0) return CUDA_ERROR_INVALID_VALUE;
  const bool counts = kind != MemKind::host_pinned;
  if (counts && bytes > config().device_bytes) return CUDA_ERROR_OUT_OF_MEMORY;
  if (pool == nullptr && (kRewindKinds & kind_bit(kind)) != 0) {  // an address a teardown ended, first
    State& st = state();
    std::lock_guard<std::mutex> lock(st.mu);
    if (!st.rewind[static_cast<std::size_t>(device)].empty()) {
      if (counts && !fits(st, device, bytes)) return CUDA_ERROR_OUT_OF_MEMORY;
      if (std::uintptr_t address = take_rewound(st, device, kind, bytes); address != 0) {
        record(st, address, kind, device, bytes, bytes, counts);
        *out = address;
        return CUDA_SUCCESS;
      }
    }
  }
  // The memory is obtained outside the lock (mmap/munmap are slow and would serialise every
  // thread) and given back if the books then say no.
  void* mem = map_memory(kind, bytes);
  if (mem == nullptr) return CUDA_ERROR_OUT_OF_MEMORY;
  const auto address = reinterpret_cast<std::uintptr_t>(mem);
  CUresult r = CUDA_SUCCESS;
  State& st = state();
  {
    std::lock_guard<std::mutex> lock(st.mu);
    std::size_t charge = bytes;
    if (pool != nullptr && st.pools.count(pool) == 0) {
      r = CUDA_ERROR_INVALID_VALUE;  // destroyed (and maybe deleted) meanwhile: checked under the lock
    } else if (pool != nullptr && !pool_growth(*pool, bytes, &charge)) {
      r = CUDA_ERROR_OUT_OF_MEMORY;
    } else {
      if (pool != nullptr) device = pool->device;
      if (counts && !fits(st, device, charge)) r = CUDA_ERROR_OUT_OF_MEMORY;
    }
    if (r == CUDA_SUCCESS) {
      record(st, address, kind, device, bytes, charge, counts);
      Allocation& a = st.allocations[address];
      if (pool != nullptr) {
        a.pool = pool;
        pool->used += bytes;
        pool->reserved += charge;
        ++pool->live;
        if (pool->used > pool->used_high) pool->used_high = pool->used;
        if (pool->reserved > pool->reserved_high) pool->reserved_high = pool->reserved;
      }
    }
  }
  if (r != CUDA_SUCCESS) {
    unmap_memory(kind, address, bytes);
    return r;
  }
  *out = address;
  return CUDA_SUCCESS;
}

CUresult release(std::uintptr_t address, unsigned allowed) {
  // Registered host memory, IPC imports and VMM mappings have their own ways back.
  allowed &= ~(kind_bit(MemKind::host_registered) | kind_bit(MemKind::ipc_import) | kind_bit(MemKind::vmm_mapping));
  State& st = state();
  Allocation a{};
  Pool* dead_pool = nullptr;
  {
    std::lock_guard<std::mutex> lock(st.mu);
    auto it = st.allocations.find(address);
    if (it == st.allocations.end() || (allowed & kind_bit(it->second.kind)) == 0) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    a = it->second;
    st.allocations.erase(it);
    std::size_t uncharge = a.size;
    if (Pool* pool = a.pool; pool != nullptr) {
      pool->used -= a.size;
      --pool->live;
      std::size_t reserved = 0;
      round_up(pool->used, kPoolChunk, &reserved);  // cannot overflow: smaller than before
      uncharge = pool->reserved - reserved;
      pool->reserved = reserved;
      if (pool->destroyed && pool->live == 0) dead_pool = pool;
    }
    if (a.kind != MemKind::host_pinned) st.used[static_cast<std::size_t>(a.device)] -= uncharge;
  }
  if (dead_pool != nullptr) {
    dead_pool->magic = 0;
    delete dead_pool;
  }
  unmap_memory(a.kind, address, a.size);
  return CUDA_SUCCESS;
}

bool find_range(std::uintptr_t address, std::size_t length, std::uintptr_t* start, Allocation* out) {
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mu);
  auto it = st.allocations.upper_bound(address);
  if (it == st.allocations.begin()) return false;
  --it;
  const std::uintptr_t base = it->first;
  const std::size_t size = it->second.size;
  if (address - base >= size) return false;
  if (length > size - (address - base)) return false;
  *start = base;
  *out = it->second;
  return true;
}

std::map<std::uintptr_t, Allocation>::iterator find_overlap(State& st, std::uintptr_t address, std::size_t length) {
  auto it = st.allocations.upper_bound(address);
  if (it != st.allocations.begin()) {
    auto prev = std::prev(it);
    if (address - prev->first < prev->second.size) return prev;
  }
  if (it != st.allocations.end() && it->first - address < length) return it;
  return st.allocations.end();
}

}  // namespace standin_driver
