#include "ops/ml/svm_kernel.h"

#include <string>
#include <vector>

namespace onnxflow {

Result<SvmKernel> SvmKernel::FromAttributes(const KernelInfo& info) {
  const std::string name = info.GetString("kernel_type", "LINEAR");
  Type type;
  if (name == "LINEAR") type = Type::kLinear;
  else if (name == "POLY") type = Type::kPoly;
  else if (name == "RBF") type = Type::kRbf;
  else if (name == "SIGMOID") type = Type::kSigmoid;
  else return InvalidArgument("kernel_type must be LINEAR, POLY, RBF or SIGMOID, got '" + name + "'");
  const std::vector<float> params = info.GetFloats("kernel_params");
  if (params.empty()) return SvmKernel(type, 0, 0, 0);
  if (params.size() != 3) return InvalidArgument("kernel_params must hold gamma, coef0 and degree");
  return SvmKernel(type, params[0], params[1], static_cast<int>(params[2]));
}

}  // namespace onnxflow
