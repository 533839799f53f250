"""Standard errors of Ridge and PCR (classical, HC0-HC3, CR0/CR1/CR2 one- and two-way, weighted)
against a direct float64 sandwich of their linear map b = M y, written out in numpy."""
import pickle

import numpy as np
import pandas as pd
import pytest

import attnreg


def _data(n, p, seed, collinear=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    if collinear:
        X[:, -1] = X[:, 0] + 1e-7 * rng.normal(size=n)
    g1 = rng.integers(0, 7, n)
    g2 = rng.integers(0, 4, n)
    y = X @ np.linspace(1, -1, p) + 0.3 + (0.5 + np.abs(X[:, 0])) * rng.normal(size=n) \
        + rng.normal(size=7)[g1]
    w = rng.uniform(0.2, 2.0, n)
    return X, y, w, g1, g2


def _ridge_map(X, w, alpha):
    D = np.column_stack([np.ones(len(X)), X])
    P = alpha * np.eye(D.shape[1])
    P[0, 0] = 0.0
    DW = D * w[:, None]
    return D, np.linalg.solve(D.T @ DW + P, DW.T)


def _pcr_map(X, w, L):
    xbar = w @ X / w.sum()
    Xc = X - xbar
    ev, E = np.linalg.eigh(Xc.T @ (Xc * w[:, None]))
    VL = E[:, ::-1][:, :L]
    Z = np.column_stack([np.ones(len(X)), Xc @ VL])
    ZW = Z * w[:, None]
    G = np.linalg.solve(Z.T @ ZW, ZW.T)
    M = np.empty((X.shape[1] + 1, len(X)))
    M[1:] = VL @ G[1:]
    M[0] = G[0] - xbar @ M[1:]
    return np.column_stack([np.ones(len(X)), X]), M


def _oracle(D, M, y, w, cov, groups=None):
    H = D @ M
    e = y - H @ y
    N, trH = float((w > 0).sum()), float(np.trace(H))
    df = N - trH
    if cov == "nonrobust":
        s2 = np.sum(w * e**2) / df
        return s2 * (M / w) @ M.T
    h = np.diag(H)
    if cov in ("HC0", "HC1", "HC2", "HC3"):
        om = e**2 * {"HC0": 1, "HC1": N / df, "HC2": 1 / (1 - h), "HC3": 1 / (1 - h) ** 2}[cov]
        return (M * om) @ M.T

    def one(g, cr2=False):
        C = np.zeros((M.shape[0],) * 2)
        for lev in np.unique(g):
            i = np.flatnonzero(g == lev)
            a = e[i]
            if cr2:
                sw = np.sqrt(w[i])
                Hg = H[np.ix_(i, i)] * sw[:, None] / sw[None, :]
                lam, Q = np.linalg.eigh(np.eye(len(i)) - (Hg + Hg.T) / 2)
                a = (Q @ ((Q.T @ (sw * a)) / np.sqrt(lam))) / sw
            s = M[:, i] @ a
            C += np.outer(s, s)
        return C, len(np.unique(g))

    if groups.ndim == 1:
        C, G = one(groups, cov == "CR2")
    else:
        C1, G1 = one(groups[:, 0])
        C2, G2 = one(groups[:, 1])
        C12, _ = one(groups[:, 0] * 100 + groups[:, 1])
        C, G = C1 + C2 - C12, min(G1, G2)
    if cov == "CR1":
        C *= G / (G - 1) * (N - 1) / df
    if groups.ndim == 2:
        # Indefinite two-way V: the eigenvalue fix of Cameron, Gelbach and Miller (2011, sec. 2.3).
        lam, U = np.linalg.eigh((C + C.T) / 2)
        if lam.min() < -1e-12 * np.abs(lam).max():
            C = (U * np.maximum(lam, 0)) @ U.T
    return C


TYPES = ["nonrobust", "HC0", "HC1", "HC2", "HC3", "CR0", "CR1", "CR2"]


@pytest.mark.parametrize("n,p,seed,alpha,weighted,collinear", [
    (50, 3, 0, 0.5, False, False),
    (80, 6, 1, 5.0, True, False),
    (40, 4, 2, 1e-3, True, True),
    (30, 2, 3, 30.0, False, False),
])
def test_ridge_matches_sandwich_oracle(n, p, seed, alpha, weighted, collinear):
    X, y, w, g1, g2 = _data(n, p, seed, collinear)
    ww = w if weighted else np.ones(n)
    D, M = _ridge_map(X, ww, alpha)
    for cov in TYPES:
        groups = g1 if cov.startswith("CR") else None
        m = attnreg.Ridge(alpha=alpha, cov_type=cov).fit(X, y, w if weighted else None, groups=groups)
        V = _oracle(D, M, y, ww, cov, groups)
        np.testing.assert_allclose(m.cov_params(), V, rtol=1e-8, atol=1e-12 * np.abs(V).max())
        se = np.sqrt(np.diag(V))
        np.testing.assert_allclose(m.coef_se_, se[1:], rtol=1e-8)
        np.testing.assert_allclose(m.intercept_se_, se[0], rtol=1e-8)
    # Two-way CR1 (Cameron, Gelbach and Miller) with G = min(G1, G2).
    G2 = np.column_stack([g1, g2])
    m = attnreg.Ridge(alpha=alpha, cov_type="cluster").fit(X, y, w if weighted else None,
                                                           groups=pd.DataFrame(G2))
    np.testing.assert_allclose(m.cov_params(), _oracle(D, M, y, ww, "CR1", G2), rtol=1e-8)
    assert m.n_clusters_ == (7, 4)


@pytest.mark.parametrize("n,p,L,seed,weighted", [(60, 5, 2, 4, False), (45, 4, 3, 5, True)])
def test_pcr_matches_sandwich_oracle(n, p, L, seed, weighted):
    X, y, w, g1, _ = _data(n, p, seed)
    ww = w if weighted else np.ones(n)
    D, M = _pcr_map(X, ww, L)
    for cov in TYPES:
        groups = g1 if cov.startswith("CR") else None
        m = attnreg.PCR(rank=L, cov_type=cov).fit(X, y, w if weighted else None, groups=groups)
        np.testing.assert_allclose(m.standard_errors(), np.sqrt(np.diag(_oracle(D, M, y, ww, cov, groups))),
                                   rtol=1e-7)
        assert m.df_resid_ == pytest.approx(n - L - 1)


def test_one_cluster_per_row_is_hc0_and_alpha_zero_is_statsmodels_ols():
    sm = pytest.importorskip("statsmodels.api")
    X, y, w, g1, _ = _data(70, 3, 7)
    m = attnreg.Ridge(alpha=0.7, cov_type="CR0").fit(X, y, groups=np.arange(70))
    np.testing.assert_allclose(m.cov_params(), m.cov_params(cov_type="HC0"), rtol=1e-12)
    # alpha = 0 and PCR with every component are OLS: statsmodels' clustered and HC3 covariances.
    Xd = sm.add_constant(X)
    ref = sm.WLS(y, Xd, weights=w).fit(cov_type="cluster", cov_kwds={"groups": g1})
    for est in (attnreg.Ridge(alpha=0.0, cov_type="cluster"), attnreg.PCR(cov_type="cluster")):
        est.fit(X, y, w, groups=g1)
        np.testing.assert_allclose(est.cov_params(), ref.cov_params(), rtol=1e-9)
        np.testing.assert_allclose(est.standard_errors("HC3"),
                                   sm.WLS(y, Xd, weights=w).fit(cov_type="HC3").bse, rtol=1e-9)


def test_frequency_weights_equal_repeated_rows():
    X, y, _, g1, _ = _data(25, 2, 8)
    fw = np.arange(25) % 3 + 1.0
    rep = np.repeat(np.arange(25), fw.astype(int))
    a = attnreg.Ridge(alpha=1.5, weight_type="frequency", cov_type="CR1").fit(X, y, fw, groups=g1)
    b = attnreg.Ridge(alpha=1.5, cov_type="CR1").fit(X[rep], y[rep], groups=g1[rep])
    np.testing.assert_allclose(a.cov_params(), b.cov_params(), rtol=1e-9)
    np.testing.assert_allclose(a.standard_errors("HC3"), b.standard_errors("HC3"), rtol=1e-9)
    assert a.df_resid_ == pytest.approx(b.df_resid_)
    c = pickle.loads(pickle.dumps(a))
    np.testing.assert_allclose(c.cov_params(), a.cov_params(), rtol=1e-12)


def test_summary_and_refusals():
    X, y, _, g1, _ = _data(40, 3, 9)
    m = attnreg.Ridge(alpha=[0.1, 1.0, 10.0], cov_type="HC1").fit(X, y)
    s = m.summary()
    assert list(s.coefficients.columns) == ["estimate", "std_error", "t", "p_value"]
    assert "around its expectation" in str(s) and "chosen from a grid" in str(s)
    assert s.header["df_resid"] == pytest.approx(m.df_resid_)
    with pytest.raises(ValueError, match="conf_int: Ridge"):
        m.conf_int()
    with pytest.raises(ValueError, match="groups: given"):
        attnreg.Ridge(cov_type="HC1").fit(X, y, groups=g1)
    with pytest.raises(ValueError, match="needs cluster ids"):
        attnreg.PCR(cov_type="cluster").fit(X, y)
    with pytest.raises(ValueError, match="single cluster"):
        attnreg.PCR(cov_type="cluster").fit(X, y, groups=np.zeros(40))
    with pytest.raises(ValueError, match="CR2 is one-way"):
        attnreg.Ridge(cov_type="CR2").fit(X, y, groups=np.column_stack([g1, g1 % 2]))
