#include "ops/cast/string_convert.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "ops/cast/small_float.h"
#include "ops/framework/numeric.h"

namespace onnxflow {
namespace {

// True when `text` read back at `precision` gives `value` again.
bool RoundTrips(const char* text, double value, FloatPrecision precision) {
  switch (precision) {
    case FloatPrecision::kDouble:
      return std::strtod(text, nullptr) == value;
    case FloatPrecision::kFloat:
      return std::strtof(text, nullptr) == static_cast<float>(value);
    case FloatPrecision::kHalf:
      return HalfToFloat(DoubleToHalf(std::strtod(text, nullptr))) == static_cast<float>(value);
    case FloatPrecision::kBFloat16:
      return BFloat16ToFloat(FloatToBFloat16(std::strtof(text, nullptr))) == static_cast<float>(value);
  }
  return false;
}

std::string Trim(const std::string& text) {
  size_t b = 0, e = text.size();
  while (b < e && std::isspace(static_cast<unsigned char>(text[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(text[e - 1]))) --e;
  return text.substr(b, e - b);
}

}  // namespace

std::string FormatFloat(double value, FloatPrecision precision) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  if (value == 0) return std::signbit(value) ? "-0.0" : "0.0";

  // Shortest scientific form that round-trips: "d.ddde+XX".
  char buf[64];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof(buf), "%.*e", digits - 1, value);
    if (RoundTrips(buf, value, precision)) break;
  }
  std::string s(buf);
  const bool negative = s[0] == '-';
  if (negative) s.erase(0, 1);
  const size_t e_pos = s.find('e');
  const int exponent = std::atoi(s.c_str() + e_pos + 1);
  std::string mantissa_digits;
  for (size_t i = 0; i < e_pos; ++i) {
    if (s[i] != '.') mantissa_digits += s[i];
  }
  while (mantissa_digits.size() > 1 && mantissa_digits.back() == '0') mantissa_digits.pop_back();

  std::string out = negative ? "-" : "";
  // numpy decides on the value itself: float32(0.0001) = 9.99999975e-05 prints as "1e-04".
  const double magnitude = std::fabs(value);
  if (magnitude >= 1e-4 && magnitude < 1e16) {
    if (exponent >= 0) {
      std::string int_part = mantissa_digits.substr(0, std::min<size_t>(mantissa_digits.size(), exponent + 1));
      while (static_cast<int>(int_part.size()) < exponent + 1) int_part += '0';
      std::string frac_part =
          static_cast<int>(mantissa_digits.size()) > exponent + 1 ? mantissa_digits.substr(exponent + 1) : "0";
      out += int_part + "." + frac_part;
    } else {
      out += "0." + std::string(-exponent - 1, '0') + mantissa_digits;
    }
  } else {
    out += mantissa_digits.substr(0, 1);
    if (mantissa_digits.size() > 1) out += "." + mantissa_digits.substr(1);
    char exp_buf[16];
    std::snprintf(exp_buf, sizeof(exp_buf), "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
    out += exp_buf;
  }
  return out;
}

bool ParseDouble(const std::string& text, double* value) {
  const std::string t = Trim(text);
  if (t.empty()) return false;
  char* end = nullptr;
  *value = std::strtod(t.c_str(), &end);  // handles inf, +inf, infinity, nan in any case
  return end == t.c_str() + t.size();
}

bool ParseFloat(const std::string& text, float* value) {
  const std::string t = Trim(text);
  if (t.empty()) return false;
  char* end = nullptr;
  *value = std::strtof(t.c_str(), &end);
  return end == t.c_str() + t.size();
}

bool ParseInt64(const std::string& text, int64_t* value) {
  const std::string t = Trim(text);
  if (t.empty()) return false;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(t.c_str(), &end, 10);
  if (end == t.c_str() + t.size() && errno == 0) {
    *value = v;
    return true;
  }
  double d = 0;
  if (!ParseDouble(t, &d) || std::isnan(d)) return false;
  if (d >= 9.2233720368547758e18) *value = INT64_MAX;
  else if (d <= -9.2233720368547758e18) *value = INT64_MIN;
  else *value = static_cast<int64_t>(d);
  return true;
}

bool ParseUInt64(const std::string& text, uint64_t* value) {
  const std::string t = Trim(text);
  if (t.empty()) return false;
  if (t[0] != '-') {
    char* end = nullptr;
    errno = 0;
    const unsigned long long v = std::strtoull(t.c_str(), &end, 10);
    if (end == t.c_str() + t.size() && errno == 0) {
      *value = v;
      return true;
    }
  }
  int64_t signed_value = 0;
  if (ParseInt64(t, &signed_value)) {
    *value = static_cast<uint64_t>(signed_value);  // negative values wrap, like other int casts
    return true;
  }
  return false;
}

bool ParseBool(const std::string& text, bool* value) {
  std::string t = Trim(text);
  for (char& c : t) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (t == "true") { *value = true; return true; }
  if (t == "false") { *value = false; return true; }
  double d = 0;
  if (!ParseDouble(t, &d)) return false;
  *value = d != 0;
  return true;
}

}  // namespace onnxflow
