// RegexFullMatch-20: true where a string matches the RE2 `pattern` in full.
//
// The spec defines the pattern as RE2 syntax, so the pattern goes to RE2 itself (libre2): every
// RE2 construct means what RE2 says (\p{L} and the other Unicode classes, (?i) folding beyond
// ASCII, \Q..\E, named groups), what RE2 refuses (back-references, look-around) is refused at
// load, and matching is linear in the input by RE2's design (no backtracking, no recursion), so a
// hostile pattern or a long input string can neither take exponential time nor overflow the
// stack. The compiled program's memory is capped (kMaxProgramBytes).
#include <memory>
#include <string>

#include <re2/re2.h>

#include "ops/framework/parallel.h"
#include "ops/text/string_ops.h"

namespace onnxflow {
namespace {

// RE2 refuses a pattern whose compiled program would need more: ((a{1000}){1000}){1000} is
// refused at load rather than allocating gigabytes.
constexpr int64_t kMaxProgramBytes = int64_t{8} << 20;

class RegexFullMatch final : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    if (!info.has_attribute("pattern")) return InvalidArgument("attribute 'pattern' is required");
    const std::string pattern = info.GetString("pattern", "");
    RE2::Options options;
    options.set_log_errors(false);  // the error goes into the Status, not to stderr
    options.set_max_mem(kMaxProgramBytes);
    auto regex = std::make_shared<RE2>(pattern, options);
    if (!regex->ok()) {
      return InvalidArgument("pattern '" + pattern + "' is not a valid RE2 regular expression: " + regex->error());
    }
    return std::unique_ptr<OpKernel>(new RegexFullMatch(std::move(regex)));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    if (x->dtype() != DataType::kString) {
      return InvalidArgument(std::string("RegexFullMatch needs a string input, got ") + DataTypeName(x->dtype()));
    }
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.Allocate(0, DataType::kBool, x->shape()));
    const std::string* in = x->data<std::string>();
    bool* out = y->mutable_data<bool>();
    // A const RE2 may be shared by threads. Each match costs roughly pattern size * input
    // length; 256 is a guess for typical strings.
    ParallelFor(ctx, x->size(), 256, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) out[i] = RE2::FullMatch(in[i], *regex_);
    });
    return Status::Ok();
  }

 private:
  explicit RegexFullMatch(std::shared_ptr<const RE2> regex) : regex_(std::move(regex)) {}

  std::shared_ptr<const RE2> regex_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterRegexFullMatch(KernelRegistry& registry) {
  return registry.Register(kOnnxDomain, "RegexFullMatch", 20, kOpenEnded, Make<RegexFullMatch>());
}

}  // namespace onnxflow
