"""Would nprobust's minimum-points rule on raw distances help the Gaussian kernel with several
regressors?

    python3 bench/rbc_gaussian_bwcheck.py D N TRUTH NOISE REPS SEED OUT.json [REACH]
    python3 bench/rbc_gaussian_bwcheck.py table OUT.json...

nprobust's lpbwselect / lprobust raise every bandwidth to the distance of the bwcheck-th nearest
observation whatever the kernel (so a Gaussian window holds >= 21 rows within one standard
deviation); attnreg's 1-D plug-in does the same, while with several columns the rule is applied
to compact kernels only (docs/bandwidth.md, "minimum points"). This study multiplies the
pointwise mse_dpi vector (Gaussian, design of bench/rbc_montecarlo.py) by the smallest factor
s >= 1 that puts T = max(21, 2 (1 + d + d (d + 1) / 2)) distinct rows inside the box
|x_c - x0_c| < REACH h_c, and compares diagnose's RBC coverage (HC3 and cov_type="local") at h
and at s h. (The plug-in's own pilot is left as it is: a first look, not the full rule.)
REACH (default 1, nprobust's raw distances): sqrt(5) = 2.236 is the half-width of the
Epanechnikov kernel with the Gaussian's variance, i.e. the compact kernels' rule transferred
to the Gaussian at equal second moment.
Results: bench/results/rbc_pointwise_variance.md ("Nprobust's rule on raw distances", and
"Bandwidth randomness and curvature" for REACH sqrt(5)).
"""
import json
import sys

import numpy as np

from attnreg import LocalLinear

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from rbc_pointwise_variance import coverage_cell, rbc_t, replicate  # noqa: E402



def box_factor(X, x0, h, T):
    r = np.sort(np.max(np.abs(np.unique(X, axis=0) - x0) / h, axis=1))
    return max(1.0, r[min(T, len(r)) - 1] * (1 + 1e-9))


def run(d, n, truth, noise, reps, seed, out, reach=1.0):
    rng = np.random.default_rng([55, d, n, seed, len(truth), len(noise)])
    T = max(21, 2 * (1 + d + d * (d + 1) // 2))

    def per_point(X, y, est, x0, tk, k):
        h = np.asarray(est.bandwidth_, float)
        s = box_factor(X, x0, reach * h, T)
        rec = {"s": s}
        for lab, e in (("old", est), ("box", LocalLinear(bandwidth=h * s).fit(X, y))):
            for cov in ("HC3", "local"):
                rec[f"{lab}_{cov}"] = rbc_t(e, x0, tk, cov)[0]
        return rec

    rows = replicate(rng, d, "gaussian", n, truth, noise, reps, per_point, ())
    with open(out, "w") as fh:
        json.dump(rows, fh)


def table(files):
    names = ("old_HC3", "box_HC3", "old_local", "box_local")
    print("| design | point | mean s | " + " | ".join(f"{c} coverage (sd t)" for c in names) + " |")
    print("|" + "---|" * (3 + len(names)))
    for f in files:
        rows = json.load(open(f))
        lab = f.rsplit("/", 1)[-1][:-5] + f" (R = {len(rows)})"
        for k in range(len(rows[0])):
            v = [r[k] for r in rows]
            cells = [coverage_cell([x[nm] for x in v]) for nm in names]
            print(f"| {lab} | {k} | {np.mean([x['s'] for x in v]):.2f} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    if sys.argv[1] == "table":
        table(sys.argv[2:])
    else:
        a = sys.argv[1:]
        run(int(a[0]), int(a[1]), a[2], a[3], int(a[4]), int(a[5]), a[6],
            float(a[7]) if len(a) > 7 else 1.0)
