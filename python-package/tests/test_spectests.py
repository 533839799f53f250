"""Tests for attnreg.diagnostics.significance_test / specification_test.

Oracles: the statistics against independent computations (the estimator's own gradient,
finite differences of Nadaraya-Watson predictions, level contrasts of predictions, and the
Hsiao-Li-Racine J_n from numpy OLS residuals and an explicit kernel matrix); the p-value
against its definition; decisions under a true null and a strong alternative with fixed
seeds; reproducibility; pandas input; bad-input messages."""
import numpy as np
import pandas as pd
import pytest

import attnreg
from attnreg import diagnostics as D


def _two_col(n=150, seed=11):
    rng = np.random.default_rng(seed)
    X = rng.random((n, 2))
    y = np.sin(2 * np.pi * X[:, 0]) + 0.3 * rng.standard_normal(n)
    return X, y


@pytest.mark.parametrize("seed", [0, 1])
def test_local_linear_statistic_is_mean_squared_slope(seed):
    X, y = _two_col(80, seed)
    fit = attnreg.LocalLinear(bandwidth=[0.15, 0.3]).fit(X, y)
    res = D.significance_test(fit, replications=19)
    g = fit.gradient(X)
    expect = np.mean(g ** 2, axis=0)
    np.testing.assert_allclose(res.table["statistic"].to_numpy(), expect, rtol=1e-10)


@pytest.mark.parametrize("kernel", ["gaussian", "epanechnikov", "biweight"])
def test_nadaraya_watson_statistic_matches_finite_differences(kernel):
    X, y = _two_col(90, 3)
    fit = attnreg.NadarayaWatson(bandwidth=[0.3, 0.5], kernel=kernel).fit(X, y)
    res = D.significance_test(fit, replications=19)
    eps = 1e-6
    for j in range(2):
        Xp, Xm = X.copy(), X.copy()
        Xp[:, j] += eps
        Xm[:, j] -= eps
        fd = (fit.predict(Xp) - fit.predict(Xm)) / (2 * eps)
        assert res.table["statistic"].iloc[j] == pytest.approx(np.mean(fd ** 2), rel=1e-5)


def test_categorical_column_from_pandas_uses_level_contrasts():
    rng = np.random.default_rng(4)
    n = 120
    df = pd.DataFrame({"x": rng.random(n),
                       "g": pd.Categorical(rng.choice(["a", "b", "c"], n))})
    y = df["x"].to_numpy() + 0.5 * (df["g"] == "c").to_numpy() + 0.2 * rng.standard_normal(n)
    fit = attnreg.LocalLinear(bandwidth=[0.2, 0.2]).fit(df, y)
    res = D.significance_test(fit, replications=49, columns=["g"])
    assert list(res.table.index) == ["g"]
    base = fit.predict(df.assign(g=pd.Categorical(["a"] * n, categories=["a", "b", "c"])))
    expect = 0.0
    for lev in ["b", "c"]:
        p = fit.predict(df.assign(g=pd.Categorical([lev] * n, categories=["a", "b", "c"])))
        expect += np.mean((p - base) ** 2)
    assert res.table["statistic"].iloc[0] == pytest.approx(expect, rel=1e-10)
    assert res.table["p_value"].iloc[0] <= 0.05  # a 0.5 shift with sd 0.2 is found


@pytest.mark.parametrize("cls", [attnreg.NadarayaWatson, attnreg.LocalLinear])
@pytest.mark.parametrize("bootstrap", ["mammen", "iid"])
def test_significance_decisions_and_p_value_definition(cls, bootstrap):
    X, y = _two_col()
    fit = cls(bandwidth=[0.08, 0.3]).fit(X, y)
    res = D.significance_test(fit, replications=99, bootstrap=bootstrap, random_state=5)
    p = res.table["p_value"].to_numpy()
    assert p[0] <= 0.02
    assert p[1] > 0.05
    for j in range(2):
        cnt = np.sum(res.draws[:, j] >= res.table["statistic"].iloc[j])
        assert p[j] == pytest.approx((1 + cnt) / 100)
    assert "Racine, Hart & Li" in repr(res) and "***" in repr(res) or "**" in repr(res)


def test_significance_reproducible_with_seed():
    X, y = _two_col(100, 2)
    fit = attnreg.LocalLinear(bandwidth=[0.1, 0.3]).fit(X, y)
    a = D.significance_test(fit, replications=29, random_state=3)
    b = D.significance_test(fit, replications=29, random_state=3)
    c = D.significance_test(fit, replications=29, random_state=4)
    np.testing.assert_array_equal(a.draws, b.draws)
    assert np.any(a.draws != c.draws)


def test_significance_bad_input():
    X, y = _two_col(60)
    fit = attnreg.LocalLinear(bandwidth=[0.2, 0.3]).fit(X, y)
    with pytest.raises(ValueError, match="replications"):
        D.significance_test(fit, replications=5)
    with pytest.raises(ValueError, match="columns"):
        D.significance_test(fit, columns=[2])
    with pytest.raises(ValueError, match="columns"):
        D.significance_test(fit, columns=["nope"])
    with pytest.raises(ValueError, match="bootstrap"):
        D.significance_test(fit, bootstrap="pairs")
    with pytest.raises(TypeError, match="estimator"):
        D.significance_test(attnreg.OLS().fit(X, y))


def _hlr_statistic(X, u, h):
    """J_n from the definitions of Hsiao, Li & Racine (2007) with a Gaussian product kernel."""
    n = len(u)
    K = np.ones((n, n))
    for j in range(X.shape[1]):
        d = (X[:, j][:, None] - X[:, j][None, :]) / h[j]
        K *= np.exp(-0.5 * d * d) / (np.sqrt(2 * np.pi) * h[j])
    np.fill_diagonal(K, 0.0)
    In = u @ K @ u / (n * (n - 1))
    hprod = np.prod(h)
    sig2 = 2 * hprod * (u ** 2) @ (K ** 2) @ (u ** 2) / (n * (n - 1))
    return n * np.sqrt(hprod) * In / np.sqrt(sig2), In


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_specification_statistic_matches_the_definition(seed):
    rng = np.random.default_rng(seed)
    n = 80
    X = rng.normal(size=(n, 2))
    y = 1 + X @ [1.0, -0.5] + 0.5 * X[:, 0] ** 2 + rng.standard_normal(n)
    h = np.array([0.6, 0.8])
    res = D.specification_test(X, y, bandwidth=h, replications=19)
    Z = np.column_stack([np.ones(n), X])
    beta, *_ = np.linalg.lstsq(Z, y, rcond=None)
    u = y - Z @ beta
    J, In = _hlr_statistic(X, u, h)
    assert res.statistic == pytest.approx(J, rel=1e-10)
    assert res.I_n * np.prod(h) == pytest.approx(In * np.prod(h), rel=1e-10)
    np.testing.assert_allclose(res.coefficients, beta, rtol=1e-10)
    assert res.bandwidth_method == "given"


def test_specification_size_and_power_with_fixed_seed():
    rng = np.random.default_rng(21)
    n = 200
    x = rng.uniform(-1, 1, n)
    e = 0.5 * rng.standard_normal(n)
    lin = D.specification_test(x[:, None], 1 + 2 * x + e, replications=99)
    quad = D.specification_test(x[:, None], 1 + 2 * x + 2 * x ** 2 + e, replications=99)
    assert lin.p_value > 0.05
    assert quad.p_value <= 0.02 and quad.statistic > 3
    assert lin.bandwidth_method == "cv_ls"
    # cv_ls bandwidth is the one attnreg.select_bandwidth gives (local constant)
    sel = attnreg.select_bandwidth(x[:, None], 1 + 2 * x + e, estimator="lc", method="cv_ls")
    np.testing.assert_allclose(lin.bandwidth, np.atleast_1d(sel.bandwidth), rtol=1e-8)
    assert "Hsiao, Li & Racine" in repr(quad)


def test_specification_pandas_categorical_and_design():
    rng = np.random.default_rng(7)
    n = 150
    df = pd.DataFrame({"x": rng.random(n), "g": pd.Categorical(rng.choice(["u", "v"], n))})
    y = 1 + df["x"].to_numpy() + (df["g"] == "v").to_numpy() + 0.3 * rng.standard_normal(n)
    res = D.specification_test(df, y, bandwidth=[0.3, 0.3], replications=49)
    Z = np.column_stack([np.ones(n), df["x"], (df["g"] == "v").astype(float)])
    res2 = D.specification_test(df, y, design=Z, bandwidth=[0.3, 0.3], replications=49)
    assert res.statistic == pytest.approx(res2.statistic, rel=1e-9)
    assert res.rank == 3
    with pytest.raises(ValueError, match="design"):
        D.specification_test(df, y, design=np.ones((n - 1, 1)), bandwidth=[0.3, 0.3])
    Xn = df["x"].to_numpy().copy()
    Xn[3] = np.nan
    with pytest.raises(ValueError, match="X"):
        D.specification_test(Xn[:, None], y, bandwidth=[0.3])
    with pytest.raises(ValueError, match="bootstrap"):
        D.specification_test(df, y, bootstrap="pairs", bandwidth=[0.3, 0.3])


def test_specification_reselects_bandwidth_in_small_samples_only_when_selected():
    rng = np.random.default_rng(5)
    n = 80
    x = rng.uniform(-1, 1, n)
    y = 1 + x + 0.4 * rng.standard_normal(n)
    auto = D.specification_test(x[:, None], y, replications=19)
    fixed = D.specification_test(x[:, None], y, replications=19, reselect_bandwidth=False)
    given = D.specification_test(x[:, None], y, replications=19, bandwidth=auto.bandwidth,
                                 reselect_bandwidth=True)
    assert auto.reselected and not fixed.reselected and not given.reselected
    assert auto.statistic == pytest.approx(fixed.statistic, rel=1e-12)
    np.testing.assert_allclose(fixed.draws, given.draws, rtol=1e-10)
    assert np.any(auto.draws != fixed.draws)
    assert "re-selected" in repr(auto) and "held fixed" in repr(fixed)
