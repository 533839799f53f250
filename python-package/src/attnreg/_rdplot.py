"""Regression discontinuity plots: ``attnreg.rd.rdplot``.

Binned means of the outcome on each side of the cutoff with the data-driven numbers of bins of
Calonico, Cattaneo and Titiunik (2015, "Optimal data-driven regression discontinuity plots", JASA
110(512), 1753-1769), and a global polynomial fit on each side. The numbers of bins, the bins and
the fits are computed in the C++ core (``core/include/attnreg/rd/rdplot.hpp``); this module lays
them out and draws them. docs/rd.md ("rdplot") lists the conventions and where rdrobust 2.1.1's
``rdplot`` differs.
"""
from __future__ import annotations

import dataclasses
import math
import warnings

import numpy as np

from . import _core
from ._deprecation import check_level

BINSELECT = ("es", "espr", "esmv", "esmvpr", "qs", "qspr", "qsmv", "qsmvpr")


@dataclasses.dataclass
class RDPlotResult:
    """The result of :func:`rdplot`.

    Attributes
    ----------
    bins : pandas.DataFrame
        One row per bin, left side first, in increasing x: ``side`` ("left"/"right"), ``bin``
        (1..J on each side, from the lowest x), ``left_edge``, ``right_edge``, ``mid`` (the bin's
        centre), ``mean_x``, ``mean_y``, ``n``, ``sd_y``, ``se_y``, ``ci_low``, ``ci_high``
        (t interval at ``level``). Empty bins have n = 0 and NaN means.
    J : dict
        ``left``, ``right``: the numbers of bins used.
    J_imse, J_mv : dict
        The IMSE-optimal and the mimicking-variance numbers of bins of the rule (its spacing and
        its variance estimator), per side.
    scale, rscale : dict
        The requested scale and the implied one (J / J_imse), per side.
    coef : pandas.DataFrame
        The polynomial coefficients of ``(x - c)**j``, j = 0..p, columns ``left`` and ``right``.
    curve : pandas.DataFrame
        The fitted polynomials: ``side``, ``x``, ``y`` (``nplot`` points per side).
    binselect : str
        The rule used (after the mass-point adjustment), or "manual" when ``nbins`` was given.
    n, n_h : dict
        Observations per side, and those with positive kernel weight in the polynomial fit.
    h : dict
        The bandwidths of the polynomial fits (the support when not given).
    mass_points : bool
        Whether at least 20% of the x values on a side repeat.
    n_dropped : int
        Rows with a missing y, x or weight.
    ax : matplotlib Axes or None
        The plot (None with ``hide=True``).
    """

    bins: object
    J: dict
    J_imse: dict
    J_mv: dict
    scale: dict
    rscale: dict
    coef: object
    curve: object
    binselect: str
    n: dict
    n_h: dict
    h: dict
    c: float
    p: int
    kernel: str
    level: float
    mass_points: bool
    n_dropped: int
    ax: object = None

    def plot(self, ax=None, ci: bool = False, shade: bool = False, title: str | None = None,
             xlabel: str = "running variable x", ylabel: str = "outcome y"):
        """Draw the binned means and the polynomial fits (matplotlib); returns the Axes."""
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots()
        b = self.bins[self.bins["n"] > 0]
        if ci:
            for side in ("left", "right"):
                s = b[b["side"] == side]
                if shade:
                    ax.fill_between(s["mid"], s["ci_low"], s["ci_high"], color="C0", alpha=0.2,
                                    linewidth=0)
                else:
                    ax.vlines(s["mid"], s["ci_low"], s["ci_high"], color="C0", alpha=0.5)
        ax.scatter(b["mid"], b["mean_y"], s=12, color="C0", zorder=3, label="bin means")
        for side in ("left", "right"):
            cv = self.curve[self.curve["side"] == side]
            ax.plot(cv["x"], cv["y"], color="C3",
                    label=f"polynomial fit, p = {self.p}" if side == "left" else None)
        ax.axvline(self.c, color="0.5", linestyle=":")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(title if title is not None else
                     f"RD plot ({self.binselect}: J = {self.J['left']}, {self.J['right']})")
        ax.legend()
        return ax

    def __repr__(self):
        return (f"RDPlotResult(binselect={self.binselect!r}, J={self.J}, n={self.n}, "
                f"p={self.p}, c={self.c})")


def _side_pair(v, name: str, integer: bool = False):
    if v is None:
        return None
    a = np.asarray(v, dtype=float).reshape(-1)
    if a.size not in (1, 2) or not np.all(np.isfinite(a)) or np.any(a <= 0):
        raise ValueError(f"{name}: must be one or two (left, right) positive numbers")
    if integer and np.any(a != np.round(a)):
        raise ValueError(f"{name}: numbers of bins must be whole numbers")
    return (a[0], a[0]) if a.size == 1 else (a[0], a[1])


def rdplot(y, x, c: float = 0.0, p: int = 4, nbins=None, binselect: str = "esmv", scale=None,
           kernel: str = "uniform", weights=None, h=None, support=None, ci=None,
           shade: bool = False, hide: bool = False, ax=None, subset=None,
           masspoints: str = "adjust", level: float | None = None, nplot: int = 500):
    """Regression discontinuity plot: binned means and global polynomial fits on each side.

    The numbers of bins follow Calonico, Cattaneo and Titiunik (2015, JASA 110(512)):
    evenly-spaced (``es*``) or quantile-spaced (``qs*``) bins; IMSE-optimal (``es``, ``qs``) or
    mimicking-variance (``esmv``, ``qsmv``) numbers, with the variance estimated from spacings
    or, with the ``pr`` suffix, from global polynomial regressions. The fits are weighted
    least-squares polynomials of order ``p`` in ``x - c`` on each side.

    Parameters
    ----------
    y, x : array-like
        Outcome and running variable (rows with a NaN in either are dropped).
    c : float
        The cutoff; it must lie strictly inside the range of x.
    p : int
        Order of the global polynomials (0..20).
    nbins : int or (int, int), optional
        Fixed numbers of bins (left, right); the spacing still follows ``binselect``.
    binselect : str
        One of es, espr, esmv (default), esmvpr, qs, qspr, qsmv, qsmvpr.
    scale : float or (float, float), optional
        Multiplies the selected numbers of bins (J = floor(scale * J_selected)).
    kernel : str
        Kernel of the polynomial fits: uniform (default), triangular or epanechnikov.
    weights : array-like, optional
        Non-negative unit weights of the polynomial fits (the bins are unweighted, as in
        rdrobust's rdplot).
    h : float or (float, float), optional
        Bandwidths of the polynomial fits; default the support on each side.
    support : (float, float), optional
        Extends the range of x used by the evenly-spaced bins.
    ci : float, optional
        Draw t confidence intervals of the bin means at this level (a fraction, e.g. 0.95; a
        percentage such as 95 is read as rdrobust's ``ci=95``).
    shade : bool
        Draw the intervals as shaded bands.
    hide : bool
        Compute only; draw nothing.
    ax : matplotlib Axes, optional
        Where to draw.
    subset : boolean mask or integer positions, optional
        The rows to use.
    masspoints : str
        "adjust" (default: with >= 20% repeated x on a side, the spacings rules become their
        polynomial-regression variants), "check" (report only) or "off".
    level : float, optional
        Level of the bins' intervals in the result (default ``ci`` or 0.95).
    nplot : int
        Points of each fitted curve.

    Returns
    -------
    RDPlotResult
    """
    from .rd import _KERNELS, _vector

    xv = _vector(x, "x")
    if xv is None:
        raise ValueError("x: the running variable is required")
    n = xv.shape[0]
    yv = _vector(y, "y", n)
    if yv is None:
        raise ValueError("y: the outcome is required")
    wv = _vector(weights, "weights", n)
    if subset is not None:
        s = np.asarray(subset)
        if s.dtype == bool:
            if s.shape != (n,):
                raise ValueError(f"subset: a boolean mask needs {n} values")
            rows = np.flatnonzero(s)
        elif np.issubdtype(s.dtype, np.integer):
            if s.ndim != 1 or np.any(s < 0) or np.any(s >= n):
                raise ValueError(f"subset: integer positions must lie in 0..{n - 1}")
            rows = s
        else:
            raise ValueError("subset: pass a boolean mask or integer positions")
        xv, yv = xv[rows], yv[rows]
        wv = None if wv is None else wv[rows]
    if not isinstance(p, (int, np.integer)) or isinstance(p, bool):
        raise ValueError(f"p: must be an integer, got {p!r}")
    if not isinstance(binselect, str) or binselect.lower() not in BINSELECT:
        raise ValueError(f"binselect: {binselect!r} is not one of {', '.join(BINSELECT)}")
    binselect = binselect.lower()
    if not isinstance(kernel, str) or kernel.lower() not in _KERNELS:
        raise ValueError(f"kernel: {kernel!r} is not one of triangular, epanechnikov, uniform")
    kernel = _KERNELS[kernel.lower()]
    if masspoints is False or masspoints is None:
        masspoints = "off"
    if masspoints not in ("adjust", "check", "off"):
        raise ValueError(f"masspoints: {masspoints!r} is not one of adjust, check, off")
    if ci is not None and not isinstance(ci, bool):
        ci = float(ci)
        if ci >= 1:  # rdrobust's ci=95
            ci = ci / 100.0
        check_level(ci)
    if level is None:
        level = ci if isinstance(ci, float) else 0.95
    check_level(level)
    nb = _side_pair(nbins, "nbins", integer=True)
    sc = _side_pair(scale, "scale")
    hh = _side_pair(h, "h")
    sup = (math.nan, math.nan)
    if support is not None:
        a = np.asarray(support, dtype=float).reshape(-1)
        if a.size != 2 or not np.all(np.isfinite(a)) or a[0] >= a[1]:
            raise ValueError("support: must be (low, high) finite numbers with low < high")
        sup = (float(a[0]), float(a[1]))
    if not np.isfinite(c):
        raise ValueError("c: must be a finite number")
    opts = dict(c=float(c), p=int(p), binselect=binselect,
                nbins_left=int(nb[0]) if nb else 0, nbins_right=int(nb[1]) if nb else 0,
                scale_left=float(sc[0]) if sc else 1.0, scale_right=float(sc[1]) if sc else 1.0,
                kernel=kernel, h_left=float(hh[0]) if hh else math.nan,
                h_right=float(hh[1]) if hh else math.nan, support_low=sup[0],
                support_high=sup[1], masspoints=masspoints, level=float(level),
                nplot=int(nplot))
    r = _core.rd_plot(yv, xv, wv, opts)
    if r["mass_points"] and masspoints != "off":
        msg = "rdplot: mass points detected in the running variable (>= 20% repeated values)"
        if masspoints == "adjust" and binselect in ("es", "esmv", "qs", "qsmv"):
            msg += f"; binselect {binselect!r} became {r['binselect']!r}"
        warnings.warn(msg, stacklevel=2)
    for side in ("left", "right"):
        if r[side]["var_y"] == 0:
            warnings.warn(f"rdplot: y is constant on the {side} side; one bin there",
                          stacklevel=2)
    result = _layout(r, float(c), int(p), kernel, float(level))
    if not hide:
        result.ax = result.plot(ax=ax, ci=ci is not None and ci is not False, shade=shade)
    return result


def _layout(r, c, p, kernel, level):
    import pandas as pd

    frames, curves = [], []
    for side in ("left", "right"):
        s = r[side]
        e = np.asarray(s["edges"])
        J = s["J"]
        frames.append(pd.DataFrame({
            "side": side, "bin": np.arange(1, J + 1), "left_edge": e[:-1], "right_edge": e[1:],
            "mid": s["mid"], "mean_x": s["mean_x"], "mean_y": s["mean_y"],
            "n": np.asarray(s["count"], dtype=np.int64), "sd_y": s["sd_y"], "se_y": s["se_y"],
            "ci_low": s["ci_low"], "ci_high": s["ci_high"]}))
        curves.append(pd.DataFrame({"side": side, "x": s["curve_x"], "y": s["curve_y"]}))
    per = lambda key: {"left": r["left"][key], "right": r["right"][key]}  # noqa: E731
    coef = pd.DataFrame({"left": r["left"]["coef"], "right": r["right"]["coef"]})
    coef.index.name = "power"
    return RDPlotResult(
        bins=pd.concat(frames, ignore_index=True), J=per("J"),
        J_imse={k: int(v) if np.isfinite(v) else v for k, v in per("J_imse").items()},
        J_mv={k: int(v) if np.isfinite(v) else v for k, v in per("J_mv").items()},
        scale=per("scale"), rscale=per("rscale"), coef=coef,
        curve=pd.concat(curves, ignore_index=True), binselect=r["binselect"], n=per("n"),
        n_h=per("n_h"), h=per("h"), c=c, p=p, kernel=kernel, level=level,
        mass_points=bool(r["mass_points"]), n_dropped=int(r["n_dropped"]))
