// A complex FFT of any length, in double precision:
//   - powers of two: iterative radix-2 (decimation in time);
//   - short other lengths (<= 64): the direct O(n^2) sum over a table of roots of unity;
//   - longer other lengths: Bluestein's chirp-z algorithm on a power-of-two convolution.
// A plan is built once per length and is immutable, so one plan serves many threads; each caller
// brings its own scratch vector.
#pragma once

#include <complex>
#include <cstdint>
#include <vector>

namespace onnxflow {
namespace signal {

using Complex = std::complex<double>;

class FftPlan {
 public:
  explicit FftPlan(int64_t n);

  int64_t size() const { return n_; }

  // In place: x[k] <- sum_j x[j] * exp(-+2 pi i j k / n), with the + sign when `inverse`.
  // No 1/n factor either way. `scratch` is resized as needed.
  void Transform(Complex* x, bool inverse, std::vector<Complex>* scratch) const;

 private:
  enum class Kind { kTrivial, kRadix2, kDirect, kBluestein };

  // The forward radix-2 transform of length `twiddles.size() * 2`.
  static void Radix2(Complex* x, const std::vector<Complex>& twiddles, const std::vector<int64_t>& bit_reverse);
  void Forward(Complex* x, std::vector<Complex>* scratch) const;

  int64_t n_;
  Kind kind_ = Kind::kTrivial;
  std::vector<Complex> twiddles_;       // radix-2 (of n, or of the Bluestein convolution length)
  std::vector<int64_t> bit_reverse_;    // radix-2 input permutation
  std::vector<Complex> roots_;          // direct: exp(-2 pi i k / n)
  std::vector<Complex> chirp_;          // Bluestein: exp(-pi i k^2 / n)
  std::vector<Complex> chirp_spectrum_; // Bluestein: FFT of the conjugate chirp filter
};

// A plan of length n holds up to about 130 * n bytes of tables (Bluestein); kernels refuse longer
// transforms than this so that a dft_length from the data cannot exhaust memory.
inline constexpr int64_t kMaxFftLength = int64_t{1} << 26;

// The plain O(n^2) transform, for tests.
std::vector<Complex> NaiveDft(const std::vector<Complex>& x, bool inverse);

}  // namespace signal
}  // namespace onnxflow
