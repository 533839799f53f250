"""Does a wider RBC pilot window (only the pilot, the fit's bandwidth left at its mse_dpi
vector) calm the HC3 standard error in the small windows of several regressors?

    python3 bench/rbc_pilot_window.py D KERNEL N TRUTH NOISE REPS SEED OUT.json
    python3 bench/rbc_pilot_window.py table OUT.json...

The robust bias-corrected weights are W = L - B, B the bias estimate's weights from the pilot
local quadratic at bandwidth b (Calonico, Cattaneo and Farrell 2018, JASA 113(522), eq. (4);
rho = h / b = 1 by default). With d = 3 the quadratic has 10 coefficients; at a boundary point
of a Gaussian fit at n = 500 its window holds a handful of effective rows, B puts large weights
on a few of them, and the per-row variances (HC3) rest on those. This study keeps h and raises
b to the smallest multiple s h whose kernel weights have an effective number of rows
(sum w)^2 / sum w^2 (Kish) of at least T, for T = 3 and 6 times the quadratic's coefficients,
and compares diagnose's RBC coverage (HC3 and cov_type="local") with b = h. Design of
bench/rbc_montecarlo.py; results in bench/results/rbc_pointwise_variance.md.
"""
import json
import sys

import numpy as np

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from rbc_pointwise_variance import coverage_cell, kernel_weights, rbc_t, replicate  # noqa: E402

SHIFTS = (3, 6)


def kish_factor(X, x0, h, kernel, T):
    """Smallest s >= 1 (on a 2% grid) with Kish's effective rows of the weights at s h >= T."""
    s = 1.0
    while s < 50:
        w = kernel_weights((X - x0) / (s * h), kernel)
        if w.sum() > 0 and w.sum() ** 2 / np.sum(w * w) >= T:
            return s
        s *= 1.02
    return s


def run(d, kernel, n, truth, noise, reps, seed, out):
    rng = np.random.default_rng([77, d, n, seed, len(truth), len(noise), len(kernel)])
    npar = (d + 1) * (d + 2) // 2

    def per_point(X, y, est, x0, tk, k):
        h = np.asarray(est.bandwidth_, float)
        rec = {}
        for lab, mult in [("b=h", 0)] + [(f"kish{m}", m) for m in SHIFTS]:
            s = 1.0 if mult == 0 else kish_factor(X, x0, h, kernel, mult * npar)
            rec[f"s_{lab}"] = s
            for cov in ("HC3", "local"):
                rec[f"{lab}_{cov}"] = rbc_t(est, x0, tk, cov,
                                            pilot_bandwidth=None if mult == 0 else s * h)[0]
        return rec

    rows = replicate(rng, d, kernel, n, truth, noise, reps, per_point, ())
    with open(out, "w") as fh:
        json.dump(rows, fh)


def table(files):
    labs = ["b=h"] + [f"kish{m}" for m in SHIFTS]
    names = [f"{lab}_{c}" for c in ("HC3", "local") for lab in labs]
    print("| design | point | " + " | ".join(f"mean s {lab}" for lab in labs[1:]) + " | "
          + " | ".join(f"{c} coverage (sd t)" for c in names) + " |")
    print("|" + "---|" * (2 + len(labs) - 1 + len(names)))
    for f in files:
        rows = [r for r in json.load(open(f))]
        lab = f.rsplit("/", 1)[-1][:-5] + f" (R = {len(rows)})"
        for k in range(len(rows[0])):
            v = [r[k] for r in rows if r[k] is not None]
            ss = [f"{np.mean([x['s_' + b] for x in v]):.2f}" for b in labs[1:]]
            cells = [coverage_cell([x[nm] for x in v]) for nm in names]
            print(f"| {lab} | {k} | " + " | ".join(ss) + " | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    if sys.argv[1] == "table":
        table(sys.argv[2:])
    else:
        a = sys.argv[1:]
        run(int(a[0]), a[1], int(a[2]), a[3], a[4], int(a[5]), int(a[6]), a[7])
