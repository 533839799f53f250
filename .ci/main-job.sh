#!/usr/bin/env bash
# The README's main job: set up (idempotent), then run the analysis on bundled real data.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
if [ "${ATTNREG_SKIP_SETUP:-0}" != "1" ]; then
  mkdir -p build
  echo "setting up (log: build/setup.log) ..."
  bash .ci/setup.sh >build/setup.log 2>&1 || { tail -40 build/setup.log; exit 1; }
fi
${PYTHON:-python3} vignettes/main_job.py "$@"
