#!/usr/bin/python3
"""float16 version of a float model: weights, activations and value types in half, a Cast at each
float input and output of the main graph (the form fp16 converters write with keep_io_types), or
with --half-io the inputs and outputs in half too (transformers.js's fp16 decoders: caches in half).
Subgraphs (If/Loop/Scan bodies, e.g. Optimum's merged decoders) are converted in place: their
constants, declared types and Casts in half, their inputs and outputs too.
    /usr/bin/python3 tools/gen_models/fp16_model.py IN.onnx OUT.onnx [--half-io]
With --half-io, the test_data_set_* inputs beside IN are written beside OUT rounded to half (the
expected outputs are ONNX Runtime's: tools/gen_models/ort_expected.js).
Deterministic (no randomness: the weights are the model's own, rounded to half), so the outputs
are rebuilt from the shared or generated models rather than committed."""
import glob
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model_files  # noqa: E402

F, H = TensorProto.FLOAT, TensorProto.FLOAT16


def to_half(t):
    if t.data_type != F:
        return t
    # Saturate rather than overflow: a float mask constant such as -3.4e38 becomes -65504, as
    # onnxconverter-common's converter clips it, instead of -inf (whose 0 * -inf would be NaN).
    a = np.clip(numpy_helper.to_array(t), -65504, 65504)
    return numpy_helper.from_array(a.astype(np.float16), t.name)


def halve_values(values):
    for vi in values:
        if vi.type.tensor_type.elem_type == F:
            vi.type.tensor_type.elem_type = H


# Inputs whose type the op fixes as float whatever its data type (onnxconverter-common keeps them
# float too): Resize's roi and scales.
FLOAT_ONLY_INPUTS = {"Resize": (1, 2)}


def halve_graph(g, outer=False):
    """Everything float in g becomes half; the main graph's own inputs and outputs (outer=True)
    stay float behind Casts."""
    float_only = {n.input[k] for n in g.node for k in FLOAT_ONLY_INPUTS.get(n.op_type, ()) if k < len(n.input)}
    for i, t in enumerate(g.initializer):
        if t.name not in float_only:
            g.initializer[i].CopyFrom(to_half(t))
    for n in g.node:
        for a in n.attribute:
            if a.type == onnx.AttributeProto.TENSOR:
                a.t.CopyFrom(to_half(a.t))
            elif a.type == onnx.AttributeProto.GRAPH:
                halve_graph(a.g)
            elif a.type == onnx.AttributeProto.GRAPHS:
                for sub in a.graphs:
                    halve_graph(sub)
            if n.op_type == "Cast" and a.name == "to" and a.i == F:
                a.i = H
    halve_values(g.value_info)
    init_names = {t.name for t in g.initializer}
    if not outer:
        halve_values(g.input)
        halve_values(g.output)
        return
    halve_values(v for v in g.input if v.name in init_names and v.name not in float_only)
    renamed, head, tail = {}, [], []
    for inp in g.input:
        if inp.name not in init_names and inp.type.tensor_type.elem_type == F:
            renamed[inp.name] = inp.name + "_fp16"
            head.append(helper.make_node("Cast", [inp.name], [renamed[inp.name]], to=H))
    produced = {}
    for out in g.output:
        if out.type.tensor_type.elem_type == F:
            produced[out.name] = out.name + "_fp16"
            tail.append(helper.make_node("Cast", [produced[out.name]], [out.name], to=F))
    # An output may also feed other nodes (a decoder's present key is read by its attention): every
    # reader follows the rename, not just the producer.
    renamed.update(produced)
    rename_reads(g, renamed)
    for n in g.node:
        for k, x in enumerate(n.output):
            if x in produced:
                n.output[k] = produced[x]
    nodes = head + list(g.node) + tail
    del g.node[:]
    g.node.extend(nodes)


def rename_reads(g, renamed):
    for n in g.node:
        for k, x in enumerate(n.input):
            if x in renamed:
                n.input[k] = renamed[x]
        for a in n.attribute:
            for sub in ([a.g] if a.type == onnx.AttributeProto.GRAPH else list(a.graphs)):
                local = {v.name for v in sub.input} | {t.name for t in sub.initializer}
                rename_reads(sub, {k: v for k, v in renamed.items() if k not in local})
                for o in sub.output:
                    if o.name in renamed and o.name not in local:
                        o.name = renamed[o.name]


def halve_cases(src_dir, dst_dir, graph):
    """The case folders beside the float model, their float inputs rounded to half."""
    inits = {t.name for t in graph.initializer}
    inputs = [v for v in graph.input if v.name not in inits]
    for case in sorted(glob.glob(os.path.join(src_dir, "test_data_set_*"))):
        out = os.path.join(dst_dir, os.path.basename(case))
        os.makedirs(out, exist_ok=True)
        for i, v in enumerate(inputs):
            t = onnx.load_tensor(os.path.join(case, f"input_{i}.pb"))
            if t.data_type == F and v.type.tensor_type.elem_type == H:
                t = numpy_helper.from_array(numpy_helper.to_array(t).astype(np.float16), t.name)
            onnx.save_tensor(t, os.path.join(out, f"input_{i}.pb"))


def main():
    half_io = "--half-io" in sys.argv[1:]
    src, dst = [a for a in sys.argv[1:] if a != "--half-io"]
    # Checked when the float model passes the checker (real ones often do not: real_inception_v1's
    # IR 3 initializers are not all graph inputs), so a fault of this conversion shows here.
    model, source_valid = model_files.load(src)
    halve_graph(model.graph, outer=not half_io)
    model_files.check_and_save(model, dst, source_valid)
    if half_io:
        halve_cases(os.path.dirname(os.path.abspath(src)), os.path.dirname(os.path.abspath(dst)), model.graph)


if __name__ == "__main__":
    main()
