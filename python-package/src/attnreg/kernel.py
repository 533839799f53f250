"""Kernel regression as attention: Nadaraya-Watson (local constant) and local linear.

Both estimators are linear in the responses, ``m(x) = sum_i l_i(x) y_i``; ``attention_weights``
returns the rows ``l(x)``. With the Gaussian kernel and unit-norm inputs, Nadaraya-Watson is
softmax attention with temperature ``tau = h**2``; local linear with ``ridge > 0`` is Local
Linear Attention (Zuo et al. 2025, arXiv:2510.01450, eqs. 6-8, with the ridge scaled by the weight sum).

Data layout: one observation per row. Categorical columns (pandas ``category``, ``bool`` or
``object`` columns, or columns marked ``"u"``/``"o"`` in ``var_types``) enter only through the
product kernel weights, as in R's ``np``. Everything numeric happens in the C++ core.
"""
from __future__ import annotations

import numbers
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike
from sklearn.utils.validation import _check_sample_weight, check_is_fitted

from . import _core
from ._deprecation import renamed, renamed_in_errors, seed_from_random_state
from ._encoding import KernelInput
from ._smoother import _Smoother
from ._validation import (as_2d_y, numbers_only, per_column_bandwidth, refuse_non_number_params,
                          refuse_time_columns, squeeze_outputs, validate_data)

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from .diagnostics import KernelSummary

#: Bandwidth selectors (attnreg.bandwidth.select_bandwidth).
SELECTORS = ("cv_ls", "aic", "gcv", "rot", "dpi")


def kernel_constants(kernel: str) -> dict:
    """``mu2`` (= int u^2 K), ``roughness`` (= int K^2), ``support`` and ``constant`` of a kernel.

    Kernels: gaussian, epanechnikov, uniform, triangular, biweight,
    triweight, tricube, cosine, all densities on u = (x - x_i) / h (the compact ones on
    [-1, 1]), and gaussian4, the fourth-order Gaussian K(u) = (3 - u^2)/2 phi(u) (Marron & Wand
    1992, doi:10.1214/aos/1176348653; R np's ``ckertype = "gaussian", ckerorder = 4``, same h;
    mu2 = 0, and K < 0 for ``|u| > sqrt(3)``). R's np scales its Epanechnikov to unit variance
    (support +-sqrt(5)): an np bandwidth h_np is sqrt(5) * h_np here.
    """
    return dict(_core.kernel_constants(str(kernel)))


class _KernelRegression(KernelInput, _Smoother):
    """Shared fit/predict plumbing; subclasses fix the local polynomial degree."""

    _degree = 1

    def _resolve_bandwidth(self, var_types: str, X=None, y2=None, sample_weight=None) -> np.ndarray:
        bw = self.bandwidth
        self.bandwidth_result_ = None
        if isinstance(bw, str):
            key = bw.lower().replace(".", "_")
            key = {"cv_aic": "aic"}.get(key, key)
            if key not in SELECTORS:
                raise ValueError(
                    f"bandwidth: unknown selector {bw!r}; pass a positive number, one number "
                    f"per column, or one of {', '.join(SELECTORS)}"
                )
            if y2 is not None and y2.shape[1] != 1:
                raise ValueError(
                    f"bandwidth={bw!r}: data-driven selection needs a single output (y has "
                    f"{y2.shape[1]} columns); select per column with attnreg.select_bandwidth "
                    "and pass numbers"
                )
            if X.shape[0] < 5:
                raise ValueError(
                    f"X: bandwidth={bw!r} needs at least 5 rows to select a bandwidth, got "
                    f"n_samples = {X.shape[0]}; pass a bandwidth by hand"
                )
            from .bandwidth import _BOUNDARY_WARNED_BY_CALLER, _warn_boundary, select_bandwidth

            token = _BOUNDARY_WARNED_BY_CALLER.set(True)
            try:
                res = select_bandwidth(
                    X, y2[:, 0], "ll" if self._degree == 1 else "lc", key,
                    kernel=str(self.kernel), var_types=var_types,
                    unordered_kernel=str(self.unordered_kernel),
                    ordered_kernel=str(self.ordered_kernel),
                    ridge=float(getattr(self, "ridge", 0.0)), n_threads=int(self.n_threads),
                    sample_weight=sample_weight,
                    approx=self.approx,
                )
            finally:
                _BOUNDARY_WARNED_BY_CALLER.reset(token)
            self.bandwidth_result_ = res
            names = getattr(self, "feature_names_in_", None)
            if names is None and hasattr(X, "columns"):
                names = list(X.columns)
            _warn_boundary(res, names, var_types, f"{type(self).__name__}(bandwidth={bw!r})")
            return np.asarray(res.bandwidth, dtype=np.float64)
        try:
            return per_column_bandwidth(bw, len(var_types), set(var_types) <= {"c"})
        except ValueError as e:
            if "one number for every column" in str(e):
                raise ValueError(f"{e}, for var_types {var_types!r}") from None
            raise

    # ------------------------------------------------------------------ fit / predict
    def _new_core(self, var_types: str):
        if self.approx_ == "binned":
            return _core.BinnedLocalPolynomial(
                degree=self._degree, kernel=str(self.kernel),
                ridge=float(getattr(self, "ridge", 0.0)), grid_size=self._grid_size_int(),
                n_threads=int(self.n_threads))
        return self._exact_core(var_types)

    def _exact_core(self, var_types: str):
        return _core.LocalPolynomial(
            degree=self._degree,
            kernel=str(self.kernel),
            var_types=var_types,
            unordered_kernel=str(self.unordered_kernel),
            ordered_kernel=str(self.ordered_kernel),
            ridge=float(getattr(self, "ridge", 0.0)),
            n_threads=int(self.n_threads),
            compute_fitted=False,
        )

    def fit(self, X: ArrayLike, y: ArrayLike,
            sample_weight: ArrayLike | None = None) -> _KernelRegression:
        """Fit the kernel regression (selecting the bandwidth first when it is a selector name).

        Computes only what prediction needs. The fitted values, leverages, exact leave-one-out
        predictions (and ``effective_df_``, ``leverage_``, ``cv_score_``, ``summary()``) are
        computed on first use, in one pass over the pairs of distinct training rows, and cached.

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_samples, n_features)
            Regressors. DataFrame columns of dtype category (ordered: ordered kernel), bool,
            object or string get categorical kernels; the column names are kept in
            ``feature_names_in_``.
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative weights multiplying each row's kernel weight. With a bandwidth
            selector they also weight the criterion (see ``sample_weight`` of
            :func:`attnreg.select_bandwidth`).

        Returns
        -------
        self
        """
        refuse_non_number_params(self)
        refuse_time_columns(X, "X", type(self).__name__)
        Xe, inferred = self._encode(X, fitting=True)
        # The response's name (a named pandas Series) labels plots of the fit.
        name = getattr(y, "name", None) if getattr(y, "ndim", 0) == 1 else None
        self._y_name = None if name is None else str(name)
        Xa, y = validate_data(self, Xe, y, multi_output=True, y_numeric=True, dtype=np.float64)
        y2, self._y_1d = as_2d_y(y)
        var_types = self._resolve_var_types(inferred, Xa.shape[1])
        sw = None
        if sample_weight is not None:
            sw = _check_sample_weight(sample_weight, Xa, dtype=np.float64,
                                      ensure_non_negative=True)
            if not np.all(np.isfinite(sw)):
                raise ValueError("sample_weight: contains NaN or Inf; give finite weights >= 0")
            if not sw.sum() > 0:
                raise ValueError(
                    "sample_weight: all weights are zero; give at least one positive weight"
                )
        self.approx_ = _core.check_approx(str(self.approx), var_types, Xa.shape[1],
                                          self._grid_size_int())
        bw = self._resolve_bandwidth(var_types, Xa, y2, sw)
        model = self._new_core(var_types)
        model.fit(Xa, y2, bw, sw)
        self._model = model
        self._exact = None
        self._binned_fit = (Xa, y2, bw, sw) if self.approx_ == "binned" else None
        self.var_types_ = var_types
        self.bandwidth_ = model.bandwidth()
        self._cv_score = None
        # Per-column scale for summary()'s smoothed-out notes: sd of continuous columns,
        # number of levels of categorical ones (counted for those only: np.unique sorts the
        # column, a third of a binned fit's time at 10^6 rows).
        self._x_sd = np.std(Xa, axis=0, ddof=1) if Xa.shape[0] > 1 else np.zeros(Xa.shape[1])
        self._x_levels = np.array([np.unique(Xa[:, j]).size if t != "c" else 0
                                   for j, t in enumerate(str(var_types))])
        return self

    def _grid_size_int(self) -> int:
        g = self.grid_size
        if g is None:
            return 0
        if isinstance(g, bool) or not isinstance(g, numbers.Integral):
            raise ValueError(f"grid_size: must be an integer >= 10 or None (the default), got {g!r}")
        if g < 10:
            raise ValueError(f"grid_size: must be at least 10 grid points per column, got {g} "
                             "(None: 401 in 1-D, 101 x 101 in 2-D; more points, smaller error)")
        return int(g)

    def _stats_model(self):
        """The core model behind the training statistics: the fitted one, or for a binned fit
        an exact one on the same data (built on first use), so leverages, leave-one-out fits,
        attention weights and summaries are exact."""
        check_is_fitted(self)
        if getattr(self, "_binned_fit", None) is None:
            return self._model
        if self._exact is None:
            Xa, y2, bw, sw = self._binned_fit
            exact = self._exact_core(self.var_types_)
            exact.fit(Xa, y2, bw, sw)
            self._exact = exact
        return self._exact

    @property
    def approx_error_(self) -> float:
        """Largest ``|binned - exact|`` fit (in units of y) over 200 training rows drawn with a
        fixed seed (0.0 for ``approx="exact"``); computed on first use, then cached. The binned
        error shrinks like (grid spacing / bandwidth)^2: double ``grid_size`` to quarter it."""
        check_is_fitted(self)
        if getattr(self, "_binned_fit", None) is None:
            return 0.0
        return float(self._model.approx_error(200, 0)["max_abs"])

    def approx_error_details(self) -> dict:
        """The binned error estimate in full: ``n_points`` compared, ``max_abs``, ``rms``,
        ``scale`` (sd of y) and ``relative`` (max_abs / scale); ``None`` for an exact fit."""
        check_is_fitted(self)
        if getattr(self, "_binned_fit", None) is None:
            return None
        return dict(self._model.approx_error(200, 0))

    # Training statistics: computed by the core on first use (over the distinct rows), cached.
    @property
    def effective_df_(self) -> float:
        """tr(L), the sum of the leverages (computed on first use, then cached)."""
        check_is_fitted(self)
        return float(self._stats_model().effective_df())

    @property
    def leverage_(self) -> np.ndarray:
        """Leverages L_ii at the training rows, shape (n_samples,) (computed on first use)."""
        check_is_fitted(self)
        return self._stats_model().leverage()

    @property
    def cv_score_(self) -> float:
        """Leave-one-out mean squared error at this bandwidth, the criterion ``cv_ls``
        minimises: with ``sample_weight`` the weighted mean ``sum_i w_i (y_i - m_{-i}(x_i))^2 /
        sum_i w_i`` (rows of weight 0 do not count), so at a ``cv_ls``-selected bandwidth it equals
        ``bandwidth_result_.objective``. inf when some row has no leave-one-out fit (e.g. an
        isolated point under a compact kernel); computed on first use, then cached."""
        check_is_fitted(self)
        if getattr(self, "_cv_score", None) is None:
            self._cv_score = float(self._stats_model().cv_score())
        return self._cv_score

    @renamed(n_boot="replications")
    @numbers_only("replications", "random_state")
    def gradient(self, X: ArrayLike, return_se: bool = False, *, se: str = "asymptotic",
                 replications: int = 399, random_state=0):
        """Marginal effects at new rows, optionally with standard errors.

        Continuous columns: ``d m / d x_j``, for :class:`NadarayaWatson` the analytic
        derivative of the fit, for :class:`LocalLinear` the local slope. Categorical columns:
        the difference between levels, as R np's ``npreg`` gradients for factors: unordered,
        ``m(x) - m(x with x_j at the first level)`` (0 at the first level); ordered,
        ``m(x) - m(x with x_j at the previous level)`` (at the first level the forward
        difference to the second).

        Every effect is linear in the responses, ``sum_i g_i(x) y_i``. Standard errors hold the
        bandwidth fixed: ``se="asymptotic"`` is the linear-smoother (sandwich) variance
        ``sum_i g_i(x)^2 e_i^2`` with the fit's residuals ``e`` (heteroskedasticity-consistent);
        ``se="bootstrap"`` is the wild bootstrap with Mammen's (1993) two-point weights,
        ``replications`` draws reproducible from ``random_state`` (cost O(m n replications));
        ``se="np"`` (:class:`NadarayaWatson` only) is R np 0.70-4's ``gerr`` (its C source,
        ``src/jksum.c``): with the local variance ``s2(x) = sum_i l_i y_i^2 - m(x)^2``,
        ``S(x) = sum_i K_i`` (product of the density kernels and the categorical kernels),
        ``R = int K^2``, ``C = int K(z - 1/2) K(z + 1/2) dz`` and ``dc`` continuous columns,
        ``merr^2 = s2(x) R^dc / S(x)``; continuous ``j``: ``sqrt(2 (R - C) / R) merr / h_j``
        (the variance of a central difference with step ``h_j``, not of the derivative);
        categorical ``j``: ``sqrt(merr^2 + s2(x') R^dc / S(x'))`` at the comparison point
        ``x'`` (0 without a continuous column). A Monte Carlo in
        ``bench/results/npconv.md`` compares both with the estimator's sampling spread.

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (m, n_features)
        return_se : bool, default=False
            Also return the standard errors.
        se : {"asymptotic", "bootstrap", "np"}
        replications : int, default=399
            Bootstrap replications (formerly ``n_boot=``).
        random_state : int, None or numpy Generator, default=0

        Returns
        -------
        grad : ndarray of shape (m, n_features), or a DataFrame labelled by column when X is a
            DataFrame; (grad, se) when ``return_se``. A LocalLinear fit with several outputs
            (without ``return_se``) returns its slopes, shape (m, n_outputs, n_features), with
            nan in categorical columns.
        """
        Xc = self._check_X(X)
        binned = getattr(self, "_binned_fit", None) is not None
        if binned and self._degree == 1 and not return_se:
            # a binned local-linear fit has its own (binned) slopes
            G = self._model.gradient(Xc)  # (m, d, k)
            G = G[:, :, 0] if self._y_1d else np.transpose(G, (0, 2, 1))
            if hasattr(X, "columns") and self._y_1d:
                import pandas as pd

                cols = list(getattr(self, "feature_names_in_", X.columns))
                G = pd.DataFrame(G, index=X.index, columns=cols)
            return G
        # standard errors and Nadaraya-Watson derivatives come from the exact model (built on
        # first use for a binned fit)
        model = self._stats_model() if binned else self._model
        if not self._y_1d:
            if return_se or self._degree == 0:
                raise ValueError(
                    "y: marginal effects with standard errors (and Nadaraya-Watson gradients) "
                    "need a single response; fit one model per output"
                )
            G = model.gradient(Xc)  # (m, d, k)
            return np.transpose(G, (0, 2, 1))
        if not isinstance(replications, numbers.Integral):
            raise ValueError(f"replications: must be an integer >= 2, got {replications!r}")
        seed = seed_from_random_state(random_state)
        with renamed_in_errors(n_boot="replications"):
            d = _core.local_gradient(model, Xc, str(se) if return_se else "none",
                                     int(replications), seed, False, int(self.n_threads))
        G = np.asarray(d["gradient"])
        S = np.asarray(d["se"]) if return_se else None
        if hasattr(X, "columns"):
            import pandas as pd

            cols = list(getattr(self, "feature_names_in_", X.columns))
            G = pd.DataFrame(G, index=X.index, columns=cols)
            if S is not None:
                S = pd.DataFrame(S, index=X.index, columns=cols)
        return (G, S) if return_se else G

    def _check_X(self, X):
        check_is_fitted(self)
        refuse_time_columns(X, "X", type(self).__name__)
        Xe, _ = self._encode(X, fitting=False)
        return validate_data(self, Xe, reset=False, dtype=np.float64)

    def predict(self, X: ArrayLike) -> np.ndarray:
        return super().predict(X)

    predict.__doc__ = _Smoother.predict.__doc__.rstrip() + """

        Raises
        ------
        attnreg.NumericalError
            When a row has no fit (all kernel weights underflow, or a singular local design);
            the message names the row and the fix.
        """

    def attention_weights(self, X: ArrayLike) -> np.ndarray:
        return super().attention_weights(X)

    # The base's Parameters and Returns, after what is particular to kernel weights.
    attention_weights.__doc__ = """Equivalent-kernel (attention) weights of new rows over the training rows.

        ``predict(X) == attention_weights(X) @ y_train``; every row sums to one. Materialises
        m * n_train numbers: use it when you need the weights themselves.

""" + _Smoother.attention_weights.__doc__.split("\n\n", 1)[1]

    def _weights_model(self):
        return self._stats_model()

    def fitted_values(self) -> np.ndarray:
        """Fitted values at the training rows, shape (n,) or (n, k)."""
        check_is_fitted(self)
        return squeeze_outputs(self._model.fitted(), self._y_1d)

    def loo_predictions(self) -> np.ndarray:
        """Exact leave-one-out predictions m_{-i}(x_i) at the training rows, (n,) or (n, k).

        Equal to refitting without row i (with ``ridge > 0`` the weight-sum-scaled penalty is
        refitted too). Raises ``attnreg.NumericalError`` naming the first row without one."""
        check_is_fitted(self)
        return squeeze_outputs(self._stats_model().loo_fitted(), self._y_1d)

    @renamed(kind="cov_type")
    def diagnose(self, X: ArrayLike, level: float = 0.95, cov_type: str = "HC3") -> pd.DataFrame:
        """Pointwise fit, se, bias, MSE, conventional and RBC intervals at the rows of X.

        A thin wrapper of :func:`attnreg.diagnostics.diagnose` (see there)."""
        from .diagnostics import diagnose

        return diagnose(self, X, level=level, cov_type=cov_type)

    def summary(self) -> KernelSummary:
        """Global summary (tr L, residual df, sigma, R^2, CV, GCV, AICc), printed like R's
        ``summary.lm``. See :func:`attnreg.diagnostics.summary`."""
        from .diagnostics import summary

        return summary(self)


class NadarayaWatson(_KernelRegression):
    """Nadaraya-Watson (local constant) kernel regression: softmax attention over the rows.

    ``m(x) = sum_i w_i(x) y_i / sum_j w_j(x)`` with the product kernel
    ``w_i(x) = s_i prod_j K((x_j - X_ij) / h_j) prod_c l_c(x_c, X_ic; lambda_c)``
    (``s_i`` the sample weights). The weights ``attention_weights(X)`` are non-negative and each
    row sums to one. With the Gaussian kernel and unit-norm rows this is
    ``softmax(x X' / h**2) y`` (Pai 2025, "Regression is All You Need").

    Parameters
    ----------
    kernel : str, default="gaussian"
        gaussian, epanechnikov, uniform, triangular, biweight, triweight, tricube or cosine
        (densities in u = (x - x_i)/h; the compact ones on [-1, 1]; np's Epanechnikov has
        support +-sqrt(5), so an np bandwidth h_np is sqrt(5) * h_np here), or gaussian4, the
        fourth-order Gaussian (3 - u^2)/2 phi(u) of np's ``ckerorder = 4`` (same h; Marron &
        Wand 1992). gaussian4 lowers the bias order but its weights can be negative: fits whose
        local design is then not positive definite are reported as failed, and the plug-in
        selectors ("rot", "dpi"), binned fits, marginal effects and the specification tests
        refuse it (use "cv_ls" or "aic").
    bandwidth : float or array-like of shape (n_features,), default="cv_ls"
        h for continuous columns, lambda for categorical ones (aitchison_aitken: [0, (c-1)/c];
        li_racine and wang_van_ryzin: [0, 1]), or a selector: "cv_ls" (leave-one-out
        cross-validation), "aic" (AICc, also "cv.aic"), "gcv", "rot" (normal reference) or
        "dpi" (plug-in, 1-D Gaussian local linear); see :func:`attnreg.select_bandwidth`.
    var_types : str, optional
        One of c/u/o per column ("ccu", spaces ignored). Default: inferred from pandas dtypes
        (category -> u, ordered category -> o, bool/object/string -> u), else all continuous.
    unordered_kernel : {"aitchison_aitken", "li_racine"}, default="aitchison_aitken"
    ordered_kernel : {"li_racine", "wang_van_ryzin"}, default="li_racine"
    n_threads : int, default=0
        Threads for the core (0 = OpenMP default). Results do not depend on it.
    approx : {"exact", "binned"}, default="exact"
        ``"binned"``: linear binning onto a grid and FFT convolution (Wand 1994, "Fast
        computation of multivariate kernel estimators", JCGS 3(4); Fan and Marron 1994, JCGS
        3(1); as R's ``KernSmooth::locpoly``) for one or two continuous columns, no categorical
        ones. Fitting costs O(n) plus O(G log G), a prediction O(1): use it from about 10^5 rows
        with the Gaussian kernel, or when the fit is repeated many times. Fits between grid
        nodes are interpolated; the error is O((grid spacing / h)^2) and ``approx_error_``
        measures it. A selector bandwidth uses the binned cv_ls objective
        (:func:`attnreg.select_bandwidth` with ``approx="binned"``). Leverages, leave-one-out
        fits, attention weights and ``summary()`` stay exact (computed on first use).
    grid_size : int or None, default=None
        Grid points per continuous column for ``approx="binned"`` (at least 10; None: 401 in
        1-D as KernSmooth, 101 x 101 in 2-D). Doubling it quarters the binning error.

    Attributes
    ----------
    bandwidth_ : ndarray of shape (n_features,)
    var_types_ : str
    effective_df_ : float, tr(L) = sum of the leverages.
    leverage_ : ndarray of shape (n_samples,), L_ii.
    cv_score_ : float, leave-one-out mean squared error at this bandwidth (inf when some row
        has no leave-one-out fit).
        These three are computed on first use (not by ``fit``) and cached; the pass runs over
        the pairs of distinct training rows (plus one small solve per row), so repeated rows
        (integer or categorical regressors) do not add to the quadratic cost.
    bandwidth_result_ : BandwidthResult or None, the selector's result when ``bandwidth`` is a
        selector name (objective, evaluations, convergence, 1-D curve).
    approx_ : str, "exact" or "binned".
    approx_error_ : float, largest ``|binned - exact|`` fit over 200 training rows (fixed seed;
        0.0 for exact fits), computed on first use; ``approx_error_details()`` gives more.

    Examples
    --------
    >>> import numpy as np, attnreg
    >>> X = np.linspace(0, 1, 50).reshape(-1, 1); y = np.sin(6 * X[:, 0])
    >>> m = attnreg.NadarayaWatson(bandwidth=0.05).fit(X, y)
    >>> W = m.attention_weights(X[:2]); bool(np.allclose(W.sum(axis=1), 1.0))
    True
    """

    _degree = 0

    def __init__(self, kernel: str = "gaussian", bandwidth: float | str | ArrayLike = "cv_ls",
                 var_types: str | None = None, unordered_kernel: str = "aitchison_aitken",
                 ordered_kernel: str = "li_racine", n_threads: int = 0, approx: str = "exact",
                 grid_size: int | None = None):
        self.kernel = kernel
        self.bandwidth = bandwidth
        self.var_types = var_types
        self.unordered_kernel = unordered_kernel
        self.ordered_kernel = ordered_kernel
        self.n_threads = n_threads
        self.approx = approx
        self.grid_size = grid_size


class LocalLinear(_KernelRegression):
    """Local linear kernel regression (Local Linear Attention when ``ridge > 0``).

    At each query x, ``(a, B) = argmin sum_i w_i(x) ||y_i - a - B (x_i - x)||^2 +
    ridge * omega * ||B||^2`` with ``omega = sum_i w_i(x)`` (the ridge of Zuo et al. 2025, arXiv:2510.01450, eq. 6, scaled
    by the weight sum so any common factor in the weights cancels); ``predict`` returns ``a``
    and ``gradient`` returns ``B`` (marginal effects) for the continuous columns. Categorical
    columns enter only through the weights. The attention weights sum to one and can be
    negative. With ``ridge = 0`` it reproduces linear functions exactly.

    Parameters are those of :class:`NadarayaWatson` plus

    ridge : float, default=0.0
        lambda >= 0 on the slopes.

    Examples
    --------
    >>> import numpy as np, attnreg
    >>> X = np.linspace(0, 1, 50).reshape(-1, 1); y = 3 * X[:, 0] + 1
    >>> m = attnreg.LocalLinear(bandwidth=0.1).fit(X, y)
    >>> float(np.round(m.predict([[0.5]])[0], 10)), float(np.round(m.gradient([[0.5]])[0, 0], 10))
    (2.5, 3.0)
    """

    _degree = 1

    def __init__(self, kernel: str = "gaussian", bandwidth: float | str | ArrayLike = "cv_ls",
                 ridge: float = 0.0, var_types: str | None = None,
                 unordered_kernel: str = "aitchison_aitken", ordered_kernel: str = "li_racine",
                 n_threads: int = 0, approx: str = "exact", grid_size: int | None = None):
        self.kernel = kernel
        self.bandwidth = bandwidth
        self.ridge = ridge
        self.var_types = var_types
        self.unordered_kernel = unordered_kernel
        self.ordered_kernel = ordered_kernel
        self.n_threads = n_threads
        self.approx = approx
        self.grid_size = grid_size

