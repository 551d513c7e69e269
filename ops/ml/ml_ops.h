// The ml family's registration entry points, one per kernel file (domain ai.onnx.ml).
#pragma once

#include "ops/framework/registry.h"

namespace onnxflow {

Status RegisterBinarizer(KernelRegistry& registry);
Status RegisterArrayFeatureExtractor(KernelRegistry& registry);
Status RegisterLabelEncoder(KernelRegistry& registry);
Status RegisterTreeEnsemble(KernelRegistry& registry);
Status RegisterTreeEnsembleLegacy(KernelRegistry& registry);  // Regressor and Classifier, opsets 1-4
Status RegisterNormalizer(KernelRegistry& registry);
Status RegisterScaler(KernelRegistry& registry);
Status RegisterImputer(KernelRegistry& registry);
Status RegisterOneHotEncoder(KernelRegistry& registry);
Status RegisterLinear(KernelRegistry& registry);  // LinearRegressor and LinearClassifier
Status RegisterCategoryMapper(KernelRegistry& registry);  // in label_encoder.cc
Status RegisterSVMRegressor(KernelRegistry& registry);
Status RegisterSVMClassifier(KernelRegistry& registry);
Status RegisterFeatureVectorizer(KernelRegistry& registry);

}  // namespace onnxflow
