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
import itertools
import sys

import numpy as np

from attnreg import LocalLinear
from attnreg.bandwidth import mse_dpi
from attnreg.diagnostics import diagnose

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from rbc_montecarlo import NOISE, TRUTH, points  # noqa: E402
from rbc_pointwise_variance import coverage_cell  # noqa: E402


def sample(rng, d, n, m, noise):
    X = rng.uniform(-1, 1, (n, d))
    return X, m(X) + NOISE[noise](X) * rng.standard_normal(n)


def t_stat(est, x0, truth, cov):
    D = diagnose(est, x0[None], cov_type=cov)
    return float((D["fit_bc"].iloc[0] - truth) / D["se_bc"].iloc[0]), D


def fixed_h(d, n, truth, kernel, reps):
    P, _ = points(d)
    m = TRUTH[truth]
    rng = np.random.default_rng([5, d, n])
    H = np.zeros((len(P), d))
    for _ in range(60):
        X, y = sample(rng, d, n, m, "homoskedastic")
        for k in range(len(P)):
            H[k] += mse_dpi(X, y, P[k], kernel=kernel) / 60
    t = {(k, c): [] for k in range(len(P)) for c in ("HC3", "local")}
    for _ in range(reps):
        X, y = sample(rng, d, n, m, "homoskedastic")
        for k in range(len(P)):
            est = LocalLinear(kernel=kernel, bandwidth=H[k]).fit(X, y)
            for c in ("HC3", "local"):
                t[k, c].append(t_stat(est, P[k], m(P[k][None])[0], c)[0])
    for k in range(len(P)):
        print(f"fixed-h d={d} n={n} {truth} {kernel} point {k} h={np.round(H[k], 3).tolist()} "
              f"HC3 {coverage_cell(t[k, 'HC3'])} local {coverage_cell(t[k, 'local'])}")


def kernel_weights(U, kernel):
    """Product kernel weights at u (the Epanechnikov without its constant)."""
    return (np.exp(-0.5 * np.sum(U * U, axis=1)) if kernel == "gaussian"
            else np.prod(np.clip(1 - U * U, 0, None), axis=1))


def window_variance(X, y, x0, h, kernel, degree):
    """sigma^2(x0) from the residuals of a local polynomial of `degree` in the window at h."""
    U = (X - x0) / h
    w = kernel_weights(U, kernel)
    S = w > 0
    U, w = U[S], w[S]
    cols = [np.ones(len(U))] + [U[:, j] for j in range(U.shape[1])]
    if degree >= 2:
        cols += [U[:, a] * U[:, b] for a, b in
                 itertools.combinations_with_replacement(range(U.shape[1]), 2)]
    Q, _ = np.linalg.qr(np.column_stack(cols) * np.sqrt(w)[:, None])
    ys = np.sqrt(w) * y[S]
    r = ys - Q @ (Q.T @ ys)
    return r @ r / np.sum(w * (1 - np.sum(Q * Q, axis=1)))


def curvature_corrected_variance(X, y, x0, h, kernel, wide=2.0):
    """The local linear residual variance at h minus the window's curvature energy, the
    curvature taken from a local quadratic at the wider bandwidth wide * h and debiased for
    its own noise (positive part): sigma^2 = s2_lin - max(0, a'Ga - tr(G Cov a)), floored at
    s2_lin / 2. G = R'WR / den: R the quadratic features u_a u_b (u = (x - x0) / h) with
    their weighted projection on (1, u) removed, so a'Ga is what a quadratic a adds to the
    window's normalised sum of squared linear residuals."""
    U = (X - x0) / h
    w = kernel_weights(U, kernel)
    S = w > 0
    Us, ws, ys = U[S], w[S], y[S]
    Z1 = np.column_stack([np.ones(len(Us)), Us])
    pairs = list(itertools.combinations_with_replacement(range(U.shape[1]), 2))
    Q2 = np.column_stack([Us[:, a] * Us[:, b] for a, b in pairs])
    sw = np.sqrt(ws)
    Q, _ = np.linalg.qr(Z1 * sw[:, None])
    den = np.sum(ws * (1 - np.sum(Q * Q, axis=1)))
    r = sw * ys - Q @ (Q.T @ (sw * ys))
    s2_lin = r @ r / den
    Rw = Q2 * sw[:, None] - Q @ (Q.T @ (Q2 * sw[:, None]))  # sqrt(W) R
    G = Rw.T @ Rw / den
    # the wide quadratic, in the same units u
    wb = kernel_weights(U / wide, kernel)
    B = wb > 0
    Zb = np.column_stack([np.ones(B.sum()), U[B]]
                         + [U[B][:, a] * U[B][:, b] for a, b in pairs])
    A = Zb.T @ (Zb * wb[B][:, None])
    Ai = np.linalg.inv(A)
    coef = Ai @ (Zb.T @ (wb[B] * y[B]))
    cov = s2_lin * Ai @ (Zb.T @ (Zb * (wb[B] ** 2)[:, None])) @ Ai
    k = 1 + U.shape[1]
    a, Ca = coef[k:], cov[k:, k:]
    energy = max(0.0, a @ G @ a - np.trace(G @ Ca))
    return max(s2_lin - energy, 0.5 * s2_lin), s2_lin


def pilot_degree(d, n, truth, kernel, reps, noise):
    P, _ = points(d)
    m = TRUTH[truth]
    rng = np.random.default_rng([77, d, n, len(truth), len(kernel), len(noise)])
    cands = ("HC3", "local", "quadratic", "max", "curvature")
    t = {(k, c): [] for k in range(len(P)) for c in cands}
    for _ in range(reps):
        X, y = sample(rng, d, n, m, noise)
        for k in range(len(P)):
            tk = m(P[k][None])[0]
            try:
                h = mse_dpi(X, y, P[k], kernel=kernel)
                est = LocalLinear(kernel=kernel, bandwidth=h).fit(X, y)
                tl, D = t_stat(est, P[k], tk, "local")
                t3 = t_stat(est, P[k], tk, "HC3")[0]
                ratio = (window_variance(X, y, P[k], h, kernel, 2)
                         / window_variance(X, y, P[k], h, kernel, 1))
                s2c, s2l = curvature_corrected_variance(X, y, P[k], h, kernel)
            except (ValueError, ArithmeticError, RuntimeError):
                continue  # a refused step (too few rows in a window): left out, as in the MC
            t[k, "local"].append(tl)
            t[k, "HC3"].append(t3)
            t[k, "quadratic"].append(tl / np.sqrt(ratio))
            t[k, "max"].append(t3 if abs(t3) < abs(tl) else tl)  # the larger standard error
            t[k, "curvature"].append(tl / np.sqrt(s2c / s2l))
    for k in range(len(P)):
        cells = " ".join(f"{c} {coverage_cell(t[k, c])}" for c in cands)
        print(f"pilot-degree d={d} n={n} {truth} {kernel} {noise} point {k} "
              f"R={len(t[k, 'local'])} {cells}")


if __name__ == "__main__":
    a = sys.argv[1:]
    if a[0] == "fixed-h":
        fixed_h(int(a[1]), int(a[2]), a[3], a[4], int(a[5]))
    elif a[0] == "pilot-degree":
        pilot_degree(int(a[1]), int(a[2]), a[3], a[4], int(a[5]),
                     a[6] if len(a) > 6 else "homoskedastic")
    else:
        sys.exit(__doc__)
