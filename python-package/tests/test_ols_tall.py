"""The core's tall least-squares path (_core._ols_tall: X read in place, C or Fortran order)
against OLS.fit's QR path (forced by ``_use_tall = False``): coefficients and standard errors to
1e-12 relative."""
import numpy as np
import pytest

import attnreg
from attnreg import _core


def _qr_ols(**kw):
    m = attnreg.OLS(**kw)
    m._use_tall = False  # OLS.fit's column-pivoted QR path
    return m


def _data(n, p, seed, shift=0.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)) + shift
    y = 2.0 + (X - shift) @ np.linspace(1.0, 2.0, p) + rng.normal(size=n) * (0.5 + np.abs(X[:, 0] - shift))
    return X, y


@pytest.mark.parametrize("n,p,seed", [(30000, 12, 0), (60000, 25, 1)])
@pytest.mark.parametrize("cov_type", ["nonrobust", "HC1", "HC3"])
def test_tall_equals_ols_fit_c_and_f_order(n, p, seed, cov_type):
    X, y = _data(n, p, seed)
    m = _qr_ols(cov_type=cov_type).fit(X, y)
    ref_coef = np.r_[m.intercept_, m.coef_]
    ref_se = np.r_[m.intercept_se_, m.coef_se_]
    c = _core._ols_tall(np.ascontiguousarray(X), y, cov_type=cov_type)
    f = _core._ols_tall(np.asfortranarray(X), y, cov_type=cov_type)
    assert c is not None and f is not None
    np.testing.assert_allclose(c["coef"], ref_coef, rtol=1e-12, atol=0)
    np.testing.assert_allclose(c["std_errors"], ref_se, rtol=1e-12, atol=0)
    np.testing.assert_array_equal(c["coef"], f["coef"])
    np.testing.assert_array_equal(c["std_errors"], f["std_errors"])


def test_tall_weighted_and_shifted_origin():
    X, y = _data(50000, 6, 3, shift=1e3)
    w = np.random.default_rng(4).uniform(0.2, 3.0, size=len(y))
    # Ill-conditioned (shift / spread 1e3): OLS's automatic precision would refine in extended
    # precision, where the tall path declines; compare the double paths.
    m = _qr_ols(cov_type="HC3", precision="double").fit(X, y, sample_weight=w)
    t = _core._ols_tall(X, y, weights=w, cov_type="HC3", double_precision=True)
    np.testing.assert_allclose(t["coef"], np.r_[m.intercept_, m.coef_], rtol=1e-12, atol=0)
    np.testing.assert_allclose(t["std_errors"], np.r_[m.intercept_se_, m.coef_se_], rtol=1e-12, atol=0)


def test_tall_declines_what_it_does_not_cover():
    X, y = _data(30000, 12, 5)
    assert _core._ols_tall(X, y, cov_type="HAC") is None
    assert _core._ols_tall(X[:5000], y[:5000], cov_type="HC3") is None
    Xn = X.copy()
    Xn[7, 3] = np.nan
    with pytest.raises(ValueError, match="X"):
        _core._ols_tall(Xn, y, cov_type="HC3")
