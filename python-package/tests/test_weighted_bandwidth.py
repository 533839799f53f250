"""Bandwidth selection with observation weights (weighted leave-one-out CV) against a direct
numpy oracle, and the search floor at the estimator's limit: R np's local-constant cv.ls
optimum on statsmodels' two-regressor test case and the CPS1988 local-linear optimum below
h = 1."""
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import attnreg
from attnreg.bandwidth import bandwidth_objective

ROOT = Path(__file__).resolve().parents[2]


def oracle_cv(X, y, h, w, degree):
    """sum_i w_i (y_i - m_{-i}(x_i))^2 / sum_i w_i, Gaussian kernel, fits weighted by w."""
    n = X.shape[0]
    num = 0.0
    for i in range(n):
        keep = np.arange(n) != i
        D = X[keep] - X[i]
        k = w[keep] * np.exp(-0.5 * np.sum((D / h) ** 2, axis=1))
        B = np.column_stack([np.ones(n - 1), D]) if degree == 1 else np.ones((n - 1, 1))
        beta = np.linalg.solve(B.T @ (B * k[:, None]), B.T @ (k * y[keep]))
        num += w[i] * (y[i] - beta[0]) ** 2
    return num / w.sum()


@pytest.mark.parametrize("estimator", ["lc", "ll"])
@pytest.mark.parametrize("seed,d", [(0, 1), (1, 2), (2, 1)])
def test_weighted_objective_matches_oracle(estimator, seed, d):
    rng = np.random.default_rng(seed)
    n = 40 + 10 * seed
    X = rng.uniform(size=(n, d))
    if seed == 2:
        X[:5] = X[5:10]  # ties, with different weights
    y = np.sin(4 * X[:, 0]) + rng.normal(0, 0.2, n)
    w = rng.uniform(0.1, 3.0, n)
    h = np.full(d, 0.2)
    v, _ = bandwidth_objective(X, y, h, estimator, sample_weight=w)
    assert v == pytest.approx(oracle_cv(X, y, h, w, 1 if estimator == "ll" else 0), rel=1e-11)


def test_weighted_selection_minimises_weighted_cv_and_feeds_estimators():
    rng = np.random.default_rng(3)
    X = rng.uniform(size=(80, 1))
    y = np.sin(6 * X[:, 0]) + rng.normal(0, 0.3, 80)
    w = 0.2 + 2 * X[:, 0] ** 2
    r = attnreg.select_bandwidth(X, y, "ll", sample_weight=w)
    h = r.bandwidth[0]
    assert r.objective == pytest.approx(oracle_cv(X, y, np.array([h]), w, 1), rel=1e-11)
    assert r.objective < oracle_cv(X, y, np.array([0.97 * h]), w, 1)
    assert r.objective < oracle_cv(X, y, np.array([1.03 * h]), w, 1)
    unweighted = attnreg.select_bandwidth(X, y, "ll")
    assert abs(unweighted.bandwidth[0] - h) > 1e-4  # the weights matter
    m = attnreg.LocalLinear().fit(X, y, sample_weight=w)
    np.testing.assert_array_equal(m.bandwidth_, r.bandwidth)
    # Equal weights: the unweighted answer; zero weights: the rows are dropped.
    e = attnreg.select_bandwidth(X, y, "ll", sample_weight=np.full(80, 2.5))
    assert e.bandwidth[0] == pytest.approx(unweighted.bandwidth[0], rel=1e-10)
    w0 = w.copy()
    w0[:10] = 0
    a = attnreg.select_bandwidth(X, y, "ll", sample_weight=w0)
    b = attnreg.select_bandwidth(X[10:], y[10:], "ll", sample_weight=w[10:])
    np.testing.assert_array_equal(a.bandwidth, b.bandwidth)


@pytest.mark.parametrize("bad,msg", [
    (np.ones(3), r"sample_weight: expected shape \(80,\)"),
    (-np.ones(80), r"sample_weight: must be finite and >= 0"),
    (np.zeros(80), r"sample_weight: all weights are zero"),
    (np.r_[np.nan, np.ones(79)], r"sample_weight: must be finite and >= 0"),
])
def test_bad_weights_name_the_argument(bad, msg):
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(80, 1))
    with pytest.raises(ValueError, match=msg):
        attnreg.select_bandwidth(X, X[:, 0], "ll", sample_weight=bad)


def _statsmodels_case():
    d = np.loadtxt(ROOT / "tests" / "fixtures" / "np_kernelreg_cc.csv", delimiter=",",
                   skiprows=1)
    return d[:, :2], d[:, 2]


def test_np_local_constant_optimum_on_statsmodels_case():
    # statsmodels/nonparametric/tests/test_kernel_regression.py: R np's npregbw gives
    # [0.6163835, 0.1649656]; the former floor stopped at [0.6464, 0.1910] (CV 1.659322).
    X, y = _statsmodels_case()
    r = attnreg.select_bandwidth(X, y, "lc", "cv_ls")
    np.testing.assert_allclose(r.bandwidth, [0.6163835, 0.1649656], rtol=1e-5)
    assert r.objective == pytest.approx(1.643536, rel=1e-6)
    assert list(r.at_bound) == [0, 0]
    m = attnreg.NadarayaWatson(bandwidth="cv_ls").fit(X, y)
    np.testing.assert_allclose(m.bandwidth_, [0.6163835, 0.1649656], rtol=1e-5)
    # np's conditional means at the first five rows (the same test file).
    np.testing.assert_allclose(m.predict(X[:5]),
                               [31.49157, 37.29536, 43.72332, 40.58997, 36.80711], atol=2e-5)


@pytest.mark.parametrize("method", ["cv_ls", "aic"])
def test_cps_experience_local_linear_optimum_below_one(method):
    d = pd.read_csv(ROOT / "data" / "cps1988.csv")
    x = d["experience"].to_numpy(float)
    y = np.log(d["wage"].to_numpy())
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error", attnreg.BoundaryWarning)  # interior: no warning
        r = attnreg.select_bandwidth(x, y, "ll", method)
    assert r.bandwidth[0] < 1.0
    at_one, _ = bandwidth_objective(x, y, [1.0], "ll", method)
    assert r.objective < at_one


@pytest.mark.parametrize("Est,estimator", [(attnreg.NadarayaWatson, "lc"),
                                           (attnreg.LocalLinear, "ll")])
@pytest.mark.parametrize("d", [1, 2])
def test_weighted_cv_score_is_the_selectors_objective(Est, estimator, d):
    # cv_score_ is the criterion that chose the bandwidth: with sample_weight the weighted mean
    # sum w_i (y_i - m_{-i})^2 / sum w_i (it was the unweighted mean of the same residuals).
    rng = np.random.default_rng(10 + d)
    n = 70
    X = rng.uniform(size=(n, d))
    y = np.sin(5 * X[:, 0]) + rng.normal(0, 0.3, n)
    w = rng.uniform(0.1, 3.0, n)
    w[:4] = 0.0  # rows of weight 0 count neither in the fits nor in the score
    m = Est().fit(X, y, sample_weight=w)
    assert m.cv_score_ == pytest.approx(m.bandwidth_result_.objective, rel=1e-12)
    assert m.cv_score_ == pytest.approx(oracle_cv(X[4:], y[4:], m.bandwidth_, w[4:],
                                                  0 if estimator == "lc" else 1), rel=1e-11)
    # Without weights (and with equal ones) it stays the plain mean.
    u = Est().fit(X, y)
    assert u.cv_score_ == pytest.approx(u.bandwidth_result_.objective, rel=1e-12)
    loo = (u.predict(X) - u.leverage_ * y) / (1 - u.leverage_)  # the leave-one-out identity
    assert u.cv_score_ == pytest.approx(np.mean((y - loo) ** 2), rel=1e-10)
