// The ai.onnx.ml ops on maps (include/onnxflow/tensor.h: a Map is its keys and its values, two 1-D
// tensors side by side):
//   ZipMap-1          X float [N, C] (or [C]) -> a sequence of N maps {label_j: X[i, j]}: the
//                     probabilities output every scikit-learn classifier converted by skl2onnx ends in
//   DictVectorizer-1  a map -> [1, V]: the value of vocabulary word v at column v, 0 where absent
//   CastMap-1         a map int64 -> float or string -> [1, ...] in the cast_to type, DENSE (the
//                     values in key order) or SPARSE (the value of key k at column k, max_map columns)
// with ONNX Runtime's conventions where the spec is silent (CastMap's float-to-string spelling and
// sparse padding; ZipMap of a 1-D input is one row).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <numeric>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "ops/cast/convert.h"
#include "ops/framework/dispatch.h"
#include "ops/ml/register.h"

namespace onnxflow {
namespace {

Result<const Map*> RequireMap(const KernelContext& ctx, int i) {
  const Value* v = ctx.input(i);
  if (v == nullptr || !v->is_map()) return InvalidArgument("input " + std::to_string(i) + " must be a map");
  const Map& map = v->map();
  if (!map.well_formed()) {
    return InvalidArgument("input " + std::to_string(i) + ": a map's keys and values must be 1-D tensors of one length");
  }
  return &map;
}

class ZipMap final : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    const std::vector<int64_t> ints = info.GetInts("classlabels_int64s");
    const std::vector<std::string> strings = info.GetStrings("classlabels_strings");
    if (ints.empty() == strings.empty()) {
      return InvalidArgument("exactly one of classlabels_int64s and classlabels_strings must be given");
    }
    auto k = std::make_unique<ZipMap>();
    const int64_t count = static_cast<int64_t>(ints.empty() ? strings.size() : ints.size());
    k->labels_ = ints.empty() ? Tensor::FromVector<std::string>({count}, strings) : Tensor::FromVector<int64_t>({count}, ints);
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    if (x->dtype() != DataType::kFloat) {
      return InvalidArgument(std::string("X must be float, got ") + DataTypeName(x->dtype()));
    }
    if (x->rank() != 1 && x->rank() != 2) {
      return InvalidArgument("X must be [N, C] or [C], got " + ShapeToString(x->shape()));
    }
    const int64_t rows = x->rank() == 2 ? x->dim(0) : 1;
    const int64_t columns = x->dim(x->rank() - 1);
    if (columns != labels_.size()) {
      return InvalidArgument("X has " + std::to_string(columns) + " columns for " + std::to_string(labels_.size()) +
                             " class labels");
    }
    auto seq = std::make_shared<Sequence>();
    seq->elem_type = DataType::kFloat;
    seq->maps.reserve(static_cast<size_t>(rows));
    for (int64_t r = 0; r < rows; ++r) {
      Tensor values = Tensor::Uninitialized(DataType::kFloat, {columns});
      std::copy_n(x->data<float>() + r * columns, columns, values.mutable_data<float>());
      seq->maps.push_back(Map{labels_, std::move(values)});  // every map shares the labels
    }
    ctx.SetOutput(0, Value(std::shared_ptr<const Sequence>(std::move(seq))));
    return Status::Ok();
  }

 private:
  Tensor labels_;
};

class DictVectorizer final : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    auto k = std::make_unique<DictVectorizer>();
    const std::vector<int64_t> ints = info.GetInts("int64_vocabulary");
    const std::vector<std::string> strings = info.GetStrings("string_vocabulary");
    if (ints.empty() == strings.empty()) {
      return InvalidArgument("exactly one of int64_vocabulary and string_vocabulary must be given");
    }
    k->string_keys_ = !strings.empty();
    for (size_t i = 0; i < ints.size(); ++i) k->int_column_.emplace(ints[i], static_cast<int64_t>(i));
    for (size_t i = 0; i < strings.size(); ++i) k->string_column_.emplace(strings[i], static_cast<int64_t>(i));
    k->width_ = static_cast<int64_t>(std::max(ints.size(), strings.size()));
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Map* map, RequireMap(ctx, 0));
    const DataType want = string_keys_ ? DataType::kString : DataType::kInt64;
    if (map->keys.dtype() != want) {
      return InvalidArgument(std::string("the map's keys must be ") + DataTypeName(want) + " for this vocabulary, got " +
                             DataTypeName(map->keys.dtype()));
    }
    const DataType type = map->values.dtype();
    return DispatchType<float, double, int64_t, std::string>(type, [&](auto tag) -> Status {
      using V = decltype(tag);
      ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.Allocate(0, type, {1, width_}));
      V* out = y->mutable_data<V>();
      const V* values = map->values.data<V>();
      for (int64_t i = 0; i < map->keys.size(); ++i) {
        const int64_t column = string_keys_ ? Column(string_column_, map->keys.data<std::string>()[i])
                                            : Column(int_column_, map->keys.data<int64_t>()[i]);
        if (column >= 0) out[column] = values[i];  // words outside the vocabulary are dropped
      }
      return Status::Ok();
    });
  }

 private:
  template <typename K>
  static int64_t Column(const std::unordered_map<K, int64_t>& columns, const K& key) {
    auto it = columns.find(key);
    return it == columns.end() ? -1 : it->second;
  }

  bool string_keys_ = false;
  int64_t width_ = 0;
  std::unordered_map<int64_t, int64_t> int_column_;
  std::unordered_map<std::string, int64_t> string_column_;
};

class CastMap final : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    auto k = std::make_unique<CastMap>();
    const std::string cast_to = info.GetString("cast_to", "TO_FLOAT");
    const std::string form = info.GetString("map_form", "DENSE");
    if (cast_to == "TO_FLOAT") {
      k->to_ = DataType::kFloat;
    } else if (cast_to == "TO_INT64") {
      k->to_ = DataType::kInt64;
    } else if (cast_to == "TO_STRING") {
      k->to_ = DataType::kString;
    } else {
      return InvalidArgument("cast_to must be TO_FLOAT, TO_INT64 or TO_STRING, not '" + cast_to + "'");
    }
    if (form != "DENSE" && form != "SPARSE") return InvalidArgument("map_form must be DENSE or SPARSE, not '" + form + "'");
    k->sparse_ = form == "SPARSE";
    k->max_map_ = info.GetInt("max_map", 1);
    if (k->sparse_ && (k->max_map_ < 0 || k->max_map_ > (int64_t{1} << 31))) {
      return InvalidArgument("max_map must be between 0 and 2^31, got " + std::to_string(k->max_map_));
    }
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Map* map, RequireMap(ctx, 0));
    if (map->keys.dtype() != DataType::kInt64) {
      return InvalidArgument(std::string("the map's keys must be int64, got ") + DataTypeName(map->keys.dtype()));
    }
    const int64_t* keys = map->keys.data<int64_t>();
    // The entries in key order: ONNX Runtime's maps are ordered by key.
    std::vector<int64_t> order(static_cast<size_t>(map->keys.size()));
    std::iota(order.begin(), order.end(), int64_t{0});
    std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return keys[a] < keys[b]; });
    if (sparse_ && !order.empty() && keys[order.front()] < 0) {
      return InvalidArgument("a SPARSE map's keys are columns: " + std::to_string(keys[order.front()]) + " is negative");
    }
    const int64_t width = sparse_ ? max_map_ : map->keys.size();
    return DispatchType<float, std::string>(map->values.dtype(), [&](auto from_tag) -> Status {
      using From = decltype(from_tag);
      const From* values = map->values.data<From>();
      return DispatchType<float, int64_t, std::string>(to_, [&](auto to_tag) -> Status {
        using To = decltype(to_tag);
        ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.Allocate(0, to_, {1, width}));
        To* out = y->mutable_data<To>();
        if (!sparse_) {
          for (int64_t i = 0; i < width; ++i) ONNXFLOW_RETURN_IF_ERROR(Convert(values[order[i]], &out[i]));
          return Status::Ok();
        }
        // Columns without a key hold ONNX Runtime's padding: 0, or "0.f" for strings.
        if constexpr (std::is_same_v<To, std::string>) std::fill(out, out + width, std::string("0.f"));
        for (int64_t i : order) {
          if (keys[i] < width) ONNXFLOW_RETURN_IF_ERROR(Convert(values[i], &out[keys[i]]));
        }
        return Status::Ok();
      });
    });
  }

 private:
  template <typename From, typename To>
  static Status Convert(const From& from, To* to) {
    if constexpr (std::is_same_v<From, To>) {
      *to = from;
    } else if constexpr (std::is_same_v<From, float> && std::is_same_v<To, int64_t>) {
      *to = ConvertElement<int64_t>(from);  // as Cast does: NaN and out-of-range give INT64_MIN
    } else if constexpr (std::is_same_v<From, float>) {  // to string: std::to_string's "%f"
      char buffer[64];
      std::snprintf(buffer, sizeof(buffer), "%f", static_cast<double>(from));
      *to = buffer;
    } else {  // a string to a number
      const char* begin = from.c_str();
      char* end = nullptr;
      if constexpr (std::is_same_v<To, float>) {
        *to = std::strtof(begin, &end);
      } else {
        *to = std::strtoll(begin, &end, 10);
      }
      if (end == begin) return InvalidArgument("the map value '" + from + "' is not a number");
    }
    return Status::Ok();
  }

  DataType to_ = DataType::kFloat;
  bool sparse_ = false;
  int64_t max_map_ = 1;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterMaps(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kMlDomain, "ZipMap", 1, kOpenEnded, Make<ZipMap>()));
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kMlDomain, "DictVectorizer", 1, kOpenEnded, Make<DictVectorizer>()));
  return registry.Register(kMlDomain, "CastMap", 1, kOpenEnded, Make<CastMap>());
}

}  // namespace onnxflow
