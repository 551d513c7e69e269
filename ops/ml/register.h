#pragma once

#include "ops/framework/registry.h"

// One line per kernel file of the family: the function that file defines to register its ops.
// A new kernel file adds its line here; register.cc calls them in this order.
#define ONNXFLOW_ML_REGISTRARS(X)                                           \
  X(RegisterBinarizer)                                                      \
  X(RegisterArrayFeatureExtractor)                                          \
  X(RegisterLabelEncoder)                                                   \
  X(RegisterTreeEnsemble)                                                   \
  X(RegisterTreeEnsembleLegacy)  /* Regressor and Classifier, opsets 1-4 */ \
  X(RegisterNormalizer)                                                     \
  X(RegisterScaler)                                                         \
  X(RegisterImputer)                                                        \
  X(RegisterOneHotEncoder)                                                  \
  X(RegisterLinear)  /* LinearRegressor and LinearClassifier */             \
  X(RegisterCategoryMapper)  /* in label_encoder.cc */                      \
  X(RegisterSVMRegressor)                                                   \
  X(RegisterSVMClassifier)                                                  \
  X(RegisterFeatureVectorizer)                                              \
  X(RegisterMaps)  /* ZipMap, DictVectorizer, CastMap */

namespace onnxflow {

ONNXFLOW_ML_REGISTRARS(ONNXFLOW_DECLARE_REGISTRAR)

Status RegisterMlKernels(KernelRegistry& registry);

}  // namespace onnxflow
