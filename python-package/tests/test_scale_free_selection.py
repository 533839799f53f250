"""Every bandwidth selector is scale-free: under y -> c y the selected bandwidths are the same
and under x -> c x (continuous columns) they are c times the old ones, to the search's
tolerance, for moderate scales (0.5, 3.7, 2^-30) as well as extreme ones (1e+-150). The
criteria's minimisers are invariant (cv_ls scales by c^2, AICc shifts by log c^2, likelihood
cross-validation by n log c), and so is every decision of the search (the stopping rule is
relative to the decrease achieved, not to |f| or 1). The search used to stop on a gentle slope
when |f| < 1: a degree-2 local polynomial at y * 2^-30 chose (0.131, 0.136) with a worse
cross-validation score than the (0.250, 0.162) it chose at y * 1."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import attnreg

SCALES = [0.5, 3.7, 2.0 ** -30, 1e-150, 1e150]
# The searches stop on a gradient tolerance relative to the decrease achieved, so the
# minimisers agree to it (measured: at most 1.2e-7 relative over these cases, densities;
# 7e-8 select_bandwidth, 4e-9 local polynomial), not to rounding.
BW_RTOL = 1e-6
OBJ_RTOL = 1e-9

rng = np.random.default_rng(7)
N = 90
X2 = rng.uniform(size=(N, 2))
Y = np.sin(4 * X2[:, 0]) + np.cos(3 * X2[:, 1]) + rng.normal(0, 0.25, N)
G = rng.integers(0, 3, N)
YG = Y + 0.4 * G
XMIX = np.column_stack([X2[:, 0], G])


def _rel(a, b):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-300)))


def _scaled_obj(method, v, c):
    """The criterion at y * c expressed at y * 1."""
    return v - 2.0 * np.log(c) if method == "aic" else v / c ** 2


@pytest.mark.parametrize("c", SCALES)
@pytest.mark.parametrize("method", ["cv_ls", "aic"])
@pytest.mark.parametrize("estimator", ["lc", "ll"])
@pytest.mark.parametrize("data", ["x1", "x2", "mixed"])
def test_select_bandwidth_is_scale_free(data, estimator, method, c):
    X, y, vt, cont = {"x1": (X2[:, :1], Y, None, [0]), "x2": (X2, Y, None, [0, 1]),
                      "mixed": (XMIX, YG, "cu", [0])}[data]
    kw = dict(estimator=estimator, method=method, var_types=vt, random_state=0)
    base = attnreg.select_bandwidth(X, y, **kw)
    r = attnreg.select_bandwidth(X, y * c, **kw)
    assert _rel(r.bandwidth, base.bandwidth) < BW_RTOL
    assert _rel(_scaled_obj(method, r.objective, c), base.objective) < OBJ_RTOL
    Xc = X.copy()
    Xc[:, cont] *= c
    r = attnreg.select_bandwidth(Xc, y, **kw)
    expect = base.bandwidth.copy()
    expect[cont] *= c
    assert _rel(r.bandwidth, expect) < BW_RTOL
    assert _rel(r.objective, base.objective) < OBJ_RTOL


@pytest.mark.parametrize("c", SCALES)
@pytest.mark.parametrize("degree,d", [(2, 1), (2, 2), (3, 1)])
def test_local_polynomial_selection_is_scale_free(degree, d, c):
    X = X2[:, :d]
    base = attnreg.LocalPolynomial(degree=degree).fit(X, Y)
    r = attnreg.LocalPolynomial(degree=degree).fit(X, Y * c)
    assert _rel(r.bandwidth_, base.bandwidth_) < BW_RTOL
    assert _rel(r.bandwidth_result_.objective / c ** 2, base.bandwidth_result_.objective) < OBJ_RTOL
    r = attnreg.LocalPolynomial(degree=degree).fit(X * c, Y)
    assert _rel(r.bandwidth_ / c, base.bandwidth_) < BW_RTOL


@pytest.mark.parametrize("c", SCALES)
def test_local_polynomial_aic_is_scale_free(c):
    base = attnreg.LocalPolynomial(degree=2, bandwidth="aic").fit(X2[:, :1], Y)
    r = attnreg.LocalPolynomial(degree=2, bandwidth="aic").fit(X2[:, :1], Y * c)
    assert _rel(r.bandwidth_, base.bandwidth_) < BW_RTOL


@pytest.mark.parametrize("c", SCALES)
def test_smooth_coefficient_selection_is_scale_free(c):
    Z = X2[:, :1]
    Xs = rng_x = np.random.default_rng(3).normal(size=(N, 1))
    y = 1 + (1 + np.sin(3 * Z[:, 0])) * rng_x[:, 0] + np.random.default_rng(4).normal(0, .3, N)
    base = attnreg.SmoothCoefficient().fit(Xs, y, Z=Z)
    r = attnreg.SmoothCoefficient().fit(Xs, y * c, Z=Z)
    assert _rel(r.bandwidth_, base.bandwidth_) < BW_RTOL
    assert _rel(r.cv_score_ / c ** 2, base.cv_score_) < OBJ_RTOL
    r = attnreg.SmoothCoefficient().fit(Xs * c, y, Z=Z)  # the linear regressors: no effect
    assert _rel(r.bandwidth_, base.bandwidth_) < BW_RTOL
    r = attnreg.SmoothCoefficient().fit(Xs, y, Z=Z * c)
    assert _rel(r.bandwidth_ / c, base.bandwidth_) < BW_RTOL


@pytest.mark.parametrize("c", SCALES)
@pytest.mark.parametrize("degree", [0, 1])
def test_partially_linear_selection_is_scale_free(degree, c):
    Z = X2[:, 1:2]
    Xl = X2[:, :1]
    y = 2 * Xl[:, 0] + np.cos(3 * Z[:, 0]) + np.random.default_rng(5).normal(0, .3, N)
    base = attnreg.PartiallyLinear(degree=degree).fit(Xl, y, Z=Z)
    # y -> c y moves row 0 only (E[y|Z]); X -> c X row 1 (E[X|Z]); both keep their bandwidths.
    for Xa, ya in [(Xl, y * c), (Xl * c, y)]:
        r = attnreg.PartiallyLinear(degree=degree).fit(Xa, ya, Z=Z)
        assert _rel(r.bandwidth_, base.bandwidth_) < BW_RTOL
    r = attnreg.PartiallyLinear(degree=degree).fit(Xl, y, Z=Z * c)
    assert _rel(r.bandwidth_ / c, base.bandwidth_) < BW_RTOL


def _density_cases():
    x = X2[:, 0]
    z = X2[:, 1] + 0.5 * x
    df = pd.DataFrame({"x": x, "g": pd.Categorical(G)})
    return {
        "kde1": (lambda m: attnreg.KernelDensity(bandwidth=m), (x[:, None],), [[0]]),
        "kde2": (lambda m: attnreg.KernelDensity(bandwidth=m), (X2,), [[0, 1]]),
        "kde_mixed": (lambda m: attnreg.KernelDensity(bandwidth=m), (df,), [[0]]),
        "cdens": (lambda m: attnreg.ConditionalDensity(bandwidth=m), (x[:, None], z[:, None]),
                  [[0], [0]]),
        "cdist": (lambda m: attnreg.ConditionalDistribution(bandwidth=m),
                  (x[:, None], z[:, None]), [[0], [0]]),
    }


@pytest.mark.parametrize("c", SCALES)
@pytest.mark.parametrize("method", ["cv_ml", "cv_ls"])
@pytest.mark.parametrize("case", ["kde1", "kde2", "kde_mixed", "cdens", "cdist"])
def test_density_selection_is_scale_free(case, method, c):
    make, args, cont = _density_cases()[case]
    if case == "cdist" and method == "cv_ml":
        pytest.skip("conditional distributions are selected by cv_ls only")
    base = make(method).fit(*args)
    b0 = np.asarray(base.bandwidth_, dtype=float)
    # Scale each data argument's continuous columns in turn (X, then y of a conditional one):
    # those columns' bandwidths scale with them, the others stay.
    offset = 0
    for a, (arg, cols) in enumerate(zip(args, cont)):
        if isinstance(arg, pd.DataFrame):
            scaled = arg.copy()
            scaled["x"] = scaled["x"] * c
        else:
            scaled = arg.copy()
            scaled[:, cols] *= c
        new_args = list(args)
        new_args[a] = scaled
        r = make(method).fit(*new_args)
        expect = b0.copy()
        expect[[offset + j for j in cols]] *= c
        assert _rel(np.asarray(r.bandwidth_, dtype=float), expect) < BW_RTOL, a
        # Densities carry the unit of their continuous columns (a conditional density: y's, a
        # distribution function: none): f -> f / c^k, so cv_ml shifts by n k log c and cv_ls
        # scales by c^-k.
        k = 0 if case == "cdist" or (case == "cdens" and a == 0) else len(cols)
        if method == "cv_ml":
            got, want = r.objective_ - N * k * np.log(c), base.objective_
            assert abs(got - want) < OBJ_RTOL * max(abs(want), N * k * abs(np.log(c))), a
        else:
            assert _rel(r.objective_ * c ** k, base.objective_) < OBJ_RTOL, a
        offset += (arg.shape[1])
