"""attnreg.attention against independent numpy implementations of each formula."""
from __future__ import annotations

import re

import numpy as np
import pytest

import attnreg
from attnreg import attention as A


def rng(seed=0):
    return np.random.default_rng(seed)


def qkv(b=2, h=2, nq=30, nk=30, d=4, dv=3, seed=0, sd=0.8):
    r = rng(seed)
    return (sd * r.standard_normal((b, h, nq, d)), sd * r.standard_normal((b, h, nk, d)),
            r.standard_normal((b, h, nk, dv)))


def mask(nq, nk, causal, window=0):
    i = np.arange(nq)[:, None] + (nk - nq)
    j = np.arange(nk)[None, :]
    m = np.ones((nq, nk), bool)
    if causal:
        m &= j <= i
    if window:
        m &= j > i - window
        if not causal:
            m &= j < i + window
    return m


def np_nw(logits, V, m):
    logits = np.where(m, logits, -np.inf)
    w = np.exp(logits - logits.max(-1, keepdims=True))
    return (w / w.sum(-1, keepdims=True)) @ V


def np_local_linear(Q, K, V, w, lam):
    """Intercept of argmin sum p_j ||v_j - a - B(k_j - q)||^2 + lam ||B||^2 by lstsq."""
    out = np.empty((Q.shape[0], V.shape[1]))
    d = K.shape[1]
    for i, q in enumerate(Q):
        p = w[i] / w[i].sum()
        keep = p > 0
        s = np.sqrt(p[keep])[:, None]
        X = np.hstack([s, s * (K[keep] - q)])
        X = np.vstack([X, np.hstack([np.zeros((d, 1)), np.sqrt(lam) * np.eye(d)])])
        Y = np.vstack([s * V[keep], np.zeros((d, V.shape[1]))])
        out[i] = np.linalg.lstsq(X, Y, rcond=None)[0][0]
    return out


# --------------------------------------------------------------------------- softmax / NW


@pytest.mark.parametrize("causal", [False, True])
def test_softmax_matches_numpy_and_keeps_dtype(causal):
    Q, K, V = qkv(nq=25, nk=40 if not causal else 25, seed=1)
    scale = 0.7
    got = A.softmax(Q, K, V, scale=scale, causal=causal, block_k=16)
    want = np_nw(scale * Q @ np.swapaxes(K, -1, -2), V, mask(Q.shape[2], K.shape[2], causal))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    got32 = A.softmax(*(x.astype(np.float32) for x in (Q, K, V)), scale=scale, causal=causal)
    assert got32.dtype == np.float32
    np.testing.assert_allclose(got32, want, rtol=1e-4, atol=1e-5)


def test_nw_rbf_equals_softmax_on_unit_norm_inputs():
    Q, K, V = qkv(seed=2, d=5)
    Q /= np.linalg.norm(Q, axis=-1, keepdims=True)
    K /= np.linalg.norm(K, axis=-1, keepdims=True)
    h = 0.6
    a = A.nw_rbf(Q, K, V, bandwidth=h)
    b = A.softmax(Q, K, V, scale=1 / h**2)
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(A.nw_rbf(Q, K, V), A.softmax(Q, K, V), atol=1e-13)
    d2 = ((Q[..., :, None, :] - K[..., None, :, :]) ** 2).sum(-1)
    np.testing.assert_allclose(a, np_nw(-d2 / (2 * h * h), V, mask(30, 30, False)), atol=1e-12)


# --------------------------------------------------------------------------- LLA


@pytest.mark.parametrize("causal,window", [(False, 0), (True, 0), (True, 6)])
def test_lla_algorithms_agree_with_a_numpy_local_linear_fit(causal, window):
    Q, K, V = qkv(b=1, h=2, nq=28, nk=28, d=3, seed=3)
    lam, h = 0.2, 1.4
    outs = {m: A.lla(Q, K, V, bandwidth=h, ridge=lam, causal=causal, window=window, method=m,
                     block_q=8, block_k=8)
            for m in ("naive", "direct", "blockwise")}
    m = mask(28, 28, causal, window)
    for hh in range(2):
        logits = np.where(m, Q[0, hh] @ K[0, hh].T / h, -np.inf)
        w = np.exp(logits - logits.max(1, keepdims=True))
        want = np_local_linear(Q[0, hh], K[0, hh], V[0, hh], w, lam)
        for name, out in outs.items():
            np.testing.assert_allclose(out[0, hh], want, rtol=1e-10, atol=1e-10, err_msg=name)


def test_lla_float32_blockwise_close_to_float64_naive():
    Q, K, V = qkv(b=1, h=2, nq=120, nk=120, d=16, dv=8, seed=4, sd=0.25)
    Q32, K32, V32 = (x.astype(np.float32) for x in (Q, K, V))
    ref = A.lla(*(x.astype(np.float64) for x in (Q32, K32, V32)), ridge=0.1, causal=True,
                method="naive")
    got, info = A.lla(Q32, K32, V32, ridge=0.1, causal=True, return_info=True)
    assert got.dtype == np.float32
    assert np.linalg.norm(got - ref) / np.linalg.norm(ref) < 1e-4
    assert info["cg_converged"] and info["method"] == "lla/blockwise"


def test_lla_large_ridge_is_softmax_and_weights_reproduce_output():
    Q, K, V = qkv(seed=5)
    np.testing.assert_allclose(A.lla(Q, K, V, ridge=1e10, causal=True),
                               A.softmax(Q, K, V, causal=True), rtol=1e-7, atol=1e-8)
    W = A.attention_weights(Q, K, method="lla", ridge=0.3, causal=True)
    np.testing.assert_allclose(W.sum(-1), 1.0, atol=1e-12)
    assert (W < 0).any()  # local linear weights take both signs
    np.testing.assert_allclose(W @ V, A.lla(Q, K, V, ridge=0.3, causal=True), atol=1e-10)


def test_lla_per_position_ridge():
    Q, K, V = qkv(b=1, h=1, seed=6)
    lam = np.linspace(0.05, 2.0, 30)
    got = A.lla(Q, K, V, ridge=lam, causal=True, method="direct")
    for i in (3, 17, 29):
        one = A.lla(Q, K, V, ridge=lam[i], causal=True, method="direct")
        np.testing.assert_allclose(got[0, 0, i], one[0, 0, i], rtol=1e-12)


def test_lla_partials_merge_to_direct():
    Q, K, V = qkv(b=1, h=2, nq=40, nk=40, seed=7)
    ref = A.lla(Q, K, V, ridge=0.1, causal=True, method="direct")
    cuts = [0, 9, 25, 40]
    parts = [A.lla_partial(Q, K[..., a:b, :], V[..., a:b, :], key_offset=a, n_keys_total=40,
                           causal=True) for a, b in zip(cuts[:-1], cuts[1:])]
    merged = A.lla_merge(parts[2], A.lla_merge(parts[0], parts[1]))
    np.testing.assert_allclose(A.lla_finalize(Q, merged, ridge=0.1, causal=True), ref,
                               rtol=1e-11, atol=1e-12)


def test_cg_non_convergence_warns_and_reports():
    Q, K, V = qkv(seed=8, d=8)
    with pytest.warns(A.AttentionWarning, match="cg_max_iter"):
        _, info = A.lla(Q, K, V, ridge=0.01, causal=True, cg_max_iter=2, return_info=True)
    assert not info["cg_converged"] and info["cg_max_iterations"] == 2
    _, info = A.lla(Q, K, V, ridge=0.01, causal=True, return_info=True)
    assert info["cg_converged"] and len(info["cg_iterations"]) == 2 * 2 * 1


# --------------------------------------------------------------------------- linear / mesa


def test_mesa_is_a_ridge_regression_at_each_position():
    Q, K, V = qkv(b=1, h=1, seed=9)
    lam = 0.7
    got = A.mesa(Q, K, V, ridge=lam, causal=True)[0, 0]
    q, k, v = Q[0, 0], K[0, 0], V[0, 0]
    for i in range(30):
        Wt = np.linalg.solve(k[: i + 1].T @ k[: i + 1] + lam * np.eye(4), k[: i + 1].T @ v[: i + 1])
        np.testing.assert_allclose(got[i], q[i] @ Wt, rtol=1e-10, atol=1e-12)


def test_linear_attention_and_the_epanechnikov_feature_map():
    Q, K, V = qkv(b=1, h=1, seed=10)
    phi = lambda x: np.where(x > 0, x + 1, np.exp(x))  # noqa: E731
    S = phi(Q[0, 0]) @ phi(K[0, 0]).T * mask(30, 30, True)
    np.testing.assert_allclose(A.linear(Q, K, V, causal=True)[0, 0],
                               (S / S.sum(1, keepdims=True)) @ V[0, 0], rtol=1e-11)
    Qn = Q / np.linalg.norm(Q, axis=-1, keepdims=True)
    Kn = K / np.linalg.norm(K, axis=-1, keepdims=True)
    tau = 5.0
    d2 = ((Qn[0, 0][:, None] - Kn[0, 0][None]) ** 2).sum(-1)
    w = np.maximum(0, 1 - d2 / tau)
    np.testing.assert_allclose(A.linear(Qn, Kn, V, feature_map="epanechnikov", tau=tau)[0, 0],
                               (w / w.sum(1, keepdims=True)) @ V[0, 0], rtol=1e-11)


# --------------------------------------------------------------------------- layout, masks


def test_strided_inputs_and_broadcast_keys_are_read_in_place():
    Q, K, V = qkv(b=1, h=1, nq=20, nk=20, d=3, seed=11)
    ref = A.lla(Q[0, 0], K[0, 0], V[0, 0], ridge=0.1)
    Kf = np.asfortranarray(K[0, 0])
    Vt = np.ascontiguousarray(V[0, 0].T).T  # a transposed view
    np.testing.assert_allclose(A.lla(Q[0, 0], Kf, Vt, ridge=0.1), ref, rtol=1e-13)
    Qb = np.stack([Q[0, 0], 2 * Q[0, 0]])  # (2, seq, dim) with one shared (seq, dim) K, V
    out = A.lla(Qb, K[0, 0], V[0, 0], ridge=0.1)
    assert out.shape == (2, 20, 3)
    np.testing.assert_allclose(out[0], ref, rtol=1e-13)


def test_causal_outputs_ignore_the_future_and_threads_do_not_matter():
    Q, K, V = qkv(b=1, h=2, nq=40, nk=40, seed=12)
    K2, V2 = K.copy(), V.copy()
    K2[..., 21:, :] += 5
    V2[..., 21:, :] -= 3
    for f in (lambda k, v: A.lla(Q, k, v, ridge=0.1, causal=True, block_q=8, block_k=8),
              lambda k, v: A.softmax(Q, k, v, causal=True, block_k=8),
              lambda k, v: A.mesa(Q, k, v, causal=True),
              lambda k, v: A.linear(Q, k, v, causal=True)):
        a, b = f(K, V), f(K2, V2)
        np.testing.assert_array_equal(a[..., :21, :], b[..., :21, :])
        assert np.abs(a[..., 21:, :] - b[..., 21:, :]).max() > 1e-3
    one = A.lla(Q, K, V, ridge=0.1, causal=True, n_threads=1)
    two = A.lla(Q, K, V, ridge=0.1, causal=True, n_threads=2)
    np.testing.assert_array_equal(one, two)


# --------------------------------------------------------------------------- errors


def test_bad_input_gives_clear_errors():
    Q, K, V = qkv(b=1, h=1, seed=13)
    Kn = K.copy()
    Kn[0, 0, 3, 1] = np.nan
    with pytest.raises(ValueError, match=re.escape("K: contains NaN at (batch 1, head 1, position 4, column 2)")):
        A.softmax(Q, Kn, V)
    with pytest.raises(ValueError, match="V: has seq = 29"):
        A.softmax(Q, K, V[..., :29, :])
    with pytest.raises(ValueError, match="ridge: must be > 0 for lla"):
        A.lla(Q, K, V, causal=True)
    with pytest.raises(ValueError, match="bandwidth: must be > 0"):
        A.nw_rbf(Q, K, V, bandwidth=0.0)
    with pytest.raises(ValueError, match="method: unknown 'fast'"):
        A.lla(Q, K, V, ridge=0.1, method="fast")
    with pytest.raises(ValueError, match="expected a 2-d"):
        A.softmax(Q[0, 0, 0], K, V)
    with pytest.raises(attnreg.NumericalError):
        A.linear(-np.abs(Q), np.abs(K), V, feature_map="identity")
    with pytest.raises(RuntimeError, match="without CUDA|no GPU visible|CUDA attention kernels"):
        A.softmax(Q, K, V, device="cuda")
    with pytest.raises(ValueError, match="device: unknown"):
        A.softmax(Q, K, V, device="tpu")
