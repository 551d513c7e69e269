// com.microsoft WordConvEmbedding (version 1): a character-CNN word embedding. Sequence int32
// [words, chars] holds character ids (a word's length is its count of positive ids, 0 when its
// first id is not positive); W float [filters, 1, width, char_dim] is the convolution, B [filters]
// its bias, C float [vocabulary, char_dim] the character table. Y float [words, filters]: per
// word, the max over its windows of tanh(conv(embedded chars) + B).
//
// As ONNX Runtime 1.30's CPU kernel: a word of length L > 0 embeds its first max(L, width) ids
// (whatever they are: a 0 or padding id inside that prefix is looked up too) and has
// max(L, width) - width + 1 windows; the max starts from -1e12. A word of length 0 is skipped; ONNX
// Runtime leaves its row unwritten, here it is 0. Where ONNX Runtime would read out of bounds, the
// run is refused instead: an id outside C's rows among the ones looked up, a width longer than the
// words, a W with other than 1 input channel (it reads W as [filters, width * char_dim]).
// The attributes embedding_size, conv_window_size and char_embedding_size, when set, must match W
// and C. The convolution of all words' windows is one product on the float GEMM.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "ops/framework/domains.h"
#include "ops/framework/parallel.h"
#include "ops/framework/shape.h"
#include "ops/math/gemm.h"
#include "ops/ms_misc/register.h"

namespace onnxflow {
namespace {

class WordConvEmbeddingKernel final : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    auto k = std::make_unique<WordConvEmbeddingKernel>();
    k->embedding_size_ = info.GetInt("embedding_size", -1);
    k->conv_window_size_ = info.GetInt("conv_window_size", -1);
    k->char_embedding_size_ = info.GetInt("char_embedding_size", -1);
    if (info.input_count() != 4) {
      return InvalidArgument("WordConvEmbedding: takes 4 inputs (Sequence, W, B, C), got " +
                             std::to_string(info.input_count()));
    }
    for (int i = 0; i < 4; ++i) {
      const DataType t = info.input_type(i), want = i == 0 ? DataType::kInt32 : DataType::kFloat;
      if (t != DataType::kUndefined && t != want) {
        return InvalidArgument(std::string("WordConvEmbedding: input '") + kInputNames[i] + "' must be " +
                               DataTypeName(want) + ", got " + DataTypeName(t));
      }
    }
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* in[4];
    for (int i = 0; i < 4; ++i) {
      ONNXFLOW_ASSIGN_OR_RETURN(in[i], ctx.RequireTensor(i));
      const DataType want = i == 0 ? DataType::kInt32 : DataType::kFloat;
      if (in[i]->dtype() != want) {
        return InvalidArgument(std::string("WordConvEmbedding: input '") + kInputNames[i] + "' must be " +
                               DataTypeName(want) + ", got " + DataTypeName(in[i]->dtype()));
      }
    }
    const Tensor &seq = *in[0], &w = *in[1], &b = *in[2], &table = *in[3];
    ONNXFLOW_RETURN_IF_ERROR(CheckShapes(seq, w, b, table));
    const int64_t words = seq.dim(0), word_len = seq.dim(1), filters = w.dim(0), width = w.dim(2);
    const int64_t char_dim = table.dim(1), vocabulary = table.dim(0), kdim = width * char_dim;
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.Allocate(0, DataType::kFloat, {words, filters}));
    if (y->size() == 0) return Status::Ok();

    // Each word's length and its windows' first row in the unfolded matrix.
    const int32_t* ids = seq.data<int32_t>();
    std::vector<int64_t> length(static_cast<size_t>(words)), first_row(static_cast<size_t>(words) + 1, 0);
    for (int64_t t = 0; t < words; ++t) {
      const int32_t* word = ids + t * word_len;
      int64_t n = 0;
      if (word[0] > 0) n = std::count_if(word, word + word_len, [](int32_t v) { return v > 0; });
      length[t] = n;
      const int64_t looked_up = std::max(n, width);
      for (int64_t c = 0; n > 0 && c < looked_up; ++c) {
        if (word[c] < 0 || word[c] >= vocabulary) {
          return OutOfRange("WordConvEmbedding: input 'Sequence' has id " + std::to_string(word[c]) + " at [" +
                            std::to_string(t) + ", " + std::to_string(c) + "], outside the " +
                            std::to_string(vocabulary) + " rows of input 'C'");
        }
      }
      first_row[t + 1] = first_row[t] + (n > 0 ? looked_up - width + 1 : 0);
    }
    const int64_t rows = first_row[words];
    if (rows == 0) return Status::Ok();
    ONNXFLOW_RETURN_IF_ERROR(ctx.CheckScratch({rows, kdim}, sizeof(float), "WordConvEmbedding: the unfolded windows"));
    ONNXFLOW_RETURN_IF_ERROR(ctx.CheckScratch({rows, filters}, sizeof(float), "WordConvEmbedding: the convolution"));

    // Window r of word t: the embeddings of its `width` chars side by side, [rows, width * char_dim].
    Tensor unfolded = Tensor::Uninitialized(DataType::kFloat, {rows, kdim});
    float* u = unfolded.mutable_data<float>();
    const float* emb = table.data<float>();
    for (int64_t t = 0; t < words; ++t) {
      for (int64_t r = first_row[t]; r < first_row[t + 1]; ++r) {
        const int32_t* chars = ids + t * word_len + (r - first_row[t]);
        for (int64_t c = 0; c < width; ++c) {
          std::copy(emb + chars[c] * char_dim, emb + (chars[c] + 1) * char_dim, u + r * kdim + c * char_dim);
        }
      }
    }
    // conv [rows, filters] = unfolded x W^T + B on the GEMM (W read as [filters, width * char_dim]).
    Tensor conv = Tensor::Uninitialized(DataType::kFloat, {rows, filters});
    float* cv = conv.mutable_data<float>();
    GemmEpilogue epilogue;
    epilogue.col_bias = b.data<float>();
    Sgemm(rows, filters, kdim, GemmInputA{nullptr, u, kdim, false, 1.0f},
          GemmInputB{nullptr, w.data<float>(), kdim, true}, cv, filters, epilogue, ctx.threads());
    float* out = y->mutable_data<float>();
    ParallelFor(ctx, words, (rows / std::max<int64_t>(words, 1) + 1) * filters * 8, [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) {
        if (length[t] == 0) continue;
        float* yr = out + t * filters;
        std::fill(yr, yr + filters, -1e12f);
        for (int64_t r = first_row[t]; r < first_row[t + 1]; ++r) {
          for (int64_t f = 0; f < filters; ++f) {
            const float a = std::tanh(cv[r * filters + f]);
            yr[f] = a < yr[f] ? yr[f] : a;  // std::max(a, y): a NaN activation wins, as there
          }
        }
      }
    });
    return Status::Ok();
  }

 private:
  static constexpr const char* kInputNames[] = {"Sequence", "W", "B", "C"};

  Status CheckShapes(const Tensor& seq, const Tensor& w, const Tensor& b, const Tensor& table) const {
    if (seq.rank() != 2) {
      return InvalidArgument("WordConvEmbedding: input 'Sequence' must be [words, chars], got " +
                             ShapeToString(seq.shape()));
    }
    if (w.rank() != 4 || w.dim(1) != 1) {
      return InvalidArgument("WordConvEmbedding: input 'W' must be [filters, 1, width, char_dim], got " +
                             ShapeToString(w.shape()));
    }
    if (table.rank() != 2) {
      return InvalidArgument("WordConvEmbedding: input 'C' must be [vocabulary, char_dim], got " +
                             ShapeToString(table.shape()));
    }
    if (b.rank() != 1 || b.dim(0) != w.dim(0)) {
      return InvalidArgument("WordConvEmbedding: input 'B' " + ShapeToString(b.shape()) + " must hold one bias per " +
                             "filter of input 'W' " + ShapeToString(w.shape()));
    }
    if (embedding_size_ != -1 && w.dim(0) != embedding_size_) {
      return InvalidArgument("WordConvEmbedding: attribute 'embedding_size' " + std::to_string(embedding_size_) +
                             " does not match the filters of input 'W' " + ShapeToString(w.shape()));
    }
    if (conv_window_size_ != -1 && w.dim(2) != conv_window_size_) {
      return InvalidArgument("WordConvEmbedding: attribute 'conv_window_size' " + std::to_string(conv_window_size_) +
                             " does not match the width of input 'W' " + ShapeToString(w.shape()));
    }
    if (char_embedding_size_ != -1 && table.dim(1) != char_embedding_size_) {
      return InvalidArgument("WordConvEmbedding: attribute 'char_embedding_size' " +
                             std::to_string(char_embedding_size_) + " does not match input 'C' " +
                             ShapeToString(table.shape()));
    }
    if (w.dim(3) != table.dim(1)) {
      return InvalidArgument("WordConvEmbedding: input 'W' " + ShapeToString(w.shape()) + " and input 'C' " +
                             ShapeToString(table.shape()) + " disagree on the character embedding size");
    }
    if (seq.dim(0) > 0 && (w.dim(2) < 1 || w.dim(2) > seq.dim(1))) {
      return InvalidArgument("WordConvEmbedding: the width " + std::to_string(w.dim(2)) +
                             " of input 'W' must be in "
                             "[1, " +
                             std::to_string(seq.dim(1)) + "] (the chars of a word in input 'Sequence')");
    }
    return Status::Ok();
  }

  int64_t embedding_size_ = -1, conv_window_size_ = -1, char_embedding_size_ = -1;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterWordConvEmbedding(KernelRegistry& registry) {
  return registry.Register(kMsDomain, "WordConvEmbedding", 1, kOpenEnded, Make<WordConvEmbeddingKernel>());
}

}  // namespace onnxflow
