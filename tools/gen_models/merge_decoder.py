#!/usr/bin/python3
"""Wraps a decoder case folder into the form Optimum saves as decoder_model_merged.onnx: one If on
a new bool input `use_cache_branch` whose two branches each hold the whole network, every weight an
initializer of the main graph, read by the branches as an outer value. Both branches are the input
network (names prefixed per branch); the cases are copied with use_cache_branch = true added as the
last input, so their expected outputs still hold.

usage: /usr/bin/python3 tools/gen_models/merge_decoder.py CASE_DIR OUT_DIR
"""
import copy
import os
import shutil
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def branch(graph, prefix, outer):
    body = helper.make_graph([], prefix + "branch", [], [])
    rename = lambda n: n if (n == "" or n in outer) else prefix + n
    for k, node in enumerate(graph.node):
        c = copy.deepcopy(node)
        c.name = prefix + (node.name or f"node{k}")
        del c.input[:]
        c.input.extend(rename(x) for x in node.input)
        del c.output[:]
        c.output.extend(rename(x) for x in node.output)
        body.node.append(c)
    for out in graph.output:
        o = copy.deepcopy(out)
        o.name = rename(out.name)
        body.output.append(o)
    return body


def main():
    src, dst = sys.argv[1], sys.argv[2]
    model = onnx.load(os.path.join(src, "model.onnx"))
    g = model.graph
    outer = {i.name for i in g.input} | {i.name for i in g.initializer}
    node = helper.make_node("If", ["use_cache_branch"], [o.name for o in g.output], "use_cache_branch_if",
                            then_branch=branch(g, "with_past/", outer), else_branch=branch(g, "no_past/", outer))
    inputs = list(g.input) + [helper.make_tensor_value_info("use_cache_branch", TensorProto.BOOL, [1])]
    merged = helper.make_model(helper.make_graph([node], "merged", inputs, list(g.output), list(g.initializer)),
                               opset_imports=model.opset_import, ir_version=model.ir_version)
    os.makedirs(dst, exist_ok=True)
    onnx.save(merged, os.path.join(dst, "model.onnx"))
    for case in sorted(d for d in os.listdir(src) if d.startswith("test_data_set")):
        shutil.copytree(os.path.join(src, case), os.path.join(dst, case), dirs_exist_ok=True)
        k = len([f for f in os.listdir(os.path.join(dst, case)) if f.startswith("input_")])
        flag = numpy_helper.from_array(np.array([True]), "use_cache_branch")
        onnx.save_tensor(flag, os.path.join(dst, case, f"input_{k}.pb"))


if __name__ == "__main__":
    main()
