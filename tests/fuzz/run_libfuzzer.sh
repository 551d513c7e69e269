#!/usr/bin/env bash
# Builds the fuzz targets with Debian's clang as real libFuzzer binaries (coverage, ASan, UBSan over
# the whole runtime: --config=fuzz in .bazelrc, in an output base of their own so the normal gcc
# build stays cached) and runs each one for SECONDS.
#
#   tests/fuzz/run_libfuzzer.sh [SECONDS_PER_TARGET=900] [WORKDIR=/tmp/onnxflow_fuzz] [TARGETS...]
#
# Seeds come from ../shared/onnx-tests (written into WORKDIR, never committed) plus the committed
# regression files in tests/hostile/regressions/. New corpus entries go to WORKDIR/corpus_<target>,
# crashes to WORKDIR/artifacts/. A crash found becomes a file in tests/hostile/regressions/<kind>/
# (plus a fix); `bazel test //tests/fuzz/...` replays those files every time.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds="${1:-900}"
work="${2:-/tmp/onnxflow_fuzz}"
shift 2 2>/dev/null || shift $#
targets=("$@")
((${#targets[@]})) || targets=(fuzz_model fuzz_tensor_proto)
base="${ONNXFLOW_FUZZ_OUTPUT_BASE:-$HOME/.cache/bazel_fuzz}"
data="$(cd .. && pwd)/shared/onnx-tests"

# Everything in the fuzz output base (write_seeds too), at the lowest priority: the normal build's
# output base and its bazel-* symlinks are left alone.
nice -n 19 bazel --output_base="$base" build --config=fuzz \
  //tests/fuzz:fuzz_model //tests/fuzz:fuzz_tensor_proto //tests/fuzz:write_seeds
bin="$(bazel --output_base="$base" info --config=fuzz bazel-bin 2>/dev/null)/tests/fuzz"
mkdir -p "$work/artifacts"
for kind in models tensors; do
  [[ -d "$work/seeds_$kind" ]] || ASAN_OPTIONS=detect_leaks=0 ONNXFLOW_TEST_DATA="$data" \
    "$bin/write_seeds" --corpus=$kind --write_seeds="$work/seeds_$kind"
done

for target in "${targets[@]}"; do
  case "$target" in
    fuzz_model) kind=models; reg=tests/hostile/regressions/model ;;
    fuzz_tensor_proto) kind=tensors; reg=tests/hostile/regressions/tensor ;;
  esac
  mkdir -p "$work/corpus_$target"
  # detect_leaks=0: TBB keeps per-thread state until exit, which LeakSanitizer reports per input.
  ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1 \
    nice -n 19 "$bin/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -max_len=262144 \
    -print_final_stats=1 -artifact_prefix="$work/artifacts/$target-" \
    "$work/corpus_$target" "$work/seeds_$kind" "$reg" 2>&1 | tee "$work/$target.log" | grep -E "^#[0-9]+ +(DONE|pulse)|ERROR|SUMMARY|stat::" || true
done
