"""Multivariate robust bias correction and uniform bands: speed.

    python3 bench/bench_rbc.py [--out bench/results/rbc.md]

CPS1988 (data/cps1988.csv, 28,155 rows; y = log(wage)), the main job's mixed-data fit: local
linear in experience and education (continuous) and ethnicity (unordered), bandwidths fixed at
values of the order cv_ls picks. Timed (CPU seconds of this process, time.process_time):
diagnose at 50 rows (bias from the pilot local quadratic, RBC, HC0 and HC3), and the uniform
bands with 2,000 multiplier draws at 200 rows (the wild bootstrap-t, diagnose's default, and the
Gaussian sup-t, side by side). The fit's own residuals/leverages are computed
once beforehand (untimed: they belong to the fit, not to RBC) and reported separately.
"""
import argparse
import os
import subprocess
import time

import numpy as np
import pandas as pd

import attnreg
from attnreg.diagnostics import diagnose

here = os.path.dirname(os.path.abspath(__file__))


def cpu(f):
    t = time.process_time()
    w = time.perf_counter()
    r = f()
    return r, time.process_time() - t, time.perf_counter() - w


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    df = pd.read_csv(os.path.join(here, "..", "data", "cps1988.csv"))
    X = np.column_stack([df["experience"].to_numpy(float), df["education"].to_numpy(float),
                         (df["ethnicity"] == "afam").to_numpy(float)])
    y = np.log(df["wage"].to_numpy(float))
    h = np.array([3.0, 1.0, 0.1])
    m, c_fit, _ = cpu(lambda: attnreg.LocalLinear(bandwidth=h, var_types="ccu").fit(X, y))
    _, c_res, _ = cpu(lambda: (m.leverage_, m.predict(X[:1])))
    rng = np.random.default_rng(1)
    X50 = X[rng.choice(len(y), 50, replace=False)]
    X200 = X[rng.choice(len(y), 200, replace=False)]
    rows = []
    up = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    for label, f in [
        ("fit (n = 28,155, 2 continuous + 1 unordered)", None),
        ("fit's leverages and residuals (once per fit)", None),
        ("diagnose, RBC HC0, 50 points", lambda: diagnose(m, X50, cov_type="HC0")),
        ("diagnose, RBC HC3, 50 points", lambda: diagnose(m, X50, cov_type="HC3")),
        ("diagnose, RBC HC3 + uniform bands (2,000 draws), 200 points, wild bootstrap-t "
         "(default)",
         lambda: diagnose(m, X200, cov_type="HC3", uniform=True, replications=2000,
                          random_state=1, uniform_method="wild_t")),
        ("diagnose, RBC HC3 + uniform bands (2,000 draws), 200 points, Gaussian sup-t",
         lambda: diagnose(m, X200, cov_type="HC3", uniform=True, replications=2000,
                          random_state=1, uniform_method="gaussian")),
        ("diagnose, RBC HC3 without uniform bands, 200 points",
         lambda: diagnose(m, X200, cov_type="HC3")),
    ]:
        if f is None:
            rows.append((label, c_fit if "fit (" in label else c_res, float("nan")))
            continue
        best = None
        for _ in range(3):
            _, c, w = cpu(f)
            best = (c, w) if best is None or c < best[0] else best
        rows.append((label, best[0], best[1]))
    # the sup-t step alone (200 points, 2,000 draws)
    S = np.cov(rng.standard_normal((200, 400)))
    _, c, w = cpu(lambda: attnreg._core.sup_t_critical_value(S, 0.95, 2000, 1))
    rows.append(("sup-t critical value alone, 200 points, 2,000 draws", c, w))
    txt = [f"uptime before the runs: `{up}`", "", "| step | CPU s | wall s |", "|---|---|---|"]
    txt += [f"| {l} | {c:.3f} | {w:.3f} |" for l, c, w in rows]
    print("\n".join(txt))
    if a.out:
        with open(a.out, "w") as fh:
            fh.write("\n".join(txt) + "\n")


if __name__ == "__main__":
    main()
