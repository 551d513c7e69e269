#!/usr/bin/env python3
"""Writes a BERT-base-shaped encoder in the plain form PyTorch's ONNX export gives (MatMul + Add
projections, Reshape/Transpose into heads, MatMul -> Div -> Add(mask) -> Softmax -> MatMul,
LayerNormalization as the opset-17 op, GELU written out as Div/Erf/Add/Mul/Mul), with seeded
random weights, as a test case folder: OUT/model.onnx and OUT/test_data_set_0/input_<i>.pb.

usage: gen_bert.py OUT_DIR [--layers 12] [--hidden 768] [--heads 12] [--seq 128] [--vocab 8192]
       [--seed 0] [--pad 0]
(--pad N masks the last N tokens out, to exercise the attention mask.)
The expected outputs come from ONNX Runtime: see make_cases.sh next to this file.
"""
import argparse
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from graph_writer import GraphWriter  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--hidden", type=int, default=768)
    ap.add_argument("--heads", type=int, default=12)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--vocab", type=int, default=8192)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--pad", type=int, default=0)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    H, N, S, L = a.hidden, a.heads, a.seq, a.layers
    D = H // N
    F = 4 * H
    w = GraphWriter(rng)
    init, weight, node, nodes, inits = w.init, w.weight, w.node, w.nodes, w.inits

    def layer_norm(x, prefix):
        return w.layer_norm(x, prefix, H, 1e-12)

    linear = w.linear

    # Embeddings: word + position + token type (all type 0), then LayerNorm.
    word = weight("emb.word", (a.vocab, H))
    pos = weight("emb.position", (512, H))
    ttype = weight("emb.token_type", (2, H))
    e_word = node("Gather", [word, "input_ids"], ["emb.word_out"], axis=0)
    init("emb.position_ids", np.arange(S, dtype=np.int64).reshape(1, S))
    e_pos = node("Gather", [pos, "emb.position_ids"], ["emb.pos_out"], axis=0)
    init("emb.type_ids", np.zeros((1, S), dtype=np.int64))
    e_type = node("Gather", [ttype, "emb.type_ids"], ["emb.type_out"], axis=0)
    s1 = node("Add", [e_word, e_pos], ["emb.sum1"])
    s2 = node("Add", [s1, e_type], ["emb.sum2"])
    x = layer_norm(s2, "emb.ln")

    # The additive mask: (1 - mask) * -10000, shape (batch, 1, 1, seq).
    init("axes_1_2", np.array([1, 2], dtype=np.int64))
    m1 = node("Unsqueeze", ["attention_mask", "axes_1_2"], ["mask.unsq"])
    m2 = node("Cast", [m1], ["mask.float"], to=TensorProto.FLOAT)
    init("one", np.array(1.0, dtype=np.float32))
    init("neg_big", np.array(-10000.0, dtype=np.float32))
    m3 = node("Sub", ["one", m2], ["mask.inv"])
    mask_add = node("Mul", [m3, "neg_big"], ["mask.add"])

    init("shape_heads", np.array([0, 0, N, D], dtype=np.int64))
    init("shape_hidden", np.array([0, 0, H], dtype=np.int64))
    init("sqrt_d", np.array(np.sqrt(D), dtype=np.float32))
    init("sqrt2", np.array(np.sqrt(2.0), dtype=np.float32))
    init("half", np.array(0.5, dtype=np.float32))
    for l in range(L):
        p = f"l{l}"
        q = linear(x, p + ".q", H, H)
        k = linear(x, p + ".k", H, H)
        v = linear(x, p + ".v", H, H)
        qh = node("Transpose", [node("Reshape", [q, "shape_heads"], [p + ".q_r"])], [p + ".q_t"], perm=[0, 2, 1, 3])
        kh = node("Transpose", [node("Reshape", [k, "shape_heads"], [p + ".k_r"])], [p + ".k_t"], perm=[0, 2, 3, 1])
        vh = node("Transpose", [node("Reshape", [v, "shape_heads"], [p + ".v_r"])], [p + ".v_t"], perm=[0, 2, 1, 3])
        sc = node("MatMul", [qh, kh], [p + ".scores"])
        sc = node("Div", [sc, "sqrt_d"], [p + ".scaled"])
        sc = node("Add", [sc, mask_add], [p + ".masked"])
        pr = node("Softmax", [sc], [p + ".probs"], axis=-1)
        ctx = node("MatMul", [pr, vh], [p + ".ctx"])
        ctx = node("Transpose", [ctx], [p + ".ctx_t"], perm=[0, 2, 1, 3])
        ctx = node("Reshape", [ctx, "shape_hidden"], [p + ".ctx_r"])
        o = linear(ctx, p + ".o", H, H)
        r = node("Add", [o, x], [p + ".res1"])
        x1 = layer_norm(r, p + ".ln1")
        f = linear(x1, p + ".ff1", H, F)
        g = node("Div", [f, "sqrt2"], [p + ".g_div"])
        g = node("Erf", [g], [p + ".g_erf"])
        g = node("Add", [g, "one"], [p + ".g_add"])
        g = node("Mul", [f, g], [p + ".g_mul"])
        g = node("Mul", [g, "half"], [p + ".gelu"])
        f2 = linear(g, p + ".ff2", F, H)
        r2 = node("Add", [f2, x1], [p + ".res2"])
        x = layer_norm(r2, p + ".ln2")
    nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"], name="output_node"))

    graph = helper.make_graph(
        nodes, "bert_base_like",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "sequence"]),
         helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "sequence"])],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "sequence", H])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="onnxflow gen_bert")
    model.ir_version = 8
    os.makedirs(os.path.join(a.out, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(a.out, "model.onnx"))
    ids = rng.integers(0, a.vocab, size=(1, S), dtype=np.int64)
    mask = np.ones((1, S), dtype=np.int64)
    if a.pad:
        mask[:, S - a.pad:] = 0
    for i, t in enumerate([ids, mask]):
        with open(os.path.join(a.out, "test_data_set_0", f"input_{i}.pb"), "wb") as fh:
            fh.write(numpy_helper.from_array(t).SerializeToString())
    print(f"{a.out}: {L} layers, hidden {H}, {N} heads, {S} tokens, {len(nodes)} nodes")


if __name__ == "__main__":
    main()
