#!/usr/bin/env python3
"""Peak memory of one fixed-effects fit: attnreg.ols against pyfixest.feols, each in a fresh
process (one tool, one case), n = 10^6 by default, the data of bench_fe_applied.py.

    python bench/bench_fe_memory.py [--n 1000000]

Reported: the peak resident set (ru_maxrss) of the process after the data frame is built and
the extra peak the fit adds (the fit's working memory, data excluded). The first pyfixest call
also compiles its numba kernels, so each tool is called twice and the increase is measured from
before the first call (what a user's script pays).
"""
import argparse
import resource
import subprocess
import sys

CASES = {"one-way CR1": "y ~ x1 + x2 | f1", "two-way CR1": "y ~ x1 + x2 | f1 + f2"}


def child(tool, formula, n):
    sys.path.insert(0, __file__.rsplit("/", 1)[0])
    from bench_fe_applied import make
    d = make(n, 10_000, 1_000)
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if tool == "attnreg":
        import attnreg
        fit = lambda: attnreg.ols(formula, d, cov_type="CR1", groups="f1").summary()
    else:
        import pyfixest as pf
        fit = lambda: pf.feols(formula, data=d, vcov={"CRV1": "f1"}).se()
    fit(); fit()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"{base / 1024:.0f} {(peak - base) / 1024:.0f}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--child", nargs=2)
    a = ap.parse_args()
    if a.child:
        return child(a.child[0], CASES[a.child[1]], a.n)
    print(f"n = {a.n}; MB: data-frame process peak, extra peak of two fits")
    print("| case | tool | process with data (MB) | extra peak of the fit (MB) |\n|---|---|---:|---:|")
    for case in CASES:
        for tool in ("attnreg", "pyfixest"):
            out = subprocess.run([sys.executable, __file__, "--n", str(a.n), "--child", tool, case],
                                 capture_output=True, text=True, check=True).stdout.split()
            print(f"| {case} | {tool} | {out[-2]} | {out[-1]} |")


if __name__ == "__main__":
    main()
