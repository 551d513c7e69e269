#include "ops/math/qgemm.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include "ops/framework/every_target.h"

namespace onnxflow {
namespace {

class QGemmTarget : public EveryTargetTest {};
ONNXFLOW_INSTANTIATE_EVERY_TARGET(QGemmTarget);

struct Case {
  int64_t m, n, k;
  bool a_signed, b_signed, trans_b;
  bool per_row_za, per_col_zb;
  QOutput kind;
};

// The kernels a run may take on this CPU: all it has, then without AMX, then without VNNI (and AMX).
enum class Kernels { kAll, kNoAmx, kNoVnni };
void UseKernels(Kernels k) {
  QGemmDisableAmxForTest(k != Kernels::kAll);
  QGemmDisableVnniForTest(k == Kernels::kNoVnni);
}

std::string Describe(const Case& c, int64_t target) {
  return std::string(hwy::TargetName(target)) + (QGemmUsesVnni() ? "+vnni" : "") + (QGemmUsesAmx() ? "+amx" : "") +
         " m=" + std::to_string(c.m) +
         " n=" + std::to_string(c.n) + " k=" + std::to_string(c.k) + " a" + (c.a_signed ? "s8" : "u8") + " b" +
         (c.b_signed ? "s8" : "u8") + (c.trans_b ? " transB" : "") + " kind=" + std::to_string(static_cast<int>(c.kind));
}

// Runs one case through the packed GEMM and the reference, with operands one byte off alignment and
// leading dimensions wider than the rows, and expects identical outputs (the float epilogues do the
// same float operations in the same order).
void RunCase(const Case& c, std::mt19937& rng, const std::string& what) {
  const int64_t lda = c.k + 3, ldb = (c.trans_b ? c.k : c.n) + 5;
  const int64_t b_rows = c.trans_b ? c.n : c.k;
  std::vector<uint8_t> a_mem(c.m * lda + 1), b_mem(b_rows * ldb + 1);
  std::uniform_int_distribution<int> byte(0, 255);
  for (auto& x : a_mem) x = static_cast<uint8_t>(byte(rng));
  for (auto& x : b_mem) x = static_cast<uint8_t>(byte(rng));
  const uint8_t* a = a_mem.data() + 1;
  const uint8_t* b = b_mem.data() + 1;
  std::vector<int32_t> za(c.per_row_za ? c.m : 1), zb(c.per_col_zb ? c.n : 1);
  for (auto& z : za) z = c.a_signed ? byte(rng) - 128 : byte(rng);
  for (auto& z : zb) z = c.b_signed ? byte(rng) - 128 : byte(rng);
  QZeroPoints zero{za.data(), static_cast<int64_t>(za.size()), zb.data(), static_cast<int64_t>(zb.size())};
  std::vector<int32_t> bias_row(c.m), bias_col(c.n);
  std::vector<float> scale_row(c.m), scale_col(c.n), fbias(c.n);
  std::uniform_real_distribution<float> unit(0.5f, 1.5f);
  for (auto& x : bias_row) x = byte(rng) - 128;
  for (auto& x : bias_col) x = byte(rng) * 3 - 300;
  for (auto& x : scale_row) x = unit(rng) * 1e-3f;
  for (auto& x : scale_col) x = unit(rng) * 1e-2f;
  for (auto& x : fbias) x = unit(rng) - 1.0f;
  QEpilogue ep;
  ep.kind = c.kind;
  ep.bias_row = bias_row.data();
  ep.bias_col = bias_col.data();
  if (c.kind != QOutput::kInt32) {
    ep.scale_row = scale_row.data();
    ep.scale_col = scale_col.data();
  }
  if (c.kind == QOutput::kFloat) ep.fbias_col = fbias.data();
  ep.out_scale = 0.37f;
  ep.out_zero = c.kind == QOutput::kUint8 ? 131 : -5;
  const size_t size = c.kind == QOutput::kInt32 || c.kind == QOutput::kFloat ? 4 : 1;
  const int64_t ldc = c.n + 2;
  std::vector<uint8_t> got(c.m * ldc * size, 0xAB), want(c.m * ldc * size, 0xAB);
  const QPackedA pa = QPackA(a, c.a_signed, lda, c.m, c.k);
  const QPackedB pb = QPackB(b, c.b_signed, ldb, c.trans_b, c.k, c.n, 2);
  QGemm(pa, pb, zero, ep, got.data(), ldc, 2);
  QGemmReference(c.m, c.n, c.k, a, c.a_signed, lda, b, c.b_signed, ldb, c.trans_b, zero, ep, want.data(), ldc);
  for (int64_t i = 0; i < c.m; ++i) {
    for (int64_t j = 0; j < ldc; ++j) {
      const size_t at = (i * ldc + j) * size;
      ASSERT_EQ(0, std::memcmp(got.data() + at, want.data() + at, size)) << what << " at (" << i << ", " << j << ")";
    }
  }
}

// One packed B through calls with other zero points (per tensor, per column, none, the first again),
// then repacked with other bytes (QPackBInto): each call's zero-point terms are its own, never the
// kept ones of a call before (QPackedB::zero_terms). And column arrays the caller padded
// (QEpilogue::padded_cols) give what the copied ones give.
TEST_P(QGemmTarget, KeptZeroTermsFollowTheZeroPointsAndTheBytes) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> byte(0, 255);
  const int64_t m = 3, n = 70, k = 37;
  auto bytes = [&](int64_t count) {
    std::vector<uint8_t> v(count);
    for (auto& x : v) x = static_cast<uint8_t>(byte(rng));
    return v;
  };
  const std::vector<uint8_t> a = bytes(m * k), b1 = bytes(k * n), b2 = bytes(k * n);
  const QPackedA pa = QPackA(a.data(), false, k, m, k);
  QPackedB pb = QPackB(b1.data(), true, n, false, k, n);
  std::vector<float> scale_col(n), padded(pb.strips() * kQNr, 0.0f);
  for (int64_t j = 0; j < n; ++j) padded[j] = scale_col[j] = 1e-3f * static_cast<float>(j + 1);
  std::vector<int32_t> per_column(n);
  for (auto& z : per_column) z = byte(rng) - 128;
  const int32_t za = 17, zb_a = 5, zb_b = -9;
  struct Call {
    const int32_t* zb;
    int64_t count;
    const std::vector<uint8_t>* b;
    bool pad;
  };
  const std::vector<Call> calls = {{&zb_a, 1, &b1, false},      {&zb_b, 1, &b1, true},  {per_column.data(), n, &b1, false},
                                   {nullptr, 1, &b1, true},     {&zb_a, 1, &b1, false}, {&zb_a, 1, &b2, true},
                                   {per_column.data(), n, &b2, false}};
  const std::vector<uint8_t>* packed_bytes = &b1;
  for (size_t i = 0; i < calls.size(); ++i) {
    const Call& call = calls[i];
    if (call.b != packed_bytes) {
      QPackBInto(call.b->data(), true, n, false, k, n, &pb);
      packed_bytes = call.b;
    }
    const QZeroPoints zero{&za, 1, call.zb, call.count};
    QEpilogue ep;
    ep.kind = QOutput::kFloat;
    ep.scale_col = call.pad ? padded.data() : scale_col.data();
    ep.padded_cols = call.pad;
    std::vector<float> got(m * n), want(m * n);
    QGemm(pa, pb, zero, ep, got.data(), n, 1);
    ep.scale_col = scale_col.data();
    ep.padded_cols = false;
    QGemmReference(m, n, k, a.data(), false, k, call.b->data(), true, n, false, zero, ep, want.data(), n);
    ASSERT_EQ(got, want) << "call " << i;
  }
}

TEST_P(QGemmTarget, MatchesReferenceOnEveryTypePair) {
  std::mt19937 rng(7);
  // n past a multiple of 48 by up to 16, 32 and 48 columns: the VNNI tile computes 1, 2 or 3 vectors.
  // K a multiple of 64 with 16 rows or more takes AMX where the CPU has it: whole 16-row tiles and
  // 32-column runs (one of 16 at the end, runs crossing strips), the rows past them on VNNI.
  const int64_t shapes[][3] = {{1, 1, 1},    {3, 50, 7},    {9, 47, 13},   {17, 97, 64},  {25, 49, 130},
                               {8, 48, 4},   {40, 200, 300}, {5, 80, 33},  {16, 16, 64},  {32, 48, 128},
                               {50, 100, 192}, {35, 130, 640}, {64, 33, 64}, {96, 65, 1024}};
  for (Kernels kernels : {Kernels::kAll, Kernels::kNoAmx, Kernels::kNoVnni}) {
    UseKernels(kernels);
    int idx = 0;
    for (const auto& s : shapes) {
      for (int types = 0; types < 4; ++types) {
        const QOutput kinds[] = {QOutput::kInt32, QOutput::kFloat, QOutput::kUint8, QOutput::kInt8};
        Case c{s[0], s[1], s[2], (types & 1) != 0, (types & 2) != 0, idx % 3 == 1, idx % 2 == 0, idx % 5 == 2,
               kinds[idx % 4]};
        ++idx;
        RunCase(c, rng, Describe(c, GetParam()));
        if (HasFatalFailure()) break;
      }
    }
  }
  UseKernels(Kernels::kAll);
}

// Extreme operands: uint8 255 against int8 -128 in every product, where vpmaddubsw would saturate
// (and, for the 20 x 1024 shape, on AMX tiles where the CPU has them).
TEST_P(QGemmTarget, ExtremeValuesDoNotSaturate) {
  for (const int64_t m : {5, 20}) {
    for (const int64_t k : {1031, 1024}) {
      const int64_t n = 53;
      std::vector<uint8_t> a(m * k, 255);
      std::vector<int8_t> b(k * n, -128);
      for (Kernels kernels : {Kernels::kAll, Kernels::kNoAmx, Kernels::kNoVnni}) {
        UseKernels(kernels);
        const QPackedA pa = QPackA(a.data(), false, k, m, k);
        const QPackedB pb = QPackB(b.data(), true, n, false, k, n);
        std::vector<int32_t> c(m * n);
        QGemm(pa, pb, QZeroPoints{}, QEpilogue{}, c.data(), n, 1);
        for (int32_t v : c) ASSERT_EQ(v, 255 * -128 * k) << "kernels " << static_cast<int>(kernels) << " m=" << m << " k=" << k;
      }
    }
  }
  UseKernels(Kernels::kAll);
}

// Weights like real ones (small, a few pairs of large ones of one sign): on AVX2 and AVX-512BW the
// pairs that vpmaddubsw could saturate are bounded at packing and the part taken out is added back
// per tile, so the products stay exact; other kernels read the bytes as they are. Planted pairs sit
// in the first and last k-quads, at odd K, in the last partial strip and in both packings of B.
TEST_P(QGemmTarget, BoundedPairsStayExact) {
  std::mt19937 rng(11);
  std::normal_distribution<float> weight(0.0f, 12.0f);
  std::uniform_int_distribution<int> byte(0, 255);
  const int64_t m = 13, k = 301, n = 101;
  // (row, column, first byte, second byte) in B's signed domain; rows 4q and 4q + 1, or 4q + 2 and
  // 4q + 3, form a pair.
  const int planted[][4] = {{0, 0, 127, 127},    {2, 5, -128, -128},   {4, 47, 100, 60},  {6, 48, -1, -128},
                            {296, 100, 70, 70}, {298, 99, -90, -90}, {120, 60, 127, 2}, {122, 61, -128, -1}};
  for (Kernels kernels : {Kernels::kAll, Kernels::kNoVnni}) {
    UseKernels(kernels);
    const bool bounds = GetParam() == HWY_AVX2 || (GetParam() == HWY_AVX3 && !QGemmUsesVnni());
    for (const bool trans : {false, true}) {
      for (const bool b_signed : {true, false}) {
        std::vector<uint8_t> a(m * k), b(k * n);
        for (auto& x : a) x = static_cast<uint8_t>(byte(rng));
        for (int64_t i = 0; i < m * k; i += 7) a[i] = 255;
        for (auto& x : b) {
          const int v = std::clamp(static_cast<int>(std::lround(weight(rng))), -40, 40);
          x = static_cast<uint8_t>(b_signed ? v : v + 128);
        }
        for (const auto& p : planted) {
          for (int e = 0; e < 2; ++e) {
            const int64_t row = p[0] + e, col = p[1];
            b[trans ? col * k + row : row * n + col] = static_cast<uint8_t>(b_signed ? p[2 + e] : p[2 + e] + 128);
          }
        }
        const QPackedA pa = QPackA(a.data(), false, k, m, k);
        const QPackedB pb = QPackB(b.data(), b_signed, trans ? k : n, trans, k, n, 2);
        EXPECT_EQ(pb.pairs_bounded, bounds);
        EXPECT_EQ(pb.fixes.size(), bounds ? std::size(planted) : 0u);
        const int32_t zb = b_signed ? 0 : 128;
        const QZeroPoints zero{nullptr, 1, &zb, 1};
        for (const QOutput kind : {QOutput::kInt32, QOutput::kFloat}) {
          QEpilogue ep;
          ep.kind = kind;
          std::vector<int32_t> got(m * n), want(m * n);  // float outputs compared as their bits
          QGemm(pa, pb, zero, ep, got.data(), n, 2);
          QGemmReference(m, n, k, a.data(), false, k, b.data(), b_signed, trans ? k : n, trans, zero, ep, want.data(),
                         n);
          ASSERT_EQ(got, want) << "trans=" << trans << " b_signed=" << b_signed << " kind=" << static_cast<int>(kind)
                               << " vnni=" << QGemmUsesVnni();
        }
      }
    }
  }
  UseKernels(Kernels::kAll);
}

}  // namespace
}  // namespace onnxflow
