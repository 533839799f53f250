"""attnreg.rd.rdplot with covariates: against rdrobust 2.1.1's rdplot (live) and numpy oracles.

The polynomial fits (coefficients, curve, gamma) are compared with rdrobust directly. Its binned
means are not: rdrobust averages the fitted values of y on z and the bin indicators within each
bin, which is the raw bin mean of y (the normal equations of the bin indicators), so its
"adjusted" bins are unadjusted. The tests check exactly that against our ``mean_y_unadjusted``
and check our adjusted means against the regression they come from (docs/rd.md, "RD plots").
"""
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

# Agreement bound: both sides solve least-squares problems whose scaled designs have condition
# numbers below about 1e3 here; rdrobust solves the normal equations in raw powers of x - c
# (condition number squared, times h^(2p)), so 1e-8 relative leaves a margin of 1e2 over
# (1e3)^2 * 2.2e-16 ~ 2e-10.
RTOL = 1e-8


def _sim(seed, n=700, c=2.5, dz=1):
    rng = np.random.default_rng(seed)
    x = c + 2 * rng.beta(2, 3, n) - 0.8
    z = rng.normal(size=(n, dz)) + 0.5 * (x - c)[:, None]
    y = (1 + 2 * (x - c) - 1.5 * (x - c) ** 2 + 0.8 * (x >= c) + z @ np.linspace(1, -0.5, dz)
         + rng.normal(0, 0.5, n))
    return y, x, z


def _oracle(y, x, **kw):
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return rdr_plot(y, x, hide=True, **kw)


def _ours(y, x, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return rd.rdplot(y, x, hide=True, **kw)


def _close(a, b, rtol=RTOL):
    a, b = np.asarray(a, float), np.asarray(b, float)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * np.max(np.abs(b)))


def _poly_oracle(y, x, z, c, p, h=None, kernel="uniform", w=None, zeval=None):
    """The polynomial of each side and a common gamma: one weighted least-squares fit with the
    weights K((x - c) / h) / h (times the unit weights)."""
    n = x.size
    left = x < c
    hl = c - x.min() if h is None else h[0]
    hr = x.max() - c if h is None else h[1]
    u = np.where(left, (x - c) / hl, (x - c) / hr)
    k = {"uniform": 0.5 * (np.abs(u) <= 1), "triangular": np.clip(1 - np.abs(u), 0, None)}[kernel]
    sw = np.sqrt(k / np.where(left, hl, hr) * (np.ones(n) if w is None else w))
    P = np.vander(u, p + 1, increasing=True)
    A = np.hstack([P * left[:, None], P * ~left[:, None], z])
    sol = np.linalg.lstsq(A * sw[:, None], y * sw, rcond=None)[0]
    scale_l, scale_r = hl ** np.arange(p + 1), hr ** np.arange(p + 1)
    return sol[:p + 1] / scale_l, sol[p + 1:2 * p + 2] / scale_r, sol[2 * p + 2:]


def _bins_oracle(r, y, x, z, c, zeval):
    """y on every bin indicator (both sides) and z; the bin's value alpha_b + zeval'gamma_b."""
    b = r.bins
    idx = np.empty(x.size, dtype=int)
    for side, m in (("left", x < c), ("right", x >= c)):
        s = b[b["side"] == side]
        e = np.r_[s["left_edge"].to_numpy(), s["right_edge"].to_numpy()[-1]]
        j = np.clip(np.searchsorted(e, x[m], side="right") - 1, 0, len(s) - 1)
        idx[m] = s.index.to_numpy()[j]
    used = np.unique(idx)
    D = (idx[:, None] == used[None, :]).astype(float)
    sol = np.linalg.lstsq(np.hstack([D, z]), y, rcond=None)[0]
    out = np.full(len(b), np.nan)
    out[used] = sol[:used.size] + zeval @ sol[used.size:]
    return out, sol[used.size:]


def _compare_rdrobust(ours, theirs, covs_eval):
    assert [ours.J["left"], ours.J["right"]] == [int(v) for v in theirs.J]
    b = ours.bins[ours.bins["n"] > 0].reset_index(drop=True)
    vb = theirs.vars_bins
    assert len(b) == len(vb)
    np.testing.assert_array_equal(b["n"].to_numpy(), vb["rdplot_N"].to_numpy())
    _close(b["left_edge"], vb["rdplot_min_bin"], 1e-12)
    _close(b["right_edge"], vb["rdplot_max_bin"], 1e-12)
    _close(b["mean_x"], vb["rdplot_mean_x"], 1e-12)
    # rdrobust's "adjusted" bin means are the raw means (see the module docstring).
    _close(b["mean_y_unadjusted"], vb["rdplot_mean_y"], 1e-10)
    _close(ours.coef_covs.to_numpy(), np.asarray(theirs.coef_covs).reshape(-1))
    for side, col in (("left", "Left"), ("right", "Right")):
        hp = ours.h[side] ** np.arange(len(ours.coef))
        _close(ours.coef[side].to_numpy() * hp, theirs.coef[col].to_numpy() * hp)
    _close(ours.curve["y"], theirs.vars_poly["rdplot_y"].to_numpy())


@needs_rdrobust
@pytest.mark.parametrize("covs_eval", ["mean", 0])
@pytest.mark.parametrize("dz", [1, 3])
@pytest.mark.parametrize("rule,p", [("esmv", 4), ("es", 1), ("espr", 2), ("qs", 3),
                                    ("qsmv", 1), ("qsmvpr", 4), ("esmvpr", 3), ("qspr", 2)])
def test_matches_rdrobust(rule, p, dz, covs_eval):
    c = 2.5
    y, x, z = _sim(10 * p + dz, c=c, dz=dz)
    ours = _ours(y, x, c=c, p=p, binselect=rule, covs=z, covs_eval=covs_eval)
    theirs = _oracle(y, x, c=c, p=p, binselect=rule, covs=z, covs_eval=covs_eval)
    _compare_rdrobust(ours, theirs, covs_eval)


@needs_rdrobust
@pytest.mark.parametrize("kw", [dict(kernel="triangular", h=(0.6, 0.9)), dict(nbins=(8, 12)),
                                dict(weights=True, p=2)])
def test_options_match_rdrobust(kw):
    c = -1.0
    y, x, z = _sim(3, c=c, dz=2)
    if kw.get("weights") is True:
        kw = dict(kw, weights=np.random.default_rng(3).uniform(0.2, 3, x.size))
    _compare_rdrobust(_ours(y, x, c=c, covs=z, **kw), _oracle(y, x, c=c, covs=z, **kw), "mean")


@needs_rdrobust
def test_senate_covariates_match_rdrobust():
    d = load_senate()
    cols = ["population", "termshouse", "termssenate"]
    z = d[cols].copy()
    z["population"] = z["population"] / 1e6
    ok = d[["vote", "margin"] + cols].notna().all(axis=1)
    ours = _ours(d["vote"], d["margin"], covs=z)
    theirs = _oracle(d["vote"].to_numpy(), d["margin"].to_numpy(), covs=z.to_numpy())
    _compare_rdrobust(ours, theirs, "mean")
    assert ours.n_dropped == int((~ok).sum())
    assert list(ours.coef_covs.index) == cols


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("covs_eval", ["mean", 0])
def test_numpy_oracle(seed, covs_eval):
    c = 0.0 if seed == 0 else 40.0 * seed  # x far from 0 for seeds 1, 2
    y, x, z = _sim(seed, n=300 + 250 * seed, c=c, dz=1 + seed)
    w = np.random.default_rng(seed).uniform(0.5, 2, x.size) if seed == 2 else None
    kw = dict(kernel="triangular", h=(0.7, 0.8)) if seed == 1 else {}
    r = _ours(y, x, c=c, p=2 + seed, covs=z, covs_eval=covs_eval, weights=w, **kw)
    zeval = z.mean(axis=0) if covs_eval == "mean" else np.zeros(z.shape[1])
    bl, br, g = _poly_oracle(y, x, z, c, 2 + seed, h=kw.get("h"), kernel=kw.get("kernel", "uniform"),
                             w=w)
    _close(r.coef_covs, g, 1e-9)
    for side, beta in (("left", bl), ("right", br)):
        hp = r.h[side] ** np.arange(beta.size)
        _close(r.coef[side] * hp, beta * hp, 1e-9)
        cv = r.curve[r.curve["side"] == side]
        _close(cv["y"], np.polyval(beta[::-1], cv["x"] - c) + zeval @ g, 1e-9)
    adj, gb = _bins_oracle(r, y, x, z, c, zeval)
    _close(r.coef_covs_bins, gb, 1e-9)
    _close(r.bins["mean_y"], adj, 1e-9)
    _close(r.bins["ci_high"] - r.bins["ci_low"],
           _ours(y, x, c=c, p=2 + seed, weights=w, **kw).bins["ci_high"]
           - _ours(y, x, c=c, p=2 + seed, weights=w, **kw).bins["ci_low"], 1e-12)
    # the means, summed in another order: n eps relative to max |z|
    np.testing.assert_allclose(r.covs_eval, zeval, rtol=0, atol=x.size * 2.2e-16 * np.abs(z).max())


def test_eval_at_zero_shifts_by_zbar_gamma():
    y, x, z = _sim(4, dz=2)
    m = _ours(y, x, c=2.5, covs=z)
    o = _ours(y, x, c=2.5, covs=z, covs_eval=0)
    zbar = z.mean(axis=0)
    _close(m.curve["y"] - o.curve["y"], np.full(len(m.curve), zbar @ m.coef_covs), 1e-12)
    _close(m.bins["mean_y"] - o.bins["mean_y"], np.full(len(m.bins), zbar @ m.coef_covs_bins),
           1e-10)
    pd.testing.assert_frame_equal(m.coef, o.coef)


def test_without_covariates_unchanged_and_covariates_matter():
    y, x, z = _sim(5)
    a = _ours(y, x, c=2.5)
    b = _ours(y, x, c=2.5, covs=None)
    pd.testing.assert_frame_equal(a.bins, b.bins)
    assert "mean_y_unadjusted" not in a.bins and a.coef_covs is None
    r = _ours(y, x, c=2.5, covs=z)
    assert np.max(np.abs(r.bins["mean_y"] - r.bins["mean_y_unadjusted"])) > 1e-3
    assert r.coef_covs.iloc[0] == pytest.approx(1.0, abs=0.15)  # the simulated coefficient


def test_collinear_covariates_dropped_with_a_warning_naming_them():
    y, x, z = _sim(6, dz=2)
    df = pd.DataFrame({"a": z[:, 0], "b": z[:, 1], "a_plus_b": z[:, 0] + 2 * z[:, 1]})
    with pytest.warns(UserWarning, match="covs: dropped collinear covariates: a_plus_b"):
        r = rd.rdplot(y, x, c=2.5, covs=df, hide=True)
    assert r.covs_dropped == ["a_plus_b"]
    ref = _ours(y, x, c=2.5, covs=df[["a", "b"]])
    pd.testing.assert_frame_equal(r.bins, ref.bins)
    pd.testing.assert_series_equal(r.coef_covs, ref.coef_covs)
    with pytest.raises(ValueError, match="'a_plus_b' collinear with earlier covariates"):
        rd.rdplot(y, x, c=2.5, covs=df, covs_drop=False, hide=True)


@needs_rdrobust
def test_collinear_curve_matches_rdrobust_pinv():
    # rdrobust keeps its own choice of columns (pinv); the fitted curve does not depend on which
    # of a collinear set is dropped.
    y, x, z = _sim(7, dz=2)
    z3 = np.column_stack([z, z[:, 0] - z[:, 1]])
    ours = _ours(y, x, c=2.5, covs=z3)
    theirs = _oracle(y, x, c=2.5, covs=z3)
    _close(ours.curve["y"], theirs.vars_poly["rdplot_y"].to_numpy())


@pytest.mark.parametrize("make,msg", [
    (lambda x, c: x, "'bad' is a polynomial of order 2 in x - c"),
    (lambda x, c: (x >= c).astype(float), "'bad' is a polynomial"),
    (lambda x, c: (x - c) ** 2, "'bad' is a polynomial"),
    (lambda x, c: np.full(x.size, 3.0), "'bad' is constant"),
])
def test_covariate_that_is_a_function_of_x_is_an_error(make, msg):
    y, x, z = _sim(8)
    df = pd.DataFrame({"z": z[:, 0], "bad": make(x, 2.5)})
    with pytest.raises(ValueError, match=msg):
        rd.rdplot(y, x, c=2.5, p=2, covs=df, hide=True)


def test_covariate_constant_within_bins_is_an_error():
    y, x, z = _sim(9)
    r0 = _ours(y, x, c=2.5, p=1, nbins=(2, 4), binselect="es")
    edges = np.r_[r0.bins["left_edge"].to_numpy(), np.inf]
    step = np.clip(np.searchsorted(edges, x, side="right") - 1, 0, len(r0.bins) - 1) ** 2
    with pytest.raises(ValueError, match="bin indicators"):
        rd.rdplot(y, x, c=2.5, p=1, nbins=(2, 4), binselect="es",
                  covs=np.column_stack([z[:, 0], step]), hide=True)


def test_missing_covariates_dropped_and_counted():
    y, x, z = _sim(10, dz=2)
    z = z.copy()
    z[[3, 50, 51], 1] = np.nan
    y = y.copy()
    y[7] = np.nan
    r = _ours(y, x, c=2.5, covs=z)
    assert r.n_dropped == 4
    keep = ~(np.isnan(y) | np.isnan(z).any(axis=1))
    ref = _ours(y[keep], x[keep], c=2.5, covs=z[keep])
    pd.testing.assert_frame_equal(r.bins, ref.bins)
    z[5, 0] = np.inf
    with pytest.raises(ValueError, match="covs: has an infinite value"):
        rd.rdplot(y, x, c=2.5, covs=z, hide=True)


def test_bad_covariate_options():
    y, x, z = _sim(11)
    with pytest.raises(ValueError, match="covs_eval"):
        rd.rdplot(y, x, c=2.5, covs=z, covs_eval="median", hide=True)
    with pytest.raises(ValueError, match="covs_drop"):
        rd.rdplot(y, x, c=2.5, covs=z, covs_drop="yes", hide=True)
    with pytest.raises(ValueError, match="covs: must have one row per observation"):
        rd.rdplot(y, x, c=2.5, covs=z[:-1], hide=True)


def test_subset_and_series_names(tmp_path):
    y, x, z = _sim(12)
    s = pd.Series(z[:, 0], name="income")
    mask = np.arange(x.size) % 3 != 0
    r = _ours(y, x, c=2.5, covs=s, subset=mask)
    ref = _ours(y[mask], x[mask], c=2.5, covs=z[mask, :1])
    assert list(r.coef_covs.index) == ["income"]
    np.testing.assert_array_equal(r.coef_covs.to_numpy(), ref.coef_covs.to_numpy())
    import matplotlib.pyplot as plt

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = rd.rdplot(y, x, c=2.5, covs=s, ci=0.95)
    assert "covariate-adjusted" in res.ax.get_legend().get_texts()[0].get_text()
    res.ax.figure.savefig(tmp_path / "covs.png")
    plt.close(res.ax.figure)
