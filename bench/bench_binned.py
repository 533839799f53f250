"""Binned approximations (approx="binned") at scale, side by side with KernSmooth::locpoly in
the same run. Each workload runs in a fresh child process; CPU seconds (process_time, all
threads; R: user + system) and wall seconds are measured inside the child, the load (`uptime`)
is recorded before each, and peak memory by /usr/bin/time -v.

    python3 bench/bench_binned.py [--src python-package/src] [--out bench/results/scale_round2.md]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

PY_PRE = """
import json, sys, time, numpy as np
sys.path.insert(0, {src!r})
import attnreg
from attnreg import _core
rng = np.random.default_rng(2026)
n = {n}
x = rng.uniform(size=n); y = np.sin(2 * np.pi * x) + 0.3 * rng.normal(size=n)
X = x[:, None]
"""

def py(src, n, body):
    code = PY_PRE.format(src=src, n=n) + """
c0 = time.process_time(); w0 = time.perf_counter()
""" + body + """
print(json.dumps(dict(cpu=time.process_time() - c0, wall=time.perf_counter() - w0, res=res)))
"""
    return [sys.executable, "-c", code]


def load():
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip().split("load average:")[-1].strip()


def run(cmd, timeout=900, peak=False):
    if peak:
        cmd = ["/usr/bin/time", "-v"] + cmd
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        raise RuntimeError(p.stderr[-2000:])
    import json
    out = json.loads(p.stdout.strip().splitlines()[-1])
    if peak:
        m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr)
        out["peak_mb"] = int(m.group(1)) / 1024 if m else None
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", default="python-package/src")
    ap.add_argument("--out", default="bench/results/scale_round2.md")
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    src = os.path.abspath(a.src)
    rows = []

    def add(name, n, path, r, ld):
        rows.append((name, n, path, r, ld))
        print(name, n, path, r, ld, flush=True)

    # 1. n = 10^6 Gaussian local linear fit on a 401-point grid vs KernSmooth::locpoly.
    n, h, reps = 10**6, 0.02, 5
    with tempfile.TemporaryDirectory() as tmp:
        ld = load()
        body = f"""
xs = np.ascontiguousarray(x); ys = np.ascontiguousarray(y)
xs.tofile({tmp!r} + '/x.bin'); ys.tofile({tmp!r} + '/y.bin')
grid = np.linspace(x.min(), x.max(), 401)[:, None]
best_c = best_w = 1e9
for r in range({reps}):
    c1 = time.process_time(); w1 = time.perf_counter()
    m = _core.BinnedLocalPolynomial(degree=1, kernel='gaussian', grid_size=401).fit(X, y[:, None], np.array([{h}]))
    fit = m.predict(grid)
    best_c = min(best_c, time.process_time() - c1); best_w = min(best_w, time.perf_counter() - w1)
c2 = time.process_time(); w2 = time.perf_counter()
for r in range({reps}):
    est = attnreg.LocalLinear(bandwidth={h}, approx='binned').fit(X, y)
    fit2 = est.predict(grid)
face_c = (time.process_time() - c2) / {reps}; face_w = (time.perf_counter() - w2) / {reps}
res = dict(core_cpu=best_c, core_wall=best_w, face_cpu=face_c, face_wall=face_w, mid=float(fit[200, 0]))
np.save({tmp!r} + '/fit.npy', fit[:, 0])
"""
        r = run(py(src, n, body))
        add("LL Gaussian fit, 401-point grid, + predict at the 401 nodes (best of 5)", n,
            "attnreg core BinnedLocalPolynomial", dict(cpu=r["res"]["core_cpu"], wall=r["res"]["core_wall"],
                                                       res="m(grid mid) = %.10f" % r["res"]["mid"]), ld)
        add("LL Gaussian fit, 401-point grid, + predict at the 401 nodes (mean of 5)", n,
            "attnreg LocalLinear(approx='binned') (sklearn face)",
            dict(cpu=r["res"]["face_cpu"], wall=r["res"]["face_wall"], res=""), ld)
        rcode = f"""
suppressMessages(library(KernSmooth))
x <- readBin('{tmp}/x.bin', 'double', {n}); y <- readBin('{tmp}/y.bin', 'double', {n})
best <- c(Inf, Inf)
for (r in 1:{reps}) {{
  t <- system.time(f <- locpoly(x, y, degree = 1, bandwidth = {h}, gridsize = 401))
  best <- pmin(best, c(t[["user.self"]] + t[["sys.self"]], t[["elapsed"]]))
}}
writeBin(f$y, '{tmp}/ks.bin')
cat(sprintf('{{"cpu": %.6f, "wall": %.6f, "res": {{"mid": %.10f}}}}\\n', best[1], best[2], f$y[201]))
"""
        ld = load()
        p = subprocess.run(["Rscript", "-e", rcode], capture_output=True, text=True, timeout=600)
        import json
        rr = json.loads(p.stdout.strip().splitlines()[-1])
        import numpy as np
        ours = np.load(tmp + "/fit.npy")
        ks = np.fromfile(tmp + "/ks.bin", dtype=np.float64)
        add("LL Gaussian fit, 401-point grid, + predict at the 401 nodes (best of 5)", n,
            "KernSmooth::locpoly (R)", dict(cpu=rr["cpu"], wall=rr["wall"],
                                          res="m(grid mid) = %.10f; max |attnreg - locpoly| over the grid = %.2e"
                                          % (rr["res"]["mid"], np.abs(ours - ks).max())), ld)

    # 2. Binned cv_ls search at n = 10^6 (Gaussian; Epanechnikov against the exact fast-sum search).
    for kern in ("gaussian", "epanechnikov"):
        ld = load()
        body = f"""
r = attnreg.select_bandwidth(X, y, 'll', 'cv_ls', kernel={kern!r}, approx='binned')
res = dict(h=float(r.bandwidth[0]), evals=r.n_evals, obj=r.objective)
"""
        r = run(py(src, 10**6, body))
        add(f"LL cv_ls search, {kern}", 10**6, "binned (approx_grid_size default 4001)",
            dict(cpu=r["cpu"], wall=r["wall"], res="h = %.8g, CV = %.10g, %d evaluations" % (
                r["res"]["h"], r["res"]["obj"], r["res"]["evals"])), ld)
    if not a.quick:
        ld = load()
        body = """
r = attnreg.select_bandwidth(X, y, 'll', 'cv_ls', kernel='epanechnikov')
res = dict(h=float(r.bandwidth[0]), evals=r.n_evals, obj=r.objective)
"""
        r = run(py(src, 10**6, body), timeout=1800)
        add("LL cv_ls search, epanechnikov", 10**6, "exact (fast sums)",
            dict(cpu=r["cpu"], wall=r["wall"], res="h = %.8g, CV = %.10g, %d evaluations" % (
                r["res"]["h"], r["res"]["obj"], r["res"]["evals"])), ld)
    # Gaussian, n = 20,000: binned (401, 4001) vs exact.
    for path, kw in (("binned, approx_grid_size 401", "approx='binned', approx_grid_size=401"),
                     ("binned (default 4001)", "approx='binned'"), ("exact", "")):
        ld = load()
        body = f"""
r = attnreg.select_bandwidth(X, y, 'll', 'cv_ls', {kw})
res = dict(h=float(r.bandwidth[0]), evals=r.n_evals, obj=r.objective)
"""
        r = run(py(src, 20000, body))
        add("LL cv_ls search, gaussian", 20000, path,
            dict(cpu=r["cpu"], wall=r["wall"], res="h = %.8g, CV = %.10g, %d evaluations" % (
                r["res"]["h"], r["res"]["obj"], r["res"]["evals"])), ld)

    # 3. Peak memory of a binned fit at n = 10^7 (whole process, data included).
    ld = load()
    body = """
m = attnreg.LocalLinear(bandwidth=0.01, approx='binned').fit(X, y)
p = m.predict(np.linspace(0, 1, 1000)[:, None])
res = dict(mid=float(p[500]))
"""
    r = run(py(src, 10**7, body), peak=True)
    add("LL Gaussian binned fit + predict 1000 (peak RSS of the process: %.0f MB, data x, y = 160 MB)"
        % r["peak_mb"], 10**7, "LocalLinear(approx='binned')",
        dict(cpu=r["cpu"], wall=r["wall"], res="m(0.5) = %.8f" % r["res"]["mid"]), ld)

    with open(a.out, "a") as f:
        f.write("\n## bench/bench_binned.py (%s)\n\n" % time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))
        f.write("| workload | n | path | wall s | CPU s | result | load (1, 5, 15 min) |\n|---|---|---|---|---|---|---|\n")
        for name, n, path, r, ld in rows:
            f.write(f"| {name} | {n} | {path} | {r['wall']:.3f} | {r['cpu']:.3f} | {r['res']} | {ld} |\n")


if __name__ == "__main__":
    main()
