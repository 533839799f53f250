"""Instrumental-variables regression: 2SLS, LIML and Fuller's k-class, with absorbed fixed
effects, weights and robust or clustered covariances.

``attnreg.iv("y ~ x2 | fe1 + fe2 | x1 ~ z1 + z2", data, cov_type="CR1", groups="fe1")`` (the
formula grammar of fixest and pyfixest: exogenous regressors | fixed effects | endogenous ~
instruments; ``"y ~ x2 | x1 ~ z"`` without fixed effects) and the estimators :class:`IV2SLS`
and :class:`IVLIML` (scikit-learn style, ``fit(X, y, endog=..., instruments=...)``).

Every formula lives in the C++ core (``core/include/attnreg/least_squares/iv.hpp`` states each
with its source): the k-class estimator on the within-transformed data, the covariances of
linearmodels and Stata's ivreg2 (bread (X'(I - k M_Z)X)^{-1}, scores P_Z x_i e_i), the
Cragg-Donald and Kleibergen-Paap first-stage F statistics, Sargan's and Hansen's
overidentification tests and the Wu-Hausman test. docs/iv.md lists where the conventions of
linearmodels, pyfixest/fixest, ivreg2/ivreghdfe and statsmodels differ.

2SLS (and any k-class fit) is linear in y: ``attention_weights(X, endog=...) @ y_train`` equals
``predict(X, endog=...)``; the projection onto the instruments is part of the embedding Omega.
"""
from __future__ import annotations

import math
import warnings

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from . import _core
from ._deprecation import check_level
from ._encoding import float_columns

__all__ = ["IV2SLS", "IVLIML", "WeakInstrumentWarning", "iv"]

_IV_COV_TYPES = ("nonrobust", "HC0", "HC1", "HC2", "HC3", "CR0", "CR1")


class WeakInstrumentWarning(UserWarning):
    """The first-stage F statistic is below the threshold (10 by default: Staiger and Stock
    1997, Econometrica 65(3); Stock and Yogo 2005)."""


def _check_iv_cov_type(cov_type) -> str:
    if isinstance(cov_type, str):
        low = cov_type.lower()
        if low == "cluster":
            return "CR1"
        for c in _IV_COV_TYPES:
            if low == c.lower():
                return c
    raise ValueError(f"cov_type: must be one of {', '.join(_IV_COV_TYPES)} (or 'cluster' = "
                     f"'CR1') for instrumental variables; got {cov_type!r}")


def _block(A, n: int | None, arg: str):
    """A block of columns -> (float64 Fortran (n, k), names). None -> (n, 0)."""
    import pandas as pd

    if A is None:
        if n is None:
            raise ValueError(f"{arg}: is required")
        return np.empty((n, 0), order="F"), []
    a = float_columns(A, arg)  # numbers only: no categorical levels here
    if isinstance(A, pd.DataFrame):
        names = [str(c) for c in A.columns]
    elif isinstance(A, pd.Series):
        names = [str(A.name) if A.name is not None else f"{arg}0"]
    else:
        names = [f"{arg}{j}" for j in range(a.shape[1])]
    if n is not None and a.shape[0] != n:
        raise ValueError(f"{arg}: has {a.shape[0]} rows but y has {n} (one row per observation)")
    return a, names


class IV2SLS(RegressorMixin, BaseEstimator):
    """Two-stage least squares, optionally absorbing fixed effects (as fixest's
    ``feols(y ~ x2 | fe | x1 ~ z)``, linearmodels' ``IV2SLS`` and Stata's ``ivreghdfe``).

    Parameters
    ----------
    fit_intercept : bool, default=True
        Add an intercept (to the regressors and the instruments) when no fixed effects are
        absorbed.
    cov_type : str, default="nonrobust"
        "nonrobust" (s^2 (X'P_Z X)^{-1}, s^2 = e'e / (N - p - df_absorbed)), "HC0"-"HC3"
        (HC1 scales HC0 by N / (N - p - df_absorbed); HC2/HC3 use the leverage of the projected
        design P_Z X plus that of the fixed effects), "CR0" or "CR1" ("cluster"; one or two
        clustering dimensions from ``groups=`` at fit).
    level : float, default=0.95
        Confidence level of ``conf_int`` and ``summary``.
    weak_threshold : float, default=10
        Warn (:class:`WeakInstrumentWarning`) when the first-stage F statistic (Kleibergen-Paap
        under a robust ``cov_type``, Cragg-Donald otherwise) is below it; 0 never warns.
    tol, max_iter : stopping tolerance and step cap of the within transformation (two or more
        absorbed factors), as ``OLS``.
    rank_tol : float, default=1e-7
        A regressor or instrument whose part not explained by the fixed effects and the columns
        before it is below ``rank_tol`` times its norm is an error naming it.

    Attributes
    ----------
    params_ : pandas.Series, coefficients (intercept first when fitted, then the exogenous and the
        endogenous regressors).
    coef_, intercept_ : the coefficients without / of the intercept (0 with fixed effects).
    bse_, tvalues_, pvalues_ : pandas.Series under ``cov_type``.
    first_stage_ : dict with ``table`` (DataFrame per endogenous regressor: partial R^2,
        partial F and its p-value), ``cragg_donald_f``, ``kleibergen_paap_f`` and
        ``kleibergen_paap_rk`` (nan under "nonrobust"), ``df1``, ``df2``.
    overid_ : dict, Sargan (nonrobust) or Hansen J test (statistic, df1, p_value; nan when
        exactly identified).
    wu_hausman_ : dict, the Wu-Hausman F test of exogeneity of the endogenous regressors.
    kappa_, k_ : LIML's kappa (nan for 2SLS) and the k of the k-class estimator used.
    n_obs_, df_resid_, df_absorbed_, rsquared_, rsquared_within_.
    cov_fixed_ : bool, whether the two-way clustered covariance was eigenvalue-fixed (as OLS).

    Examples
    --------
    >>> import numpy as np, attnreg
    >>> rng = np.random.default_rng(0)
    >>> z = rng.normal(size=(500, 2)); u = rng.normal(size=500)
    >>> x = z @ [1.0, 0.5] + u + rng.normal(size=500)
    >>> y = 1 + 2 * x + u
    >>> m = attnreg.IV2SLS().fit(None, y, endog=x, instruments=z)
    >>> round(float(m.params_["endog0"]), 1)
    2.0
    """

    _estimator = "2sls"

    def __init__(self, fit_intercept: bool = True, cov_type: str = "nonrobust",
                 level: float = 0.95, weak_threshold: float = 10.0, tol: float = 1e-10,
                 max_iter: int = 10000, rank_tol: float = 1e-7):
        self.fit_intercept = fit_intercept
        self.cov_type = cov_type
        self.level = level
        self.weak_threshold = weak_threshold
        self.tol = tol
        self.max_iter = max_iter
        self.rank_tol = rank_tol

    def _fuller(self) -> float:
        return 0.0

    # -- fit ------------------------------------------------------------------------------
    def fit(self, X, y, *, endog, instruments, absorb=None, sample_weight=None, groups=None):
        """Fit.

        Parameters
        ----------
        X : array-like of shape (n_samples, p1), DataFrame, or None
            Exogenous regressors (without the intercept).
        y : array-like of shape (n_samples,)
        endog : array-like of shape (n_samples, p2) or Series/DataFrame
            Endogenous regressors.
        instruments : array-like of shape (n_samples, q), q >= p2
            Excluded instruments.
        absorb : array-like of shape (n_samples,) or (n_samples, K), Series or DataFrame
            Fixed-effect factors absorbed by the within transformation (labels of any type).
        sample_weight : array-like of shape (n_samples,), analytic weights >= 0
            Rows of weight 0 are left out of the estimation (their attention weight is 0).
        groups : array-like of shape (n_samples,) or (n_samples, 2)
            Cluster ids for ``cov_type`` "CR0"/"CR1".
        """
        from ._absorb import encode_absorb
        from ._validation import refuse_non_number_params
        from .linear import _cluster_codes, _sample_weight_arg

        refuse_non_number_params(self)
        cov_type = _check_iv_cov_type(self.cov_type)
        check_level(self.level)
        yv = np.asarray(y, dtype=np.float64)
        if yv.ndim == 2 and yv.shape[1] == 1:
            yv = yv[:, 0]
        if yv.ndim != 1:
            raise ValueError(f"y: must be 1-D (one response), got shape {yv.shape}")
        n = yv.shape[0]
        X1, n1 = _block(X, n, "exog")
        X2, n2 = _block(endog, n, "endog")
        Z2, nz = _block(instruments, n, "instruments")
        if X2.shape[1] == 0:
            raise ValueError("endog: needs at least one endogenous regressor (without one, use "
                             "attnreg.OLS)")
        if Z2.shape[1] < X2.shape[1]:
            raise ValueError(
                f"instruments: {Z2.shape[1]} excluded instrument(s) for {X2.shape[1]} endogenous "
                f"regressor(s) ({', '.join(n2)}): the model is not identified; pass at least as "
                "many instruments (exogenous variables excluded from the equation) as endogenous "
                "regressors")
        w = _sample_weight_arg(sample_weight, n)
        codes = None
        self.fe_names_ = None
        self._fe_levels = None
        if absorb is not None:
            codes, names, levels = encode_absorb(absorb, n)
            codes = np.asfortranarray(codes)
            self.fe_names_, self._fe_levels = names, levels
        if groups is not None and cov_type not in ("CR0", "CR1"):
            raise ValueError(f"groups: cluster ids were given but cov_type={self.cov_type!r} is "
                             "not clustered (use cov_type='CR1')")
        if cov_type in ("CR0", "CR1") and groups is None:
            raise ValueError(f"groups: cov_type={self.cov_type!r} needs cluster ids (groups=)")
        self._groups = None if groups is None else _cluster_codes(groups, n)
        model = _core.IVRegression(estimator=self._estimator, fuller=self._fuller(),
                                   fit_intercept=bool(self.fit_intercept), rank_tol=self.rank_tol,
                                   tol=self.tol, max_iter=int(self.max_iter))
        model.fit(X1, X2, Z2, np.ascontiguousarray(yv), codes, w, n1 + n2 + nz)
        self._model = model
        self._y_train = yv
        self.exog_names_, self.endog_names_, self.instrument_names_ = n1, n2, nz
        self.param_names_ = (["Intercept"] if model.has_intercept else []) + n1 + n2
        self.n_features_in_ = X1.shape[1]
        self._set_results(cov_type)
        return self

    def _set_results(self, cov_type):
        import pandas as pd

        m = self._model
        self.cov_type_ = cov_type
        inf = m.inference(cov_type, self._groups)
        from .linear import _note_cov_fix

        _note_cov_fix(self, inf, stacklevel=4)  # sets cov_fixed_ (two-way eigenvalue fix)
        idx = self.param_names_
        est = inf["estimate"][:, 0]
        self.params_ = pd.Series(est, index=idx)
        self.bse_ = pd.Series(inf["std_error"][:, 0], index=idx)
        self.tvalues_ = pd.Series(inf["t_value"][:, 0], index=idx)
        self.pvalues_ = pd.Series(inf["p_value"][:, 0], index=idx)
        self._inf = inf
        icpt = bool(m.has_intercept)
        self.intercept_ = float(est[0]) if icpt else 0.0
        self.coef_ = est[1:] if icpt else est.copy()
        self.kappa_ = float(m.kappa)
        self.k_ = float(m.k)
        self.n_obs_ = int(m.n_obs)
        self.df_resid_ = float(m.df_residual)
        self.df_absorbed_ = float(m.df_absorbed)
        self.rsquared_ = float(m.r_squared())
        self.rsquared_within_ = float(m.r_squared_within())
        fs = m.first_stage(cov_type, self._groups)
        table = pd.DataFrame({"partial_r2": fs["partial_r2"], "partial_f": fs["partial_f"],
                              "p_value": fs["partial_f_pvalue"]}, index=self.endog_names_)
        self.first_stage_ = {
            "table": table, "df1": fs["df1"], "df2": fs["df2"],
            "coef": pd.DataFrame(fs["coef"], index=(["Intercept"] if icpt else [])
                                 + self.exog_names_ + self.instrument_names_,
                                 columns=self.endog_names_),
            "cragg_donald_f": fs["cragg_donald_f"], "kleibergen_paap_f": fs["kleibergen_paap_f"],
            "kleibergen_paap_rk": fs["kleibergen_paap_rk"]}
        self.overid_ = dict(m.overidentification(cov_type, self._groups))
        self.wu_hausman_ = dict(m.wu_hausman())
        robust = cov_type != "nonrobust"
        F = fs["kleibergen_paap_f"] if robust else fs["cragg_donald_f"]
        name = "Kleibergen-Paap rk Wald F" if robust else "Cragg-Donald Wald F"
        if self.weak_threshold and math.isfinite(F) and F < float(self.weak_threshold):
            warnings.warn(
                f"weak instruments: first-stage {name} = {F:.3g} < {self.weak_threshold:g} "
                "(Staiger and Stock 1997; Stock and Yogo 2005): 2SLS is biased towards OLS and its "
                "t tests over-reject; consider LIML (attnreg.IVLIML) or weak-IV robust inference",
                WeakInstrumentWarning, stacklevel=4)

    # -- inference ------------------------------------------------------------------------
    def _cov_groups(self, cov_type):
        ct = self.cov_type_ if cov_type is None else _check_iv_cov_type(cov_type)
        if ct in ("CR0", "CR1") and self._groups is None:
            raise ValueError("cov_type: a clustered covariance needs the groups= given at fit")
        return ct, (self._groups if ct in ("CR0", "CR1") else None)

    def cov_params(self, cov_type=None):
        """Covariance of ``params_`` (DataFrame) under ``cov_type`` (None: the fitted one)."""
        import pandas as pd

        check_is_fitted(self, "params_")
        ct, g = self._cov_groups(cov_type)
        V = self._model.covariance(ct, g)
        return pd.DataFrame(V, index=self.param_names_, columns=self.param_names_)

    def standard_errors(self, cov_type=None):
        """Standard errors of ``params_`` (ndarray) under ``cov_type`` (None: the fitted one)."""
        return np.sqrt(np.diag(self.cov_params(cov_type).to_numpy()))

    def summary(self, cov_type=None, level=None):
        """Coefficient table and header as :class:`attnreg.OLS.summary`, with the first-stage,
        overidentification and Wu-Hausman tests as notes."""
        import pandas as pd

        from ._summary import RegressionSummary, t_quantile

        check_is_fitted(self, "params_")
        lev = check_level(self.level if level is None else level)
        ct, g = self._cov_groups(cov_type)
        inf = self._model.inference(ct, g)
        est, se = inf["estimate"][:, 0], inf["std_error"][:, 0]
        df_t = float(inf["df_inference"])
        q = t_quantile(1 - (1 - lev) / 2, df_t)
        coef = pd.DataFrame({"estimate": est, "std_error": se, "t": inf["t_value"][:, 0],
                             "p_value": inf["p_value"][:, 0], "ci_lower": est - q * se,
                             "ci_upper": est + q * se}, index=self.param_names_)
        header = {"n": self.n_obs_, "df_resid": self.df_resid_,
                  "df_model": len(self.param_names_) - int(self._model.has_intercept),
                  "cov_type": ct, "r_squared": self.rsquared_,
                  "adj_r_squared": float(inf["adj_r_squared"][0]),
                  "sigma": float(inf["sigma"][0]), "df_inference": df_t}
        if inf.get("n_clusters"):
            header["n_clusters"] = ", ".join(str(int(c)) for c in inf["n_clusters"])
        if self.fe_names_ is not None:
            header["fixed_effects"] = list(self.fe_names_)
            header["n_fe_levels"] = [len(lv) for lv in self._fe_levels]
            header["df_absorbed"] = self.df_absorbed_
            header["r_squared_within"] = self.rsquared_within_
        fs = self._model.first_stage(ct, g)
        notes = []
        for name, f, p in zip(self.endog_names_, fs["partial_f"], fs["partial_f_pvalue"]):
            notes.append(f"First stage of {name}: partial F({fs['df1']:g}, {fs['df2']:g}) = "
                         f"{f:.4g} (p = {p:.3g}).")
        notes.append(f"Cragg-Donald Wald F = {fs['cragg_donald_f']:.4g}"
                     + (f"; Kleibergen-Paap rk Wald F = {fs['kleibergen_paap_f']:.4g}"
                        if ct != "nonrobust" else "") + ".")
        ov = self._model.overidentification(ct, g)
        if math.isfinite(ov["statistic"]):
            notes.append(f"{ov['name']} overidentification test: {ov['statistic']:.4g}, "
                         f"chi2({ov['df1']:g}) p = {ov['p_value']:.3g}.")
        wh = self.wu_hausman_
        notes.append(f"Wu-Hausman F({wh['df1']:g}, {wh['df2']:g}) = {wh['statistic']:.4g} "
                     f"(p = {wh['p_value']:.3g}).")
        if self._estimator == "liml":
            notes.append(f"k-class: kappa = {self.kappa_:.6g}, k = {self.k_:.6g}.")
        if self._estimator == "2sls":
            method = "Two-Stage Least Squares"
        else:
            method = f"Fuller({self._fuller():g})" if self._fuller() else "LIML"
        return RegressionSummary(coef, header, alpha=1 - lev, title="IV Regression Results",
                                 dep_var=getattr(self, "_formula_lhs", "y"),
                                 model=type(self).__name__, method=method, notes=notes)

    def conf_int(self, level=None, cov_type=None):
        """Intervals ``b +- t_{(1+level)/2, df} se`` (df: ``df_resid_``, or clusters - 1)."""
        c = self.summary(cov_type, level).coefficients
        return c[["ci_lower", "ci_upper"]].rename(
            columns={"ci_lower": "lower", "ci_upper": "upper"})

    # -- predictions and attention ----------------------------------------------------------
    def _new_rows(self, X, endog, absorb, what):
        from ._absorb import encode_new

        check_is_fitted(self, "params_")
        if endog is None and getattr(self, "_formula_specs", None) is not None:
            X, endog, absorb = self._formula_rows(X)
        if endog is None:
            raise ValueError(f"{what}: endog= (the endogenous regressors of the new rows) is "
                             "required")
        X2, _ = _block(endog, None, "endog")
        m = X2.shape[0]
        X1, _ = _block(X, m, "exog")
        codes = None
        if self.fe_names_ is not None:
            if absorb is None:
                raise ValueError(f"{what}: absorb= (the fixed-effect levels of the new rows) is "
                                 "required: the model absorbed " + ", ".join(self.fe_names_))
            codes = np.asfortranarray(encode_new(absorb, m, self.fe_names_, self._fe_levels))
        elif absorb is not None:
            raise ValueError(f"{what}: the model absorbed no fixed effects; pass absorb=None")
        return X1, X2, codes

    def predict(self, X, endog=None, absorb=None):
        """Predictions x'b (+ the fixed effects of the rows' levels). With a formula-fitted
        model, a data frame with the original variables alone is enough."""
        X1, X2, codes = self._new_rows(X, endog, absorb, "predict")
        return np.asarray(self._model.predict(X1, X2, codes)).reshape(-1)

    def attention_weights(self, X, endog=None, absorb=None):
        """Weights (m, n_train) over the training rows: ``attention_weights(...) @ y_train ==
        predict(...)``. Row of (x, g): p(g)' + (x - X'p(g))' (X'(I - k M_Z)X)^{-1} X'(I - k M_Z)
        on the within-transformed data (core/include/attnreg/least_squares/iv.hpp)."""
        X1, X2, codes = self._new_rows(X, endog, absorb, "attention_weights")
        return self._model.attention_weights(X1, X2, codes)

    def fixed_effects(self) -> dict:
        """Fixed-effect values per factor (pandas Series indexed by level), normalised as
        ``OLS.fixed_effects`` (fixest's fixef references)."""
        import pandas as pd

        check_is_fitted(self, "params_")
        if self.fe_names_ is None:
            raise ValueError("fixed_effects: the model absorbed no fixed effects")
        vals = self._model.fixed_effects()
        return {nm: pd.Series(v[:, 0] if v.ndim == 2 else v, index=lv)
                for nm, v, lv in zip(self.fe_names_, vals, self._fe_levels)}

    def _formula_rows(self, data):
        specs = self._formula_specs
        X = specs["exog"].get_model_matrix(data, na_action="ignore")
        X = X.drop(columns=[c for c in X.columns if c == "Intercept"]).astype(np.float64)
        E = specs["endog"].get_model_matrix(data, na_action="ignore").astype(np.float64)
        fe = data[specs["fe"]] if specs["fe"] else None
        return X, E, fe


class IVLIML(IV2SLS):
    """Limited-information maximum likelihood (Anderson and Rubin 1949) and Fuller's (1977)
    modification, with the options and results of :class:`IV2SLS`.

    Parameters
    ----------
    fuller : float, default=0
        Fuller's alpha: k = kappa - fuller / (N - L - df_absorbed); 0 is LIML, 1 the usual
        choice (as linearmodels' ``IVLIML(fuller=...)`` and ivreg2's ``fuller()``).
    """

    _estimator = "liml"

    def __init__(self, fuller: float = 0.0, fit_intercept: bool = True,
                 cov_type: str = "nonrobust", level: float = 0.95, weak_threshold: float = 10.0,
                 tol: float = 1e-10, max_iter: int = 10000, rank_tol: float = 1e-7):
        super().__init__(fit_intercept=fit_intercept, cov_type=cov_type, level=level,
                         weak_threshold=weak_threshold, tol=tol, max_iter=max_iter,
                         rank_tol=rank_tol)
        self.fuller = fuller

    def _fuller(self) -> float:
        return float(self.fuller)


def iv(formula: str, data, *, estimator: str = "2sls", fuller: float = 0.0, weights=None,
       groups=None, **kwargs) -> IV2SLS:
    """Fit an instrumental-variables regression from a formula.

    ``attnreg.iv("y ~ x2 | fe1 + fe2 | x1 ~ z1 + z2", data)``: exogenous regressors, then the
    absorbed fixed effects (optional), then the endogenous regressors ``~`` the excluded
    instruments, as fixest's and pyfixest's ``feols``. ``"y ~ 1 | x1 ~ z"`` has no exogenous
    regressor besides the intercept.

    Parameters
    ----------
    formula : str
    data : pandas.DataFrame
    estimator : "2sls" or "liml"
    fuller : float, Fuller's alpha (LIML only)
    weights : str or array-like, analytic weights (column name or one value per row)
    groups : str, list of str or array-like, cluster ids for cov_type "CR0"/"CR1"
    **kwargs : passed to :class:`IV2SLS` / :class:`IVLIML` (``cov_type``, ``level``, ...)

    Returns
    -------
    IV2SLS or IVLIML, fitted; ``predict(data)`` and ``attention_weights(data)`` take a data
    frame with the original variables. Rows with a missing value in any variable used are
    dropped (``n_dropped_``).
    """
    from .formula import _check_data, _column_arg, _formulaic, _split_top_level, _subset

    formulaic = _formulaic()
    data = _check_data(data)
    if not isinstance(formula, str):
        raise TypeError(f"formula: must be a string, got {type(formula).__name__}")
    parts = [p.strip() for p in _split_top_level(formula, "|")]
    if len(parts) not in (2, 3) or "~" not in parts[-1]:
        raise ValueError("formula: an IV formula is 'y ~ exog | endog ~ instruments' or 'y ~ exog "
                         "| fe1 + fe2 | endog ~ instruments'")
    main, ivpart = parts[0], parts[-1]
    fe_cols = [t.strip() for t in parts[1].split("+")] if len(parts) == 3 else []
    fe_cols = [t for t in fe_cols if t and t != "0"]
    missing = [c for c in fe_cols if c not in data.columns]
    if missing:
        raise ValueError(f"formula: fixed-effect column(s) {missing} are not in data")
    endog_f, inst_f = (s.strip() for s in _split_top_level(ivpart, "~"))
    if not endog_f or not inst_f:
        raise ValueError("formula: the IV part must be 'endog ~ instruments'")
    w = _column_arg(weights, data, "weights")
    g = _column_arg(groups, data, "groups")

    def matrices(d, na_action):
        mm = formulaic.model_matrix(main, d, na_action=na_action)
        E = formulaic.model_matrix("0 + " + endog_f, d, na_action=na_action)
        Z = formulaic.model_matrix("0 + " + inst_f, d, na_action=na_action)
        return mm, E, Z

    mm, E, Z = matrices(data, "ignore")
    keep = np.ones(len(data), dtype=bool)
    for frame in (mm.lhs, mm.rhs, E, Z):
        keep &= ~np.isnan(np.asarray(frame, dtype=np.float64)).any(axis=1)
    for extra in (w, g, data[fe_cols] if fe_cols else None):
        if extra is not None:
            import pandas as pd
            keep &= ~np.asarray(pd.DataFrame(extra).isna().any(axis=1))
    if not keep.any():
        raise ValueError("data: every row has a missing value in the formula's variables")
    sub = data.loc[keep]
    mm, E, Z = matrices(sub, "raise")
    y = mm.lhs.iloc[:, 0].to_numpy(dtype=np.float64)
    rhs = mm.rhs
    fit_intercept = "Intercept" in rhs.columns
    X = rhs.drop(columns=["Intercept"]) if fit_intercept else rhs
    if estimator == "2sls":
        if fuller:
            raise ValueError("fuller: applies to LIML only (pass estimator='liml')")
        est = IV2SLS(fit_intercept=fit_intercept, **kwargs)
    elif estimator == "liml":
        est = IVLIML(fuller=fuller, fit_intercept=fit_intercept, **kwargs)
    else:
        raise ValueError(f"estimator: must be '2sls' or 'liml', got {estimator!r}")
    fe = None
    if fe_cols:
        fe = sub[fe_cols].iloc[:, 0] if len(fe_cols) == 1 else sub[fe_cols]
    est.fit(X.astype(np.float64), y, endog=E.astype(np.float64), instruments=Z.astype(np.float64),
            absorb=fe, sample_weight=None if w is None else _subset(w, keep).to_numpy(),
            groups=None if g is None else _subset(g, keep))
    est.formula_ = formula
    est.n_dropped_ = int((~keep).sum())
    est._formula_lhs = str(mm.lhs.columns[0])
    est._formula_specs = {"exog": rhs.model_spec, "endog": E.model_spec, "fe": fe_cols}
    return est
