"""Regression summaries users recognise: a coefficient table with confidence intervals and a
header of fit statistics, printed like statsmodels' ``summary()`` and returned as data.

The numbers follow statsmodels' OLS results (and R's ``summary.lm``): t statistics and p-values
on the residual degrees of freedom (for clustered covariances the number of clusters less one, as
Stata), intervals ``b +- t_{1-alpha/2, df} se``, the regression F as a
Wald test that all slopes are zero under the chosen covariance (the classical F under
``"nonrobust"``), the Gaussian log-likelihood ``-n/2 (log(2 pi RSS/n) + 1)``, and
``AIC = -2 log L + 2 k``, ``BIC = -2 log L + log(n) k`` with ``k`` the number of estimated
coefficients (as statsmodels; R's ``AIC(lm)`` also counts the residual variance, so its values
are larger by 2 and ``log(n)``). The statistics themselves are computed in the C++ core.
"""
from __future__ import annotations

import html
import math
import numbers

import numpy as np

__all__ = ["RegressionSummary"]

_COLUMNS = ("estimate", "std_error", "t", "p_value", "ci_lower", "ci_upper")


def check_alpha(alpha) -> float:
    """alpha: one number strictly between 0 and 1."""
    if (isinstance(alpha, (bool, np.bool_)) or not isinstance(alpha, numbers.Real)
            or not 0.0 < float(alpha) < 1.0):
        raise ValueError(f"alpha: must be a number strictly between 0 and 1 (0.05 gives 95% "
                         f"intervals), got {alpha!r}")
    return float(alpha)


def _num(v, digits: int = 4) -> str:
    """A number for a fixed-width table: fixed point in [1e-4, 1e6), scientific outside."""
    if v is None:
        return ""
    if isinstance(v, (numbers.Integral, np.integer)) and not isinstance(v, (bool, np.bool_)):
        return str(int(v))
    if isinstance(v, str):
        return v
    v = float(v)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    if v == 0.0 or 1e-4 <= abs(v) < 1e6:
        return f"{v:.{digits}f}"
    return f"{v:.{max(digits - 1, 1)}e}"


def _pval(p) -> str:
    p = float(p)
    if math.isnan(p):
        return "nan"
    return "0.000" if p < 5e-4 else f"{p:.3f}"


_HEADER_LABELS = (
    ("n", "No. Observations:"),
    ("df_resid", "Df Residuals:"),
    ("df_model", "Df Model:"),
    ("cov_type", "Covariance Type:"),
    ("n_clusters", "No. Clusters:"),
    ("df_inference", "Df (t, F tests):"),
    ("fixed_effects", "Fixed Effects:"),
    ("df_absorbed", "Df Absorbed (FE):"),
    ("r_squared", "R-squared:"),
    ("adj_r_squared", "Adj. R-squared:"),
    ("r_squared_within", "Within R-squared:"),
    ("F", "F-statistic:"),
    ("F_pvalue", "Prob (F-statistic):"),
    ("sigma", "Residual Std. Err.:"),
    ("log_likelihood", "Log-Likelihood:"),
    ("aic", "AIC:"),
    ("bic", "BIC:"),
)
_LEFT = ("n", "df_resid", "df_model", "cov_type", "n_clusters", "df_inference", "fixed_effects",
         "df_absorbed")


class RegressionSummary:
    """The summary of a fitted regression: coefficient table, header statistics and notes.

    Printing it (``print(s)``, or ``s`` in a notebook, which renders HTML) shows a fixed-width
    report laid out like statsmodels' ``summary()``; the parts are data.

    Attributes
    ----------
    coefficients : pandas.DataFrame
        One row per design column (intercept first), columns ``estimate``, ``std_error``,
        ``t``, ``p_value``, ``ci_lower``, ``ci_upper`` (``1 - alpha`` intervals, Student t on
        the residual degrees of freedom). Aliased columns have nan everywhere.
    header : dict
        ``n``, ``df_model`` (estimated coefficients less the intercept), ``df_resid``,
        ``r_squared``, ``adj_r_squared``, ``F`` and ``F_pvalue`` (Wald test that all slopes are
        zero under ``cov_type``), ``sigma`` (residual standard error), ``cov_type`` (and
        ``maxlags`` for HAC),
        ``log_likelihood``, ``aic``, ``bic``; with clustered standard errors ``n_clusters``;
        with absorbed fixed effects ``r_squared_within``, ``df_absorbed``, ``fixed_effects``
        (names) and ``n_fe_levels``.
    alpha : float
    title, dep_var, model : str
    notes : list of str
    """

    def __init__(self, coefficients, header: dict, *, alpha: float = 0.05,
                 title: str = "OLS Regression Results", dep_var: str = "y",
                 model: str = "OLS", method: str = "Least Squares", notes=()):
        self.coefficients = coefficients
        self.header = dict(header)
        self.alpha = float(alpha)
        self.title = title
        self.dep_var = dep_var
        self.model = model
        self.method = method
        self.notes = list(notes)

    # -- text -------------------------------------------------------------------------------
    def _header_pairs(self):
        left = [("Dep. Variable:", str(self.dep_var)), ("Model:", self.model),
                ("Method:", self.method)]
        right = []
        for key, label in _HEADER_LABELS:
            v = self.header.get(key)
            if v is None:
                continue
            if key == "df_inference" and v == self.header.get("df_resid"):
                continue
            if key == "F_pvalue":
                s = "nan" if math.isnan(float(v)) else f"{float(v):.3g}"
            elif key == "cov_type":
                s = str(v) + (f", {self.header['maxlags']} lags" if "maxlags" in self.header else "")
            elif (key in ("n", "df_resid", "df_model", "df_absorbed", "df_inference")
                  and float(v).is_integer()):
                s = str(int(v))
            elif key == "fixed_effects":
                lv = self.header.get("n_fe_levels") or []
                s = ", ".join(f"{f} ({k})" if i < len(lv) else str(f)
                              for i, (f, k) in enumerate(zip(v, list(lv) + [None] * len(v))))
            elif key == "n_clusters":
                s = " x ".join(str(int(c)) for c in np.atleast_1d(v))
            else:
                s = _num(v, 4 if key not in ("aic", "bic", "log_likelihood") else 3)
            (left if key in _LEFT else right).append((label, s))
        return left, right

    def as_text(self, width: int = 78) -> str:
        """The fixed-width report (what ``print`` shows)."""
        half = (width - 3) // 2
        left, right = self._header_pairs()
        rows = max(len(left), len(right))
        left += [("", "")] * (rows - len(left))
        right += [("", "")] * (rows - len(right))
        out = [self.title.center(width).rstrip(), "=" * width]
        for (l1, v1), (l2, v2) in zip(left, right):
            a = f"{l1}{v1:>{max(half - len(l1), 1)}}" if l1 else " " * half
            b = f"{l2}{v2:>{max(half - len(l2), 1)}}" if l2 else ""
            out.append((a + "   " + b).rstrip())
        out.append("=" * width)
        c = self.coefficients
        names = [str(i) for i in c.index]
        nw = max([len(s) for s in names] + [10])
        lo, hi = self.alpha / 2, 1 - self.alpha / 2
        ci = "ci_lower" in c.columns  # ridge and PCR tables have no intervals
        heads = ["coef", "std err", "t", "P>|t|"] + ([f"[{lo:.3g}", f"{hi:.3g}]"] if ci else [])
        ncol = len(heads)
        cw = max(11, (width - nw) // ncol)
        out.append(" " * nw + "".join(f"{h:>{cw}}" for h in heads))
        out.append("-" * max(width, nw + ncol * cw))
        for name, (_, r) in zip(names, c.iterrows()):
            cells = [_num(r["estimate"]), _num(r["std_error"]), _num(r["t"], 3),
                     _pval(r["p_value"])]
            if ci:
                cells += [_num(r["ci_lower"]), _num(r["ci_upper"])]
            out.append(f"{name:<{nw}}" + "".join(f"{s:>{cw}}" for s in cells))
        out.append("=" * max(width, nw + ncol * cw))
        for i, note in enumerate(self.notes):
            out.append(("Notes:\n" if i == 0 else "") + f"[{i + 1}] {note}")
        return "\n".join(out)

    def __str__(self) -> str:
        return self.as_text()

    def __repr__(self) -> str:
        return self.as_text()

    # -- notebooks --------------------------------------------------------------------------
    def _repr_html_(self) -> str:
        left, right = self._header_pairs()
        rows = max(len(left), len(right))
        left += [("", "")] * (rows - len(left))
        right += [("", "")] * (rows - len(right))
        e = html.escape
        head = "".join(
            f"<tr><th style='text-align:left'>{e(l1)}</th><td>{e(v1)}</td>"
            f"<th style='text-align:left'>{e(l2)}</th><td>{e(v2)}</td></tr>"
            for (l1, v1), (l2, v2) in zip(left, right)
        )
        parts = [f"<div><p><b>{e(self.title)}</b></p><table>{head}</table>",
                 self.coefficients.to_html(float_format=lambda v: _num(v), na_rep="nan")]
        if self.notes:
            parts.append("<p>Notes:<br>" + "<br>".join(
                f"[{i + 1}] {e(n)}" for i, n in enumerate(self.notes)) + "</p>")
        parts.append("</div>")
        return "".join(parts)


def t_quantile(p: float, df: float) -> float:
    """Quantile of Student's t (the normal quantile for df = inf); nan when df <= 0."""
    from . import _core

    return float(_core.student_t_quantile(float(p), float(df)))


def is_cluster(cov_type) -> bool:
    return str(cov_type).upper() in ("CLUSTER", "CR0", "CR1", "CR2", "CR3")


def inference_df(inf) -> float:
    """Degrees of freedom of the t (and F denominator) behind p-values and intervals: the
    residual df, or what the core reports for the covariance (G - 1 for clustered ones)."""
    df = inf.get("df_inference") if hasattr(inf, "get") else None
    return float(inf["df_residual"] if df is None else df)


def fit_weights(core):
    """Observation weights of a weighted core fit, else None."""
    from . import _core

    if isinstance(core, _core.OLS):
        w = _core.ols_fit_weights(core)
    else:
        w = getattr(core, "weights", None)
        if w is None:
            return None
        w = w() if callable(w) else w
    w = np.asarray(w, dtype=np.float64).ravel()
    return w if w.size else None


def leverage_one_note(inf) -> str | None:
    """The note for HC2/HC3 rows of leverage one (the core leaves their 0/0 terms out)."""
    m = int(inf.get("n_leverage_one", 0) or 0)
    if not m:
        return None
    return (f"{m} row{'s' if m != 1 else ''} with leverage 1 (fitted exactly, e.g. by a dummy "
            f"that is 1 on one row) left out of the {inf['cov_type']} covariance: "
            f"{'its' if m == 1 else 'their'} residual is 0 and the term e^2 / (1 - h)^k is 0/0. "
            "The standard error of such a dummy's coefficient leaves out that row's own error "
            "variance, which no other row estimates.")


def ols_summary(model, inf: dict, V: np.ndarray, level: float = 0.95) -> RegressionSummary:
    """Build the RegressionSummary of a fitted single-output attnreg.OLS from the core's
    inference dict ``inf`` and the coefficient covariance ``V`` of the same covariance type;
    intervals at ``level`` (a fraction in (0, 1))."""
    import pandas as pd

    from . import _core
    from ._deprecation import check_level

    level = check_level(level)
    # 1 - level carries the rounding of level (0.050000000000000044 for 0.95); the summary's
    # alpha attribute is the decimal the level stands for, as before.
    alpha = round(1.0 - level, 15)
    names = model._design_names()
    est = inf["estimate"][:, 0]
    se = inf["std_error"][:, 0]
    df_resid = float(inf["df_residual"])
    df_t = inference_df(inf)
    q = t_quantile(1 - (1 - level) / 2, df_t)
    coefficients = pd.DataFrame(
        {"estimate": est, "std_error": se, "t": inf["t_value"][:, 0], "p_value": inf["p_value"][:, 0],
         "ci_lower": est - q * se, "ci_upper": est + q * se},
        index=names,
    )
    core = model._model
    w = fit_weights(core)
    frequency = str(getattr(model, "weight_type", "analytic")) == "frequency"
    e = np.ascontiguousarray(core.residuals()[:, 0])
    notes = []
    n_single = int(getattr(core, "n_singletons", 0) or 0)
    if n_single:  # left out of every statistic (absorbed fits with drop_singletons)
        kept = ~np.asarray(core.singletons(), dtype=bool)
        e = np.ascontiguousarray(e[kept])
        w = None if w is None else w[kept]
        notes.append(f"{n_single} singleton row{'s' if n_single != 1 else ''} (a fixed-effect "
                     "level with one row) left out of the statistics (Correia 2015); "
                     "drop_singletons=False keeps them.")
    if w is None and bool(getattr(core, "weighted", False)):
        # A weighted fit whose weights this build cannot read back: no log-likelihood rather
        # than the unweighted one.
        n = int(core.n_obs) - n_single
        llf = float("nan")
        notes.append("Log-likelihood, AIC and BIC of this weighted fit are not available.")
    elif w is None:
        n = int(core.n_obs) - n_single
        llf = float(_core.gaussian_loglik(e, np.empty(0)))
    else:  # rows of weight 0 do not count (as R's logLik.lm); frequency weights count sum(w) rows
        keep = w > 0
        n = float(w.sum()) if frequency else int(keep.sum())
        llf = float(_core.gaussian_loglik(e[keep], w[keep], frequency))
        if float(n).is_integer():
            n = int(n)
    rank = int(model.rank_)
    df_absorbed = getattr(model, "df_absorbed_", None)
    F = F_p = float("nan")
    absorbed = getattr(model, "fe_names_", None) is not None
    # Slopes: the non-aliased coefficients, less the intercept when the design has one (the
    # design of an absorbed fit has none: the fixed effects hold the constant).
    slopes = np.isfinite(est)
    if model.fit_intercept and not absorbed and slopes.size:
        slopes[0] = False
    df_num = int(slopes.sum())
    df_model = df_num
    if df_num > 0:
        F = float(_core.wald_f_statistic(np.ascontiguousarray(est[slopes]),
                                         np.asfortranarray(np.asarray(V)[np.ix_(slopes, slopes)])))
        if math.isfinite(F) and df_t > 0:
            F_p = float(_core.fisher_f_sf(F, df_num, df_t))
        elif not math.isfinite(F) and inf["cov_type"] != "nonrobust":
            notes.append(f"The {inf['cov_type']} covariance of the slopes is singular, so the "
                         "Wald F test of the regression is not available.")
    k = rank + (int(df_absorbed) if df_absorbed is not None else 0)
    header = {
        "n": n,
        "df_model": float(df_model),
        "df_resid": df_resid,
        "r_squared": float(inf["r_squared"][0]),
        "adj_r_squared": float(inf["adj_r_squared"][0]),
        "F": F,
        "F_pvalue": F_p,
        "sigma": float(inf["sigma"][0]),
        "cov_type": inf["cov_type"],
        "log_likelihood": llf,
        "aic": -2.0 * llf + 2.0 * k,
        "bic": -2.0 * llf + math.log(n) * k,
    }
    if inf["cov_type"] == "HAC":
        header["maxlags"] = int(inf["maxlags"])
    if "df_inference" in inf:  # t / F degrees of freedom when they differ from df_resid
        header["df_inference"] = df_t
    if is_cluster(inf["cov_type"]):
        n_clusters = inf.get("n_clusters")
        if n_clusters is None or len(np.atleast_1d(n_clusters)) == 0:
            n_clusters = getattr(model, "n_clusters_", None)
        if n_clusters is not None:
            nc = [int(c) for c in np.atleast_1d(n_clusters)]
            header["n_clusters"] = nc[0] if len(nc) == 1 else tuple(nc)
    within = getattr(model, "rsquared_within_", None)
    if within is not None:
        header["r_squared_within"] = float(within)
        header["df_absorbed"] = float(df_absorbed) if df_absorbed is not None else None
    if absorbed:
        header["fixed_effects"] = list(model.fe_names_)
        header["n_fe_levels"] = [int(v) for v in getattr(model, "n_fe_levels_", [])]
    if not model.fit_intercept and not absorbed:
        notes.append("R-squared is computed without centering (uncentered) since the model "
                     "does not contain a constant.")
    if model.aliased_.any():
        dropped = [names[j] for j in np.flatnonzero(model.aliased_)]
        notes.append(f"Aliased (coefficient nan, left out of the fit): {', '.join(dropped)}.")
    if df_resid == 0:
        notes.append("No residual degrees of freedom: standard errors, t and p-values are nan.")
    lev_note = leverage_one_note(inf)
    if lev_note:
        notes.append(lev_note)
    dropped = getattr(model, "n_dropped_", 0)
    if dropped:
        notes.append(f"{dropped} row{'s' if dropped != 1 else ''} with missing values dropped.")
    dep = getattr(model, "_formula_lhs", None) or "y"
    return RegressionSummary(coefficients, header, alpha=alpha, dep_var=dep, notes=notes)


def spectral_summary(model, inf: dict) -> RegressionSummary:
    """The RegressionSummary of a fitted single-output attnreg.Ridge or attnreg.PCR from the
    core's inference dict: standard errors of the linear map b = M y around E[b]."""
    import pandas as pd

    names = model._design_names()
    est = inf["estimate"][:, 0]
    se = inf["std_error"][:, 0]
    df_t = inference_df(inf)
    # No interval columns: b +- t se covers E[b], not the coefficients (see the notes).
    coefficients = pd.DataFrame(
        {"estimate": est, "std_error": se, "t": inf["t_value"][:, 0], "p_value": inf["p_value"][:, 0]},
        index=names,
    )
    core = model._model
    n = float(core.n_effective)
    tr_h = float(core.effective_df())
    header = {
        "n": int(n) if n.is_integer() else n,
        "df_model": tr_h - (1.0 if model.fit_intercept else 0.0),
        "df_resid": float(inf["df_residual"]),
        "r_squared": float(inf["r_squared"][0]),
        "adj_r_squared": float(inf["adj_r_squared"][0]),
        "sigma": float(inf["sigma"][0]),
        "cov_type": inf["cov_type"],
        "df_inference": df_t,
    }
    if inf["cov_type"] == "HAC":
        header["maxlags"] = int(inf["maxlags"])
    if is_cluster(inf["cov_type"]) and len(inf.get("n_clusters") or []):
        nc = [int(c) for c in inf["n_clusters"]]
        header["n_clusters"] = nc[0] if len(nc) == 1 else tuple(nc)
    ridge = hasattr(model, "alpha_")
    if ridge:
        title, label = "Ridge Regression Results", f"Ridge (alpha={model.alpha_:.4g})"
        notes = ["Standard errors are those of the ridge estimator around its expectation "
                 "E[b] = M E[y] (b = M y); ridge is biased, so b +- t se would not be a "
                 "confidence interval for the true coefficients (none is shown).",
                 "Df Model is tr(H) less the intercept (effective degrees of freedom); Df "
                 "Residuals is N - tr(H)."]
        if getattr(model, "cv_results_", None) is not None:
            notes.append("alpha was chosen from a grid; the standard errors treat it as fixed.")
    else:
        title, label = "PCR Regression Results", f"PCR ({int(model.rank_)} components)"
        notes = ["Standard errors are those of the estimator around its expectation "
                 "E[b] = M E[y] (b = M y); they describe the coefficients of the components "
                 "kept, which are biased for the full model when the dropped components matter "
                 "(no confidence intervals are shown)."]
    if not model.fit_intercept:
        notes.append("R-squared is computed without centering (uncentered) since the model "
                     "does not contain a constant.")
    dep = getattr(model, "_formula_lhs", None) or "y"
    return RegressionSummary(coefficients, header, title=title, dep_var=dep,
                             model=label, method="Penalized Least Squares" if ridge
                             else "Principal Components", notes=notes)
