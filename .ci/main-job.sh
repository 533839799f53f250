#!/usr/bin/env bash
# The README's main job: set up what it needs (.ci/setup.sh main: the Python package only;
# idempotent, each step with its time), then run the analysis on bundled real data.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
if [ "${ATTNREG_SKIP_SETUP:-0}" != "1" ]; then
  # The analysis runs on the CPU: without a visible GPU the CUDA objects (the slowest part of a
  # fresh build) are not compiled. The tests (.ci/test.sh) compile them whenever nvcc is present.
  if [ -z "${ATTNREG_CUDA:-}" ] && ! command -v nvidia-smi >/dev/null 2>&1; then
    export ATTNREG_CUDA=OFF
    echo "no GPU visible (nvidia-smi not found): building without the CUDA backend"
  fi
  mkdir -p build
  echo "setting up (a copy of this output: build/setup.log; compiler output: build/*.log) ..."
  bash .ci/setup.sh main 2>&1 | tee build/setup.log   # pipefail: a failing step stops the job
fi
${PYTHON:-python3} vignettes/main_job.py "$@"
