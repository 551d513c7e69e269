// RandomUniform, RandomNormal and their *Like variants (versions 1 and 22; 22 adds bfloat16).
//
// Values follow the ONNX reference: a double draw (numpy's rand / randn), converted to the output
// type, then `* (high - low) + low` (or `* scale + mean`) in the output type's arithmetic. With a
// seed the output equals numpy's RandomState(seed) stream; the spec does not promise any
// particular stream, so other runtimes differ.
#include <memory>
#include <optional>
#include <string>

#include "ops/cast/convert.h"
#include "ops/framework/dispatch.h"
#include "ops/framework/numeric.h"
#include "ops/framework/shape.h"
#include "ops/random/generator.h"
#include "ops/random/register.h"

namespace onnxflow {
namespace random_ops {
namespace {

// Rounds `v` to T's precision, as a value of T's compute type.
template <typename T>
inline ComputeType<T> InType(double v) {
  return ToCompute(ConvertElement<T>(v));
}

// draw -> T, then * mul, then + add, each step rounded to T.
template <typename T>
inline T Affine(double draw, double mul, double add) {
  ComputeType<T> r = InType<T>(draw);
  r = InType<T>(static_cast<double>(r * InType<T>(mul)));
  r = InType<T>(static_cast<double>(r + InType<T>(add)));
  return FromCompute<T>(r);
}

enum class Distribution { kUniform, kNormal };

bool IsRandomOutputType(DataType t) { return IsOneOf<float, double, Float16, BFloat16>(t); }

class RandomKernel : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info, Distribution dist, bool like) {
    auto k = std::unique_ptr<RandomKernel>(new RandomKernel());
    k->dist_ = dist;
    k->like_ = like;
    k->seed_ = ReadSeed(info);
    if (dist == Distribution::kUniform) {
      const double low = info.GetFloat("low", 0.0f), high = info.GetFloat("high", 1.0f);
      k->mul_ = high - low;
      k->add_ = low;
    } else {
      k->mul_ = info.GetFloat("scale", 1.0f);
      k->add_ = info.GetFloat("mean", 0.0f);
    }
    if (info.has_attribute("dtype") || !like) {
      const int64_t dtype = info.GetInt("dtype", static_cast<int64_t>(DataType::kFloat));
      if (dtype < 0 || dtype > kMaxDataType || !IsRandomOutputType(static_cast<DataType>(dtype))) {
        return InvalidArgument("attribute dtype " + std::to_string(dtype) +
                               " must be float, double, float16 or bfloat16");
      }
      k->dtype_ = static_cast<DataType>(dtype);
    }
    if (!like) {
      if (!info.has_attribute("shape")) return InvalidArgument("attribute 'shape' is required");
      k->shape_ = info.GetInts("shape");
      for (int64_t d : k->shape_) {
        if (d < 0) return InvalidArgument("attribute shape " + ShapeToString(k->shape_) + " has a negative dim");
      }
    }
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status Compute(KernelContext& ctx) const override {
    Shape shape = shape_;
    DataType dtype = dtype_;
    if (like_) {
      ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
      shape = x->shape();
      if (dtype == DataType::kUndefined) {
        if (!IsRandomOutputType(x->dtype())) {
          return InvalidArgument(std::string("input type ") + DataTypeName(x->dtype()) +
                                 " is not a float type and no dtype attribute is given");
        }
        dtype = x->dtype();
      }
    }
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.Allocate(0, dtype, shape));
    NumpyRandom rng(RunSeed(seed_));
    return DispatchType<float, double, Float16, BFloat16>(dtype, [&](auto tag) {
      using T = decltype(tag);
      T* out = y->mutable_data<T>();
      const int64_t n = y->size();
      for (int64_t i = 0; i < n; ++i) {
        const double draw = dist_ == Distribution::kUniform ? rng.NextDouble() : rng.NextGauss();
        out[i] = Affine<T>(draw, mul_, add_);
      }
      return Status::Ok();
    });
  }

 private:
  RandomKernel() = default;
  Distribution dist_ = Distribution::kUniform;
  bool like_ = false;
  std::optional<uint32_t> seed_;
  double mul_ = 1.0, add_ = 0.0;
  DataType dtype_ = DataType::kUndefined;  // undefined: the input's type (*Like ops)
  Shape shape_;
};

ONNXFLOW_REGISTRAR KernelFactory Factory(Distribution dist, bool like) {
  return Make<RandomKernel>(dist, like);
}

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterRandomTensorOps(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(
      registry.Register(kOnnxDomain, "RandomUniform", 1, kOpenEnded, Factory(Distribution::kUniform, false)));
  ONNXFLOW_RETURN_IF_ERROR(
      registry.Register(kOnnxDomain, "RandomNormal", 1, kOpenEnded, Factory(Distribution::kNormal, false)));
  ONNXFLOW_RETURN_IF_ERROR(
      registry.Register(kOnnxDomain, "RandomUniformLike", 1, kOpenEnded, Factory(Distribution::kUniform, true)));
  ONNXFLOW_RETURN_IF_ERROR(
      registry.Register(kOnnxDomain, "RandomNormalLike", 1, kOpenEnded, Factory(Distribution::kNormal, true)));
  return Status::Ok();
}

}  // namespace random_ops
}  // namespace onnxflow
