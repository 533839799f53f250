"""Binned approximations (approx="binned"): error falls with the grid, exact on lattice data,
the binned cv_ls choice against the exact one, thread independence, bad input."""
import pickle

import numpy as np
import pandas as pd
import pytest

import attnreg
from attnreg import LocalLinear, NadarayaWatson, select_bandwidth


def _data(n, d=1, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, d))
    y = np.sin(2 * np.pi * X).sum(axis=1) + 0.3 * rng.normal(size=n)
    return X, y


@pytest.mark.parametrize("cls", [NadarayaWatson, LocalLinear])
@pytest.mark.parametrize("kernel", ["gaussian", "epanechnikov"])
def test_error_falls_as_grid_grows(cls, kernel):
    X, y = _data(3000, seed=1)
    q = X[:200]
    exact = cls(kernel=kernel, bandwidth=0.08).fit(X, y).predict(q)
    errs = []
    for g in (51, 101, 201, 401, 801):
        m = cls(kernel=kernel, bandwidth=0.08, approx="binned", grid_size=g).fit(X, y)
        errs.append(np.abs(m.predict(q) - exact).max())
        assert m.approx_error_ > 0
    assert all(b < 0.7 * a for a, b in zip(errs, errs[1:])), errs
    assert errs[-1] < 1e-3


def test_two_columns_error_falls():
    X, y = _data(2000, d=2, seed=2)
    exact = LocalLinear(bandwidth=[0.15, 0.15]).fit(X, y).predict(X[:100])
    errs = [np.abs(LocalLinear(bandwidth=[0.15, 0.15], approx="binned", grid_size=g)
                   .fit(X, y).predict(X[:100]) - exact).max() for g in (21, 41, 81)]
    assert errs[1] < 0.7 * errs[0] and errs[2] < 0.7 * errs[1]


def test_equals_exact_on_lattice_data():
    rng = np.random.default_rng(3)
    x = np.repeat(np.linspace(-1, 2, 50), 4)
    y = np.cos(2 * x) + 0.1 * rng.normal(size=x.size)
    X = x[:, None]
    for cls in (NadarayaWatson, LocalLinear):
        e = cls(bandwidth=0.2).fit(X, y)
        b = cls(bandwidth=0.2, approx="binned", grid_size=50).fit(X, y)
        np.testing.assert_allclose(b.predict(X), e.predict(X), rtol=0, atol=1e-10)
        np.testing.assert_allclose(b.fitted_values(), e.fitted_values(), rtol=0, atol=1e-10)
        assert b.approx_error_ < 1e-10
        if cls is LocalLinear:
            np.testing.assert_allclose(b.gradient(X), e.gradient(X), rtol=0, atol=1e-9)
        # exact statistics for the binned fit
        np.testing.assert_allclose(b.leverage_, e.leverage_, rtol=1e-12)
        assert b.cv_score_ == pytest.approx(e.cv_score_, rel=1e-12)


def test_selected_bandwidth_matches_exact():
    X, y = _data(5000, seed=4)
    he = select_bandwidth(X, y, "ll", "cv_ls").bandwidth[0]
    hb = select_bandwidth(X, y, "ll", "cv_ls", approx="binned").bandwidth[0]
    assert hb == pytest.approx(he, rel=1e-3)
    m = LocalLinear(approx="binned").fit(X, y)
    assert m.bandwidth_[0] == pytest.approx(he, rel=1e-3)
    assert m.approx_ == "binned"


def test_one_and_two_threads_identical():
    X, y = _data(20000, seed=5)
    a = LocalLinear(bandwidth=0.03, approx="binned", n_threads=1).fit(X, y).fitted_values()
    b = LocalLinear(bandwidth=0.03, approx="binned", n_threads=2).fit(X, y).fitted_values()
    assert np.array_equal(a, b)
    r1 = select_bandwidth(X, y, approx="binned", n_threads=1)
    r2 = select_bandwidth(X, y, approx="binned", n_threads=2)
    assert np.array_equal(r1.bandwidth, r2.bandwidth) and r1.objective == r2.objective


def test_summary_pickle_and_details():
    X, y = _data(1000, seed=6)
    m = LocalLinear(bandwidth=0.1, approx="binned").fit(X, y)
    s = m.summary()
    assert any("binned fit" in n for n in s.notes)
    d = m.approx_error_details()
    assert d["n_points"] == 200 and d["max_abs"] == m.approx_error_
    m2 = pickle.loads(pickle.dumps(m))
    np.testing.assert_array_equal(m2.predict(X[:10]), m.predict(X[:10]))
    assert LocalLinear(bandwidth=0.1).fit(X, y).approx_error_ == 0.0


def test_bad_input():
    X, y = _data(200, seed=7)
    with pytest.raises(ValueError, match="approx: must be \"exact\""):
        LocalLinear(bandwidth=0.1, approx="fast").fit(X, y)
    with pytest.raises(ValueError, match="grid_size: must be at least 10"):
        LocalLinear(bandwidth=0.1, approx="binned", grid_size=5).fit(X, y)
    X3, y3 = _data(200, d=3, seed=8)
    with pytest.raises(ValueError, match="one or two continuous"):
        NadarayaWatson(bandwidth=0.3, approx="binned").fit(X3, y3)
    df = pd.DataFrame({"g": pd.Categorical(np.arange(200) % 3)})
    with pytest.raises(ValueError, match="categorical columns only"):
        NadarayaWatson(bandwidth=[0.3], approx="binned").fit(df, y)
    df2 = pd.DataFrame({"x": X[:, 0], "g": pd.Categorical(np.arange(200) % 3)})
    with pytest.raises(ValueError, match="approx=\"exact\""):
        NadarayaWatson(bandwidth=[0.1, 0.3], approx="binned").fit(df2, y)
    with pytest.raises(ValueError, match="approx"):
        select_bandwidth(X, y, method="aic", approx="binned")
    with pytest.raises(ValueError, match="approx_grid_size"):
        select_bandwidth(X, y, approx="binned", approx_grid_size=3)
    m = LocalLinear(bandwidth=0.1, approx="binned").fit(X, y)
    with pytest.raises(attnreg.NumericalError, match="approx=\"exact\""):
        LocalLinear(kernel="epanechnikov", bandwidth=0.01, approx="binned").fit(
            np.r_[X[:5] * 0.01, X[:5] * 0.01 + 0.9], y[:10]).predict([[0.5]])
    e = LocalLinear(bandwidth=0.1).fit(X, y)
    np.testing.assert_allclose(m.predict([[1.3]]), e.predict([[1.3]]), rtol=1e-2)  # beyond the grid: direct sums


def test_binned_fit_gradients_with_standard_errors_come_from_the_exact_model():
    # Standard errors and Nadaraya-Watson derivatives of a binned fit are those of the exact
    # fit at the same bandwidth (built on first use); binned local-linear slopes stay binned.
    rng = np.random.default_rng(11)
    x = rng.uniform(-1, 2, size=300)
    y = np.sin(2 * x) + 0.1 * rng.normal(size=x.size)
    X, Xq = x[:, None], np.linspace(-0.5, 1.5, 7)[:, None]
    for cls in (NadarayaWatson, LocalLinear):
        e = cls(bandwidth=0.25).fit(X, y)
        b = cls(bandwidth=0.25, approx="binned").fit(X, y)
        ge, se_e = e.gradient(Xq, return_se=True)
        gb, se_b = b.gradient(Xq, return_se=True)
        np.testing.assert_array_equal(gb, ge)
        np.testing.assert_array_equal(se_b, se_e)
        if cls is NadarayaWatson:
            np.testing.assert_array_equal(b.gradient(Xq), ge)
        else:
            np.testing.assert_allclose(b.gradient(Xq), ge, rtol=0, atol=1e-3)
