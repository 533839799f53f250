"""Every attention path against an explicit mask built in a few numpy lines.

Masks are aligned at the bottom right, as FlashAttention (Dao 2023, flash_attn_func's
``window_size``): query ``i`` sits at key position ``a_i = i + n_k - n_q``; ``causal`` keeps
``j <= a_i``, a causal ``window=w`` further ``j > a_i - w`` and a non-causal one ``|j - a_i| < w``.
Shapes cover ``n_q < n_k``, ``n_q == n_k`` and ``n_q > n_k`` (non-causal only: a causal mask needs
``n_q <= n_k``). The oracles are direct float64 formulas; the tolerance is a small multiple of
the float64 rounding of sums of ``n_k`` terms of size O(1) on these O(1) inputs
(``64 n_k eps``, with a factor for the solves of LLA and Mesa, whose systems here have
condition numbers below about 1e3 because ridge > 0).
"""
import itertools

import numpy as np
import pytest

from attnreg import attention as att

EPS = np.finfo(float).eps


def explicit_mask(n_q, n_k, causal, window):
    i = np.arange(n_q)[:, None] + (n_k - n_q)
    j = np.arange(n_k)[None, :]
    keep = np.ones((n_q, n_k), bool)
    if causal:
        keep &= j <= i
        if window:
            keep &= j > i - window
    elif window:
        keep &= np.abs(j - i) < window
    return keep


def oracle_weights(method, Q, K, keep, ridge):
    d = Q.shape[1]
    n_q, n_k = keep.shape
    W = np.zeros((n_q, n_k))
    for i in range(n_q):
        m = keep[i]
        q, Km = Q[i], K[m]
        if method == "softmax":
            w = np.exp(Km @ q / np.sqrt(d))
            W[i, m] = w / w.sum()
        elif method == "nw_rbf":
            h = d ** 0.25
            w = np.exp(-((Km - q) ** 2).sum(1) / (2 * h * h))
            W[i, m] = w / w.sum()
        elif method == "lla":
            w = np.exp(Km @ q / np.sqrt(d))
            z = Km - q
            om = w.sum()
            mu = w @ z
            S = (z * w[:, None]).T @ z + ridge * om * np.eye(d)
            rho = np.linalg.solve(S, mu)
            W[i, m] = w * (1 - z @ rho) / (om - mu @ rho)
        elif method == "linear":
            phi = lambda x: np.where(x > 0, x + 1.0, np.exp(x))  # elu(x) + 1
            w = phi(Km) @ phi(q)
            W[i, m] = w / w.sum()
        elif method == "mesa":
            H = Km.T @ Km + ridge * np.eye(d)
            W[i, m] = Km @ np.linalg.solve(H, q)
    return W


METHODS = ["softmax", "nw_rbf", "lla", "linear", "mesa"]
# (n_q, n_k, causal, window): cross-attention both ways, self-attention, windows that cut and
# windows wider than the sequence.
SHAPES = [(5, 12, False, 0), (5, 12, True, 0), (5, 12, False, 3), (5, 12, True, 3),
          (12, 12, False, 4), (12, 12, True, 4), (12, 5, False, 0), (12, 5, False, 9),
          (7, 20, False, 25), (7, 20, True, 25)]


def _call(fn, Q, K, V, causal, window, ridge, **extra):
    kw = dict(causal=causal, window=window)
    if fn in ("lla", "mesa"):
        kw["ridge"] = ridge
    return getattr(att, fn)(Q, K, V, **kw, **extra)


@pytest.mark.parametrize("method,shape,seed",
                         [(m, s, seed) for m, s in itertools.product(METHODS, SHAPES)
                          for seed in (0, 1)])
def test_every_path_matches_the_explicit_mask(method, shape, seed):
    n_q, n_k, causal, window = shape
    rng = np.random.default_rng(seed)
    d, dv = 3, 2
    Q = rng.normal(size=(n_q, d)) / np.sqrt(d)
    K = rng.normal(size=(n_k, d)) / np.sqrt(d)
    V = rng.normal(size=(n_k, dv))
    ridge = 0.5
    keep = explicit_mask(n_q, n_k, causal, window)
    assert keep.any(axis=1).all()  # every query sees a key in these shapes
    W = oracle_weights(method, Q, K, keep, ridge)
    want = W @ V
    tol = 64 * n_k * EPS * (1e3 if method in ("lla", "mesa") else 1.0)
    paths = [{}]
    if method == "lla":
        paths = [dict(method="naive"), dict(method="direct"), dict(method="blockwise")]
    if method in ("softmax", "nw_rbf"):
        paths = [dict(block_q=2, block_k=3), {}]
    for extra in paths:
        got = _call(method, Q, K, V, causal, window, ridge, **extra)
        np.testing.assert_allclose(got, want, rtol=0, atol=tol * max(1.0, np.abs(want).max()),
                                   err_msg=f"{method} {extra}")
    kw = dict(method=method, causal=causal, window=window)
    if method in ("lla", "mesa"):
        kw["ridge"] = ridge
    got_w = att.attention_weights(Q, K, **kw)
    np.testing.assert_allclose(got_w, W, rtol=0, atol=tol * max(1.0, np.abs(W).max()))
    assert np.all(got_w[~keep] == 0.0)  # masked keys get exactly no weight


@pytest.mark.parametrize("method", ["softmax", "nw_rbf", "lla"])
@pytest.mark.parametrize("causal,window", [(False, 0), (True, 0), (False, 3), (True, 4)])
def test_split_key_partials_follow_the_same_mask(method, causal, window):
    # The map-reduce partials of attnreg.dask use global key positions with the same alignment.
    pytest.importorskip("dask")
    from attnreg import dask as ad
    import dask.array as da

    rng = np.random.default_rng(3)
    n_q, n_k, d = 6, 15, 3
    Q = rng.normal(size=(n_q, d)) / np.sqrt(d)
    K = rng.normal(size=(n_k, d)) / np.sqrt(d)
    V = rng.normal(size=(n_k, 2))
    keep = explicit_mask(n_q, n_k, causal, window)
    ridge = 0.5
    want = oracle_weights(method, Q, K, keep, ridge) @ V
    kw = dict(causal=causal, window=window or None)
    if method == "lla":
        kw["ridge"] = ridge
    got = getattr(ad, method)(Q, da.from_array(K, chunks=4), da.from_array(V, chunks=4), **kw)
    tol = 64 * n_k * EPS * (1e3 if method == "lla" else 1.0)
    np.testing.assert_allclose(np.asarray(got), want, rtol=0, atol=tol * max(1, np.abs(want).max()))
