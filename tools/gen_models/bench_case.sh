#!/bin/bash
# onnxflow against ONNX Runtime on one case folder, rounds alternated (the machines are shared and
# noisy: only the ratio within a minute means much). Prints p50 per round and thread count. With
# several RUN_MODEL binaries (a build before a change and one after it) each round runs ONNX
# Runtime and then each binary, and prints each one's ratio.
# usage: [SET=k] bench_case.sh CASE_DIR [runs=20] [rounds=3] [threads="1 2"] [RUN_MODEL ...]
# SET picks the case's test_data_set_<k> (a decoder's steps at growing cache lengths); default 0.
set=${SET:-0}; dir=$1; runs=${2:-20}; rounds=${3:-3}; threads=${4:-"1 2"}
shift $(($# < 4 ? $# : 4))
binaries=("$@")
[[ ${#binaries[@]} -eq 0 ]] && binaries=(bazel-bin/tools/run_model)
tools=${ORT_TOOLS:-$(cd "$(dirname "$0")" && pwd)/../../../shared/tools}
for t in $threads; do
  for r in $(seq "$rounds"); do
    ort=$(node "$tools/ort_bench_case.js" "$dir" "$t" "$runs" "$set" | sed -n 's/.*p50=\([0-9.]*\)ms.*/\1/p')
    line="$(basename "$dir") set=$set threads=$t round=$r ort_p50_ms=$ort"
    for i in "${!binaries[@]}"; do
      of=$("${binaries[$i]}" "$dir/model.onnx" --inputs "$dir/test_data_set_$set" --threads "$t" --runs "$runs" 2>&1 |
           sed -n 's/.*p50_ms=\([0-9.]*\).*/\1/p' | tail -1)
      suffix=$([[ ${#binaries[@]} -gt 1 ]] && echo "_$i")
      line+=" onnxflow${suffix}_p50_ms=$of ratio${suffix}=$(echo "scale=3; $of / $ort" | bc)"
    done
    echo "$line"
  done
done
