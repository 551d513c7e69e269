// The ONNX backend-test cases of the ml family, run kernel by kernel.
#include <string>

#include <gtest/gtest.h>

#include "ops/ml/register.h"
#include "ops/text/node_cases.h"

namespace onnxflow {
namespace {

class MlCase : public ::testing::TestWithParam<std::string> {};

TEST_P(MlCase, MatchesExpectedOutputs) {
  bool skipped = false;
  EXPECT_TRUE(RunNodeCase(GetParam(), RegisterMlKernels, &skipped));
  if (skipped) GTEST_SKIP() << "no test data for " << GetParam();
}

INSTANTIATE_TEST_SUITE_P(Onnx, MlCase,
                         ::testing::Values("test_ai_onnx_ml_array_feature_extractor", "test_ai_onnx_ml_binarizer",
                                           "test_ai_onnx_ml_label_encoder_string_int",
                                           "test_ai_onnx_ml_label_encoder_string_int_no_default",
                                           "test_ai_onnx_ml_label_encoder_tensor_mapping",
                                           "test_ai_onnx_ml_label_encoder_tensor_value_only_mapping",
                                           "test_ai_onnx_ml_tree_ensemble_set_membership",
                                           "test_ai_onnx_ml_tree_ensemble_single_tree"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace onnxflow
