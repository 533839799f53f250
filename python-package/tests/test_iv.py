"""Instrumental variables (attnreg.IV2SLS, IVLIML, attnreg.iv) against a direct numpy k-class
estimator (fixed effects as dummy columns, the explicit sandwich), linearmodels' IV2SLS /
IVLIML / IVGMM and pyfixest's feols.

Tolerances: the core works on the within-transformed data (one factor: exact; two: sweeps to
1e-10 relative, well below the 1e-7 used there) and solves by QR; the oracle forms the normal
equations of well-conditioned designs (condition numbers below 1e3 here), so agreement is at
rounding level times the condition number squared: 1e-8 relative is a bound with margin.
"""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import attnreg
from attnreg import IV2SLS, IVLIML, WeakInstrumentWarning

RTOL = 1e-8


# -- data ---------------------------------------------------------------------------------------

def make_data(seed, n=300, p1=2, p2=1, q=2, n_fe=(0,), weights=False, zero_weights=0,
              strength=1.0):
    rng = np.random.default_rng(seed)
    X1 = rng.normal(size=(n, p1))
    Z2 = rng.normal(size=(n, q))
    fes = [rng.integers(0, L, size=n) for L in n_fe if L > 0]
    u = rng.normal(size=n)
    Pi = strength * rng.uniform(0.5, 1.5, size=(q, p2))
    X2 = Z2 @ Pi + (0.3 * X1[:, :1] if p1 else 0.0) + 0.8 * u[:, None] + rng.normal(size=(n, p2))
    effect = sum(np.sin(f) for f in fes) if fes else 0.0
    if fes:
        X2 += np.cos(fes[0])[:, None]
    y = 1.0 + X1 @ rng.normal(size=p1) + X2 @ np.arange(1, p2 + 1) + effect + u
    w = None
    if weights:
        w = rng.uniform(0.2, 3.0, size=n)
        if zero_weights:
            w[rng.choice(n, zero_weights, replace=False)] = 0.0
    return dict(y=y, X1=X1, X2=X2, Z2=Z2, fes=fes, w=w)


def dummies(fes):
    """Dummy columns of the factors (all levels of the first, all but one of the others)."""
    cols = []
    for j, f in enumerate(fes):
        levels = np.unique(f)
        D = (f[:, None] == levels[None, :]).astype(float)
        cols.append(D if j == 0 else D[:, 1:])
    return np.hstack(cols)


def oracle(d, liml=False, fuller=0.0):
    """k-class on the dummy design, weighted by sqrt(w). Returns a dict of numpy results."""
    y, X1, X2, Z2, fes, w = d["y"], d["X1"], d["X2"], d["Z2"], d["fes"], d["w"]
    n = len(y)
    keep = np.ones(n, bool) if w is None else w > 0
    s = np.ones(n) if w is None else np.sqrt(np.where(keep, w, 0.0))
    exo = np.hstack([dummies(fes), X1]) if fes else np.hstack([np.ones((n, 1)), X1])
    X = np.hstack([exo, X2])[keep] * s[keep, None]
    Z = np.hstack([exo, Z2])[keep] * s[keep, None]
    E = exo[keep] * s[keep, None]
    ys = y[keep] * s[keep]
    N = keep.sum()
    Pz = Z @ np.linalg.pinv(Z)
    Mz = np.eye(N) - Pz
    k = 1.0
    kappa = np.nan
    if liml:
        Y = np.column_stack([ys, X2[keep] * s[keep, None]])
        Me = np.eye(N) - E @ np.linalg.pinv(E)
        kappa = np.min(np.real(np.linalg.eigvals(np.linalg.solve(Y.T @ Mz @ Y, Y.T @ Me @ Y))))
        L = np.linalg.matrix_rank(Z)
        k = kappa - fuller / (N - L)
    A = X.T @ (np.eye(N) - k * Mz)
    C = A @ X
    b = np.linalg.solve(C, A @ ys)
    e = ys - X @ b
    Ci = np.linalg.inv(C)
    Xhat = Pz @ X
    K = np.linalg.matrix_rank(X)
    n_fe_cols = exo.shape[1] - (1 + X1.shape[1]) if fes else 0
    return dict(b=b, e=e, Ci=Ci, Xhat=Xhat, K=K, N=N, keep=keep, k=k, kappa=kappa, s=s,
                X=X, Z=Z, ys=ys, n_exo_dummies=(exo.shape[1] - X1.shape[1]) if fes else 0,
                n_fe_cols=n_fe_cols, A=A)


def oracle_cov(o, cov_type, clusters=None):
    Ci, Xh, e, N, K = o["Ci"], o["Xhat"], o["e"], o["N"], o["K"]
    if cov_type == "nonrobust":
        return e @ e / (N - K) * Ci
    if cov_type in ("HC2", "HC3"):
        h = np.diag(Xh @ np.linalg.pinv(Xh))
        e = e / (np.sqrt(1 - h) if cov_type == "HC2" else (1 - h))
    S = Xh * e[:, None]
    if cov_type.startswith("HC"):
        V = Ci @ S.T @ S @ Ci
        return V * (N / (N - K) if cov_type == "HC1" else 1.0)
    cl = np.asarray(clusters)[o["keep"]]
    if cl.ndim == 1:
        cl = cl[:, None]

    def meat(c):
        M = 0
        for g in np.unique(c):
            sg = S[c == g].sum(0)
            M = M + np.outer(sg, sg)
        return M

    if cl.shape[1] == 1:
        M = meat(cl[:, 0])
    else:
        both = cl[:, 0] * (cl[:, 1].max() + 1) + cl[:, 1]
        M = meat(cl[:, 0]) + meat(cl[:, 1]) - meat(both)
    G = min(len(np.unique(cl[:, j])) for j in range(cl.shape[1]))
    V = Ci @ M @ Ci
    if cov_type == "CR1":
        V *= G / (G - 1) * (N - 1) / (N - K)
    return V


def fit(d, cls=IV2SLS, **kw):
    groups = kw.pop("groups", None)
    absorb = None
    if d["fes"]:
        absorb = np.column_stack(d["fes"]) if len(d["fes"]) > 1 else d["fes"][0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", WeakInstrumentWarning)
        return cls(**kw).fit(d["X1"], d["y"], endog=d["X2"], instruments=d["Z2"], absorb=absorb,
                             sample_weight=d["w"], groups=groups)


def slope_block(o, p1, p2):
    """Indices of the oracle's X1, X2 coefficients (after the intercept or the dummies)."""
    start = o["n_exo_dummies"] if o["n_exo_dummies"] else 1
    return np.arange(start, start + p1 + p2)


def model_block(m, p1, p2):
    start = 1 if m._model.has_intercept else 0
    return np.arange(start, start + p1 + p2)


# -- against the numpy oracle ---------------------------------------------------------------------

CASES = [
    dict(seed=0, n=200, p1=2, p2=1, q=1),
    dict(seed=1, n=300, p1=1, p2=2, q=3),
    dict(seed=2, n=250, p1=0, p2=1, q=3, weights=True),
    dict(seed=3, n=400, p1=2, p2=1, q=2, n_fe=(20,)),
    dict(seed=4, n=400, p1=1, p2=2, q=4, n_fe=(15, 8), weights=True),
    dict(seed=5, n=300, p1=2, p2=1, q=2, n_fe=(10,), weights=True, zero_weights=12),
]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("est", ["2sls", "liml", "fuller"])
def test_coefficients_and_covariances_match_numpy(case, est):
    d = make_data(**case)
    cls, kw, okw = IV2SLS, {}, {}
    if est == "liml":
        cls, okw = IVLIML, dict(liml=True)
    elif est == "fuller":
        cls, kw, okw = IVLIML, dict(fuller=1.0), dict(liml=True, fuller=1.0)
    o = oracle(d, **okw)
    p1, p2 = d["X1"].shape[1], d["X2"].shape[1]
    ob, mb = slope_block(o, p1, p2), model_block(fit(d, cls, **kw), p1, p2)
    rng = np.random.default_rng(case["seed"] + 100)
    cl1 = rng.integers(0, 25, size=len(d["y"]))
    cl2 = np.column_stack([cl1, rng.integers(0, 17, size=len(d["y"]))])
    for cov_type, groups in [("nonrobust", None), ("HC0", None), ("HC1", None), ("HC2", None),
                             ("HC3", None), ("CR0", cl1), ("CR1", cl1), ("CR1", cl2)]:
        m = fit(d, cls, cov_type=cov_type, groups=groups, **kw)
        np.testing.assert_allclose(m.params_.to_numpy()[mb], o["b"][ob], rtol=RTOL, atol=1e-12)
        if est != "2sls" and d["fes"] and cov_type == "nonrobust":
            # k of the Fuller modification counts the dummies in L (as the oracle's rank).
            assert m.k_ == pytest.approx(o["k"], rel=1e-10)
        if cov_type in ("HC2", "HC3") and est != "2sls":
            continue  # leverage of P_Z X: the same definition, checked for 2SLS
        if cov_type == "CR1" and d["fes"]:
            continue  # K counting of nested levels: the OLS path's rule (tested there)
        V = m.cov_params().to_numpy()[np.ix_(mb, mb)]
        Vo = oracle_cov(o, cov_type, groups)
        if cov_type == "CR1" and np.ndim(groups) == 2:
            w_, U = np.linalg.eigh(Vo)
            if w_.min() < 0:
                continue  # eigenvalue-fixed in the core: compared in the PSD case only
        np.testing.assert_allclose(V, Vo[np.ix_(ob, ob)], rtol=1e-7, atol=1e-13,
                                   err_msg=f"{cov_type} {est} {case}")


def test_cr1_with_fixed_effects_not_nested_matches_numpy():
    # Clusters that cut across the levels: every absorbed level is counted in K.
    d = make_data(7, n=500, p1=1, p2=1, q=2, n_fe=(12,))
    o = oracle(d)
    cl = np.random.default_rng(8).integers(0, 30, size=500)
    m = fit(d, cov_type="CR1", groups=cl)
    mb, ob = model_block(m, 1, 1), slope_block(o, 1, 1)
    np.testing.assert_allclose(m.cov_params().to_numpy()[np.ix_(mb, mb)],
                               oracle_cov(o, "CR1", cl)[np.ix_(ob, ob)], rtol=1e-7)


# -- attention weights --------------------------------------------------------------------------

@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("cls", [IV2SLS, IVLIML])
def test_attention_weights_reproduce_predictions(case, cls):
    d = make_data(**case)
    m = fit(d, cls)
    absorb = None
    if d["fes"]:
        absorb = np.column_stack(d["fes"]) if len(d["fes"]) > 1 else d["fes"][0]
    A = m.attention_weights(d["X1"], endog=d["X2"], absorb=absorb)
    pred = m.predict(d["X1"], endog=d["X2"], absorb=absorb)
    scale = np.abs(d["y"]).max()
    np.testing.assert_allclose(A @ d["y"], pred, rtol=0, atol=1e-8 * scale)
    # In-sample predictions are the fitted values y - e (rows of weight 0: the prediction).
    np.testing.assert_allclose(pred, m._model.fitted()[:, 0] if m._model.fitted().ndim == 2
                               else m._model.fitted(), atol=1e-8 * scale)
    if d["w"] is not None:
        assert np.all(A[:, d["w"] == 0] == 0)
    # New rows at other regressor values.
    rng = np.random.default_rng(1)
    X1n = rng.normal(size=(7, d["X1"].shape[1]))
    X2n = rng.normal(size=(7, d["X2"].shape[1]))
    ab = None if absorb is None else absorb[:7]
    np.testing.assert_allclose(m.attention_weights(X1n, endog=X2n, absorb=ab) @ d["y"],
                               m.predict(X1n, endog=X2n, absorb=ab), atol=1e-8 * scale)


def test_2sls_attention_is_linear_smoother_of_projection():
    # Without fixed effects: A = X (X'P_Z X)^{-1} X'P_Z exactly.
    d = make_data(11, n=120, p1=1, p2=1, q=3)
    m = fit(d)
    n = len(d["y"])
    X = np.column_stack([np.ones(n), d["X1"], d["X2"]])
    Z = np.column_stack([np.ones(n), d["X1"], d["Z2"]])
    Pz = Z @ np.linalg.pinv(Z)
    A = X @ np.linalg.solve(X.T @ Pz @ X, X.T @ Pz)
    np.testing.assert_allclose(m.attention_weights(d["X1"], endog=d["X2"]), A, atol=1e-10)


# -- linearmodels --------------------------------------------------------------------------------

lm_iv = pytest.importorskip("linearmodels.iv")


def _lm_fit(d, model, cov_type, debiased, clusters=None, **kw):
    n = len(d["y"])
    exog = np.column_stack([np.ones(n), d["X1"]])
    mod = model(d["y"], exog, d["X2"], d["Z2"], weights=d["w"], **kw)
    ckw = {"clusters": clusters} if clusters is not None else {}
    return mod.fit(cov_type=cov_type, debiased=debiased, **ckw)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("weighted", [False, True])
def test_linearmodels_2sls_and_liml(seed, weighted):
    d = make_data(seed, n=350, p1=2, p2=2, q=4, weights=weighted)
    cl = np.random.default_rng(seed).integers(0, 30, size=350)
    pairs = [("nonrobust", "unadjusted", True, None), ("HC1", "robust", True, None),
             ("HC0", "robust", False, None), ("CR1", "clustered", True, cl),
             ("CR0", "clustered", False, cl)]
    for ours, theirs, debiased, groups in pairs:
        for cls, lmcls, kw in [(IV2SLS, lm_iv.IV2SLS, {}), (IVLIML, lm_iv.IVLIML, {}),
                               (IVLIML, lm_iv.IVLIML, {"fuller": 1.0})]:
            m = fit(d, cls, cov_type=ours, groups=groups, **kw)
            r = _lm_fit(d, lmcls, theirs, debiased, groups, **kw)
            np.testing.assert_allclose(m.params_.to_numpy(), r.params.to_numpy(), rtol=RTOL)
            np.testing.assert_allclose(m.cov_params().to_numpy(), r.cov.to_numpy(), rtol=1e-7,
                                       atol=1e-14, err_msg=f"{ours} {cls.__name__} {kw}")
            if cls is IVLIML:
                assert m.kappa_ == pytest.approx(float(r.kappa if not kw else
                                                       _lm_fit(d, lm_iv.IVLIML, theirs, debiased,
                                                               groups).kappa), rel=1e-9)


@pytest.mark.parametrize("seed", [3, 4])
def test_linearmodels_diagnostics(seed):
    d = make_data(seed, n=400, p1=1, p2=1, q=3)
    m = fit(d)
    r = _lm_fit(d, lm_iv.IV2SLS, "unadjusted", True)
    # Sargan: N e'P_Z e / e'e.
    assert m.overid_["statistic"] == pytest.approx(r.sargan.stat, rel=1e-9)
    assert m.overid_["p_value"] == pytest.approx(r.sargan.pval, rel=1e-7)
    wh = r.wu_hausman()
    assert m.wu_hausman_["statistic"] == pytest.approx(wh.stat, rel=1e-9)
    assert m.wu_hausman_["df2"] == wh.df_denom
    # First stage: the iid partial F equals linearmodels' under unadjusted covariance.
    fs = r.first_stage.diagnostics
    assert m.first_stage_["table"]["partial_f"].iloc[0] == pytest.approx(
        fs["f.stat"].iloc[0], rel=1e-9)
    assert m.first_stage_["table"]["partial_r2"].iloc[0] == pytest.approx(
        fs["partial.rsquared"].iloc[0], rel=1e-9)
    # One endogenous regressor: Cragg-Donald F = the iid partial F.
    assert m.first_stage_["cragg_donald_f"] == pytest.approx(
        m.first_stage_["table"]["partial_f"].iloc[0], rel=1e-10)


@pytest.mark.parametrize("cov", [("HC0", "robust", None), ("CR0", "clustered", "cl")])
def test_hansen_j_matches_linearmodels_gmm(cov):
    ours, theirs, use_cl = cov
    d = make_data(5, n=400, p1=1, p2=1, q=3)
    cl = np.random.default_rng(5).integers(0, 40, size=400)
    groups = cl if use_cl else None
    m = fit(d, cov_type=ours, groups=groups)
    n = 400
    exog = np.column_stack([np.ones(n), d["X1"]])
    wkw = {"weight_type": "clustered", "clusters": cl} if use_cl else {"weight_type": "robust"}
    g = lm_iv.IVGMM(d["y"], exog, d["X2"], d["Z2"], center=False, **wkw).fit(
        iter_limit=2, cov_type=theirs, **({"clusters": cl} if use_cl else {}))
    # linearmodels' J: N g'W g with W from the 2SLS residuals, at the two-step estimate.
    assert m.overid_["statistic"] == pytest.approx(g.j_stat.stat, rel=1e-6)


def test_statsmodels_iv2sls_classical():
    # statsmodels' IV2SLS (sandbox) offers the classical covariance, s^2 = e'e / (N - p).
    from statsmodels.sandbox.regression.gmm import IV2SLS as SMIV2SLS

    for seed in (0, 1):
        d = make_data(seed, n=250, p1=2, p2=1, q=3)
        n = 250
        X = np.column_stack([np.ones(n), d["X1"], d["X2"]])
        Z = np.column_stack([np.ones(n), d["X1"], d["Z2"]])
        r = SMIV2SLS(d["y"], X, Z).fit()
        m = fit(d)
        np.testing.assert_allclose(m.params_.to_numpy(), r.params, rtol=RTOL)
        np.testing.assert_allclose(m.bse_.to_numpy(), r.bse, rtol=1e-8)


# -- pyfixest -----------------------------------------------------------------------------------

pf = pytest.importorskip("pyfixest")


def _frame(d):
    df = pd.DataFrame({"y": d["y"], "x1": d["X1"][:, 0], "x2": d["X2"][:, 0],
                       "z1": d["Z2"][:, 0], "z2": d["Z2"][:, 1]})
    for j, f in enumerate(d["fes"]):
        df[f"f{j + 1}"] = f
    rng = np.random.default_rng(len(d["y"]))
    df["c"] = rng.integers(0, 40, size=len(d["y"]))
    df["c2"] = rng.integers(0, 15, size=len(d["y"]))
    if d["w"] is not None:
        df["w"] = d["w"]
    return df


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("fe", ["f1", "f1 + f2"])
def test_pyfixest_fixed_effects(seed, fe):
    d = make_data(seed, n=600, p1=1, p2=1, q=2, n_fe=(30, 12))
    df = _frame(d)
    # Clusters that cut across the fixed effects: every absorbed level counts in K for both.
    # (With a factor nested in the clusters, fixest and pyfixest keep one parameter for the
    # intercept that the OLS path's K drops: a (N-1)/(N-K) factor off by one parameter.)
    for vcov, ours, groups in [("iid", "nonrobust", None), ("hetero", "HC1", None),
                               ({"CRV1": "c"}, "CR1", "c"), ({"CRV1": "c+c2"}, "CR1", ["c", "c2"])]:
        r = pf.feols(f"y ~ x1 | {fe} | x2 ~ z1 + z2", data=df, vcov=vcov)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", WeakInstrumentWarning)
            warnings.simplefilter("ignore", UserWarning)
            m = attnreg.iv(f"y ~ x1 | {fe} | x2 ~ z1 + z2", df, cov_type=ours, groups=groups)
        np.testing.assert_allclose(m.params_[["x1", "x2"]].to_numpy(),
                                   r.coef()[["x1", "x2"]].to_numpy(), rtol=1e-8)
        if m.cov_fixed_:
            continue  # eigenvalue-fixed two-way covariance: pyfixest reports the raw one
        np.testing.assert_allclose(m.bse_[["x1", "x2"]].to_numpy(),
                                   r.se()[["x1", "x2"]].to_numpy(), rtol=1e-6,
                                   err_msg=f"{vcov} {fe}")


def test_pyfixest_weights():
    d = make_data(9, n=500, p1=1, p2=1, q=2, n_fe=(25,), weights=True)
    df = _frame(d)
    r = pf.feols("y ~ x1 | f1 | x2 ~ z1 + z2", data=df, vcov="hetero", weights="w")
    m = attnreg.iv("y ~ x1 | f1 | x2 ~ z1 + z2", df, cov_type="HC1", weights="w")
    np.testing.assert_allclose(m.params_.to_numpy(), r.coef().to_numpy(), rtol=1e-8)
    np.testing.assert_allclose(m.bse_.to_numpy(), r.se().to_numpy(), rtol=1e-6)


# -- Kleibergen-Paap -----------------------------------------------------------------------------

def kp_paper(X, Z, meat):
    """Kleibergen and Paap (2006), sec. 3 with their A_q, B_q (not the simplified form of the
    core): rank q = k - 1 test of Pi in X = Z Pi + V, X and Z partialled."""
    n, k = X.shape
    L = Z.shape[1]
    Pi = np.linalg.solve(Z.T @ Z, Z.T @ X)
    F = np.linalg.cholesky(Z.T @ Z).T
    G = np.linalg.cholesky(X.T @ X).T
    Th = F @ Pi @ np.linalg.inv(G)
    U, S, Vt = np.linalg.svd(Th)
    V = Vt.T
    q = k - 1
    U22, V22 = U[q:, q:], V[q:, q:]
    from scipy.linalg import sqrtm
    Aq = U[:, q:] @ np.linalg.inv(U22) @ np.real(sqrtm(U22 @ U22.T))
    Bq = np.real(sqrtm(V22 @ V22.T)) @ np.linalg.inv(V22.T) @ V[:, q:].T
    lam = (np.kron(Bq, Aq.T) @ Th.reshape(-1, order="F"))
    ZZi = np.linalg.inv(Z.T @ Z)
    Vpi = np.kron(np.eye(k), ZZi) @ meat @ np.kron(np.eye(k), ZZi)
    T = np.kron(np.linalg.inv(G).T, F)
    Vth = T @ Vpi @ T.T
    Om = np.kron(Bq, Aq.T) @ Vth @ np.kron(Bq, Aq.T).T
    return float(lam @ np.linalg.solve(Om, lam))


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("p2,q", [(1, 3), (2, 2), (2, 4)])
def test_kleibergen_paap_matches_paper_formula(seed, p2, q):
    d = make_data(seed, n=300, p1=1, p2=p2, q=q)
    cl = np.random.default_rng(seed).integers(0, 35, size=300)
    n = 300
    E = np.column_stack([np.ones(n), d["X1"]])
    M = np.eye(n) - E @ np.linalg.pinv(E)
    X, Z = M @ d["X2"], M @ d["Z2"]
    Vres = X - Z @ np.linalg.lstsq(Z, X, rcond=None)[0]
    S = np.hstack([Z * Vres[:, [j]] for j in range(p2)])
    for cov_type, groups in [("HC0", None), ("HC1", None), ("CR1", cl)]:
        m = fit(d, cov_type=cov_type, groups=groups)
        if groups is None:
            meat = S.T @ S
        else:
            meat = sum(np.outer(S[cl == g].sum(0), S[cl == g].sum(0)) for g in np.unique(cl))
        rk = kp_paper(X, Z, meat)
        assert m.first_stage_["kleibergen_paap_rk"] == pytest.approx(rk, rel=1e-8)
        if p2 == 1:
            # One endogenous regressor: the KP F is the robust first-stage F.
            assert m.first_stage_["kleibergen_paap_f"] == pytest.approx(
                m.first_stage_["table"]["partial_f"].iloc[0], rel=1e-9)


def test_cragg_donald_two_endogenous_matches_numpy():
    d = make_data(3, n=300, p1=1, p2=2, q=3)
    m = fit(d)
    n = 300
    E = np.column_stack([np.ones(n), d["X1"]])
    M = np.eye(n) - E @ np.linalg.pinv(E)
    X, Z = M @ d["X2"], M @ d["Z2"]
    P = Z @ np.linalg.pinv(Z)
    ev = np.linalg.eigvals(np.linalg.solve(X.T @ (np.eye(n) - P) @ X, X.T @ P @ X))
    cd = ev.real.min() * (n - 2 - 3) / 3
    assert m.first_stage_["cragg_donald_f"] == pytest.approx(cd, rel=1e-9)


# -- formula, summary, pickling ------------------------------------------------------------------

def test_formula_without_fixed_effects_and_predict_from_data():
    d = make_data(2, n=200, p1=1, p2=1, q=2)
    df = _frame(d)
    m = attnreg.iv("y ~ x1 | x2 ~ z1 + z2", df)
    e = fit(d)
    np.testing.assert_allclose(m.params_.to_numpy(), e.params_.to_numpy(), rtol=1e-12)
    assert list(m.params_.index) == ["Intercept", "x1", "x2"]
    np.testing.assert_allclose(m.predict(df.iloc[:5]), e.predict(d["X1"][:5], endog=d["X2"][:5]))
    np.testing.assert_allclose(m.attention_weights(df.iloc[:5]) @ d["y"], m.predict(df.iloc[:5]),
                               atol=1e-9)
    s = m.summary()
    assert "x2" in str(s) and "Sargan" in str(s)
    ci = m.conf_int(level=0.9)
    assert (ci["lower"] < m.params_).all() and (m.params_ < ci["upper"]).all()
    with pytest.raises(ValueError, match="level is a fraction"):
        m.conf_int(level=95)


def test_formula_drops_missing_rows():
    d = make_data(4, n=150, p1=1, p2=1, q=2)
    df = _frame(d)
    df.loc[3, "z1"] = np.nan
    df.loc[7, "y"] = np.nan
    m = attnreg.iv("y ~ x1 | x2 ~ z1 + z2", df)
    assert m.n_dropped_ == 2 and m.n_obs_ == 148


def test_pickle_roundtrip():
    import pickle
    d = make_data(6, n=200, p1=1, p2=1, q=2, n_fe=(10,))
    m = fit(d, cov_type="HC1")
    m2 = pickle.loads(pickle.dumps(m))
    np.testing.assert_array_equal(m2.params_.to_numpy(), m.params_.to_numpy())
    args = (d["X1"][:3],)
    kw = dict(endog=d["X2"][:3], absorb=d["fes"][0][:3])
    np.testing.assert_array_equal(m2.predict(*args, **kw), m.predict(*args, **kw))


# -- awkward cases -------------------------------------------------------------------------------

def test_one_cluster_dominating():
    d = make_data(8, n=300, p1=1, p2=1, q=2)
    cl = np.where(np.arange(300) < 250, 0, np.arange(300) % 10 + 1)
    o = oracle(d)
    m = fit(d, cov_type="CR1", groups=cl)
    np.testing.assert_allclose(m.cov_params().to_numpy(), oracle_cov(o, "CR1", cl), rtol=1e-7)


def test_near_collinear_instruments_still_agree():
    d = make_data(10, n=300, p1=1, p2=1, q=2)
    d["Z2"][:, 1] = d["Z2"][:, 0] + 1e-4 * np.random.default_rng(0).normal(size=300)
    o = oracle(d)
    m = fit(d, cov_type="HC1")
    # Condition number of Z about 1e4: the bound grows with it.
    np.testing.assert_allclose(m.params_.to_numpy(), o["b"], rtol=1e-6)


def test_zero_weights_equal_dropping_rows():
    d = make_data(12, n=200, p1=1, p2=1, q=2, n_fe=(8,), weights=True, zero_weights=20)
    m = fit(d, cov_type="HC1")
    keep = d["w"] > 0
    d2 = dict(y=d["y"][keep], X1=d["X1"][keep], X2=d["X2"][keep], Z2=d["Z2"][keep],
              fes=[f[keep] for f in d["fes"]], w=d["w"][keep])
    m2 = fit(d2, cov_type="HC1")
    np.testing.assert_allclose(m.params_.to_numpy(), m2.params_.to_numpy(), rtol=1e-10)
    np.testing.assert_allclose(m.bse_.to_numpy(), m2.bse_.to_numpy(), rtol=1e-10)
    assert m.n_obs_ == keep.sum()


# -- bad input -----------------------------------------------------------------------------------

def test_too_few_instruments():
    d = make_data(0, n=100, p1=1, p2=2, q=1)
    with pytest.raises(ValueError, match="not identified"):
        IV2SLS().fit(d["X1"], d["y"], endog=d["X2"], instruments=d["Z2"])
    df = _frame(make_data(0, n=100, p1=1, p2=1, q=2))
    with pytest.raises(ValueError, match="not identified"):
        attnreg.iv("y ~ 1 | x1 + x2 ~ z1", df)


def test_instrument_collinear_with_fixed_effects_is_named():
    d = make_data(1, n=200, p1=1, p2=1, q=2, n_fe=(10,))
    df = _frame(d)
    df["zfe"] = np.cos(df["f1"]) * 3.0  # constant within the levels of f1
    with pytest.raises(ValueError, match="instrument zfe: is collinear with the fixed effects"):
        attnreg.iv("y ~ x1 | f1 | x2 ~ z1 + zfe", df)


def test_instrument_collinear_with_exogenous_is_named():
    df = _frame(make_data(1, n=200, p1=1, p2=1, q=2))
    df["zx"] = 2 * df["x1"] - df["z1"]
    with pytest.raises(ValueError, match="instrument zx: is collinear with the exogenous"):
        attnreg.iv("y ~ x1 | x2 ~ z1 + zx", df)


def test_weak_instruments_warn_with_the_f_statistic():
    d = make_data(2, n=300, p1=1, p2=1, q=2, strength=0.02)
    with pytest.warns(WeakInstrumentWarning, match=r"Cragg-Donald Wald F = [0-9.]+"):
        IV2SLS().fit(d["X1"], d["y"], endog=d["X2"], instruments=d["Z2"])
    with pytest.warns(WeakInstrumentWarning, match=r"Kleibergen-Paap rk Wald F"):
        IV2SLS(cov_type="HC1").fit(d["X1"], d["y"], endog=d["X2"], instruments=d["Z2"])


def test_unsupported_covariances_are_refused():
    d = make_data(3, n=100, p1=1, p2=1, q=2)
    with pytest.raises(ValueError, match="cov_type"):
        IV2SLS(cov_type="HAC").fit(d["X1"], d["y"], endog=d["X2"], instruments=d["Z2"])
    with pytest.raises(ValueError, match="groups"):
        IV2SLS(cov_type="CR1").fit(d["X1"], d["y"], endog=d["X2"], instruments=d["Z2"])


# -- a published example --------------------------------------------------------------------------

def test_mroz_published_values():
    # Wooldridge, Introductory Econometrics: A Modern Approach, ch. 15, MROZ working women
    # (428 rows): log(wage) on exper, exper^2 and educ instrumented by motheduc and fatheduc.
    # Published (rounded, so the tolerance is half a unit of the last printed digit): educ
    # 0.0614 (se 0.0314), Example 15.5; the reduced-form F of the instruments 55.40; the
    # regression-based endogeneity test t = 1.67 on the first-stage residual, Example 15.7;
    # Sargan's n R^2 = 0.378 (p = 0.54), Example 15.8.
    mroz = pytest.importorskip("linearmodels.datasets.mroz")
    d = mroz.load().dropna(subset=["wage"])
    m = attnreg.iv("lwage ~ exper + expersq | educ ~ motheduc + fatheduc", d)
    assert m.n_obs_ == 428
    assert abs(m.params_["educ"] - 0.0614) <= 5e-5
    assert abs(m.bse_["educ"] - 0.0314) <= 5e-5
    assert abs(m.first_stage_["table"]["partial_f"].iloc[0] - 55.40) <= 5e-3
    assert abs(np.sqrt(m.wu_hausman_["statistic"]) - 1.67) <= 5e-3
    assert abs(m.overid_["statistic"] - 0.378) <= 5e-4
    assert abs(m.overid_["p_value"] - 0.54) <= 5e-3
