"""Where does the pointwise RBC coverage gap come from: the variance, the data-driven bandwidth,
or the curvature left in the local residuals?

    python3 bench/rbc_pointwise_sources.py fixed-h D N TRUTH KERNEL REPS
    python3 bench/rbc_pointwise_sources.py pilot-degree D N TRUTH KERNEL REPS [NOISE]
    python3 bench/rbc_pointwise_sources.py exact-null D N TRUTH KERNEL REPS [NOISE]
    python3 bench/rbc_pointwise_sources.py hc3-null D N TRUTH KERNEL REPS [NOISE]

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
exact-null    at the data-driven vector, "local" studentised with sigma^2(x) from the residuals
              of a local linear, quadratic (the pilot's degree) or quadratic-plus-cubes fit in
              the window, each against the 0.95 quantile of |t| under the statistic's own null
              (normal errors with a constant variance in the window), simulated with 2,000
              draws per point (null_draws): columns local_x, quad_x, cubic_x; and "sel", the
              cubic residuals where their drop below the linear ones exceeds sqrt(2) null
              standard deviations (sel_x with its null quantile) (seed [91, d, n, ...]).
hc3-null      diagnose's HC3 t-statistic against the 0.95 quantile of its own null, simulated
              (HC3_x; seed [123, d, n, ...]).
Results: bench/results/rbc_pointwise_variance.md ("Bandwidth randomness and curvature", and
"The statistic's own null").
"""
import sys

import numpy as np

from attnreg import LocalLinear, _core
from attnreg.bandwidth import mse_dpi

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from rbc_montecarlo import TRUTH, points  # noqa: E402
from rbc_pointwise_variance import (Z, coverage_cell, draw, kernel_weights,  # noqa: E402
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


def null_draws(W, w, designs, draws, seed):
    """The studentised statistic under its own null, simulated: eps ~ N(0, I) (sigma cancels),
    t0 = W'eps / sqrt(sum W^2 s2(eps)) for the pooled residual variance s2 of each residual
    design in `designs` (the window's local polynomials), and the s2(eps) themselves.
    Returns (t0 per design: draws-vector, s2 per design)."""
    rng = np.random.default_rng(seed)
    E = rng.standard_normal((len(W), draws))
    num = W @ E
    sw = np.sqrt(w)
    t0, s2 = [], []
    for Q, den in designs:
        R = sw[:, None] * E
        R -= Q @ (Q.T @ R)
        v = np.sum(R * R, axis=0) / den
        s2.append(v)
        t0.append(num / np.sqrt(np.sum(W * W) * v))
    return t0, s2


def exact_null(d, n, truth, kernel, reps, noise, draws=2000):
    """cov_type="local" studentised, with the 0.95 critical value of |t| from the statistic's
    own finite-sample null (homoskedastic normal errors in the window, no misfit): the
    self-normalisation (W and the pooled residuals share rows) and the few residual degrees
    of freedom both enter, unlike a Satterthwaite t. And a residual degree chosen per point:
    sigma^2 from the local linear residuals, or from a local quadratic with pure cubes where
    the drop s2_lin - s2_hi exceeds sqrt(2) times its null sd (the point where the misfit it
    removes outweighs the noise it adds)."""
    rng = np.random.default_rng([91, d, n, len(truth), len(kernel), len(noise)])

    def per_point(X, y, est, x0, tk, k):
        h = np.asarray(est.bandwidth_, float)
        tl = rbc_t(est, x0, tk, "local")[0]
        t3 = rbc_t(est, x0, tk, "HC3")[0]
        cm = est._stats_model()
        W = est.attention_weights(x0[None])[0] - _core.bias_weights_multivariate(
            cm, x0[None], -1, [], 21)[0]
        U = (X - x0) / h
        w = kernel_weights(U, kernel)
        S = (w > 0) | (W != 0)
        w, W, U, ys = w[S], W[S], U[S], y[S]
        sw = np.sqrt(w)
        des, s2 = [], []
        Zq = quad_terms(U)
        for Zd in (Zq[:, :1 + d], Zq, np.column_stack([Zq, U ** 3])):
            Q, r = weighted_residuals(Zd, sw, ys)
            den = np.sum(w * (1 - np.sum(Q * Q, axis=1)))
            des.append((Q, den))
            s2.append(r @ r / den)
        t0, s20 = null_draws(W, w, des, draws, [7, k, int(1e6 * abs(tk)) % 99991])
        crit = [np.quantile(np.abs(t), 0.95) for t in t0]
        fbc = W @ ys
        sw2 = np.sum(W * W)
        tt = [(fbc - tk) / np.sqrt(sw2 * v) for v in s2]
        # the residual degree: quadratic + cubes where its drop is significant
        sd_drop = np.std(s20[0] - s20[2])
        hi = (s2[0] - s2[2]) > np.sqrt(2) * sd_drop * s2[2]
        j = 2 if hi else 0
        return {"HC3": t3, "local": tl,
                "local_x": tt[0] * Z / crit[0],
                "quad_x": tt[1] * Z / crit[1],
                "cubic_x": tt[2] * Z / crit[2],
                "sel": tt[j], "sel_x": tt[j] * Z / crit[j],
                "crit": crit[0], "hi": float(hi)}

    rows = replicate(rng, d, kernel, n, truth, noise, reps, per_point,
                     (ValueError, ArithmeticError, RuntimeError, np.linalg.LinAlgError))
    names = ("HC3", "local", "local_x", "quad_x", "cubic_x", "sel", "sel_x")
    for k in range(len(rows[0])):
        v = [r[k] for r in rows if r[k] is not None]
        cells = " ".join(f"{c} {coverage_cell([x[c] for x in v])}" for c in names)
        print(f"exact-null d={d} n={n} {truth} {kernel} {noise} point {k} R={len(v)} {cells} "
              f"crit {np.mean([x['crit'] for x in v]):.2f} hi {np.mean([x['hi'] for x in v]):.2f}",
              flush=True)


def hc3_null(d, n, truth, kernel, reps, noise, draws=2000):
    """diagnose's HC3 t-statistic against the 0.95 quantile of its own null, simulated
    (draws per point): e ~ N(0, I) over the training rows, the HC3 variance sum_i W_i^2
    ((I - H) e)_i^2 / (1 - H_ii)^2 recomputed from e with the fit's hat-matrix rows H at the
    rows W weighs (the idea of cov_type="local"'s critical values carried to HC3)."""
    rng = np.random.default_rng([123, d, n, len(truth), len(kernel)])

    def per_point(X, y, est, x0, tk, k):
        t3 = rbc_t(est, x0, tk, "HC3")[0]
        W = est.attention_weights(x0[None])[0] - _core.bias_weights_multivariate(
            est._stats_model(), x0[None], -1, [], 21)[0]
        S = np.flatnonzero(W != 0)
        H = est.attention_weights(X[S])  # the hat matrix's rows at the rows W weighs
        lev = H[np.arange(len(S)), S]
        E = np.random.default_rng(k).standard_normal((n, draws))
        R = E[S] - H @ E
        v = np.sum((W[S] ** 2 / (1 - lev) ** 2)[:, None] * R * R, axis=0)
        c = np.quantile(np.abs((W @ E) / np.sqrt(v)), 0.95)
        return {"HC3": t3, "HC3_x": t3 * Z / c, "c": c}

    rows = replicate(rng, d, kernel, n, truth, noise, reps, per_point)
    for k in range(len(rows[0])):
        v = [r[k] for r in rows if r[k] is not None]
        print(f"hc3-null d={d} n={n} {truth} {kernel} {noise} point {k} R={len(v)} "
              f"HC3 {coverage_cell([x['HC3'] for x in v])} "
              f"HC3_x {coverage_cell([x['HC3_x'] for x in v])} "
              f"crit {np.mean([x['c'] for x in v]):.2f}", flush=True)


if __name__ == "__main__":
    a = sys.argv[1:]
    if a[0] == "fixed-h":
        fixed_h(int(a[1]), int(a[2]), a[3], a[4], int(a[5]))
    elif a[0] == "pilot-degree":
        pilot_degree(int(a[1]), int(a[2]), a[3], a[4], int(a[5]),
                     a[6] if len(a) > 6 else "homoskedastic")
    elif a[0] == "hc3-null":
        hc3_null(int(a[1]), int(a[2]), a[3], a[4], int(a[5]),
                 a[6] if len(a) > 6 else "homoskedastic")
    elif a[0] == "exact-null":
        exact_null(int(a[1]), int(a[2]), a[3], a[4], int(a[5]),
                   a[6] if len(a) > 6 else "homoskedastic")
    else:
        sys.exit(__doc__)
