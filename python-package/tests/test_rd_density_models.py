"""attnreg.rd.rddensity's plug-in variance (vce="plugin") and restricted model
(fitselect="restricted") against rddensity 3.0 (live oracle), with a direct numpy oracle of the
restricted fit and closed-form kernel constants against numerical integration.

Tolerance: 1e-6 relative (the issue's contract) on bandwidths, statistics, p-values and
densities. Both sides evaluate the same closed forms in float64; the plug-in kernel constants
are exact here and scipy.integrate.quad/dblquad there (about 1e-13 relative), the Gram matrices
are of monomials in u = (x - c)/h of order <= 5 on [-1, 1] (condition numbers below ~1e7 for the
restricted basis), so the agreement is ~1e-9 or better; p-values are compared in relative terms
where they exceed 1e-12 (below that both are the tail of the normal at |T| > 7 and rddensity's
2 * (1 - Phi(|T|)) loses all digits to cancellation).
"""
import warnings

import numpy as np
import pytest

import attnreg.rd as rd

pytest.importorskip("rddensity")
from rddensity import rddensity as r_rddensity  # noqa: E402
from rddensity import rdbwdensity as r_rdbwdensity  # noqa: E402

RTOL = 1e-6


def _designs():
    rng = np.random.default_rng(11)
    from rdrobust.datasets import rdrobust_RDsenate
    margin = rdrobust_RDsenate()["margin"].to_numpy()
    return {
        # US Senate elections (Cattaneo, Frandsen and Titiunik 2015, J. Causal Inference 3(1)),
        # shipped with rdrobust: the Democratic margin of victory, cutoff 0, 93 missing.
        "senate": (margin[~np.isnan(margin)], 0.0),
        "normal": (rng.normal(0.2, 1.0, 3000), 0.4),
        "uniform_shifted": (rng.uniform(-1.0, 2.0, 2500) + 100.0, 100.5),
        "ties": (np.round(rng.normal(0.2, 1.0, 3000), 2), 0.4),  # mass points
    }


DESIGNS = _designs()
FIXED_H = {"senate": 15.0, "normal": 0.8, "uniform_shifted": 0.9, "ties": 0.7}


def ref(x, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return r_rddensity(x, **kw)


def check(mine, r, vce):
    t, pv, sd = ((r.test["t_asy"], r.test["p_asy"], r.sd_asy) if vce == "plugin"
                 else (r.test["t_jk"], r.test["p_jk"], r.sd_jk))
    got = [mine.h_left, mine.h_right, mine.statistic, mine.density["left"],
           mine.density["right"], mine.se["left"], mine.se["right"], mine.se["diff"]]
    want = [r.h["left"], r.h["right"], t, r.hat["left"], r.hat["right"], sd["left"],
            sd["right"], sd["diff"]]
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=0)
    if pv > 1e-12:
        assert mine.p_value == pytest.approx(pv, rel=RTOL)
    else:
        assert mine.p_value < 1e-11
    assert mine.n_effective == (r.n["eff_left"], r.n["eff_right"])


@pytest.mark.parametrize("design", sorted(DESIGNS))
@pytest.mark.parametrize("vce", ["jackknife", "plugin"])
@pytest.mark.parametrize("fitselect", ["unrestricted", "restricted"])
@pytest.mark.parametrize("p", [1, 2, 3])
def test_against_rddensity_selected_h(design, vce, fitselect, p):
    x, c = DESIGNS[design]
    for bwselect in ("comb", "diff", "sum") + (("each",) if fitselect == "unrestricted" else ()):
        m = rd.rddensity(x, c=c, p=p, fitselect=fitselect, vce=vce, bwselect=bwselect)
        check(m, ref(x, c=c, p=p, fitselect=fitselect, vce=vce, bwselect=bwselect), vce)
        assert (m.fitselect, m.vce, m.bwselect) == (fitselect, vce, bwselect)


@pytest.mark.parametrize("design", sorted(DESIGNS))
@pytest.mark.parametrize("vce", ["jackknife", "plugin"])
@pytest.mark.parametrize("fitselect", ["unrestricted", "restricted"])
@pytest.mark.parametrize("p", [1, 2, 3])
def test_against_rddensity_fixed_h(design, vce, fitselect, p):
    x, c = DESIGNS[design]
    h = FIXED_H[design]
    m = rd.rddensity(x, c=c, p=p, h=h, fitselect=fitselect, vce=vce)
    check(m, ref(x, c=c, p=p, h=[h], fitselect=fitselect, vce=vce), vce)
    assert m.bwselect == "manual"


@pytest.mark.parametrize("kernel", ["epanechnikov", "uniform"])
@pytest.mark.parametrize("fitselect", ["unrestricted", "restricted"])
def test_against_rddensity_kernels(kernel, fitselect):
    x, c = DESIGNS["normal"]
    for vce in ("jackknife", "plugin"):
        m = rd.rddensity(x, c=c, kernel=kernel, fitselect=fitselect, vce=vce)
        check(m, ref(x, c=c, kernel=kernel, fitselect=fitselect, vce=vce), vce)


@pytest.mark.parametrize("vce", ["jackknife", "plugin"])
def test_restricted_masspoints_off(vce):
    # massPoints=False: the ECDF and the jackknife ignore the ties.
    x, c = DESIGNS["ties"]
    m = rd.rddensity(x, c=c, fitselect="restricted", vce=vce, masspoints=False)
    check(m, ref(x, c=c, fitselect="restricted", vce=vce, massPoints=False), vce)
    assert not m.mass_points


@pytest.mark.parametrize("fitselect", ["unrestricted", "restricted"])
@pytest.mark.parametrize("vce", ["jackknife", "plugin"])
def test_bandwidth_table_against_rdbwdensity(fitselect, vce):
    # rdbwdensity's variance and squared-bias columns (the pieces of every selector).
    for design in ("senate", "ties"):
        x, c = DESIGNS[design]
        m = rd.rddensity(x, c=c, fitselect=fitselect, vce=vce)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = r_rdbwdensity(x, c=c, fitselect=fitselect, vce=vce).h.to_numpy()
        np.testing.assert_allclose(m.bandwidths.to_numpy(), r, rtol=RTOL, atol=0)


def test_unrestricted_plugin_default_unchanged():
    # vce="jackknife", fitselect="unrestricted" are the defaults: the same numbers as before.
    x, c = DESIGNS["normal"]
    a = rd.rddensity(x, c=c)
    b = rd.rddensity(x, c=c, vce="jackknife", fitselect="unrestricted")
    assert (a.statistic, a.h_left, a.se["diff"]) == (b.statistic, b.h_left, b.se["diff"])


def _ecdf(xs):
    n = xs.size
    F = np.arange(n) / (n - 1.0)
    _, last = np.unique(xs[::-1], return_index=True)  # tie groups: their last member's F
    return np.repeat(F[n - 1 - last], np.unique(xs, return_counts=True)[1])


def test_restricted_fit_direct_oracle():
    # A few numpy lines: regress the ECDF on (1, u 1{u<0}, u 1{u>=0}, u^2, ..., u^q) with
    # weights K(u)/h on [c - h, c + h]; the two slopes / h are the densities. The jackknife: row
    # i's influence row is the sum of the weighted basis over the rows after it (after its tie
    # group's first row), / (n - 1).
    rng = np.random.default_rng(4)
    for x, c, h, q in [(rng.exponential(size=900), 0.7, 0.5, 3),
                       (np.round(rng.normal(size=1000), 1) + 50.0, 50.05, 0.8, 2),
                       (rng.uniform(-1, 1, 700), 0.0, 0.6, 4)]:
        m = rd.rddensity(x, c=c, h=h, q=q, p=min(q, 2), fitselect="restricted", bino_nw=0)
        xs = np.sort(x)
        n = xs.size
        F = _ecdf(xs)
        sel = (xs >= c - h) & (xs <= c + h)
        u = (xs[sel] - c) / h
        w = (1 - np.abs(u)) / h
        B = np.column_stack([np.ones_like(u), np.where(u < 0, u, 0), np.where(u >= 0, u, 0)]
                            + [u ** j for j in range(2, q + 1)])
        Sinv = np.linalg.inv(B.T @ (w[:, None] * B))
        beta = Sinv @ (B.T @ (w * F[sel]))
        assert m.density["left"] == pytest.approx(beta[1] / h, rel=1e-9)
        assert m.density["right"] == pytest.approx(beta[2] / h, rel=1e-9)
        Z = w[:, None] * B
        tails = np.cumsum(Z[::-1], axis=0)[::-1] - Z  # rows strictly after i
        first = np.searchsorted(u, u, side="left")    # each tie group's first row
        L = tails[first] / (n - 1)
        V = Sinv @ (L.T @ L) @ Sinv / h ** 2
        se_diff = np.sqrt(V[1, 1] + V[2, 2] - 2 * V[1, 2])
        assert m.se["diff"] == pytest.approx(se_diff, rel=1e-8)
        assert m.se["left"] == pytest.approx(np.sqrt(V[1, 1]), rel=1e-8)


def test_plugin_kernel_constants_against_quadrature():
    # The plug-in variance f/(n h) e_1' S^-1 G S^-1 e_1 with G = int int K K r r' min(u, v)
    # (Cattaneo, Jansson and Ma 2020, Theorem 1) by scipy's dblquad.
    from scipy.integrate import dblquad, quad
    x, c = DESIGNS["normal"]
    h, q = 0.8, 2
    kern = {"triangular": lambda t: 1 - t, "epanechnikov": lambda t: 0.75 * (1 - t * t),
            "uniform": lambda t: 0.5}
    for name, K in kern.items():
        m = rd.rddensity(x, c=c, h=h, q=q, p=2, kernel=name, vce="plugin", bino_nw=0)
        S = np.array([[quad(lambda t: K(t) * t ** (a + b), 0, 1)[0] for b in range(q + 1)]
                      for a in range(q + 1)])
        # split at v = t, where min(t, v) has its kink: smooth integrands on both triangles
        G = np.array([[dblquad(lambda v, t: K(t) * K(v) * t ** a * v ** (b + 1), 0, 1, 0,
                               lambda t: t, epsabs=1e-14, epsrel=1e-12)[0]
                       + dblquad(lambda v, t: K(t) * K(v) * t ** (a + 1) * v ** b, 0, 1,
                                 lambda t: t, 1, epsabs=1e-14, epsrel=1e-12)[0]
                       for b in range(q + 1)] for a in range(q + 1)])
        V = np.linalg.solve(S, np.linalg.solve(S, G).T)[1, 1]
        n = x.size
        assert m.se["left"] == pytest.approx(np.sqrt(m.density["left"] * V / (n * h)),
                                             rel=1e-8)
        assert m.se["diff"] == pytest.approx(
            np.sqrt((m.density["left"] + m.density["right"]) * V / (n * h)), rel=1e-8)


@pytest.mark.parametrize("kw, msg", [
    (dict(fitselect="both"), "fitselect: must be 'unrestricted' or 'restricted'"),
    (dict(vce="hc0"), "vce: must be 'jackknife' or 'plugin'"),
    (dict(fitselect="restricted", bwselect="each"), "bwselect='each'.*'diff', 'sum' or 'comb'"),
    (dict(fitselect="restricted", h=(8.0, 12.0)), "one bandwidth"),
])
def test_bad_input(kw, msg):
    x, c = DESIGNS["senate"]
    with pytest.raises(ValueError, match=msg):
        rd.rddensity(x, c=c, **kw)


def test_plugin_refuses_a_negative_density():
    # 81 points, a quartic in a window of 0.3: the right density estimate is negative (-0.17),
    # so its plug-in variance f V/(n h) is too; rddensity 3.0 reports NaN for that side and
    # still adds the negative term into the difference's variance (T = -1.16).
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.uniform(-1, 0, 40), rng.uniform(0.0, 1, 40), [0.0]])
    kw = dict(h=0.3, p=2, q=4, bino_nw=0)
    assert rd.rddensity(x, **kw).density["right"] < 0
    with pytest.raises(ValueError, match="positive density estimates.*vce='jackknife'"):
        rd.rddensity(x, vce="plugin", **kw)


def test_summary_names_model_and_vce():
    x, c = DESIGNS["normal"]
    s = rd.rddensity(x, c=c, fitselect="restricted", vce="plugin").summary()
    assert "model = restricted, vce = plugin" in s
