#!/usr/bin/env bash
# The README's main job: set up what it needs (.ci/setup.sh main: the Python package only;
# idempotent, each step with its time), then run the analysis on bundled real data.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
if [ "${ATTNREG_SKIP_SETUP:-0}" != "1" ]; then
  # Without a visible GPU the CUDA objects are not compiled (.ci/setup.sh decides); the tests
  # (.ci/test.sh) check that they compile whenever nvcc is present.
  mkdir -p build
  echo "setting up (a copy of this output: build/setup.log; compiler output: build/*.log) ..."
  bash .ci/setup.sh main 2>&1 | tee build/setup.log   # pipefail: a failing step stops the job
fi
${PYTHON:-python3} vignettes/main_job.py "$@"
