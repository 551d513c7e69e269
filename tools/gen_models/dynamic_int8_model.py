#!/usr/bin/python3
"""Dynamic-int8 version of a float model, in the form ONNX Runtime's quantize_dynamic writes (and
transformers.js ships as model_quantized.onnx): every MatMul whose B is a 2-D float initializer
becomes
    DynamicQuantizeLinear(A) -> MatMulInteger(A_q, B_q, A_zero, B_zero) -> Cast(float)
    -> Mul(by A_scale * B_scale)
with B quantized once: int8 symmetric (zero point 0, the default weight type) or with
--weight-type uint8 asymmetric; per tensor, or per output column with --per-channel.
With --conv every Conv (1-D, 2-D, grouped) with a float initializer weight becomes, as
quantize_dynamic writes it by default,
    DynamicQuantizeLinear(X) -> ConvInteger(X_q, W_q, X_zero, W_zero) -> Cast(float)
    -> Mul(by X_scale * W_scale) [-> Add(bias reshaped to [1, M, 1, ...])]
with W per tensor (ConvInteger's form: the scale product stays a scalar). With --lstm every LSTM
whose W and R are float initializers becomes com.microsoft DynamicQuantizeLSTM, as quantize_dynamic
writes it: W and R int8, symmetric, one scale per gate column ([num_directions, 4 * hidden]),
stored transposed ([num_directions, input or hidden, 4 * hidden]).
    /usr/bin/python3 tools/gen_models/dynamic_int8_model.py IN.onnx OUT.onnx [--weight-type int8|uint8]
        [--per-channel] [--conv] [--lstm]
The case inputs beside IN are copied beside OUT (the expected outputs are ONNX Runtime's:
ort_expected.js). Deterministic (round half to even), so nothing is committed."""
import argparse
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model_files  # noqa: E402


def quantize_weight(w, unsigned, per_channel):
    """w [K, N] -> (q, scale, zero point): per tensor, or per column (axis 1)."""
    axis = 0 if per_channel else None
    if unsigned:
        lo = np.minimum(w.min(axis=axis), 0)
        hi = np.maximum(w.max(axis=axis), 0)
        scale = np.maximum((hi - lo) / 255.0, 1e-12).astype(np.float32)
        zp = np.clip(np.rint(-lo / scale), 0, 255).astype(np.uint8)
        q = np.clip(np.rint(w / scale) + zp, 0, 255).astype(np.uint8)
    else:
        scale = np.maximum(np.abs(w).max(axis=axis) / 127.0, 1e-12).astype(np.float32)
        zp = np.zeros(np.shape(scale), np.int8)
        q = np.clip(np.rint(w / scale), -127, 127).astype(np.int8)
    return q, np.asarray(scale, np.float32), np.asarray(zp)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("src")
    ap.add_argument("dst")
    ap.add_argument("--weight-type", choices=["int8", "uint8"], default="int8")
    ap.add_argument("--per-channel", action="store_true")
    ap.add_argument("--conv", action="store_true", help="ConvInteger for every Conv on a float initializer too")
    ap.add_argument("--lstm", action="store_true", help="DynamicQuantizeLSTM for every LSTM on float weights")
    a = ap.parse_args()
    kernels = {}
    if a.conv or a.lstm:
        g = model_files.load(a.src)[0].graph
        kernels = {t.name: t for t in g.initializer if t.data_type == TensorProto.FLOAT and len(t.dims) >= 3}

    def rewrite_lstm(n):
        """W [D, 4H, I] and R [D, 4H, H] -> int8 per gate column, transposed to [D, I or H, 4H]."""
        base, inits, names = n.output[0] or n.name, [], []
        for i, what in ((1, "W"), (2, "R")):
            w = numpy_helper.to_array(kernels[n.input[i]])
            scale = np.maximum(np.abs(w).max(axis=2) / 127.0, 1e-12).astype(np.float32)  # [D, 4H]
            q = np.clip(np.rint(w / scale[:, :, None]), -127, 127).astype(np.int8).transpose(0, 2, 1)
            for suffix, arr in (("q", np.ascontiguousarray(q)), ("scale", scale), ("zp", np.zeros(scale.shape, np.int8))):
                inits.append(numpy_helper.from_array(arr, f"{base}_{what}_{suffix}"))
            names.append(f"{base}_{what}_")
        inputs = [n.input[0], names[0] + "q", names[1] + "q"] + [n.input[i] if i < len(n.input) else "" for i in
                                                                  range(3, 8)]
        inputs += [names[0] + "scale", names[0] + "zp", names[1] + "scale", names[1] + "zp"]
        node = helper.make_node("DynamicQuantizeLSTM", inputs, list(n.output), name=(n.name or base) + "_quant",
                                domain="com.microsoft")
        node.attribute.extend(n.attribute)
        return [node], inits, [n.input[1], n.input[2]]

    def integer_op(n, op, w, per_channel, output):
        """DynamicQuantizeLinear(n's input 0) -> op(x_q, W_q, x_zero, W_zero) -> Cast -> Mul(by the
        scales' product) into `output`: (nodes, initializers, the op node)."""
        base = n.output[0]
        q, scale, zp = quantize_weight(w, a.weight_type == "uint8", per_channel)
        names = {k: f"{base}_{k}" for k in ("w_q", "w_scale", "w_zp", "x_q", "x_scale", "x_zp", "acc", "acc_f",
                                             "scale")}
        inits = [numpy_helper.from_array(q, names["w_q"]), numpy_helper.from_array(scale, names["w_scale"]),
                 numpy_helper.from_array(zp, names["w_zp"])]
        integer = helper.make_node(op, [names["x_q"], names["w_q"], names["x_zp"], names["w_zp"]], [names["acc"]],
                                   name=f"{base}_{op}")
        nodes = [
            helper.make_node("DynamicQuantizeLinear", [n.input[0]], [names["x_q"], names["x_scale"], names["x_zp"]],
                             name=base + "_QuantizeLinear"),
            integer,
            helper.make_node("Cast", [names["acc"]], [names["acc_f"]], to=TensorProto.FLOAT, name=base + "_cast"),
            helper.make_node("Mul", [names["x_scale"], names["w_scale"]], [names["scale"]], name=base + "_scales"),
            helper.make_node("Mul", [names["acc_f"], names["scale"]], [output], name=base + "_scaled"),
        ]
        return nodes, inits, integer

    def rewrite_conv(n):
        base = n.output[0]
        w = numpy_helper.to_array(kernels[n.input[1]])
        has_bias = len(n.input) > 2 and n.input[2]
        nodes, inits, conv = integer_op(n, "ConvInteger", w, False, base + "_no_bias" if has_bias else base)
        conv.attribute.extend(n.attribute)
        if has_bias:
            shape = np.array([1, -1] + [1] * (w.ndim - 2), np.int64)
            inits.append(numpy_helper.from_array(shape, base + "_bias_shape"))
            nodes += [helper.make_node("Reshape", [n.input[2], base + "_bias_shape"], [base + "_bias"],
                                       name=base + "_bias_reshape"),
                      helper.make_node("Add", [base + "_no_bias", base + "_bias"], [base], name=base + "_output")]
        return nodes, inits, [n.input[1]]

    def rewrite(n, weights):
        if a.lstm and n.op_type == "LSTM" and n.domain in ("", "ai.onnx") and n.input[1] in kernels and \
                n.input[2] in kernels:
            return rewrite_lstm(n)
        if a.conv and n.op_type == "Conv" and n.domain in ("", "ai.onnx") and n.input[1] in kernels:
            return rewrite_conv(n)
        if not model_files.is_matmul_on(n, weights):
            return None
        w = numpy_helper.to_array(weights[n.input[1]])
        nodes, inits, _ = integer_op(n, "MatMulInteger", w, a.per_channel, n.output[0])
        return nodes, inits, [n.input[1]]

    # DynamicQuantizeLinear is opset 11; quantize_dynamic raises older models to it too.
    count = model_files.rewrite(a.src, a.dst, rewrite, extra_opsets=[("", 11)] + ([("com.microsoft", 1)] if a.lstm else []))
    print(f"wrote {a.dst}: {count} weights in dynamic int8")


if __name__ == "__main__":
    main()
