"""Absorbed fixed effects for :class:`attnreg.OLS`: labels -> integer codes, and back.

The estimation (weighted alternating projections of Gaure 2013, Computational Statistics & Data
Analysis 66, 8-18, doi:10.1016/j.csda.2013.03.024; degrees of freedom from the connected
components of the factor graph) lives in the C++ core; this module only encodes the factor
labels the user passes as ``absorb=`` and decodes the fixed-effect values.
"""
from __future__ import annotations

import numpy as np
import pandas as pd


def _columns(absorb, n: int):
    """absorb -> list of (name, 1-D array of labels)."""
    if isinstance(absorb, pd.DataFrame):
        labels = [str(c) for c in absorb.columns]
        dup = sorted({c for c in labels if labels.count(c) > 1})
        if dup:
            raise ValueError(
                f"absorb: column names must be distinct, got {', '.join(map(repr, dup))} more "
                "than once (rename or drop the duplicate columns)"
            )
        cols = [(labels[j], absorb.iloc[:, j].to_numpy()) for j in range(absorb.shape[1])]
    elif isinstance(absorb, pd.Series):
        cols = [(str(absorb.name) if absorb.name is not None else "fe0", absorb.to_numpy())]
    else:
        a = np.asarray(absorb, dtype=object) if not isinstance(absorb, np.ndarray) else absorb
        if a.ndim == 1:
            cols = [("fe0", a)]
        elif a.ndim == 2:
            cols = [(f"fe{j}", a[:, j]) for j in range(a.shape[1])]
        else:
            raise ValueError(
                f"absorb: expected shape (n,) or (n, k) (one column per factor), got {a.ndim} "
                "dimensions"
            )
    if not cols:
        raise ValueError("absorb: has no columns; pass at least one factor or absorb=None")
    for name, c in cols:
        if len(c) != n:
            raise ValueError(
                f"absorb: factor {name!r} has {len(c)} labels but X has {n} rows (pass one "
                "label per row)"
            )
    return cols


def _series(values) -> pd.Series:
    """Labels as a Series of their own dtype (object only when they are objects: fast
    factorisation of integer and string codes)."""
    a = np.asarray(values) if not isinstance(values, np.ndarray) else values
    if a.ndim != 1:  # e.g. a list of tuples became a 2-D array: keep the tuples
        a = np.empty(len(values), dtype=object)
        a[:] = list(values)
    return pd.Series(a, copy=False)


def _missing(values) -> np.ndarray:
    return _series(values).isna().to_numpy()


def encode_absorb(absorb, n: int):
    """Labels of the fit -> (codes (n, k) int64, names, levels as pandas Index per factor).

    Levels are sorted when the labels are comparable (as R's factor and fixest), otherwise in
    order of appearance. Missing labels (None, NaN, NaT) are an error naming the factor."""
    codes, names, levels = [], [], []
    for name, c in _columns(absorb, n):
        bad = _missing(c)
        if bad.any():
            rows = np.flatnonzero(bad)
            show = ", ".join(str(r) for r in rows[:5]) + (", ..." if rows.size > 5 else "")
            raise ValueError(
                f"absorb: factor {name!r} has {rows.size} missing label(s) (rows {show}); drop "
                "those rows or give them a label of their own"
            )
        ser = _series(c)
        try:
            code, uniq = pd.factorize(ser, sort=True)
        except TypeError:  # labels of mixed, incomparable types
            code, uniq = pd.factorize(ser, sort=False)
        codes.append(code.astype(np.int64))
        names.append(name)
        levels.append(pd.Index(uniq))
    if len(set(names)) != len(names):
        raise ValueError(f"absorb: factor names must be distinct, got {names}")
    return np.column_stack(codes), names, levels


def encode_new(absorb, n: int, names, levels) -> np.ndarray:
    """Labels of new rows -> codes of the fitted levels; unseen levels are an error naming them."""
    cols = _columns(absorb, n)
    if len(cols) != len(names):
        raise ValueError(
            f"absorb: the model absorbed {len(names)} factor(s) ({', '.join(names)}); pass "
            f"{len(names)} column(s), got {len(cols)}"
        )
    if isinstance(absorb, pd.DataFrame):
        by_name = dict(cols)
        missing = [nm for nm in names if nm not in by_name]
        if missing:
            raise ValueError(f"absorb: columns {missing} missing (the model absorbed {names})")
        cols = [(nm, by_name[nm]) for nm in names]
    out = np.empty((n, len(names)), dtype=np.int64)
    for j, ((_, c), name, lev) in enumerate(zip(cols, names, levels)):
        bad = _missing(c)
        if bad.any():
            raise ValueError(f"absorb: factor {name!r} has missing labels in the new rows")
        ser = _series(c)
        idx = lev.get_indexer(pd.Index(ser))
        if (idx < 0).any():
            unseen = pd.unique(ser[idx < 0])
            show = ", ".join(repr(u) for u in unseen[:5]) + (", ..." if unseen.size > 5 else "")
            raise ValueError(
                f"absorb: factor {name!r} has level(s) not seen in fit: {show}; a fixed effect "
                "is estimated only for levels in the training data"
            )
        out[:, j] = idx
    return out
