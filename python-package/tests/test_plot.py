"""attnreg.plot: each plot draws what the estimator computes (checked on the drawn data)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import attnreg

mpl = pytest.importorskip("matplotlib")
mpl.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def _xy(n=120, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 1))
    return X, np.sin(6 * X[:, 0]) + rng.normal(0, 0.2, n)


def test_fit_with_bands_draws_the_diagnose_columns():
    X, y = _xy()
    m = attnreg.LocalLinear(bandwidth=0.08).fit(X, y)
    grid = np.linspace(0.1, 0.9, 25)
    ax = attnreg.plot.fit_with_bands(m, X, y, grid=grid)
    d = m.diagnose(grid[:, None])
    fit_line = ax.get_lines()[0]
    np.testing.assert_allclose(fit_line.get_xdata(), grid)
    np.testing.assert_allclose(fit_line.get_ydata(), d["fit"], rtol=1e-12)
    rbc_low = ax.get_lines()[1]
    np.testing.assert_allclose(rbc_low.get_ydata(), d["rbc_low"], rtol=1e-12)
    assert len(ax.collections) == 2  # the scatter of the data and the conventional band
    assert ax.get_xlabel() == "x0"
    # Default grid spans the data; a DataFrame's column name labels the axis.
    m2 = attnreg.NadarayaWatson(bandwidth=0.05).fit(pd.DataFrame({"dose": X[:, 0]}), y)
    ax2 = attnreg.plot.fit_with_bands(m2, X, rbc=False)
    xs = ax2.get_lines()[0].get_xdata()
    assert xs[0] == pytest.approx(X.min()) and xs[-1] == pytest.approx(X.max())
    assert ax2.get_xlabel() == "dose" and len(ax2.get_lines()) == 1
    with pytest.raises(ValueError, match="X: fit_with_bands draws one regressor, got 2 columns"):
        attnreg.plot.fit_with_bands(m, np.hstack([X, X]))


def test_fit_with_bands_draws_the_uniform_band_of_diagnose():
    X, y = _xy(seed=2)
    m = attnreg.LocalLinear(bandwidth=0.08).fit(X, y)
    grid = np.linspace(0.1, 0.9, 25)
    ax = attnreg.plot.fit_with_bands(m, X, y, grid=grid, uniform=True, replications=400,
                                     random_state=7)
    d = attnreg.diagnostics.diagnose(m, grid[:, None], uniform=True, replications=400,
                                     random_state=7)
    lines = {ln.get_label(): ln for ln in ax.get_lines()}
    label = f"95% uniform RBC (wild bootstrap-t, c = {d.attrs['crit_uniform_rbc']:.2f})"
    assert label in lines
    np.testing.assert_allclose(lines[label].get_ydata(), d["uniform_rbc_low"], rtol=1e-12)
    np.testing.assert_allclose(ax.get_lines()[-1].get_ydata(), d["uniform_rbc_high"],
                               rtol=1e-12)
    assert np.all(d["uniform_rbc_low"] < d["rbc_low"])
    # without the RBC band: the conventional uniform band
    ax2 = attnreg.plot.fit_with_bands(m, X, y, grid=grid, rbc=False, uniform=True,
                                      replications=400, random_state=7)
    lab2 = f"95% uniform conventional (wild bootstrap-t, c = {d.attrs['crit_uniform']:.2f})"
    low2 = [ln for ln in ax2.get_lines() if ln.get_label() == lab2]
    assert len(low2) == 1
    np.testing.assert_allclose(low2[0].get_ydata(), d["uniform_low"], rtol=1e-12)


def test_plot_bands_with_several_regressors_holds_the_others_at_medians_and_modes():
    rng = np.random.default_rng(4)
    n = 240
    df = pd.DataFrame({"age": rng.uniform(20, 60, n), "tenure": rng.integers(0, 11, n),
                       "sector": pd.Categorical(rng.choice(["a", "b", "c"], n,
                                                           p=[0.2, 0.5, 0.3]))})
    y = np.sin(df.age / 8) + 0.1 * df.tenure + (df.sector == "b") * 0.5 + rng.normal(0, 0.3, n)
    m = attnreg.LocalLinear(bandwidth=[7.0, 4.0, 0.3]).fit(df, y)
    grid = np.linspace(25, 55, 15)
    ax = attnreg.plot.plot_bands(m, grid, X=df, y=y, feature="age", uniform=True,
                                 replications=300, random_state=2)
    # the oracle: the held row built by hand (median tenure, the modal sector)
    mode = df.sector.value_counts().idxmax()
    held = pd.DataFrame({"age": grid, "tenure": np.full(15, float(np.median(df.tenure))),
                         "sector": pd.Categorical([mode] * 15,
                                                  categories=df.sector.cat.categories)})
    d = attnreg.diagnostics.diagnose(m, held, uniform=True, replications=300, random_state=2)
    lines = {ln.get_label(): ln for ln in ax.get_lines()}
    np.testing.assert_allclose(lines["fit"].get_ydata(), d["fit"], rtol=1e-12)
    np.testing.assert_allclose(lines["fit"].get_xdata(), grid)
    rbc = [ln for lab, ln in lines.items() if lab.startswith("95% robust bias-corrected")]
    np.testing.assert_allclose(rbc[0].get_ydata(), d["rbc_low"], rtol=1e-12)
    assert len(ax.collections) == 1  # the conventional band; the data are not scattered
    assert np.isfinite(d["rbc_low"]).all()
    np.testing.assert_allclose(ax.bands["uniform_rbc_high"], d["uniform_rbc_high"], rtol=1e-12)
    assert ax.get_xlabel() == "age" and "medians" in ax.get_title()
    # an array fit: the default feature is the first continuous column; the same numbers
    ma = attnreg.LocalLinear(bandwidth=[7.0, 4.0]).fit(df[["age", "tenure"]].to_numpy(), y)
    axa = attnreg.plot.plot_bands(ma, grid, X=df[["age", "tenure"]].to_numpy())
    da = ma.diagnose(np.column_stack([grid, np.full(15, float(np.median(df.tenure)))]))
    np.testing.assert_allclose(axa.bands["rbc_high"], da["rbc_high"], rtol=1e-12)
    with pytest.raises(ValueError, match="X: with 3 regressors give the training X"):
        attnreg.plot.plot_bands(m, grid, feature="age")
    with pytest.raises(ValueError, match="feature: 'sector' is categorical"):
        attnreg.plot.plot_bands(m, grid, X=df, feature="sector")
    with pytest.raises(ValueError, match=r"feature: expected a column name or an index"):
        attnreg.plot.plot_bands(m, grid, X=df, feature=7)
    with pytest.raises(ValueError, match=r"or plot_bands\(estimator, X=X, feature=...\)"):
        attnreg.plot.fit_with_bands(ma, df[["age", "tenure"]].to_numpy())


def test_partial_effects_average_matches_direct_computation():
    rng = np.random.default_rng(1)
    X = rng.uniform(size=(80, 2))
    y = np.sin(4 * X[:, 0]) + X[:, 1] ** 2 + rng.normal(0, 0.1, 80)
    m = attnreg.LocalLinear(bandwidth=[0.2, 0.3]).fit(X, y)
    grid = np.array([0.2, 0.5, 0.8])
    ax = attnreg.plot.partial_effects(m, X, 1, grid=grid)
    want = []
    for v in grid:
        Z = X.copy()
        Z[:, 1] = v
        want.append(m.predict(Z).mean())
    line = ax.get_lines()[0]
    np.testing.assert_allclose(line.get_xdata(), grid)
    np.testing.assert_allclose(line.get_ydata(), want, rtol=1e-12)
    ax = attnreg.plot.partial_effects(m, X, 0, kind="individual", grid_size=7)
    assert len(ax.get_lines()) == 80 + 1  # one ICE curve per row and their average
    # OLS: the partial dependence is the straight line with slope coef_[j].
    o = attnreg.OLS().fit(X, y)
    line = attnreg.plot.partial_effects(o, X, 0, grid=grid).get_lines()[0]
    np.testing.assert_allclose(np.diff(line.get_ydata()) / np.diff(grid), o.coef_[0], rtol=1e-10)


def test_partial_effects_categorical_dataframe_column():
    rng = np.random.default_rng(2)
    df = pd.DataFrame({"x": rng.uniform(size=90),
                       "g": pd.Categorical(rng.choice(["lo", "mid", "hi"], 90),
                                           categories=["lo", "mid", "hi"], ordered=True)})
    y = df.x + (df.g == "hi") * 1.0 + rng.normal(0, 0.1, 90)
    m = attnreg.NadarayaWatson(bandwidth=[0.2, 0.1]).fit(df, y)
    ax = attnreg.plot.partial_effects(m, df, "g")
    assert [t.get_text() for t in ax.get_xticklabels()] == ["lo", "mid", "hi"]
    want = [m.predict(df.assign(g=pd.Categorical([v] * 90, categories=df.g.cat.categories,
                                                 ordered=True))).mean()
            for v in ["lo", "mid", "hi"]]
    np.testing.assert_allclose(ax.get_lines()[0].get_ydata(), want, rtol=1e-12)
    assert ax.get_xlabel() == "g"
    with pytest.raises(ValueError, match=r"feature: expected a column name or an index in \[0, 2\)"):
        attnreg.plot.partial_effects(m, df, 5)
    # a new user's slip: passing y where the feature goes gets a short message with the fix
    with pytest.raises(ValueError, match=r"got a ndarray of shape \(90,\) \(partial_effects "
                                         r"takes no y"):
        attnreg.plot.partial_effects(m, df, np.zeros(90))


def test_attention_heatmap_shows_the_weights():
    X, y = _xy(60)
    m = attnreg.NadarayaWatson(bandwidth=0.05).fit(X, y)
    Q = np.array([[0.2], [0.5], [0.8]])
    ax = attnreg.plot.attention_heatmap(m, Q, max_keys=None)
    np.testing.assert_allclose(ax.images[0].get_array(), m.attention_weights(Q), rtol=1e-12)
    order = np.argsort(X[:, 0], kind="stable")
    ax = attnreg.plot.attention_heatmap(m, Q, max_keys=None, sort_by=X[:, 0])
    np.testing.assert_allclose(ax.images[0].get_array(), m.attention_weights(Q)[:, order])
    # Local linear weights can be negative: a diverging map centred at zero.
    ll = attnreg.LocalLinear(bandwidth=0.1).fit(X, y)
    Q = np.array([[0.0], [0.5], [1.0]])  # boundary queries: some weights are negative
    assert ll.attention_weights(Q).min() < 0
    ax = attnreg.plot.attention_heatmap(ll, Q, max_keys=10)
    im = ax.images[0]
    assert im.get_array().shape == (3, 10)
    lo, hi = im.get_clim()
    assert lo == pytest.approx(-hi)
    W = ll.attention_weights(Q)
    keep = np.sort(np.argsort(-np.abs(W).sum(axis=0), kind="stable")[:10])
    np.testing.assert_allclose(im.get_array(), W[:, keep])
    with pytest.raises(ValueError, match="sort_by: needs one value per training row"):
        attnreg.plot.attention_heatmap(m, Q, sort_by=[1, 2])
    with pytest.raises(ValueError, match="max_keys: must be None or an integer >= 1"):
        attnreg.plot.attention_heatmap(m, Q, max_keys=0)
    # Least squares too.
    ax = attnreg.plot.attention_heatmap(attnreg.OLS().fit(X, y), Q)
    assert ax.images[0].get_array().shape == (3, 60)


def test_cv_curve_marks_the_selected_bandwidth():
    X, y = _xy(100)
    m = attnreg.LocalLinear().fit(X, y)
    ax = attnreg.plot.cv_curve(m.bandwidth_result_)
    grid, vals = m.bandwidth_result_.curve
    ok = np.isfinite(vals)
    np.testing.assert_allclose(ax.get_lines()[0].get_xdata(), grid[ok])
    assert ax.get_lines()[1].get_xdata()[0] == pytest.approx(m.bandwidth_[0])
