#!/bin/bash
# Runs every case folder under OUT_DIR (made by make_cases.sh) in onnxflow and checks its outputs:
# one line per case, "ok" or the reason. Options after RUN_MODEL go to every run (--atol 1e-5 ...).
# usage: check_cases.sh OUT_DIR [RUN_MODEL [RUN_MODEL OPTIONS...]]
out=$1
run_model=${2:-bazel-bin/tools/run_model}
options=("${@:3}")
fails=0
for dir in "$out"/*/; do
  name=$(basename "$dir")
  # (The status of run_model itself: PIPESTATUS after `msg=$(... | tail -1)` is the assignment's,
  # which passed every case.)
  log=$("$run_model" "$dir/model.onnx" --inputs "$dir/test_data_set_0" --check "$dir/test_data_set_0" "${options[@]}" 2>&1)
  status=$?
  msg=$(printf '%s\n' "$log" | tail -1)
  if [ "$status" = 0 ]; then echo "ok    $name"; else echo "FAIL  $name: $msg"; fails=$((fails + 1)); fi
done
echo "$fails failed"
[ "$fails" = 0 ]
