"""Bias-variance diagnostics and inference for kernel regression (linear smoothers).

Every kernel estimator here is ``m(x) = sum_i l_i(x) y_i``. From the weights ``l(x)`` and the
residuals the C++ core computes (formulas and sources in ``core/include/attnreg/inference/diagnostics.hpp``):

* pointwise standard errors (homoskedastic ``sigma^2 sum l_i^2`` with
  ``sigma^2 = RSS / (n - 2 tr L + tr L'L)``, heteroskedasticity-robust HC0-HC3, cluster-robust
  CR1), the estimated bias from a pilot local polynomial, the estimated MSE, conventional and
  robust bias-corrected (RBC, Calonico, Cattaneo & Farrell 2018) confidence intervals
  (:func:`diagnose`);
* global summaries ``tr L``, residual df, ``sigma``, ``R^2``, CV, GCV, AICc (:func:`summary`);
* MSE/IMSE-optimal plug-in bandwidths as nprobust's ``lpbwselect`` (:func:`mse_dpi`,
  :func:`imse_dpi`);
* bias^2 / variance / MSE trade-off curves over a bandwidth grid (:func:`tradeoff`);
* a Monte Carlo lab and a convergence-rate study (:func:`monte_carlo`, :func:`rate_study`);
* wild and pairs bootstrap bands (:func:`bootstrap_bands`);
* a bootstrap significance test of each regressor, as np's ``npsigtest``
  (:func:`significance_test`), and the Hsiao-Li-Racine consistent specification test of an OLS
  model against the kernel alternative, as np's ``npcmstest`` (:func:`specification_test`).

The functions live by topic (R: ``diagnostics.R``, ``bandwidth.R``, ``spectests.R``): the plug-in
bandwidths beside :func:`attnreg.select_bandwidth`, the plots in :mod:`attnreg.plot`,
the Monte Carlo lab in :mod:`attnreg.montecarlo`, the specification tests in
:mod:`attnreg.spectests`; every name above is also importable from here, the same object.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from . import _core
from ._deprecation import kernel_cov_type, renamed
from ._kernel_args import _check_kind, _fitted_core, _opt_bandwidth
from ._plugin_bandwidth import imse_dpi, mse_dpi
from ._pointwise import bootstrap_bands, diagnose
from .montecarlo import monte_carlo, rate_study, simulate_design
from .plot import plot_bands, plot_tradeoff
from .spectests import (SignificanceTestResult, SpecificationTestResult, significance_test,
                        specification_test)

__all__ = [
    "diagnose",
    "summary",
    "KernelSummary",
    "mse_dpi",
    "imse_dpi",
    "tradeoff",
    "monte_carlo",
    "rate_study",
    "simulate_design",
    "bootstrap_bands",
    "significance_test",
    "SignificanceTestResult",
    "specification_test",
    "SpecificationTestResult",
    "plot_bands",
    "plot_tradeoff",
]


@dataclass
class KernelSummary:
    """Global summary of a kernel fit; ``repr`` reads like R's ``summary.lm``.

    For a fit on a pandas DataFrame, ``bandwidth`` is a pandas Series indexed by column name
    and ``residual_quantiles`` a Series (Min, 1Q, Median, 3Q, Max); for arrays both are
    ndarrays (the printed table then names the columns ``x1, x2, ...``).
    """

    estimator: str
    n: int
    kernel: str
    degree: int
    bandwidth: np.ndarray
    var_types: str
    trace_L: float
    trace_LtL: float
    residual_df: float
    sigma: float
    r_squared: float
    cv: float
    gcv: float
    aicc: float
    residual_quantiles: np.ndarray = field(repr=False)
    notes: list = field(default_factory=list)

    def __repr__(self) -> str:
        q = np.asarray(self.residual_quantiles)
        bw = np.atleast_1d(np.asarray(self.bandwidth, dtype=np.float64))
        labels = ([str(v) for v in self.bandwidth.index] if hasattr(self.bandwidth, "index")
                  else [f"x{j + 1}" for j in range(bw.size)])
        kinds = {"c": "continuous", "u": "unordered", "o": "ordered"}
        vt = self.var_types if len(self.var_types) == bw.size else "c" * bw.size
        w = max(8, max(len(v) for v in labels))
        lines = [
            f"{self.estimator} (local polynomial of degree {self.degree}), {self.kernel} kernel",
            "",
            "Residuals:",
            "    Min      1Q  Median      3Q     Max ",
            " ".join(f"{v:7.4g}" for v in q),
            "",
            "Bandwidths:",
            f"  {'variable':<{w}}  {'type':<10}  {'bandwidth':>10}",
        ]
        lines += [f"  {n:<{w}}  {kinds.get(t, t):<10}  {b:>10.4g}" + ("" if t == "c" else "  (lambda)")
                  for n, t, b in zip(labels, vt, bw)]
        lines += [
            "",
            f"Observations: {self.n}",
            f"Effective parameters tr(L): {self.trace_L:.3f}   tr(L'L): {self.trace_LtL:.3f}",
            f"Residual standard error: {self.sigma:.4g} on {self.residual_df:.2f} "
            "residual degrees of freedom (n - 2 tr L + tr L'L)",
            f"R-squared: {self.r_squared:.4f}",
            f"CV (leave-one-out MSE): {self.cv:.4g}   GCV: {self.gcv:.4g}   AICc: {self.aicc:.4g}",
        ]
        if self.notes:
            lines += [""] + [f"Note: {n}" for n in self.notes]
        return "\n".join(lines)

    __str__ = __repr__


def summary(estimator, output: int = 0) -> KernelSummary:
    """Global diagnostics of a fitted kernel regression (see :class:`KernelSummary`).

    ``tr(L)`` is the effective number of parameters; the residual df ``n - 2 tr L + tr L'L``
    makes ``sigma^2 = RSS / df`` unbiased when the smoother is unbiased; AICc is Hurvich,
    Simonoff & Tsai (1998) as in np's ``npreg``. Costs O(n^2) (all rows of ``L``).
    """
    import pandas as pd

    model = _fitted_core(estimator)
    notes = _smoothed_out_notes(estimator)
    if getattr(estimator, "approx_", "exact") == "binned":
        e = estimator.approx_error_details()
        notes.append(
            f"binned fit (grid {estimator.grid_size or 'default'}): max |binned - exact| = "
            f"{e['max_abs']:.3g} (rms {e['rms']:.3g}, {e['relative']:.3g} sd of y) at "
            f"{e['n_points']} random training rows; the statistics above are exact")
    g = _core.global_diagnostics(model, int(output))
    res = np.asarray(model.residuals())[:, int(output)]
    bw = np.asarray(estimator.bandwidth_)
    names = getattr(estimator, "feature_names_in_", None)
    if names is not None and len(names) == bw.size:  # DataFrame input: labelled by column
        bw = pd.Series(bw, index=pd.Index([str(v) for v in names], name="variable"),
                       name="bandwidth")
    quant = np.quantile(res, [0, 0.25, 0.5, 0.75, 1])
    if names is not None:
        quant = pd.Series(quant, index=["Min", "1Q", "Median", "3Q", "Max"],
                          name="residuals")
    return KernelSummary(
        estimator=type(estimator).__name__,
        n=int(g["n"]),
        kernel=str(estimator.kernel),
        degree=int(estimator._degree),
        bandwidth=bw,
        var_types=str(estimator.var_types_),
        trace_L=g["trace_L"],
        trace_LtL=g["trace_LtL"],
        residual_df=g["residual_df"],
        sigma=float(np.sqrt(g["sigma2"])),
        r_squared=g["r_squared"],
        cv=g["cv"],
        gcv=g["gcv"],
        aicc=g["aicc"],
        residual_quantiles=quant,
        notes=notes,
    )


def _smoothed_out_notes(estimator) -> list:
    """One note per variable whose bandwidth smooths it out: a continuous h above 3 standard
    deviations of its training column, a categorical lambda at the kernel's largest value
    (all categories pooled). np's users read either as an irrelevant regressor (Hall, Li and
    Racine 2007, "Nonparametric estimation of regression functions in the presence of
    irrelevant regressors", Review of Economics and Statistics 89(4))."""
    sd = getattr(estimator, "_x_sd", None)
    levels = getattr(estimator, "_x_levels", None)
    if sd is None or levels is None:
        return []
    bw = np.atleast_1d(np.asarray(estimator.bandwidth_, dtype=np.float64))
    vt = str(estimator.var_types_)
    names = getattr(estimator, "feature_names_in_", None)
    notes = []
    for j in range(min(bw.size, len(vt))):
        name = repr(str(names[j])) if names is not None else f"column {j + 1}"
        if vt[j] == "c":
            if sd[j] > 0 and bw[j] > 3.0 * sd[j]:
                what = ("the fit is linear in it" if int(estimator._degree) >= 1
                        else "the fit is flat in it")
                notes.append(
                    f"{name} has h = {bw[j]:.4g} > 3 sd ({3.0 * sd[j]:.4g}): the variable is "
                    f"smoothed out ({what}); np's users read this as an irrelevant regressor "
                    "(with local linear: one that enters linearly); check it with a "
                    "significance test or drop it")
        else:
            kern = estimator.ordered_kernel if vt[j] == "o" else estimator.unordered_kernel
            mx = _core.categorical_max_bandwidth(str(kern), vt[j] == "o", int(levels[j]))
            if bw[j] >= mx * (1.0 - 1e-5):
                notes.append(
                    f"{name} has lambda = {bw[j]:.4g} at its upper bound {mx:.4g}: the "
                    "categories are pooled and the variable is smoothed out; np's users read "
                    "this as an irrelevant regressor; check with a significance test or drop it")
    return notes


# ---------------------------------------------------------------------------- trade-off
@renamed(kind="cov_type")
def tradeoff(X, y, bandwidths, eval_points=None, cov_type: str = "nonrobust",
             kernel: str = "gaussian",
             degrees: Sequence[int] = (0, 1), pilot_bandwidth=None, pilot_degree=None):
    """Estimated integrated bias^2, variance and MSE with CV/GCV over a bandwidth grid.

    For each degree (0 = Nadaraya-Watson, 1 = local linear) and bandwidth, the integrals are
    means over ``eval_points`` (default: 50 points evenly spaced over the range of a single
    regressor, else the training rows); the bias uses one pilot fixed across the grid
    (default bandwidth twice the rule of thumb); the variance is of ``cov_type`` (as
    :func:`diagnose`; default homoskedastic). Returns a long pandas DataFrame with columns
    ``estimator, degree, bandwidth, bias2, variance, mse, cv, gcv, df``.
    """
    import pandas as pd

    X = np.asarray(X, dtype=np.float64)
    if X.ndim == 1:
        X = X[:, None]
    y = np.asarray(y, dtype=np.float64).ravel()
    if X.shape[0] != y.shape[0]:
        raise ValueError(f"y: has {y.shape[0]} values but X has {X.shape[0]} rows")
    hs = np.asarray(bandwidths, dtype=np.float64).ravel()
    if eval_points is None:
        E = (np.linspace(X[:, 0].min(), X[:, 0].max(), 50)[:, None] if X.shape[1] == 1 else X)
    else:
        E = np.asarray(eval_points, dtype=np.float64)
        E = E[:, None] if E.ndim == 1 else E
    pilot = _opt_bandwidth(pilot_bandwidth, "pilot_bandwidth")
    frames = []
    names = {0: "NadarayaWatson", 1: "LocalLinear"}
    for p in degrees:
        t = _core.tradeoff_curve(
            X, y, hs, degree=int(p), kernel=str(kernel), X_eval=E,
            kind=_check_kind(kernel_cov_type(cov_type)),
            pilot_degree=-1 if pilot_degree is None else int(pilot_degree),
            pilot_bandwidth=pilot)
        frames.append(pd.DataFrame({
            "estimator": names.get(int(p), f"degree {p}"), "degree": int(p), **t}))
    return pd.concat(frames, ignore_index=True)
