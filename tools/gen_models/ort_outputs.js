// Writes ONNX Runtime's outputs for a test case: CASE_DIR/test_data_set_<set>/output_<i>.pb from
// CASE_DIR/model.onnx run on that set's input_<i>.pb (the inputs without an initializer, in order).
// usage: NODE_PATH=~/ort/node_modules node ort_outputs.js CASE_DIR [set]
// ORT_OPT=disabled|basic|extended|all picks ONNX Runtime's graph optimization level (default: basic).
const fs = require('fs'), path = require('path');
const ort = require('onnxruntime-node');
const { onnx } = require('onnx-proto');
const DT = {1: ['float32', Float32Array], 2: ['uint8', Uint8Array], 3: ['int8', Int8Array], 6: ['int32', Int32Array],
  7: ['int64', BigInt64Array], 9: ['bool', Uint8Array], 10: ['float16', Uint16Array], 11: ['float64', Float64Array]};
const CODE = {float32: 1, uint8: 2, int8: 3, int32: 6, int64: 7, bool: 9, float16: 10, float64: 11};
(async () => {
  const [dir, set = '0'] = process.argv.slice(2);
  const model = path.join(dir, 'model.onnx');
  const data = path.join(dir, `test_data_set_${set}`);
  const mp = onnx.ModelProto.decode(fs.readFileSync(model));
  const inits = new Set(mp.graph.initializer.map(t => t.name));
  const names = mp.graph.input.map(v => v.name).filter(n => !inits.has(n));
  const sess = await ort.InferenceSession.create(model, {intraOpNumThreads: 1, interOpNumThreads: 1, logSeverityLevel: 3,
    graphOptimizationLevel: process.env.ORT_OPT || 'basic'});
  const feeds = {};
  names.forEach((n, i) => {
    const t = onnx.TensorProto.decode(fs.readFileSync(path.join(data, `input_${i}.pb`)));
    const d = DT[t.dataType];
    const b = Buffer.from(t.rawData);
    feeds[n] = new ort.Tensor(d[0], new d[1](b.buffer.slice(b.byteOffset, b.byteOffset + b.length)), t.dims.map(Number));
  });
  const out = await sess.run(feeds);
  sess.outputNames.forEach((n, i) => {
    const t = out[n];
    const raw = Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength);
    const proto = onnx.TensorProto.encode({name: n, dims: t.dims, dataType: CODE[t.type], rawData: raw}).finish();
    fs.writeFileSync(path.join(data, `output_${i}.pb`), proto);
  });
  console.log(`${dir}: wrote ${sess.outputNames.length} outputs`);
})();
