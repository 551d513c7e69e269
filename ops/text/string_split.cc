// StringSplit-20: splits each string on `delimiter` (at most `maxsplit` times), padding the
// substrings with "" to the longest split; the second output counts the substrings.
//
// Follows Python's str.split: with a delimiter, consecutive delimiters delimit empty strings and
// "" splits into [""]; without one (unset or ""), runs of whitespace separate, leading and
// trailing whitespace is dropped and "" splits into [].
#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "ops/text/string_ops.h"

namespace onnxflow {
namespace {

bool IsSpace(char c) {
  // Python's ASCII whitespace: space, \t \n \v \f \r and the separators \x1c-\x1f.
  return c == ' ' || (c >= '\t' && c <= '\r') || (c >= '\x1c' && c <= '\x1f');
}

std::vector<std::string> SplitOnWhitespace(const std::string& s, int64_t maxsplit) {
  std::vector<std::string> parts;
  size_t i = 0;
  const size_t n = s.size();
  for (int64_t splits = 0; splits < maxsplit; ++splits) {
    while (i < n && IsSpace(s[i])) ++i;
    if (i == n) break;
    const size_t start = i;
    while (i < n && !IsSpace(s[i])) ++i;
    parts.push_back(s.substr(start, i - start));
  }
  // maxsplit reached: what is left, without its leading whitespace, is the last part.
  while (i < n && IsSpace(s[i])) ++i;
  if (i < n) parts.push_back(s.substr(i));
  return parts;
}

std::vector<std::string> SplitOnDelimiter(const std::string& s, const std::string& delimiter, int64_t maxsplit) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (int64_t splits = 0; splits < maxsplit; ++splits) {
    const size_t at = s.find(delimiter, start);
    if (at == std::string::npos) break;
    parts.push_back(s.substr(start, at - start));
    start = at + delimiter.size();
  }
  parts.push_back(s.substr(start));
  return parts;
}

class StringSplit final : public OpKernel {
 public:
  explicit StringSplit(const KernelInfo& info)
      : delimiter_(info.GetString("delimiter", "")),
        maxsplit_(info.GetInt("maxsplit", std::numeric_limits<int64_t>::max())) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    if (x->dtype() != DataType::kString) {
      return InvalidArgument(std::string("StringSplit needs a string input, got ") + DataTypeName(x->dtype()));
    }
    // A negative maxsplit means no limit, as in Python.
    const int64_t maxsplit = maxsplit_ < 0 ? std::numeric_limits<int64_t>::max() : maxsplit_;
    const int64_t n = x->size();
    const std::string* in = x->data<std::string>();
    std::vector<std::vector<std::string>> split(static_cast<size_t>(n));
    int64_t longest = 0;
    for (int64_t i = 0; i < n; ++i) {
      split[i] = delimiter_.empty() ? SplitOnWhitespace(in[i], maxsplit) : SplitOnDelimiter(in[i], delimiter_, maxsplit);
      longest = std::max<int64_t>(longest, static_cast<int64_t>(split[i].size()));
    }
    Shape shape = x->shape();
    shape.push_back(longest);
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.Allocate(0, DataType::kString, shape));
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * z, ctx.Allocate(1, DataType::kInt64, x->shape()));
    std::string* out = y->mutable_data<std::string>();
    int64_t* counts = z->mutable_data<int64_t>();
    for (int64_t i = 0; i < n; ++i) {
      counts[i] = static_cast<int64_t>(split[i].size());
      for (size_t k = 0; k < split[i].size(); ++k) out[i * longest + static_cast<int64_t>(k)] = std::move(split[i][k]);
    }
    return Status::Ok();
  }

 private:
  std::string delimiter_;
  int64_t maxsplit_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterStringSplit(KernelRegistry& registry) {
  return registry.Register(kOnnxDomain, "StringSplit", 20, kOpenEnded, Make<StringSplit>());
}

}  // namespace onnxflow
