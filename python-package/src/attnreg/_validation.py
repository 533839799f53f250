"""Input checks shared by the estimators (messages name the argument and the fix)."""
from __future__ import annotations

import numpy as np


def as_2d_y(y: np.ndarray) -> tuple[np.ndarray, bool]:
    """Return y as an (n, k) float64 array and whether it was 1-D."""
    y = np.asarray(y, dtype=np.float64)
    if y.ndim == 1:
        return y.reshape(-1, 1), True
    if y.ndim == 2:
        return y, False
    raise ValueError(f"y: expected a 1-D or 2-D array, got {y.ndim} dimensions")


def squeeze_outputs(a: np.ndarray, was_1d: bool) -> np.ndarray:
    """Undo as_2d_y on an (m, k) result."""
    return a[:, 0] if was_1d else a


def require_numeric_columns(X, estimator_name: str) -> None:
    """Reject DataFrame columns that are not numbers, naming the column and the fix.

    Least-squares estimators take numeric designs; categorical columns are for the kernel
    estimators (categorical kernels) or need dummy coding first."""
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - pandas is a dependency
        return
    if not isinstance(X, pd.DataFrame):
        return
    for col in X.columns:
        dt = X[col].dtype
        if pd.api.types.is_bool_dtype(dt):
            continue
        if not pd.api.types.is_numeric_dtype(dt):
            kind = "categorical" if isinstance(dt, pd.CategoricalDtype) else f"of dtype {dt}"
            raise ValueError(
                f"X: column {col!r} is {kind}; {estimator_name} needs numeric columns. "
                "Dummy-code it (pandas.get_dummies, or sklearn's OneHotEncoder in a Pipeline), "
                "or use NadarayaWatson / LocalLinear, which give it a categorical kernel"
            )
