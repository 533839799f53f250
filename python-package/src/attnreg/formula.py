"""Formula interface: fit attnreg's estimators from a model formula and a data frame.

``attnreg.ols("log(wage) ~ experience + I(experience**2) + C(ethnicity) | state", data)``
returns a fitted :class:`attnreg.OLS` whose coefficients carry the formula's column names.
Formulas are parsed by formulaic (Wilkinson-Rogers notation as in R and patsy: ``C(g)`` or a
string / categorical column gives treatment dummies, ``I(x**2)``, ``log(x)``, ``a:b``, ``a*b``,
``- 1`` or ``0 +`` for no intercept). The part after a top-level ``|`` lists fixed-effect factors
that are absorbed (``absorb=`` of ``OLS.fit``) instead of entering as dummies, as in R's fixest.

Missing values: rows with a missing value in any variable the formula uses (or in the
``weights`` / ``groups`` / fixed-effect columns), or whose transformed value is NaN (``log`` of a
negative number), are dropped before fitting, as statsmodels' ``missing="drop"`` and R's
``na.omit`` do; the number dropped is in the fitted model's ``n_dropped_`` and noted in
``summary()``. Infinite values are not dropped: the fit refuses them.

The fitted model remembers the formula: ``predict``, ``attention_weights`` and (for OLS)
``predict(..., interval=...)`` accept a data frame with the original variables and apply the
same transformations (formulaic's model spec: the same categorical levels, the same stateful
transforms). A category not seen in fitting is an error, never a row of zeros.

formulaic is an optional dependency: ``pip install formulaic`` (or ``pip install
"attnreg[formula]"``).
"""
from __future__ import annotations

import ast
import inspect
import numbers
import warnings

import numpy as np

from .kernel import LocalLinear, NadarayaWatson
from .linear import OLS, Ridge

__all__ = ["ols", "ridge", "kreg"]


def _formulaic():
    try:
        import formulaic
    except ImportError as e:  # pragma: no cover - exercised only without formulaic
        raise ImportError(
            "attnreg's formula interface (attnreg.ols, attnreg.ridge, attnreg.kreg) needs the "
            "formulaic package: pip install formulaic (or pip install 'attnreg[formula]')"
        ) from e
    return formulaic


# -- parsing ---------------------------------------------------------------------------------

def _split_top_level(text: str, sep: str) -> list[str]:
    """Split at `sep` outside parentheses, brackets and string literals."""
    parts, depth, quote, start = [], 0, None, 0
    for i, ch in enumerate(text):
        if quote:
            if ch == quote and text[i - 1] != "\\":
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def _parse(formula) -> tuple[str, list[str]]:
    """formula -> (main formula without the '|' part, fixed-effect column names)."""
    if not isinstance(formula, str):
        raise TypeError(f"formula: must be a string such as 'y ~ x1 + x2', got {type(formula).__name__}")
    if len(_split_top_level(formula, "~")) != 2:
        raise ValueError(f"formula: needs exactly one '~' with the response on its left, as in "
                         f"'y ~ x1 + x2'; got {formula!r}")
    parts = _split_top_level(formula, "|")
    if len(parts) > 2:
        raise ValueError(f"formula: at most one '|' (regressors | fixed effects), got {formula!r}")
    main = parts[0].strip()
    absorb = []
    if len(parts) == 2:
        for term in _split_top_level(parts[1], "+"):
            term = term.strip()
            absorb.append(_c_argument(term) or term)
        if not absorb or any(a == "" for a in absorb):
            raise ValueError(f"formula: list fixed-effect columns after '|' as 'f1 + f2', got {formula!r}")
    return main, absorb


def _c_argument(expr: str) -> str | None:
    """'C(g)' -> 'g' (a bare column name inside C()), else None."""
    try:
        node = ast.parse(expr.strip(), mode="eval").body
    except SyntaxError:
        return None
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "C"
            and node.args and isinstance(node.args[0], ast.Name)):
        if len(node.args) > 1 or node.keywords:
            raise ValueError(f"formula: {expr!r}: kernel regression takes C(column) only (the "
                             "categorical kernel needs no contrasts); write C(column)")
        return node.args[0].id
    return None


def _check_data(data):
    import pandas as pd

    if isinstance(data, pd.DataFrame):
        return data
    if isinstance(data, dict):
        return pd.DataFrame(data)
    raise TypeError(f"data: must be a pandas DataFrame (or a dict of columns), got {type(data).__name__}")


def _column_arg(value, data, arg: str):
    """A column name, list of names, or an array aligned with the rows of data -> pandas object."""
    import pandas as pd

    if value is None:
        return None
    if isinstance(value, str):
        value = [value]
        single = True
    else:
        single = False
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, str) for v in value):
        missing = [v for v in value if v not in data.columns]
        if missing:
            raise ValueError(f"{arg}: no column {', '.join(map(repr, missing))} in data")
        out = data[list(value)]
        return out.iloc[:, 0] if single else out
    if isinstance(value, (pd.Series, pd.DataFrame)):
        if len(value) != len(data):
            raise ValueError(f"{arg}: has {len(value)} rows but data has {len(data)}")
        return value.set_axis(data.index, axis=0)
    arr = np.asarray(value)
    if arr.ndim not in (1, 2) or arr.shape[0] != len(data):
        raise ValueError(f"{arg}: must be a column name, a list of column names or an array with "
                         f"one row per row of data ({len(data)}), got shape {arr.shape}")
    return pd.Series(arr, index=data.index) if arr.ndim == 1 else pd.DataFrame(arr, index=data.index)


def _notna_rows(obj) -> np.ndarray:
    import pandas as pd

    if obj is None:
        return None
    obj = getattr(obj, "__wrapped__", obj)  # formulaic's ModelMatrix proxies a DataFrame
    m = pd.isna(obj)
    return ~(m.to_numpy().any(axis=1) if m.ndim == 2 else m.to_numpy())


class _Dropper:
    """Rows kept after removing missing values in the named variables and the extra columns."""

    def __init__(self, data, variables, extras):
        keep = np.ones(len(data), dtype=bool)
        cols = [v for v in variables if v in data.columns]
        if cols:
            keep &= _notna_rows(data[cols])
        for e in extras:
            if e is not None:
                keep &= _notna_rows(e)
        self.keep = keep

    def also(self, frame):
        self.keep &= _notna_rows(frame)


def _subset(obj, keep):
    return None if obj is None else obj.loc[keep]


def _required(spec, data) -> list[str]:
    return sorted(v for v in spec.required_variables if v in data.columns)


def _no_unseen_levels(fn, what: str):
    """Run fn; formulaic maps unseen categories to rows of zeros with a warning: make it an error."""
    from formulaic.errors import DataMismatchWarning

    with warnings.catch_warnings():
        warnings.simplefilter("error", DataMismatchWarning)
        try:
            return fn()
        except DataMismatchWarning as e:
            raise ValueError(f"{what}: {e} Map new levels to levels seen in fitting (or drop "
                             "those rows): a categorical regressor cannot predict an unseen level.") from None


def _times_explained(fn, formula: str, data):
    """Run fn (a formulaic evaluation); when it fails on a datetime / timedelta column that the
    formula names, say so (naming the column and the fix) instead of formulaic's ufunc error."""
    import re

    from ._validation import _time_kind

    try:
        return fn()
    except ValueError:
        raise
    except Exception:
        words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_.]*|`[^`]+`", formula))
        words |= {w.strip("`") for w in words}
        for col in data.columns:
            kind = _time_kind(data[col].dtype)
            if kind is not None and str(col) in words:
                raise ValueError(
                    f"formula: column {col!r} is {kind} (dtype {data[col].dtype}); a formula "
                    "term takes numbers or categories, not times: convert it first (e.g. "
                    "(t - t.min()).dt.days, or the year) or write C(column) for one level per "
                    "distinct time") from None
        raise


def _no_time_terms(matrices) -> None:
    """A term that formulaic passed through as times (a timedelta column) is refused by name,
    as _times_explained does for the ones it cannot evaluate."""
    from ._validation import _time_kind

    for m in matrices:
        m = getattr(m, "__wrapped__", m)
        for c in getattr(m, "columns", []):
            kind = _time_kind(m[c].dtype)
            if kind is not None:
                raise ValueError(
                    f"formula: column {str(c)!r} is {kind} (dtype {m[c].dtype}); a formula term "
                    "takes numbers or categories, not times: convert it first (e.g. "
                    "(t - t.min()).dt.days, or the year) or write C(column) for one level per "
                    "distinct time")


def _public_name(cls) -> str:
    return next(c.__name__ for c in cls.__mro__ if not c.__name__.startswith("_"))


def _fit_kwargs(est, **given):
    params = inspect.signature(type(est).fit).parameters
    out = {}
    for name, (arg, value) in given.items():
        if value is None:
            continue
        if name not in params:
            fix = ("remove the '| ...' part" if arg == "formula" else f"drop {arg}=")
            raise ValueError(f"{arg}: {_public_name(type(est))}.fit of this attnreg build takes "
                             f"no {name!r} argument; {fix} or update attnreg")
        out[name] = value
    return out


# -- designs that remember the formula --------------------------------------------------------

def _align_level_types(data, kinds: dict):
    """Levels compare by value: a variable read as text in fitting ("1", "2") and as numbers
    in new data (1, 2), or the reverse, is brought back to the fitted type, so its levels
    match instead of being unseen."""
    import pandas as pd

    changed = {}
    for var, kind in kinds.items():
        if var not in data.columns:
            continue
        s = data[var]
        now = s.dtype.kind
        if kind in "OSU" and now in "iuf":
            changed[var] = s.map(lambda v: v if pd.isna(v) else
                                 str(int(v)) if float(v).is_integer() else str(v))
        elif kind in "iuf" and now in "OSU":
            conv = pd.to_numeric(s, errors="coerce")
            if int(conv.notna().sum()) == int(s.notna().sum()):
                changed[var] = conv
    return data.assign(**changed) if changed else data


class _LinearDesign:
    """Formula -> (y, X without the intercept column); new data -> X, by formulaic's model spec."""

    def __init__(self, spec, variables, names, kinds=None):
        self.spec = spec
        self.variables = variables
        self.names = names
        self.kinds = kinds or {}  # variable -> numpy dtype kind in the fitted data

    def transform(self, data):
        data = _align_level_types(data, getattr(self, "kinds", {}))
        X = _no_unseen_levels(lambda: self.spec.get_model_matrix(data, na_action="ignore"), "data")
        X = X.drop(columns=[c for c in X.columns if c == "Intercept"])
        return X.astype(np.float64)


class _KernelDesign:
    """Kernel-regression regressors: one column per term, categorical terms kept as factors."""

    def __init__(self, columns):
        self.columns = columns  # list of (name, kind, payload): ("num", ModelSpec) / ("cat", (var, categories, ordered))
        self.variables = sorted({v for _, kind, p in columns for v in
                                 (p.required_variables if kind == "num" else [p[0]])})

    def transform(self, data):
        import pandas as pd

        out = {}
        for name, kind, p in self.columns:
            if kind == "num":
                m = _no_unseen_levels(lambda p=p: p.get_model_matrix(data, na_action="ignore"), "data")
                out[name] = m.iloc[:, 0].astype(np.float64).to_numpy()
            else:
                var, cats, ordered = p
                if var not in data.columns:
                    raise ValueError(f"data: no column {var!r} (needed by the term {name!r})")
                s = data[var]
                # Levels are matched by value (1 == 1.0), then by their text ("1" for 1): a
                # column read as numbers in one frame and as strings in another means the same
                # levels; anything else is an unseen level, never a missing value.
                by_value, by_text = {}, {}
                for c in cats:
                    by_text.setdefault(str(c), c)
                    try:
                        by_value.setdefault(c, c)
                    except TypeError:  # unhashable level: matched by text only
                        pass
                mapping, bad = {}, []
                for v in s.dropna().unique():
                    try:
                        hit = by_value.get(v)
                    except TypeError:  # unhashable value
                        hit = None
                    if hit is None:
                        hit = by_text.get(str(v), None)
                    if hit is None:
                        bad.append(repr(v))
                    else:
                        mapping[v] = hit
                if bad:
                    raise ValueError(f"data: column {var!r} has levels not seen in fitting: "
                                     f"{sorted(bad)[:10]} (fitted levels: "
                                     f"{[c for c in cats][:10]}); map them to known levels or "
                                     "drop those rows")
                if any(k is not v for k, v in mapping.items()):
                    s = s.map(lambda v: mapping.get(v, v) if pd.notna(v) else v)
                out[name] = pd.Categorical(s, categories=cats, ordered=ordered)
        return pd.DataFrame(out, index=data.index)


class _FormulaMixin:
    """predict / attention_weights accept the original variables and apply the formula."""

    def _formula_X(self, X):
        import pandas as pd

        design = getattr(self, "_formula_design", None)
        if design is None or not isinstance(X, pd.DataFrame):
            return X
        names = list(getattr(self, "feature_names_in_", []))
        if names and set(names) <= set(X.columns) and not set(design.variables) <= set(X.columns):
            return X[names]  # already a design matrix with the fitted columns
        missing = [v for v in design.variables if v not in X.columns]
        if missing:
            raise ValueError(f"X: the data lack the formula's variables {missing} (pass a data "
                             f"frame with the columns used in {self.formula_!r})")
        return design.transform(X)

    def _formula_absorb(self, X, kwargs):
        """For a fit with '| f1 + f2': the fixed-effect labels of new rows, from the data."""
        import pandas as pd

        cols = getattr(self, "_formula_fe", None)
        if cols and isinstance(X, pd.DataFrame) and "absorb" not in kwargs:
            missing = [c for c in cols if c not in X.columns]
            if missing:
                raise ValueError(f"X: the data lack the fixed-effect columns {missing} of "
                                 f"{self.formula_!r}")
            kwargs["absorb"] = X[cols[0]] if len(cols) == 1 else X[cols]
        return kwargs

    def predict(self, X, *args, **kwargs):
        kwargs = self._formula_absorb(X, kwargs)
        return super().predict(self._formula_X(X), *args, **kwargs)

    def attention_weights(self, X, **kwargs):
        kwargs = self._formula_absorb(X, kwargs)
        return super().attention_weights(self._formula_X(X), **kwargs)

    def design_matrix(self, data):
        """The regressors the formula builds from ``data`` (a DataFrame), as used by fit."""
        return self._formula_design.transform(_check_data(data))


def _formula_class(base):
    """A subclass of base whose predict / attention_weights apply the formula. It keeps the
    base's name (repr, messages), its qualified name stays unique so pickling finds it."""
    cls = type(f"_Formula{base.__name__}", (_FormulaMixin, base),
               {"__doc__": base.__doc__, "_formula_no_columns_ok": True})
    cls.__module__ = __name__
    cls.__name__ = base.__name__
    return cls


_FormulaOLS = _formula_class(OLS)
_FormulaRidge = _formula_class(Ridge)
_FormulaNadarayaWatson = _formula_class(NadarayaWatson)
_FormulaLocalLinear = _formula_class(LocalLinear)


# -- linear models ----------------------------------------------------------------------------

def _no_sample_weight(kwargs):
    """The estimators' fit takes sample_weight; the formula functions take weights=, as
    statsmodels' formulas do: say so instead of a TypeError from the constructor."""
    if "sample_weight" in kwargs:
        raise TypeError("sample_weight: the formula interface takes weights= (a column name of "
                        "data or an array with one value per row)")


def _linear(cls, formula, data, weights, groups, kwargs, allow_absorb: bool):
    _no_sample_weight(kwargs)
    formulaic = _formulaic()
    data = _check_data(data)
    main, absorb_cols = _parse(formula)
    if "fit_intercept" in kwargs:
        raise TypeError("fit_intercept: set by the formula; write '- 1' (or '0 +') to drop the "
                        "intercept")
    if absorb_cols and not allow_absorb:
        raise ValueError(f"formula: fixed effects after '|' are absorbed by OLS only; for "
                         f"{_public_name(cls)} write them as C(f) terms")
    missing = [a for a in absorb_cols if a not in data.columns]
    if missing:
        raise ValueError(f"formula: fixed-effect column(s) {missing} after '|' are not in data")
    w = _column_arg(weights, data, "weights")
    g = _column_arg(groups, data, "groups")
    fe = data[absorb_cols] if absorb_cols else None
    # First pass on all rows: which variables does the formula use, and where are they missing
    # (raw values) or NaN after transformation?
    mm = _times_explained(lambda: _no_unseen_levels(
        lambda: formulaic.model_matrix(main, data, na_action="ignore"), "data"), main, data)
    _no_time_terms([mm.lhs, mm.rhs])
    variables = sorted(set(_required(mm.lhs.model_spec, data)) | set(_required(mm.rhs.model_spec, data)))
    drop = _Dropper(data, variables, [w, g, fe])
    drop.also(mm.lhs)
    drop.also(mm.rhs)
    keep = drop.keep
    if not keep.any():
        raise ValueError("data: every row has a missing value in the formula's variables (or in "
                         "weights / groups / fixed effects)")
    sub = data.loc[keep]
    # Second pass on the kept rows only (levels seen only in dropped rows do not become columns).
    mm = formulaic.model_matrix(main, sub, na_action="raise")
    lhs, rhs = mm.lhs, mm.rhs
    if lhs.shape[1] != 1:
        raise ValueError(f"formula: the response must be one numeric column; "
                         f"{_split_top_level(main, '~')[0].strip()!r} gives {lhs.shape[1]} "
                         f"({list(lhs.columns)})")
    y = lhs.iloc[:, 0].to_numpy(dtype=np.float64)
    fit_intercept = "Intercept" in rhs.columns
    if rhs.shape[1] == 0 and fe is None:
        raise ValueError(f"formula: {formula!r} has no regressors and no intercept: nothing to "
                         "estimate (write 'y ~ 1' for the mean, or add terms)")
    if list(rhs.columns) == ["Intercept"] and not issubclass(cls, OLS):
        raise ValueError(f"formula: {formula!r} has no regressors, so {_public_name(cls)} has "
                         "nothing to penalise: for the mean use attnreg.ols('y ~ 1', data)")
    X = rhs.drop(columns=["Intercept"]) if fit_intercept else rhs
    X = X.astype(np.float64)
    est = cls(fit_intercept=fit_intercept, **kwargs)
    fk = _fit_kwargs(est, sample_weight=("weights", None if w is None else _subset(w, keep).to_numpy()),
                     groups=("groups", _subset(g, keep)),
                     absorb=("formula",
                             None if fe is None else (fe.loc[keep].iloc[:, 0] if fe.shape[1] == 1 else fe.loc[keep])))
    est.fit(X, y, **fk)
    est.formula_ = formula
    est.n_dropped_ = int((~keep).sum())
    est._formula_lhs = str(lhs.columns[0])
    req = _required(rhs.model_spec, data)
    est._formula_design = _LinearDesign(rhs.model_spec, req, list(X.columns),
                                        {v: data[v].dtype.kind for v in req})
    est._formula_fe = list(absorb_cols)
    return est


def ols(formula: str, data, *, weights=None, groups=None, **kwargs) -> OLS:
    """Fit :class:`attnreg.OLS` from a formula: ``attnreg.ols("y ~ x1 + C(g) | firm", data)``.

    Parameters
    ----------
    formula : str
        ``response ~ terms`` in Wilkinson-Rogers notation (formulaic: ``C(g)`` treatment
        dummies, ``I(x**2)``, ``log(x)``, ``a:b``, ``a*b``, ``- 1`` for no intercept), optionally
        followed by ``| f1 + f2``: fixed-effect columns absorbed by ``OLS.fit(absorb=...)``.
    data : pandas.DataFrame
    weights : str or array-like, optional
        Column name or array (one value per row of data): ``sample_weight`` of ``OLS.fit``.
    groups : str, list of str or array-like, optional
        Cluster column(s) of data (one or two) or an array aligned with the rows of data:
        ``groups`` of ``OLS.fit`` (with ``cov_type="cluster"`` etc.).
    **kwargs
        Passed to :class:`attnreg.OLS` (``cov_type``, ``maxlags``, ``precision``, ...);
        ``fit_intercept`` comes from the formula.

    Returns
    -------
    OLS
        Fitted, with ``feature_names_in_`` the formula's column names, a 1-D response,
        ``formula_``, ``n_dropped_`` (rows dropped for missing values), and ``predict`` /
        ``attention_weights`` / ``design_matrix`` that accept the original data.

    Examples
    --------
    >>> import numpy as np, pandas as pd, attnreg
    >>> rng = np.random.default_rng(0)
    >>> d = pd.DataFrame({"x": rng.normal(size=50), "g": rng.choice(["a", "b"], 50)})
    >>> d["y"] = 1 + 2 * d.x + (d.g == "b") + rng.normal(size=50) * 0.1
    >>> m = attnreg.ols("y ~ x + C(g)", d)
    >>> list(m.feature_names_in_)
    ['x', 'C(g)[T.b]']
    >>> m.summary().coefficients.shape
    (3, 6)
    """
    return _linear(_FormulaOLS, formula, data, weights, groups, kwargs, allow_absorb=True)


def ridge(formula: str, data, *, weights=None, groups=None, **kwargs) -> Ridge:
    """Fit :class:`attnreg.Ridge` from a formula (as :func:`ols`; no fixed effects after '|').

    The columns the formula builds are penalised as they come (no standardisation): scale
    them in the formula (``scale(x)``) when their units differ. ``**kwargs`` go to
    :class:`attnreg.Ridge` (``alpha``, ``criterion``, ``cv``, ``cov_type``, ...); ``groups``
    (cluster column(s) or an array) to ``Ridge.fit`` for ``cov_type="cluster"`` etc.
    """
    return _linear(_FormulaRidge, formula, data, weights, groups, kwargs, allow_absorb=False)


# -- kernel regression ------------------------------------------------------------------------

def kreg(formula: str, data, estimator: str = "ll", *, weights=None, **kwargs):
    """Fit a kernel regression from a formula: ``attnreg.kreg("y ~ x1 + log(x2) + C(g)", data)``.

    Each term is one regressor of the product kernel. ``C(g)`` and categorical, string or
    bool columns enter as categorical regressors with a categorical kernel (not as dummies);
    pandas ordered categoricals get the ordered kernel. Other terms are evaluated by formulaic
    (``log(x)``, ``I(x**2)``) and must give one numeric column. Interaction terms (``a:b``,
    ``a*b``) are refused: the product kernel already smooths all regressors jointly, so any
    interaction is inside the fit (Li and Racine 2007, *Nonparametric Econometrics*, ch. 4; R's
    np has no interaction terms either); write ``y ~ a + b``. The intercept (``- 1``) has no
    meaning here and is ignored.

    Parameters
    ----------
    formula : str
    data : pandas.DataFrame
    estimator : {"ll", "lc"}, default="ll"
        Local linear (:class:`attnreg.LocalLinear`) or local constant (Nadaraya-Watson).
    weights : str or array-like, optional
        ``sample_weight`` of the estimator's fit (column name or array).
    **kwargs
        Passed to the estimator (``bandwidth``, ``kernel``, ...).

    Returns
    -------
    LocalLinear or NadarayaWatson, fitted, with ``formula_`` and ``n_dropped_``; ``predict``
    and ``attention_weights`` accept the original data.
    """
    import pandas as pd

    _no_sample_weight(kwargs)
    formulaic = _formulaic()
    data = _check_data(data)
    if estimator not in ("ll", "lc"):
        raise ValueError(f"estimator: must be 'll' (local linear) or 'lc' (local constant), got {estimator!r}")
    main, absorb_cols = _parse(formula)
    if absorb_cols:
        raise ValueError("formula: kernel regression has no fixed effects to absorb ('|'); add "
                         "the factor as a categorical regressor: y ~ x + C(f)")
    lhs_text, rhs_text = _split_top_level(main, "~")
    f = formulaic.Formula(main)
    terms, singles = [], []
    rhs_terms = [[str(fa.expr) for fa in term.factors] for term in f.rhs]
    for exprs in rhs_terms:
        for e in exprs:
            if e not in ("1", "0") and e not in singles:
                singles.append(e)
    for term, exprs in zip(f.rhs, rhs_terms):
        if exprs == ["1"] or exprs == ["0"] or not exprs:
            continue
        if len(exprs) > 1:
            raise ValueError(
                f"formula: interaction term '{term}' is not supported by kernel regression: the "
                "product kernel smooths all regressors jointly, so every interaction is already "
                f"inside the fit; write each regressor once: {lhs_text.strip()} ~ "
                f"{' + '.join(singles)}")
        terms.append(exprs[0])
    if not terms:
        raise ValueError("formula: needs at least one regressor on the right of '~'")
    cols, variables = [], set()
    for expr in terms:
        var = _c_argument(expr)
        if var is None and expr in data.columns and _is_categorical(data[expr]):
            var = expr
        if var is not None:
            if var not in data.columns:
                raise ValueError(f"formula: no column {var!r} in data (term {expr!r})")
            cols.append((expr, "cat", var))
            variables.add(var)
        else:
            cols.append((expr, "num", expr))
    w = _column_arg(weights, data, "weights")
    # Missing values: in the raw variables (first pass) and after transformation.
    lhs_mm = _times_explained(
        lambda: formulaic.model_matrix(f"{lhs_text} ~ 1", data, na_action="ignore").lhs,
        lhs_text, data)
    specs = {}
    for name, kind, p in cols:
        if kind == "num":
            m = _times_explained(lambda p=p: _no_unseen_levels(
                lambda: formulaic.model_matrix(f"0 + {p}", data, na_action="ignore"), "data"),
                p, data)
            _no_time_terms([m])
            if m.shape[1] != 1:
                raise ValueError(f"formula: term {p!r} gives {m.shape[1]} columns ({list(m.columns)}); "
                                 "kernel regression needs one numeric column per term (write "
                                 "C(column) for a categorical regressor)")
            variables |= set(_required(m.model_spec, data))
    _no_time_terms([lhs_mm])
    variables |= set(_required(lhs_mm.model_spec, data))
    drop = _Dropper(data, sorted(variables), [w])
    drop.also(lhs_mm)
    for name, kind, p in cols:
        if kind == "num":
            drop.also(formulaic.model_matrix(f"0 + {p}", data, na_action="ignore"))
    keep = drop.keep
    if not keep.any():
        raise ValueError("data: every row has a missing value in the formula's variables")
    sub = data.loc[keep]
    lhs = formulaic.model_matrix(f"{lhs_text} ~ 1", sub, na_action="raise").lhs
    if lhs.shape[1] != 1:
        raise ValueError(f"formula: the response must be one numeric column; {lhs_text.strip()!r} "
                         f"gives {lhs.shape[1]}")
    design_cols = []
    for name, kind, p in cols:
        if kind == "num":
            specs[name] = formulaic.model_matrix(f"0 + {p}", sub, na_action="raise").model_spec
            design_cols.append((name, "num", specs[name]))
        else:
            s = sub[p]
            cat = s if isinstance(s.dtype, pd.CategoricalDtype) else s.astype("category")
            cat = cat.cat.remove_unused_categories()
            design_cols.append((name, "cat", (p, list(cat.cat.categories), bool(cat.cat.ordered))))
    design = _KernelDesign(design_cols)
    X = design.transform(sub)
    y = lhs.iloc[:, 0].to_numpy(dtype=np.float64)
    cls = _FormulaLocalLinear if estimator == "ll" else _FormulaNadarayaWatson
    est = cls(**kwargs)
    fk = {}
    if w is not None:
        fk["sample_weight"] = _subset(w, keep).to_numpy()
    est.fit(X, y, **fk)
    est.formula_ = formula
    est.n_dropped_ = int((~keep).sum())
    est._formula_lhs = str(lhs.columns[0])
    est._formula_design = design
    return est


def _is_categorical(s) -> bool:
    import pandas as pd

    return (isinstance(s.dtype, pd.CategoricalDtype) or s.dtype == bool or s.dtype == object
            or pd.api.types.is_string_dtype(s.dtype))
