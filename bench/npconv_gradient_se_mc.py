"""Monte Carlo: how well do the two standard errors of a Nadaraya-Watson gradient estimate the
estimator's sampling spread?  se="asymptotic" (the linear-smoother variance sum_i g_i^2 e_i^2,
attnreg's default) against se="np" (R np 0.70-4's gerr formula), both at a fixed bandwidth.

Design: x ~ U(0, 1), y = sin(2 pi x) + 0.5 x + sigma(x) e, e ~ N(0, 1), sigma(x) = 0.2 + 0.3 x
(heteroskedastic); Gaussian kernel, h = 0.06 (and 0.1); evaluation points 0.15, 0.3, 0.5,
0.7, 0.85; n = 400 and 1,500; R replications. Reports the Monte Carlo standard deviation of the
gradient and, per formula, mean(se) / sd (1 is right) and the coverage of gradient +- 1.96 se
around the mean of the gradient over replications (coverage of the estimator's own mean, so
the smoothing bias does not enter).

Run: PYTHONPATH=python-package/src python3 bench/npconv_gradient_se_mc.py [R]
"""
import sys
import time

import numpy as np

import attnreg


def run(n, h, R, seed=0, fixed_design=False):
    rng = np.random.default_rng(seed)
    x0 = rng.uniform(size=n)
    Q = np.array([[0.15], [0.3], [0.5], [0.7], [0.85]])
    G = np.empty((R, len(Q)))
    Sa = np.empty_like(G)
    Sn = np.empty_like(G)
    for r in range(R):
        x = x0 if fixed_design else rng.uniform(size=n)
        y = np.sin(2 * np.pi * x) + 0.5 * x + (0.2 + 0.3 * x) * rng.normal(size=n)
        m = attnreg.NadarayaWatson(bandwidth=[h]).fit(x[:, None], y)
        g, sa = m.gradient(Q, return_se=True, se="asymptotic")
        _, sn = m.gradient(Q, return_se=True, se="np")
        G[r], Sa[r], Sn[r] = g[:, 0], sa[:, 0], sn[:, 0]
    sd = G.std(axis=0, ddof=1)
    mu = G.mean(axis=0)
    rows = []
    for k, q in enumerate(Q[:, 0]):
        cov_a = np.mean(np.abs(G[:, k] - mu[k]) <= 1.96 * Sa[:, k])
        cov_n = np.mean(np.abs(G[:, k] - mu[k]) <= 1.96 * Sn[:, k])
        rows.append((n, h, q, sd[k], Sa[:, k].mean() / sd[k], Sn[:, k].mean() / sd[k], cov_a,
                     cov_n))
    return rows


def main():
    R = int(sys.argv[1]) if len(sys.argv) > 1 else 500
    t0 = time.process_time()
    print(f"R = {R} replications; columns: n, h, x, MC sd of the gradient, mean se / sd and "
          "coverage of +-1.96 se (around the estimator's mean) for asymptotic and np")
    for fixed in (False, True):
        print()
        print("design drawn anew each replication" if not fixed else
              "design fixed (x drawn once; only the errors vary: the variance both formulas "
              "estimate, conditional on the regressors)")
        print()
        print("| n | h | x | MC sd | asymptotic se/sd | np se/sd | asymptotic cover | np cover |")
        print("|---|---|---|---|---|---|---|---|")
        for n in (400, 1500):
            for h in (0.06, 0.1):
                for row in run(n, h, R, fixed_design=fixed):
                    print("| %d | %.2f | %.2f | %.3f | %.3f | %.3f | %.3f | %.3f |" % row)
    print(f"CPU seconds: {time.process_time() - t0:.1f}")


if __name__ == "__main__":
    main()
