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
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from . import _core, _progress
from ._deprecation import check_level, kernel_cov_type, renamed, seed_from_random_state
from ._encoding import KernelInput, encode_frame, resolve_var_types

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


def _cluster_codes(cluster):
    """Codes 0..G-1 of cluster ids: integers, or labels (strings, categoricals, objects) as
    ``pandas.factorize`` does. Missing ids (NaN, None, pd.NA) and non-integer floats are errors:
    a NaN must not become a cluster of its own, and 1.5 is not an id."""
    import pandas as pd

    if isinstance(cluster, (pd.Series, pd.Index, pd.Categorical)):
        s = pd.Series(cluster).reset_index(drop=True)
    else:
        s = pd.Series(np.asarray(cluster).ravel())
    if s.isna().any():
        raise ValueError(f"cluster: is missing (NaN/None) at row {int(np.argmax(s.isna()))}; "
                         "every training row needs a cluster id (drop those rows or give "
                         "them their own id)")
    if s.dtype.kind == "f":
        v = s.to_numpy(dtype=np.float64)
        frac = v != np.round(v)
        if frac.any():
            raise ValueError(f"cluster: must be integer ids or labels; got the non-integer "
                             f"{float(v[frac][0])!r} (floats are not ids)")
    codes, _ = pd.factorize(s, sort=True)
    return codes


@renamed(kind="cov_type", cluster="groups")
def diagnose(estimator, X, level: float = 0.95, cov_type: str = "HC3", pilot_bandwidth=None,
             pilot_degree: int | None = None, groups=None, output: int = 0,
             uniform: bool = False, replications: int = 2000, random_state=None):
    """Pointwise fit, standard error, bias, MSE and confidence intervals at the rows of ``X``.

    Parameters
    ----------
    estimator : fitted NadarayaWatson or LocalLinear
    X : array-like of shape (m, d)
        Evaluation points.
    level : float, default 0.95
        Confidence level of both intervals, a fraction in (0, 1).
    cov_type : {"HC3", "HC2", "HC1", "HC0", "nonrobust", "CR1", "nn"}, default "HC3"
        Variance estimator (any case; formerly ``kind=``, which still works for one release
        with a ``FutureWarning``): heteroskedasticity-robust with leverage adjustment,
        homoskedastic (``"nonrobust"``, also ``"const"``), cluster-robust CR1 (needs
        ``groups``), or ``"nn"``: nearest-neighbour
        residuals (one continuous regressor; nprobust's default ``vce = "nn"`` with 3
        neighbours, Calonico, Cattaneo and Farrell 2018, doi:10.1080/01621459.2017.1285776):
        ``sigma_i^2 = J/(J+1) (y_i - mean of y over the J nearest x)^2``, whole tie groups,
        the neighbours sought among the observations inside the evaluation point's kernel
        window, as nprobust's ``lprobust``.
    pilot_bandwidth : float or array-like of shape (d,), optional
        Bandwidth ``b`` of the pilot local polynomial that estimates the derivatives in the
        bias; default the estimator's bandwidth (``rho = h / b = 1`` as nprobust). With several
        columns a vector, one entry per column (categorical entries are the pilot's smoothing
        parameters).
    pilot_degree : int, optional
        Degree ``q`` of the pilot (> the estimator's degree); default ``max(p + 1, 2)``. With
        several columns the pilot is a local quadratic with all squares and cross products
        (``q = 2``; local constant and local linear fits).
    groups : array-like of shape (n_train,), optional
        Cluster ids for ``cov_type="CR1"`` (formerly ``cluster=``): integers, or labels (strings, a pandas Categorical)
        that are factorised as ``pandas.factorize`` does. Missing ids and non-integer floats
        raise ``ValueError``.
    output : int, default 0
        Output column for multi-output fits.
    uniform : bool, default False
        Also return uniform (simultaneous over the rows of ``X``) bands: sup-t critical values
        from a Gaussian multiplier bootstrap of the smoother's estimated covariance, for the
        conventional and the RBC band (columns ``uniform_low, uniform_high,
        uniform_rbc_low, uniform_rbc_high``; the critical values are in
        ``DataFrame.attrs["crit_uniform"]`` and ``attrs["crit_uniform_rbc"]``).
    replications : int, default 2000
        Multiplier draws for ``uniform=True`` (at least 100).
    random_state : int, numpy Generator or None
        Seed of the multiplier draws (results do not depend on the thread count).

    Returns
    -------
    pandas.DataFrame
        Columns ``fit, se, bias, mse, ci_low, ci_high, rbc_low, rbc_high, fit_bc, se_bc``. With
        several columns the bias comes from a pilot local quadratic with all squares and cross
        products (Ruppert and Wand 1994, Ann. Statist. 22(3)) and the RBC interval follows
        Calonico, Cattaneo and Farrell (2018, JASA 113(522)); see ``core/README.md``. A fit
        without continuous columns has NaN bias, MSE and RBC columns and a ``UserWarning``
        (``fit``, ``se`` and the conventional interval are always computed).
        ``mse = bias**2 + se**2``; ``[ci_low, ci_high] = fit -+ z se``;
        ``[rbc_low, rbc_high] = fit_bc -+ z se_bc`` with ``fit_bc = fit - bias`` and ``se_bc``
        its exact variance (the bias estimate is linear in y).
    """
    import pandas as pd

    model = _fitted_core(estimator)
    Xa = estimator._check_X(X)
    kind = _check_kind(kernel_cov_type(cov_type))
    level = check_level(level)
    cluster = groups
    pilot_vec: list[float] = []
    if pilot_bandwidth is None:
        pilot_bandwidth = 0.0
    elif np.ndim(pilot_bandwidth) == 0:
        if not np.isfinite(pilot_bandwidth) or pilot_bandwidth <= 0:
            raise ValueError(f"pilot_bandwidth: must be a positive number, got {pilot_bandwidth!r}")
    else:
        pv = np.asarray(pilot_bandwidth, dtype=float).ravel()
        if pv.size != Xa.shape[1]:
            raise ValueError(f"pilot_bandwidth: needs one value per column of X ({Xa.shape[1]}), "
                             f"got {pv.size}")
        if not np.all(np.isfinite(pv)) or np.any(pv < 0):
            raise ValueError(f"pilot_bandwidth: must be finite and non-negative, got {pv!r}")
        pilot_vec, pilot_bandwidth = [float(v) for v in pv], 0.0
    n_rep, seed = 0, 0
    if uniform:
        if isinstance(replications, (bool, np.bool_)) or not isinstance(
                replications, (int, np.integer)) or replications < 100:
            raise ValueError(f"replications: must be an integer >= 100 (e.g. 2000), got "
                             f"{replications!r}")
        n_rep, seed = int(replications), seed_from_random_state(random_state)
    cl: list[int] = []
    if cluster is not None:
        cl = [int(v) for v in _cluster_codes(cluster)]
    elif kind == "cr1":
        raise ValueError("groups: cov_type='CR1' needs one cluster id per training row")
    r = _core.pointwise_diagnostics(
        model, Xa, kind=kind, level=float(level),
        pilot_degree=-1 if pilot_degree is None else int(pilot_degree),
        pilot_bandwidth=float(pilot_bandwidth), cluster=cl, output=_nonneg_int(output, "output"),
        pilot_bandwidths=pilot_vec, uniform_replications=n_rep, seed=seed,
    )
    if r["bias_note"]:
        import warnings

        warnings.warn(f"diagnose: {r['bias_note']}; those columns are NaN", UserWarning,
                      stacklevel=2)
    cols = ["fit", "se", "bias", "mse", "ci_low", "ci_high", "rbc_low", "rbc_high", "fit_bc",
            "se_bc"]
    if uniform:
        cols += ["uniform_low", "uniform_high", "uniform_rbc_low", "uniform_rbc_high"]
    index = X.index if hasattr(X, "index") else None
    out = pd.DataFrame({c: np.asarray(r[c]).ravel() for c in cols}, index=index)
    if uniform:
        out.attrs["crit_uniform"] = float(r["crit_uniform"])
        out.attrs["crit_uniform_rbc"] = float(r["crit_uniform_bc"])
    return out


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


# ---------------------------------------------------------------------------- bandwidths
def _xy_1d(x, y):
    x = np.asarray(x, dtype=np.float64)
    if x.ndim == 2 and x.shape[1] == 1:
        x = x[:, 0]
    if x.ndim != 1:
        raise ValueError("x: mse_dpi/imse_dpi need one continuous regressor (a 1-D array)")
    y = np.asarray(y, dtype=np.float64).ravel()
    return x, y


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


@renamed(kind="cov_type")
def mse_dpi(x, y, eval_points=None, degree: int = 1, kernel: str = "gaussian",
            cov_type=None, preliminary_bandwidth=None, pilot_bandwidth=None,
            pilot_degree=None, *, algorithm: str = "nprobust", deriv: int = 0,
            bwcheck=21, bwregul: float = 1.0, interior: bool = False,
            return_pilot: bool = False):
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
    """
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
             return_pilot: bool = False):
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
    """
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


# ---------------------------------------------------------------------------- Monte Carlo
@renamed(rng="random_state")
def simulate_design(n: int, d: int = 1, design: str = "uniform", random_state=None,
                    cone_dims=None):
    """Draw an (n, d) design.

    ``"uniform"``: U[0, 1]^d. ``"cone"``: Zuo et al. 2025, arXiv:2510.01450, App. E.1 eq. 51 for one segment with the
    all-positive sign pattern: ``X_j = |Z_j|`` for ``j <= m`` (``m = cone_dims``, default d) and
    ``X_j = Z_j`` otherwise, ``Z ~ N(0, I_d)``: a Gaussian truncated to the cone
    ``{x_j >= 0, j <= m}``, whose faces are a boundary where the density does not vanish.
    (:func:`monte_carlo` draws its designs in the core, from its ``random_state``; this function uses
    NumPy's generator from ``random_state``: an int, None or a numpy Generator; formerly
    ``rng=``.)
    """
    rng = np.random.default_rng(random_state)
    if design == "uniform":
        return rng.random((n, d))
    if design == "cone":
        m = d if cone_dims is None else int(cone_dims)
        if not 0 < m <= d:
            raise ValueError(f"cone_dims: must be between 1 and d = {d}, got {cone_dims!r}")
        Z = rng.standard_normal((n, d))
        Z[:, :m] = np.abs(Z[:, :m])
        return Z
    raise ValueError(f"design: unknown design {design!r}; use 'uniform' or 'cone'")


def _mc_int(value, name: str, low: int) -> int:
    v = _nonneg_int(value, name)
    if v < low:
        raise ValueError(f"{name}: must be at least {low}, got {value!r}")
    return v


def _eval_func(func, X, name):
    v = np.asarray(func(X), dtype=np.float64).ravel()
    if v.shape[0] != X.shape[0]:
        raise ValueError(f"func: must return one value per row of its argument ({name})")
    return v


@renamed(seed="random_state")
def monte_carlo(func: Callable, n: int = 200, d: int = 1, design: str = "uniform",
                noise: float = 0.3, replications: int = 200, random_state=0,
                estimators: Sequence[str] = ("nw", "ll", "ols", "ridge"), bandwidth="oracle",
                bandwidth_grid=None, eval_points=None, ridge_alpha: float = 1.0,
                kernel: str = "gaussian", cone_dims=None, progress=False):
    """Empirical pointwise and integrated bias, variance and MSE by simulation.

    One design ``X`` (n, d) is drawn from ``design`` (``"uniform"``: U(0, 1)^d; ``"cone"``:
    Zuo et al. 2025, arXiv:2510.01450, App. E.1 eq. 51, ``X_j = |Z_j|`` for
    ``j <= cone_dims`` (default d), ``Z ~ N(0, I_d)``) and kept fixed; ``func(X)``
    (vectorised, rows = points) is evaluated once and ``replications`` response vectors
    ``func(X) + noise * N(0, 1)`` are drawn. Each estimator (``"nw"``, also called ``"lc"``,
    ``"ll"``, ``"ols"``, ``"ridge"``) is a linear smoother with weights ``W`` at the evaluation
    points, so the core computes all replications at once (``W @ Y``).
    ``bandwidth="oracle"`` takes, per kernel estimator, the bandwidth in ``bandwidth_grid``
    (default ``s n^(-1/(d+4))`` times 14 log-spaced factors from 0.25 to 2.5, ``s`` 0.3 for
    the uniform and 1 for the cone design) with the smallest empirical integrated MSE.
    Evaluation points: default 100 fresh draws from the design (Monte Carlo integration
    against the design density; for d = 1 uniform, 101 points evenly spaced on [0, 1]).

    Every draw comes from the core's generator seeded with ``random_state`` (an int; a numpy
    Generator or None draws one; formerly ``seed=``): R's ``monte_carlo`` with the same
    ``seed`` (and the same function and settings) gives the same numbers.

    ``progress`` (True, "tqdm", "stderr" or a callable ``f(done, total, label)``) reports after
    each fit; Ctrl-C interrupts with ``KeyboardInterrupt``.

    Returns a dict with ``"integrated"`` (DataFrame: estimator, bandwidth, bias2, variance, mse),
    ``"pointwise"`` (long DataFrame per estimator and point), ``"eval_points"`` and ``"X"``
    (the design drawn).
    """
    import pandas as pd

    n = _mc_int(n, "n", 3)
    d = _mc_int(d, "d", 1)
    replications = _mc_int(replications, "replications", 2)
    seed = seed_from_random_state(random_state)
    cone = 0 if cone_dims is None else _mc_int(cone_dims, "cone_dims", 1)
    X, Xe = _core.monte_carlo_sample(n, d, design=str(design), cone_dims=cone,
                                     n_eval=-1 if eval_points is None else 0, seed=seed)
    if eval_points is not None:
        Xe = np.asarray(eval_points, dtype=np.float64)
        Xe = Xe[:, None] if Xe.ndim == 1 else Xe
    m_train = _eval_func(func, X, "X")
    truth = _eval_func(func, Xe, "eval_points")
    Ysim = _core.monte_carlo_responses(m_train, float(noise), replications, seed=seed)
    if isinstance(bandwidth, str):
        if bandwidth != "oracle":
            raise ValueError(f"bandwidth: use 'oracle' or one number > 0, got {bandwidth!r}")
        h = 0.0
    else:
        h = float(bandwidth)
        if not (np.isfinite(h) and h > 0):
            raise ValueError(f"bandwidth: use 'oracle' or one number > 0, got {bandwidth!r}")
    grid = (_core.monte_carlo_default_grid(n, d, str(design)) if bandwidth_grid is None
            else np.asarray(bandwidth_grid, dtype=np.float64).ravel())
    if isinstance(estimators, str):
        estimators = [estimators]
    with _progress.reporting(progress):
        res = _core.monte_carlo_estimates(X, Xe, Ysim, truth, [str(e) for e in estimators],
                                          bandwidth=h, bandwidth_grid=grid,
                                          ridge_alpha=float(ridge_alpha), kernel=str(kernel))
    rows, points = [], []
    for s in res:
        bw = None if np.isnan(s["bandwidth"]) else float(s["bandwidth"])
        rows.append({"estimator": s["estimator"], "bandwidth": bw,
                     "bias2": s["integrated_bias2"], "variance": s["integrated_variance"],
                     "mse": s["integrated_mse"]})
        points.append(pd.DataFrame({"estimator": s["estimator"], "point": np.arange(Xe.shape[0]),
                                    "bias": np.ravel(s["bias"]),
                                    "variance": np.ravel(s["variance"]),
                                    "mse": np.ravel(s["mse"])}))
    return {"integrated": pd.DataFrame(rows), "pointwise": pd.concat(points, ignore_index=True),
            "eval_points": Xe, "X": X}


@renamed(seed="random_state")
def rate_study(func: Callable, ns: Sequence[int] = (100, 200, 400, 800, 1600), d: int = 1,
               design: str = "uniform", boundary_point=None, noise: float = 0.3,
               replications: int = 100, random_state=0, estimators: Sequence[str] = ("nw", "ll"),
               kernel: str = "gaussian", grid_points: int = 24, progress=False):
    """Convergence rates of NW and local linear at the boundary and integrated over D.

    For each ``n`` the design is drawn, and for each estimator the oracle bandwidth on a grid
    is chosen twice: minimising the empirical MSE at ``boundary_point`` (default the origin,
    a corner of ``[0,1]^d`` / the apex of the cone) and minimising the empirical integrated MSE
    over 100 design draws plus the boundary point. Slopes of log MSE on log n are fitted by OLS
    (with standard errors). Zuo et al. 2025, arXiv:2510.01450, Props 2.1/2.2 concern the *integrated* MSE on a bounded
    support: ``n^(-3/(d+3))`` for NW (boundary strip of width h with O(h) bias) and
    ``n^(-4/(d+4))`` for local linear; at a boundary point itself the classical pointwise rates
    are ``n^(-2/(d+2))`` (NW) and ``n^(-4/(d+4))`` (LL). The draws for the k-th sample size
    come from the core's generator seeded with ``random_state`` (study k, as :func:`monte_carlo` is
    study 0).

    ``progress`` (True, "tqdm", "stderr" or a callable ``f(done, total, label)``) reports after
    each sample size; Ctrl-C interrupts with ``KeyboardInterrupt``.

    Returns a dict: ``"table"`` (n, estimator, h_point, mse_point, h_int, imse) and
    ``"slopes"`` (estimator, target, slope, se, theory).
    """
    import pandas as pd

    seed = seed_from_random_state(random_state)
    d = _mc_int(d, "d", 1)
    replications = _mc_int(replications, "replications", 2)
    b = np.zeros(d) if boundary_point is None else np.asarray(boundary_point, dtype=np.float64)
    rows = []
    with _progress.steps(progress, "rate study", len(ns)) as tick:
        for step, n in enumerate(ns, 1):
            n = _mc_int(n, "ns", 3)
            X, draws = _core.monte_carlo_sample(n, d, design=str(design), n_eval=100,
                                                seed=seed, study=step - 1)
            Xe = np.vstack([b[None, :], draws])
            m_train = _eval_func(func, X, "X")
            truth = _eval_func(func, Xe, "eval_points")
            Ysim = _core.monte_carlo_responses(m_train, float(noise), replications, seed=seed,
                                               study=step - 1)
            scale = 1.0 if design == "cone" else 0.3
            grid = scale * n ** (-1.0 / (d + 4)) * np.geomspace(0.08, 4.0, grid_points)
            names = [str(e) for e in estimators]
            sp = _core.monte_carlo_estimates(X, Xe, Ysim, truth, names, bandwidth_grid=grid,
                                             kernel=str(kernel), criterion_points=1)
            si = _core.monte_carlo_estimates(X, Xe, Ysim, truth, names, bandwidth_grid=grid,
                                             kernel=str(kernel))
            for name, p, i in zip(names, sp, si):
                rows.append({"n": n, "estimator": name, "h_point": p["bandwidth"],
                             "mse_point": float(np.ravel(p["mse"])[0]), "h_int": i["bandwidth"],
                             "imse": float(i["integrated_mse"])})
            tick(step)
    table = pd.DataFrame(rows)
    theory = {("nw", "point"): -2 / (d + 2), ("ll", "point"): -4 / (d + 4),
              ("nw", "integrated"): -3 / (d + 3), ("ll", "integrated"): -4 / (d + 4)}
    slopes = []
    for name in estimators:
        t = table[table.estimator == name]
        for target, col in (("point", "mse_point"), ("integrated", "imse")):
            s = np.asarray(_core.loglog_slope(t.n.to_numpy(float), t[col].to_numpy(float))).ravel()
            slopes.append({"estimator": name, "target": target, "slope": s[0], "se": s[1],
                           "theory": theory.get((name, target), np.nan)})
    return {"table": table, "slopes": pd.DataFrame(slopes)}


# ---------------------------------------------------------------------------- bootstrap
@renamed(type="bootstrap", seed="random_state", kind="cov_type")
def bootstrap_bands(estimator, X, replications: int = 999, bootstrap: str = "rademacher",
                    level: float = 0.95, random_state=1, bias_corrected: bool = False,
                    cov_type: str = "HC3", output: int = 0, progress=False):
    """Pointwise and simultaneous (sup-t) bootstrap bands at the rows of ``X``.

    ``bootstrap="rademacher"``/``"mammen"``: wild bootstrap ``y*_i = m(x_i) + e_i v_i`` (the fit is
    linear in y, so no refit); ``"pairs"``: rows resampled and refitted with the same
    bandwidth. Pointwise: basic bootstrap interval; uniform: ``center -+ c se`` with ``c`` the
    ``level``-quantile of ``max_x |m*(x) - m(x)| / se(x)`` (``se`` of ``cov_type``, as
    :func:`diagnose`). The bands are
    variability bands around ``E m(x)`` unless ``bias_corrected`` (wild only), which resamples
    the robust bias-corrected estimator. Reproducible with an int ``random_state``
    (formerly ``seed=``; ``type=`` and ``kind=`` are now ``bootstrap=`` and ``cov_type=``).
    ``progress`` (True,
    "tqdm", "stderr" or a callable ``f(done, total, label)``) reports the replications done, as
    does an enclosing ``with attnreg.show_progress():``.

    Returns a pandas DataFrame (``center, se, low, high, uniform_low, uniform_high``) with the
    critical value in ``df.attrs["critical_value"]`` and the draws in ``df.attrs["draws"]``.
    """
    import pandas as pd

    model = _fitted_core(estimator)
    Xa = estimator._check_X(X)
    with _progress.reporting(progress):
        r = _core.bootstrap_bands(model, Xa, type=str(bootstrap), replications=int(replications),
                                  level=check_level(level),
                                  seed=seed_from_random_state(random_state),
                                  bias_corrected=bool(bias_corrected),
                                  kind=_check_kind(kernel_cov_type(cov_type)),
                                  output=_nonneg_int(output, "output"))
    cols = ["center", "se", "low", "high", "uniform_low", "uniform_high"]
    index = X.index if isinstance(X, (pd.DataFrame, pd.Series)) else None
    df = pd.DataFrame({c: np.asarray(r[c]).ravel() for c in cols}, index=index)
    df.attrs["critical_value"] = float(r["critical_value"])
    df.attrs["draws"] = np.asarray(r["draws"])
    return df


# ---------------------------------------------------------------------------- tests
def _stars(p: float) -> str:
    return "***" if p <= 0.001 else "**" if p <= 0.01 else "*" if p <= 0.05 else \
        "." if p <= 0.1 else ""


_SIGNIF = "Signif. codes:  0 '***' 0.001 '**' 0.01 '*' 0.05 '.' 0.1 ' ' 1"


@dataclass
class SignificanceTestResult:
    """Result of :func:`significance_test`; ``repr`` prints a table like np's ``npsigtest``.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per tested regressor: ``statistic`` (lambda_j) and bootstrap ``p_value``.
    draws : ndarray of shape (replications, n_tested)
        The bootstrap statistics under each null.
    null_scale : ndarray
        The factor ``sqrt(n / df0)`` applied to each null model's residuals.
    replications : int
    bootstrap : str
    """

    table: object
    draws: np.ndarray = field(repr=False)
    null_scale: np.ndarray = field(repr=False)
    replications: int = 0
    bootstrap: str = ""

    def __repr__(self) -> str:
        t = self.table
        w = max(8, max(len(str(v)) for v in t.index))
        lines = [
            "Kernel regression significance test (Racine, Hart & Li 2006)",
            f"Bootstrap under each null: {self.bootstrap}, {self.replications} replications, "
            "bandwidths held fixed",
            "",
            f"{'':{w}}  {'statistic':>11}  {'p-value':>8}",
        ]
        for name, row in t.iterrows():
            lines.append(f"{str(name):{w}}  {row['statistic']:11.4g}  {row['p_value']:8.4g} "
                         f"{_stars(row['p_value'])}")
        lines += ["---", _SIGNIF]
        return "\n".join(lines)

    __str__ = __repr__


@renamed(seed="random_state")
def significance_test(estimator, replications: int = 399, bootstrap: str = "mammen",
                      random_state=1, columns=None, output: int = 0,
                      progress=False) -> SignificanceTestResult:
    """Bootstrap test that the regression does not depend on each regressor (np's ``npsigtest``).

    For a continuous column the statistic is the mean squared marginal effect
    ``(1/n) sum_i (d m(x_i)/d x_j)^2`` (local-linear slope, or the derivative of the
    Nadaraya-Watson ratio); for a categorical column it is
    ``(1/n) sum_i sum_l (m(x_i; x_j = l) - m(x_i; x_j = first level))^2`` (Racine, Hart & Li
    2006). The null distribution is bootstrapped from the kernel regression without the column
    (same bandwidths; the mean when it is the only column), whose residuals are rescaled by
    ``sqrt(n / df0)`` and redrawn iid or wild. Every statistic is a quadratic form in y, so the
    replications are extra outputs of one fit: no refits.

    Parameters
    ----------
    estimator : fitted NadarayaWatson or LocalLinear
    replications : int, default 399
        Bootstrap replications B (at least 19); p-value ``(1 + #{lambda* >= lambda}) / (B + 1)``.
    bootstrap : {"mammen", "rademacher", "iid"}, default "mammen"
        Wild bootstrap (robust to heteroskedasticity) or iid residual resampling (np's default).
    random_state : int, None or numpy Generator, default 1
        Seed of the core's random number generator (formerly ``seed=``): with an int, results
        are reproducible.
    columns : sequence of int or str, optional
        Columns to test (0-based positions or DataFrame column names); default all.
    output : int, default 0
        Output column for multi-output fits.
    progress : bool, {"auto", "tqdm", "stderr"} or callable, default=False
        Report the replications done (all tested columns together) on a tqdm bar or stderr,
        or to ``f(done, total, label)``; an enclosing ``with attnreg.show_progress():`` does
        the same. Ctrl-C interrupts the test with ``KeyboardInterrupt``.

    Returns
    -------
    SignificanceTestResult

    Examples
    --------
    >>> import numpy as np, attnreg
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(200, 2)); y = np.sin(6 * X[:, 0]) + 0.3 * rng.normal(size=200)
    >>> fit = attnreg.LocalLinear(bandwidth=[0.08, 0.3]).fit(X, y)
    >>> res = attnreg.diagnostics.significance_test(fit, replications=99)
    >>> bool(res.table["p_value"].iloc[0] < 0.05)
    True
    """
    import pandas as pd

    model = _fitted_core(estimator)
    names = list(getattr(estimator, "feature_names_in_", [f"x{j + 1}" for j in
                                                          range(estimator.n_features_in_)]))
    names = [str(v) for v in names]
    if columns is None:
        cols = list(range(len(names)))
    else:
        cols = []
        for c in np.atleast_1d(np.asarray(columns, dtype=object)):
            if isinstance(c, str):
                if c not in names:
                    raise ValueError(f"columns: {c!r} is not a column of the fit ({names})")
                cols.append(names.index(c))
            elif isinstance(c, (int, np.integer)) and 0 <= int(c) < len(names):
                cols.append(int(c))
            else:
                raise ValueError(f"columns: {c!r} is not a column position in 0..{len(names) - 1}"
                                 " or a column name")
    if not isinstance(bootstrap, str):
        raise ValueError("bootstrap: use 'mammen', 'rademacher' or 'iid'")
    with _progress.reporting(progress):
        r = _core.significance_test(model, replications=int(replications), bootstrap=bootstrap,
                                    seed=seed_from_random_state(random_state), columns=cols,
                                    output=_nonneg_int(output, "output"))
    table = pd.DataFrame({"statistic": np.asarray(r["statistic"]).ravel(),
                          "p_value": np.asarray(r["p_value"]).ravel()},
                         index=[names[j] for j in r["columns"]])
    return SignificanceTestResult(table=table, draws=np.asarray(r["draws"]),
                                  null_scale=np.asarray(r["null_scale"]).ravel(),
                                  replications=int(r["replications"]),
                                  bootstrap=str(r["bootstrap"]))


@dataclass
class SpecificationTestResult:
    """Result of :func:`specification_test`; ``repr`` reads like np's ``npcmstest``.

    Attributes
    ----------
    statistic : float
        ``J_n``, asymptotically N(0, 1) under a correct parametric model (one-sided test).
    p_value : float
        Wild-bootstrap p-value.
    asymptotic_p_value : float
        ``1 - Phi(J_n)``.
    I_n : float
        The unstandardised statistic ``sum_{i != j} u_i u_j K_ij / (n (n - 1))``.
    bandwidth : ndarray
        Kernel bandwidths (given, or cv_ls of y on X).
    bandwidth_method : str
    coefficients, residuals : ndarray
        The OLS fit of y on the design.
    rank : int
        Numerical rank of the design.
    draws : ndarray
        Bootstrap statistics ``J*_b``.
    reselected : bool
        Whether the bandwidths were selected again on each bootstrap sample.
    """

    statistic: float
    p_value: float
    asymptotic_p_value: float
    I_n: float
    bandwidth: np.ndarray
    bandwidth_method: str
    coefficients: np.ndarray = field(repr=False)
    residuals: np.ndarray = field(repr=False)
    rank: int = 0
    draws: np.ndarray = field(repr=False, default=None)
    replications: int = 0
    bootstrap: str = ""
    reselected: bool = False

    def __repr__(self) -> str:
        bw = ", ".join(f"{b:.4g}" for b in np.atleast_1d(self.bandwidth))
        how = ("re-selected by cv_ls on each bootstrap sample" if self.reselected
               else "held fixed")
        return "\n".join([
            "Consistent model specification test (Hsiao, Li & Racine 2007)",
            "H0: the OLS model is correctly specified (E[y|x] = z(x)'beta)",
            f"Kernel bandwidth(s) ({self.bandwidth_method}): {bw}",
            f"Bootstrap: {self.bootstrap}, {self.replications} replications, bandwidths {how}",
            "",
            f"Jn = {self.statistic:.4g}   bootstrap p-value = {self.p_value:.4g} "
            f"{_stars(self.p_value)}   (asymptotic N(0,1) p-value = "
            f"{self.asymptotic_p_value:.4g})",
            "---",
            _SIGNIF,
        ])

    __str__ = __repr__


@renamed(seed="random_state")
def specification_test(X, y, design=None, var_types: str | None = None, bandwidth=None,
                       kernel: str = "gaussian", degree: int = 0, replications: int = 399,
                       bootstrap: str = "mammen", random_state=1,
                       unordered_kernel: str = "aitchison_aitken",
                       ordered_kernel: str = "li_racine", n_threads: int = 0,
                       reselect_bandwidth: bool | None = None,
                       progress=False) -> SpecificationTestResult:
    """Is the OLS model misspecified? Hsiao, Li & Racine (2007) test, as np's ``npcmstest``.

    With the OLS residuals ``u`` of y on ``design`` and the product kernel ``K_ij`` over the
    regressors ``X`` (continuous and categorical), ``J_n = sqrt(n/(n-1)) S1 / sqrt(2 S2)`` with
    ``S1 = sum_{i != j} u_i u_j K_ij`` and ``S2 = sum_{i != j} u_i^2 u_j^2 K_ij^2``; large values
    reject. The p-value is from the wild bootstrap ``y* = Z beta + u v`` (OLS residuals of y* are
    ``M (u v)``, no refit), which keeps heteroskedasticity. ``J_n`` follows the published
    normalisation (``1/(n(n-1))``); np's ``npcmstest`` scales by ``1/n^2``, so its ``Jn`` is this
    one times ``sqrt((n-1)/n)`` (the bootstrap p-values agree).

    Parameters
    ----------
    X : array-like or pandas.DataFrame of shape (n, q)
        Regressors of the kernel alternative (DataFrame categoricals get categorical kernels).
    y : array-like of shape (n,)
    design : array-like of shape (n, p), optional
        The parametric design ``Z`` including the intercept column. Default: an intercept, the
        continuous columns of X and dummies for each categorical level but the first.
    var_types : str, optional
        One of c/u/o per column of X; inferred from a DataFrame, else all continuous.
    bandwidth : array-like, optional
        Kernel bandwidths; default cv_ls of the kernel regression of y on X of ``degree``
        (as np's ``npcmstest``, which calls ``npregbw``).
    kernel : str, default "gaussian"
    degree : {0, 1}, default 0
        Degree of the bandwidth search (local constant as np's default). A local-linear search
        on data that look linear picks a bandwidth far beyond the data (the kernel is flat and
        the test meaningless): that raises ``ArithmeticError`` naming the fix.
    replications : int, default 399
    bootstrap : {"mammen", "rademacher", "iid"}, default "mammen"
    random_state : int, None or numpy Generator, default 1
        Seed of the bootstrap (formerly ``seed=``).
    unordered_kernel, ordered_kernel : str
    n_threads : int, default 0
    reselect_bandwidth : bool, optional
        With a selected (not given) bandwidth: select it again by cv_ls on every bootstrap
        sample, so that the bootstrap replicates the whole procedure. Holding it fixed (np's
        behaviour, ``False``) ignores that the bandwidth was chosen on the same y and makes the
        test oversized in small samples (about 0.09-0.10 instead of 0.05 at n = 100; see
        ``bench/results/specification_tests.md``). Default (``None``): re-select when
        n <= 500, where it is cheap; hold fixed above.
    progress : bool, {"auto", "tqdm", "stderr"} or callable, default=False
        Report the bootstrap replications done (the bandwidth search first counts as 0), as
        an enclosing ``with attnreg.show_progress():`` does. Ctrl-C interrupts the test.

    Returns
    -------
    SpecificationTestResult

    Examples
    --------
    >>> import numpy as np, attnreg
    >>> rng = np.random.default_rng(1)
    >>> x = rng.uniform(-1, 1, 300); y = 1 + x + x**2 + 0.3 * rng.normal(size=300)
    >>> res = attnreg.diagnostics.specification_test(x[:, None], y, replications=99)
    >>> bool(res.p_value < 0.05)
    True
    """
    Xe, inferred = encode_frame(X)
    Xa = np.asarray(Xe, dtype=np.float64)
    if Xa.ndim == 1:
        Xa = Xa[:, None]
    if Xa.ndim != 2:
        raise ValueError(f"X: expected a 2-D array of regressors, got shape {Xa.shape}")
    vt = resolve_var_types(var_types, inferred, Xa.shape[1])
    ya = np.asarray(y, dtype=np.float64)
    if ya.ndim == 2 and ya.shape[1] == 1:
        ya = ya[:, 0]
    if ya.ndim != 1:
        raise ValueError(f"y: expected a 1-D response, got shape {ya.shape}")
    if design is None:
        Z = _core.default_design(Xa, var_types=vt) if np.all(np.isfinite(Xa)) else Xa
    else:
        Z = np.asarray(design, dtype=np.float64)
        if Z.ndim == 1:
            Z = Z[:, None]
    bw = np.zeros(0) if bandwidth is None else np.atleast_1d(np.asarray(bandwidth, dtype=np.float64))
    if not isinstance(bootstrap, str):
        raise ValueError("bootstrap: use 'mammen', 'rademacher' or 'iid'")
    try:
        with _progress.reporting(progress):
            r = _core.specification_test(Z, ya, Xa, var_types=vt, kernel=str(kernel),
                                         unordered_kernel=str(unordered_kernel),
                                         ordered_kernel=str(ordered_kernel), bandwidth=bw,
                                         degree=int(degree), replications=int(replications),
                                         bootstrap=bootstrap, seed=seed_from_random_state(random_state),
                                         n_threads=int(n_threads),
                                         reselect=-1 if reselect_bandwidth is None
                                         else int(bool(reselect_bandwidth)))
    except ValueError as e:  # the core calls the design Z
        msg = str(e)
        if msg.startswith("Z:") or msg.startswith("Z ("):
            raise ValueError("design" + msg[1:]) from None
        raise
    return SpecificationTestResult(
        statistic=float(r["statistic"]), p_value=float(r["p_value"]),
        asymptotic_p_value=float(r["asymptotic_p_value"]), I_n=float(r["I_n"]),
        bandwidth=np.asarray(r["bandwidth"]).ravel(), bandwidth_method=str(r["bandwidth_method"]),
        coefficients=np.asarray(r["coefficients"]).ravel(),
        residuals=np.asarray(r["residuals"]).ravel(), rank=int(r["rank"]),
        draws=np.asarray(r["draws"]).ravel(), replications=int(r["replications"]),
        bootstrap=str(r["bootstrap"]), reselected=bool(r["reselected"]))


# ---------------------------------------------------------------------------- plotting
def _band_limits(base, fit, bands, margin: float = 0.25):
    """The y range of a band plot: the data (or the fit) with the bands, but no band may widen
    it beyond ``margin`` times the data's range on either side. Returns (lo, hi, clipped) with
    ``clipped`` the names of the bands that leave that range somewhere."""
    base = np.asarray(base, dtype=np.float64)
    base = base[np.isfinite(base)]
    lo0, hi0 = float(base.min()), float(base.max())
    span = hi0 - lo0 or max(abs(hi0), 1.0) * 0.1
    allow_lo, allow_hi = lo0 - margin * span, hi0 + margin * span
    lo, hi = min(lo0, float(np.nanmin(fit))), max(hi0, float(np.nanmax(fit)))
    clipped = []
    for name, (low, high) in bands.items():
        low = np.asarray(low, dtype=np.float64)
        high = np.asarray(high, dtype=np.float64)
        if not (np.isfinite(low).any() and np.isfinite(high).any()):
            continue
        lo = min(lo, max(float(np.nanmin(low)), allow_lo))
        hi = max(hi, min(float(np.nanmax(high)), allow_hi))
        if np.nanmin(low) < allow_lo or np.nanmax(high) > allow_hi:
            clipped.append(name)
    pad = 0.03 * (hi - lo or 1.0)
    return lo - pad, hi + pad, clipped


def _clip_note(artists: dict, clipped) -> None:
    """Say in the legend which bands were clipped to the plot range."""
    for name in clipped:
        a = artists[name]
        a.set_label(f"{a.get_label()}, clipped to the plot range")


@renamed(kind="cov_type")
def plot_bands(estimator, X_grid=None, X=None, y=None, level: float = 0.95,
               cov_type: str = "HC3", ax=None, rbc: bool = True):
    """Plot the fit with conventional and (optionally) RBC pointwise bands (one regressor).

    The y axis spans the data (or the fit) and the bands, but a band that runs far beyond the
    data (an RBC band at a boundary, where its variance explodes) does not set the scale: it is
    clipped to a quarter of the data's range beyond them, and its legend entry says so.
    """
    import matplotlib.pyplot as plt

    _fitted_core(estimator)
    if X_grid is None:
        if X is None:
            raise ValueError("X_grid: give the grid to plot on, or the training X to span")
        xt = np.asarray(X, dtype=np.float64).ravel()
        X_grid = np.linspace(xt.min(), xt.max(), 200)
    g = np.asarray(X_grid, dtype=np.float64).ravel()
    df = diagnose(estimator, g[:, None], level=level, cov_type=cov_type)
    if ax is None:
        _, ax = plt.subplots()
    if X is not None and y is not None:
        ax.scatter(np.asarray(X).ravel(), np.asarray(y).ravel(), s=6, alpha=0.4, color="grey")
    ax.plot(g, df["fit"], color="C0", label="fit")
    artists = {"conventional": ax.fill_between(g, df["ci_low"], df["ci_high"], alpha=0.3,
                                               color="C0", label=f"{level:.0%} conventional")}
    bands = {"conventional": (df["ci_low"], df["ci_high"])}
    if rbc and np.isfinite(df["rbc_low"]).all():
        artists["RBC"] = ax.plot(g, df["rbc_low"], "--", color="C1",
                                 label=f"{level:.0%} robust bias-corrected")[0]
        ax.plot(g, df["rbc_high"], "--", color="C1")
        bands["RBC"] = (df["rbc_low"], df["rbc_high"])
    base = np.asarray(y, dtype=np.float64).ravel() if (X is not None and y is not None) \
        else df["fit"].to_numpy()
    lo, hi, clipped = _band_limits(base, df["fit"], bands)
    ax.set_ylim(lo, hi)
    _clip_note(artists, clipped)
    ax.legend()
    return ax


def plot_tradeoff(table, ax=None):
    """Plot a :func:`tradeoff` table: bias^2, variance, MSE and CV against the bandwidth.

    One panel per estimator, both axes logarithmic, the bandwidths as plain numbers on the x
    axis (at most six labels, no overlap); the y axis is the integrated squared error."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    ests = list(dict.fromkeys(table["estimator"]))
    if ax is None:
        _, ax = plt.subplots(1, len(ests), figsize=(5 * len(ests), 4), squeeze=False,
                             layout="constrained")
        ax = ax[0]
    ax = np.atleast_1d(ax)
    labels = {"bias2": "bias²", "variance": "variance", "mse": "MSE", "cv": "CV (leave-one-out)"}
    for a, e in zip(ax, ests):
        t = table[table.estimator == e].sort_values("bandwidth")
        for k, col in enumerate(("bias2", "variance", "mse", "cv")):
            a.plot(t["bandwidth"], t[col], marker="os^D"[k], ms=4, label=labels[col])
        a.set_xscale("log")
        a.set_yscale("log")
        h = t["bandwidth"].to_numpy(dtype=float)
        decades = np.log10(h.max() / h.min()) if h.min() > 0 else 0.0
        if decades < 2:  # a short log axis: label a few round values, not every minor tick
            a.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0), numticks=6))
        a.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:.3g}"))
        a.xaxis.set_minor_formatter(NullFormatter())
        a.set_xlabel("bandwidth h")
        a.set_ylabel("integrated squared error")
        name = {"local_linear": "local linear", "local_constant": "local constant",
                "ll": "local linear", "lc": "local constant"}.get(str(e), str(e))
        a.set_title(name)
        a.legend(fontsize=8)
    return ax
