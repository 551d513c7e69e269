#!/usr/bin/python3
"""MobileNet-shaped float CNNs with seeded random weights, the class most quantized vision models
belong to (depthwise convolutions, Relu6 as Clip, HardSwish, squeeze-and-excitation), for
qdq_model.py to quantize:

    /usr/bin/python3 tools/gen_models/mobilenet.py v2|v3 OUT_DIR [SEED]

writes OUT_DIR/model.onnx (opset 14, for HardSwish; input "input" [1, 3, 224, 224], output "logits" [1, 1000])
and OUT_DIR/test_data_set_0/input_0.pb. BatchNormalization is already folded into each Conv's
weights and bias, as exporters that fold it write them.
  * v2: MobileNetV2's inverted residuals (1x1 expand, Clip(0, 6), depthwise 3x3, Clip, 1x1
    project, residual Add), 17 blocks, 1280-channel head, Gemm classifier.
  * v3: MobileNetV3-Large's blocks (3x3 and 5x5 depthwise, Relu or HardSwish, squeeze-and-
    excitation as GlobalAveragePool -> Conv -> Relu -> Conv -> HardSigmoid -> Mul), 15 blocks.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class Builder:
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.n = [], [], 0

    def name(self, base):
        self.n += 1
        return f"{base}_{self.n}"

    def const(self, base, arr):
        name = self.name(base)
        self.inits.append(numpy_helper.from_array(np.asarray(arr, np.float32), name))
        return name

    def node(self, op, inputs, **attrs):
        out = self.name(op.lower())
        self.nodes.append(helper.make_node(op, inputs, [out], name=out, **attrs))
        return out

    def conv(self, x, cin, cout, k=1, stride=1, group=1):
        fan_in = cin // group * k * k
        w = self.rng.normal(0, np.sqrt(2.0 / fan_in), (cout, cin // group, k, k))
        b = self.rng.normal(0, 0.05, cout)
        return self.node("Conv", [x, self.const("w", w), self.const("b", b)], kernel_shape=[k, k],
                         strides=[stride, stride], pads=[k // 2] * 4, group=group)

    def act(self, x, kind):
        if kind == "relu6":
            return self.node("Clip", [x, self.const("lo", np.float32(0)), self.const("hi", np.float32(6))])
        if kind == "hs":
            return self.node("HardSwish", [x])
        return self.node("Relu", [x])

    def se(self, x, c):
        s = self.node("GlobalAveragePool", [x])
        s = self.act(self.conv(s, c, max(8, c // 4)), "relu")
        s = self.node("HardSigmoid", [self.conv(s, max(8, c // 4), c)], alpha=1.0 / 6, beta=0.5)
        return self.node("Mul", [x, s])

    def block(self, x, cin, exp, cout, k, stride, act, se):
        h = x
        if exp != cin:
            h = self.act(self.conv(h, cin, exp), act)
        h = self.act(self.conv(h, exp, exp, k, stride, group=exp), act)
        if se:
            h = self.se(h, exp)
        h = self.conv(h, exp, cout)
        return self.node("Add", [x, h]) if stride == 1 and cin == cout else h

    def head(self, x, c, classes=1000):
        x = self.node("Flatten", [self.node("GlobalAveragePool", [x])])
        w = self.rng.normal(0, np.sqrt(1.0 / c), (classes, c))
        return self.node("Gemm", [x, self.const("fc_w", w), self.const("fc_b", self.rng.normal(0, 0.05, classes))],
                         transB=1)


def v2(b, x):
    x = b.act(b.conv(x, 3, 32, 3, 2), "relu6")
    cin = 32
    for t, c, n, s in [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2),
                       (6, 320, 1, 1)]:
        for i in range(n):
            x = b.block(x, cin, cin * t, c, 3, s if i == 0 else 1, "relu6", False)
            cin = c
    return b.head(b.act(b.conv(x, cin, 1280), "relu6"), 1280)


def v3(b, x):
    x = b.act(b.conv(x, 3, 16, 3, 2), "hs")
    cin = 16
    for k, exp, c, se, act, s in [(3, 16, 16, 0, "relu", 1), (3, 64, 24, 0, "relu", 2), (3, 72, 24, 0, "relu", 1),
                                  (5, 72, 40, 1, "relu", 2), (5, 120, 40, 1, "relu", 1), (5, 120, 40, 1, "relu", 1),
                                  (3, 240, 80, 0, "hs", 2), (3, 200, 80, 0, "hs", 1), (3, 184, 80, 0, "hs", 1),
                                  (3, 184, 80, 0, "hs", 1), (3, 480, 112, 1, "hs", 1), (3, 672, 112, 1, "hs", 1),
                                  (5, 672, 160, 1, "hs", 2), (5, 960, 160, 1, "hs", 1), (5, 960, 160, 1, "hs", 1)]:
        x = b.block(x, cin, exp, c, k, s, act, se)
        cin = c
    return b.head(b.act(b.conv(x, cin, 960), "hs"), 960)


def main(kind, out_dir, seed="7"):
    b = Builder(int(seed))
    {"v2": v2, "v3": v3}[kind](b, "input")
    b.nodes[-1].output[0] = "logits"
    graph = helper.make_graph(b.nodes, f"mobilenet_{kind}",
                              [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 224, 224])],
                              [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 1000])], b.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)], producer_name="onnxflow gen_models")
    model.ir_version = 7
    onnx.checker.check_model(model)
    os.makedirs(os.path.join(out_dir, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(out_dir, "model.onnx"))
    x = b.rng.uniform(-1, 1, (1, 3, 224, 224)).astype(np.float32)
    onnx.save_tensor(numpy_helper.from_array(x, "input"), os.path.join(out_dir, "test_data_set_0", "input_0.pb"))


if __name__ == "__main__":
    main(*sys.argv[1:])
