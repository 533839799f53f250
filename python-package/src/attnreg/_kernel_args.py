"""Argument checks shared by the kernel-inference modules (diagnostics, the plug-in bandwidths,
the bootstrap bands, the specification tests, the plots): one home for each, no copies."""
from __future__ import annotations

import numpy as np

from ._encoding import KernelInput

_KINDS = ("const", "hc0", "hc1", "hc2", "hc3", "cr1", "nn")


def _nonneg_int(value, name: str) -> int:
    """A non-negative integer argument (output index, seed), named in the error rather than
    pybind11's "incompatible function arguments"."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        if not (isinstance(value, (float, np.floating)) and float(value).is_integer()):
            raise TypeError(f"{name}: must be a non-negative integer, got {value!r}")
    v = int(value)
    if v < 0 or v >= 2 ** 63:
        raise ValueError(f"{name}: must be a non-negative integer, got {value!r}")
    return v


def _check_kind(kind: str) -> str:
    if not isinstance(kind, str) or kind.lower() not in _KINDS + ("homoskedastic",):
        raise ValueError(f"kind: unknown variance kind {kind!r}; use one of {', '.join(_KINDS)}")
    return kind.lower()


def _fitted_core(estimator):
    if not isinstance(estimator, KernelInput):
        raise TypeError(
            "estimator: expected a fitted attnreg.NadarayaWatson or attnreg.LocalLinear, got "
            f"{type(estimator).__name__}"
        )
    # Imported here, not at the top: `import attnreg` loads this module and must not load
    # scikit-learn (~1 s); the estimators that get here were defined with it already loaded.
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(estimator)
    return estimator._stats_model()


def _opt_bandwidth(value, name):
    """None -> 0.0 (the core's "default" sentinel); a value given must be finite and > 0."""
    if value is None:
        return 0.0
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{name}: must be a positive number or None, got {value!r}") from None
    if not np.isfinite(v) or v <= 0:
        raise ValueError(f"{name}: must be a positive finite number or None (for the default), "
                         f"got {value!r}")
    return v
