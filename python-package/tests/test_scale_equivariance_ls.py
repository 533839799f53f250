"""Least squares at extreme scales and degenerate shapes: fitting at (10^k X, 10^m y) gives the
scaled answer (coefficients, standard errors, predictions) for k, m in {-150, 0, 150}, and the
degenerate cases (no residual degrees of freedom, one row, no variation in X, HAC lags >= n,
a bad ``output``) give the answer R's lm gives or a clear error."""
import warnings

import numpy as np
import pytest

import attnreg
from attnreg import OLS, PCR, AttentionRegression, NoResidualDFWarning, Ridge

SCALES = [-150, 0, 150]


def _data(seed=0, n=40, p=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = X @ np.linspace(1.0, 2.0, p) + np.sin(X[:, 0]) + 0.3 * rng.normal(size=n)
    return X, y


def _close(got, want, rtol):
    got, want = np.asarray(got, float), np.asarray(want, float)
    assert np.all(np.isfinite(got)), got
    np.testing.assert_allclose(got, want, rtol=rtol, atol=0)


@pytest.mark.parametrize("k", SCALES)
@pytest.mark.parametrize("m", SCALES)
def test_ols_scaled(k, m):
    X, y = _data(1)
    cx, cy = 10.0 ** k, 10.0 ** m
    ref = OLS().fit(X, y)
    fit = OLS().fit(X * cx, y * cy)
    _close(fit.coef_, ref.coef_ * cy / cx, 1e-9)
    _close(fit.intercept_, ref.intercept_ * cy, 1e-9)
    if abs(m - k) <= 150:  # slope standard errors of order 1e300 or 1e-300 otherwise
        _close(fit.coef_se_, ref.coef_se_ * cy / cx, 1e-9)
    _close(fit.intercept_se_, ref.intercept_se_ * cy, 1e-9)
    _close(fit.predict(X[:5] * cx), ref.predict(X[:5]) * cy, 1e-9)


@pytest.mark.parametrize("k", SCALES)
@pytest.mark.parametrize("m", SCALES)
@pytest.mark.parametrize("alpha", [0.0, 0.7, 25.0])
def test_ridge_scaled_with_penalty_times_c_squared(k, m, alpha):
    # Ridge is not equivariant in X for alpha > 0: the same problem is alpha * c^2 at c X.
    X, y = _data(2)
    cx, cy = 10.0 ** k, 10.0 ** m
    ref = Ridge(alpha=alpha).fit(X, y)
    fit = Ridge(alpha=alpha * cx * cx).fit(X * cx, y * cy)
    _close(fit.coef_, ref.coef_ * cy / cx, 1e-9)
    _close(fit.intercept_, ref.intercept_ * cy, 1e-9)
    _close(fit.predict(X[:5] * cx), ref.predict(X[:5]) * cy, 1e-9)


def test_ridge_huge_design_fixed_alpha_is_least_squares():
    X, y = _data(3)
    ols = OLS().fit(X, y)
    for alpha in [0.0, 1.0]:
        fit = Ridge(alpha=alpha).fit(X * 1e155, y)
        _close(fit.coef_ * 1e155, ols.coef_, 1e-9)
        _close(fit.predict(X[:4] * 1e155), ols.predict(X[:4]), 1e-9)


@pytest.mark.parametrize("k", SCALES)
@pytest.mark.parametrize("m", SCALES)
def test_pcr_scaled(k, m):
    X, y = _data(4)
    cx, cy = 10.0 ** k, 10.0 ** m
    ref = PCR(rank=2).fit(X, y)
    fit = PCR(rank=2).fit(X * cx, y * cy)
    _close(fit.coef_, ref.coef_ * cy / cx, 1e-9)
    _close(fit.intercept_, ref.intercept_ * cy, 1e-9)
    _close(fit.predict(X[:5] * cx), ref.predict(X[:5]) * cy, 1e-9)


@pytest.mark.parametrize("k", [-200] + SCALES)
@pytest.mark.parametrize("m", SCALES)
def test_attention_regression_scaled(k, m):
    # The fit is iterative (L-BFGS from random starts), so the data are scaled by the powers of two
    # nearest 10^k and 10^m: every intermediate is then scaled exactly, and the answer must be
    # bit-identical after undoing the scale. (X * 1e-200 used to leave the columns unstandardised
    # and fit a constant; y * 1e-150 stopped the optimiser at its start.)
    X, y = _data(5, n=50, p=2)
    cx, cy = 2.0 ** round(k * np.log2(10)), 2.0 ** round(m * np.log2(10))
    ref = AttentionRegression(standardize=True, random_state=0).fit(X, y)
    fit = AttentionRegression(standardize=True, random_state=0).fit(X * cx, y * cy)
    np.testing.assert_array_equal(fit.predict(X[:6] * cx) / cy, ref.predict(X[:6]))
    assert fit.objective_ / (cy * cy) == ref.objective_


@pytest.mark.parametrize("k", [-200] + SCALES)
@pytest.mark.parametrize("m", SCALES)
def test_attention_regression_scaled_by_powers_of_ten(k, m):
    # Inexact scales change rounding, so the optimiser's path differs from the unscaled one and
    # stops elsewhere in the flat bottom of the objective (measured: objectives agree to 1.2e-7
    # relative, predictions to ~1e-5); it must reach the same minimum value, where the scale bugs
    # gave 5 times the objective (a constant fit).
    X, y = _data(5, n=50, p=2)
    cx, cy = 10.0 ** k, 10.0 ** m
    ref = AttentionRegression(standardize=True, random_state=0).fit(X, y)
    fit = AttentionRegression(standardize=True, random_state=0).fit(X * cx, y * cy)
    _close(fit.objective_ / (cy * cy), ref.objective_, 1e-6)


def test_no_residual_degrees_of_freedom_warns():
    X, y = _data(7, n=4, p=3)  # n == rank == 4
    with pytest.warns(NoResidualDFWarning, match="no residual degrees of freedom"):
        fit = OLS().fit(X, y)
    assert fit.df_resid_ == 0
    assert np.all(np.isnan(fit.coef_se_)) and np.all(np.isnan(fit.pvalues_))
    with warnings.catch_warnings():
        warnings.simplefilter("error", NoResidualDFWarning)
        OLS().fit(*_data(7, n=5, p=3))  # one residual degree of freedom: no warning


def test_one_row_aliases_like_lm():
    # R 4: lm(y ~ x1 + x2) on the single row (0.3, -1.2, y = 2.5) gives intercept 2.5,
    # x1 and x2 NA, and predicts 2.5 everywhere.
    with pytest.warns(UserWarning):
        fit = OLS().fit(np.array([[0.3, -1.2]]), [2.5])
    assert fit.intercept_ == 2.5 and np.all(np.isnan(fit.coef_))
    np.testing.assert_array_equal(fit.predict(np.array([[0, 1], [1, 2], [5, 3.0]])), [2.5] * 3)


def test_hac_maxlags_at_least_n_is_an_error():
    X, y = _data(8, n=30)
    with pytest.raises(ValueError, match=r"maxlags: must be in \[0, n - 1\] = \[0, 29\]"):
        OLS(cov_type="HAC", maxlags=10**6).fit(X, y)
    OLS(cov_type="HAC", maxlags=29).fit(X, y)


@pytest.mark.parametrize("output", [-1, 1, 2.5, "0", True])
def test_cov_params_output_is_checked(output):
    X, y = _data(9)
    fit = OLS().fit(X, y)
    with pytest.raises(ValueError, match="output: must be an integer in"):
        fit.cov_params(output=output)
    assert fit.cov_params(output=0).shape == (4, 4)


def test_no_variation_in_x():
    X, y = _data(10, n=20, p=2)
    r = Ridge().fit(np.ones((20, 2)), y)
    np.testing.assert_array_equal(r.coef_, [0.0, 0.0])
    assert r.intercept_ == pytest.approx(y.mean(), rel=1e-14)
    p = PCR().fit(X[:1], y[:1])
    np.testing.assert_array_equal(p.coef_, [0.0, 0.0])
    assert p.intercept_ == y[0]


def test_ols_at_1e_minus_300():
    # No "column is constant": OLS rescales each column by a power of two before factoring.
    X, y = _data(11)
    ref = OLS().fit(X, y)
    fit = OLS().fit(X * 1e-300, y)
    _close(fit.coef_ * 1e-300, ref.coef_, 1e-9)
    _close(fit.predict(X[:5] * 1e-300), ref.predict(X[:5]), 1e-12)
