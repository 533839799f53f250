"""tr(L'L) of a kernel fit (residual degrees of freedom n - 2 tr L + tr L'L: the homoskedastic
variance, summary(), tradeoff()) at a few sizes; CPU seconds of the first (uncached) call.

    OMP_NUM_THREADS=1 python3 bench/bench_trace_ltl.py

Run once per module to compare builds side by side (PYTHONPATH pointing at each). x ~ U[-1, 1]^d
without ties, local linear.
"""
import time

import numpy as np

from attnreg import LocalLinear
from attnreg.diagnostics import _fitted_core, diagnose

rng = np.random.default_rng(0)
print("| n | d | kernel | h | tr(L'L) | CPU s | diagnose nonrobust, 50 points, CPU s |")
print("|---|---|---|---|---|---|---|")
for n, d, h in ((28155, 3, 0.15), (5000, 2, 0.1), (3000, 1, 0.05)):
    X = rng.uniform(-1, 1, (n, d))
    y = np.sin(X[:, 0]) + 0.3 * rng.standard_normal(n)
    P = rng.uniform(-0.8, 0.8, (50, d))
    for k in ("gaussian", "epanechnikov"):
        est = LocalLinear(bandwidth=[h] * d, kernel=k).fit(X, y)
        t0 = time.process_time()
        v = _fitted_core(est).trace_LtL()
        t1 = time.process_time() - t0
        est = LocalLinear(bandwidth=[h] * d, kernel=k).fit(X, y)  # a fresh fit: nothing cached
        t0 = time.process_time()
        diagnose(est, P, cov_type="nonrobust")
        t2 = time.process_time() - t0
        print(f"| {n} | {d} | {k} | {h} | {v:.10g} | {t1:.3f} | {t2:.3f} |")
