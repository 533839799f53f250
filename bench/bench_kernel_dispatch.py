"""Benchmark: kernel dispatch cost (one traits type per kernel, dispatch_kernel) on the two hot
paths, NW prediction (default path, one thread) and the cv_ls objective, for two builds side by side.

    python bench/bench_kernel_dispatch.py --builds A=/path/to/moduleA B=/path/to/moduleB

Each build's ``attnreg`` package directory is put first on sys.path in its own subprocess; the
builds alternate for ``--rounds`` rounds and each case reports the best wall time per build.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

CASE_CODE = r"""
import json, sys, time
import numpy as np
import attnreg
from attnreg import _core
rng = np.random.default_rng(0)
out = {}
for kernel in ("gaussian", "epanechnikov", "tricube"):
    for n, d in ((20000, 1), (8000, 3)):
        X = rng.normal(size=(n, d)); y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=n)
        Q = X[rng.permutation(n)] + 0.01 * rng.normal(size=(n, d)); h = np.full(d, 0.9 * n ** (-1 / (4 + d)) * (2 if kernel == "gaussian" else 8))
        m = attnreg.NadarayaWatson(kernel=kernel, bandwidth=h, n_threads=1).fit(X, y)
        t = time.perf_counter(); m.predict(Q); out[f"nw_predict {kernel} n={n} d={d}"] = time.perf_counter() - t
        t = time.perf_counter()
        _core.bandwidth_objective(X[:4000], y[:4000], h, 1, "cv_ls", kernel, "", "aitchison_aitken",
                                  "li_racine", 0.0, True, None)
        out[f"cv_ls ll+grad {kernel} n=4000 d={d}"] = time.perf_counter() - t
print(json.dumps(out))
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--builds", nargs="+", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    builds = dict(b.split("=", 1) for b in a.builds)
    best = {k: {} for k in builds}
    for _ in range(a.rounds):
        for name, path in builds.items():
            env = dict(os.environ, PYTHONPATH=path, OMP_NUM_THREADS="1")
            r = subprocess.run([sys.executable, "-c", CASE_CODE], env=env, capture_output=True,
                               text=True)
            if r.returncode != 0:
                sys.exit(f"build {name} failed:\n{r.stderr}")
            for k, v in json.loads(r.stdout).items():
                best[name][k] = min(best[name].get(k, float("inf")), v)
    names = list(builds)
    print("| case | " + " | ".join(f"{n} (s)" for n in names) + " | ratio |")
    print("|---|" + "---|" * (len(names) + 1))
    for k in best[names[0]]:
        vals = [best[n][k] for n in names]
        print(f"| {k} | " + " | ".join(f"{v:.4f}" for v in vals) + f" | {vals[-1] / vals[0]:.3f} |")


if __name__ == "__main__":
    main()
