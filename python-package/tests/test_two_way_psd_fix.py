"""Two-way clustered covariances that come out indefinite (V_1 + V_2 - V_12 with a negative
eigenvalue) are replaced by U max(Lambda, 0) U' (Cameron, Gelbach and Miller 2011, sec. 2.3),
with a UserWarning and ``cov_fixed_``: checked against a direct numpy oracle."""
import warnings

import numpy as np
import pytest

import attnreg


def _grid(G, p, seed, noise=0.05):
    """Firm x year grid, y = a_i b_j (score sums by firm and by year nearly cancel) + noise."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(G)
    b = rng.standard_normal(G)
    a -= a.mean()
    b -= b.mean()
    firm, year = np.divmod(np.arange(G * G), G)
    X = rng.standard_normal((G * G, p))
    y = a[firm] * b[year] + noise * rng.standard_normal(G * G)
    return X, y, np.column_stack([firm, year])


def _raw_two_way(M, e, cl):
    """V_1 + V_2 - V_12 of the linear map b = M y, no small-sample factor (CR0)."""
    def meat(code):
        S = np.zeros((M.shape[0], code.max() + 1))
        np.add.at(S.T, code, (M * e).T)
        return S @ S.T
    both = cl[:, 0] * (cl[:, 1].max() + 1) + cl[:, 1]
    V = meat(cl[:, 0]) + meat(cl[:, 1]) - meat(both)
    return (V + V.T) / 2


def _clip(V):
    lam, U = np.linalg.eigh(V)
    return (U * np.maximum(lam, 0)) @ U.T


def _indefinite_case(p, make_map):
    for seed in range(50):
        X, y, cl = _grid(5, p, seed)
        M, e = make_map(X, y)
        V = _raw_two_way(M, e, cl)
        lam = np.linalg.eigvalsh(V)
        if lam.min() < -1e-6 * np.abs(lam).max():
            return X, y, cl, V
    raise AssertionError("no indefinite two-way covariance among the seeds")


def _ols_map(X, y):
    D = np.column_stack([np.ones(len(X)), X])
    M = np.linalg.solve(D.T @ D, D.T)
    return M, y - D @ (M @ y)


@pytest.mark.parametrize("p", [1, 3])
def test_ols_two_way_indefinite_is_fixed_with_warning(p):
    X, y, cl, raw = _indefinite_case(p, _ols_map)
    with pytest.warns(UserWarning, match=r"Cameron, Gelbach and Miller 2011.*cov_fixed_"):
        m = attnreg.OLS(cov_type="CR0").fit(X, y, groups=cl)
    assert m.cov_fixed_ is True
    want = _clip(raw)
    np.testing.assert_allclose(m.cov_params(), want, rtol=0, atol=1e-10 * np.abs(want).max())
    assert np.linalg.eigvalsh(m.cov_params()).min() >= -1e-13 * np.abs(want).max()
    se = np.concatenate([[m.intercept_se_], np.atleast_1d(m.coef_se_)])
    assert np.all(np.isfinite(se))
    np.testing.assert_allclose(se, np.sqrt(np.diag(want)), rtol=1e-9)
    assert np.all(np.isfinite(m.pvalues_))
    # The summary says so too.
    with pytest.warns(UserWarning, match="not positive semi-definite"):
        s = m.summary()
    assert np.all(np.isfinite(s.coefficients["std_error"]))


def test_ridge_and_pcr_two_way_indefinite_is_fixed_with_warning():
    X, y, cl, raw = _indefinite_case(3, _ols_map)
    with pytest.warns(UserWarning, match=r"U max\(Lambda, 0\) U'.*Cameron, Gelbach and Miller"):
        pcr = attnreg.PCR(rank=None, cov_type="CR0").fit(X, y, groups=cl)  # all components = OLS
    assert pcr.cov_fixed_ is True
    np.testing.assert_allclose(pcr.cov_params(), _clip(raw), atol=1e-10 * np.abs(raw).max())
    assert np.all(np.isfinite(pcr.coef_se_)) and np.isfinite(pcr.intercept_se_)

    alpha = 0.7

    def ridge_map(X, y):
        D = np.column_stack([np.ones(len(X)), X])
        P = alpha * np.eye(D.shape[1])
        P[0, 0] = 0
        M = np.linalg.solve(D.T @ D + P, D.T)
        return M, y - D @ (M @ y)

    X, y, cl, raw = _indefinite_case(3, ridge_map)
    with pytest.warns(UserWarning, match="Cameron, Gelbach and Miller 2011"):
        r = attnreg.Ridge(alpha=alpha, cov_type="CR0").fit(X, y, groups=cl)
    assert r.cov_fixed_ is True
    np.testing.assert_allclose(r.cov_params(), _clip(raw), atol=1e-10 * np.abs(raw).max())
    assert np.all(np.isfinite(r.coef_se_))


def test_absorbed_two_way_indefinite_is_fixed_with_warning():
    def fe_map(X, y):
        year = np.arange(len(X)) % 5
        D = np.column_stack([X, np.eye(5)[year]])
        M = np.linalg.solve(D.T @ D, D.T)
        return M[: X.shape[1]], y - D @ (M @ y)

    X, y, cl, raw = _indefinite_case(3, fe_map)
    with pytest.warns(UserWarning, match="Cameron, Gelbach and Miller 2011"):
        m = attnreg.OLS(cov_type="CR0").fit(X, y, groups=cl, absorb=cl[:, 1])
    assert m.cov_fixed_ is True
    np.testing.assert_allclose(m.cov_params(), _clip(raw), atol=1e-10 * np.abs(raw).max())
    assert np.all(np.isfinite(m.coef_se_))


def test_psd_two_way_and_one_way_are_untouched_and_silent():
    # Regressors and errors with firm and year components: V_1 and V_2 dominate V_12 (PSD).
    rng = np.random.default_rng(3)
    n = 600
    cl = np.column_stack([np.arange(n) % 30, (np.arange(n) // 30) % 20])
    X = (0.3 * rng.standard_normal((n, 3)) + rng.standard_normal((30, 3))[cl[:, 0]]
         + rng.standard_normal((20, 3))[cl[:, 1]])
    y = (X @ [1.0, -0.5, 0.25] + 0.3 * rng.standard_normal(n) + rng.standard_normal(30)[cl[:, 0]]
         + rng.standard_normal(20)[cl[:, 1]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = attnreg.OLS(cov_type="CR0").fit(X, y, groups=cl)
        one = attnreg.OLS(cov_type="cluster").fit(X, y, groups=cl[:, 0])
        hc = attnreg.OLS(cov_type="HC1").fit(X, y)
    assert m.cov_fixed_ is False and one.cov_fixed_ is False and hc.cov_fixed_ is False
    M, e = _ols_map(X, y)
    raw = _raw_two_way(M, e, cl)
    assert np.linalg.eigvalsh(raw).min() > 0
    np.testing.assert_allclose(m.cov_params(), raw, atol=1e-12 * np.abs(raw).max())
