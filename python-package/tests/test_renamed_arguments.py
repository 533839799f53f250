"""The inference vocabulary's renames (NEWS.md, "Renamed arguments"): every old keyword still
works for one release, warns naming the old and the new name, and gives bit-for-bit the result
of the new keyword; passing both is a TypeError."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import attnreg
from attnreg import diagnostics as D


@pytest.fixture(scope="module")
def fit():
    rng = np.random.default_rng(7)
    x = rng.uniform(-1, 1, 120)
    y = np.sin(3 * x) + 0.3 * rng.standard_normal(120)
    return x, y, attnreg.LocalLinear(bandwidth=0.3).fit(x[:, None], y)


def _same(a, b):
    if isinstance(a, pd.DataFrame):
        pd.testing.assert_frame_equal(a, b, check_exact=True)
    elif isinstance(a, tuple):
        for u, v in zip(a, b):
            _same(u, v)
    elif isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            _same(a[k], b[k])
    elif hasattr(a, "__dataclass_fields__"):
        _same(vars(a), vars(b))
    else:
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def _check(call, old: dict, new: dict, expect=None):
    """call(**new) == call(**old) exactly, the old spelling warns naming both, both raise."""
    ref = call(**new)
    with pytest.warns(FutureWarning) as rec:
        got = call(**old)
    msg = " ".join(str(w.message) for w in rec)
    for o, n in zip(old, new):
        assert f"{o}=" in msg and f"use {n}=" in msg, msg
    _same(ref, got)
    with pytest.raises(TypeError, match="got both"):
        call(**old, **new)
    return ref


def test_diagnose_cov_type_and_groups(fit):
    x, y, m = fit
    X = x[:7, None]
    _check(lambda **k: D.diagnose(m, X, **k), {"kind": "hc2"}, {"cov_type": "HC2"})
    _check(lambda **k: m.diagnose(X, **k), {"kind": "const"}, {"cov_type": "nonrobust"})
    g = np.repeat(np.arange(12), 10)
    _check(lambda **k: D.diagnose(m, X, cov_type="CR1", **k), {"cluster": g}, {"groups": g})
    with pytest.raises(ValueError, match="groups: cov_type='CR1' needs"):
        D.diagnose(m, X, cov_type="CR1")
    with pytest.raises(ValueError, match="level is a fraction: 0.95 for a 95% interval"):
        D.diagnose(m, X, level=95)
    with pytest.raises(ValueError, match="cov_type: must be one of"):
        D.diagnose(m, X, cov_type="HC9")


def test_plug_in_bandwidths_and_tradeoff(fit):
    x, y, _ = fit
    _check(lambda **k: D.mse_dpi(x, y, **k), {"kind": "hc1"}, {"cov_type": "HC1"})
    _check(lambda **k: D.imse_dpi(x, y, **k), {"kind": "nn"}, {"cov_type": "nn"})
    _check(lambda **k: D.tradeoff(x, y, [0.2, 0.4], **k), {"kind": "hc3"}, {"cov_type": "HC3"})


def test_bootstrap_bands_bootstrap_random_state_cov_type(fit):
    x, _, m = fit
    X = x[:9, None]
    _check(lambda **k: D.bootstrap_bands(m, X, replications=49, **k),
           {"type": "mammen", "seed": 4, "kind": "hc1"},
           {"bootstrap": "mammen", "random_state": 4, "cov_type": "HC1"})


def test_tests_and_monte_carlo_random_state(fit):
    x, y, m = fit
    _check(lambda **k: D.significance_test(m, replications=19, **k), {"seed": 3},
           {"random_state": 3})
    _check(lambda **k: D.specification_test(x, y, bandwidth=[0.3], replications=19, **k),
           {"seed": 2}, {"random_state": 2})
    f = lambda X: np.sin(3 * X[:, 0])  # noqa: E731
    _check(lambda **k: D.monte_carlo(f, n=60, replications=5, estimators=("nw",),
                                     bandwidth=0.2, **k), {"seed": 5}, {"random_state": 5})
    _check(lambda **k: D.simulate_design(20, 2, **k), {"rng": 3}, {"random_state": 3})
    # A numpy Generator draws the core's seed: reproducible from the Generator's state.
    a = D.significance_test(m, replications=19, random_state=np.random.default_rng(1))
    b = D.significance_test(m, replications=19, random_state=np.random.default_rng(1))
    _same(a, b)
    with pytest.raises(ValueError, match="random_state: must be a non-negative integer"):
        D.significance_test(m, replications=19, random_state=-1)


def test_gradient_and_marginal_effects_replications(fit):
    x, _, m = fit
    X = x[:5, None]
    _check(lambda **k: m.gradient(X, return_se=True, se="bootstrap", random_state=1, **k),
           {"n_boot": 29}, {"replications": 29})
    _check(lambda **k: attnreg.marginal_effects(m, X, se="bootstrap", **k),
           {"n_boot": 29}, {"replications": 29})


def test_ridge_pcr_conf_int_level():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 2))
    y = X @ [1.0, 2.0] + rng.standard_normal(30)
    for est in (attnreg.Ridge().fit(X, y), attnreg.PCR(rank=1).fit(X, y)):
        with pytest.raises(ValueError, match="conf_int: .* coefficients are biased"):
            est.conf_int(level=0.9)
        with pytest.warns(FutureWarning, match=r"conf_int: alpha= is deprecated.*alpha=0.1 is "
                                               r"level=0.9"):
            with pytest.raises(ValueError, match="coefficients are biased"):
                est.conf_int(alpha=0.1)
        with pytest.raises(TypeError, match="got both"):
            est.conf_int(alpha=0.1, level=0.9)


def test_ols_summary_conf_int_predict_level():
    """OLS (and the formula's ols, a subclass): alpha= is level = 1 - alpha, same numbers."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((40, 2))
    y = X @ [0.5, -1.0] + rng.standard_normal(40)
    d = pd.DataFrame({"y": y, "a": X[:, 0], "b": X[:, 1]})
    for est in (attnreg.OLS(cov_type="HC1").fit(X, y), attnreg.ols("y ~ a + b", d)):
        Xn = d[["a", "b"]].iloc[:6] if hasattr(est, "formula_") else X[:6]
        for a, lev in ((0.05, 0.95), (0.1, 0.9), (0.2, 0.8), (0.01, 0.99)):
            with pytest.warns(FutureWarning, match=f"summary: alpha= is deprecated.*use level="):
                s = est.summary(alpha=a)
            _same(s.coefficients, est.summary(level=lev).coefficients)
            assert s.alpha == a and str(s) == str(est.summary(level=lev))
            _check(lambda **k: est.conf_int(**k), {"alpha": a}, {"level": lev})
            _check(lambda **k: est.predict(Xn, interval="prediction", **k), {"alpha": a},
                   {"level": lev})
        # the default is the old default
        with pytest.warns(FutureWarning):
            _same(est.conf_int(), est.conf_int(alpha=0.05))
        with pytest.raises(ValueError, match="level is a fraction: 0.95 for a 95% interval"):
            est.conf_int(level=95)
        # conf_int(0.05) meant alpha: refused, not a 5% interval; level=0.05 by name is one
        with pytest.raises(ValueError, match=r"level: conf_int's first argument is now.*"
                                             r"alpha=0.05 is level=0.95"):
            est.conf_int(0.05)
        _same(est.conf_int(0.9), est.conf_int(level=0.9))
        assert np.all(est.conf_int(level=0.05).to_numpy()[:, 0] > est.conf_int().to_numpy()[:, 0])


def test_plots_take_the_new_names(fit):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x, y, m = fit
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        attnreg.plot.fit_with_bands(m, x, y, cov_type="HC2")
        attnreg.plot.bootstrap_bands(m, x, y, replications=19, bootstrap="mammen",
                                     random_state=2, cov_type="nonrobust")
        D.plot_bands(m, X=x, y=y, cov_type="HC1")
    with pytest.warns(FutureWarning, match="kind= is deprecated"):
        attnreg.plot.fit_with_bands(m, x, y, kind="hc2")
    plt.close("all")
