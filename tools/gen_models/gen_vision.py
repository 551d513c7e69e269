#!/usr/bin/python3
"""Four vision network classes as PyTorch exports them, seeded random weights (BatchNormalization
already folded into each Conv), each written as a case folder OUT/model.onnx and
OUT/test_data_set_0/input_0.pb (expected outputs: tools/gen_models/ort_expected.js):

  * convnext: ConvNeXt as facebookresearch/ConvNeXt exports it (opset 17). Stem Conv 4x4 stride 4
    and each downsampling layer's Conv 2x2 stride 2 beside a channels_first LayerNorm written out
    (ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul, Add on axis 1); blocks of depthwise
    7x7 Conv -> Transpose(0, 2, 3, 1) -> LayerNormalization -> MatMul + Add -> GELU (Div, Erf,
    Add, Mul, Mul) -> MatMul + Add -> layer-scale Mul -> Transpose(0, 3, 1, 2) -> residual Add;
    head ReduceMean over H, W -> LayerNormalization -> Gemm. --width 96 --depths 3,3,9,3 is
    ConvNeXt-T; the default (64, 2,2,6,2) keeps its shape at about a third of its cost.
  * efficientnet: EfficientNet-B0 as torchvision exports it (opset 17): SiLU as x * Sigmoid(x),
    MBConv blocks (1x1 expand, depthwise 3x3 / 5x5, stride 2 in the first block of a stage,
    squeeze-excite GlobalAveragePool -> Conv -> SiLU -> Conv -> Sigmoid -> Mul, 1x1 project,
    residual Add), 1280-channel head, Gemm classifier.
  * unet: a small U-Net of Stable Diffusion's blocks (its VAE decoder's and UNet's, no time
    embedding): ResNet blocks GroupNorm -> SiLU -> Conv 3x3 -> GroupNorm -> SiLU -> Conv 3x3 (+ a
    1x1 Conv shortcut when the channels change) -> residual Add; stride-2 Conv downsampling; one
    single-head spatial attention at the lowest resolution (GroupNorm, Reshape to (1, C, HW),
    Transpose, q/k/v MatMul + Add, scores * C^-0.5, Softmax, out projection, back to (1, C, H, W),
    residual Add); nearest Resize x2 upsampling, each followed by a Conv 3x3, skip Concats.
    GroupNorm as --groupnorm: `instance` (opset 17, torch.onnx's export: Reshape(0, G, -1) ->
    InstanceNormalization(ones, zeros) -> Reshape(Shape(x)) -> Mul -> Add per channel), `op18`
    (GroupNormalization-18 of unit scale and zero bias, then Mul -> Add per channel) or `op21`
    (GroupNormalization-21, per-channel scale and bias). onnx 1.12 knows neither schema, so the
    op18 and op21 models are not passed through its checker.
  * resnext: ResNeXt-50 32x4d as torchvision exports it (opset 17): the class of grouped 3x3
    convolutions (32 groups of 4-32 channels, not depthwise). Stem Conv 7x7 stride 2 -> Relu ->
    MaxPool 3x3 stride 2; bottlenecks 1x1 -> Relu -> grouped 3x3 (stride 2 in a stage's first
    block) -> Relu -> 1x1, plus the input or a strided 1x1 projection, -> Relu; --depths (3,4,6,3)
    blocks per stage, --width 4 channels per group in the first stage; head GlobalAveragePool ->
    Flatten -> Gemm.
Their float16 forms (how Stable Diffusion's models ship): tools/gen_models/fp16_model.py.

usage: gen_vision.py convnext|efficientnet|unet|resnext OUT_DIR [--image N] [--width N] [--depths a,b,c,d]
                     [--groupnorm instance|op18|op21] [--seed 0]
"""
import argparse
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from graph_writer import NamedGraphWriter  # noqa: E402


class Net(NamedGraphWriter):
    """GraphWriter with unique names and the layers the three networks share."""

    def conv(self, x, c_in, c_out, k=1, s=1, group=1, gain=1.5, bias_std=0.05, pad=None):
        """Conv with a folded batch norm's bias; weights scaled by fan-in to keep the activations' scale."""
        p = self.name("conv")
        fan_in = c_in // group * k * k
        w = self.init(p + ".weight", (self.rng.standard_normal((c_out, c_in // group, k, k)) * (gain / np.sqrt(fan_in)))
                      .astype(np.float32))
        b = self.init(p + ".bias", (self.rng.standard_normal(c_out) * bias_std).astype(np.float32))
        pad = k // 2 if pad is None else pad
        return self.node("Conv", [x, w, b], [p + ".out"], kernel_shape=[k, k], strides=[s, s], pads=[pad] * 4,
                         group=group)

    def silu(self, x):
        return self.op("Mul", [x, self.op("Sigmoid", [x])], "silu")

    def dense(self, x, n_in, n_out, gain=1.0):
        """MatMul + Add (nn.Linear on the last axis), weights scaled by fan-in."""
        p = self.name("fc")
        w = self.init(p + ".weight", (self.rng.standard_normal((n_in, n_out)) * (gain / np.sqrt(n_in))).astype(np.float32))
        b = self.init(p + ".bias", (self.rng.standard_normal(n_out) * 0.02).astype(np.float32))
        return self.node("Add", [self.node("MatMul", [x, w], [p + ".mm"]), b], [p + ".out"])

    def gemm_head(self, x, c, classes=1000):
        p = self.name("head")
        w = self.init(p + ".weight", (self.rng.standard_normal((classes, c)) / np.sqrt(c)).astype(np.float32))
        b = self.init(p + ".bias", (self.rng.standard_normal(classes) * 0.02).astype(np.float32))
        return self.node("Gemm", [x, w, b], ["logits"], transB=1)

    def affine_params(self, c, shape):
        g = self.const("gamma", (1.0 + 0.1 * self.rng.standard_normal(c)).astype(np.float32).reshape(shape))
        b = self.const("beta", (0.1 * self.rng.standard_normal(c)).astype(np.float32).reshape(shape))
        return g, b


# ConvNeXt ----------------------------------------------------------------------------------------

def channels_first_ln(n, x, c, eps=1e-6):
    """facebookresearch/ConvNeXt's LayerNorm(data_format="channels_first"), as exported."""
    u = n.op("ReduceMean", [x], "ln_mean", axes=[1], keepdims=1)
    d = n.op("Sub", [x, u], "ln_sub")
    s = n.op("ReduceMean", [n.op("Pow", [d, n.const("two", np.array(2.0, np.float32))], "ln_pow")], "ln_var",
             axes=[1], keepdims=1)
    y = n.op("Div", [d, n.op("Sqrt", [n.op("Add", [s, n.const("eps", np.array(eps, np.float32))], "ln_add")],
                                     "ln_sqrt")], "ln_div")
    g, b = n.affine_params(c, (c, 1, 1))
    return n.op("Add", [n.op("Mul", [g, y], "ln_scale"), b], "ln_out")


def gelu(n, x):
    """nn.GELU() exported at opset 17: x * 0.5 * (1 + erf(x / sqrt(2)))."""
    e = n.op("Erf", [n.op("Div", [x, n.const("sqrt2", np.array(1.4142135, np.float32))], "gelu_div")])
    h = n.op("Mul", [x, n.op("Add", [e, n.const("one", np.array(1.0, np.float32))], "gelu_add")], "gelu_mul")
    return n.op("Mul", [h, n.const("half", np.array(0.5, np.float32))], "gelu")


def convnext_block(n, x, c):
    h = n.conv(x, c, c, 7, 1, group=c, gain=1.0)
    h = n.op("Transpose", [h], "to_nhwc", perm=[0, 2, 3, 1])
    h = n.layer_norm(h, n.name("ln"), c, 1e-6)
    h = gelu(n, n.dense(h, c, 4 * c))
    h = n.dense(h, 4 * c, c)
    h = n.op("Mul", [n.const("layer_scale", (0.1 + 0.02 * n.rng.standard_normal(c)).astype(np.float32)), h], "ls")
    h = n.op("Transpose", [h], "to_nchw", perm=[0, 3, 1, 2])
    return n.op("Add", [x, h], "res")


def convnext(n, a):
    dims = [a.width * m for m in (1, 2, 4, 8)]
    depths = [int(d) for d in a.depths.split(",")]
    x = channels_first_ln(n, n.conv("input", 3, dims[0], 4, 4, pad=0), dims[0])
    for stage, (c, depth) in enumerate(zip(dims, depths)):
        if stage > 0:
            x = n.conv(channels_first_ln(n, x, dims[stage - 1]), dims[stage - 1], c, 2, 2, pad=0)
        for _ in range(depth):
            x = convnext_block(n, x, c)
    x = n.op("ReduceMean", [x], "pool", axes=[2, 3], keepdims=0)
    x = n.layer_norm(x, "head_ln", dims[-1], 1e-6)
    return n.gemm_head(x, dims[-1]), 17


# EfficientNet-B0 -----------------------------------------------------------------------------------

def mbconv(n, x, c_in, c_out, expand, k, s):
    c_mid = c_in * expand
    h = n.silu(n.conv(x, c_in, c_mid)) if expand != 1 else x
    h = n.silu(n.conv(h, c_mid, c_mid, k, s, group=c_mid))
    sq = max(1, c_in // 4)
    se = n.op("GlobalAveragePool", [h], "se_pool")
    se = n.op("Sigmoid", [n.conv(n.silu(n.conv(se, c_mid, sq, bias_std=0.5)), sq, c_mid, bias_std=0.5)], "se_gate")
    h = n.op("Mul", [h, se], "se_scale")
    h = n.conv(h, c_mid, c_out, gain=1.0)
    return n.op("Add", [h, x], "res") if s == 1 and c_in == c_out else h


def efficientnet(n, a):
    x = n.silu(n.conv("input", 3, 32, 3, 2))
    c_in = 32
    for expand, k, s, c, repeats in [(1, 3, 1, 16, 1), (6, 3, 2, 24, 2), (6, 5, 2, 40, 2), (6, 3, 2, 80, 3),
                                     (6, 5, 1, 112, 3), (6, 5, 2, 192, 4), (6, 3, 1, 320, 1)]:
        for i in range(repeats):
            x = mbconv(n, x, c_in, c, expand, k, s if i == 0 else 1)
            c_in = c
    x = n.silu(n.conv(x, c_in, 1280))
    x = n.op("Flatten", [n.op("GlobalAveragePool", [x], "pool")], "flat")
    return n.gemm_head(x, 1280), 17


# ResNeXt ----------------------------------------------------------------------------------------

def resnext(n, a):
    groups, depths = 32, [int(d) for d in a.depths.split(",")]
    x = n.op("MaxPool", [n.op("Relu", [n.conv("input", 3, 64, 7, 2)], "relu")], "pool", kernel_shape=[3, 3],
             strides=[2, 2], pads=[1, 1, 1, 1])
    c_in = 64
    for stage, blocks in enumerate(depths):
        width, c_out = groups * a.width * 2 ** stage, 256 * 2 ** stage
        for i in range(blocks):
            s = 2 if i == 0 and stage > 0 else 1
            h = n.op("Relu", [n.conv(x, c_in, width)], "relu")
            h = n.op("Relu", [n.conv(h, width, width, 3, s, group=groups)], "relu")
            h = n.conv(h, width, c_out, gain=0.5)
            shortcut = n.conv(x, c_in, c_out, 1, s, gain=0.5) if i == 0 else x
            x = n.op("Relu", [n.op("Add", [h, shortcut], "res")], "relu")
            c_in = c_out
    x = n.op("Flatten", [n.op("GlobalAveragePool", [x], "gap")], "flat")
    return n.gemm_head(x, c_in), 17


# U-Net of Stable Diffusion's blocks -------------------------------------------------------------

def group_norm(n, x, c, form, groups=32, eps=1e-6):
    g, b = n.affine_params(c, (c, 1, 1))
    if form == "op21":
        return n.op("GroupNormalization", [x, n.const("gn_scale", n.init_value(g).ravel()),
                                           n.const("gn_bias", n.init_value(b).ravel())], "gn", num_groups=groups,
                    epsilon=eps)
    if form == "op18":
        y = n.op("GroupNormalization", [x, n.const("gn_ones", np.ones(groups, np.float32)),
                                        n.const("gn_zeros", np.zeros(groups, np.float32))], "gn", num_groups=groups,
                 epsilon=eps)
    else:
        r = n.op("Reshape", [x, n.const("gn_shape", np.array([0, groups, -1], np.int64))], "gn_grouped")
        r = n.op("InstanceNormalization", [r, n.const("gn_ones", np.ones(groups, np.float32)),
                                           n.const("gn_zeros", np.zeros(groups, np.float32))], "gn_in", epsilon=eps)
        y = n.op("Reshape", [r, n.op("Shape", [x], "gn_x_shape")], "gn_back")
    return n.op("Add", [n.op("Mul", [y, g], "gn_scale"), b], "gn")


def resnet_block(n, x, c_in, c_out, form):
    h = n.conv(n.silu(group_norm(n, x, c_in, form)), c_in, c_out, 3)
    h = n.conv(n.silu(group_norm(n, h, c_out, form)), c_out, c_out, 3, gain=0.5)
    skip = n.conv(x, c_in, c_out) if c_in != c_out else x
    return n.op("Add", [skip, h], "res")


def spatial_attention(n, x, c, hw, form):
    h = group_norm(n, x, c, form)
    h = n.op("Transpose", [n.op("Reshape", [h, n.const("flat_shape", np.array([1, c, hw * hw], np.int64))], "flat")],
             "tokens", perm=[0, 2, 1])
    q, k, v = (n.dense(h, c, c) for _ in range(3))
    s = n.op("MatMul", [q, n.op("Transpose", [k], "k_t", perm=[0, 2, 1])], "scores")
    s = n.op("Softmax", [n.op("Mul", [s, n.const("scale", np.array(c ** -0.5, np.float32))], "scaled")], "probs", axis=-1)
    o = n.dense(n.op("MatMul", [s, v], "context"), c, c)
    o = n.op("Reshape", [n.op("Transpose", [o], "chw", perm=[0, 2, 1]),
                         n.const("image_shape", np.array([1, c, hw, hw], np.int64))], "attn_out")
    return n.op("Add", [x, o], "attn_res")


def unet(n, a):
    form = a.groupnorm
    chans = [a.width, 2 * a.width, 4 * a.width]
    x = n.conv("input", 3, chans[0], 3)
    skips, c, size = [], chans[0], a.image
    for level, c_out in enumerate(chans):
        x = resnet_block(n, x, c, c_out, form)
        c = c_out
        skips.append((x, c))
        if level + 1 < len(chans):
            x = n.conv(x, c, c, 3, 2)
            size //= 2
    x = spatial_attention(n, x, c, size, form)
    x = resnet_block(n, x, c, c, form)
    for level in reversed(range(len(chans))):
        skip, c_skip = skips[level]
        x = resnet_block(n, n.op("Concat", [x, skip], "cat", axis=1), c + c_skip, chans[level], form)
        c = chans[level]
        if level > 0:
            up = n.op("Resize", [x, "", n.const("up_scales", np.array([1, 1, 2, 2], np.float32))], "up", mode="nearest")
            x = n.conv(up, c, c, 3)
    x = n.conv(n.silu(group_norm(n, x, c, form)), c, 3, 3, gain=0.5)
    n.nodes[-1].output[0] = "output"
    return "output", {"instance": 17, "op18": 18, "op21": 21}[form]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kind", choices=["convnext", "efficientnet", "unet", "resnext"])
    ap.add_argument("out")
    ap.add_argument("--image", type=int)
    ap.add_argument("--width", type=int)
    ap.add_argument("--depths")
    ap.add_argument("--groupnorm", choices=["instance", "op18", "op21"], default="instance")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    a.image = a.image or {"unet": 64}.get(a.kind, 224)
    a.width = a.width or {"convnext": 64, "unet": 64, "resnext": 4}.get(a.kind, 0)
    a.depths = a.depths or {"resnext": "3,4,6,3"}.get(a.kind, "2,2,6,2")
    n = Net(np.random.default_rng(a.seed))
    n.init_value = lambda name: numpy_helper.to_array(next(t for t in n.inits if t.name == name))
    out, opset = {"convnext": convnext, "efficientnet": efficientnet, "unet": unet, "resnext": resnext}[a.kind](n, a)
    out_shape = [1, 3, a.image, a.image] if a.kind == "unet" else [1, 1000]
    graph = helper.make_graph(n.nodes, a.kind, [helper.make_tensor_value_info("input", TensorProto.FLOAT,
                                                                              [1, 3, a.image, a.image])],
                              [helper.make_tensor_value_info(out, TensorProto.FLOAT, out_shape)], n.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="onnxflow gen_vision")
    model.ir_version = 10 if opset >= 21 else 8
    if opset <= 17:
        onnx.checker.check_model(model)
    os.makedirs(os.path.join(a.out, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(a.out, "model.onnx"))
    image = n.rng.uniform(-1, 1, (1, 3, a.image, a.image)).astype(np.float32)
    onnx.save_tensor(numpy_helper.from_array(image, "input"), os.path.join(a.out, "test_data_set_0", "input_0.pb"))
    print(f"{a.out}: {len(n.nodes)} nodes, opset {opset}")


if __name__ == "__main__":
    main()
