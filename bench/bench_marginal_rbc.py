"""RBC marginal effects: CPU seconds at every training row (n = 3,000, d = 2), old vs new.

    python3 bench/bench_marginal_rbc.py [--old PYTHONPATH] [--out bench/results/rbc.md]

Each case runs in a fresh subprocess (PYTHONPATH = this checkout's python-package/src, or
--old: a build of an earlier commit) and reports the CPU seconds of the call (process_time:
all threads of the process) and its wall time. Data: x ~ U[0, 1]^2, y = sin(3 x1) + x2^2 +
N(0, 0.3^2), local linear at h = (0.15, 0.15), HC3, pilot local cubic (the default).
"Default threads" leaves OpenMP at its default (one thread per core); the others set
OMP_NUM_THREADS=1.
"""
import argparse
import json
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
NEW = os.path.join(here, "..", "python-package", "src")

CASE = r'''
import json, sys, time
import numpy as np, attnreg
n, kernel, kind = int(sys.argv[1]), sys.argv[2], sys.argv[3]
rng = np.random.default_rng(0)
X = rng.uniform(size=(n, 2))
y = np.sin(3 * X[:, 0]) + X[:, 1] ** 2 + rng.normal(0, 0.3, n)
m = attnreg.LocalLinear(bandwidth=[0.15, 0.15], kernel=kernel).fit(X, y)
attnreg.marginal_effects(m, X[:5], kind="pointwise", interval="rbc")  # warm-up
t, w = time.process_time(), time.perf_counter()
r = attnreg.marginal_effects(m, kind=kind, interval="rbc")
print(json.dumps({"cpu": time.process_time() - t, "wall": time.perf_counter() - w,
                  "first": float(r["estimate_bc"].iloc[0])}))
'''


def run(path, n, kernel, kind, one_thread):
    env = dict(os.environ, PYTHONPATH=path)
    env.pop("OMP_NUM_THREADS", None)
    env.pop("OMP_WAIT_POLICY", None)
    if one_thread:
        env["OMP_NUM_THREADS"] = "1"
    out = subprocess.run([sys.executable, "-c", CASE, str(n), kernel, kind], env=env,
                         capture_output=True, text=True)
    if out.returncode != 0:
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--old", default=None)
    ap.add_argument("--out", default=None)
    ap.add_argument("--n", type=int, default=3000)
    a = ap.parse_args()
    up = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    lines = [f"n = {a.n}, d = 2, at every training row; load before: `{up}`", "",
             "| case | threads | old CPU s (wall) | new CPU s (wall) |", "|---|---|---|---|"]
    for kernel in ("gaussian", "epanechnikov"):
        for kind in ("pointwise", "average"):
            for one in (False, True):
                res = []
                for path in (a.old, NEW):
                    r = run(path, a.n, kernel, kind, one) if path else None
                    res.append("refused (not in this version)" if path and r is None else
                               "-" if r is None else f"{r['cpu']:.2f} ({r['wall']:.2f})")
                lines.append(f"| {kernel}, {kind} | {'1' if one else 'default'} | "
                             f"{res[0]} | {res[1]} |")
                print(lines[-1], flush=True)
    up = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    lines += ["", f"load after: `{up}`"]
    text = "\n".join(lines)
    print(text)
    if a.out:
        with open(a.out, "a") as f:
            f.write("\n" + text + "\n")


if __name__ == "__main__":
    main()
