#!/usr/bin/env python3
"""Attention engine benchmark: memory and time of the three LLA algorithms, and softmax
attention against numpy and against this machine's GEMM floor. One run, one table.

    python bench/bench_attention.py              # full run (minutes: seq up to 64k)
    python bench/bench_attention.py --quick      # seq up to 4k, for a smoke test
    python bench/bench_attention.py --out DIR    # also write DIR/attention_bench.{md,csv}

Needs the attnreg Python package (pip install . from the repository root) and numpy.

Method. Every measurement runs in a fresh child process (this script with --child) so that
peak memory is its own: the child allocates Q, K, V, records its peak resident set size
(ru_maxrss), runs the call once and records the peak again; the difference is the working
memory of the call (its output included). Timings are wall-clock, the best of `--repeat`
runs for calls under a second. attnreg children run with OPENBLAS_NUM_THREADS=1 (attnreg
parallelises over query blocks itself; nested BLAS threads would oversubscribe) and
n_threads = --threads; numpy children run with OPENBLAS_NUM_THREADS = --threads.

* Memory: LLA causal, d = 64, batch = heads = 1, float64, ridge 1. Blockwise memory does not
  depend on the number of CG iterations (its buffers are sized once per query block), so the
  memory runs cap CG at 2 sweeps to keep the 64k run to minutes; the time table runs CG to
  its tolerance. Naive materialises the n x n weights (8 n^2 bytes) and runs only while that
  fits in --naive-max-gib.
* Time: LLA causal, d = 64, ridge 0.1, default CG tolerance (1e-12 in float64, 1e-6 in
  float32); the CG iterations used are reported.
* Softmax: non-causal (numpy cannot skip masked blocks), d = 64. The floor is the FLOPs of
  QK' and PV, 4 n^2 d, divided by the GEMM rate numpy reaches on a 2048^3 product with the
  same number of threads.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import resource
import subprocess
import sys
import time

HERE = os.path.abspath(__file__)


# ----------------------------------------------------------------------------- child side


def child(spec: dict) -> dict:
    import numpy as np

    n, d, dtype = spec["n"], spec["d"], np.dtype(spec.get("dtype", "float64"))
    rng = np.random.default_rng(0)
    res = {}
    if spec["kind"] == "gemm":
        a = rng.standard_normal((n, n)).astype(dtype)
        b = rng.standard_normal((n, n)).astype(dtype)
        a @ b
        best = float("inf")
        for _ in range(3):
            t0 = time.perf_counter()
            a @ b
            best = min(best, time.perf_counter() - t0)
        return {"seconds": best, "gflops": 2 * n**3 / best / 1e9}
    Q = rng.standard_normal((n, d)).astype(dtype)
    K = rng.standard_normal((n, d)).astype(dtype)
    V = rng.standard_normal((n, d)).astype(dtype)
    if spec["kind"] == "numpy_softmax":
        scale = 1 / np.sqrt(d)

        def run():
            S = Q @ K.T
            S *= dtype.type(scale)
            S -= S.max(axis=1, keepdims=True)
            np.exp(S, out=S)
            S /= S.sum(axis=1, keepdims=True)
            return S @ V
    else:
        from attnreg import attention as A

        threads = spec["threads"]
        if spec["kind"] == "softmax":
            def run():
                return A.softmax(Q, K, V, n_threads=threads)
        else:
            kw = dict(ridge=spec["ridge"], causal=True, method=spec["algorithm"],
                      n_threads=threads, return_info=True)
            if spec.get("cg_max_iter"):
                kw["cg_max_iter"] = spec["cg_max_iter"]

            def run():
                import warnings

                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # capped CG in the memory runs
                    out, info = A.lla(Q, K, V, **kw)
                res["cg_max_iterations"] = info["cg_max_iterations"]
                return out
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    run()
    first = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    best = first
    for _ in range(spec.get("repeat", 1) - 1):
        if best > 1.0:
            break
        t0 = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - t0)
    res.update(seconds=best, peak_mib=(after - before) / 1024.0, inputs_mib=3 * Q.nbytes / 2**20)
    return res


def run_child(spec: dict, threads: int, numpy_threads: bool = False) -> dict:
    env = dict(os.environ)
    env["OPENBLAS_NUM_THREADS"] = str(threads if numpy_threads else 1)
    env["OMP_NUM_THREADS"] = str(threads)
    p = subprocess.run([sys.executable, HERE, "--child", json.dumps(spec)], env=env,
                       capture_output=True, text=True)
    if p.returncode != 0:
        return {"error": (p.stderr.strip().splitlines() or ["failed"])[-1]}
    return json.loads(p.stdout.strip().splitlines()[-1])


# ----------------------------------------------------------------------------- parent side


def fmt(x, nd=2):
    if x is None:
        return "-"
    if isinstance(x, str):
        return x
    return f"{x:.{nd}f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small sizes only (smoke test)")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--naive-max-gib", type=float, default=2.0,
                    help="largest n x n float64 weight matrix the naive algorithm may hold")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default=None, help="directory for attention_bench.md / .csv")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(json.loads(args.child))))
        return

    import numpy as np
    import attnreg

    T = args.threads
    d = 64
    mem_seq = [1024, 2048, 4096] if args.quick else [1024, 2048, 4096, 8192, 16384, 32768, 65536]
    time_seq = [1024, 2048] if args.quick else [1024, 2048, 4096, 8192]
    sm_seq = [1024, 2048] if args.quick else [1024, 2048, 4096, 8192]
    info = attnreg.build_info()
    lines = [
        "# attnreg attention benchmark",
        "",
        f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} logical CPUs, "
        f"load average {os.getloadavg()[0]:.1f} at start; threads used: {T}; "
        f"attnreg {info['version']} (OpenMP {info['openmp']}, BLAS {info['blas']}); "
        f"numpy {np.__version__}.",
        "",
    ]
    rows = []

    # GEMM rate (the floor's denominator)
    g64 = run_child({"kind": "gemm", "n": 2048, "d": 0, "dtype": "float64"}, T, numpy_threads=True)
    g32 = run_child({"kind": "gemm", "n": 2048, "d": 0, "dtype": "float32"}, T, numpy_threads=True)
    lines += [f"Measured GEMM rate (numpy, 2048^3, {T} threads): float64 {g64['gflops']:.1f} "
              f"GFLOP/s, float32 {g32['gflops']:.1f} GFLOP/s.", ""]

    # 1. memory
    lines += ["## LLA working memory (causal, d = 64, float64; MiB above the inputs)", "",
              "| seq | naive | direct | blockwise | size of the n x n weights | blockwise / (8 n d bytes) |",
              "|---:|---:|---:|---:|---:|---:|"]
    for n in mem_seq:
        cells = {}
        for alg in ("naive", "direct", "blockwise"):
            if alg == "naive" and 8 * n * n / 2**30 > args.naive_max_gib:
                cells[alg] = "skipped (n x n > %.0f GiB)" % args.naive_max_gib
                continue
            if alg == "direct" and n > (8192 if not args.quick else 4096):
                cells[alg] = "skipped (time)"
                continue
            r = run_child({"kind": "lla", "algorithm": alg, "n": n, "d": d, "ridge": 1.0,
                           "threads": T, "cg_max_iter": 2}, T)
            cells[alg] = r.get("error") or r["peak_mib"]
            rows.append({"section": "memory", "method": f"lla/{alg}", "dtype": "float64", "seq": n,
                         "seconds": r.get("seconds"), "peak_mib": r.get("peak_mib")})
        bw = cells["blockwise"]
        per = bw * 2**20 / (n * d * 8) if isinstance(bw, float) else None
        lines.append(f"| {n} | {fmt(cells['naive'], 1)} | {fmt(cells['direct'], 1)} | "
                     f"{fmt(bw, 1)} | {8 * n * n / 2**20:.0f} | {fmt(per, 2)} |")
    lines += ["", "Blockwise: per-thread block buffers plus the output (n d doubles); naive: the "
              "n x n weights plus per-thread n x d centred keys. CG capped at 2 sweeps in these "
              "runs (memory does not depend on it).", ""]

    # 2. time
    lines += ["## LLA time (causal, d = 64, ridge 0.1, CG to tolerance; seconds)", "",
              "| seq | naive f64 | direct f64 | blockwise f64 (CG its) | blockwise f32 (CG its) |",
              "|---:|---:|---:|---:|---:|"]
    for n in time_seq:
        cells = {}
        for alg, dt in (("naive", "float64"), ("direct", "float64"), ("blockwise", "float64"),
                        ("blockwise", "float32")):
            if alg == "naive" and n > 4096:
                cells[(alg, dt)] = "skipped"
                continue
            r = run_child({"kind": "lla", "algorithm": alg, "n": n, "d": d, "ridge": 0.1,
                           "threads": T, "dtype": dt, "repeat": args.repeat}, T)
            if "error" in r:
                cells[(alg, dt)] = r["error"]
                continue
            s = fmt(r["seconds"], 3)
            if alg == "blockwise":
                s += f" ({r['cg_max_iterations']})"
            cells[(alg, dt)] = s
            rows.append({"section": "time", "method": f"lla/{alg}", "dtype": dt, "seq": n,
                         "seconds": r["seconds"], "cg_max_iterations": r.get("cg_max_iterations")})
        lines.append(f"| {n} | {cells[('naive', 'float64')]} | {cells[('direct', 'float64')]} | "
                     f"{cells[('blockwise', 'float64')]} | {cells[('blockwise', 'float32')]} |")
    lines.append("")

    # 3. softmax
    lines += ["## Softmax attention (non-causal, d = 64; seconds, and time / floor)", "",
              "| seq | dtype | attnreg | numpy | floor | attnreg / floor | numpy / floor |",
              "|---:|---|---:|---:|---:|---:|---:|"]
    for n in sm_seq:
        for dt, g in (("float64", g64), ("float32", g32)):
            a = run_child({"kind": "softmax", "n": n, "d": d, "dtype": dt, "threads": T,
                           "repeat": args.repeat}, T)
            b = run_child({"kind": "numpy_softmax", "n": n, "d": d, "dtype": dt,
                           "repeat": args.repeat}, T, numpy_threads=True)
            floor = 4 * n * n * d / (g["gflops"] * 1e9)
            lines.append(f"| {n} | {dt} | {fmt(a.get('seconds'), 4)} | {fmt(b.get('seconds'), 4)} | "
                         f"{floor:.4f} | {fmt(a['seconds'] / floor, 1)} | {fmt(b['seconds'] / floor, 1)} |")
            rows.append({"section": "softmax", "method": "attnreg", "dtype": dt, "seq": n,
                         "seconds": a.get("seconds"), "peak_mib": a.get("peak_mib"), "floor": floor})
            rows.append({"section": "softmax", "method": "numpy", "dtype": dt, "seq": n,
                         "seconds": b.get("seconds"), "peak_mib": b.get("peak_mib"), "floor": floor})
    lines += ["", f"Load average at the end: {os.getloadavg()[0]:.1f}.", ""]

    text = "\n".join(lines)
    print(text)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "attention_bench.md"), "w") as f:
            f.write(text)
        keys = sorted({k for r in rows for k in r})
        with open(os.path.join(args.out, "attention_bench.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=keys)
            w.writeheader()
            w.writerows(rows)


if __name__ == "__main__":
    main()
