#!/usr/bin/python3
"""Dynamic-int8 version of a float model, in the form ONNX Runtime's quantize_dynamic writes (and
transformers.js ships as model_quantized.onnx): every MatMul whose B is a 2-D float initializer
becomes
    DynamicQuantizeLinear(A) -> MatMulInteger(A_q, B_q, A_zero, B_zero) -> Cast(float)
    -> Mul(by A_scale * B_scale)
with B quantized once: int8 symmetric (zero point 0, the default weight type) or with
--weight-type uint8 asymmetric; per tensor, or per output column with --per-channel.
    /usr/bin/python3 tools/gen_models/dynamic_int8_model.py IN.onnx OUT.onnx [--weight-type int8|uint8]
        [--per-channel]
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
    a = ap.parse_args()

    def rewrite(n, weights):
        if not model_files.is_matmul_on(n, weights):
            return None
        base = n.output[0]
        q, scale, zp = quantize_weight(numpy_helper.to_array(weights[n.input[1]]), a.weight_type == "uint8",
                                       a.per_channel)
        names = {k: f"{base}_{k}" for k in ("w_q", "w_scale", "w_zp", "a_q", "a_scale", "a_zp", "acc", "acc_f",
                                             "scale")}
        inits = [numpy_helper.from_array(q, names["w_q"]), numpy_helper.from_array(scale, names["w_scale"]),
                 numpy_helper.from_array(zp, names["w_zp"])]
        nodes = [
            helper.make_node("DynamicQuantizeLinear", [n.input[0]], [names["a_q"], names["a_scale"], names["a_zp"]],
                             name=base + "_QuantizeLinear"),
            helper.make_node("MatMulInteger", [names["a_q"], names["w_q"], names["a_zp"], names["w_zp"]],
                             [names["acc"]], name=base + "_MatMulInteger"),
            helper.make_node("Cast", [names["acc"]], [names["acc_f"]], to=TensorProto.FLOAT, name=base + "_cast"),
            helper.make_node("Mul", [names["a_scale"], names["w_scale"]], [names["scale"]], name=base + "_scales"),
            helper.make_node("Mul", [names["acc_f"], names["scale"]], list(n.output), name=base + "_output"),
        ]
        return nodes, inits, [n.input[1]]

    count = model_files.rewrite(a.src, a.dst, rewrite)
    print(f"wrote {a.dst}: {count} MatMuls in dynamic int8")


if __name__ == "__main__":
    main()
