"""Formula interface (attnreg.ols / ridge / kreg) and regression summaries.

Formula fits must equal the array fits on the same design exactly; summaries, confidence
intervals and prediction intervals must reproduce statsmodels' OLS results (an independent
implementation) to 1e-10.
"""
import inspect
import pickle
import re
import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
import statsmodels.formula.api as smf

import attnreg
from attnreg import RegressionSummary


def make_frame(n=120, seed=0, missing=False):
    rng = np.random.default_rng(seed)
    d = pd.DataFrame({
        "x": rng.normal(size=n) * 2 + 5,
        "z": rng.uniform(1, 3, size=n),
        "g": rng.choice(["a", "b", "c"], size=n),
        "state": rng.choice(["s1", "s2", "s3", "s4"], size=n),
    })
    d["y"] = np.exp(0.5 + 0.3 * d.x - 0.02 * d.x**2 + 0.4 * (d.g == "b") + 0.2 * np.log(d.z)
                    + rng.normal(size=n) * (0.2 + 0.1 * d.z))
    if missing:
        d.loc[[3, 17], "x"] = np.nan
        d.loc[[5], "g"] = None
        d.loc[[40], "y"] = np.nan
    return d


def manual_design(d):
    return pd.DataFrame({"x": d.x, "I(x ** 2)": d.x**2, "log(z)": np.log(d.z),
                         "C(g)[T.b]": (d.g == "b").astype(float),
                         "C(g)[T.c]": (d.g == "c").astype(float)})


FORMULA = "log(y) ~ x + I(x**2) + log(z) + C(g)"


# -- formula fits ------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", [0, 1, 2])
def test_formula_fit_equals_array_fit_exactly(seed):
    d = make_frame(seed=seed)
    m = attnreg.ols(FORMULA, d)
    ref = attnreg.OLS().fit(manual_design(d), np.log(d.y))
    np.testing.assert_array_equal(m.coef_, ref.coef_)
    assert m.intercept_ == ref.intercept_
    np.testing.assert_array_equal(m.coef_se_, ref.coef_se_)
    assert isinstance(m, attnreg.OLS) and type(m).__name__ == "OLS"
    assert m.coef_.shape == (5,)  # a 1-D response, never (n, 1) multi-output
    assert list(m.feature_names_in_) == ["x", "I(x ** 2)", "log(z)", "C(g)[T.b]", "C(g)[T.c]"]
    s = m.summary()
    assert list(s.coefficients.index) == ["(intercept)"] + list(m.feature_names_in_)
    assert s.dep_var == "log(y)"
    r = attnreg.ridge(FORMULA, d, alpha=2.5)
    rref = attnreg.Ridge(alpha=2.5).fit(manual_design(d), np.log(d.y))
    np.testing.assert_array_equal(r.coef_, rref.coef_)
    assert type(r).__name__ == "Ridge" and r.coef_.shape == (5,)


def test_formula_without_intercept_and_kwargs():
    d = make_frame()
    m = attnreg.ols("log(y) ~ x + log(z) - 1", d, cov_type="HC3")
    assert not m.fit_intercept and m.cov_type == "HC3"
    ref = attnreg.OLS(fit_intercept=False, cov_type="HC3").fit(d[["x"]].assign(lz=np.log(d.z)), np.log(d.y))
    np.testing.assert_array_equal(m.coef_, ref.coef_)
    np.testing.assert_array_equal(m.coef_se_, ref.coef_se_)
    with pytest.raises(TypeError, match="fit_intercept: set by the formula"):
        attnreg.ols("y ~ x", d, fit_intercept=False)


def test_formula_predict_applies_the_same_transforms():
    d = make_frame()
    m = attnreg.ols(FORMULA, d)
    new = make_frame(n=7, seed=9)
    ref = attnreg.OLS().fit(manual_design(d), np.log(d.y))
    np.testing.assert_allclose(m.predict(new), ref.predict(manual_design(new)), rtol=1e-13)
    np.testing.assert_allclose(m.attention_weights(new), ref.attention_weights(manual_design(new)),
                               rtol=1e-12, atol=1e-15)
    pi = m.predict(new, interval="prediction")
    pref = ref.predict(manual_design(new), interval="prediction")
    pd.testing.assert_frame_equal(pi, pref, rtol=1e-12)
    # the design itself is still accepted
    np.testing.assert_allclose(m.predict(manual_design(new)), ref.predict(manual_design(new)), rtol=1e-13)
    # a level never seen in fitting is an error, not a row of zeros
    bad = new.copy()
    bad.loc[bad.index[0], "g"] = "zzz"
    with pytest.raises(ValueError, match="zzz"):
        m.predict(bad)
    with pytest.raises(ValueError, match=r"lack the formula's variables \['z'\]"):
        m.predict(new.drop(columns="z"))
    m2 = pickle.loads(pickle.dumps(m))
    np.testing.assert_array_equal(m2.predict(new), m.predict(new))


def test_formula_drops_missing_rows_like_statsmodels():
    d = make_frame(missing=True)
    m = attnreg.ols(FORMULA, d)
    assert m.n_dropped_ == 4
    sm_fit = smf.ols("np.log(y) ~ x + I(x**2) + np.log(z) + C(g)", d, missing="drop").fit()
    assert int(sm_fit.nobs) == len(d) - 4 == int(m._model.n_obs)
    patsy_names = {"x": "x", "I(x ** 2)": "I(x ** 2)", "log(z)": "np.log(z)",
                   "C(g)[T.b]": "C(g)[T.b]", "C(g)[T.c]": "C(g)[T.c]"}
    np.testing.assert_allclose(m.coef_, sm_fit.params[[patsy_names[c] for c in m.feature_names_in_]],
                               rtol=1e-10)
    keep = d.dropna()
    ref = attnreg.OLS().fit(manual_design(keep), np.log(keep.y))
    np.testing.assert_array_equal(m.coef_, ref.coef_)
    assert "4 rows with missing values dropped." in str(m.summary())
    # NaN produced by a transformation (log of a negative number) is dropped too
    d2 = make_frame()
    d2.loc[[0, 1], "z"] = -1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        m2 = attnreg.ols("log(y) ~ x + log(z)", d2)
    assert m2.n_dropped_ == 2


def test_formula_level_only_in_dropped_rows_makes_no_column():
    d = make_frame()
    d.loc[7, "g"] = "d"
    d.loc[7, "x"] = np.nan
    m = attnreg.ols("log(y) ~ x + C(g)", d)
    assert list(m.feature_names_in_) == ["x", "C(g)[T.b]", "C(g)[T.c]"]


def test_formula_errors():
    d = make_frame()
    with pytest.raises(ValueError, match="needs exactly one '~'"):
        attnreg.ols("y x", d)
    with pytest.raises(TypeError, match="data: must be a pandas DataFrame"):
        attnreg.ols("y ~ x", np.zeros((3, 2)))
    with pytest.raises(ValueError, match="response must be one numeric column"):
        attnreg.ols("C(g) ~ x", d)
    with pytest.raises(ValueError, match=r"fixed-effect column\(s\) \['nope'\]"):
        attnreg.ols("y ~ x | nope", d)
    with pytest.raises(ValueError, match="absorbed by OLS only"):
        attnreg.ridge("y ~ x | state", d)
    with pytest.raises(ValueError, match="weights: no column 'w'"):
        attnreg.ols("y ~ x", d, weights="w")
    with pytest.raises(ValueError, match="groups: must be a column name"):
        attnreg.ols("y ~ x", d, groups=np.arange(5))


_FIT = inspect.signature(attnreg.OLS.fit).parameters


@pytest.mark.parametrize("param,kw,msg", [
    ("absorb", {"formula": "log(y) ~ x | state"}, "remove the '| ...' part"),
    ("groups", {"formula": "log(y) ~ x", "groups": "state"}, "drop groups="),
    ("sample_weight", {"formula": "log(y) ~ x", "weights": "z"}, "drop weights="),
])
def test_formula_says_when_the_fit_lacks_an_argument(param, kw, msg):
    if param in _FIT:
        pytest.skip(f"OLS.fit takes {param}= in this build (the fitting test covers it)")
    with pytest.raises(ValueError, match=f"takes no '{param}' argument; {re.escape(msg)}"):
        attnreg.ols(data=make_frame(), **kw)


@pytest.mark.skipif("absorb" not in _FIT, reason="OLS.fit has no absorb= in this build (fixed effects)")
def test_formula_bar_absorbs_fixed_effects():
    d = make_frame()
    m = attnreg.ols("log(y) ~ x + log(z) | state + g", d)
    X = pd.DataFrame({"x": d.x, "log(z)": np.log(d.z)})
    ref = attnreg.OLS().fit(X, np.log(d.y), absorb=d[["state", "g"]])
    np.testing.assert_array_equal(m.coef_, ref.coef_)
    one = attnreg.ols("log(y) ~ x + log(z) | state", d)
    ref1 = attnreg.OLS().fit(X, np.log(d.y), absorb=d["state"])
    np.testing.assert_array_equal(one.coef_, ref1.coef_)
    s1 = one.summary()
    h = s1.header
    assert h["r_squared_within"] == one.rsquared_within_ and h["df_absorbed"] == one.df_absorbed_
    assert h["fixed_effects"] == ["state"] and h["n_fe_levels"] == [4]
    assert "Fixed Effects:" in str(s1) and "state (4)" in str(s1)
    # log-likelihood and AIC as the dummy-variable OLS (the fixed effects are parameters)
    r = smf.ols("np.log(y) ~ x + np.log(z) + C(state)", d).fit()
    np.testing.assert_allclose(h["log_likelihood"], r.llf, rtol=1e-10)
    np.testing.assert_allclose(h["aic"], r.aic, rtol=1e-10)
    np.testing.assert_allclose(h["bic"], r.bic, rtol=1e-10)
    # F: Wald test of the slopes (the fixed effects hold the constant)
    V = one.cov_params()
    b = one.coef_
    np.testing.assert_allclose(h["F"], b @ np.linalg.solve(V, b) / 2, rtol=1e-10)
    # predict on new data takes the fixed-effect labels from the data frame
    new = make_frame(n=6, seed=11)
    np.testing.assert_allclose(one.predict(new), ref1.predict(
        pd.DataFrame({"x": new.x, "log(z)": np.log(new.z)}), absorb=new["state"]), rtol=1e-13)


@pytest.mark.skipif("groups" not in _FIT, reason="OLS.fit has no groups= in this build (clusters)")
def test_formula_groups_by_column_name():
    d = make_frame()
    m = attnreg.ols("log(y) ~ x + log(z)", d, cov_type="cluster", groups="state")
    X = pd.DataFrame({"x": d.x, "log(z)": np.log(d.z)})
    ref = attnreg.OLS(cov_type="cluster").fit(X, np.log(d.y), groups=d["state"])
    np.testing.assert_array_equal(m.coef_se_, ref.coef_se_)
    assert m.summary().header["n_clusters"] == 4


@pytest.mark.skipif("sample_weight" not in _FIT, reason="OLS.fit has no sample_weight= in this build")
def test_formula_weights_by_column_name():
    d = make_frame()
    d["w"] = np.linspace(0.5, 2.0, len(d))
    m = attnreg.ols("log(y) ~ x + log(z)", d, weights="w")
    X = pd.DataFrame({"x": d.x, "log(z)": np.log(d.z)})
    ref = attnreg.OLS().fit(X, np.log(d.y), sample_weight=d["w"].to_numpy())
    np.testing.assert_array_equal(m.coef_, ref.coef_)


@pytest.mark.parametrize("fn", [attnreg.ols, attnreg.ridge, attnreg.kreg])
def test_formula_sample_weight_points_to_weights(fn):
    d = make_frame()
    with pytest.raises(TypeError, match=r"sample_weight: the formula interface takes weights="):
        fn("y ~ x", d, sample_weight=np.ones(len(d)))


# -- summaries against statsmodels -------------------------------------------------------------

def _data(n, p, seed, intercept=True):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)) * rng.uniform(0.5, 20, size=p) + rng.normal(size=p) * 3
    y = (X @ rng.normal(size=p) + 2.0 + rng.standard_t(5, size=n) * (1 + np.abs(X[:, 0]) / 10))
    return X, y


CASES = [("nonrobust", {}, {}), ("HC0", {}, {}), ("HC1", {}, {}), ("HC2", {}, {}), ("HC3", {}, {}),
         ("HAC", {"maxlags": 3}, {"maxlags": 3, "use_correction": False})]


@pytest.mark.parametrize("cov_type,ours,theirs", CASES)
@pytest.mark.parametrize("n,p,seed,intercept", [(40, 1, 0, True), (80, 4, 1, True), (200, 6, 2, True),
                                                (35, 3, 3, False), (12, 2, 4, True)])
def test_summary_matches_statsmodels(cov_type, ours, theirs, n, p, seed, intercept):
    X, y = _data(n, p, seed)
    m = attnreg.OLS(fit_intercept=intercept, cov_type=cov_type, **ours).fit(X, y)
    D = sm.add_constant(X) if intercept else X
    kw = {"cov_kwds": theirs} if theirs else {}
    # use_t: Student t on the residual df for robust covariances too (as Stata and R's coeftest)
    r = sm.OLS(y, D).fit(cov_type=cov_type, use_t=True, **kw)
    for alpha in (0.05, 0.1):
        s = m.summary(level=1 - alpha)
        assert isinstance(s, RegressionSummary)
        c = s.coefficients
        assert list(c.columns) == ["estimate", "std_error", "t", "p_value", "ci_lower", "ci_upper"]
        np.testing.assert_allclose(c.estimate, r.params, rtol=1e-10)
        np.testing.assert_allclose(c.std_error, r.bse, rtol=1e-10)
        np.testing.assert_allclose(c.t, r.tvalues, rtol=1e-10)
        np.testing.assert_allclose(c.p_value, r.pvalues, rtol=1e-10, atol=1e-300)
        ci = r.conf_int(alpha=alpha)
        np.testing.assert_allclose(c.ci_lower, ci[:, 0], rtol=1e-10)
        np.testing.assert_allclose(c.ci_upper, ci[:, 1], rtol=1e-10)
        ci2 = m.conf_int(level=1 - alpha)
        assert list(ci2.columns) == ["lower", "upper"]
        np.testing.assert_allclose(ci2.to_numpy(), ci, rtol=1e-10)
    h = s.header
    assert h["n"] == n and h["df_resid"] == r.df_resid and h["df_model"] == r.df_model
    assert h["cov_type"] == cov_type
    if cov_type == "HAC":
        assert h["maxlags"] == 3 and "HAC, 3 lags" in str(s)
    for ours_key, theirs_val in [("r_squared", r.rsquared), ("adj_r_squared", r.rsquared_adj),
                                 ("F", r.fvalue), ("F_pvalue", r.f_pvalue),
                                 ("log_likelihood", r.llf), ("aic", r.aic), ("bic", r.bic),
                                 ("sigma", np.sqrt(r.scale))]:
        np.testing.assert_allclose(h[ours_key], float(np.squeeze(theirs_val)), rtol=1e-10,
                                   atol=1e-300, err_msg=ours_key)


@pytest.mark.skipif("sample_weight" not in _FIT, reason="OLS.fit has no sample_weight= in this build")
@pytest.mark.parametrize("cov_type", ["nonrobust", "HC1"])
def test_weighted_summary_matches_statsmodels_wls(cov_type):
    X, y = _data(70, 3, 12)
    w = np.random.default_rng(3).uniform(0.2, 3.0, size=70)
    m = attnreg.OLS(cov_type=cov_type).fit(X, y, sample_weight=w)
    r = sm.WLS(y, sm.add_constant(X), weights=w).fit(cov_type=cov_type, use_t=True)
    s = m.summary(level=0.9)
    np.testing.assert_allclose(s.coefficients.std_error, r.bse, rtol=1e-10)
    np.testing.assert_allclose(s.coefficients[["ci_lower", "ci_upper"]], r.conf_int(alpha=0.1), rtol=1e-10)
    for key, val in [("F", r.fvalue), ("F_pvalue", r.f_pvalue), ("log_likelihood", r.llf),
                     ("aic", r.aic), ("bic", r.bic), ("r_squared", r.rsquared)]:
        np.testing.assert_allclose(s.header[key], float(np.squeeze(val)), rtol=1e-10, err_msg=key)
    f = r.get_prediction(sm.add_constant(X[:5])).summary_frame(alpha=0.1)
    ci = m.predict(X[:5], interval="confidence", level=0.9)
    np.testing.assert_allclose(ci.lower, f["mean_ci_lower"], rtol=1e-10)
    # frequency weights: the summary of the data with row i repeated w_i times
    fw = np.random.default_rng(4).integers(1, 4, size=70).astype(float)
    mf = attnreg.OLS(weight_type="frequency").fit(X, y, sample_weight=fw)
    rep = np.repeat(np.arange(70), fw.astype(int))
    rr = sm.OLS(y[rep], sm.add_constant(X[rep])).fit()
    hf = mf.summary().header
    assert hf["n"] == rep.size
    for key, val in [("log_likelihood", rr.llf), ("aic", rr.aic), ("bic", rr.bic), ("F", rr.fvalue)]:
        np.testing.assert_allclose(hf[key], val, rtol=1e-10, err_msg=key)


@pytest.mark.skipif("groups" not in _FIT, reason="OLS.fit has no groups= in this build (clusters)")
def test_clustered_summary_matches_statsmodels():
    X, y = _data(90, 2, 13)
    g = np.repeat(np.arange(15), 6)
    m = attnreg.OLS(cov_type="cluster").fit(X, y, groups=g)
    r = sm.OLS(y, sm.add_constant(X)).fit(cov_type="cluster", cov_kwds={"groups": g}, use_t=True)
    s = m.summary()
    np.testing.assert_allclose(s.coefficients.std_error, r.bse, rtol=1e-10)
    np.testing.assert_allclose(s.coefficients.p_value, r.pvalues, rtol=1e-10)
    np.testing.assert_allclose(s.coefficients[["ci_lower", "ci_upper"]], r.conf_int(), rtol=1e-10)
    np.testing.assert_allclose(s.header["F"], r.fvalue, rtol=1e-10)
    np.testing.assert_allclose(s.header["F_pvalue"], r.f_pvalue, rtol=1e-10)
    assert s.header["n_clusters"] == 15 and "No. Clusters:" in str(s)
    assert s.header["df_inference"] == 14 and "Df (t, F tests):" in str(s)


@pytest.mark.parametrize("cov_type", ["nonrobust", "HC3"])
@pytest.mark.parametrize("alpha", [0.05, 0.2])
def test_prediction_intervals_match_statsmodels(cov_type, alpha):
    X, y = _data(60, 3, 7)
    Xn, _ = _data(9, 3, 8)
    m = attnreg.OLS(cov_type=cov_type).fit(X, y)
    r = sm.OLS(y, sm.add_constant(X)).fit(cov_type=cov_type, use_t=True)
    f = r.get_prediction(sm.add_constant(Xn, has_constant="add")).summary_frame(alpha=alpha)
    ci = m.predict(Xn, interval="confidence", level=1 - alpha)
    pi = m.predict(Xn, interval="prediction", level=1 - alpha)
    assert list(ci.columns) == ["fit", "se_fit", "lower", "upper"]
    np.testing.assert_allclose(ci.fit, f["mean"], rtol=1e-12)
    np.testing.assert_allclose(ci.se_fit, f["mean_se"], rtol=1e-10)
    np.testing.assert_allclose(ci.lower, f["mean_ci_lower"], rtol=1e-10)
    np.testing.assert_allclose(ci.upper, f["mean_ci_upper"], rtol=1e-10)
    np.testing.assert_allclose(pi.lower, f["obs_ci_lower"], rtol=1e-10)
    np.testing.assert_allclose(pi.upper, f["obs_ci_upper"], rtol=1e-10)
    # cov_type given at predict time equals the model fitted with it
    m0 = attnreg.OLS().fit(X, y)
    pd.testing.assert_frame_equal(m0.predict(Xn, interval="confidence", level=1 - alpha, cov_type=cov_type), ci)
    np.testing.assert_array_equal(m0.predict(Xn), ci.fit.to_numpy())


def test_prediction_interval_index_and_errors():
    X, y = _data(30, 2, 3)
    m = attnreg.OLS().fit(pd.DataFrame(X, columns=["a", "b"]), y)
    new = pd.DataFrame(X[:4], columns=["a", "b"], index=list("pqrs"))
    assert list(m.predict(new, interval="confidence").index) == list("pqrs")
    with pytest.raises(ValueError, match="interval: must be None, 'confidence' or 'prediction'"):
        m.predict(new, interval="both")
    for bad in (0, 1, 1.5, 95, -0.1, "x"):
        with pytest.raises(ValueError, match="level: must be"):
            m.predict(new, interval="confidence", level=bad)
        with pytest.raises(ValueError, match="level: must be"):
            m.summary(level=bad)
        with pytest.raises(ValueError, match="level: must be"):
            m.conf_int(level=bad)
    # the deprecated alpha= refuses what it refused before (before any warning)
    for bad in (0, 1, 1.5, -0.1, "0.05", True):
        with pytest.raises(ValueError, match="alpha: must be a number strictly between 0 and 1"):
            m.predict(new, interval="confidence", alpha=bad)
        with pytest.raises(ValueError, match="alpha"):
            m.summary(alpha=bad)
    Y = np.column_stack([y, y + 1])
    mm = attnreg.OLS().fit(X, Y)
    with pytest.raises(ValueError, match="only for a single output"):
        mm.predict(X, interval="prediction")
    with pytest.raises(ValueError, match="only for a single output"):
        mm.summary()


def test_summary_aliased_and_exact_fit_cases():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(30, 3))
    X = np.column_stack([X, X[:, 0] + X[:, 1]])
    y = rng.normal(size=30)
    with pytest.warns(UserWarning, match="aliased"):
        m = attnreg.OLS().fit(X, y)
    s = m.summary()
    assert np.isnan(s.coefficients.iloc[4]).all()
    assert s.header["df_model"] == 3
    r = sm.OLS(y, sm.add_constant(X[:, :3])).fit()
    np.testing.assert_allclose(s.header["F"], r.fvalue, rtol=1e-10)
    np.testing.assert_allclose(s.header["aic"], r.aic, rtol=1e-10)
    assert "Aliased (coefficient nan, left out of the fit): x3." in str(s)
    ci = m.predict(X[:3], interval="confidence")
    np.testing.assert_allclose(ci.se_fit, r.get_prediction(sm.add_constant(X[:3, :3])).se_mean, rtol=1e-10)


def test_summary_text_and_html():
    d = make_frame()
    s = attnreg.ols(FORMULA, d, cov_type="HC1").summary()
    text = str(s)
    assert text == repr(s)
    for token in ("OLS Regression Results", "Dep. Variable:", "log(y)", "No. Observations:",
                  "R-squared:", "Adj. R-squared:", "F-statistic:", "Prob (F-statistic):",
                  "Log-Likelihood:", "AIC:", "BIC:", "Covariance Type:", "HC1", "coef",
                  "std err", "P>|t|", "[0.025", "0.975]", "C(g)[T.b]", "I(x ** 2)"):
        assert token in text, token
    lines = text.splitlines()
    assert lines[1] == "=" * 78
    html = s._repr_html_()
    assert html.startswith("<div>") and "<table" in html and "C(g)[T.b]" in html
    assert "Prob (F-statistic):" in html


def test_existing_attrs_still_reachable_through_header():
    X, y = _data(50, 2, 1)
    m = attnreg.OLS().fit(X, y)
    h = m.summary().header
    assert h["r_squared"] == m.rsquared_ and h["adj_r_squared"] == m.rsquared_adj_
    np.testing.assert_allclose(h["sigma"] ** 2, m.sigma2_, rtol=1e-14)


# -- kernel regression from a formula ----------------------------------------------------------

def test_kreg_formula_equals_array_fit_and_keeps_factors():
    d = make_frame(n=90)
    d["lvl"] = pd.Categorical(np.where(d.z < 1.7, "low", np.where(d.z < 2.4, "mid", "high")),
                              categories=["low", "mid", "high"], ordered=True)
    k = attnreg.kreg("log(y) ~ x + C(g) + lvl", d, bandwidth=[1.5, 0.2, 0.3])
    assert type(k).__name__ == "LocalLinear" and k.var_types_ == "cuo"
    X = pd.DataFrame({"x": d.x, "C(g)": pd.Categorical(d.g), "lvl": d.lvl})
    ref = attnreg.LocalLinear(bandwidth=[1.5, 0.2, 0.3]).fit(X, np.log(d.y))
    new = make_frame(n=5, seed=3)
    new["lvl"] = pd.Categorical(["mid", "low", "high", "mid", "low"], categories=["low", "mid", "high"], ordered=True)
    Xn = pd.DataFrame({"x": new.x, "C(g)": pd.Categorical(new.g), "lvl": new.lvl})
    np.testing.assert_array_equal(k.predict(new), ref.predict(Xn))
    lc = attnreg.kreg("log(y) ~ log(x) + C(g)", d, estimator="lc", bandwidth=[0.3, 0.1])
    Xd = pd.DataFrame({"log(x)": np.log(d.x), "C(g)": pd.Categorical(d.g)})
    refc = attnreg.NadarayaWatson(bandwidth=[0.3, 0.1]).fit(Xd, np.log(d.y))
    np.testing.assert_array_equal(lc.predict(d), refc.predict(Xd))
    assert lc.var_types_ == "cu"
    bad = new.copy()
    bad.loc[bad.index[0], "g"] = "zzz"
    with pytest.raises(ValueError, match="levels not seen in fitting"):
        k.predict(bad)


@pytest.mark.parametrize("formula,term,suggest", [
    ("y ~ x*z", "x:z", "y ~ x + z"),
    ("y ~ x + x:C(g)", "x:C(g)", "y ~ x + C(g)"),
])
def test_kreg_refuses_interactions(formula, term, suggest):
    d = make_frame(n=40)
    with pytest.raises(ValueError, match=f"interaction term '{term.replace('(', '[(]').replace(')', '[)]')}'") as e:
        attnreg.kreg(formula, d)
    assert "product kernel" in str(e.value) and suggest in str(e.value)


def test_kreg_errors_and_missing():
    d = make_frame(n=60, missing=True)
    k = attnreg.kreg("log(y) ~ x + C(g)", d, estimator="lc", bandwidth=[1.0, 0.2])
    assert k.n_dropped_ == 4
    with pytest.raises(ValueError, match="estimator: must be 'll'"):
        attnreg.kreg("y ~ x", d, estimator="ols")
    with pytest.raises(ValueError, match="no fixed effects to absorb"):
        attnreg.kreg("y ~ x | g", d)
    with pytest.raises(ValueError, match="write C\\(column\\)"):
        attnreg.kreg("y ~ x + C(g, Sum)", d)
