"""Small-n cv_ls fixed costs: attnreg.select_bandwidth vs statsmodels KernelReg(bw="cv_ls"),
side by side in one run, on the same data.

CPU seconds by time.process_time (all threads of the process), best of `--reps` calls and the
first call separately (the first pays for imports and warm-up); the load is read from
/proc/loadavg before and after. statsmodels runs (1-D only) up to --sm-max-n rows, once above
1,000 rows (a call takes tens of seconds there).
Data: x ~ U(0, 1)^d, y = sin(2 pi x1) (+ x2^2 + x3 / 2) + N(0, 0.3^2).

    OMP_NUM_THREADS=1 OMP_WAIT_POLICY=passive PYTHONPATH=python-package/src \\
        python3 bench/bench_cv_small.py [--sizes 300 1000 3000 10000] [--no-statsmodels]
"""
from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np

import attnreg


def data(n, d, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, d))
    y = np.sin(2 * np.pi * X[:, 0]) + rng.normal(0, 0.3, n)
    if d > 1:
        y += X[:, 1] ** 2
    if d > 2:
        y += 0.5 * X[:, 2]
    return X, y


def cpu(fn):
    c = time.process_time()
    out = fn()
    return out, time.process_time() - c


def timings(fn, reps):
    out, first = cpu(fn)
    best = first
    for _ in range(reps - 1):
        out, t = cpu(fn)
        best = min(best, t)
    return out, first, best


def statsmodels_fit(X, y, reg_type):
    from statsmodels.nonparametric.kernel_regression import KernelReg

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.abs(KernelReg(y, X, var_type="c" * X.shape[1], reg_type=reg_type,
                                bw="cv_ls").bw)


def load():
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="*", default=[300, 1000, 3000, 10000])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--no-statsmodels", action="store_true")
    ap.add_argument("--sm-max-n", type=int, default=3000)
    a = ap.parse_args()
    print(f"load before: {load()}; OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', '-')}")
    print("| case | attnreg h | first s | best s | evals | statsmodels h | sm s | ratio "
          "(sm / attnreg best) |")
    print("|---|---|---|---|---|---|---|---|")
    cases = [(n, 1, "ll") for n in a.sizes] + [(n, 1, "lc") for n in a.sizes if n <= 3000]
    cases += [(1000, 2, "ll"), (1000, 3, "ll")]
    for n, d, est in cases:
        X, y = data(n, d)
        r, first, best = timings(lambda: attnreg.select_bandwidth(X, y, est, "cv_ls"), a.reps)
        h = " ".join(f"{b:.5g}" for b in r.bandwidth)
        sm_h = sm_t = ratio = "-"
        if not a.no_statsmodels and n <= a.sm_max_n and d == 1:
            reps = a.reps if n <= 1000 else 1
            bw, _, t = timings(lambda: statsmodels_fit(X, y, est), reps)
            sm_h = " ".join(f"{b:.5g}" for b in bw)
            sm_t = f"{t:.3f}"
            ratio = f"{t / best:.0f}x"
        print(f"| {d}-D {est} n={n} | {h} | {first:.4f} | {best:.4f} | {r.n_evals} | {sm_h} | "
              f"{sm_t} | {ratio} |", flush=True)
    print(f"load after: {load()}")


if __name__ == "__main__":
    main()
