"""Benchmark: NadarayaWatson.predict at n = m = 2,000 (d = 1, Gaussian, h = 0.05) with the default
thread count and with one thread, against the vectorised numpy five-liner; and the exact 1-D
Epanechnikov local-linear cv_ls search at n = 10^6. Every timing interleaves the contenders
(median and best of `--reps` by wall, CPU seconds of the process alongside) and prints `uptime`.

    PYTHONPATH=python-package/src python bench/bench_nw_threads.py [--search] [--label main]

Run it once per build (PYTHONPATH pointing at each) in one shell script to compare builds side
by side; results: bench/results/nw_threads.md.
"""
from __future__ import annotations

import argparse
import subprocess
import time

import numpy as np

import attnreg


def numpy_nw(x, y, q, h):
    """The five-liner."""
    W = np.exp(-0.5 * ((q[:, None] - x[None, :]) / h) ** 2)
    return (W @ y) / W.sum(axis=1)


def uptime():
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def clock(fn):
    w0, c0 = time.perf_counter(), time.process_time()
    r = fn()
    return time.perf_counter() - w0, time.process_time() - c0, r


def nw_predict(label, reps):
    n, h = 2000, 0.05
    rng = np.random.default_rng(n)
    x = rng.uniform(size=n)
    y = np.sin(6 * x) + 0.1 * rng.normal(size=n)
    q = rng.uniform(size=n)
    ms = {th: attnreg.NadarayaWatson(bandwidth=h, n_threads=th).fit(x[:, None], y) for th in (0, 1)}
    fns = {"attnreg default threads": lambda: ms[0].predict(q[:, None]),
           "attnreg 1 thread": lambda: ms[1].predict(q[:, None]),
           "numpy 5-liner": lambda: numpy_nw(x, y, q, h)}
    T = {k: [] for k in fns}
    out = {}
    for _ in range(reps):
        for k, f in fns.items():
            w, c, out[k] = clock(f)
            T[k].append((w, c))
    assert np.array_equal(out["attnreg default threads"], out["attnreg 1 thread"])
    assert np.allclose(out["attnreg 1 thread"], out["numpy 5-liner"], rtol=1e-12, atol=1e-12)
    med = {k: np.median(np.array(v), axis=0) for k, v in T.items()}
    best = {k: np.array(v)[np.argmin(np.array(v)[:, 0])] for k, v in T.items()}
    nw = med["numpy 5-liner"]
    for k in fns:
        ratio = "" if k.startswith("numpy") else " | %.1fx / %.1fx" % (nw[0] / med[k][0], nw[1] / med[k][1])
        print("| %s | NW predict n = m = 2,000, %s | %.2f | %.2f | %.2f | %.2f%s |" % (
            label, k, 1e3 * med[k][0], 1e3 * med[k][1], 1e3 * best[k][0], 1e3 * best[k][1],
            ratio if ratio else " | -"), flush=True)


def search_1m(label):
    rng = np.random.default_rng(2026)
    n = 10**6
    x = rng.uniform(size=n)
    y = np.sin(2 * np.pi * x) + 0.3 * rng.normal(size=n)
    w, c, r = clock(lambda: attnreg.select_bandwidth(x[:, None], y, "ll", "cv_ls",
                                                     kernel="epanechnikov"))
    print("| %s | Epanechnikov LL exact cv_ls search, n = 10^6 | %.2f | %.2f | h = %.8g, CV = %.14g, %d evaluations |"
          % (label, w, c, r.bandwidth[0], r.objective, r.n_evals), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--label", default="this build")
    ap.add_argument("--reps", type=int, default=41)
    ap.add_argument("--search", action="store_true", help="also the 10^6 cv_ls search")
    a = ap.parse_args()
    print("# %s: %s" % (a.label, uptime()))
    nw_predict(a.label, a.reps)
    if a.search:
        search_1m(a.label)
    print("# %s: %s" % (a.label, uptime()))


if __name__ == "__main__":
    main()
