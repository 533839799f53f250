"""Plots (matplotlib, imported only when a plot is drawn)."""
from __future__ import annotations

import numpy as np


def cv_curve(result, ax=None):
    """Plot the bandwidth-selection objective curve with the chosen bandwidth marked.

    Parameters
    ----------
    result : attnreg.bandwidth.BandwidthResult
        From :func:`attnreg.select_bandwidth` with one continuous column (which computes the
        curve), or a fitted estimator's ``bandwidth_result_``.
    ax : matplotlib Axes, optional
        Drawn into a new figure when omitted.

    Returns
    -------
    matplotlib Axes
    """
    curve = getattr(result, "curve", None)
    if curve is None:
        raise ValueError(
            "result: has no objective curve (curves are computed for one continuous column "
            "with grid_size > 0); select on a single column to plot it"
        )
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots()
    grid, values = (np.asarray(a, dtype=float) for a in curve)
    ok = np.isfinite(values)
    ax.plot(grid[ok], values[ok], marker=".", label=f"{result.method} objective")
    h = float(result.bandwidth[0])
    ax.axvline(h, color="C3", linestyle="--", label=f"selected h = {h:.4g}")
    ax.plot([h], [result.objective], marker="o", color="C3")
    ax.set_xscale("log")
    ax.set_xlabel("bandwidth h")
    ax.set_ylabel(result.method)
    ax.legend()
    return ax
