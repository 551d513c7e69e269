#!/usr/bin/python3
"""Seeded generator of the test models of the small com.microsoft ops (ops/ms_misc).

Writes, under OUT_DIR (default ops/ms_misc/testdata), one folder per op, each a model.onnx of
several nodes of that op (each node with its own inputs <node>_<input> and outputs <node>_<output>,
one attribute set per node) and test_data_set_0/input_<i>.pb; tools/gen_models/ort_expected.js adds
ONNX Runtime 1.30's output_<i>.pb:

  unfold/        UnfoldTensor over float, double, int32 and int64 (the types ONNX Runtime computes),
                 dim (negative and default), size, step, overlapping and disjoint windows.
  dtw/           DynamicTimeWarping on random, tied (small integers) and thin cost matrices, rank 3.
  bifurcation/   BifurcationDetector with and without pred_tokens, unique, repeated and absent
                 n-grams, the match that ends at the source's end, n-gram sizes.
  maxpool_mask/  MaxpoolWithMask in 1-D, 2-D and 3-D; pads, strides, auto_pad; masks with zeros,
                 a [1, 1, ...] mask and a mask of X's N and C.
  word_conv/     WordConvEmbedding: words of several lengths, a 0 inside a word, words shorter than
                 the window, an empty word (whose row ONNX Runtime leaves unwritten), attributes set.
  conv_pads/     ConvTransposeWithDynamicPads: 1-D, 2-D, 3-D, pads, bias, groups, strides,
                 dilations, output_padding, auto_pad; one node's pads and W are initializers.
  fpq4/          MatMulFpQ4: BlkQ4Sym and BlkQ4Zp8 blobs packed as MLAS packs them
                 (q4_dq.cpp MlasQ4GemmPackB), K not a multiple of 32, batched and 1-D A; one node's
                 blob and shape are initializers, another's are inputs.

  /usr/bin/python3 tools/gen_models/gen_ms_misc.py [OUT_DIR]
  for c in unfold dtw bifurcation maxpool_mask word_conv conv_pads fpq4; do
    NODE_PATH=~/ort/node_modules node tools/gen_models/ort_expected.js OUT_DIR/$c; done
"""
import os
import struct
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(20261201)
MS = "com.microsoft"
ELEM = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.float64): TensorProto.DOUBLE,
        np.dtype(np.int32): TensorProto.INT32, np.dtype(np.int64): TensorProto.INT64,
        np.dtype(np.uint8): TensorProto.UINT8}


class Case:
  """One model: nodes with their own inputs (graph inputs or initializers) and outputs."""

  def __init__(self, name):
    self.name, self.nodes, self.inputs, self.feeds, self.inits, self.outputs = name, [], [], [], [], []

  def node(self, op, tag, inputs, n_out=1, out_types=None, **attrs):
    names = []
    for key, value, *init in inputs:
      if value is None:
        names.append("")
        continue
      name = f"{tag}_{key}"
      names.append(name)
      value = np.asarray(value)
      if init and init[0]:
        self.inits.append(numpy_helper.from_array(value, name))
      else:
        self.inputs.append(helper.make_tensor_value_info(name, ELEM[value.dtype], list(value.shape)))
        self.feeds.append(numpy_helper.from_array(value, name))
    outs = [f"{tag}_y{i}" for i in range(n_out)]
    for i, o in enumerate(outs):
      elem = out_types[i] if out_types else ELEM[np.asarray(inputs[0][1]).dtype]
      self.outputs.append(helper.make_tensor_value_info(o, elem, None))
    self.nodes.append(helper.make_node(op, names, outs, name=tag, domain=MS, **attrs))

  def save(self, root):
    d = os.path.join(root, self.name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    graph = helper.make_graph(self.nodes, self.name, self.inputs, self.outputs, self.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(MS, 1)])
    model.ir_version = 8
    onnx.save(model, os.path.join(d, "model.onnx"))
    for i, t in enumerate(self.feeds):
      with open(os.path.join(d, "test_data_set_0", f"input_{i}.pb"), "wb") as f:
        f.write(t.SerializeToString())


def f32(*shape):
  return rng.standard_normal(shape).astype(np.float32)


def unfold():
  c = Case("unfold")
  c.node("UnfoldTensor", "u_f32", [("x", f32(3, 7, 2))], dim=1, size=3, step=2)
  c.node("UnfoldTensor", "u_f64", [("x", rng.standard_normal((4, 5)))], dim=-1, size=2, step=1)
  c.node("UnfoldTensor", "u_i32", [("x", rng.integers(-100, 100, 6).astype(np.int32))], dim=0, size=6, step=3)
  c.node("UnfoldTensor", "u_i64", [("x", rng.integers(-10**12, 10**12, (2, 3, 4)))], dim=0, size=1, step=5)
  c.node("UnfoldTensor", "u_default", [("x", f32(5, 4))], size=2)
  c.node("UnfoldTensor", "u_disjoint", [("x", f32(2, 10, 3))], dim=-2, size=2, step=4)
  return c


def dtw():
  c = Case("dtw")
  i32 = [TensorProto.INT32]
  c.node("DynamicTimeWarping", "d_random", [("x", f32(6, 9))], out_types=i32)
  c.node("DynamicTimeWarping", "d_rank3", [("x", np.abs(f32(1, 5, 3)))], out_types=i32)
  c.node("DynamicTimeWarping", "d_ties", [("x", rng.integers(0, 3, (7, 7)).astype(np.float32))], out_types=i32)
  c.node("DynamicTimeWarping", "d_zeros", [("x", np.zeros((4, 6), np.float32))], out_types=i32)
  c.node("DynamicTimeWarping", "d_one", [("x", f32(1, 1))], out_types=i32)
  c.node("DynamicTimeWarping", "d_thin", [("x", f32(9, 2))], out_types=i32)
  c.node("DynamicTimeWarping", "d_row", [("x", f32(1, 6))], out_types=i32)
  return c


def bifurcation():
  c = Case("bifurcation")
  i64 = [TensorProto.INT64, TensorProto.INT64]
  a = lambda *v: np.array(v, np.int64)
  # Prediction agrees with src from prev for 2 tokens, then departs; the last 1..3-gram of the
  # output is searched in src.
  c.node("BifurcationDetector", "b_pred", [("src", a(5, 6, 7, 8, 9, 10)), ("cur", a(1, 2, 5)), ("prev", a(1)),
                                           ("pred", a(6, 7, 3, 4, 5, 6))], n_out=2, out_types=i64,
         min_ngram_size=1, max_ngram_size=3)
  # Prediction equals src to its end: all S - prev + 1 tokens taken.
  c.node("BifurcationDetector", "b_full", [("src", a(4, 1, 2, 3)), ("cur", a(9)), ("prev", a(2)),
                                           ("pred", a(2, 3, 7))], n_out=2, out_types=i64)
  # No prediction: the suffix (2, 3) occurs once in src and ends before its end.
  c.node("BifurcationDetector", "b_nopred", [("src", a(1, 2, 3, 4, 2, 5)), ("cur", a(8, 2, 3)), ("prev", a(0))],
         n_out=2, out_types=i64, min_ngram_size=2, max_ngram_size=2)
  # The 1-gram occurs twice (-1), the 2-gram once: index after it.
  c.node("BifurcationDetector", "b_repeat", [("src", a(7, 3, 1, 3, 4)), ("cur", a(1, 3)), ("prev", a(0))],
         n_out=2, out_types=i64, min_ngram_size=1, max_ngram_size=4)
  # The match ends at src's end: the search stops with suffix_match_idx = S.
  c.node("BifurcationDetector", "b_end", [("src", a(1, 2, 3)), ("cur", a(5, 3)), ("prev", a(0))],
         n_out=2, out_types=i64)
  # Not found at all.
  c.node("BifurcationDetector", "b_none", [("src", a(1, 2, 3)), ("cur", a(4, 5)), ("prev", a(3)), ("pred", a(6))],
         n_out=2, out_types=i64, min_ngram_size=1, max_ngram_size=2)
  # Random tokens over a small vocabulary, longer sequences, prev a 0-d scalar.
  src = rng.integers(0, 4, 24)
  pred = np.concatenate([src[10:15], rng.integers(0, 4, 24 + 1 - 10 - 5)])
  c.node("BifurcationDetector", "b_random", [("src", src), ("cur", rng.integers(0, 4, 9)),
                                             ("prev", np.array(10, np.int64)), ("pred", pred)],
         n_out=2, out_types=i64, min_ngram_size=2, max_ngram_size=5)
  return c


def mask(shape, zeros=0.2):
  return (rng.random(shape) >= zeros).astype(np.int32)


def maxpool_mask():
  c = Case("maxpool_mask")
  c.node("MaxpoolWithMask", "p1d", [("x", f32(2, 3, 11)), ("m", mask((2, 3, 11)))], kernel_shape=[3], strides=[2],
         pads=[1, 2])
  c.node("MaxpoolWithMask", "p2d", [("x", f32(2, 2, 7, 6)), ("m", mask((2, 2, 7, 6)))], kernel_shape=[3, 2],
         strides=[2, 1], pads=[1, 0, 2, 1])
  c.node("MaxpoolWithMask", "p2d_bcast", [("x", f32(1, 3, 5, 5)), ("m", mask((1, 1, 5, 5), 0.3))],
         kernel_shape=[2, 2])
  c.node("MaxpoolWithMask", "p2d_same_upper", [("x", f32(1, 2, 6, 7)), ("m", mask((1, 2, 6, 7)))],
         kernel_shape=[3, 3], strides=[2, 2], auto_pad="SAME_UPPER")
  c.node("MaxpoolWithMask", "p2d_same_lower", [("x", f32(1, 2, 6, 7)), ("m", mask((1, 2, 6, 7)))],
         kernel_shape=[2, 3], strides=[2, 2], auto_pad="SAME_LOWER")
  c.node("MaxpoolWithMask", "p2d_valid", [("x", f32(1, 1, 6, 6)), ("m", mask((1, 1, 6, 6), 0.0))],
         kernel_shape=[3, 3], strides=[3, 3], auto_pad="VALID", storage_order=1)
  c.node("MaxpoolWithMask", "p3d", [("x", f32(1, 2, 4, 5, 4)), ("m", mask((1, 2, 4, 5, 4)))],
         kernel_shape=[2, 3, 2], strides=[1, 2, 2], pads=[1, 1, 0, 0, 1, 1])
  return c


def word_conv():
  c = Case("word_conv")
  vocab, dim, width, filters = 10, 4, 3, 5
  seq = np.array([[3, 4, 5, 6, 0, 0, 0],     # 4 chars
                  [2, 7, 0, 0, 0, 0, 0],     # 2 chars, shorter than the window
                  [1, 9, 0, 8, 2, 0, 0],     # 4 positive, a 0 inside: 4 looked up, 0 among them
                  [5, 5, 5, 5, 5, 5, 5],     # full
                  [9, 0, 0, 0, 0, 0, 0]],    # 1 char
                 np.int32)
  c.node("WordConvEmbedding", "w_attrs", [("seq", seq), ("w", f32(filters, 1, width, dim) * 0.5),
                                          ("b", f32(filters) * 0.1), ("c", f32(vocab, dim))],
         out_types=[TensorProto.FLOAT], embedding_size=filters, conv_window_size=width, char_embedding_size=dim)
  seq2 = rng.integers(1, 12, (6, 5)).astype(np.int32)
  seq2[:, 3:] *= rng.integers(0, 2, (6, 2)).astype(np.int32)
  c.node("WordConvEmbedding", "w_plain", [("seq", seq2), ("w", f32(3, 1, 1, 6)), ("b", f32(3)), ("c", f32(12, 6))],
         out_types=[TensorProto.FLOAT])
  return c


def conv_pads():
  c = Case("conv_pads")
  p = lambda *v: np.array(v, np.int64)
  c.node("ConvTransposeWithDynamicPads", "c2d", [("x", f32(1, 2, 4, 3)), ("w", f32(2, 3, 3, 3)),
                                                 ("pads", p(1, 0, 0, 2)), ("b", f32(3))])
  c.node("ConvTransposeWithDynamicPads", "c2d_stride", [("x", f32(2, 4, 3, 3)), ("w", f32(4, 1, 3, 2)),
                                                        ("pads", p(1, 1, 1, 0))],
         strides=[2, 3], dilations=[1, 2], output_padding=[1, 0], group=2)
  c.node("ConvTransposeWithDynamicPads", "c1d", [("x", f32(1, 3, 8)), ("w", f32(3, 2, 4)), ("pads", p(2, 1)),
                                                 ("b", f32(2))], strides=[2])
  c.node("ConvTransposeWithDynamicPads", "c3d", [("x", f32(1, 1, 3, 2, 3)), ("w", f32(1, 2, 2, 2, 2)),
                                                 ("pads", p(0, 1, 0, 1, 0, 1))])
  c.node("ConvTransposeWithDynamicPads", "c_same", [("x", f32(1, 2, 3, 3)), ("w", f32(2, 2, 3, 3)),
                                                    ("pads", p(5, 5, 5, 5))], strides=[2, 2], auto_pad="SAME_LOWER")
  c.node("ConvTransposeWithDynamicPads", "c_const", [("x", f32(1, 2, 5, 5)), ("w", f32(2, 2, 3, 3), True),
                                                     ("pads", p(1, 1, 1, 1), True), ("b", f32(2), True)],
         kernel_shape=[3, 3])
  return c


def pack_q4(w, zero_point):
  """MLAS's MlasQ4GemmPackB of float B [K, N] (BlkQ4Zp8 if zero_point, else BlkQ4Sym)."""
  k, n = w.shape
  blob = bytearray()
  for col in range(n):
    for k0 in range(0, k, 32):
      v = w[k0:k0 + 32, col].astype(np.float32)
      if zero_point:
        lo, hi = min(float(v.min()), 0.0), max(float(v.max()), 0.0)
        scale = np.float32((hi - lo) / 15)
        inv = np.float32(1.0) / scale if scale else np.float32(0)
        zpf = -lo / scale if scale else lo
        zp = 0 if zpf < 0 else 15 if zpf > 15 else int(np.floor(zpf + 0.5))
        q = [min(15, max(0, int(np.floor(np.float32(x) * inv + zp + 0.5)))) for x in v]
        header = struct.pack("<fB", float(scale), zp)
      else:
        amax_i = int(np.argmax(np.abs(v)))
        scale = np.float32(v[amax_i] / np.float32(-8))
        inv = np.float32(1.0) / scale if scale else np.float32(0)
        q = [min(15, max(0, int(np.float32(x) * inv + np.float32(8.5)))) for x in v]
        header = struct.pack("<f", float(scale))
      q += [8 if not zero_point else 0] * (32 - len(q))  # the short last block's padding
      blob += header + bytes(q[l] | (q[l + 16] << 4) for l in range(16))
  return np.frombuffer(bytes(blob), np.uint8).copy()


def fpq4():
  c = Case("fpq4")
  shape = lambda k, n: np.array([k, n], np.int64)
  w = f32(40, 5)
  c.node("MatMulFpQ4", "q_zp", [("a", f32(2, 3, 40)), ("b", pack_q4(w, True)), ("shape", shape(40, 5))],
         blk_quant_type=1)
  w = f32(64, 3)
  c.node("MatMulFpQ4", "q_sym", [("a", f32(4, 64)), ("b", pack_q4(w, False)), ("shape", shape(64, 3))],
         blk_quant_type=0)
  w = f32(70, 4)
  c.node("MatMulFpQ4", "q_const", [("a", f32(3, 70)), ("b", pack_q4(w, True), True), ("shape", shape(70, 4), True)])
  w = f32(17, 6)
  c.node("MatMulFpQ4", "q_vec", [("a", f32(17)), ("b", pack_q4(w, False)), ("shape", shape(17, 6))],
         blk_quant_type=0)
  return c


def main():
  root = sys.argv[1] if len(sys.argv) > 1 else "ops/ms_misc/testdata"
  for make in (unfold, dtw, bifurcation, maxpool_mask, word_conv, conv_pads, fpq4):
    make().save(root)


if __name__ == "__main__":
  main()
