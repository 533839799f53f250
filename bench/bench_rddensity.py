"""attnreg.rd.rddensity vs rddensity 3.0: one run, side by side, CPU seconds (time.process_time),
one process. x ~ N(0.2, 1), cutoff 0, defaults (p = 2, comb bandwidths, jackknife, binomial
tests), then the plug-in variance and the restricted model (rows "model"). Prints a markdown
table for bench/results/rd.md (bench/results/rddensity_models.md for the model rows) with the
load average before and after.
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
print("| n | model | attnreg rddensity (CPU s) | rddensity 3.0 (CPU s) | ratio | "
      "max rel. diff (h, T, p) |")
print("|---|---|---|---|---|---|")
MODELS = [("unrestricted", "jackknife"), ("unrestricted", "plugin"), ("restricted", "jackknife"),
          ("restricted", "plugin")]
for n in (10**4, 10**5, 10**6):
    x = np.random.default_rng(0).normal(0.2, 1.0, n)
    for fitselect, vce in MODELS:
        kw = dict(fitselect=fitselect, vce=vce)
        ta, m = cpu(lambda: rd.rddensity(x, **kw))
        tr, r = cpu(lambda: r_rddensity(x, **kw))
        t, pv = ((r.test["t_asy"], r.test["p_asy"]) if vce == "plugin"
                 else (r.test["t_jk"], r.test["p_jk"]))
        got = np.array([m.h_left, m.h_right, m.statistic, m.p_value])
        want = np.array([r.h["left"], r.h["right"], t, pv])
        diff = np.max(np.abs(got - want) / np.abs(want))
        print(f"| {n:.0e} | {fitselect}, {vce} | {ta:.3f} | {tr:.2f} | {tr / ta:.0f}x | "
              f"{diff:.1e} |")
print(f"load average at end: {os.getloadavg()[0]:.1f}")
