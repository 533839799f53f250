"""Every speed-at-scale target in one run: each workload in a fresh child process (Python or R)
against the installed attnreg, with CPU seconds (time.process_time / R's user + system, all
threads), wall seconds, the load (`uptime`) before the child starts, and the target beside the
measurement. Peers (KernSmooth::locpoly, the vectorised numpy Nadaraya-Watson) run in the same
run, next to the attnreg row they are compared with.

    python3 bench/bench_targets.py [--out bench/results/targets.md] [--only SUBSTR,...]

CPS1988 (data/cps1988.csv, 28,155 rows; y = log(wage)); simulated data: x ~ U(0, 1),
y = sin(2 pi x) + 0.3 N(0, 1), seed 2026.
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

import bench_binned  # noqa: E402 (beside this file)

HERE = os.path.dirname(os.path.abspath(__file__))
CSV = os.path.join(HERE, "..", "data", "cps1988.csv")

PY_PRE = """
import json, time, numpy as np, pandas as pd
import attnreg
from attnreg import diagnostics
df = pd.read_csv({csv!r}); Y = np.log(df["wage"].to_numpy(float))
def sim(n):
    rng = np.random.default_rng(2026)
    x = rng.uniform(size=n)
    return x, np.sin(2 * np.pi * x) + 0.3 * rng.normal(size=n)
{setup}
c0 = time.process_time(); w0 = time.perf_counter()
{body}
print(json.dumps(dict(cpu=time.process_time() - c0, wall=time.perf_counter() - w0, res=res)))
"""

# name: (setup (untimed), body (timed; sets res), target text)
PY = {
    "mixed-data LL cv_ls + fit, CPS1988 28,155 x 3 (main job)": ("""
X = df[["experience", "education"]].to_numpy(float)
X = np.column_stack([X, (df["ethnicity"] == "afam").to_numpy(float)])
""", """
m = attnreg.LocalLinear(bandwidth="cv_ls", var_types="ccu").fit(X, Y)
_ = m.predict(X[:10])
res = "h = " + ", ".join("%.5g" % b for b in m.bandwidth_)
""", "< 2 s"),
    "1-D LL fit + leverages + LOO, 28,155 rows (h = 3)": ("""
x = df[["experience"]].to_numpy(float)
""", """
m = attnreg.LocalLinear(bandwidth=3.0).fit(x, Y)
lev = m.leverage_; loo = m.loo_predictions()
res = "tr L = %.6f" % lev.sum()
""", "< 0.1 s"),
    "1-D LL Gaussian exact cv_ls, n = 5,000": ("""
x, y = sim(5000)
""", """
r = attnreg.select_bandwidth(x[:, None], y)
res = "h = %.8g, CV = %.12g, %d evaluations" % (r.bandwidth[0], r.objective, r.n_evals)
""", "< 0.2 s"),
    "1-D LL Gaussian exact cv_ls, n = 10,000": ("""
x, y = sim(10000)
""", """
r = attnreg.select_bandwidth(x[:, None], y)
res = "h = %.8g, CV = %.12g, %d evaluations" % (r.bandwidth[0], r.objective, r.n_evals)
""", "< 0.6 s"),
    "n = 10^6 1-D Epanechnikov LL exact: fit + predict at 1,000 points": ("""
x, y = sim(10**6); q = np.linspace(0, 1, 1000)[:, None]
""", """
m = attnreg.LocalLinear(kernel="epanechnikov", bandwidth=0.02).fit(x[:, None], y)
p = m.predict(q)
res = "m(0.5) = %.10f" % p[500]
""", "< 1 s"),
    "n = 10^6 1-D Epanechnikov LL exact: cv_ls search": ("""
x, y = sim(10**6)
""", """
r = attnreg.select_bandwidth(x[:, None], y, "ll", "cv_ls", kernel="epanechnikov")
res = dict(h=float(r.bandwidth[0]), cv=r.objective, evals=r.n_evals)
""", "< 5 s"),
    "n = 10^6 1-D Epanechnikov LL binned cv_ls search": ("""
x, y = sim(10**6)
""", """
r = attnreg.select_bandwidth(x[:, None], y, "ll", "cv_ls", kernel="epanechnikov", approx="binned")
res = dict(h=float(r.bandwidth[0]), cv=r.objective, evals=r.n_evals)
""", "< 1 s, h within 1e-3 of the exact optimum"),
    "n = 10^6 1-D Gaussian LL binned cv_ls search": ("""
x, y = sim(10**6)
""", """
r = attnreg.select_bandwidth(x[:, None], y, "ll", "cv_ls", approx="binned")
res = "h = %.8g, CV = %.12g, %d evaluations" % (r.bandwidth[0], r.objective, r.n_evals)
""", "< 1 s"),
    "n = 20,000 1-D Gaussian LL binned cv_ls search": ("""
x, y = sim(20000)
""", """
r = attnreg.select_bandwidth(x[:, None], y, "ll", "cv_ls", approx="binned")
res = dict(h=float(r.bandwidth[0]), cv=r.objective, evals=r.n_evals)
""", "h within 1e-3 of the exact optimum"),
    "n = 20,000 1-D Gaussian LL exact cv_ls search": ("""
x, y = sim(20000)
""", """
r = attnreg.select_bandwidth(x[:, None], y, "ll", "cv_ls")
res = dict(h=float(r.bandwidth[0]), cv=r.objective, evals=r.n_evals)
""", "(reference for the row above)"),
    "n = 10^6 1-D Gaussian LL binned fit, 401-point grid (+ predict at the nodes), best of 5": ("""
x, y = sim(10**6); X = x[:, None]; grid = np.linspace(x.min(), x.max(), 401)[:, None]
""", """
best = (1e9, 1e9)
for _ in range(5):
    c1, w1 = time.process_time(), time.perf_counter()
    m = attnreg.LocalLinear(bandwidth=0.02, approx="binned", grid_size=401).fit(X, y)
    fit = m.predict(grid)
    best = min(best, (time.process_time() - c1, time.perf_counter() - w1))
np.save(OUT + "/fit.npy", fit)
res = dict(best_cpu=best[0], best_wall=best[1], mid=float(fit[200]))
""", "<= 2x KernSmooth::locpoly"),
    "NW predict n = m = 2,000, d = 1 (Gaussian, h = 0.05), median of 21": ("""
x, y = sim(2000); q = np.linspace(0, 1, 2000)
def numpy_nw(x, y, q, h):
    u = (q[:, None] - x[None, :]) / h
    w = np.exp(-0.5 * u * u)
    return (w @ y) / w.sum(axis=1)
m = attnreg.NadarayaWatson(bandwidth=0.05).fit(x[:, None], y)
""", """
import statistics
a, b = [], []
for _ in range(21):
    c1, w1 = time.process_time(), time.perf_counter(); p1 = m.predict(q[:, None])
    a.append((time.process_time() - c1, time.perf_counter() - w1))
    c1, w1 = time.process_time(), time.perf_counter(); p2 = numpy_nw(x, y, q, 0.05)
    b.append((time.process_time() - c1, time.perf_counter() - w1))
assert np.allclose(p1, p2, rtol=1e-12, atol=1e-12)
med = lambda v, i: statistics.median(t[i] for t in v)
res = dict(cpu_attnreg=med(a, 0), wall_attnreg=med(a, 1), cpu_numpy=med(b, 0), wall_numpy=med(b, 1))
""", ">= 3x the numpy 5-liner"),
    "diagnostics.tradeoff(experience, y, [1, 2, 4]), CPS1988": ("""
x = df["experience"].to_numpy(float)
""", """
t = diagnostics.tradeoff(x, Y, [1.0, 2.0, 4.0])
res = ""
""", "< 2 s"),
    "diagnostics.summary(1-D LL), CPS1988": ("""
x = df[["experience"]].to_numpy(float)
""", """
m = attnreg.LocalLinear(bandwidth=3.0).fit(x, Y)
s = diagnostics.summary(m)
res = ""
""", "< 2 s"),
    "AttentionRegression(rank=2) fit, n = 2,000 (experience, education, afam)": ("""
X = df[["experience", "education"]].to_numpy(float)
X = np.column_stack([X, (df["ethnicity"] == "afam").to_numpy(float)])[:2000]
""", """
m = attnreg.AttentionRegression(rank=2).fit(X, Y[:2000])
res = ""
""", "< 5 s"),
    "n = 10^7 1-D Gaussian LL binned fit + predict at 1,000 points": ("""
x, y = sim(10**7); X = x[:, None]
""", """
m = attnreg.LocalLinear(bandwidth=0.01, approx="binned").fit(X, y)
p = m.predict(np.linspace(0, 1, 1000)[:, None])
res = "m(0.5) = %.8f" % p[500]
""", "peak memory < 2 GB"),
}

R_LOCPOLY = """
suppressMessages(library(KernSmooth))
set.seed(1)
x <- readBin('{out}/x.bin', 'double', 1e6); y <- readBin('{out}/y.bin', 'double', 1e6)
best <- c(Inf, Inf)
for (r in 1:5) {{
  t <- system.time(f <- locpoly(x, y, degree = 1, bandwidth = 0.02, gridsize = 401))
  best <- pmin(best, c(t[["user.self"]] + t[["sys.self"]], t[["elapsed"]]))
}}
writeBin(f$y, '{out}/ks.bin')
cat(sprintf('{{"cpu": %.6f, "wall": %.6f, "res": ""}}\\n', best[1], best[2]))
"""

R_DIAGNOSE = """
suppressMessages(library(attnreg))
cps <- read.csv('{csv}')
cps$ethnicity <- factor(cps$ethnicity)
t <- system.time({{
  fk <- kreg(log(wage) ~ experience + education + ethnicity, data = cps, method = "ll",
             bw = c(4, 1.5, 0.1))
  d <- diagnose(fk)
}})
cat(sprintf('{{"cpu": %.6f, "wall": %.6f, "res": "%d rows"}}\\n',
            t[["user.self"]] + t[["sys.self"]], t[["elapsed"]], nrow(d)))
"""


def uptime():
    out = subprocess.run(["uptime"], capture_output=True, text=True).stdout
    return out.split("load average:")[-1].strip()


def run(cmd, timeout, peak=False):
    """bench_binned.run (JSON from the child's last line, peak RSS by /usr/bin/time -v), with
    a failure kept as a row instead of ending the run."""
    try:
        return bench_binned.run(cmd, timeout=timeout, peak=peak)
    except (RuntimeError, subprocess.TimeoutExpired) as e:
        return {"error": (str(e).strip().splitlines() or ["?"])[-1]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=None)
    ap.add_argument("--only", default=None)
    ap.add_argument("--timeout", type=float, default=900)
    a = ap.parse_args()
    rows = []
    tmp = tempfile.mkdtemp()
    import numpy as np
    rng = np.random.default_rng(2026)
    x = rng.uniform(size=10**6)
    y = np.sin(2 * np.pi * x) + 0.3 * rng.normal(size=10**6)
    x.tofile(tmp + "/x.bin"); y.tofile(tmp + "/y.bin")
    found = {}

    def add(name, who, r, target, load):
        rows.append((name, who, r, target, load))
        print(name, "|", who, "|", r, "|", load, flush=True)

    for name, (setup, body, target) in PY.items():
        if a.only and not any(o in name for o in a.only.split(",")):
            continue
        load = uptime()
        code = PY_PRE.format(csv=CSV, setup=setup.replace("OUT", repr(tmp)),
                             body=body.replace("OUT", repr(tmp)))
        r = run([sys.executable, "-c", code], a.timeout, peak="10^7" in name)
        found[name] = r
        if "NW predict" in name and "res" in r:
            v = r["res"]
            add(name, "attnreg NadarayaWatson.predict", dict(cpu=v["cpu_attnreg"], wall=v["wall_attnreg"],
                res="numpy / attnreg: %.1fx CPU, %.1fx wall" % (v["cpu_numpy"] / v["cpu_attnreg"],
                                                             v["wall_numpy"] / v["wall_attnreg"])),
                target, load)
            add(name, "numpy 5-liner", dict(cpu=v["cpu_numpy"], wall=v["wall_numpy"], res=""), "", load)
            continue
        if "best of 5" in name and "res" in r:
            v = r["res"]
            add(name, "attnreg LocalLinear(approx='binned')", dict(cpu=v["best_cpu"], wall=v["best_wall"],
                res="m(grid mid) = %.10f" % v["mid"]), target, load)
            load = uptime()
            rr = run(["Rscript", "-e", R_LOCPOLY.format(out=tmp)], a.timeout)
            if "error" not in rr:
                ours = np.load(tmp + "/fit.npy"); ks = np.fromfile(tmp + "/ks.bin")
                rr["res"] = "max |attnreg - locpoly| over the grid = %.2e; attnreg / locpoly CPU = %.2fx" % (
                    np.abs(ours - ks).max(), v["best_cpu"] / max(rr["cpu"], 1e-9))
            add(name, "KernSmooth::locpoly (R)", rr, "", load)
            continue
        if "peak_mb" in r:
            r["res"] = "%s; peak RSS of the process %.0f MB (x, y: 160 MB)" % (r.get("res", ""), r["peak_mb"])
        add(name, "attnreg", r, target, load)

    # exact-vs-binned optimum comparisons
    def rel(bname, ename):
        b, e = found.get(bname, {}).get("res"), found.get(ename, {}).get("res")
        if isinstance(b, dict) and isinstance(e, dict):
            return abs(b["h"] - e["h"]) / e["h"]
    for bname, ename in (("n = 10^6 1-D Epanechnikov LL binned cv_ls search",
                          "n = 10^6 1-D Epanechnikov LL exact: cv_ls search"),
                         ("n = 20,000 1-D Gaussian LL binned cv_ls search",
                          "n = 20,000 1-D Gaussian LL exact cv_ls search")):
        d = rel(bname, ename)
        if d is not None:
            add(bname + ": binned h vs exact h", "", dict(cpu=float("nan"), wall=float("nan"),
                res="relative difference %.2e" % d), "< 1e-3", "")

    if not a.only or "diagnose" in a.only:
        load = uptime()
        add("R diagnose(fk), CPS1988 3-regressor LL fit at all 28,155 rows (kreg + diagnose)",
            "attnreg (R)", run(["Rscript", "-e", R_DIAGNOSE.format(csv=CSV)], a.timeout), "< 2 s", load)

    def fmt(r):
        if "error" in r:
            return "error", "error", r["error"]
        res = r.get("res", "")
        if isinstance(res, dict):
            res = ", ".join("%s = %.10g" % kv for kv in res.items())
        return "%.3f" % r["cpu"], "%.3f" % r["wall"], res

    lines = ["| workload | who | CPU s | wall s | result | target | load (1, 5, 15 min) |",
             "|---|---|---:|---:|---|---|---|"]
    for name, who, r, target, load in rows:
        cpu, wall, res = fmt(r)
        lines.append(f"| {name} | {who} | {cpu} | {wall} | {res} | {target} | {load} |")
    table = "\n".join(lines)
    print(table)
    if a.out:
        with open(a.out, "a") as f:
            f.write("\n## %s, %s, %d CPUs, attnreg %s\n\n" % (
                time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                platform.processor() or platform.machine(), os.cpu_count(),
                subprocess.run([sys.executable, "-c", "import attnreg; print(attnreg.__version__)"],
                               capture_output=True, text=True).stdout.strip()))
            f.write(table + "\n")


if __name__ == "__main__":
    main()
