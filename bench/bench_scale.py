"""Speed at scale: the README-tour workloads on CPS1988 (28,155 rows), each run in a fresh
subprocess against one or two builds of attnreg side by side (e.g. before/after a change), with
CPU time (time.process_time, all threads) and wall time measured inside the child and the load
(`uptime`) recorded before each run.

    python3 bench/bench_scale.py --src after=python-package/src [--src before=/path/src] \
        [--timeout 300] [--out bench/results/scale.md]
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import time

WORKLOADS = {
    "mixed LL cv_ls + fit (experience, education, ethnicity)": """
import pandas as pd
X = df[["experience", "education"]].to_numpy(float)
X = np.column_stack([X, (df["ethnicity"] == "afam").to_numpy(float)])
m = attnreg.LocalLinear(bandwidth="cv_ls", var_types="ccu").fit(X, y)
_ = m.predict(X[:10])
""",
    "1-D LL fit + leverages + LOO (experience)": """
x = df[["experience"]].to_numpy(float)
m = attnreg.LocalLinear(bandwidth=3.0).fit(x, y)
lev = m.leverage_; loo = m.loo_predictions()
""",
    "diagnostics.summary(1-D LL)": """
x = df[["experience"]].to_numpy(float)
m = attnreg.LocalLinear(bandwidth=3.0).fit(x, y)
s = diagnostics.summary(m)
""",
    "diagnostics.tradeoff(experience, y, [1, 2, 4])": """
x = df["experience"].to_numpy(float)
t = diagnostics.tradeoff(x, y, [1.0, 2.0, 4.0])
""",
    "diagnose(3-regressor LL fit) at the training rows": """
X = df[["experience", "education"]].to_numpy(float)
X = np.column_stack([X, (df["ethnicity"] == "afam").to_numpy(float)])
m = attnreg.LocalLinear(bandwidth=[4.0, 1.5, 0.1], var_types="ccu").fit(X, y)
d = diagnostics.diagnose(m, X)
""",
    "AttentionRegression(rank=2) fit, n = 2,000 (experience, education, afam)": """
X = df[["experience", "education"]].to_numpy(float)
X = np.column_stack([X, (df["ethnicity"] == "afam").to_numpy(float)])[:2000]
m = attnreg.AttentionRegression(rank=2).fit(X, y[:2000])
""",
    "select_bandwidth 1-D LL Gaussian cv_ls, n = 5,000 continuous x (default search)": """
rng = np.random.default_rng(2); x = rng.uniform(size=5000)
yy = np.sin(2 * np.pi * x) + 0.3 * rng.normal(size=5000)
r = attnreg.select_bandwidth(x[:, None], yy)
""",
    "select_bandwidth 1-D LL Gaussian cv_ls, n = 10,000 continuous x (default search)": """
rng = np.random.default_rng(2); x = rng.uniform(size=10000)
yy = np.sin(2 * np.pi * x) + 0.3 * rng.normal(size=10000)
r = attnreg.select_bandwidth(x[:, None], yy)
""",
}

CHILD = """
import json, sys, time
import numpy as np, pandas as pd
import attnreg
from attnreg import diagnostics
df = pd.read_csv(%(csv)r)
y = np.log(df["wage"].to_numpy(float))
t0, c0 = time.perf_counter(), time.process_time()
%(body)s
print(json.dumps({"wall": time.perf_counter() - t0, "cpu": time.process_time() - c0}))
"""


def uptime():
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", action="append", required=True, help="label=path to python src")
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--out", default=None)
    ap.add_argument("--only", default=None, help="comma-separated substrings of the workloads to run")
    a = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    csv = os.path.join(here, "..", "data", "cps1988.csv")
    builds = [s.split("=", 1) for s in a.src]
    rows = []
    for name, body in WORKLOADS.items():
        if a.only and not any(o in name for o in a.only.split(",")):
            continue
        for label, src in builds:
            load = uptime()
            env = dict(os.environ, PYTHONPATH=os.path.abspath(src))
            code = CHILD % {"csv": csv, "body": body}
            try:
                p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                                   text=True, timeout=a.timeout)
                if p.returncode != 0:
                    res = {"error": p.stderr.strip().splitlines()[-1]}
                else:
                    res = json.loads(p.stdout.strip().splitlines()[-1])
            except subprocess.TimeoutExpired:
                res = {"timeout": a.timeout}
            rows.append((name, label, res, load.split("load average:")[-1].strip()))
            print(name, label, res, load, flush=True)
    lines = ["| workload | build | CPU s | wall s | load (1, 5, 15 min) |", "|---|---|---|---|---|"]
    for name, label, res, load in rows:
        if "timeout" in res:
            cpu = wall = f"> {res['timeout']:.0f} (killed)"
        elif "error" in res:
            cpu = wall = "error: " + res["error"]
        else:
            cpu, wall = f"{res['cpu']:.3f}", f"{res['wall']:.3f}"
        lines.append(f"| {name} | {label} | {cpu} | {wall} | {load} |")
    table = "\n".join(lines)
    print(table)
    if a.out:
        with open(a.out, "a") as f:
            f.write(f"\n### {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
                    f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs\n\n")
            f.write(table + "\n")


if __name__ == "__main__":
    main()
