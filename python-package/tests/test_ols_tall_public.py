"""Public OLS.fit on tall designs (n >= 20,000, n >= 50 q): the tall path (TSQR of row panels,
the QR fit formed lazily on first use) against OLS.fit's column-pivoted QR path forced with
``_use_tall = False``: every number to 1e-12 relative, and every method after the fit."""
import pickle
import warnings

import numpy as np
import pandas as pd
import pytest

import attnreg

RTOL = 1e-12


# Designs with n q^2 <= 2e6 are fitted in extended precision by OLS.fit (precision="auto"), where
# the tall path declines: the shapes below are above that size.


def _data(n, p, seed, order="C"):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    # small effects: t statistics of a few units, so p-values are not at the underflow edge
    y = 0.02 + X @ np.linspace(-0.03, 0.03, p) + rng.normal(size=n) * (0.5 + np.abs(X[:, 0]))
    return (np.asfortranarray(X) if order == "F" else np.ascontiguousarray(X)), y


def _pair(X, y, sample_weight=None, **kw):
    tall = attnreg.OLS(**kw).fit(X, y, sample_weight=sample_weight)
    qr = attnreg.OLS(**kw)
    qr._use_tall = False
    qr.fit(X, y, sample_weight=sample_weight)
    assert "_tall" in tall.__dict__ and "_tall" not in qr.__dict__  # each took its path
    return tall, qr


def _close(a, b):
    np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), rtol=RTOL,
                               atol=0)


def _check_fit_attributes(t, q):
    for name in ("coef_", "intercept_", "coef_se_", "intercept_se_", "tvalues_", "pvalues_",
                 "rsquared_", "rsquared_adj_", "sigma2_", "df_resid_"):
        _close(getattr(t, name), getattr(q, name))
    np.testing.assert_array_equal(t.aliased_, q.aliased_)
    assert t.rank_ == q.rank_ and t.extended_precision_ == q.extended_precision_


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("cov_type", ["nonrobust", "HC0", "HC1", "HC2", "HC3"])
def test_fit_and_fitted_cov_type_without_forming_qr(cov_type, order):
    X, y = _data(30000, 8, 11, order)
    t, q = _pair(X, y, cov_type=cov_type)
    assert "_lazy_fit" in t.__dict__ and "_lazy_fit" not in q.__dict__
    assert t._lazy_fit[0] is X  # a reference to the training data, not a copy
    _check_fit_attributes(t, q)
    _close(t.standard_errors(), q.standard_errors())
    _close(t.cov_params(), q.cov_params())
    _close(t.predict(X[:50]), q.predict(X[:50]))
    assert "_lazy_fit" in t.__dict__  # none of these formed the QR fit


@pytest.mark.parametrize("cov_type", ["nonrobust", "HC3"])
def test_summary_intervals_and_later_covariances(cov_type):
    X, y = _data(40000, 8, 12)
    t, q = _pair(pd.DataFrame(X, columns=[f"v{j}" for j in range(8)]), y, cov_type=cov_type)
    st, sq = t.summary(), q.summary()
    assert "_lazy_fit" not in t.__dict__  # the summary formed the QR fit
    pd.testing.assert_index_equal(st.coefficients.index, sq.coefficients.index)
    _close(st.coefficients.to_numpy(), sq.coefficients.to_numpy())
    assert st.header.keys() == sq.header.keys()
    for key, v in sq.header.items():
        if isinstance(v, (int, float, np.floating)):
            _close(st.header[key], v)
        else:
            assert st.header[key] == v, key
    _close(t.conf_int(level=0.9).to_numpy(), q.conf_int(level=0.9).to_numpy())
    Xn = pd.DataFrame(X[:20] * 1.5, columns=[f"v{j}" for j in range(8)])
    for interval in ("confidence", "prediction"):
        _close(t.predict(Xn, interval=interval).to_numpy(), q.predict(Xn, interval=interval).to_numpy())
    for other in ("HC0", "HC1", "HC2", "HC3", "nonrobust"):
        _close(t.standard_errors(cov_type=other), q.standard_errors(cov_type=other))
    _close(t.cov_params(cov_type="HAC", maxlags=4), q.cov_params(cov_type="HAC", maxlags=4))
    _close(t.standard_errors(cov_type="HAC", maxlags=2, hac_adjust=True),
           q.standard_errors(cov_type="HAC", maxlags=2, hac_adjust=True))
    _close(t.summary(cov_type="HAC", maxlags=3).coefficients.to_numpy(),
           q.summary(cov_type="HAC", maxlags=3).coefficients.to_numpy())


def test_attention_factors_hat_and_eigenvalues_on_demand():
    X, y = _data(30000, 9, 13)
    t, q = _pair(X, y, cov_type="HC3")
    _close(t.attention_weights(X[:3]), q.attention_weights(X[:3]))
    assert "_lazy_fit" not in t.__dict__
    _close(t.eigenvalues_, q.eigenvalues_)
    _close(t.hat_diagonal(), q.hat_diagonal())
    _close(t.factors(X[:4]), q.factors(X[:4]))
    _close(t.embedding(), q.embedding())
    _close(t.predict(X[:7]), q.predict(X[:7]))
    np.testing.assert_allclose(t.attention_weights(X[:2]).sum(axis=1), 1.0, rtol=1e-12)


def test_eigenvalues_first_forms_the_fit():
    X, y = _data(50000, 8, 14)
    t, q = _pair(X, y)
    _close(t.eigenvalues_, q.eigenvalues_)
    assert "_lazy_fit" not in t.__dict__


@pytest.mark.parametrize("formed", [False, True])
def test_pickle_round_trip(formed):
    X, y = _data(30000, 10, 15, "F")
    t, q = _pair(X, y, cov_type="HC2")
    if formed:
        t.hat_diagonal()
        q.hat_diagonal()
        q = pickle.loads(pickle.dumps(q))  # the QR fit through the same steps
    u = pickle.loads(pickle.dumps(t))
    assert ("_lazy_fit" in u.__dict__) == (not formed)
    # attention weights first: after unpickling, the core's later results depend to ~1e-17
    # absolute on which of its methods formed Q_1 first (the same for the QR path alone)
    _close(u.attention_weights(X[:2]), q.attention_weights(X[:2]))
    _check_fit_attributes(u, q)
    _close(u.standard_errors(), q.standard_errors())
    _close(u.standard_errors(cov_type="HAC", maxlags=3), q.standard_errors(cov_type="HAC", maxlags=3))
    _close(u.summary().coefficients.to_numpy(), q.summary().coefficients.to_numpy())


@pytest.mark.parametrize("weight_type", ["analytic", "frequency"])
@pytest.mark.parametrize("cov_type", ["nonrobust", "HC1", "HC3"])
def test_weights(weight_type, cov_type):
    X, y = _data(30000, 8, 16)
    rng = np.random.default_rng(17)
    w = (rng.integers(1, 4, size=len(y)).astype(float) if weight_type == "frequency"
         else rng.uniform(0.2, 3.0, size=len(y)))
    w[:100] = 0.0  # rows of weight zero
    t, q = _pair(X, y, sample_weight=w, cov_type=cov_type, weight_type=weight_type)
    assert "_lazy_fit" in t.__dict__
    _check_fit_attributes(t, q)
    _close(t.cov_params(), q.cov_params())
    _close(t.summary().coefficients.to_numpy(), q.summary().coefficients.to_numpy())
    _close(t.summary().header["log_likelihood"], q.summary().header["log_likelihood"])
    _close(t.attention_weights(X[:2]), q.attention_weights(X[:2]))


def test_aliased_column():
    # exactly collinear: OLS.fit refines in extended precision up to n q^2 = 1e8 (then the tall
    # path declines); above that both are double
    X, y = _data(100000, 31, 18)
    X = np.column_stack([X, X[:, 1] - 2.0 * X[:, 3]])
    with pytest.warns(UserWarning, match="aliased"):
        t, q = _pair(X, y, cov_type="HC3")
    assert "_lazy_fit" in t.__dict__ and t.aliased_.sum() == 1
    np.testing.assert_array_equal(np.isnan(t.coef_), np.isnan(q.coef_))
    ok = ~np.isnan(q.coef_)
    _close(t.coef_[ok], q.coef_[ok])
    _close(t.coef_se_[ok], q.coef_se_[ok])
    _close(t.predict(X[:10]), q.predict(X[:10]))
    ok_t = ~np.isnan(q.tvalues_)
    _close(t.tvalues_[ok_t], q.tvalues_[ok_t])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _close(t.attention_weights(X[:2]), q.attention_weights(X[:2]))


def test_what_the_tall_path_leaves_to_qr():
    X, y = _data(30000, 10, 19)
    g = np.repeat(np.arange(300), 100)
    m = attnreg.OLS(cov_type="cluster").fit(X, y, groups=g)
    assert "_lazy_fit" not in m.__dict__  # clustered: QR path
    m = attnreg.OLS(cov_type="HAC", maxlags=2).fit(X, y)
    assert "_lazy_fit" not in m.__dict__
    m = attnreg.OLS(cov_type="HC3").fit(X[:5000], y[:5000])
    assert "_lazy_fit" not in m.__dict__  # not tall
    m = attnreg.OLS(cov_type="HC3").fit(X, np.column_stack([y, y]))
    assert "_lazy_fit" not in m.__dict__  # two outputs
    # refitting the same object on a small design drops the tall state
    m = attnreg.OLS(cov_type="HC3").fit(X, y)
    assert "_tall" in m.__dict__
    m.fit(X[:5000], y[:5000])
    assert "_tall" not in m.__dict__ and "_lazy_fit" not in m.__dict__
    ref = attnreg.OLS(cov_type="HC3").fit(X[:5000], y[:5000])
    np.testing.assert_array_equal(m.standard_errors(), ref.standard_errors())
