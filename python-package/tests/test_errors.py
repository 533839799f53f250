"""Issue 9 / DESIGN.md section 6: every bad input gives an error naming the argument and the fix.

One row per case of section 6 (and the common argument mistakes), with the message asserted.
Messages of scikit-learn's own input validation (NaN/Inf, shapes, feature counts) are kept as
scikit-learn users know them; they name X or y and the remedy (impute / drop, same length).
"""
from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest

import attnreg

rng = np.random.default_rng(0)
X = rng.uniform(size=(30, 2))
y = X[:, 0] + rng.normal(0, 0.1, 30)
X_nan = X.copy()
X_nan[3, 1] = np.nan
y_inf = y.copy()
y_inf[2] = np.inf
Xc = np.column_stack([X[:, 0], rng.integers(0, 3, 30)])


def nw(**kw):
    return attnreg.NadarayaWatson(**{"bandwidth": 0.3, **kw})


def ll(**kw):
    return attnreg.LocalLinear(**{"bandwidth": 0.3, **kw})


ESTIMATORS = [nw, ll, attnreg.OLS, attnreg.Ridge, attnreg.PCR,
              lambda: attnreg.AttentionRegression(n_starts=1, max_iter=20)]


@pytest.mark.parametrize("make", ESTIMATORS)
def test_nan_inf_and_shapes_name_the_argument(make):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match=r"(?s)Input X contains NaN.*(impute|drop|[Pp]reprocess)"):
            make().fit(X_nan, y)
        with pytest.raises(ValueError, match="Input y contains infinity"):
            make().fit(X, y_inf)
        with pytest.raises(ValueError, match=r"inconsistent numbers of samples: \[30, 20\]"):
            make().fit(X, y[:20])
        m = make().fit(X, y)
        with pytest.raises(ValueError, match="X has 1 features, but .* is expecting 2 features"):
            m.predict(X[:, :1])
        with pytest.raises(ValueError, match="Input X contains NaN"):
            m.predict(X_nan)


CASES = [
    # (what, callable, exception, message regex)
    ("non-positive bandwidth", lambda: ll(bandwidth=-1).fit(X, y), ValueError,
     r"bandwidth: must be > 0 and finite for continuous column 1, got -1 \(pass a positive"),
    ("zero bandwidth", lambda: nw(bandwidth=0.0).fit(X, y), ValueError,
     r"bandwidth: must be > 0 and finite for continuous column 1, got 0"),
    ("non-finite bandwidth", lambda: nw(bandwidth=[0.1, np.inf]).fit(X, y), ValueError,
     r"bandwidth: must be > 0 and finite for continuous column 2, got inf"),
    ("NaN bandwidth", lambda: nw(bandwidth=np.nan).fit(X, y), ValueError,
     r"bandwidth: must be > 0 and finite .* got nan"),
    ("wrong number of bandwidths", lambda: nw(bandwidth=[0.1, 0.2, 0.3]).fit(X, y), ValueError,
     r"bandwidth: got 3 values for 2 columns \(give one per column"),
    ("unknown selector", lambda: nw(bandwidth="cv").fit(X, y), ValueError,
     r"bandwidth: unknown selector 'cv'; pass a positive number.*cv_ls"),
    ("all weights underflow", lambda: nw(bandwidth=1e-4).fit(X, y).predict([[5.0, 5.0]]),
     attnreg.NumericalError,
     r"X_new row 1: every kernel weight is 0 or underflows .*increase the bandwidth or drop"),
    # fit computes only what prediction needs; the fitted values are computed on first use
    ("singular local design",
     lambda: ll(bandwidth=1e-3, kernel="epanechnikov").fit(X, y).fitted_values(),
     attnreg.NumericalError,
     r"row 1: the local linear design is singular.*increase the bandwidth, set ridge > 0"),
    ("n too small for local linear", lambda: ll().fit(X[:1], y[:1]), ValueError,
     r"X: a local linear fit with 2 continuous columns .* needs at least 3 rows, got 1 sample"),
    ("n too small for selection", lambda: attnreg.NadarayaWatson().fit(X[:3], y[:3]), ValueError,
     r"X: bandwidth='cv_ls' needs at least 5 rows to select a bandwidth, got n_samples = 3; "
     r"pass a bandwidth by hand"),
    ("n too small for select_bandwidth", lambda: attnreg.select_bandwidth(X[:3], y[:3]),
     ValueError, r"X: bandwidth selection needs at least 5 rows \(got 3\); pass a bandwidth"),
    ("n too small for attention regression",
     lambda: attnreg.AttentionRegression().fit(X[:1], y[:1]), ValueError,
     r"X: has 1 sample; leave-self-out attention needs at least 2 rows"),
    ("unseen category (codes)",
     lambda: nw(bandwidth=[0.3, 0.2], var_types="cu").fit(Xc, y).predict([[0.5, 7]]),
     ValueError, r"X_new: categorical column 2 has the value 7 at row 1, a level never seen"),
    ("unseen category (pandas)",
     lambda: nw(bandwidth=[0.3, 0.2]).fit(pd.DataFrame({"x": X[:, 0], "g": list("abc") * 10}),
                                          y).predict(pd.DataFrame({"x": [0.5], "g": ["d"]})),
     ValueError, r"X: column 'g' has the level 'd', never seen in fit .*map it to a known level"),
    ("non-integer category code", lambda: nw(bandwidth=[0.3, 0.2], var_types="cu").fit(Xc + 0.5, y),
     ValueError, r"X: categorical column 2 has the non-integer value 2.5 at row 1 \(pass integer"),
    ("unordered bandwidth out of range",
     lambda: nw(bandwidth=[0.3, 0.9], var_types="cu").fit(Xc, y), ValueError,
     re.escape("bandwidth[2] (unordered column): the aitchison_aitken kernel needs a bandwidth "
               "in [0, 0.666667]")),
    ("ordered bandwidth out of range",
     lambda: nw(bandwidth=[0.3, 1.5], var_types="co").fit(Xc, y), ValueError,
     re.escape("bandwidth[2] (ordered column): the li_racine kernel needs a bandwidth in [0, 1]")),
    ("one bandwidth with categorical columns", lambda: nw(bandwidth=0.3, var_types="cu").fit(Xc, y),
     ValueError, r"bandwidth: one number for every column only works when all columns are "
                 r"continuous; give one value per column"),
    ("bad var_types", lambda: nw(var_types="cx").fit(X, y), ValueError,
     r"var_types: 'cx' must give one of c \(continuous\), u \(unordered\), o \(ordered\)"),
    ("unknown kernel", lambda: nw(kernel="gausian").fit(X, y), ValueError,
     r"kernel: unknown kernel 'gausian' \(choose one of gaussian epanechnikov"),
    ("negative ridge", lambda: ll(ridge=-1).fit(X, y), ValueError,
     r"ridge: must be >= 0 and finite"),
    ("negative n_threads", lambda: nw(n_threads=-1).fit(X, y), ValueError,
     r"n_threads: must be >= 0 \(0 = all available\), got -1"),
    ("negative weights with a selector",
     lambda: attnreg.select_bandwidth(X, y, sample_weight=-np.arange(1.0, 31.0)), ValueError,
     r"sample_weight: must be finite and >= 0"),
    ("negative alpha", lambda: attnreg.Ridge(alpha=-1).fit(X, y), ValueError,
     r"alpha: the ridge penalty must be finite and >= 0, got -1"),
    ("categorical column for least squares",
     lambda: attnreg.OLS().fit(pd.DataFrame({"x": X[:, 0], "g": pd.Categorical(list("ab") * 15)}),
                               y), ValueError,
     r"X: column 'g' is categorical; OLS needs numeric columns. Dummy-code it"),
    ("string column for ridge",
     lambda: attnreg.Ridge().fit(pd.DataFrame({"x": X[:, 0], "g": list("ab") * 15}), y),
     ValueError, r"X: column 'g' is of dtype (object|str).*; Ridge needs numeric columns"),
    ("rank too large", lambda: attnreg.PCR(rank=5).fit(X, y), ValueError,
     r"rank: 5 components requested but the centred design has numerical rank 2; choose rank <= 2"),
    ("unknown cov_type", lambda: attnreg.OLS(cov_type="HC9").fit(X, y), ValueError,
     r"cov_type: must be one of nonrobust, HC0, HC1, HC2, HC3, HAC, cluster, CR0, CR1, CR2, CR3; got 'HC9'"),
    ("attention rank", lambda: attnreg.AttentionRegression(rank=0).fit(X, y), ValueError,
     r"rank: must be >= 1"),
    ("unknown selector method", lambda: attnreg.select_bandwidth(X, y, method="cv"), ValueError,
     r"method: unknown bandwidth selector 'cv'; choose one of cv_ls"),
    ("dpi beyond one column", lambda: attnreg.LocalLinear(bandwidth="dpi").fit(X, y), ValueError,
     r"method: dpi is the plug-in rule for 1-D local linear with the Gaussian kernel; use cv_ls"),
    ("diagnose level", lambda: ll().fit(X[:, :1], y).diagnose(X[:3, :1], level=1.5), ValueError,
     r"level: must be in \(0, 1\), e.g. 0.95"),
    ("device cuda without CUDA",
     lambda: attnreg.attention.softmax(np.ones((4, 2)), np.ones((4, 2)), np.ones((4, 2)),
                                       device="cuda"),
     RuntimeError, r"device='cuda': .*(without CUDA|no GPU).*device='cpu'"),
    ("plot feature", lambda: attnreg.plot.partial_effects(ll().fit(X, y), X, "z"), ValueError,
     r"feature: 'z' is not one of the fitted columns"),
    ("progress", lambda: attnreg.select_bandwidth(X, y, progress="bar"), ValueError,
     r"progress: expected True, False, a callable f\(done, total, label\) or one of auto"),
]


@pytest.mark.parametrize("what,call,exc,msg", CASES, ids=[c[0] for c in CASES])
def test_bad_input_message(what, call, exc, msg):
    if what == "device cuda without CUDA" and attnreg.build_info()["gpu_count"] > 0:
        pytest.skip("a GPU is visible")
    if what == "plot feature":
        pytest.importorskip("matplotlib")
    with pytest.raises(exc, match=msg):
        call()


def test_unfitted_estimator_says_call_fit():
    for make in ESTIMATORS:
        with pytest.raises(Exception, match="not fitted yet. Call 'fit'"):
            make().predict(X)


# ---------------------------------------------------------------- no silent defaults or NaN
# A NaN/inf option used to mean "the default" (the binding encoded None as NaN), a negative
# pilot bandwidth fell through to the default, and overflowing logits gave NaN rows.
_Q = rng.normal(size=(6, 3))
_K = rng.normal(size=(8, 3))
_V = rng.normal(size=(8, 2))
_A = attnreg.attention


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
@pytest.mark.parametrize("name,call", [
    ("scale", lambda v: _A.softmax(_Q, _K, _V, scale=v)),
    ("bandwidth", lambda v: _A.nw_rbf(_Q, _K, _V, bandwidth=v)),
    ("bandwidth", lambda v: _A.lla(_Q, _K, _V, bandwidth=v, ridge=0.1)),
    ("bandwidth", lambda v: _A.lla(_Q, _K, _V, bandwidth=v, ridge=0.1, method="direct")),
    ("bandwidth", lambda v: _A.lla(_Q, _K, _V, bandwidth=v, ridge=0.1, method="naive")),
    ("scale", lambda v: _A.lla(_Q, _K, _V, scale=v, ridge=0.1)),
    ("cg_tol", lambda v: _A.lla(_Q, _K, _V, cg_tol=v, ridge=0.1)),
    ("scale", lambda v: _A.attention_weights(_Q, _K, scale=v)),
    ("bandwidth", lambda v: _A.attention_weights(_Q, _K, method="nw_rbf", bandwidth=v)),
    ("bandwidth", lambda v: _A.lla_partial(_Q, _K, _V, key_offset=0, n_keys_total=8,
                                           bandwidth=v)),
    ("scale", lambda v: _A.lla_partial(_Q, _K, _V, key_offset=0, n_keys_total=8, scale=v)),
    ("scale", lambda v: attnreg._core.softmax_partial(_Q, _K, _V, 0, 8, scale=v)),
])
def test_nonfinite_attention_option_is_an_error_not_the_default(name, call, bad):
    with pytest.raises(ValueError, match=rf"^{name}: must be a finite number or None"):
        call(bad)


def test_none_is_still_the_default():
    np.testing.assert_array_equal(_A.nw_rbf(_Q, _K, _V, bandwidth=None), _A.nw_rbf(_Q, _K, _V))
    np.testing.assert_array_equal(_A.nw_rbf(_Q, _K, _V, bandwidth=3 ** 0.25),
                                  _A.nw_rbf(_Q, _K, _V))


@pytest.mark.parametrize("dtype,c", [(np.float64, 1e155), (np.float32, 1e20)])
@pytest.mark.parametrize("fn", [_A.softmax, _A.nw_rbf])
def test_overflowing_logits_raise_numerical_error(fn, dtype, c):
    Q, K, V = ((a * s).astype(dtype) for a, s in ((_Q, c), (_K, c), (_V, 1.0)))
    with pytest.raises(attnreg.NumericalError,
                       match=r"a logit overflows float(32|64) at \(batch 1, head 1, query \d+\)"):
        fn(Q, K, V)


def test_float32_scale_overflow_and_tiny_bandwidth_are_named():
    Q, K, V = (a.astype(np.float32) for a in (_Q * 10, _K * 10, _V))
    with pytest.raises(attnreg.NumericalError, match="overflows float32"):
        _A.softmax(Q, K, V, scale=1e38)
    with pytest.raises(ValueError, match=r"bandwidth: is too small: 1 / bandwidth\^2 overflows "
                                         r"float32 .*float64"):
        _A.nw_rbf(Q, K, V, bandwidth=1e-20)
    out = _A.nw_rbf(Q.astype(np.float64), K.astype(np.float64), V.astype(np.float64),
                    bandwidth=1e-20)  # fine in float64: the nearest key's value
    assert np.isfinite(out).all()


def test_lla_finalize_refuses_partials_missing_keys():
    K = rng.normal(size=(16, 3))
    V = rng.normal(size=(16, 2))
    p = _A.lla_partial(_Q, K[:8], V[:8], key_offset=0, n_keys_total=16)
    with pytest.raises(ValueError, match=r"partial: covers keys \[0, 8\) of n_keys_total = 16"):
        _A.lla_finalize(_Q, p, ridge=0.1)
    with pytest.raises(ValueError, match="exactly once"):
        _A.lla_merge(p, p)
    q = _A.lla_partial(_Q, K[8:], V[8:], key_offset=8, n_keys_total=16)
    np.testing.assert_allclose(_A.lla_finalize(_Q, _A.lla_merge(q, p), ridge=0.1),
                               _A.lla(_Q, K, V, ridge=0.1, method="direct"), rtol=1e-12,
                               atol=1e-12)


def test_softmax_finalize_refuses_partials_missing_keys():
    core = attnreg._core
    Q = _Q[None, None]
    K = rng.normal(size=(1, 1, 16, 3))
    V = rng.normal(size=(1, 1, 16, 2))
    p = core.softmax_partial(Q, K[:, :, :8].copy(), V[:, :, :8].copy(), 0, 16)
    with pytest.raises(ValueError, match=r"^partial: covers keys \[0, 8\) of n_keys_total = 16"):
        core.softmax_finalize(p)
    with pytest.raises(ValueError, match="exactly once"):
        core.softmax_merge(p, p)
    q = core.softmax_partial(Q, K[:, :, 8:].copy(), V[:, :, 8:].copy(), 8, 16)
    np.testing.assert_allclose(core.softmax_finalize(core.softmax_merge(q, p)),
                               _A.softmax(Q, K, V), rtol=1e-12, atol=1e-12)


_x1 = rng.uniform(size=200)
_y1 = np.sin(3 * _x1) + rng.normal(0, 0.2, 200)


@pytest.mark.parametrize("bad", [-1, 0, float("nan"), float("inf")])
@pytest.mark.parametrize("call,name", [
    (lambda v: attnreg.diagnostics.mse_dpi(_x1, _y1, preliminary_bandwidth=v),
     "preliminary_bandwidth"),
    (lambda v: attnreg.diagnostics.imse_dpi(_x1, _y1, preliminary_bandwidth=v),
     "preliminary_bandwidth"),
    (lambda v: attnreg.diagnostics.mse_dpi(_x1, _y1, pilot_bandwidth=v), "pilot_bandwidth"),
    (lambda v: attnreg.diagnostics.imse_dpi(_x1, _y1, pilot_bandwidth=v), "pilot_bandwidth"),
    (lambda v: attnreg.diagnostics.tradeoff(_x1, _y1, [0.1, 0.2], pilot_bandwidth=v),
     "pilot_bandwidth"),
])
def test_bad_preliminary_or_pilot_bandwidth_is_an_error_not_the_default(call, name, bad):
    with pytest.raises(ValueError, match=rf"^{name}: must be a positive finite number or None"):
        call(bad)


def test_tradeoff_names_nan_in_x():
    xn = _x1.copy()
    xn[3] = np.nan
    with pytest.raises(ValueError, match="^X: contains NaN or Inf"):
        attnreg.diagnostics.tradeoff(xn, _y1, [0.1, 0.2])


def test_specification_test_without_weighted_pairs_names_the_bandwidth():
    with pytest.raises(ValueError, match=r"^bandwidth: no pair of distinct observations has "
                                         r"kernel weight at h = 1e-08 \(given\)"):
        attnreg.diagnostics.specification_test(_x1, _y1, bandwidth=[1e-8])


def test_diagnose_with_several_regressors_fills_bias_columns():
    # The multivariate pilot local quadratic (test_rbc_multivariate.py checks its numbers).
    m = attnreg.LocalLinear(bandwidth=[0.3, 0.3]).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        d = attnreg.diagnostics.diagnose(m, X[:4])
    assert np.isfinite(d.to_numpy()).all()
    with pytest.raises(ValueError, match=r"pilot_bandwidth: needs one value per column of X"):
        attnreg.diagnostics.diagnose(m, X[:4], pilot_bandwidth=[0.3])
    m1 = attnreg.LocalLinear(bandwidth=0.3).fit(X[:, :1], y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isfinite(attnreg.diagnostics.diagnose(m1, X[:4, :1]).to_numpy()).all()


_cl = np.repeat(np.arange(10), 3)


@pytest.mark.parametrize("bad,msg", [
    (np.where(np.arange(30) == 4, np.nan, _cl), r"cluster: is missing \(NaN/None\) at row 4"),
    (np.array([None] + list(_cl[1:]), dtype=object), r"cluster: is missing"),
    (_cl + 0.5, r"cluster: must be integer ids or labels; got the non-integer 0.5"),
])
def test_cr1_cluster_ids_missing_or_fractional_are_errors(bad, msg):
    m1 = attnreg.LocalLinear(bandwidth=0.3).fit(X[:, :1], y)
    with pytest.raises(ValueError, match=msg):
        attnreg.diagnostics.diagnose(m1, X[:2, :1], cov_type="cr1", groups=bad)


def test_cr1_cluster_labels_are_factorised():
    m1 = attnreg.LocalLinear(bandwidth=0.3).fit(X[:, :1], y)
    ref = attnreg.diagnostics.diagnose(m1, X[:3, :1], cov_type="cr1", groups=_cl)["se"]
    for c in (_cl.astype(float), np.array(list("abcdefghij"))[_cl],
              pd.Categorical(np.array(list("abcdefghij"))[_cl])):
        np.testing.assert_array_equal(
            attnreg.diagnostics.diagnose(m1, X[:3, :1], cov_type="cr1", groups=c)["se"], ref)


def test_select_bandwidth_grid_size_is_capped_with_the_reason():
    with pytest.raises(ValueError, match=r"^grid_size: must be between 0 and 10000 \(each grid "
                                         r"point is one full cross-validation pass"):
        attnreg.select_bandwidth(X[:, :1], y, grid_size=10**9)


def test_dpi_refuses_a_2d_x_instead_of_ravelling_it():
    with pytest.raises(ValueError, match=r"^x: dpi is for one regressor.*shape \(30, 2\)"):
        attnreg.bandwidth.dpi(X, y)
    h = attnreg.bandwidth.dpi(X[:, :1], y).bandwidth  # one column is fine
    assert h == attnreg.bandwidth.dpi(X[:, 0], y).bandwidth


@pytest.mark.parametrize("call,msg", [
    (lambda: attnreg.diagnostics.diagnose(ll().fit(X[:, :1], y), X[:2, :1], output=-1),
     r"^output: must be a non-negative integer, got -1"),
    (lambda: attnreg.diagnostics.bootstrap_bands(ll().fit(X[:, :1], y), X[:2, :1],
                                                 random_state=-1, replications=19),
     r"^random_state: must be a non-negative integer, got -1"),
    (lambda: attnreg.diagnostics.bootstrap_bands(ll().fit(X[:, :1], y), X[:2, :1],
                                                 random_state=1.5, replications=19),
     r"^random_state: must be a non-negative integer, None or a numpy Generator, got 1.5"),
    (lambda: _A.softmax(_Q, _K, _V, window=2.5), r"^window: must be a non-negative integer"),
    (lambda: _A.attention_weights(_Q, _K, window=2.5), r"^window: must be a non-negative"),
    (lambda: _A.lla_partial(_Q, _K, _V, key_offset=0, n_keys_total=8, window=-1),
     r"^window: must be >= 0"),
])
def test_integer_arguments_are_named_not_pybind_signature_errors(call, msg):
    with pytest.raises((TypeError, ValueError), match=msg):
        call()


# ---------------------------------------------------------------- core decisions: refused
# (masks of split-key partials, frequency weights, the absorbed fit's options). Each message
# names the argument and the fix.

def _lla_partial_for(causal, window):
    rng_ = np.random.default_rng(4)
    Q = rng_.normal(size=(5, 2))
    K = rng_.normal(size=(9, 2))
    V = rng_.normal(size=(9, 1))
    return Q, K, V, _A.lla_partial(Q, K, V, key_offset=0, n_keys_total=9, causal=causal,
                                   window=window)


@pytest.mark.parametrize("pmask,fmask,msg", [
    ((False, None), dict(causal=True), r"^causal: differs from the statistics' \(lla_partial ran "
                                       r"with causal = false\)"),
    ((True, None), dict(causal=False), r"^causal: differs from the statistics'"),
    ((True, 3), dict(window=2), r"^window: differs from the statistics' \(lla_partial ran with "
                                r"window = 3\)"),
    ((False, None), dict(window=4), r"^window: differs"),
    ((False, 4), dict(window=0), r"^window: differs"),
])
def test_lla_finalize_refuses_a_mask_other_than_the_partials(pmask, fmask, msg):
    Q, K, V, part = _lla_partial_for(*pmask)
    with pytest.raises(ValueError, match=msg):
        _A.lla_finalize(Q, part, ridge=0.5, **fmask)


def test_lla_merge_refuses_partials_of_different_masks():
    Q, K, V, a = _lla_partial_for(True, None)
    b = _A.lla_partial(Q, K[5:], V[5:], key_offset=5, n_keys_total=9)
    with pytest.raises(ValueError, match=r"^other: was computed under another mask"):
        _A.lla_merge(a, b)


@pytest.mark.parametrize("make", [
    lambda w: attnreg.OLS(weight_type="frequency").fit(X, y, sample_weight=w),
    lambda w: attnreg.OLS(weight_type="frequency").fit(X, y, sample_weight=w,
                                                        absorb=np.arange(30) % 3),
    lambda w: attnreg.Ridge(weight_type="frequency", alpha=1.0).fit(X, y, sample_weight=w),
    lambda w: attnreg.PCR(weight_type="frequency").fit(X, y, sample_weight=w),
])
def test_non_integer_frequency_weights_are_refused_pointing_to_analytic(make):
    w = np.ones(30)
    w[4] = 0.5
    with pytest.raises(ValueError, match=r"^weights: weight 5 is 0.5; frequency weights count "
                                         r"copies of a row and must be whole numbers.*analytic"):
        make(w)
    make(np.full(30, 2.0))  # whole numbers are copies
    make(np.where(np.arange(30) == 4, 0.0, 3.0))  # and 0 is no copy


@pytest.mark.parametrize("kw,msg", [
    (dict(fe_tol=0), r"^fe_tol: must be a number in \(0, 1\)"),
    (dict(fe_tol=1.5), r"^fe_tol: must be a number in \(0, 1\)"),
    (dict(fe_max_iter=0), r"^fe_max_iter: must be an integer >= 1"),
    (dict(fe_max_iter=2.5), r"^fe_max_iter: must be an integer >= 1"),
])
def test_absorbed_fit_options_are_named_as_passed(kw, msg):
    with pytest.raises(ValueError, match=msg):
        attnreg.OLS(**kw).fit(X, y, absorb=np.arange(30) % 3)


def test_duplicate_absorb_columns_are_named():
    fe = pd.DataFrame(np.column_stack([np.arange(30) % 3, np.arange(30) % 2]), columns=["g", "g"])
    with pytest.raises(ValueError, match=r"^absorb: column names must be distinct, got 'g'"):
        attnreg.OLS().fit(X, y, absorb=fe)


def test_formula_without_regressors_or_intercept_is_named():
    d = pd.DataFrame({"y": y, "x": X[:, 0]})
    with pytest.raises(ValueError, match=r"^formula: 'y ~ 0' has no regressors and no intercept"):
        attnreg.ols("y ~ 0", d)


def test_ridge_formula_without_regressors_points_to_ols():
    d = pd.DataFrame({"y": y, "x": X[:, 0]})
    with pytest.raises(ValueError, match=r"^formula: 'y ~ 1' has no regressors, so Ridge has "
                                         r"nothing to penalise: for the mean use attnreg.ols"):
        attnreg.ridge("y ~ 1", d)
