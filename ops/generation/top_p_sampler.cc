#include "ops/generation/top_p_sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

#include "ops/nn/row_kernels.h"

namespace onnxflow::generation {

double Minstd0::Uniform() {
  // generate_canonical<double, 53>: R = max - min + 1 = 2^31 - 2, floor(log2 R) = 30 bits a draw,
  // so (53 + 30 - 1) / 30 = 2 draws, the first the low part.
  constexpr double kRange = 2147483646.0;
  double sum = static_cast<double>(Next() - 1);
  sum += static_cast<double>(Next() - 1) * kRange;
  const double u = sum / (kRange * kRange);
  return u >= 1.0 ? std::nextafter(1.0, 0.0) : u;
}

void FilterTopP(const TopPParams& params, float* row, int vocab, std::vector<float>* probs,
                std::vector<int32_t>* order) {
  // std::sort, as ONNX Runtime sorts: equal scores then come in the order libstdc++ leaves them,
  // the same order for the same row. They matter little: ties are barred tokens (probability 0).
  order->resize(vocab);
  std::iota(order->begin(), order->end(), 0);
  if (params.custom) {
    std::sort(order->begin(), order->end(), [row](int32_t a, int32_t b) { return row[a] > row[b]; });
  } else {
    std::sort(order->begin(), order->end(), [row](int32_t a, int32_t b) { return row[a] < row[b]; });
  }
  probs->resize(vocab);
  float* p = probs->data();
  for (int j = 0; j < vocab; ++j) p[j] = row[(*order)[j]];
  // The softmax of the sorted scores (ONNX Runtime's SoftmaxCPU): exponentials, then times 1 / sum.
  const float max = params.custom ? p[0] : p[vocab - 1];
  const float sum = ExpShiftSum(p, max, p, vocab);
  AffineRow(p, 1.0f / sum, 0.0f, p, vocab);

  const int32_t* idx = order->data();
  if (params.custom) {
    // Running sums from the largest: once past top_p, the next token on is filtered.
    if (vocab >= 2 && p[0] > params.top_p) row[idx[1]] = params.filter_value;
    for (int j = 1; j + 1 < vocab; ++j) {
      p[j] += p[j - 1];
      if (p[j] > params.top_p) row[idx[j + 1]] = params.filter_value;
    }
    return;
  }
  // Running sums from the smallest: the tail holding at most 1 - top_p of the mass is filtered.
  const float limit = 1.0f - params.top_p;
  if (p[0] <= limit) row[idx[0]] = params.filter_value;
  for (int j = 1; j < vocab - params.min_tokens_to_keep; ++j) {
    p[j] += p[j - 1];
    if (p[j] <= limit) row[idx[j]] = params.filter_value;
  }
}

int32_t DrawToken(const float* row, int vocab, double u, std::vector<double>* cdf) {
  float max = std::numeric_limits<float>::lowest();
  for (int j = 0; j < vocab; ++j) {
    if (std::isfinite(row[j])) max = std::max(max, row[j]);
  }
  cdf->resize(vocab);
  double total = 0.0;
  for (int j = 0; j < vocab; ++j) {
    if (std::isfinite(row[j])) total += std::exp(static_cast<double>(row[j]) - static_cast<double>(max));
    (*cdf)[j] = total;
  }
  return static_cast<int32_t>(std::upper_bound(cdf->begin(), cdf->end(), u * total) - cdf->begin());
}

Status TopPChooser::Choose(float* scores, int rows, int vocab, std::vector<int32_t>* tokens) {
  for (int r = 0; r < rows; ++r) {
    float* row = scores + static_cast<size_t>(r) * vocab;
    // A NaN would break the sort's ordering (std::sort may then read outside the row), +inf or a
    // row of -inf the softmax: a decoder that gives them is refused, not sampled.
    bool any = false;
    for (int j = 0; j < vocab; ++j) {
      if (std::isnan(row[j]) || row[j] == std::numeric_limits<float>::infinity()) {
        return InvalidArgument("graph 'decoder' gave row " + std::to_string(r) + " the score " +
                               std::to_string(row[j]) + " at token " + std::to_string(j) +
                               " (after the score rules); cannot sample from it");
      }
      any |= std::isfinite(row[j]);
    }
    if (!any) {
      return InvalidArgument("every token of row " + std::to_string(r) + " is barred (-inf); cannot sample");
    }
    FilterTopP(params_, row, vocab, &probs_, &order_);
  }
  for (int r = 0; r < rows; ++r) {
    const int32_t token = DrawToken(scores + static_cast<size_t>(r) * vocab, vocab, engine_.Uniform(), &cdf_);
    if (token >= vocab) {
      return InvalidArgument("top_p filtered out every token of row " + std::to_string(r) +
                             " (ONNX Runtime would return token " + std::to_string(vocab) + ", past the vocabulary)");
    }
    (*tokens)[r] = token;
  }
  return Status::Ok();
}

}  // namespace onnxflow::generation
