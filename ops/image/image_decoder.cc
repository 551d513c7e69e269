// ImageDecoder (opset 20): decodes an encoded image (a 1-D uint8 tensor) into a uint8 tensor of
// shape [H, W, 3] (pixel_format RGB, the default, or BGR) or [H, W, 1] (Grayscale). The format is
// recognised from the stream's first bytes (image_codecs.h lists what is supported). Grayscale
// uses the ITU-R 601 luma weights in 16-bit fixed point, as Pillow's convert("L") does, so results
// match the reference bit for bit.
#include <cstdint>
#include <string>

#include "ops/framework/kernel.h"
#include "ops/framework/kernel_info.h"
#include "ops/framework/registry.h"
#include "ops/image/image_codecs.h"
#include "ops/image/register.h"

namespace onnxflow {
namespace image {
namespace {

enum class PixelFormat { kRgb, kBgr, kGrayscale };

class ImageDecoderKernel final : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    auto k = std::make_unique<ImageDecoderKernel>();
    const std::string f = info.GetString("pixel_format", "RGB");
    if (f == "RGB") {
      k->format_ = PixelFormat::kRgb;
    } else if (f == "BGR") {
      k->format_ = PixelFormat::kBgr;
    } else if (f == "Grayscale") {
      k->format_ = PixelFormat::kGrayscale;
    } else {
      return InvalidArgument("pixel_format must be RGB, BGR or Grayscale, got '" + f + "'");
    }
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* encoded, ctx.RequireTensor(0));
    if (encoded->dtype() != DataType::kUint8 || encoded->rank() != 1) {
      return InvalidArgument("encoded_stream must be a 1-D uint8 tensor, got " +
                             std::string(DataTypeName(encoded->dtype())) + " " + ShapeToString(encoded->shape()));
    }
    ONNXFLOW_ASSIGN_OR_RETURN(
        RgbImage image, DecodeImage(encoded->data<uint8_t>(), static_cast<size_t>(encoded->size()),
                                    ctx.run().limits().max_tensor_bytes));
    const int64_t pixels = image.height * image.width;
    const int64_t channels = format_ == PixelFormat::kGrayscale ? 1 : 3;
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.Allocate(0, DataType::kUint8, {image.height, image.width, channels}));
    uint8_t* out = y->mutable_data<uint8_t>();
    const uint8_t* rgb = image.pixels.data();
    for (int64_t i = 0; i < pixels; ++i, rgb += 3) {
      switch (format_) {
        case PixelFormat::kRgb:
          out[3 * i] = rgb[0];
          out[3 * i + 1] = rgb[1];
          out[3 * i + 2] = rgb[2];
          break;
        case PixelFormat::kBgr:
          out[3 * i] = rgb[2];
          out[3 * i + 1] = rgb[1];
          out[3 * i + 2] = rgb[0];
          break;
        case PixelFormat::kGrayscale:
          out[i] = static_cast<uint8_t>((rgb[0] * 19595u + rgb[1] * 38470u + rgb[2] * 7471u + 0x8000u) >> 16);
          break;
      }
    }
    return Status::Ok();
  }

 private:
  PixelFormat format_ = PixelFormat::kRgb;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterImageDecoder(KernelRegistry& registry) {
  return registry.Register(kOnnxDomain, "ImageDecoder", 20, kOpenEnded,
                           Make<ImageDecoderKernel>());
}

}  // namespace image
}  // namespace onnxflow
