#!/usr/bin/env bash
# The shared library's dynamic symbol table: the public API and nothing else.
set -euo pipefail
lib="$1"
fail() { echo "FAIL: $*" >&2; exit 1; }
soname=$(objdump -p "$lib" | awk '$1 == "SONAME" {print $2}')
[[ "$soname" == libonnxflow.so.0 ]] || fail "soname is '$soname', wanted libonnxflow.so.0"
defined=$(nm -D --defined-only -C "$lib")
# Nothing of the libraries it uses, nor of its own internals (kernels, graph, the onnx proto classes).
leaks=$(grep -E 'google::protobuf|tbb::|hwy::|boost::|onnx::|onnxflow::(ops|graph|scheduler|detail)' <<<"$defined" || true)
[[ -z "$leaks" ]] || fail "exports internals:"$'\n'"$(head -20 <<<"$leaks")"
# Every exported symbol is onnxflow's: the C API (onnxflow_*), the C++ API (onnxflow::...), or the
# version node the script defines.
others=$(awk '{ $1 = ""; $2 = ""; sub(/^  /, ""); print }' <<<"$defined" \
  | grep -vE '^(onnxflow_|onnxflow::|ONNXFLOW_0)' || true)
[[ -z "$others" ]] || fail "exports symbols outside the API:"$'\n'"$(head -20 <<<"$others")"
# The API is there: a few from each part.
for symbol in onnxflow_session_run onnxflow_session_load onnxflow_status_message onnxflow_version \
    'onnxflow::Session::Load(' 'onnxflow::Session::Run(' 'onnxflow::Tensor::Tensor(' 'onnxflow::Status::ToString' \
    'onnxflow::InvalidArgument(' 'onnxflow::DataTypeName(' 'onnxflow::ReadValueFile(' 'onnxflow::ShapeToString' \
    'onnxflow::CustomOpSet::Add(' 'onnxflow::CustomOpSet::CustomOpSet(' 'onnxflow::DescribeModel('; do
  grep -qF " $symbol" <<<"$defined" || fail "does not export $symbol"
done
echo "PASS: $(wc -l <<<"$defined") symbols"
