"""Least squares as attention (seed 004): OLS with its attention weights."""
from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from . import _core
from ._validation import as_2d_y, squeeze_outputs


class OLS(RegressorMixin, BaseEstimator):
    """Ordinary least squares solved by column-pivoted QR, with its attention form.

    The prediction at a row x is ``sum_i a_i(x) y_i`` with attention weights
    ``a(x)' = d(x)' (D'D)^{-1} D'`` (seed 004, eqs. 4-8), where ``D`` is the training design
    (with a leading column of ones when ``fit_intercept``). With an intercept every row of
    weights sums to one. ``D'D`` is never formed or inverted.

    Parameters
    ----------
    fit_intercept : bool, default=True
        Add an (unpenalised) intercept column.
    rank_tol : float, default=1e-7
        Relative pivot tolerance of the rank-revealing QR, as R's ``lm``. Columns whose pivot
        falls below it are *aliased*: their coefficient is ``nan`` and they are left out of
        predictions (a ``UserWarning`` says which).
    n_threads : int, default=0
        Threads for the core (0 = OpenMP default).

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,) or (n_targets, n_features)
    intercept_ : float or ndarray of shape (n_targets,)
    coef_se_, intercept_se_ : classical standard errors, same shapes.
    sigma2_ : float or ndarray, residual variance RSS / (n - rank).
    rank_ : int, numerical rank of the design.
    aliased_ : ndarray of bool, one per design column (intercept first).
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

    def __init__(self, fit_intercept: bool = True, rank_tol: float = 1e-7, n_threads: int = 0):
        self.fit_intercept = fit_intercept
        self.rank_tol = rank_tol
        self.n_threads = n_threads

    def fit(self, X, y):
        """Fit on X of shape (n, p) and y of shape (n,) or (n, k). Returns self."""
        X, y = validate_data(self, X, y, multi_output=True, y_numeric=True, dtype=np.float64)
        y2, self._y_1d = as_2d_y(y)
        model = _core.OLS(bool(self.fit_intercept), float(self.rank_tol), int(self.n_threads))
        model.fit(X, y2)
        self._model = model
        coef = model.coefficients()  # (q, k), design order
        se = model.std_errors()
        off = 1 if self.fit_intercept else 0
        self.aliased_ = np.asarray(model.aliased(), dtype=bool)
        self.rank_ = int(model.rank)
        k = coef.shape[1]
        if self._y_1d:
            self.coef_ = coef[off:, 0].copy()
            self.coef_se_ = se[off:, 0].copy()
            self.intercept_ = float(coef[0, 0]) if off else 0.0
            self.intercept_se_ = float(se[0, 0]) if off else float("nan")
            self.sigma2_ = float(model.sigma2()[0])
        else:
            self.coef_ = coef[off:, :].T.copy()
            self.coef_se_ = se[off:, :].T.copy()
            self.intercept_ = coef[0, :].copy() if off else np.zeros(k)
            self.intercept_se_ = se[0, :].copy() if off else np.full(k, np.nan)
            self.sigma2_ = model.sigma2()
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

    def _design_names(self) -> list[str]:
        names = (
            list(self.feature_names_in_)
            if hasattr(self, "feature_names_in_")
            else [f"x{j}" for j in range(self.n_features_in_)]
        )
        return (["(intercept)"] if self.fit_intercept else []) + names

    def _check_X(self, X):
        check_is_fitted(self)
        return validate_data(self, X, reset=False, dtype=np.float64)

    def predict(self, X):
        """Predictions at new rows, shape (m,) or (m, k)."""
        X = self._check_X(X)
        return squeeze_outputs(self._model.predict(X), self._y_1d)

    def attention_weights(self, X) -> np.ndarray:
        """Attention weights A of shape (m, n_train): ``predict(X) == A @ y_train``."""
        X = self._check_X(X)
        return self._model.attention_weights(X)

    def summary(self):
        """Coefficient table (estimate, std_error, t) as a pandas DataFrame (1-D y)."""
        import pandas as pd

        check_is_fitted(self)
        if not self._y_1d:
            raise ValueError("summary: only for a single output; fit one model per column")
        est = np.concatenate(([self.intercept_] if self.fit_intercept else [], self.coef_))
        se = np.concatenate(([self.intercept_se_] if self.fit_intercept else [], self.coef_se_))
        with np.errstate(invalid="ignore", divide="ignore"):
            t = est / se
        return pd.DataFrame({"estimate": est, "std_error": se, "t": t}, index=self._design_names())

    def __getstate__(self):
        return self.__dict__.copy()  # the core model pickles itself (QR state + y)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.single_output = False
        return tags
