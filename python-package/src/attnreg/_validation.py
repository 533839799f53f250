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


def column_names(X) -> list[str] | None:
    """The column names of a DataFrame (a named Series is one column), as strings; None for
    arrays."""
    cols = getattr(X, "columns", None)
    if cols is not None and getattr(X, "ndim", 2) == 2:
        return [str(c) for c in cols]
    name = getattr(X, "name", None)
    if name is not None and getattr(X, "ndim", 0) == 1 and hasattr(X, "index"):
        return [str(name)]
    return None


def check_column_names(fitted: list[str] | None, X, arg: str, estimator: str,
                       warn_unnamed: bool = True) -> None:
    """The one rule for column names at prediction, scikit-learn's (``validate_data(...,
    reset=False)``, which the regressors apply): columns are taken by position, so a DataFrame
    must carry the fitted names in the fitted order; a renamed, missing, extra or reordered
    column is an error that names ``arg`` and the fix. An array (no names) is taken as it is,
    with scikit-learn's warning when fit saw names (``warn_unnamed``; responses, which
    scikit-learn does not name, pass False)."""
    names = column_names(X)
    if fitted is None or names is None:
        if warn_unnamed and fitted is not None and names is None and np.ndim(X) >= 1:
            import warnings

            warnings.warn(
                f"{arg} does not have valid feature names, but {estimator} was fitted with "
                f"feature names; its columns are taken in fit's order {list(fitted)}",
                UserWarning, stacklevel=3)
        return
    fitted = [str(c) for c in fitted]
    if names == fitted:
        return
    unseen = [c for c in names if c not in fitted]
    missing = [c for c in fitted if c not in names]
    if not unseen and not missing and len(names) == len(fitted):
        raise ValueError(
            f"{arg}: the columns are {names}, in another order than in fit ({fitted}); "
            f"{estimator} takes columns by position: pass {arg}[{fitted}]")
    parts = []
    if unseen:
        parts.append(f"column(s) {unseen} not seen in fit")
    if missing:
        parts.append(f"fit's column(s) {missing} missing")
    if not parts:  # duplicated names
        parts.append(f"columns {names} where fit had {fitted}")
    raise ValueError(
        f"{arg}: {' and '.join(parts)}; {estimator} was fitted on the columns {fitted}: pass "
        "the same columns, with the same names, in that order")
