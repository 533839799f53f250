"""OLS with absorbed fixed effects against statsmodels' dummy-variable OLS (and pyfixest when
it is installed): coefficients, standard errors, degrees of freedom, R^2, fitted values, fixed
effects, attention weights, labels and errors."""
import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
import statsmodels.formula.api as smf

import attnreg


def panel(n, levels, seed, singletons=0, disconnected=False, p=3):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({f"x{j + 1}": rng.normal(size=n) for j in range(p)})
    for j, L in enumerate(levels):
        prob = 1.0 / np.arange(1, L + 1)
        codes = rng.choice(L, size=n, p=prob / prob.sum())
        if j == 0 and singletons:
            codes[-singletons:] = L + np.arange(singletons)
        if disconnected and j < 2:
            codes[n // 2:] += 10_000
        df[f"f{j + 1}"] = [f"L{c}" for c in codes]
        eff = rng.normal(size=codes.max() + 1)
        df["x1"] += eff[codes]
    df["y"] = df["x1"] - 0.5 * df["x2"] + rng.normal(size=n)
    for j in range(len(levels)):
        codes = df[f"f{j + 1}"].str[1:].astype(int).to_numpy()
        df["y"] += 3.0 * rng.normal(size=codes.max() + 1)[codes]
    return df


def dummy_ols(df, xs, fes, weights=None):
    formula = "y ~ " + " + ".join(xs + [f"C({f})" for f in fes])
    if weights is None:
        return smf.ols(formula, df).fit()
    return smf.wls(formula, df, weights=weights).fit()


CASES = [
    (120, [8], 0, False, 1),
    (300, [40], 5, False, 2),
    (250, [30, 7], 3, False, 3),
    (400, [50, 12], 6, True, 4),
    (300, [20, 8, 5], 2, False, 5),
]


@pytest.mark.filterwarnings("ignore:The design matrix is rank-deficient")
@pytest.mark.parametrize("n,levels,singletons,disconnected,seed", CASES)
def test_matches_statsmodels_dummy_ols(n, levels, singletons, disconnected, seed):
    df = panel(n, levels, seed, singletons, disconnected)
    xs = ["x1", "x2", "x3"]
    fes = [f"f{j + 1}" for j in range(len(levels))]
    ref = dummy_ols(df, xs, fes)
    # statsmodels' dummy fit keeps the singleton rows: so does this one (drop_singletons=False).
    m = attnreg.OLS(drop_singletons=False).fit(df[xs], df["y"], absorb=df[fes])
    np.testing.assert_allclose(m.coef_, ref.params[xs].to_numpy(), rtol=1e-10)
    np.testing.assert_allclose(m.coef_se_, ref.bse[xs].to_numpy(), rtol=1e-9)
    assert m.df_resid_ == ref.df_resid
    assert m.rsquared_ == pytest.approx(ref.rsquared, rel=1e-10)
    assert m.rsquared_adj_ == pytest.approx(ref.rsquared_adj, rel=1e-10)
    assert m.sigma2_ == pytest.approx(ref.scale, rel=1e-9)
    np.testing.assert_allclose(
        m.standard_errors(cov_type="HC1"), ref.get_robustcov_results("HC1").bse[-3:], rtol=1e-9
    )
    assert m.fe_names_ == fes
    assert m.n_fe_levels_ == [df[f].nunique() for f in fes]
    assert m.df_absorbed_ == n - 3 - ref.df_resid
    if len(levels) == 1:
        np.testing.assert_allclose(
            m.standard_errors(cov_type="HC3"), ref.get_robustcov_results("HC3").bse[-3:],
            rtol=1e-9,
        )
    # In-sample predictions (fixed effects + X b) are the dummy regression's fitted values.
    pred = m.predict(df[xs], absorb=df[fes])
    np.testing.assert_allclose(pred, ref.fittedvalues.to_numpy(), rtol=1e-9, atol=1e-9)


def test_within_r_squared_matches_demeaned_regression():
    df = panel(300, [25, 6], 11)
    fes = ["f1", "f2"]
    m = attnreg.OLS().fit(df[["x1", "x2"]], df["y"], absorb=df[fes])
    ref = dummy_ols(df, ["x1", "x2"], fes)
    y_within = smf.ols("y ~ C(f1) + C(f2)", df).fit().resid
    r2w = 1.0 - np.sum(ref.resid**2) / np.sum(y_within**2)
    assert m.rsquared_within_ == pytest.approx(r2w, rel=1e-10)


def test_weighted_within_transformation_matches_wls():
    # The weight hook used by fit(sample_weight=...) (weighted within transformation).
    df = panel(300, [30, 6], 12)
    w = np.random.default_rng(3).uniform(0.2, 3.0, size=len(df))
    xs, fes = ["x1", "x2", "x3"], ["f1", "f2"]
    ref = dummy_ols(df, xs, fes, weights=w)
    m = attnreg.OLS()
    X, y2 = m._validate_fit(df[xs], df["y"])
    m._fit_absorbed(X, y2, df[fes], sample_weight=w)
    np.testing.assert_allclose(m.coef_, ref.params[xs].to_numpy(), rtol=1e-10)
    np.testing.assert_allclose(m.coef_se_, ref.bse[xs].to_numpy(), rtol=1e-9)
    assert m.df_resid_ == ref.df_resid
    np.testing.assert_allclose(m.predict(df[xs], absorb=df[fes]), ref.fittedvalues, rtol=1e-9)


def test_absorbed_regressor_is_aliased_with_a_warning_naming_it():
    df = panel(200, [15, 5], 13)
    df["const_in_f1"] = df["f1"].map({k: i * 0.7 for i, k in enumerate(sorted(df.f1.unique()))})
    with pytest.warns(UserWarning, match="collinearity with the fixed effects.*const_in_f1"):
        m = attnreg.OLS().fit(df[["x1", "const_in_f1", "x2"]], df["y"], absorb=df[["f1", "f2"]])
    assert np.isnan(m.coef_[1]) and np.isnan(m.coef_se_[1])
    assert m.aliased_.tolist() == [False, True, False]
    ref = dummy_ols(df, ["x1", "x2"], ["f1", "f2"])
    np.testing.assert_allclose(m.coef_[[0, 2]], ref.params[["x1", "x2"]], rtol=1e-10)
    assert m.df_resid_ == ref.df_resid


def test_attention_weights_reproduce_fitted_values_and_predictions():
    for levels in ([12], [12, 5], [12, 5, 3]):
        df = panel(150, levels, 14)
        fes = [f"f{j + 1}" for j in range(len(levels))]
        xs = ["x1", "x2"]
        m = attnreg.OLS(fe_tol=1e-13).fit(df[xs], df["y"], absorb=df[fes])
        A = m.attention_weights(df[xs], absorb=df[fes])
        assert A.shape == (150, 150)
        ref = dummy_ols(df, xs, fes)
        np.testing.assert_allclose(A @ df["y"].to_numpy(), ref.fittedvalues, rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(A.sum(axis=1), 1.0, atol=1e-10)
        new = df.iloc[:7].copy()
        new[xs] = np.random.default_rng(1).normal(size=(7, 2))
        An = m.attention_weights(new[xs], absorb=new[fes])
        np.testing.assert_allclose(An @ df["y"].to_numpy(), m.predict(new[xs], absorb=new[fes]),
                                   rtol=1e-10, atol=1e-10)


def test_fixed_effects_are_labelled_series_with_fixest_references():
    df = panel(300, [20, 6], 15)
    m = attnreg.OLS().fit(df[["x1", "x2"]], df["y"], absorb=df[["f1", "f2"]])
    fe = m.fixed_effects()
    assert list(fe) == ["f1", "f2"]
    assert isinstance(fe["f1"], pd.Series)
    assert sorted(fe["f2"].index) == sorted(df.f2.unique())
    assert fe["f2"].iloc[0] == 0.0  # the reference level of the second factor
    # One factor: the group means of y - X b.
    m1 = attnreg.OLS().fit(df[["x1", "x2"]], df["y"], absorb=df["f1"])
    r = df["y"] - df[["x1", "x2"]].to_numpy() @ m1.coef_
    np.testing.assert_allclose(m1.fixed_effects()["f1"], r.groupby(df.f1).mean(), rtol=1e-12)


def test_labels_of_any_hashable_type_and_array_shapes():
    df = panel(200, [10, 4], 16)
    codes1 = pd.factorize(df.f1)[0]
    tuples = [(a, 1) for a in df.f2]
    X, y = df[["x1", "x2"]].to_numpy(), df["y"].to_numpy()
    a = attnreg.OLS().fit(X, y, absorb=np.column_stack([codes1, df.f2.to_numpy()]))
    b = attnreg.OLS().fit(X, y, absorb=pd.DataFrame({"g": codes1, "h": tuples}))
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-12)
    assert a.fe_names_ == ["fe0", "fe1"] and b.fe_names_ == ["g", "h"]
    c = attnreg.OLS().fit(X, y, absorb=codes1)
    assert c.fe_names_ == ["fe0"]


def test_bad_absorb_inputs_give_clear_errors():
    df = panel(100, [6, 3], 17)
    X, y = df[["x1", "x2"]], df["y"]
    f = df.f1.copy()
    f.iloc[4] = np.nan
    with pytest.raises(ValueError, match="absorb: factor 'f1' has 1 missing label"):
        attnreg.OLS().fit(X, y, absorb=f)
    with pytest.raises(ValueError, match="has 99 labels but X has 100 rows"):
        attnreg.OLS().fit(X, y, absorb=df.f1.iloc[:99].to_numpy())
    m = attnreg.OLS().fit(X, y, absorb=df[["f1", "f2"]])
    with pytest.raises(ValueError, match="pass their levels for the new rows as absorb="):
        m.predict(X)
    new = df[["f1", "f2"]].iloc[:3].copy()
    new.iloc[1, 0] = "Lnever"
    with pytest.raises(ValueError, match="factor 'f1' has level\\(s\\) not seen in fit: 'Lnever'"):
        m.predict(X.iloc[:3], absorb=new)
    with pytest.raises(ValueError, match="not available for a fit with absorbed fixed effects"):
        m.hat_diagonal()
    plain = attnreg.OLS().fit(X, y)
    with pytest.raises(ValueError, match="only for models fitted with absorb="):
        plain.predict(X, absorb=df.f1)
    with pytest.raises(ValueError, match="fitted without absorb="):
        plain.fixed_effects()


def test_pickle_and_refit_without_absorb():
    df = panel(150, [10, 4], 18)
    X, y, F = df[["x1", "x2"]], df["y"], df[["f1", "f2"]]
    m = attnreg.OLS().fit(X, y, absorb=F)
    m2 = pickle.loads(pickle.dumps(m))
    np.testing.assert_array_equal(m2.predict(X, absorb=F), m.predict(X, absorb=F))
    m.fit(X, y)
    assert not hasattr(m, "fe_names_") and len(m.coef_) == 2 and m.intercept_ != 0.0


def test_summary_reports_within_r_squared():
    df = panel(150, [10], 19)
    m = attnreg.OLS().fit(df[["x1", "x2"]], df["y"], absorb=df["f1"])
    s = m.summary()
    assert list(s.coefficients.index) == ["x1", "x2"]
    assert s.header["r_squared_within"] == pytest.approx(m.rsquared_within_)
    assert s.header["fixed_effects"] == ["f1"]


def test_matches_pyfixest():
    pf = pytest.importorskip("pyfixest")
    df = panel(500, [40, 9], 20, disconnected=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = pf.feols("y ~ x1 + x2 + x3 | f1 + f2", data=df, vcov="iid")
    m = attnreg.OLS().fit(df[["x1", "x2", "x3"]], df["y"], absorb=df[["f1", "f2"]])
    np.testing.assert_allclose(m.coef_, fit.coef().to_numpy(), rtol=1e-7)


@pytest.mark.parametrize("two_way_fe", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
def test_absorbed_fit_with_weights_and_clusters_equals_dummy_wls(two_way_fe, weighted):
    # Absorbed fits under sample weights and cluster-robust covariances equal the dummy-variable
    # WLS: coefficients and CR0 exactly as statsmodels'; CR1 with the Stata/fixest factor
    # G/(G-1) (N-1)/(N-K), K = rank + absorbed levels not nested in a cluster, plus one per
    # nested factor (here the firm fixed effects are nested in the firm clusters: they count
    # as one parameter, as fixest's ssc(K.fixef = "nonnested") and pyfixest).
    sm = pytest.importorskip("statsmodels.api")
    rng = np.random.default_rng(7 + two_way_fe + 2 * weighted)
    n, G = 400, 25
    firm = rng.integers(0, G, n)
    year = rng.integers(0, 6, n)
    X = rng.normal(size=(n, 2)) + 0.3 * firm[:, None] / G
    y = X @ [1.0, -0.5] + 0.2 * firm + 0.1 * year + rng.normal(size=n)
    w = rng.uniform(0.5, 2.0, n) if weighted else None
    absorb = np.column_stack([firm, year]) if two_way_fe else firm
    dummies = [np.eye(G)[firm]]
    if two_way_fe:
        dummies.append(np.eye(6)[year][:, 1:])
    D = np.column_stack([X] + dummies)
    ref = (sm.WLS(y, D, weights=w) if weighted else sm.OLS(y, D)).fit(
        cov_type="cluster", cov_kwds={"groups": firm, "use_correction": False})
    m = attnreg.OLS(cov_type="CR0").fit(X, y, sample_weight=w, groups=firm, absorb=absorb)
    np.testing.assert_allclose(m.coef_, ref.params[:2], rtol=1e-9)
    np.testing.assert_allclose(m.coef_se_, ref.bse[:2], rtol=1e-8)
    assert m.n_clusters_ == G
    m1 = attnreg.OLS(cov_type="cluster").fit(X, y, sample_weight=w, groups=firm, absorb=absorb)
    K = 3 + (5 if two_way_fe else 0)  # firm levels are nested in the firm clusters: one
    factor = G / (G - 1) * (n - 1) / (n - K)
    np.testing.assert_allclose(m1.coef_se_, ref.bse[:2] * np.sqrt(factor), rtol=1e-8)
    # p-values from t with G - 1 degrees of freedom
    from scipy import stats
    np.testing.assert_allclose(m1.pvalues_, 2 * stats.t.sf(np.abs(m1.tvalues_), G - 1), rtol=1e-10)
    if two_way_fe:  # year is not nested in the firm clusters: CR2 is refused, naming CR1
        with pytest.raises(ValueError, match="CR2.*nested.*CR1"):
            attnreg.OLS(cov_type="CR2").fit(X, y, groups=firm, absorb=absorb).coef_se_
    else:
        m2 = attnreg.OLS(cov_type="CR2").fit(X, y, sample_weight=w, groups=firm, absorb=absorb)
        np.testing.assert_allclose(m2.coef_se_, _dummy_cr2_se(D, y, w, firm)[:2], rtol=1e-8)


def _dummy_cr2_se(D, y, w, cl):
    # CR2 (Bell-McCaffrey) of the dummy-variable (W)LS written out: pseudo-inverse square roots
    # of I - H_gg (the fixed effects' own directions in a cluster have eigenvalue 0).
    rw = np.ones(len(y)) if w is None else np.sqrt(w)
    Dw, yw = D * rw[:, None], y * rw
    G = np.linalg.pinv(Dw)
    B = G @ G.T
    e = yw - Dw @ (G @ yw)
    H = Dw @ G
    meat = np.zeros((D.shape[1], D.shape[1]))
    for g in np.unique(cl):
        i = np.flatnonzero(cl == g)
        lam, U = np.linalg.eigh(np.eye(len(i)) - H[np.ix_(i, i)])
        c = np.where(lam > 1e-10, 1 / np.sqrt(np.maximum(lam, 1e-300)), 0.0)
        u = Dw[i].T @ (U @ (c * (U.T @ e[i])))
        meat += np.outer(u, u)
    return np.sqrt(np.diag(B @ meat @ B))


@pytest.mark.parametrize("weighted", [False, True])
def test_absorbed_cr2_with_factors_nested_in_clusters_equals_dummy_wls(weighted):
    # Two absorbed factors, both nested in the clusters (firm, and industry = a coarsening of
    # firm; clusters = groups of industries), singletons included: CR2 of the absorbed fit
    # equals the dummy-variable fit's CR2 (Pustejovsky and Tipton 2018, Theorem 2).
    rng = np.random.default_rng(11 + weighted)
    n = 300
    firm = np.concatenate([rng.integers(0, 30, n - 3), [30, 31, 32]])
    industry = firm // 3
    cl = industry // 2
    X = rng.normal(size=(n, 2)) + 0.2 * firm[:, None] / 30
    y = X @ [0.5, -1.0] + 0.1 * firm + rng.normal(size=n)
    w = rng.uniform(0.5, 2.0, n) if weighted else None
    D = np.column_stack([X, np.eye(33)[firm], np.eye(11)[industry]])
    m = attnreg.OLS(cov_type="CR2").fit(X, y, sample_weight=w, groups=cl,
                                        absorb=np.column_stack([firm, industry]))
    np.testing.assert_allclose(m.coef_se_, _dummy_cr2_se(D, y, w, cl)[:2], rtol=1e-8)


@pytest.mark.parametrize("k,m", [(150, 0), (-150, 0), (0, 150), (0, -150), (150, -150), (-150, 150)])
@pytest.mark.parametrize("cov_type", ["nonrobust", "HC1", "HAC", "cluster", "CR0"])
def test_absorbed_standard_errors_scale_with_the_data(k, m, cov_type):
    # Scale equivariance: X -> 10^k X, y -> 10^m y scales coefficients and their standard errors
    # by 10^(m-k); at these scales a covariance's diagonal underflows or overflows, so the
    # standard errors come from the inner fit's scaled computation.
    rng = np.random.default_rng(4)
    n = 150
    f = rng.integers(0, 6, n)
    X = rng.normal(size=(n, 2)) + f[:, None] / 6
    y = X @ [0.7, -1.2] + 0.3 * f + rng.normal(size=n)
    kw = {"groups": f} if cov_type in ("cluster", "CR0") else {}
    a = attnreg.OLS(cov_type=cov_type).fit(X, y, absorb=f, **kw)
    b = attnreg.OLS(cov_type=cov_type).fit(X * 10.0**k, y * 10.0**m, absorb=f, **kw)
    c = 10.0 ** (m - k)
    np.testing.assert_allclose(b.coef_ / c, a.coef_, rtol=1e-12)
    np.testing.assert_allclose(b.coef_se_ / c, a.coef_se_, rtol=1e-12)
    assert np.all(np.isfinite(b.coef_se_)) and np.all(b.coef_se_ > 0)
