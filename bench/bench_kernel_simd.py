"""Benchmark: attnreg's Nadaraya-Watson predict against a five-line numpy Nadaraya-Watson and the
machine's floor (bench/kernel_floor.cpp), side by side in one run.

    python bench/bench_kernel_simd.py --floor build-dev/kernel_floor [--floor build-dev/kernel_floor_avx2]

Workloads (Gaussian kernel, d = 1, x and queries uniform on [0, 1], h = 0.05):
* n = m = 2,000: attnreg ``NadarayaWatson(bandwidth=0.05).fit(x, y).predict(q)`` (all threads and
  one thread) against the numpy five-liner below;
* n = m = 20,000: the same attnreg call against numpy in blocks of queries (the five-liner would
  need a 3.2 GB weight matrix);
* the floor program at n = m = 20,000 (its own data: normal x, normal-reference h), which times
  the best plain loop against attnreg's all-pairs path in C++.
Every timing: best of 5 (attnreg, numpy at 2,000) or of 3 by wall; CPU seconds of the process
(all threads) alongside. The load (``uptime``) is printed before and after.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import time

import numpy as np

import attnreg


def numpy_nw(x, y, q, h):
    """The five-liner."""
    W = np.exp(-0.5 * ((q[:, None] - x[None, :]) / h) ** 2)
    return (W @ y) / W.sum(axis=1)


def numpy_nw_blocked(x, y, q, h, block=1000):
    out = np.empty(len(q))
    for s in range(0, len(q), block):
        out[s:s + block] = numpy_nw(x, y, q[s:s + block], h)
    return out


def timed(fn, reps):
    best = None
    for _ in range(reps):
        w0, c0 = time.perf_counter(), time.process_time()
        r = fn()
        w, c = time.perf_counter() - w0, time.process_time() - c0
        if best is None or w < best[0]:
            best = (w, c, r)
    return best


def uptime():
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--floor", action="append", default=[],
                    help="path of a kernel_floor binary (repeatable)")
    ap.add_argument("--floor-n", type=int, default=20000)
    args = ap.parse_args()

    info = attnreg.build_info()
    print(f"# attnreg {info['version']}, SIMD target {info['simd']}, OpenMP threads "
          f"{info['max_threads']}, numpy {np.__version__}, {os.cpu_count()} CPUs")
    print(f"# load before: {uptime()}")
    h = 0.05
    header = f"{'n=m':>6}  {'method':<40} {'wall s':>8} {'cpu s':>8} {'numpy/attnreg wall':>19} {'cpu':>6}"
    print(header)
    print("-" * len(header))
    for n in (2000, 20000):
        rng = np.random.default_rng(n)
        x = rng.uniform(size=n)
        y = np.sin(6 * x) + 0.1 * rng.normal(size=n)
        q = rng.uniform(size=n)
        X, Q = x[:, None], q[:, None]
        reps = 5 if n <= 2000 else 3
        rows = []
        for threads in (0, 1):
            m = attnreg.NadarayaWatson(bandwidth=h, n_threads=threads).fit(X, y)
            m.predict(Q)  # warm up (thread pool, dispatch)
            label = "attnreg NadarayaWatson.predict" + (", 1 thread" if threads == 1 else "")
            rows.append((label,) + timed(lambda: m.predict(Q), reps))
        if n <= 2000:
            rows.append(("numpy five-liner",) + timed(lambda: numpy_nw(x, y, q, h), reps))
        else:
            rows.append(("numpy five-liner in blocks of 1000",) + timed(
                lambda: numpy_nw_blocked(x, y, q, h), 1))
        ref = rows[-1]
        for label, w, c, r in rows:
            diff = np.max(np.abs(r - ref[3]) / np.maximum(1.0, np.abs(ref[3])))
            ratio = "" if label.startswith("numpy") else f"{ref[1] / w:19.1f} {ref[2] / c:6.1f}"
            print(f"{n:6d}  {label:<40} {w:8.4f} {c:8.4f} {ratio}"
                  + ("" if label.startswith("numpy") else f"  max rel diff {diff:.1e}"))
    for path in args.floor:
        print(f"\n$ {os.path.basename(path)} {args.floor_n} 1 0 0")
        out = subprocess.run([path, str(args.floor_n), "1", "0", "0"], capture_output=True,
                             text=True, check=True).stdout
        print(out.rstrip())
    print(f"# load after: {uptime()}")


if __name__ == "__main__":
    main()
