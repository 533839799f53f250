"""Kernel regression (NadarayaWatson, LocalLinear): direct numpy oracles, statsmodels'
KernelReg, the attention identities (softmax, rows summing to one), leave-one-out against
refitting, pandas categoricals, scikit-learn conformance and bad input."""
import pickle

import numpy as np
import pandas as pd
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

import attnreg

KERNELS = ["gaussian", "epanechnikov", "uniform", "triangular", "biweight", "triweight",
           "tricube", "cosine"]


def kdens(name, u):
    a = np.abs(u)
    inside = a <= 1
    if name == "gaussian":
        return np.exp(-0.5 * u * u) / np.sqrt(2 * np.pi)
    f = {
        "epanechnikov": lambda: 0.75 * (1 - u * u),
        "uniform": lambda: 0.5 * np.ones_like(u),
        "triangular": lambda: 1 - a,
        "biweight": lambda: 15 / 16 * (1 - u * u) ** 2,
        "triweight": lambda: 35 / 32 * (1 - u * u) ** 3,
        "tricube": lambda: 70 / 81 * (1 - a ** 3) ** 3,
        "cosine": lambda: np.pi / 4 * np.cos(np.pi * u / 2),
    }[name]()
    return np.where(inside, f, 0.0)


def oracle(X, Y, h, Xq, kernel="gaussian", degree=1, ridge=0.0, sw=None):
    """Weighted least squares at each query, in data units (DESIGN.md §2)."""
    n, d = X.shape
    Y2 = Y.reshape(n, -1)
    fits, grads, rows = [], [], []
    for x in Xq:
        w = np.prod(kdens(kernel, (X - x) / h) / h, axis=1)
        if sw is not None:
            w = w * sw
        D = np.ones((n, 1)) if degree == 0 else np.column_stack([np.ones(n), X - x])
        A = D.T @ (D * w[:, None])
        A[1:, 1:] += ridge * w.sum() * np.eye(D.shape[1] - 1)
        S = np.linalg.solve(A, (D * w[:, None]).T)
        beta = S @ Y2
        fits.append(beta[0])
        grads.append(beta[1:].T)
        rows.append(S[0])
    return np.array(fits), np.array(grads), np.array(rows)


def _expected_failures(estimator):
    if isinstance(estimator, attnreg.LocalLinear) and estimator.ridge == 0.0:
        # The check fits 30 columns on fewer than 31 rows after dropping zero weights: a local
        # linear design without a ridge is then singular everywhere (LocalLinear says so).
        return {"check_sample_weight_equivalence_on_dense_data":
                "unpenalised local linear needs d + 1 rows with positive weight"}
    return {}


@parametrize_with_checks([attnreg.NadarayaWatson(bandwidth=1.0),
                          attnreg.LocalLinear(bandwidth=2.0),
                          attnreg.LocalLinear(bandwidth=2.0, ridge=0.1)],
                         expected_failed_checks=_expected_failures)
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("n,d,k,seed", [(30, 1, 1, 0), (80, 2, 1, 1), (120, 3, 2, 2)])
def test_matches_oracle(kernel, n, d, k, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X[:3] = X[3]  # ties
    Y = rng.normal(size=(n, k)) + 2.0
    y = Y[:, 0] if k == 1 else Y
    h = (0.7 if kernel == "gaussian" else 2.5) * np.sqrt(d) * (1 + rng.uniform(size=d))
    Xq = 0.5 * rng.normal(size=(7, d))
    for est, degree, ridge in [(attnreg.NadarayaWatson(kernel=kernel, bandwidth=h), 0, 0.0),
                               (attnreg.LocalLinear(kernel=kernel, bandwidth=h), 1, 0.0),
                               (attnreg.LocalLinear(kernel=kernel, bandwidth=h, ridge=0.4), 1, 0.4)]:
        est.fit(X, y)
        fit, grad, rows = oracle(X, Y, h, Xq, kernel, degree, ridge)
        np.testing.assert_allclose(est.predict(Xq), fit[:, 0] if k == 1 else fit,
                                   rtol=1e-10, atol=1e-12)
        W = est.attention_weights(Xq)
        np.testing.assert_allclose(W, rows, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(W.sum(axis=1), 1.0, atol=1e-12)
        if degree == 0:
            assert W.min() >= 0.0
        else:
            G = est.gradient(Xq)
            np.testing.assert_allclose(G, grad[:, 0, :] if k == 1 else grad, rtol=1e-8,
                                       atol=1e-10)
        fitted, _, _ = oracle(X, Y, h, X, kernel, degree, ridge)
        np.testing.assert_allclose(est.fitted_values(), fitted[:, 0] if k == 1 else fitted,
                                   rtol=1e-10, atol=1e-12)


def test_softmax_identity():
    # Seed 000: NW with the Gaussian kernel on unit-norm rows is softmax(q K' / h^2) V.
    rng = np.random.default_rng(3)
    K = rng.normal(size=(100, 4))
    K /= np.linalg.norm(K, axis=1, keepdims=True)
    Q = rng.normal(size=(9, 4))
    Q /= np.linalg.norm(Q, axis=1, keepdims=True)
    V = rng.normal(size=(100, 3))
    h = 0.6
    logits = Q @ K.T / h**2
    P = np.exp(logits - logits.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    nw = attnreg.NadarayaWatson(bandwidth=h).fit(K, V)
    np.testing.assert_allclose(nw.predict(Q), P @ V, rtol=1e-12)
    np.testing.assert_allclose(nw.attention_weights(Q), P, rtol=1e-10, atol=1e-15)


@pytest.mark.parametrize("reg_type", ["lc", "ll"])
def test_matches_statsmodels_kernelreg(reg_type):
    from statsmodels.nonparametric.kernel_regression import KernelReg

    rng = np.random.default_rng(4)
    X = rng.uniform(-2, 2, size=(150, 2))
    y = np.sin(X[:, 0]) + X[:, 1] ** 2 + 0.1 * rng.normal(size=150)
    h = np.array([0.4, 0.6])
    sm = KernelReg(y, X, var_type="cc", reg_type=reg_type, bw=h)
    Xq = rng.uniform(-1.5, 1.5, size=(20, 2))
    mean, mfx = sm.fit(Xq)
    est = attnreg.NadarayaWatson(bandwidth=h) if reg_type == "lc" else attnreg.LocalLinear(bandwidth=h)
    est.fit(X, y)
    np.testing.assert_allclose(est.predict(Xq), mean, rtol=1e-10)
    if reg_type == "ll":
        np.testing.assert_allclose(est.gradient(Xq), mfx, rtol=1e-8)


def test_pandas_categoricals_become_categorical_kernels():
    rng = np.random.default_rng(5)
    n = 60
    df = pd.DataFrame({
        "x": rng.normal(size=n),
        "group": pd.Categorical(rng.choice(["a", "b", "c"], size=n)),
        "size": pd.Categorical(rng.choice(["S", "M", "L"], size=n), categories=["S", "M", "L"],
                               ordered=True),
    })
    y = df["x"].to_numpy() + (df["group"] == "b").to_numpy() + rng.normal(size=n) * 0.1
    bw = [0.5, 0.2, 0.4]
    m = attnreg.LocalLinear(bandwidth=bw).fit(df, y)
    assert m.var_types_ == "cuo"
    # The same fit from integer codes and an explicit var_types.
    codes = np.column_stack([df["x"], df["group"].cat.codes, df["size"].cat.codes]).astype(float)
    m2 = attnreg.LocalLinear(bandwidth=bw, var_types="cuo").fit(codes, y)
    new = df.iloc[:5]
    np.testing.assert_allclose(m.predict(new), m2.predict(codes[:5]), rtol=1e-13)
    # Categorical columns: level differences as np's npreg (unordered vs the first level,
    # ordered vs the previous level; test_marginal_effects.py has the oracles).
    g = m.gradient(new)
    assert list(g.columns) == ["x", "group", "size"] and np.isfinite(g.to_numpy()).all()
    # Hand computation of one weight row: Gaussian x, Aitchison-Aitken group, Li-Racine size.
    nw = attnreg.NadarayaWatson(bandwidth=bw).fit(df, y)
    q = df.iloc[[0]]
    w = (np.exp(-0.5 * ((df["x"] - q["x"].iloc[0]) / 0.5) ** 2)
         * np.where(df["group"] == q["group"].iloc[0], 0.8, 0.2 / 2)
         * 0.4 ** np.abs(df["size"].cat.codes - q["size"].cat.codes.iloc[0]))
    np.testing.assert_allclose(nw.attention_weights(q)[0], w / w.sum(), rtol=1e-12)
    # An unseen level is an error naming the column.
    bad = new.copy()
    bad["group"] = pd.Categorical(["z"] * 5)
    with pytest.raises(ValueError, match="group"):
        m.predict(bad)


def test_loo_predictions_equal_refitting():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(25, 2))
    y = rng.normal(size=25)
    sw = rng.uniform(0.5, 2.0, size=25)
    for est in [attnreg.NadarayaWatson(bandwidth=0.7), attnreg.LocalLinear(bandwidth=0.9),
                attnreg.LocalLinear(bandwidth=0.9, ridge=0.5)]:
        est.fit(X, y, sample_weight=sw)
        loo = est.loo_predictions()
        for i in range(25):
            keep = np.arange(25) != i
            ref = type(est)(**est.get_params()).fit(X[keep], y[keep], sample_weight=sw[keep])
            assert loo[i] == pytest.approx(ref.predict(X[i:i + 1])[0], rel=1e-10, abs=1e-12)
        # The weighted mean: the criterion weighted cv_ls minimises.
        assert est.cv_score_ == pytest.approx(np.average((y - loo) ** 2, weights=sw), rel=1e-12)
        assert 1.0 < est.effective_df_ < 25.0
        np.testing.assert_allclose(est.leverage_, np.diag(est.attention_weights(X)), atol=1e-12)


def test_pickle_and_multi_output():
    rng = np.random.default_rng(7)
    X, Y = rng.normal(size=(50, 2)), rng.normal(size=(50, 3))
    m = attnreg.LocalLinear(bandwidth=[0.8, 1.0], ridge=0.1).fit(X, Y)
    m2 = pickle.loads(pickle.dumps(m))
    np.testing.assert_array_equal(m2.predict(X[:5]), m.predict(X[:5]))
    np.testing.assert_array_equal(m2.loo_predictions(), m.loo_predictions())
    assert m.predict(X[:5]).shape == (5, 3)
    assert m.gradient(X[:5]).shape == (5, 3, 2)
    for c in range(3):
        one = attnreg.LocalLinear(bandwidth=[0.8, 1.0], ridge=0.1).fit(X, Y[:, c])
        np.testing.assert_allclose(m.predict(X[:5])[:, c], one.predict(X[:5]), rtol=1e-13)
        np.testing.assert_allclose(m.gradient(X[:5])[:, c, :], one.gradient(X[:5]), rtol=1e-12)


def test_kernel_constants():
    c = attnreg.kernel_constants("epanechnikov")
    assert c["mu2"] == pytest.approx(0.2) and c["roughness"] == pytest.approx(0.6)
    assert c["support"] == 1.0
    g = attnreg.kernel_constants("gaussian")
    assert g["roughness"] == pytest.approx(1 / (2 * np.sqrt(np.pi))) and np.isinf(g["support"])


def test_bad_input_is_named():
    rng = np.random.default_rng(8)
    X, y = rng.normal(size=(20, 2)), rng.normal(size=20)
    with pytest.raises(ValueError, match="unknown selector"):
        attnreg.NadarayaWatson(bandwidth="cv_foo").fit(X, y)
    with pytest.raises(ValueError, match="bandwidth"):
        attnreg.NadarayaWatson(bandwidth=-1.0).fit(X, y)
    with pytest.raises(ValueError, match="bandwidth"):
        attnreg.NadarayaWatson(bandwidth=[1.0, 1.0, 1.0]).fit(X, y)
    with pytest.raises(ValueError, match="kernel"):
        attnreg.NadarayaWatson(kernel="laplace", bandwidth=1.0).fit(X, y)
    with pytest.raises(ValueError, match="ridge"):
        attnreg.LocalLinear(bandwidth=1.0, ridge=-1.0).fit(X, y)
    with pytest.raises(ValueError, match="var_types"):
        attnreg.NadarayaWatson(bandwidth=1.0, var_types="cx").fit(X, y)
    Xc = X.copy()
    Xc[:, 1] = np.floor(3 * rng.uniform(size=20))
    with pytest.raises(ValueError, match="one value per column"):
        attnreg.NadarayaWatson(bandwidth=1.0, var_types="cu").fit(Xc, y)
    with pytest.raises(ValueError, match=r"bandwidth\[2\]"):
        attnreg.NadarayaWatson(bandwidth=[1.0, 0.9], var_types="cu").fit(Xc, y)
    Xn = X.copy()
    Xn[3, 0] = np.nan
    with pytest.raises(ValueError):
        attnreg.NadarayaWatson(bandwidth=1.0).fit(Xn, y)
    m = attnreg.NadarayaWatson(bandwidth=0.01).fit(X, y)
    with pytest.raises(attnreg.NumericalError, match="underflow"):
        m.predict([[50.0, 50.0]])
    with pytest.raises(ArithmeticError, match="row 1"):
        attnreg.NadarayaWatson(kernel="epanechnikov", bandwidth=0.5).fit(X, y).predict([[9.0, 9.0]])
    # fit computes only what prediction needs; the training statistics are computed (and
    # their failure reported) on first use.
    lonely = attnreg.LocalLinear(kernel="uniform", bandwidth=1e-3).fit(X, y)
    with pytest.raises(attnreg.NumericalError, match="singular"):
        lonely.fitted_values()
    with pytest.raises(attnreg.NumericalError, match="singular"):
        lonely.leverage_
