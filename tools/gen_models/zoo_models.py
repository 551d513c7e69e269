#!/usr/bin/python3
"""The ONNX model zoo's classic CNNs, seeded random weights, BatchNormalization kept as its own
node wherever the zoo's files (and torch.onnx exports in training-mode-off without folding) have
it, each written as a case folder OUT/<name>/model.onnx + test_data_set_0/input_0.pb (expected
outputs: tools/gen_models/ort_expected.js). Weights are scaled by fan-in and the BatchNorm
statistics stay near the identity, so activations keep their scale through the depth.

  * densenet121: DenseNet-121 at 224x224 as the zoo's densenet-12 has it (converted from Caffe2):
    stem Conv 7x7/2 -> BN -> Relu -> MaxPool 3x3/2; four dense blocks of 6, 12, 24, 16 layers, each
    layer pre-activation BN -> Relu -> Conv 1x1 (128) -> BN -> Relu -> Conv 3x3 (32) and a Concat of
    the running features with the new 32 channels (the Concat grows by 32 channels per layer);
    transitions BN -> Relu -> Conv 1x1 (halving) -> AveragePool 2x2/2; BN -> Relu ->
    GlobalAveragePool -> Flatten -> Gemm 1024x1000.
  * densenet121_tv: the same network as torchvision exports it: each layer reads one Concat of all
    the block's features so far (torch.cat(prev_features)), the block's output a Concat of all.
  * inception_v3: torchvision's Inception-v3 at 299x299 (transform_input's Gather/Mul/Add/Concat
    prologue; BasicConv2d = Conv without bias -> BN eps 1e-3 -> Relu; MaxPool 3x3/2; InceptionA..E
    with factorized 1x7 / 7x1 and 1x3 / 3x1 convolutions, AveragePool 3x3 stride 1 pad 1
    count_include_pad = 1 as torch exports F.avg_pool2d, branch Concats; GlobalAveragePool ->
    Flatten -> Gemm 2048x1000).
  * vgg16: VGG-16 at 224x224 (13 Conv 3x3 + Relu, 5 MaxPool 2x2/2, Flatten, Gemm 25088x4096 ->
    Relu -> Gemm 4096x4096 -> Relu -> Gemm 4096x1000; 138 M parameters, 553 MB).
  * ssd_mobilenet_v1: an SSD-MobileNet-v1 detector at 300x300 (MobileNet-v1 with Conv -> BN ->
    Relu and depthwise separable blocks, extra layers to 5, 3, 2, 1; per scale a 3x3 box Conv
    (6 anchors x 4) and class Conv (6 x 91) -> Transpose(0, 2, 3, 1) -> Reshape (1, -1, 4 | 91) ->
    Concat; Softmax over classes; boxes decoded against 3000 priors (variances 0.1 / 0.2, Exp,
    Slice, Concat); post-processing as the zoo's ssd models do it: NonMaxSuppression over 90 classes
    of [1, 90, 3000] scores, GatherND of the kept scores, TopK of at most 200 by Min(Shape, 200),
    Gather of the boxes and classes). Outputs boxes [K, 4], scores [K], classes [K] int64.
  * arcface_r50: an insightface ArcFace embedder at 112x112 (the zoo's arcfaceresnet100 shape, 50
    layers as buffalo_l's w600k_r50): (x - 127.5) * 0.0078125, Conv 3x3 -> BN -> PRelu, improved
    residual blocks BN -> Conv 3x3 -> BN -> PRelu -> Conv 3x3 (stride 2 in a stage's first) -> BN
    (+ Conv 1x1 -> BN shortcut), units 3, 4, 14, 3 of 64..512 channels; BN after the last conv ->
    Flatten -> Gemm 25088x512 -> BatchNormalization of the embedding. --arcface-units 3,13,30,3 is
    the zoo's r100.

usage: zoo_models.py OUT_DIR [--only densenet121,vgg16,...] [--seed 0] [--arcface-units 3,4,14,3]
"""
import argparse
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from graph_writer import NamedGraphWriter  # noqa: E402

OPSET = 12  # the zoo's newest CNN files (densenet-12, vgg16-12, ssd-12, ...) are opset 12


class Net(NamedGraphWriter):
    """GraphWriter with unique names, Conv/BN/Gemm layers whose weights keep activations near unit scale."""

    def randn(self, shape, std):
        return (self.rng.standard_normal(shape, dtype=np.float32) * np.float32(std)).astype(np.float32)

    def conv(self, x, c_in, c_out, k=1, s=1, pad=None, group=1, bias=True, gain=np.sqrt(2.0)):
        kh, kw = (k, k) if isinstance(k, int) else k
        ph, pw = ((kh // 2, kw // 2) if pad is None else ((pad, pad) if isinstance(pad, int) else pad))
        p = self.name("conv")
        fan_in = c_in // group * kh * kw
        ins = [x, self.init(p + ".weight", self.randn((c_out, c_in // group, kh, kw), gain / np.sqrt(fan_in)))]
        if bias:
            ins.append(self.init(p + ".bias", self.randn(c_out, 0.05)))
        return self.node("Conv", ins, [p + ".out"], kernel_shape=[kh, kw], strides=[s, s], pads=[ph, pw, ph, pw],
                         group=group)

    def bn(self, x, c, eps=1e-5, gamma=1.0):
        """Inference BatchNormalization whose statistics are near the identity (mean ~0, var ~1)."""
        p = self.name("bn")
        g = self.init(p + ".scale", (gamma * (1.0 + 0.1 * self.rng.standard_normal(c))).astype(np.float32))
        b = self.init(p + ".bias", (0.1 * self.rng.standard_normal(c)).astype(np.float32))
        m = self.init(p + ".mean", (0.1 * self.rng.standard_normal(c)).astype(np.float32))
        v = self.init(p + ".var", (1.0 + 0.2 * np.abs(self.rng.standard_normal(c))).astype(np.float32))
        return self.node("BatchNormalization", [x, g, b, m, v], [p + ".out"], epsilon=eps)

    def relu(self, x):
        return self.op("Relu", [x])

    def prelu(self, x, c):
        return self.op("PRelu", [x, self.const("prelu.slope", (0.25 + 0.05 * self.rng.standard_normal((c, 1, 1)))
                                               .astype(np.float32))])

    def maxpool(self, x, k, s, pad=0):
        return self.op("MaxPool", [x], "maxpool", kernel_shape=[k, k], strides=[s, s], pads=[pad] * 4)

    def avgpool(self, x, k, s, pad=0, count_include_pad=0):
        attrs = {"count_include_pad": 1} if count_include_pad else {}
        return self.op("AveragePool", [x], "avgpool", kernel_shape=[k, k], strides=[s, s], pads=[pad] * 4, **attrs)

    def gemm(self, x, n_in, n_out, out=None, gain=1.0):
        p = self.name("fc")
        w = self.init(p + ".weight", self.randn((n_out, n_in), gain / np.sqrt(n_in)))
        b = self.init(p + ".bias", self.randn(n_out, 0.02))
        return self.node("Gemm", [x, w, b], [out or p + ".out"], transB=1)

    def head(self, x, c, classes=1000):
        x = self.op("Flatten", [self.op("GlobalAveragePool", [x], "pool")], "flat", axis=1)
        return self.gemm(x, c, classes, out="logits")


# DenseNet-121 -------------------------------------------------------------------------------------

def densenet121(n, a, torch_form=False):
    growth, bn_size = 32, 4
    x = n.maxpool(n.relu(n.bn(n.conv("input", 3, 64, 7, 2, bias=False), 64)), 3, 2, 1)
    c = 64
    for b, layers in enumerate((6, 12, 24, 16)):
        feats = [x]
        for _ in range(layers):
            inp = (feats[0] if len(feats) == 1 else n.op("Concat", feats, "cat", axis=1)) if torch_form else x
            h = n.conv(n.relu(n.bn(inp, c)), c, bn_size * growth, 1, bias=False)
            h = n.conv(n.relu(n.bn(h, bn_size * growth)), bn_size * growth, growth, 3, bias=False)
            feats.append(h)
            if not torch_form:
                x = n.op("Concat", [x, h], "cat", axis=1)
            c += growth
        if torch_form:
            x = n.op("Concat", feats, "cat", axis=1)
        if b < 3:
            x = n.avgpool(n.conv(n.relu(n.bn(x, c)), c, c // 2, 1, bias=False, gain=1.0), 2, 2)
            c //= 2
    return n.head(n.relu(n.bn(x, c)), c), [1, 3, 224, 224], [("logits", [1, 1000], TensorProto.FLOAT)]


# Inception-v3 -------------------------------------------------------------------------------------

def basic(n, x, c_in, c_out, k, s=1, pad=0):
    return n.relu(n.bn(n.conv(x, c_in, c_out, k, s, pad=pad, bias=False), c_out, eps=1e-3))


def inception_a(n, x, c, pool_features):
    b1 = basic(n, x, c, 64, 1)
    b5 = basic(n, basic(n, x, c, 48, 1), 48, 64, 5, pad=2)
    b3 = basic(n, basic(n, basic(n, x, c, 64, 1), 64, 96, 3, pad=1), 96, 96, 3, pad=1)
    bp = basic(n, n.avgpool(x, 3, 1, 1, count_include_pad=1), c, pool_features, 1)
    return n.op("Concat", [b1, b5, b3, bp], "mixed", axis=1), 224 + pool_features


def inception_b(n, x, c):
    b3 = basic(n, x, c, 384, 3, 2)
    bd = basic(n, basic(n, basic(n, x, c, 64, 1), 64, 96, 3, pad=1), 96, 96, 3, 2)
    return n.op("Concat", [b3, bd, n.maxpool(x, 3, 2)], "mixed", axis=1), 480 + c


def inception_c(n, x, c, c7):
    b1 = basic(n, x, c, 192, 1)
    b7 = basic(n, basic(n, basic(n, x, c, c7, 1), c7, c7, (1, 7), pad=(0, 3)), c7, 192, (7, 1), pad=(3, 0))
    bd = basic(n, x, c, c7, 1)
    for k, pad in (((7, 1), (3, 0)), ((1, 7), (0, 3)), ((7, 1), (3, 0))):
        bd = basic(n, bd, c7, c7, k, pad=pad)
    bd = basic(n, bd, c7, 192, (1, 7), pad=(0, 3))
    bp = basic(n, n.avgpool(x, 3, 1, 1, count_include_pad=1), c, 192, 1)
    return n.op("Concat", [b1, b7, bd, bp], "mixed", axis=1), 768


def inception_d(n, x, c):
    b3 = basic(n, basic(n, x, c, 192, 1), 192, 320, 3, 2)
    b7 = basic(n, basic(n, basic(n, x, c, 192, 1), 192, 192, (1, 7), pad=(0, 3)), 192, 192, (7, 1), pad=(3, 0))
    b7 = basic(n, b7, 192, 192, 3, 2)
    return n.op("Concat", [b3, b7, n.maxpool(x, 3, 2)], "mixed", axis=1), 512 + c


def inception_e(n, x, c):
    b1 = basic(n, x, c, 320, 1)
    b3 = basic(n, x, c, 384, 1)
    b3 = n.op("Concat", [basic(n, b3, 384, 384, (1, 3), pad=(0, 1)), basic(n, b3, 384, 384, (3, 1), pad=(1, 0))],
              "cat", axis=1)
    bd = basic(n, basic(n, x, c, 448, 1), 448, 384, 3, pad=1)
    bd = n.op("Concat", [basic(n, bd, 384, 384, (1, 3), pad=(0, 1)), basic(n, bd, 384, 384, (3, 1), pad=(1, 0))],
              "cat", axis=1)
    bp = basic(n, n.avgpool(x, 3, 1, 1, count_include_pad=1), c, 192, 1)
    return n.op("Concat", [b1, b3, bd, bp], "mixed", axis=1), 2048


def inception_v3(n, a):
    # transform_input: x_ch = x[:, i] * (std_i / 0.5) + (mean_i - 0.5) / 0.5, as torch.onnx writes it.
    chans = []
    for i, (mean, std) in enumerate(((0.485, 0.229), (0.456, 0.224), (0.406, 0.225))):
        g = n.op("Unsqueeze", [n.op("Gather", ["input", n.const("ch", np.array(i, np.int64))], "gather", axis=1)],
                 "unsq", axes=[1])
        chans.append(n.op("Add", [n.op("Mul", [g, n.const("std", np.array(std / 0.5, np.float32))], "mul"),
                                  n.const("mean", np.array((mean - 0.5) / 0.5, np.float32))], "add"))
    x = n.op("Concat", chans, "transform", axis=1)
    x = basic(n, x, 3, 32, 3, 2)
    x = basic(n, x, 32, 32, 3)
    x = n.maxpool(basic(n, x, 32, 64, 3, pad=1), 3, 2)
    x = basic(n, x, 64, 80, 1)
    x = n.maxpool(basic(n, x, 80, 192, 3), 3, 2)
    c = 192
    for pf in (32, 64, 64):
        x, c = inception_a(n, x, c, pf)
    x, c = inception_b(n, x, c)
    for c7 in (128, 160, 160, 192):
        x, c = inception_c(n, x, c, c7)
    x, c = inception_d(n, x, c)
    for _ in range(2):
        x, c = inception_e(n, x, c)
    return n.head(x, c), [1, 3, 299, 299], [("logits", [1, 1000], TensorProto.FLOAT)]


# VGG-16 -------------------------------------------------------------------------------------------

def vgg16(n, a):
    x, c = "input", 3
    for stage in ((64, 64), (128, 128), (256, 256, 256), (512, 512, 512), (512, 512, 512)):
        for c_out in stage:
            x = n.relu(n.conv(x, c, c_out, 3))
            c = c_out
        x = n.maxpool(x, 2, 2)
    x = n.op("Flatten", [x], "flat", axis=1)
    x = n.relu(n.gemm(x, 512 * 7 * 7, 4096, gain=np.sqrt(2.0)))
    x = n.relu(n.gemm(x, 4096, 4096, gain=np.sqrt(2.0)))
    return n.gemm(x, 4096, 1000, out="logits"), [1, 3, 224, 224], [("logits", [1, 1000], TensorProto.FLOAT)]


# SSD-MobileNet-v1 ---------------------------------------------------------------------------------

def ssd_priors(sizes, anchors):
    """SSD's default boxes (cx, cy, w, h) in [0, 1]: scales 0.2..0.95, aspect ratios 1, 2, 1/2, 3, 1/3
    and an extra square of scale sqrt(s_k * s_k+1) per location."""
    scales = np.linspace(0.2, 0.95, len(sizes) + 1)
    out = []
    for k, f in enumerate(sizes):
        s, s_next = scales[k], scales[k + 1]
        for i in range(f):
            for j in range(f):
                cx, cy = (j + 0.5) / f, (i + 0.5) / f
                boxes = [(s, s), (np.sqrt(s * s_next),) * 2]
                for r in (2.0, 3.0)[:(anchors - 2) // 2]:
                    boxes += [(s * np.sqrt(r), s / np.sqrt(r)), (s / np.sqrt(r), s * np.sqrt(r))]
                out += [(cx, cy, w, h) for w, h in boxes]
    return np.clip(np.array(out, np.float32), 0.0, 1.0)


def ssd_mobilenet_v1(n, a):
    classes, anchors = 91, 6

    def conv_bn(x, c_in, c_out, k, s, group=1):
        return n.relu(n.bn(n.conv(x, c_in, c_out, k, s, group=group, bias=False), c_out))

    x = conv_bn("input", 3, 32, 3, 2)
    c = 32
    features = []
    for i, (c_out, s) in enumerate(((64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2), (512, 1), (512, 1),
                                    (512, 1), (512, 1), (512, 1), (1024, 2), (1024, 1))):
        x = conv_bn(conv_bn(x, c, c, 3, s, group=c), c, c_out, 1, 1)
        c = c_out
        if i in (10, 12):
            features.append((x, c))  # 19x19x512 and 10x10x1024
    for mid, c_out in ((256, 512), (128, 256), (128, 256), (64, 128)):
        x = n.relu(n.conv(n.relu(n.conv(x, c, mid, 1)), mid, c_out, 3, 2))
        c = c_out
        features.append((x, c))
    locs, confs = [], []
    for f, cf in features:
        for per, out in ((4, locs), (classes, confs)):
            h = n.conv(f, cf, anchors * per, 3, gain=(1.0 if per == 4 else 8.0))
            h = n.op("Transpose", [h], "nhwc", perm=[0, 2, 3, 1])
            out.append(n.op("Reshape", [h, n.const("shape", np.array([1, -1, per], np.int64))], "flat"))
    loc = n.op("Concat", locs, "locations", axis=1)
    scores = n.op("Softmax", [n.op("Concat", confs, "confidences", axis=1)], "scores", axis=2)
    priors = ssd_priors([19, 10, 5, 3, 2, 1], anchors)
    p_c, p_wh = n.const("prior_center", priors[None, :, :2]), n.const("prior_size", priors[None, :, 2:])

    def sl(t, start, end):
        return n.op("Slice", [t, n.const("starts", np.array([start], np.int64)), n.const("ends", np.array([end], np.int64)),
                              n.const("axes", np.array([2], np.int64))], "slice")

    center = n.op("Add", [n.op("Mul", [n.op("Mul", [sl(loc, 0, 2), n.const("var0", np.array(0.1, np.float32))], "mul"),
                                       p_wh], "mul"), p_c], "center")
    size = n.op("Mul", [n.op("Exp", [n.op("Mul", [sl(loc, 2, 4), n.const("var1", np.array(0.2, np.float32))], "mul")]),
                        p_wh], "size")
    half = n.op("Mul", [size, n.const("half", np.array(0.5, np.float32))], "half")
    boxes = n.op("Concat", [n.op("Sub", [center, half], "corner0"), n.op("Add", [center, half], "corner1")], "boxes",
                 axis=2)
    # Post-processing: per-class NMS over the foreground classes, the kept scores' top 200.
    fg = n.op("Slice", [n.op("Transpose", [scores], "by_class", perm=[0, 2, 1]), n.const("s", np.array([1], np.int64)),
                        n.const("e", np.array([classes], np.int64)), n.const("a", np.array([1], np.int64))], "fg")
    sel = n.op("NonMaxSuppression", [boxes, fg, n.const("max_out", np.array([100], np.int64)),
                                     n.const("iou", np.array([0.45], np.float32)),
                                     n.const("score_thr", np.array([a.score_threshold], np.float32))], "nms")
    kept = n.op("GatherND", [fg, sel], "kept_scores")
    k = n.op("Min", [n.op("Shape", [kept], "count"), n.const("top", np.array([200], np.int64))], "k")
    top = n.node("TopK", [kept, k], ["detection_scores", "top_index"], axis=0, largest=1, sorted=1)
    sel = n.op("Gather", [sel, "top_index"], "top_sel", axis=0)
    box_index = n.op("Gather", [sel, n.const("col2", np.array(2, np.int64))], "box_index", axis=1)
    n.op("Gather", [n.op("Squeeze", [boxes], "boxes2d", axes=[0]), box_index], "det_boxes", axis=0)
    n.nodes[-1].output[0] = "detection_boxes"
    n.op("Add", [n.op("Gather", [sel, n.const("col1", np.array(1, np.int64))], "class_index", axis=1),
                 n.const("one", np.array(1, np.int64))], "det_classes")
    n.nodes[-1].output[0] = "detection_classes"
    del top
    return None, [1, 3, 300, 300], [("detection_boxes", ["K", 4], TensorProto.FLOAT),
                                    ("detection_scores", ["K"], TensorProto.FLOAT),
                                    ("detection_classes", ["K"], TensorProto.INT64)]


# ArcFace ResNet -----------------------------------------------------------------------------------

def arcface(n, a):
    units = [int(u) for u in a.arcface_units.split(",")]
    x = n.op("Mul", [n.op("Sub", ["input", n.const("mean", np.array(127.5, np.float32))], "sub"),
                     n.const("scale", np.array(0.0078125, np.float32))], "norm")
    x = n.prelu(n.bn(n.conv(x, 3, 64, 3, bias=False), 64), 64)
    c = 64
    for stage, (c_out, count) in enumerate(zip((64, 128, 256, 512), units)):
        for u in range(count):
            s = 2 if u == 0 else 1
            h = n.conv(n.bn(x, c), c, c_out, 3, bias=False)
            h = n.conv(n.prelu(n.bn(h, c_out), c_out), c_out, c_out, 3, s, bias=False, gain=1.0)
            h = n.bn(h, c_out, gamma=0.3)  # the residual branch small, so 24-49 Adds keep the scale
            short = n.bn(n.conv(x, c, c_out, 1, s, bias=False, gain=1.0), c_out) if u == 0 else x
            x = n.op("Add", [h, short], "res")
            c = c_out
    x = n.op("Flatten", [n.bn(x, c)], "flat", axis=1)
    x = n.gemm(x, c * 7 * 7, 512)
    n.bn(x, 512)
    n.nodes[-1].output[0] = "embedding"
    return "embedding", [1, 3, 112, 112], [("embedding", [1, 512], TensorProto.FLOAT)]


MODELS = {
    "densenet121": (densenet121, "uniform"),
    "densenet121_tv": (lambda n, a: densenet121(n, a, torch_form=True), "uniform"),
    "inception_v3": (inception_v3, "uniform"),
    "vgg16": (vgg16, "uniform"),
    "ssd_mobilenet_v1": (ssd_mobilenet_v1, "uniform"),
    "arcface_r50": (arcface, "pixels"),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--only", default=",".join(MODELS))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--arcface-units", default="3,4,14,3")
    ap.add_argument("--score-threshold", type=float, default=0.3)
    a = ap.parse_args()
    for name in a.only.split(","):
        build, input_kind = MODELS[name]
        n = Net(np.random.default_rng([a.seed, list(MODELS).index(name)]))  # the same weights whatever --only says
        _, in_shape, outputs = build(n, a)
        graph = helper.make_graph(n.nodes, name, [helper.make_tensor_value_info("input", TensorProto.FLOAT, in_shape)],
                                  [helper.make_tensor_value_info(o, t, s) for o, s, t in outputs], n.inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                                  producer_name="onnxflow zoo_models")
        model.ir_version = 7
        onnx.checker.check_model(model)
        d = os.path.join(a.out, name)
        os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
        onnx.save(model, os.path.join(d, "model.onnx"))
        if input_kind == "pixels":
            image = n.rng.uniform(0, 255, in_shape).astype(np.float32)
        else:
            image = n.rng.uniform(-1, 1, in_shape).astype(np.float32)
        onnx.save_tensor(numpy_helper.from_array(image, "input"), os.path.join(d, "test_data_set_0", "input_0.pb"))
        params = sum(int(np.prod(t.dims)) for t in n.inits)
        print(f"{d}: {len(n.nodes)} nodes, {params / 1e6:.1f} M parameters")


if __name__ == "__main__":
    main()
