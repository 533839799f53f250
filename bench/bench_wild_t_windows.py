"""Uniform bands by the wild bootstrap-t on fits with many distinct rows: CPU seconds of
diagnose(uniform=True) (HC3, 2,000 draws) and the method used, or the refusal.

    OMP_NUM_THREADS=1 python3 bench/bench_wild_t_windows.py

Run once per module to compare builds (PYTHONPATH pointing at each). x ~ U[-1, 1]^2 without
ties, local linear; Epanechnikov h = 0.08 (compact windows) and Gaussian h = 0.08.
"""
import time
import warnings

import numpy as np

from attnreg import LocalLinear
from attnreg.diagnostics import diagnose

rng = np.random.default_rng(0)
print("| n | kernel | points | method | crit (RBC) | CPU s |")
print("|---|---|---|---|---|---|")
for n in (25000, 50000):
    X = rng.uniform(-1, 1, (n, 2))
    y = np.sin(2 * X[:, 0]) + X[:, 1] ** 2 + 0.3 * rng.standard_normal(n)
    for kernel in ("epanechnikov", "gaussian"):
        est = LocalLinear(bandwidth=[0.08, 0.08], kernel=kernel).fit(X, y)
        for m in (20, 200):
            P = rng.uniform(-0.8, 0.8, (m, 2))
            t0 = time.process_time()
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    D = diagnose(est, P, uniform=True, random_state=1)
                res = f"{D.attrs['uniform_method']} | {D.attrs['crit_uniform_rbc']:.4f}"
            except ValueError as e:
                res = f"refused ({str(e)[:60]}...) | -"
            print(f"| {n} | {kernel} | {m} | {res} | {time.process_time() - t0:.2f} |",
                  flush=True)
