"""Robust bias-corrected intervals for marginal effects (marginal_effects(..., interval="rbc")).

Checked against nprobust 1.0.0's lprobust(deriv=...) (the official Python package, at fixed h
and b, bwcheck=None), against a direct numpy oracle of the bias-corrected derivative smoother
(weighted normal equations) with several regressors, ties and a categorical column, and by a
small seeded Monte Carlo of the coverage.
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

import attnreg

nprobust = pytest.importorskip("nprobust")

NP_KERNEL = {"epanechnikov": "epa", "triangular": "tri", "uniform": "uni", "gaussian": "gau"}


def _lprobust(x, y, ev, h, b, p, deriv, kernel, vce):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = nprobust.lprobust(y, x, eval=ev, p=p, deriv=deriv, h=h, b=b, kernel=NP_KERNEL[kernel],
                              vce=vce, bwcheck=None, masspoints="off")
    return r.Estimate


def _data(seed, n=400, ties=False):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 1, n)
    if ties:
        x = np.round(x * 60) / 60
    y = np.sin(3 * x) + x ** 3 + (0.2 + 0.3 * x) * rng.standard_normal(n)
    return x, y


def _np_rtol(x, ev, h, b, p, kernel):
    """Relative accuracy of nprobust's side: it inverts X'WX by Cholesky in the raw units
    (x - x0)^k (ours: thin QR in bandwidth units, condition numbers ~1e2-1e3), so its result
    carries about kappa * eps relative error, kappa the largest condition number of its Gram
    matrices (fit of degree p at h, pilot of degree p + 1 at b) over the evaluation points. The
    tolerance is 20 kappa eps (20: the Cholesky and triangular-inverse constants), at least
    1e-10."""
    from nprobust._kernels import W_fun

    kappa = 1.0
    for x0 in ev:
        for bw, k in ((h, p), (b, p + 1)):
            w = W_fun((x - x0) / bw, NP_KERNEL[kernel])
            R = (x - x0)[:, None] ** np.arange(k + 1)
            kappa = max(kappa, np.linalg.cond(R.T @ (R * w[:, None])))
    return max(1e-10, 20 * kappa * np.finfo(float).eps)


@pytest.mark.parametrize("kernel", ["epanechnikov", "triangular", "uniform", "gaussian"])
@pytest.mark.parametrize("p,deriv", [(2, 1), (1, 1), (3, 1), (3, 2)])
@pytest.mark.parametrize("vce", ["hc0", "hc1", "hc2", "hc3", "nn"])
def test_equals_lprobust(kernel, p, deriv, vce):
    x, y = _data(1 + p + 10 * deriv, ties=(vce == "nn"))
    h, b = 0.3, 0.4
    ev = np.array([0.0, 0.05, 0.31, 0.5, 0.77, 0.98])  # boundary and interior
    m = attnreg.LocalPolynomial(degree=p, bandwidth=h, kernel=kernel).fit(x[:, None], y)
    t = attnreg.marginal_effects(m, ev[:, None], kind="pointwise", interval="rbc",
                                 cov_type=vce, order=deriv, pilot_degree=p + 1,
                                 pilot_bandwidth=b)
    want = _lprobust(x, y, ev, h, b, p, deriv, kernel, vce)
    rtol = _np_rtol(x, ev, h, b, p, kernel)
    assert rtol < 1e-6  # the comparison stays meaningful
    np.testing.assert_allclose(t["estimate"], want["tau.us"], rtol=rtol)
    np.testing.assert_allclose(t["estimate_bc"], want["tau.bc"], rtol=rtol)
    np.testing.assert_allclose(t["std_error"], want["se.us"], rtol=rtol)
    np.testing.assert_allclose(t["std_error_bc"], want["se.rb"], rtol=rtol)
    z = 1.959963984540054
    np.testing.assert_allclose(t["rbc_lower"], want["tau.bc"] - z * want["se.rb"],
                               rtol=rtol, atol=rtol * np.abs(want["tau.bc"]).max())


def test_estimate_is_the_fits_derivative():
    x, y = _data(5)
    ev = np.linspace(0.02, 0.98, 7)[:, None]
    for p in (1, 2, 3):
        m = attnreg.LocalPolynomial(degree=p, bandwidth=0.25, kernel="epanechnikov").fit(
            x[:, None], y)
        t = attnreg.marginal_effects(m, ev, kind="pointwise", interval="rbc")
        np.testing.assert_allclose(t["estimate"], m.derivative(ev, order=1)[:, 0],
                                   rtol=1e-9, atol=1e-10)
    ll = attnreg.LocalLinear(bandwidth=0.25, kernel="epanechnikov").fit(x[:, None], y)
    t = attnreg.marginal_effects(ll, ev, kind="pointwise", interval="rbc")
    np.testing.assert_allclose(t["estimate"], ll.gradient(ev)[:, 0], rtol=1e-9, atol=1e-10)


# --- a direct numpy oracle of the bias-corrected derivative smoother ---------------------------

def _K(u, kernel):
    if kernel == "epanechnikov":
        return np.where(np.abs(u) <= 1, 0.75 * (1 - u ** 2), 0.0)
    if kernel == "gaussian":
        return np.exp(-u ** 2 / 2)
    raise ValueError(kernel)


def _monomials(dc, q):
    out = []
    for deg in range(q + 1):
        def rec(c, left, a):
            if c == dc - 1:
                out.append(tuple(a + [left]))
                return
            for e in range(left, -1, -1):
                rec(c + 1, left - e, a + [e])
        rec(0, deg, [])
    return out


def _oracle(X, y, cont, cat, x0, h, b, lam, lam_b, p, q, kernel, vce):
    """The bias-corrected derivative of every continuous column at x0 by the weighted normal
    equations: fit of degree p at h, pilot of degree q at b (all monomials), Aitchison-Aitken
    weights on the unordered column(s) with lambda lam in the fit and lam_b in the pilot (c
    levels: 1 - lam at the same level, lam / (c - 1) otherwise)."""
    def weights(bw, lam_):
        w = np.ones(len(y))
        for j, c in enumerate(cont):
            w *= _K((X[:, c] - x0[c]) / bw[j], kernel)
        for c in cat:
            nlev = len(np.unique(X[:, c]))
            w *= np.where(X[:, c] == x0[c], 1 - lam_, lam_ / (nlev - 1))
        return w

    mon = _monomials(len(cont), q)
    deg = np.array([sum(a) for a in mon])
    D = X[:, cont] - x0[cont]

    def design(k):
        return np.column_stack([np.prod(D ** np.array(a), axis=1) for a in mon[:k]])

    kp, kq = int(np.sum(deg <= p)), len(mon)
    wh, wb = weights(h, lam), weights(b, lam_b)
    Zp, Zq = design(kp), design(kq)
    Cp = np.linalg.solve(Zp.T @ (Zp * wh[:, None]), (Zp * wh[:, None]).T)   # beta = Cp y
    Cq = np.linalg.solve(Zq.T @ (Zq * wb[:, None]), (Zq * wb[:, None]).T)
    rh = y - Zp @ (Cp @ y)
    rb = y - Zq @ (Cq @ y)
    inw = (wh > 0) | (wb > 0)
    nx = inw.sum()
    lev = np.sum(Zp * Cp.T, axis=1)
    scale = {"hc0": (1, 1), "hc1": (nx / (nx - kp), nx / (nx - kq)),
             "hc3": (1 / (1 - lev) ** 2, 1 / (1 - lev) ** 2)}[vce]
    out = []
    for j in range(len(cont)):
        a = [0] * len(cont)
        a[j] = 1
        g = Cp[mon.index(tuple(a))]
        bias_w = sum((g @ Zq[:, t]) * Cq[t] for t in range(kp, kq))
        gbc = g - bias_w
        out.append((g @ y, gbc @ y, np.sqrt(np.sum(g ** 2 * rh ** 2 * scale[0] * inw)),
                    np.sqrt(np.sum(gbc ** 2 * rb ** 2 * scale[1] * inw))))
    return np.array(out)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("p,vce", [(1, "hc3"), (2, "hc0"), (1, "hc1")])
@pytest.mark.parametrize("kernel", ["epanechnikov", "gaussian"])
def test_two_continuous_one_categorical_with_ties_against_numpy(seed, p, vce, kernel):
    rng = np.random.default_rng(seed)
    n = 500
    x1 = np.round(rng.uniform(-1, 1, n) * 25) / 25          # ties
    x2 = rng.uniform(3, 5, n) + 100.0                        # shifted origin
    g = rng.integers(0, 3, n).astype(float)
    y = np.sin(2 * x1) * (x2 - 104) ** 2 + 0.5 * g + 0.3 * rng.standard_normal(n)
    X = np.column_stack([x1, x2, g])
    h = np.array([0.6, 0.9])
    b = np.array([0.8, 1.1])
    lam, lam_b = 0.2, 0.3
    m = attnreg.LocalPolynomial(degree=p, bandwidth=[h[0], h[1], lam], kernel=kernel,
                                var_types="ccu").fit(X, y)
    ev = np.array([[0.1, 104.0, 1.0], [-0.96, 103.1, 0.0], [0.5, 104.8, 2.0]])
    q = p + 2 if p == 1 else p + 1
    t = attnreg.marginal_effects(m, ev, kind="pointwise", interval="rbc", cov_type=vce,
                                 pilot_bandwidth=[b[0], b[1], lam_b])
    assert t.attrs["pilot_degree"] == q
    assert list(t.index.get_level_values("feature")[:2]) == ["x0", "x1"]
    for i, x0 in enumerate(ev):
        want = _oracle(X, y, [0, 1], [2], x0, h, b, lam, lam_b, p, q, kernel, vce)
        got = t.iloc[2 * i:2 * i + 2]
        np.testing.assert_allclose(got["estimate"], want[:, 0], rtol=1e-8, atol=1e-10)
        np.testing.assert_allclose(got["estimate_bc"], want[:, 1], rtol=1e-8, atol=1e-10)
        np.testing.assert_allclose(got["std_error"], want[:, 2], rtol=1e-8)
        np.testing.assert_allclose(got["std_error_bc"], want[:, 3], rtol=1e-8)


def test_at_mean_and_dataframe_labels():
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"age": rng.uniform(20, 60, 300), "educ": rng.uniform(8, 20, 300)})
    y = 0.05 * df["age"] - 0.0005 * df["age"] ** 2 + 0.1 * df["educ"] + rng.normal(0, .2, 300)
    m = attnreg.LocalLinear(bandwidth=[8.0, 4.0], kernel="epanechnikov").fit(df, y)
    t = attnreg.marginal_effects(m, df, kind="at_mean", interval="rbc")
    assert list(t.index) == ["age", "educ"]
    assert {"estimate", "std_error", "ci_lower", "ci_upper", "bias", "estimate_bc",
            "std_error_bc", "rbc_lower", "rbc_upper"} <= set(t.columns)
    pw = attnreg.marginal_effects(m, df.iloc[:4], kind="pointwise", interval="rbc")
    assert pw.index.names == ["observation", "feature"] and len(pw) == 8
    assert np.all(pw["rbc_lower"] < pw["estimate_bc"]) and np.all(pw["std_error_bc"] > 0)


# --- bad input ----------------------------------------------------------------------------------

def test_bad_input_errors():
    x, y = _data(7, n=200)
    m = attnreg.LocalLinear(bandwidth=0.3, kernel="epanechnikov").fit(x[:, None], y)
    ev = np.array([[0.5]])
    with pytest.raises(ValueError, match="^order: the derivative order must be between 1 and"):
        attnreg.marginal_effects(m, ev, kind="pointwise", interval="rbc", order=2)
    with pytest.raises(ValueError, match="level is a fraction: 0.95 for a 95% interval"):
        attnreg.marginal_effects(m, ev, kind="pointwise", interval="rbc", level=95)
    with pytest.raises(ValueError, match="^pilot_degree: must exceed the degree 1"):
        attnreg.marginal_effects(m, ev, kind="pointwise", interval="rbc", pilot_degree=1)
    with pytest.raises(ValueError, match="^kind: 'total' is not one of"):
        attnreg.marginal_effects(m, ev, kind="total", interval="rbc")
    with pytest.raises(ValueError, match="^interval: must be 'confidence' or 'rbc'"):
        attnreg.marginal_effects(m, ev, interval="robust")
    with pytest.raises(ValueError, match="^cov_type: 'cr1' is not available for RBC"):
        attnreg.marginal_effects(m, ev, kind="pointwise", interval="rbc", cov_type="CR1")
    with pytest.raises(ValueError, match="^se: interval='rbc' uses the variance of cov_type"):
        attnreg.marginal_effects(m, ev, kind="pointwise", interval="rbc", se="bootstrap")
    nw = attnreg.NadarayaWatson(bandwidth=0.3).fit(x[:, None], y)
    with pytest.raises(ValueError, match="^model: RBC intervals for marginal effects need"):
        attnreg.marginal_effects(nw, ev, kind="pointwise", interval="rbc")
    # too few points for the pilot: a small pilot bandwidth at the edge of the data
    with pytest.raises(attnreg.NumericalError,
                       match="^pilot_bandwidth: the pilot local polynomial"):
        attnreg.marginal_effects(m, np.array([[1.2]]), kind="pointwise", interval="rbc",
                                 pilot_bandwidth=0.21)
    # too few distinct values in a column for the pilot (a local cubic needs 4)
    xs = np.repeat([0.0, 0.5, 1.0], 20)
    ys = xs + np.random.default_rng(0).normal(0, 0.1, 60)
    m3 = attnreg.LocalLinear(bandwidth=1.0, kernel="epanechnikov").fit(xs[:, None], ys)
    with pytest.raises(ValueError, match="^X: column 1 has 3 distinct value"):
        attnreg.marginal_effects(m3, np.array([[0.5]]), kind="pointwise", interval="rbc")
    r = attnreg.LocalLinear(bandwidth=0.3, ridge=0.1).fit(x[:, None], y)
    with pytest.raises(ValueError, match="^ridge: "):
        attnreg.marginal_effects(r, ev, kind="pointwise", interval="rbc")
    m2 = attnreg.LocalLinear(bandwidth=[0.3, 0.3]).fit(np.column_stack([x, x ** 2]), y)
    with pytest.raises(ValueError, match="^pilot_bandwidth: needs one value per column of X"):
        attnreg.marginal_effects(m2, np.array([[0.5, 0.25]]), kind="pointwise",
                                 interval="rbc", pilot_bandwidth=0.4)
    with pytest.raises(ValueError, match="^cov_type: 'nn'"):
        attnreg.marginal_effects(m2, np.array([[0.5, 0.25]]), kind="pointwise",
                                 interval="rbc", cov_type="nn")


# --- coverage -----------------------------------------------------------------------------------

def test_monte_carlo_coverage_of_the_rbc_gradient():
    """200 replications, n = 400, m(x) = sin(4x), local quadratic at h = 0.25 (epanechnikov),
    slope at an interior and a boundary point. A 95% interval covers 190 of 200 in
    expectation; the binomial standard deviation is 3.1, so >= 178 is -4 sd; conventional
    intervals at this (deliberately large) bandwidth undercover (177 of 200 in the interior)."""
    rng = np.random.default_rng(2026)
    ev = np.array([[0.5], [0.03]])
    truth = 4 * np.cos(4 * ev[:, 0])
    cover_rbc = np.zeros(2)
    cover_us = np.zeros(2)
    R = 200
    for _ in range(R):
        x = rng.uniform(0, 1, 400)
        y = np.sin(4 * x) + 0.3 * rng.standard_normal(400)
        m = attnreg.LocalPolynomial(degree=2, bandwidth=0.25, kernel="epanechnikov").fit(
            x[:, None], y)
        t = attnreg.marginal_effects(m, ev, kind="pointwise", interval="rbc", cov_type="HC3")
        cover_rbc += (t["rbc_lower"].to_numpy() <= truth) & (truth <= t["rbc_upper"].to_numpy())
        cover_us += (t["ci_lower"].to_numpy() <= truth) & (truth <= t["ci_upper"].to_numpy())
    assert np.all(cover_rbc >= 178), cover_rbc
    assert cover_us.min() < cover_rbc.min(), (cover_us, cover_rbc)


def test_monte_carlo_coverage_two_regressors_local_linear_slope():
    """200 replications, n = 500, m(x1, x2) = sin(3 x1) + x1 x2^2 on the unit square, local
    linear at h = (0.4, 0.4) (epanechnikov), the slope in x1 at an interior point and near the
    x1 = 0 edge, with the default pilot local cubic (all cross terms). RBC covers near 0.95
    (>= 178 of 200 is -4 binomial sd); the conventional interval collapses at the edge, where
    the local linear slope's bias is O(h) (seeded: 191 and 185 RBC, 188 and 16 conventional)."""
    rng = np.random.default_rng(11)
    ev = np.array([[0.5, 0.5], [0.05, 0.5]])
    truth = 3 * np.cos(3 * ev[:, 0]) + ev[:, 1] ** 2
    cover_rbc = np.zeros(2)
    cover_us = np.zeros(2)
    for _ in range(200):
        X = rng.uniform(0, 1, (500, 2))
        y = np.sin(3 * X[:, 0]) + X[:, 0] * X[:, 1] ** 2 + 0.2 * rng.standard_normal(500)
        f = attnreg.LocalLinear(bandwidth=[0.4, 0.4], kernel="epanechnikov").fit(X, y)
        t = attnreg.marginal_effects(f, ev, kind="pointwise", interval="rbc")
        assert t.attrs["pilot_degree"] == 3
        t = t.xs("x0", level="feature")
        cover_rbc += (t["rbc_lower"].to_numpy() <= truth) & (truth <= t["rbc_upper"].to_numpy())
        cover_us += (t["ci_lower"].to_numpy() <= truth) & (truth <= t["ci_upper"].to_numpy())
    assert np.all(cover_rbc >= 178), cover_rbc
    assert cover_us[1] < 150, cover_us
