"""attnreg.dask on a real LocalCluster (2 worker processes, 1 thread each): results equal the
in-memory estimators to 1e-12 relative, the merge is order-free, a killed worker is survived,
bad partitions give the in-memory errors."""
from __future__ import annotations

import os
import sys
import time

import numpy as np
import pytest

import attnreg
from attnreg import _core
from attnreg import attention as att

dask = pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")
pd = pytest.importorskip("pandas")

import attnreg.dask as adk  # noqa: E402


async def _crash():
    os._exit(1)


def _slow_identity(b, seconds):
    time.sleep(seconds)
    return b


@pytest.fixture(scope="module")
def client():
    import cloudpickle

    # Functions defined here travel to the workers by value (the test module is not on the
    # workers' path).
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    env = {"OMP_NUM_THREADS": "1"}
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None, env=env,
                                       silence_logs=40)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()
    cloudpickle.unregister_pickle_by_value(sys.modules[__name__])


def rel(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return float(np.max(np.abs(a - b)) / max(1.0, np.max(np.abs(b))))


def data(n=400, d=2, k=1, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.sin(X @ np.ones(d)) + 0.1 * rng.normal(size=n)
    if k > 1:
        y = np.column_stack([y] + [np.cos(X[:, 0] * j) for j in range(1, k)])
    return X, y, rng


@pytest.mark.parametrize("degree,ridge,k,kernel", [(0, 0.0, 1, "gaussian"),
                                                   (1, 0.0, 1, "gaussian"),
                                                   (1, 0.1, 2, "gaussian"),
                                                   (1, 0.0, 1, "epanechnikov")])
def test_predict_equals_in_memory(client, degree, ridge, k, kernel):
    X, y, rng = data(k=k, seed=degree + k)
    Xq = rng.normal(size=(57, 2)) * 0.8
    bw = [0.6, 0.8] if kernel == "gaussian" else 1.5
    est = (attnreg.NadarayaWatson(bandwidth=bw, kernel=kernel) if degree == 0 else
           attnreg.LocalLinear(bandwidth=bw, kernel=kernel, ridge=ridge))
    ref = est.fit(X, y).predict(Xq)
    got = adk.predict(da.from_array(X, chunks=(97, 1)), da.from_array(y, chunks=61),
                      da.from_array(Xq, chunks=(20, 2)), bandwidth=bw, degree=degree,
                      kernel=kernel, ridge=ridge)
    assert got.shape == ref.shape
    assert rel(got, ref) < 1e-12


def test_predict_dataframes_and_sample_weight(client):
    dd = pytest.importorskip("dask.dataframe", reason="dask.dataframe needs pyarrow")
    X, y, rng = data(n=300, seed=3)
    w = np.exp(2 * rng.normal(size=300))
    Xq = rng.normal(size=(30, 2))
    ref = attnreg.LocalLinear(bandwidth=0.7).fit(X, y, sample_weight=w).predict(Xq)
    Xdf = dd.from_pandas(pd.DataFrame(X, columns=["a", "b"]), npartitions=4)
    ydf = dd.from_pandas(pd.Series(y), npartitions=3)
    got = adk.predict(Xdf, ydf, dd.from_pandas(pd.DataFrame(Xq, columns=["a", "b"]),
                                               npartitions=2),
                      bandwidth=0.7, sample_weight=da.from_array(w, chunks=50))
    assert rel(got, ref) < 1e-12
    lazy = adk.predict(X, y, Xq, bandwidth=0.7, sample_weight=w, compute=False)
    assert isinstance(lazy, da.Array)
    assert rel(lazy.compute(), ref) < 1e-12


@pytest.mark.parametrize("degree", [0, 1])
def test_loo_cv_and_select_bandwidth_equal_in_memory(client, degree):
    X, y, _ = data(n=250, seed=10 + degree)
    Xd = da.from_array(X, chunks=(70, 2))
    yd = da.from_array(y, chunks=70)
    grid = [0.3, 0.6, 1.2, 2.4]
    Est = attnreg.NadarayaWatson if degree == 0 else attnreg.LocalLinear
    ref = [Est(bandwidth=h).fit(X, y).cv_score_ for h in grid]
    got = [adk.loo_cv(Xd, yd, bandwidth=h, degree=degree) for h in grid]
    assert rel(got, ref) < 1e-12
    res = adk.select_bandwidth(Xd, yd, grid, degree=degree)
    assert res.bandwidth[0] == grid[int(np.argmin(ref))]
    assert abs(res.cv - min(ref)) <= 1e-12 * min(ref)
    # Per-column log grid around the rule of thumb: the minimum over that grid.
    res2 = adk.select_bandwidth(Xd, yd, factors=[0.7, 1.0, 1.5], degree=degree)
    assert res2.grid.shape == (3, 2)
    ref2 = [Est(bandwidth=list(h)).fit(X, y).cv_score_ for h in res2.grid]
    assert rel(res2.scores, ref2) < 1e-12


def test_loo_cv_with_sample_weight_and_degree_two(client):
    X, y, rng = data(n=200, d=1, seed=4)
    w = np.exp(rng.normal(size=200))
    Xd, yd, wd = (da.from_array(a, chunks=45) for a in (X, y, w))
    ref = attnreg.LocalLinear(bandwidth=0.5).fit(X, y, sample_weight=w).cv_score_
    assert rel(adk.loo_cv(Xd, yd, bandwidth=0.5, sample_weight=wd), ref) < 1e-12
    # Local quadratic (one continuous column) through the same partials.
    core = _core.LocalPolynomial(degree=2)
    core.fit(X, y[:, None], np.array([0.5]))
    Xq = np.linspace(-1, 1, 7)[:, None]
    got = adk.predict(Xd, yd, Xq, bandwidth=0.5, degree=2)
    assert rel(got, core.predict(Xq)[:, 0]) < 1e-12


def test_merge_order_does_not_matter(client):
    X, y, rng = data(n=360, seed=7)
    Xq = rng.normal(size=(40, 2))
    results = []
    for chunks, split_every in [((360,), 8), ((40,) * 9, 2), ((13, 100, 7, 240), 3),
                                ((180, 180), 2)]:
        # Random permutation of the training partitions (rows keep their pairing with y).
        perm = rng.permutation(len(chunks))
        cuts = np.concatenate([[0], np.cumsum(chunks)])
        idx = np.concatenate([np.arange(cuts[p], cuts[p + 1]) for p in perm])
        csz = tuple(chunks[p] for p in perm)
        results.append(adk.predict(da.from_array(X[idx], chunks=(csz, 2)),
                                   da.from_array(y[idx], chunks=(csz,)), Xq, bandwidth=0.5,
                                   split_every=split_every))
    for r in results[1:]:
        assert rel(r, results[0]) < 1e-13
    # Associativity and commutativity of the merge itself.
    bw = np.array([0.5])
    p = [_core.local_partial(X[a:a + 120], y[a:a + 120, None], Xq, bw) for a in (0, 120, 240)]
    m = _core.local_merge
    before = [x["A"].copy() for x in p]
    f = [_core.local_finalize(x, bw)[0] for x in
         (m(m(p[0], p[1]), p[2]), m(p[0], m(p[1], p[2])), m(m(p[2], p[0]), p[1]))]
    assert rel(f[1], f[0]) < 1e-13 and rel(f[2], f[0]) < 1e-13
    assert all(np.array_equal(b, x["A"]) for b, x in zip(before, p))  # inputs untouched


def test_killed_worker_is_survived(client):
    X, y, rng = data(n=400, seed=12)
    Xq = rng.normal(size=(60, 2))
    ref = attnreg.LocalLinear(bandwidth=0.5).fit(X, y).predict(Xq)
    Xd = da.from_array(X, chunks=(25, 2)).map_blocks(_slow_identity, 0.15, dtype=float)
    graph = adk.predict(Xd, da.from_array(y, chunks=25), da.from_array(Xq, chunks=(20, 2)),
                        bandwidth=0.5, compute=False)
    fut = client.compute(graph)
    time.sleep(1.0)  # tasks are running on both workers
    assert not fut.done()
    victim = sorted(client.scheduler_info()["workers"])[0]
    client.run(_crash, workers=[victim], wait=False)  # a crash, not a clean shutdown
    got = fut.result(timeout=60)
    assert rel(got, ref) < 1e-12
    client.wait_for_workers(2, timeout=30)


def test_bad_partitions_give_in_memory_errors(client):
    X, y, _ = data(n=100)
    Xn = X.copy()
    Xn[63, 1] = np.nan
    with pytest.raises(ValueError) as mem:
        _core.LocalPolynomial(degree=1).fit(Xn, y[:, None], np.array([0.5]))
    with pytest.raises(ValueError) as dsk:
        adk.predict(da.from_array(Xn, chunks=(30, 2)), y, X[:5], bandwidth=0.5)
    assert str(dsk.value) == str(mem.value)
    assert "X: contains NaN at row 64, column 2" in str(dsk.value)
    with pytest.raises(ValueError, match="X: contains NaN at row 64"):
        adk.loo_cv(da.from_array(Xn, chunks=(30, 2)), y, bandwidth=0.5)
    # y with NaN, X_new with Inf: the same messages as the core.
    yn = y.copy()
    yn[5] = np.nan
    with pytest.raises(ValueError, match=r"y: contains NaN at row 6"):
        adk.predict(X, da.from_array(yn, chunks=30), X[:5], bandwidth=0.5)
    Xq = X[:5].copy()
    Xq[2, 0] = np.inf
    with pytest.raises(ValueError, match=r"X_new: contains Inf at row 3, column 1"):
        adk.predict(X, y, Xq, bandwidth=0.5)
    # A partition with the wrong number of columns.
    import dask as dk

    parts = [da.from_array(X[:50], chunks=(50, 2)),
             da.from_delayed(dk.delayed(lambda: np.ones((50, 3)))(), shape=(50, 2), dtype=float)]
    with pytest.raises(ValueError, match="partition starting at row 51 has 3 columns"):
        adk.predict(da.concatenate(parts), y, X[:5], bandwidth=0.5)
    with pytest.raises(ValueError, match="X_new: has 3 columns but the model was fitted with 2"):
        adk.predict(X, y, np.ones((4, 3)), bandwidth=0.5)
    # A query far from every training row: the in-memory NumericalError.
    far = np.array([[300.0, 0.0]])
    with pytest.raises(attnreg.NumericalError) as mem2:
        attnreg.LocalLinear(bandwidth=0.5).fit(X, y).predict(far)
    with pytest.raises(attnreg.NumericalError) as dsk2:
        adk.predict(da.from_array(X, chunks=(30, 2)), y, far, bandwidth=0.5)
    assert str(dsk2.value) == str(mem2.value)
    with pytest.raises(ValueError, match="bandwidth: got 3 values for 2 columns"):
        adk.predict(X, y, X[:5], bandwidth=[0.1, 0.2, 0.3])


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_ols_and_ridge_by_tsqr_equal_in_memory(client, fit_intercept):
    rng = np.random.default_rng(5)
    n, p = 2000, 6
    X = rng.normal(size=(n, p)) * np.arange(1, p + 1) + 3.0
    y = X @ rng.normal(size=p) + 2.0 + rng.normal(size=n)
    Y2 = np.column_stack([y, rng.normal(size=n)])
    Xd = da.from_array(X, chunks=(300, p))
    for yy in (y, Y2):
        yd = da.from_array(yy, chunks=300)
        ref = attnreg.OLS(fit_intercept=fit_intercept).fit(X, yy)
        coef, b0 = adk.ols(Xd, yd, fit_intercept=fit_intercept)
        assert coef.shape == np.shape(ref.coef_)
        assert rel(coef, ref.coef_) < 1e-12 and rel(b0, ref.intercept_) < 1e-12
        for alpha in (0.5, 50.0):
            rr = attnreg.Ridge(alpha=alpha, fit_intercept=fit_intercept).fit(X, yy)
            c, i0 = adk.ridge(Xd, yd, alpha=alpha, fit_intercept=fit_intercept)
            assert rel(c, rr.coef_) < 1e-12 and rel(i0, rr.intercept_) < 1e-12


def test_ols_by_tsqr_rank_deficient_names_x(client):
    rng = np.random.default_rng(6)
    X = rng.normal(size=(400, 3))
    X[:, 2] = 2 * X[:, 1]
    Xd = da.from_array(X, chunks=(100, 3))
    yd = da.from_array(rng.normal(size=400), chunks=100)
    with pytest.raises(ValueError, match="X: the design is rank deficient"):
        adk.ols(Xd, yd)
    coef, _ = adk.ridge(Xd, yd, alpha=1.0)  # a penalty keeps it solvable
    assert np.all(np.isfinite(coef))


def test_attention_split_over_batch_heads_and_keys(client):
    rng = np.random.default_rng(9)
    B, H, nq, nk, d, dv = 2, 3, 24, 90, 4, 3
    Q = rng.normal(size=(B, H, nq, d))
    K = rng.normal(size=(B, H, nk, d))
    V = rng.normal(size=(B, H, nk, dv))
    Qd = da.from_array(Q, chunks=(1, 2, nq, d))
    Kd = da.from_array(K, chunks=(1, 2, 25, d))
    Vd = da.from_array(V, chunks=(2, 3, 40, dv))
    for causal in (False, True):
        assert rel(adk.softmax(Qd, Kd, Vd, causal=causal),
                   att.softmax(Q, K, V, causal=causal)) < 1e-12
        assert rel(adk.nw_rbf(Qd, Kd, Vd, bandwidth=1.3, causal=causal),
                   att.nw_rbf(Q, K, V, bandwidth=1.3, causal=causal)) < 1e-12
        ref = att.lla(Q, K, V, ridge=0.1, causal=causal, method="direct")
        assert rel(adk.lla(Qd, Kd, Vd, ridge=0.1, causal=causal), ref) < 1e-12
    # One long sequence (2-d) split over workers by key blocks only.
    q1, k1, v1 = Q[0, 0], rng.normal(size=(1000, d)), rng.normal(size=(1000, dv))
    got = adk.softmax(q1, da.from_array(k1, chunks=(128, d)), da.from_array(v1, chunks=(128, dv)))
    assert got.shape == (nq, dv)
    assert rel(got, att.softmax(q1, k1, v1)) < 1e-12


def test_missing_dask_gives_clear_import_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "dask", None)
    with pytest.raises(ImportError, match=r'pip install "dask\[distributed\]"'):
        adk._dask()
