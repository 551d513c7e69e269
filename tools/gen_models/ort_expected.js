// Writes ONNX Runtime's outputs for a case's inputs as CASE_DIR/test_data_set_<set>/output_<i>.pb
// (in their own element types), the expected values for the generated quantized models (quant_models.py).
// usage: NODE_PATH=~/ort/node_modules node tools/gen_models/ort_expected.js CASE_DIR [set]
const fs = require('fs'), path = require('path');
const ort = require('onnxruntime-node');
const { onnx } = require('onnx-proto');
// ONNX element type -> ONNX Runtime's type name and the array that holds it (inputs in raw_data).
const kTypes = { 1: ['float32', Float32Array], 2: ['uint8', Uint8Array], 3: ['int8', Int8Array],
                 6: ['int32', Int32Array], 7: ['int64', BigInt64Array], 9: ['bool', Uint8Array],
                 10: ['float16', Uint16Array], 11: ['float64', Float64Array] };
const kOutputTypes = Object.fromEntries(Object.entries(kTypes).map(([code, [name]]) => [name, +code]));
(async () => {
  const [dir, set = '0'] = process.argv.slice(2);
  const model = path.join(dir, 'model.onnx');
  const mp = onnx.ModelProto.decode(fs.readFileSync(model));
  const inits = new Set(mp.graph.initializer.map(t => t.name));
  const names = mp.graph.input.map(v => v.name).filter(n => !inits.has(n));
  // ORT_OPT=disabled: ONNX Runtime's unfused run, to see how far its own two runs agree.
  const sess = await ort.InferenceSession.create(model, { intraOpNumThreads: 1, logSeverityLevel: 3,
                                                          graphOptimizationLevel: process.env.ORT_OPT || 'all' });
  const feeds = {};
  names.forEach((n, i) => {
    const t = onnx.TensorProto.decode(fs.readFileSync(path.join(dir, `test_data_set_${set}`, `input_${i}.pb`)));
    const b = Buffer.from(t.rawData);
    const [type, Array] = kTypes[t.dataType];
    feeds[n] = new ort.Tensor(type, new Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.length)), t.dims.map(Number));
  });
  const out = await sess.run(feeds);
  mp.graph.output.forEach((v, i) => {
    const r = out[v.name];
    const t = onnx.TensorProto.create({ name: v.name, dims: r.dims, dataType: kOutputTypes[r.type],
                                        rawData: Buffer.from(r.data.buffer, r.data.byteOffset, r.data.byteLength) });
    fs.writeFileSync(path.join(dir, `test_data_set_${set}`, `output_${i}.pb`), onnx.TensorProto.encode(t).finish());
    console.log(`${v.name} [${r.dims}] written`);
  });
})();
