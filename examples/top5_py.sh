#!/usr/bin/env bash
# Runs top5.py with Debian's python3 and the onnxflow module Bazel built.
set -euo pipefail
cd "${RUNFILES_DIR:-$0.runfiles}"
model="$1"
[[ "$model" == /* ]] || model="${BUILD_WORKING_DIRECTORY:-$OLDPWD}/$model"
PYTHONPATH="$PWD/onnxflow/python" exec /usr/bin/python3 onnxflow_examples/top5.py "$model"
