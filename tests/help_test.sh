#!/usr/bin/env bash
# Every tool's --help (issue 25): exits 0, shows its exit codes, one example, and the defaults of
# its options (CLI11 prints them as TYPE=VALUE).
set -uo pipefail
fail=0
check() {  # check TOOL TEXT...
  local tool="$1" out
  shift
  out=$("$tool" --help 2>&1)
  local code=$?
  if [[ $code -ne 0 ]]; then echo "FAIL: $tool --help exited $code"; fail=1; fi
  for text in "Exit codes: 0" "Example" "$@"; do
    if [[ "$out" != *"$text"* ]]; then echo "FAIL: $(basename "$tool") --help lacks '$text'"; fail=1; fi
  done
}
check "$1" "--mode TEXT=dataflow" "--profile-nodes INT:POSITIVE=30"   # run_model
check "$2" "--trace-runs INT=5" "--concurrency INT=[1,2,4,8]"         # benchmark
check "$3" "--iterations INT=10000" "--runs INT=20"                   # loop_benchmark
check "$4" "--workers INT=8" "--requests INT=200"                     # embed_example
check "$5" "--http-port INT=8000" "--shutdown-timeout FLOAT=30"       # server
[[ $fail -eq 0 ]] && echo PASS
exit $fail
