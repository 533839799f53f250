"""attnreg.rd.rdrobust against rdrobust 2.1.1, side by side in one run (CPU seconds).

Sharp RD, default mserd bandwidth and nn variance, on simulated data at n = 1e4, 1e5, 1e6;
also rdbwselect(all=True). Run: PYTHONPATH=python-package/src python3 bench/bench_rd.py
[--skip-rdrobust-above N] [--best-of K] [--memory N]. --best-of K: the best of K attnreg runs at
the largest size. --memory N: only attnreg.rd.rdrobust at n = N, its peak resident memory
(VmHWM, reset just before the call through /proc/self/clear_refs) against the 16 N bytes of
y and x. Results go to bench/results/rd.md by hand (with the load, uptime).
"""
import argparse
import contextlib
import io
import os
import time
import warnings

import numpy as np

import attnreg.rd as rd


def cpu(f):
    t0, w0 = time.process_time(), time.perf_counter()
    out = f()
    return out, time.process_time() - t0, time.perf_counter() - w0


def _status(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return 0


def memory(n):
    g = np.random.default_rng(n)
    x = g.uniform(-1, 1, n)
    y = g.normal(0, 0.5, n)
    y += 1 + x - 0.5 * x * x + 0.5 * (x >= 0)
    base = _status("VmRSS")
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # reset the peak resident set size (VmHWM) to the current one
    _, t, _ = cpu(lambda: rd.rdrobust(y, x))
    peak = _status("VmHWM")
    data = 16 * n
    print(f"n = {n:.0e}: CPU {t:.2f} s; RSS before the call {base / 2**20:.0f} MiB, peak during "
          f"it {peak / 2**20:.0f} MiB; y and x {data / 2**20:.0f} MiB; peak - before = "
          f"{(peak - base) / data:.2f} x the data, peak = {peak / data:.2f} x")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10000,100000,1000000")
    ap.add_argument("--skip-rdrobust-above", type=int, default=10 ** 7)
    ap.add_argument("--best-of", type=int, default=0)
    ap.add_argument("--memory", type=int, default=0)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    if args.memory:
        print(f"load: {os.getloadavg()}")
        memory(args.memory)
        print(f"load: {os.getloadavg()}")
        return
    from rdrobust import rdbwselect, rdrobust
    print(f"load: {os.getloadavg()}")
    print("| n | attnreg rdrobust (CPU s) | rdrobust 2.1.1 (CPU s) | ratio | attnreg rdbwselect all"
          " (CPU s) | rdrobust rdbwselect all (CPU s) | max rel. diff (bws, coef, se) |")
    print("|---|---|---|---|---|---|---|")
    for n in map(int, args.sizes.split(",")):
        g = np.random.default_rng(n)
        x = g.uniform(-1, 1, n)
        y = 1 + x - 0.5 * x ** 2 + 0.5 * (x >= 0) + g.normal(0, 0.5, n)
        ours, t_ours, _ = cpu(lambda: rd.rdrobust(y, x))
        _, t_ours_all, _ = cpu(lambda: rd.rdbwselect(y, x, all=True))
        if n <= args.skip_rdrobust_above:
            with contextlib.redirect_stdout(io.StringIO()):
                theirs, t_theirs, _ = cpu(lambda: rdrobust(y, x))
                _, t_theirs_all, _ = cpu(lambda: rdbwselect(y, x, all=True))
            a = np.r_[list(ours.bandwidths.values()), ours.table.coef, ours.table.se]
            b = np.r_[theirs.bws.loc["h"], theirs.bws.loc["b"], theirs.coef.to_numpy().ravel(),
                      theirs.se.to_numpy().ravel()]
            diff = f"{np.max(np.abs(a - b) / np.abs(b)):.1e}"
            print(f"| {n:.0e} | {t_ours:.3f} | {t_theirs:.2f} | {t_theirs / t_ours:.0f}x | "
                  f"{t_ours_all:.3f} | {t_theirs_all:.2f} | {diff} |", flush=True)
        else:
            print(f"| {n:.0e} | {t_ours:.3f} | - | - | {t_ours_all:.3f} | - | - |", flush=True)
    if args.best_of:
        best = {}
        for name, f in (("rdrobust", lambda: rd.rdrobust(y, x)),
                        ("rdbwselect all", lambda: rd.rdbwselect(y, x, all=True))):
            best[name] = min(cpu(f)[1] for _ in range(args.best_of))
        print(f"best of {args.best_of} at n = {n:.0e}: " +
              ", ".join(f"{k} {v:.3f} s" for k, v in best.items()))
    print(f"load: {os.getloadavg()}")


if __name__ == "__main__":
    main()
