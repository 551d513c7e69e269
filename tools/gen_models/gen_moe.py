#!/usr/bin/python3
"""Seeded generator of the test models of com.microsoft MoE and QMoE (ops/moe).

Writes, under OUT_DIR (default ops/moe/testdata), one folder per case: model.onnx (one node, the
experts' weights as initializers, inputs x and r, QMoE also rw for router_weights) and
test_data_set_0/input_<i>.pb. tools/gen_models/ort_expected.js adds ONNX Runtime 1.30's
output_0.pb, except for the cases ONNX Runtime's CPU provider gets wrong or refuses (listed in
HAND): for those this script writes output_0.pb itself from the numpy reference below (computed
in float64 from the float16 values), which is also the reference the ORT cases were checked with.

  /usr/bin/python3 tools/gen_models/gen_moe.py [OUT_DIR]
  for c in OUT_DIR/*/; do [ -e $c/HAND ] || NODE_PATH=~/ort/node_modules node tools/gen_models/ort_expected.js $c; done
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(20261201)
OUT = sys.argv[1] if len(sys.argv) > 1 else "ops/moe/testdata"


def act(v, a, alpha=1.0, beta=0.0, limit=np.inf):
  if a == "relu": return np.maximum(v, 0)
  if a == "identity": return v
  if a == "silu": return v / (1 + np.exp(-v))
  if a == "gelu": return 0.5 * v * (1 + np.tanh(0.7978845608 * (v + 0.044715 * v ** 3)))
  g, l = np.minimum(v[..., 0::2], limit), np.clip(v[..., 1::2], -limit, limit)  # swiglu, interleaved
  return g / (1 + np.exp(-alpha * g)) * (l + beta)


def reference(x, r, w1, b1, w2, b2, k, a, quantized, normalize=False, rw=None, **swiglu):
  """ONNX Runtime's CPU semantics (ops/moe/routing.h): w1 [E, fc1, H], w2 [E, H, I] as floats."""
  y = np.zeros(x.shape, np.float64)
  for t in range(x.shape[0]):
    lg = r[t].astype(np.float64)
    p = np.exp(lg - lg.max()); p /= p.sum()
    key = lg if quantized else p
    order = sorted(range(len(lg)), key=lambda j: (-key[j], -j))[:k]
    if rw is not None:
      wts = rw[t][order].astype(np.float64)
      if normalize: wts = wts / wts.sum()
    else:
      wts = p[order]
      if quantized or normalize: wts = wts / wts.sum()
    for e, wt in zip(order, wts):
      h = w1[e] @ x[t] + (b1[e] if b1 is not None else 0)
      o = w2[e] @ act(h, a, **swiglu) + (b2[e] if b2 is not None else 0)
      y[t] += wt * o
  return y


def quantize(w, bits, block, zero_points):
  """w [E, N, K] -> (codes uint8 [E, N, K * bits / 8], scales, zero points or None, dequantized)."""
  E, N, K = w.shape
  qmax = (1 << bits) - 1
  size = block if block else K
  nb = (K + size - 1) // size
  q = np.zeros((E, N, K), np.uint8)
  sc = np.zeros((E, N, nb), np.float32)
  z = np.zeros((E, N, nb), np.uint8)
  deq = np.zeros_like(w)
  for b in range(nb):
    blk = w[:, :, b * size:(b + 1) * size]
    if zero_points:
      lo, hi = np.minimum(blk.min(-1), 0), np.maximum(blk.max(-1), 0)
      s = (hi - lo) / qmax
      zz = np.clip(np.round(-lo / s), 0, qmax)
    else:
      s = np.abs(blk).max(-1) / (qmax // 2)
      zz = np.full(s.shape, (qmax + 1) // 2)
    sc[:, :, b], z[:, :, b] = s, zz
    q[:, :, b * size:(b + 1) * size] = np.clip(np.round(blk / s[..., None]) + zz[..., None], 0, qmax)
    deq[:, :, b * size:(b + 1) * size] = (q[:, :, b * size:(b + 1) * size].astype(np.float32) - z[:, :, b:b + 1]) * sc[:, :, b:b + 1]
  codes = (q[:, :, 0::2] | (q[:, :, 1::2] << 4)).astype(np.uint8) if bits == 4 else q
  scales = sc if block else sc[:, :, 0]
  zps = None
  if zero_points:
    zl = z if block else z[:, :, 0]  # 4 bits: two a byte along the last axis, low nibble first
    if bits == 4:
      if zl.shape[-1] % 2: zl = np.concatenate([zl, np.zeros(zl.shape[:-1] + (1,), np.uint8)], -1)
      zl = (zl[..., 0::2] | (zl[..., 1::2] << 4)).astype(np.uint8)
    zps = zl
  return codes, scales, zps, deq


def write(name, op, attrs, inits, names, feeds, expected=None, dtype=TensorProto.FLOAT):
  d = os.path.join(OUT, name)
  os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
  inputs = [helper.make_tensor_value_info(n, dtype, list(v.shape)) for n, v in feeds]
  node = helper.make_node(op, [n for n, _ in feeds][:2] + names, ["y"], name=name, domain="com.microsoft", **attrs)
  g = helper.make_graph([node], name, inputs, [helper.make_tensor_value_info("y", dtype, None)],
                        [numpy_helper.from_array(v, n) for n, v in inits.items()])
  m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
  m.ir_version = 8
  onnx.save(m, os.path.join(d, "model.onnx"))
  for i, (n, v) in enumerate(feeds):
    t = numpy_helper.from_array(v, n)
    open(os.path.join(d, "test_data_set_0", f"input_{i}.pb"), "wb").write(t.SerializeToString())
  if expected is not None:
    t = numpy_helper.from_array(expected, "y")
    open(os.path.join(d, "test_data_set_0", "output_0.pb"), "wb").write(t.SerializeToString())
    open(os.path.join(d, "HAND"), "w").write("expected values from gen_moe.py's numpy reference\n")


def randn(*shape, scale=1.0):
  return (rng.standard_normal(shape) * scale).astype(np.float32)


# MoE: hidden 16, inter 8, 4 experts, 5 tokens.
H, I, E, T = 16, 8, 4, 5


def moe_case(name, a="relu", k=2, normalize=0, bias=False, tokens=T, experts=E, inter=I, shape3d=False, ties=False,
             half=False, **extra):
  n1 = 2 * inter if a == "swiglu" else inter
  x, r = randn(tokens, H), randn(tokens, experts)
  if ties: r = np.round(r)
  w1, w2 = randn(experts, n1, H, scale=0.3), randn(experts, H, inter, scale=0.3)
  b1 = randn(experts, n1) if bias else None
  b2 = randn(experts, H) if bias else None
  attrs = dict(k=k, activation_type=a, normalize_routing_weights=normalize, **extra)
  sw = {}
  if a == "swiglu":
    sw = dict(alpha=extra.get("activation_alpha", 1.0), beta=extra.get("activation_beta", 0.0),
              limit=extra.get("swiglu_limit", np.inf))
  cast = (lambda v: v.astype(np.float16)) if half else (lambda v: v)
  inits = {"w1": cast(w1), "w2": cast(w2)}
  names = ["w1", "b1" if bias else "", "w2"] + (["b2"] if bias else [])
  if bias: inits.update(b1=cast(b1), b2=cast(b2))
  xin = x.reshape(1, tokens, H) if shape3d else x
  expected = None
  if half:  # ONNX Runtime 1.30's float16 MoE on CPU returns zeros or wrong values: numpy instead
    f = lambda v: None if v is None else v.astype(np.float16).astype(np.float64)
    expected = reference(f(x), f(r), f(w1), f(b1), f(w2), f(b2), k, a, False, normalize, **sw)
    expected = expected.reshape(xin.shape).astype(np.float16)
  write(name, "MoE", attrs, inits, names, [("x", cast(xin)), ("r", cast(r))], expected,
        TensorProto.FLOAT16 if half else TensorProto.FLOAT)


moe_case("moe_relu")
moe_case("moe_gelu_normalize_bias", a="gelu", normalize=1, bias=True)
moe_case("moe_silu_k1_3d", a="silu", k=1, shape3d=True)
moe_case("moe_identity_k4_bias", a="identity", k=4, bias=True)
moe_case("moe_swiglu", a="swiglu", bias=True, swiglu_fusion=1, activation_alpha=1.5, activation_beta=0.5,
         swiglu_limit=1.0)
moe_case("moe_swiglu_defaults", a="swiglu", swiglu_fusion=1)
moe_case("moe_sparse_mixer", use_sparse_mixer=1)
moe_case("moe_ties", ties=True)
moe_case("moe_many_rows", a="swiglu", k=2, tokens=36, experts=2, inter=72, swiglu_fusion=1)  # 36 rows, 2 column tasks
moe_case("moe_float16", a="gelu", normalize=1, bias=True, half=True)


# QMoE: hidden 32, inter 24, 3 experts, 5 tokens.
QH, QI, QE = 32, 24, 3


def qmoe_case(name, bits, block=0, zero_points=False, a="relu", k=2, normalize=0, bias=False, tokens=T, hidden=QH,
              inter=QI, router_weights=False, shape3d=False, half=False, **extra):
  n1 = 2 * inter if a == "swiglu" else inter
  x, r = randn(tokens, hidden), randn(tokens, QE)
  c1, s1, z1, d1 = quantize(randn(QE, n1, hidden, scale=0.3), bits, block, zero_points)
  c2, s2, z2, d2 = quantize(randn(QE, hidden, inter, scale=0.3), bits, block, zero_points)
  b1 = randn(QE, n1) if bias else None
  b2 = randn(QE, hidden) if bias else None
  cast = (lambda v: v.astype(np.float16)) if half else (lambda v: v)
  attrs = dict(k=k, activation_type=a, normalize_routing_weights=normalize, expert_weight_bits=bits, **extra)
  if block: attrs["block_size"] = block
  inits = {"w1": c1, "s1": cast(s1), "w2": c2, "s2": cast(s2)}
  names = ["w1", "s1", "b1" if bias else "", "w2", "s2", "b2" if bias else "", "", "", ""]
  if bias: inits.update(b1=cast(b1), b2=cast(b2))
  names += ["z1", "z2"] if zero_points else ["", ""]
  if zero_points: inits.update(z1=z1, z2=z2)
  feeds = [("x", cast(x.reshape(1, tokens, hidden) if shape3d else x)), ("r", cast(r))]
  if router_weights:
    names += ["", "rw"]
    feeds.append(("rw", cast(np.abs(randn(tokens, QE)))))
  while names and names[-1] == "": names.pop()
  write(name, "QMoE", attrs, inits, names, feeds, None, TensorProto.FLOAT16 if half else TensorProto.FLOAT)


qmoe_case("qmoe8_row", 8)
qmoe_case("qmoe8_row_zp", 8, zero_points=True, a="gelu")
qmoe_case("qmoe8_block16", 8, block=16, a="silu", normalize=1)
qmoe_case("qmoe8_block16_zp_bias", 8, block=16, zero_points=True, bias=True)
qmoe_case("qmoe4_row", 4, a="identity")
qmoe_case("qmoe4_row_zp_3d", 4, zero_points=True, shape3d=True)
qmoe_case("qmoe4_block16", 4, block=16, k=3)
qmoe_case("qmoe4_block16_zp", 4, block=16, zero_points=True, bias=True, a="gelu")
qmoe_case("qmoe4_swiglu", 4, block=16, zero_points=True, bias=True, a="swiglu", swiglu_fusion=1,
          activation_alpha=1.702, activation_beta=1.0, swiglu_limit=3.0)
qmoe_case("qmoe8_router_weights_normalize", 8, a="gelu", router_weights=True, normalize=1)
qmoe_case("qmoe4_one_token", 4, block=32, tokens=1, shape3d=True)       # the one-row kernel
qmoe_case("qmoe4_many_rows", 4, block=16, zero_points=True, k=3, tokens=34, bias=True)  # the GEMM path
qmoe_case("qmoe8_four_rows", 8, k=3, tokens=6)                           # the four-row kernel, 6 rows
qmoe_case("qmoe8_float16", 8, half=True, a="silu", bias=True)
qmoe_case("qmoe4_block16_zp_float16", 4, block=16, zero_points=True, half=True, router_weights=True, normalize=1)
