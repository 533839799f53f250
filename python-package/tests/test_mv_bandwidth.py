"""mse_dpi / imse_dpi with several regressors: the pilot local quadratic plug-in of
core/include/attnreg/inference/rbc_bandwidth_multivariate.hpp against a direct numpy oracle
(weighted least squares by lstsq, the criterion in a few lines, its minimiser by scipy)."""
import itertools

import numpy as np
import pytest
from scipy import optimize

import attnreg
from attnreg import _core
from attnreg.bandwidth import imse_dpi, mse_dpi

SHAPE = {"gaussian": lambda u: np.exp(-0.5 * u * u),
         "epanechnikov": lambda u: np.clip(1 - u * u, 0, None)}
DLOGK = {"gaussian": lambda u: -u,
         "epanechnikov": lambda u: np.where(np.abs(u) < 1, -2 * u / np.clip(1 - u * u, 1e-300, None), 0)}
MU2 = {"gaussian": 1.0, "epanechnikov": 0.2}
RK = {"gaussian": 0.5 / np.sqrt(np.pi), "epanechnikov": 0.6}
CK = {"gaussian": 1 / np.sqrt(2 * np.pi), "epanechnikov": 0.75}


def oracle_pilot(X, y, x0, b, kernel, degree):
    """(a, Cov(a), sigma2, f) at x0 from the formulas, in float64 numpy."""
    n, d = X.shape
    U = (X - x0) / b
    w = np.prod(SHAPE[kernel](U), axis=1)
    keep = w > 0
    U, yk, wk = U[keep], y[keep], w[keep]
    cols = [np.ones(len(yk))] + [U[:, j] for j in range(d)]
    sq = {}
    for j, k in itertools.combinations_with_replacement(range(d), 2):
        if j == k:
            sq[j] = len(cols)
        cols.append(U[:, j] * U[:, k])
    Z = np.column_stack(cols)
    A = np.linalg.inv(Z.T @ (wk[:, None] * Z))
    beta = A @ Z.T @ (wk * yk)
    e = yk - Z @ beta
    hii = np.einsum("ij,jk,ik->i", Z, A, Z)
    sigma2 = np.sum(wk * e ** 2) / (wk.sum() - np.sum(wk ** 2 * hii))
    f = CK[kernel] ** d * w.sum() / (n * np.prod(b))
    G = np.zeros((d, Z.shape[1]))
    for j in range(d):
        G[j, sq[j]] = MU2[kernel] / b[j] ** 2
        if degree == 0:
            g = -np.sum(wk * DLOGK[kernel](U[:, j])) / (b[j] * wk.sum())
            G[j, 1 + j] = MU2[kernel] * g / b[j]
    covb = sigma2 * A @ (Z.T * wk ** 2) @ Z @ A
    return G @ beta, G @ covb @ G.T, sigma2, f


def crit(M, V0, h):
    t = h ** 2
    return t @ M @ t + V0 / np.prod(h)


def data(seed, n, d, shift=0.0, ties=False):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, d)) * np.linspace(1, 3, d) + shift
    if ties:
        X = np.round(X, 1)
    Xs = (X - shift) / np.linspace(1, 3, d)
    y = np.sin(2 * Xs[:, 0]) + Xs[:, 1] ** 2 - 0.5 * Xs[:, -1] ** 2 + 0.3 * rng.standard_normal(n)
    return X, y


CASES = [(0, 300, 2, "gaussian", 1, 0.0, False), (1, 500, 3, "epanechnikov", 1, 0.0, False),
         (2, 400, 2, "epanechnikov", 0, 100.0, True), (3, 600, 3, "gaussian", 0, -5.0, False),
         (4, 250, 2, "gaussian", 1, 1e4, True)]


@pytest.mark.parametrize("seed,n,d,kernel,degree,shift,ties", CASES)
def test_pilot_pieces_and_minimiser_match_the_numpy_oracle(seed, n, d, kernel, degree, shift,
                                                           ties):
    X, y = data(seed, n, d, shift, ties)
    P = np.quantile(X, [0.2, 0.5, 0.75], axis=0)
    P[1, 0] = np.quantile(X[:, 0], 0.05)  # towards a boundary
    r = _core.mse_dpi_multivariate(X, y, P, degree=degree, kernel=kernel,
                                   pilot_bandwidth=np.empty(0))
    b = np.asarray(r["pilot"])
    # rule of thumb: C_K s_j n^(-1/(d+8)), C_K the ratio of canonical bandwidths
    ck = (RK[kernel] / MU2[kernel] ** 2) ** 0.2 / (RK["gaussian"]) ** 0.2
    np.testing.assert_allclose(b, ck * X.std(0, ddof=1) * n ** (-1 / (d + 8)), rtol=1e-13)
    Mbar, Vbar = np.zeros((d, d)), 0.0
    for j, x0 in enumerate(P):
        a, ca, s2, f = oracle_pilot(X, y, x0, b, kernel, degree)
        # both are backward-stable solves of a design with condition number < 1e3 here:
        # relative agreement to 1e3 * 1e-16 * n-ish; 1e-9 is a loose bound on that
        np.testing.assert_allclose(r["bias_coef"][j], a, rtol=1e-9, atol=1e-12 * np.abs(a).max())
        np.testing.assert_allclose(r["bias_cov"][:, :, j], ca, rtol=1e-9,
                                   atol=1e-12 * np.abs(ca).max())
        assert r["sigma2"][j] == pytest.approx(s2, rel=1e-10)
        assert r["density"][j] == pytest.approx(f, rel=1e-12)
        V0 = RK[kernel] ** d * s2 / (n * f)
        assert r["variance_coef"][j] == pytest.approx(V0, rel=1e-10)
        M = np.outer(a, a) + ca
        Mbar += M / len(P)
        Vbar += V0 / len(P)
        h = np.asarray(r["h"][j])
        assert np.all(h > 0) and np.all(h <= np.ptp(X, 0) * (1 + 1e-12))
        best = min((optimize.minimize(lambda th: crit(M, V0, np.exp(th)), np.log(h0),
                                      method="Nelder-Mead",
                                      options={"xatol": 1e-10, "fatol": 1e-14 * crit(M, V0, h),
                                               "maxiter": 20000})
                    for h0 in (h * 2, h / 3, X.std(0) * 0.3)), key=lambda o: o.fun)
        # the core's minimum is no worse than the best of three Nelder-Mead runs
        assert crit(M, V0, h) <= best.fun * (1 + 1e-9)
        # interior stationary point: the gradient in log h vanishes relative to the terms
        if np.all(h < np.ptp(X, 0) * 0.999):
            t = h ** 2
            grad = 4 * t * (M @ t) - V0 / np.prod(h)
            assert np.max(np.abs(grad)) <= 1e-8 * crit(M, V0, h)
        # common scale: closed form equals the scalar minimiser
        s = X.std(0, ddof=1)
        c = r["c_common"][j]
        o = optimize.minimize_scalar(lambda lc: crit(M, V0, np.exp(lc) * s),
                                     bracket=(np.log(c) - 1, np.log(c) + 1), tol=1e-12)
        assert c == pytest.approx(np.exp(o.x), rel=1e-6)
    hi = np.asarray(r["h_imse"])
    assert crit(Mbar, Vbar, hi) <= crit(Mbar, Vbar, hi * np.exp(
        np.random.default_rng(seed).normal(0, 0.05, d))) + 0.0


def test_public_faces_shapes_and_pilot():
    X, y = data(7, 400, 3)
    P = np.quantile(X, [0.3, 0.6], axis=0)
    h = mse_dpi(X, y, P)
    assert h.shape == (2, 3)
    # mse_dpi's default with several columns is the bias bound without cancellation
    r = _core.mse_dpi_multivariate(X, y, P, degree=1, kernel="gaussian",
                                   pilot_bandwidth=np.empty(0), absolute_bias=True)
    ri = _core.mse_dpi_multivariate(X, y, P, degree=1, kernel="gaussian",
                                    pilot_bandwidth=np.empty(0))
    np.testing.assert_array_equal(h, r["h"])
    h1 = mse_dpi(X, y, P[0])
    np.testing.assert_array_equal(h1, h[0])
    hc = mse_dpi(X, y, P, common_scale=True)
    np.testing.assert_allclose(hc, r["c_common"][:, None] * X.std(0, ddof=1), rtol=1e-15)
    hm, b = mse_dpi(X, y, return_pilot=True)
    assert hm.shape == (3,) and b.shape == (3,)
    np.testing.assert_array_equal(hm, mse_dpi(X, y, np.median(X, 0)))
    hi, bi = imse_dpi(X, y, P, return_pilot=True)
    np.testing.assert_array_equal(hi, ri["h_imse"])
    np.testing.assert_array_equal(bi, b)
    assert imse_dpi(X, y).shape == (3,)
    # the pilot is used as given
    b2 = np.array([0.8, 1.5, 2.5])
    r2 = _core.mse_dpi_multivariate(X, y, P, degree=1, kernel="gaussian", pilot_bandwidth=b2,
                                    absolute_bias=True)
    np.testing.assert_array_equal(mse_dpi(X, y, P, pilot_bandwidth=b2), r2["h"])


def test_equivariance_in_x_and_invariance_in_y():
    X, y = data(11, 500, 2)
    P = np.quantile(X, [0.25, 0.5], axis=0)
    h = mse_dpi(X, y, P)
    c = np.array([4.0, 0.25])  # powers of two: the scaled problem is exact in floating point
    np.testing.assert_allclose(mse_dpi(X * c, 8.0 * y, P * c), h * c, rtol=1e-10)
    np.testing.assert_allclose(imse_dpi(X * c, y, P * c), imse_dpi(X, y, P) * c, rtol=1e-10)


def test_no_curvature_direction_gets_the_range_without_regularisation():
    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, (800, 2))
    y = X[:, 0] ** 2 + 0.7 * X[:, 1] + 0.1 * rng.standard_normal(800)  # linear in x_2
    h = mse_dpi(X, y, [0.0, 0.0], bwregul=0.0)
    M = np.diag([1.0, 0.0])
    h0 = _core.mv_plugin_minimise(M, 1e-3, np.array([2.0, 2.0]), np.array([0.5, 0.5]))
    assert h0[1] == 2.0  # exactly zero curvature: the box edge, the range
    assert h[1] > 2 * h[0]  # an estimated ~0 curvature: a much wider window in that direction


def test_one_column_is_the_univariate_lpbwselect():
    rng = np.random.default_rng(5)
    x = rng.uniform(0, 1, 300)
    y = np.sin(4 * x) + 0.2 * rng.standard_normal(300)
    pts = [0.3, 0.6]
    np.testing.assert_array_equal(mse_dpi(x[:, None], y, pts), mse_dpi(x, y, pts))
    assert imse_dpi(x[:, None], y) == imse_dpi(x, y)
    with pytest.raises(ValueError, match="common_scale"):
        mse_dpi(x, y, pts, common_scale=True)


def test_bad_input_is_named():
    X, y = data(2, 200, 2)
    with pytest.raises(ValueError, match="x: column 2 has 2 distinct"):
        mse_dpi(np.column_stack([X[:, 0], np.arange(200) % 2]), y)
    with pytest.raises(ValueError, match="pilot_bandwidth: needs one value per column"):
        mse_dpi(X, y, pilot_bandwidth=[1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="pilot_bandwidth: must be finite and positive"):
        mse_dpi(X, y, pilot_bandwidth=[1.0, -1.0])
    with pytest.raises(ValueError, match=r"eval_points: .*shape \(m, 2\)"):
        mse_dpi(X, y, np.zeros((3, 3)))
    with pytest.raises(ValueError, match="y: has 199"):
        mse_dpi(X, y[:-1])
    with pytest.raises(ValueError, match="degree"):
        mse_dpi(X, y, degree=2)
    with pytest.raises(ValueError, match="cov_type"):
        mse_dpi(X, y, cov_type="HC3")
    with pytest.raises(ValueError, match="algorithm"):
        imse_dpi(X, y, algorithm="one_step")
    with pytest.raises(ValueError, match="kernel"):
        mse_dpi(X, y, kernel="gaussian4")
    Xn = X.copy()
    Xn[3, 1] = np.nan
    with pytest.raises(ValueError, match="x"):
        mse_dpi(Xn, y)
    with pytest.raises(attnreg.NumericalError, match="evaluation row 1 x = .*pilot_bandwidth"):
        mse_dpi(X, y, [[0.0, 0.0]], kernel="epanechnikov", pilot_bandwidth=[0.05, 0.05],
                bwcheck=None)
