"""attnreg.select_bandwidth: objectives against formulas, refits and statsmodels; the search
against brute-force grids; gradients against finite differences; bad input."""
import numpy as np
import pytest

import attnreg
from attnreg.bandwidth import bandwidth_objective


def make(n, dc=1, cat=False, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, dc))
    y = np.sin(5 * X[:, 0]) + rng.normal(0, 0.3, n)
    if dc > 1:
        y += X[:, 1] ** 2
    if cat:
        c = rng.integers(0, 3, n).astype(float)
        X = np.column_stack([X, c])
        y += 0.5 * c
    return X, y


@pytest.mark.parametrize("est", ["ll", "lc"])
@pytest.mark.parametrize("method", ["cv_ls", "aic", "gcv"])
@pytest.mark.parametrize("seed", [0, 1])
def test_one_dim_optimum_beats_grid(est, method, seed):
    X, y = make(120, seed=seed)
    r = attnreg.select_bandwidth(X, y, est, method)
    grid = np.exp(np.linspace(np.log(0.01), np.log(1.0), 300))
    vals = [bandwidth_objective(X, y, [h], est, method)[0] if h >= r.lower[0] else np.inf
            for h in grid]
    k = int(np.argmin(vals))
    assert r.objective <= vals[k] + 1e-9 * abs(vals[k])
    assert r.bandwidth[0] == pytest.approx(grid[k], rel=0.03)
    assert r.converged and r.n_evals > 0 and r.method == method
    g, v = r.curve
    assert g.shape == v.shape == (30,)
    assert 0 < r.bandwidth[0] < np.inf


@pytest.mark.parametrize("est", ["ll", "lc"])
def test_mixed_categorical_optimum_beats_grid_and_stays_in_range(est):
    X, y = make(100, cat=True, seed=3)
    r = attnreg.select_bandwidth(X, y, est, "cv_ls", var_types="cu", n_starts=4,
                                 random_state=5)
    best = np.inf
    for h in np.exp(np.linspace(np.log(0.02), 0, 40)):
        if h < r.lower[0]:
            continue
        for lam in np.linspace(r.lower[1], r.upper[1], 15):
            best = min(best, bandwidth_objective(X, y, [h, lam], est, var_types="cu")[0])
    assert r.objective <= best + 1e-9 * best
    assert 0 <= r.bandwidth[1] <= 2 / 3
    assert r.curve is None
    r2 = attnreg.select_bandwidth(X, y, est, "cv_ls", var_types="cu", n_starts=4,
                                  random_state=5)
    np.testing.assert_array_equal(r.bandwidth, r2.bandwidth)


@pytest.mark.parametrize("kernel", ["gaussian", "epanechnikov", "biweight", "tricube"])
@pytest.mark.parametrize("est", ["ll", "lc"])
@pytest.mark.parametrize("method", ["cv_ls", "aic", "gcv"])
def test_gradient_matches_central_differences(kernel, est, method):
    X, y = make(50, dc=2, cat=True, seed=2)
    bw = np.array([0.6, 0.7, 0.3]) if kernel != "gaussian" else np.array([0.2, 0.3, 0.3])
    kw = dict(kernel=kernel, var_types="ccu", ridge=0.1 if est == "ll" else 0.0)
    f0, g = bandwidth_objective(X, y, bw, est, method, **kw)
    eps = 1e-5
    for j in range(3):
        bp, bm = bw.copy(), bw.copy()
        if j < 2:
            bp[j] *= np.exp(eps)
            bm[j] *= np.exp(-eps)
        else:
            bp[j] += eps
            bm[j] -= eps
        fd = (bandwidth_objective(X, y, bp, est, method, **kw)[0]
              - bandwidth_objective(X, y, bm, est, method, **kw)[0]) / (2 * eps)
        assert g[j] == pytest.approx(fd, rel=1e-5, abs=1e-7)


@pytest.mark.parametrize("ridge", [0.0, 0.5])
def test_cv_equals_literal_refit(ridge):
    X, y = make(25, dc=1, cat=True, seed=4)
    bw = np.array([0.25, 0.3])
    cv, _ = bandwidth_objective(X, y, bw, "ll", var_types="cu", ridge=ridge)
    errs = []
    for i in range(len(y)):
        keep = np.arange(len(y)) != i
        m = attnreg.LocalLinear(bandwidth=bw, var_types="cu", ridge=ridge).fit(X[keep], y[keep])
        errs.append(y[i] - m.predict(X[i:i + 1])[0])
    assert cv == pytest.approx(np.mean(np.square(errs)), rel=1e-10)
    m = attnreg.LocalLinear(bandwidth=bw, var_types="cu", ridge=ridge).fit(X, y)
    assert cv == pytest.approx(m.cv_score_, rel=1e-12)


@pytest.mark.parametrize("est", ["ll", "lc"])
def test_aicc_and_gcv_formulas(est):
    X, y = make(40, seed=6)
    Est = attnreg.LocalLinear if est == "ll" else attnreg.NadarayaWatson
    m = Est(bandwidth=0.12).fit(X, y)
    n, tr = len(y), m.effective_df_
    rss = np.sum((y - m.fitted_values()) ** 2)
    aic, _ = bandwidth_objective(X, y, [0.12], est, "aic")
    assert aic == pytest.approx(np.log(rss / n) + (1 + tr / n) / (1 - (tr + 2) / n), rel=1e-10)
    gcv, _ = bandwidth_objective(X, y, [0.12], est, "gcv")
    assert gcv == pytest.approx(n * rss / (n - tr) ** 2, rel=1e-10)


def test_rot_dpi_and_estimator_integration():
    X, y = make(200, seed=7)
    r = attnreg.select_bandwidth(X, y, method="rot")
    x = X[:, 0]
    q75, q25 = np.percentile(x, [75, 25])
    assert r.bandwidth[0] == pytest.approx(1.06 * min(x.std(ddof=1), (q75 - q25) / 1.349)
                                           * 200 ** -0.2, rel=1e-12)
    d = attnreg.select_bandwidth(X, y, method="dpi")
    assert d.bandwidth[0] == pytest.approx(attnreg.bandwidth.dpi(x, y).bandwidth, rel=1e-14)
    for sel in ["cv_ls", "aic", "gcv", "rot", "dpi"]:
        m = attnreg.LocalLinear(bandwidth=sel).fit(X, y)
        assert m.bandwidth_result_.method == sel
        np.testing.assert_allclose(m.bandwidth_, m.bandwidth_result_.bandwidth)
    m = attnreg.NadarayaWatson(bandwidth="cv_ls").fit(X, y)
    assert m.cv_score_ == pytest.approx(m.bandwidth_result_.objective, rel=1e-10)


def test_progress_callback_and_plot():
    X, y = make(80, seed=8)
    seen = []
    r = attnreg.select_bandwidth(X, y, progress=lambda k, best: seen.append((k, best)))
    assert len(seen) == r.n_evals and seen[-1][1] == pytest.approx(r.objective)
    mpl = pytest.importorskip("matplotlib")
    mpl.use("Agg")
    ax = attnreg.plot.cv_curve(r)
    assert ax.get_xscale() == "log"


def test_degenerate_data_errors():
    y = np.random.default_rng(0).normal(size=20)
    with pytest.raises(ValueError, match="X: continuous column 1 has 1 distinct"):
        attnreg.select_bandwidth(np.ones((20, 1)), y)
    with pytest.raises(ValueError, match="2 distinct"):
        attnreg.select_bandwidth(np.repeat([0.0, 1.0], 10).reshape(-1, 1), y)
    with pytest.raises(ValueError, match="at least 5 rows"):
        attnreg.select_bandwidth(np.arange(4.0).reshape(-1, 1), y[:4])
    with pytest.raises(ValueError, match="method"):
        attnreg.select_bandwidth(np.arange(20.0).reshape(-1, 1), y, method="cv_foo")
    with pytest.raises(ValueError, match="estimator"):
        attnreg.select_bandwidth(np.arange(20.0).reshape(-1, 1), y, estimator="lq")
    with pytest.raises(ValueError, match="n_starts"):
        attnreg.select_bandwidth(np.arange(20.0).reshape(-1, 1), y, n_starts=0)
    with pytest.raises(ValueError, match="method"):
        attnreg.select_bandwidth(np.column_stack([np.arange(20.0), np.arange(20) % 2]), y,
                                 method="rot", var_types="cu")
    with pytest.raises(ValueError, match="single output"):
        attnreg.LocalLinear().fit(np.arange(20.0).reshape(-1, 1), np.column_stack([y, y]))


@pytest.mark.parametrize("reg_type", ["ll", "lc"])
@pytest.mark.parametrize("seed", [0, 9])
def test_agrees_with_statsmodels(reg_type, seed):
    sm = pytest.importorskip("statsmodels.nonparametric.kernel_regression")
    X, y = make(60, seed=seed)
    kr = sm.KernelReg(y, X, var_type="c", reg_type=reg_type, bw="cv_ls")
    h_sm = abs(float(kr.bw[0]))  # statsmodels' Nelder-Mead may return -h (same Gaussian)
    # Same objective at a common bandwidth (statsmodels' Gaussian h is ours).
    ours_at_sm, _ = bandwidth_objective(X, y, [h_sm], reg_type)
    assert ours_at_sm == pytest.approx(kr.cv_loo(np.array([h_sm]), kr.est[reg_type]), rel=1e-10)
    r = attnreg.select_bandwidth(X, y, reg_type)
    assert r.objective <= ours_at_sm * (1 + 1e-10)
    assert r.bandwidth[0] == pytest.approx(h_sm, rel=1e-3)


def test_economical_search_finds_the_exact_curve_search_minimum():
    # 1,500 distinct x: the default search draws its curve from the binned criterion and
    # polishes with the exact one; exact_curve=True evaluates the exact criterion on the grid.
    rng = np.random.default_rng(5)
    x = rng.uniform(size=1500)
    y = np.sin(2 * np.pi * x) + 0.3 * rng.normal(size=1500)
    full = attnreg.select_bandwidth(x[:, None], y, exact_curve=True)
    econ = attnreg.select_bandwidth(x[:, None], y)
    assert full.curve_exact and not econ.curve_exact
    assert econ.objective == pytest.approx(full.objective, rel=1e-9)
    assert econ.bandwidth[0] == pytest.approx(full.bandwidth[0], rel=2e-3)
    assert econ.n_evals < full.n_evals
    np.testing.assert_array_equal(econ.curve[0], full.curve[0])
    assert econ.objective == pytest.approx(
        bandwidth_objective(x[:, None], y, econ.bandwidth)[0], rel=1e-12)
    # Small data: the exact curve anyway.
    assert attnreg.select_bandwidth(x[:200, None], y[:200]).curve_exact
