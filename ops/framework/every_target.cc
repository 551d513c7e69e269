#include "ops/framework/every_target.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/framework/every_target.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace onnxflow {
namespace HWY_NAMESPACE {

int64_t CurrentTargetImpl() { return HWY_TARGET; }

}  // namespace HWY_NAMESPACE
}  // namespace onnxflow
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace onnxflow {

HWY_EXPORT(CurrentTargetImpl);

int64_t DispatchedTarget() { return HWY_DYNAMIC_DISPATCH(CurrentTargetImpl)(); }

void EveryTargetTest::TearDown() {
  // Read before DispatchedTarget(), which itself initializes the choice.
  EXPECT_TRUE(hwy::GetChosenTarget().IsInitialized())
      << "the test never reached HWY_DYNAMIC_DISPATCH: it need not run on every target";
  EXPECT_EQ(hwy::TargetName(GetParam()), std::string(hwy::TargetName(DispatchedTarget())));
  hwy::SetSupportedTargetsForTest(0);
}

std::string TargetTestName(const ::testing::TestParamInfo<int64_t>& info) { return hwy::TargetName(info.param); }

}  // namespace onnxflow
#endif  // HWY_ONCE
