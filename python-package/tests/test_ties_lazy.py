"""Tie grouping and lazy training statistics of the kernel estimators: fit computes only what
prediction needs; fitted values, leverages, LOO predictions, effective df and summary() are
computed on first use over the distinct rows and equal the ungrouped quantities."""
import numpy as np
import pytest

import attnreg
from attnreg import _core, diagnostics


def tied_data(seed, n=150, mixed=True, k=1):
    rng = np.random.default_rng(seed)
    x1 = np.floor(rng.uniform(0, 9, n))
    cols = [x1]
    if mixed:
        cols.append(np.floor(rng.uniform(0, 3, n)))
    X = np.column_stack(cols)
    y = np.sin(x1)[:, None] + rng.normal(size=(n, k))
    return X, (y[:, 0] if k == 1 else y)


@pytest.mark.parametrize("est", ["nw", "ll"])
@pytest.mark.parametrize("mixed", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
def test_grouped_statistics_equal_ungrouped_and_literal_refits(est, mixed, weighted):
    X, y = tied_data(3 + mixed + 2 * weighted, mixed=mixed, k=2 if weighted else 1)
    vt = "cu" if mixed else "c"
    bw = [2.6, 0.3] if mixed else [2.6]
    w = np.random.default_rng(5).uniform(0.2, 1.2, len(X)) if weighted else None
    cls = attnreg.NadarayaWatson if est == "nw" else attnreg.LocalLinear
    m = cls(bandwidth=bw, var_types=vt).fit(X, y, sample_weight=w)
    assert m._model.n_distinct < len(X)
    assert m._model.statistics_evaluations == 0  # fit computed no training statistics
    L = m.attention_weights(X)  # the ungrouped n x n smoother matrix
    np.testing.assert_allclose(m.leverage_, np.diag(L), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(m.fitted_values(), L @ y, rtol=1e-12, atol=1e-12)
    assert m.effective_df_ == pytest.approx(np.trace(L), rel=1e-12)
    assert m._model.trace_LtL() == pytest.approx(np.sum(L**2), rel=1e-12)
    assert m._model.statistics_evaluations == 1  # computed once, then cached
    loo = m.loo_predictions()
    for i in range(0, len(X), 13):
        keep = np.arange(len(X)) != i
        r = cls(bandwidth=bw, var_types=vt).fit(
            X[keep], y[keep], sample_weight=None if w is None else w[keep])
        np.testing.assert_allclose(loo[i], r.predict(X[i:i + 1])[0], rtol=1e-12, atol=1e-12)
    r2 = ((y - loo) ** 2).reshape(len(X), -1).mean(axis=1)
    cv = np.average(r2, weights=w)  # weighted: the criterion weighted cv_ls minimises
    assert m.cv_score_ == pytest.approx(cv, rel=1e-12)


def test_summary_matches_the_ungrouped_smoother_matrix():
    X, y = tied_data(9, n=200, mixed=True)
    m = attnreg.LocalLinear(bandwidth=[2.6, 0.3], var_types="cu").fit(X, y)
    s = diagnostics.summary(m)
    L = m.attention_weights(X)
    e = y - L @ y
    tl, tll = np.trace(L), np.sum(L**2)
    assert s.trace_LtL == pytest.approx(tll, rel=1e-12)
    assert s.sigma == pytest.approx(np.sqrt(e @ e / (len(y) - 2 * tl + tll)), rel=1e-12)
    assert s.cv == pytest.approx(m.cv_score_, rel=1e-12)


def test_one_and_two_threads_identical():
    # enough distinct rows (G^2 > 2e6 pairs) that the grouped pass runs on 2 threads
    X, y = tied_data(4, n=6000, mixed=True, k=2)
    X[:, 0] = np.floor(np.random.default_rng(8).uniform(0, 1500, len(X)))
    a = attnreg.LocalLinear(bandwidth=[40.0, 0.3], var_types="cu", n_threads=1).fit(X, y)
    b = attnreg.LocalLinear(bandwidth=[40.0, 0.3], var_types="cu", n_threads=2).fit(X, y)
    assert len(X) > a._model.n_distinct > 1415
    assert np.array_equal(a.loo_predictions(), b.loo_predictions())
    assert np.array_equal(a.leverage_, b.leverage_)
    assert a._model.trace_LtL() == b._model.trace_LtL()
    assert _core is not None


@pytest.mark.parametrize("kernel", ["epanechnikov", "gaussian", "uniform"])
@pytest.mark.parametrize("degree", [0, 1, 2])
def test_trace_LtL_streamed_over_windows_equals_the_dense_smoother(kernel, degree):
    # tr(L'L) is summed over each query's kernel window without forming L: compact windows
    # that leave rows out, ties, sample weights and a shifted origin against the dense n x n
    # smoother (its rounding ~1e-16 relative per entry, summed over n^2 entries)
    rng = np.random.default_rng(11 + degree)
    X = rng.uniform(-1, 1, size=(400, 2)) + 30.0
    X[:60] = np.round(X[:60], 1)
    y = np.sin(3 * X[:, 0]) + rng.normal(size=len(X))
    w = rng.uniform(0.2, 1.5, len(X))
    m = attnreg.LocalPolynomial(degree=degree, kernel=kernel, bandwidth=[0.35, 0.5]).fit(
        X, y, sample_weight=w)
    L = m.attention_weights(X)
    assert np.mean(L == 0) > (0.3 if kernel != "gaussian" else -1)  # compact: real windows
    assert m._model.trace_LtL() == pytest.approx(np.sum(L ** 2), rel=1e-12)
