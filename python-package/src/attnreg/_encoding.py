"""Input encoding shared by every estimator of the Python face.

DataFrame columns of dtype category (ordered or not), bool, object or string become integer
codes with categorical kernels, as R's ``np`` does. One encoder for all of them: the kernel
regressions (X), the bandwidth selectors and diagnostics, the semiparametric models (Z), the
density estimators (X and y) and the instrumental-variable blocks (numbers only). Each call
names the argument the user passed (``arg``) so that every message names it too. A module of
its own so that kernel.py, bandwidth.py and diagnostics.py all import it and none of them
imports another for it.
"""
from __future__ import annotations

import numpy as np


def is_categorical_series(s) -> bool:
    """Whether a pandas Series gets a categorical kernel (category, bool, object, string)."""
    import pandas as pd

    return (
        isinstance(s.dtype, pd.CategoricalDtype)
        or pd.api.types.is_bool_dtype(s.dtype)
        or pd.api.types.is_object_dtype(s.dtype)
        or pd.api.types.is_string_dtype(s.dtype)
    )


def fit_categories(X) -> tuple[dict, str]:
    """The levels of each categorical column of the DataFrame ``X`` (in their order) and the
    var_types string inferred from the dtypes (u unordered, o ordered, c continuous)."""
    import pandas as pd

    categories, types = {}, []
    for col in X.columns:
        s = X[col]
        if is_categorical_series(s):
            cat = s.astype("category") if not isinstance(s.dtype, pd.CategoricalDtype) else s
            categories[col] = cat.cat.categories
            types.append("o" if cat.cat.ordered else "u")
        else:
            types.append("c")
    return categories, "".join(types)


def level_codes(s, cats, col, arg: str) -> np.ndarray:
    """The float64 codes of the Series ``s`` in the levels ``cats`` fitted for column ``col``
    of the argument ``arg``; missing values become NaN (refused by the validation after), a
    level never seen in fit is an error."""
    import pandas as pd

    bad = (~s.isin(cats) & s.notna()).to_numpy()
    if bad.any():
        raise ValueError(
            f"{arg}: column {col!r} has the level {s[bad].iloc[0]!r}, never seen in fit "
            f"(levels: {list(cats)[:10]}); categorical kernels cannot weigh an unseen "
            "category (map it to a known level or drop the row)"
        )
    codes = pd.Categorical(s, categories=cats).codes.astype(np.float64)
    codes[codes < 0] = np.nan
    return codes


def encode_frame_columns(holder, X, fitting: bool, arg: str = "X"):
    """DataFrames: categorical columns -> integer codes, the levels kept in
    ``holder._categories`` at fit; other inputs unchanged.

    Returns (X as DataFrame or as given, inferred var_types string or None)."""
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - pandas is a dependency
        return X, None
    if fitting:
        holder._categories = {}
    if not isinstance(X, pd.DataFrame):
        return X, None
    inferred = None
    if fitting:
        holder._categories, inferred = fit_categories(X)
    cats = getattr(holder, "_categories", {})
    if not cats:
        return X, inferred
    out = {col: level_codes(X[col], cats[col], col, arg) if col in cats else X[col]
           for col in X.columns}
    return pd.DataFrame(out, index=X.index), inferred


def float_columns(A, arg: str, categories: dict | None = None) -> np.ndarray:
    """A block of columns as a float64 Fortran (n, k) matrix: a pandas Series is one column,
    the columns named in ``categories`` become level codes, every other column must be
    numeric; arrays 1-D (one column) or 2-D."""
    import pandas as pd

    if isinstance(A, pd.Series):
        A = A.to_frame()
    if isinstance(A, pd.DataFrame):
        cats = categories or {}
        cols = []
        for col in A.columns:
            s = A[col]
            if col in cats:
                cols.append(level_codes(s, cats[col], col, arg))
                continue
            try:
                cols.append(s.to_numpy(dtype=np.float64))
            except (TypeError, ValueError) as e:
                raise ValueError(f"{arg}: column {col!r} is not numeric ({e})") from None
        arr = np.column_stack(cols) if cols else np.empty((len(A), 0))
    else:
        try:
            arr = np.asarray(A, dtype=np.float64)
        except (TypeError, ValueError) as e:
            raise ValueError(f"{arg}: expected numbers ({e})") from None
        if arr.ndim == 1:
            arr = arr.reshape(-1, 1)
        if arr.ndim != 2:
            raise ValueError(f"{arg}: expected a 1-D or 2-D array, got {arr.ndim} dimensions")
    return np.asfortranarray(arr)


class ColumnEncoder:
    """Fit-then-transform form of the encoder for one argument (the density estimators' X and
    y): columns -> float64 matrix, pandas categoricals -> level codes."""

    def __init__(self, name: str):
        self.name = name
        self.columns = None
        self.categories = {}
        self.inferred = None

    def fit(self, X):
        import pandas as pd

        if isinstance(X, pd.Series):
            X = X.to_frame()
        if isinstance(X, pd.DataFrame):
            self.columns = [str(c) for c in X.columns]
            self.categories, self.inferred = fit_categories(X)
        return self.transform(X, self.name)

    def transform(self, X, arg: str) -> np.ndarray:
        import pandas as pd

        if isinstance(X, pd.Series):
            X = X.to_frame()
        if isinstance(X, pd.DataFrame) and self.columns is None:
            try:  # fitted on an array: the frame's values, read as an array
                X = np.asarray(X, dtype=np.float64)
            except (TypeError, ValueError) as e:
                raise ValueError(f"{arg}: expected numbers ({e})") from None
        return float_columns(X, arg, self.categories)


class KernelInput:
    """Mixin of every kernel regression estimator: categorical encoding of DataFrame columns
    (categories stored at fit in ``_categories``) and the resolution of ``var_types``.

    The diagnostics recognise a kernel regression by this base."""

    def _encode(self, X, fitting: bool, arg: str = "X"):
        """DataFrames: categorical columns -> integer codes (categories stored at fit).

        Returns (X as DataFrame or array, var_types string or None)."""
        return encode_frame_columns(self, X, fitting, arg)

    def _resolve_var_types(self, inferred, n_features: int) -> str:
        return resolve_var_types(self.var_types, inferred, n_features)


def resolve_var_types(vt, inferred, n_features: int, arg: str = "var_types") -> str:
    """The var_types string (one of c/u/o per column): ``vt`` checked against the columns
    and the types ``inferred`` from a DataFrame, or the inferred ones, or all continuous.
    ``arg`` names the argument in messages (var_types, y_types)."""
    if vt is None:
        return inferred if inferred is not None else "c" * n_features
    if not isinstance(vt, str):
        raise ValueError(
            f"{arg}: expected a string such as 'ccu' (one of c/u/o per column), got {vt!r}"
        )
    compact = vt.replace(" ", "")
    if len(compact) != n_features or any(c not in "cuoCUO" for c in compact):
        raise ValueError(
            f"{arg}: {vt!r} must give one of c (continuous), u (unordered), "
            f"o (ordered) for each of the {n_features} columns"
        )
    if inferred is not None:
        for j, (a, b) in enumerate(zip(compact.lower(), inferred)):
            if b in "uo" and a == "c":
                raise ValueError(
                    f"{arg}: column {j + 1} is a pandas categorical but {arg} marks "
                    "it continuous ('c'); use 'u' or 'o' or convert the column to numbers"
                )
    return compact.lower()


class _Encoder(KernelInput):
    var_types = None


def encode_frame(X):
    """Encode X once as a fit does: returns (encoded X, inferred var_types or None when X is
    not a DataFrame)."""
    return _Encoder()._encode(X, fitting=True)
