#!/usr/bin/python3
"""4-bit weight-only version of a float model, as ONNX Runtime's MatMul4BitsQuantizer and the
onnxruntime-genai model builder write it: every MatMul whose B is a 2-D float initializer becomes a
com.microsoft MatMulNBits (bits 4, blocks of --block along K, scales [N, blocks]); with --embed, a
Gather from a 2-D float table becomes a GatherBlockQuantized (uint8 data holding two 4-bit values,
blocks along the hidden axis), the builder's int4 embedding.
    /usr/bin/python3 tools/gen_models/nbits_model.py IN.onnx OUT.onnx [--block 32] [--symmetric]
        [--accuracy-level 4] [--embed]
Asymmetric (the default) stores a zero point per block (uint8, two per byte); --symmetric leaves
them out (8 for every block, the scale signed so the extreme value maps to -8). The case folders
inputs beside IN are copied beside OUT (the expected outputs are ONNX Runtime's: ort_expected.js). Deterministic (round to nearest even), so nothing is committed.
Then, for the q4f16 form transformers.js ships, fp16_model.py --half-io turns the scales and every
activation into half."""
import argparse
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model_files  # noqa: E402


def quantize_blocks(w, block, symmetric):
    """w [rows, K] -> (q [rows, K_padded] uint8 0..15, scales [rows, blocks], zero points or None),
    blocks along K."""
    rows, k = w.shape
    blocks = -(-k // block)
    padded = np.zeros((rows, blocks * block), np.float32)
    padded[:, :k] = w
    b = padded.reshape(rows, blocks, block)
    if symmetric:
        idx = np.abs(b).argmax(axis=2)
        extreme = np.take_along_axis(b, idx[..., None], axis=2)[..., 0]
        scale = extreme / -8.0
        scale[scale == 0] = 1.0
        zp = np.full(scale.shape, 8.0, np.float32)
    else:
        lo, hi = np.minimum(b.min(axis=2), 0), np.maximum(b.max(axis=2), 0)
        scale = (hi - lo) / 15.0
        scale[scale == 0] = 1.0
        zp = np.clip(np.rint(-lo / scale), 0, 15)
    q = np.clip(np.rint(b / scale[..., None]) + zp[..., None], 0, 15).astype(np.uint8)
    return q.reshape(rows, -1), scale.astype(np.float32), None if symmetric else zp.astype(np.uint8)


def pack_pairs(q):
    """Two 4-bit values a byte, the first in the low nibble, along the last axis (padded to even)."""
    if q.shape[-1] % 2:
        q = np.concatenate([q, np.zeros(q.shape[:-1] + (1,), np.uint8)], axis=-1)
    return (q[..., 0::2] | (q[..., 1::2] << 4)).astype(np.uint8)


def matmul_nbits(node, w, a, inits):
    k, n = w.shape
    q, scales, zp = quantize_blocks(w.T, a.block, a.symmetric)
    blocks = scales.shape[1]
    base = node.output[0]
    b = pack_pairs(q).reshape(n, blocks, a.block // 2)
    inputs = [node.input[0], base + "_Q4", base + "_scales"]
    inits += [numpy_helper.from_array(b, inputs[1]), numpy_helper.from_array(scales, inputs[2])]
    if zp is not None:
        inputs.append(base + "_zero_points")
        inits.append(numpy_helper.from_array(pack_pairs(zp).reshape(-1), inputs[3]))
    return helper.make_node("MatMulNBits", inputs, list(node.output), name=(node.name or base) + "_Q4",
                            domain="com.microsoft", K=k, N=n, bits=4, block_size=a.block,
                            accuracy_level=a.accuracy_level)


def gather_block_quantized(node, table, a, inits):
    q, scales, zp = quantize_blocks(table, a.block, a.symmetric)
    base = node.output[0]
    rows, hidden = table.shape
    inputs = [base + "_Q4", node.input[1], base + "_scales"]
    inits += [numpy_helper.from_array(pack_pairs(q[:, :hidden]), inputs[0]),
              numpy_helper.from_array(scales, inputs[2])]
    if zp is not None:
        inputs.append(base + "_zero_points")
        inits.append(numpy_helper.from_array(pack_pairs(zp), inputs[3]))
    return helper.make_node("GatherBlockQuantized", inputs, list(node.output), name=(node.name or base) + "_Q4",
                            domain="com.microsoft", gather_axis=0, quantize_axis=1, block_size=a.block, bits=4)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("src")
    ap.add_argument("dst")
    ap.add_argument("--block", type=int, default=32)
    ap.add_argument("--symmetric", action="store_true")
    ap.add_argument("--accuracy-level", type=int, default=4)
    ap.add_argument("--embed", action="store_true")
    a = ap.parse_args()

    def rewrite(n, weights):
        inits = []
        if model_files.is_matmul_on(n, weights):
            node = matmul_nbits(n, numpy_helper.to_array(weights[n.input[1]]), a, inits)
            return [node], inits, [n.input[1]]
        if a.embed and n.op_type == "Gather" and n.input[0] in weights and \
                all(at.i == 0 for at in n.attribute if at.name == "axis"):
            node = gather_block_quantized(n, numpy_helper.to_array(weights[n.input[0]]), a, inits)
            return [node], inits, [n.input[0]]
        return None

    count = model_files.rewrite(a.src, a.dst, rewrite, extra_opsets=[("com.microsoft", 1)])
    print(f"wrote {a.dst}: {count} weights in 4 bits")


if __name__ == "__main__":
    main()
