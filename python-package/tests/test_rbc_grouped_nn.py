"""The multivariate RBC columns and uniform bands computed over the distinct training rows and
each point's kernel window, against a dense float64 reference over all n rows; and the
nearest-neighbour variance (cov_type="nn") with several regressors against a direct numpy oracle.

Dense reference: for every evaluation point the fit's weights l(x) and the pilot local
quadratic's coefficient weights from their weighted normal equations over all n rows (numpy
lstsq on sqrt(w) Z; rows of weight 0 give 0), the bias weights
sum_{|a| = p+1..2} (sum_i l_i(x) u_i^a) G_a(x), u = (x_i - x) / b (Ruppert and Wand 1994, Ann.
Statist. 22(3); Calonico, Cattaneo and Farrell 2018, JASA 113(522)), the HC0/HC3 variances of
l - b_w and the covariance W Omega W' of the uniform bands. The grouped normal equations equal the
dense ones in exact arithmetic (tied rows share their design row and kernel weight); both are
backward-stable QR/SVD solves, so they agree to about cond(sqrt(W) Z) times unit roundoff
relative to the weights' scale: we allow 1e3 times that, as test_rbc_multivariate.py.

nn oracle (Abadie and Imbens 2006, Econometrica 74(1); Calonico, Cattaneo and Titiunik 2014,
Econometrica 82(6)): for each observation, the other observations with the same categorical
values, squared distances sum_c ((x_kc - x_ic) / h_c)^2, all of those within the smallest
radius that holds min(3, n_cell - 1) of them (ties kept whole), sigma^2 = J/(J+1)(y - mean)^2;
computed among the rows with a non-zero weight in l(x) or b_w(x) of each evaluation point.
"""
import numpy as np
import pytest

from attnreg import LocalLinear, NadarayaWatson, _core
from attnreg._deprecation import seed_from_random_state
from attnreg.diagnostics import _fitted_core, diagnose

EPS = np.finfo(float).eps


def _kernel(X, x0, h, types, nl, kern):
    w = np.ones(X.shape[0])
    for c, t in enumerate(types):
        if t == "c":
            u = (X[:, c] - x0[c]) / h[c]
            w *= np.exp(-0.5 * u * u) if kern == "gaussian" else np.maximum(1 - u * u, 0.0)
        else:  # Aitchison-Aitken
            w *= np.where(X[:, c] == x0[c], 1 - h[c], h[c] / (nl[c] - 1))
    return w


def _wls(Z, w):
    s = np.sqrt(w / w.max())
    Zs = Z * s[:, None]
    C = np.linalg.lstsq(Zs, np.diag(s), rcond=None)[0]
    return C, np.linalg.cond(Zs[s > 0])


def _dense(X, y, a, Xe, h, b, types, degree, kern):
    cont = [c for c, t in enumerate(types) if t == "c"]
    nl = {c: len(np.unique(X[:, c])) for c in range(X.shape[1]) if types[c] != "c"}
    dc = len(cont)
    pairs = [(i, j) for i in range(dc) for j in range(i, dc)]
    kap = 1.0

    def smoother(P):
        nonlocal kap
        rows = []
        for x0 in P:
            D = np.ones((len(y), 1))
            if degree == 1:
                D = np.column_stack([D, X[:, cont] - x0[cont]])
            C, k = _wls(D, _kernel(X, x0, h, types, nl, kern) * a)
            rows.append(C[0])
            kap = max(kap, k)
        return np.array(rows)

    L, Ltr = smoother(Xe), smoother(X)
    B = np.zeros_like(L)
    first = 1 if degree == 0 else 1 + dc
    for j, x0 in enumerate(Xe):
        bj = b[j] if np.ndim(b) == 2 else b  # one pilot vector per point (the window rule)
        U = (X[:, cont] - x0[cont]) / bj[cont]
        Z = np.column_stack([np.ones(len(y)), U] + [U[:, i] * U[:, k] for i, k in pairs])
        C, k = _wls(Z, _kernel(X, x0, bj, types, nl, kern) * a)
        kap = max(kap, k)
        B[j] = (L[j] @ Z)[first:] @ C[first:]
    e = y - Ltr @ y
    return L, B, e, np.diag(Ltr), kap


def _window_rule(X, Xe, b, types, kern, bwcheck=21):
    """The pilot vector per point under the core's minimum-points rule (docs/bandwidth.md):
    with a compact kernel, the continuous entries times the smallest factor >= 1 that puts
    min(G, max(bwcheck, 2 n_pilot)) distinct rows strictly inside |x_c - x0_c| < b_c (the
    categorical weights here are all positive); the Gaussian kernel is left as it is."""
    cont = [c for c, t in enumerate(types) if t == "c"]
    out = np.tile(np.asarray(b, dtype=float), (len(Xe), 1))
    if kern == "gaussian":
        return out
    U = np.unique(X, axis=0)
    dc = len(cont)
    T = min(len(U), max(bwcheck, 2 * (1 + dc + dc * (dc + 1) // 2)))
    for j, x0 in enumerate(Xe):
        r = np.sort(np.max(np.abs(U[:, cont] - x0[cont]) / out[j, cont], axis=1))
        out[j, cont] *= max(1.0, r[T - 1] * (1 + 1e-9))
    return out


def _data(rng, n, d_cont, with_cat, grid):
    Xc = rng.uniform(-1, 1, size=(n, d_cont))
    if grid:  # heavy ties: every continuous value on a grid of 9, plus repeated rows
        Xc = np.round(Xc * 4) / 4
        Xc[n // 3: n // 3 + 20] = Xc[0]
    else:
        Xc[: n // 5] = np.round(Xc[: n // 5], 1)
    cols, types = [Xc], "c" * d_cont
    if with_cat:
        cols.append(rng.integers(0, 3, size=(n, 1)).astype(float))
        types += "u"
    X = np.hstack(cols)
    y = np.sin(2 * Xc[:, 0]) + Xc[:, -1] ** 2 + 0.2 * rng.standard_normal(n)
    return X, y, types


CASES = [  # (d_cont, with_cat, degree, kernel, grid, bandwidth scale, sample weights)
    (2, True, 1, "gaussian", True, 1.0, False),
    (2, True, 1, "epanechnikov", True, 1.0, True),
    (3, False, 1, "epanechnikov", False, 1.0, False),
    (2, False, 0, "gaussian", True, 0.5, True),   # small bandwidths
    (2, True, 1, "gaussian", False, 40.0, False),  # huge bandwidths: a global quadratic pilot
    (3, True, 0, "gaussian", True, 1.0, False),
]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("seed", [0, 1])
def test_grouped_window_path_matches_dense_reference(case, seed):
    d_cont, with_cat, degree, kern, grid, scale, weighted = case
    rng = np.random.default_rng(1000 * seed + 7 * d_cont + degree)
    n = 240
    X, y, types = _data(rng, n, d_cont, with_cat, grid)
    a = rng.uniform(0.5, 2.0, n) if weighted else np.ones(n)
    base = 0.5 if kern == "gaussian" else 1.1
    h = np.r_[scale * base * rng.uniform(0.9, 1.2, d_cont), [0.2] if with_cat else []]
    b = h * np.r_[rng.uniform(1.0, 1.4, d_cont), [1.0] if with_cat else []] if seed else h
    Est = LocalLinear if degree == 1 else NadarayaWatson
    est = Est(bandwidth=h, var_types=types, kernel=kern).fit(
        X, y, sample_weight=a if weighted else None)
    # training rows (tied ones included), boundary corners and interior points
    corner = np.ones(d_cont) * (0.75 if kern != "gaussian" else 1.0)
    Xe = np.vstack([X[:4], X[n // 3: n // 3 + 1],
                    np.r_[corner, [1.0] if with_cat else []],
                    np.r_[-corner, [0.0] if with_cat else []],
                    np.r_[rng.uniform(-0.5, 0.5, d_cont), [2.0] if with_cat else []]])
    L, B, e, lev, kap = _dense(X, y, a, Xe, h, b, types, degree, kern)
    tol = 1e3 * kap * EPS
    pb = b if seed else None
    Bc = _core.bias_weights_multivariate(_fitted_core(est), Xe, -1, [] if pb is None else list(b))
    np.testing.assert_allclose(Bc, B, rtol=0, atol=tol * np.abs(B).max())
    Lbc = L - B
    scale_y = np.abs(y).max()
    for cov, om in (("HC0", e ** 2), ("HC3", e ** 2 / (1 - lev) ** 2)):
        r = diagnose(est, Xe, cov_type=cov, pilot_bandwidth=pb, uniform=True,
                     replications=500, random_state=3, uniform_method="gaussian")
        np.testing.assert_allclose(r["bias"], B @ y, rtol=0,
                                   atol=tol * scale_y * np.abs(B).sum(1).max())
        np.testing.assert_allclose(r["fit_bc"], Lbc @ y, rtol=0,
                                   atol=tol * scale_y * np.abs(Lbc).sum(1).max())
        np.testing.assert_allclose(r["se_bc"], np.sqrt((Lbc ** 2) @ om), rtol=10 * tol)
        # the bands: sup-t of the dense covariances with the same seed and draws, over the
        # distinct evaluation rows in order of first appearance (as diagnose computes them);
        # the critical value is Lipschitz in the correlation matrix, which agrees to ~tol.
        seed_c = seed_from_random_state(3)
        _, first_rows = np.unique(Xe, axis=0, return_index=True)
        u = np.sort(first_rows)
        for W, key in ((L[u], "crit_uniform"), (Lbc[u], "crit_uniform_rbc")):
            S = (W * om) @ W.T
            c = _core.sup_t_critical_value(S, 0.95, 500, seed_c)
            assert abs(r.attrs[key] - c) <= 1e3 * tol * c, (key, r.attrs[key], c)


def test_grouped_path_refuses_a_pilot_with_too_few_distinct_points():
    # 30 copies of 4 distinct rows inside the window: 120 rows with weight but only 4 distinct,
    # fewer than the 6 coefficients of a bivariate quadratic.
    rng = np.random.default_rng(2)
    X = np.vstack([rng.uniform(-1, 1, size=(200, 2)),
                   np.repeat([[5.0, 5.0], [5.1, 5.0], [5.0, 5.1], [5.1, 5.1]], 30, axis=0)])
    y = X.sum(1) + rng.standard_normal(len(X))
    est = LocalLinear(kernel="epanechnikov", bandwidth=[0.5, 0.5]).fit(X, y)
    # without the minimum-points rule the pilot is refused, naming the count of distinct rows
    with pytest.raises(ArithmeticError, match="4 distinct training point"):
        _core.bias_weights_multivariate(_fitted_core(est), np.array([[5.05, 5.05]]), -1, [],
                                        bwcheck=0)
    # with it (diagnose's default, 21 distinct rows) the pilot reaches the uniform rows
    r = diagnose(est, np.array([[5.05, 5.05]]))
    assert np.all(np.isfinite(r[["bias", "fit_bc", "se_bc"]].to_numpy()))


# ---------------------------------------------------------------- nn with several regressors


def _nn_oracle(Xc, h, cell, y, J=3):
    n = len(y)
    out = np.empty(n)
    for i in range(n):
        same = np.flatnonzero((cell == cell[i]) & (np.arange(n) != i))
        d2 = np.zeros(len(same))
        for c in range(Xc.shape[1]):
            d2 = d2 + ((Xc[same, c] - Xc[i, c]) / h[c]) ** 2
        need = min(J, len(same))
        r = np.sort(d2)[need - 1]
        nb = same[d2 <= r]
        Ji = len(nb)
        out[i] = Ji / (Ji + 1) * (y[i] - y[nb].mean()) ** 2
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("d_cont,with_cat,grid", [(2, False, False), (2, True, True),
                                                  (3, True, False), (1, True, True)])
def test_nn_variance_several_regressors_matches_oracle(seed, d_cont, with_cat, grid):
    rng = np.random.default_rng(50 * seed + d_cont)
    n = 150
    X, y, types = _data(rng, n, d_cont, with_cat, grid)
    kern = "epanechnikov" if seed == 1 else "gaussian"
    h = np.r_[rng.uniform(0.5, 0.9, d_cont) * (1.8 if kern != "gaussian" else 1.0),
              [0.3] if with_cat else []]
    est = LocalLinear(bandwidth=h, var_types=types, kernel=kern).fit(X, y)
    Xe = np.vstack([X[:3], np.r_[np.full(d_cont, 0.6), [1.0] if with_cat else []]])
    L, B, *_ = _dense(X, y, np.ones(n), Xe, h, _window_rule(X, Xe, h, types, kern), types, 1,
                      kern)
    cont = [c for c, t in enumerate(types) if t == "c"]
    cell = X[:, -1] if with_cat else np.zeros(n)
    var = np.empty(len(Xe))
    var_bc = np.empty(len(Xe))
    for j in range(len(Xe)):
        idx = np.flatnonzero((np.abs(L[j]) + np.abs(B[j])) > 0)
        om = _nn_oracle(X[idx][:, cont], h[cont], cell[idx], y[idx])
        var[j] = (L[j, idx] ** 2) @ om
        var_bc[j] = ((L[j, idx] - B[j, idx]) ** 2) @ om
    r = diagnose(est, Xe, cov_type="nn")
    # omega is exact up to the rounding of a few sums (ties found by the same formula); the
    # weights carry the solves' error (module docstring)
    np.testing.assert_allclose(r["se"], np.sqrt(var), rtol=1e-8)
    np.testing.assert_allclose(r["se_bc"], np.sqrt(var_bc), rtol=1e-8)


def test_nn_variance_d2_core_oracle_with_distance_ties():
    # integer grid: many observations at exactly the same distance; the core function itself
    rng = np.random.default_rng(9)
    n = 400
    Xc = rng.integers(0, 6, size=(n, 2)).astype(float)
    cell = rng.integers(0, 2, n)
    y = rng.standard_normal(n)
    h = np.array([1.0, 2.0])
    got = _core.nn_residual_variance_multi(Xc, list(h), [int(c) for c in cell], y, 3)
    np.testing.assert_allclose(got, _nn_oracle(Xc, h, cell, y), rtol=1e-13, atol=1e-300)


def test_nn_variance_d1_unchanged_and_single_cell_error():
    # d = 1 keeps the univariate path (nprobust's lprobust): the same numbers as before.
    rng = np.random.default_rng(4)
    x = np.round(rng.uniform(size=(120, 1)), 2)
    y = np.sin(3 * x[:, 0]) + 0.2 * rng.standard_normal(120)
    est = LocalLinear(bandwidth=[0.2]).fit(x, y)
    r = diagnose(est, x[:5], cov_type="nn")
    assert np.all(np.isfinite(r["se_bc"]))
    # a categorical level seen once: no neighbour with the same categorical values
    X = np.column_stack([rng.uniform(-1, 1, 120), np.r_[np.zeros(119), 1.0]])
    est2 = LocalLinear(bandwidth=[0.5, 0.3], var_types="cu").fit(X, y)
    with pytest.raises(ArithmeticError, match="training row 120 is the only one"):
        diagnose(est2, X[:2], cov_type="nn")
