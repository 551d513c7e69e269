#include "graph/blocked_layout.h"

#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "graph/channel_scale_fusion.h"
#include "graph/rewrite.h"
#include "ops/activation/elementwise_chain.h"
#include "ops/blocked/blocked_conv.h"
#include "ops/blocked/blocked_conv_transpose.h"
#include "ops/blocked/blocked_group_norm.h"
#include "ops/blocked/blocked_layout.h"
#include "ops/blocked/blocked_pad.h"
#include "ops/blocked/reorder.h"
#include "ops/framework/domains.h"
#include "ops/framework/internal_ops.h"
#include "ops/framework/node_attributes.h"
#include "ops/framework/registry.h"
#include "ops/image/resize_bilinear.h"
#include "ops/image/resize_tables.h"

namespace onnxflow::graph {
namespace {

// What a node becomes in the blocked region.
enum class Role {
  kPlain,       // stays as it is, reading plain values
  kConv,        // Conv / FusedConv -> BlockedConv
  kDepthwise,   // a depthwise Conv / FusedConv on a blocked value (or a large window's) -> BlockedDepthwiseConv
  kPool,        // MaxPool / AveragePool / the global pools -> Blocked*
  kNormalize,   // inference BatchNormalization with constant parameters -> BlockedBatchNormalization
  kGroupNorm,   // GroupNormalization / InstanceNormalization, constant parameters -> BlockedGroupNormalization
  kLayoutFree,  // elementwise, Concat over channels: the same op on blocked values
  kSplit,       // Split over channels in whole blocks: Split of the blocks, axis 1 of the 5-D tensor
  kResize,      // Resize of the spatial axes, nearest or bilinear -> BlockedResize
  kShape,       // Shape of a blocked value -> BlockedShape (its output is not blocked)
  kConvTranspose,  // a 2-D ConvTranspose of group 1 -> BlockedConvTranspose
  kPad,         // Pad of the spatial axes of a blocked value -> BlockedPad
};

// The weights of a float 2-D Conv / FusedConv of one output whose weights (and bias) are
// constants, the ones a blocked convolution packs at load; null for any other node.
const Tensor* ConstantConvWeights(const Graph& g, const Node& node) {
  if (!IsOp(node, "Conv") && !IsInternal(node, internal_ops::kFusedConv)) return nullptr;
  const auto& n = *node.proto;
  if (n.output_size() != 1 || !IsFloatProduct(g, node)) return nullptr;
  const Tensor* w = WeightConstant(g, n, 1);
  // An empty kernel stays plain, whose Conv refuses it with the node named.
  if (w == nullptr || w->rank() != 4 || w->dim(2) == 0 || w->dim(3) == 0) return nullptr;
  if (HasInput(n, 2) && FloatConstant(g, n, 2) == nullptr) return nullptr;
  return w;
}

// Whether a grouped Conv BlockedConv can run (BlockedConvRunsGroups) is faster there. Its tiles
// of one group of 16 output channels wait on a broadcast per multiply-add, and groups narrower
// than a block multiply zeros, so a stride-1 convolution of narrow groups runs faster plain (the
// image read in place with the pixels in the lanes) even with the reorders around it; a strided
// one, or groups of whole blocks, faster blocked. ResNeXt-50 32x4d, one core, plain -> blocked:
// 3x3 stride 2 in groups of 8 on 28x28 1.21 -> 0.55 ms, stride 1 in groups of 32 on 7x7 1.08 ->
// 0.24; but stride 1 in groups of 4 on 56x56 0.32 -> 0.89, of 16 on 14x14 0.30 -> 0.51.
bool GroupedConvRunsBlocked(const onnx::NodeProto& n, const Tensor& w) {
  const int64_t group = IntAttr(n, "group", 1);
  if (group == 1) return true;
  if (!BlockedConvRunsGroups(group, w.shape())) return false;
  const auto* strides = Attr(n, "strides");
  const bool strided = strides != nullptr && std::any_of(strides->ints().begin(), strides->ints().end(),
                                                          [](int64_t s) { return s > 1; });
  return strided || w.dim(1) >= 2 * kChannelBlock;
}

// A float 2-D Conv of group 1, or of groups BlockedConv runs faster (GroupedConvRunsBlocked:
// ResNeXt's, RegNet's), with constant weights (and bias) and at least a block of output channels
// (fewer would be mostly pad lanes).
bool ConvertsConv(const Graph& g, const Node& node) {
  const Tensor* w = ConstantConvWeights(g, node);
  if (w == nullptr || w->dim(0) < kChannelBlock || w->dim(1) == 0) return false;
  return GroupedConvRunsBlocked(*node.proto, *w);
}

// The input channels of a Conv with weights `w`: W's C / group, times the groups.
int64_t ConvInputChannels(const onnx::NodeProto& n, const Tensor& w) { return w.dim(1) * IntAttr(n, "group", 1); }

// Blocked values by name, with their channel count (pad lanes not counted).
using BlockedValues = std::map<std::string, int64_t>;

// A float 2-D ConvTranspose of group 1 with constant float weights [C, M, kh, kw] (and bias), at
// least a block of output channels, and attributes BlockedConvTranspose runs (strides of 1 to 64,
// positive dilations, one value per spatial axis): an up-sampling network's layers, which would
// otherwise leave the blocked layout and come back at each (a reorder either side, and the plain
// kernel's column buffer). Its X, when blocked, must have W's C channels.
bool ConvertsConvTranspose(const Graph& g, const Node& node, const BlockedValues& blocked) {
  if (!IsOp(node, "ConvTranspose")) return false;
  const auto& n = *node.proto;
  if (n.output_size() != 1 || n.input_size() < 2 || !IsFloatProduct(g, node)) return false;
  const Tensor* w = FloatConstant(g, n, 1);
  if (w == nullptr || w->rank() != 4 || w->dim(0) == 0 || w->dim(1) < kChannelBlock || w->dim(2) == 0 ||
      w->dim(3) == 0) {
    return false;
  }
  if (HasInput(n, 2)) {
    const Tensor* b = FloatConstant(g, n, 2);
    if (b == nullptr || b->size() != w->dim(1)) return false;
  }
  if (IntAttr(n, "group", 1) != 1) return false;
  auto ints = [&](const char* name) {
    const auto* a = Attr(n, name);
    return a != nullptr ? std::vector<int64_t>(a->ints().begin(), a->ints().end()) : std::vector<int64_t>{};
  };
  const std::vector<int64_t> strides = ints("strides"), dilations = ints("dilations"), kernel = ints("kernel_shape");
  if (!strides.empty() && (strides.size() != 2 || strides[0] < 1 || strides[1] < 1 || strides[0] > 64 || strides[1] > 64)) {
    return false;
  }
  if (!dilations.empty() && (dilations.size() != 2 || dilations[0] < 1 || dilations[1] < 1)) return false;
  if (!kernel.empty() && kernel != std::vector<int64_t>{w->dim(2), w->dim(3)}) return false;
  auto in = blocked.find(n.input(0));
  return in == blocked.end() || in->second == w->dim(0);
}

// The spec of a Pad (opset 2 on) of a blocked value's spatial axes only, BlockedPad's: constant
// (of a finite value: it fills the pad lanes too), reflect or edge mode; pads a constant, none
// negative, none on N or C; no axes input. Nothing for any other node.
std::optional<BlockedPadSpec> PadSpecOf(const Graph& g, const Node& node) {
  const auto& n = *node.proto;
  if (!IsOp(node, "Pad") || node.opset < 2 || n.output_size() != 1 || n.input_size() < 1) return std::nullopt;
  BlockedPadSpec spec;
  const auto* mode = Attr(n, "mode");
  if (!BlockedPadSpec::ModeOf(mode != nullptr ? mode->s() : "constant", &spec.mode)) return std::nullopt;
  std::vector<int64_t> pads;
  if (node.opset >= 11) {
    if (!HasInput(n, 1) || HasInput(n, 3)) return std::nullopt;
    pads = Int64Constant(g, n.input(1));
    if (HasInput(n, 2) && !FloatScalar(g, n, 2, &spec.value)) return std::nullopt;
  } else {
    const auto* attr = Attr(n, "pads");
    if (attr == nullptr) return std::nullopt;
    pads.assign(attr->ints().begin(), attr->ints().end());
    if (const auto* value = Attr(n, "value"); value != nullptr) spec.value = value->f();
  }
  if (pads.size() != 8 || pads[0] != 0 || pads[1] != 0 || pads[4] != 0 || pads[5] != 0) return std::nullopt;
  if (pads[2] < 0 || pads[3] < 0 || pads[6] < 0 || pads[7] < 0 || !std::isfinite(spec.value)) return std::nullopt;
  if (spec.mode != BlockedPadSpec::Mode::kConstant) spec.value = 0.0f;
  spec.top = pads[2];
  spec.left = pads[3];
  spec.bottom = pads[6];
  spec.right = pads[7];
  return spec;
}

// The window (taps) from which a depthwise convolution of a plain value runs blocked all the same:
// ConvNeXt's 7x7 (measured below; smaller windows were not).
inline constexpr int64_t kPlainInputDepthwiseTaps = 49;

// A float 2-D depthwise Conv (group = C = M) with constant weights (and bias) and no residual,
// reading a blocked value of its C channels: MobileNet's layers between two pointwise convolutions,
// which would otherwise cost a reorder out of the blocked layout and one back in each; or reading
// a plain value, with a window of kPlainInputDepthwiseTaps or more over whole blocks of channels.
bool ConvertsDepthwise(const Graph& g, const Node& node, const BlockedValues& blocked) {
  const Tensor* w = ConstantConvWeights(g, node);
  const auto& n = *node.proto;
  if (w == nullptr || n.input_size() > 3) return false;
  const auto* group = Attr(n, "group");
  if (group == nullptr || w->dim(1) != 1 || w->dim(0) != group->i()) return false;
  auto in = blocked.find(n.input(0));
  if (in != blocked.end()) return in->second == w->dim(0);
  // A plain input: worth a reorder in and out for a large window of whole blocks (ConvNeXt's 7x7,
  // read off its residual stream): over gen_vision.py's ConvNeXt at 1 thread the depthwise layers
  // and their reorders took 5.8-8.8 ms plain and 3.4-6.4 ms so (three alternated profiles).
  return w->dim(0) % kChannelBlock == 0 && w->dim(2) * w->dim(3) >= kPlainInputDepthwiseTaps;
}

// Inference BatchNormalization (version 9 on: per-channel parameters) whose parameters are float
// constants of the blocked input's C channels: the normalization before a pre-activation network's
// convolution, which cannot fold into that convolution's weights (a Relu sits between them).
bool ConvertsBatchNorm(const Graph& g, const Node& node, int64_t channels) {
  if (!IsOp(node, "BatchNormalization") || node.opset < 9) return false;
  const auto& n = *node.proto;
  if (const auto* t = Attr(n, "training_mode"); t != nullptr && t->i() != 0) return false;
  if (n.input_size() != 5) return false;
  for (int i = 1; i < 5; ++i) {
    const Tensor* p = FloatConstant(g, n, i);
    if (p == nullptr || p->rank() != 1 || p->size() != channels) return false;
  }
  return true;
}

// The groups of GroupNormalization (18 on) or InstanceNormalization (6 on, a group per channel) of
// a blocked value of `channels` channels whose scale and B are float constants, one per channel
// (one per group for GroupNormalization 18 to 20); 0 for any other node. Stable Diffusion's U-Net
// and VAE normalize the input of nearly every convolution so (torch.onnx's export of it,
// Reshape -> InstanceNormalization -> Reshape, is read as GroupNormalization first:
// FuseGroupNormExport); plain, each cost a reorder out of the blocked layout and one back in.
int64_t NormalizedGroups(const Graph& g, const Node& node, int64_t channels) {
  const auto& n = *node.proto;
  const bool instance = IsOp(node, "InstanceNormalization") && node.opset >= 6;
  if ((!instance && !(IsOp(node, "GroupNormalization") && node.opset >= 18)) || n.input_size() != 3 ||
      n.output_size() != 1) {
    return 0;
  }
  int64_t groups = channels;
  if (!instance) {
    const auto* attr = Attr(n, "num_groups");
    if (attr == nullptr || attr->i() <= 0 || channels % attr->i() != 0) return 0;
    groups = attr->i();
  }
  const int64_t params = instance || node.opset >= 21 ? channels : groups;
  for (int i = 1; i < 3; ++i) {
    const Tensor* p = FloatConstant(g, n, i);
    if (p == nullptr || p->rank() != 1 || p->size() != params) return 0;
  }
  return groups;
}

// A Mul or Add of a blocked value by a constant per channel (a BatchNormalization's affine part, as
// Caffe2 exports it after each of DenseNet's normalizations; a convolution before it has taken it
// already, graph/fusion.cc). A blocked value is an image, of rank 4, so the constant's broadcast
// is known. Returns which input is the blocked one, or -1.
int ChannelAffineInput(const Graph& g, const Node& node, const BlockedValues& blocked) {
  const auto& n = *node.proto;
  if ((!IsOp(node, "Mul") && !IsOp(node, "Add")) || node.opset < 7 || n.input_size() != 2) return -1;
  for (int i = 0; i < 2; ++i) {
    auto x = blocked.find(n.input(i));
    const Tensor* constant = FloatConstant(g, n, 1 - i);
    if (x != blocked.end() && constant != nullptr && !PerChannelValues(*constant, 4, x->second).empty()) return i;
  }
  return -1;
}

// A PRelu (opset 7 on: numpy broadcasting) of a blocked value by slopes constant per channel ([C,
// 1, 1], [1, C, 1, 1] or one number). It runs as the BlockedBatchNormalization x * 1 + 0 with
// those slopes (ConvertPRelu): IR-ResNet face models (insightface's ArcFace) put one after each
// convolution, and each left the blocked layout and came back (ArcFace-R50: 26 reorders each way,
// about 6 ms of a 56 ms run on one core).
bool PerChannelPRelu(const Graph& g, const Node& node, const BlockedValues& blocked) {
  const auto& n = *node.proto;
  if (!IsOp(node, "PRelu") || node.opset < 7 || n.input_size() != 2 || n.output_size() != 1) return false;
  auto x = blocked.find(n.input(0));
  const Tensor* slope = FloatConstant(g, n, 1);
  return x != blocked.end() && slope != nullptr && !PerChannelValues(*slope, 4, x->second).empty();
}

// Makes `bn`, a BatchNormalization (or BlockedBatchNormalization) reading X as input 0, compute
// x * scale + shift exactly: (x - 0) / sqrt(1 + 0) * scale + shift. Its parameters become new
// constants, named by `fresh_name` from `base` and a suffix.
template <class FreshName>
void SetScaleShift(Patch* patch, onnx::NodeProto* bn, const std::string& base, const std::vector<float>& scale,
                   const std::vector<float>& shift, const FreshName& fresh_name) {
  const std::vector<float> zeros(scale.size(), 0.0f), ones(scale.size(), 1.0f);
  while (bn->input_size() < 5) bn->add_input("");
  int input = 1;
  for (const auto& [suffix, values] :
       {std::pair{"/scale", &scale}, {"/shift", &shift}, {"/mean", &zeros}, {"/var", &ones}}) {
    const std::string name = fresh_name(base + suffix);
    patch->constants.emplace_back(name, Tensor::FromVector<float>({static_cast<int64_t>(values->size())}, *values));
    bn->set_input(input++, name);
  }
  SetFloatAttr(bn, "epsilon", 0.0f);
}

// Ops that compute the same thing on [N, C/16, H, W, 16] as on [N, C, H, W] when every input
// that is not blocked is a constant scalar: elementwise ops (numpy broadcasting of blocked
// operands of one layout is the same broadcast).
bool IsElementwise(const Node& node) {
  static const std::set<std::string> kOps = {"Relu", "LeakyRelu", "Sigmoid", "Tanh", "HardSigmoid", "HardSwish", "Clip",
                                             "Identity", "Add", "Sub", "Mul", "Div", "Sum", "Max", "Min"};
  if (IsInternal(node, internal_ops::kElementwiseChain)) return true;
  // ONNX Runtime's saved activations of one input (QuickGelu of an alpha other than 1, which no
  // epilogue takes, left a ToBlocked and a FromBlocked around each of them).
  if (node.domain == kMsDomain) {
    const std::string& op = node.op_type();
    return (op == "QuickGelu" || op == "Gelu" || op == "FastGelu") && node.proto->input_size() == 1;
  }
  if (!node.domain.empty() || kOps.count(node.op_type()) == 0) return false;
  return node.op_type() != "Add" && node.op_type() != "Sub" && node.op_type() != "Mul" && node.op_type() != "Div"
             ? true
             : node.opset >= 7;  // older ones broadcast by attribute
}

// The elementwise ops that keep pad lanes finite (Div could make 0/0), so a following convolution's
// zero weights still cancel them.
bool KeepsPadFinite(const Node& node) {
  return node.domain.empty() && node.op_type() != "Div";
}

bool IsScalarConstant(const Graph& g, const std::string& name) {
  auto c = g.constants.find(name);
  return c != g.constants.end() && c->second.size() == 1;
}

bool Padded(const BlockedValues& blocked, const std::string& v) {
  auto it = blocked.find(v);
  return it != blocked.end() && it->second % kChannelBlock != 0;
}

// The value a Cast chain (at most two Casts) ends at, from `v` back.
std::string ThroughCasts(const Graph& g, std::string v) {
  for (int k = 0; k < 2; ++k) {
    const Id p = g.nodes.Producer(v);
    if (p == kNone || !IsOp(g.nodes[p], "Cast")) break;
    v = g.nodes[p].proto->input(0);
  }
  return v;
}

// Whether `sizes` provably keeps X's N and C: a constant whose C is `channels` (N is checked as
// it runs), or Concat(Slice(Shape(X), 0, 2), ...) as PyTorch exports interpolate(x, size=...).
bool SizesKeepBatchAndChannels(const Graph& g, const std::string& sizes, const std::string& x, int64_t channels) {
  if (auto c = g.constants.find(sizes); c != g.constants.end()) {
    const Tensor& t = c->second;
    return t.dtype() == DataType::kInt64 && t.size() == 4 && t.data<int64_t>()[1] == channels;
  }
  const Id concat = g.nodes.Producer(sizes);
  if (concat == kNone || !IsOp(g.nodes[concat], "Concat") || g.nodes[concat].proto->input_size() < 1) return false;
  const Id slice = g.nodes.Producer(g.nodes[concat].proto->input(0));
  if (slice == kNone || !IsOp(g.nodes[slice], "Slice") || g.nodes[slice].opset < 10) return false;
  const auto& sl = *g.nodes[slice].proto;
  auto one_value = [&](int input, int64_t want) {
    auto c = input < sl.input_size() ? g.constants.find(sl.input(input)) : g.constants.end();
    return c != g.constants.end() && c->second.dtype() == DataType::kInt64 && c->second.size() == 1 &&
           c->second.data<int64_t>()[0] == want;
  };
  if (!one_value(1, 0) || !one_value(2, 2) || (HasInput(sl, 3) && !one_value(3, 0)) ||
      (HasInput(sl, 4) && !one_value(4, 1))) {
    return false;
  }
  const Id shape = g.nodes.Producer(sl.input(0));
  if (shape == kNone || !IsOp(g.nodes[shape], "Shape") || Attr(*g.nodes[shape].proto, "start") != nullptr) return false;
  return ThroughCasts(g, g.nodes[shape].proto->input(0)) == ThroughCasts(g, x);
}

// A Resize (opset 11 on) of a blocked value's spatial axes only, that BlockedResize runs bit for
// bit as Resize would: nearest, or linear with ONNX Runtime's bilinear arithmetic; no axes,
// antialias or aspect policy; scales a constant [1, 1, h, w] or sizes that keep N and C.
bool ResizesBlocked(const Graph& g, const Node& node, const BlockedValues& blocked) {
  const auto& n = *node.proto;
  if (!IsOp(node, "Resize") || node.opset < 11 || n.output_size() != 1) return false;
  for (const char* unsupported : {"axes", "antialias", "keep_aspect_ratio_policy", "exclude_outside"}) {
    const auto* a = Attr(n, unsupported);
    if (a != nullptr && !(a->type() == onnx::AttributeProto::INT && a->i() == 0) &&
        !(a->type() == onnx::AttributeProto::STRING && a->s() == "stretch")) {
      return false;
    }
  }
  auto string_attr = [&](const char* name, const char* fallback) {
    const auto* a = Attr(n, name);
    return a != nullptr ? a->s() : std::string(fallback);
  };
  const auto mode = image::ParseResizeMode(string_attr("mode", "nearest"));
  const auto coordinate = image::ParseCoordinateMode(string_attr("coordinate_transformation_mode", "half_pixel"));
  if (!mode.ok() || !coordinate.ok() || *coordinate == image::CoordinateMode::kTfCropAndResize) return false;
  if (*mode == image::ResizeMode::kLinear) {
    // align_corners from scales: ONNX Runtime divides by the output length, the spec by the
    // fractional one, so the plain kernel leaves that case to its separable passes.
    if (!image::BilinearCoordinateSupported(*coordinate) ||
        (*coordinate == image::CoordinateMode::kAlignCorners && !HasInput(n, 3))) {
      return false;
    }
  } else if (*mode != image::ResizeMode::kNearest) {
    return false;
  }
  const int64_t channels = blocked.at(n.input(0));
  if (HasInput(n, 3)) return !HasInput(n, 2) && SizesKeepBatchAndChannels(g, n.input(3), n.input(0), channels);
  if (!HasInput(n, 2)) return false;
  auto scales = g.constants.find(n.input(2));
  if (scales == g.constants.end() || scales->second.dtype() != DataType::kFloat || scales->second.size() != 4) {
    return false;
  }
  const float* s = scales->second.data<float>();
  return s[0] == 1.0f && s[1] == 1.0f;
}

// The channels of each output of Split `node` over the channels of a blocked value, when each is
// a whole number of blocks (YOLOv8's C2f halves: 16 + 16 to 128 + 128), so that splitting the
// blocks splits the channels; empty otherwise. The sizes: a constant `split` input (opset 13 on),
// the attribute before it, or equal parts.
std::vector<int64_t> SplitChannels(const Graph& g, const Node& node, const BlockedValues& blocked) {
  const auto& n = *node.proto;
  if (!IsOp(node, "Split") || n.input_size() < 1 || blocked.count(n.input(0)) == 0) return {};
  const auto* axis = Attr(n, "axis");
  if (axis == nullptr || (axis->i() != 1 && axis->i() != -3)) return {};  // axis 0 by default
  const int64_t channels = blocked.at(n.input(0));
  std::vector<int64_t> sizes;
  if (HasInput(n, 1)) {
    auto c = g.constants.find(n.input(1));
    if (c == g.constants.end() || c->second.dtype() != DataType::kInt64) return {};
    sizes.assign(c->second.data<int64_t>(), c->second.data<int64_t>() + c->second.size());
  } else if (const auto* split = Attr(n, "split"); split != nullptr && node.opset < 13) {
    sizes.assign(split->ints().begin(), split->ints().end());
  } else if (channels % n.output_size() == 0) {
    sizes.assign(static_cast<size_t>(n.output_size()), channels / n.output_size());
  }
  int64_t sum = 0;
  for (int64_t c : sizes) {
    // At most `channels` each, so that the sum cannot wrap around to `channels` (sizes near 2^62).
    if (c <= 0 || c > channels || c % kChannelBlock != 0) return {};
    sum += c;
  }
  if (sizes.size() != static_cast<size_t>(n.output_size()) || sum != channels) return {};
  return sizes;
}

// Whether the blocked values a convertible Conv reads (X, and the residual Z of a FusedConv) have the
// channels its W says. A blocked value keeps its channel count only here, in the pass: the blocked
// tensor rounds it up to whole blocks, so a model whose X or Z lies about its channels by less than
// a block would run on the zero pad lanes instead of being refused. Such a Conv stays plain.
bool BlockedOperandsFit(const Graph& g, const Node& node, const BlockedValues& blocked) {
  const auto& n = *node.proto;
  const Tensor* w = WeightConstant(g, n, 1);
  for (const auto& [input, channels] : {std::pair<int, int64_t>{0, ConvInputChannels(n, *w)}, {3, w->dim(0)}}) {
    if (input >= n.input_size()) continue;
    auto it = blocked.find(n.input(input));
    if (it != blocked.end() && it->second != channels) return false;
  }
  return true;
}

Role RoleOf(const Graph& g, const Node& node, const BlockedValues& blocked) {
  if (ConvertsConv(g, node) && BlockedOperandsFit(g, node, blocked)) return Role::kConv;
  if (ConvertsDepthwise(g, node, blocked)) return Role::kDepthwise;
  if (ConvertsConvTranspose(g, node, blocked)) return Role::kConvTranspose;
  const auto& n = *node.proto;
  // Inference Dropout is the identity; its mask, when nobody reads it, does not matter.
  if (IsOp(node, "Dropout") && n.input_size() == 1 && blocked.count(n.input(0)) != 0 &&
      (n.output_size() == 1 || g.nodes.ReadCount(n.output(1)) == 0)) {
    return Role::kLayoutFree;
  }
  if (!SplitChannels(g, node, blocked).empty()) return Role::kSplit;
  // An Identity that hands a blocked value to the graph's outputs reads the plain copy other plain
  // readers need too: run blocked, it made a second copy (a float16 ISNet's Cast to float of each
  // decoder feature it returns, beside the one its side convolution reads: 64 MB each at 512 x 512).
  if (IsOp(node, "Identity") && n.output_size() == 1 && g.nodes.IsOutput(n.output(0))) return Role::kPlain;
  if (n.input_size() == 0 || n.output_size() != 1 || !node.subgraphs.empty()) return Role::kPlain;
  if (ChannelAffineInput(g, node, blocked) >= 0 || PerChannelPRelu(g, node, blocked)) return Role::kNormalize;
  if (blocked.count(n.input(0)) == 0) return Role::kPlain;
  if (IsOp(node, "Shape")) return Role::kShape;
  if (IsOp(node, "Cast")) {  // to float, a blocked value's type: the identity (a half model's, around a Resize)
    const auto* to = Attr(n, "to");
    return to != nullptr && to->i() == onnx::TensorProto::FLOAT ? Role::kLayoutFree : Role::kPlain;
  }
  if (ResizesBlocked(g, node, blocked)) return Role::kResize;
  if (PadSpecOf(g, node)) return Role::kPad;
  if (IsOp(node, "MaxPool") || IsOp(node, "AveragePool")) {
    const auto* kernel = Attr(n, "kernel_shape");
    return kernel != nullptr && kernel->ints_size() == 2 ? Role::kPool : Role::kPlain;
  }
  if (IsOp(node, "GlobalAveragePool") || IsOp(node, "GlobalMaxPool")) return Role::kPool;
  if (ConvertsBatchNorm(g, node, blocked.at(n.input(0)))) return Role::kNormalize;
  if (NormalizedGroups(g, node, blocked.at(n.input(0))) > 0) return Role::kGroupNorm;
  if (IsOp(node, "Concat")) {
    const auto* axis = Attr(n, "axis");
    if (axis == nullptr || (axis->i() != 1 && axis->i() != -3)) return Role::kPlain;
    for (const auto& in : n.input()) {  // pad lanes would land between channels
      if (blocked.count(in) == 0 || Padded(blocked, in)) return Role::kPlain;
    }
    return Role::kLayoutFree;
  }
  if (!IsElementwise(node)) return Role::kPlain;
  for (const auto& in : n.input()) {
    if (in.empty() || IsScalarConstant(g, in)) continue;
    auto it = blocked.find(in);
    if (it == blocked.end() || it->second != blocked.at(n.input(0))) return Role::kPlain;
    if (Padded(blocked, in) && !KeepsPadFinite(node)) return Role::kPlain;
  }
  return Role::kLayoutFree;
}

// The channels of a converted node's output.
int64_t OutputChannels(const Graph& g, const Node& node, Role role, const BlockedValues& blocked) {
  if (role == Role::kConv || role == Role::kDepthwise) return WeightConstant(g, *node.proto, 1)->dim(0);
  if (role == Role::kConvTranspose) return WeightConstant(g, *node.proto, 1)->dim(1);
  if (IsOp(node, "Concat")) {
    int64_t sum = 0;
    for (const auto& in : node.proto->input()) sum += blocked.at(in);
    return sum;
  }
  for (const auto& in : node.proto->input()) {  // the first blocked operand (a constant may come first)
    if (auto it = blocked.find(in); it != blocked.end()) return it->second;
  }
  return 0;  // not reached: a converted node reads a blocked value
}

std::shared_ptr<onnx::NodeProto> Reorder(const char* op, const std::string& from, const std::string& to,
                                         int64_t channels = 0) {
  auto node = std::make_shared<onnx::NodeProto>();
  FromBlockedSpec{channels}.WriteTo(*node);  // FromBlocked: the channels to keep; ToBlocked: to expect
  node->set_op_type(op);
  node->set_domain(kOnnxflowDomain);
  node->set_name(std::string(op) + "(" + from + ")");
  node->add_input(from);
  node->add_output(to);
  return node;
}

// The layout of the whole graph at once: which nodes run blocked depends on what runs blocked
// before them, so the pass decides every node's role in order and writes one patch, checked as a
// whole (a patch per node would leave the graph half converted between them).
class LayoutPass {
 public:
  explicit LayoutPass(Graph* g) : g_(g), names_(*g) {}

  Status Run() {
    std::vector<Id> order = g_->nodes.Order();
    std::vector<Role> roles;
    BlockedValues blocked;  // values produced in the blocked layout
    for (Id id : order) {
      const Node& node = g_->nodes[id];
      roles.push_back(RoleOf(*g_, node, blocked));
      if (roles.back() == Role::kSplit) {
        const std::vector<int64_t> sizes = SplitChannels(*g_, node, blocked);
        for (size_t k = 0; k < sizes.size(); ++k) blocked[node.proto->output(static_cast<int>(k))] = sizes[k];
      } else if (roles.back() != Role::kPlain && roles.back() != Role::kShape) {
        blocked[node.proto->output(0)] = OutputChannels(*g_, node, roles.back(), blocked);
      }
    }
    // Which blocked values plain readers (nodes, subgraphs, the graph's outputs) still need.
    std::set<std::string> read_plain;
    for (size_t i = 0; i < order.size(); ++i) {
      const Node& node = g_->nodes[order[i]];
      if (roles[i] != Role::kPlain) continue;  // converted nodes read X (and Z) blocked; W and B are constants
      for (const auto& v : node.proto->input()) read_plain.insert(v);
      for (const auto& v : node.implicit_inputs) read_plain.insert(v);
    }
    for (const auto& out : g_->outputs) read_plain.insert(out.name);

    for (size_t i = 0; i < order.size(); ++i) {
      if (roles[i] == Role::kPlain) continue;
      const Id id = order[i];
      const Node& node = g_->nodes[id];
      patch_.replaced.push_back(id);
      if (roles[i] == Role::kShape) {  // reads the blocked value; writes the same int64 shape
        patch_.AddAt(BlockedShapeNode(node, blocked), id);
        continue;
      }
      auto proto = std::make_shared<onnx::NodeProto>(*node.proto);
      for (int k = 0; k < proto->input_size(); ++k) {
        const std::string& v = proto->input(k);
        const bool weights =
            roles[i] == Role::kConv || roles[i] == Role::kDepthwise || roles[i] == Role::kConvTranspose;
        if (v.empty() || (weights && (k == 1 || k == 2))) continue;
        if (blocked.count(v) != 0) {
          proto->set_input(k, BlockedName(v));
        } else if (roles[i] == Role::kConv && !(k == 0 && IsStem(node))) {
          const Tensor* w = WeightConstant(*g_, *node.proto, 1);
          proto->set_input(k, ToBlocked(v, id, k == 0 ? ConvInputChannels(*node.proto, *w) : w->dim(0)));
        } else if ((roles[i] == Role::kDepthwise || roles[i] == Role::kConvTranspose) && k == 0) {
          // A large window's plain input; a ConvTranspose's plain input of W's C channels.
          proto->set_input(k, ToBlocked(v, id, WeightConstant(*g_, *node.proto, 1)->dim(0)));
        }
      }
      if (roles[i] == Role::kSplit) ConvertSplit(node, proto.get(), blocked);
      Convert(node, proto.get(), roles[i], blocked);
      std::vector<std::string> outs;
      for (int k = 0; k < proto->output_size(); ++k) {
        outs.push_back(proto->output(k));
        if (!outs.back().empty()) proto->set_output(k, BlockedName(outs.back()));
      }
      Node converted = WithProto(node, std::move(proto));
      if (roles[i] != Role::kLayoutFree && roles[i] != Role::kSplit) {
        converted.domain = kOnnxflowDomain;
        converted.opset = internal_ops::kVersion;
      }
      patch_.AddAt(std::move(converted), id);
      for (const std::string& out : outs) {
        if (out.empty() || read_plain.count(out) == 0) continue;
        patch_.AddAt(ReorderNode(Reorder(internal_ops::kFromBlocked, BlockedName(out), out, blocked.at(out))), id);
      }
    }
    if (patch_.replaced.empty()) return Status::Ok();
    ONNXFLOW_RETURN_IF_ERROR(ApplyPatch(g_, std::move(patch_), "UseBlockedLayout"));
    return CheckAcyclic(*g_, "UseBlockedLayout");
  }

 private:
  bool IsStem(const Node& node) const {
    return ConvInputChannels(*node.proto, *WeightConstant(*g_, *node.proto, 1)) < kChannelBlock;
  }

  // Shape `node` of a blocked value as BlockedShape, with the value's channels and Shape's range.
  Node BlockedShapeNode(const Node& node, const BlockedValues& blocked) {
    auto proto = std::make_shared<onnx::NodeProto>(*node.proto);
    proto->set_input(0, BlockedName(node.proto->input(0)));
    proto->set_op_type(internal_ops::kBlockedShape);
    proto->set_domain(kOnnxflowDomain);
    SetIntAttr(proto.get(), "channels", blocked.at(node.proto->input(0)));
    Node converted = WithProto(node, std::move(proto));
    converted.domain = kOnnxflowDomain;
    converted.opset = internal_ops::kVersion;
    return converted;
  }

  // The op a converted node becomes, with the attributes its blocked kernel reads.
  void Convert(const Node& node, onnx::NodeProto* proto, Role role, const BlockedValues& blocked) {
    if (role == Role::kResize) {  // inputs (X, roi, scales, sizes) -> (X, scales, sizes)
      const std::string x = proto->input(0);
      const std::string scales = HasInput(*proto, 2) ? proto->input(2) : "";
      const std::string sizes = HasInput(*proto, 3) ? proto->input(3) : "";
      proto->clear_input();
      for (const std::string& v : {x, scales, sizes}) proto->add_input(v);
      SetIntAttr(proto, "channels", blocked.at(node.proto->input(0)));
      proto->set_op_type(internal_ops::kBlockedResize);
      proto->set_domain(kOnnxflowDomain);
      return;
    }
    if (role == Role::kGroupNorm) {
      ConvertGroupNorm(node, proto, blocked);
      return;
    }
    if (role == Role::kConvTranspose) {
      proto->set_op_type(internal_ops::kBlockedConvTranspose);
      proto->set_domain(kOnnxflowDomain);
      return;
    }
    if (role == Role::kPad) {  // X alone; the pads, mode and value as BlockedPad's attributes
      const BlockedPadSpec spec = *PadSpecOf(*g_, node);
      const std::string x = proto->input(0);
      proto->clear_input();
      proto->add_input(x);
      RemoveAttribute(*proto, "pads");
      RemoveAttribute(*proto, "value");
      spec.WriteTo(*proto);
      proto->set_op_type(internal_ops::kBlockedPad);
      proto->set_domain(kOnnxflowDomain);
      return;
    }
    if (role == Role::kNormalize && IsOp(node, "PRelu")) {
      ConvertPRelu(node, proto, blocked);
    } else if (role == Role::kNormalize && !IsOp(node, "BatchNormalization")) {
      ConvertChannelAffine(node, proto, blocked);
    }
    if (role == Role::kConv) {
      proto->set_op_type(internal_ops::kBlockedConv);
    } else if (role == Role::kDepthwise) {
      proto->set_op_type(internal_ops::kBlockedDepthwiseConv);
    } else if (role == Role::kPool || role == Role::kNormalize) {
      static const std::map<std::string, const char*> kBlockedOf = {
          {"MaxPool", internal_ops::kBlockedMaxPool},
          {"AveragePool", internal_ops::kBlockedAveragePool},
          {"GlobalMaxPool", internal_ops::kBlockedGlobalMaxPool},
          {"GlobalAveragePool", internal_ops::kBlockedGlobalAveragePool},
          {"BatchNormalization", internal_ops::kBlockedBatchNormalization}};
      proto->set_op_type(kBlockedOf.at(proto->op_type()));
    } else {  // the same op, on 5-D tensors
      if (node.op_type() == "Concat") {
        for (auto& a : *proto->mutable_attribute()) {
          if (a.name() == "axis") a.set_i(1);  // blocks are axis 1 of the 5-D tensor
        }
      }
      return;
    }
    proto->set_domain(kOnnxflowDomain);
  }

  // Split over channels (SplitChannels) as the Split of the 5-D tensor's blocks: axis 1, sizes in
  // blocks as a new constant input (the op's opset takes them as an input from 13 on, else as the
  // attribute).
  void ConvertSplit(const Node& node, onnx::NodeProto* proto, const BlockedValues& blocked) {
    std::vector<int64_t> blocks = SplitChannels(*g_, node, blocked);
    for (int64_t& b : blocks) b /= kChannelBlock;
    SetIntAttr(proto, "axis", 1);
    RemoveAttribute(*proto, "num_outputs");
    if (node.opset >= 13) {
      const std::string name = names_.Fresh(node.proto->output(0) + "/block_split");
      patch_.constants.emplace_back(name, Tensor::FromVector<int64_t>({static_cast<int64_t>(blocks.size())}, blocks));
      while (proto->input_size() < 2) proto->add_input("");
      proto->set_input(1, name);
    } else {
      SetAttribute(*proto, "split", blocks);
    }
  }

  // GroupNormalization / InstanceNormalization (NormalizedGroups) as BlockedGroupNormalization: its
  // groups as num_groups, and scale and B one per channel (GroupNormalization 18's per-group ones
  // repeated over each group's channels, as new constants).
  void ConvertGroupNorm(const Node& node, onnx::NodeProto* proto, const BlockedValues& blocked) {
    const int64_t channels = blocked.at(node.proto->input(0));
    const int64_t groups = NormalizedGroups(*g_, node, channels);
    for (int i = 1; i < 3; ++i) {
      const Tensor& param = *FloatConstant(*g_, *node.proto, i);
      if (param.size() == channels) continue;
      std::vector<float> per_channel(static_cast<size_t>(channels));
      for (int64_t c = 0; c < channels; ++c) per_channel[static_cast<size_t>(c)] = param.data<float>()[c / (channels / groups)];
      const std::string name = names_.Fresh(node.proto->output(0) + (i == 1 ? "/scale" : "/bias"));
      patch_.constants.emplace_back(name, Tensor::FromVector<float>({channels}, per_channel));
      proto->set_input(i, name);
    }
    SetIntAttr(proto, "num_groups", groups);
    RemoveAttribute(*proto, "stash_type");  // the blocked kernel computes in float, GroupNormalization 21's default
    proto->set_op_type(internal_ops::kBlockedGroupNormalization);
    proto->set_domain(kOnnxflowDomain);
  }

  // A per-channel Mul or Add (ChannelAffineInput) as the BlockedBatchNormalization that computes
  // exactly the same: x * s + 0, or x * 1 + b.
  void ConvertChannelAffine(const Node& node, onnx::NodeProto* proto, const BlockedValues& blocked) {
    const int x = ChannelAffineInput(*g_, node, blocked);
    const int64_t channels = blocked.at(node.proto->input(x));
    const std::vector<float> values = PerChannelValues(g_->constants.at(node.proto->input(1 - x)), 4, channels);
    const std::vector<float> ones(values.size(), 1.0f), zeros(values.size(), 0.0f);
    const bool mul = node.op_type() == "Mul";
    const std::string blocked_x = proto->input(x);
    proto->clear_input();
    proto->add_input(blocked_x);
    SetScaleShift(&patch_, proto, node.proto->output(0), mul ? values : ones, mul ? zeros : values,
                  [this](const std::string& name) { return names_.Fresh(name); });
    proto->set_op_type("BatchNormalization");  // made Blocked below
  }

  // A per-channel PRelu (PerChannelPRelu) as the BlockedBatchNormalization x * 1 + 0 with its
  // slopes, one per channel, as input 5.
  void ConvertPRelu(const Node& node, onnx::NodeProto* proto, const BlockedValues& blocked) {
    const int64_t channels = blocked.at(node.proto->input(0));
    const std::vector<float> slopes = PerChannelValues(g_->constants.at(node.proto->input(1)), 4, channels);
    const std::vector<float> ones(slopes.size(), 1.0f), zeros(slopes.size(), 0.0f);
    SetScaleShift(&patch_, proto, node.proto->output(0), ones, zeros,
                  [this](const std::string& name) { return names_.Fresh(name); });
    const std::string name = names_.Fresh(node.proto->output(0) + "/slope");
    patch_.constants.emplace_back(name, Tensor::FromVector<float>({channels}, slopes));
    proto->add_input(name);
    proto->set_op_type("BatchNormalization");  // made Blocked below
  }

  // The blocked copy of a value with the `channels` its reader expects (ToBlocked refuses any other
  // count at run time: the blocked copy itself would not show a difference of less than a block),
  // made once per count before its first blocked reader `at`.
  std::string ToBlocked(const std::string& v, Id at, int64_t channels) {
    const std::string key = v + "\n" + std::to_string(channels);
    auto it = to_blocked_.find(key);
    if (it != to_blocked_.end()) return it->second;
    const std::string name = Fresh(v + "/blocked");
    patch_.AddAt(ReorderNode(Reorder(internal_ops::kToBlocked, v, name, channels)), at);
    to_blocked_[key] = name;
    return name;
  }

  std::string BlockedName(const std::string& v) {
    auto it = blocked_names_.find(v);
    if (it != blocked_names_.end()) return it->second;
    const std::string name = blocked_names_[v] = Fresh(v + "/blocked");
    if (g_->declared_half.count(v)) g_->declared_half.insert(name);  // the same values, blocked
    return name;
  }

  // A fresh name for a blocked value: float, as every value the blocked kernels write.
  std::string Fresh(const std::string& base) {
    const std::string name = names_.Fresh(base);
    patch_.types.emplace_back(name, DataType::kFloat);
    return name;
  }

  static Node ReorderNode(std::shared_ptr<onnx::NodeProto> proto) {
    Node n;
    n.proto = std::move(proto);
    n.domain = kOnnxflowDomain;
    n.opset = internal_ops::kVersion;
    return n;
  }

  Graph* g_;
  NameSet names_;
  Patch patch_;
  std::map<std::string, std::string> to_blocked_, blocked_names_;
};

}  // namespace

// A channel Concat of BlockedConv outputs that only it reads (SqueezeNet's and Inception's
// modules): the convolutions write their blocks straight into the joined tensor, the first
// allocating it and each passing it to the next as INTO, and the Concat (a copy of every byte it
// joins) goes. The chain adds no cycle: the Concat was the only reader of each convolution, so
// nothing else depends on one; and it follows the node order, which stays topological.
std::optional<Patch> JoinConcatsIntoConvs(Rewriter& r, Id ci) {
  const Graph& g = r.graph();
  const Node& concat = r[ci];
  const auto& c = *concat.proto;
  if (!IsOp(concat, "Concat") || c.input_size() < 2 || c.output_size() != 1) return std::nullopt;
  const auto* axis = Attr(c, "axis");
  if (axis == nullptr || axis->i() != 1) return std::nullopt;
  std::vector<Id> producers;
  std::vector<int64_t> blocks;
  for (const auto& in : c.input()) {
    const Id p = SoleReaderProducer(g, in);
    if (p == kNone) return std::nullopt;
    const Node& conv = r[p];
    const Tensor* w = WeightConstant(g, *conv.proto, 1);
    if (!IsInternal(conv, internal_ops::kBlockedConv) || conv.proto->input_size() > 4 ||
        BlockedConvSpec::Parse(KernelInfo(*conv.proto, conv.opset, {}, {}, {})).joined() || w == nullptr ||
        w->dim(0) % kChannelBlock != 0) {
      return std::nullopt;
    }
    producers.push_back(p);
    blocks.push_back(w->dim(0) / kChannelBlock);
  }
  int64_t total = 0;
  for (int64_t b : blocks) total += b;
  int64_t offset = 0;
  Patch patch;
  for (size_t k = 0; k < producers.size(); ++k) {
    auto conv = std::make_shared<onnx::NodeProto>(*r[producers[k]].proto);
    BlockedConvSpec{total, offset}.WriteTo(*conv);
    offset += blocks[k];
    if (k > 0) {
      while (conv->input_size() < 4) conv->add_input("");
      conv->add_input(c.input(static_cast<int>(k) - 1));
    }
    if (k + 1 == producers.size()) conv->set_output(0, c.output(0));
    patch.replaced.push_back(producers[k]);
    patch.AddAt(WithProto(r[producers[k]], std::move(conv)), producers[k]);
  }
  patch.replaced.push_back(ci);
  return patch;
}

namespace {

// The per-channel map y = x * scale + shift of a BlockedBatchNormalization's constant parameters,
// computed as its kernel computes it.
void NormalizationAffine(const Graph& g, const onnx::NodeProto& n, std::vector<double>* scale,
                         std::vector<double>* shift) {
  const double epsilon = Attr(n, "epsilon") != nullptr ? Attr(n, "epsilon")->f() : 1e-5;
  const float* s = FloatConstant(g, n, 1)->data<float>();
  const float* b = FloatConstant(g, n, 2)->data<float>();
  const float* mean = FloatConstant(g, n, 3)->data<float>();
  const float* var = FloatConstant(g, n, 4)->data<float>();
  const int64_t channels = FloatConstant(g, n, 1)->size();
  scale->resize(static_cast<size_t>(channels));
  shift->resize(scale->size());
  for (int64_t c = 0; c < channels; ++c) {
    (*scale)[c] = static_cast<float>(s[c] / std::sqrt(static_cast<double>(var[c]) + epsilon));
    (*shift)[c] = b[c] - mean[c] * (*scale)[c];
  }
}

// Whether BlockedBatchNormalization `n` applies a PRelu's slopes after its affine map
// (ConvertPRelu): then it is no affine map, for the merges below.
bool HasSlope(const Node& n) { return n.proto->input_size() > 5 && !n.proto->input(5).empty(); }

}  // namespace

// Two BlockedBatchNormalizations in a row, the first's only reader the second (a normalization
// followed by a per-channel Mul and Add, ChannelAffineInput), are one: x * (s1 s2) + (b1 s2 + b2).
std::optional<Patch> MergeNormalizations(Rewriter& r, Id index) {
  const Graph& g = r.graph();
  const Node& second = r[index];
  if (!IsInternal(second, internal_ops::kBlockedBatchNormalization)) return std::nullopt;
  const Id p = SoleProducer(g, second);
  if (p == kNone) return std::nullopt;
  const Node& first = r[p];
  if (!IsInternal(first, internal_ops::kBlockedBatchNormalization) || HasEpilogue(first) || HasSlope(first)) {
    return std::nullopt;
  }
  std::vector<double> s1, b1, s2, b2;
  NormalizationAffine(g, *first.proto, &s1, &b1);
  NormalizationAffine(g, *second.proto, &s2, &b2);
  if (s1.size() != s2.size()) return std::nullopt;
  std::vector<float> scale(s1.size()), shift(s1.size());
  for (size_t c = 0; c < s1.size(); ++c) {
    scale[c] = static_cast<float>(s1[c] * s2[c]);
    shift[c] = static_cast<float>(b1[c] * s2[c] + b2[c]);
  }
  auto merged = std::make_shared<onnx::NodeProto>(*second.proto);
  merged->set_input(0, first.proto->input(0));
  Patch patch{{p, index}, {}, {}};
  SetScaleShift(&patch, merged.get(), second.proto->output(0) + "/merged", scale, shift,
                [&r](const std::string& name) { return r.FreshName(name); });
  patch.added.push_back(WithProto(first, std::move(merged)));
  return patch;
}

// A BlockedGroupNormalization whose only reader is a BlockedBatchNormalization (the per-channel
// Mul and Add after torch.onnx's GroupNorm, or after GroupNormalization 18, whose own scale and B
// are per group) is one with scale * s and B * s + b, taking the second's activation if it has one.
std::optional<Patch> MergeAffineIntoGroupNorm(Rewriter& r, Id index) {
  const Graph& g = r.graph();
  const Node& affine = r[index];
  if (!IsInternal(affine, internal_ops::kBlockedBatchNormalization) || HasSlope(affine)) return std::nullopt;
  const Id p = SoleProducer(g, affine);
  if (p == kNone) return std::nullopt;
  const Node& norm = r[p];
  if (!IsInternal(norm, internal_ops::kBlockedGroupNormalization) || HasEpilogue(norm)) return std::nullopt;
  std::vector<double> s, b;
  NormalizationAffine(g, *affine.proto, &s, &b);
  const Tensor* scale = FloatConstant(g, *norm.proto, 1);
  const Tensor* bias = FloatConstant(g, *norm.proto, 2);
  if (scale == nullptr || bias == nullptr || scale->size() != static_cast<int64_t>(s.size())) return std::nullopt;
  std::vector<float> new_scale(s.size()), new_bias(s.size());
  for (size_t c = 0; c < s.size(); ++c) {
    new_scale[c] = static_cast<float>(scale->data<float>()[c] * s[c]);
    new_bias[c] = static_cast<float>(bias->data<float>()[c] * s[c] + b[c]);
  }
  auto merged = std::make_shared<onnx::NodeProto>(*norm.proto);
  merged->set_output(0, affine.proto->output(0));
  const Result<FusedActivationSpec> activation = FusedActivationSpec::Parse(KernelInfo(*affine.proto, affine.opset, {}, {}, {}));
  if (!activation.ok()) return std::nullopt;
  activation->WriteTo(*merged);
  Patch patch{{p, index}, {}, {}};
  const int64_t channels = static_cast<int64_t>(s.size());
  for (const auto& [input, values] : {std::pair{1, &new_scale}, {2, &new_bias}}) {
    const std::string name = r.FreshName(affine.proto->output(0) + (input == 1 ? "/gn_scale" : "/gn_bias"));
    patch.constants.emplace_back(name, Tensor::FromVector<float>({channels}, *values));
    merged->set_input(input, name);
  }
  patch.added.push_back(WithProto(norm, std::move(merged)));
  return patch;
}

namespace {

// An ElementwiseChain of exactly Sigmoid then a Mul by the chain's input: SiLU, as the chain
// fusion (graph/chain_fusion.cc) writes x * Sigmoid(x) that no product took.
bool IsSiluChain(const Node& n) {
  if (!IsInternal(n, internal_ops::kElementwiseChain) || n.proto->input_size() != 1) return false;
  const Result<ChainSpec> chain = ChainSpec::Parse(KernelInfo(*n.proto, n.opset, {}, {}, {}));
  if (!chain.ok() || chain->steps.size() != 2 || chain->ops != std::vector<std::string>{"Sigmoid", "Mul"}) return false;
  const ChainOperand operand = chain->steps[1].operand;
  return chain->steps[1].kind == ChainStep::kBinary &&
         (operand == ChainOperand::kInputRight || operand == ChainOperand::kInputLeft);
}

bool IsBlockedNormalization(const Node& n) {
  return IsInternal(n, internal_ops::kBlockedBatchNormalization) ||
         IsInternal(n, internal_ops::kBlockedGroupNormalization);
}

}  // namespace

// A BlockedBatchNormalization or BlockedGroupNormalization whose only reader is an activation it
// can apply as it stores (a pre-activation network's Relu) takes it: one pass over the tensor
// instead of two. So does SiLU written out, Mul(x, Sigmoid(x)) with x read by those two alone, or
// the ElementwiseChain the fusions made of it (the GroupNorm -> SiLU before each of Stable
// Diffusion's convolutions).
std::optional<Patch> FuseNormalizeActivation(Rewriter& r, Id act_index) {
  const Graph& g = r.graph();
  const Node& act = r[act_index];
  const auto& a = *act.proto;
  FusedActivationSpec spec;
  std::vector<Id> replaced;
  Id p = kNone;
  if (a.output_size() == 1 && EpilogueOf(g, act, &spec)) {
    p = SoleProducer(g, act);
  } else if (IsSiluChain(act)) {
    p = SoleProducer(g, act);
    spec = FusedActivationSpec{{Activation::kSwish}};
  } else if (IsOp(act, "Mul") && act.opset >= 7 && a.input_size() == 2 && a.output_size() == 1) {
    for (int i = 0; i < 2 && p == kNone; ++i) {
      const Id sigmoid = SoleReaderProducer(g, a.input(i));
      if (sigmoid == kNone || !IsOp(r[sigmoid], "Sigmoid") || r[sigmoid].proto->input(0) != a.input(1 - i)) continue;
      p = ProducerReadBy(g, a.input(1 - i), 2);
      if (p != kNone) replaced.push_back(sigmoid);
    }
    spec = FusedActivationSpec{{Activation::kSwish}};
  }
  if (p == kNone) return std::nullopt;
  const Node& norm = r[p];
  if (!IsBlockedNormalization(norm) || HasEpilogue(norm)) return std::nullopt;
  auto node = std::make_shared<onnx::NodeProto>(*norm.proto);
  spec.WriteTo(*node);
  node->set_output(0, a.output(0));
  replaced.insert(replaced.begin(), {p, act_index});
  return Patch{replaced, {WithProto(norm, std::move(node))}, {}};
}

// A BlockedConvTranspose without an epilogue whose only reader is a BlockedBatchNormalization (a
// DCGAN generator's: torch.onnx folds BatchNorm into a Conv, not into a ConvTranspose) or an
// activation an epilogue computes takes it: the normalization into W (scaled per output channel,
// W's axis 1) and B, with its epilogue; the activation as its epilogue. One pass over the output
// instead of two or three.
std::optional<Patch> FuseIntoConvTranspose(Rewriter& r, Id index) {
  const Graph& g = r.graph();
  const Node& after = r[index];
  const bool normalization = IsInternal(after, internal_ops::kBlockedBatchNormalization);
  FusedActivationSpec spec;
  if (normalization && HasSlope(after)) return std::nullopt;
  if (!normalization && (after.proto->output_size() != 1 || !EpilogueOf(g, after, &spec))) return std::nullopt;
  const Id p = SoleProducer(g, after);
  if (p == kNone) return std::nullopt;
  const Node& conv = r[p];
  if (!IsInternal(conv, internal_ops::kBlockedConvTranspose) || HasEpilogue(conv)) return std::nullopt;
  auto fused = std::make_shared<onnx::NodeProto>(*conv.proto);
  fused->set_output(0, after.proto->output(0));
  Patch patch{{p, index}, {}, {}};
  if (normalization) {
    const Result<FusedActivationSpec> activation =
        FusedActivationSpec::Parse(KernelInfo(*after.proto, after.opset, {}, {}, {}));
    const Tensor* w = FloatConstant(g, *conv.proto, 1);
    if (!activation.ok() || w == nullptr || w->rank() != 4) return std::nullopt;
    std::vector<double> scale, shift;
    NormalizationAffine(g, *after.proto, &scale, &shift);
    const int64_t c_n = w->dim(0), m_n = w->dim(1), taps = w->dim(2) * w->dim(3);
    if (static_cast<int64_t>(scale.size()) != m_n) return std::nullopt;
    const Tensor* b = HasInput(*conv.proto, 2) ? FloatConstant(g, *conv.proto, 2) : nullptr;
    std::vector<float> new_w(static_cast<size_t>(w->size())), new_b(static_cast<size_t>(m_n));
    for (int64_t c = 0; c < c_n; ++c) {
      for (int64_t m = 0; m < m_n; ++m) {
        for (int64_t t = 0; t < taps; ++t) {
          const int64_t i = (c * m_n + m) * taps + t;
          new_w[static_cast<size_t>(i)] = static_cast<float>(w->data<float>()[i] * scale[m]);
        }
      }
    }
    for (int64_t m = 0; m < m_n; ++m) {
      new_b[static_cast<size_t>(m)] = static_cast<float>((b != nullptr ? b->data<float>()[m] : 0.0) * scale[m] + shift[m]);
    }
    const std::string base = after.proto->output(0);
    const std::string w_name = r.FreshName(base + "/folded_w"), b_name = r.FreshName(base + "/folded_b");
    patch.constants.emplace_back(w_name, Tensor::FromVector<float>(w->shape(), new_w));
    patch.constants.emplace_back(b_name, Tensor::FromVector<float>({m_n}, new_b));
    fused->set_input(1, w_name);
    while (fused->input_size() < 3) fused->add_input("");
    fused->set_input(2, b_name);
    spec = *activation;
  }
  spec.WriteTo(*fused);
  patch.added.push_back(WithProto(conv, std::move(fused)));
  return patch;
}

// torch.onnx's export of GroupNorm(G, C):
//   Reshape(x, [0, G, -1]) -> InstanceNormalization(scale [G], B [G]) -> Reshape(., Shape(x))
// is GroupNormalization 18 of x (per-group scale and B, as the instance norm applies them), which
// the blocked layout then runs on blocked values. The Reshapes must read and write only this chain.
std::optional<Patch> FuseGroupNormExport(Rewriter& r, Id index) {
  const Graph& g = r.graph();
  const Node& norm = r[index];
  const auto& n = *norm.proto;
  if (!IsOp(norm, "InstanceNormalization") || norm.opset < 6 || n.input_size() != 3 || n.output_size() != 1) {
    return std::nullopt;
  }
  auto is_reshape = [&](Id id) {
    if (id == kNone || !IsOp(r[id], "Reshape") || r[id].opset < 5 || r[id].proto->input_size() != 2) return false;
    const auto* allowzero = Attr(*r[id].proto, "allowzero");
    return allowzero == nullptr || allowzero->i() == 0;
  };
  const Id split = SoleReaderProducer(g, n.input(0));
  if (!is_reshape(split)) return std::nullopt;
  const auto& sp = *r[split].proto;
  auto shape = g.constants.find(sp.input(1));
  if (shape == g.constants.end() || shape->second.dtype() != DataType::kInt64 || shape->second.size() != 3) {
    return std::nullopt;
  }
  const int64_t* dims = shape->second.data<int64_t>();
  const int64_t groups = dims[1];
  if (dims[0] != 0 || groups <= 0 || dims[2] != -1) return std::nullopt;
  for (int i = 1; i < 3; ++i) {
    const Tensor* param = FloatConstant(g, n, i);
    if (param == nullptr || param->rank() != 1 || param->size() != groups) return std::nullopt;
  }
  const Id back = SoleReader(g, n.output(0));
  if (!is_reshape(back) || r[back].proto->input(0) != n.output(0)) return std::nullopt;
  const Id shape_of = g.nodes.Producer(r[back].proto->input(1));
  if (shape_of == kNone || !IsOp(r[shape_of], "Shape") || r[shape_of].proto->input(0) != sp.input(0) ||
      Attr(*r[shape_of].proto, "start") != nullptr || Attr(*r[shape_of].proto, "end") != nullptr) {
    return std::nullopt;
  }
  auto gn = std::make_shared<onnx::NodeProto>(n);
  gn->set_op_type("GroupNormalization");
  gn->set_input(0, sp.input(0));
  gn->set_output(0, r[back].proto->output(0));
  SetIntAttr(gn.get(), "num_groups", groups);
  if (Attr(n, "epsilon") == nullptr) SetFloatAttr(gn.get(), "epsilon", 1e-5f);  // InstanceNormalization's default
  Node fused = WithProto(norm, std::move(gn));
  fused.opset = 18;  // the version whose scale and B are per group
  return Patch{{split, index, back}, {std::move(fused)}, {}};
}

Status UseBlockedLayout(Graph* g) {
  ONNXFLOW_RETURN_IF_ERROR(RunRule(g, "FuseGroupNormExport", FuseGroupNormExport));
  ONNXFLOW_RETURN_IF_ERROR(LayoutPass(g).Run());
  ONNXFLOW_RETURN_IF_ERROR(RunRule(g, "JoinConcatsIntoConvs", JoinConcatsIntoConvs));
  ONNXFLOW_RETURN_IF_ERROR(RunRule(g, "MergeNormalizations", MergeNormalizations));
  ONNXFLOW_RETURN_IF_ERROR(RunRule(g, "MergeAffineIntoGroupNorm", MergeAffineIntoGroupNorm));
  ONNXFLOW_RETURN_IF_ERROR(RunRule(g, "FuseNormalizeActivation", FuseNormalizeActivation));
  ONNXFLOW_RETURN_IF_ERROR(RunRule(g, "FuseIntoConvTranspose", FuseIntoConvTranspose));
  ONNXFLOW_RETURN_IF_ERROR(RunRule(g, "FuseChannelScaleIntoConv", FuseChannelScaleIntoConv));
  for (const Node& node : g->nodes) {
    for (const auto& [name, sub] : node.subgraphs) ONNXFLOW_RETURN_IF_ERROR(UseBlockedLayout(sub.get()));
  }
  return Status::Ok();
}

}  // namespace onnxflow::graph
