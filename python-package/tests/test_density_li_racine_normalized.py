"""The normalised Li-Racine ordered kernel ``lambda^|d| (1 - lambda) / (1 + lambda)``
(``"li_racine_normalized"``, R np's ``"nliracine"``) on the columns a density is in, against
direct numpy oracles: densities, conditional densities and distributions, and the
cross-validation objectives with their gradients, on random ordered data with unobserved codes
between the levels, one level only, and evaluation at codes never seen in training.

The kernel sums to one over all integers, so the oracles sum over a wide integer range
[lo - M, hi + M]; what lies beyond is below lambda^M / (1 - lambda) <= 1e-16 for the lambdas
used (M = 400). Tolerances: sums of a few hundred positive terms and ratios of them, relative
1e-12 (about n eps); the gradients against central differences of the oracle with step 1e-6,
whose truncation error is O(step^2) relative: 1e-6.
"""
import numpy as np
import pytest
from scipy.stats import norm

from attnreg import (ConditionalDensity, ConditionalDistribution, KernelDensity,
                     NadarayaWatson, _core)

M = 400


def nlr(a, b, lam):
    """The kernel between codes a (rows) and b (columns)."""
    d = np.abs(np.asarray(a, float)[:, None] - np.asarray(b, float)[None, :])
    return lam ** d * (1 - lam) / (1 + lam)


def support(*cols):
    lo = np.floor(min(np.min(c) for c in cols))
    hi = np.ceil(max(np.max(c) for c in cols))
    return np.arange(lo - M, hi + M + 1, dtype=float)


def random_ordered(rng, n, levels):
    return rng.choice(np.asarray(levels, float), n)


@pytest.mark.parametrize("seed,levels,lam", [(1, [0, 1, 3, 7], 0.3), (2, [2, 5, 6, 12], 0.7),
                                             (3, [-3, 0, 4], 0.05), (4, [5], 0.4)])
def test_density_of_an_ordered_column_equals_oracle_everywhere_on_the_integers(seed, levels, lam):
    rng = np.random.default_rng(seed)
    x = random_ordered(rng, 40, levels)
    kd = KernelDensity(bandwidth=[lam], var_types="o").fit(x)
    assert kd.ordered_kernel == "li_racine_normalized"  # the default: np's npudens
    z = np.arange(min(levels) - 4, max(levels) + 5, dtype=float)  # unseen codes included
    ref = nlr(z, x, lam).mean(axis=1)
    np.testing.assert_allclose(kd.density(z), ref, rtol=1e-12, atol=0)
    assert np.all(kd.density(z) > 0)
    # a probability mass function on the integers
    zz = support(x)
    assert abs(kd.density(zz).sum() - 1.0) < 1e-12


def test_one_level_only_and_a_mixed_density():
    x = np.full(12, 3.0)
    kd = KernelDensity(bandwidth=[0.25], var_types="o").fit(x)
    np.testing.assert_allclose(kd.density(np.array([3.0, 4.0, 1.0])),
                               0.6 * np.array([1.0, 0.25, 0.0625]), rtol=1e-14)
    with pytest.raises(ValueError, match="single level"):
        KernelDensity(bandwidth="cv_ml", var_types="o").fit(x)
    rng = np.random.default_rng(7)
    X = np.column_stack([random_ordered(rng, 60, [0, 2, 3, 8]), rng.normal(size=60)])
    kd = KernelDensity(bandwidth=[0.4, 0.5], var_types="oc").fit(X)
    Q = np.column_stack([np.arange(-1, 10, dtype=float), np.linspace(-2, 2, 11)])
    ref = (nlr(Q[:, 0], X[:, 0], 0.4) * norm.pdf((Q[:, 1:] - X[:, 1]) / 0.5) / 0.5).mean(axis=1)
    np.testing.assert_allclose(kd.density(Q), ref, rtol=1e-12)


def oracle_density_cv(x, lam, method):
    n = len(x)
    K = nlr(x, x, lam)
    loo = (K.sum(1) - np.diag(K)) / (n - 1)
    if method == "cv_ml":
        return -np.log(loo).sum()
    z = support(x)
    L = nlr(z, x, lam)  # L[z, i]
    conv = L.T @ L      # sum over all integers z of l(z, X_i) l(z, X_k)
    return conv.sum() / n**2 - 2.0 * loo.sum() / n


@pytest.mark.parametrize("method", ["cv_ml", "cv_ls"])
@pytest.mark.parametrize("seed,levels", [(11, [0, 1, 3, 7]), (12, [1, 2, 3]), (13, [0, 10])])
def test_density_cv_objective_and_gradient_equal_oracle(method, seed, levels):
    rng = np.random.default_rng(seed)
    x = random_ordered(rng, 50, levels)
    X = np.asfortranarray(x[:, None])
    for lam in (0.02, 0.3, 0.8):
        v, g = _core.density_objective("density", X, "o", None, "", method=method,
                                       ordered_kernel="li_racine_normalized",
                                       bandwidth=np.array([lam]))
        ref = oracle_density_cv(x, lam, method)
        assert v == pytest.approx(ref, rel=1e-12)
        s = 1e-6
        fd = (oracle_density_cv(x, lam + s, method) - oracle_density_cv(x, lam - s, method)) / (2 * s)
        assert g[0] == pytest.approx(fd, rel=1e-6, abs=1e-9)
    # the selected lambda minimises the oracle over a grid
    kd = KernelDensity(bandwidth=method, var_types="o").fit(x)
    grid = np.linspace(0.0, 0.999, 1000)
    best = min(oracle_density_cv(x, t, method) for t in grid)
    assert kd.objective_ <= best + 1e-9 * abs(best)


def oracle_cond(xq, yq, x, y, lx, hy, ly, kind):
    """f(y | x) or F(y | x) with x = (ordered, continuous) columns, y ordered."""
    Kx = (lx ** np.abs(xq[:, :1] - x[None, :, 0]) *
          norm.pdf((xq[:, 1:2] - x[None, :, 1]) / hy) / hy)
    if kind == "density":
        Ky = nlr(yq, y, ly)
    else:
        z = support(y, yq)
        Ky = np.array([nlr(z[z <= np.floor(v)], y, ly).sum(0) for v in yq])
    return (Kx * Ky).sum(1) / Kx.sum(1)


@pytest.mark.parametrize("kind", ["density", "distribution"])
def test_conditional_with_an_ordered_response_equals_oracle(kind):
    rng = np.random.default_rng(21)
    n = 70
    x = np.column_stack([random_ordered(rng, n, [1, 2, 4]), rng.normal(size=n)])
    y = np.clip(x[:, 0] + rng.integers(-2, 3, n), 0, 9).astype(float)
    y[y == 3] = 5  # an unobserved code between the levels
    lx, hy, ly = 0.3, 0.8, 0.35
    cls = ConditionalDensity if kind == "density" else ConditionalDistribution
    m = cls(bandwidth=[lx, hy, ly], var_types="oc", y_types="o").fit(x, y)
    assert m.y_ordered_kernel == "li_racine_normalized"  # np's oykertype default
    Xq = np.column_stack([rng.choice([1.0, 2.0, 4.0], 30), rng.normal(size=30)])
    yq = rng.integers(-2, 13, 30).astype(float)  # unseen codes, below and above the data
    if kind == "distribution":
        yq = yq + rng.uniform(0, 0.99, 30)       # F is a step function of y
    got = m.density(Xq, yq) if kind == "density" else m.cdf(Xq, yq)
    np.testing.assert_allclose(got, oracle_cond(Xq, yq, x, y, lx, hy, ly, kind), rtol=1e-12,
                               atol=1e-15)
    if kind == "distribution":
        # F reaches 1 above the data (the mass beyond the largest level is counted)
        assert m.cdf(Xq[:1], np.array([1e3]))[0] == pytest.approx(1.0, abs=1e-15)


def oracle_cdens_ls(x, y, lx, ly):
    """Hall, Racine and Li (2004) cv_ls with one ordered x (li_racine) and one ordered y."""
    n = len(x)
    Kx = lx ** np.abs(x[:, None] - x[None, :])
    np.fill_diagonal(Kx, 0.0)
    Ky = nlr(y, y, ly)
    z = support(y)
    L = nlr(z, y, ly)
    conv = L.T @ L
    mu = Kx.sum(1)
    G = np.einsum("li,lj,ij->l", Kx, Kx, conv)
    f = (Kx * Ky).sum(1)
    return np.mean(G / mu**2 - 2 * f / mu)


def oracle_cdist_ls(x, y, lx, ly):
    n = len(x)
    Kx = lx ** np.abs(x[:, None] - x[None, :])
    np.fill_diagonal(Kx, 0.0)
    z = support(y)
    # G[j, i] = sum over integers z <= y_j of l(z, y_i)
    G = np.array([nlr(z[z <= yj], y, ly).sum(0) for yj in y])
    F = (Kx @ G.T) / Kx.sum(1, keepdims=True)  # F[l, j] = F_{-l}(y_j | x_l)
    ind = (y[:, None] <= y[None, :]).astype(float)
    return ((ind - F) ** 2).sum() / n**2


@pytest.mark.parametrize("kind,oracle", [("conditional_density", oracle_cdens_ls),
                                         ("conditional_distribution", oracle_cdist_ls)])
def test_conditional_cv_ls_with_an_ordered_response_equals_oracle(kind, oracle):
    rng = np.random.default_rng(31)
    n = 45
    x = random_ordered(rng, n, [0, 1, 2, 3])
    y = np.clip(x + rng.integers(-1, 3, n), 0, 6).astype(float)
    y[y == 2] = 6
    X, Y = np.asfortranarray(x[:, None]), np.asfortranarray(y[:, None])
    for lx, ly in ((0.2, 0.3), (0.6, 0.05), (0.9, 0.7)):
        v, g = _core.density_objective(kind, X, "o", Y, "o", method="cv_ls",
                                       ordered_kernel="li_racine",
                                       y_ordered_kernel="li_racine_normalized",
                                       bandwidth=np.array([lx, ly]))
        assert v == pytest.approx(oracle(x, y, lx, ly), rel=1e-12)
        s = 1e-6
        fd = [(oracle(x, y, lx + s, ly) - oracle(x, y, lx - s, ly)) / (2 * s),
              (oracle(x, y, lx, ly + s) - oracle(x, y, lx, ly - s)) / (2 * s)]
        np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-9)


def test_conditional_cv_ml_with_an_ordered_response_equals_oracle():
    rng = np.random.default_rng(41)
    n = 60
    x = random_ordered(rng, n, [0, 1, 2, 5])
    y = np.clip(x + rng.integers(-1, 3, n), 0, 8).astype(float)
    X, Y = np.asfortranarray(x[:, None]), np.asfortranarray(y[:, None])
    lx, ly = 0.4, 0.25
    v, _ = _core.density_objective("conditional_density", X, "o", Y, "o", method="cv_ml",
                                   ordered_kernel="li_racine",
                                   y_ordered_kernel="li_racine_normalized",
                                   bandwidth=np.array([lx, ly]))
    Kx = lx ** np.abs(x[:, None] - x[None, :])
    np.fill_diagonal(Kx, 0.0)
    ref = -np.log((Kx * nlr(y, y, ly)).sum(1) / Kx.sum(1)).sum()
    assert v == pytest.approx(ref, rel=1e-12)


def test_plain_li_racine_refused_on_a_density_column_naming_the_normalised_one():
    rng = np.random.default_rng(2)
    x = rng.normal(size=40)
    yo = rng.integers(0, 3, 40).astype(float)
    with pytest.raises(ValueError, match="^ordered_kernel: an unconditional density needs.*"
                                         "use li_racine_normalized"):
        KernelDensity(bandwidth=[1.0, 0.3], var_types="co",
                      ordered_kernel="li_racine").fit(np.column_stack([x, yo]))
    with pytest.raises(ValueError, match="^y_ordered_kernel: the response y's kernel must sum "
                                         "to one over the integers: use li_racine_normalized"):
        ConditionalDistribution(bandwidth=[1.0, 0.3], y_types="o",
                                y_ordered_kernel="li_racine").fit(x, yo)
    # np's name is accepted, and wang_van_ryzin stays available
    a = KernelDensity(bandwidth=[0.3], var_types="o", ordered_kernel="nliracine").fit(yo)
    b = KernelDensity(bandwidth=[0.3], var_types="o").fit(yo)
    assert np.array_equal(a.density(yo), b.density(yo))
    w = KernelDensity(bandwidth=[0.3], var_types="o", ordered_kernel="wang_van_ryzin").fit(yo)
    assert not np.allclose(w.density(yo), b.density(yo))
    # lambda = 1 smooths the kernel to 0: outside its range, as for wang_van_ryzin
    with pytest.raises(ValueError, match=r"li_racine_normalized kernel needs a bandwidth in \[0, 1\)"):
        KernelDensity(bandwidth=[1.0], var_types="o").fit(yo)
    # unseen codes are fine for this kernel, non-integer codes are not
    with pytest.raises(ValueError, match="X_new"):
        b.density(np.array([0.5]))


def test_regressions_refuse_the_normalised_kernel_naming_li_racine():
    rng = np.random.default_rng(3)
    X = rng.integers(0, 4, (50, 1)).astype(float)
    y = X[:, 0] + rng.normal(size=50)
    with pytest.raises(ValueError, match="^ordered_kernel: li_racine_normalized is for a "
                                         "density's own ordered column.*use li_racine"):
        NadarayaWatson(bandwidth=[0.3], var_types="o",
                       ordered_kernel="li_racine_normalized").fit(X, y)


def test_on_conditioning_columns_the_normalised_kernel_equals_li_racine():
    rng = np.random.default_rng(5)
    x = random_ordered(rng, 60, [0, 1, 2, 3])
    y = x + rng.normal(size=60)
    a = ConditionalDensity(bandwidth=[0.4, 0.7], var_types="o").fit(x, y)
    b = ConditionalDensity(bandwidth=[0.4, 0.7], var_types="o",
                           ordered_kernel="li_racine_normalized").fit(x, y)
    xq, yq = rng.choice([0.0, 1.0, 2.0, 3.0], 15), rng.normal(1.5, 2, 15)
    np.testing.assert_allclose(a.density(xq, yq), b.density(xq, yq), rtol=1e-13)
