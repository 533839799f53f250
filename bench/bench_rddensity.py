"""attnreg.rd.rddensity vs rddensity 3.0: one run, side by side, CPU seconds (time.process_time),
one process. x ~ N(0.2, 1), cutoff 0, defaults (p = 2, comb bandwidths, jackknife, binomial
tests). Prints a markdown table for bench/results/rd.md with the load average before and after.
"""
import os
import time
import warnings

import numpy as np

import attnreg.rd as rd
from rddensity import rddensity as r_rddensity

warnings.simplefilter("ignore")


def cpu(f):
    t = time.process_time()
    out = f()
    return time.process_time() - t, out


print(f"load average at start: {os.getloadavg()[0]:.1f}")
print("| n | attnreg rddensity (CPU s) | rddensity 3.0 (CPU s) | ratio | max rel. diff (h, T, p) |")
print("|---|---|---|---|---|")
for n in (10**4, 10**5, 10**6):
    x = np.random.default_rng(0).normal(0.2, 1.0, n)
    ta, m = cpu(lambda: rd.rddensity(x))
    tr, r = cpu(lambda: r_rddensity(x))
    got = np.array([m.h_left, m.h_right, m.statistic, m.p_value])
    want = np.array([r.h["left"], r.h["right"], r.test["t_jk"], r.test["p_jk"]])
    diff = np.max(np.abs(got - want) / np.abs(want))
    print(f"| {n:.0e} | {ta:.3f} | {tr:.2f} | {tr / ta:.0f}x | {diff:.1e} |")
print(f"load average at end: {os.getloadavg()[0]:.1f}")
