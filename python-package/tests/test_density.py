"""attnreg.density against statsmodels' KDEMultivariate / KDEMultivariateConditional (which
implement np's estimators, cv_ml and cv_ls) and against direct numpy oracles."""
import math

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize
from statsmodels.nonparametric.kernel_density import KDEMultivariate, KDEMultivariateConditional

import attnreg
from attnreg import ConditionalDensity, ConditionalDistribution, ConditionalQuantile, KernelDensity


def mixed(n, types, seed):
    rng = np.random.default_rng(seed)
    cols = []
    for t in types:
        if t == "c":
            cols.append(rng.normal(2.0, 1.5, n))
        elif t == "u":
            cols.append(rng.integers(0, 3, n).astype(float))
        else:
            cols.append(rng.integers(1, 5, n).astype(float))
    return np.column_stack(cols)


def given_bw(types, seed):
    rng = np.random.default_rng(seed)
    return np.array([0.5 + rng.uniform() if t == "c" else rng.uniform(0.05, 0.6) for t in types])


@pytest.mark.parametrize("types,n,seed", [("c", 40, 1), ("cc", 35, 2), ("cu", 50, 3),
                                          ("co", 45, 4), ("cuo", 30, 5)])
def test_density_equals_statsmodels_at_given_bandwidths(types, n, seed):
    X = mixed(n, types, seed)
    bw = given_bw(types, seed)
    Xq = X[::3] + np.where(np.array(list(types)) == "c", 0.1, 0.0)
    # statsmodels' ordered kernel is Wang-van Ryzin's (attnreg's default is np's normalised
    # Li-Racine kernel)
    ours = KernelDensity(bandwidth=bw, var_types=types,
                         ordered_kernel="wang_van_ryzin").fit(X).density(Xq)
    sm = KDEMultivariate(X, types, bw=bw)
    np.testing.assert_allclose(ours, sm.pdf(Xq), rtol=1e-12)
    # Objectives: statsmodels' loo_likelihood omits the 1/(n-1) of f_{-i}.
    for method, ref in [("cv_ml", sm.loo_likelihood(bw, func=np.log) + n * math.log(n - 1)),
                        ("cv_ls", sm.imse(bw))]:
        v, _ = attnreg._core.density_objective("density", np.asfortranarray(X), types, None, "",
                                               method=method, bandwidth=bw)
        assert v == pytest.approx(ref, rel=1e-12)


@pytest.mark.parametrize("xt,yt,n,seed", [("c", "c", 40, 11), ("o", "c", 45, 12), ("cu", "c", 36, 13),
                                          ("c", "o", 40, 14)])
def test_conditional_equals_statsmodels_at_given_bandwidths(xt, yt, n, seed):
    X = mixed(n, xt, seed)
    Y = mixed(n, yt, seed + 100)
    if yt == "c":
        Y[:, 0] += 0.5 * X[:, 0]
    bx, by = given_bw(xt, seed), given_bw(yt, seed + 1)
    sm = KDEMultivariateConditional(Y, X, yt, xt, bw=np.r_[by, bx])
    Xq, Yq = X[::4], Y[::4] + (0.2 if yt == "c" else 0.0)
    # statsmodels' ordered kernel, X's and y's
    wr = dict(ordered_kernel="wang_van_ryzin", y_ordered_kernel="wang_van_ryzin")
    cd = ConditionalDensity(bandwidth=np.r_[bx, by], var_types=xt, y_types=yt, **wr).fit(X, Y)
    np.testing.assert_allclose(cd.density(Xq, Yq), sm.pdf(Yq, Xq), rtol=1e-12)
    cf = ConditionalDistribution(bandwidth=np.r_[bx, by], var_types=xt, y_types=yt,
                                 **wr).fit(X, Y)
    np.testing.assert_allclose(cf.cdf(Xq, Yq), sm.cdf(Yq, Xq), rtol=1e-12, atol=1e-15)
    args = ("conditional_density", np.asfortranarray(X), xt, np.asfortranarray(Y), yt)
    v, _ = attnreg._core.density_objective(*args, method="cv_ml", bandwidth=np.r_[bx, by])
    assert v == pytest.approx(sm.loo_likelihood(np.r_[by, bx], func=np.log), rel=1e-12)
    if yt == "c":  # statsmodels' ordered convolution kernel sums over the leave-one-out levels
        v, _ = attnreg._core.density_objective(*args, method="cv_ls", bandwidth=np.r_[bx, by])
        assert v == pytest.approx(sm.imse(np.r_[by, bx]), rel=1e-12)


def polish(fun, x0):
    """Minimise statsmodels' own objective tightly from x0 (in log-bandwidth)."""
    r = minimize(lambda t: fun(np.exp(t)), np.log(x0), method="Nelder-Mead",
                 options=dict(xatol=1e-10, fatol=1e-14, maxiter=4000))
    return np.exp(r.x), r.fun


def test_cv_ml_and_cv_ls_bandwidths_equal_statsmodels_optimum():
    X = mixed(120, "cc", 21)
    for method, sm_fun in [("cv_ml", lambda sm: (lambda b: sm.loo_likelihood(b, func=np.log))),
                           ("cv_ls", lambda sm: sm.imse)]:
        kd = KernelDensity(bandwidth=method).fit(X)
        sm = KDEMultivariate(X, "cc", bw=method)
        f = sm_fun(sm)
        b_sm, f_sm = polish(f, sm.bw)
        assert f(kd._bw) <= f_sm + 1e-10 * abs(f_sm)
        np.testing.assert_allclose(kd._bw, b_sm, rtol=1e-4)


def test_conditional_bandwidths_equal_statsmodels_optimum():
    rng = np.random.default_rng(5)
    n = 70
    x = rng.normal(size=n)
    y = 1 + x + 0.5 * rng.normal(size=n)
    cd = ConditionalDensity(bandwidth="cv_ml").fit(x, y)
    sm = KDEMultivariateConditional(y, x, "c", "c", bw="cv_ml")
    f = lambda b: sm.loo_likelihood(b, func=np.log)  # noqa: E731  (statsmodels order: y, x)
    b_sm, f_sm = polish(f, sm.bw)
    np.testing.assert_allclose(cd._bw[::-1], b_sm, rtol=1e-4)
    cl = ConditionalDensity(bandwidth="cv_ls").fit(x[:40], y[:40])
    sl = KDEMultivariateConditional(y[:40], x[:40], "c", "c", bw=cl._bw[::-1])
    b2, f2 = polish(sl.imse, cl._bw[::-1])
    assert sl.imse(cl._bw[::-1]) <= f2 + 1e-10 * abs(f2)
    np.testing.assert_allclose(cl._bw[::-1], b2, rtol=1e-4)


def oracle_cdist_cv(x, y, hx, hy):
    from scipy.stats import norm

    n = len(x)
    Kx = norm.pdf((x[:, None] - x[None, :]) / hx)
    np.fill_diagonal(Kx, 0.0)
    G = norm.cdf((y[None, :, None] - y[None, None, :]) / hy)[0]  # G[j, k] = Phi((y_j - y_k)/h)
    F = (Kx @ G.T) / Kx.sum(1, keepdims=True)  # F[l, j] = F_{-l}(y_j | x_l)
    ind = (y[:, None] <= y[None, :]).astype(float)
    return ((ind - F) ** 2).sum() / n**2


def test_distribution_cv_ls_oracle_and_minimum():
    rng = np.random.default_rng(7)
    x = rng.normal(size=60)
    y = x + rng.normal(size=60)
    cf = ConditionalDistribution().fit(x, y)
    assert cf.objective_ == pytest.approx(oracle_cdist_cv(x, y, *cf._bw), rel=1e-12)
    for j in range(2):
        for s in (0.98, 1.02):
            b = cf._bw.copy()
            b[j] *= s
            assert oracle_cdist_cv(x, y, *b) >= cf.objective_


def test_quantile_inverts_cdf_and_tau_checked():
    rng = np.random.default_rng(8)
    x = rng.normal(size=80)
    y = x + rng.normal(size=80)
    q = ConditionalQuantile(bandwidth=[0.5, 0.4]).fit(x, y)
    xs = np.array([-1.0, 0.0, 1.5])
    Q = q.quantile(xs, [0.1, 0.5, 0.9])
    assert Q.shape == (3, 3)
    assert np.all(np.diff(Q, axis=1) > 0)
    for k, tau in enumerate([0.1, 0.5, 0.9]):
        F = q.cdf(xs, Q[:, k])
        assert np.all(F >= tau) and np.all(F - tau < 1e-9)
    for bad in (0.0, 1.0, -0.1, 1.2, float("nan")):
        with pytest.raises(ValueError, match="^tau:"):
            q.quantile(xs, bad)


def test_bad_input_names_argument():
    X = mixed(30, "co", 9)
    with pytest.raises(ValueError, match="normal_reference needs at least one continuous column"):
        KernelDensity(bandwidth="normal_reference", var_types="o").fit(X[:, 1])
    Xn = X.copy()
    Xn[4, 0] = np.nan
    with pytest.raises(ValueError, match="^X:"):
        KernelDensity(var_types="co").fit(Xn)
    with pytest.raises(ValueError, match="^y:"):
        ConditionalDensity().fit(X[:, 0], np.r_[np.nan, X[1:, 0]])
    kd = KernelDensity(bandwidth=[1.0, 0.3], var_types="co").fit(X)
    with pytest.raises(ValueError, match="^X_new:"):
        kd.density(Xn)
    with pytest.raises(ValueError, match="^bandwidth"):
        KernelDensity(bandwidth="cv_xx").fit(X)
    with pytest.raises(ValueError, match=r"^bandwidth\[2\]"):
        KernelDensity(bandwidth=[1.0, 1.5], var_types="co").fit(X)
    with pytest.raises(ValueError, match="^bandwidth"):
        ConditionalDistribution(bandwidth="cv_ml").fit(X[:, 0], X[:, 1])


def test_dataframes_categoricals_and_names():
    rng = np.random.default_rng(3)
    n = 90
    df = pd.DataFrame({
        "g": rng.normal(size=n),
        "year": pd.Categorical(rng.choice([1990, 1991, 1992], n), ordered=True),
        "region": pd.Categorical(rng.choice(["a", "b", "c"], n)),
    })
    kd = KernelDensity(bandwidth="normal_reference").fit(df)
    assert kd.var_types_ == "cou"
    assert list(kd.bandwidth_.index) == ["g", "year", "region"]
    # Same numbers as codes with explicit types.
    codes = np.column_stack([df.g, df.year.cat.codes, df.region.cat.codes]).astype(float)
    ref = KernelDensity(bandwidth=kd._bw, var_types="cou").fit(codes)
    np.testing.assert_allclose(kd.density(df.iloc[:5]), ref.density(codes[:5]), rtol=1e-15)
    cd = ConditionalDensity(bandwidth="cv_ml").fit(df[["year"]], df["g"])
    assert list(cd.bandwidth_.index) == ["year", "g"]
    assert np.isfinite(cd.objective_)
    with pytest.raises(ValueError, match="never seen in fit"):
        kd.density(df.assign(region=pd.Categorical(["z"] * n)))


def test_integrates_to_one_and_normal_reference():
    rng = np.random.default_rng(4)
    x = rng.normal(size=200)
    kd = KernelDensity(bandwidth="normal_reference").fit(x)
    s = min(x.std(ddof=1), (np.quantile(x, 0.75) - np.quantile(x, 0.25)) / 1.348979500392163)
    assert kd._bw[0] == pytest.approx((4 / 3) ** 0.2 * s * 200 ** (-0.2), rel=1e-12)
    g = np.linspace(x.min() - 6, x.max() + 6, 20001)
    assert np.trapezoid(kd.density(g), g) == pytest.approx(1.0, abs=1e-8)
    assert kd.score(x) == pytest.approx(np.log(kd.density(x)).sum())


def test_np_published_values():
    """R np's numbers as hard-coded in statsmodels' test suite (Italy$gdp[1:50],
    ordered(Italy$year[1:50]), oecdpanel$growth[1:50]; the R code is quoted there)."""
    from statsmodels.nonparametric.tests.test_kernel_density import KDETestBase

    b = KDETestBase()
    b.setup_method()
    gdp, year, growth = (np.asarray(v, float) for v in (b.Italy_gdp, b.Italy_year, b.growth))
    # npcdensbw(gdp ~ ordered(year), bwmethod = "cv.ls"): bws 0.2317373 (year), 1.6448 (gdp),
    # from an np of statsmodels' time whose ordered kernel was Wang-van Ryzin's (np 0.70-4's
    # default on conditioning variables, and attnreg's, is Li-Racine: tests/fixtures/np).
    cd = ConditionalDensity("cv_ls", var_types="o", ordered_kernel="wang_van_ryzin").fit(year, gdp)
    np.testing.assert_allclose(cd._bw, [0.2317373, 1.6448], rtol=2e-4)
    np.testing.assert_allclose(cd.density(year[:5], gdp[:5]),
                               [0.08469226, 0.01737731, 0.05679909, 0.09744726, 0.15086674],
                               rtol=0, atol=1e-8)  # 8 decimals printed; np stops its search within 2e-6 of h
    # npcdensbw(gdp ~ growth, bwmethod = "cv.ml"): 0.04510836 (growth), 0.5341164 (gdp).
    c2 = ConditionalDensity("cv_ml").fit(growth, gdp)
    np.testing.assert_allclose(c2._bw, [0.04510836, 0.5341164], rtol=1e-6)
    # normal-reference bandwidths and npcdist at them.
    c3 = ConditionalDistribution("normal_reference").fit(growth, gdp)
    np.testing.assert_allclose(c3._bw, [0.01535401, 1.283532], rtol=1e-6)
    np.testing.assert_allclose(c3.cdf(growth[:5], gdp[:5]),
                               [0.81304920, 0.95046942, 0.86878727, 0.71961748, 0.38685423],
                               rtol=0, atol=5e-8)
    # npudensbw(~ growth + gdp, bwmethod = "cv.ls"), fitted densities: np stops its search on
    # a flat stretch of the objective (the bandwidths that reproduce np's five densities to
    # 4e-8 differ from ours by 2.5e-5 in h_gdp and have a higher cv_ls), so the densities
    # agree to 2e-5.
    from scipy.optimize import least_squares

    X = np.column_stack([growth, gdp])
    R = np.array([1.6202284, 0.7914245, 1.6084174, 2.4987204, 1.3705258])
    kd = KernelDensity("cv_ls").fit(X)
    np.testing.assert_allclose(kd.density(X[:5]), R, rtol=2e-5)
    fit = least_squares(lambda t: KernelDensity(bandwidth=np.exp(t)).fit(X).density(X[:5]) - R,
                        np.log(kd._bw), xtol=1e-14, ftol=1e-14)
    assert np.abs(fit.fun).max() < 1e-7
    v_np, _ = attnreg._core.density_objective("density", np.asfortranarray(X), "cc", None, "",
                                              method="cv_ls", bandwidth=np.exp(fit.x))
    assert kd.objective_ <= v_np


@pytest.mark.parametrize("kind", ["conditional_density", "conditional_distribution"])
def test_core_objective_reads_a_c_order_y_of_two_columns(kind):
    # A C-order y of two columns is copied to Fortran order by the binding; the core must read
    # that copy's values, not a freed buffer: the same objective as the Fortran-order y, every
    # time (it used to change from call to call).
    rng = np.random.default_rng(11)
    X = np.asfortranarray(rng.normal(size=(120, 1)))
    Y = rng.normal(size=(120, 2))
    bw = np.array([0.5, 0.4, 0.45])
    want = attnreg._core.density_objective(kind, X, "c", np.asfortranarray(Y), "cc",
                                           method="cv_ls", bandwidth=bw)
    for _ in range(3):
        got = attnreg._core.density_objective(kind, X, "c", np.ascontiguousarray(Y), "cc",
                                              method="cv_ls", bandwidth=bw)
        junk = [np.full((120, 2), 1e6) for _ in range(20)]  # reuse freed memory, if any
        assert got[0] == want[0]
        np.testing.assert_array_equal(got[1], want[1])
        del junk
