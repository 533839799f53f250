"""Bandwidth selection for kernel regression against R np's npreg timings (issue 22's list).

np 0.70-4 cannot be installed on the development machine (no CRAN); its times are the ones the
issue states, measured on this kind of machine (shared, 2 cores): npreg lc cv.ls on cps71
(n = 205) 0.30 s; npreg ll cv.ls on wage1 with five regressors (n = 526) 9.8 s. Each attnreg
case runs in this process, best CPU of --repeat runs (time.process_time: all threads).

    python3 bench/bench_np_regression.py [--repeat 3]
"""
import argparse
import os
import time

import numpy as np
import pandas as pd

import attnreg

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data")

NP_SECONDS = {"cps71 lc cv_ls": 0.30, "wage1 ll cv_ls, 5 regressors": 9.8}


def cases():
    cps = pd.read_csv(os.path.join(DATA, "cps71.csv"))
    yield "cps71 lc cv_ls", cps[["age"]], cps["logwage"].to_numpy(), "lc"
    w = pd.read_csv(os.path.join(DATA, "wage1.csv"))
    X = pd.DataFrame({"female": pd.Categorical(w["female"]),
                      "married": pd.Categorical(w["married"]),
                      "educ": w["educ"].astype(float), "exper": w["exper"].astype(float),
                      "tenure": w["tenure"].astype(float)})
    yield "wage1 ll cv_ls, 5 regressors", X, w["lwage"].to_numpy(), "ll"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    print("| case | n | attnreg bandwidths | CV | CPU s (best of %d) | wall s | np s | np / attnreg CPU |"
          % a.repeat)
    print("|---|---|---|---|---|---|---|---|")
    for name, X, y, est in cases():
        best_cpu, best_wall, r = np.inf, np.inf, None
        for _ in range(a.repeat):
            c0, w0 = time.process_time(), time.perf_counter()
            r = attnreg.select_bandwidth(X, y, est, "cv_ls")
            best_cpu = min(best_cpu, time.process_time() - c0)
            best_wall = min(best_wall, time.perf_counter() - w0)
        bw = " ".join("%.6g" % b for b in np.ravel(r.bandwidth))
        print("| %s | %d | %s | %.10g | %.3f | %.3f | %.2f | %.0fx |"
              % (name, len(y), bw, r.objective, best_cpu, best_wall, NP_SECONDS[name],
                 NP_SECONDS[name] / best_cpu))
    print()
    print("load: " + open("/proc/loadavg").read().strip())


if __name__ == "__main__":
    main()
