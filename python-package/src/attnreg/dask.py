"""attnreg on a Dask cluster: kernel regression, least squares and attention scaled out.

Every kernel estimator of attnreg is a per-query solve on sums over training rows (Zuo et al. 2025, arXiv:2510.01450
eq. 7): for local linear the local moments ``omega, mu~, Sigma~`` and the value moments, for
Nadaraya-Watson ``omega`` and ``sum w y``; for attention the same with a running max of the
logits. Sums over disjoint blocks of rows add, so the work splits into independent tasks, one
per (training partition x query block), whose *partial statistics* are merged pairwise in a
tree (the merge is associative and commutative; a running max with rescaling keeps it exact)
and finalised per query by the same equilibrated Cholesky solve as the in-memory estimator.
The answers equal :class:`attnreg.NadarayaWatson` / :class:`attnreg.LocalLinear` /
:func:`attnreg.attention.softmax` / :func:`attnreg.attention.lla` to rounding (about 1e-15
relative), and a partition recomputed after a worker dies gives the same numbers. One
exception: a local linear fit whose local design is nearly singular (a bandwidth below the
spacing of the data, where a leave-one-out point's few neighbours lie on one side) amplifies
the rounding of the summed moments by the design's condition number, in memory and on Dask
alike; the two can then differ by up to about 1e-11 relative, neither being the more exact.

Least squares uses Dask's tall-and-skinny QR (``dask.array.linalg.tsqr``) of ``[D, y]``: the
triangular factor of the augmented matrix holds everything OLS and ridge need, and the small
solve on the client never forms the normal equations.

Inputs: Dask arrays (rows split in chunks, any chunking of the columns), Dask DataFrames
(partitions; lengths are computed), or numpy arrays / pandas DataFrames (one partition).
Functions return numpy results; pass ``compute=False`` to get the lazy Dask object instead.

Dask is optional: ``import attnreg.dask`` works without it and the first call raises an
ImportError that says how to install it (``pip install "dask[distributed]"``).

Limits: continuous columns only for the kernel estimators (a categorical kernel depends on the
levels seen in all of training); attention queries of one (batch, head) are kept together so
causal and window masks keep their global positions (keys may be split anywhere).
"""
from __future__ import annotations

import math
import numbers
import os
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from . import _core
from ._validation import numbers_only, per_column_bandwidth

__all__ = [
    "predict",
    "loo_cv",
    "select_bandwidth",
    "BandwidthSearch",
    "ols",
    "ridge",
    "softmax",
    "nw_rbf",
    "lla",
]

_INSTALL = (
    "attnreg.dask needs Dask with its distributed scheduler: pip install \"dask[distributed]\" "
    "(or conda install dask distributed)"
)


def _dask():
    """Import dask lazily; a clear ImportError when it is missing."""
    try:
        import dask
        import dask.array as da
    except ImportError as exc:  # pragma: no cover - exercised only without dask
        raise ImportError(_INSTALL) from exc
    return dask, da


# ---------------------------------------------------------------------- input plumbing
def _row_blocks(X, name: str, *, ncols_expected: int | None = None):
    """X (Dask array / DataFrame, numpy, pandas) -> (list of delayed 2-D float64 blocks, row
    counts per block, number of columns)."""
    dask, da = _dask()
    if hasattr(X, "to_dask_array"):  # a Dask DataFrame / Series (dask.dataframe needs pyarrow)
        X = X.to_dask_array(lengths=True)
    if not isinstance(X, da.Array):
        arr = np.asarray(X)
        X = da.from_array(arr, chunks=(max(1, arr.shape[0]),) + arr.shape[1:])
    if X.ndim == 1:
        X = X[:, None]
    if X.ndim != 2:
        raise ValueError(f"{name}: expected a 2-d array (rows x columns), got {X.ndim} dimensions")
    if any(isinstance(c, float) and math.isnan(c) for c in X.chunks[0]):
        X = X.compute_chunk_sizes()
    X = X.rechunk({1: -1})
    sizes = [int(c) for c in X.chunks[0]]
    offsets = np.concatenate([[0], np.cumsum(sizes)])[:-1]
    blocks = [dask.delayed(_as_float64)(b, name, int(o), int(X.shape[1]))
              for b, o in zip(X.to_delayed()[:, 0], offsets)]
    return blocks, sizes, int(X.shape[1])


def _as_float64(b, name: str, offset: int = 0, ncols: int | None = None) -> np.ndarray:
    """One partition as a 2-d float64 array, checked with the in-memory messages (rows
    counted in the whole array, not the partition)."""
    a = np.asarray(b)
    if a.dtype.kind not in "biuf":
        raise ValueError(f"{name}: expected numeric data, got dtype {a.dtype}")
    a = np.asarray(a, dtype=np.float64)
    a = a[:, None] if a.ndim == 1 else a
    if ncols is not None and a.shape[1] != ncols:
        raise ValueError(
            f"{name}: the partition starting at row {offset + 1} has {a.shape[1]} columns, "
            f"the array {ncols} (every partition must have the same columns)"
        )
    if not np.all(np.isfinite(a)):
        bad = np.argwhere(~np.isfinite(a))
        i, j = (int(v) for v in bad[np.lexsort((bad[:, 0], bad[:, 1]))][0])
        kind = "NaN" if np.isnan(a[i, j]) else "Inf"
        raise ValueError(
            f"{name}: contains {kind} at row {offset + i + 1}, column {j + 1} (remove or impute "
            "missing/infinite values first)"
        )
    return a


def _bandwidth(bandwidth, d: int) -> np.ndarray:
    if isinstance(bandwidth, str):
        raise ValueError(
            f"bandwidth={bandwidth!r}: pass numbers here; choose them on the cluster with "
            "attnreg.dask.select_bandwidth"
        )
    # LocalLinear's rule (the columns here are all continuous)
    return per_column_bandwidth(bandwidth, d, True)


def _degree(degree) -> int:
    if isinstance(degree, str):
        names = {"nw": 0, "local_constant": 0, "nadaraya_watson": 0, "ll": 1, "local_linear": 1}
        if degree not in names:
            raise ValueError(f"degree: unknown {degree!r} (0 / 'nw' or 1 / 'll', or 2, 3)")
        return names[degree]
    return int(degree)


def _tree_reduce(items: list, merge, split_every: int):
    """Merge delayed partials pairwise in a balanced tree (groups of split_every)."""
    dask, _ = _dask()
    level = list(items)
    while len(level) > 1:
        nxt = []
        for i in range(0, len(level), split_every):
            grp = level[i:i + split_every]
            nxt.append(grp[0] if len(grp) == 1 else dask.delayed(_merge_many)(merge, *grp))
        level = nxt
    return level[0]


def _merge_many(merge, *parts):
    acc = parts[0]
    for p in parts[1:]:
        acc = merge(acc, p)
    return acc


# ---------------------------------------------------------------------- kernel regression
def _local_partial(Xb, Yb, Qb, bw, degree, kernel, algorithm, wb, self_rows, query_arg):
    if Yb.shape[0] != Xb.shape[0]:
        raise ValueError(
            f"y: has {Yb.shape[0]} rows in a partition whose X has {Xb.shape[0]} "
            "(X and y must be partitioned alike)"
        )
    sw = None if wb is None else np.ascontiguousarray(wb, dtype=np.float64).ravel()
    return _core.local_partial(Xb, Yb, Qb, bw, degree=degree, kernel=kernel,
                               algorithm=algorithm, sample_weight=sw, self_rows=self_rows,
                               n_threads=1, query_arg=query_arg)


def _local_finalize(p, bw, degree, kernel, ridge, query_arg):
    fit, _ = _core.local_finalize(p, bw, degree=degree, kernel=kernel, ridge=ridge,
                                  leave_one_out=False, throw_on_failure=True,
                                  query_arg=query_arg)
    return fit


def _prepare(X, y, sample_weight):
    xb, xn, d = _row_blocks(X, "X")
    yb, yn, k = _row_blocks(y, "y")
    if sum(yn) != sum(xn):
        raise ValueError(f"y: has {sum(yn)} rows but X has {sum(xn)}")
    if yn != xn:  # align y's partitions to X's
        _, da = _dask()
        yarr = _as_dask(y).rechunk({0: tuple(xn), 1: -1})
        yb, yn, k = _row_blocks(yarr, "y")
    wb = [None] * len(xb)
    if sample_weight is not None:
        wdb, wn, _ = _row_blocks(sample_weight, "sample_weight")
        if wn != xn:
            warr = _as_dask(sample_weight).rechunk({0: tuple(xn)})
            wdb, wn, _ = _row_blocks(warr, "sample_weight")
        wb = wdb
    return xb, xn, d, yb, k, wb


def _as_dask(a):
    _, da = _dask()
    if hasattr(a, "to_dask_array"):
        a = a.to_dask_array(lengths=True)
    if not isinstance(a, da.Array):
        a = da.from_array(np.asarray(a))
    return a[:, None] if a.ndim == 1 else a


def _check_global(degree: int, d: int, n: int, ridge: float):
    if degree not in (0, 1, 2, 3):
        raise ValueError("degree: must be 0 (local constant), 1 (local linear), 2 or 3")
    q = 1 + (0 if degree == 0 else d if degree == 1
             else d + d * (d + 1) // 2 if degree == 2 and d > 1 else degree)
    if n < q and ridge == 0.0:
        raise ValueError(
            f"X: a fit with {d} continuous columns estimates {q} coefficients per point and "
            f"needs at least {q} rows, got {n} (use more data or a lower degree)"
        )


@numbers_only("bandwidth", "degree", "ridge", "split_every")
def predict(X, y, X_new, *, bandwidth, degree: int | str = 1, kernel: str = "gaussian",
            ridge: float = 0.0, sample_weight=None, algorithm: str = "auto",
            split_every: int = 8, compute: bool = True):
    """Local polynomial (NW: ``degree=0``, local linear: ``degree=1``) predictions on Dask.

    Equal to ``attnreg.LocalLinear(bandwidth=..., ridge=...).fit(X, y, sample_weight)
    .predict(X_new)`` (``NadarayaWatson`` for degree 0) to rounding. One task per
    (training partition x query block) computes the local moments of the block's queries over
    the partition (``_core.local_partial``); the partials of one query block are merged in a
    tree of fan-in ``split_every`` and solved per query (``_core.local_finalize``).

    Parameters
    ----------
    X, y : Dask array / DataFrame (or numpy / pandas), shapes (n, d) and (n,) or (n, k)
        Training rows; y (and sample_weight) are re-chunked to X's partitions if needed.
    X_new : Dask array / DataFrame (or numpy / pandas), shape (m, d)
        Query rows; each chunk is one query block.
    bandwidth : float or array-like of d floats
    degree : 0, 1, 2, 3 (or "nw", "ll")
    kernel : str, the continuous kernel (gaussian, epanechnikov, ...)
    ridge : float, the omega-scaled ridge of local linear (Zuo et al. 2025, arXiv:2510.01450, eq. 6)
    sample_weight : optional, shape (n,)
    algorithm : "auto", "all_pairs" or "neighbors" (per partition, see KernelSpace)
    split_every : int, fan-in of the merge tree
    compute : bool, return numpy (True) or the lazy Dask array (False)

    Returns
    -------
    ndarray of shape (m,) (1-d y) or (m, k)

    Raises
    ------
    ValueError
        For bad input (NaN, column count, bandwidths; the message names the argument).
    attnreg.NumericalError
        Naming the first query row without a fit.
    """
    dask, da = _dask()
    deg = _degree(degree)
    xb, xn, d, yb, k, wb = _prepare(X, y, sample_weight)
    _check_global(deg, d, sum(xn), float(ridge))
    bw = _bandwidth(bandwidth, d)
    qb, qn, dq = _row_blocks(X_new, "X_new")
    if dq != d:
        raise ValueError(
            f"X_new: has {dq} columns but the model was fitted with {d} (pass the same columns "
            "as in fit)"
        )
    outs = []
    for Qb, m in zip(qb, qn):
        parts = [dask.delayed(_local_partial)(Xb, Yb, Qb, bw, deg, kernel, algorithm, Wb, None,
                                              "X_new")
                 for Xb, Yb, Wb in zip(xb, yb, wb)]
        merged = _tree_reduce(parts, _core.local_merge, split_every)
        fit = dask.delayed(_local_finalize)(merged, bw, deg, kernel, float(ridge), "X_new")
        outs.append(da.from_delayed(fit, shape=(m, k), dtype=np.float64))
    res = da.concatenate(outs, axis=0)
    if _is_1d(y):
        res = res[:, 0]
    return res.compute() if compute else res


def _is_1d(y) -> bool:
    return getattr(y, "ndim", 2) == 1


def _loo_block(part, yq, bw, degree, kernel, ridge, wq=None):
    # sum_i w_i ||y_i - m_{-i}(x_i)||^2 and k sum_i w_i over the block (w = 1 without weights;
    # rows of weight 0 do not count), as the core's cv_score.
    fit, status = _core.local_finalize(part, bw, degree=degree, kernel=kernel, ridge=ridge,
                                       leave_one_out=True, throw_on_failure=False,
                                       query_arg="X")
    yq = yq.reshape(fit.shape)
    w = np.ones(yq.shape[0]) if wq is None else np.asarray(wq, dtype=np.float64).ravel()
    use = w > 0
    if np.any(status.ravel()[use] != 0):
        return np.array([np.inf, 1.0])
    r2 = np.sum((yq[use] - fit[use]) ** 2, axis=1)
    return np.array([float(np.sum(w[use] * r2)), float(np.sum(w[use])) * yq.shape[1]])


def _sum_scores(*scores):
    s = np.sum(np.vstack(scores), axis=0)
    return float(s[0] / s[1]) if np.isfinite(s[0]) else float("inf")


@numbers_only("bandwidth", "degree", "ridge", "split_every")
def loo_cv(X, y, *, bandwidth, degree: int | str = 1, kernel: str = "gaussian",
           ridge: float = 0.0, sample_weight=None, algorithm: str = "auto",
           split_every: int = 8, compute: bool = True):
    """Leave-one-out least-squares cross-validation objective at a fixed bandwidth, on Dask.

    ``mean_i ||y_i - m_{-i}(x_i)||^2`` over all rows and outputs (with ``sample_weight`` the
    weighted mean ``sum_i w_i ||.||^2 / (k sum_i w_i)``): the ``cv_score_`` of
    ``attnreg.LocalLinear`` / ``NadarayaWatson`` fitted in memory (``inf`` when some row has
    no leave-one-out fit). Each training partition's rows are queries against every partition;
    in its own partition a query's row is excluded (the self exclusion of KernelSpace), the
    partials are merged and solved to the exact leave-one-out fits.
    """
    dask, _ = _dask()
    deg = _degree(degree)
    xb, xn, d, yb, k, wb = _prepare(X, y, sample_weight)
    _check_global(deg, d, sum(xn), float(ridge))
    bw = _bandwidth(bandwidth, d)
    scores = []
    for j, (Qb, m) in enumerate(zip(xb, xn)):
        parts = []
        for i, (Xb, Yb, Wb) in enumerate(zip(xb, yb, wb)):
            self_rows = np.arange(m, dtype=np.int64) if i == j else None
            parts.append(dask.delayed(_local_partial)(Xb, Yb, Qb, bw, deg, kernel, algorithm,
                                                      Wb, self_rows, "X"))
        merged = _tree_reduce(parts, _core.local_merge, split_every)
        scores.append(dask.delayed(_loo_block)(merged, yb[j], bw, deg, kernel, float(ridge),
                                               wb[j]))
    total = dask.delayed(_sum_scores)(*scores)
    return total.compute() if compute else total


def _compute_interruptible(*graphs):
    """dask.compute; on the local threaded scheduler, Ctrl-C also stops the core computations
    running on its worker threads (they cannot see the signal themselves) and waits for them,
    so nothing keeps computing after the KeyboardInterrupt and the process can exit."""
    dask, _ = _dask()
    import dask.threaded

    if dask.base.get_scheduler(collections=list(graphs)) is not dask.threaded.get:
        return dask.compute(*graphs)  # distributed, processes or synchronous
    from concurrent.futures import ThreadPoolExecutor

    pool = ThreadPoolExecutor(max(1, os.cpu_count() or 1))
    try:
        return dask.compute(*graphs, scheduler="threads", pool=pool)
    except KeyboardInterrupt:
        _core._cancel_all(True)  # every running core loop raises Interrupted at its next poll
        try:
            pool.shutdown(wait=True, cancel_futures=True)
        finally:
            _core._cancel_all(False)
        raise
    finally:
        pool.shutdown(wait=True)


@dataclass
class BandwidthSearch:
    """Result of :func:`select_bandwidth`.

    Attributes
    ----------
    bandwidth : ndarray, the minimiser (one value per column, or one value)
    cv : float, its leave-one-out objective
    grid : ndarray (n_candidates, n_bw), the candidates
    scores : ndarray (n_candidates,), the objective of each candidate
    """

    bandwidth: np.ndarray
    cv: float
    grid: np.ndarray
    scores: np.ndarray = field(repr=False)


@numbers_only("grid", "n_grid", "factors", "degree", "ridge", "split_every")
def select_bandwidth(X, y, grid=None, *, n_grid: int = 15, factors: Sequence[float] | None = None,
                     degree: int | str = 1, kernel: str = "gaussian", ridge: float = 0.0,
                     sample_weight=None, algorithm: str = "auto",
                     split_every: int = 8) -> BandwidthSearch:
    """Minimise the leave-one-out objective (:func:`loo_cv`) over a grid, on Dask.

    ``grid``: a 1-d array of bandwidths (one value shared by every column), a 2-d array
    (n_candidates, d) of per-column bandwidths, or None: the per-column log grid
    ``f * h_rot_j`` for ``f`` in ``factors`` (default ``geomspace(0.25, 4, n_grid)``) around
    the normal-reference rule ``h_rot_j = 1.06 sd_j n^(-1/(4+d))`` (sd from one Dask pass).
    Every candidate's graph is computed in one ``dask.compute`` so the cluster works on all of
    them at once. Returns a :class:`BandwidthSearch`; ties go to the first (smallest) candidate.
    """
    dask, da = _dask()
    Xd = _as_dask(X)
    n, d = int(Xd.shape[0]), int(Xd.shape[1])
    if grid is None:
        sd = np.asarray(dask.compute(Xd.std(axis=0, ddof=1))[0], dtype=np.float64)
        if np.any(~(sd > 0)):
            raise ValueError("X: a column is constant, so its bandwidth cannot be scaled to it "
                             "(drop the column or pass grid)")
        f = np.geomspace(0.25, 4.0, n_grid) if factors is None else np.asarray(factors, float)
        cand = np.outer(f, 1.06 * sd * n ** (-1.0 / (4 + d)))
    else:
        cand = np.asarray(grid, dtype=np.float64)
        cand = cand[:, None] if cand.ndim == 1 else cand
        if cand.ndim != 2 or cand.shape[1] not in (1, d) or cand.shape[0] < 1:
            raise ValueError(f"grid: expected a 1-d array or an array of shape (n, {d})")
    # a one-column candidate is one value shared by every column: pass it as a number
    graphs = [loo_cv(X, y, bandwidth=float(h[0]) if h.size == 1 else h, degree=degree, kernel=kernel, ridge=ridge,
                     sample_weight=sample_weight, algorithm=algorithm,
                     split_every=split_every, compute=False) for h in cand]
    scores = np.asarray(_compute_interruptible(*graphs), dtype=np.float64)
    if not np.any(np.isfinite(scores)):
        raise ValueError("grid: no candidate bandwidth gives every leave-one-out fit (all "
                         "scores are infinite); use larger bandwidths")
    best = int(np.argmin(scores))
    return BandwidthSearch(bandwidth=cand[best].copy(), cv=float(scores[best]), grid=cand,
                           scores=scores)


# ---------------------------------------------------------------------- least squares (TSQR)
def _design_r(X, y, fit_intercept: bool):
    """R factor of [1, X, y] by Dask's TSQR; returns (R_D, R_Dy, q, k)."""
    dask, da = _dask()
    Xd = _as_dask(X).astype(np.float64)
    yd = _as_dask(y).astype(np.float64)
    if Xd.shape[0] != yd.shape[0]:
        raise ValueError(f"y: has {yd.shape[0]} rows but X has {Xd.shape[0]}")
    yd = yd.rechunk({0: Xd.chunks[0], 1: -1})
    parts = ([da.ones((Xd.shape[0], 1), chunks=(Xd.chunks[0], 1))] if fit_intercept else [])
    A = da.concatenate(parts + [Xd, yd], axis=1).rechunk({1: -1})
    q = A.shape[1] - yd.shape[1]
    if A.shape[1] > min(A.chunks[0]):  # TSQR wants every block at least as tall as wide
        step = max(2 * A.shape[1], max(A.chunks[0]))
        cuts = list(range(0, int(A.shape[0]), step))
        sizes = [min(step, int(A.shape[0]) - c) for c in cuts]
        if len(sizes) > 1 and sizes[-1] < A.shape[1]:
            last = sizes.pop()  # (not sizes[-2] += sizes.pop(): the target is indexed first)
            sizes[-1] += last
        A = A.rechunk({0: tuple(sizes)})
    A = A.map_blocks(_check_finite_block, dtype=np.float64)
    _, R = da.linalg.tsqr(A)
    R = np.asarray(R.compute())
    return R[:q, :q], R[:q, q:], q, yd.shape[1]


def _check_finite_block(b):
    if not np.all(np.isfinite(b)):
        raise ValueError("X, y: contain NaN or infinite values (remove or impute missing/infinite "
                         "values first)")
    return b


def _solve_small(RD, RDy, alpha: float, fit_intercept: bool):
    # The small solve (a second QR for the penalty, then a triangular solve) is the core's.
    return np.asarray(_core.r_factor_solve(RD, RDy, alpha=float(alpha),
                                           free_first=bool(fit_intercept)))


def _split(coef, fit_intercept: bool, y):
    one = _is_1d(y)
    b = coef[1:] if fit_intercept else coef
    b0 = coef[0] if fit_intercept else np.zeros(coef.shape[1])
    if one:
        return b[:, 0], (float(b0[0]) if fit_intercept else 0.0)
    return b.T, b0


def ols(X, y, *, fit_intercept: bool = True):
    """Least-squares coefficients by Dask's tall-and-skinny QR: ``(coef, intercept)``.

    The R factor of ``[1, X, y]`` (one TSQR pass) gives ``R_D b = r_y`` (``D = [1, X]``): no
    normal equations. Equal to ``attnreg.OLS(fit_intercept=...).fit(X, y)``'s ``coef_`` and
    ``intercept_`` (scikit-learn shapes) to about 1e-13 relative on full-rank designs.
    """
    RD, RDy, _, _ = _design_r(X, y, fit_intercept)
    return _split(_solve_small(RD, RDy, 0.0, fit_intercept), fit_intercept, y)


@numbers_only("alpha")
def ridge(X, y, *, alpha: float = 1.0, fit_intercept: bool = True):
    """Ridge coefficients ``argmin ||y - b0 - X b||^2 + alpha ||b||^2`` by TSQR: ``(coef,
    intercept)``; the intercept is not penalised, as in ``attnreg.Ridge``.

    From the R factor of ``[1, X, y]``, the penalised problem is the small least squares
    ``[R_D; sqrt(alpha) [0 I]] b ~ [r_y; 0]``, solved by a second (q x q) QR.
    """
    if not (isinstance(alpha, numbers.Real) and alpha >= 0 and math.isfinite(alpha)):
        raise ValueError("alpha: must be one finite number >= 0 (use attnreg.Ridge for a grid)")
    RD, RDy, _, _ = _design_r(X, y, fit_intercept)
    return _split(_solve_small(RD, RDy, float(alpha), fit_intercept), fit_intercept, y)


# ---------------------------------------------------------------------- attention
def _as4(a, name):
    _, da = _dask()
    if not isinstance(a, da.Array):
        a = da.from_array(np.asarray(a))
    if a.ndim == 2:
        a = a[None, None]
    elif a.ndim == 3:
        a = a[:, None]
    elif a.ndim != 4:
        raise ValueError(f"{name}: expected a 2-d (seq, dim), 3-d (batch, seq, dim) or 4-d "
                         f"(batch, heads, seq, dim) array, got {a.ndim} dimensions")
    return a


def _attention(method: str, Q, K, V, split_every: int, compute: bool, kw: dict):
    """Spread (batch, head) chunks of Q over tasks; split the keys by K's sequence chunks and
    merge their partial statistics (split-KV). Q's sequence axis is kept whole."""
    dask, da = _dask()
    from . import attention as att

    nd = getattr(Q, "ndim", np.ndim(Q))
    Q4, K4, V4 = _as4(Q, "Q"), _as4(K, "K"), _as4(V, "V")
    B, H, nq, dq = Q4.shape
    nk = K4.shape[2]
    if K4.shape[:2] != (B, H) or V4.shape[:3] != K4.shape[:3] or K4.shape[3] != dq:
        raise ValueError("K, V: must have the batch and heads of Q, K the dim of Q and V the "
                         "sequence length of K")
    Q4 = Q4.rechunk({2: -1, 3: -1}).astype(np.float64)
    K4 = K4.rechunk({0: Q4.chunks[0], 1: Q4.chunks[1], 3: -1}).astype(np.float64)
    V4 = V4.rechunk({0: Q4.chunks[0], 1: Q4.chunks[1], 2: K4.chunks[2], 3: -1}).astype(np.float64)
    dv = V4.shape[3]
    qd, kd, vd = Q4.to_delayed(), K4.to_delayed(), V4.to_delayed()
    koff = np.concatenate([[0], np.cumsum(K4.chunks[2])])[:-1]
    rows = []
    for bi, bsz in enumerate(Q4.chunks[0]):
        cols = []
        for hi, hsz in enumerate(Q4.chunks[1]):
            q = qd[bi, hi, 0, 0]
            parts = [dask.delayed(_attn_partial)(method, q, kd[bi, hi, c, 0], vd[bi, hi, c, 0],
                                                 int(koff[c]), nk, kw)
                     for c in range(len(K4.chunks[2]))]
            merge = _core.softmax_merge if method != "lla" else att.lla_merge
            merged = _tree_reduce(parts, merge, split_every)
            out = dask.delayed(_attn_finalize)(method, q, merged, kw)
            cols.append(da.from_delayed(out, shape=(bsz, hsz, nq, dv), dtype=np.float64))
        rows.append(da.concatenate(cols, axis=1))
    res = da.concatenate(rows, axis=0)
    if nd == 2:
        res = res[0, 0]
    elif nd == 3:
        res = res[:, 0]
    return res.compute() if compute else res


def _attn_partial(method, q, k, v, key_offset, n_keys_total, kw):
    q, k, v = (np.ascontiguousarray(a, dtype=np.float64) for a in (q, k, v))
    if method == "lla":
        from . import attention as att

        return att.lla_partial(q, k, v, key_offset=key_offset, n_keys_total=n_keys_total,
                               bandwidth=kw.get("bandwidth"), scale=kw.get("scale"),
                               kernel=kw.get("kernel", "dot"), causal=kw.get("causal", False),
                               window=kw.get("window"), n_threads=1)
    return _core.softmax_partial(q, k, v, key_offset, n_keys_total, method=method,
                                 scale=kw.get("scale"), bandwidth=kw.get("bandwidth"),
                                 causal=kw.get("causal", False), window=kw.get("window") or 0,
                                 n_threads=1)


def _attn_finalize(method, q, merged, kw):
    if method == "lla":
        from . import attention as att

        return att.lla_finalize(np.ascontiguousarray(q, dtype=np.float64), merged,
                                ridge=kw.get("ridge", 0.0), causal=kw.get("causal", False),
                                window=kw.get("window"), n_threads=1)
    return _core.softmax_finalize(merged)


@numbers_only("scale", "window", "split_every")
def softmax(Q, K, V, *, scale: float | None = None, causal: bool = False,
            window: int | None = None, split_every: int = 8, compute: bool = True):
    """Softmax attention on Dask: :func:`attnreg.attention.softmax` with (batch, head) chunks
    of Q spread over workers and the keys split by K's sequence chunks (split-KV: running max,
    ``omega`` and ``sum w v`` per query merged in a tree). float64."""
    return _attention("softmax", Q, K, V, split_every, compute,
                      dict(scale=scale, causal=causal, window=window))


@numbers_only("bandwidth", "window", "split_every")
def nw_rbf(Q, K, V, *, bandwidth: float | None = None, causal: bool = False,
           window: int | None = None, split_every: int = 8, compute: bool = True):
    """Gaussian Nadaraya-Watson attention on Dask (as :func:`softmax`)."""
    return _attention("nw_rbf", Q, K, V, split_every, compute,
                      dict(bandwidth=bandwidth, causal=causal, window=window))


@numbers_only("bandwidth", "ridge", "window", "scale", "split_every")
def lla(Q, K, V, *, bandwidth: float | None = None, ridge: float = 0.0, causal: bool = False,
        window: int | None = None, kernel: str = "dot", scale: float | None = None,
        split_every: int = 8, compute: bool = True):
    """Local Linear Attention on Dask: the LLA sufficient statistics (omega, mu~, Sigma~ and
    the value moments, :func:`attnreg.attention.lla_partial`) of each key chunk, merged in a
    tree and solved per query (``lla(..., method="direct")`` in memory). float64."""
    return _attention("lla", Q, K, V, split_every, compute,
                      dict(bandwidth=bandwidth, ridge=ridge, causal=causal, window=window,
                           kernel=kernel, scale=scale))
