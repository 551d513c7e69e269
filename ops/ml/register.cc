#include "ops/ml/register.h"

#include "ops/ml/ml_ops.h"

namespace onnxflow {

Status RegisterMlKernels(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(RegisterBinarizer(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterArrayFeatureExtractor(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterLabelEncoder(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterTreeEnsemble(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterTreeEnsembleLegacy(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterNormalizer(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterScaler(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterImputer(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterOneHotEncoder(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterLinear(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterCategoryMapper(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterSVMRegressor(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterSVMClassifier(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterFeatureVectorizer(registry));
  return Status::Ok();
}

}  // namespace onnxflow
