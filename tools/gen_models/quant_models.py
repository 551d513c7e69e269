#!/usr/bin/python3
"""Seeded generator of the dynamic-quantization test models (issue 21).

Writes, under OUT_DIR (default ../quant_models beside the repo):
  bert_dynamic_int8/model.onnx   a BERT-shaped encoder (12 layers, hidden 768, 12 heads, FFN 3072,
                                 128 tokens) whose weight MatMuls are in ONNX Runtime's dynamic-int8
                                 form: DynamicQuantizeLinear(x) -> MatMulInteger(x_q, W_int8, x_zp,
                                 w_zp) -> Cast(float) -> Mul(x_scale * w_scale) -> Add(bias); the
                                 Q/K/V and FFN weights per-channel (w_scale, w_zp per column), the
                                 rest per-tensor.
  cnn_convinteger_uint8/model.onnx  a 512x512 CNN whose convolutions are DynamicQuantizeLinear ->
                                 ConvInteger(x_q, W_uint8, x_zp, w_zp) -> Cast -> Mul -> Add(bias) ->
                                 Relu (uint8 weights with a zero point, per tensor).
and each case's test_data_set_0/input_0.pb (seeded random input). Expected outputs come from ONNX
Runtime (tools/gen_models/README.md). The weights are random but seeded: a rerun rebuilds the same
bytes, so the models need not be committed.

  python3 tools/gen_models/quant_models.py [OUT_DIR]
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SEED = 21


class Builder:
    def __init__(self, rng):
        self.rng = rng
        self.nodes = []
        self.inits = []
        self.n = 0

    def name(self, base):
        self.n += 1
        return f"{base}_{self.n}"

    def const(self, arr, base="c"):
        nm = self.name(base)
        self.inits.append(numpy_helper.from_array(np.asarray(arr), nm))
        return nm

    def op(self, op_type, inputs, n_out=1, base=None, **attrs):
        outs = [self.name(base or op_type.lower()) for _ in range(n_out)]
        self.nodes.append(helper.make_node(op_type, inputs, outs, name=self.name(op_type), **attrs))
        return outs[0] if n_out == 1 else outs

    # x [.., K] float times W [K, N] float in the dynamic-int8 form, plus bias.
    def dyn_matmul(self, x, w, bias, per_channel):
        if per_channel:
            scale = np.maximum(np.abs(w).max(axis=0), 1e-8) / 127.0
        else:
            scale = np.array(max(np.abs(w).max(), 1e-8) / 127.0)
        wq = np.clip(np.rint(w / scale), -127, 127).astype(np.int8)
        zp = np.zeros(scale.shape, np.int8)
        xq, xs, xz = self.op("DynamicQuantizeLinear", [x], n_out=3)
        acc = self.op("MatMulInteger", [xq, self.const(wq, "w_q"), xz, self.const(zp, "w_zp")])
        f = self.op("Cast", [acc], to=TensorProto.FLOAT)
        s = self.op("Mul", [xs, self.const(scale.astype(np.float32), "w_scale")])
        y = self.op("Mul", [f, s])
        return self.op("Add", [y, self.const(bias.astype(np.float32), "bias")])

    def dyn_conv(self, x, w, bias, stride, pad):
        lo, hi = min(w.min(), 0.0), max(w.max(), 0.0)
        scale = np.float32((hi - lo) / 255.0)
        zp = np.uint8(np.clip(np.rint(-lo / scale), 0, 255))
        wq = np.clip(np.rint(w / scale) + zp, 0, 255).astype(np.uint8)
        xq, xs, xz = self.op("DynamicQuantizeLinear", [x], n_out=3)
        acc = self.op("ConvInteger", [xq, self.const(wq, "w_q"), xz, self.const(np.array(zp), "w_zp")],
                      strides=[stride, stride], pads=[pad] * 4)
        f = self.op("Cast", [acc], to=TensorProto.FLOAT)
        s = self.op("Mul", [xs, self.const(np.array(scale), "w_scale")])
        y = self.op("Mul", [f, s])
        y = self.op("Add", [y, self.const(bias.reshape(-1, 1, 1).astype(np.float32), "bias")])
        return self.op("Relu", [y])


def bert(rng, layers=12, hidden=768, heads=12, ffn=3072, tokens=128):
    b = Builder(rng)
    head = hidden // heads
    x = "input"

    def weight(k, n):
        return rng.standard_normal((k, n)).astype(np.float32) * (1.0 / np.sqrt(k))

    def bias(n):
        return rng.standard_normal(n).astype(np.float32) * 0.02

    def layer_norm(v):
        g = b.const((1.0 + 0.05 * rng.standard_normal(hidden)).astype(np.float32), "ln_g")
        bb = b.const((0.05 * rng.standard_normal(hidden)).astype(np.float32), "ln_b")
        return b.op("LayerNormalization", [v, g, bb], axis=-1, epsilon=1e-12)

    split_shape = b.const(np.array([1, tokens, heads, head], np.int64), "shape")
    merge_shape = b.const(np.array([1, tokens, hidden], np.int64), "shape")
    for _ in range(layers):
        q = b.dyn_matmul(x, weight(hidden, hidden), bias(hidden), True)
        k = b.dyn_matmul(x, weight(hidden, hidden), bias(hidden), True)
        v = b.dyn_matmul(x, weight(hidden, hidden), bias(hidden), True)
        q = b.op("Transpose", [b.op("Reshape", [q, split_shape])], perm=[0, 2, 1, 3])
        k = b.op("Transpose", [b.op("Reshape", [k, split_shape])], perm=[0, 2, 3, 1])
        v = b.op("Transpose", [b.op("Reshape", [v, split_shape])], perm=[0, 2, 1, 3])
        scores = b.op("Mul", [b.op("MatMul", [q, k]), b.const(np.array(1.0 / np.sqrt(head), np.float32))])
        ctx = b.op("MatMul", [b.op("Softmax", [scores], axis=-1), v])
        ctx = b.op("Reshape", [b.op("Transpose", [ctx], perm=[0, 2, 1, 3]), merge_shape])
        attn = b.dyn_matmul(ctx, weight(hidden, hidden), bias(hidden), False)
        x = layer_norm(b.op("Add", [attn, x]))
        h = b.dyn_matmul(x, weight(hidden, ffn), bias(ffn), True)
        # Gelu, erf form.
        e = b.op("Erf", [b.op("Div", [h, b.const(np.array(np.sqrt(2.0), np.float32))])])
        h = b.op("Mul", [b.op("Mul", [h, b.op("Add", [e, b.const(np.array(1.0, np.float32))])]),
                         b.const(np.array(0.5, np.float32))])
        out = b.dyn_matmul(h, weight(ffn, hidden), bias(hidden), False)
        x = layer_norm(b.op("Add", [out, x]))
    b.nodes.append(helper.make_node("Identity", [x], ["output"], name="out"))
    graph = helper.make_graph(
        b.nodes, "bert_dynamic_int8",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, tokens, hidden])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, tokens, hidden])], b.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    inp = rng.standard_normal((1, tokens, hidden)).astype(np.float32)
    return model, inp


def cnn(rng, size=512):
    b = Builder(rng)
    # (out channels, kernel, stride): a backbone of the size a segmentation encoder has.
    plan = [(16, 3, 2), (32, 3, 1), (32, 3, 2), (64, 3, 1), (64, 3, 2), (128, 3, 1), (128, 1, 1),
            (128, 3, 2), (256, 3, 1), (64, 1, 1)]
    x, c = "input", 3
    for m, k, s in plan:
        w = rng.standard_normal((m, c, k, k)).astype(np.float32) * np.sqrt(2.0 / (c * k * k))
        x = b.dyn_conv(x, w, rng.standard_normal(m).astype(np.float32) * 0.05, s, k // 2)
        c = m
    b.nodes.append(helper.make_node("Identity", [x], ["output"], name="out"))
    graph = helper.make_graph(
        b.nodes, "cnn_convinteger_uint8",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, size, size])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 64, size // 16, size // 16])], b.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    inp = rng.random((1, 3, size, size)).astype(np.float32)
    return model, inp


def write(out_dir, name, model, inp):
    d = os.path.join(out_dir, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(d, "model.onnx"))
    with open(os.path.join(d, "test_data_set_0", "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(inp, "input").SerializeToString())
    print("wrote", d)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "..", "..", "quant_models")
    write(out_dir, "bert_dynamic_int8", *bert(np.random.default_rng(SEED)))
    write(out_dir, "cnn_convinteger_uint8", *cnn(np.random.default_rng(SEED + 1)))


if __name__ == "__main__":
    main()
