"""The fourth-order Gaussian kernel "gaussian4" (np's ckerorder = 4): NW and local-linear fits
against a direct float64 oracle, its constants, and the clear refusal of the paths that need
nonnegative weights."""

import numpy as np
import pytest

import attnreg


def k4(u):
    return 0.5 * (3.0 - u**2) * np.exp(-0.5 * u**2) / np.sqrt(2.0 * np.pi)


def oracle(X, y, h, Xq, degree):
    out = []
    for x in Xq:
        w = np.prod(k4((X - x) / h), axis=1)
        Z = np.ones((len(X), 1)) if degree == 0 else np.column_stack([np.ones(len(X)), X - x])
        A = Z.T @ (w[:, None] * Z)
        out.append(np.linalg.solve(A, Z.T @ (w * y))[0])
    return np.array(out)


@pytest.mark.parametrize("seed,d", [(0, 1), (1, 2)])
def test_fits_match_direct_sums(seed, d):
    rng = np.random.default_rng(seed)
    X = np.round(4 * rng.random((50, d))) / 4 + 100.0  # ties and a shifted origin
    X[:, 0] += 0.3 * rng.standard_normal(50)
    y = np.sin(X[:, 0]) + 0.2 * rng.standard_normal(50)
    h = np.linspace(0.6, 0.9, d)
    Xq = X[:7] + 0.05
    for est, degree in [(attnreg.NadarayaWatson, 0), (attnreg.LocalLinear, 1)]:
        m = est(kernel="gaussian4", bandwidth=h).fit(X, y)
        np.testing.assert_allclose(m.predict(Xq), oracle(X, y, h, Xq, degree), rtol=1e-9, atol=1e-12)


def test_constants_and_refusals():
    c = attnreg.kernel_constants("gaussian4")
    assert c["mu2"] == 0.0
    assert c["roughness"] == pytest.approx(27.0 / (32.0 * np.sqrt(np.pi)), rel=1e-14)
    assert c["support"] == np.inf
    X = np.linspace(0.0, 1.0, 40)[:, None]
    y = X[:, 0] ** 2
    with pytest.raises(ValueError, match="gaussian4"):
        attnreg.LocalLinear(kernel="gaussian4", bandwidth="rot").fit(X, y)
