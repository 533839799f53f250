"""Kernel density, conditional density, conditional distribution and conditional quantile
estimation for mixed continuous / categorical data, as R's ``np`` (``npudens``, ``npcdens``,
``npcdist``, ``npqreg``; Hayfield and Racine 2008, doi:10.18637/jss.v027.i05).

Product kernels: a continuous kernel density (integrating to one) per continuous column, the
Aitchison and Aitken (1976) kernel for unordered columns and, by default, the normalised Li and
Racine kernel ``lambda^|x - X_i| (1 - lambda) / (1 + lambda)`` (``"li_racine_normalized"``,
np's ``"nliracine"``) for ordered columns that the estimate is a density in, as R np's
``npudens`` and the response of ``npcdens`` / ``npcdist`` (np's ``okertype = "liracine"``
there); on the conditioning (X) ordered columns of the conditional estimators the Li and Racine
kernel ``lambda^|x - X_i|`` by default, as R np's ``npcdensbw`` / ``npcdistbw``
(``oxkertype = "liracine"``). The normalised kernel sums to one over all the integers, so the
estimate of an ordered column is a probability mass function on the integer codes: positive
between and beyond the observed levels, where it may be evaluated too (pass the levels' own
integer codes, e.g. years, as np does for numeric ordered factors). Wang and van Ryzin's (1981)
kernel (``"wang_van_ryzin"``) is the other choice there. Bandwidths (one per column; ``h`` for
continuous columns, ``lambda`` for categorical ones) by

* ``"cv_ml"``: likelihood cross-validation, minimising ``-sum_i log f_{-i}(X_i)`` (densities) or
  ``-sum_i log f_{-i}(Y_i | X_i)`` (conditional densities);
* ``"cv_ls"``: least-squares cross-validation: the integrated squared error (densities; Li and
  Racine 2007, *Nonparametric Econometrics*, sec. 1.3.3 and 4.5), Hall, Racine and Li (2004,
  doi:10.1198/016214504000000548) for conditional densities, Li, Lin and Racine (2013,
  doi:10.1080/07350015.2012.738955) for conditional distributions;
* ``"normal_reference"``: ``(4/3)^(1/5) min(sd, IQR/1.349) n^(-1/(4+q))`` per continuous column
  (np's constants: ``(4/3)^(1/5) = 1.0592``, Silverman's 1.06 unrounded), scaled by the kernel's
  canonical constant (categorical columns get ``lambda = 0``);

or given as numbers. Everything numeric happens in the C++ core; the search is a projected
L-BFGS in log-bandwidth with exact gradients, from several starts.

pandas input: ``category`` columns get the unordered kernel, *ordered* ``category`` columns the
ordered one (levels in their order), ``bool``/``object``/``string`` columns the unordered one;
``bandwidth_`` is then a Series named by column.
"""
from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_array, check_is_fitted

from . import _core
from ._validation import (checked_input as _checked_input, check_column_names, column_names, numbers_only,
                          refuse_non_number_params, refuse_time_columns)
from ._encoding import ColumnEncoder, resolve_var_types

__all__ = ["KernelDensity", "ConditionalDensity", "ConditionalDistribution", "ConditionalQuantile"]

_METHODS = ("cv_ml", "cv_ls", "normal_reference")


def _checked_shape(A: np.ndarray, arg: str, min_rows: int) -> np.ndarray:
    """The encoded (n, d) matrix has at least one column and ``min_rows`` rows (the messages
    scikit-learn's check_array gives, naming the argument)."""
    try:
        return check_array(A, dtype=np.float64, order="F", ensure_all_finite=False,
                           ensure_min_samples=min_rows, ensure_min_features=1, input_name=arg)
    except ValueError as e:
        raise ValueError(f"{arg}: {e}") from None


class _KernelDensityBase(BaseEstimator):
    _kind = "density"

    def __init__(self, bandwidth="cv_ml", kernel: str = "gaussian", var_types: str | None = None,
                 y_types: str | None = None, unordered_kernel: str = "aitchison_aitken",
                 ordered_kernel: str = "li_racine", n_starts: int = 3,
                 random_state: int = 0, n_threads: int = 0,
                 y_ordered_kernel: str = "li_racine_normalized"):
        self.bandwidth = bandwidth
        self.kernel = kernel
        self.var_types = var_types
        self.y_types = y_types
        self.unordered_kernel = unordered_kernel
        self.ordered_kernel = ordered_kernel
        self.n_starts = n_starts
        self.random_state = random_state
        self.n_threads = n_threads
        self.y_ordered_kernel = y_ordered_kernel

    # ------------------------------------------------------------------ core plumbing
    def _data_args(self):
        return dict(kind=self._kind, X=self._X, x_types=self.var_types_, Y=self._Y,
                    y_types=self.y_types_ if self._Y is not None else "", kernel=str(self.kernel),
                    unordered_kernel=str(self.unordered_kernel),
                    ordered_kernel=str(self.ordered_kernel), n_starts=int(self.n_starts),
                    seed=int(self.random_state), n_threads=int(self.n_threads),
                    # fits pickled before y_ordered_kernel existed used Wang-van Ryzin on y
                    y_ordered_kernel=str(getattr(self, "y_ordered_kernel", "wang_van_ryzin")))

    def _fit(self, X, y=None):
        refuse_non_number_params(self)
        est = type(self).__name__
        refuse_time_columns(X, "X", est)
        if y is not None:
            refuse_time_columns(y, "y", est)
        self._x_names = column_names(X)  # None for arrays and unnamed Series
        self._xenc = ColumnEncoder("X")
        self._X = _checked_shape(self._xenc.fit(_checked_input(X, "X")), "X", 2)
        self.n_features_in_ = self._X.shape[1]
        self.var_types_ = resolve_var_types(self.var_types, self._xenc.inferred, self._X.shape[1],
                                            "var_types")
        self._Y = None
        if y is not None:
            self._y_names = column_names(y)
            self._yenc = ColumnEncoder("y")
            self._Y = _checked_shape(self._yenc.fit(_checked_input(y, "y")), "y", 2)
            if self._Y.shape[0] != self._X.shape[0]:
                raise ValueError(
                    f"y: has {self._Y.shape[0]} rows but X has {self._X.shape[0]} (one y per row of X)"
                )
            self.y_types_ = resolve_var_types(self.y_types, self._yenc.inferred, self._Y.shape[1],
                                              "y_types")
        self.n_samples_ = self._X.shape[0]
        bw = self.bandwidth
        d = self._X.shape[1] + (0 if self._Y is None else self._Y.shape[1])
        if isinstance(bw, str):
            key = bw.lower().replace(".", "_").replace("-", "_")
            if key not in _METHODS:
                raise ValueError(
                    f"bandwidth: unknown selector {bw!r}; pass one of {', '.join(_METHODS)}, or "
                    "one positive number per column"
                )
            r = _core.density_select(**self._data_args(), method=key)
            values = np.asarray(r["bandwidth"], dtype=np.float64)
            self.objective_ = float(r["objective"])
            self.bandwidth_method_ = key
            self.n_evals_ = int(r["n_evals"])
            self.converged_ = bool(r["converged"])
            self._warn_box_end(r, key)
        else:
            values = np.atleast_1d(np.asarray(bw, dtype=np.float64)).ravel()
            if values.size == 1 and d > 1 and set(self.var_types_ + getattr(self, "y_types_", "")) == {"c"}:
                values = np.repeat(values, d)
            # Validation (length, positivity, categorical ranges) by the core, on one row.
            self._evaluate_core(values, self._X[:1], None if self._Y is None else self._Y[:1])
            self.objective_ = math.nan
            self.bandwidth_method_ = "given"
            self.n_evals_ = 0
            self.converged_ = True
        self._bw = values
        names = None
        if self._xenc.columns is not None or (self._Y is not None and self._yenc.columns is not None):
            xn = self._xenc.columns or [f"x{j}" for j in range(self._X.shape[1])]
            yn = [] if self._Y is None else (self._yenc.columns or [f"y{j}" for j in range(self._Y.shape[1])])
            names = xn + yn
        if names is not None:
            import pandas as pd

            self.bandwidth_ = pd.Series(values, index=names, name="bandwidth")
        else:
            self.bandwidth_ = values
        return self

    def _warn_box_end(self, r, method: str) -> None:
        """BoundaryWarning naming each continuous column whose selected bandwidth is an end of
        the search box (the core then reports converged = False), with its ties."""
        at = np.asarray(r.get("at_bound", []), dtype=np.int64)
        if not at.any():
            return
        import warnings

        from .bandwidth import BoundaryWarning, _user_stacklevel

        dx = self._X.shape[1]
        xn = getattr(self, "_x_names", None) or [f"X column {j + 1}" for j in range(dx)]
        yn = [] if self._Y is None else (getattr(self, "_y_names", None) or
                                         [f"y column {j + 1}" for j in range(self._Y.shape[1])])
        names = list(xn) + list(yn)
        lower, upper, bw = (np.asarray(r[k]).ravel() for k in ("lower", "upper", "bandwidth"))
        parts = []
        for j in np.flatnonzero(at):
            col = self._X[:, j] if j < dx else self._Y[:, j - dx]
            n, n_distinct = col.size, np.unique(col).size
            box = f"[{lower[j]:.4g}, {upper[j]:.4g}]"
            if at[j] < 0:
                why = (f"{names[j]!r} has {n_distinct} distinct values in {n} rows: on tied "
                       "values the leave-one-out criterion falls without bound as h -> 0, so "
                       "there is no optimum to find" if n_distinct < n else
                       f"{names[j]!r}: the criterion still falls as h -> 0 (near-ties or "
                       "clustered values)")
                advice = ("declare the column discrete (var_types 'o' or 'u'), jitter or "
                          "de-duplicate it, or use normal_reference or a bandwidth by hand")
            else:
                why = f"{names[j]!r}: the criterion still falls as h grows (smoothed out)"
                advice = "drop the column or pass a bandwidth by hand"
            parts.append(f"h = {bw[j]:.4g} is at the {'lower' if at[j] < 0 else 'upper'} end "
                         f"of the search box {box}; {why}; {advice}")
        warnings.warn(f"{type(self).__name__}(bandwidth={method!r}): the selected bandwidth "
                      "sits on the edge of its search box (converged_ is False): "
                      + "; ".join(parts), BoundaryWarning, stacklevel=_user_stacklevel())

    def _evaluate_core(self, bw, Xq, Yq):
        return _core.density_evaluate(**self._data_args(), bandwidth=np.asarray(bw, dtype=np.float64),
                                      X_new=Xq, y_new=Yq)

    def _queries(self, X_new, y_new=None):
        check_is_fitted(self, "_bw")
        est = type(self).__name__
        check_column_names(getattr(self, "_x_names", None), X_new, "X_new", est)
        refuse_time_columns(X_new, "X_new", est)
        Xq = self._xenc.transform(_checked_input(X_new, "X_new"), "X_new")
        if Xq.shape[1] != self._X.shape[1]:
            raise ValueError(
                f"X_new: has {Xq.shape[1]} columns but the model was fitted with {self._X.shape[1]} "
                f"(X has {Xq.shape[1]} features, but {est} is expecting {self._X.shape[1]} "
                "features as input; pass the same columns as in fit)"
            )
        if y_new is None:
            return Xq, None
        check_column_names(getattr(self, "_y_names", None), y_new, "y_new", est,
                           warn_unnamed=False)
        refuse_time_columns(y_new, "y_new", est)
        Yq = self._yenc.transform(_checked_input(y_new, "y_new"), "y_new")
        if Yq.shape[0] == 1 and Xq.shape[0] > 1:
            Yq = np.asfortranarray(np.repeat(Yq, Xq.shape[0], axis=0))
        elif Xq.shape[0] == 1 and Yq.shape[0] > 1:
            Xq = np.asfortranarray(np.repeat(Xq, Yq.shape[0], axis=0))
        return Xq, Yq


class KernelDensity(_KernelDensityBase):
    """Kernel density estimate ``f(x)`` for mixed data (R np's ``npudens``).

    Parameters
    ----------
    bandwidth : {"cv_ml", "cv_ls", "normal_reference"} or array-like
        Selector (see the module docstring) or one bandwidth per column.
    kernel : str
        Continuous kernel: gaussian (np's default), epanechnikov, uniform, triangular, biweight,
        triweight, tricube, cosine (densities on ``u = (x - X_i)/h``; np's Epanechnikov has unit
        variance, so an np bandwidth ``h_np`` is ``sqrt(5) h_np`` here), or gaussian4, the
        fourth-order Gaussian ``(3 - u^2)/2 phi(u)`` of np's ``ckerorder = 4`` (same h; Marron &
        Wand 1992): estimates can then be negative, and normal_reference refuses it.
    var_types : str, optional
        One of ``c``/``u``/``o`` per column; inferred from pandas dtypes, else all continuous.
    unordered_kernel : str, default="aitchison_aitken"
        ``aitchison_aitken`` (sums to one over the levels, as a density's kernel must; np's
        default), or ``li_racine`` where it cancels (below).
    ordered_kernel : str, default="li_racine_normalized" here, "li_racine" in the conditional
        estimators
        The kernel of ordered columns that the estimate is a density in (every column here):
        one that sums to one over the integers, ``li_racine_normalized``
        (``lambda^|d| (1 - lambda) / (1 + lambda)``, Li and Racine 2007, *Nonparametric
        Econometrics*, Princeton UP, normalised; np's ``npudens`` default: its ``okertype =
        "liracine"`` means this kernel on a density's column, named ``"nliracine"`` in np; that
        alias is accepted) or ``wang_van_ryzin``. The plain ``li_racine`` does not sum to one
        and is refused here. In :class:`ConditionalDensity`, :class:`ConditionalDistribution`
        and :class:`ConditionalQuantile` this option is the kernel of X's (conditioning) ordered
        columns, default ``li_racine`` as np's ``oxkertype``: the kernel enters
        ``f(x, y) / f(x)`` and ``F(y | x)`` in numerator and denominator alike and cancels, so it
        need not sum to one (``wang_van_ryzin`` and ``li_racine_normalized`` are accepted too;
        the latter gives the same estimate as ``li_racine``).
    n_starts, random_state, n_threads
        Search starts (the first at the normal-reference rule), their seed, and threads (0 = all).

    Attributes
    ----------
    bandwidth_ : ndarray or Series
        One bandwidth per column (named by column for DataFrames).
    objective_ : float
        The selector's objective at ``bandwidth_`` (cv_ml: minus the leave-one-out log
        likelihood; cv_ls: the cross-validated integrated squared error up to a constant; NaN
        for normal_reference and given bandwidths).
    converged_ : bool
        Whether the search ended at an optimum. False when a continuous bandwidth stopped at
        an end of its search box (1e-3 x the column's scale, 100 x its range), with a
        :class:`attnreg.BoundaryWarning` naming the column: on tied values (a rounded or
        discrete variable) both criteria fall without bound as h -> 0, so there is nothing to
        converge to; declare such a column discrete or pass a bandwidth.
    """

    _kind = "density"

    def __init__(self, bandwidth="cv_ml", kernel: str = "gaussian", var_types: str | None = None,
                 y_types: str | None = None, unordered_kernel: str = "aitchison_aitken",
                 ordered_kernel: str = "li_racine_normalized", n_starts: int = 3,
                 random_state: int = 0, n_threads: int = 0):
        # no response columns, so no y_ordered_kernel (scikit-learn: __init__ only stores)
        self.bandwidth = bandwidth
        self.kernel = kernel
        self.var_types = var_types
        self.y_types = y_types
        self.unordered_kernel = unordered_kernel
        self.ordered_kernel = ordered_kernel
        self.n_starts = n_starts
        self.random_state = random_state
        self.n_threads = n_threads

    def fit(self, X: ArrayLike, y=None) -> "KernelDensity":
        """Select the bandwidths (or check the given ones) on the rows of X."""
        return self._fit(X)

    def density(self, X_new: ArrayLike) -> np.ndarray:
        """``f(x)`` at each row of X_new."""
        Xq, _ = self._queries(X_new)
        return self._evaluate_core(self._bw, Xq, None)

    def log_density(self, X_new: ArrayLike) -> np.ndarray:
        """``log f(x)`` at each row of X_new (``-inf`` where the estimate is 0)."""
        with np.errstate(divide="ignore"):
            return np.log(self.density(X_new))

    def score(self, X: ArrayLike, y=None) -> float:
        """Total log density of the rows of X (sklearn's convention for density estimators)."""
        return float(np.sum(self.log_density(X)))


class ConditionalDensity(_KernelDensityBase):
    """Conditional density ``f(y | x) = f(x, y) / f(x)`` for mixed data (R np's ``npcdens``).

    Parameters as :class:`KernelDensity` (but ``ordered_kernel``, the kernel of X's ordered
    columns, defaults to ``"li_racine"``, np's ``oxkertype``), plus ``y_types`` (one of c/u/o
    per column of y) and ``y_ordered_kernel``, the kernel of y's ordered columns, which must sum
    to one over the integers: ``"li_racine_normalized"`` (default; np's ``oykertype =
    "liracine"`` default means this kernel on the response) or ``"wang_van_ryzin"``.
    ``bandwidth_`` holds X's columns, then y's.
    """

    _kind = "conditional_density"

    def fit(self, X: ArrayLike, y: ArrayLike) -> "ConditionalDensity":
        """Select the bandwidths of X's and y's columns."""
        return self._fit(X, y)

    def density(self, X_new: ArrayLike, y_new: ArrayLike) -> np.ndarray:
        """``f(y | x)`` at each pair of rows (a single row of either is repeated)."""
        Xq, Yq = self._queries(X_new, y_new)
        return self._evaluate_core(self._bw, Xq, Yq)

    def log_density(self, X_new: ArrayLike, y_new: ArrayLike) -> np.ndarray:
        """``log f(y | x)``."""
        with np.errstate(divide="ignore"):
            return np.log(self.density(X_new, y_new))


class ConditionalDistribution(_KernelDensityBase):
    """Conditional distribution function ``F(y | x)`` for mixed data (R np's ``npcdist``).

    ``F(y|x) = sum_i K(x, X_i) G(y, Y_i) / sum_i K(x, X_i)`` with ``G`` the integrated kernel
    (continuous y) or the kernel summed over the codes ``<= y`` (ordered y: over all integers
    for ``y_ordered_kernel="li_racine_normalized"``, the default, as np's ``npcdist``; over the
    observed levels for ``"wang_van_ryzin"``). Default bandwidth ``"cv_ls"`` (Li, Lin and
    Racine 2013), as np's ``npcdistbw``.
    """

    _kind = "conditional_distribution"

    def __init__(self, bandwidth="cv_ls", kernel: str = "gaussian", var_types: str | None = None,
                 y_types: str | None = None, unordered_kernel: str = "aitchison_aitken",
                 ordered_kernel: str = "li_racine", n_starts: int = 3,
                 random_state: int = 0, n_threads: int = 0,
                 y_ordered_kernel: str = "li_racine_normalized"):
        super().__init__(bandwidth=bandwidth, kernel=kernel, var_types=var_types, y_types=y_types,
                         unordered_kernel=unordered_kernel, ordered_kernel=ordered_kernel,
                         n_starts=n_starts, random_state=random_state, n_threads=n_threads,
                         y_ordered_kernel=y_ordered_kernel)

    def fit(self, X: ArrayLike, y: ArrayLike) -> "ConditionalDistribution":
        """Select the bandwidths of X's and y's columns."""
        return self._fit(X, y)

    def cdf(self, X_new: ArrayLike, y_new: ArrayLike) -> np.ndarray:
        """``F(y | x)`` at each pair of rows (a single row of either is repeated)."""
        Xq, Yq = self._queries(X_new, y_new)
        return self._evaluate_core(self._bw, Xq, Yq)


class ConditionalQuantile(ConditionalDistribution):
    """Conditional quantiles ``q_tau(x) = inf{y : F(y | x) >= tau}`` (R np's ``npqreg``), by
    bisection on the kernel conditional distribution function of one continuous y.
    """

    def fit(self, X: ArrayLike, y: ArrayLike) -> "ConditionalQuantile":
        """Select the bandwidths of ``F(y | x)``; y must be one continuous column."""
        import pandas as pd

        if isinstance(y, pd.DataFrame) and y.shape[1] != 1 or (
            not isinstance(y, (pd.Series, pd.DataFrame)) and np.ndim(y) == 2 and np.shape(y)[1] != 1
        ):
            raise ValueError("y: conditional quantiles need one continuous y column")
        return self._fit(X, y)

    @numbers_only("tau")
    def quantile(self, X_new: ArrayLike, tau: float | ArrayLike = 0.5) -> np.ndarray:
        """``q_tau(x)`` at each row of X_new: shape (n,) for a scalar tau, (n, len(tau)) for a
        list of levels. tau must lie strictly between 0 and 1."""
        Xq, _ = self._queries(X_new)
        t = np.asarray(tau, dtype=np.float64)
        if t.ndim == 0:
            return _core.density_quantile(**self._data_args(), bandwidth=self._bw, X_new=Xq,
                                          tau=np.array([float(t)]))
        if t.ndim != 1:
            raise ValueError(f"tau: expected a number or a 1-D list of levels, got shape {t.shape}")
        cols = [_core.density_quantile(**self._data_args(), bandwidth=self._bw, X_new=Xq,
                                       tau=np.array([v])) for v in t]
        return np.column_stack(cols) if cols else np.empty((Xq.shape[0], 0))
