// Process-wide state of the stand-in driver: configuration, devices, contexts, streams and the
// map of live allocations (served from host memory).
#include "driver_internal.h"

#include <sys/mman.h>

#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

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
      cfg->device_count = static_cast<int>(value);
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
  return cfg;
}

std::atomic<bool> g_initialized{false};
thread_local Context* tl_current = nullptr;

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

State& state() {
  static State* s = [] {
    auto* st = new State();  // never freed
    const int n = config().device_count;
    st->used.assign(static_cast<std::size_t>(n), 0);
    st->contexts.resize(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) st->contexts[static_cast<std::size_t>(i)] = Context{kContextMagic, i, 0};
    return st;
  }();
  return *s;
}

bool initialized() { return g_initialized.load(std::memory_order_acquire); }
void mark_initialized() { g_initialized.store(true, std::memory_order_release); }

Context* current_context() { return tl_current; }
void set_current_context(Context* ctx) { tl_current = ctx; }

Context* context_from_handle(CUcontext h) {
  if (h == nullptr) return nullptr;
  State& st = state();
  for (Context& c : st.contexts) {
    if (reinterpret_cast<CUcontext>(&c) == h) return &c;
  }
  return nullptr;
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

CUresult allocate(MemKind kind, int device, std::size_t bytes, std::uintptr_t* out) {
  if (bytes == 0) return CUDA_ERROR_INVALID_VALUE;
  const bool counts = kind != MemKind::host_pinned;
  const std::size_t capacity = config().device_bytes;
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mu);
  if (counts) {
    const std::size_t used = st.used[static_cast<std::size_t>(device)];
    if (bytes > capacity || used > capacity - bytes) return CUDA_ERROR_OUT_OF_MEMORY;
  }
  const std::size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  if (rounded < bytes) return CUDA_ERROR_OUT_OF_MEMORY;
  void* mem = nullptr;
  if (kind == MemKind::device_low32) {
    // The legacy 32-bit entry points hand out CUdeviceptr_v1 (unsigned int): map below 2 GiB.
    mem = mmap(nullptr, rounded, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
    if (mem == MAP_FAILED) mem = nullptr;
  } else {
    mem = std::aligned_alloc(kAlignment, rounded);
  }
  if (mem == nullptr) return CUDA_ERROR_OUT_OF_MEMORY;
  const auto address = reinterpret_cast<std::uintptr_t>(mem);
  st.allocations[address] = Allocation{bytes, device, kind};
  if (counts) st.used[static_cast<std::size_t>(device)] += bytes;
  *out = address;
  return CUDA_SUCCESS;
}

CUresult release(std::uintptr_t address, unsigned allowed) {
  State& st = state();
  Allocation a{};
  {
    std::lock_guard<std::mutex> lock(st.mu);
    auto it = st.allocations.find(address);
    if (it == st.allocations.end() || (allowed & kind_bit(it->second.kind)) == 0) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    a = it->second;
    st.allocations.erase(it);
    if (a.kind != MemKind::host_pinned) st.used[static_cast<std::size_t>(a.device)] -= a.size;
  }
  if (a.kind == MemKind::device_low32) {
    munmap(reinterpret_cast<void*>(address), (a.size + kAlignment - 1) / kAlignment * kAlignment);
  } else {
    std::free(reinterpret_cast<void*>(address));
  }
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

}  // namespace standin_driver
