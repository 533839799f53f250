"""Where does the pointwise RBC coverage gap come from: the variance, the data-driven bandwidth,
or the curvature left in the local residuals?

    python3 bench/rbc_pointwise_sources.py fixed-h D N TRUTH KERNEL REPS
    python3 bench/rbc_pointwise_sources.py pilot-degree D N TRUTH KERNEL REPS [NOISE]

Design of bench/rbc_montecarlo.py (x ~ U[-1, 1]^d, its truths, noise and four points; local
linear; diagnose's RBC pilot, rho = 1). Each line printed is one point: the coverage of the
0.95 RBC interval and, in brackets, the sd of t = (fit_bc - m(x)) / se_bc.

fixed-h       every replication fits each point at one fixed vector, the mean of the
              pointwise mse_dpi vectors over 60 earlier replications of the design, instead
              of its own data-driven vector: HC3 and cov_type="local" with the randomness of
              the bandwidth taken out (seed [5, d, n]).
pilot-degree  at the data-driven mse_dpi vector h, diagnose's HC3 and "local", and "local"
              with sigma^2(x) from the residuals of a local quadratic (the RBC pilot's degree)
              in the same window instead of the local linear fit's: sum_i w_i r_i^2 /
              sum_i w_i (1 - H_ii), the kernel weights w_i of the fit at h (Gaussian or
              Epanechnikov product, computed here in numpy), H the weighted hat matrix. Its
              standard error is diagnose's "local" one times sqrt(s2_quadratic / s2_linear),
              both computed here, so that sum_i W_i^2 is diagnose's; and "max", the larger
              of the HC3 and "local" standard errors (the guard against a noisy robust
              standard error in Angrist and Pischke 2009, Mostly Harmless Econometrics,
              section 8.2); and "curvature", "local" less the window's curvature energy
              estimated from a local quadratic at twice the bandwidth and debiased for its
              noise (curvature_corrected_variance) (seed [77, d, n, len(truth), len(kernel),
              len(noise)]).
Results: bench/results/rbc_pointwise_variance.md ("Bandwidth randomness and curvature").
"""
import sys

import numpy as np

from attnreg import LocalLinear
from attnreg.bandwidth import mse_dpi

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from rbc_montecarlo import TRUTH, points  # noqa: E402
from rbc_pointwise_variance import (coverage_cell, draw, kernel_weights,  # noqa: E402
                                    quad_terms, rbc_t, replicate)


def fixed_h(d, n, truth, kernel, reps):
    P, _ = points(d)
    m = TRUTH[truth]
    rng = np.random.default_rng([5, d, n])
    H = np.zeros((len(P), d))
    for _ in range(60):
        X, y = draw(rng, d, n, m, "homoskedastic")
        for k in range(len(P)):
            H[k] += mse_dpi(X, y, P[k], kernel=kernel) / 60
    t = {(k, c): [] for k in range(len(P)) for c in ("HC3", "local")}
    for _ in range(reps):
        X, y = draw(rng, d, n, m, "homoskedastic")
        for k in range(len(P)):
            est = LocalLinear(kernel=kernel, bandwidth=H[k]).fit(X, y)
            for c in ("HC3", "local"):
                t[k, c].append(rbc_t(est, P[k], m(P[k][None])[0], c)[0])
    for k in range(len(P)):
        print(f"fixed-h d={d} n={n} {truth} {kernel} point {k} h={np.round(H[k], 3).tolist()} "
              f"HC3 {coverage_cell(t[k, 'HC3'])} local {coverage_cell(t[k, 'local'])}")


def weighted_residuals(Z, sw, y):
    """Q of the weighted design sqrt(w) Z and the weighted residuals sqrt(w) (y - Z beta)."""
    Q, _ = np.linalg.qr(Z * sw[:, None])
    return Q, sw * y - Q @ (Q.T @ (sw * y))


def quadratic_variance(X, y, x0, h, kernel):
    """sigma^2(x0) from the residuals of a local quadratic in the window at h:
    sum_i w_i r_i^2 / sum_i w_i (1 - H_ii)."""
    U = (X - x0) / h
    w = kernel_weights(U, kernel)
    S = w > 0
    Q, r = weighted_residuals(quad_terms(U[S]), np.sqrt(w[S]), y[S])
    return r @ r / np.sum(w[S] * (1 - np.sum(Q * Q, axis=1)))


def curvature_corrected_variance(X, y, x0, h, kernel, wide=2.0):
    """The local linear residual variance at h (cov_type="local"'s) minus the window's
    curvature energy, the curvature taken from a local quadratic at the wider bandwidth
    wide * h and debiased for its own noise (positive part): sigma^2 = s2_lin - max(0, a'Ga -
    tr(G Cov a)), floored at s2_lin / 2. G = R'WR / den: R the quadratic features u_a u_b
    (u = (x - x0) / h) with their weighted projection on (1, u) removed, so a'Ga is what a
    quadratic a adds to the window's normalised sum of squared linear residuals. Returns
    (sigma^2, s2_lin)."""
    d = X.shape[1]
    U = (X - x0) / h
    w = kernel_weights(U, kernel)
    S = w > 0
    sw = np.sqrt(w[S])
    Zq = quad_terms(U[S])
    Q, r = weighted_residuals(Zq[:, :1 + d], sw, y[S])
    den = np.sum(w[S] * (1 - np.sum(Q * Q, axis=1)))
    s2_lin = r @ r / den
    Rw = Zq[:, 1 + d:] * sw[:, None]
    Rw -= Q @ (Q.T @ Rw)  # sqrt(W) R
    G = Rw.T @ Rw / den
    # the wide quadratic, in the same units u
    wb = kernel_weights(U / wide, kernel)
    B = wb > 0
    Zb = quad_terms(U[B])
    Ai = np.linalg.inv(Zb.T @ (Zb * wb[B][:, None]))
    coef = Ai @ (Zb.T @ (wb[B] * y[B]))
    cov = s2_lin * Ai @ (Zb.T @ (Zb * (wb[B] ** 2)[:, None])) @ Ai
    a, Ca = coef[1 + d:], cov[1 + d:, 1 + d:]
    energy = max(0.0, a @ G @ a - np.trace(G @ Ca))
    return max(s2_lin - energy, 0.5 * s2_lin), s2_lin


CANDIDATES = ("HC3", "local", "quadratic", "max", "curvature")


def pilot_degree(d, n, truth, kernel, reps, noise):
    rng = np.random.default_rng([77, d, n, len(truth), len(kernel), len(noise)])

    def per_point(X, y, est, x0, tk, k):
        h = np.asarray(est.bandwidth_, float)
        tl = rbc_t(est, x0, tk, "local")[0]
        t3 = rbc_t(est, x0, tk, "HC3")[0]
        s2c, s2l = curvature_corrected_variance(X, y, x0, h, kernel)
        s2q = quadratic_variance(X, y, x0, h, kernel)
        return {"HC3": t3, "local": tl, "quadratic": tl / np.sqrt(s2q / s2l),
                "max": t3 if abs(t3) < abs(tl) else tl,  # the larger standard error
                "curvature": tl / np.sqrt(s2c / s2l)}

    # a refused step (too few rows in a window) is left out, as in the Monte Carlo
    rows = replicate(rng, d, kernel, n, truth, noise, reps, per_point,
                     (ValueError, ArithmeticError, RuntimeError))
    for k in range(len(rows[0])):
        v = [r[k] for r in rows if r[k] is not None]
        cells = " ".join(f"{c} {coverage_cell([x[c] for x in v])}" for c in CANDIDATES)
        print(f"pilot-degree d={d} n={n} {truth} {kernel} {noise} point {k} R={len(v)} {cells}")


if __name__ == "__main__":
    a = sys.argv[1:]
    if a[0] == "fixed-h":
        fixed_h(int(a[1]), int(a[2]), a[3], a[4], int(a[5]))
    elif a[0] == "pilot-degree":
        pilot_degree(int(a[1]), int(a[2]), a[3], a[4], int(a[5]),
                     a[6] if len(a) > 6 else "homoskedastic")
    else:
        sys.exit(__doc__)
