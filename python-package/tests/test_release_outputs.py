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

