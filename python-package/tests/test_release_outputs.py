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
        diagnostics.bootstrap_bands(fit, g, replications=59, type=kind,
                                    progress=lambda d, t, l: seen.append((d, t, l)))
        _one_task(seen, label, 59)
    diagnostics.bootstrap_bands(fit, g, replications=59, type="pairs", progress="stderr")
    err = capsys.readouterr().err
    assert "attnreg: pairs bootstrap: 59/59" in err
    diagnostics.bootstrap_bands(fit, g, replications=59, type="pairs")
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
    b = diagnostics.bootstrap_bands(f1, Xe, replications=59, seed=2)
    assert list(b.index) == [3, 7, 11]
    assert list(diagnostics.diagnose(f1, Xe).index) == [3, 7, 11]
