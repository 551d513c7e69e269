// The key-value cache of the decoding ops whose past and present are one buffer of the maximum
// length (SparseAttention, and DecoderMaskedMultiHeadAttention with past_present_share_buffer):
// (batch, heads, max_length, head_size), each step writing its new rows at the entry's current
// length and leaving the rest as it was.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "include/onnxflow/tensor.h"
#include "ops/contrib/attention_core.h"
#include "ops/framework/kernel.h"
#include "ops/math/float_view.h"

namespace onnxflow {
namespace contrib {

// The present for `past` (input `input`) as output `output`. The past itself when the plan lets
// this node write into it (its last reader, its storage held by the run alone: a decoding loop
// that feeds each step's present back, as ops/generation does): the step then writes only its new
// rows. Otherwise a copy of the past, since a tensor someone else still holds (the caller's) is
// never written; ONNX Runtime copies it too when its buffers differ. `avoid` is storage that must
// not be taken (the key's present, should the model pass one tensor as both caches).
inline Result<Tensor*> SharedBufferPresent(KernelContext& ctx, int input, int output, const Tensor& past,
                                           const void* avoid) {
  if (Tensor* reusable = ctx.ReusableInput(input); reusable != nullptr && reusable->raw_data() != avoid) {
    ctx.SetOutput(output, *reusable);
    return reusable;
  }
  ONNXFLOW_ASSIGN_OR_RETURN(Tensor * present, ctx.AllocateUninitialized(output, past.dtype(), past.shape()));
  if (past.nbytes() > 0) std::memcpy(present->mutable_raw_data(), past.raw_data(), past.nbytes());
  return present;
}

// Writes `rows` rows of `width` floats (source row stride `ld`) into `cache` from element `at` on,
// in the cache's type (16-bit caches get the rows rounded, the rest of the buffer untouched).
inline void PutRows(const float* src, int64_t ld, int64_t rows, int64_t width, Tensor* cache, int64_t at) {
  const size_t es = ElementSize(cache->dtype());
  char* dst = static_cast<char*>(cache->mutable_raw_data()) + at * es;
  for (int64_t r = 0; r < rows; ++r) {
    if (cache->dtype() == DataType::kFloat) {
      std::memcpy(dst + r * width * es, src + r * ld, width * sizeof(float));
    } else {
      NarrowFloats(src + r * ld, cache->dtype(), dst + r * width * es, width);
    }
  }
}

// The cache as the attention core reads it: a float cache in place; a 16-bit one widened, only the
// first lens[b] rows of each of entry b's heads (what the step reads), into `store`.
inline HeadView CacheView(const Tensor& cache, const std::vector<int64_t>& lens, FloatScratch& store) {
  const int64_t batch = cache.dim(0), heads = cache.dim(1), max = cache.dim(2), size = cache.dim(3);
  if (cache.dtype() == DataType::kFloat) return {cache.data<float>(), heads * max * size, max * size, size};
  float* out = store.Take(cache.size(), false);
  const size_t es = ElementSize(cache.dtype());
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t h = 0; h < heads; ++h) {
      const int64_t at = (b * heads + h) * max * size;
      WidenHalves(cache.dtype(), static_cast<const char*>(cache.raw_data()) + at * es, out + at, lens[b] * size);
    }
  }
  return {out, heads * max * size, max * size, size};
}

}  // namespace contrib
}  // namespace onnxflow
