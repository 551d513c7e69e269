#!/bin/bash
# Runs every case folder under OUT_DIR (made by make_cases.sh) in onnxflow and checks its outputs:
# one line per case, "ok" or the reason. usage: check_cases.sh OUT_DIR [RUN_MODEL]
out=$1
run_model=${2:-bazel-bin/tools/run_model}
fails=0
for dir in "$out"/*/; do
  name=$(basename "$dir")
  msg=$("$run_model" "$dir/model.onnx" --inputs "$dir/test_data_set_0" --check "$dir/test_data_set_0" 2>&1 | tail -1)
  if [ "${PIPESTATUS[0]}" = 0 ]; then echo "ok    $name"; else echo "FAIL  $name: $msg"; fails=$((fails + 1)); fi
done
echo "$fails failed"
[ "$fails" = 0 ]
