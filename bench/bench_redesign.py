"""Does the core's restructuring (one weights -> moments -> solve pipeline) cost speed? One
workload per stage and family, each run in a fresh subprocess against two builds side by side
(best CPU and wall of --repeat runs inside the child), the load (`uptime`) recorded before each.

    python3 bench/bench_redesign.py --src before=/path/to/old/src --src after=python-package/src \
        [--repeat 3] [--out bench/results/redesign.md]
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import time

WORKLOADS = {
    "NW predict, n = m = 2,000, d = 1, Gaussian": """
rng = np.random.default_rng(0); x = rng.uniform(size=(2000, 1)); yy = np.sin(6 * x[:, 0])
m = attnreg.NadarayaWatson(bandwidth=0.05).fit(x, yy)
q = rng.uniform(size=(2000, 1))
def run(): m.predict(q)
""",
    "LL Gaussian cv_ls search, n = 5,000": """
rng = np.random.default_rng(2); x = rng.uniform(size=5000)
yy = np.sin(2 * np.pi * x) + 0.3 * rng.normal(size=5000)
def run(): attnreg.select_bandwidth(x[:, None], yy)
""",
    "LL Epanechnikov fit + predict (fast sums), n = 200,000": """
rng = np.random.default_rng(3); x = rng.uniform(size=(200000, 1))
yy = np.sin(6 * x[:, 0]) + 0.3 * rng.normal(size=200000); q = np.linspace(0, 1, 1000)[:, None]
def run(): attnreg.LocalLinear(kernel="epanechnikov", bandwidth=0.02).fit(x, yy).predict(q)
""",
    "LL 2-D Gaussian fit + leverages, n = 3,000": """
rng = np.random.default_rng(4); X = rng.uniform(size=(3000, 2))
yy = np.sin(4 * X[:, 0]) * X[:, 1] + 0.2 * rng.normal(size=3000)
def run():
    m = attnreg.LocalLinear(bandwidth=[0.1, 0.15]).fit(X, yy); m.leverage_
""",
    "mixed-data LL cv_ls, wage1 (5 regressors)": """
w = pd.read_csv(os.path.join(DATA, "wage1.csv"))
X = pd.DataFrame({"female": pd.Categorical(w["female"]), "married": pd.Categorical(w["married"]),
                  "educ": w["educ"].astype(float), "exper": w["exper"].astype(float),
                  "tenure": w["tenure"].astype(float)})
yy = w["lwage"].to_numpy()
def run(): attnreg.select_bandwidth(X, yy, "ll", "cv_ls")
""",
    "binned LL Gaussian fit, n = 10^6, 401 points": """
rng = np.random.default_rng(5); x = rng.uniform(size=(1000000, 1))
yy = np.sin(6 * x[:, 0]) + 0.3 * rng.normal(size=1000000); q = np.linspace(0, 1, 401)[:, None]
def run(): attnreg.LocalLinear(bandwidth=0.02, approx="binned").fit(x, yy).predict(q)
""",
    "KernelDensity cv_ml, n = 2,000, 2 columns": """
rng = np.random.default_rng(6); X = rng.normal(size=(2000, 2))
def run(): attnreg.KernelDensity().fit(X)
""",
    "OLS HC3, n = 200,000, p = 20": """
rng = np.random.default_rng(7); X = rng.normal(size=(200000, 20))
yy = X @ rng.normal(size=20) + rng.normal(size=200000)
def run(): attnreg.OLS(cov_type="HC3").fit(X, yy).standard_errors()
""",
    "LLA blockwise attention, 1 x 4 x 1,024 x 64 (float64)": """
from attnreg import attention
rng = np.random.default_rng(8); Q, K, V = (rng.normal(size=(1, 4, 1024, 64)) for _ in range(3))
def run(): attention.lla(Q, K, V, ridge=0.1)
""",
    "softmax attention, 1 x 4 x 2,048 x 64 (float64)": """
from attnreg import attention
rng = np.random.default_rng(9); Q, K, V = (rng.normal(size=(1, 4, 2048, 64)) for _ in range(3))
def run(): attention.softmax(Q, K, V)
""",
}

CHILD = """
import json, os, sys, time
import numpy as np, pandas as pd
import attnreg
DATA = %(data)r
%(body)s
run()  # warm-up (first-call costs: thread pool, page faults)
best_c = best_w = float("inf")
for _ in range(%(repeat)d):
    t0, c0 = time.perf_counter(), time.process_time()
    run()
    best_w = min(best_w, time.perf_counter() - t0); best_c = min(best_c, time.process_time() - c0)
print(json.dumps({"wall": best_w, "cpu": best_c}))
"""


def uptime():
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", action="append", required=True, help="label=path to python src")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--out", default=None)
    ap.add_argument("--only", default=None, help="comma-separated substrings of workload names")
    a = ap.parse_args()
    data = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data")
    builds = [s.split("=", 1) for s in a.src]
    rows = []
    for name, body in WORKLOADS.items():
        if a.only and not any(o in name for o in a.only.split(",")):
            continue
        res_by = {}
        for label, src in builds:
            load = uptime().split("load average:")[-1].strip()
            env = dict(os.environ, PYTHONPATH=os.path.abspath(src))
            code = CHILD % {"data": data, "body": body, "repeat": a.repeat}
            try:
                p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                                   text=True, timeout=a.timeout)
                res = (json.loads(p.stdout.strip().splitlines()[-1]) if p.returncode == 0
                       else {"error": (p.stderr.strip().splitlines() or ["?"])[-1]})
            except subprocess.TimeoutExpired:
                res = {"error": f"timeout {a.timeout:.0f} s"}
            res_by[label] = res
            rows.append((name, label, res, load))
            print(name, label, res, load, flush=True)
    lines = [f"| workload | build | CPU s | wall s | CPU / first build's | load (1, 5, 15 min) |",
             "|---|---|---|---|---|---|"]
    first = {}
    for name, label, res, load in rows:
        if "error" in res:
            lines.append(f"| {name} | {label} | {res['error']} | | | {load} |")
            continue
        first.setdefault(name, res["cpu"])
        lines.append(f"| {name} | {label} | {res['cpu']:.3f} | {res['wall']:.3f} | "
                     f"{res['cpu'] / first[name]:.2f} | {load} |")
    table = "\n".join(lines)
    print(table)
    if a.out:
        with open(a.out, "a") as f:
            f.write(f"\n### {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
                    f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
                    f"best of {a.repeat}\n\n{table}\n")


if __name__ == "__main__":
    main()
