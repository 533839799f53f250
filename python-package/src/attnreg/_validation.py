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
    """The column names of a DataFrame (a named Series is one column); None for arrays and, as
    scikit-learn has it, for frames whose column labels are not all strings (a frame made from
    an array has the labels 0, 1, ...)."""
    cols = getattr(X, "columns", None)
    if cols is not None and getattr(X, "ndim", 2) == 2:
        cols = list(cols)
        return cols if cols and all(isinstance(c, str) for c in cols) else None
    name = getattr(X, "name", None)
    if isinstance(name, str) and getattr(X, "ndim", 0) == 1 and hasattr(X, "index"):
        return [name]
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


def _not_a_number_kind(v) -> str | None:
    """What a scalar that Python or numpy would read as a number, but that is not one here, is:
    "a boolean", "a complex number", "a datetime", "a timedelta"; None otherwise."""
    import datetime

    if isinstance(v, (bool, np.bool_)):
        return "a boolean"
    if isinstance(v, (complex, np.complexfloating)):
        return "a complex number"
    if isinstance(v, (np.datetime64, datetime.datetime, datetime.date)):
        return "a datetime"
    if isinstance(v, (np.timedelta64, datetime.timedelta)):
        return "a timedelta"
    return None


def refuse_non_numbers(value, name: str, takes: str = "numbers") -> None:
    """Refuse booleans, complex numbers, datetimes and timedeltas where a number (or an array
    of numbers) is expected: Python and numpy read True as 1, a datetime as nanoseconds and a
    complex number with a zero imaginary part as real, which would turn a slip into a plausible
    answer. Strings, None and other objects (a numpy Generator) pass through unchanged."""
    kind = _not_a_number_kind(value)
    if kind is None and isinstance(value, (list, tuple, np.ndarray)) or (
            kind is None and hasattr(value, "dtype") and hasattr(value, "shape")):
        try:
            arr = np.asarray(value, dtype=object if isinstance(value, (list, tuple)) else None)
        except ValueError:  # ragged nested lists: left to the argument's own checks
            return
        if arr.dtype.kind == "b":
            kind = "a boolean"
        elif arr.dtype.kind == "c":
            kind = "a complex number"
        elif arr.dtype.kind == "M":
            kind = "a datetime"
        elif arr.dtype.kind == "m":
            kind = "a timedelta"
        elif arr.dtype.kind == "O":
            for v in arr.ravel():
                kind = _not_a_number_kind(v)
                if kind is not None:
                    break
    if kind is not None:
        if takes != "numbers":
            hint = ""
        else:
            hint = {"a boolean": " (booleans are not numbers here: write 1 or 1.0 if that is "
                                 "what you mean)",
                    "a complex number": " (real ones)"}.get(kind,
                                                            " (convert times to numbers first)")
        raise ValueError(f"{name}: got {value!r}, {kind}; {name} takes {takes}{hint}")


def refuse_non_number_params(estimator) -> None:
    """refuse_non_numbers on every constructor argument of ``estimator`` except its flags (the
    arguments whose default is a bool, e.g. ``fit_intercept``); called at the start of fit."""
    import inspect

    sig = inspect.signature(type(estimator).__init__)
    for pname, p in sig.parameters.items():
        if pname == "self" or isinstance(p.default, bool) or not hasattr(estimator, pname):
            continue
        takes = "numbers"
        if isinstance(p.default, str) and pname not in _NUMBER_OR_NAME:
            takes = f"a string such as its default {p.default!r}"
        refuse_non_numbers(getattr(estimator, pname), pname, takes)


#: Constructor arguments whose default is a name but which also take numbers.
_NUMBER_OR_NAME = {"bandwidth"}


def numbers_only(*names: str):
    """Decorator: refuse_non_numbers on the arguments ``names`` of a public function (the
    numeric ones; data arrays keep their own checks)."""
    import functools
    import inspect

    def deco(fn):
        sig = inspect.signature(fn)
        missing = [n for n in names if n not in sig.parameters]
        if missing:  # pragma: no cover - a programming error, caught at import
            raise TypeError(f"numbers_only: {fn.__name__} has no argument {missing[0]!r}")

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            bound = sig.bind_partial(*args, **kwargs).arguments
            for n in names:
                if n in bound:
                    refuse_non_numbers(bound[n], n)
            return fn(*args, **kwargs)

        wrapper.__numbers_only__ = names
        return wrapper

    return deco


def per_column_bandwidth(bw, n_columns: int, all_continuous: bool) -> np.ndarray:
    """Given bandwidths (not a selector name), the one rule of the kernel estimators: a single
    number serves every column when all are continuous (returned as one value, which the core
    repeats); otherwise exactly one value per column. A list of one value for several columns
    is refused, not repeated: it is more often a slip than a choice."""
    import numbers

    refuse_non_numbers(bw, "bandwidth")
    if isinstance(bw, numbers.Real):
        if not all_continuous:
            raise ValueError(
                "bandwidth: one number for every column only works when all columns are "
                "continuous; give one value per column (lambda for categorical columns)")
        return np.array([float(bw)])
    try:
        arr = np.asarray(bw, dtype=np.float64).ravel()
    except (TypeError, ValueError):
        raise ValueError(
            f"bandwidth: expected a positive number or one number per column, got {bw!r}"
        ) from None
    if arr.size != n_columns:
        raise ValueError(
            f"bandwidth: got {arr.size} values for {n_columns} columns (give one per column, "
            "or one number when all columns are continuous)")
    return arr


def _time_kind(dtype) -> str | None:
    import pandas as pd

    if isinstance(dtype, pd.PeriodDtype):
        return "a period"
    kind = getattr(dtype, "kind", None)
    if kind == "M" or isinstance(dtype, pd.DatetimeTZDtype):
        return "a datetime"
    if kind == "m":
        return "a timedelta"
    return None


def refuse_time_columns(X, arg: str, estimator: str) -> None:
    """Refuse datetime, timedelta and period columns (pandas) or arrays (numpy), naming the
    column: numpy reads them as nanoseconds (or refuses with a dtype-promotion error), neither
    of which is what the user meant."""
    cols = []
    if hasattr(X, "dtypes") and hasattr(X, "columns"):
        cols = [(c, X[c].dtype) for c in X.columns]
    elif hasattr(X, "dtype"):
        name = getattr(X, "name", None) if hasattr(X, "index") else None
        cols = [(name, X.dtype)]
    for col, dt in cols:
        kind = _time_kind(dt)
        if kind is None:
            continue
        where = f"column {col!r} is" if col is not None else "is"
        raise ValueError(
            f"{arg}: {where} {kind} (dtype {dt}); {estimator} takes numbers or categories, not "
            "times: convert it to a number in units you choose (e.g. (t - t.min()).dt.days, or "
            "the year), or to categories (astype('category'))")


def validate_data(estimator, X="no_validation", y="no_validation", **kwargs):
    """scikit-learn's ``validate_data``, with its messages for an X of the wrong shape (no
    rows, a scalar, 3 or more dimensions) prefixed by what is expected of X (its own words,
    which scikit-learn's conventions and tests look for, follow)."""
    from sklearn.utils.validation import validate_data as _sk_validate_data

    try:
        return _sk_validate_data(estimator, X, y, **kwargs)
    except ValueError as e:
        msg = str(e)
        stock = ("Found array with 0 sample", "Expected 2D array", "Found array with dim",
                 "Expected a 2-dimensional container")
        if (isinstance(X, str) or not any(msg.startswith(s) for s in stock)
                or "while a minimum of" in msg and "feature(s)" in msg):
            raise
        shape = np.shape(X) if not hasattr(X, "shape") else tuple(X.shape)
        got = ("a scalar" if len(shape) == 0 else
               f"{len(shape)}-D input of shape {shape}" if len(shape) != 2 else
               f"shape {shape}")
        raise ValueError(
            f"X: expected a 2-D array of shape (n_samples, n_features) with at least one row "
            f"(one observation per row; a single feature as X.reshape(-1, 1)), got {got}. "
            f"{msg}") from None


def checked_input(A, arg: str, ensure_2d: bool = False, min_samples: int = 0):
    """scikit-learn's input checks on what the user passed, before any encoding: sparse
    matrices, complex numbers (read as float64 they would silently lose their imaginary part)
    and objects that are not numbers are refused, the message naming ``arg``. pandas input is
    left to the encoders (categorical columns become level codes); with ``ensure_2d=False`` a
    1-D array stays one column, as in R np. ``min_samples``: the fewest rows accepted."""
    import pandas as pd
    from sklearn.utils.validation import check_array

    if isinstance(A, (pd.DataFrame, pd.Series)) or A is None:
        return A
    try:
        return check_array(A, accept_sparse=False, dtype="numeric", ensure_2d=ensure_2d,
                           allow_nd=not ensure_2d, ensure_all_finite=False,
                           ensure_min_samples=min_samples,
                           ensure_min_features=1 if ensure_2d else 0, input_name=arg)
    except (TypeError, ValueError) as e:
        raise type(e)(f"{arg}: {e}") from None
