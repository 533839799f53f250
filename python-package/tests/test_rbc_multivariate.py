"""Multivariate robust bias correction and uniform bands (diagnose with several regressors).

The oracle is a direct float64 implementation of the bias-corrected smoother: the local linear
(or local constant) weights l(x) and the pilot local quadratic's coefficient weights G(x) from
their weighted normal equations (numpy lstsq), the bias weights
sum_{|a| = p+1..2} (sum_i l_i(x) u_i^a) G_a(x), u = (x_i - x) / b (Ruppert and Wand 1994,
Ann. Statist. 22(3); Calonico, Cattaneo and Farrell 2018, JASA 113(522)), and the HC0/HC3
variances of l - b_w. Tolerances: the solves are backward stable, so the weights agree to
about cond(sqrt(W) Z) times unit roundoff relative to their scale; we allow 1e3 times that.
"""
import warnings

import numpy as np
import pytest

from attnreg import LocalLinear, NadarayaWatson
from attnreg import _core
from attnreg.diagnostics import _fitted_core, diagnose

EPS = np.finfo(float).eps


def _kernel(X, x0, h, types, n_levels):
    w = np.ones(X.shape[0])
    for c, t in enumerate(types):
        if t == "c":
            u = (X[:, c] - x0[c]) / h[c]
            w *= np.exp(-0.5 * u * u)
        else:  # Aitchison-Aitken
            same = X[:, c] == x0[c]
            w *= np.where(same, 1 - h[c], h[c] / (n_levels[c] - 1))
    return w


def _wls_weights(Z, w):
    """Rows of (Z'WZ)^{-1} Z'W by least squares on sqrt(w) Z; also cond(sqrt(w) Z)."""
    s = np.sqrt(w / w.max())
    Zs = Z * s[:, None]
    C = np.linalg.lstsq(Zs, np.diag(s), rcond=None)[0]
    return C, np.linalg.cond(Zs[s > 0])


def _oracle(X, y, Xe, h, b, types, degree):
    cont = [c for c, t in enumerate(types) if t == "c"]
    nl = {c: len(np.unique(X[:, c])) for c in range(X.shape[1]) if types[c] != "c"}
    dc = len(cont)
    pairs = [(a, e) for a in range(dc) for e in range(a, dc)]

    def smoother(P):
        rows, conds = [], []
        for x0 in P:
            w = _kernel(X, x0, h, types, nl)
            D = np.ones((len(y), 1))
            if degree == 1:
                D = np.column_stack([D, X[:, cont] - x0[cont]])
            C, k = _wls_weights(D, w)
            rows.append(C[0])
            conds.append(k)
        return np.array(rows), max(conds)

    L, k1 = smoother(Xe)
    Ltr, _ = smoother(X)
    B = np.zeros_like(L)
    kp = 0.0
    for j, x0 in enumerate(Xe):
        U = (X[:, cont] - x0[cont]) / b[cont]
        Z = np.column_stack([np.ones(len(y)), U] + [U[:, a] * U[:, e] for a, e in pairs])
        C, k = _wls_weights(Z, _kernel(X, x0, b, types, nl))
        kp = max(kp, k)
        first = 1 if degree == 0 else 1 + dc
        mom = L[j] @ Z
        B[j] = mom[first:] @ C[first:]
    e = y - Ltr @ y
    lev = np.diag(Ltr)
    return L, B, e, lev, max(k1, kp)


def _data(rng, n, d_cont, with_cat, ties):
    Xc = rng.uniform(-1, 1, size=(n, d_cont))
    if ties:
        Xc[: n // 4] = np.round(Xc[: n // 4], 1)  # repeated values (ties)
        Xc[n // 4: n // 4 + 5] = Xc[0]  # five identical rows
    cols = [Xc]
    types = "c" * d_cont
    if with_cat:
        cols.append(rng.integers(0, 3, size=(n, 1)).astype(float))
        types += "u"
    X = np.hstack(cols)
    y = np.sin(2 * Xc[:, 0]) + Xc[:, -1] ** 2 + (X[:, -1] * 0.3 if with_cat else 0) \
        + 0.2 * rng.standard_normal(n)
    return X, y, types


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("d_cont,with_cat,degree", [(2, True, 1), (3, True, 1), (2, False, 0),
                                                    (3, False, 1), (2, True, 0)])
def test_bias_corrected_smoother_matches_direct_oracle(seed, d_cont, with_cat, degree):
    rng = np.random.default_rng(100 * seed + 10 * d_cont + degree)
    n = 180
    X, y, types = _data(rng, n, d_cont, with_cat, ties=True)
    h = np.r_[rng.uniform(0.35, 0.6, d_cont), [0.2] if with_cat else []]
    b = h * rng.uniform(1.0, 1.5, h.size) if seed == 2 else h
    Est = LocalLinear if degree == 1 else NadarayaWatson
    est = Est(bandwidth=h, var_types=types).fit(X, y)
    Xe = np.vstack([X[:6], rng.uniform(-0.9, 0.9, size=(4, X.shape[1]))])
    if with_cat:
        Xe[6:, -1] = rng.integers(0, 3, 4)
    L, B, e, lev, kappa = _oracle(X, y, Xe, h, b, types, degree)
    tol = 1e3 * kappa * EPS
    Bc = _core.bias_weights_multivariate(_fitted_core(est), Xe, -1,
                                         [] if seed != 2 else list(b))
    pb = None if seed != 2 else b
    for cov, om in (("HC0", e ** 2), ("HC3", e ** 2 / (1 - lev) ** 2)):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            r = diagnose(est, Xe, cov_type=cov, pilot_bandwidth=pb)
        Lbc = L - B
        scale = np.abs(y).max()
        np.testing.assert_allclose(r["bias"], B @ y, rtol=0, atol=tol * scale * np.abs(B).sum(1).max() + tol)
        np.testing.assert_allclose(r["fit_bc"], Lbc @ y, rtol=0, atol=tol * scale * np.abs(Lbc).sum(1).max())
        se_bc = np.sqrt((Lbc ** 2) @ om)
        np.testing.assert_allclose(r["se_bc"], se_bc, rtol=tol * 10, atol=0)
        z = 1.959963984540054
        np.testing.assert_allclose(r["rbc_low"], r["fit_bc"] - z * r["se_bc"], rtol=1e-14)
        assert np.all(np.isfinite(r.to_numpy()))
        np.testing.assert_allclose(Bc, B, rtol=0, atol=tol * np.abs(B).max())


def test_bias_weights_exact_on_quadratic_truth():
    # For a quadratic regression function without noise the pilot local quadratic is exact,
    # so fit_bc = fit - bias recovers m(x) for local linear up to rounding.
    rng = np.random.default_rng(5)
    X = rng.uniform(-1, 1, size=(300, 2))
    m = lambda Z: 1 + Z[:, 0] - 2 * Z[:, 1] + 0.7 * Z[:, 0] ** 2 - Z[:, 0] * Z[:, 1] + 1.5 * Z[:, 1] ** 2
    y = m(X)
    est = LocalLinear(bandwidth=[0.5, 0.4]).fit(X, y)
    Xe = rng.uniform(-0.8, 0.8, size=(8, 2))
    r = diagnose(est, Xe, cov_type="HC0")
    assert np.abs(r["fit"] - m(Xe)).max() > 1e-3  # the conventional fit is biased
    np.testing.assert_allclose(r["fit_bc"], m(Xe), atol=1e-9)


def test_multivariate_bad_input():
    rng = np.random.default_rng(3)
    X = rng.uniform(size=(100, 2))
    y = X.sum(1) + rng.standard_normal(100)
    est = LocalLinear(bandwidth=[0.3, 0.3]).fit(X, y)
    with pytest.raises(ValueError, match="pilot_bandwidth: needs one value per column of X \\(2\\)"):
        diagnose(est, X[:3], pilot_bandwidth=[0.3, 0.3, 0.3])
    with pytest.raises(ValueError, match="pilot_bandwidth"):
        diagnose(est, X[:3], pilot_bandwidth=0.3)  # a scalar for two columns
    with pytest.raises(ValueError, match="level is a fraction"):
        diagnose(est, X[:3], level=95)
    with pytest.raises(ValueError, match="pilot_degree"):
        diagnose(est, X[:3], pilot_degree=3)
    # too few distinct values in a direction
    X2 = X.copy()
    X2[:, 1] = np.where(X[:, 1] > 0.5, 1.0, 0.0)
    est2 = LocalLinear(bandwidth=[0.3, 0.3]).fit(X2, y)
    with pytest.raises(ValueError, match="column 2 has 2 distinct"):
        diagnose(est2, X2[:3])
    # a compact kernel with only a few rows in the pilot window: refused without the
    # minimum-points rule, enlarged to 21 distinct rows with it (diagnose's default)
    est3 = LocalLinear(kernel="epanechnikov", bandwidth=[0.6, 0.6]).fit(X, y)
    far = np.array([[0.5, 0.5]])
    with pytest.raises((ValueError, RuntimeError, ArithmeticError), match="evaluation|pilot"):
        _core.bias_weights_multivariate(_fitted_core(est3), far, -1, [0.02, 0.02], bwcheck=0)
    assert np.all(np.isfinite(diagnose(est3, far, pilot_bandwidth=[0.02, 0.02]).to_numpy()))
    with pytest.raises(ValueError, match="replications"):
        diagnose(est, X[:3], uniform=True, replications=10)


def test_d1_columns_unchanged_by_vector_pilot():
    # d = 1: a length-1 pilot vector gives the scalar pilot's numbers exactly.
    rng = np.random.default_rng(8)
    x = rng.uniform(size=(150, 1))
    y = np.sin(4 * x[:, 0]) + 0.3 * rng.standard_normal(150)
    est = LocalLinear(bandwidth=[0.15]).fit(x, y)
    a = diagnose(est, x[:10], pilot_bandwidth=0.2)
    b = diagnose(est, x[:10], pilot_bandwidth=[0.2])
    assert a.equals(b)


def test_uniform_critical_value_oracle_and_seed():
    # Independent points: the sup-t critical value solves (2 Phi(c) - 1)^m = level.
    from scipy.stats import norm
    m, level = 20, 0.95
    c_exact = norm.ppf(0.5 + 0.5 * level ** (1 / m))
    R = 20000
    c = _core.sup_t_critical_value(np.eye(m) * 3.0, level, R, 11)
    # quantile of R draws: sd of the order statistic ~ sqrt(p(1-p)/R) / density of max |Z|
    f = m * (2 * norm.cdf(c_exact) - 1) ** (m - 1) * 2 * norm.pdf(c_exact)
    assert abs(c - c_exact) < 5 * np.sqrt(level * (1 - level) / R) / f
    # perfectly correlated points: the pointwise normal quantile
    c1 = _core.sup_t_critical_value(np.ones((m, m)) * 2.0, level, R, 11)
    assert abs(c1 - norm.ppf(0.975)) < 5 * np.sqrt(level * (1 - level) / R) / (2 * norm.pdf(1.96))
    assert c == _core.sup_t_critical_value(np.eye(m) * 3.0, level, R, 11)


def test_diagnose_uniform_columns():
    rng = np.random.default_rng(4)
    X = rng.uniform(-1, 1, size=(300, 2))
    y = X[:, 0] ** 2 + X[:, 1] + 0.3 * rng.standard_normal(300)
    est = LocalLinear(bandwidth=[0.4, 0.4]).fit(X, y)
    g = np.stack(np.meshgrid(np.linspace(-0.8, 0.8, 5), np.linspace(-0.8, 0.8, 5)), -1).reshape(-1, 2)
    r1 = diagnose(est, g, uniform=True, replications=2000, random_state=7)
    r2 = diagnose(est, g, uniform=True, replications=2000, random_state=7)
    assert r1.equals(r2) and r1.attrs == r2.attrs
    z = 1.959963984540054
    assert r1.attrs["crit_uniform"] > z and r1.attrs["crit_uniform_rbc"] > z
    assert np.all(r1["uniform_rbc_low"] < r1["rbc_low"]) and np.all(r1["uniform_high"] > r1["ci_high"])
    np.testing.assert_allclose(r1["uniform_low"], r1["fit"] - r1.attrs["crit_uniform"] * r1["se"],
                               rtol=1e-14)


def test_small_monte_carlo_rbc_coverage_d2():
    # 300 replications, d = 2, local linear, Gaussian kernel, n = 400, h = 0.8 n^(-1/6) x sd,
    # an interior point (0, 0) and a boundary point (0.9, -0.9) of the unit square [-1, 1]^2.
    # Coverage of a 95% RBC interval: binomial sd sqrt(.95 .05 / 300) = 0.0126; the band
    # [0.88, 0.995] is about -5.5 / +3.5 sd around 0.95 (leaves room for the finite-n error of RBC).
    rng = np.random.default_rng(2024)
    pts = np.array([[0.0, 0.0], [0.9, -0.9]])
    mfun = lambda Z: np.sin(1.5 * Z[:, 0]) + Z[:, 1] ** 2
    truth = mfun(pts)
    n, reps = 400, 300
    h = 0.6 * n ** (-1 / 6)
    hit = np.zeros(2)
    hit_conv = np.zeros(2)
    for _ in range(reps):
        X = rng.uniform(-1, 1, size=(n, 2))
        y = mfun(X) + 0.3 * rng.standard_normal(n)
        est = LocalLinear(bandwidth=[h, h]).fit(X, y)
        r = diagnose(est, pts, cov_type="HC3")
        hit += (r["rbc_low"] <= truth) & (truth <= r["rbc_high"])
        hit_conv += (r["ci_low"] <= truth) & (truth <= r["ci_high"])
    cov = hit / reps
    assert np.all(cov >= 0.88) and np.all(cov <= 0.995), cov


def _epanechnikov_ll_rows(X, P, h):
    """Local linear attention rows at P with the product Epanechnikov kernel (support |u| <= 1),
    by least squares on the weighted design (a direct oracle, no attnreg code)."""
    rows = []
    for x0 in P:
        u = (X - x0) / h
        w = np.prod(np.clip(1 - u * u, 0, None), axis=1)
        D = np.column_stack([np.ones(len(X)), X - x0])
        C, _ = _wls_weights(D, w)
        rows.append(C[0])
    return np.array(rows)


@pytest.mark.parametrize("seed", [0, 1])
def test_robust_variance_needs_only_the_rows_in_the_window(seed):
    # A training row whose own local linear fit does not exist (an isolated row under a compact
    # kernel: its window holds only itself) must not make HC0/HC2/HC3 undefined at points whose
    # windows (fit and bias pilot) do not reach it; hc1 (n - tr L) and the homoskedastic
    # variance need every row's fit and still refuse, and a point whose window holds the row
    # is refused naming it.
    rng = np.random.default_rng(seed)
    n, h = 300, np.array([0.45, 0.5])
    X = rng.uniform(-1, 1, size=(n, 2))
    X[7] = [1.3, 1.3]  # isolated: no other row within one bandwidth of it
    near = (np.abs(X[:, 0] - 1.3) < h[0]) & (np.abs(X[:, 1] - 1.3) < h[1])
    near[7] = False
    X[near] *= 0.5
    y = np.sin(2 * X[:, 0]) + X[:, 1] ** 2 + 0.2 * rng.standard_normal(n)
    est = LocalLinear(kernel="epanechnikov", bandwidth=h).fit(X, y)
    P = np.array([[0.0, 0.0], [-0.3, 0.4], [0.5, -0.5]])
    Bc = _core.bias_weights_multivariate(_fitted_core(est), P, -1, [])
    L = _epanechnikov_ll_rows(X, P, h)
    S = np.flatnonzero((np.abs(L).sum(0) + np.abs(Bc).sum(0)) > 0)
    assert 7 not in S
    Ltr = _epanechnikov_ll_rows(X, X[S], h)  # the fits at the window's own rows
    e = y[S] - Ltr @ y
    lev = Ltr[np.arange(len(S)), S]
    kappa = np.linalg.cond(np.column_stack([np.ones(n), X]))
    tol = 1e4 * kappa * EPS
    Lbc = (L - Bc)[:, S]
    for cov, om in (("HC0", e ** 2), ("HC2", e ** 2 / (1 - lev)), ("HC3", e ** 2 / (1 - lev) ** 2)):
        r = diagnose(est, P, cov_type=cov)
        np.testing.assert_allclose(r["se_bc"], np.sqrt(Lbc ** 2 @ om), rtol=tol, atol=0)
        np.testing.assert_allclose(r["se"], np.sqrt(L[:, S] ** 2 @ om), rtol=tol, atol=0)
        g = diagnose(est, P, cov_type=cov, uniform=True, uniform_method="gaussian",
                     random_state=1)
        assert np.all(np.isfinite(g.to_numpy()))
    for cov in ("HC1", "nonrobust"):
        with pytest.raises(_core.NumericalError, match=r"row 8: .*singular"):
            diagnose(est, P, cov_type=cov)
    with pytest.raises(_core.NumericalError, match=r"inside an evaluation point's window\) row 8"):
        diagnose(est, np.array([[0.95, 0.95]]), cov_type="HC3")


def _local_window(X, x0, h, types, nl):
    """Kernel weights w at x0 and an orthonormal basis Q of sqrt(w) Z, Z the local quadratic
    (the RBC pilot's degree) in the continuous columns with all squares and cross products."""
    cont = [c for c, t in enumerate(types) if t == "c"]
    w = _kernel(X, x0, h, types, nl)
    U = (X[:, cont] - x0[cont]) / h[cont]
    k = len(cont)
    Z = np.column_stack([np.ones(len(w))] + [U[:, a] for a in range(k)]
                        + [U[:, a] * U[:, b] for a in range(k) for b in range(a, k)])
    Q, _ = np.linalg.qr(Z * np.sqrt(w)[:, None])
    return w, Q


def _local_sigma2(X, y, x0, h, types, nl):
    """sigma^2(x0) = sum w r^2 / sum w (1 - H_ii) of the local quadratic at x0 (direct numpy)."""
    w, Q = _local_window(X, x0, h, types, nl)
    sw = np.sqrt(w)
    r = sw * y - Q @ (Q.T @ (sw * y))
    lev = np.sum(Q ** 2, axis=1)
    return (r @ r) / np.sum(w * (1 - lev))


def _null_quantile(a, w, Q, level, draws, seed):
    """The level quantile of |a'e| / sqrt(sum a^2 sigma^2(e)) for e ~ N(0, I): the studentised
    statistic under its own null, simulated (sigma^2(e) the pooled residual variance of e)."""
    rng = np.random.default_rng(seed)
    den = np.sum(w * (1 - np.sum(Q ** 2, axis=1)))
    out = []
    for _ in range(draws // 20000):
        E = rng.standard_normal((len(w), 20000))
        R = np.sqrt(w)[:, None] * E
        R -= Q @ (Q.T @ R)
        out.append((a @ E) / np.sqrt(np.sum(a * a) * np.sum(R * R, axis=0) / den))
    return np.quantile(np.abs(np.concatenate(out)), level)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("d_cont,with_cat,degree", [(1, False, 1), (2, True, 1), (3, False, 1),
                                                    (2, False, 0)])
def test_local_variance_matches_direct_oracle(seed, d_cont, with_cat, degree):
    rng = np.random.default_rng(500 + 100 * seed + 10 * d_cont + degree)
    n = 160
    X, y, types = _data(rng, n, d_cont, with_cat, ties=True)
    X[:, :d_cont] += 40.0 * seed  # a shifted origin
    h = np.r_[rng.uniform(0.3, 0.6, d_cont), [0.2] if with_cat else []]
    if d_cont == 3:
        h[:3] += 0.3  # ten coefficients: a window with residual degrees of freedom
    Est = LocalLinear if degree == 1 else NadarayaWatson
    est = Est(bandwidth=h, var_types=types).fit(X, y)
    Xe = np.vstack([X[:5], X[[0]]])
    Xe[5, :d_cont] += 0.05  # off the training rows (continuous columns only)
    nl = {c: len(np.unique(X[:, c])) for c in range(X.shape[1]) if types[c] != "c"}
    L, B, _, _, kappa = _oracle(X, y, Xe, h, h, types, degree)
    s2 = np.array([_local_sigma2(X, y, x0, h, types, nl) for x0 in Xe])
    tol = 1e3 * kappa * EPS
    r = diagnose(est, Xe, cov_type="local")
    np.testing.assert_allclose(r["se"], np.sqrt(s2 * (L ** 2).sum(1)), rtol=tol, atol=0)
    np.testing.assert_allclose(r["ci_high"] - r["fit"], r["crit"] * r["se"], rtol=1e-12)
    if d_cont > 1:  # one column: the univariate pilot (not the oracle's quadratic here)
        np.testing.assert_allclose(r["se_bc"], np.sqrt(s2 * ((L - B) ** 2).sum(1)), rtol=tol,
                                   atol=0)
        np.testing.assert_allclose(r["rbc_high"] - r["fit_bc"], r["crit_bc"] * r["se_bc"],
                                   rtol=1e-12)
    # the critical values against the statistic's null simulated with 200,000 draws (standard
    # error of the quantile about 0.007): the three-moment approximation is within 0.03 of it on
    # windows with ten or more residual degrees of freedom
    # (core/include/attnreg/inference/diagnostics.hpp, local_residual_variance)
    if seed == 0:
        for j in (0, 5):
            w, Q = _local_window(X, Xe[j], h, types, nl)
            Ws = [(L[j], r["crit"].iloc[j])]
            if d_cont > 1:
                Ws.append((L[j] - B[j], r["crit_bc"].iloc[j]))
            for a, c in Ws:
                assert abs(c - _null_quantile(a, w, Q, 0.95, 200000, 7 + j)) < 0.05
    # uniform bands: "auto" is the Gaussian sup-t with the same standard errors
    g = diagnose(est, Xe, cov_type="local", uniform=True, random_state=3)
    assert g.attrs["uniform_method"] == "gaussian"
    np.testing.assert_allclose(g["se"], r["se"], rtol=0, atol=0)


def test_local_critical_value_is_student_t_where_exact():
    # With a bandwidth far beyond the data every kernel weight is 1 to rounding, the pooled
    # variance is the OLS residual variance of the global quadratic (chi-square with n - 6
    # degrees of freedom over n - 6) and the conventional weights lie in the quadratic's span
    # (independent of the residuals): t is Student t(n - 6) exactly, and the three-moment match
    # is exact for a scaled chi-square; the quadrature's tolerance (1e-10) bounds the rest.
    from scipy import stats
    rng = np.random.default_rng(8)
    for n in (12, 60, 400):
        X = rng.uniform(-1, 1, size=(n, 2))
        y = X[:, 0] + 0.3 * rng.standard_normal(n)
        r = diagnose(LocalLinear(bandwidth=[1e3, 1e3]).fit(X, y), X[:2], cov_type="local")
        np.testing.assert_allclose(r["crit"], stats.t.ppf(0.975, n - 6), rtol=1e-8)
        r90 = diagnose(LocalLinear(bandwidth=[1e3, 1e3]).fit(X, y), X[:2], cov_type="local",
                       level=0.9)
        np.testing.assert_allclose(r90["crit"], stats.t.ppf(0.95, n - 6), rtol=1e-8)
    # other variance kinds keep the normal quantile
    r = diagnose(LocalLinear(bandwidth=[0.5, 0.5]).fit(X, y), X[:2])
    np.testing.assert_array_equal(r["crit"], stats.norm.ppf(0.975))
    np.testing.assert_array_equal(r["crit_bc"], stats.norm.ppf(0.975))


def _robust_null_quantile(W, H, s, level, draws, seed):
    """The level quantile of |W'e| / sqrt(sum_i W_i^2 s_i ((I - H) e)_i^2) for e ~ N(0, I):
    the robust t-statistic under its own null, simulated (H the hat matrix at the training
    rows, s the kind's factor on the squared residuals)."""
    rng = np.random.default_rng(seed)
    S = np.flatnonzero(W != 0)
    RS = np.eye(len(W))[S] - H[S]
    out = []
    for _ in range(draws // 20000):
        E = rng.standard_normal((len(W), 20000))
        v = np.sum((W[S] ** 2 * s[S])[:, None] * (RS @ E) ** 2, axis=0)
        out.append((W @ E) / np.sqrt(v))
    return np.quantile(np.abs(np.concatenate(out)), level)


@pytest.mark.parametrize("cov_type,d_cont,with_cat", [
    ("HC3", 1, False), ("HC0", 2, True), ("HC1", 2, True), ("HC2", 3, False), ("HC3", 2, True),
    ("HC3", 3, False)])
def test_robust_null_critical_values_match_simulation(cov_type, d_cont, with_cat):
    # critical_value="null": the level quantile of the robust t-statistic's finite-sample null,
    # from the hat matrix, against 200,000 simulated draws of that null built from the direct
    # oracle's smoother rows (standard error of the quantile 0.005-0.015). The saddlepoint over
    # the spectrum errs on the large side where a few rows dominate the variance (3 % at one
    # degree of freedom, core/include/attnreg/detail/null_quantile.hpp): tolerance 4 % + 0.03.
    rng = np.random.default_rng(900 + 10 * d_cont)
    n = 150
    X, y, types = _data(rng, n, d_cont, with_cat, ties=True)
    h = np.r_[rng.uniform(0.35, 0.5, d_cont), [0.2] if with_cat else []]
    est = LocalLinear(bandwidth=h, var_types=types).fit(X, y)
    P = np.vstack([np.r_[np.zeros(d_cont), [1.0] if with_cat else []],
                   np.r_[np.full(d_cont, 0.9), [0.0] if with_cat else []]])
    r = diagnose(est, P, cov_type=cov_type, critical_value="null")
    z = diagnose(est, P, cov_type=cov_type)
    for c in ("fit", "se", "fit_bc", "se_bc", "bias"):
        np.testing.assert_array_equal(r[c], z[c])
    np.testing.assert_allclose(r["ci_high"] - r["fit"], r["crit"] * r["se"], rtol=1e-12)
    np.testing.assert_allclose(r["fit_bc"] - r["rbc_low"], r["crit_bc"] * r["se_bc"],
                               rtol=1e-12)
    L, B, _, lev, _ = _oracle(X, y, P, h, h, types, 1)
    H = _oracle(X, y, X, h, h, types, 1)[0]
    s = {"HC0": np.ones(n), "HC1": np.full(n, n / (n - lev.sum())), "HC2": 1 / (1 - lev),
         "HC3": 1 / (1 - lev) ** 2}[cov_type]
    rows = [(L, r["crit"])] + ([(L - B, r["crit_bc"])] if d_cont > 1 else [])
    for W, crit in rows:
        for j in range(2):
            c = _robust_null_quantile(W[j], H, s, 0.95, 200000, 11 + j)
            assert abs(crit.iloc[j] - c) <= 0.04 * c + 0.03, (j, crit.iloc[j], c)


def test_critical_value_option():
    from scipy import stats
    rng = np.random.default_rng(12)
    X = rng.uniform(-1, 1, size=(300, 2))
    y = X[:, 0] + 0.3 * rng.standard_normal(300)
    est = LocalLinear(bandwidth=[0.4, 0.4]).fit(X, y)
    z = stats.norm.ppf(0.975)
    # "auto": null for "local", normal for the others; "normal" gives z for "local" too
    r = diagnose(est, X[:3], cov_type="local", critical_value="normal")
    np.testing.assert_array_equal(r["crit"], z)
    np.testing.assert_array_equal(r["crit_bc"], z)
    a = diagnose(est, X[:3], cov_type="local")
    np.testing.assert_array_equal(a["se"], r["se"])
    assert np.all(a["crit"] != z)
    np.testing.assert_array_equal(diagnose(est, X[:3], cov_type="HC2")["crit"], z)
    for ct in ("nonrobust", "nn", "CR1"):
        kw = {"groups": np.arange(300) % 7} if ct == "CR1" else {}
        if ct == "nn":
            continue  # several regressors: nn itself is refused
        with pytest.raises(ValueError, match=r"critical_value: 'null' .*'hc0'-'hc3' and "
                                             r"'local'"):
            diagnose(est, X[:3], cov_type=ct, critical_value="null", **kw)
    with pytest.raises(ValueError, match="critical_value: must be 'auto', 'normal' or 'null'"):
        diagnose(est, X[:3], critical_value="t")
    with pytest.raises(ValueError, match="critical_value"):
        diagnose(est, X[:3], critical_value=None)
    # level is honoured: a lower level, a smaller critical value
    lo = diagnose(est, X[:3], critical_value="null", level=0.8)
    hi = diagnose(est, X[:3], critical_value="null")
    assert np.all(lo["crit"] < hi["crit"]) and np.all(lo["crit_bc"] < hi["crit_bc"])


def test_local_variance_refusals():
    rng = np.random.default_rng(4)
    X = rng.uniform(-1, 1, size=(200, 2))
    y = X.sum(1) + 0.1 * rng.standard_normal(200)
    X[:3] = [[3.0, 3.0], [3.05, 3.0], [3.0, 3.05]]  # three rows: a plane, no residual df
    est = LocalLinear(kernel="epanechnikov", bandwidth=[0.12, 0.12]).fit(X, y)
    with pytest.raises(_core.NumericalError,
                       match=r"'local' .* x = \(3.01.*degree 2.*6 coefficients \(3 rows"):
        diagnose(est, np.array([[3.01, 3.01]]), cov_type="local")
    with pytest.raises(ValueError, match="wild_t"):
        diagnose(LocalLinear(bandwidth=[0.4, 0.4]).fit(X, y), X[3:6], cov_type="local",
                 uniform=True, uniform_method="wild_t")
    # a Gaussian window whose weight sits on the three outlying rows: the local quadratic
    # interpolates them, and the rest of the window weighs 1e-12 of it
    with pytest.raises(_core.NumericalError, match=r"no residual degrees of freedom at .*x = "
                                                   r"\(3.0+, 3.0+\).*interpolates"):
        diagnose(LocalLinear(bandwidth=[0.4, 0.4]).fit(X, y), X[:1], cov_type="local")
    with pytest.raises(ValueError, match="cov_type"):
        from attnreg import marginal_effects
        marginal_effects(LocalLinear(bandwidth=[0.4, 0.4]).fit(X, y), X[:2], kind="pointwise",
                         interval="rbc", cov_type="local")


def test_diagnose_accepts_nested_lists():
    # a list of rows is array-like (scikit-learn's convention); it has a `.index` method, which
    # must not be taken for a pandas index
    rng = np.random.default_rng(5)
    X = rng.uniform(-1, 1, size=(150, 2))
    y = X.sum(1) + 0.1 * rng.standard_normal(150)
    est = LocalLinear(bandwidth=[0.4, 0.4]).fit(X, y)
    a = diagnose(est, [[0.0, 0.1], [0.2, -0.3]])
    b = diagnose(est, np.array([[0.0, 0.1], [0.2, -0.3]]))
    assert list(a.index) == [0, 1]
    np.testing.assert_array_equal(a.to_numpy(), b.to_numpy())


def test_marginal_effects_checks_cov_type_with_either_interval():
    # cov_type only enters interval="rbc", but a value no variance has (a typo, or the
    # pointwise-only "local") is an error with the default interval too, not silently ignored
    from attnreg import marginal_effects
    rng = np.random.default_rng(6)
    X = rng.uniform(-1, 1, size=(120, 1))
    m = LocalLinear(bandwidth=0.3).fit(X, X[:, 0] + 0.1 * rng.standard_normal(120))
    for bad in ("local", "HC4"):
        with pytest.raises(ValueError, match="cov_type"):
            marginal_effects(m, cov_type=bad)
    marginal_effects(m, cov_type="HC0")  # a valid value is accepted (and unused) here
