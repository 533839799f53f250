"""attnreg.rd against rdrobust 2.1.1 (live oracle) and a direct numpy oracle of the two
one-sided weighted least-squares fits.

Tolerance: 1e-6 relative for bandwidths, estimates, standard errors and intervals. Both sides
compute the same closed forms in float64; the bandwidth rule raises a ratio of sums to the power
1/(2p+3) and the local Gram matrices have condition numbers below ~1e4 on these designs, so the
two implementations agree to ~1e-10 (measured 1e-14 to 1e-11); 1e-6 is the issue's contract and
leaves room for the conditioning of the p = 3 pilots.
"""
import warnings

import numpy as np
import pytest

import attnreg.rd as rd

rdrobust_pkg = pytest.importorskip("rdrobust")
from rdrobust import rdbwselect as r_bwselect  # noqa: E402
from rdrobust import rdrobust as r_rdrobust  # noqa: E402
from rdrobust.datasets import rdrobust_RDsenate  # noqa: E402

RTOL = 1e-6


@pytest.fixture(scope="module")
def senate():
    # The US Senate elections data of Cattaneo, Frandsen and Titiunik (2015, J. Causal
    # Inference 3(1)), shipped with rdrobust: margin (running variable), vote (outcome, 93
    # missing), state (clusters), covariates.
    return rdrobust_RDsenate()


def _theirs(y, x, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import contextlib
        import io
        with contextlib.redirect_stdout(io.StringIO()):
            return r_rdrobust(y, x, **kw)


def _agree(ours, theirs, rtol=RTOL):
    bw_o = np.array([ours.bandwidths[k] for k in ("h_left", "h_right", "b_left", "b_right")])
    bw_t = np.r_[theirs.bws.loc["h"].to_numpy(), theirs.bws.loc["b"].to_numpy()]
    np.testing.assert_allclose(bw_o, bw_t, rtol=rtol, err_msg="bandwidths")
    np.testing.assert_allclose(ours.table["coef"], theirs.coef.to_numpy().ravel(), rtol=rtol,
                               err_msg="estimates")
    np.testing.assert_allclose(ours.table["se"], theirs.se.to_numpy().ravel(), rtol=rtol,
                               err_msg="standard errors")
    ci = theirs.ci.to_numpy()
    np.testing.assert_allclose(ours.table["ci_low"], ci[:, 0], rtol=rtol, err_msg="ci_low")
    np.testing.assert_allclose(ours.table["ci_high"], ci[:, 1], rtol=rtol, err_msg="ci_high")
    np.testing.assert_array_equal([ours.n_effective["left"], ours.n_effective["right"]],
                                  np.asarray(theirs.N_h))


def _ours(y, x, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return rd.rdrobust(y, x, **kw)


def _sim(n=2000, seed=0, c=0.0, fuzzy=False, ties=None):
    g = np.random.default_rng(seed)
    x = g.uniform(-1, 1, n)
    if ties is not None:
        x = np.round(x * ties) / ties
    d = (x >= 0).astype(float)
    t = None
    if fuzzy:
        u = g.uniform(size=n)
        t = np.where(x >= 0, u < 0.8, u < 0.25).astype(float)
        d = t
    y = 1 + 0.8 * x - 0.5 * x ** 2 + 0.3 * np.sin(3 * x) + 0.7 * d + g.normal(0, 0.4, n)
    return y, x + c, t


# ---------------------------------------------------------------- live oracle: senate data
@pytest.mark.parametrize("bwselect", rd.SELECTORS)
def test_senate_selectors(senate, bwselect):
    _agree(_ours(senate.vote, senate.margin, bwselect=bwselect),
           _theirs(senate.vote, senate.margin, bwselect=bwselect))


@pytest.mark.parametrize("vce", ["nn", "hc0", "hc1", "hc2", "hc3"])
def test_senate_vce(senate, vce):
    _agree(_ours(senate.vote, senate.margin, vce=vce),
           _theirs(senate.vote, senate.margin, vce=vce))


@pytest.mark.parametrize("p", [1, 2, 3])
@pytest.mark.parametrize("kernel", ["triangular", "epanechnikov", "uniform"])
def test_senate_orders_kernels(senate, p, kernel):
    _agree(_ours(senate.vote, senate.margin, p=p, kernel=kernel),
           _theirs(senate.vote, senate.margin, p=p, kernel=kernel[:3]))


@pytest.mark.parametrize("vce", ["nn", "hc0", "hc1"])
def test_senate_clusters_cr1(senate, vce):
    ours = _ours(senate.vote, senate.margin, groups=senate.state, vce=vce)
    _agree(ours, _theirs(senate.vote, senate.margin, cluster=senate.state, vce=vce))
    assert ours.n_clusters > 40


@pytest.mark.parametrize("vce,label", [("nn", "cr1"), ("hc0", "cr1"), ("hc1", "cr1"),
                                       ("cr1", "cr1"), ("hc2", "cr2"), ("cr2", "cr2"),
                                       ("hc3", "cr3"), ("cr3", "cr3")])
def test_vce_label_from_core(senate, vce, label):
    # The core reports the variance it computed (rdrobust 2.1.1's names with clusters): the
    # label and the numbers are those of the cluster-robust name.
    ours = _ours(senate.vote, senate.margin, groups=senate.state, vce=vce)
    assert ours.vce == label
    same = _ours(senate.vote, senate.margin, groups=senate.state, vce=label)
    np.testing.assert_array_equal(ours.table.to_numpy(), same.table.to_numpy())
    bw = rd.rdbwselect(senate.vote, senate.margin, groups=senate.state, vce=vce)
    assert bw.summary_info["vce"] == label
    if not vce.startswith("cr"):
        assert _ours(senate.vote, senate.margin, vce=vce).vce == vce
        assert rd.rdbwselect(senate.vote, senate.margin, vce=vce).summary_info["vce"] == vce


def test_senate_kink_fixed_and_cutoff(senate):
    # rdrobust sets p = deriv + 1 when p is not given; here p is 1 unless given.
    _agree(_ours(senate.vote, senate.margin, deriv=1),
           _theirs(senate.vote, senate.margin, deriv=1, p=1))
    _agree(_ours(senate.vote, senate.margin, deriv=1, p=2),
           _theirs(senate.vote, senate.margin, deriv=1))
    _agree(_ours(senate.vote, senate.margin, h=10), _theirs(senate.vote, senate.margin, h=10))
    _agree(_ours(senate.vote, senate.margin, h=(10, 12), b=(20, 15)),
           _theirs(senate.vote, senate.margin, h=[10, 12], b=[20, 15]))
    _agree(_ours(senate.vote, senate.margin, h=12, rho=0.5),
           _theirs(senate.vote, senate.margin, h=12, rho=0.5))
    _agree(_ours(senate.vote, senate.margin, rho=1.0),
           _theirs(senate.vote, senate.margin, rho=1.0))
    _agree(_ours(senate.vote, senate.margin, c=10), _theirs(senate.vote, senate.margin, c=10))


def test_senate_covariates(senate):
    covs = senate[["presdemvoteshlag1", "population"]]
    ours = _ours(senate.vote, senate.margin, covs=covs)
    theirs = _theirs(senate.vote, senate.margin, covs=covs)
    _agree(ours, theirs)
    # rdrobust orders covariates by the length of their names; ours keeps the caller's order.
    np.testing.assert_allclose(ours.coef_covs[["population", "presdemvoteshlag1"]],
                               np.asarray(theirs.coef_covs).ravel(), rtol=RTOL)


def test_senate_stdvars_and_bwselect_all(senate):
    for stdvars in (True, False):
        _agree(_ours(senate.vote, senate.margin, stdvars=stdvars),
               _theirs(senate.vote, senate.margin, stdvars=stdvars))
    ours = rd.rdbwselect(senate.vote, senate.margin, all=True).bws
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = r_bwselect(senate.vote, senate.margin, all=True).bws
    np.testing.assert_allclose(ours.to_numpy(), theirs.to_numpy(), rtol=RTOL)
    assert list(ours.index) == list(theirs.index)


def test_senate_missing_rows_dropped(senate):
    res = _ours(senate.vote, senate.margin)
    assert res.n_dropped == int(senate.vote.isna().sum()) == 93
    a = res.attention_weights().weights
    assert a.shape == (len(senate),)
    assert np.all(a[senate.vote.isna().to_numpy()] == 0)
    y = np.nan_to_num(senate.vote.to_numpy())
    np.testing.assert_allclose(a @ y, res.coef, rtol=1e-12)


# ---------------------------------------------------------------- live oracle: simulated designs
@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("p", [1, 2, 3])
def test_sim_sharp_kink(seed, p):
    y, x, _ = _sim(seed=seed)
    _agree(_ours(y, x, p=p), _theirs(y, x, p=p))
    _agree(_ours(y, x, p=p, deriv=1), _theirs(y, x, p=p, deriv=1))  # p given to both


@pytest.mark.parametrize("vce", ["nn", "hc1", "hc3"])
@pytest.mark.parametrize("bwselect", ["mserd", "msetwo", "cercomb2"])
def test_sim_fuzzy(vce, bwselect):
    y, x, t = _sim(n=3000, seed=3, fuzzy=True)
    ours = _ours(y, x, fuzzy=t, vce=vce, bwselect=bwselect)
    theirs = _theirs(y, x, fuzzy=t, vce=vce, bwselect=bwselect)
    _agree(ours, theirs)
    np.testing.assert_allclose(ours.first_stage["coef"], theirs.tau_T.to_numpy().ravel(),
                               rtol=RTOL)
    np.testing.assert_allclose(ours.first_stage["se"], theirs.se_T.to_numpy().ravel(),
                               rtol=RTOL)
    a = ours.attention_weights().weights
    np.testing.assert_allclose((a @ y) / (a @ t), ours.coef, rtol=1e-10)


def test_sim_fuzzy_covariates_clusters():
    y, x, t = _sim(n=3000, seed=4, fuzzy=True)
    g = np.random.default_rng(5)
    z = np.c_[x + g.normal(size=x.size), g.normal(size=x.size)]
    y = y + z @ [0.3, -0.2]
    cl = g.integers(0, 60, x.size)
    _agree(_ours(y, x, fuzzy=t, covs=z), _theirs(y, x, fuzzy=t, covs=z))
    _agree(_ours(y, x, fuzzy=t, groups=cl), _theirs(y, x, fuzzy=t, cluster=cl))
    _agree(_ours(y, x, covs=z, groups=cl), _theirs(y, x, covs=z, cluster=cl))


def test_sim_one_sided_compliance():
    # No always-takers: the treatment is 0 on the left; the bandwidths are the sharp ones.
    y, x, _ = _sim(n=3000, seed=6)
    t = ((x >= 0) & (np.random.default_rng(7).uniform(size=x.size) < 0.7)).astype(float)
    _agree(_ours(y, x, fuzzy=t), _theirs(y, x, fuzzy=t))


@pytest.mark.parametrize("masspoints", ["adjust", "check", "off"])
@pytest.mark.parametrize("vce", ["nn", "hc2"])
def test_sim_mass_points(masspoints, vce):
    y, x, _ = _sim(n=3000, seed=8, ties=25)  # 51 distinct values: heavy mass points
    _agree(_ours(y, x, masspoints=masspoints, vce=vce),
           _theirs(y, x, masspoints=masspoints, vce=vce))


def test_sim_bwcheck_weights_cutoff_away_from_zero():
    y, x, _ = _sim(n=2500, seed=9, c=50.0)
    w = np.random.default_rng(10).uniform(0.5, 2, x.size)
    _agree(_ours(y, x, c=50.0, weights=w), _theirs(y, x, c=50.0, weights=w))
    _agree(_ours(y, x, c=50.0, bwcheck=30), _theirs(y, x, c=50.0, bwcheck=30))
    _agree(_ours(y, x, c=50.0, bwrestrict=False, scaleregul=0),
           _theirs(y, x, c=50.0, bwrestrict=False, scaleregul=0))


# ---------------------------------------------------------------- direct numpy oracle
def _wls_side(x, y, c, h, p, deriv, kernel="triangular"):
    u = (x - c) / h
    k = {"triangular": np.clip(1 - np.abs(u), 0, None),
         "epanechnikov": np.clip(0.75 * (1 - u ** 2), 0, None),
         "uniform": 0.5 * (np.abs(u) <= 1)}[kernel] / h
    R = np.vander(x - c, p + 1, increasing=True)
    G = (R * k[:, None]).T @ R
    L = np.linalg.solve(G, (R * k[:, None]).T)  # (p+1) x n: beta = L y
    return L[deriv] * np.prod(np.arange(1, deriv + 1))


def _oracle_weights(x, c, h, p, deriv, kernel="triangular"):
    a = np.zeros(x.size)
    left, right = x < c, x >= c
    a[left] = -_wls_side(x[left], None, c, h, p, deriv, kernel)
    a[right] = _wls_side(x[right], None, c, h, p, deriv, kernel)
    return a


@pytest.mark.parametrize("case", ["plain", "ties", "far", "few_left", "clusters"])
@pytest.mark.parametrize("p,deriv", [(1, 0), (2, 0), (2, 1)])
def test_numpy_oracle_weights(case, p, deriv):
    g = np.random.default_rng(11)
    n = 400
    x = g.uniform(-1, 1, n)
    c, h = 0.0, 0.6
    kw = {}
    if case == "ties":
        x = np.round(x * 15) / 15
    elif case == "far":  # x far from 0: cutoff at 1e6, differences of order 1
        x = x + 1e6
        c = 1e6
    elif case == "few_left":  # 6 points on the left within h
        x = np.r_[g.uniform(-0.5, -0.01, 6), g.uniform(0, 1, n)]
    elif case == "clusters":
        kw["groups"] = g.integers(0, 30, x.size)
    y = np.sin(2 * (x - c)) + (x >= c) + g.normal(0, 0.2, x.size)
    res = _ours(y, x, c=c, h=h, p=p, deriv=deriv, b=h * 1.5, **kw)
    a_ref = _oracle_weights(x, c, h, p, deriv)
    a = res.attention_weights().weights
    # Bound: both solve the same (p+1)-dimensional normal equations; cond(G) <= ~1e5 here, so
    # the weights agree to cond * eps relative to their largest entry.
    scale = np.max(np.abs(a_ref))
    np.testing.assert_allclose(a, a_ref, rtol=0, atol=1e-9 * scale)
    np.testing.assert_allclose(res.coef, a_ref @ y, rtol=1e-9, atol=1e-9 * scale)
    eff = res.attention_weights().effective_n
    np.testing.assert_allclose(eff["left"], 1 / np.sum(a_ref[x < c] ** 2), rtol=1e-9)
    np.testing.assert_allclose(eff["right"], 1 / np.sum(a_ref[x >= c] ** 2), rtol=1e-9)


def test_covariate_weights_reproduce_estimate():
    y, x, _ = _sim(n=1500, seed=12)
    z = np.random.default_rng(13).normal(size=(x.size, 2))
    y = y + z @ [0.5, 0.25]
    res = _ours(y, x, covs=z, h=0.5)
    a = res.attention_weights().weights
    np.testing.assert_allclose(a @ y, res.coef, rtol=1e-10)


# ---------------------------------------------------------------- bad input
def test_bad_input():
    y, x, _ = _sim(n=500, seed=14)
    with pytest.raises(ValueError, match="level is a fraction"):
        rd.rdrobust(y, x, level=95)
    with pytest.raises(ValueError, match="c: the cutoff"):
        rd.rdrobust(y, x, c=5.0)
    with pytest.raises(ValueError, match="q: must be an integer greater than p"):
        rd.rdrobust(y, x, p=2, q=2)
    with pytest.raises(ValueError, match="weights: negative"):
        rd.rdrobust(y, x, weights=np.r_[-1.0, np.ones(x.size - 1)])
    xi = x.copy()
    xi[3] = np.inf
    with pytest.raises(ValueError, match="x: infinite value at row 4"):
        rd.rdrobust(y, xi)
    with pytest.raises(ValueError, match="collinear with the running variable"):
        rd.rdrobust(y, x, covs=np.c_[2 * x + 1])
    z = np.random.default_rng(15).normal(size=(x.size, 1))
    with pytest.warns(UserWarning, match="dropped collinear covariates: b"):
        res = rd.rdrobust(y, x, covs={"a": z[:, 0], "b": 2 * z[:, 0]} and
                          __import__("pandas").DataFrame({"a": z[:, 0], "b": 2 * z[:, 0]}))
    assert list(res.coef_covs.index) == ["a"]
    with pytest.raises(ValueError, match="fuzzy: the treatment has no variation"):
        rd.rdrobust(y, x, fuzzy=np.ones(x.size))
    with pytest.raises(ValueError, match="kernel"):
        rd.rdrobust(y, x, kernel="gaussian")
    with pytest.raises(ValueError, match="bwselect"):
        rd.rdrobust(y, x, bwselect="ik")
    with pytest.raises(ValueError, match="cluster-robust variance and needs groups="):
        rd.rdrobust(y, x, vce="cr2")
    with pytest.raises(ValueError, match="distinct values on the"):
        rd.rdrobust(y, np.where(x < 0, -0.5, x))
    with pytest.raises(ValueError, match="y: has 3 rows"):
        rd.rdrobust(y[:3], x)


def test_summary_prints(capsys, senate):
    res = rd.rdrobust(senate.vote, senate.margin)
    text = res.summary()
    assert "Sharp RD estimates using local polynomial regression." in text
    assert "Conventional" in text and "Robust" in text and "17.754" in text
    assert capsys.readouterr().out.strip() == text.strip()


def test_q_above_p_plus_one(senate):
    # With fixed bandwidths the estimator with q = p + 2 is rdrobust's exactly.
    _agree(_ours(senate.vote, senate.margin, p=1, q=3, h=15, b=25),
           _theirs(senate.vote, senate.margin, p=1, q=3, h=15, b=25))
    # The selected h uses coefficient p + 1 of the order-q bias fit (the paper and rdrobust's
    # R code); rdrobust 2.1.1's Python takes the last one (q), so its h differs while b, whose
    # bias fit has order q + 1 = (q) + 1, agrees.
    ours = _ours(senate.vote, senate.margin, p=1, q=3)
    theirs = _theirs(senate.vote, senate.margin, p=1, q=3)
    np.testing.assert_allclose(ours.bandwidths["b_left"], theirs.bws.loc["b", "left"],
                               rtol=RTOL)
    assert abs(ours.bandwidths["h_left"] / theirs.bws.loc["h", "left"] - 1) > 1e-3


def test_monte_carlo_robust_coverage():
    # Lee (2008) design of CCT (2014, section 5, model 1): jump 0.04, x = 2 Beta(2, 4) - 1,
    # n = 1000, 500 seeded replications, mserd + nn. Binomial sd of a 95% coverage over 500
    # draws is 0.0097: robust intervals must cover within 0.95 +- 3 sd; conventional intervals
    # at the MSE-optimal h are centred off by the bias and undercover (CCT 2014, Table 1).
    g = np.random.default_rng(2024)
    hits = np.zeros(2)
    for _ in range(500):
        x = 2 * g.beta(2, 4, 1000) - 1
        m = np.where(x < 0,
                     0.48 + 1.27 * x + 7.18 * x ** 2 + 20.21 * x ** 3 + 21.54 * x ** 4
                     + 7.33 * x ** 5,
                     0.52 + 0.84 * x - 3.00 * x ** 2 + 7.99 * x ** 3 - 9.01 * x ** 4
                     + 3.56 * x ** 5)
        y = m + g.normal(0, 0.1295, x.size)
        t = _ours(y, x).table
        for i, k in enumerate(("conventional", "robust")):
            hits[i] += t.loc[k, "ci_low"] <= 0.04 <= t.loc[k, "ci_high"]
    conventional, robust = hits / 500
    assert 0.95 - 3 * 0.0097 <= robust <= 0.95 + 3 * 0.0097
    assert conventional < 0.92


def test_plot_rd_weights():
    import matplotlib
    matplotlib.use("Agg")
    import attnreg.plot
    y, x, _ = _sim(n=400, seed=16)
    res = _ours(y, x, h=0.4)
    ax = attnreg.plot.rd_weights(res)
    lines = ax.get_lines()[:2]
    a = res.attention_weights().weights
    np.testing.assert_allclose(np.sort(np.r_[lines[0].get_ydata(), lines[1].get_ydata()]),
                               np.sort(a[a != 0]))
    with pytest.raises(ValueError, match="result: pass the result"):
        attnreg.plot.rd_weights(object())


def test_subset_equals_the_selected_rows(senate):
    # subset= (mask or positions) gives the fit on those rows; the attention weights cover all
    # input rows, 0 outside the subset; without subset the weights are the core's own vector.
    y, x = senate.vote.to_numpy(), senate.margin.to_numpy()
    mask = np.arange(len(x)) % 3 != 0
    sub = _ours(y, x, subset=mask)
    direct = _ours(y[mask], x[mask])
    np.testing.assert_array_equal(sub.table.to_numpy(), direct.table.to_numpy())
    a = sub.attention_weights().weights
    assert a.shape == x.shape and np.all(a[~mask] == 0)
    np.testing.assert_array_equal(a[mask], direct.attention_weights().weights)
    pos = _ours(y, x, subset=np.flatnonzero(mask))
    np.testing.assert_array_equal(pos.attention_weights().weights, a)
    full = _ours(y, x)
    ok = ~np.isnan(y)
    assert full.attention_weights().weights.shape == x.shape
    w = full.attention_weights().weights[ok]
    # Two summation orders of the same terms: |difference| <= n eps sum |a_i y_i|.
    bound = ok.sum() * np.finfo(float).eps * np.sum(np.abs(w * y[ok]))
    assert abs(w @ y[ok] - full.table.loc["conventional", "coef"]) <= bound
