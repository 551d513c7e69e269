#!/usr/bin/env python3
"""Writes a ViT-shaped image classifier in the form PyTorch's ONNX export gives timm's
VisionTransformer: a 16x16 stride-16 Conv patch embedding, class token and position embedding,
then per block LayerNormalization -> one qkv MatMul + Add -> Reshape(B, S, 3, N, D) ->
Transpose(2, 0, 3, 1, 4) -> unbind (Split + Squeeze) -> q * scale, k^T, Softmax, times v ->
Transpose/Reshape back -> projection and residual; LayerNormalization -> MLP with GELU written out
-> residual; the final norm and the class token's head. Seeded random weights; a test case folder:
OUT/model.onnx and OUT/test_data_set_0/input_0.pb (one 224 x 224 image by default).

usage: gen_vit.py OUT_DIR [--layers 12] [--hidden 384] [--heads 6] [--image 224] [--patch 16]
       [--classes 1000] [--seed 0] [--dynamic]
(--dynamic reads B and S off the input's shape at run time, as an export with dynamic axes does;
without it the Reshape's entries are numbers, as a static export folds them.)
The expected outputs come from ONNX Runtime: tools/gen_models/ort_expected.js.
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
    for name, default in (("layers", 12), ("hidden", 384), ("heads", 6), ("image", 224), ("patch", 16),
                          ("classes", 1000), ("seed", 0)):
        ap.add_argument("--" + name, type=int, default=default)
    ap.add_argument("--dynamic", action="store_true")
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    H, N, L = a.hidden, a.heads, a.layers
    D = H // N
    P = (a.image // a.patch) ** 2
    S = P + 1
    w = GraphWriter(rng)
    init, weight, node, nodes, inits = w.init, w.weight, w.node, w.nodes, w.inits

    def layer_norm(x, prefix):
        return w.layer_norm(x, prefix, H, 1e-6)

    linear = w.linear

    # Patch embedding: Conv -> (1, H, P) -> (1, P, H); class token first; position embedding.
    conv = node("Conv", ["pixel_values", weight("patch.weight", (H, 3, a.patch, a.patch)), weight("patch.bias", (H,))],
                ["patch.conv"], kernel_shape=[a.patch, a.patch], strides=[a.patch, a.patch])
    init("shape_flat", np.array([0, H, -1], dtype=np.int64))
    flat = node("Reshape", [conv, "shape_flat"], ["patch.flat"])
    tokens = node("Transpose", [flat], ["patch.tokens"], perm=[0, 2, 1])
    cls = weight("cls_token", (1, 1, H))
    x = node("Concat", [cls, tokens], ["embed.cat"], axis=1)
    x = node("Add", [x, weight("pos_embed", (1, S, H))], ["embed.out"])

    init("parts_shape", np.array([1, S, 3, N, D], dtype=np.int64))
    init("hidden_shape", np.array([1, S, H], dtype=np.int64))
    init("ones3", np.array([1, 1, 1], dtype=np.int64))
    init("axis0", np.array([0], dtype=np.int64))
    init("rest_parts", np.array([3, N, D], dtype=np.int64))
    init("rest_hidden", np.array([H], dtype=np.int64))
    init("i0", np.array(0, dtype=np.int64))
    init("i1", np.array(1, dtype=np.int64))
    init("scale", np.array(D ** -0.5, dtype=np.float32))
    init("sqrt2", np.array(np.sqrt(2.0), dtype=np.float32))
    init("one", np.array(1.0, dtype=np.float32))
    init("half", np.array(0.5, dtype=np.float32))
    for l in range(L):
        p = f"b{l}"
        h = layer_norm(x, p + ".norm1")
        qkv = linear(h, p + ".qkv", H, 3 * H)
        if a.dynamic:  # B, S = x.shape[:2], read at run time
            shape = node("Shape", [h], [p + ".shape"])
            dims = [node("Unsqueeze", [node("Gather", [shape, i], [p + ".dim" + i]), "axis0"], [p + ".lead" + i])
                    for i in ("i0", "i1")]
            parts_shape = node("Concat", dims + ["rest_parts"], [p + ".parts_shape"], axis=0)
            hidden_shape = node("Concat", dims + ["rest_hidden"], [p + ".hidden_shape"], axis=0)
        else:
            parts_shape, hidden_shape = "parts_shape", "hidden_shape"
        r = node("Reshape", [qkv, parts_shape], [p + ".qkv5"])
        t = node("Transpose", [r], [p + ".parts"], perm=[2, 0, 3, 1, 4])
        node("Split", [t, "ones3"], [p + ".q1", p + ".k1", p + ".v1"], axis=0)
        q, k, v = (node("Squeeze", [p + "." + n + "1", "axis0"], [p + "." + n]) for n in "qkv")
        q = node("Mul", [q, "scale"], [p + ".q_scaled"])
        kt = node("Transpose", [k], [p + ".kt"], perm=[0, 1, 3, 2])
        probs = node("Softmax", [node("MatMul", [q, kt], [p + ".scores"])], [p + ".probs"], axis=-1)
        ctx = node("Transpose", [node("MatMul", [probs, v], [p + ".ctx"])], [p + ".ctx_t"], perm=[0, 2, 1, 3])
        ctx = node("Reshape", [ctx, hidden_shape], [p + ".ctx_r"])
        x = node("Add", [x, linear(ctx, p + ".proj", H, H)], [p + ".res1"])
        h = layer_norm(x, p + ".norm2")
        f = linear(h, p + ".fc1", H, 4 * H)
        g = node("Mul", [f, node("Add", [node("Erf", [node("Div", [f, "sqrt2"], [p + ".g_div"])], [p + ".g_erf"]),
                                          "one"], [p + ".g_add"])], [p + ".g_mul"])
        g = node("Mul", [g, "half"], [p + ".gelu"])
        x = node("Add", [x, linear(g, p + ".fc2", 4 * H, H)], [p + ".res2"])
    x = layer_norm(x, "norm")
    cls_out = node("Gather", [x, "i0"], ["cls_out"], axis=1)
    logits = linear(cls_out, "head", H, a.classes)
    nodes.append(helper.make_node("Identity", [logits], ["logits"], name="output_node"))

    batch = "batch" if a.dynamic else 1
    graph = helper.make_graph(
        nodes, "vit_like",
        [helper.make_tensor_value_info("pixel_values", TensorProto.FLOAT, [batch, 3, a.image, a.image])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [batch, a.classes])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="onnxflow gen_vit")
    model.ir_version = 8
    os.makedirs(os.path.join(a.out, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(a.out, "model.onnx"))
    image = rng.standard_normal((1, 3, a.image, a.image)).astype(np.float32)
    with open(os.path.join(a.out, "test_data_set_0", "input_0.pb"), "wb") as fh:
        fh.write(numpy_helper.from_array(image).SerializeToString())
    print(f"{a.out}: {L} blocks, hidden {H}, {N} heads, {S} tokens, {len(nodes)} nodes")


if __name__ == "__main__":
    main()
