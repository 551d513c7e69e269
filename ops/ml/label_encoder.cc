// LabelEncoder (ai.onnx.ml): maps each input element through a key -> value table, with a
// default for keys not in the table.
//   - opset 1: `classes_strings`; string input -> its index (default_int64), int64 input ->
//     classes_strings[i] (default_string). The direction follows the input type.
//   - opset 2: keys_{strings,int64s,floats} -> values_{strings,int64s,floats}, default_*.
//   - opset 4: also keys_tensor / values_tensor / default_tensor, adding int32, int16 and double.
// Float keys: NaN matches any NaN; a repeated key keeps its last value.
// CategoryMapper-1 (string <-> int64 through two parallel lists) shares the table code.
#include <cmath>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "ops/framework/dispatch.h"
#include "ops/framework/parallel.h"
#include "ops/ml/register.h"

namespace onnxflow {
namespace {

#define ONNXFLOW_LABEL_TYPES std::string, int64_t, float, double, int32_t, int16_t

// One key -> value table: 1-D keys and values of equal length and a one-element default.
class Table {
 public:
  static Result<Table> Build(Tensor keys, Tensor values, Tensor default_value) {
    if (keys.size() != values.size()) {
      return InvalidArgument("keys and values must have the same length, got " + std::to_string(keys.size()) +
                             " and " + std::to_string(values.size()));
    }
    if (default_value.dtype() != values.dtype() || default_value.size() != 1) {
      return InvalidArgument(std::string("the default must be one ") + DataTypeName(values.dtype()) + ", got " +
                             std::to_string(default_value.size()) + " of " + DataTypeName(default_value.dtype()));
    }
    if (!IsOneOf<ONNXFLOW_LABEL_TYPES>(keys.dtype()) || !IsOneOf<ONNXFLOW_LABEL_TYPES>(values.dtype())) {
      return InvalidArgument(std::string("unsupported key/value types ") + DataTypeName(keys.dtype()) + " -> " +
                             DataTypeName(values.dtype()));
    }
    Table t;
    t.keys_ = std::move(keys);
    t.values_ = std::move(values);
    t.default_ = std::move(default_value);
    const int64_t n = t.keys_.size();
    Status s = DispatchType<ONNXFLOW_LABEL_TYPES>(t.keys_.dtype(), [&](auto tag) {
      using K = decltype(tag);
      const K* k = t.keys_.data<K>();
      for (int64_t i = 0; i < n; ++i) t.Add(k[i], i);
      return Status::Ok();
    });
    if (!s.ok()) return s;
    return t;
  }

  DataType key_type() const { return keys_.dtype(); }
  DataType value_type() const { return values_.dtype(); }

  Status Map(const KernelContext& ctx, const Tensor& x, Tensor* y) const {
    return DispatchType<ONNXFLOW_LABEL_TYPES>(x.dtype(), [&](auto key_tag) {
      using K = decltype(key_tag);
      const K* in = x.data<K>();
      return DispatchType<ONNXFLOW_LABEL_TYPES>(values_.dtype(), [&](auto value_tag) {
        using V = decltype(value_tag);
        const V* values = values_.data<V>();
        const V& fallback = default_.data<V>()[0];
        V* out = y->mutable_data<V>();
        ParallelFor(ctx, x.size(), 8, [&](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i) {
            const int64_t at = Find(in[i]);
            out[i] = at >= 0 ? values[at] : fallback;
          }
        });
        return Status::Ok();
      });
    });
  }

 private:
  void Add(const std::string& key, int64_t at) { strings_[key] = at; }
  template <typename K>
  void Add(K key, int64_t at) {
    if constexpr (std::is_floating_point_v<K>) {
      if (std::isnan(key)) { nan_at_ = at; return; }
      floats_[static_cast<double>(key)] = at;
    } else {
      ints_[static_cast<int64_t>(key)] = at;
    }
  }

  int64_t Find(const std::string& key) const {
    auto it = strings_.find(key);
    return it == strings_.end() ? -1 : it->second;
  }
  template <typename K>
  int64_t Find(K key) const {
    if constexpr (std::is_floating_point_v<K>) {
      if (std::isnan(key)) return nan_at_;
      auto it = floats_.find(static_cast<double>(key));
      return it == floats_.end() ? -1 : it->second;
    } else {
      auto it = ints_.find(static_cast<int64_t>(key));
      return it == ints_.end() ? -1 : it->second;
    }
  }

  Tensor keys_, values_, default_;
  std::unordered_map<std::string, int64_t> strings_;
  std::unordered_map<int64_t, int64_t> ints_;     // int16/int32/int64 keys, widened
  std::unordered_map<double, int64_t> floats_;    // float/double keys, widened exactly
  int64_t nan_at_ = -1;
};

Tensor Vector1D(const std::vector<std::string>& v) { return Tensor::FromVector<std::string>({static_cast<int64_t>(v.size())}, v); }
Tensor Vector1D(const std::vector<int64_t>& v) { return Tensor::FromVector<int64_t>({static_cast<int64_t>(v.size())}, v); }
Tensor Vector1D(const std::vector<float>& v) { return Tensor::FromVector<float>({static_cast<int64_t>(v.size())}, v); }

// The default for a values type when no default attribute applies (opset 4 rules).
Tensor DefaultFor(DataType dtype) {
  switch (dtype) {
    case DataType::kString: return Tensor::FromVector<std::string>({1}, {"_Unused"});
    case DataType::kFloat: return Tensor::FromVector<float>({1}, {-0.0f});
    case DataType::kDouble: return Tensor::FromVector<double>({1}, {-0.0});
    case DataType::kInt32: return Tensor::FromVector<int32_t>({1}, {-1});
    case DataType::kInt16: return Tensor::FromVector<int16_t>({1}, {-1});
    default: return Tensor::FromVector<int64_t>({1}, {-1});
  }
}

// Reads the one keys_* (or values_*) attribute that is set.
Result<Tensor> ReadList(const KernelInfo& info, const std::string& prefix, bool allow_tensor) {
  std::vector<Tensor> found;
  if (info.has_attribute(prefix + "strings")) found.push_back(Vector1D(info.GetStrings(prefix + "strings")));
  if (info.has_attribute(prefix + "int64s")) found.push_back(Vector1D(info.GetInts(prefix + "int64s")));
  if (info.has_attribute(prefix + "floats")) found.push_back(Vector1D(info.GetFloats(prefix + "floats")));
  if (allow_tensor && info.has_attribute(prefix + "tensor")) {
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor t, info.GetTensor(prefix + "tensor"));
    if (t.rank() != 1) return InvalidArgument(prefix + "tensor must be 1-D, got " + ShapeToString(t.shape()));
    found.push_back(std::move(t));
  }
  if (found.size() != 1) {
    return InvalidArgument("exactly one of the " + prefix + "* attributes must be set, got " + std::to_string(found.size()));
  }
  return std::move(found[0]);
}

class LabelEncoder final : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    std::unique_ptr<LabelEncoder> k(new LabelEncoder());
    if (info.opset() < 2) {
      const std::vector<std::string> classes = info.GetStrings("classes_strings");
      std::vector<int64_t> positions(classes.size());
      for (size_t i = 0; i < classes.size(); ++i) positions[i] = static_cast<int64_t>(i);
      ONNXFLOW_ASSIGN_OR_RETURN(Table to_int, Table::Build(Vector1D(classes), Vector1D(positions),
                                                           Vector1D(std::vector<int64_t>{info.GetInt("default_int64", -1)})));
      ONNXFLOW_ASSIGN_OR_RETURN(Table to_string, Table::Build(Vector1D(positions), Vector1D(classes),
                                                              Vector1D(std::vector<std::string>{info.GetString("default_string", "_Unused")})));
      k->tables_.push_back(std::move(to_int));
      k->tables_.push_back(std::move(to_string));
      return std::unique_ptr<OpKernel>(std::move(k));
    }
    const bool tensors = info.opset() >= 4;
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor keys, ReadList(info, "keys_", tensors));
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor values, ReadList(info, "values_", tensors));
    Tensor fallback;
    if (tensors && info.has_attribute("default_tensor")) {
      ONNXFLOW_ASSIGN_OR_RETURN(fallback, info.GetTensor("default_tensor"));
    } else {
      switch (values.dtype()) {
        case DataType::kString: fallback = Vector1D(std::vector<std::string>{info.GetString("default_string", "_Unused")}); break;
        case DataType::kInt64: fallback = Vector1D(std::vector<int64_t>{info.GetInt("default_int64", -1)}); break;
        case DataType::kFloat: fallback = Vector1D(std::vector<float>{info.GetFloat("default_float", -0.0f)}); break;
        default: fallback = DefaultFor(values.dtype()); break;
      }
    }
    ONNXFLOW_ASSIGN_OR_RETURN(Table table, Table::Build(std::move(keys), std::move(values), std::move(fallback)));
    k->tables_.push_back(std::move(table));
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    for (const Table& table : tables_) {
      if (table.key_type() != x->dtype()) continue;
      ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.Allocate(0, table.value_type(), x->shape()));
      return table.Map(ctx, *x, y);
    }
    std::string expected;
    for (const Table& table : tables_) expected += std::string(expected.empty() ? "" : " or ") + DataTypeName(table.key_type());
    return InvalidArgument(std::string("input X is ") + DataTypeName(x->dtype()) + ", the keys are " + expected);
  }

 private:
  LabelEncoder() = default;
  std::vector<Table> tables_;  // opset 1 has two (string -> int64 and int64 -> string)
};

// CategoryMapper-1: cats_strings[i] <-> cats_int64s[i]; string input -> int64 (default_int64),
// int64 input -> string (default_string). The same two tables as LabelEncoder-1.
class CategoryMapper final : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    std::unique_ptr<CategoryMapper> k(new CategoryMapper());
    const std::vector<std::string> strings = info.GetStrings("cats_strings");
    const std::vector<int64_t> ints = info.GetInts("cats_int64s");
    if (strings.size() != ints.size()) {
      return InvalidArgument("cats_strings and cats_int64s must have the same length, got " + std::to_string(strings.size()) +
                             " and " + std::to_string(ints.size()));
    }
    ONNXFLOW_ASSIGN_OR_RETURN(Table to_int, Table::Build(Vector1D(strings), Vector1D(ints),
                                                         Vector1D(std::vector<int64_t>{info.GetInt("default_int64", -1)})));
    ONNXFLOW_ASSIGN_OR_RETURN(Table to_string, Table::Build(Vector1D(ints), Vector1D(strings),
                                                            Vector1D(std::vector<std::string>{info.GetString("default_string", "_Unused")})));
    k->to_int_ = std::make_unique<Table>(std::move(to_int));
    k->to_string_ = std::make_unique<Table>(std::move(to_string));
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    const Table* table = x->dtype() == DataType::kString ? to_int_.get()
                         : x->dtype() == DataType::kInt64 ? to_string_.get()
                                                          : nullptr;
    if (table == nullptr) return InvalidArgument(std::string("X must be string or int64, got ") + DataTypeName(x->dtype()));
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.Allocate(0, table->value_type(), x->shape()));
    return table->Map(ctx, *x, y);
  }

 private:
  CategoryMapper() = default;
  std::unique_ptr<Table> to_int_, to_string_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterCategoryMapper(KernelRegistry& registry) {
  return registry.Register(kMlDomain, "CategoryMapper", 1, kOpenEnded, Make<CategoryMapper>());
}

ONNXFLOW_REGISTRAR Status RegisterLabelEncoder(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kMlDomain, "LabelEncoder", 1, 1, Make<LabelEncoder>()));
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kMlDomain, "LabelEncoder", 2, 3, Make<LabelEncoder>()));
  return registry.Register(kMlDomain, "LabelEncoder", 4, kOpenEnded, Make<LabelEncoder>());
}

}  // namespace onnxflow
