#!/usr/bin/python3
"""Element-type sweep: which types the ONNX spec allows for an op does onnxflow not run, or run wrong?

Every ONNX backend node case (onnx/backend/test/data/node/<case>) is re-typed: for each type
constraint of the node's schema that binds a float32 graph input or output, and for each other
type the constraint allows among double, float16, bfloat16, int8, uint8, int16, uint16, int32,
int64, uint32 and uint64, one variant case is written with that constraint's graph inputs,
outputs, initializers (and the few attributes that fix the type: Constant's and ConstantOfShape's
value, Cast's `to`) in the new type and the inputs converted. ONNX Runtime (onnxruntime-node,
ort_run_all.js beside this file) writes the expected outputs, onnxflow's run_model writes its own,
and they are compared with a tolerance by type. See README.md.

usage: /usr/bin/python3 tools/type_sweep/type_sweep.py all [--out DIR] [--cases DIR] [--run-model BIN]
       ... make | ort | flow | report   (the steps of `all`, each resumable)
       ... --ops Conv,MatMul            (only these ops)
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
CASES_ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(HERE))), "shared", "onnx-tests", "node")  # --cases
REPO = os.path.dirname(os.path.dirname(HERE))
SCHEMA_INC = os.path.join(REPO, "graph", "schema", "onnx_schemas.inc")

SWEEP_TYPES = ["double", "float16", "bfloat16", "int8", "uint8", "int16", "uint16", "int32", "int64",
               "uint32", "uint64"]
ALL_TYPES = ["float"] + SWEEP_TYPES  # float is a target for the cases written in double
CODE = {"float": 1, "uint8": 2, "int8": 3, "uint16": 4, "int16": 5, "int32": 6, "int64": 7, "string": 8,
        "bool": 9, "float16": 10, "double": 11, "uint32": 12, "uint64": 13, "bfloat16": 16}
NAME = {v: k for k, v in CODE.items()}
NP = {"float": np.float32, "uint8": np.uint8, "int8": np.int8, "uint16": np.uint16, "int16": np.int16,
      "int32": np.int32, "int64": np.int64, "bool": np.bool_, "float16": np.float16, "double": np.float64,
      "uint32": np.uint32, "uint64": np.uint64, "bfloat16": np.uint16}  # bfloat16: its bits
# The element types onnxruntime-node takes and gives (no bfloat16, float8, int4, int2, string here).
ORT_NODE_TYPES = {1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13}
FLOAT_TYPES = {"float", "double", "float16", "bfloat16"}
INT_TYPES = {"int8", "uint8", "int16", "uint16", "int32", "int64", "uint32", "uint64"}

# Random or control-flow ops: no fixed expected value to compare, or subgraphs to retype; BitCast: its input's
# and output's bit widths must match, so a retyped input changes what the case means.
SKIP_OPS = {"BitCast", "RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Bernoulli",
            "Multinomial", "If", "Loop", "Scan"}
# Ops whose integer results round a mean, a scale or a root: one unit of difference is accepted (noted).
ROUNDING_OPS = {"Resize", "Upsample", "AveragePool", "GlobalAveragePool", "ReduceMean", "Mean", "ReduceL2",
                "LpNormalization", "LpPool", "GlobalLpPool", "RoiAlign", "GridSample", "Sqrt", "ReduceLogSum",
                "ReduceLogSumExp", "AffineGrid", "CenterCropPad", "MeanVarianceNormalization", "Pow",
                "HannWindow", "HammingWindow", "BlackmanWindow", "MelWeightMatrix"}
# Float ops whose results go through exp/log/sin/erf/pow: rtol 1e-4 instead of 1e-5 for float and double.
TRANSCENDENTAL = {"Exp", "Log", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh",
                  "Atanh", "Tanh", "Sigmoid", "Erf", "Pow", "Softmax", "LogSoftmax", "Softplus", "Elu", "Selu",
                  "Celu", "Mish", "Gelu", "ReduceLogSumExp", "ReduceLogSum", "LRN", "Swish", "HardSigmoid",
                  "HardSwish", "ThresholdedRelu", "Softsign", "LayerNormalization", "GroupNormalization",
                  "InstanceNormalization", "BatchNormalization", "RMSNormalization", "Attention",
                  "RotaryEmbedding", "MeanVarianceNormalization", "LpNormalization", "ReduceL2", "GRU", "LSTM",
                  "RNN", "DFT", "STFT", "HannWindow", "HammingWindow", "BlackmanWindow", "MelWeightMatrix",
                  "NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss", "Einsum", "GridSample", "Resize",
                  "RoiAlign", "Sqrt", "Reciprocal", "Div", "Det", "Col2Im", "Conv", "ConvTranspose", "MatMul",
                  "Gemm", "ReduceMean", "ReduceSum", "ReduceSumSquare", "ReduceProd", "CumSum", "AveragePool",
                  "GlobalAveragePool", "LpPool", "GlobalLpPool", "Mean", "Sum", "AffineGrid"}
# How often an op appears in real models (for --order common and for the coverage note).
COMMON_OPS = ["Conv", "MatMul", "Gemm", "Add", "Mul", "Sub", "Div", "Relu", "Sigmoid", "Tanh", "Softmax", "Concat",
              "Reshape", "Transpose", "Slice", "Gather", "Split", "Squeeze", "Unsqueeze", "Resize", "MaxPool",
              "AveragePool", "GlobalAveragePool", "ReduceMean", "ReduceSum", "ReduceMax", "Pad", "Where", "Clip",
              "Cast", "Expand", "Tile", "LayerNormalization", "BatchNormalization", "Erf", "Pow", "Sqrt", "TopK",
              "ArgMax", "CumSum", "Einsum", "ConvTranspose", "InstanceNormalization"]


# ---------------------------------------------------------------------------------------------- schemas
class Schema:
    def __init__(self, op, since, inputs, outputs, constraints, source):
        self.op, self.since, self.source = op, since, source
        self.inputs = inputs            # [(name, optional, variadic, type_str)]
        self.outputs = outputs
        self.constraints = constraints  # {param: [allowed type strings]}


def load_inc_schemas(path):
    """graph/schema/onnx_schemas.inc (the ONNX 1.23 changelogs): {(domain, op): [Schema by since]}."""
    text = open(path).read()
    formal_re = re.compile(r'\{"([^"]*)", (true|false), (true|false), (true|false), "([^"]*)"\}')
    out = {}
    for entry in re.split(r'\n(?=\{")', text):
        lines = entry.strip().split("\n")
        m = re.match(r'\{"([^"]*)", "([^"]+)", (\d+),', lines[0])
        if not m or len(lines) < 5:
            continue
        dom, op, since = m.group(1), m.group(2), int(m.group(3))
        ins = [(f[0], f[1] == "true", f[2] == "true", f[4]) for f in formal_re.findall(lines[2])]
        outs = [(f[0], f[1] == "true", f[2] == "true", f[4]) for f in formal_re.findall(lines[3])]
        cons = {}
        for name, body in re.findall(r'\{"([^"]+)", \{((?:"[^"]*"(?:, )?)*)\}\}', lines[4]):
            cons[name] = re.findall(r'"([^"]*)"', body)
        out.setdefault((dom, op), []).append(Schema(op, since, ins, outs, cons, "onnx_schemas.inc"))
    for v in out.values():
        v.sort(key=lambda s: s.since)
    return out


_INC = None


def get_schema(op, opset, domain=""):
    """The schema in force at `opset`: the repository's table of ONNX 1.23 (all opsets), else onnx.defs
    (onnx 1.12 knows opsets up to 17)."""
    global _INC
    if _INC is None:
        _INC = load_inc_schemas(SCHEMA_INC) if os.path.exists(SCHEMA_INC) else {}
    cands = [s for s in _INC.get((domain, op), []) if s.since <= opset]
    if cands:
        return cands[-1]
    try:
        s = onnx.defs.get_schema(op, min(opset, 17), domain)
    except Exception:
        return None
    opt = onnx.defs.OpSchema.FormalParameterOption
    f = lambda ps: [(p.name, p.option == opt.Optional, p.option == opt.Variadic, p.type_str) for p in ps]
    return Schema(op, s.since_version, f(s.inputs), f(s.outputs),
                  {c.type_param_str: list(c.allowed_type_strs) for c in s.type_constraints}, "onnx.defs")


def formal_of(formals, i):
    if i < len(formals):
        return formals[i]
    if formals and formals[-1][2]:  # variadic last formal takes the rest
        return formals[-1]
    return None


# ---------------------------------------------------------------------------------------------- tensors
def read_tensor(path):
    t = TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return t


def tensor_to_array(t):
    """A TensorProto as numpy; bfloat16 as float32 values."""
    name = NAME.get(t.data_type)
    if name == "bfloat16":
        if t.raw_data:
            bits = np.frombuffer(t.raw_data, dtype=np.uint16)
        else:
            bits = np.array(t.int32_data, dtype=np.uint16)
        return (bits.reshape(-1).astype(np.uint32) << 16).view(np.float32).reshape(tuple(t.dims))
    if t.raw_data and name in NP and name != "string":
        return np.frombuffer(t.raw_data, dtype=NP[name]).reshape(tuple(t.dims)).copy()
    return numpy_helper.to_array(t)


def to_bf16_bits(a):
    a = np.array(a, dtype=np.float32)
    shape = a.shape  # a scalar stays a scalar
    a = a.reshape(-1)
    bits = a.view(np.uint32).astype(np.uint64)
    r = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    r[np.isnan(a)] = 0x7FC0
    return r.reshape(shape)


def convert(a, to):
    """float values -> type `to`: floats cast, bfloat16 rounded to nearest even (bits returned),
    integers rounded to nearest and clipped to the type's range, absolute value first for unsigned."""
    a = np.asarray(a)
    if to == "double":
        return a.astype(np.float64)
    if to == "float16":
        return a.astype(np.float16)
    if to == "bfloat16":
        return to_bf16_bits(a)
    if to == "float":
        return a.astype(np.float32)
    info = np.iinfo(NP[to])
    x = np.nan_to_num(a.astype(np.float64), nan=0.0, posinf=float(info.max), neginf=float(info.min))
    if to.startswith("u"):
        x = np.abs(x)
    # float64 holds the top of a 64-bit range only rounded up: clip below it there.
    hi = {"int64": 2.0 ** 63 - 1024, "uint64": 2.0 ** 64 - 2048}.get(to, float(info.max))
    return np.clip(np.rint(x), float(info.min), hi).astype(NP[to])


def make_tensor(name, arr, to):
    """A TensorProto of type `to` holding arr (for bfloat16: the bits) in raw_data."""
    t = TensorProto()
    t.name = name
    t.data_type = CODE[to]
    t.dims.extend(arr.shape)
    t.raw_data = np.array(arr, dtype=NP[to]).tobytes()
    return t


def retype_tensor_proto(t, to):
    a = tensor_to_array(t).astype(np.float64)
    n = make_tensor(t.name, convert(a, to), to)
    t.CopyFrom(n)


# ---------------------------------------------------------------------------------------------- making
def value_infos(g):
    return {v.name: v for v in list(g.input) + list(g.output) + list(g.value_info)}


def elem_type(vi):
    if not vi.type.HasField("tensor_type"):
        return None
    return vi.type.tensor_type.elem_type


def analyse(case_dir, case):
    """(model, node, schema, {constraint: [(kind, index, name)]}, note): the constraints that bind a float32
    graph input/output, or (None, ..., note) when the case is skipped."""
    try:
        m = onnx.load(os.path.join(case_dir, "model.onnx"))
    except Exception as e:
        return None, None, None, None, f"cannot load: {e}"
    g = m.graph
    if len(g.node) != 1:
        return None, None, None, None, f"{len(g.node)} nodes"
    node = g.node[0]
    if node.domain not in ("", "ai.onnx"):
        return None, node, None, None, f"domain {node.domain}"
    if node.op_type in SKIP_OPS:
        return None, node, None, None, "random or control-flow op"
    if node.op_type == "Dropout" and len(node.input) >= 3 and node.input[2]:
        return None, node, None, None, "Dropout in training mode (random)"
    if any(a.type == onnx.AttributeProto.GRAPH or a.type == onnx.AttributeProto.GRAPHS for a in node.attribute):
        return None, node, None, None, "graph attribute"
    opset = max([o.version for o in m.opset_import if o.domain in ("", "ai.onnx")] or [1])
    schema = get_schema(node.op_type, opset)
    if schema is None:
        return None, node, None, None, f"no schema for {node.op_type}-{opset}"
    vis = value_infos(g)
    for v in list(g.input) + list(g.output):
        if elem_type(v) is None:
            return None, node, schema, None, "non-tensor graph input/output"
    bound = {}
    for kind, names, formals in (("in", node.input, schema.inputs), ("out", node.output, schema.outputs)):
        for i, name in enumerate(names):
            if not name:
                continue
            f = formal_of(formals, i)
            if f is None:
                return None, node, schema, None, f"{kind}put {i} has no formal"
            ts = f[3]
            if ts in schema.constraints:
                bound.setdefault(ts, []).append((kind, i, name))
    cons = {}
    for c, uses in bound.items():
        types = set()
        for kind, i, name in uses:
            vi = vis.get(name)
            if vi is None:
                types.add(None)
            else:
                types.add(elem_type(vi))
        for base in (TensorProto.FLOAT, TensorProto.DOUBLE):
            if types == {base}:
                cons.setdefault(base, {})[c] = uses
            # (a constraint that binds float and something we do not see is ambiguous: left)
    if TensorProto.FLOAT in cons:
        return m, node, schema, cons[TensorProto.FLOAT], "float"
    if TensorProto.DOUBLE in cons:  # cases written in double (CumSum, Einsum, ...): swept from double
        return m, node, schema, cons[TensorProto.DOUBLE], "double"
    return m, node, schema, None, "no float32- or double-bound constraint"


# Attributes that fix a constraint's type: op -> (attribute, constraint). When the constraint is retyped the
# attribute is set to the new type; when it is not, it is written out as float (some default to "the type
# of another input", which a variant may have changed).
TYPE_ATTR = {"Cast": ("to", "T2"), "EyeLike": ("dtype", "T2"), "HannWindow": ("output_datatype", "T2"),
             "HammingWindow": ("output_datatype", "T2"), "BlackmanWindow": ("output_datatype", "T2"),
             "MelWeightMatrix": ("output_datatype", "T3"), "DequantizeLinear": ("output_dtype", "T3"),
             "LayerNormalization": ("stash_type", "U")}
VALUE_ATTR_OPS = {"Constant", "ConstantOfShape"}
LINKED_OPS = {"OptionalGetElement", "Optional"}  # V is the element type of O
ORT_MAX_OPSET = 26  # ONNX Runtime 1.30 refuses models stamped with a later ai.onnx opset


def set_int_attr(nd, name, value):
    for at in nd.attribute:
        if at.name == name:
            at.i = value
            return
    nd.attribute.extend([helper.make_attribute(name, value)])


def make_variant(src, vdir, m, node, schema, retyped, float_cons, to, opset, base="float"):
    """Writes vdir/model.onnx and vdir/test_data_set_0/input_<i>.pb with the constraints `retyped`
    ({constraint: uses}) in type `to`; and where ONNX Runtime needs another model (bfloat16: float32 in and out
    with Casts around the op; an opset after ORT_MAX_OPSET stamped down when the op's schema allows),
    vdir/ort_model.onnx (+ vdir/ort_inputs/ for bfloat16). Returns a note, or raises ValueError to skip."""
    m2 = onnx.ModelProto()
    m2.CopyFrom(m)
    g = m2.graph
    nd = g.node[0]
    uses = [u for us in retyped.values() for u in us]
    names = {name for _, _, name in uses}
    out_names = {name for kind, _, name in uses if kind == "out"}
    notes = []
    for at in nd.attribute:
        if at.type == onnx.AttributeProto.TENSOR and at.t.data_type == CODE[base]:
            if nd.op_type in VALUE_ATTR_OPS and out_names:
                retype_tensor_proto(at.t, to)
            else:
                raise ValueError(f"float tensor attribute {at.name}")
        if at.type in (onnx.AttributeProto.SPARSE_TENSOR, onnx.AttributeProto.TENSORS):
            raise ValueError("sparse tensor or tensors attribute")
    if nd.op_type == "Constant" and out_names and not any(
            at.type == onnx.AttributeProto.TENSOR for at in nd.attribute):
        raise ValueError("Constant without a tensor value")
    if nd.op_type in TYPE_ATTR and TYPE_ATTR[nd.op_type][1] in schema.constraints:
        attr, con = TYPE_ATTR[nd.op_type]
        if con in retyped:
            set_int_attr(nd, attr, CODE[to])
            notes.append(f"{attr}={to}")
        elif con in float_cons:
            set_int_attr(nd, attr, CODE[base])
    elif out_names:
        for at in nd.attribute:
            if at.name in ("to", "dtype") and at.type == onnx.AttributeProto.INT and at.i == CODE[base]:
                at.i = CODE[to]
                notes.append(f"{at.name}={to}")
    for v in list(g.input) + list(g.output) + list(g.value_info):
        if v.name in names:
            v.type.tensor_type.elem_type = CODE[to]
    inits = {t.name for t in g.initializer}
    for t in g.initializer:
        if t.name in names:
            retype_tensor_proto(t, to)
    for v in list(g.input) + list(g.output):
        if v.name not in names and elem_type(v) not in ORT_NODE_TYPES:
            raise ValueError(f"another input/output is {NAME.get(elem_type(v), elem_type(v))}, which "
                             "onnxruntime-node cannot hand over")
    onnx.save(m2, os.path.join(vdir, "model.onnx"))
    # Inputs: the graph inputs without initializer, in order.
    feeds = [v.name for v in m.graph.input if v.name not in inits]
    sdir = os.path.join(src, "test_data_set_0")
    ddir = os.path.join(vdir, "test_data_set_0")
    os.makedirs(ddir, exist_ok=True)
    bf16 = to == "bfloat16"
    if bf16:
        os.makedirs(os.path.join(vdir, "ort_inputs"), exist_ok=True)
    divisor = nd.op_type in ("Div", "Mod") and to in INT_TYPES and len(nd.input) > 1 and nd.input[1] in names
    for i, name in enumerate(feeds):
        p = os.path.join(sdir, f"input_{i}.pb")
        if not os.path.exists(p):
            raise ValueError(f"missing input_{i}.pb")
        if name not in names:
            shutil.copyfile(p, os.path.join(ddir, f"input_{i}.pb"))
            if bf16:
                shutil.copyfile(p, os.path.join(vdir, "ort_inputs", f"input_{i}.pb"))
            continue
        t = read_tensor(p)
        if t.data_type != CODE[base]:
            raise ValueError(f"input {i} is not {base}")
        c = convert(tensor_to_array(t), to)
        if divisor and name == nd.input[1] and (c == 0).any():
            c = np.where(c == 0, np.ones_like(c), c)
            notes.append("integer divisor zeros -> 1")
        with open(os.path.join(ddir, f"input_{i}.pb"), "wb") as f:
            f.write(make_tensor(t.name or name, c, to).SerializeToString())
        if bf16:  # the same values as float32, which the wrapper casts to bfloat16
            f32 = (c.reshape(-1).astype(np.uint32) << 16).view(np.float32).reshape(c.shape)
            with open(os.path.join(vdir, "ort_inputs", f"input_{i}.pb"), "wb") as f:
                f.write(make_tensor(t.name or name, f32, "float").SerializeToString())
    w = m2
    if bf16:
        w = bf16_wrapper(m2, names, inits)
    if opset > ORT_MAX_OPSET and schema.since <= ORT_MAX_OPSET:
        w = stamp_opset(w, ORT_MAX_OPSET)
        notes.append(f"ORT runs it stamped opset {ORT_MAX_OPSET}")
    if w is not m2:
        onnx.save(w, os.path.join(vdir, "ort_model.onnx"))
    return "; ".join(notes)


def stamp_opset(m, version):
    w = onnx.ModelProto()
    w.CopyFrom(m)
    for o in w.opset_import:
        if o.domain in ("", "ai.onnx"):
            o.version = version
    return w


def bf16_wrapper(m2, names, inits):
    """onnxruntime-node has no bfloat16 tensors: the model ONNX Runtime runs takes and gives float32 where the
    variant has bfloat16, with Cast nodes around the op (so that ORT's own bfloat16 kernel runs; the tensors
    between are declared bfloat16 so that ORT checks the op's types)."""
    w = onnx.ModelProto()
    w.CopyFrom(m2)
    g = w.graph
    nd = g.node[0]
    pre, post, inner = [], [], []
    in_names = {v.name for v in g.input if v.name not in inits and v.name in names}
    for v in g.input:
        if v.name in in_names:
            v.type.tensor_type.elem_type = TensorProto.FLOAT
    for i, n in enumerate(nd.input):
        if n in in_names:
            nd.input[i] = n + "__bf16"
    for n in sorted(in_names):
        pre.append(helper.make_node("Cast", [n], [n + "__bf16"], to=TensorProto.BFLOAT16))
        inner.append(n + "__bf16")
    for v in g.output:
        if v.name in names:
            v.type.tensor_type.elem_type = TensorProto.FLOAT
            for i, n in enumerate(nd.output):
                if n == v.name:
                    nd.output[i] = n + "__bf16"
            post.append(helper.make_node("Cast", [v.name + "__bf16"], [v.name], to=TensorProto.FLOAT))
            inner.append(v.name + "__bf16")
    for v in g.value_info:
        if v.name in names:
            v.name = v.name + "__bf16"
    have = {v.name for v in g.value_info}
    g.value_info.extend([helper.make_tensor_value_info(n, TensorProto.BFLOAT16, None)
                         for n in inner if n not in have])
    nodes = pre + [nd] + post
    del g.node[:]
    g.node.extend(nodes)
    return w


def list_cases(cases_root, ops=None):
    out = []
    for c in sorted(os.listdir(cases_root)):
        if "_expanded" in c:
            continue
        if not os.path.exists(os.path.join(cases_root, c, "model.onnx")):
            continue
        out.append(c)
    return out


def cmd_make(a):
    root = os.path.join(a.out, "cases")
    os.makedirs(root, exist_ok=True)
    ops = set(a.ops.split(",")) if a.ops else None
    variants, skipped = [], []
    for case in list_cases(a.cases):
        src = os.path.join(a.cases, case)
        m, node, schema, cons, note = analyse(src, case)
        op = node.op_type if node is not None else "?"
        if ops and op not in ops:
            continue
        if cons is None:
            skipped.append({"case": case, "op": op, "why": note})
            continue
        base = note  # the type the case's constraints have: float, else double
        targets = [t for t in ALL_TYPES if t != base]
        opset = max([o.version for o in m.opset_import if o.domain in ("", "ai.onnx")] or [1])
        allowed = {c: [t[len("tensor("):-1] for t in schema.constraints[c] if t.startswith("tensor(")]
                   for c in cons}
        plan = []  # (label, {constraint: uses}, type): one constraint at a time, then all of them together
        for con in sorted(cons):
            plan += [(con, {con: cons[con]}, to) for to in targets if to in allowed[con]]
        if op in LINKED_OPS:  # constraints that must move together: only the joint variants
            plan = []
        if len(cons) > 1:
            for to in targets:
                joint = {c: u for c, u in cons.items() if to in allowed[c]}
                if len(joint) > 1:
                    plan.append(("ALL", joint, to))
        for label, retyped, to in plan:
            name = f"{case}__{label}_{to}"
            vdir = os.path.join(root, name)
            rec = {"name": name, "case": case, "op": op, "constraint": label, "type": to,
                   "constraints": sorted(retyped), "opset": opset, "base": base,
                   "schema": f"{schema.op}-{schema.since} ({schema.source})",
                   "bound": sorted(f"{k}{i}" for us in retyped.values() for k, i, _ in us)}
            if os.path.exists(os.path.join(vdir, "variant.json")) and not a.force:
                variants.append(json.load(open(os.path.join(vdir, "variant.json"))))
                continue
            shutil.rmtree(vdir, ignore_errors=True)
            os.makedirs(vdir)
            try:
                rec["note"] = make_variant(src, vdir, m, node, schema, retyped, set(cons), to, opset, base)
            except ValueError as e:
                shutil.rmtree(vdir, ignore_errors=True)
                skipped.append({"case": case, "op": op, "why": f"{label}->{to}: {e}"})
                continue
            json.dump(rec, open(os.path.join(vdir, "variant.json"), "w"))
            variants.append(rec)
    json.dump({"variants": variants, "skipped": skipped}, open(os.path.join(a.out, "variants.json"), "w"),
              indent=0)
    print(f"{len(variants)} variants, {len(skipped)} cases/constraints skipped -> {a.out}/variants.json")


def load_variants(a):
    v = json.load(open(os.path.join(a.out, "variants.json")))
    ops = set(a.ops.split(",")) if a.ops else None
    return [r for r in v["variants"] if not ops or r["op"] in ops], v["skipped"]


# ---------------------------------------------------------------------------------------------- ORT
def run_ort_jobs(a, jobs):
    """jobs: [(model, inputs_dir, out_dir)] through ort_run_all.js in one node process; a job that takes node
    down is recorded as an ORT crash (out_dir/status.json) and the rest go on in a new process."""
    env = dict(os.environ, NODE_PATH=os.path.expanduser("~/ort/node_modules"))
    while True:
        todo = [j for j in jobs if not os.path.exists(os.path.join(j[2], "status.json"))]
        if not todo:
            return
        lst = os.path.join(a.out, "ort_todo.txt")
        open(lst, "w").write("".join("\t".join(j) + "\n" for j in todo))
        print(f"ORT: {len(todo)} runs", flush=True)
        p = subprocess.run(["node", os.path.join(HERE, "ort_run_all.js"), lst], env=env)
        if p.returncode == 0:
            return
        dead = [j for j in todo if os.path.exists(os.path.join(j[2], "started"))
                and not os.path.exists(os.path.join(j[2], "status.json"))]
        if not dead:
            sys.exit(f"node exited {p.returncode} and no run was on")
        for j in dead:
            json.dump({"ok": False, "crash": True, "error": f"node died (exit {p.returncode})"},
                      open(os.path.join(j[2], "status.json"), "w"))


def cmd_ort(a):
    """ONNX Runtime on every variant: vdir/ort/."""
    variants, _ = load_variants(a)
    root = os.path.join(a.out, "cases")
    jobs = []
    for r in variants:
        vdir = os.path.join(root, r["name"])
        od = os.path.join(vdir, "ort")
        if a.force:
            shutil.rmtree(od, ignore_errors=True)
        wrapped = os.path.exists(os.path.join(vdir, "ort_model.onnx"))
        model = os.path.join(vdir, "ort_model.onnx" if wrapped else "model.onnx")
        inputs = os.path.join(vdir, "ort_inputs")
        if not os.path.isdir(inputs):
            inputs = os.path.join(vdir, "test_data_set_0")
        jobs.append((model, inputs, od))
    run_ort_jobs(a, jobs)


def ort_status(d):
    p = os.path.join(d, "status.json")
    return json.load(open(p)) if os.path.exists(p) else {"ok": False, "error": "not run"}


def cmd_proxy(a):
    """Where ONNX Runtime cannot run a variant, a reference from something it can run on the same values
    (vdir/proxy/ holds its outputs, vdir/proxy.json says which):
      ort-float32: double/float16/bfloat16 variants: the case's own float32 model, inputs widened to float32;
      ort-int64:   integer variants: the int64 variant of the same constraint, inputs widened (outputs wrapped
                   to the variant's type when compared);
      ort-float32-int: integer variants without a usable int64 variant: the float32 model on the same
                   (integer) values, outputs rounded to nearest and wrapped to the type;
      onnx-expected: double/float16/bfloat16 variants that ORT cannot run even in float32: the case's own
                   expected outputs (the ONNX reference implementation's, from the unrounded float32 inputs).
    Integer variants of empty-set cases get none (the reductions' identities differ between types)."""
    variants, _ = load_variants(a)
    root = os.path.join(a.out, "cases")
    by_name = {r["name"]: r for r in variants}
    jobs, kinds = [], {}
    for r in variants:
        vdir = os.path.join(root, r["name"])
        pdir = os.path.join(vdir, "proxy")
        if a.force:
            shutil.rmtree(pdir, ignore_errors=True)
        if ort_status(os.path.join(vdir, "ort")).get("ok"):
            continue
        src, wide, kind = None, r.get("base", "float"), "ort-" + ("float32" if r.get("base", "float") == "float"
                                                                   else "double")
        if r["type"] in INT_TYPES:
            if "empty_set" in r["case"]:
                continue
            sib = f"{r['case']}__{r['constraint']}_int64"
            if r["type"] != "int64" and sib in by_name and ort_status(os.path.join(root, sib, "ort")).get("ok"):
                src, wide, kind = sib, "int64", "ort-int64"
            else:
                kind = "ort-float32-int"
        m = onnx.load(os.path.join(root, src, "model.onnx") if src else
                      os.path.join(a.cases, r["case"], "model.onnx"))
        if r.get("opset", 0) > ORT_MAX_OPSET:
            m = stamp_opset(m, ORT_MAX_OPSET)
        os.makedirs(os.path.join(vdir, "proxy_inputs"), exist_ok=True)
        onnx.save(m, os.path.join(vdir, "proxy_model.onnx"))
        vm = onnx.load(os.path.join(vdir, "model.onnx"))
        inits = {t.name for t in vm.graph.initializer}
        feeds = [v for v in vm.graph.input if v.name not in inits]
        nd = vm.graph.node[0]
        retyped = {nd.input[int(b[2:])] for b in r["bound"] if b.startswith("in")}
        for i, v in enumerate(feeds):
            p = os.path.join(vdir, "test_data_set_0", f"input_{i}.pb")
            q = os.path.join(vdir, "proxy_inputs", f"input_{i}.pb")
            t = read_tensor(p)
            if v.name in retyped:
                x = tensor_to_array(t)
                with open(q, "wb") as f:
                    f.write(make_tensor(t.name, x.astype(NP[wide]), wide).SerializeToString())
            else:
                shutil.copyfile(p, q)
        kinds[pdir] = {"kind": kind, "model": src or f"{r['case']} (float32)", "type": wide}
        jobs.append((os.path.join(vdir, "proxy_model.onnx"), os.path.join(vdir, "proxy_inputs"), pdir))
    run_ort_jobs(a, jobs)
    for pdir, k in kinds.items():
        vdir = os.path.dirname(pdir)
        r = json.load(open(os.path.join(vdir, "variant.json")))
        if not ort_status(pdir).get("ok") and r["type"] in FLOAT_TYPES:
            src = os.path.join(a.cases, r["case"], "test_data_set_0")
            outs = sorted(f for f in os.listdir(src) if f.startswith("output_"))
            if outs:
                for f in outs:
                    shutil.copyfile(os.path.join(src, f), os.path.join(pdir, f))
                json.dump({"ok": True, "ort_error": ort_status(pdir).get("error", "")[:300]},
                          open(os.path.join(pdir, "status.json"), "w"))
                k = {"kind": "onnx-expected", "model": r["case"], "type": "float"}
        json.dump(k, open(os.path.join(vdir, "proxy.json"), "w"))


# ---------------------------------------------------------------------------------------------- onnxflow
def cmd_flow(a):
    variants, _ = load_variants(a)
    root = os.path.join(a.out, "cases")
    t0 = time.time()
    for k, r in enumerate(variants):
        vdir = os.path.join(root, r["name"])
        st = os.path.join(vdir, "flow", "status.json")
        if os.path.exists(st) and not a.force:
            continue
        od = os.path.join(vdir, "flow")
        shutil.rmtree(od, ignore_errors=True)
        os.makedirs(od)
        cmd = [a.run_model, os.path.join(vdir, "model.onnx"), "--inputs", os.path.join(vdir, "test_data_set_0"),
               "--output-dir", od, "--quiet", "--threads", str(a.threads)]
        s = time.time()
        try:
            p = subprocess.run(cmd, capture_output=True, timeout=a.timeout)
            rc, err = p.returncode, (p.stderr.decode(errors="replace") + p.stdout.decode(errors="replace"))
        except subprocess.TimeoutExpired as e:
            rc, err = "timeout", ((e.stderr or b"").decode(errors="replace"))
        lines = [l for l in err.strip().split("\n") if l.strip()]
        json.dump({"rc": rc, "message": lines[0] if lines else "", "tail": lines[-3:], "seconds": time.time() - s},
                  open(st, "w"))
        if (k + 1) % 200 == 0:
            print(f"onnxflow: {k + 1}/{len(variants)} ({time.time() - t0:.0f} s)", flush=True)


# ---------------------------------------------------------------------------------------------- compare
def read_outputs(d, n):
    outs = []
    for i in range(n):
        p = os.path.join(d, f"output_{i}.pb")
        if not os.path.exists(p):
            return outs, f"no output_{i}.pb"
        t = read_tensor(p)
        outs.append((NAME.get(t.data_type, str(t.data_type)), tensor_to_array(t)))
    return outs, ""


def tolerance(op, ty):
    if ty == "float16":
        return 1e-2, 1e-2
    if ty == "bfloat16":
        return 2e-2, 1e-2
    if ty in ("double", "float"):
        return (1e-4 if op in TRANSCENDENTAL else 1e-5), 1e-6
    return 0, 0


def cast_out_of_range(r, vdir, dt, shape):
    """For Cast/CastLike from a floating type to an integer type: where the input, truncated, is outside the
    target's range (the spec leaves that undefined; C++ too), as a mask over the output; else None."""
    if r["op"] not in ("Cast", "CastLike") or dt not in INT_TYPES:
        return None
    p = os.path.join(vdir, "test_data_set_0", "input_0.pb")
    t = read_tensor(p)
    if NAME.get(t.data_type) not in ("float", "double", "float16", "bfloat16"):
        return None
    x = np.trunc(tensor_to_array(t).astype(np.float64))
    info = np.iinfo(NP[dt])
    bad = ~np.isfinite(x) | (x < float(info.min)) | (x > float(info.max))
    return bad.reshape(shape) if bad.size == int(np.prod(shape)) else None


def proxy_tolerance(op, ty):
    """Against a float32 reference: double within float32's accuracy; half types as against ORT."""
    if ty == "double":
        return (1e-3 if op in TRANSCENDENTAL else 1e-4), 1e-5
    return tolerance(op, ty)


# Variants whose expected value the spec leaves undefined: an integer result of log(0) = -inf.
def undefined_result(r):
    return (r["op"] in ("ReduceLogSum", "ReduceLogSumExp") and "empty_set" in r["case"]
            and r["type"] in INT_TYPES)


def compare(r, vdir, ref="ort", ref_dir=None, loose=False):
    """Compares vdir/flow with vdir/<ref> ('ort', or 'proxy': ORT on float32/int64 of the same values).
    'pass' | 'pass1' (integers one unit apart, a rounding op) | 'fail'; a message; the max error."""
    m = onnx.load(os.path.join(vdir, "model.onnx"), load_external_data=False)
    decl = [NAME.get(elem_type(v), "?") for v in m.graph.output]
    n = len(decl)
    exp, why = read_outputs(ref_dir or os.path.join(vdir, ref), n)
    if why:
        return "fail", f"{ref}: {why}", None
    got, why = read_outputs(os.path.join(vdir, "flow"), n)
    if why:
        return "fail", f"onnxflow wrote {why}", None
    worst, result, msgs = 0.0, "pass", []
    for i, ((et, e), (gt, g), dt) in enumerate(zip(exp, got, decl)):
        if gt != dt:
            return "fail", f"output {i}: onnxflow type {gt}, the model says {dt}", None
        if ref == "ort" and r["type"] != "bfloat16" and et != gt:
            return "fail", f"output {i}: onnxflow type {gt}, ORT {et}", None
        if tuple(e.shape) != tuple(g.shape):
            return "fail", f"output {i}: onnxflow shape {list(g.shape)}, ORT {list(e.shape)}", None
        if e.size == 0:
            continue
        if ref == "proxy" and et != dt and dt in INT_TYPES:  # the reference's wider values in the variant's type
            if et in ("float", "double"):
                e = np.rint(np.nan_to_num(e.astype(np.float64), nan=0.0, posinf=0.0, neginf=0.0))
            e = e.astype(np.int64)
            ub = e == np.iinfo(np.int64).min  # what a cast of -inf or NaN gives: undefined
            if ub.any():
                msgs.append(f"output {i}: {int(ub.sum())} undefined values (int64 min in the reference) not compared")
                e, g = e[~ub], g[~ub]
                if e.size == 0:
                    continue
            e = e.astype(NP[dt])
        if dt in INT_TYPES or dt == "bool":
            ub = cast_out_of_range(r, vdir, dt, e.shape)
            if ub is not None and ub.any():
                e, g = e[~ub], g[~ub]
                msgs.append(f"output {i}: {int(ub.sum())} values cast from out of range (undefined) not compared")
                if e.size == 0:
                    continue
            if dt == "uint64":
                diff = np.array([abs(int(x) - int(y)) for x, y in zip(e.ravel(), g.ravel())], dtype=np.float64)
            else:
                diff = np.abs(e.astype(np.float64) - g.astype(np.float64))
            md = float(diff.max())
            worst = max(worst, md)
            if md == 0:
                continue
            if md <= 1 and r["op"] in ROUNDING_OPS:
                result = "pass1"
                msgs.append(f"output {i}: {int((diff > 0).sum())}/{diff.size} values 1 unit apart")
                continue
            k = int(np.argmax(diff))
            return "fail", (f"output {i}: max |diff| {md:g} ({int((diff > 0).sum())}/{diff.size} differ; "
                            f"at {k}: onnxflow {g.ravel()[k]}, {ref} {e.ravel()[k]})"), md
        e64, g64 = e.astype(np.float64), g.astype(np.float64)
        if ref == "proxy" and dt in ("float16", "double", "bfloat16"):
            # the float32 reference rounded to the variant's type, as a correct kernel's result would be
            e64 = (e64.astype(np.float16) if dt == "float16" else
                   tensor_to_array(make_tensor("", to_bf16_bits(e64), "bfloat16")) if dt == "bfloat16" else
                   e64).astype(np.float64)
        rtol, atol = (proxy_tolerance if ref == "proxy" else tolerance)(r["op"], dt)
        if loose and r["type"] in ("float16", "bfloat16"):
            # a reference from the unrounded float32 inputs: the half type's rounding reaches every output
            rtol, atol = max(rtol, tolerance(r["op"], r["type"])[0]), max(atol, tolerance(r["op"], r["type"])[1])
        with np.errstate(invalid="ignore", over="ignore"):
            same_nan = np.isnan(e64) == np.isnan(g64)
            fin = np.isfinite(e64) & np.isfinite(g64)
            inf_ok = np.where(np.isinf(e64) | np.isinf(g64), e64 == g64, True)
            diff = np.where(fin, np.abs(np.where(fin, e64, 0) - np.where(fin, g64, 0)), 0.0)
        bad = (~same_nan) | (~inf_ok) | (fin & (diff > atol + rtol * np.abs(np.where(fin, e64, 0))))
        md = float(diff.max()) if diff.size else 0.0
        worst = max(worst, md)
        if bad.any():
            k = int(np.argmax(bad))
            return "fail", (f"output {i}: {int(bad.sum())}/{bad.size} values off, max |diff| {md:.3g} "
                            f"(at {k}: onnxflow {g64.ravel()[k]:.6g}, {ref} {e64.ravel()[k]:.6g}; "
                            f"rtol {rtol:g} atol {atol:g})"), md
    return result, "; ".join(msgs), worst


def classify(r, vdir):
    o = ort_status(os.path.join(vdir, "ort"))
    px = ort_status(os.path.join(vdir, "proxy"))
    fst = os.path.join(vdir, "flow", "status.json")
    f = json.load(open(fst)) if os.path.exists(fst) else {"rc": "not run", "message": ""}
    rec = dict(r)
    rec["ort_ok"] = bool(o.get("ok"))
    rec["ort_error"] = (o.get("error") or "").split("\n")[0][:300]
    rec["proxy_ok"] = bool(px.get("ok"))
    rec["flow_rc"] = f["rc"]
    rec["flow_message"] = f.get("message", "")[:300]
    rc = f["rc"]
    if rc == "timeout":
        rec["flow"] = "timeout"
    elif rc == "not run":
        rec["flow"] = "not run"
    elif isinstance(rc, int) and rc < 0:
        rec["flow"] = "crash"
        rec["flow_message"] = f"signal {-rc}: " + rec["flow_message"]
    elif rc == 2:
        rec["flow"] = "refused"
    elif rc != 0:
        rec["flow"] = "crash"
        rec["flow_message"] = f"exit {rc}: " + rec["flow_message"]
    elif undefined_result(r):
        rec["flow"] = "undefined"
    elif rec["ort_ok"] or rec["proxy_ok"]:
        ref = "ort" if rec["ort_ok"] else "proxy"
        kind = None
        if ref == "proxy":
            pj = os.path.join(vdir, "proxy.json")
            kind = rec["proxy"] = json.load(open(pj))["kind"] if os.path.exists(pj) else "?"
        res, msg, worst = compare(r, vdir, ref, loose=kind == "onnx-expected")
        rec["flow"] = res if ref == "ort" else res + "-proxy"
        rec["compare"] = msg
        rec["max_err"] = worst
        if res == "fail" and r["type"] in FLOAT_TYPES and kind != "onnx-expected" \
                and "type" not in msg:
            # Does onnxflow match the case's own expected outputs (the ONNX reference implementation)?
            exp_dir = os.path.join(r.get("cases_root", CASES_ROOT), r["case"], "test_data_set_0")
            res2, msg2, _ = compare(r, vdir, "onnx-expected", ref_dir=exp_dir, loose=True)
            if res2 != "fail":
                rec["flow"] = "ref-disagrees"
                rec["compare"] = msg + " — onnxflow matches the case's ONNX expected output"
    else:
        rec["flow"] = "ran"  # nothing to compare with
    return rec


def ort_category(err):
    e = err.lower()
    if "could not find an implementation" in e or "not implemented" in e or "notimplemented" in e:
        return "no kernel"
    if "type error" in e or "type (tensor" in e or "invalid_graph" in e or "type parameter" in e:
        return "type check"
    if "node died" in e:
        return "crash"
    return "run error"


def group_lines(rs, order, keyf):
    """One line per (type, message) under an op: '- **type** ×n: message (max err) — cases'."""
    from collections import defaultdict
    L = []
    by_type = defaultdict(list)
    for r in rs:
        by_type[r["type"]].append(r)
    for ty in sorted(by_type, key=lambda t: order[t]):
        msgs = defaultdict(list)
        for r in by_type[ty]:
            msgs[keyf(r)].append(r)
        for key, group in msgs.items():
            cases = ", ".join(sorted(f"{g['case'][5:]}[{g['constraint']}]" for g in group))
            errs = [g.get("max_err") for g in group if g.get("max_err") is not None]
            extra = f" (max err {max(errs):.3g})" if errs else ""
            L.append(f"- **{ty}** ×{len(group)}: {key}{extra} — {cases}")
    return L


def fail_key(r):
    if r["flow"] == "refused":
        return "refused: " + r["flow_message"]
    msg = re.sub(r"\(at \d+: .*?\)", "", r.get("compare", ""))
    msg = re.sub(r"\d+/\d+ values off", "values off", msg)
    msg = re.sub(r"max \|diff\| [-+.e\d]+ ?(\(\d+/\d+ differ; \))?", "", msg)
    return "mismatch: " + re.sub(r"\s+", " ", msg).strip()


def op_order(o):
    return (COMMON_OPS.index(o) if o in COMMON_OPS else 999, o)


def cmd_report(a):
    from collections import Counter, defaultdict
    variants, skipped = load_variants(a)
    root = os.path.join(a.out, "cases")
    recs = [classify(r, os.path.join(root, r["name"])) for r in variants]
    json.dump(recs, open(os.path.join(a.out, "results.json"), "w"), indent=0)
    order = {t: i for i, t in enumerate(ALL_TYPES)}
    ort_ok = [r for r in recs if r["ort_ok"]]
    ort_no = [r for r in recs if not r["ort_ok"]]
    c_ok = Counter(r["flow"] for r in ort_ok)
    c_no = Counter(r["flow"] for r in ort_no)
    ops = sorted({r["op"] for r in recs})
    L = []
    L.append("# onnxflow element-type sweep over the ONNX backend node cases\n")
    L.append(f"Generated by `tools/type_sweep/type_sweep.py` on {time.strftime('%Y-%m-%d %H:%M')}: onnxflow "
             f"`{a.run_model}` (--threads {a.threads}), ONNX Runtime 1.30 (onnxruntime-node, CPU, optimizations "
             "disabled). Variant folders, ORT's and onnxflow's outputs: `cases/<case>__<constraint>_<type>/`; "
             "every variant's result: `results.json`.\n")
    L.append("## Counts\n")
    L.append(f"- node cases (non-expanded): {len(list_cases(a.cases))}; variants made: **{len(recs)}** over "
             f"{len(ops)} ops (one constraint retyped at a time, plus `ALL` variants that retype every float "
             f"constraint of a multi-constraint op together); case/constraint/type combinations skipped: "
             f"{len(skipped)} (see Not covered)")
    L.append(f"- ORT ran: **{len(ort_ok)}**; ORT refused or failed: {len(ort_no)} "
             f"({', '.join(f'{k} {v}' for k, v in Counter(ort_category(r['ort_error']) for r in ort_no).most_common())})")
    L.append(f"- onnxflow where ORT ran: pass {c_ok['pass']}, pass within 1 unit (integer rounding ops) "
             f"{c_ok['pass1']}, **mismatch {c_ok['fail']}**, **refused {c_ok['refused']}**, "
             f"**crash {c_ok['crash']}**, **timeout {c_ok['timeout']}**, undefined by the spec {c_ok['undefined']}, "
             f"ORT differs but onnxflow matches the ONNX expected output {c_ok['ref-disagrees']}")
    L.append(f"- onnxflow where ORT did not run: compared with ORT on float32/int64 of the same values (proxy): "
             f"pass {c_no['pass-proxy'] + c_no['pass1-proxy']}, **mismatch {c_no['fail-proxy']}**; "
             f"refused too {c_no['refused']}; ran with nothing to compare {c_no['ran']}; "
             f"**crash {c_no['crash']}**, **timeout {c_no['timeout']}**, undefined {c_no['undefined']}, "
             f"proxy differs but onnxflow matches the ONNX expected output {c_no['ref-disagrees']}; "
             f"proxies used: {dict(Counter(r.get('proxy') for r in ort_no if r.get('proxy')))}")
    L.append("")
    L.append("Tolerances: float16 rtol 1e-2 atol 1e-2; bfloat16 rtol 2e-2 atol 1e-2; double rtol 1e-5 atol 1e-6 "
             "(rtol 1e-4 for the ops in TRANSCENDENTAL, which also holds the reductions and convolutions); "
             "integers exact (one unit accepted for ROUNDING_OPS, listed below). Against the float32 proxy: "
             "double rtol 1e-4 (1e-3) atol 1e-5, the reference rounded to float16/bfloat16 first. "
             "bfloat16 variants: ORT runs a wrapper (float32 in/out, Casts to and from bfloat16 around the op), "
             "onnxflow the pure bfloat16 model. Integer inputs: float values rounded to nearest, clipped to the "
             "type (absolute value first for unsigned); zero integer divisors of Div/Mod made 1. Cast from an "
             "out-of-range float (undefined) is not compared.\n")

    notes = os.path.join(a.out, "notes.md")  # a reader's triage of this run, kept beside the report
    if os.path.exists(notes):
        L.append(open(notes).read().rstrip() + "\n")
    L.append("## Crashes and hangs (signal, abort, unexpected exit code, timeout)\n")
    bad = [r for r in recs if r["flow"] in ("crash", "timeout")]
    if not bad:
        L.append("None.\n")
    for r in sorted(bad, key=lambda r: (op_order(r["op"]), r["name"])):
        L.append(f"- `{r['name']}` ({r['op']}, {r['constraint']}={r['type']}; ORT "
                 f"{'ran' if r['ort_ok'] else 'did not'}): {r['flow']} — {r['flow_message']}")
    L.append("")

    def by_op_section(rs):
        by_op = defaultdict(list)
        for r in rs:
            by_op[r["op"]].append(r)
        if not rs:
            L.append("None.\n")
        for op in sorted(by_op, key=op_order):
            L.append(f"### {op}\n")
            L.extend(group_lines(by_op[op], order, fail_key))
            L.append("")

    L.append("## onnxflow failures where ONNX Runtime runs the variant (by op, then type)\n")
    by_op_section([r for r in ort_ok if r["flow"] in ("fail", "refused")])
    L.append("## onnxflow mismatches against the proxy reference (ORT has no kernel for the type; by op, then "
             "type)\n")
    L.append("The reference is ORT on the case's float32 model (for double/float16/bfloat16; result rounded to the "
             "type) or on the int64 variant (for integer types; result wrapped to the type), same input values.\n")
    by_op_section([r for r in ort_no if r["flow"] == "fail-proxy"])

    L.append("## ORT (or the float32 proxy) differs, onnxflow matches the case's ONNX expected output\n")
    L.append("Not onnxflow failures: ONNX Runtime deviates from the ONNX reference here (also in float32 where "
             "the proxy shows it).\n")
    by_op_section([r for r in recs if r["flow"] == "ref-disagrees"])

    ones = [r for r in recs if r["flow"] in ("pass1", "pass1-proxy")]
    if ones:
        L.append("## Accepted with a difference of one unit (integer results of rounding ops)\n")
        g = defaultdict(list)
        for r in ones:
            g[(r["op"], r["case"][5:])].append(r["type"])
        for (op, case), tys in sorted(g.items()):
            L.append(f"- {op} {case}: {', '.join(sorted(tys, key=lambda t: order[t]))}")
        L.append("")
    und = [r for r in recs if r["flow"] == "undefined"]
    if und:
        L.append("## Not compared: the spec leaves the result undefined\n")
        L.append("- " + ", ".join(r["name"] for r in und))
        L.append("")

    L.append("## Both refuse (ORT cannot run it, onnxflow refused cleanly; the spec allows the type): by op\n")
    both = defaultdict(list)
    for r in ort_no:
        if r["flow"] == "refused":
            both[(r["op"], r["flow_message"][:200])].append(r)
    for (op, msg), rs in sorted(both.items(), key=lambda x: op_order(x[0][0])):
        L.append(f"- {op}: {len(rs)} (" + ", ".join(
            f"{t}×{n}" for t, n in sorted(Counter(r["type"] for r in rs).items(), key=lambda x: order[x[0]]))
            + f"; {', '.join(sorted({r['case'][5:] for r in rs}))}): onnxflow: {msg}")
    L.append("")
    L.append("## onnxflow ran where there is no reference (ORT did not run it and no proxy): by op\n")
    ran = defaultdict(list)
    for r in ort_no:
        if r["flow"] == "ran":
            ran[r["op"]].append(r["type"])
    for op in sorted(ran, key=op_order):
        L.append(f"- {op}: " + ", ".join(f"{t}×{n}" for t, n in sorted(Counter(ran[op]).items(),
                                                                        key=lambda x: order[x[0]])))
    L.append("")
    L.append("## ORT refusals other than a missing kernel (its limits, or a variant it judges invalid)\n")
    odd = defaultdict(list)
    for r in ort_no:
        if ort_category(r["ort_error"]) != "no kernel":
            msg = re.sub(re.escape(a.out) + r"\S*", "", r["ort_error"])[:160]
            odd[(r["op"], msg)].append(r["type"])
    for (op, msg), tys in sorted(odd.items(), key=lambda x: op_order(x[0][0])):
        L.append(f"- {op} ({', '.join(sorted(set(tys), key=lambda t: order[t]))}; {len(tys)}): {msg}")
    L.append("")
    L.append("## Not covered\n")
    why = Counter(re.sub(r"^\w+->\w+: ", "", s["why"]) for s in skipped)
    for w, n in why.most_common():
        L.append(f"- {w}: {n}")
    nofloat = sorted({s["op"] for s in skipped if s["why"] == "no float32- or double-bound constraint"} - set(ops))
    L.append(f"\nOps whose cases have no float32- or double-bound constraint (not swept): {', '.join(nofloat)}")
    sk = sorted({s["op"] for s in skipped if s["why"] != "no float32- or double-bound constraint"} - set(ops))
    L.append(f"\nOps without any variant for another reason: {', '.join(sk)}")
    common_missing = [o for o in COMMON_OPS if o not in ops]
    L.append(f"\nCommon ops without any variant: {', '.join(common_missing) or 'none'}")
    L.append("")
    open(os.path.join(a.out, "report.md"), "w").write("\n".join(L) + "\n")
    print("\n".join(L[4:10]))
    print(f"-> {a.out}/report.md, {a.out}/results.json")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("step", choices=["make", "ort", "proxy", "flow", "report", "all"])
    ap.add_argument("--cases", default=CASES_ROOT, help="ONNX backend node cases (../shared/onnx-tests/node beside the repo)")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(REPO), "type_sweep"), help="variants, outputs and the report (outside the repo)")
    ap.add_argument("--run-model", default=os.path.join(REPO, "bazel-bin", "tools", "run_model"), help="onnxflow's run_model binary (build it with -c opt)")
    ap.add_argument("--ops", default="", help="comma-separated op types (default: all)")
    ap.add_argument("--timeout", type=float, default=20, help="seconds per onnxflow run")
    ap.add_argument("--threads", type=int, default=1, help="onnxflow --threads")
    ap.add_argument("--force", action="store_true", help="redo what was done")
    a = ap.parse_args()
    globals()["CASES_ROOT"] = a.cases
    steps = ["make", "ort", "proxy", "flow", "report"] if a.step == "all" else [a.step]
    for s in steps:
        globals()["cmd_" + s](a)


if __name__ == "__main__":
    main()
