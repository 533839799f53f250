"""Restricted wild cluster bootstrap (WCR) against a direct slow loop with the same weights.

The oracle refits every bootstrap sample explicitly (dummy-variable least squares in numpy,
CR1 t statistic from the explicit sandwich) with the weights attnreg used: the full
enumeration of the 2^G Rademacher sign vectors, or ``_bootstrap_weights`` with the same
Generator seed."""
import warnings

import numpy as np
import pandas as pd
import pytest

import attnreg
from attnreg._core import rademacher_enumeration
from attnreg.cluster_inference import _bootstrap_weights


def _data(seed, n=240, G=8, L=24, nested=True, fe=True, weights=False):
    rng = np.random.default_rng(seed)
    f = rng.integers(0, L, n)
    g = f % G if nested else rng.integers(0, G, n)
    d = pd.DataFrame({"f": f, "g": g, "x1": rng.normal(size=n), "x2": rng.normal(size=n)})
    d["y"] = 0.3 * d.x1 + 0.2 * d.x2 + (np.sin(d.f) if fe else 0) + rng.normal(size=n) \
        + 0.8 * rng.normal(size=G)[d.g]
    d["w"] = rng.uniform(0.5, 2, n) if weights else 1.0
    return d


def _design(d, fe):
    X = d[["x1", "x2"]].to_numpy()
    if fe:
        lev, inv = np.unique(d.f.to_numpy(), return_inverse=True)
        return np.column_stack([X, np.eye(lev.size)[inv]])
    return np.column_stack([X, np.ones(len(d))])


def _oracle(d, fe, R, value, V, nested=True):
    """Slow WCR: t statistic and the B bootstrap t statistics by explicit refits. K of the CR1
    factor as fixest's "nonnested": a factor nested in the clusters counts one parameter."""
    Z = _design(d, fe)
    Rz = np.concatenate([R, np.zeros(Z.shape[1] - R.size)])
    y = d.y.to_numpy()
    sw = np.sqrt(d.w.to_numpy())
    Zs, ys = Z * sw[:, None], y * sw
    pinv = np.linalg.pinv(Zs.T @ Zs)
    ids = pd.factorize(d.g)[0]  # clusters in order of first appearance (the weights' rows)
    G = ids.max() + 1

    def t_stat(yv, r):
        b = pinv @ Zs.T @ yv
        e = yv - Zs @ b
        s = np.array([(Zs[ids == h] * e[ids == h, None]).sum(0) for h in range(G)])
        a = s @ pinv @ Rz  # per-cluster contributions to R'V R
        n = len(yv)
        K = 3 if (nested or not fe) else np.linalg.matrix_rank(Zs)
        c = G / (G - 1) * (n - 1) / (n - K)
        return (Rz @ b - r) / np.sqrt(c * (a @ a)), b

    t0, b = t_stat(ys, value)
    # Restricted fit: b_r = b - pinv R (R' pinv R)^{-1} (R'b - r).
    br = b - pinv @ Rz * (Rz @ b - value) / (Rz @ pinv @ Rz)
    ur = ys - Zs @ br
    tb = np.array([t_stat(Zs @ br + ur * V[ids, j], value)[0] for j in range(V.shape[1])])
    return t0, tb


def _fit(d, fe, weights=False):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f = "y ~ x1 + x2 | f" if fe else "y ~ x1 + x2"
        return attnreg.ols(f, d, cov_type="CR1", groups=d.g, weights="w" if weights else None,
                           drop_singletons=False)


@pytest.mark.parametrize("fe,nested", [(True, True), (True, False), (False, True)])
@pytest.mark.parametrize("weights", [False, True])
def test_enumeration_equals_slow_loop(fe, nested, weights):
    d = _data(1, nested=nested, fe=fe, weights=weights)
    m = _fit(d, fe, weights)
    res = attnreg.wild_bootstrap(m, "x1", replications=999)
    assert res.enumerated and res.replications == 2 ** 8
    V = rademacher_enumeration(8)
    t0, tb = _oracle(d, fe, np.array([1.0, 0.0]), 0.0, V, nested)
    np.testing.assert_allclose(res.t_stat, t0, rtol=1e-9)
    np.testing.assert_allclose(res.t_boot, tb, rtol=1e-8, atol=1e-10)
    p = np.mean(np.abs(tb) >= abs(t0) * (1 - 1e-12))
    assert res.p_value == p


@pytest.mark.parametrize("kind", ["rademacher", "webb", "mammen"])
def test_random_draws_equal_slow_loop(kind):
    d = _data(2, n=300, G=15, L=30, nested=False)
    m = _fit(d, True)
    R = {"x1": 1.0, "x2": -2.0}
    res = attnreg.wild_bootstrap(m, R, value=0.1, replications=199, bootstrap=kind,
                                 random_state=42)
    V = _bootstrap_weights(np.random.default_rng(42), 15, 199, kind)
    t0, tb = _oracle(d, True, np.array([1.0, -2.0]), 0.1, V, nested=False)
    np.testing.assert_allclose(res.t_stat, t0, rtol=1e-9)
    np.testing.assert_allclose(res.t_boot, tb, rtol=1e-8, atol=1e-10)
    assert res.p_value == np.mean(np.abs(tb) >= abs(t0) * (1 - 1e-12))
    assert not res.enumerated


def test_confidence_interval_inverts_the_test():
    d = _data(3, n=300, G=20, L=40, nested=True)
    m = _fit(d, True)
    res = attnreg.wild_bootstrap(m, "x1", replications=999, random_state=7)
    lo, hi = res.conf_int
    assert lo < res.estimate < hi
    eps = 1e-6 * (hi - lo)
    for r, inside in ((lo + eps, True), (lo - eps, False), (hi - eps, True), (hi + eps, False)):
        p = attnreg.wild_bootstrap(m, "x1", value=r, replications=999, random_state=7).p_value
        assert (p > 0.05) == inside, (r, p)


def test_bad_input():
    d = _data(4)
    m = _fit(d, True)
    with pytest.raises(ValueError, match="replications"):
        attnreg.wild_bootstrap(m, "x1", replications=50)
    with pytest.raises(ValueError, match="level"):
        attnreg.wild_bootstrap(m, "x1", level=95)
    with pytest.raises(ValueError, match="not a coefficient"):
        attnreg.wild_bootstrap(m, "nope")
    d["c"] = d.f * 1.0  # absorbed by the fixed effects: coefficient nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m2 = attnreg.ols("y ~ x1 + c | f", d, cov_type="CR1", groups=d.g)
    with pytest.raises(ValueError, match="dropped"):
        attnreg.wild_bootstrap(m2, "c")


@pytest.mark.parametrize("fe,nested", [(True, True), (True, False), (False, True)])
def test_matches_wildboottest_enumerated(fe, nested):
    # pyfixest's wild bootstrap (the wildboottest package, which needs numba) enumerates the
    # 2^8 Rademacher draws too. The two draws v = +-1 reproduce the sample (|t*| = |t| exactly
    # in real arithmetic): attnreg counts them as ties (>=), wildboottest's count depends on
    # its rounding, so the p-values agree up to those 2 / 2^8.
    pytest.importorskip("wildboottest")
    pf = pytest.importorskip("pyfixest")
    d = _data(1, nested=nested, fe=fe)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = pf.feols("y ~ x1 + x2 | f" if fe else "y ~ x1 + x2", d, vcov={"CRV1": "g"})
        theirs = float(r.wildboottest(param="x1", reps=999, seed=1)["Pr(>|t|)"])
    ours = attnreg.wild_bootstrap(_fit(d, fe), "x1", replications=999).p_value
    assert 0 <= ours - theirs <= 2 / 256 + 1e-12
