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
    s = m.summary()
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
