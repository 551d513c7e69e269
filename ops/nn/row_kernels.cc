// Dynamic dispatch of the row kernels: the bodies are in row_kernels-inl.h, compiled here once
// per CPU target; HWY_DYNAMIC_DISPATCH picks the best one the machine supports.
#include "ops/nn/row_kernels.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/nn/row_kernels.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "ops/nn/row_kernels-inl.h"

#if HWY_ONCE
namespace onnxflow {

HWY_EXPORT(RowMaxImpl);
HWY_EXPORT(RowExtremeImpl);
HWY_EXPORT(RowFindImpl);
HWY_EXPORT(ExpShiftSumImpl);
HWY_EXPORT(AffineRowImpl);
HWY_EXPORT(RowSumImpl);
HWY_EXPORT(RowSumWideImpl);
HWY_EXPORT(RowSumSquaredDiffImpl);
HWY_EXPORT(NormalizeRowImpl);
HWY_EXPORT(MaxIntoImpl);
HWY_EXPORT(ExpSubAccumulateImpl);
HWY_EXPORT(DivideIntoImpl);
HWY_EXPORT(SubtractLogIntoImpl);
HWY_EXPORT(AddSquaresImpl);
HWY_EXPORT(ScaleByPowerImpl);

float RowMax(const float* x, int64_t n) { return HWY_DYNAMIC_DISPATCH(RowMaxImpl)(x, n); }
float RowExtreme(const float* x, int64_t n, bool max) { return HWY_DYNAMIC_DISPATCH(RowExtremeImpl)(x, n, max); }
int64_t RowFind(const float* x, int64_t n, float v, bool last) {
  return HWY_DYNAMIC_DISPATCH(RowFindImpl)(x, n, v, last);
}
float ExpShiftSum(const float* x, float shift, float* y, int64_t n, float scale) {
  return HWY_DYNAMIC_DISPATCH(ExpShiftSumImpl)(x, scale, shift, y, n);
}
void AffineRow(const float* x, float a, float b, float* y, int64_t n) {
  HWY_DYNAMIC_DISPATCH(AffineRowImpl)(x, a, b, y, n);
}
double RowSum(const float* x, int64_t n) { return HWY_DYNAMIC_DISPATCH(RowSumImpl)(x, n); }
double RowSumWide(const float* x, int64_t n, bool squares) {
  return HWY_DYNAMIC_DISPATCH(RowSumWideImpl)(x, n, squares);
}
double RowSumSquaredDiff(const float* x, float c, int64_t n) {
  return HWY_DYNAMIC_DISPATCH(RowSumSquaredDiffImpl)(x, c, n);
}
void NormalizeRow(const float* x, float mean, float inv_std, const float* scale, const float* bias, float* y,
                  int64_t n) {
  HWY_DYNAMIC_DISPATCH(NormalizeRowImpl)(x, mean, inv_std, scale, bias, y, n);
}

void MaxInto(const float* x, float* m, int64_t n) { HWY_DYNAMIC_DISPATCH(MaxIntoImpl)(x, m, n); }
void ExpSubAccumulate(const float* x, const float* m, float* y, float* s, int64_t n) {
  HWY_DYNAMIC_DISPATCH(ExpSubAccumulateImpl)(x, m, y, s, n);
}
void DivideInto(float* y, const float* s, int64_t n) { HWY_DYNAMIC_DISPATCH(DivideIntoImpl)(y, s, n); }
void SubtractLogInto(const float* x, const float* m, const float* s, float* y, int64_t n) {
  HWY_DYNAMIC_DISPATCH(SubtractLogIntoImpl)(x, m, s, y, n);
}
void AddSquares(const float* x, float* acc, int64_t n) { HWY_DYNAMIC_DISPATCH(AddSquaresImpl)(x, acc, n); }
void ScaleByPower(const float* x, const float* s, float bias, float coef, float exponent, float* y, int64_t n) {
  HWY_DYNAMIC_DISPATCH(ScaleByPowerImpl)(x, s, bias, coef, exponent, y, n);
}

}  // namespace onnxflow
#endif  // HWY_ONCE
