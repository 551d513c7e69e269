#include "ops/rnn/packed_rows.h"

#include "ops/framework/shared_weights.h"

namespace onnxflow {
namespace rnn {

std::shared_ptr<const std::vector<PackedB>> PackRows(const Tensor* m, int64_t row0, int64_t rows) {
  if (m == nullptr || m->dtype() != DataType::kFloat || m->rank() != 3 || rows <= 0 || row0 < 0 ||
      row0 + rows > m->dim(1) || m->dim(2) <= 0) {
    return nullptr;
  }
  return SharedWeights::Get<std::vector<PackedB>>(WeightKey("Rnn.Rows").Add(*m).Add(row0).Add(rows), [&] {
    const int64_t gate_rows = m->dim(1), n = m->dim(2);
    std::vector<PackedB> packs;
    for (int64_t d = 0; d < m->dim(0); ++d) {
      packs.push_back(PackB(m->data<float>() + (d * gate_rows + row0) * n, n, /*trans=*/true, n, rows));
    }
    return packs;
  });
}

std::shared_ptr<const std::vector<PackedB>> PackRows(const Tensor* m) {
  return m != nullptr && m->rank() == 3 ? PackRows(m, 0, m->dim(1)) : nullptr;
}

}  // namespace rnn
}  // namespace onnxflow
