"""Scale equivariance of the kernel estimators: kernel regression is equivariant under
x -> c x with h -> c h and y -> c y. Fitting at (10^k X, 10^m y) for k, m in {-150, 0, 150}
must give the scaled answer (bandwidths x 10^k, fits x 10^m, squared criteria x 10^(2m)) or a
clear error; never a silently different number."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import attnreg
from attnreg import diagnostics as D

rng = np.random.default_rng(1)
N = 150
X = rng.uniform(size=(N, 2))
Y = np.sin(4 * X[:, 0]) + np.cos(4 * X[:, 1]) + rng.normal(0, 0.2, N)
XQ = rng.uniform(0.1, 0.9, size=(6, 2))
SCALES = list(itertools.product([-150, 0, 150], [-150, 0, 150]))


def _rel(a, b):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-300)))


@pytest.mark.parametrize("k,m", SCALES)
@pytest.mark.parametrize("Est", [attnreg.NadarayaWatson, attnreg.LocalLinear])
def test_fixed_bandwidth_fit_prediction_and_cv_scale(Est, k, m):
    cx, cy = 10.0 ** k, 10.0 ** m
    base = Est(bandwidth=[0.15, 0.2]).fit(X, Y)
    f = Est(bandwidth=[0.15 * cx, 0.2 * cx]).fit(X * cx, Y * cy)
    assert _rel(f.predict(XQ * cx) / cy, base.predict(XQ)) < 1e-12
    assert _rel(f.cv_score_ / cy ** 2, base.cv_score_) < 1e-12


@pytest.mark.parametrize("k,m", SCALES)
@pytest.mark.parametrize("d", [1, 2])
def test_select_bandwidth_scales(d, k, m):
    cx, cy = 10.0 ** k, 10.0 ** m
    Xd = X[:, :d]
    base = attnreg.select_bandwidth(Xd, Y, random_state=0)
    r = attnreg.select_bandwidth(Xd * cx, Y * cy, random_state=0)
    # The search stops on a gradient tolerance, so the minimiser agrees to its tolerance and
    # the minimum to rounding.
    assert _rel(r.bandwidth / cx, base.bandwidth) < 1e-5
    assert _rel(r.objective / cy ** 2, base.objective) < 1e-10


@pytest.mark.parametrize("k,m", SCALES)
def test_diagnose_scales(k, m):
    cx, cy = 10.0 ** k, 10.0 ** m
    base = D.diagnose(attnreg.LocalLinear(bandwidth=0.15).fit(X[:, :1], Y), XQ[:, :1])
    d = D.diagnose(attnreg.LocalLinear(bandwidth=0.15 * cx).fit(X[:, :1] * cx, Y * cy),
                   XQ[:, :1] * cx)
    for col in ["fit", "se", "bias", "ci_low", "ci_high", "rbc_low", "rbc_high", "fit_bc",
                "se_bc"]:
        assert _rel(d[col] / cy, base[col]) < 1e-9, col
    assert _rel(d["mse"] / cy ** 2, base["mse"]) < 1e-9


@pytest.mark.parametrize("k", [-300, 300])
@pytest.mark.parametrize("Est", [attnreg.NadarayaWatson, attnreg.LocalLinear])
def test_fixed_bandwidth_fit_at_extreme_x_scales(Est, k):
    # x -> c x with h -> c h gives the same fit and gradients / c, also where 1 / h^2 overflows
    # (the slope penalty at ridge = 0 used to turn every local linear design 'singular').
    c = 10.0 ** k
    base = Est(bandwidth=[0.15, 0.2]).fit(X, Y)
    f = Est(bandwidth=[0.15 * c, 0.2 * c]).fit(X * c, Y)
    assert _rel(f.predict(XQ * c), base.predict(XQ)) < 1e-12
    if hasattr(base, "gradient"):
        assert _rel(np.asarray(f.gradient(XQ * c)) * c, np.asarray(base.gradient(XQ))) < 1e-11


@pytest.mark.parametrize("k,m", [(-300, 0), (300, 0), (0, -300), (0, 300), (-300, 300),
                                 (300, -300)])
def test_dpi_plugin_bandwidth_at_extreme_scales(k, m):
    # The plug-in bandwidth is equivariant in x and invariant in y; its pilots (x^7, y^2) used
    # to under/overflow at 1e+-300 with a message blaming the data.
    cx, cy = 10.0 ** k, 10.0 ** m
    x, y = X[:, 0], Y
    base = attnreg.bandwidth.dpi(x, y)
    r = attnreg.bandwidth.dpi(x * cx, y * cy)
    assert _rel(r.bandwidth / cx, base.bandwidth) < 1e-10
    assert _rel(r.gamma / cx, base.gamma) < 1e-10
    assert _rel(r.lambda_ / cx, base.lambda_) < 1e-10
    # sigma2 (y^2) and theta22 (y^2 / x^4) are not representable at these scales (they
    # over/underflow in data units); they are checked at a representable scale below.
    s = attnreg.bandwidth.dpi(x * 2.0 ** -70, y * 2.0 ** -70)
    assert _rel(s.bandwidth * 2.0 ** 70, base.bandwidth) < 1e-10
    assert _rel(s.sigma2 * 2.0 ** 140, base.sigma2) < 1e-10
    assert _rel(s.theta22 * 2.0 ** -140, base.theta22) < 1e-10
    assert _rel(s.theta24_blocks * 2.0 ** -280, base.theta24_blocks) < 1e-10
    assert (r.n_blocks, r.n_used) == (base.n_blocks, base.n_used)


@pytest.mark.parametrize("k,m", [(-300, 0), (300, 0), (0, -300), (0, 300), (-300, 300),
                                 (300, -300)])
def test_mse_and_imse_dpi_at_extreme_scales(k, m):
    # Equivariant in x, invariant in y; the constants used to under/overflow at 1e+-300 and
    # the message said "the estimated bias is zero" or "x is constant".
    cx, cy = 10.0 ** k, 10.0 ** m
    x, y = X[:, 0], Y
    assert _rel(D.imse_dpi(x * cx, y * cy) / cx, D.imse_dpi(x, y)) < 1e-9
    assert _rel(D.mse_dpi(x * cx, y * cy, 0.4 * cx) / cx, D.mse_dpi(x, y, 0.4)) < 1e-9
