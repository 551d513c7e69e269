#!/usr/bin/env bash
# Runs every tool the way `bazel run` does (BUILD_WORKING_DIRECTORY set, the current directory
# elsewhere) and the way a user runs an installed binary (no variable, relative to the current
# directory): relative inputs must be found and relative outputs land where the user stands.
# Also: --version on every tool prints the version and exits 0.
set -euo pipefail
run_model="$PWD/$1" benchmark="$PWD/$2" loop_benchmark="$PWD/$3" embed_example="$PWD/$4"
version=$(sed -n 's/^#define ONNXFLOW_VERSION_STRING "\(.*\)"$/\1/p' "$5")
fail() { echo "FAIL: $*" >&2; exit 1; }

user="$TEST_TMPDIR/user" elsewhere="$TEST_TMPDIR/elsewhere"
mkdir -p "$user/models" "$elsewhere"  # run_model --output-dir makes its folder

for tool in run_model benchmark loop_benchmark embed_example; do
  out=$("${!tool}" --version) || fail "$tool --version exited $?"
  [[ "$out" == "$tool $version" ]] || fail "$tool --version printed '$out', wanted '$tool $version'"
done

# bazel run: the user stands in $user, the tool starts in $elsewhere.
cd "$elsewhere"
export BUILD_WORKING_DIRECTORY="$user"
"$loop_benchmark" --iterations 4 --nodes 8 --runs 1 --write models > /dev/null
[[ -s "$user/models/chain_add.onnx" ]] || fail "loop_benchmark --write models did not write under the user's folder"
"$run_model" models/chain_add.onnx --fill --quiet --output-dir expected \
  || fail "run_model did not read a relative model"
[[ -s "$user/expected/output_0.pb" ]] || fail "run_model --output-dir did not land in the user's folder"
mkdir -p "$user/in" && cp "$user/expected/output_0.pb" "$user/in/x.pb"
"$run_model" models/chain_add.onnx --fill --quiet --check expected || fail "run_model --check did not read a relative folder"
# --input NAME=FILE (the chain's input x has the shape of its output).
"$run_model" models/chain_add.onnx --input x=in/x.pb --quiet || fail "run_model --input x=FILE did not read a relative file"
"$benchmark" models/chain_add.onnx --concurrency 1 --runs 2 --json b.json --svg b.svg --trace b.trace > /dev/null \
  || fail "benchmark did not read a relative model"
for f in b.json b.svg b.trace; do [[ -s "$user/$f" ]] || fail "benchmark output $f did not land in the user's folder"; done
"$embed_example" models/chain_add.onnx models/wide_add.onnx --workers 2 --requests 4 > /dev/null \
  || fail "embed_example did not read relative models"
ls "$elsewhere" | grep -q . && fail "something was written in the tool's own folder: $(ls "$elsewhere")"

# Run directly: relative to the current directory.
unset BUILD_WORKING_DIRECTORY
cd "$user"
"$run_model" models/chain_add.onnx --fill --quiet --output-dir direct || fail "run_model (direct) did not read a relative model"
[[ -s "$user/direct/output_0.pb" ]] || fail "run_model (direct) --output-dir did not land in the current directory"
echo PASS
