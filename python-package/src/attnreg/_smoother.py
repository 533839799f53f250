"""The one base of the linear smoothers of the Python face: the least-squares estimators
(OLS, Ridge, PCR, AttentionRegression) and the kernel regressions (NadarayaWatson, LocalLinear,
LocalPolynomial). Each is linear in the training responses, ``predict(X) ==
attention_weights(X) @ y_train``; this base holds what that makes common: prediction, the
attention weights and the scikit-learn tags. Subclasses provide ``_check_X`` (validation of
new rows), the fitted core model ``_model`` and ``_y_1d`` (whether y was one column).
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, RegressorMixin

from ._validation import squeeze_outputs


class _Smoother(RegressorMixin, BaseEstimator):
    """Shared predict / attention_weights of the linear smoothers."""

    def _weights_model(self):
        """The core model whose attention_weights answer (the fitted one by default)."""
        return self._model

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
        return squeeze_outputs(self._model.predict(X), self._y_1d)

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
        return self._weights_model().attention_weights(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.single_output = False
        return tags
