"""Pointwise inference of a fitted kernel regression: :func:`diagnose` (standard errors, bias,
MSE, conventional and robust bias-corrected intervals) and :func:`bootstrap_bands`.

Public at :mod:`attnreg.diagnostics` (their ``__module__``); kept in this module so that
:mod:`attnreg.plot`, which draws them, and :mod:`attnreg.diagnostics`, which re-exports the plots,
import without a cycle. Formulas and sources: ``core/include/attnreg/inference/diagnostics.hpp``.
"""
from __future__ import annotations

import numpy as np

from . import _core, _progress
from ._deprecation import check_level, kernel_cov_type, renamed, seed_from_random_state
from ._kernel_args import _check_kind, _fitted_core, _nonneg_int

__all__ = ["diagnose", "bootstrap_bands"]


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
             uniform: bool = False, replications: int = 2000, random_state=None,
             uniform_method: str = "auto", critical_value: str = "auto"):
    """Pointwise fit, standard error, bias, MSE and confidence intervals at the rows of ``X``.

    Parameters
    ----------
    estimator : fitted NadarayaWatson or LocalLinear
    X : array-like of shape (m, d)
        Evaluation points.
    level : float, default 0.95
        Confidence level of both intervals, a fraction in (0, 1).
    cov_type : {"HC3", "HC2", "HC1", "HC0", "nonrobust", "CR1", "nn", "local"}, default "HC3"
        Variance estimator (any case; formerly ``kind=``, which still works for one release
        with a ``FutureWarning``): heteroskedasticity-robust with leverage adjustment,
        homoskedastic (``"nonrobust"``, also ``"const"``), cluster-robust CR1 (needs
        ``groups``), or ``"nn"``: nearest-neighbour
        residuals (nprobust's default ``vce = "nn"`` with 3
        neighbours, Calonico, Cattaneo and Farrell 2018, doi:10.1080/01621459.2017.1285776):
        ``sigma_i^2 = J/(J+1) (y_i - mean of y over the J nearest x)^2``, whole tie groups,
        the neighbours sought among the observations inside the evaluation point's kernel
        window, as nprobust's ``lprobust``. With several regressors the neighbours are the
        nearest in Euclidean distance on the continuous columns divided by their bandwidths,
        among the observations with the same categorical values (ties in distance kept
        whole; Abadie and Imbens 2006, Econometrica 74(1)). ``"local"``: the local residual
        variance at each point, ``sigma^2(x) = sum_i w_i r_i^2 / sum_i w_i (1 - H_ii)`` from
        the residuals ``r_i`` of a local polynomial of the pilot's degree (default
        ``max(p + 1, 2)``: a local quadratic with all squares and cross products for local
        constant and local linear fits, so that the window's curvature leaves the residuals)
        at ``x`` with the fit's kernel weights ``w_i`` and local leverages ``H_ii`` (Fan and
        Gijbels 1996, Local Polynomial Modelling and Its Applications, ch. 4); the variance of
        any smoother row ``l(x)`` is then ``sigma^2(x) sum_i l_i(x)^2``, conventional and
        bias-corrected alike. It pools the window's residuals, so it is much less noisy than
        HC0-HC3 in small windows (few rows per bandwidth, several regressors), assuming the
        variance roughly constant over one bandwidth. Its intervals use per-point critical
        values (columns ``crit``, ``crit_bc``): the ``level`` quantile of ``|t|`` under the
        statistic's own null distribution (normal errors with a constant variance in the
        window, the reference Bell and McCaffrey 2002, Survey Methodology 28(2), and Imbens
        and Kolesar 2016, REStat 98(4), take for robust t-statistics), which accounts for the
        few residual degrees of freedom of ``sigma^2(x)`` and for its sharing rows with the
        estimate (``core/include/attnreg/inference/diagnostics.hpp``).
    pilot_bandwidth : float or array-like of shape (d,), optional
        Bandwidth ``b`` of the pilot local polynomial that estimates the derivatives in the
        bias; default the estimator's bandwidth (``rho = h / b = 1`` as nprobust). With several
        columns a vector, one entry per column (categorical entries are the pilot's smoothing
        parameters).
    pilot_degree : int, optional
        Degree ``q`` of the pilot (> the estimator's degree); default ``max(p + 1, 2)``. With
        several columns the pilot is a local quadratic with all squares and cross products
        (``q = 2``; local constant and local linear fits); its window at each point holds at
        least ``max(21, 2 (1 + d + d (d + 1) / 2))`` distinct training rows with weight (all
        of them when fewer): the continuous entries of the pilot vector are multiplied by the
        smallest factor ``>= 1`` that does (nprobust's ``bwcheck``; docs/bandwidth.md).
    groups : array-like of shape (n_train,), optional
        Cluster ids for ``cov_type="CR1"`` (formerly ``cluster=``): integers, or labels (strings, a pandas Categorical)
        that are factorised as ``pandas.factorize`` does. Missing ids and non-integer floats
        raise ``ValueError``.
    output : int, default 0
        Output column for multi-output fits.
    uniform : bool, default False
        Also return uniform (simultaneous over the rows of ``X``) bands ``fit -+ c se`` and
        ``fit_bc -+ c_bc se_bc`` for the conventional and the RBC band (columns
        ``uniform_low, uniform_high, uniform_rbc_low, uniform_rbc_high``; the critical values
        are in ``DataFrame.attrs["crit_uniform"]`` and ``attrs["crit_uniform_rbc"]``, the
        method in ``attrs["uniform_method"]``).
    replications : int, default 2000
        Multiplier draws for ``uniform=True`` (at least 100).
    random_state : int, numpy Generator or None
        Seed of the multiplier draws (results do not depend on the thread count).
    uniform_method : {"auto", "wild_t", "gaussian"}, default "auto"
        How the critical values are drawn. ``"wild_t"``: wild bootstrap-t (Mammen 1993, Ann.
        Statist. 21(1)) of the sup-t statistic: ``y* = fitted + e v`` with Rademacher ``v``
        (one per cluster for ``"CR1"``), residuals re-projected through the fit and the
        standard error recomputed with ``cov_type`` in every draw, so the band accounts for
        the noise of the estimated standard errors. ``"gaussian"``: the quantile of
        ``max |Z_k| / sd_k`` for ``Z ~ N(0, Sigma)``, Sigma the estimated covariance (the
        standard errors treated as known; how binsreg and lpdensity build their bands, and
        the only method before ``"wild_t"`` became the default). ``"auto"``: ``"wild_t"``
        for HC0-HC3 and CR1 (``"gaussian"`` with a ``UserWarning`` where the wild bootstrap's
        refits would not fit in memory: more than 2e8 nonzero hat-matrix weights over the rows
        in the evaluation points' windows, e.g. the Gaussian kernel with more than ~20,000
        distinct training rows), ``"gaussian"`` for ``"nonrobust"``, ``"nn"`` and ``"local"``.
        With robust
        standard errors in small windows the Gaussian band undercovers badly (d = 3, n = 500,
        HC3: 0.70-0.79 at 0.95) and the wild bootstrap-t comes close (0.91-0.93); see
        ``core/README.md`` ("Uniform bands").
    critical_value : {"auto", "normal", "null"}, default "auto"
        Critical values of the pointwise intervals (columns ``crit``, ``crit_bc``).
        ``"normal"``: the normal quantile ``z`` (nprobust's and np's convention). ``"null"``:
        the ``level`` quantile of ``|t|`` under the statistic's own finite-sample null, normal
        errors with a constant variance (the reference distribution of Bell and McCaffrey
        2002, Survey Methodology 28(2), and Imbens and Kolesar 2016, REStat 98(4)), computed
        from the smoother row and the hat matrix, not simulated; for ``"HC0"``-``"HC3"`` and
        ``"local"``. It corrects the intervals for the noise of a robust variance estimated
        from few rows (several regressors, small windows, corners), where ``z`` undercovers;
        it costs ``|S|^2 n`` per point, ``|S|`` the rows the point's smoother weighs
        (``core/include/attnreg/inference/diagnostics.hpp``, robust_null_critical_values).
        ``"auto"``: ``"null"`` for ``"local"``, ``"normal"`` otherwise.

    Returns
    -------
    pandas.DataFrame
        Columns ``fit, se, bias, mse, ci_low, ci_high, rbc_low, rbc_high, fit_bc, se_bc, crit,
        crit_bc``. With
        several columns the bias comes from a pilot local quadratic with all squares and cross
        products (Ruppert and Wand 1994, Ann. Statist. 22(3)) and the RBC interval follows
        Calonico, Cattaneo and Farrell (2018, JASA 113(522)); see ``core/README.md``. A fit
        without continuous columns has NaN bias, MSE and RBC columns and a ``UserWarning``
        (``fit``, ``se`` and the conventional interval are always computed).
        ``mse = bias**2 + se**2``; ``[ci_low, ci_high] = fit -+ crit se``;
        ``[rbc_low, rbc_high] = fit_bc -+ crit_bc se_bc`` with ``fit_bc = fit - bias`` and
        ``se_bc`` its exact variance (the bias estimate is linear in y); ``crit`` and
        ``crit_bc`` are the normal quantile ``z`` unless ``critical_value`` is ``"null"``
        (the default for ``cov_type="local"``).
    """
    import pandas as pd

    model = _fitted_core(estimator)
    Xa = estimator._check_X(X)
    if isinstance(cov_type, str) and cov_type.lower() == "local":
        kind = "local"  # pointwise only: not a cov_type of the other kernel functions
    else:
        kind = _check_kind(kernel_cov_type(cov_type))
    level = check_level(level)
    cluster = groups
    pilot_vec: list[float] = []
    if pilot_bandwidth is None:
        pilot_bandwidth = 0.0
    elif np.ndim(pilot_bandwidth) == 0:
        if not np.isfinite(pilot_bandwidth) or pilot_bandwidth <= 0:
            raise ValueError(f"pilot_bandwidth: must be a positive number, got {pilot_bandwidth!r}")
    else:  # a vector: its length and values are checked by the core (the error names it)
        pv = np.asarray(pilot_bandwidth, dtype=float).ravel()
        pilot_vec, pilot_bandwidth = [float(v) for v in pv], 0.0
    n_rep, seed = 0, 0
    if uniform:
        if isinstance(replications, (bool, np.bool_)) or not isinstance(
                replications, (int, np.integer)) or replications < 100:
            raise ValueError(f"replications: must be an integer >= 100 (e.g. 2000), got "
                             f"{replications!r}")
        n_rep, seed = int(replications), seed_from_random_state(random_state)
    if not isinstance(uniform_method, str) or uniform_method.lower() not in (
            "auto", "wild_t", "gaussian"):
        raise ValueError(f"uniform_method: must be 'auto', 'wild_t' or 'gaussian', got "
                         f"{uniform_method!r}")
    if not isinstance(critical_value, str) or critical_value.lower() not in (
            "auto", "normal", "null"):
        raise ValueError(f"critical_value: must be 'auto', 'normal' or 'null', got "
                         f"{critical_value!r}")
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
        uniform_method=uniform_method.lower(), critical_value=critical_value.lower(),
    )
    if r["bias_note"]:
        import warnings

        warnings.warn(f"diagnose: {r['bias_note']}; those columns are NaN", UserWarning,
                      stacklevel=2)
    cols = ["fit", "se", "bias", "mse", "ci_low", "ci_high", "rbc_low", "rbc_high", "fit_bc",
            "se_bc", "crit", "crit_bc"]
    if uniform:
        cols += ["uniform_low", "uniform_high", "uniform_rbc_low", "uniform_rbc_high"]
    index = X.index if isinstance(X, (pd.DataFrame, pd.Series)) else None
    out = pd.DataFrame({c: np.asarray(r[c]).ravel() for c in cols}, index=index)
    if uniform:
        if r["uniform_note"]:
            import warnings

            warnings.warn(f"diagnose: {r['uniform_note']}", UserWarning, stacklevel=2)
        out.attrs["crit_uniform"] = float(r["crit_uniform"])
        out.attrs["crit_uniform_rbc"] = float(r["crit_uniform_bc"])
        out.attrs["uniform_method"] = str(r["uniform_method"])
    return out


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


for _f in (diagnose, bootstrap_bands):
    _f.__module__ = "attnreg.diagnostics"
del _f
