"""attnreg.rd.rddensity against rddensity 3.0 (live oracle), a direct numpy oracle of the local
polynomial density fit, and the binomial window tests against scipy.

Tolerance: 1e-6 relative (the issue's contract). Both sides evaluate the same closed forms in
float64: Gram matrices of monomials in u = (x - c)/h on [-1, 1] of order <= 5 (condition numbers
below ~1e6 for these windows), so the agreement is ~1e-10 (measured 3e-12 to 2e-10 on the senate
data); 1e-6 leaves room for that conditioning times the pilot bandwidths' power 1/(2p+1).
"""
import warnings

import numpy as np
import pytest

import attnreg.rd as rd

pytest.importorskip("rddensity")
from rddensity import rddensity as r_rddensity  # noqa: E402
from rdrobust.datasets import rdrobust_RDsenate  # noqa: E402

RTOL = 1e-6


@pytest.fixture(scope="module")
def margin():
    # US Senate elections (Cattaneo, Frandsen and Titiunik 2015, J. Causal Inference 3(1)),
    # shipped with rdrobust: the Democratic margin of victory, cutoff 0.
    return rdrobust_RDsenate()["margin"].to_numpy()


def ref(x, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return r_rddensity(x[~np.isnan(x)], **kw)


def check(mine, r):
    got = [mine.h_left, mine.h_right, mine.statistic, mine.p_value, mine.density["left"],
           mine.density["right"], mine.se["diff"]]
    want = [r.h["left"], r.h["right"], r.test["t_jk"], r.test["p_jk"], r.hat["left"],
            r.hat["right"], r.sd_jk["diff"]]
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=0)
    assert mine.n_effective == (r.n["eff_left"], r.n["eff_right"])
    assert (mine.n_left, mine.n_right) == (r.n["left"], r.n["right"])


@pytest.mark.parametrize("bwselect", ["comb", "each", "diff", "sum"])
def test_senate_each_selector(margin, bwselect):
    m = rd.rddensity(margin, bwselect=bwselect)
    check(m, ref(margin, bwselect=bwselect))
    assert m.n_dropped == int(np.isnan(margin).sum())
    assert m.bwselect == bwselect and m.bandwidths is not None


@pytest.mark.parametrize("p", [1, 2, 3])
@pytest.mark.parametrize("kernel", ["triangular", "epanechnikov", "uniform"])
def test_senate_orders_and_kernels(margin, p, kernel):
    check(rd.rddensity(margin, p=p, kernel=kernel), ref(margin, p=p, kernel=kernel))


@pytest.mark.parametrize("h", [10.0, (8.0, 15.0)])
def test_fixed_h(margin, h):
    m = rd.rddensity(margin, h=h)
    check(m, ref(margin, h=list(np.atleast_1d(h))))
    assert m.bwselect == "manual" and m.bandwidths is None


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("shape", ["normal", "ties", "jump", "shifted"])
def test_simulated(seed, shape):
    rng = np.random.default_rng(seed)
    c = 0.4
    x = rng.normal(0.2, 1.0, 3000 + 500 * seed)
    if shape == "ties":
        x = np.round(x, 2)          # mass points: the ECDF takes each tie group's last value
    elif shape == "jump":           # manipulation: extra mass just above c
        x = np.concatenate([x, c + rng.uniform(0, 1.0, 1500)])
    elif shape == "shifted":        # far from the origin
        x = x + 1e4
        c = c + 1e4
    m = rd.rddensity(x, c=c)
    check(m, ref(x, c=c))
    if shape == "jump":
        assert m.p_value < 1e-3 and m.density["right"] > m.density["left"]


def test_masspoints_off():
    x = np.round(np.random.default_rng(5).normal(size=2000), 1)
    m = rd.rddensity(x, c=0.05, masspoints=False)
    check(m, ref(x, c=0.05, massPoints=False))
    assert not m.mass_points and rd.rddensity(x, c=0.05).mass_points


def test_density_fit_direct_oracle():
    # A few numpy lines: regress the ECDF (i - 1)/(n - 1) on (1, u, ..., u^q) per side with
    # weights K(u)/h; the slope / h is the density at c.
    rng = np.random.default_rng(3)
    for x, c, h in [(rng.exponential(size=800), 0.7, 0.5), (np.round(rng.normal(size=900), 1)
                                                             + 50.0, 50.05, 0.8)]:
        m = rd.rddensity(x, c=c, h=h)
        xs = np.sort(x)
        n = xs.size
        F = np.arange(n) / (n - 1.0)
        _, last = np.unique(xs[::-1], return_index=True)  # tie groups: their last member's F
        F = np.repeat(F[n - 1 - last], np.unique(xs, return_counts=True)[1])
        for side, sel in (("left", (xs < c) & (xs >= c - h)), ("right", (xs >= c) & (xs <= c + h))):
            u = (xs[sel] - c) / h
            w = (1 - np.abs(u)) / h
            X = np.vander(u, 4, increasing=True)
            beta = np.linalg.solve(X.T @ (w[:, None] * X), X.T @ (w * F[sel]))
            assert m.density[side] == pytest.approx(beta[1] / h, rel=1e-9)


def r_rule_windows(x, c, h_l, h_r, nmin=20, nw=10):
    # R rddensity: XL = sort(abs(X[X < 0])), first half-length max(XL[20], XR[20]), then steps of
    # that length, or an even spread up to h when ten of them would pass it.
    xl = np.sort(c - x[x < c])
    xr = np.sort(x[x >= c] - c)
    w0 = max(xl[min(nmin, xl.size) - 1], xr[min(nmin, xr.size) - 1])
    if w0 >= h_l or w0 >= h_r:
        return [w0], [w0], xl, xr
    j = np.arange(nw)
    wl = w0 + j * (h_l - w0) / (nw - 1) if w0 * nw > h_l else w0 + j * w0
    wr = w0 + j * (h_r - w0) / (nw - 1) if w0 * nw > h_r else w0 + j * w0
    return wl, wr, xl, xr


def test_binomial_windows_r_rule(margin):
    from scipy.stats import binomtest
    m = rd.rddensity(margin)
    x = margin[~np.isnan(margin)]
    wl, wr, xl, xr = r_rule_windows(x, 0.0, m.h_left, m.h_right)
    b = m.binomial
    np.testing.assert_allclose(b["w_left"], wl, rtol=1e-12)
    np.testing.assert_allclose(b["w_right"], wr, rtol=1e-12)
    nl = [int(np.sum(xl <= w)) for w in wl]
    nr = [int(np.sum(xr <= w)) for w in wr]
    assert list(b["n_left"]) == nl and list(b["n_right"]) == nr
    pv = [binomtest(a, a + c, 0.5).pvalue for a, c in zip(nl, nr)]
    np.testing.assert_allclose(b["p_value"], pv, rtol=1e-9)
    # the first window on the senate data: |margin| <= 1.08, 20 left and 31 right, p = 0.16
    assert b["w_left"][0] == pytest.approx(1.0800034, rel=1e-6)
    assert (b["n_left"][0], b["n_right"][0]) == (20, 31)


def test_binomial_fixed_window_matches_rddensity(margin):
    # With a given first half-length both pick the same windows (rddensity 3.0's Python port
    # differs only in how it picks the default first window, docs/rd.md).
    m = rd.rddensity(margin, bino_w=0.5)
    r = ref(margin, binoW=0.5)
    np.testing.assert_allclose(m.binomial["w_left"], r.bino["leftWindow"], rtol=1e-12)
    np.testing.assert_array_equal(m.binomial["n_left"], r.bino["leftN"])
    np.testing.assert_array_equal(m.binomial["n_right"], r.bino["rightN"])
    np.testing.assert_allclose(m.binomial["p_value"], r.bino["pval"], rtol=1e-9)


def test_binomial_test_against_scipy():
    from scipy.stats import binomtest
    x = np.random.default_rng(7).uniform(-1, 1, 400)
    for p0 in (0.5, 0.3):
        m = rd.rddensity(x, bino_p=p0, bino_n=5)
        for a, c, pv in zip(m.binomial["n_left"], m.binomial["n_right"], m.binomial["p_value"]):
            assert pv == pytest.approx(binomtest(int(a), int(a + c), p0).pvalue, rel=1e-9)


def test_summary_and_no_bino(margin):
    m = rd.rddensity(margin, bino_nw=0)
    assert len(m.binomial) == 0 and "p-value" in m.summary()


@pytest.mark.parametrize("kw, msg", [
    (dict(c=200.0), "within the range"),
    (dict(p=0), "p:"),
    (dict(p=8), "p:"),
    (dict(q=1), "q:"),
    (dict(kernel="gaussian"), "kernel:"),
    (dict(bwselect="mserd"), "bwselect:"),
    (dict(vce="bootstrap"), "jackknife"),
    (dict(h=-1.0), "h:"),
    (dict(h=(1.0, 2.0, 3.0)), "h:"),
    (dict(bino_w=0.0), "bino_w"),
    (dict(bino_p=1.5), "bino_p"),
    (dict(nlocalmin=-2), "nlocalmin"),
])
def test_bad_input(margin, kw, msg):
    with pytest.raises(ValueError, match=msg):
        rd.rddensity(margin, **kw)


def test_bad_x():
    with pytest.raises(ValueError, match="infinite"):
        rd.rddensity(np.array([-1.0, np.inf, 1.0, 2.0]))
    with pytest.raises(ValueError, match="numeric"):
        rd.rddensity(np.array(["a", "b"]))
    with pytest.raises(ValueError, match="singular"):   # too few rows for a cubic in the window
        rd.rddensity(np.array([-2.0, -1.0, 1.0, 2.0, 3.0]), h=1.5, bino_nw=0)


def test_missing_x_is_dropped_and_counted(margin):
    import pandas as pd
    x = pd.Series(np.concatenate([margin, [np.nan, np.nan, np.nan]]), name="margin")
    m, ref_m = rd.rddensity(x), rd.rddensity(margin)
    assert m.n_dropped == 3 and m.n == ref_m.n
    assert m.statistic == ref_m.statistic and m.h_left == ref_m.h_left
