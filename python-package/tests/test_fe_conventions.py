"""fixest's small-sample conventions (ssc), singletons and CR3 with absorbed fixed effects.

Oracles: a direct dummy-variable regression in numpy with the explicit sandwich and the
explicit leave-one-cluster-out refits (CR3), and pyfixest 0.60.0 (fixest's conventions)."""
import warnings

import numpy as np
import pandas as pd
import pytest

import attnreg


def _panel(seed, n=400, L=40, G=20, nested=True, singletons=0, two=False, weights=False):
    rng = np.random.default_rng(seed)
    f1 = rng.integers(0, L, n)
    g = f1 % G if nested else rng.integers(0, G, n)
    d = pd.DataFrame({"f1": f1, "g": g, "h": rng.integers(0, 30, n),
                      "x1": rng.normal(size=n), "x2": rng.normal(size=n)})
    if two:
        d["f2"] = rng.integers(0, 9, n)
    for s in range(singletons):  # a level of f1 with one row
        d.loc[len(d)] = {"f1": 10_000 + s, "g": s % G, "h": s % 30, "x1": rng.normal(),
                         "x2": rng.normal(), **({"f2": s % 9} if two else {})}
    d["y"] = (1.5 * d.x1 - 0.7 * d.x2 + np.sin(d.f1) + (np.cos(d.f2) if two else 0)
              + rng.normal(size=len(d)) * (1 + 0.5 * np.abs(d.x1)))
    if weights:
        d["w"] = rng.uniform(0.5, 2.0, len(d))
    return d


def _dummies(codes):
    lev, inv = np.unique(codes, return_inverse=True)
    return np.eye(lev.size)[inv]


def _nested(f, g):
    return all(np.unique(g[f == v]).size == 1 for v in np.unique(f))


def _drop_singletons(d, fes):
    """Remove the rows whose level of some factor has one row, until there are none."""
    while True:
        bad = np.zeros(len(d), bool)
        for f in fes:
            bad |= (d[f].map(d[f].value_counts()) == 1).to_numpy()
        if not bad.any():
            return d
        d = d[~bad]


def _oracle(d, fes, cluster=None, cov="CR1", k_fixef="nonnested", k_adj=True, g_adj=True,
            drop_singletons=True, w=None):
    """Dummy-variable weighted least squares with the explicit sandwich; singletons dropped by
    the iterative rule first. Returns (coef of x1, x2; their standard errors; n)."""
    d = _drop_singletons(d, fes) if drop_singletons else d.copy()
    n = len(d)
    X = d[["x1", "x2"]].to_numpy()
    Dm = np.column_stack([_dummies(d[f].to_numpy()) for f in fes])
    Z = np.column_stack([X, Dm])
    y = d.y.to_numpy()
    wv = np.ones(n) if w is None else d[w].to_numpy()
    sw = np.sqrt(wv)
    coef, *_ = np.linalg.lstsq(Z * sw[:, None], y * sw, rcond=None)
    e = y - Z @ coef
    rankZ = np.linalg.matrix_rank(Z)
    bread = np.linalg.pinv((Z * wv[:, None]).T @ Z)
    if cov == "iid":
        V = bread * (wv * e ** 2).sum() / (n - rankZ)
    elif cov == "HC1":
        u = Z * (wv * e)[:, None]
        V = bread @ (u.T @ u) @ bread * n / (n - rankZ)
    else:
        cl = [d[c].to_numpy() for c in cluster]
        u = Z * (wv * e)[:, None]

        def meat(ids):
            M = np.zeros((Z.shape[1], Z.shape[1]))
            for v in np.unique(ids):
                s = u[ids == v].sum(0)
                M += np.outer(s, s)
            return M

        M = meat(cl[0])
        if len(cl) == 2:
            inter = np.unique(np.column_stack(cl), axis=0, return_inverse=True)[1].ravel()
            M = M + meat(cl[1]) - meat(inter)
        G = min(np.unique(c).size for c in cl)
        levels = [np.unique(d[f]).size for f in fes]
        kfe = sum(levels) - (len(fes) - 1)  # connected factor graphs here
        if k_fixef == "none":
            K = 2
        elif k_fixef == "full":
            K = 2 + kfe
        else:
            nested = [any(_nested(d[f].to_numpy(), c) for c in cl) for f in fes]
            K = 2 + kfe - sum(L for L, s in zip(levels, nested) if s) + sum(nested)
        c = (G / (G - 1) if g_adj else 1.0) * ((n - 1) / (n - K) if k_adj else 1.0)
        V = bread @ M @ bread * c
    return coef[:2], np.sqrt(np.diag(V)[:2]), n


def _fit(d, fes, cov, cluster=None, **kw):
    formula = "y ~ x1 + x2 | " + " + ".join(fes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if cluster is None:
            return attnreg.ols(formula, d, cov_type=cov, **kw)
        groups = d[cluster[0]] if len(cluster) == 1 else d[cluster]
        return attnreg.ols(formula, d, cov_type=cov, groups=groups, **kw)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("nested", [True, False])
@pytest.mark.parametrize("singletons", [0, 5])
@pytest.mark.parametrize("two", [False, True])
def test_cr1_matches_dummy_oracle(seed, nested, singletons, two):
    d = _panel(seed, nested=nested, singletons=singletons, two=two)
    fes = ["f1", "f2"] if two else ["f1"]
    m = _fit(d, fes, "CR1", ["g"])
    b, se, n = _oracle(d, fes, ["g"])
    assert m.n_singletons_ == len(d) - n
    # Coefficients: least squares to ~1e-13; the two-factor projections stop at fe_tol 1e-10.
    np.testing.assert_allclose(m.coef_, b, rtol=1e-8)
    np.testing.assert_allclose(m.coef_se_, se, rtol=1e-8)


@pytest.mark.parametrize("k_fixef", ["nonnested", "full", "none"])
@pytest.mark.parametrize("k_adj", [True, False])
@pytest.mark.parametrize("g_adj", [True, False])
def test_ssc_options_match_oracle(k_fixef, k_adj, g_adj):
    d = _panel(3, nested=True, singletons=3)
    m = _fit(d, ["f1"], "CR1", ["g"], ssc=attnreg.ssc(k_adj=k_adj, k_fixef=k_fixef, G_adj=g_adj))
    _, se, _ = _oracle(d, ["f1"], ["g"], k_fixef=k_fixef, k_adj=k_adj, g_adj=g_adj)
    np.testing.assert_allclose(m.coef_se_, se, rtol=1e-9)


@pytest.mark.parametrize("cov", ["iid", "HC1"])
@pytest.mark.parametrize("singletons", [0, 4])
def test_iid_hc1_with_singletons_match_oracle(cov, singletons):
    d = _panel(5, singletons=singletons, two=True)
    m = _fit(d, ["f1", "f2"], "nonrobust" if cov == "iid" else "HC1")
    _, se, n = _oracle(d, ["f1", "f2"], cov=cov)
    np.testing.assert_allclose(m.coef_se_, se, rtol=1e-8)
    k = _drop_singletons(d, ["f1", "f2"])
    assert len(k) == n
    assert m.df_resid_ == n - 2 - (k.f1.nunique() + k.f2.nunique() - 1)


def test_singletons_kept_is_the_old_result():
    d = _panel(7, singletons=6)
    kept = _fit(d, ["f1"], "HC1", drop_singletons=False)
    _, se, n = _oracle(d, ["f1"], cov="HC1", drop_singletons=False)
    assert kept.n_singletons_ == 0 and n == len(d)
    np.testing.assert_allclose(kept.coef_se_, se, rtol=1e-9)
    dropped = _fit(d, ["f1"], "HC1")
    assert dropped.n_singletons_ == 6
    # The coefficients do not depend on the singletons; the predictions cover every row.
    np.testing.assert_allclose(dropped.coef_, kept.coef_, rtol=1e-12)
    pred = dropped.predict(d[["x1", "x2", "f1"]])
    single = d.f1 >= 10_000
    np.testing.assert_allclose(pred[single], d.y[single], rtol=1e-12)
    assert "singleton" in str(dropped.summary())


def test_singletons_found_iteratively():
    # Row 0 is alone in f1 level 100; dropping it leaves row 1 alone in f2 level 50.
    f1 = np.array([100, 101, 101, 102, 102, 103, 103, 102])
    f2 = np.array([50, 50, 51, 51, 52, 52, 51, 52])
    drop = np.asarray(attnreg._core.singleton_rows(np.column_stack([f1, f2])))
    assert drop.tolist() == [True, True, True, False, False, False, False, False]
    # Independent check: repeat "drop the rows whose level has one row" until none is left.
    keep = np.ones(f1.size, bool)
    while True:
        bad = np.zeros(f1.size, bool)
        for f in (f1, f2):
            vals, cnt = np.unique(f[keep], return_counts=True)
            single = set(vals[cnt == 1])
            bad |= keep & np.isin(f, list(single))
        if not bad.any():
            break
        keep &= ~bad
    np.testing.assert_array_equal(drop, ~keep)


pf = pytest.importorskip("pyfixest")


def _pf(d, fes, vcov, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pf.feols("y ~ x1 + x2 | " + " + ".join(fes), d, vcov=vcov, fixef_tol=1e-12, **kw)


@pytest.mark.parametrize("case", [
    ("iid", ["f1"], None), ("HC1", ["f1"], None), ("CR1", ["f1"], ["g"]),
    ("CR1", ["f1", "f2"], ["g"]), ("CR1", ["f1"], ["g", "h"]), ("CR1", ["f1", "f2"], ["g", "h"]),
])
@pytest.mark.parametrize("nested", [True, False])
@pytest.mark.parametrize("singletons", [0, 5])
def test_matches_pyfixest(case, nested, singletons):
    cov, fes, cl = case
    d = _panel(11, n=600, nested=nested, singletons=singletons, two=len(fes) == 2)
    vc = {"iid": "iid", "HC1": "hetero"}.get(cov) or {"CRV1": "+".join(cl)}
    ref = _pf(d, fes, vc)
    m = _fit(d, fes, "nonrobust" if cov == "iid" else cov, cl)
    np.testing.assert_allclose(m.coef_, ref.coef().to_numpy(), rtol=1e-8)
    # (The data keep the two-way covariances positive definite: pyfixest leaves an indefinite
    # one as it is, attnreg takes its positive part; Cameron, Gelbach and Miller 2011.)
    assert not getattr(m, "cov_fixed_", False)
    np.testing.assert_allclose(m.coef_se_, ref.se().to_numpy(), rtol=1e-7)
    assert len(d) - m.n_singletons_ == ref._N


# ------------------------------------------------------------------------------- CR3


def _loco(d, fes, cluster, w=None):
    """Explicit leave-one-cluster-out refits of the dummy-variable regression: (G-1)/G sum."""
    full, *_ = _oracle(d, fes, cov="iid", drop_singletons=False, w=w)
    ids = d[cluster].to_numpy()
    G = np.unique(ids).size
    S = np.zeros((2, 2))
    for v in np.unique(ids):
        sub = d[ids != v]
        b, *_ = _oracle(sub, fes, cov="iid", drop_singletons=False, w=w)
        S += np.outer(b - full, b - full)
    return S * (G - 1) / G


@pytest.mark.parametrize("nested", [True, False])
@pytest.mark.parametrize("weights", [False, True])
@pytest.mark.parametrize("seed", [0, 1])
def test_cr3_one_factor_equals_refits(nested, weights, seed):
    d = _panel(seed, n=300, L=30, G=15, nested=nested, weights=weights)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = attnreg.ols("y ~ x1 + x2 | f1", d, cov_type="CR3", groups=d.g,
                        weights="w" if weights else None, drop_singletons=False)
    V = _loco(d, ["f1"], "g", w="w" if weights else None)
    np.testing.assert_allclose(m.cov_params(), V, rtol=1e-8)


def test_cr3_two_factors_nested_and_plain_ols():
    d = _panel(4, n=300, L=30, G=10, nested=True, two=False)
    d["f3"] = d.f1 * 2 + (d.x1 > 0)  # a second factor nested in the clusters (via f1)
    m = _fit(d, ["f1", "f3"], "CR3", ["g"], drop_singletons=False)
    V = _loco(d, ["f1", "f3"], "g")
    np.testing.assert_allclose(m.cov_params(), V, rtol=1e-7)
    # Without fixed effects (intercept, x1, x2).
    X = np.column_stack([np.ones(len(d)), d.x1, d.x2])
    y = d.y.to_numpy()
    b = np.linalg.lstsq(X, y, rcond=None)[0]
    ids = d.g.to_numpy()
    G = np.unique(ids).size
    S = sum(np.outer(bb - b, bb - b) for bb in
            (np.linalg.lstsq(X[ids != v], y[ids != v], rcond=None)[0] for v in np.unique(ids)))
    ols = attnreg.OLS(cov_type="CR3").fit(d[["x1", "x2"]], y, groups=d.g)
    np.testing.assert_allclose(ols.cov_params(), S * (G - 1) / G, rtol=1e-9)


def test_cr3_matches_pyfixest_crv3():
    d = _panel(8, n=200, L=20, G=10, nested=True)
    ref = _pf(d, ["f1"], {"CRV3": "g"})
    m = _fit(d, ["f1"], "CR3", ["g"])
    G = 10
    # pyfixest: ssc * sum_g (b_(g) - b)(b_(g) - b)'; attnreg: (G-1)/G * sum_g (...).
    c = float(np.ravel(ref._ssc)[0])
    np.testing.assert_allclose(m.cov_params() * G / (G - 1), ref._vcov / c, rtol=1e-7)


def test_cr3_bad_input():
    d = _panel(9, n=200, L=20, G=10, nested=False, two=True)
    with pytest.raises(ValueError, match="CR3"):
        _fit(d, ["f1", "f2"], "CR3", ["g"])  # two factors, not nested
    with pytest.raises(ValueError, match="one-way"):
        _fit(d, ["f1"], "CR3", ["g", "h"])
    d1 = _panel(9, n=60, L=6, G=3, nested=False)
    d1["one"] = np.arange(len(d1))
    with pytest.raises(ValueError, match="HC3"):
        attnreg.OLS(cov_type="CR3").fit(d1[["x1", "x2"]], d1.y, groups=d1.one)


def test_cr3_weighted_ols_with_a_zero_weight_cluster():
    # Weighted OLS: CR3 equals the explicit weighted leave-one-cluster-out refits; a cluster
    # whose rows all have weight 0 is no cluster (as lm and Stata leave such rows out).
    d = _panel(12, n=200, L=20, G=10, nested=False, weights=True)
    d.loc[d.g == 3, "w"] = 0.0
    X = np.column_stack([np.ones(len(d)), d.x1, d.x2])
    y, w, ids = d.y.to_numpy(), d.w.to_numpy(), d.g.to_numpy()
    sw = np.sqrt(w)

    def wls(keep):
        return np.linalg.lstsq(X[keep] * sw[keep, None], y[keep] * sw[keep], rcond=None)[0]

    pos = w > 0
    b = wls(pos)
    live = np.unique(ids[pos])
    S = sum(np.outer(wls(pos & (ids != v)) - b, wls(pos & (ids != v)) - b) for v in live)
    G = live.size
    m = attnreg.OLS(cov_type="CR3").fit(d[["x1", "x2"]], y, sample_weight=w, groups=d.g)
    np.testing.assert_allclose(m.cov_params(), S * (G - 1) / G, rtol=1e-9)
    assert m.n_clusters_ == G


def test_ssc_bad_input():
    d = _panel(13, n=100, L=10, G=5)
    with pytest.raises(ValueError, match="k_fixef"):
        _fit(d, ["f1"], "CR1", ["g"], ssc={"k_fixef": "nested_all"})
    with pytest.raises(ValueError, match="unknown key"):
        _fit(d, ["f1"], "CR1", ["g"], ssc={"adj": True})
    with pytest.raises(ValueError, match="drop_singletons"):
        _fit(d, ["f1"], "CR1", ["g"], drop_singletons="yes")
    with pytest.raises(ValueError, match="absorb"):  # no fixed effects: not silently ignored
        attnreg.OLS(cov_type="CR1", ssc=attnreg.ssc(G_adj=False)).fit(d[["x1"]], d.y, groups=d.g)
