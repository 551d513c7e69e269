#!/usr/bin/python3
"""float16 version of a float model: weights, activations and value types in half, a Cast at each
float input and output (the form fp16 converters write).
    /usr/bin/python3 tools/gen_models/fp16_model.py IN.onnx OUT.onnx
Deterministic (no randomness: the weights are the model's own, rounded to half), so the outputs
are rebuilt from the shared models rather than committed."""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F, H = TensorProto.FLOAT, TensorProto.FLOAT16


def to_half(t):
    if t.data_type != F:
        return t
    h = numpy_helper.from_array(numpy_helper.to_array(t).astype(np.float16), t.name)
    return h


def main():
    model = onnx.load(sys.argv[1])
    g = model.graph
    for i, t in enumerate(g.initializer):
        g.initializer[i].CopyFrom(to_half(t))
    init_names = {t.name for t in g.initializer}
    for n in g.node:
        for a in n.attribute:
            if a.type == onnx.AttributeProto.TENSOR:
                a.t.CopyFrom(to_half(a.t))
            if n.op_type == "Cast" and a.name == "to" and a.i == F:
                a.i = H
    for vi in list(g.value_info):
        if vi.type.tensor_type.elem_type == F:
            vi.type.tensor_type.elem_type = H
    edges = []
    for inp in g.input:
        if inp.name in init_names:
            inp.type.tensor_type.elem_type = H if inp.type.tensor_type.elem_type == F else inp.type.tensor_type.elem_type
            continue
        if inp.type.tensor_type.elem_type == F:
            half = inp.name + "_fp16"
            for n in g.node:
                for k, x in enumerate(n.input):
                    if x == inp.name:
                        n.input[k] = half
            edges.append(helper.make_node("Cast", [inp.name], [half], to=H))
    tail = []
    for out in g.output:
        if out.type.tensor_type.elem_type == F:
            half = out.name + "_fp16"
            for n in g.node:
                for k, x in enumerate(n.output):
                    if x == out.name:
                        n.output[k] = half
            tail.append(helper.make_node("Cast", [half], [out.name], to=F))
    nodes = edges + list(g.node) + tail
    del g.node[:]
    g.node.extend(nodes)
    onnx.save(model, sys.argv[2])


if __name__ == "__main__":
    main()
