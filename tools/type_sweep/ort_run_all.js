// ONNX Runtime's outputs for many variant cases in one process (type_sweep.py's `ort` step).
// usage: NODE_PATH=~/ort/node_modules node ort_run_all.js LIST
// LIST: one job a line, MODEL<tab>INPUTS_DIR<tab>OUT_DIR. Each job runs MODEL on INPUTS_DIR/input_<i>.pb (the
// graph inputs without initializer, in order) and writes OUT_DIR/output_<i>.pb (graph output order) and
// OUT_DIR/status.json {ok, error}. OUT_DIR/started is written first, so that the driver can tell which job
// was on if a kernel takes the whole process down.
const fs = require('fs'), path = require('path');
const ort = require('onnxruntime-node');
const { onnx } = require('onnx-proto');
// ONNX element type -> ONNX Runtime's type name and the typed array that holds it.
const kTypes = {1: ['float32', Float32Array], 2: ['uint8', Uint8Array], 3: ['int8', Int8Array],
  4: ['uint16', Uint16Array], 5: ['int16', Int16Array], 6: ['int32', Int32Array], 7: ['int64', BigInt64Array],
  9: ['bool', Uint8Array], 10: ['float16', Uint16Array], 11: ['float64', Float64Array],
  12: ['uint32', Uint32Array], 13: ['uint64', BigUint64Array]};
const kCodes = Object.fromEntries(Object.entries(kTypes).map(([code, [name]]) => [name, +code]));

function readTensor(file) {
  const t = onnx.TensorProto.decode(fs.readFileSync(file));
  const kt = kTypes[t.dataType];
  if (!kt) throw new Error(`input ${file}: element type ${t.dataType} not supported by onnxruntime-node`);
  const dims = t.dims.map(Number);
  let data;
  if (t.rawData && t.rawData.length) {
    const b = Buffer.from(t.rawData);
    data = new kt[1](b.buffer.slice(b.byteOffset, b.byteOffset + b.length));
  } else if (t.floatData && t.floatData.length) data = Float32Array.from(t.floatData);
  else if (t.doubleData && t.doubleData.length) data = Float64Array.from(t.doubleData);
  else if (t.int64Data && t.int64Data.length) data = BigInt64Array.from(t.int64Data.map(v => BigInt(v.toString())));
  else if (t.int32Data && t.int32Data.length) data = kt[1].from(t.int32Data);
  else data = new kt[1](0);
  if (t.dataType === 9) return new ort.Tensor('bool', Uint8Array.from(data), dims);
  return new ort.Tensor(kt[0], data, dims);
}

async function runOne(model, inputs, odir) {
  fs.mkdirSync(odir, {recursive: true});
  for (const f of fs.readdirSync(odir)) fs.unlinkSync(path.join(odir, f));
  fs.writeFileSync(path.join(odir, 'started'), '');
  const status = {ok: false};
  try {
    const mp = onnx.ModelProto.decode(fs.readFileSync(model));
    const inits = new Set(mp.graph.initializer.map(t => t.name));
    const names = mp.graph.input.map(v => v.name).filter(n => !inits.has(n));
    // Types the binding cannot hand over (int4, float8, bfloat16, ...) take the process down: refuse them.
    for (const v of mp.graph.output) {
      const et = v.type && v.type.tensorType ? v.type.tensorType.elemType : 0;
      if (!kTypes[et]) throw new Error(`output ${v.name}: element type ${et} not supported by onnxruntime-node`);
    }
    const sess = await ort.InferenceSession.create(model, {intraOpNumThreads: 1, interOpNumThreads: 1,
      logSeverityLevel: 4, graphOptimizationLevel: 'disabled'});
    const feeds = {};
    names.forEach((n, i) => { feeds[n] = readTensor(path.join(inputs, `input_${i}.pb`)); });
    const out = await sess.run(feeds);
    mp.graph.output.forEach((v, i) => {
      const r = out[v.name];
      if (!(r.type in kCodes)) throw new Error(`output ${v.name}: type ${r.type}`);
      const raw = Buffer.from(r.data.buffer, r.data.byteOffset, r.data.byteLength);
      const t = onnx.TensorProto.create({name: v.name, dims: r.dims, dataType: kCodes[r.type], rawData: raw});
      fs.writeFileSync(path.join(odir, `output_${i}.pb`), onnx.TensorProto.encode(t).finish());
    });
    status.ok = true;
    if (sess.release) await sess.release();
  } catch (e) {
    status.error = String(e && e.message ? e.message : e);
  }
  fs.writeFileSync(path.join(odir, 'status.json'), JSON.stringify(status));
}

(async () => {
  const list = fs.readFileSync(process.argv[2], 'utf8').split('\n').filter(Boolean);
  let n = 0;
  for (const line of list) {
    const [model, inputs, odir] = line.split('\t');
    await runOne(model, inputs, odir);
    if (++n % 500 === 0) console.log(`ORT: ${n}/${list.length}`);
  }
})();
