"""OLS with sample weights (WLS) and clustered standard errors against statsmodels, a direct numpy
oracle, and the Stata results statsmodels ships for the Grunfeld data (regress / ivreg2)."""
import warnings
import pickle

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from statsmodels.stats import sandwich_covariance as sw

import attnreg

RTOL = 1e-10


def _data(n, p, seed, zero_weights=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    firms = np.repeat(np.arange(n), rng.integers(1, 9, size=n))[:n]  # unbalanced clusters
    years = np.arange(n) % 7
    y = X @ np.linspace(1, -1, p) + rng.normal(size=firms.max() + 1)[firms] + rng.normal(size=n) * (
        1 + np.abs(X[:, 0]))
    w = rng.uniform(0.2, 3.0, size=n)
    if zero_weights:
        w[3::11] = 0.0
    return X, y, w, firms, years


SHAPES = [(80, 2, 1), (250, 4, 2), (1000, 6, 3)]


@pytest.mark.parametrize("n,p,seed", SHAPES)
@pytest.mark.parametrize("cov_type", ["nonrobust", "HC0", "HC1", "HC2", "HC3", "HAC"])
def test_wls_matches_statsmodels(n, p, seed, cov_type):
    X, y, w, _, _ = _data(n, p, seed)
    kw = {"maxlags": 3} if cov_type == "HAC" else {}
    m = attnreg.OLS(cov_type=cov_type, **kw).fit(X, y, sample_weight=w)
    r = sm.WLS(y, sm.add_constant(X), weights=w).fit(
        cov_type=cov_type, cov_kwds=kw or None, use_t=True)
    np.testing.assert_allclose(np.r_[m.intercept_, m.coef_], r.params, rtol=RTOL)
    np.testing.assert_allclose(m.standard_errors(), r.bse, rtol=RTOL)
    np.testing.assert_allclose(m.cov_params(), r.cov_params(), rtol=RTOL, atol=1e-14)
    np.testing.assert_allclose(m.pvalues_, r.pvalues, rtol=1e-8)
    np.testing.assert_allclose(m.sigma2_, r.scale, rtol=RTOL)
    np.testing.assert_allclose(m.rsquared_, r.rsquared, rtol=RTOL)
    np.testing.assert_allclose(m.rsquared_adj_, r.rsquared_adj, rtol=RTOL)
    assert m.df_resid_ == r.df_resid


@pytest.mark.parametrize("n,p,seed", SHAPES)
@pytest.mark.parametrize("weighted", [False, True])
def test_one_way_cluster_matches_statsmodels(n, p, seed, weighted):
    X, y, w, firms, _ = _data(n, p, seed)
    labels = np.array([f"firm{f:03d}" for f in firms], dtype=object)  # any hashable labels
    m = attnreg.OLS(cov_type="cluster").fit(X, y, sample_weight=w if weighted else None,
                                            groups=labels)
    mod = sm.WLS(y, sm.add_constant(X), weights=w) if weighted else sm.OLS(y, sm.add_constant(X))
    r = mod.fit(cov_type="cluster", cov_kwds={"groups": firms}, use_t=True)
    np.testing.assert_allclose(m.standard_errors(), r.bse, rtol=RTOL)
    np.testing.assert_allclose(m.cov_params(), r.cov_params(), rtol=RTOL, atol=1e-14)
    np.testing.assert_allclose(m.pvalues_, r.pvalues, rtol=1e-8)  # t with G - 1 df
    assert m.n_clusters_ == len(np.unique(firms))
    # CR0 = statsmodels without the small-sample correction.
    r0 = mod.fit(cov_type="cluster", cov_kwds={"groups": firms, "use_correction": False})
    np.testing.assert_allclose(m.standard_errors(cov_type="CR0"), r0.bse, rtol=RTOL)


def _cgm_fix(V):
    """statsmodels' raw two-way V with the eigenvalue fix of Cameron, Gelbach and Miller (2011,
    sec. 2.3) that attnreg applies when V_1 + V_2 - V_12 is indefinite."""
    lam, U = np.linalg.eigh((V + V.T) / 2)
    if lam.min() >= -1e-12 * np.abs(lam).max():
        return V
    return (U * np.maximum(lam, 0)) @ U.T


@pytest.mark.parametrize("n,p,seed", SHAPES)
@pytest.mark.parametrize("weighted", [False, True])
def test_two_way_cluster_matches_statsmodels(n, p, seed, weighted):
    X, y, w, firms, years = _data(n, p, seed)
    groups = pd.DataFrame({"firm": firms, "year": [f"y{t}" for t in years]})
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "OLS: the two-way clustered covariance", UserWarning)
        m = attnreg.OLS(cov_type="CR0").fit(X, y, sample_weight=w if weighted else None,
                                            groups=groups)
    mod = sm.WLS(y, sm.add_constant(X), weights=w) if weighted else sm.OLS(y, sm.add_constant(X))
    res = mod.fit()
    two = np.column_stack([firms, years])
    r0 = mod.fit(cov_type="cluster", cov_kwds={"groups": two, "use_correction": False})
    np.testing.assert_allclose(m.standard_errors(), np.sqrt(np.diag(_cgm_fix(r0.cov_params()))),
                               rtol=RTOL)
    # CR1: Cameron-Gelbach-Miller V_1 + V_2 - V_12 scaled once by G/(G-1) (N-1)/(N-k) with
    # G = min(G_1, G_2) (Stata's ivreg2 / reghdfe); statsmodels' own CR1 scales each term by its
    # own G, so compare with its uncorrected pieces.
    V = sw.cov_cluster_2groups(res, firms, group2=years, use_correction=False)[0]
    G = min(len(np.unique(firms)), len(np.unique(years)))
    k = X.shape[1] + 1
    V1 = V * G / (G - 1) * (n - 1) / (n - k)
    np.testing.assert_allclose(m.cov_params(cov_type="cluster"), _cgm_fix(V1), rtol=RTOL,
                               atol=1e-14)
    assert m.n_clusters_ == (len(np.unique(firms)), 7)


def test_cr2_matches_direct_oracle():
    X, y, w, firms, _ = _data(150, 3, 7, zero_weights=True)
    m = attnreg.OLS(cov_type="CR2").fit(X, y, sample_weight=w, groups=firms)
    D = sm.add_constant(X)
    s = np.sqrt(w)
    Xw, yw = D * s[:, None], y * s
    b = np.linalg.lstsq(Xw, yw, rcond=None)[0]
    B = np.linalg.inv(Xw.T @ Xw)
    ew = yw - Xw @ b
    meat = np.zeros((4, 4))
    for g in np.unique(firms):
        i = firms == g
        H = Xw[i] @ B @ Xw[i].T
        vals, vecs = np.linalg.eigh(np.eye(i.sum()) - H)
        inv_sqrt = vecs @ np.diag([1 / np.sqrt(v) if v > 1e-12 else 0.0 for v in vals]) @ vecs.T
        sg = Xw[i].T @ inv_sqrt @ ew[i]
        meat += np.outer(sg, sg)
    np.testing.assert_allclose(m.cov_params(), B @ meat @ B, rtol=1e-9, atol=1e-15)


def test_frequency_weights_equal_repeated_rows():
    X, y, w, firms, years = _data(120, 3, 11)
    fw = np.floor(w * 2)
    fw[0] = max(fw[0], 1)
    rep = np.repeat(np.arange(120), fw.astype(int))
    for ct in ["nonrobust", "HC1", "HC3", "cluster", "CR2"]:
        g = firms if ct in ("cluster", "CR2") else None
        a = attnreg.OLS(cov_type=ct, weight_type="frequency").fit(X, y, sample_weight=fw, groups=g)
        b = attnreg.OLS(cov_type=ct).fit(X[rep], y[rep], groups=None if g is None else g[rep])
        np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-11)
        np.testing.assert_allclose(a.standard_errors(), b.standard_errors(), rtol=1e-10)
        np.testing.assert_allclose(a.pvalues_, b.pvalues_, rtol=1e-8)
        assert a.df_resid_ == b.df_resid_
        np.testing.assert_allclose(a.rsquared_adj_, b.rsquared_adj_, rtol=1e-11)
    with pytest.raises(ValueError, match="HAC"):
        attnreg.OLS(cov_type="HAC", weight_type="frequency").fit(X, y, sample_weight=fw)


def test_attention_weights_stay_exact_and_pickle():
    X, y, w, firms, _ = _data(200, 3, 12, zero_weights=True)
    m = attnreg.OLS(cov_type="CR1").fit(X, y, sample_weight=w, groups=firms)
    Xn = np.random.default_rng(0).normal(size=(5, 3))
    A = m.attention_weights(Xn)
    np.testing.assert_allclose(A @ y, m.predict(Xn), rtol=1e-12)
    np.testing.assert_allclose(A.sum(axis=1), 1.0, rtol=1e-12)
    D = sm.add_constant(X)
    np.testing.assert_allclose(A, sm.add_constant(Xn) @ np.linalg.solve(D.T @ (D * w[:, None]), (D * w[:, None]).T),
                               atol=1e-12)
    assert np.all(A[:, w == 0] == 0)
    # Weight-0 rows: fitted d_i'b, left out of N.
    np.testing.assert_allclose(m.predict(X), D @ np.r_[m.intercept_, m.coef_], rtol=1e-12)
    assert m.df_resid_ == (w > 0).sum() - 4
    m2 = pickle.loads(pickle.dumps(m))
    np.testing.assert_allclose(m2.attention_weights(Xn), A, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(m2.standard_errors(cov_type="CR2"), m.standard_errors(cov_type="CR2"), rtol=1e-13)
    # Other covariance types of the same fit, without refitting.
    r = sm.WLS(y, D, weights=w).fit(cov_type="HC2")
    keep = w > 0
    r_pos = sm.WLS(y[keep], D[keep], weights=w[keep]).fit(cov_type="HC2")
    np.testing.assert_allclose(m.standard_errors(cov_type="HC2"), r_pos.bse, rtol=RTOL)
    assert r.params.shape == r_pos.params.shape


def test_bad_weights_and_groups():
    X, y, w, firms, years = _data(40, 2, 13)
    bad = w.copy()
    bad[4] = -1
    with pytest.raises(ValueError, match=r"sample_weight: weight 5 is -1"):
        attnreg.OLS().fit(X, y, sample_weight=bad)
    for v in (np.nan, np.inf):
        bad[4] = v
        with pytest.raises(ValueError, match="sample_weight:.*finite"):
            attnreg.OLS().fit(X, y, sample_weight=bad)
    with pytest.raises(ValueError, match="sample_weight: has length 39"):
        attnreg.OLS().fit(X, y, sample_weight=w[:39])
    with pytest.raises(ValueError, match="sample_weight: all weights are zero"):
        attnreg.OLS().fit(X, y, sample_weight=np.zeros(40))
    with pytest.raises(ValueError, match="weight_type"):
        attnreg.OLS(weight_type="probability").fit(X, y, sample_weight=w)
    with pytest.raises(ValueError, match="groups: has a single cluster"):
        attnreg.OLS(cov_type="cluster").fit(X, y, groups=np.ones(40))
    g = firms.astype(float)
    g[7] = np.nan
    with pytest.raises(ValueError, match="groups: cluster id missing.*row 7"):
        attnreg.OLS(cov_type="cluster").fit(X, y, groups=g)
    with pytest.raises(ValueError, match="groups: given, but cov_type='HC1'.*cov_type='cluster'"):
        attnreg.OLS(cov_type="HC1").fit(X, y, groups=firms)
    with pytest.raises(ValueError, match="cov_type: 'cluster' needs cluster ids; pass groups="):
        attnreg.OLS(cov_type="cluster").fit(X, y)
    with pytest.raises(ValueError, match="one or two columns"):
        attnreg.OLS(cov_type="cluster").fit(X, y, groups=np.column_stack([firms, years, years]))
    with pytest.raises(ValueError, match="CR2 is one-way only"):
        attnreg.OLS(cov_type="CR2").fit(X, y, groups=np.column_stack([firms, years]))
    m = attnreg.OLS().fit(X, y)
    with pytest.raises(ValueError, match="needs cluster ids; pass groups="):
        m.standard_errors(cov_type="cluster")
    # A weight-0 row's cluster does not count: one cluster left among positive weights.
    w1 = np.ones(40)
    w1[firms != firms[0]] = 0
    w1[firms == firms[0]] = 1
    with pytest.raises(ValueError, match="has 1 cluster"):
        attnreg.OLS(cov_type="cluster").fit(X, y, sample_weight=w1 + 0.0, groups=firms)


# ------------------------------------------------------------------ Stata (Grunfeld)

def _grunfeld():
    from statsmodels.datasets import grunfeld

    d = grunfeld.data.load_pandas().data.iloc[:200]
    # Stata stores these variables as float (single precision): round as it does, otherwise the
    # data differ from Stata's in the 8th digit.
    f32 = lambda a: np.asarray(a, dtype=np.float32).astype(np.float64)  # noqa: E731
    X = np.column_stack([f32(d["value"]), f32(d["capital"])])
    return X, f32(d["invest"]), d["firm"].to_numpy(), d["year"].to_numpy()


def _stata_table(res):
    t = res.params_table  # rows mvalue, kstock, _cons; columns b se t pvalue ll ul df crit
    order = [2, 0, 1]  # design order: intercept first
    return t[order], res.cov[np.ix_(order, order)]


@pytest.mark.parametrize("name,kind", [
    ("results_cluster", "one"),                       # regress ..., vce(cluster company)
    ("results_cluster_2groups_small", "two"),         # ivreg2 ..., cluster(company time) small
    ("results_cluster_2groups_large", "two-large"),   # ivreg2 ..., cluster(company time)
    ("results_cluster_wls_small", "wls"),             # regress ... [aw=1/mvalue], vce(cluster company)
    ("results_hc1_wls_small", "wls-hc1"),             # regress ... [aw=1/mvalue], robust
])
def test_stata_grunfeld(name, kind):
    from statsmodels.regression.tests.results import results_grunfeld_ols_robust_cluster as r2

    res = getattr(r2, name)
    tab, cov = _stata_table(res)
    X, y, firm, year = _grunfeld()
    w = 1.0 / X[:, 0] if kind.startswith("wls") else None
    if kind == "one" or kind == "wls":
        m = attnreg.OLS(cov_type="cluster").fit(X, y, sample_weight=w, groups=firm)
    elif kind == "two":
        m = attnreg.OLS(cov_type="cluster").fit(X, y, groups=np.column_stack([firm, year]))
    elif kind == "two-large":
        m = attnreg.OLS(cov_type="CR0").fit(X, y, groups=np.column_stack([firm, year]))
    else:
        m = attnreg.OLS(cov_type="HC1").fit(X, y, sample_weight=w)
    np.testing.assert_allclose(np.r_[m.intercept_, m.coef_], tab[:, 0], rtol=RTOL)
    np.testing.assert_allclose(m.standard_errors(), tab[:, 1], rtol=RTOL)
    np.testing.assert_allclose(m.tvalues_, tab[:, 2], rtol=RTOL)
    np.testing.assert_allclose(m.cov_params(), cov, rtol=RTOL)
    if kind != "two-large":  # Stata's large-sample version reports normal (z) p-values
        # Stata prints p-values to about 13 significant digits
        np.testing.assert_allclose(m.pvalues_, tab[:, 3], rtol=1e-9)
        assert m.summary().header["df_inference"] == tab[0, 6]
    np.testing.assert_allclose(m.rsquared_, res.r2, rtol=RTOL)


# ------------------------------------------------------------------ Ridge and PCR

@pytest.mark.parametrize("n,p,seed", SHAPES)
def test_weighted_ridge_matches_sklearn(n, p, seed):
    from sklearn.linear_model import Ridge as SkRidge

    X, y, w, _, _ = _data(n, p, seed, zero_weights=True)
    m = attnreg.Ridge(alpha=3.0).fit(X, y, sample_weight=w)
    sk = SkRidge(alpha=3.0, solver="svd").fit(X, y, sample_weight=w)
    np.testing.assert_allclose(m.coef_, sk.coef_, rtol=1e-10)
    np.testing.assert_allclose(m.intercept_, sk.intercept_, rtol=1e-10)
    np.testing.assert_allclose(m.predict(X), sk.predict(X), rtol=1e-10)
    Xn = X[:7] + 0.5
    A = m.attention_weights(Xn)
    np.testing.assert_allclose(A @ y, m.predict(Xn), rtol=1e-12)
    np.testing.assert_allclose(A.sum(axis=1), 1.0, rtol=1e-12)
    assert np.all(A[:, w == 0] == 0)
    m2 = pickle.loads(pickle.dumps(m))
    np.testing.assert_allclose(m2.predict(Xn), m.predict(Xn), rtol=1e-14)
    np.testing.assert_allclose(m2.attention_weights(Xn), A, rtol=1e-12, atol=1e-15)


def test_weighted_pcr_all_components_is_wls():
    X, y, w, _, _ = _data(200, 4, 21, zero_weights=True)
    pcr = attnreg.PCR().fit(X, y, sample_weight=w)
    r = sm.WLS(y, sm.add_constant(X), weights=w).fit()
    np.testing.assert_allclose(np.r_[pcr.intercept_, pcr.coef_], r.params, rtol=1e-10)
    np.testing.assert_allclose(pcr.predict(X), r.fittedvalues, rtol=1e-10)
    A = attnreg.PCR(rank=2).fit(X, y, sample_weight=w).attention_weights(X[:5])
    np.testing.assert_allclose(A.sum(axis=1), 1.0, rtol=1e-12)
    with pytest.raises(ValueError, match="sample_weight: all weights are zero"):
        attnreg.Ridge().fit(X, y, sample_weight=np.zeros(200))
    with pytest.raises(ValueError, match="sample_weight: has length 3"):
        attnreg.PCR().fit(X, y, sample_weight=[1, 2, 3])


@pytest.mark.parametrize("cv", ["gcv", "aicc"])
def test_weighted_ridge_grid_equals_repeated_rows(cv):
    X, y, w, _, _ = _data(150, 3, 31)
    fw = np.floor(w * 2)
    fw[0] = max(fw[0], 1)
    rep = np.repeat(np.arange(150), fw.astype(int))
    grid = np.logspace(-2, 3, 25)
    a = attnreg.Ridge(alpha=grid, criterion=cv).fit(X, y, sample_weight=fw)
    b = attnreg.Ridge(alpha=grid, criterion=cv).fit(X[rep], y[rep])
    np.testing.assert_allclose(a.cv_results_[cv], b.cv_results_[cv], rtol=1e-10)
    assert a.alpha_ == b.alpha_
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-10)
    # Single alpha: integer weights = repeated rows (also scikit-learn's
    # check_sample_weight_equivalence, run by test_sklearn_api.py).
    np.testing.assert_allclose(attnreg.Ridge(alpha=0.5).fit(X, y, sample_weight=fw).coef_,
                               attnreg.Ridge(alpha=0.5).fit(X[rep], y[rep]).coef_, rtol=1e-10)


def test_weighted_ridge_loo_criterion_is_weighted_refit():
    X, y, w, _, _ = _data(60, 2, 32, zero_weights=True)
    grid = np.array([0.1, 1.0, 10.0])
    m = attnreg.Ridge(alpha=grid, criterion="loo").fit(X, y, sample_weight=w)
    from sklearn.linear_model import Ridge as SkRidge

    for g, lam in enumerate(grid):
        err = 0.0
        for i in range(60):
            keep = np.arange(60) != i
            f = SkRidge(alpha=lam, solver="svd").fit(X[keep], y[keep], sample_weight=w[keep])
            err += w[i] * (y[i] - f.predict(X[i:i + 1])[0]) ** 2
        np.testing.assert_allclose(m.cv_results_["loo_mse"][g], err / w.sum(), rtol=1e-9)
