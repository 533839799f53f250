"""OLS: oracle checks (numpy lstsq, direct sandwich-free formulas), NIST Longley, attention
identities of seed 004, scikit-learn conformance and bad input."""
import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

import attnreg


@parametrize_with_checks([attnreg.OLS()])
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.mark.parametrize("n,p,intercept,seed", [(10, 1, True, 0), (60, 4, True, 1),
                                                (300, 9, False, 2), (6, 5, False, 3),
                                                (500, 30, True, 4)])
def test_matches_oracle(n, p, intercept, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(2.0, 3.0, size=(n, p))
    y = X @ np.linspace(-1, 1, p) + rng.normal(size=n)
    m = attnreg.OLS(fit_intercept=intercept).fit(X, y)
    D = np.column_stack([np.ones(n), X]) if intercept else X
    beta, *_ = np.linalg.lstsq(D, y, rcond=None)
    got = np.concatenate(([m.intercept_], m.coef_)) if intercept else m.coef_
    np.testing.assert_allclose(got, beta, rtol=1e-9, atol=1e-11)
    # classical standard errors from the direct formula sigma^2 diag((D'D)^-1)
    resid = y - D @ beta
    if n > D.shape[1]:
        s2 = resid @ resid / (n - D.shape[1])
        se = np.sqrt(s2 * np.diag(np.linalg.inv(D.T @ D)))  # oracle only
        got_se = np.concatenate(([m.intercept_se_], m.coef_se_)) if intercept else m.coef_se_
        np.testing.assert_allclose(got_se, se, rtol=1e-8)
    Xt = rng.normal(size=(5, p))
    A = m.attention_weights(Xt)
    assert A.shape == (5, n)
    np.testing.assert_allclose(A @ y, m.predict(Xt), rtol=1e-10, atol=1e-10)
    if intercept:
        np.testing.assert_allclose(A.sum(axis=1), 1.0, atol=1e-12)
    # seed 004 eq. 7: A = F_test F_train' with F = X U Lambda^{-1/2}
    lam, U = np.linalg.eigh(D.T @ D)
    Dt = np.column_stack([np.ones(5), Xt]) if intercept else Xt
    if lam.min() > 1e-8 * lam.max():
        F_tr, F_te = D @ U / np.sqrt(lam), Dt @ U / np.sqrt(lam)
        np.testing.assert_allclose(A, F_te @ F_tr.T, atol=1e-8)


def test_multi_output_and_pickle():
    rng = np.random.default_rng(5)
    X, Y = rng.normal(size=(40, 3)), rng.normal(size=(40, 2))
    m = attnreg.OLS().fit(X, Y)
    assert m.coef_.shape == (2, 3) and m.intercept_.shape == (2,)
    for c in range(2):
        one = attnreg.OLS().fit(X, Y[:, c])
        np.testing.assert_allclose(m.coef_[c], one.coef_, rtol=1e-12)
    m2 = pickle.loads(pickle.dumps(m))
    np.testing.assert_array_equal(m2.predict(X), m.predict(X))
    np.testing.assert_allclose(m2.attention_weights(X[:4]), m.attention_weights(X[:4]), atol=1e-15)


def test_pandas_and_summary(data_dir):
    d = pd.read_csv(data_dir / "engel.csv")
    m = attnreg.OLS().fit(d[["income"]], d["foodexp"])
    assert list(m.feature_names_in_) == ["income"]
    s = m.summary().coefficients
    assert list(s.index) == ["(intercept)", "income"]
    assert np.all(np.isfinite(s["std_error"]))


def test_nist_longley(data_dir):
    d = pd.read_csv(data_dir / "nist" / "Longley.csv")
    cert = pd.read_csv(data_dir / "nist" / "Longley_certified.csv")
    m = attnreg.OLS().fit(d.drop(columns="y"), d["y"])
    est = np.concatenate(([m.intercept_], m.coef_))
    se = np.concatenate(([m.intercept_se_], m.coef_se_))
    lre = lambda a, c: np.minimum(15, -np.log10(np.abs(a - c) / np.abs(c)))  # noqa: E731
    assert lre(est, cert["estimate"].to_numpy()).min() > 11
    assert lre(se, cert["std_error"].to_numpy()).min() > 11


def test_rank_deficient_is_aliased_with_warning():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(25, 3))
    X[:, 2] = X[:, 0] - X[:, 1]
    y = rng.normal(size=25)
    with pytest.warns(UserWarning, match="aliased"):
        m = attnreg.OLS().fit(X, y)
    assert m.rank_ == 3 and np.isnan(m.coef_).sum() == 1
    keep = ~m.aliased_[1:]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sub = attnreg.OLS().fit(X[:, keep], y)
    np.testing.assert_allclose(m.predict(X), sub.predict(X[:, keep]), atol=1e-10)


def test_bad_input_messages():
    X = np.ones((5, 2))
    X[1, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        attnreg.OLS().fit(X, np.arange(5.0))
    m = attnreg.OLS().fit(np.random.default_rng(0).normal(size=(5, 2)), np.arange(5.0))
    with pytest.raises(ValueError, match="2 features"):
        m.predict(np.ones((3, 3)))
    with pytest.raises(ValueError, match="n_threads"):
        attnreg.OLS(n_threads=-1).fit(np.ones((3, 1)), np.arange(3.0))


def test_build_info():
    info = attnreg.build_info()
    assert info["version"] == attnreg.__version__
    assert isinstance(info["cuda_compiled"], bool) and info["max_threads"] >= 1


# ----------------------------------------------------------------------------- issue 6 additions
statsmodels = pytest.importorskip("statsmodels.api")


def _usmacro(data_dir):
    d = pd.read_csv(data_dir / "usmacro.csv").dropna().reset_index(drop=True)
    X = d[["unemp", "tbill", "m1"]].to_numpy()
    X = np.column_stack([X[1:], d["inflation"].to_numpy()[:-1]])  # lagged inflation
    return X, d["inflation"].to_numpy()[1:]


def _cps(data_dir, n=3000):
    d = pd.read_csv(data_dir / "cps1988.csv").iloc[:n]
    X = np.column_stack([d.education, d.experience, d.experience**2 / 100])
    return X, np.log(d.wage.to_numpy())


@pytest.mark.parametrize("cov_type", ["nonrobust", "HC0", "HC1", "HC2", "HC3"])
def test_standard_errors_match_statsmodels(data_dir, cov_type):
    X, y = _cps(data_dir)
    m = attnreg.OLS(cov_type=cov_type).fit(X, y)
    sm = statsmodels.OLS(y, statsmodels.add_constant(X)).fit(cov_type=cov_type)
    ours = np.concatenate(([m.intercept_se_], m.coef_se_))
    np.testing.assert_allclose(ours, sm.bse, rtol=1e-10)
    np.testing.assert_allclose(m.cov_params(), sm.cov_params(), rtol=1e-10, atol=1e-10 * np.abs(sm.cov_params()).max())
    np.testing.assert_allclose(m.tvalues_, sm.tvalues, rtol=1e-9)
    np.testing.assert_allclose(m.rsquared_, sm.rsquared, rtol=1e-12)
    np.testing.assert_allclose(m.rsquared_adj_, sm.rsquared_adj, rtol=1e-12)
    if cov_type == "nonrobust":  # statsmodels uses Student t only for the classical covariance
        np.testing.assert_allclose(m.pvalues_, sm.pvalues, rtol=1e-9, atol=1e-300)


@pytest.mark.parametrize("maxlags,adjust", [(0, False), (1, False), (4, False), (4, True), (8, False)])
def test_hac_matches_statsmodels(data_dir, maxlags, adjust):
    X, y = _usmacro(data_dir)
    m = attnreg.OLS(cov_type="HAC", maxlags=maxlags, hac_adjust=adjust).fit(X, y)
    sm = statsmodels.OLS(y, statsmodels.add_constant(X)).fit(
        cov_type="HAC", cov_kwds={"maxlags": maxlags, "use_correction": adjust})
    np.testing.assert_allclose(np.concatenate(([m.intercept_se_], m.coef_se_)), sm.bse, rtol=1e-10)


def test_sandwich_direct_formulas():
    """HC0-HC3 and HAC against the textbook formulas with an explicit inverse (oracle)."""
    rng = np.random.default_rng(3)
    n = 120
    X = rng.normal(size=(n, 2))
    y = X @ [1.0, -2.0] + rng.normal(size=n) * (1 + np.abs(X[:, 0]))
    m = attnreg.OLS().fit(X, y)
    D = np.column_stack([np.ones(n), X])
    B = np.linalg.inv(D.T @ D)
    e = y - D @ np.concatenate(([m.intercept_], m.coef_))
    h = np.einsum("ij,jk,ik->i", D, B, D)
    w = {"HC0": e**2, "HC1": e**2 * n / (n - 3), "HC2": e**2 / (1 - h), "HC3": e**2 / (1 - h) ** 2}
    for ct, wt in w.items():
        V = B @ (D.T * wt) @ D @ B
        np.testing.assert_allclose(m.standard_errors(ct), np.sqrt(np.diag(V)), rtol=1e-11)
    L = 3
    u = D * e[:, None]
    S = u.T @ u
    for lag in range(1, L + 1):
        G = u[lag:].T @ u[:-lag]
        S += (1 - lag / (L + 1)) * (G + G.T)
    np.testing.assert_allclose(m.standard_errors("HAC", maxlags=L), np.sqrt(np.diag(B @ S @ B)),
                               rtol=1e-11)
    with pytest.raises(ValueError, match="cov_type"):
        attnreg.OLS(cov_type="HC7").fit(X, y)
    with pytest.raises(ValueError, match="maxlags"):
        attnreg.OLS(cov_type="HAC", maxlags=-2).fit(X, y)


def test_factors_embedding_and_loo():
    rng = np.random.default_rng(7)
    X, y = rng.normal(size=(40, 3)), rng.normal(size=40)
    m = attnreg.OLS().fit(X, y)
    F = m.factors()
    np.testing.assert_allclose(F.T @ F, np.eye(4), atol=1e-12)  # eq. 6
    Xt = rng.normal(size=(5, 3))
    A = m.attention_weights(Xt)
    np.testing.assert_allclose(m.factors(Xt) @ F.T, A, atol=1e-12)  # eq. 7
    D, Dt = np.column_stack([np.ones(40), X]), np.column_stack([np.ones(5), Xt])
    np.testing.assert_allclose(m.embedding(), np.linalg.inv(D.T @ D), rtol=1e-10)  # eq. 21
    W = m.encoder()
    np.testing.assert_allclose(W @ W.T, m.embedding(), atol=1e-12)
    np.testing.assert_allclose(Dt @ m.embedding() @ D.T, A, atol=1e-12)
    np.testing.assert_allclose(np.sort(m.eigenvalues_), np.linalg.eigvalsh(D.T @ D), rtol=1e-10)
    loo = m.loo_predictions()
    for i in range(40):
        keep = np.arange(40) != i
        one = attnreg.OLS().fit(X[keep], y[keep])
        assert abs(one.predict(X[i:i + 1])[0] - loo[i]) < 1e-11


def test_precision_modes_and_nist_filip(data_dir):
    d = pd.read_csv(data_dir / "nist" / "Filip.csv")
    X = np.column_stack([d.x.to_numpy() ** k for k in range(1, 11)])
    with pytest.warns(UserWarning, match="aliased"):
        dbl = attnreg.OLS(precision="double").fit(X, d.y)
    assert dbl.rank_ < 11 and not dbl.extended_precision_
    ext = attnreg.OLS().fit(X, d.y)
    assert ext.rank_ == 11 and ext.extended_precision_
    with pytest.raises(ValueError, match="precision"):
        attnreg.OLS(precision="quad").fit(X, d.y)
