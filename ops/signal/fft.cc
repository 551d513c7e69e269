#include "ops/signal/fft.h"

#include <cmath>
#include <utility>

namespace onnxflow {
namespace signal {
namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr int64_t kDirectMax = 64;

bool IsPowerOfTwo(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

// exp(-2 pi i num / den), with num reduced first so large indices keep full precision.
Complex Root(int64_t num, int64_t den) {
  num %= den;
  const double angle = -2.0 * kPi * static_cast<double>(num) / static_cast<double>(den);
  return {std::cos(angle), std::sin(angle)};
}

void MakeRadix2Tables(int64_t n, std::vector<Complex>* twiddles, std::vector<int64_t>* bit_reverse) {
  twiddles->resize(static_cast<size_t>(n / 2));
  for (int64_t k = 0; k < n / 2; ++k) (*twiddles)[k] = Root(k, n);
  bit_reverse->resize(static_cast<size_t>(n));
  int bits = 0;
  while ((int64_t{1} << bits) < n) ++bits;
  for (int64_t i = 0; i < n; ++i) {
    int64_t r = 0;
    for (int b = 0; b < bits; ++b) r |= ((i >> b) & 1) << (bits - 1 - b);
    (*bit_reverse)[i] = r;
  }
}

}  // namespace

FftPlan::FftPlan(int64_t n) : n_(n) {
  if (n <= 1) {
    kind_ = Kind::kTrivial;
  } else if (IsPowerOfTwo(n)) {
    kind_ = Kind::kRadix2;
    MakeRadix2Tables(n, &twiddles_, &bit_reverse_);
  } else if (n <= kDirectMax) {
    kind_ = Kind::kDirect;
    roots_.resize(static_cast<size_t>(n));
    for (int64_t k = 0; k < n; ++k) roots_[k] = Root(k, n);
  } else {
    kind_ = Kind::kBluestein;
    int64_t m = 1;
    while (m < 2 * n - 1) m <<= 1;
    MakeRadix2Tables(m, &twiddles_, &bit_reverse_);
    chirp_.resize(static_cast<size_t>(n));
    for (int64_t k = 0; k < n; ++k) {
      // exp(-pi i k^2 / n) = Root(k^2 mod 2n, 2n); the product stays exact in 128 bits.
      const auto k2 = static_cast<int64_t>((static_cast<unsigned __int128>(k) * static_cast<unsigned __int128>(k)) %
                                           static_cast<unsigned __int128>(2 * n));
      chirp_[k] = Root(k2, 2 * n);
    }
    chirp_spectrum_.assign(static_cast<size_t>(m), Complex(0, 0));
    chirp_spectrum_[0] = std::conj(chirp_[0]);
    for (int64_t k = 1; k < n; ++k) {
      chirp_spectrum_[k] = std::conj(chirp_[k]);
      chirp_spectrum_[m - k] = std::conj(chirp_[k]);
    }
    Radix2(chirp_spectrum_.data(), twiddles_, bit_reverse_);
  }
}

void FftPlan::Radix2(Complex* x, const std::vector<Complex>& twiddles, const std::vector<int64_t>& bit_reverse) {
  const int64_t n = static_cast<int64_t>(bit_reverse.size());
  for (int64_t i = 0; i < n; ++i) {
    const int64_t j = bit_reverse[i];
    if (i < j) std::swap(x[i], x[j]);
  }
  for (int64_t len = 2; len <= n; len <<= 1) {
    const int64_t half = len / 2;
    const int64_t step = n / len;  // twiddle stride for this stage
    for (int64_t start = 0; start < n; start += len) {
      for (int64_t k = 0; k < half; ++k) {
        const Complex t = twiddles[k * step] * x[start + k + half];
        const Complex u = x[start + k];
        x[start + k] = u + t;
        x[start + k + half] = u - t;
      }
    }
  }
}

void FftPlan::Forward(Complex* x, std::vector<Complex>* scratch) const {
  switch (kind_) {
    case Kind::kTrivial:
      return;
    case Kind::kRadix2:
      Radix2(x, twiddles_, bit_reverse_);
      return;
    case Kind::kDirect: {
      scratch->assign(x, x + n_);
      for (int64_t k = 0; k < n_; ++k) {
        Complex acc(0, 0);
        int64_t idx = 0;  // j * k mod n, kept incrementally
        for (int64_t j = 0; j < n_; ++j) {
          acc += (*scratch)[j] * roots_[idx];
          idx += k;
          if (idx >= n_) idx -= n_;
        }
        x[k] = acc;
      }
      return;
    }
    case Kind::kBluestein: {
      const int64_t m = static_cast<int64_t>(chirp_spectrum_.size());
      scratch->assign(static_cast<size_t>(m), Complex(0, 0));
      Complex* a = scratch->data();
      for (int64_t k = 0; k < n_; ++k) a[k] = x[k] * chirp_[k];
      Radix2(a, twiddles_, bit_reverse_);
      for (int64_t k = 0; k < m; ++k) a[k] = std::conj(a[k] * chirp_spectrum_[k]);
      Radix2(a, twiddles_, bit_reverse_);  // inverse via conjugation
      const double inv_m = 1.0 / static_cast<double>(m);
      for (int64_t k = 0; k < n_; ++k) x[k] = chirp_[k] * std::conj(a[k]) * inv_m;
      return;
    }
  }
}

void FftPlan::Transform(Complex* x, bool inverse, std::vector<Complex>* scratch) const {
  if (!inverse) {
    Forward(x, scratch);
    return;
  }
  // The inverse transform is the forward one on the conjugates, conjugated.
  for (int64_t i = 0; i < n_; ++i) x[i] = std::conj(x[i]);
  Forward(x, scratch);
  for (int64_t i = 0; i < n_; ++i) x[i] = std::conj(x[i]);
}

std::vector<Complex> NaiveDft(const std::vector<Complex>& x, bool inverse) {
  const int64_t n = static_cast<int64_t>(x.size());
  std::vector<Complex> y(x.size());
  for (int64_t k = 0; k < n; ++k) {
    Complex acc(0, 0);
    for (int64_t j = 0; j < n; ++j) {
      Complex w = Root((j * k) % n, n);
      if (inverse) w = std::conj(w);
      acc += x[j] * w;
    }
    y[k] = acc;
  }
  return y;
}

}  // namespace signal
}  // namespace onnxflow
