"""The bias bound without cancellation and the minimum-points rule of the multivariate plug-in
(core/include/attnreg/inference/rbc_bandwidth_multivariate.hpp) and of the multivariate RBC
pilot (core/src/inference/rbc_multivariate.cpp).

Oracles: (1) bias_terms="absolute" minimises t'(|a||a|' + Cov(a))t + V0/prod h (t = h^2); we
rebuild that criterion from the core's own a, Cov(a), V0 (whose formulas
test_mv_bandwidth.py checks against numpy) and minimise it directly with Nelder-Mead from
several starts: the core's minimum must be no worse (relative 1e-9: the criterion's rounding
is ~1e-15 relative, the Nelder-Mead tolerance 1e-14). (2) the rule: counted directly in numpy,
every window holds at least min(G, max(bwcheck, 2 n_pilot)) distinct rows strictly inside the
product kernel's support, and the factor is the smallest one (shrinking it by 1e-6 relative
loses rows). (3) the RBC pilot at the enlarged bandwidth equals the direct weighted least
squares oracle of test_rbc_multivariate.py at that bandwidth.
"""
import numpy as np
import pytest
from scipy import optimize

import attnreg
from attnreg import LocalLinear, NadarayaWatson, _core
from attnreg.bandwidth import imse_dpi, mse_dpi
from attnreg.diagnostics import _fitted_core, diagnose

EPS = np.finfo(float).eps


def crit(M, V0, h):
    t = h ** 2
    return t @ M @ t + V0 / np.prod(h)


def curved(seed, n, d, ties=False):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, d))
    if ties:
        X[: n // 3] = np.round(X[: n // 3], 1)
        X[n // 3: n // 3 + 6] = X[0]
    m = np.sin(3 * X[:, 0]) + np.exp(-4 * X[:, 1] ** 2) + (X[:, 2] ** 2 if d > 2 else 0)
    return X, m + 0.3 * rng.standard_normal(n)


def n_pilot(d):
    return 1 + d + d * (d + 1) // 2


def inside(X, x0, h):
    """Distinct rows strictly inside the box |x_c - x0_c| < h_c."""
    U = np.unique(X, axis=0)
    return int(np.sum(np.all(np.abs(U - x0) < h, axis=1)))


@pytest.mark.parametrize("seed,n,d,kernel,degree", [(0, 400, 2, "gaussian", 1),
                                                    (1, 600, 3, "gaussian", 1),
                                                    (2, 500, 3, "epanechnikov", 1),
                                                    (3, 300, 2, "epanechnikov", 0)])
def test_absolute_bias_vector_is_the_direct_minimiser(seed, n, d, kernel, degree):
    X, y = curved(seed, n, d)
    P = np.array([[0.0] * d, [-0.95] + [0.0] * (d - 1), [0.4, -0.4] + [0.4] * (d - 2)])
    ra = _core.mse_dpi_multivariate(X, y, P, degree=degree, kernel=kernel,
                                    pilot_bandwidth=np.empty(0), absolute_bias=True)
    rs = _core.mse_dpi_multivariate(X, y, P, degree=degree, kernel=kernel,
                                    pilot_bandwidth=np.empty(0))
    # the pilot does not depend on the criterion
    np.testing.assert_array_equal(ra["bias_coef"], rs["bias_coef"])
    differs = 0
    for j in range(len(P)):
        a = np.asarray(ra["bias_coef"][j])
        M = np.outer(np.abs(a), np.abs(a)) + ra["bias_cov"][:, :, j]
        V0 = ra["variance_coef"][j]
        h = np.asarray(ra["h"][j])
        best = min((optimize.minimize(lambda th: crit(M, V0, np.exp(th)), np.log(h0),
                                      method="Nelder-Mead",
                                      options={"xatol": 1e-10, "fatol": 1e-14 * crit(M, V0, h),
                                               "maxiter": 20000})
                    for h0 in (h * 2, h / 3, X.std(0) * 0.3)), key=lambda o: o.fun)
        assert crit(M, V0, h) <= best.fun * (1 + 1e-9)
        # where the curvatures share a sign both criteria are one function: one vector
        if np.all(a >= 0) or np.all(a <= 0):
            np.testing.assert_array_equal(h, rs["h"][j])
        else:
            # the two minimisers order the gap g(t) = (|a|'t)^2 - (a't)^2 >= 0 (add the two
            # optimality inequalities f_abs(h) <= f_abs(hs), f_signed(hs) <= f_signed(h)):
            # g(h) <= g(hs), up to the minimisers' relative accuracy (1e-9 of the criteria)
            differs += 1
            hs = np.asarray(rs["h"][j])
            Ms = np.outer(a, a) + ra["bias_cov"][:, :, j]
            gap = lambda v: (np.abs(a) @ v ** 2) ** 2 - (a @ v ** 2) ** 2
            assert gap(h) <= gap(hs) + 1e-9 * (crit(M, V0, h) + crit(Ms, V0, hs))
            assert gap(hs) > 0
    # at 0 the curved truth has m_22 = -8 and m_33 = 2 (d = 3), m_11 = 2.6 at -0.95: the test
    # data must exercise opposite signs somewhere
    assert differs >= 1


def test_default_mse_dpi_uses_the_bound_and_signed_is_the_pure_mse():
    X, y = curved(5, 500, 3)
    P = np.zeros((1, 3))
    r = _core.mse_dpi_multivariate(X, y, P, pilot_bandwidth=np.empty(0), bwcheck=21,
                                   absolute_bias=True)
    np.testing.assert_array_equal(mse_dpi(X, y, P), r["h"])
    r = _core.mse_dpi_multivariate(X, y, P, pilot_bandwidth=np.empty(0), bwcheck=21)
    np.testing.assert_array_equal(mse_dpi(X, y, P, bias_terms="signed"), r["h"])
    np.testing.assert_array_equal(imse_dpi(X, y, P), r["h_imse"])
    with pytest.raises(ValueError, match="bias_terms"):
        mse_dpi(X, y, P, bias_terms="abs")
    with pytest.raises(ValueError, match="bias_terms: with one column"):
        mse_dpi(X[:, 0], y, bias_terms="signed")


@pytest.mark.parametrize("seed,n,d,ties,bwcheck", [(0, 120, 3, False, 21), (1, 150, 2, True, 21),
                                                   (2, 90, 3, True, 40), (3, 60, 2, False, 1),
                                                   (4, 25, 2, True, 21)])
def test_minimum_points_rule_holds_and_is_minimal(seed, n, d, ties, bwcheck):
    X, y = curved(seed, n, d, ties)
    X = X + 50.0  # a shifted origin
    G = len(np.unique(X, axis=0))
    T = min(G, max(bwcheck, 2 * n_pilot(d)))
    P = np.vstack([X[:2], np.full(d, 50.0), np.r_[49.05, np.full(d - 1, 50.0)]])
    b = np.full(d, 0.05)
    r = _core.mse_dpi_multivariate(X, y, P, kernel="epanechnikov", pilot_bandwidth=b,
                                   bwcheck=bwcheck)
    hi = np.asarray(r["h_imse"])
    grew = 0
    for j, x0 in enumerate(P):
        bj = np.asarray(r["pilot_used"][j])
        s = bj[0] / b[0]
        np.testing.assert_allclose(bj, s * b, rtol=1e-15)
        assert s >= 1 and inside(X, x0, bj) >= T
        if s > 1:
            grew += 1
            assert inside(X, x0, bj / (1 + 1e-6)) < T
        h = np.asarray(r["h"][j])
        assert inside(X, x0, h) >= T
        assert inside(X, x0, hi) >= T
    assert grew >= 1  # 0.05 is too small for these data


def test_rule_leaves_unbounded_kernels_and_off_switch_unchanged():
    X, y = curved(7, 300, 3)
    P = np.array([[0.0, 0.0, 0.0], [0.9, -0.9, 0.9]])
    b = np.full(3, 0.12)  # a box |u| < 1 holding fewer than 21 rows at 0 (about 300 * 0.12^3)
    assert inside(X, P[0], b) < 21
    on = _core.mse_dpi_multivariate(X, y, P, pilot_bandwidth=b, bwcheck=21)
    off = _core.mse_dpi_multivariate(X, y, P, pilot_bandwidth=b, bwcheck=0)
    for k in ("h", "h_imse", "bias_coef", "pilot_used"):
        np.testing.assert_array_equal(on[k], off[k])
    np.testing.assert_array_equal(off["pilot_used"], np.tile(b, (2, 1)))
    # Python: None and 0 switch the rule off; a negative or fractional count is refused
    Xe, ye = curved(8, 200, 2)
    with pytest.raises(attnreg.NumericalError, match="evaluation row 1 x = .*pilot_bandwidth"):
        mse_dpi(Xe, ye, [[0.0, 0.0]], kernel="epanechnikov", pilot_bandwidth=[0.05, 0.05],
                bwcheck=None)
    h = mse_dpi(Xe, ye, [[0.0, 0.0]], kernel="epanechnikov", pilot_bandwidth=[0.05, 0.05])
    assert np.all(np.isfinite(h))
    for bad in (-1, 2.5, True):
        with pytest.raises(ValueError, match="bwcheck"):
            mse_dpi(Xe, ye, kernel="epanechnikov", bwcheck=bad)


def test_data_that_cannot_support_a_pilot_name_the_point():
    # rows on a line x_2 = x_1: the quadratic is singular in every window however large
    rng = np.random.default_rng(9)
    t = rng.uniform(-1, 1, 200)
    X = np.column_stack([t, t])
    y = t + 0.1 * rng.standard_normal(200)
    with pytest.raises(attnreg.NumericalError, match="evaluation row 1 x = .*singular"):
        mse_dpi(X, y, [[0.0, 0.0]], kernel="epanechnikov")
    # rows on a circle: u_1^2 + u_2^2 is a combination of 1, u_1 and u_2 in every window (a
    # conic), while the local linear fit itself is fine
    C = np.column_stack([np.cos(3 * t), np.sin(3 * t)])
    est = LocalLinear(kernel="epanechnikov", bandwidth=[0.5, 0.5]).fit(C, y)
    with pytest.raises((ValueError, ArithmeticError), match="evaluation row 1 x = .*singular"):
        diagnose(est, C[:1], pilot_bandwidth=[0.01, 0.01])


def _oracle_bias(X, Xe, L, b, kernel_w, degree, cont):
    """Bias weights at each point from the pilot quadratic at b (numpy lstsq)."""
    dc = len(cont)
    pairs = [(a, e) for a in range(dc) for e in range(a, dc)]
    B = np.zeros_like(L)
    for j, x0 in enumerate(Xe):
        U = (X[:, cont] - x0[cont]) / b[j][cont]
        Z = np.column_stack([np.ones(len(X)), U] + [U[:, a] * U[:, e] for a, e in pairs])
        w = kernel_w(X, x0, b[j])
        s = np.sqrt(w / w.max())
        C = np.linalg.lstsq(Z * s[:, None], np.diag(s), rcond=None)[0]
        first = 1 if degree == 0 else 1 + dc
        B[j] = (L[j] @ Z)[first:] @ C[first:]
    return B


@pytest.mark.parametrize("seed,with_cat,degree", [(0, False, 1), (1, True, 1), (2, True, 0)])
def test_rbc_pilot_window_rule_matches_the_oracle(seed, with_cat, degree):
    rng = np.random.default_rng(40 + seed)
    n = 160
    Xc = rng.uniform(-1, 1, (n, 2))
    Xc[: n // 4] = np.round(Xc[: n // 4], 1)  # ties
    X = np.column_stack([Xc, rng.integers(0, 3, n)]) if with_cat else Xc
    types = "ccu" if with_cat else "cc"
    y = np.sin(2 * Xc[:, 0]) + Xc[:, 1] ** 2 + 0.2 * rng.standard_normal(n)
    h = np.r_[0.3, 0.3, [0.3] if with_cat else []]
    Est = LocalLinear if degree == 1 else NadarayaWatson
    est = Est(kernel="epanechnikov", bandwidth=h, var_types=types).fit(X, y)
    Xe = X[:5].copy()
    core = _fitted_core(est)
    b = h.copy()
    b[:2] = 0.12  # too few rows in the pilot window at b for a quadratic
    with pytest.raises((ValueError, ArithmeticError), match="pilot"):
        _core.bias_weights_multivariate(core, Xe, -1, list(b), bwcheck=0)
    with pytest.raises(ValueError, match="bwcheck"):
        _core.bias_weights_multivariate(core, Xe, -1, list(b), bwcheck=-1)
    Bc = _core.bias_weights_multivariate(core, Xe, -1, list(b))  # default bwcheck = 21
    # the rule in numpy: distinct rows with positive kernel weight (categorical: Aitchison-Aitken
    # weights are positive) strictly inside |x_c - x0_c| < s b_c, s the smallest factor >= 1
    U = np.unique(X, axis=0)
    T = min(len(U), max(21, 2 * n_pilot(2)))
    cont = [0, 1]
    nl = 3

    def kern(Xm, x0, bb):
        w = np.ones(len(Xm))
        for c in cont:
            u = (Xm[:, c] - x0[c]) / bb[c]
            w *= np.clip(1 - u * u, 0, None)
        if with_cat:
            w *= np.where(Xm[:, 2] == x0[2], 1 - bb[2], bb[2] / (nl - 1))
        return w

    bs = []
    for x0 in Xe:
        r = np.sort(np.max(np.abs(U[:, cont] - x0[cont]) / b[cont], axis=1))
        s = max(1.0, r[T - 1] * (1 + 1e-9))
        bj = b.copy()
        bj[cont] *= s
        assert np.sum(kern(U, x0, bj) > 0) >= T
        bs.append(bj)
    L = est.attention_weights(Xe) if hasattr(est, "attention_weights") else None
    if L is None:
        pytest.skip("no attention weights")
    B = _oracle_bias(X, Xe, np.asarray(L), bs, kern, degree, cont)
    np.testing.assert_allclose(Bc, B, rtol=0, atol=1e-9 * np.abs(B).max())
    r = diagnose(est, Xe, cov_type="HC3")
    np.testing.assert_allclose(r["bias"], B @ y, rtol=0, atol=1e-9 * np.abs(B).sum(1).max() * np.abs(y).max())
