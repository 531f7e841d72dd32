// CUDA arrays (cuArrayCreate_v2, cuArray3DCreate_v2, cuMipmappedArrayCreate; need a current
// context): handles to a small object; they count width x max(height,1) x max(depth,1) x element
// bytes, summed over mip levels (levels clamped to what the extent allows; layered/cubemap depth is
// not halved), against the context's device. No padding: an interposer's estimate is exact here.
// A teardown of the creating context ends them; their handles are then handed out again first, for
// arrays of the same device, size and kind (like the rewound addresses of other memory).
#include "cupti_hooks.h"
#include "driver_internal.h"

namespace sd = standin_driver;

namespace standin_driver {

struct ArrayObj {
  std::uint32_t magic;
  int device;
  std::size_t bytes;
  bool mipmapped;
  Context* context;
};
constexpr std::uint32_t kArrayMagic = 0x59415241;  // "ARAY"

namespace {

struct ArrayState {  // guarded by State::mu
  std::set<ArrayObj*> arrays;
  std::vector<ArrayObj*> rewind;  // ended by a teardown, oldest first; never freed
};
ArrayState& as() {
  static ArrayState* s = new ArrayState();  // never freed
  return *s;
}

std::size_t element_bytes(CUarray_format f, unsigned channels) {
  if (channels != 1 && channels != 2 && channels != 4) return 0;
  switch (f) {
    case CU_AD_FORMAT_UNSIGNED_INT8: case CU_AD_FORMAT_SIGNED_INT8: return channels;
    case CU_AD_FORMAT_UNSIGNED_INT16: case CU_AD_FORMAT_SIGNED_INT16: case CU_AD_FORMAT_HALF: return 2 * channels;
    case CU_AD_FORMAT_UNSIGNED_INT32: case CU_AD_FORMAT_SIGNED_INT32: case CU_AD_FORMAT_FLOAT: return 4 * channels;
    default: return 0;
  }
}

std::size_t elements(std::size_t w, std::size_t h, std::size_t d, unsigned levels, unsigned flags) {
  const bool layers = (flags & (CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_CUBEMAP)) != 0;
  h = h ? h : 1;
  d = d ? d : 1;
  std::size_t total = 0;
  for (unsigned level = 0; level < levels; ++level) {
    total += w * h * d;
    if (w == 1 && h == 1 && (layers || d == 1)) break;
    w = w > 1 ? w / 2 : 1;
    h = h > 1 ? h / 2 : 1;
    if (!layers) d = d > 1 ? d / 2 : 1;
  }
  return total;
}

CUresult create_array(void** handle, const CUDA_ARRAY3D_DESCRIPTOR* desc, unsigned levels, bool mipmapped) {
  if (!initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  if (handle == nullptr || desc == nullptr || desc->Width == 0 || levels == 0) return CUDA_ERROR_INVALID_VALUE;
  if ((desc->Flags & ~(CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_CUBEMAP | CUDA_ARRAY3D_SURFACE_LDST |
                       CUDA_ARRAY3D_TEXTURE_GATHER)) != 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  const std::size_t elem = element_bytes(desc->Format, desc->NumChannels);
  if (elem == 0) return CUDA_ERROR_INVALID_VALUE;
  Context* ctx = current_context();
  if (ctx == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  const std::size_t bytes = elements(desc->Width, desc->Height, desc->Depth, levels, desc->Flags) * elem;
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mu);
  if (!fits(st, ctx->device, bytes)) return CUDA_ERROR_OUT_OF_MEMORY;
  ArrayObj* a = nullptr;
  auto& rewind = as().rewind;
  for (auto it = rewind.begin(); it != rewind.end(); ++it) {  // a handle a teardown ended, first
    if ((*it)->device == ctx->device && (*it)->bytes == bytes && (*it)->mipmapped == mipmapped) {
      a = *it;
      rewind.erase(it);
      break;
    }
  }
  if (a == nullptr) a = new ArrayObj{kArrayMagic, ctx->device, bytes, mipmapped, nullptr};
  a->magic = kArrayMagic;
  a->context = ctx;
  as().arrays.insert(a);
  st.used[static_cast<std::size_t>(ctx->device)] += bytes;
  *handle = a;
  return CUDA_SUCCESS;
}

CUresult destroy_array(void* handle, bool mipmapped) {
  if (!initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mu);
  auto* a = static_cast<ArrayObj*>(handle);
  if (handle == nullptr || as().arrays.count(a) == 0 || a->mipmapped != mipmapped) return CUDA_ERROR_INVALID_HANDLE;
  as().arrays.erase(a);
  st.used[static_cast<std::size_t>(a->device)] -= a->bytes;
  a->magic = 0;
  delete a;
  return CUDA_SUCCESS;
}

}  // namespace

std::size_t end_context_arrays(State& st, Context* ctx) {
  std::size_t n = 0;
  for (auto it = as().arrays.begin(); it != as().arrays.end();) {
    ArrayObj* a = *it;
    if (a->context != ctx) {
      ++it;
      continue;
    }
    it = as().arrays.erase(it);
    st.used[static_cast<std::size_t>(a->device)] -= a->bytes;
    a->magic = 0;
    as().rewind.push_back(a);
    ++n;
  }
  return n;
}

}  // namespace standin_driver

using sd::traced;

// ---- arrays ----
STANDIN_CU_API CUresult CUDAAPI cuArrayCreate_v2(CUarray* pHandle, const CUDA_ARRAY_DESCRIPTOR* d) {
  STANDIN_API_CALL(cuArrayCreate_v2, pHandle, d);
  CUresult r = CUDA_ERROR_INVALID_VALUE;
  if (d != nullptr) {
    CUDA_ARRAY3D_DESCRIPTOR d3{d->Width, d->Height, 0, d->Format, d->NumChannels, 0};
    r = sd::create_array(reinterpret_cast<void**>(pHandle), &d3, 1, false);
  } else if (!sd::initialized()) {
    r = CUDA_ERROR_NOT_INITIALIZED;
  }
  return standin_api_call_.done(traced(r, "cuArrayCreate_v2(%zux%zu) array=%p", d ? d->Width : 0, d ? d->Height : 0,
                                       r == CUDA_SUCCESS ? static_cast<void*>(*pHandle) : nullptr));
}

STANDIN_CU_API CUresult CUDAAPI cuArray3DCreate_v2(CUarray* pHandle, const CUDA_ARRAY3D_DESCRIPTOR* d) {
  STANDIN_API_CALL(cuArray3DCreate_v2, pHandle, d);
  CUresult r = sd::create_array(reinterpret_cast<void**>(pHandle), d, 1, false);
  return standin_api_call_.done(traced(r, "cuArray3DCreate_v2(%zux%zux%zu) array=%p", d ? d->Width : 0,
                                       d ? d->Height : 0, d ? d->Depth : 0,
                                       r == CUDA_SUCCESS ? static_cast<void*>(*pHandle) : nullptr));
}

STANDIN_CU_API CUresult CUDAAPI cuMipmappedArrayCreate(CUmipmappedArray* pHandle, const CUDA_ARRAY3D_DESCRIPTOR* d,
                                                       unsigned int numMipmapLevels) {
  STANDIN_API_CALL(cuMipmappedArrayCreate, pHandle, d, numMipmapLevels);
  CUresult r = sd::create_array(reinterpret_cast<void**>(pHandle), d, numMipmapLevels, true);
  return standin_api_call_.done(traced(r, "cuMipmappedArrayCreate(levels=%u) array=%p", numMipmapLevels,
                                       r == CUDA_SUCCESS ? static_cast<void*>(*pHandle) : nullptr));
}

STANDIN_CU_API CUresult CUDAAPI cuArrayDestroy(CUarray hArray) {
  STANDIN_API_CALL(cuArrayDestroy, hArray);
  return standin_api_call_.done(
      traced(sd::destroy_array(hArray, false), "cuArrayDestroy(%p)", static_cast<void*>(hArray)));
}

STANDIN_CU_API CUresult CUDAAPI cuMipmappedArrayDestroy(CUmipmappedArray hMipmappedArray) {
  STANDIN_API_CALL(cuMipmappedArrayDestroy, hMipmappedArray);
  return standin_api_call_.done(traced(sd::destroy_array(hMipmappedArray, true), "cuMipmappedArrayDestroy(%p)",
                                       static_cast<void*>(hMipmappedArray)));
}

