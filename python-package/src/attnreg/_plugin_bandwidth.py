"""MSE- and IMSE-optimal plug-in bandwidths of local polynomial regression, as nprobust's
``lpbwselect`` (Calonico, Cattaneo & Farrell 2019, Journal of Statistical Software 91(8)):
:func:`mse_dpi`, :func:`imse_dpi`.

Public at :mod:`attnreg.bandwidth` beside :func:`attnreg.select_bandwidth` (their
``__module__``) and, as before, at :mod:`attnreg.diagnostics`; a module of their own keeps
bandwidth.py within the package's file-size limit.
"""
from __future__ import annotations

import numpy as np

from . import _core
from ._deprecation import kernel_cov_type, renamed
from ._kernel_args import _check_kind, _nonneg_int, _opt_bandwidth
from ._plugin_bandwidth_mv import _mv_x, mv_dpi

__all__ = ["mse_dpi", "imse_dpi"]


def _xy_1d(x, y):
    x = np.asarray(x, dtype=np.float64)
    if x.ndim == 2 and x.shape[1] == 1:
        x = x[:, 0]
    if x.ndim != 1:
        raise ValueError("x: mse_dpi/imse_dpi need one continuous regressor (a 1-D array)")
    y = np.asarray(y, dtype=np.float64).ravel()
    return x, y


def _dpi(x, y, eval_points, degree, kernel, kind, preliminary_bandwidth, pilot_bandwidth,
         pilot_degree):
    return _core.dpi_bandwidth(
        x, y, np.asarray(eval_points, dtype=np.float64).ravel(), degree=int(degree),
        kernel=str(kernel), kind=_check_kind(kind),
        preliminary_bandwidth=_opt_bandwidth(preliminary_bandwidth, "preliminary_bandwidth"),
        pilot_bandwidth=_opt_bandwidth(pilot_bandwidth, "pilot_bandwidth"),
        pilot_degree=-1 if pilot_degree is None else int(pilot_degree),
    )


_DPI_ALGORITHMS = ("nprobust", "one_step")


def _no_common_scale(common_scale):
    if common_scale:
        raise ValueError("common_scale: is for several columns of x (h_j = c s_j); with one "
                         "column the bandwidth is a scalar already")


def _lp_bwselect(x, y, eval_points, imse, degree, kernel, kind, preliminary_bandwidth,
                 pilot_bandwidth, pilot_degree, algorithm, deriv, bwcheck, bwregul, interior):
    """Dispatch of mse_dpi / imse_dpi: ("nprobust", dict of h, b, h_imse, b_imse) or
    ("one_step", dict of the one-step core result)."""
    if algorithm not in _DPI_ALGORITHMS:
        raise ValueError(f"algorithm: must be 'nprobust' (Calonico, Cattaneo and Farrell's "
                         f"lpbwselect steps) or 'one_step', got {algorithm!r}")
    if algorithm == "one_step":
        if int(deriv) != 0:
            raise ValueError("deriv: algorithm='one_step' selects bandwidths for the function "
                             "itself only (deriv=0); use algorithm='nprobust'")
        kind = "const" if kind is None else kind
        return algorithm, _dpi(x, y, eval_points, degree, kernel, kind, preliminary_bandwidth,
                               pilot_bandwidth, pilot_degree)
    for value, name in ((preliminary_bandwidth, "preliminary_bandwidth"),
                        (pilot_bandwidth, "pilot_bandwidth")):
        if value is not None:
            _opt_bandwidth(value, name)
            raise ValueError(f"{name}: is an option of algorithm='one_step'; the 'nprobust' "
                             "algorithm chooses its preliminary bandwidths itself")
    if pilot_degree is not None:
        raise ValueError("pilot_degree: is an option of algorithm='one_step'; the 'nprobust' "
                         "algorithm uses degree + 1")
    kind = "nn" if kind is None else _check_kind(kind)
    if bwcheck is None:
        bwcheck = 0
    r = _core.lp_bwselect(
        x, y, np.asarray(eval_points, dtype=np.float64).ravel(), imse=bool(imse),
        degree=int(degree), deriv=int(deriv), kernel=str(kernel), kind=kind,
        bwcheck=_nonneg_int(bwcheck, "bwcheck"), bwregul=float(bwregul),
        interior=bool(interior))
    return algorithm, r


def _no_bias_terms(bias_terms):
    if bias_terms is not None:
        raise ValueError("bias_terms: with one column of x the leading bias is one term (nothing "
                         "cancels); leave bias_terms at None")


@renamed(kind="cov_type")
def mse_dpi(x, y, eval_points=None, degree: int = 1, kernel: str = "gaussian",
            cov_type=None, preliminary_bandwidth=None, pilot_bandwidth=None,
            pilot_degree=None, *, algorithm: str = "nprobust", deriv: int = 0,
            bwcheck=21, bwregul: float = 1.0, interior: bool = False,
            return_pilot: bool = False, common_scale: bool = False, bias_terms=None):
    """MSE-optimal plug-in bandwidth at each evaluation point (nprobust's ``mse-dpi``).

    ``algorithm="nprobust"`` (default) follows the data-driven steps of Calonico, Cattaneo and
    Farrell (2018, JASA 113, 767-779, doi:10.1080/01621459.2017.1285776) as their R package
    nprobust's ``lpbwselect(bwselect="mse-dpi")`` implements them (Calonico, Cattaneo and
    Farrell 2019, J. Stat. Softw. 91(8), doi:10.18637/jss.v091.i08): at each point a
    rule-of-thumb bandwidth, then pilot bandwidths for the derivatives of order ``q+1`` and
    ``q+2`` (``q = degree + 1``), then the bias-correction bandwidth ``b`` and the bandwidth
    ``h``, each ``[(2 nu + 1) V / (2 (o + 1 - nu) n (B^2 + bwregul R))]^(1/(2o+3))`` with the
    variance ``V`` from nearest-neighbour residuals (``cov_type="nn"``, 3 neighbours; or
    ``"hc0"``..``"hc3"``), the bias ``B`` from the equivalent-kernel moments times a pilot
    derivative and a regularisation ``R`` (the pilot's variance); every bandwidth is clipped to
    reach at least ``bwcheck`` observations (0 or None: no clipping) and at most the far end of
    the data. For even ``degree - deriv`` the closed form is replaced by the minimiser of the
    MSE with the second bias term, unless ``interior=True``. Kernels: ``"epanechnikov"``
    (nprobust's default), ``"uniform"``, ``"triangular"``, ``"gaussian"``.

    ``algorithm="one_step"`` is the simpler plug-in ``h(x) = [V(x) / (2 r n B(x)^2)]^(1/(2r+1))``
    (``r = p + 1`` for odd degree ``p``, ``p + 2`` for even ``p``) with ``V`` and ``B`` estimated
    once at a rule-of-thumb ``preliminary_bandwidth`` ``h0`` with a pilot polynomial of degree
    ``pilot_degree`` and bandwidth ``pilot_bandwidth`` (default ``2 h0``), variance ``cov_type``
    default ``"const"``.

    Returns a float when ``eval_points`` is None (the median of ``x``) or a scalar, otherwise
    an array with one bandwidth per point; with ``return_pilot=True`` (``"nprobust"`` only) a
    pair ``(h, b)`` of those.

    Several regressors (``x`` of shape ``(n, d)``, ``d >= 2``, all continuous): the MSE-optimal
    bandwidth *vector* of a local linear (``degree=1``) or local constant (``degree=0``) fit
    with a product kernel, ``h(x) = argmin_h (sum_j a_j h_j^2)^2 + bwregul h2' Cov(a) h2 +
    V0 / prod_j h_j`` (``h2 = (h_j^2)``): the interior bias ``(1/2) mu2(K) tr(H Hess m)``
    (Ruppert and Wand 1994, Ann. Statist. 22(3), Thm 2.1; for local constant also
    ``mu2(K) m_j f_j / f``), the variance ``R(K)^d sigma^2(x) / (n f(x) prod h_j)``, the second
    derivatives, ``sigma^2(x)`` and ``f(x)`` from a pilot local quadratic with all squares and
    cross products at the rule-of-thumb ``pilot_bandwidth`` ``b_j = C_K s_j n^(-1/(d+8))``
    (or yours, one entry per column). Minimised numerically over the vector (a direction
    without curvature gets at most the range of its column); ``common_scale=True`` returns
    the closed-form minimiser over ``h_j = c s_j`` instead. ``eval_points`` are rows of shape
    ``(m, d)`` (default the column medians); the result has shape ``(m, d)`` (``(d,)`` for one
    point); with ``return_pilot=True`` also the pilot vector. ``cov_type``,
    ``preliminary_bandwidth``, ``algorithm="one_step"``, ``deriv`` and ``interior`` are
    univariate options and are refused. ``bias_terms="absolute"``
    (the default with several columns) minimises the bound ``(sum_j |a_j| h_j^2)^2`` on the
    squared leading bias instead, so that no direction gets a large bandwidth because its bias
    term is cancelled by another's of opposite sign (that vector is the one for RBC intervals:
    at the cancelling vectors the bias of order ``h^4`` that RBC does not remove makes them
    undercover, ``bench/results/rbc_montecarlo_pointwise.md``); ``bias_terms="signed"`` is the
    pure MSE-optimal vector. ``bwcheck`` (default 21, as nprobust's): every window used (the
    pilot's at each point and the fit's at ``h``) holds at least ``max(bwcheck, 2 (1 + d +
    d (d + 1) / 2))`` distinct rows of ``x`` (all when there are fewer), each bandwidth vector
    multiplied by the smallest factor >= 1 that does; kernels with unbounded support are not
    changed; ``0`` or ``None``: no minimum. Formulas: ``docs/bandwidth.md``.
    """
    xm = _mv_x(x)
    if xm is not None:
        return mv_dpi(xm, y, eval_points, False, degree, kernel, cov_type, preliminary_bandwidth,
                      pilot_bandwidth, pilot_degree, algorithm, deriv, bwcheck, bwregul,
                      interior, return_pilot, common_scale,
                      "absolute" if bias_terms is None else bias_terms)
    _no_bias_terms(bias_terms)
    _no_common_scale(common_scale)
    x, y = _xy_1d(x, y)
    scalar = eval_points is None or np.ndim(eval_points) == 0
    pts = [float(np.median(x))] if eval_points is None else np.atleast_1d(eval_points)
    alg, r = _lp_bwselect(x, y, pts, False, degree, kernel,
                          None if cov_type is None else kernel_cov_type(cov_type),
                          preliminary_bandwidth,
                          pilot_bandwidth, pilot_degree, algorithm, deriv, bwcheck, bwregul,
                          interior)
    if alg == "one_step":
        if return_pilot:
            raise ValueError("return_pilot: needs algorithm='nprobust'")
        h = np.asarray(r["pointwise"]).ravel()
        return float(h[0]) if scalar else h
    h, b = np.asarray(r["h"]).ravel(), np.asarray(r["b"]).ravel()
    if scalar:
        return (float(h[0]), float(b[0])) if return_pilot else float(h[0])
    return (h, b) if return_pilot else h


@renamed(kind="cov_type")
def imse_dpi(x, y, eval_points=None, degree: int = 1, kernel: str = "gaussian",
             cov_type=None, preliminary_bandwidth=None, pilot_bandwidth=None,
             pilot_degree=None, *, algorithm: str = "nprobust", deriv: int = 0,
             bwcheck=21, bwregul: float = 1.0, interior: bool = False,
             return_pilot: bool = False, common_scale: bool = False, bias_terms=None):
    """IMSE-optimal plug-in bandwidth over evaluation points (nprobust's ``imse-dpi``).

    ``algorithm="nprobust"`` (default): the variance and squared-bias constants of
    :func:`mse_dpi`'s final step, averaged over the grid, give
    ``h = [mean V / (n mean B)]^(1/(2p+3))`` (and ``b`` the same with ``q = p + 1``), as
    ``lpbwselect(bwselect="imse-dpi")`` of Calonico, Cattaneo and Farrell (2019, J. Stat.
    Softw. 91(8), doi:10.18637/jss.v091.i08). Default grid: 30 equally spaced points over the
    range of ``x`` (nprobust's ``imsegrid = 30``).

    ``algorithm="one_step"``: ``h = [sum_j V(x_j) / (2 r n sum_j B(x_j)^2)]^(1/(2r+1))`` with
    the one-step constants of :func:`mse_dpi`; default grid 30 quantiles of ``x`` from 5% to
    95%.

    Returns a float (``(h, b)`` with ``return_pilot=True``, ``"nprobust"`` only).

    Several regressors (``x`` of shape ``(n, d)``, ``d >= 2``): the bandwidth vector that
    minimises the plug-in MSE of :func:`mse_dpi` averaged over ``eval_points`` (default a
    product grid of ``round(30^(1/d))`` marginal quantiles from 10% to 90% per column);
    ``common_scale=True``: its closed-form minimiser over ``h_j = c s_j``. Returns an array of
    length ``d`` (with ``return_pilot=True`` also the pilot vector). ``bias_terms``: as in
    :func:`mse_dpi`, default ``"signed"`` here (the averaged ``a a'`` rarely cancels);
    ``bwcheck``: as there, the window at every evaluation point.
    """
    xm = _mv_x(x)
    if xm is not None:
        return mv_dpi(xm, y, eval_points, True, degree, kernel, cov_type, preliminary_bandwidth,
                      pilot_bandwidth, pilot_degree, algorithm, deriv, bwcheck, bwregul,
                      interior, return_pilot, common_scale,
                      "signed" if bias_terms is None else bias_terms)
    _no_bias_terms(bias_terms)
    _no_common_scale(common_scale)
    x, y = _xy_1d(x, y)
    if eval_points is None:
        pts = (np.linspace(x.min(), x.max(), 30) if algorithm == "nprobust"
               else np.quantile(x, np.linspace(0.05, 0.95, 30)))
    else:
        pts = eval_points
    alg, r = _lp_bwselect(x, y, pts, True, degree, kernel,
                          None if cov_type is None else kernel_cov_type(cov_type),
                          preliminary_bandwidth,
                          pilot_bandwidth, pilot_degree, algorithm, deriv, bwcheck, bwregul,
                          interior)
    if alg == "one_step":
        if return_pilot:
            raise ValueError("return_pilot: needs algorithm='nprobust'")
        return float(r["bandwidth"])
    return (float(r["h_imse"]), float(r["b_imse"])) if return_pilot else float(r["h_imse"])


for _f in (mse_dpi, imse_dpi):
    _f.__module__ = "attnreg.bandwidth"
del _f
