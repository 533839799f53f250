"""mse_dpi / imse_dpi (algorithm="nprobust"): Calonico, Cattaneo and Farrell's lpbwselect steps.

Against nprobust 1.0.0's published values on cps71 (Epanechnikov, p = 1, deriv = 0, nn
variance) and against a direct float64 oracle of every piece (explicit normal equations, a
loop for the nearest-neighbour residuals) on random data of several shapes, with ties.
"""
import pathlib

import numpy as np
import pandas as pd
import pytest

import attnreg
from attnreg import _core
from attnreg import diagnostics as D

DATA = pathlib.Path(__file__).resolve().parents[2] / "data" / "cps71.csv"


@pytest.fixture(scope="module")
def cps71():
    d = pd.read_csv(DATA)
    return d["age"].to_numpy(float), d["logwage"].to_numpy(float)


def test_cps71_reproduces_nprobust(cps71):
    x, y = cps71
    # nprobust 1.0.0: lpbwselect(logwage, age, eval = seq(25, 60, length.out = 10)[1:3],
    # kernel = "epa", p = 1) -> h = 5.76, 4.10, 5.38; bwselect = "imse-dpi" -> h = 8.91.
    h = D.mse_dpi(x, y, np.linspace(25, 60, 10)[:3], kernel="epanechnikov")
    np.testing.assert_allclose(h, [5.76, 4.10, 5.38], atol=0.005)
    assert D.imse_dpi(x, y, kernel="epanechnikov") == pytest.approx(8.91, abs=0.005)
    hi, bi = D.imse_dpi(x, y, kernel="epanechnikov", return_pilot=True)
    assert hi == D.imse_dpi(x, y, kernel="epanechnikov") and bi > hi


# ---------------------------------------------------------------------------------- oracle
def _K(u, kernel):
    a = np.abs(u)
    if kernel == "epanechnikov":
        return np.where(a <= 1, 0.75 * (1 - u * u), 0.0)
    if kernel == "uniform":
        return np.where(a <= 1, 0.5, 0.0)
    if kernel == "triangular":
        return np.where(a <= 1, 1 - a, 0.0)
    return np.exp(-0.5 * u * u) / np.sqrt(2 * np.pi)


def _nn_r2(x, y, J=3):
    """Nearest-neighbour squared residuals: own tie group, then the nearer distinct values."""
    n = len(x)
    out = np.empty(n)
    vals = np.unique(x)
    for i in range(n):
        k = np.searchsorted(vals, x[i])
        lo = hi = k  # distinct values vals[lo..hi] included
        count = lambda: int(np.sum((x >= vals[lo]) & (x <= vals[hi]))) - 1  # noqa: E731
        while count() < min(J, n - 1):
            dl = x[i] - vals[lo - 1] if lo > 0 else np.inf
            dr = vals[hi + 1] - x[i] if hi + 1 < len(vals) else np.inf
            if dl <= dr and lo > 0:
                lo -= 1
            if dr <= dl and hi + 1 < len(vals):
                hi += 1
        inside = (x >= vals[lo]) & (x <= vals[hi])
        Ji = inside.sum() - 1
        d = y[i] - (y[inside].sum() - y[i]) / Ji
        out[i] = Ji / (Ji + 1) * d * d
    return out


def _fit(x, y, c, deg, h, kernel, bw_div=False):
    w = _K((x - c) / h, kernel) / (h if bw_div else 1.0)
    s = w > 0
    X = np.vander(x[s] - c, deg + 1, increasing=True)
    XW = X * w[s][:, None]
    Ginv = np.linalg.inv(X.T @ XW)  # fine for an oracle in raw units on small ranges
    return s, X, XW, Ginv, Ginv @ XW.T @ y[s]


def _piece(x, y, c, o, nu, oB, hV, hB1, hB2, scale, kernel):
    N = len(x)
    s, X, XW, Gi, _ = _fit(x, y, c, o, hV, kernel, bw_div=True)
    r2 = _nn_r2(x[s], y[s])
    VV = (Gi @ (XW.T @ (XW * r2[:, None])) @ Gi)[nu, nu]
    u = (x[s] - c) / hV
    Hp = hV ** np.arange(o + 1)
    BC1 = (Hp * (Gi @ (XW.T @ u ** (o + 1))))[nu]
    BC2 = (Hp * (Gi @ (XW.T @ u ** (o + 2))))[nu]
    s1, X1, XW1, G1, b1 = _fit(x, y, c, oB, hB1, kernel)
    R = 0.0
    if scale > 0:
        r21 = _nn_r2(x[s1], y[s1])
        R = 3 * BC1 ** 2 * (G1 @ (XW1.T @ (XW1 * r21[:, None])) @ G1)[o + 1, o + 1]
    b2 = _fit(x, y, c, oB + 1, hB2, kernel)[4]
    V = N * hV ** (2 * nu + 1) * VV
    B1, B2 = BC1 * b1[o + 1], BC2 * b2[o + 2]
    bw = ((2 * nu + 1) * V / (N * 2 * (o + 1 - nu) * (B1 ** 2 + scale * R))) ** (1 / (2 * o + 3))
    return dict(V=V, B1=B1, B2=B2, R=R, bw=bw)


_CC = {"epanechnikov": 2.34, "uniform": 1.843, "triangular": 2.576, "gaussian": 1.06}


def _mse_point(x, y, c, p, kernel, bwcheck=21, bwregul=1.0):
    """p odd (closed forms): the chain rule of thumb -> d2, d3 -> b -> h."""
    q, N = p + 1, len(x)
    iq = np.quantile(x, 0.75) - np.quantile(x, 0.25)
    rng = x.max() - x.min()
    bmax = max(abs(c - x.min()), abs(c - x.max()))
    bmin = np.sort(np.abs(x - c))[bwcheck - 1]
    clip = lambda h: max(min(h, bmax), bmin)  # noqa: E731
    cbw = max(min(_CC[kernel] * min(np.std(x, ddof=1), iq / 1.349) * N ** -0.2, bmax), bmin)
    d2 = clip(_piece(x, y, c, q + 1, q + 1, q + 2, cbw, rng, rng, 0, kernel)["bw"])
    d3 = clip(_piece(x, y, c, q + 2, q + 2, q + 3, cbw, rng, rng, 0, kernel)["bw"])
    pb = _piece(x, y, c, q, p + 1, q + 1, cbw, d2, d3, bwregul, kernel)
    b = clip(pb["bw"])
    ph = _piece(x, y, c, p, 0, q, cbw, b, d2, bwregul, kernel)
    return clip(ph["bw"]), b, (ph, pb)


@pytest.mark.parametrize("seed,n,ties", [(1, 120, False), (2, 300, False), (3, 200, True)])
@pytest.mark.parametrize("kernel", ["epanechnikov", "triangular", "gaussian"])
def test_piece_matches_oracle(seed, n, ties, kernel):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 3, n)
    if ties:
        x = np.round(x * 8) / 8
    y = np.sin(2 * x) + 0.3 * rng.standard_normal(n)
    for c, args in [(1.4, (2, 2, 3, 0.8, 3.0, 3.0, 0.0)), (0.2, (1, 0, 2, 0.9, 1.5, 1.2, 1.0)),
                    (float(x.max()), (2, 2, 3, 1.0, 3.0, 3.0, 1.0))]:
        got = _core.lp_bw_piece(x, y, c, *args, kernel=kernel)
        want = _piece(x, y, c, *args, kernel)
        for k in ("V", "B1", "B2", "R", "bw"):
            assert got[k] == pytest.approx(want[k], rel=1e-8, abs=1e-12), k


@pytest.mark.parametrize("seed,n,ties", [(4, 150, False), (5, 400, True)])
@pytest.mark.parametrize("kernel", ["epanechnikov", "uniform"])
def test_mse_and_imse_match_oracle(seed, n, ties, kernel):
    rng = np.random.default_rng(seed)
    x = rng.normal(0, 1, n)
    if ties:
        x = np.round(x * 6) / 6
    y = x ** 3 - x + 0.5 * rng.standard_normal(n)
    grid = np.linspace(x.min(), x.max(), 7)
    h, b = D.mse_dpi(x, y, grid, kernel=kernel, return_pilot=True)
    want = [_mse_point(x, y, c, 1, kernel) for c in grid]
    np.testing.assert_allclose(h, [w[0] for w in want], rtol=1e-8)
    np.testing.assert_allclose(b, [w[1] for w in want], rtol=1e-8)
    # (2 nu + 1) V and 2 (o + 1 - nu) B1^2: h-piece o = p = 1, nu = 0; b-piece o = q = 2, nu = 2
    Vh = np.mean([1 * w[2][0]["V"] for w in want])
    Bh = np.mean([4 * w[2][0]["B1"] ** 2 for w in want])
    Vb = np.mean([5 * w[2][1]["V"] for w in want])
    Bb = np.mean([2 * w[2][1]["B1"] ** 2 for w in want])
    hi, bi = D.imse_dpi(x, y, grid, kernel=kernel, return_pilot=True)
    assert hi == pytest.approx((Vh / (n * Bh)) ** (1 / 5), rel=1e-8)
    assert bi == pytest.approx((Vb / (n * Bb)) ** (1 / 7), rel=1e-8)


def test_even_degree_minimises_the_mse_and_scales():
    rng = np.random.default_rng(7)
    x = rng.uniform(0, 1, 300)
    y = np.cos(4 * x) + 0.2 * rng.standard_normal(300)
    h = D.mse_dpi(x, y, [0.1, 0.5], degree=0, kernel="epanechnikov")
    assert np.all((h > 0) & (h <= 1))
    hi = D.imse_dpi(x, y, degree=2, kernel="epanechnikov")
    assert 0 < hi <= 1
    # equivariant in x, invariant in y (also at extreme scales); the even-degree bandwidths are
    # minimisers of a function that is flat at its minimum: located to ~sqrt(DBL_EPSILON)
    for cx, cy in [(1e-200, 1e250), (1e150, 1e-120), (3.0, 7.0)]:
        assert D.imse_dpi(x * cx, y * cy, degree=2, kernel="epanechnikov") / cx == \
            pytest.approx(hi, rel=1e-6)
        np.testing.assert_allclose(
            D.mse_dpi(x * cx, y * cy, np.array([0.1, 0.5]) * cx, degree=0,
                      kernel="epanechnikov") / cx, h, rtol=1e-6)
        assert D.imse_dpi(x * cx, y * cy, kernel="epanechnikov") / cx == \
            pytest.approx(D.imse_dpi(x, y, kernel="epanechnikov"), rel=1e-9)


def test_hc_kinds_and_deriv_run():
    rng = np.random.default_rng(8)
    x = rng.uniform(0, 1, 250)
    y = np.sin(5 * x) + 0.2 * rng.standard_normal(250)
    for kind in ("hc0", "hc1", "hc2", "hc3"):
        assert D.imse_dpi(x, y, cov_type=kind, kernel="epanechnikov") > 0
    assert D.mse_dpi(x, y, 0.5, degree=2, deriv=1, kernel="epanechnikov") > 0


def test_one_step_algorithm_is_kept():
    rng = np.random.default_rng(9)
    x = rng.uniform(0, 1, 300)
    y = x ** 2 + 0.2 * rng.standard_normal(300)
    h1 = D.mse_dpi(x, y, 0.5, algorithm="one_step")
    h0 = _core.dpi_bandwidth(x, y, np.array([0.5]))["pointwise"][0]
    assert h1 == h0


def test_errors_name_the_argument():
    rng = np.random.default_rng(10)
    x = rng.uniform(0, 1, 100)
    y = x + rng.standard_normal(100)
    with pytest.raises(ValueError, match="^algorithm: "):
        D.mse_dpi(x, y, algorithm="rsw")
    with pytest.raises(ValueError, match="^kind: 'const' is not available"):
        D.mse_dpi(x, y, cov_type="const")
    with pytest.raises(ValueError, match="^kernel: 'biweight' has no rule-of-thumb"):
        D.mse_dpi(x, y, kernel="biweight")
    with pytest.raises(ValueError, match="^bwcheck: must be between 0"):
        D.mse_dpi(x, y, bwcheck=101)
    with pytest.raises(ValueError, match="^deriv: must be between 0 and the degree"):
        D.mse_dpi(x, y, deriv=2)
    with pytest.raises(ValueError, match="^preliminary_bandwidth: is an option of"):
        D.imse_dpi(x, y, preliminary_bandwidth=0.2)
    with pytest.raises(ValueError, match="^bwregul: "):
        D.imse_dpi(x, y, bwregul=-1)
    assert attnreg.diagnostics.mse_dpi is D.mse_dpi


def _lprobust_oracle(x, y, x0, h, p=1):
    """nprobust's lprobust at one point with rho = 1 (b = h), Epanechnikov, vce = "nn": the
    residuals' neighbours are sought inside the window |x - x0| < h."""
    q = p + 1
    w = _K((x - x0) / h, "epanechnikov") / h
    s = w > 0
    xs, ys, ws = x[s], y[s], w[s]
    u = (xs - x0) / h
    Rq = np.vander(xs - x0, q + 1, increasing=True)
    Rp = Rq[:, :p + 1]
    Gp = np.linalg.inv(Rp.T @ (Rp * ws[:, None]))
    Gq = np.linalg.inv(Rq.T @ (Rq * ws[:, None]))
    Lm = (Rp * ws[:, None]).T @ u ** (p + 1)
    Q = (Rp * ws[:, None]).T - h ** (p + 1) * np.outer(Lm, (Gq @ (Rq * ws[:, None]).T)[p + 1])
    lw = (Gp @ (Rp * ws[:, None]).T)[0]
    bw = (Gp @ Q)[0]
    r2 = _nn_r2(xs, ys)
    return lw @ ys, bw @ ys, np.sqrt(np.sum(lw ** 2 * r2)), np.sqrt(np.sum(bw ** 2 * r2))


def test_diagnose_nn_at_the_imse_bandwidth_is_lprobust(cps71):
    x, y = cps71
    h = D.imse_dpi(x, y, kernel="epanechnikov")
    m = attnreg.LocalLinear(bandwidth=h, kernel="epanechnikov").fit(x[:, None], y)
    ev = np.linspace(x.min(), x.max(), 8)
    d = D.diagnose(m, ev[:, None], cov_type="nn")
    want = np.array([_lprobust_oracle(x, y, c, h) for c in ev])
    np.testing.assert_allclose(d["fit"], want[:, 0], rtol=1e-10)
    np.testing.assert_allclose(d["fit_bc"], want[:, 1], rtol=1e-10)
    np.testing.assert_allclose(d["se"], want[:, 2], rtol=1e-10)
    np.testing.assert_allclose(d["se_bc"], want[:, 3], rtol=1e-10)


@pytest.mark.parametrize("seed", [3, 4])
def test_diagnose_nn_seeks_neighbours_inside_the_window(seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 1, 150)
    y = np.sin(6 * x) + (0.1 + 0.4 * x) * rng.standard_normal(150)
    h = 0.12
    m = attnreg.LocalLinear(bandwidth=h, kernel="epanechnikov").fit(x[:, None], y)
    ev = np.array([0.02, 0.3, 0.55, 0.97])
    d = D.diagnose(m, ev[:, None], cov_type="nn")
    want = np.array([_lprobust_oracle(x, y, c, h) for c in ev])
    np.testing.assert_allclose(d["se"], want[:, 2], rtol=1e-10)
    np.testing.assert_allclose(d["se_bc"], want[:, 3], rtol=1e-10)
    # the full-sample neighbours give other values at the window's edges
    lw = [np.sqrt(np.sum((m.attention_weights(np.array([[c]]))[0]) ** 2 * _nn_r2(x, y)))
          for c in ev]
    assert np.max(np.abs(np.array(lw) / want[:, 2] - 1)) > 1e-6


# ------------------------------------------- the windowed fast path against every row
# The core sorts x once and fits each piece on its run of positive kernel weight (binary search
# for the compact kernels, every row for the Gaussian, whose shape is positive everywhere) by a
# Householder QR in plain loops. The oracle below weighs every row directly and solves by the
# SVD (numpy's pinv) in the scaled design u = (x - c)/h. Both are backward stable, so each
# coefficient row agrees to about kappa * u (kappa: the condition number of the weighted
# design, u = 2^-53); the tests allow 100 kappa u on the scale of each dot product's terms.
def _direct_fit(x, y, c, h, deg, kernel):
    w = _K((x - c) / h, kernel)
    s = w > 0
    u = (x[s] - c) / h
    A = np.vander(u, deg + 1, increasing=True) * np.sqrt(w[s])[:, None]
    C = np.linalg.pinv(A) * np.sqrt(w[s])[None, :]  # (Z'WZ)^-1 Z'W
    return s, u, C, np.linalg.cond(A)


def _direct_r2(x, y, s, u, C, kind):
    """Squared residuals and, per row, the scale of their rounding error: nn residuals are the
    same arithmetic in the core (their own scale); a fitted residual e = y - fit carries an
    error of about kappa u (|y| + |fit|), amplified for hc2/hc3 by 1/(1 - leverage)."""
    if kind == "nn":
        r2 = _nn_r2(x[s], y[s])
        return r2, r2
    Z = np.vander(u, C.shape[0], increasing=True)
    fit = Z @ (C @ y[s])
    e = y[s] - fit
    lev = np.einsum("ij,ji->i", Z, C)
    m, d = len(u), C.shape[0]
    f = {"hc0": 1.0, "hc1": m / (m - d), "hc2": 1 / (1 - lev), "hc3": 1 / (1 - lev) ** 2}[kind]
    return e ** 2 * f, (np.abs(e) + np.abs(y[s]) + np.abs(fit)) ** 2 * f / (1 - lev)


def _direct_piece(x, y, c, o, nu, oB, hV, hB1, hB2, scale, kernel, kind):
    """Returns (values, error scales, largest condition number)."""
    n = len(x)
    s, u, C, k0 = _direct_fit(x, y, c, hV, o, kernel)
    r2, r2s = _direct_r2(x, y, s, u, C, kind)
    V = n * hV * np.sum(C[nu] ** 2 * r2)
    # an entry of a coefficient row errs by about kappa u max|row|
    Vs = n * hV * np.sum((np.abs(C[nu]) + np.abs(C[nu]).max()) ** 2 * r2s)
    bc = [C[nu] @ u ** (o + 1), C[nu] @ u ** (o + 2)]
    bca = [np.abs(C[nu]) @ np.abs(u) ** (o + 1), np.abs(C[nu]) @ np.abs(u) ** (o + 2)]
    s1, u1, C1, k1 = _direct_fit(x, y, c, hB1, oB, kernel)
    beta1 = C1[o + 1] @ y[s1] / hB1 ** (o + 1)
    b1a = np.abs(C1[o + 1]) @ np.abs(y[s1]) / hB1 ** (o + 1)
    R = Rs = 0.0
    if scale > 0:
        r21, r21s = _direct_r2(x, y, s1, u1, C1, kind)
        R = 3 * bc[0] ** 2 * np.sum(C1[o + 1] ** 2 * r21) / hB1 ** (2 * o + 2)
        c1a = np.abs(C1[o + 1]) + np.abs(C1[o + 1]).max()
        Rs = 3 * bca[0] ** 2 * np.sum(c1a ** 2 * r21s) / hB1 ** (2 * o + 2)
    s2, _, C2, k2 = _direct_fit(x, y, c, hB2, oB + 1, kernel)
    beta2 = C2[o + 2] @ y[s2] / hB2 ** (o + 2)
    b2a = np.abs(C2[o + 2]) @ np.abs(y[s2]) / hB2 ** (o + 2)
    B1, B2 = bc[0] * beta1, bc[1] * beta2
    bw = ((2 * nu + 1) * V / (n * 2 * (o + 1 - nu) * (B1 ** 2 + scale * R))) ** (1 / (2 * o + 3))
    vals = dict(V=V, B1=B1, B2=B2, R=R, bw=bw)
    sB1 = bca[0] * b1a
    # bw = (const V / (B1^2 + scale R))^(1/(2o+3)): relative errors add, damped by 2o+3
    sbw = abs(bw) * (Vs / V + (2 * abs(B1) * sB1 + scale * Rs) / (B1 ** 2 + scale * R))
    scales = dict(V=Vs, B1=sB1, B2=bca[1] * b2a, R=Rs, bw=sbw)
    return vals, scales, max(k0, k1, k2)


def _window_cases(rng, ties=5):
    """(name, x, y): ties, x far from 0, clustered."""
    n = 240
    x = rng.uniform(0, 3, n)
    y = np.sin(2 * x) + 0.3 * rng.standard_normal(n)
    xt = np.round(x * ties) / ties  # heavy ties: 3 ties + 1 distinct values
    return [("plain", x, y), ("ties", xt, y), ("far", 1e6 + x, y),
            ("cluster", np.concatenate([x[:200] * 1e-3, 2 + x[200:]]), y)]


@pytest.mark.parametrize("kernel", ["epanechnikov", "uniform", "triangular", "gaussian"])
@pytest.mark.parametrize("kind", ["nn", "hc0", "hc3"])
def test_windowed_piece_matches_all_rows(kernel, kind):
    rng = np.random.default_rng(11)
    for name, x, y in _window_cases(rng):
        rngx = x.max() - x.min()
        for c in (float(x[7]), float(np.median(x)) + 1e-3 * rngx, float(x.max())):
            # (o, nu, oB, hV, hB1, hB2, scale): tiny (just enough distinct rows, some at
            # |u| = 1 exactly: h is a distance to a data point), medium, huge (5 x range).
            tiny = [1.0000001 * np.sort(np.unique(np.abs(x - c)))[k] for k in (6, 7, 8)]
            med = np.maximum(np.quantile(np.abs(x - c), [0.1, 0.12, 0.15]), tiny)
            for args in [(1, 0, 2, tiny[0], tiny[1], tiny[2], 1.0),
                         (1, 1, 2, *med, 1.0),
                         (2, 2, 3, 0.3 * rngx, rngx, rngx, 0.0),
                         (1, 0, 2, 5 * rngx, 5 * rngx, 5 * rngx, 1.0)]:
                try:
                    want, scale, kappa = _direct_piece(x, y, c, *args, kernel, kind)
                except (np.linalg.LinAlgError, ZeroDivisionError, FloatingPointError):
                    continue
                if kappa > 1e8 or not np.isfinite(want["bw"]):
                    continue  # the core refuses these (singular window); not this test's
                got = _core.lp_bw_piece(x, y, c, *args, kernel=kernel, kind=kind)
                tol = 100 * kappa * np.finfo(float).eps
                for k in want:
                    assert abs(got[k] - want[k]) <= tol * scale[k] + 1e-300, (name, c, args, k)


@pytest.mark.parametrize("kernel", ["epanechnikov", "triangular", "gaussian"])
def test_windowed_chain_matches_all_rows(kernel):
    # the whole mse_dpi chain (bw_min by a merge outward from c on the sorted x, windows by
    # binary search) against _mse_point (every row, a full sort of |x - c|)
    rng = np.random.default_rng(12)
    for name, x, y in _window_cases(rng, ties=20):  # 61 values: the degree-6 pilot is regular
        if name == "cluster":
            continue  # the chain's degree-6 pilot is singular on two clusters
        grid = np.concatenate([[x.min(), x.max(), x[3]], np.quantile(x, [0.3, 0.7])])
        h, b = D.mse_dpi(x, y, grid, kernel=kernel, return_pilot=True)
        want = [_mse_point(x, y, c, 1, kernel) for c in grid]
        np.testing.assert_allclose(h, [w[0] for w in want], rtol=1e-8, err_msg=name)
        np.testing.assert_allclose(b, [w[1] for w in want], rtol=1e-8, err_msg=name)
