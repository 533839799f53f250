"""The Li-Racine kernels on the conditioning (X) columns of conditional densities,
distributions and quantiles (R np's npcdensbw / npcdistbw / npqreg defaults), against direct
numpy oracles of the ratio estimators; refused where the kernel must sum to one (y's columns,
every column of an unconditional density)."""
import pathlib

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from attnreg import ConditionalDensity, ConditionalDistribution, ConditionalQuantile, KernelDensity

ITALY = pathlib.Path(__file__).resolve().parents[2] / "data" / "Italy.csv"


def italy():
    try:
        d = pd.read_csv(ITALY)
    except OSError:
        pytest.skip("Italy.csv not available")
    return d["year"].to_numpy(float), d["gdp"].to_numpy(float)


def li_racine_ordered(x, xi, lam):
    return lam ** np.abs(x[:, None] - xi[None, :])


def li_racine_unordered(x, xi, lam):
    return np.where(x[:, None] == xi[None, :], 1.0, lam)


def oracle_cdf(xq, yq, x, y, lam, h, kern=li_racine_ordered):
    K = kern(xq, x, lam)
    G = norm.cdf((yq[:, None] - y[None, :]) / h)
    return (K * G).sum(1) / K.sum(1)


def oracle_cdens(xq, yq, x, y, lam, h, kern=li_racine_ordered):
    K = kern(xq, x, lam)
    g = norm.pdf((yq[:, None] - y[None, :]) / h) / h
    return (K * g).sum(1) / K.sum(1)


def oracle_cdist_cv(x, y, lam, h):
    n = len(x)
    Kx = li_racine_ordered(x, x, lam)
    np.fill_diagonal(Kx, 0.0)
    G = norm.cdf((y[:, None] - y[None, :]) / h)  # G[j, k] = Phi((y_j - y_k) / h)
    F = (Kx @ G.T) / Kx.sum(1, keepdims=True)  # F[l, j] = F_{-l}(y_j | x_l)
    ind = (y[:, None] <= y[None, :]).astype(float)
    return ((ind - F) ** 2).sum() / n**2


@pytest.mark.parametrize("lam,h", [(0.3, 1.2), (0.05, 0.4), (0.9, 3.0), (1.0, 1.0)])
def test_italy_cdf_and_quantile_equal_oracle_at_given_bandwidths(lam, h):
    year, gdp = italy()
    cf = ConditionalDistribution(bandwidth=[lam, h], var_types="o",
                                 ordered_kernel="li_racine").fit(year, gdp)
    rng = np.random.default_rng(1)
    xq = rng.choice(np.unique(year), 25)
    yq = rng.uniform(gdp.min() - 2, gdp.max() + 2, 25)
    ref = oracle_cdf(xq, yq, year, gdp, lam, h)
    # a ratio of sums of positive terms: relative error a few n * eps
    np.testing.assert_allclose(cf.cdf(xq, yq), ref, rtol=1e-12, atol=1e-15)
    q = ConditionalQuantile(bandwidth=[lam, h], var_types="o",
                            ordered_kernel="li_racine").fit(year, gdp)
    xs = np.array([1951.0, 1970.0, 1998.0])
    for tau in (0.1, 0.5, 0.9):
        Q = q.quantile(xs, tau)
        F = oracle_cdf(xs, Q, year, gdp, lam, h)
        # the oracle CDF at the returned quantile is tau (to the root finder's accuracy)
        np.testing.assert_allclose(F, tau, atol=1e-9)


def test_italy_cv_ls_objective_equals_oracle_and_is_minimal():
    year, gdp = italy()
    keep = np.isin(year, np.unique(year)[::6])  # 8 years, 168 rows: a quick search
    x, y = year[keep], gdp[keep]
    cf = ConditionalDistribution(var_types="o", ordered_kernel="li_racine").fit(x, y)
    lam, h = cf._bw
    assert 0.0 <= lam <= 1.0 and h > 0
    v = oracle_cdist_cv(x, y, lam, h)
    assert cf.objective_ == pytest.approx(v, rel=1e-11)
    for j, s in ((0, 0.95), (0, 1.05), (1, 0.98), (1, 1.02)):
        b = np.array([lam, h])
        b[j] = min(b[j] * s, 1.0) if j == 0 else b[j] * s
        if np.allclose(b, [lam, h]):
            continue
        assert oracle_cdist_cv(x, y, *b) >= cf.objective_ * (1 - 1e-12)
    # the Li-Racine kernel on X differs from Wang-van Ryzin at the same lambda (not ignored)
    wvr = ConditionalDistribution(bandwidth=[0.3, 1.0], var_types="o",
                                  ordered_kernel="wang_van_ryzin").fit(year, gdp)
    lr = ConditionalDistribution(bandwidth=[0.3, 1.0], var_types="o",
                                 ordered_kernel="li_racine").fit(year, gdp)
    q = np.arange(0, len(year), 37)
    assert np.max(np.abs(wvr.cdf(year[q], gdp[q]) - lr.cdf(year[q], gdp[q]))) > 1e-3


@pytest.mark.parametrize("kernel,oracle_kern", [("ordered", li_racine_ordered),
                                                ("unordered", li_racine_unordered)])
def test_conditional_density_li_racine_on_x_equals_oracle(kernel, oracle_kern):
    rng = np.random.default_rng(5)
    n = 60
    x = rng.integers(0, 4, n).astype(float)
    y = x + rng.normal(size=n)
    vt = "o" if kernel == "ordered" else "u"
    kw = {f"{kernel}_kernel": "li_racine"}
    cd = ConditionalDensity(bandwidth=[0.4, 0.7], var_types=vt, **kw).fit(x, y)
    xq, yq = rng.integers(0, 4, 15).astype(float), rng.normal(1.5, 2, 15)
    np.testing.assert_allclose(cd.density(xq, yq), oracle_cdens(xq, yq, x, y, 0.4, 0.7,
                                                                oracle_kern), rtol=1e-12)
    # a selected bandwidth (cv_ml) stays in the kernel's range
    sel = ConditionalDensity(var_types=vt, **kw).fit(x, y)
    assert 0.0 <= sel._bw[0] <= 1.0 and sel._bw[1] > 0


def test_li_racine_refused_where_a_kernel_must_sum_to_one():
    rng = np.random.default_rng(2)
    x = rng.normal(size=40)
    yo = rng.integers(0, 3, 40).astype(float)
    with pytest.raises(ValueError, match="^y_ordered_kernel: the response y's kernel must sum "
                                         "to one over the integers.*accepted on X's"):
        ConditionalDensity(bandwidth=[1.0, 0.3], y_types="o",
                           y_ordered_kernel="li_racine").fit(x, yo)
    with pytest.raises(ValueError, match="^y_ordered_kernel: the response y's kernel"):
        ConditionalDistribution(bandwidth=[1.0, 0.3], y_types="o",
                                y_ordered_kernel="li_racine").fit(x, yo)
    with pytest.raises(ValueError, match="^unordered_kernel: the response y's kernel"):
        ConditionalDensity(bandwidth=[1.0, 0.3], y_types="u",
                           unordered_kernel="li_racine").fit(x, yo)
    with pytest.raises(ValueError, match="^ordered_kernel: an unconditional density needs"):
        KernelDensity(bandwidth=[1.0, 0.3], var_types="co",
                      ordered_kernel="li_racine").fit(np.column_stack([x, yo]))
    with pytest.raises(ValueError, match="^y_ordered_kernel:"):
        ConditionalDistribution(y_ordered_kernel="liracine_x").fit(x, yo)


def wvr(y, yi, lam):
    d = np.abs(y[:, None] - yi[None, :])
    return np.where(d == 0, 1 - lam, 0.5 * (1 - lam) * lam ** d)


def test_ordered_x_li_racine_with_ordered_y_wang_van_ryzin():
    # Li-Racine on X's ordered columns (np's oxkertype default), Wang-van Ryzin on y's (the
    # default before y_ordered_kernel="li_racine_normalized"; test_density_li_racine_normalized.py
    # has the new default)
    rng = np.random.default_rng(5)
    n = 60
    x = rng.integers(0, 4, n).astype(float)
    y = np.clip(x + rng.integers(-1, 2, n), 0, 5).astype(float)
    lx, ly = 0.35, 0.2
    # every level present, so the level codes are the values (distances as in the oracle)
    assert np.array_equal(np.unique(x), np.arange(4)) and np.array_equal(np.unique(y), np.arange(5))
    xq = np.array([0.0, 1.0, 3.0, 2.0, 0.0])
    yq = np.array([0.0, 2.0, 3.0, 4.0, 1.0])
    K = li_racine_ordered(xq, x, lx)
    cd = ConditionalDensity(bandwidth=[lx, ly], var_types="o", y_types="o",
                            y_ordered_kernel="wang_van_ryzin").fit(x, y)
    want = (K * wvr(yq, y, ly)).sum(1) / K.sum(1)
    np.testing.assert_allclose(cd.density(xq, yq), want, rtol=1e-13)
    cf = ConditionalDistribution(bandwidth=[lx, ly], var_types="o", y_types="o",
                                 y_ordered_kernel="wang_van_ryzin").fit(x, y)
    levels = np.unique(y)
    G = np.stack([sum(wvr(np.array([l]), y, ly)[0] for l in levels if l <= v) for v in yq])
    np.testing.assert_allclose(cf.cdf(xq, yq), (K * G).sum(1) / K.sum(1), rtol=1e-13)
    # explicit Wang-van Ryzin on X gives the old default's numbers, a different estimate
    old = ConditionalDensity(bandwidth=[lx, ly], var_types="o", y_types="o",
                             ordered_kernel="wang_van_ryzin",
                             y_ordered_kernel="wang_van_ryzin").fit(x, y)
    Kw = wvr(xq, x, lx)
    np.testing.assert_allclose(old.density(xq, yq), (Kw * wvr(yq, y, ly)).sum(1) / Kw.sum(1),
                               rtol=1e-13)
