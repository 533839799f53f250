"""Input encoding shared by the kernel estimators, the bandwidth selectors and the diagnostics.

DataFrame columns of dtype category (ordered or not), bool, object or string become integer
codes with categorical kernels, as R's ``np`` does. A module of its own so that kernel.py,
bandwidth.py and diagnostics.py all import it and none of them imports another for it.
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


class KernelInput:
    """Mixin of every kernel regression estimator: categorical encoding of DataFrame columns
    (categories stored at fit in ``_categories``) and the resolution of ``var_types``.

    The diagnostics recognise a kernel regression by this base."""

    def _encode(self, X, fitting: bool):
        """DataFrames: categorical columns -> integer codes (categories stored at fit).

        Returns (X as DataFrame or array, var_types string or None)."""
        try:
            import pandas as pd
        except ImportError:  # pragma: no cover - pandas is a dependency
            return X, None
        if not isinstance(X, pd.DataFrame):
            return X, None
        if fitting:
            self._categories = {}
            types = []
            for j, col in enumerate(X.columns):
                s = X[col]
                if is_categorical_series(s):
                    cat = s.astype("category") if not isinstance(s.dtype, pd.CategoricalDtype) else s
                    self._categories[col] = cat.cat.categories
                    types.append("o" if cat.cat.ordered else "u")
                else:
                    types.append("c")
            inferred = "".join(types)
        else:
            inferred = None
        if not self._categories:
            return X, inferred
        out = {}
        for col in X.columns:
            s = X[col]
            if col in self._categories:
                cats = self._categories[col]
                bad = (~s.isin(cats) & s.notna()).to_numpy()
                if bad.any():
                    first = s[bad].iloc[0]
                    raise ValueError(
                        f"X: column {col!r} has the level {first!r}, never seen in fit "
                        f"(levels: {list(cats)[:10]}); categorical kernels cannot weigh an "
                        "unseen category (map it to a known level or drop the row)"
                    )
                codes = pd.Categorical(s, categories=cats).codes.astype(np.float64)
                codes[codes < 0] = np.nan  # missing values: rejected by validation below
                out[col] = codes
            else:
                out[col] = s
        return pd.DataFrame(out, index=X.index), inferred

    def _resolve_var_types(self, inferred, n_features: int) -> str:
        return resolve_var_types(self.var_types, inferred, n_features)


def resolve_var_types(vt, inferred, n_features: int) -> str:
    """The var_types string (one of c/u/o per column): ``vt`` checked against the columns
    and the types ``inferred`` from a DataFrame, or the inferred ones, or all continuous."""
    if vt is None:
        return inferred if inferred is not None else "c" * n_features
    if not isinstance(vt, str):
        raise ValueError(
            f"var_types: expected a string such as 'ccu' (one of c/u/o per column), got {vt!r}"
        )
    compact = vt.replace(" ", "")
    if len(compact) != n_features or any(c not in "cuoCUO" for c in compact):
        raise ValueError(
            f"var_types: {vt!r} must give one of c (continuous), u (unordered), "
            f"o (ordered) for each of the {n_features} columns"
        )
    if inferred is not None:
        for j, (a, b) in enumerate(zip(compact.lower(), inferred)):
            if b in "uo" and a == "c":
                raise ValueError(
                    f"var_types: column {j + 1} is a pandas categorical but var_types marks "
                    "it continuous ('c'); use 'u' or 'o' or convert the column to numbers"
                )
    return compact.lower()


class _Encoder(KernelInput):
    var_types = None


def encode_frame(X):
    """Encode X once as a fit does: returns (encoded X, inferred var_types or None when X is
    not a DataFrame)."""
    return _Encoder()._encode(X, fitting=True)
