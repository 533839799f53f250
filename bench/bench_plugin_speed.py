"""Speed of the plug-ins that feed robust bias correction (attnreg.bandwidth.mse_dpi /
imse_dpi, nprobust's lpbwselect steps) and of a small 1-D local-linear cv_ls search, side by
side with their peers in one run.

* mse_dpi at n = 10,000, 10 evaluation points, and imse_dpi on its default grid (30 equally
  spaced points over the range of x, nprobust's imsegrid = 30, which its imse-dpi uses whatever
  the eval argument), Gaussian and Epanechnikov kernels,
  against nprobust 1.0.0 (``pip install nprobust_pkg``; ``nprobust.lpbwselect``, bwselect
  "mse-dpi" / "imse-dpi"), with the largest relative difference of the bandwidths.
* select_bandwidth(X, y, "ll", "cv_ls") at n = 1,000 against statsmodels'
  KernelReg(reg_type="ll", bw="cv_ls").
* ``--previous DIR``: the same attnreg calls with another build of the package (a directory
  holding an ``attnreg`` package, e.g. a copy of python-package/src at an earlier commit) in a
  subprocess of the same run, and the largest relative difference of its bandwidths.

CPU seconds are process time (all threads summed); the load is ``uptime``'s, read before and
after.

    PYTHONPATH=python-package/src python3 bench/bench_plugin_speed.py \
        [--previous DIR] [--out bench/results/plugin_speed.md]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import warnings

import numpy as np

N_DPI, N_CV, REPEAT = 10_000, 1_000, 5


def dpi_data(n=N_DPI, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 1, n)
    return x, np.sin(2 * np.pi * x) + 0.3 * rng.standard_normal(n), np.linspace(0.05, 0.95, 10)


def cv_data(n=N_CV, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, (n, 1))
    return X, np.sin(2 * np.pi * X[:, 0]) + 0.3 * rng.standard_normal(n)


def cpu(fn, repeat=REPEAT):
    """Median CPU seconds of `repeat` calls after one warm-up, and the last result."""
    out = fn()
    times = []
    for _ in range(repeat):
        c0 = time.process_time()
        out = fn()
        times.append(time.process_time() - c0)
    return float(np.median(times)), out


def attnreg_runs():
    """{case: (CPU s, bandwidths)} for this interpreter's attnreg."""
    import attnreg
    from attnreg.bandwidth import imse_dpi, mse_dpi

    x, y, pts = dpi_data()
    out = {}
    for k in ("gaussian", "epanechnikov"):
        t, h = cpu(lambda: mse_dpi(x, y, pts, kernel=k, return_pilot=True))
        out[f"mse_dpi {k}"] = (t, np.concatenate(h).tolist())
        t, h = cpu(lambda: imse_dpi(x, y, kernel=k, return_pilot=True))  # 30-point grid
        out[f"imse_dpi {k}"] = (t, list(h))
    X, yc = cv_data()
    t, r = cpu(lambda: attnreg.select_bandwidth(X, yc, "ll", "cv_ls"), repeat=20)
    out["cv_ls ll gaussian n=1000"] = (t, [float(r.bandwidth[0]), float(r.objective),
                                          int(r.n_evals)])
    return out


def nprobust_runs():
    import nprobust

    x, y, pts = dpi_data()
    out = {}
    for k, nk in (("gaussian", "gau"), ("epanechnikov", "epa")):
        t, r = cpu(lambda: nprobust.lpbwselect(y, x, eval=pts, kernel=nk, bwselect="mse-dpi"),
                   repeat=1)
        out[f"mse_dpi {k}"] = (t, np.concatenate([r.bws["h"], r.bws["b"]]).tolist())
        t, r = cpu(lambda: nprobust.lpbwselect(y, x, kernel=nk, bwselect="imse-dpi"),
                   repeat=1)
        out[f"imse_dpi {k}"] = (t, [float(np.ravel(r.bws["h"])[0]),
                                    float(np.ravel(r.bws["b"])[0])])
    return out


def statsmodels_run():
    from statsmodels.nonparametric.kernel_regression import KernelReg

    X, y = cv_data()

    def fit():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return KernelReg(y, X, var_type="c", reg_type="ll", bw="cv_ls")

    c0 = time.process_time()
    kr = fit()
    return time.process_time() - c0, float(abs(kr.bw[0]))


def load():
    return os.getloadavg()[0]


def rel(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.max(np.abs(a - b) / np.abs(b)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--previous", help="directory holding an earlier attnreg package")
    ap.add_argument("--out", default=None)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        print(json.dumps(attnreg_runs()))
        return
    import attnreg

    load0 = load()
    prev = None
    if a.previous:
        env = dict(os.environ, PYTHONPATH=a.previous)
        res = subprocess.run([sys.executable, __file__, "--child"], env=env, check=True,
                             capture_output=True, text=True)
        prev = json.loads(res.stdout.strip().splitlines()[-1])
    new = attnreg_runs()
    npb = nprobust_runs()
    sm_t, sm_h = statsmodels_run()
    load1 = load()
    lines = [
        "# Plug-in bandwidths (mse_dpi / imse_dpi) and small-n cv_ls: speed "
        "(bench/bench_plugin_speed.py)",
        "",
        f"attnreg {attnreg.__version__}; CPU seconds (process time, all threads summed; "
        f"median of {REPEAT} calls after a warm-up for attnreg, one call for the peers), "
        "measured side by side in one run on the shared 2-core machine; "
        f"`uptime` load average {load0:.1f} at the start, {load1:.1f} at the end.",
        "Plug-ins: x ~ U(0, 1), y = sin(2 pi x) + N(0, 0.3^2), n = 10,000; mse_dpi at 10 "
        "points 0.05..0.95, imse_dpi on the default 30-point grid; degree 1, nn variance, "
        "bwcheck 21. cv_ls: n = 1,000, the same "
        "curve.",
        "",
        "| case | attnreg CPU s | " + ("previous attnreg CPU s | max rel. diff vs previous | "
                                       if prev else "") +
        "nprobust 1.0.0 CPU s | max rel. diff h, b vs nprobust |",
        "|---|---|" + ("---|---|" if prev else "") + "---|---|",
    ]
    for case, (t, h) in new.items():
        if case not in npb:
            continue
        row = f"| {case} | {t:.4f} | "
        if prev:
            row += f"{prev[case][0]:.4f} | {rel(h, prev[case][1]):.1e} | "
        row += f"{npb[case][0]:.2f} | {rel(h, npb[case][1]):.1e} |"
        lines.append(row)
    t, (h, obj, ev) = new["cv_ls ll gaussian n=1000"]
    lines += [
        "",
        "| 1-D ll cv_ls, Gaussian, n = 1,000 | CPU s | h | cv_ls | exact evaluations |",
        "|---|---|---|---|---|",
        f"| attnreg select_bandwidth | {t:.4f} | {h:.10f} | {obj:.12f} | {ev} |",
    ]
    if prev:
        tp, (hp, op, evp) = prev["cv_ls ll gaussian n=1000"]
        lines.append(f"| previous attnreg | {tp:.4f} | {hp:.10f} | {op:.12f} | {evp} |")
    lines.append(f"| statsmodels KernelReg(reg_type='ll', bw='cv_ls') | {sm_t:.2f} | "
                 f"{sm_h:.10f} | - | - |")
    lines.append("")
    lines.append(f"statsmodels / attnreg CPU: {sm_t / t:.0f}x" +
                 (f" (previous attnreg: {sm_t / prev['cv_ls ll gaussian n=1000'][0]:.0f}x)"
                  if prev else "") + ".")
    text = "\n".join(lines) + "\n"
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
