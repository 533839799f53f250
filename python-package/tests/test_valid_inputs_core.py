"""Valid inputs that used to be refused, each against a direct oracle.

* the intercept-only model (formula ``y ~ 1``): the mean, its standard error s / sqrt(n);
* fixed effects only (``X`` without columns, ``absorb=``): the group means, within R^2 = 0;
* absorbed fixed effects with rows of weight 0: the fit without those rows (as OLS without fixed
  effects does: n, the degrees of freedom and the level counts leave them out);
* ``attnreg.dask.ols`` / ``ridge`` whose last partition has fewer rows than design columns.

Tolerances: 1e3 n u relative (sums of n terms, one QR of a well-conditioned design).
"""
import numpy as np
import pandas as pd
import pytest

import attnreg

EPS = np.finfo(float).eps


@pytest.mark.parametrize("n,seed", [(5, 0), (40, 1), (333, 2)])
def test_intercept_only_formula_is_the_mean(n, seed):
    rng = np.random.default_rng(seed)
    d = pd.DataFrame({"y": 3.0 + rng.normal(size=n), "x": rng.normal(size=n)})
    m = attnreg.ols("y ~ 1", d)
    tol = 1e3 * n * EPS
    assert m.coef_.shape == (0,)
    np.testing.assert_allclose(m.intercept_, d.y.mean(), rtol=tol)
    np.testing.assert_allclose(m.intercept_se_, d.y.std(ddof=1) / np.sqrt(n), rtol=tol)
    assert m.df_resid_ == n - 1
    np.testing.assert_allclose(m.predict(d.iloc[:3]), np.full(3, d.y.mean()), rtol=tol)
    assert abs(m.rsquared_) < tol
    m3 = attnreg.ols("y ~ 1", d.assign(w=np.arange(n) % 3 + 1.0), weights="w")
    w = np.arange(n) % 3 + 1.0
    np.testing.assert_allclose(m3.intercept_, np.average(d.y, weights=w), rtol=tol)


@pytest.mark.parametrize("n,G,seed", [(30, 3, 0), (200, 17, 1)])
def test_fixed_effects_only(n, G, seed):
    rng = np.random.default_rng(seed)
    g = rng.integers(0, G, size=n)
    y = rng.normal(size=n) + g * 0.5
    m = attnreg.OLS().fit(np.zeros((n, 0)), y, absorb=g)
    means = pd.Series(y).groupby(g).transform("mean").to_numpy()
    resid = y - means
    tol = 1e3 * n * EPS
    np.testing.assert_allclose(m.predict(np.zeros((n, 0)), absorb=g), means, rtol=tol, atol=tol)
    assert m.coef_.shape == (0,)
    assert m.rsquared_within_ == pytest.approx(0.0, abs=tol)
    r2 = 1 - resid @ resid / ((y - y.mean()) @ (y - y.mean()))
    assert m.rsquared_ == pytest.approx(r2, rel=tol)
    assert m.df_resid_ == n - len(np.unique(g))
    # and through the formula
    d = pd.DataFrame({"y": y, "g": g})
    mf = attnreg.ols("y ~ 1 | g", d)
    assert mf.rsquared_ == pytest.approx(r2, rel=tol)


@pytest.mark.parametrize("cov_type", ["nonrobust", "HC1", "HC3", "cluster"])
def test_absorbed_zero_weights_equal_the_fit_without_those_rows(cov_type):
    rng = np.random.default_rng(7)
    n = 90
    X = rng.normal(size=(n, 2))
    g = rng.integers(0, 6, size=n)
    y = X @ [1.0, -0.5] + g * 0.3 + rng.normal(size=n)
    w = rng.uniform(0.5, 2.0, size=n)
    zero = np.arange(n) % 7 == 0
    w[zero] = 0.0
    g[np.flatnonzero(zero)[0]] = 99  # a level seen only in a row of weight 0
    cl = np.arange(n) % 10
    fit_kw = dict(groups=cl) if cov_type == "cluster" else {}
    m = attnreg.OLS(cov_type=cov_type).fit(X, y, sample_weight=w, absorb=g, **fit_kw)
    keep = ~zero
    fit_kw2 = dict(groups=cl[keep]) if cov_type == "cluster" else {}
    ref = attnreg.OLS(cov_type=cov_type).fit(X[keep], y[keep], sample_weight=w[keep],
                                             absorb=g[keep], **fit_kw2)
    tol = 1e3 * n * EPS
    np.testing.assert_allclose(m.coef_, ref.coef_, rtol=tol)
    np.testing.assert_allclose(m.coef_se_, ref.coef_se_, rtol=tol)
    assert m.df_resid_ == ref.df_resid_
    assert m.n_fe_levels_ == ref.n_fe_levels_ == [6]
    assert m.n_zero_weight_ == int(zero.sum())


@pytest.mark.parametrize("chunks", [(29, 3), (29, 1), (10, 1), (2, 3), (30, 3)])
def test_dask_least_squares_with_a_short_last_partition(chunks):
    da = pytest.importorskip("dask.array")
    from attnreg import dask as ad

    rng = np.random.default_rng(3)
    X = rng.normal(size=(30, 3))
    y = X @ [1.0, 2.0, 3.0] + 1.0 + rng.normal(size=30) * 0.1
    Xd, yd = da.from_array(X, chunks=chunks), da.from_array(y, chunks=chunks[0])
    ref = attnreg.OLS().fit(X, y)
    c, b0 = ad.ols(Xd, yd)
    np.testing.assert_allclose(c, ref.coef_, rtol=1e3 * 30 * EPS)
    np.testing.assert_allclose(b0, ref.intercept_, rtol=1e3 * 30 * EPS)
    rr = attnreg.Ridge(alpha=2.0).fit(X, y)
    c, b0 = ad.ridge(Xd, yd, alpha=2.0)
    np.testing.assert_allclose(c, rr.coef_, rtol=1e3 * 30 * EPS)
