"""Marginal effects: NadarayaWatson/LocalLinear.gradient (with standard errors) and
attnreg.marginal_effects against direct numpy oracles: central differences of the fit, level
differences of predictions, and sum_i g_i^2 e_i^2 with the derivative weights g from central
differences of the attention weights."""
import numpy as np
import pandas as pd
import pytest

import attnreg


def _data(seed, n=120, cat=False):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 2))
    y = np.sin(4 * X[:, 0]) + X[:, 1] ** 2 + rng.normal(0, 0.2, n)
    if cat:
        X[:, 1] = rng.integers(0, 3, n)
        y = np.sin(4 * X[:, 0]) + 0.5 * X[:, 1] + rng.normal(0, 0.2, n)
    return X, y


def _fd_weights(m, Q, j, eps=1e-5):
    Qp, Qm = Q.copy(), Q.copy()
    Qp[:, j] += eps
    Qm[:, j] -= eps
    return (m.attention_weights(Qp) - m.attention_weights(Qm)) / (2 * eps)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("kernel", ["gaussian", "epanechnikov"])
def test_nw_gradient_is_the_derivative_of_the_fit(seed, kernel):
    X, y = _data(seed)
    h = [0.15, 0.2] if kernel == "gaussian" else [0.4, 0.5]
    m = attnreg.NadarayaWatson(bandwidth=h, kernel=kernel).fit(X, y)
    Q = np.random.default_rng(seed + 10).uniform(0.2, 0.8, size=(6, 2))
    G, S = m.gradient(Q, return_se=True)
    e = y - m.fitted_values()
    for j in range(2):
        Qp, Qm = Q.copy(), Q.copy()
        Qp[:, j] += 1e-5
        Qm[:, j] -= 1e-5
        fd = (m.predict(Qp) - m.predict(Qm)) / 2e-5
        np.testing.assert_allclose(G[:, j], fd, rtol=1e-7, atol=1e-7)
        W = _fd_weights(m, Q, j)
        np.testing.assert_allclose(S[:, j], np.sqrt((W ** 2) @ (e ** 2)), rtol=1e-6)


@pytest.mark.parametrize("est", [attnreg.NadarayaWatson, attnreg.LocalLinear])
@pytest.mark.parametrize("vt", ["cu", "co"])
def test_categorical_effects_are_level_differences(est, vt):
    X, y = _data(3, cat=True)
    m = est(bandwidth=[0.2, 0.3], var_types=vt).fit(X, y)
    Q = np.array([[0.4, 0.0], [0.4, 1.0], [0.6, 2.0]])
    g = m.gradient(Q)[:, 1]
    f = m.predict(Q)

    def at(q, lev):
        r = Q[[q]].copy()
        r[0, 1] = lev
        return m.predict(r)[0]

    if vt == "cu":  # against the first level
        ref = [0.0, f[1] - at(1, 0), f[2] - at(2, 0)]
    else:  # against the previous level; forward difference at the first
        ref = [at(0, 1) - f[0], f[1] - at(1, 0), f[2] - at(2, 1)]
    np.testing.assert_allclose(g, ref, atol=1e-12)
    # The standard error of a difference: weights l(x) - l(x').
    _, S = m.gradient(Q, return_se=True)
    e = y - m.fitted_values()
    r = Q.copy()
    r[:, 1] = [0, 0, 0] if vt == "cu" else [1, 0, 1]
    D = m.attention_weights(Q) - m.attention_weights(r)
    np.testing.assert_allclose(S[:, 1], np.sqrt((D ** 2) @ (e ** 2)), rtol=1e-10, atol=1e-15)


def test_local_linear_gradient_keeps_its_slopes_and_adds_standard_errors():
    X, y = _data(4)
    m = attnreg.LocalLinear(bandwidth=[0.2, 0.3]).fit(X, y)
    G, S = m.gradient(X[:5], return_se=True)
    assert G.shape == S.shape == (5, 2) and (S > 0).all()
    # The slope's weights: e_{1+j}' A^{-1} [1; z_i] w_i, from a direct weighted least squares.
    e = y - m.fitted_values()
    for q in range(5):
        D = X - X[q]
        w = np.exp(-0.5 * ((D / [0.2, 0.3]) ** 2).sum(axis=1))
        Z = np.column_stack([np.ones(len(y)), D])
        C = np.linalg.solve(Z.T @ (Z * w[:, None]), (Z * w[:, None]).T)  # 3 x n
        np.testing.assert_allclose(G[q], C[1:] @ y, rtol=1e-9)
        np.testing.assert_allclose(S[q], np.sqrt((C[1:] ** 2) @ (e ** 2)), rtol=1e-9)


def test_marginal_effects_average_at_mean_pointwise():
    X, y = _data(5)
    df = pd.DataFrame(X, columns=["a", "b"])
    m = attnreg.NadarayaWatson(bandwidth=[0.15, 0.2]).fit(df, y)
    e = y - m.fitted_values()
    t = attnreg.marginal_effects(m)
    assert list(t.index) == ["a", "b"]
    assert list(t.columns) == ["estimate", "std_error", "ci_lower", "ci_upper"]
    G = m.gradient(df)
    assert isinstance(G, pd.DataFrame) and list(G.columns) == ["a", "b"]
    np.testing.assert_allclose(t["estimate"], G.mean(axis=0), rtol=1e-12)
    for j, c in enumerate(["a", "b"]):
        a = _fd_weights(m, X, j).mean(axis=0)  # averaged derivative weights
        assert t.loc[c, "std_error"] == pytest.approx(np.sqrt(a ** 2 @ e ** 2), rel=1e-6)
    np.testing.assert_allclose(t["ci_upper"] - t["estimate"], 1.959963984540054 * t["std_error"])
    am = attnreg.marginal_effects(m, kind="at_mean")
    g0, s0 = m.gradient(X.mean(axis=0, keepdims=True), return_se=True)
    np.testing.assert_allclose(am["estimate"], g0[0], rtol=1e-12)
    np.testing.assert_allclose(am["std_error"], s0[0], rtol=1e-12)
    pw = attnreg.marginal_effects(m, df.iloc[:3], kind="pointwise")
    assert pw.index.names == ["observation", "feature"] and len(pw) == 6
    g3, s3 = m.gradient(df.iloc[:3], return_se=True)
    np.testing.assert_allclose(pw["estimate"], g3.to_numpy().ravel(), rtol=1e-12)
    np.testing.assert_allclose(pw["std_error"], s3.to_numpy().ravel(), rtol=1e-12)


def test_bootstrap_standard_errors():
    X, y = _data(6)
    m = attnreg.LocalLinear(bandwidth=[0.2, 0.3]).fit(X, y)
    _, sa = m.gradient(X[:4], return_se=True)
    _, sb = m.gradient(X[:4], return_se=True, se="bootstrap", replications=3000, random_state=3)
    np.testing.assert_allclose(sb, sa, rtol=0.08)  # E v^2 = 1: the same variance
    _, sb2 = m.gradient(X[:4], return_se=True, se="bootstrap", replications=3000, random_state=3)
    np.testing.assert_array_equal(sb, sb2)
    t = attnreg.marginal_effects(m, se="bootstrap", replications=500, random_state=1)
    ta = attnreg.marginal_effects(m)
    np.testing.assert_allclose(t["std_error"], ta["std_error"], rtol=0.15)


def test_bad_input():
    X, y = _data(7)
    m = attnreg.NadarayaWatson(bandwidth=[0.2, 0.3]).fit(X, y)
    with pytest.raises(ValueError, match="kind: 'mean' is not one of"):
        attnreg.marginal_effects(m, kind="mean")
    with pytest.raises(ValueError, match=r"level: must be in \(0, 1\)"):
        attnreg.marginal_effects(m, level=95)
    with pytest.raises(ValueError, match="se: unknown standard-error method 'jackknife'"):
        m.gradient(X[:2], return_se=True, se="jackknife")
    with pytest.raises(ValueError, match="replications: must be between 2 and 100000"):
        m.gradient(X[:2], return_se=True, se="bootstrap", replications=1)
    mo = attnreg.NadarayaWatson(bandwidth=[0.2, 0.3]).fit(X, np.column_stack([y, y]))
    with pytest.raises(ValueError, match="y: marginal effects .* need a single response"):
        mo.gradient(X[:2])
    with pytest.raises(ValueError, match="model: marginal effects need a single response"):
        attnreg.marginal_effects(mo)
    with pytest.raises(ValueError, match="model: needs a fitted attnreg.NadarayaWatson"):
        attnreg.marginal_effects(attnreg.OLS().fit(X, y))
