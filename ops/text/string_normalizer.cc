// StringNormalizer-10: drops stop words from a [C] or [1, C] string tensor, then upper- or
// lower-cases what is left. When every element is dropped the output is a single "" with shape
// [1] (or [1, 1]).
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "ops/text/case_mapping.h"
#include "ops/text/string_ops.h"

namespace onnxflow {
namespace {

enum class CaseChange { kNone, kLower, kUpper };

class StringNormalizer final : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    const std::string action = info.GetString("case_change_action", "NONE");
    CaseChange change;
    if (action == "NONE") change = CaseChange::kNone;
    else if (action == "LOWER") change = CaseChange::kLower;
    else if (action == "UPPER") change = CaseChange::kUpper;
    else return InvalidArgument("case_change_action must be NONE, LOWER or UPPER, got '" + action + "'");
    return std::unique_ptr<OpKernel>(new StringNormalizer(info, change));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    if (x->dtype() != DataType::kString) {
      return InvalidArgument(std::string("StringNormalizer needs a string input, got ") + DataTypeName(x->dtype()));
    }
    const bool row = x->rank() == 2;
    if (!(x->rank() == 1 || (row && x->dim(0) == 1))) {
      return InvalidArgument("StringNormalizer takes a [C] or [1, C] input, got " + ShapeToString(x->shape()));
    }
    const std::string* in = x->data<std::string>();
    std::vector<std::string> kept;
    for (int64_t i = 0; i < x->size(); ++i) {
      if (IsStopword(in[i])) continue;
      switch (change_) {
        case CaseChange::kNone: kept.push_back(in[i]); break;
        case CaseChange::kLower: kept.push_back(mapper_.ToLower(in[i])); break;
        case CaseChange::kUpper: kept.push_back(mapper_.ToUpper(in[i])); break;
      }
    }
    if (kept.empty()) kept.emplace_back();
    const int64_t c = static_cast<int64_t>(kept.size());
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.Allocate(0, DataType::kString, row ? Shape{1, c} : Shape{c}));
    std::string* out = y->mutable_data<std::string>();
    for (int64_t i = 0; i < c; ++i) out[i] = std::move(kept[i]);
    return Status::Ok();
  }

 private:
  StringNormalizer(const KernelInfo& info, CaseChange change)
      : change_(change),
        case_sensitive_(info.GetInt("is_case_sensitive", 0) != 0),
        mapper_(info.GetString("locale", "")) {
    for (const std::string& w : info.GetStrings("stopwords")) {
      stopwords_.insert(case_sensitive_ ? w : mapper_.ToLower(w));
    }
  }

  bool IsStopword(const std::string& s) const {
    if (stopwords_.empty()) return false;
    return stopwords_.count(case_sensitive_ ? s : mapper_.ToLower(s)) != 0;
  }

  CaseChange change_;
  bool case_sensitive_;
  CaseMapper mapper_;
  std::unordered_set<std::string> stopwords_;  // lower-cased unless case-sensitive
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterStringNormalizer(KernelRegistry& registry) {
  return registry.Register(kOnnxDomain, "StringNormalizer", 10, kOpenEnded, Make<StringNormalizer>());
}

}  // namespace onnxflow
