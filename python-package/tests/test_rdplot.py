"""attnreg.rd.rdplot against rdrobust 2.1.1's rdplot (live) and a direct numpy oracle."""
import contextlib
import io
import warnings

import numpy as np
import pandas as pd
import pytest

import attnreg.rd as rd
from attnreg.datasets import load_senate

try:
    import matplotlib

    matplotlib.use("Agg")
    with contextlib.redirect_stdout(io.StringIO()):
        from rdrobust import rdplot as rdr_plot
except Exception:  # pragma: no cover - the oracle is a test dependency
    rdr_plot = None

needs_rdrobust = pytest.mark.skipif(rdr_plot is None, reason="rdrobust is not importable")
RULES = ("es", "espr", "esmv", "esmvpr", "qs", "qspr", "qsmv", "qsmvpr")


def _sim(seed, n=600, c=0.0, ties=False, scale=1.0):
    rng = np.random.default_rng(seed)
    x = c + scale * (2 * rng.beta(2, 3, n) - 0.8)
    if ties:
        x = np.round(x, 1)
    y = 1 + 2 * (x - c) - 1.5 * (x - c) ** 2 + 0.8 * (x >= c) + rng.normal(0, 0.5, n)
    return y, x


def _oracle(y, x, **kw):
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return rdr_plot(y, x, hide=True, **kw)


def _ours(y, x, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return rd.rdplot(y, x, hide=True, **kw)


def _compare(ours, theirs, rtol=1e-6):
    assert [ours.J["left"], ours.J["right"]] == [int(v) for v in theirs.J]
    b = ours.bins[ours.bins["n"] > 0].reset_index(drop=True)
    vb = theirs.vars_bins
    assert len(b) == len(vb)
    np.testing.assert_array_equal(b["n"].to_numpy(), vb["rdplot_N"].to_numpy())
    scale_y = np.max(np.abs(vb["rdplot_mean_y"]))
    scale_x = np.max(np.abs(vb["rdplot_mean_x"]))
    np.testing.assert_allclose(b["mean_y"], vb["rdplot_mean_y"], rtol=rtol, atol=rtol * scale_y)
    np.testing.assert_allclose(b["mean_x"], vb["rdplot_mean_x"], rtol=rtol, atol=rtol * scale_x)
    np.testing.assert_allclose(b["mid"], vb["rdplot_mean_bin"], rtol=rtol, atol=rtol * scale_x)
    np.testing.assert_allclose(b["ci_low"], vb["rdplot_ci_l"], rtol=rtol, atol=rtol * scale_y)
    np.testing.assert_allclose(b["ci_high"], vb["rdplot_ci_r"], rtol=rtol, atol=rtol * scale_y)
    # Coefficients of (x - c)^j: compare each in the units of h^j (their relative accuracy is
    # that of the fit, about cond(design) * eps; 1e-6 leaves room for rdrobust's normal
    # equations, whose condition number is the square of ours).
    for side, col in (("left", "Left"), ("right", "Right")):
        h = ours.h[side]
        ours_c = ours.coef[side].to_numpy() * h ** np.arange(len(ours.coef))
        their_c = theirs.coef[col].to_numpy() * h ** np.arange(len(ours.coef))
        np.testing.assert_allclose(ours_c, their_c, rtol=rtol, atol=rtol * np.max(np.abs(their_c)))
    vp = theirs.vars_poly["rdplot_y"].to_numpy()
    np.testing.assert_allclose(ours.curve["y"], vp, rtol=rtol, atol=rtol * np.max(np.abs(vp)))


@needs_rdrobust
@pytest.mark.parametrize("rule", RULES)
def test_senate_every_rule_matches_rdrobust(rule):
    d = load_senate()
    ours = _ours(d["vote"], d["margin"], binselect=rule)
    theirs = _oracle(d["vote"].to_numpy(), d["margin"].to_numpy(), binselect=rule)
    assert [ours.J_imse["left"], ours.J_imse["right"]] == [int(v) for v in theirs.J_IMSE]
    assert [ours.J_mv["left"], ours.J_mv["right"]] == [int(v) for v in theirs.J_MV]
    _compare(ours, theirs)
    assert ours.n_dropped == 93


def test_senate_default_numbers():
    d = load_senate()
    assert d.shape == (1390, 17)
    r = _ours(d["vote"], d["margin"])
    assert r.binselect == "esmv"
    assert r.n == {"left": 595, "right": 702}


@needs_rdrobust
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("p", [1, 2, 3, 4])
def test_simulated_matches_rdrobust(seed, rule, p):
    c = 0.0 if seed == 0 else 3.7 * seed
    y, x = _sim(seed, n=300 + 200 * seed, c=c, scale=1.0 + seed)
    _compare(_ours(y, x, c=c, p=p, binselect=rule),
             _oracle(y, x, c=c, p=p, binselect=rule))


@needs_rdrobust
@pytest.mark.parametrize("rule", ["es", "esmv", "qs", "qsmv"])
def test_mass_points_adjust_matches_rdrobust(rule):
    y, x = _sim(5, n=800, c=0.0, ties=True)
    ours = _ours(y, x, binselect=rule)
    assert ours.mass_points
    assert ours.binselect.endswith("pr")
    _compare(ours, _oracle(y, x, binselect=rule))


@needs_rdrobust
@pytest.mark.parametrize("kw", [dict(nbins=(7, 11)), dict(nbins=5, binselect="qs"),
                                dict(scale=2.5), dict(scale=0.5), dict(h=0.4),
                                dict(kernel="triangular", h=(0.5, 0.6)),
                                dict(kernel="epanechnikov"), dict(support=(-3, 3)),
                                dict(ci=0.90)])
def test_options_match_rdrobust(kw):
    y, x = _sim(7, n=700)
    # rdrobust's ci is a percentage
    theirs = dict(kw, ci=round(100 * kw["ci"])) if "ci" in kw else kw
    _compare(_ours(y, x, **kw), _oracle(y, x, **theirs))


def test_ci_is_a_fraction():
    y, x = _sim(7, n=200)
    with pytest.raises(ValueError, match="ci: must be in \\(0, 1\\)"):
        _ours(y, x, ci=95)


@needs_rdrobust
def test_two_scales_match_rdrobust_side_by_side():
    # rdrobust 2.1.1's Python rdplot refuses a (left, right) scale (it compares the tuple with
    # 0); the sides are independent, so each is compared with a one-scale call.
    y, x = _sim(9, n=700)
    ours = _ours(y, x, scale=(0.5, 3))
    left, right = _oracle(y, x, scale=0.5), _oracle(y, x, scale=3)
    assert ours.J == {"left": int(left.J[0]), "right": int(right.J[1])}
    assert ours.rscale["left"] == pytest.approx(left.rscale[0], rel=1e-12)
    assert ours.rscale["right"] == pytest.approx(right.rscale[1], rel=1e-12)


@needs_rdrobust
def test_weights_match_rdrobust():
    y, x = _sim(8, n=500, c=1.0)
    w = np.random.default_rng(8).uniform(0.2, 3, x.size)
    _compare(_ours(y, x, c=1.0, weights=w, p=3), _oracle(y, x, c=1.0, weights=w, p=3))


@pytest.mark.parametrize("seed", [0, 3])
def test_numpy_oracle_bins_and_fit(seed):
    """A direct implementation: evenly spaced bins [e_j, e_j+1), their means, and the weighted
    least-squares polynomial in (x - c) on each side."""
    y, x = _sim(seed, n=400, c=2.0)
    w = np.random.default_rng(seed).uniform(0.5, 2, x.size)
    r = rd.rdplot(y, x, c=2.0, p=3, nbins=(6, 9), weights=w, hide=True)
    for side, J, mask, lo, hi in (("left", 6, x < 2.0, x.min(), 2.0),
                                  ("right", 9, x >= 2.0, 2.0, x.max())):
        xs, ys, ws = x[mask], y[mask], w[mask]
        e = lo + (hi - lo) * np.arange(J + 1) / J
        idx = np.clip(np.searchsorted(e, xs, side="right") - 1, 0, J - 1)
        b = r.bins[r.bins["side"] == side]
        np.testing.assert_allclose(b["left_edge"], e[:-1], rtol=1e-14, atol=1e-14)
        for j in range(J):
            sel = idx == j
            assert b["n"].iloc[j] == sel.sum()
            if sel.any():
                np.testing.assert_allclose(b["mean_y"].iloc[j], ys[sel].mean(), rtol=1e-12)
                np.testing.assert_allclose(b["mean_x"].iloc[j], xs[sel].mean(), rtol=1e-12)
        X = np.vander(xs - 2.0, 4, increasing=True)
        beta = np.linalg.lstsq(X * np.sqrt(ws)[:, None], ys * np.sqrt(ws), rcond=None)[0]
        # cond(X) * eps bounds the coefficient error; the design is well conditioned here
        np.testing.assert_allclose(r.coef[side], beta, rtol=1e-9, atol=1e-9 * np.abs(beta).max())


def test_rule_formulas_by_hand():
    """J for es and esmv from the formulas of Calonico, Cattaneo and Titiunik (2015, section 3)
    with a quartic fit computed here."""
    y, x = _sim(11, n=500)
    r = rd.rdplot(y, x, binselect="es", hide=True)
    n = x.size
    xl, yl = x[x < 0], y[x < 0]
    o = np.argsort(xl, kind="stable")
    xl, yl = xl[o], yl[o]
    beta = np.polynomial.polynomial.polyfit(xl, yl, 4)
    d1 = np.polynomial.polynomial.polyval(xl, np.polynomial.polynomial.polyder(beta))
    rng_l = 0 - x.min()
    B = rng_l ** 2 / (12 * n) * np.sum(d1 ** 2)
    V = 0.5 / rng_l * np.sum(np.diff(xl) * np.diff(yl) ** 2)
    assert r.J["left"] == int(np.ceil((2 * B / V * n) ** (1 / 3)))
    assert r.J_mv["left"] == int(np.ceil(np.var(yl, ddof=1) / V * n / np.log(n) ** 2))


@needs_rdrobust
def test_subset_matches_rdrobust_and_slicing():
    y, x = _sim(12, n=600)
    keep = np.arange(x.size) % 3 != 0
    ours = _ours(y, x, subset=keep)
    _compare(ours, _oracle(y, x, subset=keep))
    sliced = _ours(y[keep], x[keep])
    assert ours.J == sliced.J
    np.testing.assert_array_equal(ours.bins["mean_y"], sliced.bins["mean_y"])


def test_bad_input():
    y, x = _sim(1)
    with pytest.raises(ValueError, match="binselect"):
        rd.rdplot(y, x, binselect="foo", hide=True)
    with pytest.raises(ValueError, match="c: "):
        rd.rdplot(y, x, c=50.0, hide=True)
    with pytest.raises(ValueError, match="weights"):
        rd.rdplot(y, x, weights=-np.ones_like(x), hide=True)
    xi = x.copy()
    xi[3] = np.inf
    with pytest.raises(ValueError, match="x: .*infinite"):
        rd.rdplot(y, xi, hide=True)
    with pytest.raises(ValueError, match="level is a fraction"):
        rd.rdplot(y, x, level=1.5, hide=True)
    with pytest.raises(ValueError, match="nbins"):
        rd.rdplot(y, x, nbins=2.5, hide=True)
    with pytest.raises(ValueError, match="at least 20"):
        rd.rdplot(y[:10], x[:10], hide=True)
    yn = y.copy()
    yn[:5] = np.nan
    assert rd.rdplot(yn, x, hide=True).n_dropped == 5


def test_figure_draws():
    import matplotlib.pyplot as plt

    d = load_senate()
    r = rd.rdplot(d["vote"], d["margin"], ci=0.95, shade=True)
    assert r.ax is not None and len(r.ax.collections) >= 1
    plt.close("all")
