"""Marginal effects of a fitted kernel regression, with standard errors and confidence
intervals, as a labelled table (average, at the means, or pointwise)."""
from __future__ import annotations

import numbers

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_is_fitted

from . import _core
from ._validation import numbers_only
from ._deprecation import renamed, renamed_in_errors, seed_from_random_state

__all__ = ["marginal_effects"]


@renamed(n_boot="replications")
@numbers_only("replications", "random_state", "level")
def marginal_effects(model, X=None, kind: str = "average", *, se: str = "asymptotic",
                     replications: int = 399, random_state=0,
                     level: float = 0.95) -> pd.DataFrame:
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
        Confidence level of the normal interval ``estimate +- z * std_error``.

    Returns
    -------
    pandas.DataFrame
        Columns ``estimate``, ``std_error``, ``ci_lower``, ``ci_upper``; indexed by feature
        (average, at_mean) or by (observation, feature) (pointwise).

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
    core_model = model._stats_model()  # the exact model (a binned fit's exact twin)
    if X is None:
        Xc = np.asarray(_core.local_training_x(core_model))
        index = pd.RangeIndex(Xc.shape[0])
    else:
        Xc = model._check_X(X)
        index = X.index if hasattr(X, "index") and hasattr(X, "columns") else \
            pd.RangeIndex(Xc.shape[0])
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
