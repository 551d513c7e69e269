// Value restrictions the ONNX spec states in its prose rather than in the attribute types, one
// rule per line of the spec it comes from (docs/Operators.md). The attributes are known to be of
// their schema's type here.
#include <algorithm>
#include <functional>
#include <initializer_list>
#include <unordered_map>

#include "graph/schema/schema.h"

namespace onnxflow::graph::schema {
namespace {

// The attribute's value, or null when absent or a function body's reference (bound when inlined).
const onnx::AttributeProto* Find(const onnx::NodeProto& node, const char* name) {
  for (const auto& a : node.attribute()) {
    if (a.name() == name) return a.ref_attr_name().empty() ? &a : nullptr;
  }
  return nullptr;
}

std::string List(const google::protobuf::RepeatedField<int64_t>& values) {
  std::string s = "[";
  for (int i = 0; i < values.size(); ++i) s += (i ? ", " : "") + std::to_string(values[i]);
  return s + "]";
}

struct Rules {
  const onnx::NodeProto& node;
  const std::string& who;

  Status Fail(const char* attribute, const std::string& what) const {
    return InvalidArgument(who + ": attribute '" + attribute + "' " + what);
  }
  // Every value of an INT or INTS attribute within [low, high].
  Status IntsWithin(const char* name, int64_t low, int64_t high, const char* meaning = nullptr) const {
    const auto* a = Find(node, name);
    if (a == nullptr) return Status::Ok();
    auto check = [&](int64_t v) -> Status {
      if (v >= low && v <= high) return Status::Ok();
      const std::string allowed = meaning != nullptr ? std::string(meaning)
                                  : high == INT64_MAX ? "at least " + std::to_string(low)
                                                      : "between " + std::to_string(low) + " and " + std::to_string(high);
      return Fail(name, "must be " + allowed + " (got " + std::to_string(v) + ")");
    };
    if (a->type() == onnx::AttributeProto::INTS) {
      for (int64_t v : a->ints()) ONNXFLOW_RETURN_IF_ERROR(check(v));
      return Status::Ok();
    }
    return check(a->i());
  }
  Status Flag(const char* name) const { return IntsWithin(name, 0, 1, "0 or 1"); }
  Status OneOf(const char* name, std::initializer_list<const char*> allowed) const {
    const auto* a = Find(node, name);
    if (a == nullptr) return Status::Ok();
    std::string list;
    for (const char* v : allowed) {
      if (a->s() == v) return Status::Ok();
      list += (list.empty() ? "" : ", ") + std::string(v);
    }
    return Fail(name, "must be one of " + list + " (got '" + a->s() + "')");
  }
  Status DataType(const char* name) const {
    const auto* a = Find(node, name);
    if (a == nullptr) return Status::Ok();
    if (a->i() >= 1 && a->i() <= 26 && a->i() != onnx::TensorProto::UNDEFINED) return Status::Ok();
    return Fail(name, "is not a tensor element type (got " + std::to_string(a->i()) + ")");
  }
  // Convolutions and pools: the window's attributes.
  Status Window() const {
    ONNXFLOW_RETURN_IF_ERROR(OneOf("auto_pad", {"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"}));
    ONNXFLOW_RETURN_IF_ERROR(IntsWithin("kernel_shape", 1, INT64_MAX));
    ONNXFLOW_RETURN_IF_ERROR(IntsWithin("strides", 1, INT64_MAX));
    ONNXFLOW_RETURN_IF_ERROR(IntsWithin("dilations", 1, INT64_MAX));
    ONNXFLOW_RETURN_IF_ERROR(IntsWithin("pads", 0, INT64_MAX));
    ONNXFLOW_RETURN_IF_ERROR(IntsWithin("group", 1, INT64_MAX));
    return Status::Ok();
  }
};

using Rule = std::function<Status(const Rules&)>;

const std::unordered_map<std::string, Rule>& DefaultDomainRules() {
  static const auto* const rules = new std::unordered_map<std::string, Rule>{
      // Scan: "scan_input_directions ... 0 indicates forward direction and 1 indicates reverse".
      {"Scan", [](const Rules& r) -> Status {
         ONNXFLOW_RETURN_IF_ERROR(r.IntsWithin("scan_input_directions", 0, 1, "0 (forward) or 1 (reverse)"));
         ONNXFLOW_RETURN_IF_ERROR(r.IntsWithin("scan_output_directions", 0, 1, "0 (forward) or 1 (reverse)"));
         ONNXFLOW_RETURN_IF_ERROR(r.IntsWithin("num_scan_inputs", 1, INT64_MAX));
         const auto* n = Find(r.node, "num_scan_inputs");
         if (n != nullptr && n->i() > r.node.input_size()) {
           return r.Fail("num_scan_inputs", "is " + std::to_string(n->i()) + " but the node has only " +
                                                std::to_string(r.node.input_size()) + " inputs");
         }
         return Status::Ok();
       }},
      // Split-18: "Either input 'split' or the attribute 'num_outputs' should be specified, but
      // not both"; num_outputs is the number of outputs.
      {"Split", [](const Rules& r) -> Status {
         const auto* n = Find(r.node, "num_outputs");
         if (n == nullptr) return Status::Ok();
         ONNXFLOW_RETURN_IF_ERROR(r.IntsWithin("num_outputs", 1, INT64_MAX));
         if (r.node.input_size() > 1 && !r.node.input(1).empty()) {
           return r.Fail("num_outputs", "and input 'split' are both given (the spec allows one)");
         }
         if (n->i() != r.node.output_size()) {
           return r.Fail("num_outputs", "is " + std::to_string(n->i()) + " but the node has " +
                                            std::to_string(r.node.output_size()) + " outputs");
         }
         return Status::Ok();
       }},
      // ConvTranspose: "output_padding ... must be less than either stride or dilation".
      {"ConvTranspose", [](const Rules& r) -> Status {
         ONNXFLOW_RETURN_IF_ERROR(r.Window());
         const auto* padding = Find(r.node, "output_padding");
         if (padding == nullptr) return Status::Ok();
         const auto* strides = Find(r.node, "strides");
         const auto* dilations = Find(r.node, "dilations");
         for (int i = 0; i < padding->ints_size(); ++i) {
           const int64_t p = padding->ints(i);
           const int64_t s = strides != nullptr && i < strides->ints_size() ? strides->ints(i) : 1;
           const int64_t d = dilations != nullptr && i < dilations->ints_size() ? dilations->ints(i) : 1;
           if (p < 0 || (p >= s && p >= d)) {
             return r.Fail("output_padding", List(padding->ints()) + " must be non-negative and smaller than the stride " +
                                                 std::to_string(s) + " or the dilation " + std::to_string(d) +
                                                 " of axis " + std::to_string(i));
           }
         }
         return Status::Ok();
       }},
      {"Conv", [](const Rules& r) { return r.Window(); }},
      {"ConvInteger", [](const Rules& r) { return r.Window(); }},
      {"QLinearConv", [](const Rules& r) { return r.Window(); }},
      {"DeformConv", [](const Rules& r) { return r.Window(); }},
      {"AveragePool", [](const Rules& r) -> Status {
         ONNXFLOW_RETURN_IF_ERROR(r.Window());
         ONNXFLOW_RETURN_IF_ERROR(r.Flag("ceil_mode"));
         return r.Flag("count_include_pad");
       }},
      {"MaxPool", [](const Rules& r) -> Status {
         ONNXFLOW_RETURN_IF_ERROR(r.Window());
         ONNXFLOW_RETURN_IF_ERROR(r.Flag("ceil_mode"));
         return r.Flag("storage_order");
       }},
      {"LpPool", [](const Rules& r) -> Status {
         ONNXFLOW_RETURN_IF_ERROR(r.Window());
         return r.Flag("ceil_mode");
       }},
      {"Cast", [](const Rules& r) -> Status {
         ONNXFLOW_RETURN_IF_ERROR(r.DataType("to"));
         return r.Flag("saturate");
       }},
      {"CastLike", [](const Rules& r) { return r.Flag("saturate"); }},
      {"EyeLike", [](const Rules& r) { return r.DataType("dtype"); }},
      {"RandomNormal", [](const Rules& r) { return r.DataType("dtype"); }},
      {"RandomUniform", [](const Rules& r) { return r.DataType("dtype"); }},
      {"RandomNormalLike", [](const Rules& r) { return r.DataType("dtype"); }},
      {"RandomUniformLike", [](const Rules& r) { return r.DataType("dtype"); }},
      {"TopK", [](const Rules& r) -> Status {
         ONNXFLOW_RETURN_IF_ERROR(r.Flag("largest"));
         return r.Flag("sorted");
       }},
      {"DepthToSpace", [](const Rules& r) -> Status {
         ONNXFLOW_RETURN_IF_ERROR(r.OneOf("mode", {"DCR", "CRD"}));
         return r.IntsWithin("blocksize", 1, INT64_MAX);
       }},
      {"SpaceToDepth", [](const Rules& r) { return r.IntsWithin("blocksize", 1, INT64_MAX); }},
      {"Pad", [](const Rules& r) { return r.OneOf("mode", {"constant", "reflect", "edge", "wrap"}); }},
      {"ScatterElements", [](const Rules& r) { return r.OneOf("reduction", {"none", "add", "mul", "max", "min"}); }},
      {"ScatterND", [](const Rules& r) { return r.OneOf("reduction", {"none", "add", "mul", "max", "min"}); }},
      {"GatherND", [](const Rules& r) { return r.IntsWithin("batch_dims", 0, INT64_MAX); }},
      {"Resize", [](const Rules& r) -> Status {
         ONNXFLOW_RETURN_IF_ERROR(r.OneOf("mode", {"nearest", "linear", "cubic"}));
         ONNXFLOW_RETURN_IF_ERROR(r.OneOf("coordinate_transformation_mode",
                                          {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
                                           "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize"}));
         ONNXFLOW_RETURN_IF_ERROR(r.OneOf("nearest_mode", {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}));
         ONNXFLOW_RETURN_IF_ERROR(r.OneOf("keep_aspect_ratio_policy", {"stretch", "not_larger", "not_smaller"}));
         return r.Flag("exclude_outside");
       }},
      {"GridSample", [](const Rules& r) -> Status {
         ONNXFLOW_RETURN_IF_ERROR(r.OneOf("mode", {"bilinear", "nearest", "bicubic", "linear", "cubic"}));
         ONNXFLOW_RETURN_IF_ERROR(r.OneOf("padding_mode", {"zeros", "border", "reflection"}));
         return r.Flag("align_corners");
       }},
      {"LSTM", [](const Rules& r) -> Status {
         ONNXFLOW_RETURN_IF_ERROR(r.OneOf("direction", {"forward", "reverse", "bidirectional"}));
         ONNXFLOW_RETURN_IF_ERROR(r.IntsWithin("hidden_size", 1, INT64_MAX));
         ONNXFLOW_RETURN_IF_ERROR(r.Flag("input_forget"));
         return r.Flag("layout");
       }},
      {"GRU", [](const Rules& r) -> Status {
         ONNXFLOW_RETURN_IF_ERROR(r.OneOf("direction", {"forward", "reverse", "bidirectional"}));
         ONNXFLOW_RETURN_IF_ERROR(r.IntsWithin("hidden_size", 1, INT64_MAX));
         ONNXFLOW_RETURN_IF_ERROR(r.Flag("linear_before_reset"));
         return r.Flag("layout");
       }},
      {"RNN", [](const Rules& r) -> Status {
         ONNXFLOW_RETURN_IF_ERROR(r.OneOf("direction", {"forward", "reverse", "bidirectional"}));
         ONNXFLOW_RETURN_IF_ERROR(r.IntsWithin("hidden_size", 1, INT64_MAX));
         return r.Flag("layout");
       }},
      // Constant: "Exactly one of the attributes must be specified".
      {"Constant", [](const Rules& r) -> Status {
         if (r.node.attribute_size() != 1) {
           return InvalidArgument(r.who + ": exactly one value attribute must be given (got " +
                                  std::to_string(r.node.attribute_size()) + ")");
         }
         return Status::Ok();
       }},
  };
  return *rules;
}

}  // namespace

Status CheckValues(const OpSchema& schema, const onnx::NodeProto& node, const std::string& who) {
  if (std::string(schema.domain) != "") return Status::Ok();
  const auto& rules = DefaultDomainRules();
  auto it = rules.find(schema.op);
  if (it == rules.end()) return Status::Ok();
  return it->second(Rules{node, who});
}

}  // namespace onnxflow::graph::schema
