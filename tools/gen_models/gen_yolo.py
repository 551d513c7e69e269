#!/usr/bin/env python3
"""Writes a YOLOv8-shaped detector in the form Ultralytics' ONNX export gives it (opset 17, batch
norms folded into the convolutions): Conv + SiLU (Sigmoid, Mul) blocks, C2f (Conv -> Split into
halves -> bottlenecks with residual Adds -> Concat -> Conv), SPPF (three chained 5x5 MaxPools and
a Concat), the neck's nearest 2x Resize and Concats, and the head: per scale a box branch (4 x 16
distribution bins) and a class branch, reshaped and concatenated over the three scales, the
distribution decoded by Softmax and a fixed 1x1 Conv (DFL), the boxes by anchor Sub/Add/Mul and
the classes by Sigmoid, into (1, 4 + classes, anchors). Seeded random weights scaled to keep the
activations in range; a test case folder: OUT/model.onnx and OUT/test_data_set_0/input_0.pb.

usage: gen_yolo.py OUT_DIR [--image 640] [--width 16] [--depth 1] [--classes 80] [--seed 0]
(--width 16 --depth 1 is YOLOv8n: channels 16, 32, 64, 128, 256; --width 32 --depth 2 is about
YOLOv8s.) The expected outputs come from ONNX Runtime: tools/gen_models/ort_expected.js.
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
    for name, default in (("image", 640), ("width", 16), ("depth", 1), ("classes", 80), ("seed", 0)):
        ap.add_argument("--" + name, type=int, default=default)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    w = GraphWriter(rng)
    init, node = w.init, w.node
    count = [0]

    def name(prefix):
        count[0] += 1
        return f"{prefix}{count[0]}"

    def conv(x, c_in, c_out, k=1, s=1, act=True, bias_std=0.1):
        """Conv (a folded batch norm's bias) [+ SiLU]; weights scaled by fan-in to keep unit variance."""
        p = name("conv")
        wt = w.init(p + ".weight", (rng.standard_normal((c_out, c_in, k, k)) * (1.5 / np.sqrt(c_in * k * k)))
                    .astype(np.float32))
        b = w.init(p + ".bias", (rng.standard_normal(c_out) * bias_std).astype(np.float32))
        y = node("Conv", [x, wt, b], [p + ".out"], kernel_shape=[k, k], strides=[s, s], pads=[k // 2] * 4)
        if not act:
            return y
        return node("Mul", [y, node("Sigmoid", [y], [p + ".sig"])], [p + ".silu"])

    def c2f(x, c_in, c_out, n, shortcut):
        c = c_out // 2
        y = conv(x, c_in, 2 * c)
        p = name("c2f")
        halves = [p + ".a", p + ".b"]
        w.nodes.append(helper.make_node("Split", [y, init(p + ".split", np.array([c, c], np.int64))], halves,
                                        name=p + ".split_node", axis=1))
        parts = list(halves)
        for _ in range(n):
            t = conv(conv(parts[-1], c, c, 3), c, c, 3)
            parts.append(node("Add", [parts[-1], t], [name("res")]) if shortcut else t)
        return conv(node("Concat", parts, [p + ".cat"], axis=1), (2 + n) * c, c_out)

    def sppf(x, c_in, c_out):
        c = c_in // 2
        y = conv(x, c_in, c)
        pools = [y]
        for _ in range(3):
            pools.append(node("MaxPool", [pools[-1]], [name("pool")], kernel_shape=[5, 5], pads=[2, 2, 2, 2]))
        return conv(node("Concat", pools, [name("sppf")], axis=1), 4 * c, c_out)

    def upsample(x):
        p = name("up")
        return node("Resize", [x, "", init(p + ".scales", np.array([1, 1, 2, 2], np.float32))], [p + ".out"],
                    mode="nearest")

    ch = [a.width * m for m in (1, 2, 4, 8, 16)]
    d = a.depth
    # Backbone.
    x = conv("images", 3, ch[0], 3, 2)
    x = conv(x, ch[0], ch[1], 3, 2)
    x = c2f(x, ch[1], ch[1], d, True)
    x = conv(x, ch[1], ch[2], 3, 2)
    p3 = c2f(x, ch[2], ch[2], 2 * d, True)
    x = conv(p3, ch[2], ch[3], 3, 2)
    p4 = c2f(x, ch[3], ch[3], 2 * d, True)
    x = conv(p4, ch[3], ch[4], 3, 2)
    x = c2f(x, ch[4], ch[4], d, True)
    p5 = sppf(x, ch[4], ch[4])
    # Neck: top-down, then bottom-up.
    x = c2f(node("Concat", [upsample(p5), p4], [name("cat")], axis=1), ch[4] + ch[3], ch[3], d, False)
    n4 = x
    n3 = c2f(node("Concat", [upsample(x), p3], [name("cat")], axis=1), ch[3] + ch[2], ch[2], d, False)
    x = conv(n3, ch[2], ch[2], 3, 2)
    n4 = c2f(node("Concat", [x, n4], [name("cat")], axis=1), ch[2] + ch[3], ch[3], d, False)
    x = conv(n4, ch[3], ch[3], 3, 2)
    n5 = c2f(node("Concat", [x, p5], [name("cat")], axis=1), ch[3] + ch[4], ch[4], d, False)
    # Head: per scale, box (4 x 16 bins) and class branches, flattened over the grid.
    bins, nc = 16, a.classes
    c_box, c_cls = max(16, ch[2] // 4, 4 * bins), max(ch[2], min(nc, 100))
    flat = []
    for feat, c_in in ((n3, ch[2]), (n4, ch[3]), (n5, ch[4])):
        box = conv(conv(conv(feat, c_in, c_box, 3), c_box, c_box, 3), c_box, 4 * bins, act=False)
        cls = conv(conv(conv(feat, c_in, c_cls, 3), c_cls, c_cls, 3), c_cls, nc, act=False, bias_std=1.0)
        both = node("Concat", [box, cls], [name("head")], axis=1)
        flat.append(node("Reshape", [both, init(name("shape"), np.array([1, 4 * bins + nc, -1], np.int64))],
                         [name("flat")]))
    x = node("Concat", flat, ["head.cat"], axis=2)
    box, cls = "head.box", "head.cls"
    w.nodes.append(helper.make_node("Split", [x, init("head.split", np.array([4 * bins, nc], np.int64))], [box, cls],
                                    name="head.split_node", axis=1))
    # DFL: the expected bin of each side's distribution, by Softmax and a fixed 1x1 Conv.
    g = node("Reshape", [box, init("dfl.shape", np.array([1, 4, bins, -1], np.int64))], ["dfl.grid"])
    g = node("Softmax", [node("Transpose", [g], ["dfl.t"], perm=[0, 2, 1, 3])], ["dfl.prob"], axis=1)
    g = node("Conv", [g, init("dfl.weight", np.arange(bins, dtype=np.float32).reshape(1, bins, 1, 1))], ["dfl.conv"])
    dist = node("Reshape", [g, init("dfl.out_shape", np.array([1, 4, -1], np.int64))], ["dfl.dist"])
    # Anchors (grid cell centres) and strides of the three scales, as the export bakes them in.
    anchors, strides = [], []
    for s in (8, 16, 32):
        n = a.image // s
        yy, xx = np.meshgrid(np.arange(n) + 0.5, np.arange(n) + 0.5, indexing="ij")
        anchors.append(np.stack([xx.ravel(), yy.ravel()]))
        strides.append(np.full(n * n, s))
    anchors = init("anchors", np.concatenate(anchors, 1)[None].astype(np.float32))
    strides = init("strides", np.concatenate(strides)[None, None].astype(np.float32))
    lt, rb = "dfl.lt", "dfl.rb"
    w.nodes.append(helper.make_node("Split", [dist, init("dfl.halves", np.array([2, 2], np.int64))], [lt, rb],
                                    name="dfl.split_node", axis=1))
    x1y1 = node("Sub", [anchors, lt], ["box.x1y1"])
    x2y2 = node("Add", [anchors, rb], ["box.x2y2"])
    centre = node("Div", [node("Add", [x1y1, x2y2], ["box.sum"]), init("two", np.array(2, np.float32))], ["box.c"])
    wh = node("Sub", [x2y2, x1y1], ["box.wh"])
    boxes = node("Mul", [node("Concat", [centre, wh], ["box.cat"], axis=1), strides], ["box.out"])
    node("Concat", [boxes, node("Sigmoid", [cls], ["cls.prob"])], ["output0"], axis=1)

    anchors_total = sum((a.image // s) ** 2 for s in (8, 16, 32))
    graph = helper.make_graph(
        w.nodes, "yolo_like", [helper.make_tensor_value_info("images", TensorProto.FLOAT, [1, 3, a.image, a.image])],
        [helper.make_tensor_value_info("output0", TensorProto.FLOAT, [1, 4 + nc, anchors_total])], w.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="onnxflow gen_yolo")
    model.ir_version = 8
    onnx.checker.check_model(model)
    os.makedirs(os.path.join(a.out, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(a.out, "model.onnx"))
    image = rng.uniform(0, 1, (1, 3, a.image, a.image)).astype(np.float32)
    with open(os.path.join(a.out, "test_data_set_0", "input_0.pb"), "wb") as fh:
        fh.write(numpy_helper.from_array(image, "images").SerializeToString())
    print(f"{a.out}: {len(w.nodes)} nodes, {anchors_total} anchors")


if __name__ == "__main__":
    main()
