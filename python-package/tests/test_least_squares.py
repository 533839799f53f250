"""Ridge, PCR, AttentionRegression, masked attention and the NIST table (issue 6): scikit-learn
conformance, agreement with scikit-learn's Ridge/RidgeCV and direct numpy oracles, the identities
of seed 004, exact LOO against refitting, masked-vs-recursive pseudo-out-of-sample on an AR(1)."""
import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import Ridge as SkRidge
from sklearn.linear_model import RidgeCV
from sklearn.utils.estimator_checks import parametrize_with_checks

import attnreg


@parametrize_with_checks([
    attnreg.OLS(cov_type="HC1"),
    attnreg.Ridge(alpha=0.5),
    attnreg.Ridge(alpha=[0.1, 1.0, 10.0], criterion="gcv"),
    attnreg.PCR(),
    attnreg.AttentionRegression(n_starts=2, max_iter=100),
])
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        check(estimator)


def _design(n, p, seed, k=None):
    rng = np.random.default_rng(seed)
    X = rng.normal(1.0, 2.0, size=(n, p))
    y = X @ np.linspace(-1, 1, p) + rng.normal(size=n) if k is None else rng.normal(size=(n, k))
    return X, y


@pytest.mark.parametrize("n,p,intercept,alpha", [(50, 4, True, 0.3), (50, 4, False, 3.0),
                                                 (300, 20, True, 10.0), (10, 25, True, 1.0)])
def test_ridge_matches_sklearn_and_identities(n, p, intercept, alpha):
    X, y = _design(n, p, n + p)
    m = attnreg.Ridge(alpha=alpha, fit_intercept=intercept).fit(X, y)
    sk = SkRidge(alpha=alpha, fit_intercept=intercept, solver="svd").fit(X, y)
    np.testing.assert_allclose(m.coef_, sk.coef_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(m.intercept_, sk.intercept_, rtol=1e-9, atol=1e-12)
    Xt = np.random.default_rng(1).normal(size=(7, p))
    A = m.attention_weights(Xt)
    np.testing.assert_allclose(A @ y, m.predict(Xt), rtol=1e-10, atol=1e-10)
    if intercept:
        np.testing.assert_allclose(A.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(m.factors(Xt) @ m.factors().T, A, atol=1e-12)
    D = np.column_stack([np.ones(n), X]) if intercept else X
    Dt = np.column_stack([np.ones(7), Xt]) if intercept else Xt
    P = alpha * np.eye(D.shape[1])
    if intercept:
        P[0, 0] = 0
    np.testing.assert_allclose(m.embedding(), np.linalg.inv(D.T @ D + P), rtol=1e-8,
                               atol=1e-12)  # eqs. 29-30
    np.testing.assert_allclose(Dt @ m.embedding() @ D.T, A, atol=1e-11)


def test_ridge_to_ols_and_path():
    X, y = _design(60, 5, 2)
    ols = attnreg.OLS().fit(X, y)
    gaps = [np.abs(attnreg.Ridge(alpha=a).fit(X, y).coef_ - ols.coef_).max() for a in (1, 1e-3, 1e-6)]
    assert gaps[0] > gaps[1] > gaps[2] and gaps[2] < 1e-8
    m = attnreg.Ridge(alpha=1.0).fit(X, y)
    alphas = np.logspace(-2, 2, 5)
    path = m.coef_path(alphas)
    for g, a in enumerate(alphas):
        sk = SkRidge(alpha=a).fit(X, y)
        np.testing.assert_allclose(path[g], np.concatenate(([sk.intercept_], sk.coef_)), rtol=1e-9)


@pytest.mark.parametrize("intercept", [True, False])
def test_ridge_loo_equals_refitting_and_ridgecv(intercept):
    X, Y = _design(30, 4, 5, k=2)
    m = attnreg.Ridge(alpha=2.0, fit_intercept=intercept).fit(X, Y)
    loo = m.loo_predictions()
    for i in range(30):
        keep = np.arange(30) != i
        one = attnreg.Ridge(alpha=2.0, fit_intercept=intercept).fit(X[keep], Y[keep])
        np.testing.assert_allclose(one.predict(X[i:i + 1])[0], loo[i], atol=1e-11)
    alphas = np.logspace(-2, 3, 11)
    grid = attnreg.Ridge(alpha=alphas, fit_intercept=intercept, criterion="loo").fit(X, Y)
    sk = RidgeCV(alphas=alphas, fit_intercept=intercept, store_cv_results=True).fit(X, Y)
    np.testing.assert_allclose(grid.cv_results_["loo_mse"], sk.cv_results_.mean(axis=(0, 1)),
                               rtol=1e-9)
    assert grid.alpha_ == pytest.approx(sk.alpha_)
    for crit in ("gcv", "aicc"):
        g = attnreg.Ridge(alpha=alphas, criterion=crit).fit(X, Y)
        assert g.alpha_ == alphas[np.argmin(g.cv_results_[crit])]


def test_pcr_identities_and_ols_limit():
    X, y = _design(80, 6, 9)
    for L in (1, 3, 6):
        m = attnreg.PCR(rank=L).fit(X, y)
        F = m.factors()
        np.testing.assert_allclose(F.T @ F, np.eye(L + 1), atol=1e-12)  # eq. 24
        Xt = X[:5] + 0.1
        np.testing.assert_allclose(m.factors(Xt) @ F.T, m.attention_weights(Xt), atol=1e-12)  # eq. 25
        # oracle: OLS on the first L principal component scores of the centred X
        Xc = X - X.mean(axis=0)
        U, s, Vt = np.linalg.svd(Xc, full_matrices=False)
        Z = Xc @ Vt[:L].T
        theta = np.linalg.lstsq(Z, y - y.mean(), rcond=None)[0]
        np.testing.assert_allclose(m.coef_, Vt[:L].T @ theta, rtol=1e-9, atol=1e-12)
    full = attnreg.PCR(rank=6).fit(X, y)
    ols = attnreg.OLS().fit(X, y)
    np.testing.assert_allclose(full.coef_, ols.coef_, rtol=1e-10)
    np.testing.assert_allclose(attnreg.PCR().fit(X, y).coef_, ols.coef_, rtol=1e-10)
    with pytest.raises(ValueError, match="numerical rank"):
        attnreg.PCR(rank=7).fit(X, y)
    with pytest.raises(ValueError, match="rank"):
        attnreg.PCR(rank=-1).fit(X, y)


def test_pickle_round_trips():
    X, y = _design(40, 3, 4)
    for est in (attnreg.Ridge(alpha=[0.1, 1.0]), attnreg.PCR(rank=2),
                attnreg.AttentionRegression(n_starts=1, max_iter=50)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            m = est.fit(X, y)
        b = pickle.loads(pickle.dumps(m))
        np.testing.assert_array_equal(b.predict(X), m.predict(X))
        np.testing.assert_allclose(b.attention_weights(X[:3]), m.attention_weights(X[:3]), atol=1e-15)


# ------------------------------------------------------------------- attention regression (eq. 28)
def test_attention_regression_gradient_and_weights():
    rng = np.random.default_rng(0)
    D = np.column_stack([np.ones(30), rng.normal(size=(30, 2))])
    Y, W = rng.normal(size=(30, 1)), rng.normal(size=(3, 2)) * 0.5
    f, G = attnreg._core.attention_regression_objective(D, Y, W)
    S = D @ W @ W.T @ D.T
    np.fill_diagonal(S, -np.inf)
    A = np.exp(S - S.max(axis=1, keepdims=True))
    A /= A.sum(axis=1, keepdims=True)
    assert f == pytest.approx(np.mean((A @ Y - Y) ** 2), rel=1e-13)
    h = 1e-6
    for i in range(3):
        for j in range(2):
            Wp, Wm = W.copy(), W.copy()
            Wp[i, j] += h
            Wm[i, j] -= h
            fd = (attnreg._core.attention_regression_objective(D, Y, Wp)[0]
                  - attnreg._core.attention_regression_objective(D, Y, Wm)[0]) / (2 * h)
            assert G[i, j] == pytest.approx(fd, rel=1e-6, abs=1e-9)


def _nw_oracle(Xtr, y, Xte, h):
    d2 = ((Xte[:, None, :] - Xtr[None, :, :]) ** 2).sum(-1)
    w = np.exp(-0.5 * (d2 - d2.min(axis=1, keepdims=True)) / h**2)
    return (w @ y) / w.sum(axis=1)


def _nw_cv(Xtr, y):
    d2 = ((Xtr[:, None, :] - Xtr[None, :, :]) ** 2).sum(-1)
    best = None
    for h in np.logspace(-1.5, 0.5, 25):
        w = np.exp(-0.5 * d2 / h**2)
        np.fill_diagonal(w, 0)
        cv = np.mean((y - (w @ y) / w.sum(axis=1)) ** 2)
        if best is None or cv < best[0]:
            best = (cv, h)
    return best[1]


def test_attention_regression_out_of_sample_vs_ols_and_nw():
    """y = tanh(2 x1) + 0.5 x2^2 + noise: attention regression beats OLS out of sample; NW (direct
    numpy oracle, bandwidth by leave-one-out CV) is the nonparametric benchmark."""
    rng = np.random.default_rng(42)
    f = lambda X: np.tanh(2 * X[:, 0]) + 0.5 * X[:, 1] ** 2  # noqa: E731
    Xtr, Xte = rng.normal(size=(400, 2)), rng.normal(size=(2000, 2))
    ytr = f(Xtr) + 0.3 * rng.normal(size=400)
    mse = lambda p: float(np.mean((p - f(Xte)) ** 2))  # noqa: E731
    ols = mse(attnreg.OLS().fit(Xtr, ytr).predict(Xte))
    ar = attnreg.AttentionRegression(rank=3, n_starts=4).fit(Xtr, ytr)
    mse_ar = mse(ar.predict(Xte))
    mse_nw = mse(_nw_oracle(Xtr, ytr, Xte, _nw_cv(Xtr, ytr)))
    print(f"out-of-sample MSE vs truth: OLS {ols:.4f}  AttentionRegression {mse_ar:.4f}  NW {mse_nw:.4f}")
    assert mse_ar < 0.6 * ols
    assert mse_nw < ols
    A = ar.attention_weights(Xte[:10])
    assert A.min() >= 0 and np.allclose(A.sum(axis=1), 1.0)
    np.testing.assert_allclose(A @ ytr, ar.predict(Xte[:10]), rtol=1e-12)
    assert ar.objective_ == pytest.approx(np.mean((ar.loo_predictions() - ytr) ** 2), rel=1e-12)


def test_attention_regression_bad_input():
    with pytest.raises(ValueError, match="1 sample"):
        attnreg.AttentionRegression().fit(np.ones((1, 2)), np.ones(1))
    with pytest.raises(ValueError, match="rank"):
        attnreg.AttentionRegression(rank=0).fit(np.ones((5, 2)), np.arange(5.0))


# ------------------------------------------------------------------- masked weights (eq. 35)
def _ar1(n, seed):
    rng = np.random.default_rng(seed)
    s = np.zeros(n + 1)
    for t in range(1, n + 1):
        s[t] = 0.3 + 0.6 * s[t - 1] + rng.normal()
    return s[:-1].reshape(-1, 1), s[1:]


def test_masked_weights_vs_recursive_on_ar1():
    X, y = _ar1(60, 1)
    m = attnreg.OLS().fit(X, y)
    D = np.column_stack([np.ones(60), X])
    H = D @ np.linalg.inv(D.T @ D) @ D.T  # oracle hat matrix
    W = m.masked_weights(strict=True)
    for t in range(1, 60):
        expect = H[t, :t] / H[t, :t].sum()
        np.testing.assert_allclose(W[t, :t], expect, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(m.masked_predictions(strict=True)[1:], (W @ y)[1:], rtol=1e-9)
    res = attnreg.pseudo_out_of_sample(X, y, start=10, keep_weights=True)
    for j, t in enumerate(res.rows):
        b = np.linalg.lstsq(D[:t], y[:t], rcond=None)[0]  # honest refit on rows < t
        assert res.recursive[j] == pytest.approx(D[t] @ b, abs=1e-10)
        assert res.masked[j] == pytest.approx(W[t] @ y, abs=1e-9)
    # leakage: change only the future; recursive forecasts of the past stay, masked ones move
    y2, X2 = y.copy(), X.copy()
    y2[50:] += 8.0
    X2[51:, 0] = y2[50:-1]
    res2 = attnreg.pseudo_out_of_sample(X2, y2, start=10)
    np.testing.assert_allclose(res2.recursive[:40], res.recursive[:40], atol=1e-12)
    assert np.abs(res2.masked[:40] - res.masked[:40]).max() > 1e-3


def test_masked_vs_recursive_on_usmacro(data_dir):
    """The paper's inflation example in miniature: masked (full-sample Omega) versus honest
    recursive forecasts of quarterly US inflation from its lag and unemployment."""
    d = pd.read_csv(data_dir / "usmacro.csv").dropna().reset_index(drop=True)
    infl = d["inflation"].to_numpy()
    X = np.column_stack([infl[:-1], d["unemp"].to_numpy()[:-1]])
    y = infl[1:]
    res = attnreg.pseudo_out_of_sample(X, y, start=40)
    print(f"usmacro inflation, {len(res.rows)} forecasts: MSE recursive {res.mse_recursive:.3f}, "
          f"masked {res.mse_masked:.3f}, in-sample {res.mse_in_sample:.3f}; mean weight gap "
          f"{res.weight_gap.mean():.3f}")
    assert res.mse_in_sample < res.mse_recursive
    assert res.weight_gap.mean() > 0.01


# ------------------------------------------------------------------- NIST StRD, all eleven sets
# The floors follow from the first-order error bound of a backward-stable QR least-squares solve
# (Higham 2002, Accuracy and Stability of Numerical Algorithms, 2nd ed., Theorem 20.3, with the
# dimension constant p of the LAPACK Users' Guide, 3rd ed., section 4.5.1), which also
# bounds how far the exact solution of the double-rounded data lies from the certified one: with
# kappa the condition number of the column-equilibrated design, u = 2^-53, p columns,
#   coefficient k: p u kappa (1 + kappa ||r|| / (||X_s|| ||b_s||)) ||b_s|| / |b_s,k|;
#   standard errors: p u kappa (1 + ||y|| / ||r||),
# plus half a unit in the 15th digit of the certified value (given to 15 digits)
# (tests/test_least_squares_nist.cpp, which prints the table). They hold on any CPU and BLAS.
# The refined default path is also held to R's lm() (R 4.2.2; the R suite measures lm in the
# same run): its LREs are those of the exact solution of the double data, the same everywhere.
NIST = {  # name: (n_params, intercept, lm's LRE of the coefficients, of the standard errors)
    "Norris": (2, True, 11.94, 13.61),
    "Pontius": (3, True, 11.97, 12.34),
    "NoInt1": (1, False, 14.72, 14.50),
    "NoInt2": (1, False, 15.00, 15.00),
    "Filip": (11, True, 0.0, 0.0),       # lm aliases x^10
    "Longley": (7, True, 12.98, 14.17),
    "Wampler1": (6, True, 9.17, 10.03),
    "Wampler2": (6, True, 13.18, 14.87),
    "Wampler3": (6, True, 9.44, 13.32),
    "Wampler4": (6, True, 7.57, 13.73),
    "Wampler5": (6, True, 5.57, 13.73),
}


def _certified_rounding(c):
    """Half a unit in the 15th significant digit of the certified values, relative to them."""
    c = np.abs(np.asarray(c, float))
    with np.errstate(divide="ignore"):
        e = np.floor(np.log10(np.where(c > 0, c, 1.0)))
    return np.where(c > 0, 0.5 * 10.0 ** (e - 14) / np.where(c > 0, c, 1.0), 0.0)


def _nist_floors(X, y, b_cert, se_cert):
    """LRE floors of the coefficients and of the standard errors from the QR error bound."""
    norms = np.linalg.norm(X, axis=0)
    Xs = X / norms
    kappa, u, p = np.linalg.cond(Xs), 2.0**-53, X.shape[1]
    bs = b_cert * norms
    r = y - X @ b_cert
    eta = np.linalg.norm(r) / (np.linalg.norm(Xs, 2) * np.linalg.norm(bs))
    coef_rel = p * u * kappa * (1 + kappa * eta) * np.linalg.norm(bs) / np.abs(bs)
    se_rel = p * u * kappa * (1 + np.linalg.norm(y) / np.linalg.norm(r))
    lre = lambda rel: np.clip(-np.log10(rel), 0, 15)  # noqa: E731
    return (lre(coef_rel + _certified_rounding(b_cert)).min(),
            lre(se_rel + _certified_rounding(se_cert)).min())


def _lre(est, cert):
    err = np.where(cert == 0, np.abs(est), np.abs(est - cert) / np.where(cert == 0, 1, np.abs(cert)))
    with np.errstate(divide="ignore"):
        return np.clip(-np.log10(err), 0, 15)


@pytest.mark.parametrize("name", list(NIST))
def test_nist_strd(data_dir, name):
    npar, icpt, lm_coef, lm_se = NIST[name]
    d = pd.read_csv(data_dir / "nist" / f"{name}.csv")
    cert = pd.read_csv(data_dir / "nist" / f"{name}_certified.csv")
    if name == "Longley":
        X = d.drop(columns="y").to_numpy()
    else:
        X = np.column_stack([np.power(d.x.to_numpy(), k) for k in range(1, npar - icpt + 1)])
    m = attnreg.OLS(fit_intercept=icpt).fit(X, d.y)
    est = np.concatenate(([m.intercept_], m.coef_)) if icpt else m.coef_
    se = np.concatenate(([m.intercept_se_], m.coef_se_)) if icpt else m.coef_se_
    assert m.rank_ == npar
    Xf = np.column_stack([np.ones(len(X)), X]) if icpt else X
    fc, fs = _nist_floors(Xf, d.y.to_numpy(), cert.estimate.to_numpy(), cert.std_error.to_numpy())
    lre_coef = _lre(est, cert.estimate.to_numpy()).min()
    lre_se = _lre(se, cert.std_error.to_numpy()).min()
    assert lre_coef >= fc and lre_se >= fs, (lre_coef, fc, lre_se, fs)
    assert lre_coef >= lm_coef - 0.25 and lre_se >= lm_se - 0.25, (lre_coef, lre_se)
