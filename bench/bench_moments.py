#!/usr/bin/env python3
"""LocalMoments benchmark: the paths whose moments live in LocalMoments (blockwise LLA and
softmax attention, LLA and local-polynomial partials with their merges, the cv_ls search with
its gradient moments), timed for two builds of attnreg side by side in one run.

    python3 bench/bench_moments.py --before DIR_A --after DIR_B [--repeat 5] [--out FILE]

DIR_A / DIR_B are folders holding an importable ``attnreg`` package (python-package/src with
the built _core module linked in). Every measurement runs in a fresh child process, the two
builds alternating, one thread (n_threads = 1, OPENBLAS_NUM_THREADS = 1); the table shows the
smallest CPU time (process time) of --repeat runs per build and case, and the ratio.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

CASES = ["lla_blockwise", "softmax_blockwise", "lla_partials", "local_partials",
         "cv_ls_2d", "cv_ls_1d"]


def child(case: str) -> float:
    import numpy as np

    import attnreg
    from attnreg import _core
    from attnreg import attention as att

    rng = np.random.default_rng(0)
    if case in ("lla_blockwise", "softmax_blockwise", "lla_partials"):
        n, d = (2048, 32) if case != "lla_partials" else (1024, 8)
        Q, K, V = (rng.standard_normal((1, 2, n, d)) / np.sqrt(d) for _ in range(3))
    if case in ("local_partials", "cv_ls_2d", "cv_ls_1d"):
        n = {"local_partials": 20000, "cv_ls_2d": 1500, "cv_ls_1d": 4000}[case]
        dx = 2 if case != "cv_ls_1d" else 1
        X = rng.uniform(size=(n, dx))
        y = np.sin(2 * np.pi * X[:, 0]) + rng.normal(0, 0.3, n)
    t0 = time.process_time()
    if case == "lla_blockwise":
        att.lla(Q, K, V, ridge=0.1, causal=True, method="blockwise", n_threads=1)
    elif case == "softmax_blockwise":
        for _ in range(4):
            att.softmax(Q, K, V, causal=True, n_threads=1)
    elif case == "lla_partials":
        cuts = [0, 300, 600, 1024]
        parts = [att.lla_partial(Q, K[:, :, a:b], V[:, :, a:b], key_offset=a, n_keys_total=n,
                                 causal=True) for a, b in zip(cuts[:-1], cuts[1:])]
        acc = parts[0]
        for p in parts[1:]:
            acc = att.lla_merge(acc, p)
        att.lla_finalize(Q, acc, ridge=0.1, causal=True)
    elif case == "local_partials":
        Xq = X[:2000]
        cuts = [0, 5000, 12000, 20000]
        parts = [_core.local_partial(X[a:b], y[a:b, None], Xq, np.array([0.05, 0.05]),
                                     n_threads=1) for a, b in zip(cuts[:-1], cuts[1:])]
        acc = parts[0]
        for p in parts[1:]:
            acc = _core.local_merge(acc, p)
        _core.local_finalize(acc, np.array([0.05, 0.05]))
    else:
        attnreg.select_bandwidth(X, y, "ll", "cv_ls", n_threads=1)
    return time.process_time() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", required=False)
    ap.add_argument("--after", required=False)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out", default=None)
    ap.add_argument("--cases", default=",".join(CASES), help="comma-separated subset of cases")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        print(json.dumps(child(a.child)))
        return
    builds = {"before": a.before, "after": a.after}
    cases = [c for c in a.cases.split(",") if c]
    best = {(c, b): float("inf") for c in cases for b in builds}
    env0 = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    for _ in range(a.repeat):
        for c in cases:
            for b, path in builds.items():
                env = dict(env0, PYTHONPATH=path)
                out = subprocess.run([sys.executable, __file__, "--child", c], env=env,
                                     capture_output=True, text=True, check=True).stdout
                best[(c, b)] = min(best[(c, b)], json.loads(out.strip().splitlines()[-1]))
    load = os.getloadavg()
    lines = [f"Load average at the end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} "
             f"({os.cpu_count()} cores); best CPU seconds of {a.repeat} runs, one thread.", "",
             "| case | before (s) | after (s) | after / before |", "|---|---|---|---|"]
    for c in cases:
        x, y = best[(c, "before")], best[(c, "after")]
        lines.append(f"| {c} | {x:.3f} | {y:.3f} | {y / x:.3f} |")
    text = "\n".join(lines)
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
