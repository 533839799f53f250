"""Bad-input families: one table-driven test per cause of a silent wrong answer, run over every
estimator or argument it can reach (enumerated from the public API where that is possible).

* column names at prediction: every estimator with a predict-like method takes a DataFrame with
  fit's columns in fit's order, and refuses a reordered, renamed or missing column (naming the
  argument); with the right columns it gives what the array gives;
* booleans, datetimes and complex numbers are not numbers: every numeric argument of every
  public estimator refuses them, naming the argument.
"""
from __future__ import annotations

import inspect
import warnings

import numpy as np
import pandas as pd
import pytest

import attnreg

rng = np.random.default_rng(7)
N = 40
DF = pd.DataFrame({"a": rng.uniform(size=N), "b": rng.normal(size=N) * 3 + 1})
Y = pd.Series(DF["a"] + np.sin(DF["b"]) + rng.normal(0, 0.1, N), name="y")
YF = pd.DataFrame({"u": Y, "v": Y + rng.normal(0, 0.2, N)})
ZF = pd.DataFrame({"z1": rng.uniform(size=N), "z2": rng.uniform(size=N) * 2})


def _reorder(F):
    return F[list(F.columns)[::-1]]


def _rename(F):
    return F.rename(columns={F.columns[0]: "other"})


def _drop(F):
    return F[list(F.columns)[1:]] if F.shape[1] > 1 else F.iloc[:, :0]


# name -> (fit(frames) -> model, the frames of fit as a dict argument -> frame, call(model, frames))
def _regressor(make):
    return (lambda: make().fit(DF, Y), {"X": DF}, lambda m, f: m.predict(f["X"]))


CASES = {
    "NadarayaWatson": _regressor(lambda: attnreg.NadarayaWatson(bandwidth=[0.3, 2.0])),
    "LocalLinear": _regressor(lambda: attnreg.LocalLinear(bandwidth=[0.3, 2.0])),
    "LocalPolynomial": _regressor(lambda: attnreg.LocalPolynomial(degree=2, bandwidth=[0.4, 3.0])),
    "OLS": _regressor(attnreg.OLS),
    "Ridge": _regressor(lambda: attnreg.Ridge(alpha=1.0)),
    "PCR": _regressor(lambda: attnreg.PCR(rank=1)),
    "KernelDensity": (lambda: attnreg.KernelDensity(bandwidth=[0.3, 0.8]).fit(DF),
                      {"X_new": DF}, lambda m, f: m.density(f["X_new"])),
    "ConditionalDensity": (
        lambda: attnreg.ConditionalDensity(bandwidth=[0.3, 0.8, 0.4, 0.4]).fit(DF, YF),
        {"X_new": DF, "y_new": YF}, lambda m, f: m.density(f["X_new"], f["y_new"])),
    "ConditionalDistribution": (
        lambda: attnreg.ConditionalDistribution(bandwidth=[0.3, 0.8, 0.4, 0.4]).fit(DF, YF),
        {"X_new": DF, "y_new": YF}, lambda m, f: m.cdf(f["X_new"], f["y_new"])),
    "ConditionalQuantile": (
        lambda: attnreg.ConditionalQuantile(bandwidth=[0.3, 0.8, 0.4]).fit(DF, Y),
        {"X_new": DF}, lambda m, f: m.quantile(f["X_new"], 0.5)),
    "PartiallyLinear": (
        lambda: attnreg.PartiallyLinear(bandwidth=np.full((3, 2), 0.5)).fit(DF, Y, Z=ZF),
        {"X": DF, "Z": ZF}, lambda m, f: m.predict(f["X"], Z=f["Z"])),
    "PartiallyLinear.g": (
        lambda: attnreg.PartiallyLinear(bandwidth=np.full((3, 2), 0.5)).fit(DF, Y, Z=ZF),
        {"Z": ZF}, lambda m, f: m.g(f["Z"])),
    "SmoothCoefficient": (
        lambda: attnreg.SmoothCoefficient(bandwidth=[0.5, 0.9]).fit(DF, Y, Z=ZF),
        {"X": DF, "Z": ZF}, lambda m, f: m.predict(f["X"], Z=f["Z"])),
    "SmoothCoefficient.coefficients": (
        lambda: attnreg.SmoothCoefficient(bandwidth=[0.5, 0.9]).fit(DF, Y, Z=ZF),
        {"Z": ZF}, lambda m, f: m.coefficients(f["Z"])),
    "SmoothCoefficient(Z=X)": (
        lambda: attnreg.SmoothCoefficient(bandwidth=[0.5, 2.0]).fit(DF, Y),
        {"X": DF}, lambda m, f: m.predict(f["X"])),
}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("change", [_reorder, _rename, _drop], ids=["reorder", "rename", "drop"])
def test_columns_at_prediction_are_fit_s_columns_in_fit_s_order(case, change):
    fit, frames, call = CASES[case]
    m = fit()
    expected = call(m, frames)
    arrays = {k: v.to_numpy() for k, v in frames.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scikit-learn's "X does not have valid feature names"
        np.testing.assert_array_equal(call(m, arrays), expected)
    for arg in frames:
        if frames[arg].shape[1] < 2 and change is _reorder:
            continue
        bad = dict(frames, **{arg: change(frames[arg])})
        # the regressors name X through scikit-learn's "feature names" message
        with pytest.raises(ValueError, match=rf"^{arg}:|feature names"):
            call(m, bad)


def test_a_swapped_frame_would_have_changed_the_answer():
    """The family above only means something if a swap changes the numbers: it does."""
    for case in ("KernelDensity", "SmoothCoefficient", "ConditionalQuantile"):
        fit, frames, call = CASES[case]
        m = fit()
        swapped = {k: pd.DataFrame(_reorder(v).to_numpy(), columns=v.columns)
                   for k, v in frames.items()}
        assert not np.allclose(call(m, swapped), call(m, frames)), case


def test_array_after_a_frame_fit_warns_as_scikit_learn_does():
    m = attnreg.KernelDensity(bandwidth=[0.3, 0.8]).fit(DF)
    with pytest.warns(UserWarning, match="X_new does not have valid feature names"):
        m.density(DF.to_numpy())
    # responses are not named by scikit-learn: an array y_new is taken without a warning
    c = attnreg.ConditionalDensity(bandwidth=[0.3, 0.8, 0.4]).fit(DF, Y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        c.density(DF, Y.to_numpy())


# ---------------------------------------------------------------- booleans, complex, datetimes
# True is 1 and 1+0j is 1.0 to numpy, a datetime is nanoseconds: none of them is a number here.
NOT_NUMBERS = {
    "True": True, "np.True_": np.True_, "[True]": [True], "complex": 0.5 + 0j,
    "datetime64": np.datetime64("2020-01-01"),
}
XA = DF.to_numpy()
YA = Y.to_numpy()

# Every public estimator (attnreg.__all__), with how to fit it.
_FIT = {
    "PartiallyLinear": lambda e: e.fit(XA[:, :1], YA, Z=ZF.to_numpy()[:, :1]),
    "SmoothCoefficient": lambda e: e.fit(XA[:, :1], YA, Z=ZF.to_numpy()[:, :1]),
    "KernelDensity": lambda e: e.fit(XA),
}


def _public_estimators():
    out = []
    for name in attnreg.__all__:
        obj = getattr(attnreg, name)
        if inspect.isclass(obj) and hasattr(obj, "fit") and hasattr(obj, "get_params"):
            out.append(name)
    return out


def _numeric_params():
    """(estimator, argument) for every constructor argument that is not a flag (a flag has a
    bool default)."""
    rows = []
    for name in _public_estimators():
        sig = inspect.signature(getattr(attnreg, name).__init__)
        for p, par in sig.parameters.items():
            if p != "self" and not isinstance(par.default, bool):
                rows.append((name, p))
    return rows


def test_the_enumeration_covers_the_estimators():
    names = _public_estimators()
    assert len(names) >= 13 and {"KernelDensity", "PartiallyLinear", "OLS"} <= set(names)
    assert len(_numeric_params()) > 60


@pytest.mark.parametrize("what", list(NOT_NUMBERS))
@pytest.mark.parametrize("est,param", _numeric_params(), ids=lambda v: str(v))
def test_constructor_arguments_refuse_booleans_complex_and_times(est, param, what):
    e = getattr(attnreg, est)(**{param: NOT_NUMBERS[what]})
    fit = _FIT.get(est, lambda e: e.fit(XA, YA))
    with pytest.raises(ValueError, match=rf"^{param}:"):
        fit(e)


# Public functions and methods, each with a valid call and its numeric arguments (a bool
# default marks a flag).
_Q = rng.normal(size=(6, 3))


def _fitted(cls, **kw):
    return lambda: cls(**kw).fit(XA, YA)


FUNCTIONS = {
    "attention.softmax": lambda **k: attnreg.attention.softmax(_Q, _Q, _Q, **k),
    "attention.nw_rbf": lambda **k: attnreg.attention.nw_rbf(_Q, _Q, _Q, **k),
    "attention.lla": lambda **k: attnreg.attention.lla(_Q, _Q, _Q, **k),
    "attention.linear": lambda **k: attnreg.attention.linear(_Q, _Q, _Q, **k),
    "attention.mesa": lambda **k: attnreg.attention.mesa(_Q, _Q, _Q, **k),
    "attention.attention_weights": lambda **k: attnreg.attention.attention_weights(_Q, _Q, **k),
    "select_bandwidth": lambda **k: attnreg.select_bandwidth(XA[:, :1], YA, **k),
    "bandwidth.bandwidth_objective": lambda **k: attnreg.bandwidth.bandwidth_objective(
        XA[:, :1], YA, **{"bandwidth": 0.3, **k}),
    "bandwidth.dpi": lambda **k: attnreg.bandwidth.dpi(XA[:, 0], YA, **k),
    "marginal_effects": lambda **k: attnreg.marginal_effects(
        attnreg.LocalLinear(bandwidth=[0.3, 2.0]).fit(XA, YA), **k),
    "pseudo_out_of_sample": lambda **k: attnreg.pseudo_out_of_sample(XA, YA, **k),
    "LocalLinear.gradient": lambda **k: attnreg.LocalLinear(bandwidth=[0.3, 2.0]).fit(
        XA, YA).gradient(XA[:2], **k),
    "LocalPolynomial.hessian": lambda **k: attnreg.LocalPolynomial(
        degree=2, bandwidth=[0.4, 3.0]).fit(XA, YA).hessian(XA[:2], **k),
    "ConditionalQuantile.quantile": lambda **k: attnreg.ConditionalQuantile(
        bandwidth=[0.3, 0.8, 0.4]).fit(XA, YA).quantile(XA[:2], **k),
    "OLS.standard_errors": lambda **k: attnreg.OLS(cov_type="HAC").fit(XA, YA)
        .standard_errors(**k),
    "OLS.conf_int": lambda **k: attnreg.OLS().fit(XA, YA).conf_int(**k),
}
_TARGETS = {
    "attention.softmax": attnreg.attention.softmax, "attention.nw_rbf": attnreg.attention.nw_rbf,
    "attention.lla": attnreg.attention.lla, "attention.linear": attnreg.attention.linear,
    "attention.mesa": attnreg.attention.mesa,
    "attention.attention_weights": attnreg.attention.attention_weights,
    "select_bandwidth": attnreg.select_bandwidth,
    "bandwidth.bandwidth_objective": attnreg.bandwidth.bandwidth_objective,
    "bandwidth.dpi": attnreg.bandwidth.dpi, "marginal_effects": attnreg.marginal_effects,
    "pseudo_out_of_sample": attnreg.pseudo_out_of_sample,
    "LocalLinear.gradient": attnreg.LocalLinear.gradient,
    "LocalPolynomial.hessian": attnreg.LocalPolynomial.hessian,
    "ConditionalQuantile.quantile": attnreg.ConditionalQuantile.quantile,
    "OLS.standard_errors": attnreg.OLS.standard_errors, "OLS.conf_int": attnreg.OLS.conf_int,
}
# arguments that take names or data, not numbers
_NOT_NUMERIC = {"Q", "K", "V", "X", "y", "x", "self", "method", "kernel", "estimator",
                "var_types", "unordered_kernel", "ordered_kernel", "device", "feature_map",
                "kind", "se", "cov_type", "approx", "sample_weight", "progress", "X_new",
                "model", "return_se", "key_offset", "n_keys_total",
                "hac_adjust"}  # a flag whose default None means "the model's"


def _function_params():
    rows = []
    for name, fn in _TARGETS.items():
        for p, par in inspect.signature(fn).parameters.items():
            if (p in _NOT_NUMERIC or isinstance(par.default, bool)
                    or par.kind in (par.VAR_KEYWORD, par.VAR_POSITIONAL)):
                continue
            rows.append((name, p))
    return rows


@pytest.mark.parametrize("what", ["True", "np.True_", "complex"])
@pytest.mark.parametrize("fn,param", _function_params(), ids=lambda v: str(v))
def test_function_arguments_refuse_booleans_and_complex(fn, param, what):
    with pytest.raises((ValueError, TypeError), match=rf"^{param}:"):
        FUNCTIONS[fn](**{param: NOT_NUMBERS[what]})


def test_dask_numeric_arguments_refuse_booleans():
    dask = pytest.importorskip("dask")  # noqa: F841
    import attnreg.dask as ad

    for fn, base in [(ad.predict, dict(bandwidth=0.3)), (ad.loo_cv, dict(bandwidth=0.3))]:
        for p in ("bandwidth", "degree", "ridge", "split_every"):
            with pytest.raises(ValueError, match=rf"^{p}: got True"):
                fn(XA, YA, *([XA[:2]] if fn is ad.predict else []), **{**base, p: True})
    with pytest.raises(ValueError, match=r"^alpha: got True"):
        ad.ridge(XA, YA, alpha=True)
