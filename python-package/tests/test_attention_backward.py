"""attnreg.attention.softmax_vjp / nw_rbf_vjp / lla_vjp against central finite differences of
an independent few-line numpy forward (float64), and the closed-form softmax gradient."""
import numpy as np
import pytest

from attnreg import NumericalError, attention


def np_forward(Q, K, V, *, method, a, causal, window, ridge=None, rbf=False):
    """Softmax / NW / LLA (omega-scaled ridge) for one (seq, dim) head, written out."""
    nq, nk = Q.shape[0], K.shape[0]
    out = np.zeros((nq, V.shape[1]))
    for i in range(nq):
        al = i + nk - nq
        j = np.arange(nk)
        keep = np.ones(nk, bool)
        if causal:
            keep &= j <= al
        if window:
            keep &= j > al - window
            if not causal:
                keep &= j < al + window
        k, v = K[keep], V[keep]
        z = k - Q[i]
        logit = -0.5 * a * (z * z).sum(1) if rbf else a * k @ Q[i]
        w = np.exp(logit - logit.max())
        if method != "lla":
            out[i] = w @ v / w.sum()
            continue
        lam = ridge[i] if np.ndim(ridge) else ridge
        om = w.sum()
        mu = z.T @ w
        S = (z.T * w) @ z + lam * om * np.eye(Q.shape[1])
        rho = np.linalg.solve(S, mu)
        s = w * (1 - z @ rho) / (om - mu @ rho)
        out[i] = s @ v
    return out


def fd_grad(f, x, h=1e-6):
    g = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        x0 = x[idx]
        x[idx] = x0 + h
        fp = f()
        x[idx] = x0 - h
        fm = f()
        x[idx] = x0
        g[idx] = (fp - fm) / (2 * h)
    return g


CASES = [
    # method, n, d, causal, window, bandwidth, ridge, kernel
    ("softmax", 1, 1, False, None, None, None, "dot"),
    ("softmax", 5, 3, True, None, None, None, "dot"),
    ("softmax", 33, 8, True, 6, 0.5, None, "dot"),
    ("nw_rbf", 9, 3, False, None, 0.7, None, "dot"),
    ("lla", 1, 1, False, None, None, 0.3, "dot"),
    ("lla", 5, 3, True, None, None, 0.3, "dot"),
    ("lla", 33, 8, False, None, None, 0.1, "dot"),
    ("lla", 12, 3, True, 5, 0.3, 0.5, "dot"),       # tiny bandwidth, window
    ("lla", 12, 3, False, None, 40.0, "per_query", "dot"),  # large bandwidth
    ("lla", 15, 2, True, None, 1.2, "per_query", "rbf"),
    ("lla", 20, 3, False, None, None, 0.0, "dot"),  # ridge 0: every query sees 20 keys
]


@pytest.mark.parametrize("method,n,d,causal,window,bw,ridge,kernel", CASES)
def test_vjp_matches_finite_differences_of_an_independent_forward(
        method, n, d, causal, window, bw, ridge, kernel):
    rng = np.random.default_rng(n * 100 + d)
    Q, K = rng.normal(0, 0.7, (n, d)), rng.normal(0, 0.7, (n, d))
    V, dO = rng.normal(size=(n, 2)), rng.normal(size=(n, 2))
    if ridge == "per_query":
        ridge = rng.uniform(0.05, 0.5, n)
    rbf = method == "nw_rbf" or kernel == "rbf"
    if rbf:
        h = bw if bw is not None else d ** 0.25
        a = 1 / h**2
    else:
        a = 1 / bw if bw is not None else 1 / np.sqrt(d)
    lam = [ridge]

    def f():
        return (np_forward(Q, K, V, method=method, a=a, causal=causal, window=window,
                           ridge=lam[0], rbf=rbf) * dO).sum()

    if method == "softmax":
        got = attention.softmax_vjp(Q, K, V, dO, scale=None if bw is None else 1 / bw,
                                    causal=causal, window=window)
    elif method == "nw_rbf":
        got = attention.nw_rbf_vjp(Q, K, V, dO, bandwidth=bw, causal=causal, window=window)
    else:
        got = attention.lla_vjp(Q, K, V, dO, bandwidth=bw, ridge=ridge, causal=causal,
                                window=window, kernel=kernel)
    for g, x, name in zip(got[:3], (Q, K, V), "QKV"):
        assert g.shape == x.shape and g.dtype == np.float64
        np.testing.assert_allclose(g, fd_grad(f, x), atol=1e-6 * (1 + np.abs(g).max()),
                                   err_msg=f"d{name}")
    # The output itself agrees with the engine (so the oracle is the same function).
    if method == "lla":
        np.testing.assert_allclose(
            attention.lla(Q, K, V, bandwidth=bw, ridge=ridge, causal=causal, window=window,
                          kernel=kernel, method="naive"),
            np_forward(Q, K, V, method=method, a=a, causal=causal, window=window, ridge=ridge,
                       rbf=rbf), atol=1e-10)
        d_ridge = got[3]
        if np.ndim(ridge) == 0:
            assert isinstance(d_ridge, float)
            if ridge > 0:
                h = 1e-6
                lam[0] = ridge + h
                fp = f()
                lam[0] = ridge - h
                fm = f()
                lam[0] = ridge
                assert d_ridge == pytest.approx((fp - fm) / (2 * h), abs=1e-6 * (1 + abs(d_ridge)))
        else:
            assert d_ridge.shape == ridge.shape
            r = ridge.copy()
            lam[0] = r
            np.testing.assert_allclose(d_ridge, fd_grad(f, r), atol=1e-6 * (1 + np.abs(d_ridge).max()))


def test_softmax_vjp_is_the_closed_form_gradient_on_4d_batches():
    rng = np.random.default_rng(3)
    B, H, n, d = 2, 3, 7, 4
    Q, K, V, dO = (rng.normal(size=(B, H, n, d)) for _ in range(4))
    dQ, dK, dV = attention.softmax_vjp(Q, K, V, dO, causal=True)
    a = 1 / np.sqrt(d)
    S = a * Q @ np.swapaxes(K, -1, -2) + np.triu(np.full((n, n), -np.inf), 1)
    P = np.exp(S - S.max(-1, keepdims=True))
    P /= P.sum(-1, keepdims=True)
    dP = dO @ np.swapaxes(V, -1, -2)
    dS = P * (dP - (P * dP).sum(-1, keepdims=True))
    np.testing.assert_allclose(dQ, a * dS @ K, atol=1e-12)
    np.testing.assert_allclose(dK, a * np.swapaxes(dS, -1, -2) @ Q, atol=1e-12)
    np.testing.assert_allclose(dV, np.swapaxes(P, -1, -2) @ dO, atol=1e-12)


def test_lla_vjp_float32_4d_broadcast_and_per_bhi_ridge():
    rng = np.random.default_rng(5)
    B, H, n, d = 2, 2, 9, 3
    Q = rng.normal(0, 0.6, (B, H, n, d))
    K = rng.normal(0, 0.6, (n, d))          # shared by every batch and head
    V = rng.normal(size=(n, 2))
    dO = rng.normal(size=(B, H, n, 2))
    ridge = rng.uniform(0.1, 0.4, (B, H, n))
    dQ, dK, dV, dr = attention.lla_vjp(Q, K, V, dO, ridge=ridge, causal=True)
    assert dQ.shape == Q.shape and dK.shape == K.shape and dV.shape == V.shape
    assert dr.shape == ridge.shape
    # The broadcast gradient is the sum over batches and heads of the per-head gradients.
    want_dK = sum(attention.lla_vjp(Q[b, h], K, V, dO[b, h], ridge=ridge[b, h], causal=True)[1]
                  for b in range(B) for h in range(H))
    np.testing.assert_allclose(dK, want_dK, rtol=1e-12, atol=1e-12)
    f32 = attention.lla_vjp(*(x.astype(np.float32) for x in (Q, K, V, dO)), ridge=ridge,
                            causal=True)
    for g32, g64 in zip(f32[:3], (dQ, dK, dV)):
        assert g32.dtype == np.float32
        np.testing.assert_allclose(g32, g64, atol=1e-4 * np.abs(g64).max())


def test_backward_bad_input_names_the_argument():
    rng = np.random.default_rng(0)
    Q, K, V = rng.normal(size=(6, 3)), rng.normal(size=(6, 3)), rng.normal(size=(6, 2))
    with pytest.raises(ValueError, match="dO: shape"):
        attention.lla_vjp(Q, K, V, np.ones((6, 3)), ridge=0.1)
    with pytest.raises(ValueError, match="dO: contains NaN"):
        attention.lla_vjp(Q, K, V, np.full((6, 2), np.nan), ridge=0.1)
    with pytest.raises(ValueError, match="ridge: must be >= 0"):
        attention.lla_vjp(Q, K, V, np.ones((6, 2)), ridge=-1.0)
    with pytest.raises(ValueError, match="ridge: must be > 0 for lla"):
        attention.lla_vjp(Q, K, V, np.ones((6, 2)), ridge=0.0, causal=True)
    with pytest.raises(ValueError, match="K: shape"):
        attention.softmax_vjp(Q, rng.normal(size=(6, 4)), V, np.ones((6, 2)))
    Kd = np.zeros((6, 3))
    Kd[:, 0] = np.arange(6)
    with pytest.raises(NumericalError, match=r"\(batch 1, head 1, query \d+\)"):
        attention.lla_vjp(Q, Kd, V, np.ones((6, 2)), ridge=0.0)
