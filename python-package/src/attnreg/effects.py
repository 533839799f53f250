"""Marginal effects of a fitted kernel regression, with standard errors and confidence
intervals, as a labelled table (average, at the means, or pointwise)."""
from __future__ import annotations

import numbers

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_is_fitted

from . import _core
from ._validation import numbers_only
from ._deprecation import (check_level, kernel_cov_type, renamed, renamed_in_errors,
                           seed_from_random_state)

__all__ = ["marginal_effects", "level_difference"]


@renamed(n_boot="replications")
@numbers_only("replications", "random_state", "level", "order", "pilot_degree",
              "pilot_bandwidth")
def marginal_effects(model, X=None, kind: str = "average", *, se: str = "asymptotic",
                     replications: int = 399, random_state=0,
                     level: float = 0.95, interval: str = "confidence", cov_type: str = "HC3",
                     order: int = 1, pilot_degree: int | None = None,
                     pilot_bandwidth=None) -> pd.DataFrame:
    """Marginal effects of a fitted :class:`NadarayaWatson` or :class:`LocalLinear` with
    standard errors and normal confidence intervals.

    The effect of a continuous column is ``d m / d x_j`` (Nadaraya-Watson: the analytic
    derivative of the fit; local linear: the local slope); of a categorical column the
    difference between levels as R np's ``npreg`` reports it (unordered: against the first
    level; ordered: against the previous level), see :meth:`NadarayaWatson.gradient`.

    Parameters
    ----------
    model : fitted NadarayaWatson or LocalLinear (single response)
        For an ``approx="binned"`` fit the effects and standard errors are those of the exact
        fit on the same data and bandwidth (built on first use, as ``gradient(...,
        return_se=True)`` does).
    X : array-like or DataFrame, optional
        Rows where the effects are evaluated; default the training rows.
    kind : {"average", "at_mean", "pointwise"}
        ``average``: the average marginal effect over the rows of X. It is linear in the
        responses with the averaged derivative weights ``mean_q g(x_q)``, so its standard error
        ``sqrt(sum_i (mean_q g_i(x_q))^2 e_i^2)`` accounts for the averaging (the rows'
        estimates share observations and are correlated); it is conditional on the regressors
        and the bandwidth. ``at_mean``: the effects at one row holding the column means of X
        (for categorical columns their most frequent level). ``pointwise``: one row per
        (observation, feature).
    se : {"asymptotic", "bootstrap"}
        Linear-smoother (sandwich) variance with the fit's residuals, or the wild bootstrap
        (Mammen 1993) with ``replications`` draws (formerly ``n_boot=``) reproducible from
        ``random_state``.
    level : float
        Confidence level of the normal interval ``estimate +- z * std_error``, a fraction in
        (0, 1).
    interval : {"confidence", "rbc"}
        ``"confidence"``: the normal interval of ``se``. ``"rbc"``: robust bias-corrected
        intervals (Calonico, Cattaneo and Farrell 2018, JASA 113(522)) for the derivatives of
        a local polynomial fit of degree >= 1 (:class:`LocalLinear`, :class:`LocalPolynomial`;
        one or several continuous columns, categorical ones entering through their kernels),
        any ``kind``. The derivative of order ``order`` in each
        continuous column is a local coefficient, linear in y; its bias is estimated from a
        pilot local polynomial of degree ``q`` (all squares and cross products) with the moments
        of the derivative weights, so the bias-corrected estimate is linear in y too and its
        standard error includes the pilot's variability. Default ``q = p + 1`` when ``p -
        order`` is odd and ``p + 2`` when it is even: the slope of a local linear fit has an
        interior bias of the same order from the second and the third derivatives (Fan and
        Gijbels 1996, Thm 3.1), so its pilot is a local cubic with every cross term. With one
        regressor, ``pilot_degree = p + 1`` and nprobust's kernels this is nprobust's
        ``lprobust(deriv=order)`` at fixed ``h`` and ``b`` (``bwcheck=None``). With
        ``kind="average"`` the average over the rows of X (the sample average of the derivative,
        conditional on the regressors, as the conventional average) from the averaged
        conventional and bias-corrected weights; its standard errors use one residual per
        training row, the fit's (and the pilot's) at the row's own point scaled by
        ``cov_type`` (with ``"HC0"`` the conventional one is that of ``interval="confidence"``).
        Categorical columns: :func:`level_difference`. The formulas:
        ``core/include/attnreg/inference/rbc_marginal_effects.hpp``.
    cov_type : {"HC3", "HC2", "HC1", "HC0", "nn"}
        With ``interval="rbc"``: the variance, as nprobust's ``lprobust`` computes it at each
        point from the residuals of the local fit (and of the pilot, for the bias-corrected
        estimate) in the point's kernel window; ``"nn"``: nearest-neighbour residuals (one
        continuous regressor).
    order : int
        With ``interval="rbc"``: the derivative order, 1 <= order <= degree.
    pilot_degree : int, optional
        With ``interval="rbc"``: the pilot's degree ``q`` (> the fit's degree).
    pilot_bandwidth : float or array-like of shape (n_features,), optional
        With ``interval="rbc"``: the pilot's bandwidth ``b`` (default the fit's, ``h / b = 1``
        as nprobust); with several columns one entry per column (categorical entries the
        pilot's smoothing parameters).

    Returns
    -------
    pandas.DataFrame
        Columns ``estimate``, ``std_error``, ``ci_lower``, ``ci_upper``; indexed by feature
        (average, at_mean) or by (observation, feature) (pointwise). With ``interval="rbc"``
        the continuous features only, and also ``bias``, ``estimate_bc``
        (``estimate - bias``), ``std_error_bc``, ``rbc_lower``, ``rbc_upper``
        (``estimate_bc -+ z std_error_bc``).

    Examples
    --------
    >>> import numpy as np, attnreg
    >>> rng = np.random.default_rng(0); X = rng.uniform(size=(200, 1))
    >>> y = 2 * X[:, 0] + rng.normal(0, 0.1, 200)
    >>> m = attnreg.LocalLinear(bandwidth=0.2).fit(X, y)
    >>> t = attnreg.marginal_effects(m)
    >>> bool(abs(t.loc["x0", "estimate"] - 2) < 0.1)
    True
    """
    check_is_fitted(model)
    kernel_cov_type(cov_type)  # a bad value is an error with either interval
    if interval == "rbc":
        return _rbc_effects(model, X, kind, se, level, cov_type, order, pilot_degree,
                            pilot_bandwidth)
    if interval != "confidence":
        raise ValueError(f"interval: must be 'confidence' or 'rbc', got {interval!r}")
    if not hasattr(model, "_model") or getattr(model, "_degree", None) not in (0, 1):
        raise ValueError("model: needs a fitted attnreg.NadarayaWatson or attnreg.LocalLinear")
    if not model._y_1d:
        raise ValueError("model: marginal effects need a single response; fit one model per "
                         "output")
    kinds = ("average", "at_mean", "pointwise")
    if kind not in kinds:
        raise ValueError(f"kind: {kind!r} is not one of {', '.join(map(repr, kinds))}")
    if not (isinstance(level, numbers.Real) and 0 < level < 1):
        raise ValueError(f"level: must be in (0, 1), got {level!r}")
    if not isinstance(replications, numbers.Integral):
        raise ValueError(f"replications: must be an integer >= 2, got {replications!r}")
    seed = seed_from_random_state(random_state)
    names = getattr(model, "feature_names_in_", None)
    core_model, Xc, index = _evaluation_rows(model, X)
    d = Xc.shape[1]
    names = [str(c) for c in names] if names is not None else [f"x{j}" for j in range(d)]
    if kind == "at_mean":
        row = Xc.mean(axis=0)
        vt = model.var_types_
        for j in range(d):
            if vt[j] != "c":
                vals, counts = np.unique(Xc[:, j], return_counts=True)
                row[j] = vals[np.argmax(counts)]
        Xc = row.reshape(1, -1)
    with renamed_in_errors(n_boot="replications"):
        r = _core.local_gradient(core_model, np.ascontiguousarray(Xc), str(se),
                                 int(replications), seed, kind == "average", int(model.n_threads))
    z = _core.normal_quantile(0.5 + level / 2)
    if kind == "average":
        est = np.asarray(r["average"]).ravel()
        sd = np.asarray(r["average_se"]).ravel()
        idx = pd.Index(names, name="feature")
    elif kind == "at_mean":
        est = np.asarray(r["gradient"])[0]
        sd = np.asarray(r["se"])[0]
        idx = pd.Index(names, name="feature")
    else:
        est = np.asarray(r["gradient"]).ravel()
        sd = np.asarray(r["se"]).ravel()
        idx = pd.MultiIndex.from_product([index, names], names=["observation", "feature"])
    return pd.DataFrame({"estimate": est, "std_error": sd, "ci_lower": est - z * sd,
                         "ci_upper": est + z * sd}, index=idx)


def _evaluation_rows(model, X):
    """The exact core model (a binned fit's exact twin), the evaluation rows (the training rows
    when X is None) and their index."""
    core_model = model._stats_model()
    if X is None:
        Xc = np.asarray(_core.local_training_x(core_model))
        return core_model, Xc, pd.RangeIndex(Xc.shape[0])
    Xc = model._check_X(X)
    index = X.index if hasattr(X, "index") and hasattr(X, "columns") else \
        pd.RangeIndex(Xc.shape[0])
    return core_model, Xc, index


def _rbc_effects(model, X, kind, se, level, cov_type, order, pilot_degree, pilot_bandwidth):
    """marginal_effects(..., interval="rbc"): the core's rbc_gradient as a table."""
    if not hasattr(model, "_model") or getattr(model, "_degree", None) is None:
        raise ValueError("model: needs a fitted attnreg.LocalLinear or attnreg.LocalPolynomial")
    if model._degree < 1:
        raise ValueError("model: RBC intervals for marginal effects need a local polynomial of "
                         "degree >= 1 (LocalLinear or LocalPolynomial); the derivative of a "
                         "NadarayaWatson fit is not a local coefficient")
    if kind not in ("average", "pointwise", "at_mean"):
        raise ValueError(f"kind: {kind!r} is not one of 'average', 'at_mean', 'pointwise'")
    if se != "asymptotic":
        raise ValueError(f"se: interval='rbc' uses the variance of cov_type, not se={se!r}; "
                         "leave se at its default")
    level = check_level(level)
    kind_core = kernel_cov_type(cov_type)
    if isinstance(order, bool) or not isinstance(order, numbers.Integral):
        raise ValueError(f"order: must be an integer between 1 and the degree, got {order!r}")
    _check_pilot_degree(pilot_degree)
    core_model, Xc, index = _evaluation_rows(model, X)
    d = Xc.shape[1]
    pv = _pilot_bandwidths(pilot_bandwidth, d)
    names = getattr(model, "feature_names_in_", None)
    names = [str(c) for c in names] if names is not None else [f"x{j}" for j in range(d)]
    if kind == "at_mean":
        row = Xc.mean(axis=0)
        for j, t in enumerate(model.var_types_):
            if t != "c":
                vals, counts = np.unique(Xc[:, j], return_counts=True)
                row[j] = vals[np.argmax(counts)]
        Xc = row.reshape(1, -1)
    fn = _core.rbc_average_gradient if kind == "average" else _core.rbc_gradient
    r = fn(core_model, np.ascontiguousarray(Xc), kind=kind_core, level=float(level),
           order=int(order), pilot_degree=-1 if pilot_degree is None else int(pilot_degree),
           pilot_bandwidths=pv)
    feats = [names[c] for c in r["columns"]]
    if kind in ("at_mean", "average"):
        idx = pd.Index(feats, name="feature")
    else:
        idx = pd.MultiIndex.from_product([index, feats], names=["observation", "feature"])
    return _rbc_table(r, idx)


def _check_pilot_degree(pilot_degree):
    if pilot_degree is not None and (isinstance(pilot_degree, bool)
                                     or not isinstance(pilot_degree, numbers.Integral)):
        raise ValueError(f"pilot_degree: must be an integer, got {pilot_degree!r}")


def _pilot_bandwidths(pilot_bandwidth, d):
    """pilot_bandwidth as the core's list (empty: the fit's bandwidths)."""
    if pilot_bandwidth is None:
        return []
    arr = np.asarray(pilot_bandwidth, dtype=float).ravel()
    if arr.size == 1 and d > 1:
        raise ValueError(f"pilot_bandwidth: needs one value per column of X ({d}), got 1")
    if not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise ValueError(f"pilot_bandwidth: must be positive and finite, got "
                         f"{pilot_bandwidth!r}")
    return [float(v) for v in arr]


def _rbc_table(r, idx):
    """The core's RBC result as the table of marginal_effects(interval="rbc")."""
    col = {k: np.asarray(r[k]).ravel() for k in ("estimate", "se", "bias", "estimate_bc",
                                                 "se_bc")}
    z = float(r["z"])
    out = pd.DataFrame({
        "estimate": col["estimate"], "std_error": col["se"],
        "ci_lower": col["estimate"] - z * col["se"], "ci_upper": col["estimate"] + z * col["se"],
        "bias": col["bias"], "estimate_bc": col["estimate_bc"], "std_error_bc": col["se_bc"],
        "rbc_lower": col["estimate_bc"] - z * col["se_bc"],
        "rbc_upper": col["estimate_bc"] + z * col["se_bc"]}, index=idx)
    out.attrs["pilot_degree"] = int(r["pilot_degree"])
    return out


@numbers_only("level", "pilot_degree", "pilot_bandwidth")
def level_difference(model, column, levels, X=None, kind: str = "average", *,
                     interval: str = "rbc", cov_type: str = "HC3", level: float = 0.95,
                     pilot_degree: int | None = None, pilot_bandwidth=None) -> pd.DataFrame:
    """The difference of the fit between two levels of a categorical column,
    ``m(x with x_column = b) - m(x with x_column = a)`` at the other coordinates of each row of
    X, pointwise or averaged over the rows, with conventional and robust bias-corrected (RBC)
    intervals.

    Each fit of the level is a local coefficient (the intercept of the local polynomial of the
    model's degree, categorical columns entering through their kernels), linear in y; its bias
    is estimated from a pilot local polynomial of degree ``q`` in the continuous columns (default
    ``p + 1`` for an odd degree ``p``, ``p + 2`` for an even one, Fan and Gijbels 1996, Thm 3.1
    with ``v = 0``), so the difference and its bias-corrected form are linear smoothers too
    (Calonico, Cattaneo and Farrell 2018, JASA 113(522)). The standard errors use one residual
    per training row: that of the fit (for the bias-corrected estimate: of the pilot) at the
    row's own point, scaled by ``cov_type``. ``kind="average"`` estimates the sample average of
    the difference over the rows of X (conditional on the regressors), with the averaged
    weights. Formulas: ``core/include/attnreg/inference/rbc_marginal_effects.hpp``.

    Parameters
    ----------
    model : fitted NadarayaWatson, LocalLinear or LocalPolynomial (single response, no ridge)
        With at least one continuous column.
    column : int or str
        The categorical column (position or feature name).
    levels : pair (a, b)
        The levels compared, as they appear in the training data (for a pandas categorical
        column its categories, otherwise the numeric values); the result is ``m(b) - m(a)``.
    X : array-like or DataFrame, optional
        Rows whose other coordinates are used; default the training rows.
    kind : {"average", "pointwise"}
    interval : {"rbc", "confidence"}
        ``"rbc"``: also the bias, the bias-corrected estimate and its interval; ``"confidence"``:
        the conventional columns only.
    cov_type : {"HC3", "HC2", "HC1", "HC0"}
    level : float
        Confidence level, a fraction in (0, 1).
    pilot_degree : int, optional
    pilot_bandwidth : float or array-like of shape (n_features,), optional
        The pilot's degree and bandwidths (default the fit's bandwidths).

    Returns
    -------
    pandas.DataFrame
        Columns as :func:`marginal_effects` with ``interval="rbc"``; one row (``average``) or
        one per row of X.

    Examples
    --------
    >>> import numpy as np, attnreg
    >>> rng = np.random.default_rng(0); n = 400
    >>> X = np.column_stack([rng.uniform(size=n), rng.integers(0, 2, n)])
    >>> y = np.sin(3 * X[:, 0]) + 0.5 * X[:, 1] + rng.normal(0, 0.1, n)
    >>> m = attnreg.LocalLinear(bandwidth=[0.2, 0.05], var_types="cu").fit(X, y)
    >>> t = attnreg.level_difference(m, 1, (0, 1))
    >>> bool(abs(t["estimate_bc"].iloc[0] - 0.5) < 0.1)
    True
    """
    check_is_fitted(model)
    if not hasattr(model, "_model") or getattr(model, "_degree", None) is None:
        raise ValueError("model: needs a fitted attnreg.NadarayaWatson, LocalLinear or "
                         "LocalPolynomial")
    if not model._y_1d:
        raise ValueError("model: level differences need a single response; fit one model per "
                         "output")
    if kind not in ("average", "pointwise"):
        raise ValueError(f"kind: {kind!r} is not one of 'average', 'pointwise'")
    if interval not in ("rbc", "confidence"):
        raise ValueError(f"interval: must be 'rbc' or 'confidence', got {interval!r}")
    level = check_level(level)
    kind_core = kernel_cov_type(cov_type)
    _check_pilot_degree(pilot_degree)
    core_model, Xc, index = _evaluation_rows(model, X)
    d = Xc.shape[1]
    names = getattr(model, "feature_names_in_", None)
    names = [str(c) for c in names] if names is not None else [f"x{j}" for j in range(d)]
    if isinstance(column, str):
        if column not in names:
            raise ValueError(f"column: {column!r} is not a feature (features: {names})")
        j = names.index(column)
    elif isinstance(column, numbers.Integral) and not isinstance(column, bool):
        if not 0 <= column < d:
            raise ValueError(f"column: must be between 0 and {d - 1}, got {column!r}")
        j = int(column)
    else:
        raise ValueError(f"column: a feature name or position, got {column!r}")
    if model.var_types_[j] == "c":
        raise ValueError(f"column: {names[j]!r} is continuous; level differences are for "
                         "categorical columns (var_types 'u' or 'o'); use marginal_effects "
                         "for a continuous column")
    if isinstance(levels, str) or not hasattr(levels, "__len__") or len(levels) != 2:
        raise ValueError(f"levels: a pair (a, b) of levels of {names[j]!r}, got {levels!r}")
    cats = getattr(model, "_categories", {}).get(names[j])
    codes = []
    for lv in levels:
        if cats is not None:
            cl = list(cats)
            if lv not in cl:
                raise ValueError(f"levels: {lv!r} is not a level of {names[j]!r} (levels: "
                                 f"{cl[:10]})")
            codes.append(float(cl.index(lv)))
        else:
            if isinstance(lv, bool) or not isinstance(lv, numbers.Real):
                raise ValueError(f"levels: {lv!r} is not a level of {names[j]!r} (a number "
                                 "as in the training data)")
            codes.append(float(lv))
    pv = _pilot_bandwidths(pilot_bandwidth, d)
    r = _core.rbc_level_difference(
        core_model, np.ascontiguousarray(Xc), j, codes[0], codes[1],
        average=kind == "average", kind=kind_core, level=float(level),
        pilot_degree=-1 if pilot_degree is None else int(pilot_degree), pilot_bandwidths=pv)
    label = f"{names[j]}: {levels[1]!r} - {levels[0]!r}"
    if kind == "average":
        idx = pd.Index([label], name="contrast")
    else:
        idx = pd.MultiIndex.from_product([index, [label]], names=["observation", "contrast"])
    out = _rbc_table(r, idx)
    if interval == "confidence":
        out = out[["estimate", "std_error", "ci_lower", "ci_upper"]]
    return out
