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
