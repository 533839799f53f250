"""Applied OLS speed: attnreg versus statsmodels for robust, weighted and clustered fits, one run.

    python bench/bench_ols_applied.py [--n 1000000] [--p 20] [--clusters 10000] [--years 50]

Each row is one complete fit with standard errors, as a user would call it (attnreg: fit then
standard_errors(); statsmodels: fit then bse), the two alternating --repeat times (least CPU
run of each reported); the "QR path forced" rows take OLS.fit's column-pivoted QR path on the
same data (what OLS.fit did before its tall path):
1. OLS with HC3 standard errors: attnreg.OLS(cov_type="HC3").fit versus
   statsmodels OLS(...).fit(cov_type="HC3").
2. Weighted least squares with HC1: OLS(cov_type="HC1").fit(sample_weight=w) versus WLS.
3. Clustered (CR1, Stata's factor) one-way on `clusters` firms, weighted and unweighted,
   and two-way (firm and year) versus statsmodels cov_type="cluster".

Wall-clock and process CPU seconds (CPU includes every thread), and the ratio of wall times
(statsmodels / attnreg, > 1: attnreg is faster). Agreement of the standard errors is printed.
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np


def timed(fn):
    w0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - w0, time.process_time() - c0, out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--p", type=int, default=20)
    ap.add_argument("--clusters", type=int, default=10_000)
    ap.add_argument("--years", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=1,
                    help="tall-path rows: alternate attnreg and statsmodels this many times, report the minima")
    a = ap.parse_args()

    import statsmodels
    import statsmodels.api as sm

    import attnreg

    rng = np.random.default_rng(0)
    n, p = a.n, a.p
    X = rng.normal(size=(n, p))
    firm = rng.integers(0, a.clusters, size=n)
    year = rng.integers(0, a.years, size=n)
    y = X @ rng.normal(size=p) + rng.normal(size=a.clusters)[firm] + rng.normal(size=n) * (1 + np.abs(X[:, 0]))
    w = rng.uniform(0.2, 3.0, size=n)
    Xc = sm.add_constant(X)
    info = attnreg.build_info() if hasattr(attnreg, "build_info") else {}
    print(f"attnreg {attnreg.__version__} ({info.get('blas', 'BLAS ?')}), statsmodels {statsmodels.__version__}, "
          f"numpy {np.__version__}, cores {os.cpu_count()}")
    print(f"data: n = {n:,}, p = {p} (+ intercept), {a.clusters:,} firms, {a.years} years; load before: "
          f"{os.getloadavg()[0]:.2f}")
    print(f"\n  {'fit':<34} {'attnreg wall':>12} {'cpu':>7} {'statsmodels wall':>17} {'cpu':>7} {'ratio':>6} {'cpu ratio':>9}  SE max rel diff")

    cases = [
        ("OLS, HC3", dict(cov_type="HC3"), None, None,
         lambda: sm.OLS(y, Xc).fit(cov_type="HC3")),
        ("WLS, HC1", dict(cov_type="HC1"), w, None,
         lambda: sm.WLS(y, Xc, weights=w).fit(cov_type="HC1")),
        ("OLS, cluster (firm)", dict(cov_type="cluster"), None, firm,
         lambda: sm.OLS(y, Xc).fit(cov_type="cluster", cov_kwds={"groups": firm})),
        ("WLS, cluster (firm)", dict(cov_type="cluster"), w, firm,
         lambda: sm.WLS(y, Xc, weights=w).fit(cov_type="cluster", cov_kwds={"groups": firm})),
        ("OLS, two-way CR0 (firm, year)", dict(cov_type="CR0"), None, np.column_stack([firm, year]),
         lambda: sm.OLS(y, Xc).fit(cov_type="cluster",
                                   cov_kwds={"groups": np.column_stack([firm, year]),
                                             "use_correction": False})),
    ]
    def attnreg_fit(kw, sw, groups, tall=True):
        m = attnreg.OLS(**kw)
        m._use_tall = tall  # False: OLS.fit's column-pivoted QR path (the path before tall fits)
        m.fit(X, y, sample_weight=sw, groups=groups)
        m.standard_errors()
        return m

    def sm_with_se(fit):
        r = fit()
        r.bse  # statsmodels computes the covariance on first access
        return r

    rows = [(name, kw, sw, groups, sm_fit, True) for name, kw, sw, groups, sm_fit in cases]
    rows[1:1] = [("OLS, HC3 (QR path forced)", dict(cov_type="HC3"), None, None, cases[0][4], False)]
    rows[3:3] = [("WLS, HC1 (QR path forced)", dict(cov_type="HC1"), w, None, cases[1][4], False)]
    for name, kw, sw, groups, sm_fit, tall in rows:
        # attnreg (fit + standard_errors()) alternating with statsmodels (fit + bse), a.repeat
        # times; the run of least CPU of each is reported.
        runs_a, runs_s = [], []
        for _ in range(max(1, a.repeat)):
            runs_a.append(timed(lambda: attnreg_fit(kw, sw, groups, tall)))
            runs_s.append(timed(lambda: sm_with_se(sm_fit)))
        tw_a, tc_a, m = min(runs_a, key=lambda z: z[1])
        tw_s, tc_s, r = min(runs_s, key=lambda z: z[1])
        se_a = np.r_[m.intercept_se_, m.coef_se_]
        diff = np.max(np.abs(se_a / r.bse - 1))
        print(f"  {name:<34} {tw_a:12.2f} {tc_a:7.2f} {tw_s:17.2f} {tc_s:7.2f} {tw_s / tw_a:6.1f} "
              f"{tc_s / tc_a:9.1f}  {diff:.1e}")
    from attnreg import _core

    # The tall path of the core (three passes over X read in place, C order as numpy holds it;
    # coefficients, SEs and residuals; what OLS.fit calls for these fits), side by side with
    # statsmodels.
    for name, cov, sw, sm_fit in [("tall path: OLS, HC3", "HC3", None, cases[0][4]),
                                  ("tall path: WLS, HC1", "HC1", w, cases[1][4])]:
        runs_a, runs_s = [], []
        for _ in range(max(1, a.repeat)):
            runs_a.append(timed(lambda: _core._ols_tall(X, y, weights=sw, cov_type=cov)))
            runs_s.append(timed(sm_fit))
        tw_a, tc_a, t = min(runs_a, key=lambda z: z[1])
        tw_s, tc_s, r = min(runs_s, key=lambda z: z[1])
        diff = np.max(np.abs(t["std_errors"] / r.bse - 1))
        print(f"  {name:<34} {tw_a:12.2f} {tc_a:7.2f} {tw_s:17.2f} {tc_s:7.2f} {tw_s / tw_a:6.1f} "
              f"{tc_s / tc_a:9.1f}  {diff:.1e}")
    # The same HC3 fit with Q_1 formed after the fit by dorgqr (what OLS.fit did before it asked
    # the core for Q_1 during the fit by a triangular solve): the core object, called directly.

    Xf, Yf = np.asfortranarray(X), np.asfortranarray(y[:, None])

    def lazy_q1():
        core = _core.OLS(True, 1e-7, 0, "auto", prepare_q1=False)
        core.fit(Xf, Yf, None)
        return core.inference("HC3")

    def eager_q1():
        core = _core.OLS(True, 1e-7, 0, "auto", prepare_q1=True)
        core.fit(Xf, Yf, None)
        return core.inference("HC3")

    tw_l, tc_l, _ = timed(lazy_q1)
    tw_e, tc_e, _ = timed(eager_q1)
    print(f"\n  core OLS + HC3, Q_1 by dorgqr after the fit:        wall {tw_l:6.2f}  cpu {tc_l:6.2f}")
    print(f"  core OLS + HC3, Q_1 by triangular solve in the fit: wall {tw_e:6.2f}  cpu {tc_e:6.2f}")
    print(f"\nload after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
