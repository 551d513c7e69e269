// Numbers to and from text for Cast to/from tensor(string).
//
// Formatting follows numpy's str() of a scalar, which is what the ONNX reference produces: the
// shortest digits that read back to the same value in the source precision; positional notation
// for 1e-4 <= |x| < 1e16 with at least one fractional digit ("1.0", "0.47892547"), scientific
// otherwise ("1e-07", "1.5e+16"); "nan", "inf", "-inf"; booleans as "True"/"False".
// Parsing accepts plain and scientific notation and, case-insensitively, "INF", "+INF", "-INF",
// "INFINITY" and "NaN".
#pragma once

#include <cstdint>
#include <string>

#include "include/onnxflow/status.h"

namespace onnxflow {

// The precision whose round trip decides how many digits FormatFloat writes.
enum class FloatPrecision { kHalf, kBFloat16, kFloat, kDouble };

std::string FormatFloat(double value, FloatPrecision precision);
inline std::string FormatBool(bool value) { return value ? "True" : "False"; }

// Parsing returns false when the text is not a number (leading/trailing spaces are allowed).
bool ParseDouble(const std::string& text, double* value);
bool ParseFloat(const std::string& text, float* value);
// Integers: an integer literal, or else a floating-point literal truncated toward zero.
bool ParseInt64(const std::string& text, int64_t* value);
bool ParseUInt64(const std::string& text, uint64_t* value);
// "true"/"false" (any case), else a number compared with zero.
bool ParseBool(const std::string& text, bool* value);

}  // namespace onnxflow
