#!/usr/bin/python3
"""Seeded generator of the test cases of com.microsoft SparseAttention and
DecoderMaskedMultiHeadAttention (ops/contrib/sparse_attention_test.cc, decoder_masked_mha_test.cc).

Writes OUT_DIR/<op>/<case>/model.onnx (one node) and test_data_set_0/input_<i>.pb, then runs ONNX
Runtime 1.30 (node, NODE_PATH=~/ort/node_modules) on each case and writes its outputs as
output_<i>.pb. ONNX Runtime's CPU SparseAttention insists that past and present share one buffer,
so the runner hands it the past tensors as the present outputs' buffers (onnxruntime-node's
pre-allocated fetches), the way onnxruntime-genai binds them.

  /usr/bin/python3 tools/gen_models/gen_sparse_attention.py [OUT_DIR]   (default ops/contrib/testdata)
  /usr/bin/python3 tools/gen_models/gen_sparse_attention.py --bench DIR  (a decoding step; see bench())
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = sys.argv[1] if len(sys.argv) > 1 and sys.argv[1] != "--bench" else "ops/contrib/testdata"
rng = np.random.default_rng(20261201)

RUNNER = r"""
const fs = require('fs'), path = require('path');
const ort = require('onnxruntime-node');
const { onnx } = require('onnx-proto');
const kTypes = { 1: ['float32', Float32Array], 6: ['int32', Int32Array], 10: ['float16', Uint16Array] };
const kOut = Object.fromEntries(Object.entries(kTypes).map(([c, [n]]) => [n, +c]));
(async () => {
  const [dir, pairs = ''] = process.argv.slice(2);
  const model = path.join(dir, 'model.onnx');
  const mp = onnx.ModelProto.decode(fs.readFileSync(model));
  const sess = await ort.InferenceSession.create(model, { intraOpNumThreads: 1, logSeverityLevel: 3 });
  const feeds = {};
  mp.graph.input.forEach((v, i) => {
    const t = onnx.TensorProto.decode(fs.readFileSync(path.join(dir, 'test_data_set_0', `input_${i}.pb`)));
    const b = Buffer.from(t.rawData);
    const [type, A] = kTypes[t.dataType];
    feeds[v.name] = new ort.Tensor(type, new A(b.buffer.slice(b.byteOffset, b.byteOffset + b.length)), t.dims.map(Number));
  });
  const fetches = {};
  mp.graph.output.forEach(v => { fetches[v.name] = null; });
  for (const p of pairs.split(',').filter(x => x)) { const [i, o] = p.split('='); fetches[o] = feeds[i]; }
  const out = await sess.run(feeds, fetches);
  mp.graph.output.forEach((v, i) => {
    const r = out[v.name];
    const t = onnx.TensorProto.create({ name: v.name, dims: r.dims, dataType: kOut[r.type],
      rawData: Buffer.from(r.data.buffer, r.data.byteOffset, r.data.byteLength) });
    fs.writeFileSync(path.join(dir, 'test_data_set_0', `output_${i}.pb`), onnx.TensorProto.encode(t).finish());
  });
})().catch(e => { console.error(e.message); process.exit(1); });
"""
runner_path = os.path.join(tempfile.mkdtemp(), "run.js")
with open(runner_path, "w") as f:
  f.write(RUNNER)

F, F16, I32 = TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.INT32
NP = {F: np.float32, F16: np.float16, I32: np.int32}


def write_case(op, name, inputs, outputs, attrs, feeds, share="", split=None):
  """inputs: node input names ('' for absent); feeds: name -> array for every non-empty input.
  split(feeds, b) -> the feeds of batch entry b alone: ONNX Runtime then runs each entry by
  itself and its outputs are joined along the batch (see sparse_case)."""
  if split is not None:
    batch = feeds["query"].shape[0]
    parts = []
    for b in range(batch):
      write_case(op, name, inputs, outputs, attrs, split(feeds, b), share)
      d = os.path.join(OUT, op, name, "test_data_set_0")
      parts.append([numpy_helper.to_array(onnx.load_tensor(os.path.join(d, f"output_{i}.pb")))
                    for i in range(len([o for o in outputs if o]))])
    write_case(op, name, inputs, outputs, attrs, feeds, share)
    for i, o in enumerate(o for o in outputs if o):
      joined = numpy_helper.from_array(np.concatenate([p[i] for p in parts]), o)
      with open(os.path.join(d, f"output_{i}.pb"), "wb") as f:
        f.write(joined.SerializeToString())
    return
  d = os.path.join(OUT, op, name)
  os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
  node = helper.make_node(op, inputs, outputs, domain="com.microsoft", **attrs)
  gin = []
  for n in inputs:
    if n:
      a = feeds[n]
      t = {np.float32: F, np.float16: F16, np.int32: I32}[a.dtype.type]
      gin.append(helper.make_tensor_value_info(n, t, list(a.shape)))
  out_type = {np.float32: F, np.float16: F16}[feeds["query"].dtype.type]
  gout = [helper.make_tensor_value_info(n, out_type, None) for n in outputs if n]
  graph = helper.make_graph([node], name, gin, gout)
  model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
  model.ir_version = 8
  onnx.save(model, os.path.join(d, "model.onnx"))
  for i, n in enumerate(x for x in inputs if x):
    t = numpy_helper.from_array(feeds[n], n)
    with open(os.path.join(d, "test_data_set_0", f"input_{i}.pb"), "wb") as f:
      f.write(t.SerializeToString())
  env = dict(os.environ, NODE_PATH=os.path.expanduser("~/ort/node_modules"))
  subprocess.run(["node", runner_path, d, share], check=True, env=env)
  print("wrote", d)


def normal(shape, dtype=np.float32):
  return rng.standard_normal(shape).astype(dtype)


# --------------------------------------------------------------------------------------------
# SparseAttention


def csr(dense):
  """(layouts, blocks, blocks) 0/1 -> block_row_indices (layouts, blocks + 1), block_col_indices
  (layouts, max_nnz) padded with -1 past each layout's count (ONNX Runtime never reads them)."""
  layouts, blocks, _ = dense.shape
  rows = np.zeros((layouts, blocks + 1), np.int32)
  cols = []
  for l in range(layouts):
    c = []
    for r in range(blocks):
      c += [j for j in range(blocks) if dense[l, r, j]]
      rows[l, r + 1] = len(c)
    cols.append(c)
  nnz = max(len(c) for c in cols)
  out = np.full((layouts, nnz), -1, np.int32)
  for l, c in enumerate(cols):
    out[l, :len(c)] = c
  return rows, out


def strided_layouts(layouts, blocks, local, stride):
  """Phi-3-small's pattern: each query block sees its `local` nearest key blocks and every
  `stride`-th block (shifted per layout), lower triangle only."""
  d = np.zeros((layouts, blocks, blocks), np.int32)
  for l in range(layouts):
    for r in range(blocks):
      for c in range(r + 1):
        if r - c < local or (c + l + 1) % stride == 0:
          d[l, r, c] = 1
  return d


def sparse_case(name, *, batch, seq, heads, kv_heads, head, block, dense, cache, total, lens, dtype=np.float32,
                packed=False, rotary=0, interleaved=0, scale=None):
  layouts_rows, layouts_cols = csr(dense)
  past = [0] * batch if total == seq else [l - seq for l in lens]
  pk = np.zeros((batch, kv_heads, cache, head), dtype)
  pv = np.zeros((batch, kv_heads, cache, head), dtype)
  for b in range(batch):  # the cached rows, and stale values past them that must stay
    pk[b, :, :] = normal((kv_heads, cache, head), dtype)
    pv[b, :, :] = normal((kv_heads, cache, head), dtype)
  feeds = {}
  if packed:
    feeds["query"] = normal((batch, seq, (heads + 2 * kv_heads) * head), dtype)
    names = ["query", "", ""]
  else:
    feeds["query"] = normal((batch, seq, heads * head), dtype)
    feeds["key"] = normal((batch, seq, kv_heads * head), dtype)
    feeds["value"] = normal((batch, seq, kv_heads * head), dtype)
    names = ["query", "key", "value"]
  feeds.update(past_key=pk, past_value=pv, block_row_indices=layouts_rows, block_col_indices=layouts_cols,
               total_sequence_length=np.array([total], np.int32), key_total_sequence_lengths=np.array(lens, np.int32))
  names += ["past_key", "past_value", "block_row_indices", "block_col_indices", "total_sequence_length",
            "key_total_sequence_lengths"]
  attrs = dict(num_heads=heads, kv_num_heads=kv_heads, sparse_block_size=block)
  if scale is not None:
    attrs["scale"] = scale
  if rotary:
    attrs.update(do_rotary=1, rotary_interleaved=interleaved)
    pos = np.arange(cache)[:, None]
    inv = 1.0 / (10000 ** (np.arange(rotary) / rotary))
    feeds["cos_cache"] = np.cos(pos * inv).astype(dtype)
    feeds["sin_cache"] = np.sin(pos * inv).astype(dtype)
    names += ["cos_cache", "sin_cache"]
  # ONNX Runtime 1.30's CPU kernel reads the softmax of entry b, head h at b * heads + h times
  # that entry's key length where it wrote it at that times total_sequence_length: when the key
  # lengths differ, the shorter entries' heads past the first read other rows (and stale memory).
  # Those cases take ONNX Runtime's outputs of each entry run alone (total_sequence_length = its
  # own length), joined.
  def alone(feeds, b):
    one = {k: (v[b:b + 1] if k in ("query", "key", "value", "past_key", "past_value", "key_total_sequence_lengths")
               else v) for k, v in feeds.items()}
    one["total_sequence_length"] = np.array([lens[b]], np.int32)
    return one
  write_case("SparseAttention", name, names, ["output", "present_key", "present_value"], attrs, feeds,
             share="past_key=present_key,past_value=present_value", split=alone if len(set(lens)) > 1 else None)


def sparse_cases():
  # A prompt: 2 layouts of local 2 / stride 3 over 8 blocks of 2, grouped query heads 4:2.
  sparse_case("prompt_gqa", batch=2, seq=8, heads=4, kv_heads=2, head=8, block=2, cache=10, total=8, lens=[8, 8],
              dense=strided_layouts(2, 8, 2, 3))
  # Decoding steps of entries at their own lengths, rotary on half the head (non-interleaved), 4:1.
  sparse_case("decode_rotary", batch=2, seq=1, heads=4, kv_heads=1, head=32, block=4, cache=14, total=13,
              lens=[9, 13], dense=strided_layouts(1, 4, 1, 2), rotary=8)
  # Packed QKV, interleaved rotary on the whole head, 4 layouts for 4 heads.
  sparse_case("decode_packed_interleaved", batch=2, seq=1, heads=4, kv_heads=2, head=16, block=2, cache=16,
              total=16, lens=[5, 16], dense=strided_layouts(4, 8, 1, 4), packed=True, rotary=8, interleaved=1)
  # Three new tokens after a past (not a prompt), an explicit scale.
  sparse_case("multi_token", batch=2, seq=3, heads=2, kv_heads=2, head=8, block=4, cache=16, total=12, lens=[12, 7],
              dense=strided_layouts(2, 4, 1, 2), scale=0.2)
  # ONNX Runtime's density rules: layout 0 has the whole lower triangle (dense), layout 1 a row
  # listing r + 1 blocks that are not 0..r (counted dense), a row with no block (every key hidden:
  # equal weights) and a row without its own block.
  odd = np.zeros((2, 4, 4), np.int32)
  odd[0] = np.tril(np.ones((4, 4), np.int32))
  odd[1, 0] = [0, 0, 0, 0]          # no block at all
  odd[1, 1] = [0, 0, 1, 1]          # two blocks (= r + 1) but not 0..1: ONNX Runtime calls it dense
  odd[1, 2] = [1, 0, 0, 0]          # one block, not the diagonal
  odd[1, 3] = [1, 0, 1, 1]
  sparse_case("layout_rules", batch=1, seq=8, heads=2, kv_heads=1, head=8, block=2, cache=8, total=8, lens=[8],
              dense=odd)
  # float16: a rotary prompt and a packed decoding step.
  sparse_case("fp16_prompt_rotary", batch=1, seq=6, heads=4, kv_heads=2, head=16, block=2, cache=8, total=6, lens=[6],
              dense=strided_layouts(2, 4, 1, 2), dtype=np.float16, rotary=8)
  sparse_case("fp16_decode_packed", batch=2, seq=1, heads=2, kv_heads=1, head=16, block=4, cache=12, total=11,
              lens=[11, 4], dense=strided_layouts(1, 3, 1, 2), dtype=np.float16, packed=True)


# --------------------------------------------------------------------------------------------
# DecoderMaskedMultiHeadAttention


def dmmha_case(name, *, batch, heads, head, cache=0, past=0, packed=False, bias=False, mask=False, attn_bias=None,
               beam=0, qk=False, scale=None, mask_filter_value=None, cross=0):
  d = heads * head
  feeds = {}
  names = ["query", "key", "value", "", "", "", "", "", "", "", ""]
  if packed:
    feeds["query"] = normal((batch, 1, 3 * d))
    names[1] = names[2] = ""
  else:
    feeds["query"] = normal((batch, 1, d))
    if cross:
      feeds["key"] = normal((batch, heads, cross, head))
      feeds["value"] = normal((batch, heads, cross, head))
    else:
      feeds["key"] = normal((batch, 1, d))
      feeds["value"] = normal((batch, 1, d))
  total = cross if cross else past + 1
  if mask:
    m = np.ones((batch, total), np.int32)
    m[0, 1] = 0
    m[-1, 0] = 0
    feeds["mask_index"] = m
    names[3] = "mask_index"
  if attn_bias is not None:
    feeds["attention_bias"] = normal((attn_bias[0], attn_bias[1], 1, total))
    names[4] = "attention_bias"
  if not cross:
    feeds["past_key"] = normal((batch, heads, cache, head))
    feeds["past_value"] = normal((batch, heads, cache, head))
    feeds["past_sequence_length"] = np.array([past], np.int32)
    names[5:8] = ["past_key", "past_value", "past_sequence_length"]
  if beam:
    feeds["beam_width"] = np.array([beam], np.int32)
    feeds["cache_indirection"] = rng.integers(0, beam, (batch // beam, beam, cache)).astype(np.int32)
    names[8:10] = ["beam_width", "cache_indirection"]
  if bias:
    feeds["bias"] = normal((3 * d,))
    names[10] = "bias"
  while names and not names[-1]:
    names.pop()
  attrs = dict(num_heads=heads)
  if not cross:
    attrs["past_present_share_buffer"] = 1
  if scale is not None:
    attrs["scale"] = scale
  if mask_filter_value is not None:
    attrs["mask_filter_value"] = mask_filter_value
  outs = ["output"] + ([] if cross else ["present_key", "present_value"])
  if qk:
    attrs["output_qk"] = 1
    outs += ([""] * 2 if cross else []) + ["qk"]
  write_case("DecoderMaskedMultiHeadAttention", name, names, outs, attrs, feeds)


def dmmha_cases():
  dmmha_case("self", batch=2, heads=2, head=8, cache=6, past=3)
  dmmha_case("bias_mask_qk", batch=2, heads=2, head=8, cache=7, past=5, bias=True, mask=True, attn_bias=(2, 2),
             qk=True, scale=0.3, mask_filter_value=-500.0)
  dmmha_case("broadcast_bias", batch=2, heads=4, head=4, cache=5, past=4, bias=True,
             attn_bias=(1, 1))
  dmmha_case("beams", batch=4, heads=2, head=8, cache=8, past=6, beam=2, mask=True, qk=True, attn_bias=(1, 2))
  dmmha_case("beams_qkv_bias", batch=6, heads=2, head=4, cache=6, past=4, beam=3, attn_bias=(1, 1), bias=True)
  dmmha_case("cross", batch=2, heads=2, head=8, cross=5, mask=True, qk=True, bias=True)


# --------------------------------------------------------------------------------------------
# --bench DIR: one decoding step of each op at a realistic size (32 heads of 128, 1024 cached
# tokens in a cache of 2048; SparseAttention with 8 key-value heads and Phi-3-small's blocks of 64,
# 16 local blocks and a vertical stride of 8), and ONNX Runtime's p50 at 1 and 2 threads (its
# past and present bound to one buffer, as onnxruntime-genai runs it). onnxflow's side:
#   bazel-bin/tools/benchmark DIR/<op>/model.onnx --inputs DIR/<op>/test_data_set_0 --threads N --runs 300

TIMER = r"""
const fs = require('fs'), path = require('path');
const ort = require('onnxruntime-node');
const { onnx } = require('onnx-proto');
const kTypes = { 1: ['float32', Float32Array], 6: ['int32', Int32Array] };
(async () => {
  const [dir, pairs, runs] = process.argv.slice(2);
  const model = path.join(dir, 'model.onnx');
  const mp = onnx.ModelProto.decode(fs.readFileSync(model));
  for (const threads of [1, 2]) {
    const sess = await ort.InferenceSession.create(model, { intraOpNumThreads: threads, interOpNumThreads: 1,
                                                            logSeverityLevel: 3 });
    const feeds = {};
    mp.graph.input.forEach((v, i) => {
      const t = onnx.TensorProto.decode(fs.readFileSync(path.join(dir, 'test_data_set_0', `input_${i}.pb`)));
      const b = Buffer.from(t.rawData);
      const [type, A] = kTypes[t.dataType];
      feeds[v.name] = new ort.Tensor(type, new A(b.buffer.slice(b.byteOffset, b.byteOffset + b.length)), t.dims.map(Number));
    });
    const fetches = {};
    mp.graph.output.forEach(v => { fetches[v.name] = null; });
    for (const p of pairs.split(',').filter(x => x)) { const [i, o] = p.split('='); fetches[o] = feeds[i]; }
    const times = [];
    for (let r = 0; r < +runs; ++r) {
      const t0 = process.hrtime.bigint();
      await sess.run(feeds, fetches);
      times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    times.sort((a, b) => a - b);
    console.log(`${path.basename(dir)} ONNX Runtime threads=${threads} p50 ${times[times.length >> 1].toFixed(3)} ms`);
  }
})();
"""


def bench(out):
  global OUT
  OUT = out
  heads, kv, head, cache, past, block = 32, 8, 128, 2048, 1024, 64
  blocks = cache // block
  lay = strided_layouts(8, blocks, 16, 8)
  rows, cols = csr(lay)
  feeds = dict(query=normal((1, 1, heads * head)), key=normal((1, 1, kv * head)), value=normal((1, 1, kv * head)),
               past_key=normal((1, kv, cache, head)), past_value=normal((1, kv, cache, head)),
               block_row_indices=rows, block_col_indices=cols,
               total_sequence_length=np.array([past + 1], np.int32),
               key_total_sequence_lengths=np.array([past + 1], np.int32))
  share = "past_key=present_key,past_value=present_value"
  write_case("SparseAttention", "", list(feeds), ["output", "present_key", "present_value"],
             dict(num_heads=heads, kv_num_heads=kv, sparse_block_size=block), feeds, share=share)
  feeds = dict(query=normal((1, 1, heads * head)), key=normal((1, 1, heads * head)),
               value=normal((1, 1, heads * head)), past_key=normal((1, heads, cache, head)),
               past_value=normal((1, heads, cache, head)), past_sequence_length=np.array([past], np.int32))
  write_case("DecoderMaskedMultiHeadAttention", "", ["query", "key", "value", "", "", "past_key", "past_value",
             "past_sequence_length"], ["output", "present_key", "present_value"],
             dict(num_heads=heads, past_present_share_buffer=1), feeds, share=share)
  timer = os.path.join(os.path.dirname(runner_path), "time.js")
  with open(timer, "w") as f:
    f.write(TIMER)
  env = dict(os.environ, NODE_PATH=os.path.expanduser("~/ort/node_modules"))
  for op in ("SparseAttention", "DecoderMaskedMultiHeadAttention"):
    subprocess.run(["node", timer, os.path.join(out, op), share, "300"], check=True, env=env)


if __name__ == "__main__":
  if len(sys.argv) > 2 and sys.argv[1] == "--bench":
    bench(sys.argv[2])
  else:
    sparse_cases()
    dmmha_cases()
