// com.microsoft QLinearConv, as ONNX Runtime saves a quantized CNN at its default level: with
// channels_last = 1 it gives QLinearConv's bytes on channels-last X and Y (a depthwise and a
// grouped convolution, strides and pads), without it QLinearConv's own.
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "ops/framework/domains.h"
#include "ops/framework/testing.h"
#include "ops/math/register.h"

namespace onnxflow {
namespace {

struct Case {
  int64_t c, m, group, k, stride;
};

std::vector<uint8_t> RunConv(const char* domain, int opset, int64_t channels_last, const Case& p, const Tensor& x) {
  OpTest t("QLinearConv", opset, domain);
  if (channels_last >= 0) t.Attr("channels_last", channels_last);
  t.Attr("group", p.group).Attr("strides", std::vector<int64_t>{p.stride, p.stride});
  t.Attr("pads", std::vector<int64_t>{p.k / 2, p.k / 2, p.k / 2, p.k / 2});
  Tensor w(DataType::kInt8, {p.m, p.c / p.group, p.k, p.k});
  for (int64_t i = 0; i < w.size(); ++i) w.mutable_data<int8_t>()[i] = static_cast<int8_t>((i * 29) % 201 - 100);
  std::vector<float> ws(p.m);
  for (int64_t j = 0; j < p.m; ++j) ws[j] = 0.002f + 0.0005f * static_cast<float>(j % 5);
  std::vector<int32_t> bias(p.m);
  for (int64_t j = 0; j < p.m; ++j) bias[j] = static_cast<int32_t>(j * 37 % 400) - 200;
  t.Input(x).Input(Tensor::Scalar<float>(0.05f)).Input(Tensor::Scalar<uint8_t>(110));
  t.Input(w).Input(Tensor::FromVector<float>({p.m}, ws)).Input(Tensor::Scalar<int8_t>(0));
  t.Input(Tensor::Scalar<float>(0.08f)).Input(Tensor::Scalar<uint8_t>(120)).Input(Tensor::FromVector<int32_t>({p.m}, bias));
  auto out = t.Run(RegisterMathKernels);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  if (!out.ok()) return {};
  const Tensor& y = (*out)[0].tensor();
  return std::vector<uint8_t>(y.data<uint8_t>(), y.data<uint8_t>() + y.size());
}

TEST(MsQLinearConv, ChannelsLastIsQLinearConvOnChannelsLastValues) {
  const int64_t n = 2, h = 9, w = 7;
  for (const Case& p : {Case{16, 16, 16, 3, 1}, Case{24, 24, 24, 5, 2}, Case{12, 8, 4, 3, 2}, Case{5, 7, 1, 3, 1}}) {
    Tensor nchw(DataType::kUint8, {n, p.c, h, w}), nhwc(DataType::kUint8, {n, h, w, p.c});
    for (int64_t i = 0; i < nchw.size(); ++i) {
      const int64_t img = i / (p.c * h * w), ch = i / (h * w) % p.c, px = i % (h * w);
      const uint8_t v = static_cast<uint8_t>((i * 53 + i / 7) % 256);
      nchw.mutable_data<uint8_t>()[i] = v;
      nhwc.mutable_data<uint8_t>()[(img * h * w + px) * p.c + ch] = v;
    }
    const std::vector<uint8_t> plain = RunConv(kOnnxDomain, 10, -1, p, nchw);
    EXPECT_EQ(RunConv(kMsDomain, 1, 0, p, nchw), plain) << "channels_last = 0, group " << p.group;
    const std::vector<uint8_t> last = RunConv(kMsDomain, 1, 1, p, nhwc);
    ASSERT_EQ(last.size(), plain.size());
    const int64_t oh = (h - 1) / p.stride + 1, ow = (w - 1) / p.stride + 1;
    for (int64_t i = 0; i < static_cast<int64_t>(plain.size()); ++i) {
      const int64_t img = i / (p.m * oh * ow), m = i / (oh * ow) % p.m, px = i % (oh * ow);
      ASSERT_EQ(last[(img * oh * ow + px) * p.m + m], plain[i]) << "group " << p.group << " at " << i;
    }
  }
}

}  // namespace
}  // namespace onnxflow
