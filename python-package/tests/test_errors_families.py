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
    "IV2SLS": lambda e: e.fit(XA[:, 1:], YA, endog=XA[:, :1], instruments=ZF.to_numpy()[:, :1]),
    "IVLIML": lambda e: e.fit(XA[:, 1:], YA, endog=XA[:, :1], instruments=ZF.to_numpy()[:, :1]),
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


# ---------------------------------------------------------------- datetimes as columns
_T = pd.DataFrame({"t": pd.date_range("2020-01-01", periods=N, freq="D"), "a": DF["a"]})
_TD = _T.assign(t=_T["t"] - _T["t"].min())
_TIME_CALLS = {
    "NadarayaWatson": lambda F: attnreg.NadarayaWatson(bandwidth=[1.0, 1.0]).fit(F, YA),
    "LocalLinear": lambda F: attnreg.LocalLinear(bandwidth=[1.0, 1.0]).fit(F, YA),
    "LocalPolynomial": lambda F: attnreg.LocalPolynomial(degree=2, bandwidth=[1.0, 1.0])
        .fit(F, YA),
    "OLS": lambda F: attnreg.OLS().fit(F, YA),
    "Ridge": lambda F: attnreg.Ridge().fit(F, YA),
    "KernelDensity": lambda F: attnreg.KernelDensity(bandwidth=[1.0, 1.0]).fit(F),
    "ConditionalDensity(X)": lambda F: attnreg.ConditionalDensity(bandwidth=[1.0] * 3)
        .fit(F, YA),
    "ConditionalDensity(y)": lambda F: attnreg.ConditionalDensity(bandwidth=[1.0] * 3)
        .fit(XA[:, :1], F),
    "ConditionalDistribution": lambda F: attnreg.ConditionalDistribution(bandwidth=[1.0] * 3)
        .fit(F, YA),
    "PartiallyLinear(Z)": lambda F: attnreg.PartiallyLinear(bandwidth=np.ones((2, 2)))
        .fit(XA[:, :1], YA, Z=F),
    "SmoothCoefficient(X)": lambda F: attnreg.SmoothCoefficient(bandwidth=[1.0]).fit(
        F, YA, Z=XA[:, :1]),
    "ols formula": lambda F: attnreg.ols("y ~ a + t", F.assign(y=YA)),
    "kreg formula": lambda F: attnreg.kreg("y ~ a + t", F.assign(y=YA), bandwidth=[1.0, 1.0]),
}


@pytest.mark.parametrize("frame", [_T, _TD], ids=["datetime64", "timedelta64"])
@pytest.mark.parametrize("call", list(_TIME_CALLS))
def test_datetime_columns_are_refused_by_name(call, frame):
    with pytest.raises(ValueError, match=r"column 't'.*(datetime|timedelta|not numeric)"):
        _TIME_CALLS[call](frame)


def test_datetime_columns_are_refused_at_prediction_too():
    m = attnreg.KernelDensity(bandwidth=[1.0, 1.0]).fit(DF)
    with pytest.raises(ValueError, match=r"^X_new: column 'a' is a datetime"):
        m.density(DF.assign(a=_T["t"]))
    nw = attnreg.NadarayaWatson(bandwidth=[1.0, 1.0]).fit(DF, YA)
    with pytest.raises(ValueError, match=r"^X: column 'b' is a timedelta"):
        nw.predict(DF.assign(b=_TD["t"]))


# ---------------------------------------------------------------- dask: LocalLinear's rules
def test_dask_bandwidth_length_and_degree_follow_the_in_memory_estimators():
    pytest.importorskip("dask")
    import attnreg.dask as ad

    ll = attnreg.LocalLinear(bandwidth=[0.3])
    with pytest.raises(ValueError, match=r"^bandwidth: got 1 values for 2 columns"):
        ll.fit(XA, YA)
    with pytest.raises(ValueError, match=r"^bandwidth: got 1 values for 2 columns"):
        ad.predict(XA, YA, XA[:3], bandwidth=[0.3])
    # one number serves every column in both
    np.testing.assert_allclose(ad.predict(XA, YA, XA[:5], bandwidth=0.5),
                               attnreg.LocalLinear(bandwidth=0.5).fit(XA, YA).predict(XA[:5]),
                               rtol=1e-12, atol=1e-12)
    # degree 2 in two columns, as LocalPolynomial(degree=2): squares and the cross product
    want = attnreg.LocalPolynomial(degree=2, bandwidth=[0.5, 3.0]).fit(XA, YA).predict(XA[:5])
    got = ad.predict(XA, YA, XA[:5], bandwidth=[0.5, 3.0], degree=2)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match=r"degree 3 needs exactly one continuous column"):
        ad.predict(XA, YA, XA[:5], bandwidth=[0.5, 3.0], degree=3)


def test_dask_degree_2_matches_a_direct_local_quadratic():
    """Oracle: weighted least squares on (1, u, v, u^2, uv, v^2) at each query, Gaussian
    weights, in float64 (condition number of the local design ~1e4 here: 1e-9 is ample)."""
    pytest.importorskip("dask")
    import attnreg.dask as ad

    for seed, h in [(0, [0.4, 0.5]), (1, [0.8, 0.3])]:
        r = np.random.default_rng(seed)
        X = r.uniform(size=(60, 2)) + np.array([100.0, -3.0])  # a shifted origin
        y = np.sin(3 * X[:, 0]) + X[:, 1] ** 2 + 0.05 * r.normal(size=60)
        Q = X[:4] + 0.01
        want = []
        for q in Q:
            u = (X - q)
            D = np.column_stack([np.ones(60), u[:, 0], u[:, 1], u[:, 0] ** 2, u[:, 0] * u[:, 1],
                                 u[:, 1] ** 2])
            w = np.exp(-0.5 * ((u / h) ** 2).sum(axis=1))
            want.append(np.linalg.lstsq(D * np.sqrt(w)[:, None], y * np.sqrt(w), rcond=None)[0][0])
        got = ad.predict(X, y, Q, bandwidth=h, degree=2)
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)


# ---------------------------------------------------------------- density cv_ls on ties
def _wage1():
    import pathlib

    return pd.read_csv(pathlib.Path(__file__).resolve().parents[2] / "data" / "wage1.csv")


def test_density_cv_on_tied_data_warns_and_is_not_converged():
    w = _wage1()
    assert w["lwage"].nunique() == 241 and len(w) == 526
    with pytest.warns(attnreg.BoundaryWarning,
                      match=r"'lwage' has 241 distinct values in 526 rows.*without bound"):
        k = attnreg.KernelDensity(bandwidth="cv_ls").fit(w[["lwage"]])
    assert k.converged_ is False
    # Oracle: the Gaussian LS-CV criterion in float64, int f^2 - (2/n) sum_i f_{-i}(X_i)
    # (Li and Racine 2007, sec. 1.3.3). It keeps falling below the box floor: no minimum.
    x = w["lwage"].to_numpy()
    n = x.size
    D = x[:, None] - x[None, :]

    def cv(h):
        int_f2 = np.exp(-D ** 2 / (4 * h * h)).sum() / (n * n * 2 * h * np.sqrt(np.pi))
        K = np.exp(-D ** 2 / (2 * h * h)) / (h * np.sqrt(2 * np.pi))
        loo = (K.sum(axis=1) - K.diagonal()) / (n - 1)
        return int_f2 - 2 * loo.mean()

    h = float(k.bandwidth_.iloc[0])
    assert k.objective_ == pytest.approx(cv(h), rel=1e-9)
    assert cv(h / 10) < cv(h) < cv(2 * h) < cv(10 * h)


@pytest.mark.parametrize("method", ["cv_ls", "cv_ml"])
@pytest.mark.parametrize("seed,kind", [(0, "ties"), (1, "smooth"), (2, "ties"), (3, "smooth")])
def test_density_selectors_never_report_convergence_at_a_box_end(seed, kind, method):
    r = np.random.default_rng(seed)
    x = r.normal(size=(150, 1))
    if kind == "ties":
        x = np.round(x * 3) / 3  # 10 or so distinct values
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        k = attnreg.KernelDensity(bandwidth=method).fit(x)
    r_ = attnreg._core.density_select(**k._data_args(), method=method)
    at_end = (r_["bandwidth"][0] <= r_["lower"][0] * (1 + 1e-6)
              or r_["bandwidth"][0] >= r_["upper"][0] * (1 - 1e-6))
    warned = any(issubclass(w.category, attnreg.BoundaryWarning) for w in rec)
    assert warned == at_end
    if at_end:
        assert k.converged_ is False
    if kind == "smooth":
        assert not at_end  # an interior optimum: nothing to say


# ---------------------------------------------------------------- PartiallyLinear R^2
def _np_rsq(y, f):
    """R np's RSQfunc (reported by npplreg as R-squared): both centred at the mean of y."""
    yb = y.mean()
    return np.sum((y - yb) * (f - yb)) ** 2 / (np.sum((y - yb) ** 2) * np.sum((f - yb) ** 2))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_partially_linear_r_squared_is_np_s_definition(seed):
    r = np.random.default_rng(seed)
    n = 80 + 20 * seed
    Z = r.uniform(size=(n, 1))
    X = r.normal(size=(n, 2)) + Z
    y = X @ [1.0, -0.5] + np.sin(5 * Z[:, 0]) + r.normal(0, 0.5, n) + 1e3 * seed  # shifted
    m = attnreg.PartiallyLinear(bandwidth=np.array([[0.1], [0.2], [0.15]])).fit(X, y, Z=Z)
    f = m.fitted_values()
    # a sum of n squares, relative rounding ~ n eps after the shift's cancellation (1e3 / sd)
    assert m.r_squared_ == pytest.approx(_np_rsq(y, f), rel=1e-9)
    # and not 1 - RSS/TSS (which differs because the fit is not a projection of y)
    assert m.r_squared_ != pytest.approx(1 - np.sum((y - f) ** 2) / np.sum((y - y.mean()) ** 2),
                                         rel=1e-12, abs=0)


def test_partially_linear_r_squared_on_wage1():
    w = _wage1()
    w["female"] = (w["female"] == "Female").astype(float)
    w["married"] = (w["married"] == "Married").astype(float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", attnreg.BoundaryWarning)
        m = attnreg.PartiallyLinear().fit(w[["female", "married", "educ", "tenure"]], w["lwage"],
                                          Z=w[["exper"]])
    assert m.r_squared_ == pytest.approx(_np_rsq(w["lwage"].to_numpy(), m.fitted_values()),
                                         rel=1e-12)
    assert f"R-squared: {m.r_squared_:.6g}" in m.summary()


# ---------------------------------------------------------------- confusing errors
def test_marginal_effects_of_a_binned_fit_are_those_of_its_exact_twin():
    r = np.random.default_rng(3)
    X = r.uniform(size=(300, 1))
    y = 2 * X[:, 0] + r.normal(0, 0.1, 300)
    binned = attnreg.LocalLinear(bandwidth=0.2, approx="binned").fit(X, y)
    exact = attnreg.LocalLinear(bandwidth=0.2).fit(X, y)
    for kw in (dict(), dict(X=X[:5], kind="pointwise"), dict(kind="at_mean")):
        pd.testing.assert_frame_equal(attnreg.marginal_effects(binned, **kw),
                                      attnreg.marginal_effects(exact, **kw))


@pytest.mark.parametrize("fit_levels,new_levels", [
    (["1", "2", "3"], [1, 2]), ([1, 2, 3], ["1", "2"]), ([1, 2, 3], [1.0, 2.0])])
@pytest.mark.parametrize("how", ["kreg", "ols"])
def test_formula_levels_compare_by_value(how, fit_levels, new_levels):
    r = np.random.default_rng(4)
    g = r.choice(fit_levels, N)
    d = pd.DataFrame({"x": r.uniform(size=N), "g": g})
    d["y"] = d["x"] + pd.Series(g).astype(str).astype(int).to_numpy()
    fit = ((lambda: attnreg.kreg("y ~ x + C(g)", d, bandwidth=[0.3, 0.1])) if how == "kreg"
           else (lambda: attnreg.ols("y ~ x + C(g)", d)))
    m = fit()
    same = pd.DataFrame({"x": [0.5, 0.5], "g": [fit_levels[0], fit_levels[1]]})
    new = pd.DataFrame({"x": [0.5, 0.5], "g": new_levels})
    np.testing.assert_array_equal(m.predict(new), m.predict(same))
    with pytest.raises(ValueError, match=r"not seen|outside of the nominated levels"):
        m.predict(pd.DataFrame({"x": [0.5], "g": [7]}))


@pytest.mark.parametrize("make", [lambda: attnreg.NadarayaWatson(bandwidth=0.3), attnreg.OLS,
                                  lambda: attnreg.LocalLinear(bandwidth=0.3), attnreg.Ridge])
@pytest.mark.parametrize("bad", [np.empty((0, 2)), np.float64(1.0), np.zeros((N, 2, 2))],
                         ids=["0 rows", "0-d", "3-d"])
def test_shape_messages_name_x_and_the_expected_shape(make, bad):
    msg = r"^X: expected a 2-D array of shape \(n_samples, n_features\)"
    if bad.ndim == 0 or len(bad) == N or len(bad) == 0:
        with pytest.raises(ValueError, match=msg):
            make().fit(bad, YA if np.ndim(bad) != 2 or len(bad) else np.empty(0))
    m = make().fit(XA, YA)
    with pytest.raises(ValueError, match=msg):
        m.predict(bad)


@pytest.mark.parametrize("bad", [float("nan"), 1.0, True])
def test_attention_tau_is_named_tau(bad):
    Q = rng.normal(size=(4, 3))
    with pytest.raises(ValueError, match=r"^tau:"):
        attnreg.attention.linear(Q, Q, Q, feature_map="epanechnikov", tau=bad)
    with pytest.raises(ValueError, match=r"^tau:"):
        attnreg.attention.attention_weights(Q, Q, method="linear", feature_map="epanechnikov",
                                            tau=bad)


def test_frames_without_string_column_names_are_taken_by_position():
    """scikit-learn's rule: integer column labels (a frame made from an array) are no names."""
    m = attnreg.KernelDensity(bandwidth=[0.3, 0.8]).fit(pd.DataFrame(XA))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(m.density(XA), m.density(pd.DataFrame(XA)))
    Zi = pd.DataFrame(ZF.to_numpy()[:, :1], columns=[5])
    p = attnreg.PartiallyLinear(bandwidth=np.full((3, 1), 0.5)).fit(pd.DataFrame(XA), YA, Z=Zi)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(p.predict(XA, Z=Zi.to_numpy()),
                                      p.predict(pd.DataFrame(XA), Z=Zi))
