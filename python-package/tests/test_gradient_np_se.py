"""NadarayaWatson.gradient(se="np"): R np 0.70-4's gerr formula for local-constant gradients
(its C source, src/jksum.c), against a direct numpy oracle of that formula on np's cps71 data
and on random mixed data (continuous, unordered, ordered columns; several kernels)."""
import pathlib

import numpy as np
import pandas as pd
import pytest
from scipy.integrate import quad

import attnreg

CPS71 = pathlib.Path(__file__).resolve().parents[2] / "data" / "cps71.csv"

DENS = {
    "gaussian": (lambda u: np.exp(-u * u / 2) / np.sqrt(2 * np.pi), np.inf),
    "epanechnikov": (lambda u: np.where(np.abs(u) <= 1, 0.75 * (1 - u * u), 0.0), 1.0),
    "uniform": (lambda u: np.where(np.abs(u) <= 1, 0.5, 0.0), 1.0),
    "triangular": (lambda u: np.where(np.abs(u) <= 1, 1 - np.abs(u), 0.0), 1.0),
}


def consts(kernel):
    K, s = DENS[kernel]
    lim = 12.0 if np.isinf(s) else s
    R = quad(lambda u: K(u) ** 2, -lim, lim, points=[0.0] if lim < 2 else None,
             epsabs=1e-15, epsrel=1e-13)[0]
    C = quad(lambda z: K(z - 0.5) * K(z + 0.5), -lim, lim,
             points=[-0.5, 0.5] if lim < 2 else None, epsabs=1e-15, epsrel=1e-13)[0]
    return K, R, C


def cat_kernel(kind, x, xi, lam, nlev):
    if kind == "u":  # aitchison_aitken
        return np.where(x == xi, 1 - lam, lam / (nlev - 1))
    return lam ** np.abs(x - xi)  # li_racine, ordered


def np_gerr_oracle(X, y, Q, h, types, kernel, levels):
    K, R, C = consts(kernel)
    dc = types.count("c")

    def S_and_var(q):
        w = np.ones(len(y))
        for j, t in enumerate(types):
            if t == "c":
                w = w * K((X[:, j] - q[j]) / h[j])
            else:
                w = w * cat_kernel(t, q[j], X[:, j], h[j], len(levels[j]))
        l = w / w.sum()
        m = l @ y
        return w.sum(), max(0.0, l @ (y * y) - m * m)

    out = np.zeros((len(Q), len(types)))
    for r, q in enumerate(Q):
        S, v = S_and_var(q)
        merr2 = v * R**dc / S
        for j, t in enumerate(types):
            if t == "c":
                out[r, j] = np.sqrt(2 * (R - C) / R) * np.sqrt(merr2) / h[j]
            elif dc == 0:
                out[r, j] = 0.0
            else:
                lv = levels[j]
                pos = int(np.searchsorted(lv, q[j]))
                q2 = q.copy()
                if t == "u":
                    q2[j] = lv[0]
                elif pos > 0:
                    q2[j] = lv[pos - 1]
                else:
                    q2[j] = lv[1]
                S2, v2 = S_and_var(q2)
                out[r, j] = np.sqrt(merr2 + v2 * R**dc / S2)
    return out


def test_cps71_np_gerr_equals_the_formula():
    try:
        d = pd.read_csv(CPS71)
    except OSError:
        pytest.skip("cps71.csv not available")
    x, y = d[["age"]].to_numpy(float), d["logwage"].to_numpy(float)
    m = attnreg.NadarayaWatson(bandwidth=[1.892]).fit(x, y)
    Q = np.linspace(21, 65, 20)[:, None]
    G, S = m.gradient(Q, return_se=True, se="np")
    ref = np_gerr_oracle(x, y, Q, [1.892], "c", "gaussian", [None])
    # the local variance E[y^2|x] - m^2 cancels: its relative error is up to
    # (E[y^2|x] / var) n eps ~ (170 / 0.1) * 205 * 2.2e-16 ~ 8e-11 here
    np.testing.assert_allclose(S, ref, rtol=1e-10)
    _, Sa = m.gradient(Q, return_se=True)
    assert np.max(np.abs(Sa / S - 1)) > 0.05  # the two formulas differ (not ignored)


@pytest.mark.parametrize("types,kernel,seed", [("cc", "gaussian", 0), ("cu", "epanechnikov", 1),
                                               ("co", "gaussian", 2), ("cuo", "triangular", 3),
                                               ("c", "uniform", 4), ("uo", "gaussian", 5)])
def test_np_gerr_mixed_data_equals_the_formula(types, kernel, seed):
    rng = np.random.default_rng(seed)
    n = 90
    cols, h, levels = [], [], []
    for t in types:
        if t == "c":
            cols.append(rng.normal(0, 1, n).round(1))  # ties
            h.append(0.93 if kernel != "gaussian" else 0.4)  # no |u| = 1 on the 0.1 grid
            levels.append(None)
        else:
            cols.append(rng.integers(0, 4, n).astype(float))
            h.append(0.3)
            levels.append(np.arange(4.0))
    X = np.column_stack(cols)
    y = np.sin(X[:, 0]) + 0.3 * X.sum(1) + rng.normal(0, 0.3, n) + 100.0  # shifted origin
    m = attnreg.NadarayaWatson(bandwidth=h, kernel=kernel, var_types=types).fit(X, y)
    Q = X[rng.choice(n, 7, replace=False)]
    _, S = m.gradient(Q, return_se=True, se="np")
    ref = np_gerr_oracle(X, y, Q, h, types, kernel, levels)
    # the local variance subtracts m^2 ~ 1e4 from E y^2 (var ~ 0.1): relative error up to
    # (1e4 / 0.1) n eps ~ 2e-9
    np.testing.assert_allclose(S, ref, rtol=1e-8, atol=1e-12)


def test_np_gerr_refusals():
    rng = np.random.default_rng(9)
    X = rng.uniform(size=(50, 1))
    y = X[:, 0] + rng.normal(0, 0.1, 50)
    ll = attnreg.LocalLinear(bandwidth=[0.2]).fit(X, y)
    with pytest.raises(ValueError, match="^se: 'np' is R np's asymptotic formula"):
        ll.gradient(X[:3], return_se=True, se="np")
    nw = attnreg.NadarayaWatson(bandwidth=[0.2]).fit(X, y)
    with pytest.raises(ValueError, match="^average: R np has no standard error"):
        attnreg.marginal_effects(nw, X[:3], kind="average", se="np")
    with pytest.raises(ValueError, match="^se: unknown standard-error method 'npx'"):
        nw.gradient(X[:3], return_se=True, se="npx")
