"""Local polynomials of any degree, and the partially linear and smooth-coefficient models.

* :class:`LocalPolynomial` -- kernel regression with a local polynomial of degree p (0 is
  Nadaraya-Watson, 1 local linear, 2 local quadratic in any number of continuous columns, 3
  local cubic in one), derivatives up to order p, data-driven bandwidths and attention weights.
* :class:`PartiallyLinear` -- ``y = X'beta + g(Z) + e`` by Robinson's (1988, Econometrica
  56(4), 931-954) double residual, as R np's ``npplreg``.
* :class:`SmoothCoefficient` -- ``y = W'beta(Z) + e``, ``W = (1, X)``, by kernel-weighted least
  squares (Cai, Fan and Yao 2000, JASA 95, 941-956; Li and Racine 2010, Econometric Theory 26,
  1607-1637), as R np's ``npscoef``.

Everything numeric happens in the C++ core; these classes convert and validate.
"""
from __future__ import annotations

import numbers

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from . import _core
from ._validation import (checked_input, check_column_names, column_names, numbers_only,
                          refuse_non_number_params, refuse_time_columns)
from ._encoding import encode_frame_columns, resolve_var_types
from .kernel import _KernelRegression

_LP_SELECTORS = ("cv_ls", "aic", "gcv")
_COV_TYPES = ("nonrobust", "HC0", "HC1", "HC2", "HC3")


def _selector_key(bw) -> str:
    key = str(bw).lower().replace(".", "_")
    return {"cv_aic": "aic"}.get(key, key)


def _result(d: dict, estimator: str, kernel: str):
    from .bandwidth import BandwidthResult

    grid = np.asarray(d["curve_grid"]).ravel()
    curve = (grid, np.asarray(d["curve_values"]).ravel()) if grid.size else None
    return BandwidthResult(
        bandwidth=np.asarray(d["bandwidth"]).ravel(), objective=float(d["objective"]),
        n_evals=int(d["n_evals"]), converged=bool(d["converged"]), method=str(d["method"]),
        message=str(d["message"]), lower=np.asarray(d["lower"]).ravel(),
        upper=np.asarray(d["upper"]).ravel(), curve=curve, estimator=estimator,
        kernel=str(kernel), at_bound=np.asarray(d.get("at_bound", []), dtype=np.int64).ravel())


class LocalPolynomial(_KernelRegression):
    """Local polynomial kernel regression of degree ``p``.

    At each query x the fit minimises ``sum_i w_i(x) (y_i - P(x_i - x))^2`` over polynomials P of
    degree p in the continuous columns (Fan and Gijbels 1996, Local Polynomial Modelling and Its
    Applications, ch. 3), with the product kernel weights ``w_i(x)`` of
    :class:`NadarayaWatson`; ``predict`` returns P(0). Degree 0 is exactly
    :class:`NadarayaWatson` and degree 1 exactly :class:`LocalLinear` (same fits, same selected
    bandwidths). Degree 2 takes any number of continuous columns (all squares and cross
    products), degree 3 exactly one. Categorical columns enter only through the weights. Like
    every estimator here it is linear in y: ``attention_weights(X) @ y_train == predict(X)``, the
    rows sum to one.

    Parameters
    ----------
    degree : int, default=1
        0, 1, 2 or 3.
    kernel, var_types, unordered_kernel, ordered_kernel, n_threads
        As for :class:`NadarayaWatson`.
    bandwidth : float, array-like or str, default="cv_ls"
        h per column (lambda for categorical ones), or a selector. Degrees 0 and 1: every
        selector of :func:`attnreg.select_bandwidth`. Degrees 2 and 3: "cv_ls" (exact
        leave-one-out cross-validation), "aic" (AICc of Hurvich, Simonoff and Tsai 1998) or "gcv".
    ridge : float, default=0.0
        lambda >= 0 on the non-constant local coefficients, scaled by the weight sum (as
        :class:`LocalLinear`).

    Attributes
    ----------
    bandwidth_, var_types_, effective_df_, leverage_, cv_score_, bandwidth_result_
        As for :class:`NadarayaWatson`.

    Examples
    --------
    >>> import numpy as np, attnreg
    >>> X = np.linspace(0, 1, 60).reshape(-1, 1); y = X[:, 0] ** 2
    >>> m = attnreg.LocalPolynomial(degree=2, bandwidth=0.2).fit(X, y)
    >>> float(np.round(m.derivative([[0.5]], order=2)[0, 0], 8))
    2.0
    """

    # Local polynomial fits are exact sums (the binned approximation is an option of
    # NadarayaWatson and LocalLinear); the shared fit code reads these two.
    approx = "exact"
    grid_size = None

    def __init__(self, degree: int = 1, kernel: str = "gaussian",
                 bandwidth: float | str | ArrayLike = "cv_ls", ridge: float = 0.0,
                 var_types: str | None = None, unordered_kernel: str = "aitchison_aitken",
                 ordered_kernel: str = "li_racine", n_threads: int = 0):
        self.degree = degree
        self.kernel = kernel
        self.bandwidth = bandwidth
        self.ridge = ridge
        self.var_types = var_types
        self.unordered_kernel = unordered_kernel
        self.ordered_kernel = ordered_kernel
        self.n_threads = n_threads

    @property
    def _degree(self) -> int:
        p = self.degree
        if isinstance(p, bool) or not isinstance(p, numbers.Integral) or not 0 <= p <= 3:
            raise ValueError(
                f"degree: must be 0 (local constant), 1 (local linear), 2 (local quadratic) or "
                f"3 (local cubic, one continuous column), got {p!r}")
        return int(p)

    def fit(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None):
        """Fit (selecting the bandwidth first when it is a selector name); see
        :meth:`NadarayaWatson.fit`."""
        refuse_non_number_params(self)
        self._degree  # noqa: B018 - validates degree before any work
        return super().fit(X, y, sample_weight)

    def _resolve_bandwidth(self, var_types, X=None, y2=None, sample_weight=None):
        bw = self.bandwidth
        if self._degree <= 1 or not isinstance(bw, str):
            return super()._resolve_bandwidth(var_types, X, y2, sample_weight)
        self.bandwidth_result_ = None
        key = _selector_key(bw)
        if key not in _LP_SELECTORS:
            raise ValueError(
                f"bandwidth: {bw!r} is not a selector for degree {self._degree}; pass a positive "
                f"number, one number per column, or one of {', '.join(_LP_SELECTORS)} (rot and "
                "dpi are rules for degrees 0 and 1)")
        if y2.shape[1] != 1:
            raise ValueError(
                f"bandwidth={bw!r}: data-driven selection needs a single output (y has "
                f"{y2.shape[1]} columns); pass numbers")
        if X.shape[0] < 5:
            raise ValueError(
                f"X: bandwidth={bw!r} needs at least 5 rows to select a bandwidth, got "
                f"n_samples = {X.shape[0]}; pass a bandwidth by hand")
        if sample_weight is not None and np.ptp(sample_weight) > 0:
            raise ValueError(
                f"sample_weight: bandwidth={bw!r} selection does not use unequal sample weights; "
                "pass the bandwidth as numbers, or use equal weights")
        from .bandwidth import _warn_boundary

        d = _core.select_local_polynomial_bandwidth(
            np.asarray(X, dtype=np.float64), y2[:, 0], self._degree, key, str(self.kernel),
            var_types, str(self.unordered_kernel), str(self.ordered_kernel), float(self.ridge),
            3, 0, 30, int(self.n_threads))
        res = _result(d, f"degree {self._degree}", str(self.kernel))
        self.bandwidth_result_ = res
        names = list(X.columns) if hasattr(X, "columns") else None
        _warn_boundary(res, names, var_types, f"LocalPolynomial(bandwidth={bw!r})")
        return res.bandwidth

    def derivative(self, X: ArrayLike, order: int = 1) -> np.ndarray:
        """Pure partial derivatives ``d^s m / dx_j^s`` (s = ``order``) at new rows.

        ``m^(s)(x) = s! beta_s`` from the local coefficients (Fan and Gijbels 1996, section 3.1);
        order 1 is the gradient (marginal effects), order 0 the fit itself.

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (m, n_features)
        order : int, default=1
            0 <= order <= degree.

        Returns
        -------
        ndarray of shape (m, n_features) or (m, n_outputs, n_features)
            Categorical columns have no derivative and hold nan.
        """
        if isinstance(order, bool) or not isinstance(order, numbers.Integral):
            raise ValueError(f"order: must be an integer between 0 and the degree, got {order!r}")
        X = self._check_X(X)
        G = _core.local_polynomial_derivative(self._model, X, int(order))  # (m, d, k)
        return G[:, :, 0] if self._y_1d else np.transpose(G, (0, 2, 1))

    def gradient(self, X: ArrayLike, return_se: bool = False, **kwargs):
        """Marginal effects ``d m / d x_j`` at new rows.

        Degrees 0 and 1 are :meth:`NadarayaWatson.gradient` and :meth:`LocalLinear.gradient`
        (with their standard errors: ``return_se``, ``se``, ``n_boot``, ``random_state``);
        degrees 2 and 3 return ``derivative(X, order=1)`` (no standard errors yet).
        """
        if self._degree <= 1:
            return super().gradient(X, return_se, **kwargs)
        if return_se or kwargs:
            raise ValueError(
                f"return_se: standard errors of gradients are available for degrees 0 and 1; "
                f"this fit has degree {self._degree} (call gradient(X) for the slopes)")
        return self.derivative(X, order=1)

    @numbers_only("output")
    def hessian(self, X: ArrayLike, output: int = 0) -> np.ndarray:
        """Second derivatives ``d^2 m / dx_a dx_b`` over the continuous columns (degree >= 2).

        Returns an array of shape (m, c, c), c the number of continuous columns (in column
        order), for output ``output``."""
        X = self._check_X(X)
        return _core.local_polynomial_hessian(self._model, X, int(output))


# ---------------------------------------------------------------------- semiparametric models

class _ZEncoder:
    """Categorical columns of a Z DataFrame -> codes, as the kernel estimators encode X."""

    def _encode_z(self, Z, fitting: bool):
        return encode_frame_columns(self, checked_input(Z, "Z"), fitting, "Z")

    def _z_var_types(self, inferred, n: int) -> str:
        return resolve_var_types(self.var_types, inferred, n)

    # Pickling: the core model is rebuilt from the training data at the fitted bandwidths (no
    # selection runs again), which reproduces it exactly.
    def __getstate__(self):
        state = self.__dict__.copy()
        state.pop("_model", None)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        if "_train" in state:
            self._model = self._rebuild(*state["_train"])


def _check_names(est, X, Z) -> None:
    """Columns of X and Z at prediction: fit's names in fit's order (the regressors' rule)."""
    name = type(est).__name__
    _no_times(est, X, Z)
    if X is not None:
        check_column_names(getattr(est, "_x_cols", None), X, "X", name)
    if Z is not None:
        check_column_names(getattr(est, "_z_cols", None), Z, "Z", name)


def _no_times(est, X, Z) -> None:
    for arg, A in (("X", X), ("Z", Z)):
        if A is not None:
            refuse_time_columns(A, arg, type(est).__name__)


def _as_2d(A, name: str) -> np.ndarray:
    a = np.asarray(A, dtype=np.float64)
    if a.ndim == 1:
        a = a.reshape(-1, 1)
    if a.ndim != 2:
        raise ValueError(f"{name}: expected a 2-D array (n_samples, n_columns), got {a.ndim}-D")
    if not np.all(np.isfinite(a)):
        r, c = np.argwhere(~np.isfinite(a))[0]
        raise ValueError(f"{name}: contains NaN or Inf at row {r + 1}, column {c + 1}; remove or "
                         "impute missing values first")
    return a


def _names(A):
    if hasattr(A, "columns"):
        return [str(c) for c in A.columns]
    if getattr(A, "name", None) is not None and np.ndim(A) == 1:
        return [str(A.name)]
    return None


def _numeric_x(X, name: str = "X", fitting: bool = False) -> np.ndarray:
    """The linear part: numbers only, 2-D (scikit-learn's convention for X), finite; at fit
    at least two rows (one row has no residual)."""
    if hasattr(X, "dtypes"):
        import pandas as pd

        if isinstance(X, pd.Series):
            X = X.to_frame()
        bad = [c for c in X.columns if not pd.api.types.is_numeric_dtype(X[c].dtype)
               or pd.api.types.is_bool_dtype(X[c].dtype)]
        if bad:
            raise ValueError(
                f"{name}: column {bad[0]!r} is not numeric; the linear part needs numbers (code "
                "a factor as 0/1 dummies, e.g. with pandas.get_dummies(drop_first=True))")
    else:
        X = checked_input(X, name, ensure_2d=True, min_samples=2 if fitting else 0)
    return _as_2d(X, name)


def _check_n_features(est, Xa) -> None:
    """Rows at prediction have the columns of fit (scikit-learn's message)."""
    if Xa.shape[1] != est.n_features_in_:
        raise ValueError(
            f"X: X has {Xa.shape[1]} features, but {type(est).__name__} is expecting "
            f"{est.n_features_in_} features as input (pass the columns of fit)")


class PartiallyLinear(_ZEncoder, BaseEstimator):
    """Partially linear regression ``y = X'beta + g(Z) + e`` (Robinson 1988).

    Robinson's (1988, Econometrica 56(4), 931-954) double residual: the conditional means
    ``m_y(z) = E[y|Z=z]`` and ``m_j(z) = E[X_j|Z=z]`` are kernel regressions on Z, each with its
    own bandwidths; beta is the OLS slope (no intercept: a constant belongs to g) of
    ``y - m_y(Z)`` on ``X - m_X(Z)``. This is R np's ``npplreg`` (whose defaults it follows:
    local-constant conditional means, least-squares cross-validated bandwidths per conditional
    mean, fitted residuals). Predictions are ``m_y(z) + (x - m_X(z))'beta``.

    Parameters
    ----------
    bandwidth : str or array-like, default="cv_ls"
        A selector for every conditional mean ("cv_ls", "aic", "gcv", "rot"), or the bandwidths
        as an array of shape (1 + k, d_Z): row 0 for E[y|Z], row j for E[X_j|Z].
    degree : int, default=0
        Conditional means by local constant (0, np's default) or local linear (1) regression.
    kernel, var_types, unordered_kernel, ordered_kernel
        The kernel over Z (``var_types`` describes the columns of Z; pandas categoricals infer
        it), as in :class:`NadarayaWatson`.
    cov_type : {"HC3", "HC0", "HC1", "HC2", "nonrobust"}, default="HC3"
        Standard errors of beta: White's sandwich on the residual regression, or "nonrobust",
        npplreg's ``sigma^2 (e_X'e_X)^{-1}`` with ``sigma^2 = RSS / (n - k - d_Z)``.
    n_threads : int, default=0
    z_columns : int, str or list of them, default=None
        Which columns of X are Z when ``fit`` gets no ``Z=`` (scikit-learn's one-matrix form,
        as in a Pipeline or GridSearchCV): positions (negative ones count from the end) or,
        for a DataFrame, column names; the other columns are the linear part. None: the last
        column of X is Z. ``predict`` then takes the same X. Passing ``Z=`` to ``fit`` as well
        is an error.

    Attributes
    ----------
    coef_ : ndarray of shape (k,)
    coef_se_ : ndarray of shape (k,), standard errors under ``cov_type``.
    cov_ : ndarray of shape (k, k)
    bandwidth_ : ndarray of shape (1 + k, d_Z); rows E[y|Z], E[X_1|Z], ...; columns of Z.
    objective_ : ndarray of shape (1 + k,), each selector's objective (nan when given).
    bandwidth_results_ : list of BandwidthResult (empty when the bandwidths were given).
    feature_names_in_, z_names_in_ : names of the columns of X and Z (when DataFrames); at
        prediction a DataFrame must have these columns in this order.
    sigma2_, r_squared_ : npplreg's residual variance and R^2; R^2 as np defines it, the
        squared correlation of y and the fitted values, both centred at the mean of y:
        ``(sum (y - ybar)(f - ybar))^2 / (sum (y - ybar)^2 sum (f - ybar)^2)`` (not
        1 - RSS/TSS: the fit is not a projection of y).

    Examples
    --------
    >>> import numpy as np, attnreg
    >>> rng = np.random.default_rng(0); n = 300
    >>> Z = rng.uniform(size=(n, 1)); X = rng.normal(size=(n, 1)) + Z
    >>> y = 2 * X[:, 0] + np.sin(6 * Z[:, 0]) + rng.normal(0, 0.1, n)
    >>> m = attnreg.PartiallyLinear().fit(X, y, Z=Z)
    >>> bool(abs(m.coef_[0] - 2) < 0.05)
    True
    """

    def __init__(self, bandwidth="cv_ls", degree: int = 0, kernel: str = "gaussian",
                 var_types: str | None = None, unordered_kernel: str = "aitchison_aitken",
                 ordered_kernel: str = "li_racine", cov_type: str = "HC3", n_threads: int = 0,
                 z_columns=None):
        self.bandwidth = bandwidth
        self.degree = degree
        self.z_columns = z_columns
        self.kernel = kernel
        self.var_types = var_types
        self.unordered_kernel = unordered_kernel
        self.ordered_kernel = ordered_kernel
        self.cov_type = cov_type
        self.n_threads = n_threads

    def _cov_key(self, cov_type) -> str:
        key = {"classical": "nonrobust", "const": "nonrobust"}.get(str(cov_type).lower(),
                                                                    str(cov_type))
        key = key.upper() if key.lower().startswith("hc") else key.lower()
        if key not in _COV_TYPES:
            raise ValueError(f"cov_type: {cov_type!r} is not one of {', '.join(_COV_TYPES)}")
        return key

    def fit(self, X: ArrayLike, y: ArrayLike, Z: ArrayLike = None) -> PartiallyLinear:
        """Fit the model.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n, k)
            The linear part (numeric columns; code factors as dummies).
        y : array-like of shape (n,)
        Z : array-like or DataFrame of shape (n, d_Z), optional
            The nonparametric part; must not share a column with X. Without it, the columns
            of X named by ``z_columns`` (the last one by default) are Z.
        """
        refuse_non_number_params(self)
        X_in, self._z_from_x = X, Z is None
        if Z is None:
            _no_times(self, X, None)
            X, Z = self._split_z(X, fitting=True)
        elif self.z_columns is not None:
            raise ValueError("z_columns: names the columns of X that are Z, but Z= was passed "
                             "too; give one of them")
        _no_times(self, X, Z)
        if self.degree not in (0, 1) or isinstance(self.degree, bool):
            raise ValueError(f"degree: must be 0 (local constant) or 1 (local linear), got "
                             f"{self.degree!r}")
        cov = self._cov_key(self.cov_type)
        xn, zn = _names(X), _names(Z)
        if xn is not None and zn is not None:
            shared = [c for c in xn if c in zn]
            if shared:
                raise ValueError(
                    f"Z: column {shared[0]!r} is also in X; a regressor is either linear (X) or "
                    "nonparametric (Z), not both (drop it from one of them)")
        Xa = _numeric_x(X, fitting=True)
        Ze, inferred = self._encode_z(Z, fitting=True)
        Za = _as_2d(Ze, "Z")
        ya = np.asarray(y, dtype=np.float64)
        if ya.ndim == 2 and ya.shape[1] == 1:
            ya = ya[:, 0]
        if ya.ndim != 1:
            raise ValueError("y: expected one response per row (shape (n_samples,))")
        if not (Xa.shape[0] == ya.shape[0] == Za.shape[0]):
            raise ValueError(f"y, Z: need one row per row of X ({Xa.shape[0]}), got "
                             f"{ya.shape[0]} and {Za.shape[0]}")
        vt = self._z_var_types(inferred, Za.shape[1])
        k = Xa.shape[1]
        bw = self.bandwidth
        if isinstance(bw, str):
            method, bwm = _selector_key(bw), None
            if method not in ("cv_ls", "aic", "gcv", "rot"):
                raise ValueError(f"bandwidth: unknown selector {bw!r}; use cv_ls, aic, gcv or "
                                 "rot, or pass a (1 + k, d_Z) array")
        else:
            method = "cv_ls"
            bwm = np.asarray(bw, dtype=np.float64)
            if bwm.ndim == 1 and Za.shape[1] == 1:
                bwm = bwm.reshape(-1, 1)
            if bwm.ndim != 2 or bwm.shape != (1 + k, Za.shape[1]):
                raise ValueError(
                    f"bandwidth: needs shape (1 + k, d_Z) = ({1 + k}, {Za.shape[1]}): row 0 for "
                    f"E[y|Z], row j for E[X_j|Z]; got {np.shape(bw)}")
        core = _core.PartiallyLinear(int(self.degree), str(self.kernel), vt,
                                     str(self.unordered_kernel), str(self.ordered_kernel), method,
                                     3, int(self.n_threads))
        core.fit(Xa, ya, Za, bwm)
        self._model = core
        self._train = (Xa, ya, Za)
        self.var_types_ = vt
        self.n_features_in_ = np.shape(X_in)[1] if self._z_from_x else k
        self._linear_names = xn
        all_names = _names(X_in) if self._z_from_x else xn
        if all_names is not None:
            self.feature_names_in_ = np.asarray(all_names, dtype=object)
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        self.z_names_in_ = None if zn is None else np.asarray(zn, dtype=object)
        # for _check_names: the columns of the X of fit (all of them when Z came from X)
        self._x_cols, self._z_cols = column_names(X_in), column_names(Z)
        self.coef_ = core.coefficients().ravel()
        self.cov_ = core.covariance(cov)
        self.coef_se_ = np.sqrt(np.diag(self.cov_))
        self.bandwidth_ = core.bandwidth()
        self.objective_ = core.objective().ravel()
        self.bandwidth_results_ = [
            _result(d, "ll" if self.degree == 1 else "lc", str(self.kernel))
            for d in core.selection()]
        from .bandwidth import _warn_boundary

        labels = ["y"] + (xn if xn is not None else [f"X{j + 1}" for j in range(k)])
        for lab, res in zip(labels, self.bandwidth_results_):
            _warn_boundary(res, zn, vt, f"PartiallyLinear: E[{lab}|Z]")
        self.sigma2_ = float(core.sigma2())
        self.r_squared_ = float(core.r_squared())
        self.n_obs_ = Xa.shape[0]
        return self

    def _rebuild(self, Xa, ya, Za):
        core = _core.PartiallyLinear(int(self.degree), str(self.kernel), self.var_types_,
                                     str(self.unordered_kernel), str(self.ordered_kernel),
                                     "cv_ls", 3, int(self.n_threads))
        core.fit(Xa, ya, Za, self.bandwidth_)
        return core

    def _split_z(self, X, fitting: bool):
        """(linear part, Z) from one X, the Z columns named by ``z_columns``."""
        import pandas as pd

        frame = isinstance(X, pd.DataFrame)
        A = X if frame else checked_input(X, "X", ensure_2d=True, min_samples=2 if fitting else 0)
        d = A.shape[1]
        spec = -1 if self.z_columns is None else self.z_columns
        items = list(spec) if isinstance(spec, (list, tuple, np.ndarray)) else [spec]
        cols = list(X.columns) if frame else []
        pos = []
        for c in items:
            if isinstance(c, numbers.Integral) and not isinstance(c, bool):
                if not -d <= c < d:
                    raise ValueError(f"z_columns: position {c} is outside the {d} columns of X "
                                     f"(n_features = {d})")
                pos.append(int(c) % d)
            elif frame and c in cols:
                pos.append(cols.index(c))
            else:
                raise ValueError(f"z_columns: {c!r} is not a column of X (give positions, or "
                                 "the names of a DataFrame's columns)")
        if len(set(pos)) != len(pos):
            raise ValueError(f"z_columns: {spec!r} names a column twice")
        lin = [j for j in range(d) if j not in pos]
        if not lin:
            raise ValueError(f"X: n_features = {d}, all of them Z (z_columns={spec!r}); the "
                             "partially linear model needs a linear column besides Z (or pass "
                             "Z= to fit)")
        if frame:
            return X.iloc[:, lin], X.iloc[:, pos]
        return A[:, lin], A[:, pos]

    def _check_xz(self, X, Z):
        check_is_fitted(self)
        if getattr(self, "_z_from_x", False):
            if Z is not None:
                raise ValueError("Z: the model took Z from the columns of X (z_columns); pass "
                                 "X with the columns of fit and no Z")
            _check_names(self, X, None)
            X = X if hasattr(X, "columns") else checked_input(X, "X", ensure_2d=True)
            _check_n_features(self, X)
            X, Z = self._split_z(X, fitting=False)
            Ze, _ = self._encode_z(Z, fitting=False)
            return _numeric_x(X), _as_2d(Ze, "Z")
        if Z is None:
            raise ValueError("Z: the nonparametric regressors are required: predict(X, Z=Z)")
        _check_names(self, X, Z)
        Xa = _numeric_x(X)
        _check_n_features(self, Xa)
        Ze, _ = self._encode_z(Z, fitting=False)
        return Xa, _as_2d(Ze, "Z")

    def predict(self, X: ArrayLike, Z: ArrayLike = None) -> np.ndarray:
        """``m_y(z) + (x - m_X(z))'beta`` at new rows (npplreg's fitted values at the training
        rows)."""
        Xa, Za = self._check_xz(X, Z)
        return self._model.predict(Xa, Za).ravel()

    def g(self, Z: ArrayLike) -> np.ndarray:
        """The nonparametric part ``g(z) = m_y(z) - m_X(z)'beta`` at new rows of Z."""
        check_is_fitted(self)
        _check_names(self, None, Z)
        Ze, _ = self._encode_z(Z, fitting=False)
        return self._model.g(_as_2d(Ze, "Z")).ravel()

    def fitted_values(self) -> np.ndarray:
        """In-sample fits ``X_i'beta + g(Z_i)``, shape (n,)."""
        check_is_fitted(self)
        return self._model.fitted().ravel()

    def residuals(self) -> np.ndarray:
        """In-sample residuals ``y_i - X_i'beta - g(Z_i)``, shape (n,)."""
        check_is_fitted(self)
        return self._model.residuals().ravel()

    def coef_table(self, cov_type: str | None = None):
        """Estimate, standard error, t value and two-sided p value (Student t with
        n - k - d_Z degrees of freedom) of each coefficient, as a pandas DataFrame."""
        import pandas as pd

        check_is_fitted(self)
        cov = self.cov_ if cov_type is None else self._model.covariance(self._cov_key(cov_type))
        se = np.sqrt(np.diag(cov))
        t = self.coef_ / se
        df = self.n_obs_ - self.coef_.size - self.bandwidth_.shape[1]
        lin = getattr(self, "_linear_names", None)
        if lin is None and not getattr(self, "_z_from_x", False):
            lin = getattr(self, "feature_names_in_", None)
        names = list(lin) if lin is not None else [f"X{j + 1}" for j in range(self.coef_.size)]
        return pd.DataFrame({"estimate": self.coef_, "std_error": se, "t_value": t,
                             "p_value": [2 * _core.student_t_sf(abs(float(v)), float(df))
                                         for v in t]}, index=names)

    def summary(self) -> str:
        """A printable summary: coefficients with standard errors, bandwidths, R^2."""
        check_is_fitted(self)
        tab = self.coef_table()
        zn = (list(self.z_names_in_) if self.z_names_in_ is not None
              else [f"Z{j + 1}" for j in range(self.bandwidth_.shape[1])])
        xn = list(tab.index)
        lines = [
            "Partially linear model (Robinson 1988 double residual)",
            f"n = {self.n_obs_}, {len(xn)} linear regressor(s), {len(zn)} nonparametric "
            f"regressor(s); conditional means: {'local linear' if self.degree == 1 else 'local constant'}, "
            f"{self.kernel} kernel",
            "",
            f"Coefficients (standard errors: {self._cov_key(self.cov_type)}):",
            tab.to_string(float_format=lambda v: f"{v:.6g}"),
            "",
            "Bandwidths (rows: conditional mean; columns: Z):",
        ]
        import pandas as pd

        lines.append(pd.DataFrame(self.bandwidth_, index=["y"] + xn, columns=zn).to_string(
            float_format=lambda v: f"{v:.6g}"))
        lines += ["", f"Residual standard error: {np.sqrt(self.sigma2_):.6g} on "
                  f"{self.n_obs_ - len(xn) - len(zn)} degrees of freedom",
                  f"R-squared: {self.r_squared_:.6g}"]
        return "\n".join(lines)


class SmoothCoefficient(_ZEncoder, BaseEstimator):
    """Smooth-coefficient regression ``y = W'beta(Z) + e`` with ``W = (1, X)``.

    At z, ``beta(z) = argmin_b sum_i K_h(Z_i, z) (y_i - W_i'b)^2`` (kernel-weighted least
    squares; Cai, Fan and Yao 2000, JASA 95, 941-956; Li and Racine 2010, Econometric Theory 26,
    1607-1637), as R np's ``npscoef``. Bandwidths over Z by least-squares cross-validation (the
    exact leave-one-out fit ``W_i'beta_{-i}(Z_i)``). Without Z, the coefficients vary with X
    itself (Z = X, as npscoef).

    Parameters
    ----------
    bandwidth : "cv_ls", float or array-like of shape (d_Z,), default="cv_ls"
    kernel, var_types, unordered_kernel, ordered_kernel
        The kernel over Z, as in :class:`NadarayaWatson`.
    fit_intercept : bool, default=True
        Include the varying intercept (the column of ones in W).
    n_threads : int, default=0

    Attributes
    ----------
    bandwidth_ : ndarray of shape (d_Z,)
    cv_score_ : float, the leave-one-out mean squared error at ``bandwidth_``.
    bandwidth_result_ : BandwidthResult or None.
    feature_names_in_, z_names_in_ : names of the columns of X and Z (when DataFrames); at
        prediction a DataFrame must have these columns in this order.

    Examples
    --------
    >>> import numpy as np, attnreg
    >>> rng = np.random.default_rng(1); n = 300
    >>> Z = rng.uniform(size=(n, 1)); X = rng.normal(size=(n, 1))
    >>> y = 1 + (1 + Z[:, 0]) * X[:, 0] + rng.normal(0, 0.1, n)
    >>> m = attnreg.SmoothCoefficient().fit(X, y, Z=Z)
    >>> b = m.coefficients([[0.5]]); bool(abs(b[0, 1] - 1.5) < 0.1)
    True
    """

    def __init__(self, bandwidth="cv_ls", kernel: str = "gaussian", var_types: str | None = None,
                 unordered_kernel: str = "aitchison_aitken", ordered_kernel: str = "li_racine",
                 fit_intercept: bool = True, n_threads: int = 0):
        self.bandwidth = bandwidth
        self.kernel = kernel
        self.var_types = var_types
        self.unordered_kernel = unordered_kernel
        self.ordered_kernel = ordered_kernel
        self.fit_intercept = fit_intercept
        self.n_threads = n_threads

    def fit(self, X: ArrayLike, y: ArrayLike, Z: ArrayLike = None) -> SmoothCoefficient:
        """Fit the model (Z = X when Z is None)."""
        refuse_non_number_params(self)
        _no_times(self, X, Z)
        Xa = _numeric_x(X, fitting=True)
        Ze, inferred = self._encode_z(X if Z is None else Z, fitting=True)
        Za = _as_2d(Ze, "Z")
        ya = np.asarray(y, dtype=np.float64)
        if ya.ndim == 2 and ya.shape[1] == 1:
            ya = ya[:, 0]
        if ya.ndim != 1:
            raise ValueError("y: expected one response per row (shape (n_samples,))")
        if not (Xa.shape[0] == ya.shape[0] == Za.shape[0]):
            raise ValueError(f"y, Z: need one row per row of X ({Xa.shape[0]}), got "
                             f"{ya.shape[0]} and {Za.shape[0]}")
        vt = self._z_var_types(inferred, Za.shape[1])
        self._z_is_x = Z is None
        bw = self.bandwidth
        self.bandwidth_result_ = None
        if isinstance(bw, str):
            if _selector_key(bw) != "cv_ls":
                raise ValueError(f"bandwidth: unknown selector {bw!r}; use 'cv_ls' or pass "
                                 "numbers (one per column of Z)")
            if Za.shape[0] < 5:  # as the kernel regressions word it
                raise ValueError(
                    f"X: bandwidth={bw!r} needs at least 5 rows to select a bandwidth, got "
                    f"n_samples = {Za.shape[0]}; pass a bandwidth by hand")
            d = _core.select_smooth_coefficient_bandwidth(
                Xa, ya, Za, str(self.kernel), vt, str(self.unordered_kernel),
                str(self.ordered_kernel), bool(self.fit_intercept), int(self.n_threads), 3, 30)
            res = _result(d, "scoef", str(self.kernel))
            self.bandwidth_result_ = res
            from .bandwidth import _warn_boundary

            _warn_boundary(res, _names(X if Z is None else Z), vt,
                           f"SmoothCoefficient(bandwidth={bw!r})")
            bwv = res.bandwidth
        else:
            bwv = np.atleast_1d(np.asarray(bw, dtype=np.float64)).ravel()
        core = _core.SmoothCoefficient(str(self.kernel), vt, str(self.unordered_kernel),
                                       str(self.ordered_kernel), bool(self.fit_intercept),
                                       int(self.n_threads))
        core.fit(Xa, ya, Za, bwv)
        self._model = core
        self._train = (Xa, ya, Za)
        self.var_types_ = vt
        self.n_features_in_ = Xa.shape[1]
        xn = _names(X)
        if xn is not None:
            self.feature_names_in_ = np.asarray(xn, dtype=object)
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        zn = xn if Z is None else _names(Z)
        self.z_names_in_ = None if zn is None else np.asarray(zn, dtype=object)
        self._x_cols = column_names(X)  # for _check_names
        self._z_cols = self._x_cols if Z is None else column_names(Z)
        self.bandwidth_ = core.bandwidth().ravel()
        self.cv_score_ = float(core.cv_score())
        return self

    def _rebuild(self, Xa, ya, Za):
        core = _core.SmoothCoefficient(str(self.kernel), self.var_types_,
                                       str(self.unordered_kernel), str(self.ordered_kernel),
                                       bool(self.fit_intercept), int(self.n_threads))
        core.fit(Xa, ya, Za, self.bandwidth_)
        return core

    def coefficients(self, Z: ArrayLike, return_se: bool = False):
        """beta(z) at new rows of Z: shape (m, 1 + k) with the intercept first (or (m, k)
        without it).

        With ``return_se=True`` returns ``(beta, se)``: ``beta(z) = A(z) y`` is linear in y,
        ``A(z) = M_WW(z)^{-1} [K_h(Z_i, z) W_i]_i``, so its covariance is
        ``A(z) diag(sigma_i^2) A(z)'``; with the squared residuals ``e_i^2`` of the fit for
        ``sigma_i^2`` this is the kernel-weighted sandwich
        ``M_WW^{-1} (sum_i K_h(Z_i, z)^2 e_i^2 W_i W_i') M_WW^{-1}`` (heteroskedasticity-robust;
        Cai, Fan and Yao 2000, JASA 95, 941-956, §2.3; Fan and Zhang 2008, Statistics and Its
        Interface 1, 179-195), and ``se`` (same shape as ``beta``) the square roots of its
        diagonal. Like every plug-in variance of a kernel fit it ignores the smoothing bias.
        """
        check_is_fitted(self)
        _check_names(self, None, Z)
        Ze, _ = self._encode_z(Z, fitting=False)
        Za = _as_2d(Ze, "Z")
        beta = self._model.coefficients(Za)
        if not return_se:
            return beta
        return beta, self._model.coefficient_se(Za)

    def predict(self, X: ArrayLike, Z: ArrayLike = None) -> np.ndarray:
        """``W(x)'beta(z)`` at new rows (Z = X when the model was fitted without Z)."""
        check_is_fitted(self)
        if Z is None and not self._z_is_x:
            raise ValueError("Z: the model was fitted with Z; predict(X, Z=Z)")
        _check_names(self, X, X if Z is None else Z)
        Xa = _numeric_x(X)
        _check_n_features(self, Xa)
        Ze, _ = self._encode_z(X if Z is None else Z, fitting=False)
        return self._model.predict(Xa, _as_2d(Ze, "Z")).ravel()

    def fitted_values(self) -> np.ndarray:
        """In-sample fits ``X_i'beta(Z_i)``, shape (n,)."""
        check_is_fitted(self)
        return self._model.fitted().ravel()

    def loo_predictions(self) -> np.ndarray:
        """Exact leave-one-out fits ``W_i'beta_{-i}(Z_i)``."""
        check_is_fitted(self)
        return self._model.loo_fitted().ravel()
