#!/usr/bin/python3
"""1-D convolution networks (audio and speech front ends) with seeded random weights:

    /usr/bin/python3 tools/gen_models/conv1d_models.py OUT_DIR [SEED]

writes OUT_DIR/<case>/model.onnx (opset 17) and OUT_DIR/<case>/test_data_set_0/input_0.pb:
  * wav2vec2_fe: wav2vec2-base's feature encoder as torch.onnx exports it: input_values [1, 16000]
    (1 s of 16 kHz audio) -> Unsqueeze -> Conv1d(1 -> 512, k 10, s 5, no bias) -> GroupNorm(512
    groups) as Reshape / InstanceNormalization / Reshape(Shape) / Mul / Add -> GELU (erf, written
    out) -> six Conv1d(512 -> 512, k 3, 3, 3, 3, 2, 2, s 2, no bias) each with GELU -> [1, 512, 49].
  * whisper_fe: Whisper-tiny's front end: mel [1, 80, 3000] -> Conv1d(80 -> 384, k 3, pad 1) ->
    GELU -> Conv1d(384 -> 384, k 3, s 2, pad 1) -> GELU -> Transpose -> [1, 1500, 384].
  * stft: the STFT as one Conv1d (Silero VAD, openWakeWord): [1, 1, 16000] -> Conv1d(1 -> 257,
    k 512, s 160, no bias) -> [1, 257, 97].
  * conformer_conv: a Conformer convolution module at 256 channels x 200 frames: pointwise
    Conv1d(256 -> 512) -> GLU (Split, Sigmoid, Mul) -> depthwise Conv1d(k 31, pad 15, group 256)
    -> BatchNormalization -> Swish (x * Sigmoid(x)) -> pointwise Conv1d(256 -> 256).
  * wav2vec2_fe_convinteger, stft_convinteger: ONNX Runtime's quantize_dynamic form of the two:
    DynamicQuantizeLinear -> ConvInteger(x_q, W_uint8, x_zp, w_zp) -> Cast(float) -> Mul(x_scale
    * w_scale) [-> Add(bias)], uint8 weights asymmetric per tensor.
The QDQ forms (u8 activations, s8 per-channel weights) come from qdq_model.py (README.md).
Deterministic: the same seed writes the same bytes, so nothing is committed.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class Builder:
    def __init__(self, rng):
        self.rng = rng
        self.nodes, self.inits, self.n = [], [], 0

    def name(self, base):
        self.n += 1
        return f"{base}_{self.n}"

    def const(self, base, arr):
        name = self.name(base)
        self.inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def op(self, op, inputs, n_out=1, **attrs):
        outs = [self.name(op.lower()) for _ in range(n_out)]
        self.nodes.append(helper.make_node(op, inputs, outs, name=self.name(op), **attrs))
        return outs[0] if n_out == 1 else outs

    def weight(self, cout, cin, k):
        return (self.rng.standard_normal((cout, cin, k)) / np.sqrt(cin * k)).astype(np.float32)

    def bias(self, c):
        return (0.05 * self.rng.standard_normal(c)).astype(np.float32)

    def conv(self, x, cout, cin, k, bias=True, dynamic=False, **attrs):
        w = self.weight(cout, cin // attrs.get("group", 1), k)
        b = self.bias(cout) if bias else None
        if dynamic:
            return self.dyn_conv(x, w, b, **attrs)
        ins = [x, self.const("w", w)] + ([self.const("b", b)] if bias else [])
        return self.op("Conv", ins, kernel_shape=[k], **attrs)

    # The quantize_dynamic form of Conv: uint8 weights with a zero point, per tensor.
    def dyn_conv(self, x, w, b, **attrs):
        lo, hi = min(float(w.min()), 0.0), max(float(w.max()), 0.0)
        scale = np.float32((hi - lo) / 255.0)
        zp = np.uint8(np.clip(np.rint(-lo / scale), 0, 255))
        wq = np.clip(np.rint(w / scale) + zp, 0, 255).astype(np.uint8)
        xq, xs, xz = self.op("DynamicQuantizeLinear", [x], n_out=3)
        acc = self.op("ConvInteger", [xq, self.const("w_q", wq), xz, self.const("w_zp", np.array(zp))],
                      kernel_shape=[w.shape[2]], **attrs)
        y = self.op("Mul", [self.op("Cast", [acc], to=TensorProto.FLOAT),
                            self.op("Mul", [xs, self.const("w_scale", np.array(scale))])])
        return y if b is None else self.op("Add", [y, self.const("bias", b.reshape(-1, 1))])

    # GELU as torch.onnx writes it below opset 20: x * 0.5 * (1 + erf(x / sqrt(2))).
    def gelu(self, x):
        e = self.op("Erf", [self.op("Div", [x, self.const("sqrt2", np.array(1.4142135, np.float32))])])
        h = self.op("Add", [e, self.const("one", np.array(1.0, np.float32))])
        return self.op("Mul", [self.op("Mul", [x, h]), self.const("half", np.array(0.5, np.float32))])

    # GroupNorm(C groups) as torch.onnx writes it below opset 18.
    def group_norm(self, x, c):
        r = self.op("Reshape", [x, self.const("shape", np.array([0, c, -1], np.int64))])
        n = self.op("InstanceNormalization", [r, self.const("ones", np.ones(c, np.float32)),
                                              self.const("zeros", np.zeros(c, np.float32))], epsilon=1e-5)
        r = self.op("Reshape", [n, self.op("Shape", [x])])
        g = self.const("gn_w", (1 + 0.1 * self.rng.standard_normal((c, 1))).astype(np.float32))
        return self.op("Add", [self.op("Mul", [r, g]), self.const("gn_b", self.bias(c).reshape(c, 1))])

    def save(self, out_dir, case, inputs, outputs, x):
        d = os.path.join(out_dir, case)
        os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
        g = helper.make_graph(self.nodes, case, inputs, outputs, self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="conv1d_models.py")
        m.ir_version = 8
        onnx.checker.check_model(m)
        onnx.save(m, os.path.join(d, "model.onnx"))
        t = numpy_helper.from_array(x, inputs[0].name)
        with open(os.path.join(d, "test_data_set_0", "input_0.pb"), "wb") as f:
            f.write(t.SerializeToString())


def audio(rng, n):
    t = np.arange(n) / 16000.0
    return (0.3 * np.sin(2 * np.pi * 220 * t) + 0.05 * rng.standard_normal(n)).astype(np.float32)


def wav2vec2(out_dir, seed, dynamic):
    b = Builder(np.random.default_rng(seed))
    x = b.op("Unsqueeze", ["input_values", b.const("axes", np.array([1], np.int64))])
    x = b.conv(x, 512, 1, 10, bias=False, dynamic=dynamic, strides=[5])
    x = b.gelu(b.group_norm(x, 512))
    for k in (3, 3, 3, 3, 2, 2):
        x = b.gelu(b.conv(x, 512, 512, k, bias=False, dynamic=dynamic, strides=[2]))
    b.nodes[-1].output[0] = "features"
    b.save(out_dir, "wav2vec2_fe" + ("_convinteger" if dynamic else ""),
           [helper.make_tensor_value_info("input_values", TensorProto.FLOAT, [1, 16000])],
           [helper.make_tensor_value_info("features", TensorProto.FLOAT, [1, 512, 49])],
           audio(b.rng, 16000).reshape(1, 16000))


def whisper(out_dir, seed):
    b = Builder(np.random.default_rng(seed))
    x = b.gelu(b.conv("mel", 384, 80, 3, pads=[1, 1]))
    x = b.gelu(b.conv(x, 384, 384, 3, strides=[2], pads=[1, 1]))
    b.nodes.append(helper.make_node("Transpose", [x], ["embeddings"], name="Transpose_out", perm=[0, 2, 1]))
    b.save(out_dir, "whisper_fe", [helper.make_tensor_value_info("mel", TensorProto.FLOAT, [1, 80, 3000])],
           [helper.make_tensor_value_info("embeddings", TensorProto.FLOAT, [1, 1500, 384])],
           b.rng.standard_normal((1, 80, 3000)).astype(np.float32))


def stft(out_dir, seed, dynamic):
    b = Builder(np.random.default_rng(seed))
    y = b.conv("audio", 257, 1, 512, bias=False, dynamic=dynamic, strides=[160])
    b.nodes[-1].output[0] = "spectrum"
    b.save(out_dir, "stft" + ("_convinteger" if dynamic else ""),
           [helper.make_tensor_value_info("audio", TensorProto.FLOAT, [1, 1, 16000])],
           [helper.make_tensor_value_info("spectrum", TensorProto.FLOAT, [1, 257, 97])],
           audio(b.rng, 16000).reshape(1, 1, 16000))


def conformer(out_dir, seed, c=256, frames=200):
    b = Builder(np.random.default_rng(seed))
    x = b.conv("x", 2 * c, c, 1)
    a, gate = b.op("Split", [x, b.const("split", np.array([c, c], np.int64))], n_out=2, axis=1)
    x = b.op("Mul", [a, b.op("Sigmoid", [gate])])
    x = b.conv(x, c, c, 31, group=c, pads=[15, 15])
    x = b.op("BatchNormalization", [x, b.const("bn_s", (1 + 0.1 * b.rng.standard_normal(c)).astype(np.float32)),
                                    b.const("bn_b", b.bias(c)), b.const("bn_m", b.bias(c)),
                                    b.const("bn_v", (1 + 0.1 * b.rng.random(c)).astype(np.float32))])
    x = b.op("Mul", [x, b.op("Sigmoid", [x])])
    b.conv(x, c, c, 1)
    b.nodes[-1].output[0] = "y"
    b.save(out_dir, "conformer_conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, frames])],
           [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, c, frames])],
           b.rng.standard_normal((1, c, frames)).astype(np.float32))


def main():
    out_dir = sys.argv[1]
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    wav2vec2(out_dir, seed, False)
    wav2vec2(out_dir, seed, True)
    whisper(out_dir, seed)
    stft(out_dir, seed, False)
    stft(out_dir, seed, True)
    conformer(out_dir, seed)


if __name__ == "__main__":
    main()
