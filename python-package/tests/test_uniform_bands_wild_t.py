"""Uniform bands by the wild bootstrap-t (diagnose(uniform=True), uniform_method="wild_t").

Oracle: a direct float64 numpy implementation over all n training rows (no grouping of tied
rows): y* = fitted + e v, e* = y* - H y* with H the n x n attention weights at the training rows,
se* from e* with the variance kind, t*_k = |W_k (y* - fitted)| / se*_k, the statistic max_k t*_k.
Given the same multipliers the core must agree to rounding: every quantity is a sum of at most
n = 240 products of numbers of size <= ~10 whose cancellation (residuals about 0.1-0.3 of y) costs
at most a factor ~100, so the relative error is below n * 100 * eps ~ 5e-12; tolerance 1e-9.
"""
import math

import numpy as np
import pytest

import attnreg
from attnreg import LocalLinear, _core
from attnreg._deprecation import seed_from_random_state
from attnreg.diagnostics import _fitted_core, diagnose

RTOL = 1e-9


def _data(seed, n=240, ties=False, cat=False, kernel="gaussian"):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 2))
    if ties:
        X = np.round(X, 1)  # about 21 x 21 distinct values: many tied rows
    y = np.sin(2 * X[:, 0]) + X[:, 1] ** 2 + (0.2 + 0.3 * np.abs(X[:, 0])) * rng.standard_normal(n)
    vt = None
    if cat:
        c = rng.integers(0, 2, n).astype(float)
        X = np.column_stack([X, c])
        y = y + 0.5 * c
        vt = "ccu"
    est = LocalLinear(bandwidth=[0.35, 0.45] + ([0.3] if cat else []), kernel=kernel,
                      **({"var_types": vt} if vt else {})).fit(X, y)
    return est, X, y, rng


def _oracle_stats(est, X, y, Ws, V, kind, cluster=None):
    n = len(y)
    H = est.attention_weights(X)
    fit = H @ y
    e = y - fit
    lev = np.diag(H)
    trL = lev.sum()
    gd = _core.global_diagnostics(_fitted_core(est))
    out = np.zeros((V.shape[1], len(Ws)))
    for j in range(V.shape[1]):
        if cluster is not None:
            v = V[_cluster_rows(cluster), j]
        else:
            v = V[:, j]
        z = e * v
        ys = fit + z
        es = ys - H @ ys
        for w, W in enumerate(Ws):
            num = W @ z
            if kind == "cr1":
                ids = _cluster_rows(cluster)
                G = ids.max() + 1
                S = np.zeros((W.shape[0], G))
                S0 = np.zeros((W.shape[0], G))
                for g in range(G):
                    S[:, g] = W[:, ids == g] @ es[ids == g]
                    S0[:, g] = W[:, ids == g] @ e[ids == g]
                adj = G / (G - 1) * (n - 1) / (n - trL)
                var = adj * (S ** 2).sum(1)
                se0 = (S0 ** 2).sum(1)
            else:
                c = {"hc0": np.ones(n), "hc1": np.full(n, n / (n - trL)),
                     "hc2": 1 / (1 - lev), "hc3": 1 / (1 - lev) ** 2}.get(kind)
                if kind == "const":
                    var = (W ** 2).sum(1) * (es @ es) / gd["residual_df"]
                    se0 = (W ** 2).sum(1)
                else:
                    var = (W ** 2) @ (c * es ** 2)
                    se0 = (W ** 2) @ (c * e ** 2)
            keep = se0 > 0
            out[j, w] = np.max(np.abs(num[keep]) / np.sqrt(var[keep]))
    return out


def _cluster_rows(cluster):
    """Cluster of each row numbered in order of first appearance (the multiplier rows)."""
    order = {}
    return np.array([order.setdefault(c, len(order)) for c in cluster])


def _smoothers(est, Xe):
    L = est.attention_weights(Xe)
    B = _core.bias_weights_multivariate(_fitted_core(est), Xe)
    return [L, L - B]


@pytest.mark.parametrize("ties,cat", [(False, False), (True, False), (True, True)])
@pytest.mark.parametrize("kind", ["hc0", "hc1", "hc2", "hc3", "const", "cr1"])
@pytest.mark.parametrize("kernel", ["gaussian", "epanechnikov"])
def test_max_statistics_equal_the_numpy_oracle(ties, cat, kind, kernel):
    # Gaussian: the hat-matrix rows are dense (dgemm); Epanechnikov: compressed rows over the
    # windows (the first block less than a quarter nonzero), refits only where W weighs
    est, X, y, rng = _data(11 + 3 * ties + cat, ties=ties, cat=cat, kernel=kernel)
    Xe = np.column_stack([np.linspace(-0.8, 0.8, 7), np.linspace(0.7, -0.7, 7)])
    if cat:
        Xe = np.column_stack([Xe, np.r_[np.zeros(4), np.ones(3)]])
    Ws = _smoothers(est, Xe)
    cluster = None
    if kind == "cr1":
        cluster = list(rng.integers(0, 30, len(y)) * 7 + 3)
        nm = len(set(cluster))
    else:
        nm = len(y)
    V = rng.choice([-1.0, 1.0], size=(nm, 40))
    V[:, :3] = rng.standard_normal((nm, 3))  # any multipliers, not only signs
    got = _core.wild_t_max_statistics(_fitted_core(est), Ws, V, kind=kind,
                                      cluster=[] if cluster is None else cluster)
    want = _oracle_stats(est, X, y, Ws, V, kind, cluster)
    np.testing.assert_allclose(got, want, rtol=RTOL)
    assert np.all(want > 0)


def test_diagnose_uses_the_wild_t_critical_values_and_they_follow_its_statistics():
    est, X, y, rng = _data(5)
    Xe = rng.uniform(-0.8, 0.8, size=(9, 2))
    r = diagnose(est, Xe, cov_type="HC3", uniform=True, replications=600, random_state=9)
    assert r.attrs["uniform_method"] == "wild_t"
    c = _core.wild_t_critical_values(_fitted_core(est), _smoothers(est, Xe), 0.95, 600,
                                     seed_from_random_state(9), kind="hc3")
    assert r.attrs["crit_uniform"] == c[0] and r.attrs["crit_uniform_rbc"] == c[1]
    np.testing.assert_allclose(r["uniform_rbc_low"], r["fit_bc"] - c[1] * r["se_bc"], rtol=1e-14)
    # The core's quantile against the oracle's with independent Rademacher draws: two
    # quantile estimates from R draws each differ by sd sqrt(2 p (1 - p) / R) / f(q), f the
    # density of the statistic at the quantile (estimated from the oracle's draws); 4 sd.
    R, p = 3000, 0.95
    V = rng.choice([-1.0, 1.0], size=(len(y), R))
    T = _oracle_stats(est, X, y, _smoothers(est, Xe), V, "hc3")
    c_big = _core.wild_t_critical_values(_fitted_core(est), _smoothers(est, Xe), p, R, 123,
                                         kind="hc3")
    for w in range(2):
        t = np.sort(T[:, w])
        q = t[math.ceil(p * R) - 1]
        lo, hi = np.quantile(t, [p - 0.02, p + 0.02])
        f = 0.04 / (hi - lo)
        sd = math.sqrt(2 * p * (1 - p) / R) / f
        assert abs(c_big[w] - q) <= 4 * sd, (w, c_big[w], q, sd)


def test_wild_t_does_not_depend_on_the_thread_count():
    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, size=(300, 2))
    y = X[:, 0] ** 2 + 0.3 * rng.standard_normal(300)
    Xe = rng.uniform(-0.8, 0.8, size=(12, 2))
    r = [diagnose(LocalLinear(bandwidth=[0.4, 0.4], n_threads=t).fit(X, y), Xe, uniform=True,
                  replications=300, random_state=1) for t in (1, 2, 4)]
    for k in (1, 2):
        assert r[0].attrs == r[k].attrs
        assert r[0].equals(r[k])


_BLAS_THREADS_SCRIPT = """
import sys
import numpy as np
from attnreg import LocalLinear, _core
from attnreg.diagnostics import _fitted_core
rng = np.random.default_rng(4)
X = rng.uniform(-1, 1, size=(900, 2))
y = np.sin(2 * X[:, 0]) + X[:, 1] + 0.3 * rng.standard_normal(900)
est = LocalLinear(bandwidth=[0.3, 0.3]).fit(X, y)
Xe = rng.uniform(-0.8, 0.8, size=(150, 2))
L = est.attention_weights(Xe)
B = _core.bias_weights_multivariate(_fitted_core(est), Xe)
for kind in ("hc3", "cr1"):
    cl = list(rng.integers(0, 60, 900)) if kind == "cr1" else []
    c = _core.wild_t_critical_values(_fitted_core(est), [L, L - B], 0.95, 300, 7, kind=kind,
                                     cluster=cl)
    print(kind, *[float(v).hex() for v in c])
"""


def test_wild_t_does_not_depend_on_the_blas_thread_count():
    # The draws' products (H u over 900 distinct rows, W u and W^2 omega* at 150 points, blocks
    # of 128 draws) are large enough for a threaded BLAS to split them; its thread count is
    # fixed when the library loads, hence fresh processes with 1 and 2 threads. Exact equality.
    import os
    import subprocess
    import sys
    out = []
    for t in ("1", "2"):
        env = dict(os.environ, OMP_NUM_THREADS=t, OPENBLAS_NUM_THREADS=t,
                   OMP_WAIT_POLICY="passive")
        r = subprocess.run([sys.executable, "-c", _BLAS_THREADS_SCRIPT], env=env,
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        out.append(r.stdout)
    assert out[0] == out[1] and out[0].count("\n") == 2


def test_gaussian_method_kept_and_nn_defaults_to_it():
    est, X, y, rng = _data(2)
    Xe = rng.uniform(-0.8, 0.8, size=(6, 2))
    g = diagnose(est, Xe, uniform=True, replications=500, random_state=2,
                 uniform_method="gaussian")
    assert g.attrs["uniform_method"] == "gaussian"
    L, Lbc = _smoothers(est, Xe)
    H = est.attention_weights(X)
    e = y - H @ y
    om = e ** 2 / (1 - np.diag(H)) ** 2
    S = (Lbc * om) @ Lbc.T
    c = _core.sup_t_critical_value(S, 0.95, 500, seed_from_random_state(2))
    assert abs(g.attrs["crit_uniform_rbc"] - c) <= 1e-9 * c
    nn = diagnose(est, Xe, cov_type="nn", uniform=True, replications=200, random_state=2)
    assert nn.attrs["uniform_method"] == "gaussian"
    const = diagnose(est, Xe, cov_type="nonrobust", uniform=True, replications=200,
                     random_state=2)
    assert const.attrs["uniform_method"] == "gaussian"
    with pytest.raises(ValueError, match="uniform_method: 'wild_t' does not support"):
        diagnose(est, Xe, cov_type="nn", uniform=True, uniform_method="wild_t")


def test_bad_input():
    est, X, y, rng = _data(1, n=120)
    Xe = X[:3]
    with pytest.raises(ValueError, match="replications: must be an integer >= 100"):
        diagnose(est, Xe, uniform=True, replications=0)
    with pytest.raises(ValueError, match="level"):
        diagnose(est, Xe, uniform=True, level=95)
    with pytest.raises(ValueError, match="uniform_method: must be 'auto', 'wild_t' or 'gaussian'"):
        diagnose(est, Xe, uniform=True, uniform_method="normal")
    with pytest.raises(ValueError, match="multipliers: needs 120 rows"):
        _core.wild_t_max_statistics(_fitted_core(est), _smoothers(est, Xe), np.ones((5, 2)))
    with pytest.raises(ValueError, match="replications: must be at least 100"):
        _core.wild_t_critical_values(_fitted_core(est), _smoothers(est, Xe), 0.95, 1, 1)
    with pytest.raises(ValueError, match="level: is a fraction"):
        _core.wild_t_critical_values(_fitted_core(est), _smoothers(est, Xe), 1.5, 200, 1)


def test_small_monte_carlo_d3_hc3_wild_t_closer_to_nominal_than_gaussian():
    # d = 3, n = 500, Gaussian kernel, local linear at a fixed bandwidth of the size imse_dpi
    # picks for this design (0.3 per column), 3^3 grid in [-0.8, 0.8]^3, HC3, 95% RBC bands,
    # 400 multiplier draws. bench/rbc_band_studentized.py (200 replications at imse_dpi):
    # Gaussian 0.70-0.79, wild bootstrap-t 0.915. With R = 60 replications a coverage p has
    # binomial sd sqrt(p (1 - p) / 60) <= 0.065; the assertions leave > 2 sd each way: the
    # wild-t band covers at least 0.80 and beats the Gaussian band's distance to 0.95.
    rng = np.random.default_rng(20261129)
    import itertools
    G = np.array(list(itertools.product(np.linspace(-0.8, 0.8, 3), repeat=3)))
    m = lambda Z: np.sin(3 * Z[:, 0]) + np.exp(-4 * Z[:, 1] ** 2) + Z[:, 2] ** 2
    tg = m(G)
    reps, hit = 60, {"wild_t": 0, "gaussian": 0}
    for _ in range(reps):
        X = rng.uniform(-1, 1, size=(500, 3))
        y = m(X) + 0.3 * rng.standard_normal(500)
        est = LocalLinear(bandwidth=[0.3, 0.3, 0.3]).fit(X, y)
        seed = int(rng.integers(2 ** 31))
        for meth in hit:
            b = diagnose(est, G, cov_type="HC3", uniform=True, replications=400,
                         random_state=seed, uniform_method=meth)
            hit[meth] += bool(((b["uniform_rbc_low"] <= tg) & (tg <= b["uniform_rbc_high"])).all())
    cw, cg = hit["wild_t"] / reps, hit["gaussian"] / reps
    assert cw >= 0.80, (cw, cg)
    assert abs(cw - 0.95) < abs(cg - 0.95), (cw, cg)


def test_auto_falls_back_to_gaussian_when_the_refits_do_not_fit_in_memory():
    # the Gaussian kernel weighs every one of 20,100 distinct rows: 20,100^2 > 4e8 dense
    # hat-matrix entries. 'auto' uses the Gaussian sup-t and says so; 'wild_t' is refused.
    rng = np.random.default_rng(3)
    n = 20100
    x = rng.uniform(-1, 1, n)
    y = np.sin(2 * x) + 0.3 * rng.standard_normal(n)
    est = LocalLinear(bandwidth=0.1).fit(x[:, None], y)
    Xe = np.linspace(-0.8, 0.8, 5)[:, None]
    with pytest.warns(UserWarning, match="uniform_method 'auto' used the Gaussian sup-t: "
                      "uniform_method: 'wild_t' refits every draw"):
        r = diagnose(est, Xe, uniform=True, replications=200, random_state=1)
    assert r.attrs["uniform_method"] == "gaussian"
    g = diagnose(est, Xe, uniform=True, replications=200, random_state=1,
                 uniform_method="gaussian")
    assert r.attrs["crit_uniform_rbc"] == g.attrs["crit_uniform_rbc"]
    with pytest.raises(ValueError, match="uniform_method: 'wild_t' refits every draw through "
                       "the hat matrix rows of the 20100 distinct training rows inside"):
        diagnose(est, Xe, uniform=True, replications=200, uniform_method="wild_t")


def test_compact_kernel_needs_only_the_windows_rows():
    # 21,000 distinct rows: the whole hat matrix would be 21,000^2 > 4e8 entries (refused
    # before); with the Epanechnikov kernel only the rows in the points' windows are refitted,
    # as compressed rows. The statistics equal the refits computed from those rows directly.
    rng = np.random.default_rng(4)
    n = 21000
    X = rng.uniform(-1, 1, size=(n, 2))
    y = np.sin(2 * X[:, 0]) + X[:, 1] ** 2 + 0.3 * rng.standard_normal(n)
    est = LocalLinear(bandwidth=[0.08, 0.08], kernel="epanechnikov").fit(X, y)
    Xe = np.array([[0.0, 0.0], [0.5, -0.3]])
    r = diagnose(est, Xe, uniform=True, replications=200, random_state=5)
    assert r.attrs["uniform_method"] == "wild_t"
    Ws = _smoothers(est, Xe)
    S = np.flatnonzero((Ws[0] != 0).any(0) | (Ws[1] != 0).any(0))
    assert len(S) < 600
    V = rng.choice([-1.0, 1.0], size=(n, 20))
    got = _core.wild_t_max_statistics(_fitted_core(est), Ws, V, kind="hc3", cluster=[])
    HS = est.attention_weights(X[S])  # the hat-matrix rows of the window rows
    fit = est.predict(X)
    e = y - fit
    lev = np.diag(HS[:, S])
    for j in range(V.shape[1]):
        z = e * V[:, j]
        es = (fit + z)[S] - HS @ (fit + z)
        want = 0.0
        for W in Ws:
            num = W @ z
            var = (W[:, S] ** 2) @ (es ** 2 / (1 - lev) ** 2)
            want = np.max(np.abs(num) / np.sqrt(var))
            assert got[j, 0 if W is Ws[0] else 1] == pytest.approx(want, rel=RTOL)
