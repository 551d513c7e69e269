#!/usr/bin/python3
"""A BERT-shaped encoder in the form ONNX Runtime writes when a transformer-optimized model (its
python optimizer's Attention, EmbedLayerNormalization, SkipLayerNormalization, BiasGelu) is then
dynamically quantized: QEmbedLayerNormalization over uint8 tables, and per layer
DynamicQuantizeLinear -> QAttention (int8 QKV weights, per-column scales), DynamicQuantizeMatMul
projections, BiasGelu, SkipLayerNormalization. Seeded; writes a case folder:

    /usr/bin/python3 tools/gen_models/bert_ms_int8.py OUT_DIR [--layers 12] [--hidden 768]
        [--heads 12] [--seq 128] [--vocab 8192] [--pad 0]

OUT_DIR/model.onnx and test_data_set_0/input_{0,1,2}.pb (input_ids, segment_ids, mask: int32);
ort_expected.js adds ONNX Runtime's output.
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    for name, default in (("layers", 12), ("hidden", 768), ("heads", 12), ("seq", 128), ("vocab", 8192), ("pad", 0),
                          ("seed", 0)):
        ap.add_argument("--" + name, type=int, default=default)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    H, S, F = a.hidden, a.seq, 4 * a.hidden
    nodes, inits = [], []

    def init(name, arr):
        inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def node(op, inputs, outputs, **attrs):
        nodes.append(helper.make_node(op, inputs, outputs, name=outputs[0], domain="com.microsoft"
                                      if op not in ("DynamicQuantizeLinear",) else "", **attrs))
        return outputs[0]

    def quant_table(name, arr):  # uint8, asymmetric per tensor
        lo, hi = min(float(arr.min()), 0.0), max(float(arr.max()), 0.0)
        scale = (hi - lo) / 255.0
        zero = int(np.clip(np.rint(-lo / scale), 0, 255))
        q = np.clip(np.rint(arr / scale) + zero, 0, 255).astype(np.uint8)
        return init(name, q), init(name + "_scale", np.float32(scale)), init(name + "_zero", np.uint8(zero))

    def quant_weight(name, w):  # int8, symmetric per column
        scale = np.maximum(np.abs(w).max(axis=0), 1e-8).astype(np.float32) / 127.0
        q = np.clip(np.rint(w / scale), -127, 127).astype(np.int8)
        return init(name, q), init(name + "_scale", scale)

    def weight(shape, std=0.02):
        return rng.normal(0, std, shape).astype(np.float32)

    def dq_matmul(x, prefix, n_in, n_out, bias=True):
        w, ws = quant_weight(prefix + "_w", weight((n_in, n_out)))
        b = init(prefix + "_b", weight((n_out,))) if bias else ""
        return node("DynamicQuantizeMatMul", [x, w, ws, "", b], [prefix + "_out"])

    # Embedding: QEmbedLayerNormalization.
    tables = [quant_table(n, weight(s)) for n, s in (("word", (a.vocab, H)), ("pos", (512, H)), ("seg", (2, H)))]
    gamma = quant_table("gamma", rng.uniform(0.8, 1.2, H).astype(np.float32))
    beta = quant_table("beta", weight((H,)))
    q = [t[0] for t in tables] + [gamma[0], beta[0]]
    scales = [t[1] for t in tables] + [gamma[1], beta[1]]
    zeros = [t[2] for t in tables] + [gamma[2], beta[2]]
    x, mask_index = "emb", "mask_index"
    nodes.append(helper.make_node("QEmbedLayerNormalization", ["input_ids", "segment_ids", q[0], q[1], q[2], q[3], q[4],
                                                               "input_mask"] + scales + zeros,
                                  [x, mask_index], name="embedding", domain="com.microsoft", epsilon=1e-12))
    for l in range(a.layers):
        p = f"l{l}"
        xq, xs, xz = f"{p}_xq", f"{p}_xs", f"{p}_xz"
        node("DynamicQuantizeLinear", [x], [xq, xs, xz])
        w, ws = quant_weight(p + "_qkv_w", weight((H, 3 * H)))
        att = node("QAttention", [xq, w, init(p + "_qkv_b", weight((3 * H,))), xs, ws, mask_index, xz],
                   [p + "_att"], num_heads=a.heads)
        proj = dq_matmul(att, p + "_o", H, H, bias=False)
        ln1 = node("SkipLayerNormalization", [proj, x, init(p + "_ln1_g", rng.uniform(0.8, 1.2, H).astype(np.float32)),
                                               init(p + "_ln1_b", weight((H,))), init(p + "_o_bias", weight((H,)))],
                   [p + "_ln1"], epsilon=1e-12)
        up = dq_matmul(ln1, p + "_up", H, F, bias=False)
        act = node("BiasGelu", [up, init(p + "_up_bias", weight((F,)))], [p + "_gelu"])
        down = dq_matmul(act, p + "_down", F, H, bias=False)
        x = node("SkipLayerNormalization", [down, ln1, init(p + "_ln2_g", rng.uniform(0.8, 1.2, H).astype(np.float32)),
                                             init(p + "_ln2_b", weight((H,))), init(p + "_down_bias", weight((H,)))],
                 [p + "_out"], epsilon=1e-12)
    nodes[-1].output[0] = "last_hidden_state"
    ids = [helper.make_tensor_value_info(n, TensorProto.INT32, [1, S]) for n in ("input_ids", "segment_ids", "input_mask")]
    graph = helper.make_graph(nodes, "bert_ms_int8", ids,
                              [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, [1, S, H])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)],
                              producer_name="onnxflow gen_models")
    os.makedirs(os.path.join(a.out, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(a.out, "model.onnx"))
    mask = np.ones((1, S), np.int32)
    if a.pad:
        mask[:, S - a.pad:] = 0
    for i, (name, arr) in enumerate((("input_ids", rng.integers(0, a.vocab, (1, S), dtype=np.int32)),
                                     ("segment_ids", (np.arange(S) >= S // 2).astype(np.int32).reshape(1, S)),
                                     ("input_mask", mask))):
        onnx.save_tensor(numpy_helper.from_array(arr, name), os.path.join(a.out, "test_data_set_0", f"input_{i}.pb"))


if __name__ == "__main__":
    main()
