"""PyTorch face of the attention engine: differentiable softmax and Local Linear Attention.

``attnreg.torch.lla(q, k, v, ...)`` and ``attnreg.torch.softmax(q, k, v, ...)`` take
``(batch, heads, seq, dim)`` tensors and return ``(batch, heads, n_q, dim_v)``; they are
``torch.autograd.Function``\\ s, so ``out.sum().backward()`` fills ``q.grad``, ``k.grad``,
``v.grad`` (and the gradient of a tensor ``ridge`` for LLA).

* CPU tensors (any floating dtype): the forward and the backward run in the attnreg core in
  float64 and are cast back to the input dtype (LLA's forward is the ``"direct"`` algorithm:
  a Cholesky solve per query, exact to rounding). The backward is the exact gradient of the
  forward (:func:`attnreg.attention.lla_vjp`, :func:`attnreg.attention.softmax_vjp`); for LLA
  it goes through the adjoint of the local linear solve of Zuo et al., "Local Linear
  Attention" (eqs. 6-8): one more solve with the same ``Sigma`` per query.
* CUDA tensors (float32, float16, bfloat16, head dim and value dim <= 128): the forward runs the
  attnreg CUDA kernels on the tensors' device memory, without host copies, ordered after the
  work already queued on the current stream (attnreg's launch waits for that stream, runs on
  the default stream and waits for its kernel before returning). A CUDA backward pass does not
  exist yet: calling ``backward()`` through a CUDA call raises a ``RuntimeError``; to get
  gradients, run the same call on CPU tensors (``q.cpu()`` ...). Inference under
  ``torch.no_grad()`` is fine.

PyTorch is optional for attnreg: this module needs it, nothing else does.
"""
from __future__ import annotations

import ctypes
import functools
from typing import Any

import numpy as np

try:
    import torch as _torch
except ImportError as e:  # pragma: no cover - exercised only without torch
    raise ImportError(
        "attnreg.torch needs PyTorch (pip install torch); the rest of attnreg works without it"
    ) from e

from . import _core
from . import attention as _attention

__all__ = ["lla", "softmax"]

_CUDA_DTYPES = {_torch.float32: 0, _torch.float16: 1, _torch.bfloat16: 2}
_CUDA_MAX_DIM = 128
_NO_CUDA_BACKWARD = (
    "attnreg.torch.{fn}: the CUDA backward pass is not available yet (only the forward runs on "
    "the GPU). To get gradients, run the call on CPU tensors (q.cpu(), k.cpu(), v.cpu()); the "
    "CPU backward is the exact float64 gradient. For inference, wrap the call in "
    "torch.no_grad()."
)


# ---------------------------------------------------------------- argument checks

def _check(fn: str, q, k, v) -> None:
    for name, t in (("q", q), ("k", k), ("v", v)):
        if not isinstance(t, _torch.Tensor):
            raise TypeError(f"attnreg.torch.{fn}: {name} must be a torch.Tensor, got "
                            f"{type(t).__name__}")
        if t.dim() != 4:
            raise ValueError(f"attnreg.torch.{fn}: {name} must be 4-d (batch, heads, seq, dim), "
                             f"got shape {tuple(t.shape)}")
        if not t.is_floating_point():
            raise TypeError(f"attnreg.torch.{fn}: {name} must be a floating tensor, got "
                            f"{t.dtype}")
        if t.shape[-1] > 1 and t.stride(-1) != 1:
            raise ValueError(f"attnreg.torch.{fn}: {name} has a non-contiguous last dimension "
                             f"(stride {t.stride(-1)}); pass {name}.contiguous()")
    for name, t in (("k", k), ("v", v)):
        if t.device != q.device:
            raise ValueError(f"attnreg.torch.{fn}: {name} is on {t.device} but q is on "
                             f"{q.device}; move all tensors to one device")
        if t.dtype != q.dtype:
            raise TypeError(f"attnreg.torch.{fn}: {name} has dtype {t.dtype} but q has "
                            f"{q.dtype}; pass all tensors in one dtype")
    if k.shape[0] != q.shape[0] or k.shape[1] != q.shape[1] or k.shape[3] != q.shape[3]:
        raise ValueError(f"attnreg.torch.{fn}: k has shape {tuple(k.shape)}, q has "
                         f"{tuple(q.shape)}; k must be (batch, heads, n_k, dim) with q's batch, "
                         "heads and dim")
    if v.shape[0] != q.shape[0] or v.shape[1] != q.shape[1] or v.shape[2] != k.shape[2]:
        raise ValueError(f"attnreg.torch.{fn}: v has shape {tuple(v.shape)}; it must be "
                         f"(batch, heads, n_k = {k.shape[2]}, dim_v) with q's batch and heads")
    if q.device.type not in ("cpu", "cuda"):
        raise ValueError(f"attnreg.torch.{fn}: q is on {q.device}; attnreg runs on CPU and "
                         "CUDA tensors")
    if q.device.type == "cuda":
        if q.dtype not in _CUDA_DTYPES:
            raise TypeError(f"attnreg.torch.{fn}: q has dtype {q.dtype}; the CUDA kernels take "
                            "float32, float16 or bfloat16 (cast, or use CPU tensors)")
        if max(q.shape[3], v.shape[3]) > _CUDA_MAX_DIM:
            raise ValueError(f"attnreg.torch.{fn}: q has dim {q.shape[3]} and v dim_v "
                             f"{v.shape[3]}; the compiled CUDA kernels take dims up to "
                             f"{_CUDA_MAX_DIM} (use CPU tensors)")


def _ridge_value(ridge: Any, q) -> tuple[Any, Any]:
    """(value for the core: float or float64 array, tensor or None)."""
    if isinstance(ridge, _torch.Tensor):
        if ridge.device != q.device:
            raise ValueError(f"attnreg.torch.lla: ridge is on {ridge.device} but q is on "
                             f"{q.device}")
        r = ridge.detach().to("cpu", _torch.float64).numpy()
        val = float(r) if r.ndim == 0 else r
    else:
        val = float(ridge)
        r = np.asarray(val)
    if not np.all(np.isfinite(r)) or np.any(r < 0):
        raise ValueError(f"attnreg.torch.lla: ridge must be >= 0 and finite, got "
                         f"{r if r.ndim == 0 else r[(r < 0) | ~np.isfinite(r)][:3]}")
    return val, (ridge if isinstance(ridge, _torch.Tensor) else None)


def _np64(t) -> np.ndarray:
    return t.detach().to("cpu", _torch.float64).numpy()


# ---------------------------------------------------------------- CUDA forward

@functools.lru_cache(maxsize=1)
def _cuda_entry():
    lib = ctypes.CDLL(_core.__file__)
    try:
        f = lib.attnreg_cuda_forward
    except AttributeError:
        return None, None
    f.restype = ctypes.c_int
    f.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_longlong,
                  ctypes.c_longlong, ctypes.c_int, ctypes.c_int, ctypes.c_void_p,
                  ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int,
                  ctypes.c_longlong, ctypes.c_int, ctypes.c_double, ctypes.c_double,
                  ctypes.c_double, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p,
                  ctypes.c_void_p, ctypes.c_void_p]
    err = lib.attnreg_cuda_last_error
    err.restype = ctypes.c_char_p
    return f, err


def _cuda_forward(fn: str, kind: int, q, k, v, *, scale: float, rbf: bool, causal: bool,
                  window: int, ridge: float):
    f, err = _cuda_entry()
    if f is None:
        raise RuntimeError(f"attnreg.torch.{fn}: q is a CUDA tensor but attnreg was built "
                           "without its CUDA kernels (rebuild with ATTNREG_CUDA=ON, or pass CPU "
                           "tensors)")
    # The kernels read (batch, heads, seq, dim) rows with C-contiguous strides; a tensor
    # strided elsewhere (its last dimension is unit-stride, checked) is packed on the device.
    q, k, v = (t.contiguous() for t in (q, k, v))
    B, H, nq, d = q.shape
    nk, dv = k.shape[2], v.shape[3]
    out = _torch.empty((B, H, nq, dv), dtype=q.dtype, device=q.device)
    with _torch.cuda.device(q.device):
        stream = _torch.cuda.current_stream()
        if stream != _torch.cuda.default_stream():
            stream.synchronize()  # attnreg launches on the default stream: order after q, k, v
        rc = f(_CUDA_DTYPES[q.dtype], kind, B, H, nq, nk, d, dv, q.data_ptr(), k.data_ptr(),
               v.data_ptr(), out.data_ptr(), int(causal), int(window), int(rbf), float(scale),
               float(ridge), 1e-6, 0, None, None, None, None)
    if rc != 0:
        msg = err().decode(errors="replace")
        raise (ValueError if rc == 2 or "InvalidArgument" in msg else RuntimeError)(
            f"attnreg.torch.{fn}: {msg}")
    return out


# ---------------------------------------------------------------- autograd functions

class _SoftmaxFn(_torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, scale, causal, window):
        ctx.opts = dict(scale=scale, causal=causal, window=window)
        ctx.cuda = q.device.type == "cuda"
        if ctx.cuda:
            d = q.shape[-1]
            a = scale if scale is not None else 1.0 / float(np.sqrt(d))
            return _cuda_forward("softmax", 0, q, k, v, scale=a, rbf=False, causal=causal,
                                 window=window, ridge=0.0)
        ctx.save_for_backward(q, k, v)
        out = _attention.softmax(_np64(q), _np64(k), _np64(v), **ctx.opts)
        return _torch.from_numpy(out).to(q.dtype)

    @staticmethod
    def backward(ctx, g):
        if ctx.cuda:
            raise RuntimeError(_NO_CUDA_BACKWARD.format(fn="softmax"))
        q, k, v = ctx.saved_tensors
        dq, dk, dv = _attention.softmax_vjp(_np64(q), _np64(k), _np64(v), _np64(g), **ctx.opts)
        return (*(_torch.from_numpy(x).to(q.dtype) for x in (dq, dk, dv)), None, None, None)


class _LLAFn(_torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, ridge_t, ridge, bandwidth, scale, causal, window, kernel):
        ctx.opts = dict(ridge=ridge, bandwidth=bandwidth, scale=scale, causal=causal,
                        window=window, kernel=kernel)
        ctx.cuda = q.device.type == "cuda"
        if ctx.cuda:
            if np.ndim(ridge) != 0:
                raise ValueError("attnreg.torch.lla: a per-query ridge is not available on "
                                 "CUDA tensors yet; pass a scalar ridge or CPU tensors")
            d = q.shape[-1]
            rbf = kernel == "rbf"
            if rbf:
                h = bandwidth if bandwidth is not None else d ** 0.25
                a = 1.0 / (h * h)
            else:
                a = scale if scale is not None else (
                    1.0 / bandwidth if bandwidth is not None else 1.0 / float(np.sqrt(d)))
            return _cuda_forward("lla", 1, q, k, v, scale=a, rbf=rbf, causal=causal,
                                 window=window, ridge=float(ridge))
        ctx.save_for_backward(q, k, v)
        ctx.ridge_t = ridge_t
        # "direct": per-query statistics and a Cholesky solve, float64 to rounding, so the
        # backward is the gradient of exactly this forward (CG's tolerance would not be).
        out = _attention.lla(_np64(q), _np64(k), _np64(v), method="direct", **ctx.opts)
        return _torch.from_numpy(out).to(q.dtype)

    @staticmethod
    def backward(ctx, g):
        if ctx.cuda:
            raise RuntimeError(_NO_CUDA_BACKWARD.format(fn="lla"))
        q, k, v = ctx.saved_tensors
        dq, dk, dv, dr = _attention.lla_vjp(_np64(q), _np64(k), _np64(v), _np64(g), **ctx.opts)
        grads = [_torch.from_numpy(x).to(q.dtype) for x in (dq, dk, dv)]
        d_ridge = None
        if ctx.ridge_t is not None and ctx.needs_input_grad[3]:
            d_ridge = _torch.as_tensor(np.asarray(dr, dtype=np.float64)).reshape(
                ctx.ridge_t.shape).to(ctx.ridge_t.dtype)
        return (*grads, d_ridge, None, None, None, None, None, None)


# ---------------------------------------------------------------- public functions

def softmax(q, k, v, *, scale: float | None = None, causal: bool = False,
            window: int | None = None):
    """Softmax attention ``softmax(scale q k') v`` on ``(batch, heads, seq, dim)`` tensors.

    ``scale`` defaults to ``1/sqrt(dim)``. ``causal`` aligns queries to the last ``n_q`` keys
    (query ``i`` sees keys ``j <= a_i = i + n_k - n_q``); ``window=w`` keeps the last ``w`` keys
    (``|j - a_i| < w`` without ``causal``; the alignment of :mod:`attnreg.attention`). Differentiable on CPU tensors; see the module
    documentation for CUDA tensors.
    """
    _check("softmax", q, k, v)
    if scale is not None and not (np.isfinite(scale) and scale > 0):
        raise ValueError(f"attnreg.torch.softmax: scale must be > 0 and finite, got {scale}")
    return _SoftmaxFn.apply(q, k, v, scale, bool(causal), int(window or 0))


def lla(q, k, v, *, bandwidth: float | None = None, ridge: Any = 0.0, causal: bool = False,
        window: int | None = None, kernel: str = "dot", scale: float | None = None):
    """Local Linear Attention on ``(batch, heads, seq, dim)`` tensors.

    The intercept of the kernel-weighted local linear fit at each query with the ridge
    ``ridge * omega`` on the slopes (:func:`attnreg.attention.lla`). ``bandwidth`` is ``h`` of
    ``exp(q'k / h)`` (``kernel="dot"``, default ``sqrt(dim)``; or give ``scale = 1/h``) or of
    ``exp(-||q - k||^2 / (2 h^2))`` (``kernel="rbf"``, default ``dim ** 0.25``). ``ridge`` is a
    number ``>= 0`` or a tensor of shape ``()``, ``(n_q,)`` or ``(batch, heads, n_q)``; a tensor
    ridge that requires grad receives its gradient. Causal use needs ``ridge > 0``.
    Differentiable on CPU tensors; see the module documentation for CUDA tensors.
    """
    _check("lla", q, k, v)
    if kernel not in ("dot", "rbf"):
        raise ValueError(f"attnreg.torch.lla: kernel must be 'dot' or 'rbf', got {kernel!r}")
    for name, x in (("bandwidth", bandwidth), ("scale", scale)):
        if x is not None and not (np.isfinite(x) and x > 0):
            raise ValueError(f"attnreg.torch.lla: {name} must be > 0 and finite, got {x}")
    if bandwidth is not None and scale is not None:
        raise ValueError("attnreg.torch.lla: give scale or bandwidth, not both "
                         "(scale = 1 / bandwidth)")
    ridge_val, ridge_t = _ridge_value(ridge, q)
    return _LLAFn.apply(q, k, v, ridge_t, ridge_val, bandwidth, scale, bool(causal),
                        int(window or 0), kernel)
