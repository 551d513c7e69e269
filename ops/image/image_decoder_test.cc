#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <jpeglib.h>
#include <png.h>
#include <zlib.h>

#include "ops/framework/testing.h"
#include "ops/image/image_codecs.h"
#include "ops/image/register.h"

namespace onnxflow {
namespace {

using Bytes = std::vector<uint8_t>;

// A 3x2 test picture (width 3, height 2), RGB.
const Bytes kRgb = {255, 0, 0, 0, 255, 0, 0, 0, 255,  //
                    10, 20, 30, 200, 100, 50, 7, 7, 7};

Result<Tensor> Decode(const Bytes& stream, const std::string& format = "RGB") {
  OpTest t("ImageDecoder", 20);
  t.Attr("pixel_format", format);
  t.Input(Tensor::FromVector<uint8_t>({static_cast<int64_t>(stream.size())}, stream));
  auto out = t.Run(RegisterImageKernels);
  if (!out.ok()) return out.status();
  return out.value()[0].tensor();
}

Tensor Expected(const Bytes& rgb, int64_t h, int64_t w) { return Tensor::FromVector<uint8_t>({h, w, 3}, rgb); }

void Put16(Bytes* b, uint32_t v) { b->insert(b->end(), {uint8_t(v), uint8_t(v >> 8)}); }
void Put32(Bytes* b, uint32_t v) { b->insert(b->end(), {uint8_t(v), uint8_t(v >> 8), uint8_t(v >> 16), uint8_t(v >> 24)}); }

// A BMP with a 40-byte header; `rows` are already in file order and padded.
Bytes Bmp(int32_t w, int32_t h, uint16_t bpp, const Bytes& palette, const Bytes& rows) {
  Bytes b = {'B', 'M'};
  const uint32_t offset = 14 + 40 + static_cast<uint32_t>(palette.size());
  Put32(&b, offset + static_cast<uint32_t>(rows.size()));
  Put32(&b, 0);
  Put32(&b, offset);
  Put32(&b, 40);
  Put32(&b, static_cast<uint32_t>(w));
  Put32(&b, static_cast<uint32_t>(h));
  Put16(&b, 1);
  Put16(&b, bpp);
  Put32(&b, 0);
  Put32(&b, static_cast<uint32_t>(rows.size()));
  Put32(&b, 2835);
  Put32(&b, 2835);
  Put32(&b, static_cast<uint32_t>(palette.size() / 4));
  Put32(&b, 0);
  b.insert(b.end(), palette.begin(), palette.end());
  b.insert(b.end(), rows.begin(), rows.end());
  return b;
}

TEST(ImageDecoder, Bmp24BottomUpAnd32TopDownAnd8BitPalette) {
  // 24-bit rows are BGR, bottom row first, padded to 4 bytes (9 -> 12).
  Bytes rows24;
  for (int y : {1, 0}) {
    for (int x = 0; x < 3; ++x) {
      const uint8_t* p = &kRgb[(y * 3 + x) * 3];
      rows24.insert(rows24.end(), {p[2], p[1], p[0]});
    }
    rows24.insert(rows24.end(), {0, 0, 0});
  }
  auto a = Decode(Bmp(3, 2, 24, {}, rows24));
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_TRUE(TensorsEqual(Expected(kRgb, 2, 3), *a));

  Bytes rows32;
  for (int i = 0; i < 6; ++i) rows32.insert(rows32.end(), {kRgb[i * 3 + 2], kRgb[i * 3 + 1], kRgb[i * 3], 0});
  auto b = Decode(Bmp(3, -2, 32, {}, rows32));
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_TRUE(TensorsEqual(Expected(kRgb, 2, 3), *b));

  Bytes palette;
  for (int i = 0; i < 6; ++i) palette.insert(palette.end(), {kRgb[i * 3 + 2], kRgb[i * 3 + 1], kRgb[i * 3], 0});
  const Bytes rows8 = {3, 4, 5, 0, 0, 1, 2, 0};  // bottom row (3, 4, 5) first
  auto c = Decode(Bmp(3, 2, 8, palette, rows8));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(TensorsEqual(Expected(kRgb, 2, 3), *c));
}

TEST(ImageDecoder, PnmBinaryAndAscii) {
  Bytes p6 = {'P', '6', '\n', '#', ' ', 'c', '\n', '3', ' ', '2', '\n', '2', '5', '5', '\n'};
  p6.insert(p6.end(), kRgb.begin(), kRgb.end());
  auto a = Decode(p6);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_TRUE(TensorsEqual(Expected(kRgb, 2, 3), *a));

  const std::string p2 = "P2 2 1 15 0 15";
  auto b = Decode(Bytes(p2.begin(), p2.end()));
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<uint8_t>({1, 2, 3}, {0, 0, 0, 255, 255, 255}), *b));

  const std::string p1 = "P1\n2 1\n1 0\n";
  auto c = Decode(Bytes(p1.begin(), p1.end()), "Grayscale");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<uint8_t>({1, 2, 1}, {0, 255}), *c));
}

// A little-endian baseline TIFF with one strip.
Bytes Tiff(uint32_t w, uint32_t h, uint16_t samples, uint16_t photometric, uint16_t compression, const Bytes& strip,
          uint16_t predictor = 1) {
  Bytes b = {'I', 'I', 42, 0};
  const uint32_t bits_at = 8, strip_at = 16;
  Put32(&b, static_cast<uint32_t>(strip_at + strip.size()));  // the IFD follows the strip
  Put16(&b, 8);
  Put16(&b, 8);
  Put16(&b, 8);
  Put16(&b, 8);  // BitsPerSample values (used when samples > 2)
  b.insert(b.end(), strip.begin(), strip.end());
  struct Entry { uint16_t tag, type; uint32_t count, value; };
  std::vector<Entry> e = {{256, 4, 1, w},
                          {257, 4, 1, h},
                          {258, 3, samples, samples > 2 ? bits_at : 8},
                          {259, 3, 1, compression},
                          {262, 3, 1, photometric},
                          {273, 4, 1, strip_at},
                          {277, 3, 1, samples},
                          {279, 4, 1, static_cast<uint32_t>(strip.size())},
                          {317, 3, 1, predictor}};
  Put16(&b, static_cast<uint16_t>(e.size()));
  for (const auto& x : e) {
    Put16(&b, x.tag);
    Put16(&b, x.type);
    Put32(&b, x.count);
    if (x.type == 3 && x.count == 1) {
      Put16(&b, static_cast<uint16_t>(x.value));
      Put16(&b, 0);
    } else {
      Put32(&b, x.value);
    }
  }
  Put32(&b, 0);
  return b;
}

TEST(ImageDecoder, TiffUncompressedRgbAndPackBitsGray) {
  auto a = Decode(Tiff(3, 2, 3, 2, 1, kRgb));
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_TRUE(TensorsEqual(Expected(kRgb, 2, 3), *a));
  // PackBits: a run of four 9s, then two literals 1, 2.
  auto b = Decode(Tiff(3, 2, 1, 1, 32773, {0xFD, 9, 0x01, 1, 2}), "Grayscale");
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<uint8_t>({2, 3, 1}, {9, 9, 9, 9, 1, 2}), *b));
  // JPEG-in-TIFF goes through libtiff to libjpeg, which finds raw pixels where its stream should be.
  EXPECT_TRUE(Refused(Decode(Tiff(3, 2, 3, 2, 7, kRgb)), StatusCode::kInvalidArgument,
                      "cannot decode the TIFF image: JPEGLib: Not a JPEG file"));
}

// 9-bit codes, most significant bit first.
Bytes PackCodes(const std::vector<int>& codes) {
  Bytes out;
  int acc = 0, bits = 0;
  for (int c : codes) {
    acc = (acc << 9) | c;
    bits += 9;
    while (bits >= 8) {
      out.push_back(static_cast<uint8_t>(acc >> (bits - 8)));
      bits -= 8;
      acc &= (1 << bits) - 1;
    }
  }
  if (bits > 0) out.push_back(static_cast<uint8_t>(acc << (8 - bits)));
  return out;
}

TEST(ImageDecoder, TiffLzwAndDeflateWithPredictor) {
  // clear, 9, 258 (= "9 9", the code being defined), 9, 1, 2, end.
  auto a = Decode(Tiff(3, 2, 1, 1, 5, PackCodes({256, 9, 258, 9, 1, 2, 257})), "Grayscale");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<uint8_t>({2, 3, 1}, {9, 9, 9, 9, 1, 2}), *a));
  // Deflate of the horizontally differenced picture.
  Bytes diff = kRgb;
  for (int y = 0; y < 2; ++y) {
    for (int i = 8; i >= 3; --i) diff[y * 9 + i] = static_cast<uint8_t>(kRgb[y * 9 + i] - kRgb[y * 9 + i - 3]);
  }
  uLongf size = compressBound(diff.size());
  Bytes z(size);
  ASSERT_EQ(compress(z.data(), &size, diff.data(), diff.size()), Z_OK);
  z.resize(size);
  auto b = Decode(Tiff(3, 2, 3, 2, 8, z, 2));
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_TRUE(TensorsEqual(Expected(kRgb, 2, 3), *b));
  // A code not yet defined, in libtiff's words.
  EXPECT_TRUE(Refused(Decode(Tiff(3, 2, 1, 1, 5, PackCodes({256, 9, 400, 257}))), StatusCode::kInvalidArgument,
                      "cannot decode the TIFF image: image: Using code not yet in table"));
}

TEST(ImageDecoder, PngRoundTripsExactly) {
  png_image image;
  std::memset(&image, 0, sizeof image);
  image.version = PNG_IMAGE_VERSION;
  image.width = 3;
  image.height = 2;
  image.format = PNG_FORMAT_RGB;
  png_alloc_size_t size = 0;
  ASSERT_TRUE(png_image_write_to_memory(&image, nullptr, &size, 0, kRgb.data(), 0, nullptr));
  Bytes png(size);
  ASSERT_TRUE(png_image_write_to_memory(&image, png.data(), &size, 0, kRgb.data(), 0, nullptr));
  png.resize(size);
  auto a = Decode(png);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_TRUE(TensorsEqual(Expected(kRgb, 2, 3), *a));
  auto bgr = Decode(png, "BGR");
  ASSERT_TRUE(bgr.ok());
  EXPECT_EQ(bgr->data<uint8_t>()[0], 0);
  EXPECT_EQ(bgr->data<uint8_t>()[2], 255);
  auto gray = Decode(png, "Grayscale");
  ASSERT_TRUE(gray.ok());
  // Pillow's luma in 16-bit fixed point: red 255 -> (255 * 19595 + 32768) >> 16 = 76.
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<uint8_t>({2, 3, 1}, {76, 150, 29, 18, 124, 7}), *gray));
}

TEST(ImageDecoder, JpegDecodesCloseToTheSource) {
  // An 8x8 flat orange block survives JPEG nearly unchanged.
  jpeg_compress_struct c;
  jpeg_error_mgr err;
  c.err = jpeg_std_error(&err);
  jpeg_create_compress(&c);
  unsigned char* buffer = nullptr;
  unsigned long size = 0;  // NOLINT(runtime/int): libjpeg's type
  jpeg_mem_dest(&c, &buffer, &size);
  c.image_width = 8;
  c.image_height = 8;
  c.input_components = 3;
  c.in_color_space = JCS_RGB;
  jpeg_set_defaults(&c);
  jpeg_set_quality(&c, 100, TRUE);
  jpeg_start_compress(&c, TRUE);
  std::vector<uint8_t> row(8 * 3);
  for (int x = 0; x < 8; ++x) row[x * 3] = 240, row[x * 3 + 1] = 120, row[x * 3 + 2] = 30;
  while (c.next_scanline < 8) {
    JSAMPROW r = row.data();
    jpeg_write_scanlines(&c, &r, 1);
  }
  jpeg_finish_compress(&c);
  Bytes jpeg(buffer, buffer + size);
  jpeg_destroy_compress(&c);
  std::free(buffer);

  auto a = Decode(jpeg);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_EQ(a->shape(), (Shape{8, 8, 3}));
  for (int i = 0; i < 64; ++i) {
    EXPECT_NEAR(a->data<uint8_t>()[i * 3], 240, 3);
    EXPECT_NEAR(a->data<uint8_t>()[i * 3 + 1], 120, 3);
    EXPECT_NEAR(a->data<uint8_t>()[i * 3 + 2], 30, 3);
  }
  // A truncated JPEG is an error, not a crash or an exit.
  EXPECT_TRUE(Refused(Decode(Bytes(jpeg.begin(), jpeg.begin() + 20)), StatusCode::kInvalidArgument, "cannot decode the JPEG image: JPEG datastream contains no image"));
}

TEST(ImageDecoder, BrokenAndUnsupportedStreamsAreErrors) {
  EXPECT_TRUE(Refused(Decode({1, 2, 3, 4}), StatusCode::kInvalidArgument, "the encoded stream is not a known image format"));                                        // unknown
  EXPECT_TRUE(Refused(Decode({'B', 'M', 0, 0}), StatusCode::kInvalidArgument, "BMP stream is truncated"));                                    // truncated BMP
  EXPECT_TRUE(Refused(Decode({0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n', 0}), StatusCode::kInvalidArgument, "cannot decode the PNG image: read beyond end of data"));    // truncated PNG
  const std::string p6 = "P6 4000 4000 255 ";
  EXPECT_TRUE(Refused(Decode(Bytes(p6.begin(), p6.end())), StatusCode::kInvalidArgument, "PNM raster is truncated"));                         // raster missing
  EXPECT_TRUE(Refused(Decode({'R', 'I', 'F', 'F', 0, 0, 0, 0, 'W', 'E', 'B', 'P'}), StatusCode::kInvalidArgument, "cannot decode the WebP image: bad header"));  // broken (or no libwebp)
  auto j2k = Decode({0xFF, 0x4F, 0xFF, 0x51, 0, 0});
  ASSERT_TRUE(Refused(j2k, StatusCode::kUnimplemented, "JPEG 2000 images are not supported (no decoder is linked)"));
  EXPECT_EQ(j2k.status().code(), StatusCode::kUnimplemented);
  OpTest t("ImageDecoder", 20);
  t.Input(Tensor::FromVector<int32_t>({2}, {1, 2}));
  EXPECT_TRUE(Refused(t.Run(RegisterImageKernels), StatusCode::kInvalidArgument, "encoded_stream must be a 1-D uint8 tensor, got int32 [2]"));
  OpTest f("ImageDecoder", 20);
  f.Attr("pixel_format", std::string("HSV")).Input(Tensor::FromVector<uint8_t>({1}, {0}));
  EXPECT_TRUE(Refused(f.Run(RegisterImageKernels), StatusCode::kInvalidArgument, "pixel_format must be RGB, BGR or Grayscale, got 'HSV'"));
}

}  // namespace
}  // namespace onnxflow
