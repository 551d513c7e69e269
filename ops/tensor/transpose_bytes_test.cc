// TransposeBytes on every compiled target: every tile height (16, 8, 4, 2 and a last single row),
// column counts around the 16-byte tile and past a whole vector (3 and 4 rows into adjacent output
// rows are interleaved a vector at a time), and output strides equal to and wider than the rows.
// TransposeWords likewise around its 16 x 16 register tile.
#include "ops/tensor/transpose_bytes.h"
#include "ops/tensor/transpose_words.h"

#include <vector>

#include <gtest/gtest.h>

#include "ops/framework/every_target.h"

namespace onnxflow {
namespace tensor_ops {
namespace {

class TransposeBytesTest : public EveryTargetTest {};
ONNXFLOW_INSTANTIATE_EVERY_TARGET(TransposeBytesTest);

TEST_P(TransposeBytesTest, MatchesElementByElement) {
  for (int64_t rows : {1, 2, 3, 4, 7, 8, 15, 16, 31, 37}) {
    for (int64_t cols : {1, 15, 16, 17, 34, 48, 64, 130, 200}) {
      for (int64_t pad : {0, 5}) {
        const int64_t ss = cols + 3, ds = rows + pad;
        std::vector<uint8_t> src(rows * ss), dst(cols * ds, 0xEE), expect(cols * ds, 0xEE);
        for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i * 11 + i / 251);
        for (int64_t r = 0; r < rows; ++r) {
          for (int64_t c = 0; c < cols; ++c) expect[c * ds + r] = src[r * ss + c];
        }
        TransposeBytes(src.data(), ss, dst.data(), ds, rows, cols);
        EXPECT_EQ(dst, expect) << rows << "x" << cols << " output stride " << ds;  // the padding untouched too
      }
    }
  }
}

class TransposeWordsTest : public EveryTargetTest {};
ONNXFLOW_INSTANTIATE_EVERY_TARGET(TransposeWordsTest);

TEST_P(TransposeWordsTest, MatchesElementByElement) {
  for (int64_t rows : {1, 15, 16, 17, 32, 33}) {
    for (int64_t cols : {1, 15, 16, 17, 48}) {
      for (int64_t pad : {0, 5}) {
        const int64_t ss = cols + 3, ds = rows + pad;
        std::vector<uint32_t> src(rows * ss), dst(cols * ds, 0xEEEEEEEEu), expect(cols * ds, 0xEEEEEEEEu);
        // Every bit pattern must survive, NaN payloads and denormals among them (moved as floats).
        for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint32_t>(i * 2654435761u) | 0x7F800001u * (i % 7 == 0);
        for (int64_t r = 0; r < rows; ++r) {
          for (int64_t c = 0; c < cols; ++c) expect[c * ds + r] = src[r * ss + c];
        }
        TransposeWords(src.data(), ss, dst.data(), ds, rows, cols);
        EXPECT_EQ(dst, expect) << rows << "x" << cols << " output stride " << ds;  // the padding untouched too
      }
    }
  }
}

}  // namespace
}  // namespace tensor_ops
}  // namespace onnxflow
