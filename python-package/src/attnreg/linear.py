"""Least squares as attention (Goulet Coulombe 2025, arXiv:2504.09663): OLS, ridge, PCR and the softmax attention regression.

Every estimator here predicts ``sum_i a_i(x) y_i``; ``attention_weights(X)`` returns the rows
``a(x)`` over the training rows (``predict(X) == attention_weights(X) @ y_train``). For the linear
ones the weights come from an embedding ``Omega`` of the design ``d(x) = [1, x]``:
``a(x)' = d(x)' Omega D'`` with ``Omega = (D'D)^{-1}`` (OLS, Goulet Coulombe 2025, arXiv:2504.09663, eqs. 4-8 and 20-21),
``U_L Lambda_L^{-1} U_L'`` (PCR, eqs. 22-27) or ``(D'D + alpha diag(0, I))^{-1}`` (ridge,
eqs. 29-30), and factorise as ``F_test F_train'`` (``factors``). ``AttentionRegression`` fits
``softmax(X Omega X')`` (eq. 28). Every formula lives in the C++ core; this module adds
scikit-learn plumbing.

Data layout: one observation per row (numpy ``(n, p)`` arrays or pandas DataFrames).
"""
from __future__ import annotations

import numbers
import warnings
from types import SimpleNamespace

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from . import _core
from ._validation import as_2d_y, require_numeric_columns, squeeze_outputs

_COV_TYPES = ("nonrobust", "HC0", "HC1", "HC2", "HC3", "HAC")


class NoResidualDFWarning(UserWarning):
    """An OLS fit with as many observations as estimated coefficients (n == rank): the fit is
    exact, there is no residual variance to estimate, and the standard errors, t statistics and
    p-values are nan (as R's ``summary.lm`` reports)."""


def _warn_no_residual_df(n: int, rank: int) -> None:
    warnings.warn(
        f"OLS: no residual degrees of freedom (n = {n} observations, rank = {rank}): the fit is "
        "exact, so the standard errors, t statistics and p-values are nan; add observations or "
        "remove columns.",
        NoResidualDFWarning,
        stacklevel=3,
    )


def _maxlags_arg(maxlags) -> int:
    if maxlags is None:
        return -1
    if not isinstance(maxlags, numbers.Integral) or maxlags < 0:
        raise ValueError(f"maxlags: must be None (automatic) or an integer >= 0, got {maxlags!r}")
    return int(maxlags)


def _check_cov_type(cov_type: str) -> str:
    for c in _COV_TYPES:
        if isinstance(cov_type, str) and cov_type.lower() == c.lower():
            return c
    raise ValueError(f"cov_type: must be one of {', '.join(_COV_TYPES)}; got {cov_type!r}")


class _AttentionEstimator(RegressorMixin, BaseEstimator):
    """Shared plumbing: validation, output shapes, predict and attention weights."""

    def _validate_fit(self, X, y):
        require_numeric_columns(X, type(self).__name__)
        X, y = validate_data(self, X, y, multi_output=True, y_numeric=True, dtype=np.float64)
        y2, self._y_1d = as_2d_y(y)
        return np.asfortranarray(X), np.asfortranarray(y2)

    def _check_X(self, X):
        check_is_fitted(self)
        require_numeric_columns(X, type(self).__name__)
        return validate_data(self, X, reset=False, dtype=np.float64)

    def _outputs(self, a: np.ndarray) -> np.ndarray:
        """(m, k) core result -> (m,) or (m, k)."""
        return squeeze_outputs(a, self._y_1d)

    def _split_coef(self, coef: np.ndarray, intercept: bool):
        """Design-order (q, k) coefficients -> (coef_, intercept_) in scikit-learn shapes."""
        off = 1 if intercept else 0
        k = coef.shape[1]
        if self._y_1d:
            return coef[off:, 0].copy(), (float(coef[0, 0]) if off else 0.0)
        return coef[off:, :].T.copy(), (coef[0, :].copy() if off else np.zeros(k))

    def predict(self, X: ArrayLike) -> np.ndarray:
        """Predict at new rows.

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (m, n_features)

        Returns
        -------
        ndarray of shape (m,) or (m, n_targets)
        """
        X = self._check_X(X)
        return self._outputs(self._model.predict(X))

    def attention_weights(self, X: ArrayLike) -> np.ndarray:
        """Attention weights of new rows over the training rows.

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (m, n_features)

        Returns
        -------
        ndarray of shape (m, n_train)
            ``A`` with ``predict(X) == A @ y_train``.
        """
        X = self._check_X(X)
        return self._model.attention_weights(X)

    def _design_names(self) -> list[str]:
        names = (
            list(self.feature_names_in_)
            if hasattr(self, "feature_names_in_")
            else [f"x{j}" for j in range(self.n_features_in_)]
        )
        return (["(intercept)"] if self.fit_intercept else []) + names

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.single_output = False
        return tags


class _FactorMixin:
    """factors / embedding / masked weights of the linear members (Goulet Coulombe 2025, arXiv:2504.09663, eqs. 5-7, 35)."""

    def factors(self, X: ArrayLike | None = None) -> np.ndarray:
        """Factors ``F`` with ``factors(X_test) @ factors().T == attention_weights(X_test)``.

        ``factors()`` (no argument) returns ``F_train`` (n_train, c), ``factors(X)`` the factors
        of new rows. For OLS ``F_train' F_train = I`` (eq. 6); for PCR too (with the constant
        factor ``1/sqrt(n)`` first when there is an intercept); for ridge the shrunk version.
        """
        check_is_fitted(self)
        if X is None:
            return self._model.training_factors()
        return self._model.factors(self._check_X(X))

    def embedding(self) -> np.ndarray:
        """Omega (q, q) over the design ``[1, x]`` (intercept first): A = d(X) Omega D'."""
        check_is_fitted(self)
        return self._model.embedding()

    def hat_diagonal(self) -> np.ndarray:
        """Diagonal of the in-sample attention (hat) matrix, shape (n_train,)."""
        check_is_fitted(self)
        return self._model.hat_diagonal()

    def masked_predictions(self, strict: bool = False) -> np.ndarray:
        """Masked (causal) in-sample predictions of Goulet Coulombe 2025, arXiv:2504.09663, eq. 35 for time-ordered rows.

        Row t averages the responses of rows tau <= t (tau < t with ``strict=True``) with the
        in-sample attention weights renormalised to sum to one. Computed from prefix sums in
        O(n r). Rows whose kept weights sum to (numerically) zero are ``nan``. Note the leakage
        Goulet Coulombe 2025, arXiv:2504.09663, section 4.3 describes: the similarities still use the full-sample Omega (see
        :func:`pseudo_out_of_sample`).
        """
        check_is_fitted(self)
        return self._outputs(self._model.masked_predictions(bool(strict)))

    def masked_weights(self, strict: bool = False) -> np.ndarray:
        """The (n_train, n_train) lower-triangular masked, renormalised weights of eq. 35."""
        check_is_fitted(self)
        return self._model.masked_weights(bool(strict))


class OLS(_FactorMixin, _AttentionEstimator):
    """Ordinary least squares solved by column-pivoted QR, with its attention form.

    The prediction at a row x is ``sum_i a_i(x) y_i`` with attention weights
    ``a(x)' = d(x)' (D'D)^{-1} D'`` (Goulet Coulombe 2025, arXiv:2504.09663, eqs. 4-8), where ``D`` is the training design
    (with a leading column of ones when ``fit_intercept``). With an intercept every row of
    weights sums to one. ``D'D`` is never formed or inverted.

    Parameters
    ----------
    fit_intercept : bool, default=True
        Add an (unpenalised) intercept column.
    cov_type : {"nonrobust", "HC0", "HC1", "HC2", "HC3", "HAC"}, default="nonrobust"
        Covariance of the coefficients behind ``coef_se_`` and ``summary()``: classical,
        White's heteroskedasticity-robust HC0-HC3 (as ``sandwich::vcovHC`` and statsmodels), or
        Newey-West HAC with Bartlett weights (as ``sandwich::NeweyWest(prewhite=FALSE)`` and
        statsmodels ``cov_type="HAC"``).
    maxlags : int or None, default=None
        HAC lags, 0 to n - 1; None uses floor(4 (n/100)^(2/9)).
    hac_adjust : bool, default=False
        HAC small-sample factor n/(n - rank) (sandwich's ``adjust=TRUE``, statsmodels'
        ``use_correction``).
    precision : {"auto", "double", "extended"}, default="auto"
        "extended" refactors the design in double-double arithmetic (about 32 digits): the NIST
        StRD Filip and Wampler problems come out to the accuracy the double-rounded data allow.
        "auto" does so when it is cheap or the design is ill-conditioned.
    rank_tol : float, default=1e-7
        Relative pivot tolerance of double-precision factorisations, as R's ``lm``. When the
        design is rank-deficient, columns are taken in order, intercept first, and a column whose
        norm after removing the earlier kept columns falls below ``rank_tol`` times its own norm
        is *aliased*, as ``lm`` does: coefficient ``nan``, left out of predictions (a
        ``UserWarning`` says which). Extended-precision fits use 1e-11.
    n_threads : int, default=0
        Threads for the core (0 = OpenMP default).

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,) or (n_targets, n_features)
    intercept_ : float or ndarray of shape (n_targets,)
    coef_se_, intercept_se_ : standard errors under ``cov_type``, same shapes.
    tvalues_, pvalues_ : t statistics and two-sided p-values (Student t, df_resid_), design order.
    rsquared_, rsquared_adj_ : float or ndarray (centred R^2 with an intercept, as lm).
    sigma2_ : float or ndarray, residual variance RSS / (n - rank).
    df_resid_ : float, n - rank. When it is 0 (as many observations as estimated coefficients)
        the standard errors, t statistics and p-values are nan and fit warns with
        ``NoResidualDFWarning``, as R's ``summary.lm`` does.
    rank_ : int, numerical rank of the design.
    aliased_ : ndarray of bool, one per design column (intercept first).
    extended_precision_ : bool, whether the double-double path produced the fit.
    eigenvalues_ : eigenvalues of D'D (decreasing), the Lambda of eq. 4.
    n_features_in_, feature_names_in_ : as in scikit-learn.

    Examples
    --------
    >>> import numpy as np, attnreg
    >>> X = np.arange(10.0).reshape(-1, 1); y = 2 * X[:, 0] + 1
    >>> m = attnreg.OLS().fit(X, y)
    >>> float(round(m.coef_[0], 6)), float(round(m.intercept_, 6))
    (2.0, 1.0)
    >>> A = m.attention_weights(X[:2]); bool(np.allclose(A.sum(axis=1), 1.0))
    True
    """

    def __init__(
        self,
        fit_intercept: bool = True,
        cov_type: str = "nonrobust",
        maxlags: int | None = None,
        hac_adjust: bool = False,
        precision: str = "auto",
        rank_tol: float = 1e-7,
        n_threads: int = 0,
    ):
        self.fit_intercept = fit_intercept
        self.cov_type = cov_type
        self.maxlags = maxlags
        self.hac_adjust = hac_adjust
        self.precision = precision
        self.rank_tol = rank_tol
        self.n_threads = n_threads

    def _cov_args(self, cov_type=None, maxlags=None, hac_adjust=None):
        ct = _check_cov_type(self.cov_type if cov_type is None else cov_type)
        ml = _maxlags_arg(self.maxlags if maxlags is None else maxlags)
        adj = bool(self.hac_adjust if hac_adjust is None else hac_adjust)
        return ct, ml, adj

    def fit(self, X: ArrayLike, y: ArrayLike):
        """Fit by column-pivoted QR.

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_targets)

        Returns
        -------
        self
        """
        X, y2 = self._validate_fit(X, y)
        cov = self._cov_args()
        model = _core.OLS(
            bool(self.fit_intercept), float(self.rank_tol), int(self.n_threads),
            str(self.precision),
        )
        model.fit(X, y2)
        self._model = model
        inf = model.inference(*cov)
        self.aliased_ = np.asarray(model.aliased(), dtype=bool)
        self.rank_ = int(model.rank)
        self.extended_precision_ = bool(model.extended_precision)
        self.coef_, self.intercept_ = self._split_coef(inf["estimate"], self.fit_intercept)
        self.coef_se_, self.intercept_se_ = self._split_coef(inf["std_error"], self.fit_intercept)
        if not self.fit_intercept:
            self.intercept_se_ = float("nan") if self._y_1d else np.full(y2.shape[1], np.nan)
        one = (lambda a: float(a[0])) if self._y_1d else (lambda a: a.copy())
        self.tvalues_ = inf["t_value"][:, 0].copy() if self._y_1d else inf["t_value"].T.copy()
        self.pvalues_ = inf["p_value"][:, 0].copy() if self._y_1d else inf["p_value"].T.copy()
        self.rsquared_ = one(inf["r_squared"])
        self.rsquared_adj_ = one(inf["adj_r_squared"])
        self.sigma2_ = one(model.sigma2())
        self.df_resid_ = float(inf["df_residual"])
        self.eigenvalues_ = model.eigenvalues()
        if self.df_resid_ == 0:
            _warn_no_residual_df(int(model.n_obs), self.rank_)
        if self.aliased_.any():
            names = self._design_names()
            dropped = [names[j] for j in np.flatnonzero(self.aliased_)]
            warnings.warn(
                f"OLS: the design has rank {self.rank_} < {len(names)} columns; aliased "
                f"(coefficient nan, left out of predictions): {', '.join(dropped)}. "
                "Remove collinear columns to silence this.",
                UserWarning,
                stacklevel=2,
            )
        return self

    def standard_errors(self, cov_type=None, maxlags=None, hac_adjust=None) -> np.ndarray:
        """Standard errors in design order (intercept first) under any covariance type,
        without refitting: shape (q,) or (n_targets, q)."""
        check_is_fitted(self)
        se = self._model.std_errors(*self._cov_args(cov_type, maxlags, hac_adjust))
        return se[:, 0].copy() if self._y_1d else se.T.copy()

    def cov_params(self, cov_type=None, maxlags=None, hac_adjust=None, output: int = 0):
        """Covariance matrix (q, q) of the coefficients of one output, design order."""
        check_is_fitted(self)
        k = 1 if self._y_1d else int(self.coef_.shape[0])
        if (isinstance(output, (bool, np.bool_)) or not isinstance(output, numbers.Integral)
                or not 0 <= output < k):
            raise ValueError(
                f"output: must be an integer in [0, {k - 1}] (the index of a column of y; the model "
                f"has {k} output{'s' if k > 1 else ''}), got {output!r}"
            )
        return self._model.covariance(*self._cov_args(cov_type, maxlags, hac_adjust), int(output))

    def encoder(self) -> np.ndarray:
        """W = U Lambda^{-1/2} (q, rank) with Omega = W W' (Goulet Coulombe 2025, arXiv:2504.09663, eq. 12)."""
        check_is_fitted(self)
        return self._model.encoder()

    def loo_predictions(self) -> np.ndarray:
        """Exact leave-one-out predictions ``y_i - e_i / (1 - h_ii)``; nan where h_ii = 1."""
        check_is_fitted(self)
        return self._outputs(self._model.loo_predictions())

    def summary(self, cov_type=None, maxlags=None, hac_adjust=None, alpha: float = 0.05):
        """Regression summary as statsmodels prints it, returned as data (single output).

        Parameters
        ----------
        cov_type, maxlags, hac_adjust : as the constructor; None uses the fitted model's.
        alpha : float, default=0.05
            Confidence intervals at level ``1 - alpha``.

        Returns
        -------
        RegressionSummary
            ``.coefficients`` (DataFrame: estimate, std_error, t, p_value, ci_lower, ci_upper,
            one row per design column, intercept first) and ``.header`` (n, df_model,
            df_resid, r_squared, adj_r_squared, F, F_pvalue, sigma, cov_type, log_likelihood,
            aic, bic; n_clusters and r_squared_within when present). ``print`` shows the
            fixed-width report. The F statistic is the Wald test that all slopes are zero
            under ``cov_type`` (the classical F under "nonrobust"); AIC and BIC count the
            estimated coefficients, as statsmodels.
        """
        from ._summary import check_alpha, ols_summary

        check_is_fitted(self)
        if not self._y_1d:
            raise ValueError("summary: only for a single output; fit one model per column")
        alpha = check_alpha(alpha)
        inf = self._model.inference(*self._cov_args(cov_type, maxlags, hac_adjust))
        V = self.cov_params(cov_type, maxlags, hac_adjust)
        return ols_summary(self, inf, V, alpha)

    def conf_int(self, alpha: float = 0.05, cov_type=None, maxlags=None, hac_adjust=None):
        """Confidence intervals ``b +- t_{1-alpha/2, df_resid} se`` of the coefficients.

        Returns
        -------
        pandas.DataFrame
            Columns ``lower`` and ``upper``, one row per design column (intercept first).
        """
        c = self.summary(cov_type, maxlags, hac_adjust, alpha=alpha).coefficients
        return c[["ci_lower", "ci_upper"]].rename(columns={"ci_lower": "lower", "ci_upper": "upper"})

    def predict(self, X: ArrayLike, interval: str | None = None, alpha: float = 0.05,
                cov_type=None, maxlags=None, hac_adjust=None):
        """Predict at new rows, optionally with confidence or prediction intervals.

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (m, n_features)
        interval : {None, "confidence", "prediction"}, default=None
            None returns the predictions as an array. "confidence" gives intervals for the
            mean ``d(x)' b +- t se(x)`` with ``se(x)^2 = d(x)' V d(x)`` (``V`` the coefficient
            covariance under ``cov_type``); "prediction" gives intervals for a new observation,
            adding the residual variance: ``se^2 + sigma^2`` (as R's ``predict.lm`` and
            statsmodels' ``get_prediction().summary_frame``). Single output only.
        alpha : float, default=0.05
            Intervals at level ``1 - alpha`` (Student t on ``df_resid_`` degrees of freedom;
            for clustered covariances on the number of clusters less one).
        cov_type, maxlags, hac_adjust : as in ``summary``.

        Returns
        -------
        ndarray of shape (m,) or (m, n_targets) without ``interval``; with it a
        pandas.DataFrame with columns ``fit``, ``se_fit`` (standard error of the mean),
        ``lower``, ``upper`` (index: that of X when it is a DataFrame).
        """
        if interval is None:
            return super().predict(X)
        import pandas as pd

        from ._summary import check_alpha, inference_df, t_quantile

        if interval not in ("confidence", "prediction"):
            raise ValueError(f"interval: must be None, 'confidence' or 'prediction', got {interval!r}")
        alpha = check_alpha(alpha)
        check_is_fitted(self)
        if not self._y_1d:
            raise ValueError("predict: intervals only for a single output; fit one model per column")
        if getattr(self, "fe_names_", None):
            raise ValueError("predict: intervals are not available for a fit with absorbed fixed "
                             "effects (the effects of new rows are not estimated); refit with "
                             "the factors as dummy columns to get them")
        index = X.index if hasattr(X, "index") and hasattr(X, "columns") else None
        Xc = np.asfortranarray(self._check_X(X))
        fit = self._model.predict(Xc)[:, 0]
        V = self.cov_params(cov_type, maxlags, hac_adjust)
        var = _core.ols_prediction_variance(self._model, Xc, np.asfortranarray(V))
        se = np.sqrt(var)
        df = inference_df(self._model.inference(*self._cov_args(cov_type, maxlags, hac_adjust)))
        half = t_quantile(1 - alpha / 2, df) * (
            np.sqrt(var + float(self.sigma2_)) if interval == "prediction" else se)
        return pd.DataFrame({"fit": fit, "se_fit": se, "lower": fit - half, "upper": fit + half},
                            index=index)

    def __getstate__(self):
        return self.__dict__.copy()  # the core model pickles itself (QR state + y)


class Ridge(_FactorMixin, _AttentionEstimator):
    """Ridge regression from one SVD, with its attention form (Goulet Coulombe 2025, arXiv:2504.09663, eqs. 29-30).

    Minimises ``||y - b0 - X b||^2 + alpha ||b||^2``; the intercept is never penalised (X and y
    are centred). With ``Xc = U S V'`` the attention weights are
    ``a(x) = 1/n + (x - x_bar)' V diag(s / (s^2 + alpha)) U'`` and sum to one.

    Parameters
    ----------
    alpha : float or array-like of floats, default=1.0
        Penalty (>= 0; 0 is least squares, minimum-norm when rank-deficient). Given several
        values, the one minimising ``cv`` is chosen in one pass over the rows from one SVD (exact
        leave-one-out, as scikit-learn's RidgeCV) and stored in ``alpha_``.
    fit_intercept : bool, default=True
    cv : {"loo", "gcv", "aicc"}, default="loo"
        Criterion for a grid of alphas: exact leave-one-out mean squared error; generalised
        cross-validation n RSS / (n - tr H)^2; or AICc of Hurvich, Simonoff and Tsai (1998),
        ln(RSS/n) + (1 + tr H / n) / (1 - (tr H + 2) / n) (summed over outputs).
    n_threads : int, default=0

    Attributes
    ----------
    coef_, intercept_ : as scikit-learn's Ridge.
    alpha_ : float, the penalty in use.
    cv_results_ : dict (only for a grid): alphas, loo_mse, gcv, aicc, effective_df, best.
    effective_df_ : float, tr(H) (intercept included).
    singular_values_ : singular values of the centred design.
    """

    def __init__(self, alpha=1.0, fit_intercept: bool = True, cv: str = "loo", n_threads: int = 0):
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.cv = cv
        self.n_threads = n_threads

    def fit(self, X: ArrayLike, y: ArrayLike):
        """Fit the estimator.

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_targets)

        Returns
        -------
        self
        """
        X, y2 = self._validate_fit(X, y)
        alphas = np.atleast_1d(np.asarray(self.alpha, dtype=np.float64)).ravel()
        if alphas.size == 0:
            raise ValueError("alpha: the grid of penalties is empty")
        if self.cv not in ("loo", "gcv", "aicc"):
            raise ValueError(f"cv: must be 'loo', 'gcv' or 'aicc', got {self.cv!r}")
        model = _core.Ridge(float(alphas[0]), bool(self.fit_intercept), int(self.n_threads))
        if alphas.size == 1:
            model.fit(X, y2)
            if hasattr(self, "cv_results_"):
                del self.cv_results_
        else:
            res = model.fit_select(X, y2, alphas, str(self.cv))
            self.cv_results_ = {k: (int(v) if k == "best" else np.asarray(v)) for k, v in res.items()}
        self._model = model
        self.alpha_ = float(model.alpha)
        self.coef_, self.intercept_ = self._split_coef(model.coefficients(), self.fit_intercept)
        self.effective_df_ = float(model.effective_df())
        self.singular_values_ = model.singular_values()
        return self

    def loo_predictions(self) -> np.ndarray:
        """Exact leave-one-out predictions (refitting without row i, intercept included)."""
        check_is_fitted(self)
        return self._outputs(self._model.loo_predictions())

    def coef_path(self, alphas: ArrayLike) -> np.ndarray:
        """Coefficients for each alpha from the stored SVD: (G, q) or (G, n_targets, q), design
        order (intercept first)."""
        check_is_fitted(self)
        a = np.atleast_1d(np.asarray(alphas, dtype=np.float64)).ravel()
        path = self._model.path(a)  # (G, k, q)
        return path[:, 0, :] if self._y_1d else path


class PCR(_FactorMixin, _AttentionEstimator):
    """Principal component regression as rank-L attention (Goulet Coulombe 2025, arXiv:2504.09663, eqs. 22-27).

    OLS on the first ``rank`` principal components of the centred X (the intercept is not
    reduced). Omega_L = U_L Lambda_L^{-1} U_L'; the factors ``F_train = [1/sqrt(n), U_L]`` are
    orthonormal (eq. 24) and predictions are ``F_test F_train' y`` (eq. 25). With ``rank`` equal
    to the number of features it is OLS.

    Parameters
    ----------
    rank : int or None, default=None
        Number of components L; None keeps all (the numerical rank of the centred X).
    fit_intercept : bool, default=True
    n_threads : int, default=0

    Attributes
    ----------
    coef_, intercept_, rank_ (components used), components_ (rank_, n_features) principal
    axes, singular_values_, explained_variance_ratio_.
    """

    def __init__(self, rank: int | None = None, fit_intercept: bool = True, n_threads: int = 0):
        self.rank = rank
        self.fit_intercept = fit_intercept
        self.n_threads = n_threads

    def fit(self, X: ArrayLike, y: ArrayLike):
        """Fit the estimator.

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_targets)

        Returns
        -------
        self
        """
        if self.rank is not None and (not isinstance(self.rank, numbers.Integral) or self.rank < 0):
            raise ValueError(f"rank: must be None or an integer >= 0, got {self.rank!r}")
        X, y2 = self._validate_fit(X, y)
        model = _core.PCR(-1 if self.rank is None else int(self.rank), bool(self.fit_intercept),
                          int(self.n_threads))
        model.fit(X, y2)
        self._model = model
        self.rank_ = int(model.rank)
        self.coef_, self.intercept_ = self._split_coef(model.coefficients(), self.fit_intercept)
        self.singular_values_ = model.singular_values()
        self.components_ = model.principal_axes()[:, : self.rank_].T.copy()
        self.explained_variance_ratio_ = model.explained_variance_ratio()
        return self


class AttentionRegression(_AttentionEstimator):
    """Softmax attention regression (Goulet Coulombe 2025, arXiv:2504.09663, eq. 28).

    Predicts ``yhat(x) = sum_j softmax_j(d(x)' Omega d(x_j)) y_j`` with ``Omega = W W'`` of rank
    ``rank`` over the standardised design ``d = [1, z]``. W minimises the leave-self-out mean
    squared error (the diagonal of the training attention is masked: otherwise each row would
    attend to itself), by L-BFGS with analytic gradients from ``n_starts`` seeded random starts.
    Weights are non-negative and sum to one (a convex combination of training responses).

    Parameters
    ----------
    rank : int, default=2
    fit_intercept : bool, default=True
        Include the constant in d (a learned bias per key).
    standardize : bool, default=True
    n_starts : int, default=4
    max_iter : int, default=300
    tol : float, default=1e-6
        L-BFGS gradient tolerance (relative to max(1, objective)).
    init_scale : float, default=1.0
        Spread of the random starting scores.
    random_state : int, RandomState or None, default=0
    n_threads : int, default=0

    Attributes
    ----------
    objective_ : float, the best leave-self-out MSE.
    start_objectives_ : ndarray, the objective reached from each start.
    n_evals_, n_iter_, converged_ : optimiser diagnostics (n_iter_ and converged_ of the best start).
    """

    def __init__(
        self,
        rank: int = 2,
        fit_intercept: bool = True,
        standardize: bool = True,
        n_starts: int = 4,
        max_iter: int = 300,
        tol: float = 1e-6,
        init_scale: float = 1.0,
        random_state=0,
        n_threads: int = 0,
    ):
        self.rank = rank
        self.fit_intercept = fit_intercept
        self.standardize = standardize
        self.n_starts = n_starts
        self.max_iter = max_iter
        self.tol = tol
        self.init_scale = init_scale
        self.random_state = random_state
        self.n_threads = n_threads

    def fit(self, X: ArrayLike, y: ArrayLike):
        """Fit the estimator.

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_targets)

        Returns
        -------
        self
        """
        X, y2 = self._validate_fit(X, y)
        seed = int(check_random_state(self.random_state).randint(0, 2**31 - 1))
        model = _core.AttentionRegression(
            int(self.rank), bool(self.fit_intercept), bool(self.standardize), int(self.n_starts),
            seed, int(self.max_iter), float(self.tol), float(self.init_scale), int(self.n_threads),
        )
        model.fit(X, y2)
        self._model = model
        self.objective_ = float(model.objective)
        self.start_objectives_ = model.start_objectives()
        self.n_evals_ = int(model.n_evals)
        self.n_iter_ = int(model.iterations)
        self.converged_ = bool(model.converged)
        if not self.converged_:
            warnings.warn(
                f"AttentionRegression: L-BFGS stopped before convergence ({model.message}); "
                "increase max_iter or loosen tol",
                ConvergenceWarning,
                stacklevel=2,
            )
        return self

    def loo_predictions(self) -> np.ndarray:
        """The leave-self-out predictions the objective is built from."""
        check_is_fitted(self)
        return self._outputs(self._model.loo_predictions())

    def embedding(self) -> np.ndarray:
        """Omega over the raw design ``[1, x]``: weights = softmax(d(X) Omega D')."""
        check_is_fitted(self)
        return self._model.embedding()

    def encoder(self) -> np.ndarray:
        """W over the raw design, Omega = W W' (q, rank)."""
        check_is_fitted(self)
        return self._model.encoder()


def pseudo_out_of_sample(X: ArrayLike, y: ArrayLike, alpha: float = 0.0, fit_intercept: bool = True, start=None,
                         keep_weights: bool = False) -> SimpleNamespace:
    """Recursive re-estimation versus masking (Goulet Coulombe 2025, arXiv:2504.09663, section 4.3) on time-ordered rows.

    For every row t from ``start`` on: the honest pseudo-out-of-sample forecast refits OLS
    (``alpha=0``) or ridge on rows < t; the masked forecast applies eq. 35 (strict mask, weights
    renormalised) to the full-sample fit. Masking hides future *responses* but its similarities
    still use the full-sample Omega: the difference is the leakage the paper describes.

    Returns a namespace with rows, y, recursive, masked, in_sample, mse_recursive, mse_masked,
    mse_in_sample, weight_gap (per row, L1 distance between masked and recursive weights) and,
    with ``keep_weights``, weights_recursive / weights_masked (m, n).
    """
    X = np.asfortranarray(np.asarray(X, dtype=np.float64))
    if X.ndim == 1:
        X = X.reshape(-1, 1, order="F")
    y2, one = as_2d_y(y)
    if start is not None and (not isinstance(start, numbers.Integral) or start < 1):
        raise ValueError(f"start: must be None or an integer >= 1, got {start!r}")
    r = _core.pseudo_out_of_sample(X, np.asfortranarray(y2), bool(fit_intercept), float(alpha),
                                   0 if start is None else int(start), bool(keep_weights))
    out = {}
    for k, v in r.items():
        v = np.asarray(v)
        if k == "rows":
            v = v.astype(np.int64)
        elif k in ("y", "recursive", "masked", "in_sample") and one:
            v = v[:, 0]
        elif k.startswith("mse_") and one:
            v = float(v[0])
        out[k] = v
    return SimpleNamespace(**out)
