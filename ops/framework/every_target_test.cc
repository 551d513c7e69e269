#include "ops/framework/every_target.h"

#include <gtest/gtest.h>

namespace onnxflow {
namespace {

class EveryTarget : public EveryTargetTest {};
ONNXFLOW_INSTANTIATE_EVERY_TARGET(EveryTarget);

// TearDown checks that dispatch went to the test's target; this test only has to dispatch.
TEST_P(EveryTarget, DispatchFollowsTheTestTarget) {
  EXPECT_EQ(GetParam(), DispatchedTarget());
  RecordProperty("target", hwy::TargetName(GetParam()));
}

// Each target is a test of its own, so a failure names the target that broke.
TEST(EveryTargetList, AtLeastTheBaseline) { EXPECT_FALSE(hwy::SupportedAndGeneratedTargets().empty()); }

}  // namespace
}  // namespace onnxflow
