#!/bin/bash
# Makes the ONNX Runtime-saved test cases outside the repo: OUT/<name>.<level>/ for every visible
# model of ../shared/onnx-tests/models and for the generated BERT-base-shaped encoder (plain export
# and as ONNX Runtime saves it at basic and extended), each with test_data_set_0 (inputs, and
# expected outputs: the visible models' own, ONNX Runtime's for the generated ones).
# usage: make_cases.sh OUT_DIR [ONNX_TESTS_DIR]    (needs node, onnxruntime-node: NODE_PATH=~/ort/node_modules)
set -euo pipefail
out=$1
tests=${2:-$(dirname "$0")/../../../shared/onnx-tests}
here=$(cd "$(dirname "$0")" && pwd)
tools=${ORT_TOOLS:-$here/../../../shared/tools}
mkdir -p "$out"
for case in "$tests"/models/*/; do
  name=$(basename "$case")
  for level in basic extended; do
    dst="$out/$name.$level"
    mkdir -p "$dst"
    node "$tools/ort_optimize.js" "$case"/*.onnx "$dst/model.onnx" $level > /dev/null
    rm -rf "$dst/test_data_set_0" && cp -r "$case/test_data_set_0" "$dst/"
  done
done
/usr/bin/python3 "$here/gen_bert.py" "$out/bert_base.plain" --pad 16
node "$here/ort_outputs.js" "$out/bert_base.plain"
for level in basic extended; do
  dst="$out/bert_base.$level"
  mkdir -p "$dst"
  node "$tools/ort_optimize.js" "$out/bert_base.plain/model.onnx" "$dst/model.onnx" $level > /dev/null
  rm -rf "$dst/test_data_set_0" && cp -r "$out/bert_base.plain/test_data_set_0" "$dst/"
done
echo "cases in $out"
