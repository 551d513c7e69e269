#!/usr/bin/python3
"""Static QDQ version of a float model, the form ONNX Runtime's quantize_static writes (issue 21).

    /usr/bin/python3 tools/gen_models/qdq_model.py calibrate IN.onnx CALIB.onnx
    bazel-bin/tools/run_model CALIB.onnx --inputs CASE/test_data_set_0 --output-dir ACTS
    /usr/bin/python3 tools/gen_models/qdq_model.py write IN.onnx ACTS OUT.onnx

`calibrate` writes a copy of the model whose graph outputs are every float value the quantized
model will quantize; onnxflow runs it on a case's input and saves them (--output-dir); `write`
builds the QDQ model from their ranges:
  * activations: uint8 (QDQ_ACTIVATIONS=int8, uint16 or int16 for the others), asymmetric, min/max of the calibration
    run (0 always inside the range),
    a QuantizeLinear -> DequantizeLinear pair after each producer; MaxPool's output keeps its
    input's parameters, and a Relu after a Conv goes (the Conv's output takes the Relu's range,
    zero point 0), as ONNX Runtime's quantizer does;
  * Conv, Gemm and MatMul weights: int8, symmetric, per output channel (Conv and transB Gemm axis
    0, MatMul and plain Gemm axis 1), behind a DequantizeLinear;
  * their biases: int32 with scale x_scale * w_scale, behind a DequantizeLinear.
QDQ_OPS=ort also quantizes the data-movement ops and Softmax that ONNX Runtime quantizes by default.
Conv -> BatchNormalization pairs are folded first, as ONNX Runtime's quantization pre-processing
does. Deterministic: the same model and input give the same bytes. `randomize IN.onnx OUT.onnx SEED`
replaces ConstantOfShape weights (light_resnet50's) by seeded random initializers first.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper, version_converter

# Ops whose float inputs are quantized (the QDQ groups onnxflow and ONNX Runtime fuse).
QUANTIZED_OPS = {"Conv", "Gemm", "MatMul", "Add", "Mul", "Concat", "MaxPool", "AveragePool",
                 "GlobalAveragePool", "Relu", "Clip", "Sigmoid", "LeakyRelu"}
# QDQ_OPS=ort: also the data-movement ops and Softmax that ONNX Runtime's quantize_static
# quantizes by default (its QDQ and QLinear registries): a YOLOv8's Split and Resize then run on
# 8-bit values, as in the files its users bring. Their data input alone is quantized, and the
# ops that only move elements give their outputs their input's parameters, as MaxPool's.
MOVES_ELEMENTS = {"Split", "Resize", "Reshape", "Transpose", "Squeeze", "Unsqueeze", "Slice", "Gather"}
if os.environ.get("QDQ_OPS") == "ort":
    QUANTIZED_OPS |= MOVES_ELEMENTS | {"Softmax"}
WEIGHT_AXIS = {"Conv": 0, "MatMul": 1}


def float_values(model):
    """Non-constant float values read by a quantized op, in graph order."""
    g = model.graph
    inits = {t.name for t in g.initializer}
    types = {v.name: v.type.tensor_type.elem_type for v in list(g.input) + list(g.value_info) + list(g.output)}
    produced = {o for n in g.node for o in n.output}
    seen, out = set(), []
    for n in g.node:
        if n.op_type not in QUANTIZED_OPS:
            continue
        ins = n.input[:1] if n.op_type in ("Conv", "Gemm") or n.op_type in MOVES_ELEMENTS else n.input
        if n.op_type == "MatMul":
            ins = [n.input[0]] + [i for i in n.input[1:] if i not in inits]
        # ONNX Runtime's quantizer quantizes the outputs of Conv, Gemm and MatMul too, whoever reads
        # them (a HardSwish after a Conv is then DQ -> HardSwish -> Q).
        outs = list(n.output[:1]) if n.op_type in ("Conv", "Gemm", "MatMul") else []
        for v in list(ins) + outs:
            if v and v not in inits and v not in seen and (v in produced or types.get(v) == TensorProto.FLOAT):
                seen.add(v)
                out.append(v)
    return out


def load13(src):
    """The model at opset 13 or newer: per-axis DequantizeLinear needs 13."""
    model = onnx.load(src)
    if any(o.domain in ("", "ai.onnx") and o.version < 13 for o in model.opset_import):
        # The converter wants every initializer declared as a graph input, as IR 3 did.
        g = model.graph
        declared = {i.name for i in g.input}
        added = [t.name for t in g.initializer if t.name not in declared]
        for t in g.initializer:
            if t.name in added:
                g.input.append(helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)))
        model = version_converter.convert_version(model, 13)
        kept = [i for i in model.graph.input if i.name not in set(added)]
        del model.graph.input[:]
        model.graph.input.extend(kept)
    for n in model.graph.node:  # old exports' two-input Sum is today's Add (residuals)
        if n.op_type == "Sum" and len(n.input) == 2:
            n.op_type = "Add"
    return fold_batch_norm(model)


def set_nodes(g, nodes):
    """The graph's nodes become `nodes`; initializers and (IR 3) declared inputs nothing reads go."""
    del g.node[:]
    g.node.extend(nodes)
    used = {v for n in g.node for v in n.input} | {o.name for o in g.output}
    for field in (g.initializer, g.input):
        kept = [t for t in field if t.name in used]
        del field[:]
        field.extend(kept)


def fold_batch_norm(model):
    """Conv -> BatchNormalization becomes one Conv, as ONNX Runtime's quantization pre-processing
    does before it quantizes (the QDQ groups are then DQ -> Conv -> Q)."""
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    readers = {}
    for n in g.node:
        for v in n.input:
            readers[v] = readers.get(v, 0) + 1
    producer = {o: n for n in g.node for o in n.output}
    drop = set()
    for bn in g.node:
        if bn.op_type != "BatchNormalization":
            continue
        conv = producer.get(bn.input[0])
        if conv is None or conv.op_type != "Conv" or readers[bn.input[0]] != 1:
            continue
        if conv.input[1] not in inits or any(v not in inits for v in bn.input[1:5]):
            continue
        scale, bias, mean, var = (numpy_helper.to_array(inits[v]).astype(np.float64) for v in bn.input[1:5])
        eps = next((a.f for a in bn.attribute if a.name == "epsilon"), 1e-5)
        w = numpy_helper.to_array(inits[conv.input[1]]).astype(np.float64)
        b = numpy_helper.to_array(inits[conv.input[2]]).astype(np.float64) if len(conv.input) > 2 else 0.0
        f = scale / np.sqrt(var + eps)
        w_name, b_name = conv.input[1] + "_bn", conv.output[0] + "_bn_bias"
        g.initializer.append(numpy_helper.from_array((w * f.reshape(-1, 1, 1, 1)).astype(np.float32), w_name))
        g.initializer.append(numpy_helper.from_array(((b - mean) * f + bias).astype(np.float32), b_name))
        del conv.input[1:]
        conv.input.extend([w_name, b_name])
        conv.output[0] = bn.output[0]
        drop.add(id(bn))
    set_nodes(g, [n for n in g.node if id(n) not in drop])
    return model


def calibrate(src, dst, values_of=None):
    """Writes src with every value values_of(model) names (default: float_values) as an output."""
    model = load13(src)
    values = (values_of or float_values)(model)
    del model.graph.output[:]
    for v in values:
        model.graph.output.append(helper.make_tensor_value_info(v, TensorProto.FLOAT, None))
    os.makedirs(os.path.dirname(os.path.abspath(dst)), exist_ok=True)
    onnx.save(model, dst)


# QDQ_ACTIVATIONS=int8 writes ONNX Runtime's S8S8 form (int8 activations, still asymmetric: the
# zero point is qmin - lo / scale); the default is its U8S8 form. uint16 / int16 write its 16-bit
# activation form (QuantType.QUInt16 / QInt16), whose QuantizeLinear and DequantizeLinear are in
# the com.microsoft domain below opset 21 (QDQ_DOMAIN= empty writes them in the default one).
ACT = os.environ.get("QDQ_ACTIVATIONS", "uint8")
ACT_TYPE = {"uint8": np.uint8, "int8": np.int8, "uint16": np.uint16, "int16": np.int16}[ACT]
ACT_INT8 = ACT in ("int8", "int16")  # signed activations
QRANGE = 65535 if ACT.endswith("16") else 255
QDOM = os.environ.get("QDQ_DOMAIN", "com.microsoft" if ACT.endswith("16") else "")
ACT_DOMAIN = {"domain": QDOM} if QDOM else {}  # no domain field at all in the 8-bit forms


def act_params(x):
    lo, hi = min(float(x.min()), 0.0), max(float(x.max()), 0.0)
    scale = max((hi - lo) / QRANGE, 1e-8)
    qmin = -(QRANGE + 1) // 2 if ACT_INT8 else 0
    zero = int(np.clip(np.rint(qmin - lo / scale), qmin, qmin + QRANGE))
    return np.float32(scale), ACT_TYPE(zero)


def write(src, acts_dir, dst):
    model = load13(src)
    g = model.graph
    values = float_values(model)  # in the order calibrate wrote them
    params = {}
    for i, v in enumerate(values):
        t = onnx.load_tensor(os.path.join(acts_dir, f"output_{i}.pb"))
        params[v] = act_params(numpy_helper.to_array(t))
    # As ONNX Runtime's quantizer does: MaxPool's output keeps its input's parameters (it runs on
    # the 8-bit values), and a Relu after a Conv goes, the Conv's output quantized with the
    # Relu's range (zero point 0: the quantization clamps at zero).
    for n in g.node:
        if (n.op_type == "MaxPool" or n.op_type in MOVES_ELEMENTS) and n.input[0] in params:
            for o in n.output:
                if o in params:
                    params[o] = params[n.input[0]]
    readers = {}
    for n in g.node:
        for v in n.input:
            readers[v] = readers.get(v, 0) + 1
    graph_outputs = {o.name for o in g.output}
    relu_of = {}
    for n in g.node:
        if n.op_type == "Relu" and readers.get(n.input[0]) == 1 and n.input[0] not in graph_outputs:
            relu_of[n.input[0]] = n
    producers = {o: n.op_type for n in g.node for o in n.output}
    relu_of = {v: r for v, r in relu_of.items() if producers.get(v) == "Conv" and r.output[0] in params}
    dropped = {id(r) for r in relu_of.values()}
    inits = {t.name: t for t in g.initializer}
    new_inits, new_nodes, renamed = [], [], {}

    def const(name, arr):
        new_inits.append(numpy_helper.from_array(arr, name))
        return name

    def qdq(v):
        s, z = params[v]
        sn, zn = const(v + "_scale", np.array(s, np.float32)), const(v + "_zero_point", np.array(z, ACT_TYPE))
        new_nodes.append(helper.make_node("QuantizeLinear", [v, sn, zn], [v + "_QuantizeLinear_Output"],
                                          name=v + "_QuantizeLinear", **ACT_DOMAIN))
        new_nodes.append(helper.make_node("DequantizeLinear", [v + "_QuantizeLinear_Output", sn, zn],
                                          [v + "_DequantizeLinear_Output"], name=v + "_DequantizeLinear", **ACT_DOMAIN))
        renamed[v] = v + "_DequantizeLinear_Output"

    for v in values:  # graph inputs quantized first
        if v in {i.name for i in g.input}:
            qdq(v)
    weights_done = {}
    for n in g.node:
        if id(n) in dropped:
            continue
        node = onnx.NodeProto()
        node.CopyFrom(n)
        if node.output and node.output[0] in relu_of:
            node.output[0] = relu_of[node.output[0]].output[0]
        for k, v in enumerate(node.input):
            if v in renamed:
                node.input[k] = renamed[v]
        w_index = 1 if n.op_type in ("Conv", "Gemm", "MatMul") else None
        if w_index is not None and len(n.input) > 1 and n.input[1] in inits and n.input[0] in params:
            w = numpy_helper.to_array(inits[n.input[1]]).astype(np.float32)
            axis = WEIGHT_AXIS.get(n.op_type)
            if n.op_type == "Gemm":
                axis = 0 if any(a.name == "transB" and a.i == 1 for a in n.attribute) else 1
            key = (n.input[1], axis)
            if key not in weights_done:
                reduce = tuple(i for i in range(w.ndim) if i != axis)
                ws = np.maximum(np.abs(w).max(axis=reduce), 1e-8).astype(np.float32) / 127.0
                shape = [1] * w.ndim
                shape[axis] = -1
                wq = np.clip(np.rint(w / ws.reshape(shape)), -127, 127).astype(np.int8)
                base = n.input[1]
                qn = const(base + "_quantized", wq)
                sn = const(base + "_scale", ws)
                zn = const(base + "_zero_point", np.zeros(ws.shape, np.int8))
                new_nodes.append(helper.make_node("DequantizeLinear", [qn, sn, zn], [base + "_DequantizeLinear_Output"],
                                                  name=base + "_DequantizeLinear", axis=axis))
                weights_done[key] = (base + "_DequantizeLinear_Output", ws)
            node.input[1], ws = weights_done[key]
            if len(n.input) > 2 and n.input[2] in inits:
                b = numpy_helper.to_array(inits[n.input[2]]).astype(np.float32)
                bs = (params[n.input[0]][0] * ws).astype(np.float32)
                if bs.size != b.size:
                    bs = np.full(b.shape, bs.item(), np.float32)
                bq = np.rint(b / bs).astype(np.int32)
                base = n.input[2] + "_" + n.name
                qn, sn = const(base + "_quantized", bq), const(base + "_scale", bs)
                zn = const(base + "_zero_point", np.zeros(bs.shape, np.int32))
                new_nodes.append(helper.make_node("DequantizeLinear", [qn, sn, zn], [base + "_DequantizeLinear_Output"],
                                                  name=base + "_DequantizeLinear", axis=0))
                node.input[2] = base + "_DequantizeLinear_Output"
        new_nodes.append(node)
        for o in node.output:
            if o in params:
                qdq(o)
    g.initializer.extend(new_inits)
    set_nodes(g, new_nodes)
    model.ir_version = max(model.ir_version, 7)
    if QDOM and not any(o.domain == QDOM for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid(QDOM, 1))
    os.makedirs(os.path.dirname(os.path.abspath(dst)), exist_ok=True)
    onnx.save(model, dst)


def randomize(src, dst, seed):
    """ConstantOfShape weights (light_* models) become seeded random initializers: 1/sqrt(fan-in)
    weights, small biases, BatchNormalization statistics near identity."""
    model = onnx.load(src)
    g = model.graph
    rng = np.random.default_rng(int(seed))
    inits = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    consumers = {}
    for n in g.node:
        for k, v in enumerate(n.input):
            consumers.setdefault(v, []).append((n, k))
    nodes = []
    for n in g.node:
        if n.op_type != "ConstantOfShape":
            nodes.append(n)
            continue
        shape = inits[n.input[0]].astype(np.int64)
        uses = consumers.get(n.output[0], [(None, 0)])
        op, k = (uses[0][0].op_type if uses[0][0] is not None else ""), uses[0][1]
        fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else 1
        if op in ("Conv", "Gemm", "MatMul") and k == 1:
            arr = rng.normal(0, np.sqrt(1.0 / max(fan_in, 1)), shape)
        elif op == "BatchNormalization" and k == 1:  # scales that keep 50 layers of residuals finite
            arr = rng.uniform(0.2, 0.4, shape)
        elif op == "BatchNormalization" and k == 4:
            arr = rng.uniform(0.5, 1.5, shape)
        else:
            arr = rng.normal(0, 0.05, shape)
        g.initializer.append(numpy_helper.from_array(arr.astype(np.float32), n.output[0]))
    set_nodes(g, nodes)
    os.makedirs(os.path.dirname(os.path.abspath(dst)), exist_ok=True)
    onnx.save(model, dst)


if __name__ == "__main__":
    cmd = sys.argv[1]
    {"calibrate": calibrate, "write": write, "randomize": randomize}[cmd](*sys.argv[2:])
