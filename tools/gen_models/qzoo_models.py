#!/usr/bin/python3
"""The ONNX model zoo's int8 CNNs in their own QOperator form (resnet50-v1-12-int8,
mobilenetv2-12-int8, squeezenet1.0-12-int8, densenet-12-int8, vgg16-12-int8, ...), built directly
from a float model and one calibration run, as Intel Neural Compressor and ONNX Runtime's older
quantizer wrote them:

    /usr/bin/python3 tools/gen_models/qzoo_models.py calibrate IN.onnx CALIB.onnx
    bazel-bin/tools/run_model CALIB.onnx --inputs CASE/test_data_set_0 --output-dir ACTS --quiet
    /usr/bin/python3 tools/gen_models/qzoo_models.py write IN.onnx ACTS OUT.onnx [--weights u8|s8]
        [--per-channel] [--opset 12]

`calibrate` makes every float value a graph output (BatchNormalization folded first, as
qdq_model.py does); `write` quantizes from their ranges:
  * activations uint8, asymmetric, min/max of the calibration run (0 always inside);
  * QuantizeLinear at each float input (opset 12: no axis attribute), DequantizeLinear before each
    float op and graph output;
  * Conv -> QLinearConv. Weights --weights s8: int8 symmetric (zero point 0); u8: uint8 asymmetric
    with a nonzero zero point per tensor (the zoo's u8u8 files), or with --per-channel one scale per
    output channel and the zero point 128 for all (ONNX Runtime's QLinearConv wants one zero point
    for all channels). Bias int32 at x_scale * w_scale;
  * a Relu or Clip right after a quantized op (its only reader) goes: the op's output takes the
    activation's range (zero point 0 for Relu), as ONNX Runtime's QLinearActivation does;
  * Gemm / MatMul with a constant B -> QLinearMatMul (2-D, weights per tensor of --weights' type)
    then com.microsoft QLinearAdd of the uint8 bias (the matmul's own range computed here in numpy);
  * Add of two activations -> com.microsoft QLinearAdd; GlobalAveragePool / AveragePool ->
    com.microsoft QLinearGlobalAveragePool / QLinearAveragePool; Concat -> com.microsoft
    QLinearConcat;
  * MaxPool, Flatten, Reshape, Transpose and Dropout (an identity) run on the uint8 values (the
    output keeps the input's parameters);
  * everything else (Softmax, ...) in float between a DequantizeLinear and a QuantizeLinear.
Deterministic: the same model and input give the same bytes.
"""
import argparse
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from qdq_model import calibrate as calibrate_values, load13, set_nodes  # noqa: E402

PASS_THROUGH = {"MaxPool", "Flatten", "Reshape", "Transpose", "Dropout"}
FUSED_ACTS = {"Relu", "Clip"}
MS = "com.microsoft"


def float_values(model):
    """Every float value: graph inputs, then node outputs in graph order."""
    g = model.graph
    inits = {t.name for t in g.initializer}
    out = [i.name for i in g.input if i.name not in inits and i.type.tensor_type.elem_type == TensorProto.FLOAT]
    for n in g.node:
        if n.op_type in ("Shape", "Constant"):
            continue
        out.extend(o for o in n.output[:1] if o)
    return out


def act_params(lo, hi):
    lo, hi = min(float(lo), 0.0), max(float(hi), 0.0)
    scale = max((hi - lo) / 255.0, 1e-8)
    return np.float32(scale), np.uint8(np.clip(np.rint(-lo / scale), 0, 255))


def quantize_weight(w, kind, per_channel, axis):
    """(quantized, scale, zero point) of a weight; scale and zero point 1-D along `axis` when per channel."""
    reduce = tuple(i for i in range(w.ndim) if i != axis) if per_channel else None
    shape = [1] * w.ndim
    if per_channel:
        shape[axis] = -1
    if kind == "s8" or per_channel:
        amax = np.maximum(np.abs(w).max(axis=reduce), 1e-8)
        scale = (amax / 127.0).astype(np.float32)
        zero = np.zeros_like(scale, np.int8) if kind == "s8" else np.full(scale.shape, 128, np.uint8)
    else:  # u8 per tensor: asymmetric, the zoo's u8u8 files
        lo, hi = min(float(w.min()), 0.0), max(float(w.max()), 0.0)
        scale = np.float32(max((hi - lo) / 255.0, 1e-8))
        zero = np.uint8(np.clip(np.rint(-lo / scale), 0, 255))
    lo, hi = (-127, 127) if kind == "s8" else (0, 255)
    q = np.clip(np.rint(w / scale.reshape(shape)) + zero.astype(np.int32).reshape(shape), lo, hi)
    return q.astype(np.int8 if kind == "s8" else np.uint8), np.asarray(scale, np.float32), np.asarray(zero)


def write(src, acts_dir, dst, weights="s8", per_channel=False, opset=12):
    model = load13(src)
    g = model.graph
    values = float_values(model)
    acts = {}
    for i, v in enumerate(values):
        acts[v] = numpy_helper.to_array(onnx.load_tensor(os.path.join(acts_dir, f"output_{i}.pb")))
    params = {v: act_params(a.min(), a.max()) for v, a in acts.items()}
    inits = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    readers = {}
    for n in g.node:
        for v in n.input:
            readers[v] = readers.get(v, 0) + 1
    graph_outputs = {o.name for o in g.output}

    new_inits, nodes = [], []
    quant = {}   # float value -> its uint8 twin's name (parameters: params[float value])
    floats = {i.name for i in g.input} | set(inits)

    def const(name, arr):
        new_inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def qp(v):
        """The names of v's scale and zero point initializers (made once)."""
        if v not in made:
            s, z = params[v]
            made[v] = [const(v + "_scale", np.array(s, np.float32)), const(v + "_zero_point", np.array(z, np.uint8))]
        return list(made[v])

    made = {}

    def need_q(v):
        if v not in quant:
            nodes.append(helper.make_node("QuantizeLinear", [v] + qp(v), [v + "_quantized"],
                                          name=v + "_QuantizeLinear"))
            quant[v] = v + "_quantized"
        return [quant[v]] + qp(v)

    def need_f(v):
        if v not in floats:
            nodes.append(helper.make_node("DequantizeLinear", [quant[v]] + qp(v), [v], name=v + "_DequantizeLinear"))
            floats.add(v)
        return v

    def fused_output(n):
        """The value a quantized op writes: its Relu/Clip reader's output when that is its only reader."""
        o = n.output[0]
        if readers.get(o) == 1 and o not in graph_outputs:
            r = next(m for m in g.node if o in m.input)
            if r.op_type in FUSED_ACTS and r.input[0] == o and all(i in inits or not i for i in r.input[1:]):
                fused.add(r.output[0])
                return r.output[0]
        return o

    fused = set()
    for n in g.node:
        if n.output and n.output[0] in fused:
            continue
        op = n.op_type
        x = n.input[0] if n.input else ""
        if op == "Conv" and n.input[1] in inits and x in params:
            out = fused_output(n)
            w = inits[n.input[1]].astype(np.float32)
            wq, ws, wz = quantize_weight(w, weights, per_channel, 0)
            xs = params[x][0]
            ins = need_q(x) + [const(n.output[0] + "_W", wq), const(n.output[0] + "_W_scale", ws),
                               const(n.output[0] + "_W_zero_point", wz)] + qp(out)
            if len(n.input) > 2 and n.input[2]:
                b = inits[n.input[2]].astype(np.float32)
                ins.append(const(n.output[0] + "_B", np.rint(b / (xs * ws)).astype(np.int32)))
            nodes.append(helper.make_node("QLinearConv", ins, [out + "_quantized"], name=n.name or out,
                                          **{a.name: helper.get_attribute_value(a) for a in n.attribute}))
            quant[out] = out + "_quantized"
        elif op in ("Gemm", "MatMul") and len(n.input) > 1 and n.input[1] in inits and x in params and \
                acts[x].ndim == 2:
            attrs = {a.name: helper.get_attribute_value(a) for a in n.attribute}
            if attrs.get("transA", 0) or attrs.get("alpha", 1.0) != 1.0 or attrs.get("beta", 1.0) != 1.0:
                raise ValueError(f"{n.name}: Gemm with transA/alpha/beta")
            w = inits[n.input[1]].astype(np.float32)
            if attrs.get("transB", 0):
                w = w.T
            out = fused_output(n)
            has_bias = op == "Gemm" and len(n.input) > 2 and n.input[2]
            mm = n.output[0] + "_MatMul" if has_bias else out
            if has_bias:
                params[mm] = act_params(*(lambda y: (y.min(), y.max()))(acts[x].astype(np.float64) @ w))
            wq, ws, wz = quantize_weight(w, weights, False, 1)
            nodes.append(helper.make_node("QLinearMatMul", need_q(x) + [
                const(n.output[0] + "_W", wq), const(n.output[0] + "_W_scale", ws),
                const(n.output[0] + "_W_zero_point", wz)] + qp(mm), [mm + "_quantized"],
                name=(n.name or out) + "_MatMul"))
            quant[mm] = mm + "_quantized"
            if has_bias:
                b = np.broadcast_to(inits[n.input[2]].astype(np.float32), (w.shape[1],))
                bname = n.output[0] + "_bias"
                params[bname] = act_params(b.min(), b.max())
                bs, bz = params[bname]
                const(bname + "_quantized", np.clip(np.rint(b / bs) + int(bz), 0, 255).astype(np.uint8))
                nodes.append(helper.make_node("QLinearAdd", need_q(mm) + [bname + "_quantized"] + qp(bname) + qp(out),
                                              [out + "_quantized"], name=(n.name or out) + "_Add", domain=MS))
                quant[out] = out + "_quantized"
        elif op == "Add" and len(n.input) == 2 and all(i in params for i in n.input):
            out = fused_output(n)
            nodes.append(helper.make_node("QLinearAdd", need_q(n.input[0]) + need_q(n.input[1]) + qp(out),
                                          [out + "_quantized"], name=n.name or out, domain=MS))
            quant[out] = out + "_quantized"
        elif op == "GlobalAveragePool" and x in params:
            o = n.output[0]
            nodes.append(helper.make_node("QLinearGlobalAveragePool", need_q(x) + qp(o), [o + "_quantized"],
                                          name=n.name or o, domain=MS, channels_last=0))
            quant[o] = o + "_quantized"
        elif op == "AveragePool" and x in params:
            o = n.output[0]
            nodes.append(helper.make_node("QLinearAveragePool", need_q(x) + qp(o), [o + "_quantized"],
                                          name=n.name or o, domain=MS,
                                          **{a.name: helper.get_attribute_value(a) for a in n.attribute}))
            quant[o] = o + "_quantized"
        elif op == "Concat" and all(i in params for i in n.input):
            o = n.output[0]
            ins = list(qp(o))
            for i in n.input:
                ins += need_q(i)
            nodes.append(helper.make_node("QLinearConcat", ins, [o + "_quantized"], name=n.name or o, domain=MS,
                                          **{a.name: helper.get_attribute_value(a) for a in n.attribute}))
            quant[o] = o + "_quantized"
        elif op in PASS_THROUGH and x in quant:
            o = n.output[0]
            params[o] = params[x]
            if op == "Dropout":
                quant[o] = quant[x]
                continue
            node = onnx.NodeProto()
            node.CopyFrom(n)
            del node.output[1:]
            node.input[0] = quant[x]
            node.output[0] = o + "_quantized"
            nodes.append(node)
            quant[o] = o + "_quantized"
        else:  # float op between DequantizeLinear and QuantizeLinear
            node = onnx.NodeProto()
            node.CopyFrom(n)
            for i in n.input:
                if i and i not in floats and i in quant:
                    need_f(i)
            nodes.append(node)
            floats.update(n.output)
    for o in g.output:
        need_f(o.name)
    g.initializer.extend(new_inits)
    set_nodes(g, nodes)
    del g.value_info[:]
    del model.opset_import[:]
    model.opset_import.extend([helper.make_opsetid("", opset), helper.make_opsetid(MS, 1)])
    model.ir_version = 7
    onnx.checker.check_model(model)
    onnx.save(model, dst)


if __name__ == "__main__":
    if sys.argv[1] == "calibrate":
        calibrate_values(*sys.argv[2:4], values_of=float_values)
    else:
        ap = argparse.ArgumentParser()
        ap.add_argument("cmd")
        ap.add_argument("src")
        ap.add_argument("acts")
        ap.add_argument("dst")
        ap.add_argument("--weights", choices=("s8", "u8"), default="s8")
        ap.add_argument("--per-channel", action="store_true")
        ap.add_argument("--opset", type=int, default=12)
        a = ap.parse_args()
        write(a.src, a.acts, a.dst, a.weights, a.per_channel, a.opset)
