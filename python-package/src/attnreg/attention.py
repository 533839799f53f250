"""Attention as regression: exact reference implementations on the CPU core.

Every function takes queries ``Q``, keys ``K`` and values ``V`` as numpy arrays of shape
``(seq, dim)``, ``(batch, seq, dim)`` or ``(batch, heads, seq, dim)`` (row-major or not: arrays
are read in place through their strides) and returns the output ``(..., n_q, dim_v)``.
Keys and values share their length ``n_k``; queries may differ (cross-attention). Leading axes
broadcast (one ``K, V`` may serve every batch). float32 inputs give float32 outputs (computed in
float32 by the blockwise paths); anything else is computed and returned as float64.

Masks: query ``i`` sits at key position ``a_i = i + n_k - n_q`` (bottom-right alignment: the
last query meets the last key; with ``n_q == n_k``, ``a_i = i``), as FlashAttention aligns its
causal mask and ``window_size`` when ``seqlen_q != seqlen_k``. ``causal=True`` lets query ``i``
use keys ``j <= a_i`` (needs ``n_q <= n_k``). ``window=w`` keeps keys ``a_i - w < j <= a_i``
(causal: the last ``w``) or ``|j - a_i| < w`` (not causal). A query that sees no key is a
``ValueError`` naming the window.

Methods (seed documents: 000 "Regression is all you need", 002 "Local Linear Attention"):

* :func:`softmax` - Nadaraya-Watson with the dot-product kernel ``exp(scale q'k)``.
* :func:`nw_rbf` - Nadaraya-Watson with ``exp(-||q - k||^2 / (2 h^2))``; equal to
  :func:`softmax` with ``scale = 1 / h^2`` on unit-norm inputs.
* :func:`lla` - Local Linear Attention (Zuo et al. 2025, arXiv:2510.01450, eqs. 6-8): the intercept of a kernel-weighted
  local linear fit at each query, ridge ``lambda * omega`` on the slopes.
* :func:`linear` - kernelised linear attention with a feature map.
* :func:`mesa` - the global ridge regression of Zuo et al. 2025, arXiv:2510.01450, eq. 2.

``device="cuda"`` selects the GPU backend; without a CUDA build or a visible GPU it raises a
``RuntimeError`` that says which.
"""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from . import _core
from ._validation import refuse_non_numbers

__all__ = [
    "AttentionWarning",
    "softmax",
    "nw_rbf",
    "lla",
    "linear",
    "mesa",
    "attention_weights",
    "lla_partial",
    "lla_merge",
    "lla_finalize",
]


class AttentionWarning(UserWarning):
    """A result was computed but deserves attention (CG stopped early, LLA near-singular)."""


def _arrays(*arrays: Any, names: tuple[str, ...]) -> list[np.ndarray]:
    out = []
    for a, name in zip(arrays, names):
        a = np.asarray(a)
        if a.ndim < 2 or a.ndim > 4:
            raise ValueError(
                f"{name}: expected a 2-d (seq, dim), 3-d (batch, seq, dim) or 4-d "
                f"(batch, heads, seq, dim) array, got {a.ndim} dimensions"
            )
        if a.dtype.kind not in "fiub":
            raise ValueError(f"{name}: expected a numeric array, got dtype {a.dtype}")
        out.append(a)
    dtype = np.float32 if all(a.dtype == np.float32 for a in out) else np.float64
    out = [np.asarray(a, dtype=dtype) for a in out]
    lead = np.broadcast_shapes(*(a.shape[:-2] for a in out))
    return [np.broadcast_to(a, lead + a.shape[-2:]) for a in out]


def _ridge(ridge: Any) -> Any:
    if ridge is None:
        return None
    refuse_non_numbers(ridge, "ridge")
    r = np.asarray(ridge, dtype=np.float64)
    return float(r) if r.ndim == 0 else np.ascontiguousarray(r).ravel()


def _as_tau(fn):
    """Run fn; the core calls the Python argument ``tau`` feature_tau: name it as the caller
    wrote it."""
    try:
        return fn()
    except (ValueError, TypeError) as e:
        msg = str(e)
        if msg.startswith("feature_tau:"):
            raise type(e)("tau:" + msg[len("feature_tau:"):]) from None
        raise


def _device(device: str) -> None:
    if device == "cpu":
        return
    if device != "cuda":
        raise ValueError(f"device: unknown '{device}' (choose 'cpu' or 'cuda')")
    info = _core.build_info()
    if not info["cuda_compiled"]:
        raise RuntimeError(
            "device='cuda': attnreg was built without CUDA (rebuild with nvcc available and "
            "ATTNREG_CUDA=ON, or use device='cpu')"
        )
    if info["gpu_count"] == 0:
        why = f" ({info['cuda_error']})" if info.get("cuda_error") else ""
        raise RuntimeError(f"device='cuda': no GPU visible{why}; use device='cpu'")
    if not hasattr(_core, "attention_forward_cuda"):
        raise RuntimeError(
            "device='cuda': this build has CUDA but not the CUDA attention kernels; "
            "use device='cpu'"
        )


def _warn(info: dict) -> None:
    for msg in info["warnings"]:
        warnings.warn(msg, AttentionWarning, stacklevel=3)


def _window(window) -> int:
    """None -> 0 (no window); otherwise a non-negative integer, named in the error."""
    if window is None:
        return 0
    if isinstance(window, (bool, np.bool_)) or not (
            isinstance(window, (int, np.integer)) or
            (isinstance(window, (float, np.floating)) and float(window).is_integer())):
        raise TypeError(f"window: must be a non-negative integer (or None), got {window!r}")
    if int(window) < 0:
        raise ValueError(f"window: must be >= 0 (0 or None = no window), got {window!r}")
    return int(window)


def _forward(Q, K, V, *, device: str, return_info: bool, **kw: Any):
    _device(device)
    Q, K, V = _arrays(Q, K, V, names=("Q", "K", "V"))
    kw["window"] = _window(kw.get("window"))
    if kw.get("n_threads") is None:
        kw["n_threads"] = 0
    fn = _core.attention_forward if device == "cpu" else _core.attention_forward_cuda
    out, info = fn(Q, K, V, **kw)
    _warn(info)
    return (out, info) if return_info else out


def softmax(Q, K, V, *, scale: float | None = None, causal: bool = False,
            window: int | None = None, block_q: int = 64, block_k: int = 64,
            n_threads: int | None = None, device: str = "cpu", return_info: bool = False):
    """Softmax attention = Nadaraya-Watson with the dot-product kernel.

    ``out_i = sum_j exp(scale q_i'k_j) v_j / sum_j exp(scale q_i'k_j)``, computed blockwise with
    a running max, so ``exp`` never overflows. ``scale`` defaults to ``1/sqrt(dim)``; it is
    ``1/tau`` of Pai 2025, "Regression is All You Need" and ``1/h`` of Zuo et al.'s (2025,
    arXiv:2510.01450) ``exp(q'k/h)``. ``scale=None`` means the default; NaN or inf is a
    ``ValueError``.

    A logit ``scale q'k`` that itself overflows the input's precision (norms near ``1e154`` in
    float64, ``1e19`` in float32) raises :class:`attnreg.NumericalError` naming the
    (batch, head, query); rescale ``Q`` and ``K`` or pass float64.

    Returns the output, or ``(output, info)`` with ``return_info=True``.
    """
    return _forward(Q, K, V, method="softmax", scale=scale, causal=causal, window=window,
                    block_q=block_q, block_k=block_k, n_threads=n_threads, device=device,
                    return_info=return_info)


def nw_rbf(Q, K, V, *, bandwidth: float | None = None, causal: bool = False,
           window: int | None = None, block_q: int = 64, block_k: int = 64,
           n_threads: int | None = None, device: str = "cpu", return_info: bool = False):
    """Nadaraya-Watson attention with the Gaussian kernel ``exp(-||q - k||^2 / (2 h^2))``.

    ``bandwidth`` ``h`` defaults to ``dim ** 0.25``, so that on unit-norm queries and keys this
    equals :func:`softmax` with its default scale (``tau = h^2``, Pai 2025, "Regression is All
    You Need"). ``bandwidth=None``
    means the default; NaN, inf, a value <= 0 or one whose ``1 / h^2`` overflows the input's
    precision is a ``ValueError``. A logit ``||q - k||^2 / (2 h^2)`` that overflows raises
    :class:`attnreg.NumericalError` naming the (batch, head, query), as :func:`softmax` does.
    """
    return _forward(Q, K, V, method="nw_rbf", bandwidth=bandwidth, causal=causal,
                    window=window, block_q=block_q, block_k=block_k, n_threads=n_threads,
                    device=device, return_info=return_info)


def lla(Q, K, V, *, bandwidth: float | None = None, ridge: Any = 0.0, causal: bool = False,
        window: int | None = None, method: str = "blockwise", kernel: str = "dot",
        scale: float | None = None, block_q: int = 64, block_k: int = 64,
        cg_tol: float | None = None, cg_max_iter: int | None = None,
        n_threads: int | None = None, device: str = "cpu", return_info: bool = False):
    """Local Linear Attention (Zuo et al. 2025, arXiv:2510.01450, eqs. 6-8).

    At each query ``q`` the kernel-weighted local linear fit
    ``argmin_{a,B} sum_j w_j ||v_j - a - B (k_j - q)||^2 + ridge * omega * ||B||_F^2``
    (``omega = sum_j w_j``) is solved and its intercept ``a`` returned:
    ``out = sum_j s_j v_j`` with ``s_j = w_j (1 - z_j'rho) / (omega - mu'rho)``,
    ``z_j = k_j - q``, ``mu = sum w z``, ``rho = Sigma^{-1} mu``,
    ``Sigma = sum w z z' + ridge * omega * I``. Scaling the ridge by ``omega`` makes the fit
    invariant to a common factor of the weights. ``ridge -> inf`` gives Nadaraya-Watson.

    Parameters
    ----------
    bandwidth : ``h`` of the kernel: ``exp(q'k / h)`` (``kernel="dot"``, default ``sqrt(dim)``)
        or ``exp(-||q-k||^2 / (2 h^2))`` (``kernel="rbf"``, default ``dim ** 0.25``).
    ridge : ``lambda >= 0``; a scalar, one value per query position (Zuo et al. 2025, arXiv:2510.01450, eq. 27) or an
        array of shape ``(batch, heads, n_q)``. Causal use needs ``ridge > 0`` (early positions
        see fewer keys than dimensions).
    method : ``"naive"`` (materialises the weights; float64 oracle), ``"direct"`` (per-query
        ``dim x dim`` statistics, Cholesky; float64; small ``dim``) or ``"blockwise"``
        (FlashLLA, Algorithms 1-2: conjugate gradients, ``Theta(n dim)`` memory).
    cg_tol, cg_max_iter : CG stops a query when ``||Sigma rho - mu|| <= cg_tol ||mu||``
        (default ``1e-12`` float64, ``1e-6`` float32) or after ``cg_max_iter`` sweeps
        (default ``2 dim + 10``). Non-convergence raises an :class:`AttentionWarning`.

    ``info`` (``return_info=True``) holds the CG iterations per query block, whether CG
    converged, the largest relative residual and the smallest ``(omega - mu'rho) / omega``.
    """
    return _forward(Q, K, V, method="lla", bandwidth=bandwidth, scale=scale,
                    ridge=_ridge(ridge), causal=causal, window=window, algorithm=method,
                    kernel=kernel, block_q=block_q, block_k=block_k, cg_tol=cg_tol,
                    cg_max_iter=0 if cg_max_iter is None else cg_max_iter,
                    n_threads=n_threads, device=device, return_info=return_info)


def linear(Q, K, V, *, feature_map: str = "elu_plus_one", tau: float = 4.0,
           normalize: bool = True, causal: bool = False, window: int | None = None,
           n_threads: int | None = None, device: str = "cpu", return_info: bool = False):
    """Kernelised linear attention ``sum_j phi(q)'phi(k_j) v_j / sum_j phi(q)'phi(k_j)``.

    ``feature_map``: ``"elu_plus_one"`` (Katharopoulos et al.), ``"relu"``, ``"identity"`` or
    ``"epanechnikov"`` (Pai 2025, "Regression is All You Need": ``phi(x) = [sqrt(1 - 2/tau), sqrt(2/tau) x]``, which on
    unit-norm inputs with ``tau >= 4`` is Nadaraya-Watson with the Epanechnikov kernel
    ``max(0, 1 - ||q - k||^2 / tau)``). ``normalize=False`` drops the denominator. Causal
    attention runs the recurrence ``S_i = S_{i-1} + phi(k_i) v_i'``.
    """
    return _as_tau(lambda: _forward(
        Q, K, V, method="linear", feature_map=feature_map, feature_tau=tau, normalize=normalize,
        causal=causal, window=window, n_threads=n_threads, device=device,
        return_info=return_info))


def mesa(Q, K, V, *, ridge: Any = 1.0, causal: bool = False, window: int | None = None,
         n_threads: int | None = None, device: str = "cpu", return_info: bool = False):
    """Mesa attention: the global ridge regression of Zuo et al. 2025, arXiv:2510.01450, eq. 2.

    ``out_i = S_i H_i^{-1} q_i`` with ``S_i = sum_j v_j k_j'`` and
    ``H_i = sum_j k_j k_j' + ridge * I`` over the keys query ``i`` may use (a recurrence when
    causal). The ridge is not scaled (all weights are 1).
    """
    return _forward(Q, K, V, method="mesa", ridge=_ridge(ridge), causal=causal, window=window,
                    n_threads=n_threads, device=device, return_info=return_info)


def attention_weights(Q, K, *, method: str = "softmax", scale: float | None = None,
                      bandwidth: float | None = None, ridge: Any = None, kernel: str = "dot",
                      causal: bool = False, window: int | None = None,
                      feature_map: str = "elu_plus_one", tau: float = 4.0,
                      normalize: bool = True, n_threads: int | None = None) -> np.ndarray:
    """The attention weights ``(..., n_q, n_k)`` of a method: ``output == weights @ V``.

    The equivalent kernel of each estimator, computed in float64 by the naive route (it is
    ``n_q x n_k``). Rows sum to 1 for softmax, nw_rbf, lla and normalised linear attention; LLA
    weights can be negative. ``method`` is one of softmax, nw_rbf, lla, linear, mesa.
    """
    Q, K = _arrays(Q, K, names=("Q", "K"))
    if method == "mesa" and ridge is None:
        ridge = 1.0
    return _as_tau(lambda: _core.attention_weights(
        Q, K, method=method, causal=causal, window=_window(window),
        scale=scale, bandwidth=bandwidth, ridge=_ridge(ridge), kernel=kernel,
        feature_map=feature_map, feature_tau=tau, normalize=normalize,
        n_threads=0 if n_threads is None else n_threads))


def lla_partial(Q, K, V, *, key_offset: int, n_keys_total: int, bandwidth: float | None = None,
                scale: float | None = None, kernel: str = "dot", causal: bool = False,
                window: int | None = None, n_threads: int | None = None):
    """LLA sufficient statistics of every query over one slice of the keys.

    ``K, V`` hold keys ``[key_offset, key_offset + len(K))`` of a sequence of ``n_keys_total``.
    Partials over disjoint slices combine with :func:`lla_merge` in any order; :func:`lla_finalize`
    turns the merged statistics into the LLA output (equal to ``lla(..., method="direct")``).
    Returns an opaque tuple (dims, running max, statistics, covered key ranges).
    :func:`lla_merge` refuses partials whose key slices overlap and :func:`lla_finalize` refuses
    statistics that do not cover every key ``[0, n_keys_total)``.
    """
    Q, K, V = _arrays(Q, K, V, names=("Q", "K", "V"))
    return _core.lla_partial(Q, K, V, key_offset=key_offset, n_keys_total=n_keys_total,
                             causal=causal, window=_window(window),
                             scale=scale, bandwidth=bandwidth, kernel=kernel,
                             n_threads=0 if n_threads is None else n_threads)


def lla_merge(a, b):
    """Combine two LLA partials (associative and commutative)."""
    return _core.lla_merge(a, b)


def lla_finalize(Q, partial, *, ridge: Any = 0.0, causal: bool | None = None,
                 window: int | None = None, n_threads: int | None = None,
                 return_info: bool = False):
    """LLA output from merged statistics (one Cholesky solve per query).

    The mask is part of the statistics: ``causal`` and ``window`` default (``None``) to the ones
    :func:`lla_partial` ran with, and a different value is a ``ValueError`` naming it (the
    statistics cannot be re-masked; recompute the partials with the mask you want).
    """
    (Q,) = _arrays(Q, names=("Q",))
    mask: dict[str, Any] = {}
    if causal is not None:
        mask["causal"] = causal
    if window is not None:
        mask["window"] = _window(window)
    out, info = _core.lla_finalize(Q, partial, ridge=_ridge(ridge), **mask,
                                   n_threads=0 if n_threads is None else n_threads)
    _warn(info)
    return (out, info) if return_info else out


# ---------------------------------------------------------------- backward (vector-Jacobian)

__all__ += ["softmax_vjp", "nw_rbf_vjp", "lla_vjp"]


def _unbroadcast(g: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum a gradient over the axes along which its input was broadcast."""
    extra = g.ndim - len(shape)
    if extra > 0:
        g = g.sum(axis=tuple(range(extra)))
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and g.shape[i] != 1)
    if axes:
        g = g.sum(axis=axes, keepdims=True)
    return np.ascontiguousarray(g)


def _backward(Q, K, V, dO, *, return_info: bool, **kw: Any):
    shapes = [np.shape(x) for x in (Q, K, V)]
    Q, K, V, dO = _arrays(Q, K, V, dO, names=("Q", "K", "V", "dO"))
    if dO.shape[-2:] != Q.shape[-2:-1] + V.shape[-1:]:
        raise ValueError(
            f"dO: shape {dO.shape} must be that of the output (..., n_q = {Q.shape[-2]}, "
            f"dim of V = {V.shape[-1]})"
        )
    kw["window"] = 0 if kw.get("window") is None else kw["window"]
    kw["n_threads"] = 0 if kw.get("n_threads") is None else kw["n_threads"]
    dQ, dK, dV, d_ridge, info = _core.attention_backward(Q, K, V, dO, **kw)
    _warn(info)
    grads = tuple(_unbroadcast(g, s) for g, s in zip((dQ, dK, dV), shapes))
    return grads, d_ridge, info


def softmax_vjp(Q, K, V, dO, *, scale: float | None = None, causal: bool = False,
                window: int | None = None, n_threads: int | None = None,
                return_info: bool = False):
    """Gradients of :func:`softmax` attention: ``(dQ, dK, dV)`` given ``dO``.

    ``dO`` is the gradient of a scalar loss with respect to the output of
    ``softmax(Q, K, V, ...)`` (same options); the result is the gradient of that loss with
    respect to ``Q``, ``K`` and ``V`` (each of its input's shape, summed over broadcast axes, in
    the inputs' dtype). Computed in float64 on the CPU from the exact forward of each query
    (a reference, ``O(n_q n_k dim)`` work and ``O(n_k dim)`` memory per head).
    """
    (dQ, dK, dV), _, info = _backward(Q, K, V, dO, method="softmax", scale=scale,
                                      causal=causal, window=window, n_threads=n_threads,
                                      return_info=return_info)
    return ((dQ, dK, dV), info) if return_info else (dQ, dK, dV)


def nw_rbf_vjp(Q, K, V, dO, *, bandwidth: float | None = None, causal: bool = False,
               window: int | None = None, n_threads: int | None = None,
               return_info: bool = False):
    """Gradients ``(dQ, dK, dV)`` of :func:`nw_rbf` attention given ``dO`` (see
    :func:`softmax_vjp`)."""
    (dQ, dK, dV), _, info = _backward(Q, K, V, dO, method="nw_rbf", bandwidth=bandwidth,
                                      causal=causal, window=window, n_threads=n_threads,
                                      return_info=return_info)
    return ((dQ, dK, dV), info) if return_info else (dQ, dK, dV)


def lla_vjp(Q, K, V, dO, *, bandwidth: float | None = None, ridge: Any = 0.0,
            causal: bool = False, window: int | None = None, kernel: str = "dot",
            scale: float | None = None, n_threads: int | None = None,
            return_info: bool = False):
    """Gradients of Local Linear Attention: ``(dQ, dK, dV, d_ridge)`` given ``dO``.

    ``dO`` is the gradient of a scalar loss with respect to ``lla(Q, K, V, ...)`` with the same
    options (every algorithm of :func:`lla` computes the same function, so these are the
    gradients of each). ``dQ, dK, dV`` have the shapes of ``Q, K, V`` (summed over broadcast
    axes) and their dtype; ``d_ridge`` has the shape of ``ridge``: a float for a scalar ridge,
    otherwise an array (one value per query position, or per ``(batch, heads, n_q)``).

    The gradient goes through the adjoint of the local linear solve of Zuo et al., "Local
    Linear Attention" (eqs. 6-8): with ``rho = Sigma^{-1} mu`` as in
    :func:`lla`, one more solve ``y = Sigma^{-1} rbar`` with the same ``Sigma`` per query gives
    every gradient, e.g. ``d_ridge = -omega y'rho``. Computed in float64 on the CPU (a
    reference: ``O(n_q n_k dim^2)`` work). A query whose denominator ``omega - mu'rho`` is not
    positive raises :class:`attnreg.NumericalError` naming it.
    """
    ridge_shape = np.shape(ridge) if ridge is not None else ()
    (dQ, dK, dV), d_ridge, info = _backward(
        Q, K, V, dO, method="lla", bandwidth=bandwidth, scale=scale, ridge=_ridge(ridge),
        kernel=kernel, causal=causal, window=window, n_threads=n_threads,
        return_info=return_info)
    d_ridge = float(d_ridge[0]) if ridge_shape == () else d_ridge.reshape(ridge_shape)
    out = (dQ, dK, dV, d_ridge)
    return (out, info) if return_info else out
