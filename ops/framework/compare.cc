#include "ops/framework/compare.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <type_traits>

#include "ops/framework/numeric.h"
#include "ops/framework/shape.h"

namespace onnxflow {
namespace {

// The element as a double, for the types compared with a tolerance.
double Approximate(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DataType::kFloat: case DataType::kComplex64: return t.data<float>()[i];
    case DataType::kDouble: case DataType::kComplex128: return t.data<double>()[i];
    case DataType::kFloat16: return HalfToFloat(t.data<Float16>()[i].bits);
    case DataType::kBFloat16: return BFloat16ToFloat(t.data<BFloat16>()[i].bits);
    default: return 0;  // not reached: see IsApproximate
  }
}

bool IsApproximate(DataType t) {
  return t == DataType::kFloat || t == DataType::kDouble || t == DataType::kFloat16 || t == DataType::kBFloat16 ||
         t == DataType::kComplex64 || t == DataType::kComplex128;
}

// Exact comparison in the element's own type; prints values as integers, and keeps the largest
// integer difference in max_abs_error (exact in long double) so that a report never says 0.
template <typename T>
bool FirstExactDifference(const Tensor& e, const Tensor& a, std::string* why, double* max_abs_error) {
  const T* x = e.data<T>();
  const T* y = a.data<T>();
  bool found = false;
  for (int64_t i = 0; i < e.size(); ++i) {
    if (x[i] == y[i]) continue;
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      const long double err = std::fabs(static_cast<long double>(x[i]) - static_cast<long double>(y[i]));
      *max_abs_error = std::max(*max_abs_error, static_cast<double>(err));
    }
    if (found) continue;
    found = true;
    std::ostringstream s;
    if constexpr (std::is_integral_v<T>) {
      using Wide = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;
      s << "element " << i << " is " << static_cast<Wide>(y[i]) << ", expected " << static_cast<Wide>(x[i]);
    } else {
      s << "element " << i << " is '" << y[i] << "', expected '" << x[i] << "'";
    }
    *why = s.str();
  }
  return found;
}

// Byte-wise for the formats stored one element per byte that are compared by their bits (float8,
// float4, sub-byte integers).
bool FirstByteDifference(const Tensor& e, const Tensor& a, std::string* why) {
  const uint8_t* x = static_cast<const uint8_t*>(e.raw_data());
  const uint8_t* y = static_cast<const uint8_t*>(a.raw_data());
  const int64_t n = e.size() * static_cast<int64_t>(ElementSize(e.dtype()));
  for (int64_t i = 0; i < n; ++i) {
    if (x[i] == y[i]) continue;
    *why = "byte " + std::to_string(i) + " is " + std::to_string(y[i]) + ", expected " + std::to_string(x[i]);
    return true;
  }
  return false;
}

bool FirstDifferenceExactly(const Tensor& e, const Tensor& a, std::string* why, double* max_err) {
  switch (e.dtype()) {
    case DataType::kBool: return FirstExactDifference<bool>(e, a, why, max_err);
    case DataType::kInt8: return FirstExactDifference<int8_t>(e, a, why, max_err);
    case DataType::kUint8: return FirstExactDifference<uint8_t>(e, a, why, max_err);
    case DataType::kInt16: return FirstExactDifference<int16_t>(e, a, why, max_err);
    case DataType::kUint16: return FirstExactDifference<uint16_t>(e, a, why, max_err);
    case DataType::kInt32: return FirstExactDifference<int32_t>(e, a, why, max_err);
    case DataType::kUint32: return FirstExactDifference<uint32_t>(e, a, why, max_err);
    case DataType::kInt64: return FirstExactDifference<int64_t>(e, a, why, max_err);
    case DataType::kUint64: return FirstExactDifference<uint64_t>(e, a, why, max_err);
    case DataType::kString: return FirstExactDifference<std::string>(e, a, why, max_err);
    default: return FirstByteDifference(e, a, why);
  }
}

}  // namespace

TensorComparison CompareTensors(const Tensor& e, const Tensor& a, double rtol, double atol) {
  TensorComparison c;
  auto fail = [&c](std::string why) {
    c.match = false;
    c.mismatch = std::move(why);
    return c;
  };
  if (e.dtype() != a.dtype()) {
    return fail(std::string("type ") + DataTypeName(a.dtype()) + ", expected " + DataTypeName(e.dtype()));
  }
  if (e.shape() != a.shape()) return fail("shape " + ShapeToString(a.shape()) + ", expected " + ShapeToString(e.shape()));
  if (!IsApproximate(e.dtype())) {
    std::string why;
    if (FirstDifferenceExactly(e, a, &why, &c.max_abs_error)) return fail(why);
    return c;
  }
  const bool complex = e.dtype() == DataType::kComplex64 || e.dtype() == DataType::kComplex128;
  const int64_t n = complex ? 2 * e.size() : e.size();
  for (int64_t i = 0; i < n; ++i) {
    const double x = Approximate(e, i), y = Approximate(a, i);
    bool ok;
    if (std::isnan(x) || std::isnan(y)) {
      ok = std::isnan(x) && std::isnan(y);
    } else if (std::isinf(x) || std::isinf(y)) {
      ok = x == y;  // the same infinity; a finite value never matches one
    } else {
      const double err = std::abs(x - y);
      c.max_abs_error = std::max(c.max_abs_error, err);
      ok = err <= atol + rtol * std::abs(x);
    }
    if (!ok && c.match) {
      std::ostringstream why;
      why << "element " << i << " is " << y << ", expected " << x;
      c.match = false;
      c.mismatch = why.str();
    }
  }
  return c;
}

}  // namespace onnxflow
