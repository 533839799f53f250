"""Release readiness: long runs report progress, outputs keep the names of the input, and
plots are labelled from those names."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import attnreg
from attnreg import diagnostics


def _xy(n=150, d=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, d))
    y = np.sin(5 * X[:, 0]) + 0.3 * rng.normal(size=n)
    return X, y


def _one_task(seen, label, total):
    assert seen, "no progress was reported"
    assert {s[2] for s in seen} == {label}, seen
    assert {s[1] for s in seen} == {total}
    done = [s[0] for s in seen]
    assert done == sorted(done) and done[0] == 0 and done[-1] == total


# ------------------------------------------------------------------ progress of long runs
def test_significance_test_reports_one_task_over_all_columns():
    X, y = _xy()
    fit = attnreg.LocalLinear(bandwidth=[0.1, 0.3]).fit(X, y)
    seen = []
    diagnostics.significance_test(fit, replications=99,
                                  progress=lambda d, t, l: seen.append((d, t, l)))
    _one_task(seen, "significance test", 2 * 99)
    # The same through an enclosing show_progress, and silence without either.
    seen2 = []
    with attnreg.show_progress(lambda d, t, l: seen2.append((d, t, l))):
        diagnostics.significance_test(fit, replications=99)
    assert seen2 == seen


def test_specification_test_and_bootstraps_report(capsys):
    X, y = _xy(n=100, d=1)
    seen = []
    diagnostics.specification_test(X, y, replications=39,
                                    progress=lambda d, t, l: seen.append((d, t, l)))
    _one_task(seen, "specification test", 39)
    fit = attnreg.LocalLinear(bandwidth=0.2).fit(X, y)
    g = np.linspace(0.1, 0.9, 5)[:, None]
    for kind, label in (("pairs", "pairs bootstrap"), ("rademacher", "wild bootstrap")):
        seen = []
        diagnostics.bootstrap_bands(fit, g, replications=59, bootstrap=kind,
                                    progress=lambda d, t, l: seen.append((d, t, l)))
        _one_task(seen, label, 59)
    diagnostics.bootstrap_bands(fit, g, replications=59, bootstrap="pairs", progress="stderr")
    err = capsys.readouterr().err
    assert "attnreg: pairs bootstrap: 59/59" in err
    diagnostics.bootstrap_bands(fit, g, replications=59, bootstrap="pairs")
    assert capsys.readouterr().err == ""



# ------------------------------------------------------------------ names kept
def _cps_like(n=200, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({
        "experience": rng.uniform(0, 40, n),
        "ethnicity": pd.Categorical(rng.choice(["cauc", "afam"], n)),
        "education": pd.Categorical(rng.choice([10, 12, 16], n), ordered=True),
    })
    y = pd.Series(np.sin(df.experience / 10) + (df.ethnicity == "cauc")
                  + 0.1 * df.education.cat.codes + 0.3 * rng.normal(size=n), name="lwage")
    return df, y


def test_select_bandwidth_takes_what_the_estimators_take():
    df, y = _cps_like()
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", attnreg.BoundaryWarning)
        r = attnreg.select_bandwidth(df, y, "ll", "cv_ls")
        # The same search through the estimator, and through explicit codes + var_types.
        fit = attnreg.LocalLinear(bandwidth="cv_ls").fit(df, y)
        codes = np.column_stack([df.experience, df.ethnicity.cat.codes, df.education.cat.codes])
        r_codes = attnreg.select_bandwidth(codes, y.to_numpy(), "ll", "cv_ls", var_types="cuo")
    np.testing.assert_allclose(r.bandwidth, fit.bandwidth_, rtol=1e-12)
    np.testing.assert_allclose(r.bandwidth, r_codes.bandwidth, rtol=1e-12)
    assert r.var_types == "cuo"
    assert r.names == ("experience", "ethnicity", "education")
    # A string (object) column and a categorical Series alone.
    df2 = df.assign(ethnicity=df.ethnicity.astype(str))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", attnreg.BoundaryWarning)
        r2 = attnreg.select_bandwidth(df2, y, "lc")
        r3 = attnreg.select_bandwidth(df.ethnicity, y, "lc")
    assert r2.var_types == "cuo" and r3.var_types == "u" and r3.names == ("ethnicity",)
    with pytest.raises(ValueError, match="var_types: column 2 is a pandas categorical"):
        attnreg.select_bandwidth(df, y, var_types="ccc")
    with pytest.raises(ValueError, match="X: could not be read as numbers"):
        attnreg.select_bandwidth(np.array([["a", "b"]] * 20), np.arange(20.0))


def test_bandwidth_result_prints_a_table_by_variable():
    df, y = _cps_like()
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", attnreg.BoundaryWarning)
        r = attnreg.select_bandwidth(df, y, "ll", "cv_ls")
    t = r.to_frame()
    assert list(t.index) == ["experience", "ethnicity", "education"]
    assert list(t["type"]) == ["continuous", "unordered", "ordered"]
    np.testing.assert_array_equal(t["bandwidth"], r.bandwidth)
    np.testing.assert_array_equal(t["at_bound"], r.at_bound)
    assert r.bandwidths["experience"] == r.bandwidth[0]
    text = repr(r)
    lines = text.splitlines()
    assert lines[0].startswith("Bandwidth selection: cv_ls for local linear regression")
    for name, line in zip(t.index, lines[2:5]):
        assert line.startswith(name)
        assert f"{t.loc[name, 'bandwidth']:.4g}" in line
    assert "array(" not in text
    r1 = attnreg.select_bandwidth(df[["experience"]].to_numpy(), y.to_numpy())
    assert repr(r1).splitlines()[2].startswith("x1 ")


def test_summary_and_bootstrap_bands_keep_names():
    df, y = _cps_like()
    fit = attnreg.LocalLinear(bandwidth=[4.0, 0.2, 0.3]).fit(df, y)
    s = fit.summary()
    assert isinstance(s.bandwidth, pd.Series)
    assert list(s.bandwidth.index) == ["experience", "ethnicity", "education"]
    np.testing.assert_array_equal(s.bandwidth.to_numpy(), fit.bandwidth_)
    assert list(s.residual_quantiles.index) == ["Min", "1Q", "Median", "3Q", "Max"]
    text = repr(s)
    assert "Bandwidth(s):" not in text
    for name, kind in (("experience", "continuous"), ("ethnicity", "unordered"),
                       ("education", "ordered")):
        assert any(line.split()[:2] == [name, kind] for line in text.splitlines()), text
    # Arrays: plain ndarrays, the table names x1, x2, ...
    s2 = attnreg.LocalLinear(bandwidth=4.0).fit(df[["experience"]].to_numpy(), y).summary()
    assert isinstance(s2.bandwidth, np.ndarray)
    assert any(line.split()[:2] == ["x1", "continuous"] for line in repr(s2).splitlines())
    # Bands and diagnostics at DataFrame rows keep the rows' index.
    f1 = attnreg.LocalLinear(bandwidth=4.0).fit(df[["experience"]], y)
    Xe = df[["experience"]].iloc[[3, 7, 11]]
    b = diagnostics.bootstrap_bands(f1, Xe, replications=59, random_state=2)
    assert list(b.index) == [3, 7, 11]
    assert list(diagnostics.diagnose(f1, Xe).index) == [3, 7, 11]


# ------------------------------------------------------------------ plots fit for a paper
def _boundary_data(seed=3, n=300):
    rng = np.random.default_rng(seed)
    x = rng.beta(1.2, 3, n) * 50
    y = pd.Series(5.5 + 0.08 * x - 0.0014 * x ** 2 + rng.normal(0, 0.5, n),
                  name="log weekly wage")
    return pd.DataFrame({"experience": x}), y


@pytest.fixture
def plt():
    mpl = pytest.importorskip("matplotlib")
    mpl.use("Agg")
    import matplotlib.pyplot as plt

    yield plt
    plt.close("all")


def _legend_texts(ax):
    return [t.get_text() for t in ax.get_legend().get_texts()]


def test_fit_with_bands_labels_axes_from_names_and_clips_a_wild_band(plt):
    df, y = _boundary_data()
    m = attnreg.LocalLinear(bandwidth=2.0).fit(df, y)
    ax = attnreg.plot.fit_with_bands(m, df, y)
    assert ax.get_xlabel() == "experience" and ax.get_ylabel() == "log weekly wage"
    # Without y: the response name the estimator was fitted on; explicit ylabel wins.
    assert attnreg.plot.fit_with_bands(m, df).get_ylabel() == "log weekly wage"
    assert attnreg.plot.fit_with_bands(m, df, ylabel="w").get_ylabel() == "w"
    m_arr = attnreg.LocalLinear(bandwidth=2.0).fit(df.to_numpy(), y.to_numpy())
    assert attnreg.plot.fit_with_bands(m_arr, df.to_numpy()).get_ylabel() == "fit"
    # A band far wider than the data (tiny bandwidth, thin boundary) does not set the scale.
    m2 = attnreg.LocalLinear(bandwidth=0.6).fit(df, y)
    grid = np.linspace(df.experience.min(), df.experience.max(), 200)
    d = m2.diagnose(pd.DataFrame({"experience": grid}))
    span = y.max() - y.min()
    assert d.rbc_high.max() > y.max() + 0.25 * span or d.rbc_low.min() < y.min() - 0.25 * span
    ax = attnreg.plot.fit_with_bands(m2, df, y, grid=grid)
    lo, hi = ax.get_ylim()
    pad = 0.05 * (hi - lo)  # the axes' own margin
    assert lo >= min(d.fit.min(), y.min() - 0.25 * span) - pad
    assert hi <= max(d.fit.max(), y.max() + 0.25 * span) + pad
    assert d.rbc_high.max() > hi + pad or d.rbc_low.min() < lo - pad  # it was clipped
    assert any("robust bias-corrected, clipped to the plot range" in t for t in _legend_texts(ax))
    # Bands inside the data: nothing is clipped, the whole band is visible.
    ax = attnreg.plot.fit_with_bands(m, df, y)
    assert not any("clipped" in t for t in _legend_texts(ax))
    d = m.diagnose(pd.DataFrame({"experience": ax.get_lines()[0].get_xdata()}))
    lo, hi = ax.get_ylim()
    assert lo <= min(d.rbc_low.min(), y.min()) and hi >= max(d.rbc_high.max(), y.max())


def test_bootstrap_band_plot_draws_the_bootstrap_table(plt):
    df, y = _boundary_data()
    m = attnreg.LocalLinear(bandwidth=2.0).fit(df, y)
    grid = np.linspace(1, 40, 30)
    ax = attnreg.plot.bootstrap_bands(m, df, y, grid=grid, replications=199, random_state=4)
    b = diagnostics.bootstrap_bands(m, pd.DataFrame({"experience": grid}), replications=199,
                                    random_state=4)
    lines = ax.get_lines()
    np.testing.assert_allclose(lines[0].get_xdata(), grid)
    np.testing.assert_allclose(lines[0].get_ydata(), b.center, rtol=1e-12)
    np.testing.assert_allclose(lines[1].get_ydata(), b.uniform_low, rtol=1e-12)
    np.testing.assert_allclose(lines[2].get_ydata(), b.uniform_high, rtol=1e-12)
    np.testing.assert_allclose(ax.bootstrap_bands["low"], b.low, rtol=1e-12)
    assert ax.get_xlabel() == "experience" and ax.get_ylabel() == "log weekly wage"
    texts = _legend_texts(ax)
    assert any(t.startswith("95% simultaneous (sup-t, c = ") for t in texts)
    assert any("pointwise (rademacher bootstrap, B = 199)" in t for t in texts)
    with pytest.raises(ValueError, match="X: bootstrap_bands draws one regressor"):
        attnreg.plot.bootstrap_bands(m, np.ones((5, 2)))


def test_plot_tradeoff_has_a_y_label_and_tick_labels_that_do_not_overlap(plt):
    df, y = _boundary_data()
    for bws in (2.0 * np.array([0.5, 1, 2, 4, 8, 16]), np.linspace(1.5, 4, 6)):
        tr = diagnostics.tradeoff(df.to_numpy(), y.to_numpy(), bws,
                                  eval_points=np.arange(1.0, 35.0)[:, None])
        axes = diagnostics.plot_tradeoff(tr)
        fig = axes[0].figure
        fig.canvas.draw()
        r = fig.canvas.get_renderer()
        for a in axes:
            assert a.get_ylabel() == "integrated squared error"
            assert a.get_xlabel() == "bandwidth h"
            boxes = [t.get_window_extent(r) for t in a.get_xticklabels()
                     if t.get_text() and t.get_visible()
                     and a.get_xlim()[0] <= t.get_position()[0] <= a.get_xlim()[1]]
            assert 2 <= len(boxes) <= 8
            boxes.sort(key=lambda bb: bb.x0)
            assert all(b0.x1 < b1.x0 for b0, b1 in zip(boxes, boxes[1:]))
        assert [a.get_title() for a in axes] == ["NadarayaWatson", "LocalLinear"]
