"""LocalPolynomial, PartiallyLinear and SmoothCoefficient against direct numpy oracles."""
import math
import pathlib

import numpy as np
import pandas as pd
import pytest

import attnreg

DATA = pathlib.Path(__file__).resolve().parents[2] / "data" / "wage1.csv"


def gauss_w(Z, z, h):
    u = (Z - z) / h
    return np.exp(-0.5 * np.sum(u * u, axis=1))


def wls(D, y, w):
    s = np.sqrt(w)
    return np.linalg.lstsq(D * s[:, None], y * s, rcond=None)[0]


def lp_design(X, x0, p):
    d = X - x0
    cols = [np.ones(len(X))]
    if p >= 1:
        cols += [d[:, a] for a in range(d.shape[1])]
    if p >= 2 and d.shape[1] > 1:
        cols += [d[:, a] * d[:, b] for a in range(d.shape[1]) for b in range(a, d.shape[1])]
    else:
        cols += [d[:, 0] ** e for e in range(2, p + 1)]
    return np.column_stack(cols)


def wage1():
    w = pd.read_csv(DATA)
    w["female"] = (w["female"] == "Female").astype(float)
    w["married"] = (w["married"] == "Married").astype(float)
    return w


# ------------------------------------------------------------------ LocalPolynomial

@pytest.mark.parametrize("seed,d,p", [(0, 1, 2), (1, 1, 3), (2, 2, 2), (3, 3, 2)])
def test_local_polynomial_matches_weighted_least_squares(seed, d, p):
    rng = np.random.default_rng(seed)
    n = 90
    X = rng.uniform(size=(n, d))
    X[::4, 0] = np.round(X[::4, 0], 1)  # ties
    y = np.sin(3 * X[:, 0]) + X[:, -1] ** 2 + 0.1 * rng.normal(size=n)
    h = np.full(d, 0.35)
    m = attnreg.LocalPolynomial(degree=p, bandwidth=h).fit(X, y)
    Xq = rng.uniform(0.1, 0.9, size=(6, d))
    pred, g1, W = m.predict(Xq), m.derivative(Xq, order=1), m.attention_weights(Xq)
    g2 = m.derivative(Xq, order=2)
    for r in range(6):
        c = wls(lp_design(X, Xq[r], p), y, gauss_w(X, Xq[r], h))
        assert pred[r] == pytest.approx(c[0], abs=1e-9)
        np.testing.assert_allclose(g1[r], c[1:1 + d], atol=1e-7)
        if d == 1:
            for s in range(p + 1):
                got = m.derivative(Xq[r:r + 1], order=s)[0, 0]
                assert got == pytest.approx(math.factorial(s) * c[s], rel=1e-7, abs=1e-7)
        else:
            idx = 1 + d
            H = m.hessian(Xq[r:r + 1])[0]
            for a in range(d):
                for b in range(a, d):
                    want = 2 * c[idx] if a == b else c[idx]
                    assert H[a, b] == pytest.approx(want, rel=1e-6, abs=1e-6)
                    if a == b:
                        assert g2[r, a] == pytest.approx(want, rel=1e-6, abs=1e-6)
                    idx += 1
    np.testing.assert_allclose(W.sum(axis=1), 1.0, atol=1e-10)
    np.testing.assert_allclose(W @ y, pred, atol=1e-10)


@pytest.mark.filterwarnings("ignore::attnreg.BoundaryWarning")
@pytest.mark.parametrize("bw", ["cv_ls", "aic", 0.3])
def test_degree_zero_and_one_are_nadaraya_watson_and_local_linear(bw):
    rng = np.random.default_rng(5)
    X = rng.uniform(size=(70, 2))
    y = X[:, 0] + np.cos(3 * X[:, 1]) + 0.1 * rng.normal(size=70)
    Xq = rng.uniform(size=(5, 2))
    for p, Ref in [(0, attnreg.NadarayaWatson), (1, attnreg.LocalLinear)]:
        a = attnreg.LocalPolynomial(degree=p, bandwidth=bw).fit(X, y)
        b = Ref(bandwidth=bw).fit(X, y)
        np.testing.assert_array_equal(a.bandwidth_, b.bandwidth_)
        np.testing.assert_array_equal(a.predict(Xq), b.predict(Xq))
        np.testing.assert_array_equal(a.attention_weights(Xq), b.attention_weights(Xq))
        assert a.cv_score_ == b.cv_score_
    np.testing.assert_array_equal(
        attnreg.LocalPolynomial(degree=1, bandwidth=bw).fit(X, y).gradient(Xq),
        attnreg.LocalLinear(bandwidth=bw).fit(X, y).gradient(Xq))


def test_degree_two_cv_selection_and_loo():
    rng = np.random.default_rng(6)
    n = 80
    X = rng.uniform(size=(n, 1)) * 2
    y = np.sin(3 * X[:, 0]) + 0.2 * rng.normal(size=n)
    m = attnreg.LocalPolynomial(degree=2).fit(X, y)
    h = m.bandwidth_
    loo = np.array([
        wls(lp_design(np.delete(X, i, 0), X[i], 2), np.delete(y, i),
            gauss_w(np.delete(X, i, 0), X[i], h))[0] for i in range(n)])
    np.testing.assert_allclose(m.loo_predictions(), loo, atol=1e-9)
    assert m.bandwidth_result_.objective == pytest.approx(np.mean((y - loo) ** 2), rel=1e-9)
    grid = np.geomspace(0.05, 2, 200)
    cvs = [attnreg.LocalPolynomial(degree=2, bandwidth=g).fit(X, y).cv_score_ for g in grid]
    assert m.bandwidth_result_.objective <= min(cvs) + 1e-9


def test_local_polynomial_bad_input():
    X = np.random.default_rng(7).uniform(size=(30, 2))
    y = X[:, 0]
    with pytest.raises(ValueError, match="degree"):
        attnreg.LocalPolynomial(degree=4, bandwidth=0.3).fit(X, y)
    with pytest.raises(ValueError, match="degree"):
        attnreg.LocalPolynomial(degree=3, bandwidth=0.3).fit(X, y)
    m = attnreg.LocalPolynomial(degree=2, bandwidth=0.3).fit(X, y)
    with pytest.raises(ValueError, match="order"):
        m.derivative(X[:2], order=3)
    with pytest.raises(ValueError, match="rot"):
        attnreg.LocalPolynomial(degree=2, bandwidth="rot").fit(X, y)


# ------------------------------------------------------------------ PartiallyLinear

def nw(Z, v, z, h):
    w = gauss_w(Z, z, h)
    return w @ v / w.sum()


@pytest.mark.parametrize("seed", [0, 1])
def test_partially_linear_matches_robinson_oracle(seed):
    rng = np.random.default_rng(seed)
    n, k = 120, 2
    Z = rng.uniform(size=(n, 1))
    X = rng.normal(size=(n, k))
    X[:, 0] += np.sin(4 * Z[:, 0])
    y = X @ np.array([1.0, -0.5]) + np.cos(3 * Z[:, 0]) + 0.2 * rng.normal(size=n)
    bw = np.array([[0.1], [0.15], [0.2]])
    m = attnreg.PartiallyLinear(bandwidth=bw, cov_type="HC1").fit(X, y, Z=Z)
    ey = y - np.array([nw(Z, y, Z[i], bw[0]) for i in range(n)])
    ex = np.column_stack([X[:, j] - np.array([nw(Z, X[:, j], Z[i], bw[1 + j]) for i in range(n)])
                          for j in range(k)])
    beta = np.linalg.lstsq(ex, ey, rcond=None)[0]
    np.testing.assert_allclose(m.coef_, beta, atol=1e-10)
    e = ey - ex @ beta
    B = np.linalg.inv(ex.T @ ex)
    V1 = n / (n - k) * B @ (ex.T * e ** 2) @ ex @ B
    np.testing.assert_allclose(m.coef_se_, np.sqrt(np.diag(V1)), rtol=1e-9)
    s2 = e @ e / (n - k - 1)
    np.testing.assert_allclose(m.coef_table("nonrobust")["std_error"], np.sqrt(s2 * np.diag(B)),
                               rtol=1e-9)
    Zn, Xn = rng.uniform(0.1, 0.9, size=(4, 1)), rng.normal(size=(4, k))
    want = [nw(Z, y, Zn[r], bw[0]) + sum((Xn[r, j] - nw(Z, X[:, j], Zn[r], bw[1 + j])) * beta[j]
                                         for j in range(k)) for r in range(4)]
    np.testing.assert_allclose(m.predict(Xn, Z=Zn), want, atol=1e-10)
    assert "Partially linear" in m.summary()


def test_partially_linear_selection_equals_per_mean_cv():
    w = wage1()
    X, Z = w[["female", "married", "educ", "tenure"]], w[["exper"]]
    m = attnreg.PartiallyLinear().fit(X, w["lwage"], Z=Z)
    for r, col in enumerate(["lwage", "female", "married", "educ", "tenure"]):
        res = attnreg.select_bandwidth(Z, w[col], "lc", "cv_ls")
        assert m.bandwidth_[r, 0] == res.bandwidth[0]
        assert m.objective_[r] == res.objective
    assert list(m.coef_table().index) == ["female", "married", "educ", "tenure"]


def test_partially_linear_shared_column_is_an_error():
    w = wage1()
    with pytest.raises(ValueError, match="Z: column 'exper' is also in X"):
        attnreg.PartiallyLinear(bandwidth=np.full((3, 1), 2.0)).fit(
            w[["female", "exper"]], w["lwage"], Z=w[["exper"]])
    with pytest.raises(ValueError, match="not both"):  # same values, no names
        attnreg.PartiallyLinear(bandwidth=np.full((3, 1), 2.0)).fit(
            w[["female", "exper"]].to_numpy(), w["lwage"], Z=w[["exper"]].to_numpy())
    with pytest.raises(ValueError, match="Z"):
        attnreg.PartiallyLinear().fit(w[["female"]], w["lwage"])
    with pytest.raises(ValueError, match="cov_type"):
        attnreg.PartiallyLinear(cov_type="HC9").fit(w[["female"]], w["lwage"], Z=w[["exper"]])


# ------------------------------------------------------------------ SmoothCoefficient

@pytest.mark.parametrize("seed,intercept", [(0, True), (1, False)])
def test_smooth_coefficient_matches_weighted_least_squares(seed, intercept):
    rng = np.random.default_rng(seed)
    n = 100
    Z = np.round(rng.uniform(size=(n, 1)) * 15) / 15  # ties
    X = rng.normal(size=(n, 2))
    y = 1 + X[:, 0] * (1 + Z[:, 0]) + 0.1 * rng.normal(size=n)
    h = 0.2
    m = attnreg.SmoothCoefficient(bandwidth=h, fit_intercept=intercept).fit(X, y, Z=Z)
    Wd = np.column_stack([np.ones(n), X]) if intercept else X
    Zn = rng.uniform(size=(5, 1))
    B = m.coefficients(Zn)
    for r in range(5):
        np.testing.assert_allclose(B[r], wls(Wd, y, gauss_w(Z, Zn[r], h)), atol=1e-9)
    loo = np.empty(n)
    for i in range(n):
        w = gauss_w(Z, Z[i], h)
        w[i] = 0
        loo[i] = Wd[i] @ wls(Wd, y, w)
    np.testing.assert_allclose(m.loo_predictions(), loo, atol=1e-9)
    assert m.cv_score_ == pytest.approx(np.mean((y - loo) ** 2), rel=1e-10)
    Xn = rng.normal(size=(5, 2))
    Wn = np.column_stack([np.ones(5), Xn]) if intercept else Xn
    np.testing.assert_allclose(m.predict(Xn, Z=Zn), np.sum(Wn * B, axis=1), atol=1e-12)


def test_smooth_coefficient_cv_on_wage1():
    w = wage1()
    X = w[["female", "married", "educ", "tenure"]]
    m = attnreg.SmoothCoefficient().fit(X, w["lwage"], Z=w[["exper"]])
    assert m.bandwidth_result_.converged
    assert m.cv_score_ == pytest.approx(m.bandwidth_result_.objective, rel=1e-12)
    for f in (0.95, 1.05):
        other = attnreg.SmoothCoefficient(bandwidth=m.bandwidth_ * f).fit(X, w["lwage"],
                                                                          Z=w[["exper"]])
        assert other.cv_score_ >= m.cv_score_
    with pytest.raises(ValueError, match="not numeric"):
        attnreg.SmoothCoefficient(bandwidth=3.0).fit(
            pd.read_csv(DATA)[["female", "educ"]], w["lwage"], Z=w[["exper"]])


def test_categorical_z():
    w = wage1()
    region = np.where(w["south"] == 1, "south", np.where(w["west"] == 1, "west", "other"))
    Z = pd.DataFrame({"exper": w["exper"], "region": pd.Categorical(region)})
    X = w[["female", "educ"]]
    m = attnreg.PartiallyLinear(bandwidth=np.array([[3.0, 0.2]] * 3)).fit(X, w["lwage"], Z=Z)
    assert m.var_types_ == "cu"
    # Oracle: Gaussian x Aitchison-Aitken (3 levels) local-constant conditional means.
    codes = Z["region"].cat.codes.to_numpy()
    K = (np.exp(-0.5 * ((w["exper"].to_numpy()[:, None] - w["exper"].to_numpy()[None, :]) / 3.0)
                ** 2) * np.where(codes[:, None] == codes[None, :], 1 - 0.2, 0.2 / 2))
    res = [v - K @ v / K.sum(axis=1) for v in
           (w["lwage"].to_numpy(), w["female"].to_numpy(), w["educ"].to_numpy(float))]
    beta = np.linalg.lstsq(np.column_stack(res[1:]), res[0], rcond=None)[0]
    np.testing.assert_allclose(m.coef_, beta, atol=1e-10)
    s = attnreg.SmoothCoefficient(bandwidth=[3.0, 0.2]).fit(w[["educ"]], w["lwage"], Z=Z)
    with pytest.raises(ValueError, match="^Z: column 'region' has the level 'north'"):
        s.coefficients(pd.DataFrame({"exper": [3.0], "region": pd.Categorical(["north"])}))


def test_pickle_and_diagnostics():
    import pickle

    w = wage1()
    X, Z = w[["female", "married", "educ", "tenure"]], w[["exper"]]
    plm = attnreg.PartiallyLinear().fit(X, w["lwage"], Z=Z)
    scm = attnreg.SmoothCoefficient().fit(X, w["lwage"], Z=Z)
    new = pd.DataFrame({"female": [0.0, 1.0], "married": [1.0, 0.0], "educ": [12.0, 16.0],
                        "tenure": [2.0, 5.0]})
    nz = pd.DataFrame({"exper": [5.0, 20.0]})
    for m in (plm, scm):
        m2 = pickle.loads(pickle.dumps(m))
        np.testing.assert_array_equal(m2.predict(new, Z=nz), m.predict(new, Z=nz))
    lp = attnreg.LocalPolynomial(degree=2, bandwidth=5.0).fit(Z, w["lwage"])
    lp2 = pickle.loads(pickle.dumps(lp))
    np.testing.assert_array_equal(lp2.derivative(nz, order=2), lp.derivative(nz, order=2))
    d = lp.diagnose(nz)  # bias from a local cubic pilot, HC3 standard errors
    np.testing.assert_allclose(d["fit"], lp.predict(nz), rtol=1e-12)
    assert np.all(np.isfinite(d[["se", "bias", "rbc_low", "rbc_high"]].to_numpy()))
    assert np.all(d["se"] > 0)


# ------------------------------------------------------------------ scikit-learn conventions
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402


# sklearn's checks use 50 rows and up to 10 columns: a local quadratic in 10 columns has 66
# coefficients, so its fit is defined only with a ridge.
@parametrize_with_checks([attnreg.LocalPolynomial(degree=2, bandwidth=2.0, ridge=0.1),
                          attnreg.LocalPolynomial(degree=0, bandwidth=1.0)])
def test_local_polynomial_sklearn_checks(estimator, check):
    check(estimator)


# ------------------------------------------------------- SmoothCoefficient standard errors

def _scoef_se_oracle(Wd, y, Kfun, Ztr, Znew):
    """Per-point weighted least squares and its sandwich, float64, explicit normal equations."""
    n = len(y)
    fitted = np.array([Wd[i] @ wls(Wd, y, Kfun(Ztr, Ztr[i])) for i in range(n)])
    e2 = (y - fitted) ** 2
    B, S = [], []
    for z in Znew:
        w = Kfun(Ztr, z)
        M = Wd.T @ (Wd * w[:, None])
        meat = Wd.T @ (Wd * (w ** 2 * e2)[:, None])
        Mi = np.linalg.inv(M)
        B.append(Mi @ Wd.T @ (w * y))
        S.append(np.sqrt(np.diag(Mi @ meat @ Mi)))
    return np.array(B), np.array(S)


@pytest.mark.parametrize("seed,n,dz,intercept", [(0, 80, 1, True), (1, 150, 2, True),
                                                 (2, 120, 1, False)])
def test_smooth_coefficient_se_matches_sandwich_oracle(seed, n, dz, intercept):
    rng = np.random.default_rng(seed)
    Z = rng.uniform(size=(n, dz))
    if seed == 0:
        Z = np.round(Z * 12) / 12  # ties
    X = rng.normal(size=(n, 2))
    y = 1 + X[:, 0] * (1 + Z[:, 0]) - X[:, 1] * Z[:, -1] + (0.1 + Z[:, 0]) * rng.normal(size=n)
    h = np.full(dz, 0.25)
    m = attnreg.SmoothCoefficient(bandwidth=h, fit_intercept=intercept).fit(X, y, Z=Z)
    Wd = np.column_stack([np.ones(n), X]) if intercept else X
    Kfun = lambda Zt, z: np.exp(-0.5 * np.sum(((Zt - z) / h) ** 2, axis=1))  # noqa: E731
    Zn = np.vstack([rng.uniform(size=(4, dz)), Z[:2]])
    beta, se = m.coefficients(Zn, return_se=True)
    B0, S0 = _scoef_se_oracle(Wd, y, Kfun, Z, Zn)
    np.testing.assert_allclose(beta, B0, rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(se, S0, rtol=1e-9)
    assert se.shape == beta.shape
    np.testing.assert_array_equal(m.coefficients(Zn), beta)


def test_smooth_coefficient_se_categorical_z_and_coverage():
    w = wage1()
    region = np.where(w["south"] == 1, "south", np.where(w["west"] == 1, "west", "other"))
    Z = pd.DataFrame({"exper": w["exper"], "region": pd.Categorical(region)})
    m = attnreg.SmoothCoefficient(bandwidth=[4.0, 0.3]).fit(w[["educ"]], w["lwage"], Z=Z)
    codes = Z["region"].cat.codes.to_numpy()
    ex = w["exper"].to_numpy(float)
    Ztr = np.column_stack([ex, codes])
    Kfun = lambda Zt, z: (np.exp(-0.5 * ((Zt[:, 0] - z[0]) / 4.0) ** 2)  # noqa: E731
                          * np.where(Zt[:, 1] == z[1], 1 - 0.3, 0.3 / 2))
    Wd = np.column_stack([np.ones(len(ex)), w["educ"].to_numpy(float)])
    Znew = pd.DataFrame({"exper": [5.0, 20.0], "region": pd.Categorical(
        ["south", "west"], categories=Z["region"].cat.categories)})
    beta, se = m.coefficients(Znew, return_se=True)
    zc = np.column_stack([[5.0, 20.0], Znew["region"].cat.codes.to_numpy()])
    B0, S0 = _scoef_se_oracle(Wd, w["lwage"].to_numpy(), Kfun, Ztr, zc)
    np.testing.assert_allclose(beta, B0, rtol=1e-9)
    np.testing.assert_allclose(se, S0, rtol=1e-9)
    # Monte Carlo: the se tracks the sampling spread of beta(z) under heteroskedastic noise.
    rng = np.random.default_rng(5)
    n = 400
    Zs = rng.uniform(size=(n, 1))
    Xs = rng.normal(size=(n, 1))
    mean = 1 + Xs[:, 0] * np.sin(3 * Zs[:, 0])
    draws, ses = [], []
    for _ in range(200):
        ys = mean + (0.2 + 0.5 * Zs[:, 0]) * rng.normal(size=n)
        ms = attnreg.SmoothCoefficient(bandwidth=0.1).fit(Xs, ys, Z=Zs)
        b, s = ms.coefficients([[0.5]], return_se=True)
        draws.append(b[0, 1])
        ses.append(s[0, 1])
    assert np.mean(ses) == pytest.approx(np.std(draws), rel=0.15)
