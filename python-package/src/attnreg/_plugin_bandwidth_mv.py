"""The MSE- and IMSE-optimal bandwidth vectors of :func:`attnreg.bandwidth.mse_dpi` /
:func:`attnreg.bandwidth.imse_dpi` when ``x`` has two or more columns: a pilot local quadratic
plug-in for local linear and local constant fits. Formulas and sources:
``core/include/attnreg/inference/rbc_bandwidth_multivariate.hpp`` (and ``docs/bandwidth.md``).
"""
from __future__ import annotations

import numpy as np

from . import _core

_MV_NOTE = ("with several columns of x the plug-in is the multivariate pilot local quadratic "
            "one (docs/bandwidth.md)")


def _mv_x(x):
    """x as an (n, d) float array when it has d >= 2 columns, else None (the univariate path)."""
    xa = np.asarray(x, dtype=np.float64)
    if xa.ndim == 2 and xa.shape[1] >= 2:
        return xa
    return None


def _mv_points(eval_points, d, imse, x):
    if eval_points is None:
        if not imse:
            return np.median(x, axis=0)[None, :], True
        k = max(2, int(round(30 ** (1.0 / d))))
        axes = [np.quantile(x[:, j], np.linspace(0.1, 0.9, k)) for j in range(d)]
        return np.array(np.meshgrid(*axes, indexing="ij")).reshape(d, -1).T, False
    P = np.asarray(eval_points, dtype=np.float64)
    single = P.ndim == 1
    P = np.atleast_2d(P)
    if P.ndim != 2 or P.shape[1] != d:
        raise ValueError(f"eval_points: with x of {d} columns give points of shape (m, {d}) "
                         f"(or one point of length {d}), got shape {np.shape(eval_points)}")
    return P, single


def _mv_check(degree, cov_type, preliminary_bandwidth, pilot_bandwidth, pilot_degree,
              algorithm, deriv, bwcheck, interior, d):
    if algorithm != "nprobust":
        raise ValueError(f"algorithm: {algorithm!r} is univariate; {_MV_NOTE} (leave "
                         "algorithm at its default)")
    for value, name, what in ((cov_type, "cov_type", "its variance is the pilot's local "
                               "residual variance"),
                              (preliminary_bandwidth, "preliminary_bandwidth",
                               "pass pilot_bandwidth, one entry per column")):
        if value is not None:
            raise ValueError(f"{name}: not an option here; {_MV_NOTE}: {what}")
    if pilot_degree not in (None, 2):
        raise ValueError(f"pilot_degree: {_MV_NOTE}, a local quadratic (2), got {pilot_degree!r}")
    if int(deriv) != 0:
        raise ValueError(f"deriv: {_MV_NOTE}; it selects bandwidths for the function (deriv=0)")
    if interior:
        raise ValueError(f"interior: a univariate lpbwselect option; {_MV_NOTE}")
    if isinstance(degree, (bool, np.bool_)) or degree not in (0, 1):
        raise ValueError(f"degree: {_MV_NOTE}, for local constant (0) and local linear (1) "
                         f"fits, got {degree!r}")
    if pilot_bandwidth is None:
        return np.empty(0)
    b = np.asarray(pilot_bandwidth, dtype=np.float64).ravel()
    if b.size != d:
        raise ValueError(f"pilot_bandwidth: needs one value per column of x ({d}), got {b.size}")
    if not np.all(np.isfinite(b)) or np.any(b <= 0):
        raise ValueError(f"pilot_bandwidth: must be finite and positive, got {b!r}")
    return b


def _mv_bwcheck(bwcheck):
    """bwcheck as the core's int: None or 0 -> 0 (no minimum, as the univariate plug-in)."""
    if bwcheck is None:
        return 0
    if (isinstance(bwcheck, (bool, np.bool_)) or not isinstance(bwcheck, (int, np.integer))
            or bwcheck < 0):
        raise ValueError(f"bwcheck: the minimum number of distinct rows in every window must be "
                         f"an integer >= 1 (e.g. 21), or 0 or None for no minimum, got "
                         f"{bwcheck!r}")
    return int(bwcheck)


def mv_dpi(x, y, eval_points, imse, degree, kernel, cov_type, preliminary_bandwidth,
           pilot_bandwidth, pilot_degree, algorithm, deriv, bwcheck, bwregul, interior,
           return_pilot, common_scale, bias_terms):
    """The d >= 2 branch of mse_dpi / imse_dpi (arguments as there)."""
    d = x.shape[1]
    if bias_terms not in ("absolute", "signed"):
        raise ValueError(f"bias_terms: 'absolute' (the bound sum_j |a_j| h_j^2, no cancelling "
                         f"terms) or 'signed' (the pure MSE), got {bias_terms!r}")
    bwc = _mv_bwcheck(bwcheck)
    y = np.asarray(y, dtype=np.float64).ravel()
    b = _mv_check(degree, cov_type, preliminary_bandwidth, pilot_bandwidth, pilot_degree,
                  algorithm, deriv, bwcheck, interior, d)
    P, single = _mv_points(eval_points, d, imse, x)
    r = _core.mse_dpi_multivariate(x, y, P, degree=int(degree), kernel=str(kernel),
                                   pilot_bandwidth=b, bwregul=float(bwregul), bwcheck=bwc,
                                   absolute_bias=bias_terms == "absolute")
    scale = np.asarray(r["scale"]).ravel()
    if imse:
        h = (float(r["c_imse_common"]) * scale if common_scale
             else np.asarray(r["h_imse"]).ravel())
    else:
        h = (np.asarray(r["c_common"]).ravel()[:, None] * scale[None, :] if common_scale
             else np.asarray(r["h"]))
        h = h[0] if single else h
    return (h, np.asarray(r["pilot"]).ravel()) if return_pilot else h
