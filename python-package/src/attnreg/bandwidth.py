"""Bandwidths: the Ruppert-Sheather-Wand direct plug-in, data-driven selection and the
MSE/IMSE-optimal plug-in bandwidths of local polynomial regression.

``dpi(x, y)`` equals R's ``KernSmooth::dpill(x, y)`` (to rounding) on dpill's 401-point binning
grid; ``binned=False`` computes the same functionals from exact local fits at the data points.
:func:`mse_dpi` and :func:`imse_dpi` are nprobust's ``lpbwselect`` (also importable from
:mod:`attnreg.diagnostics`).
"""
from __future__ import annotations

import contextvars
import numbers
import sys
from dataclasses import dataclass

import numpy as np

from . import _core, _progress
from ._encoding import encode_frame, resolve_var_types
from ._plugin_bandwidth import imse_dpi, mse_dpi  # noqa: F401 (public here)
from ._validation import numbers_only


@dataclass(frozen=True)
class PlugInResult:
    """Result of :func:`dpi`: the bandwidth and the pilot estimates behind it."""

    bandwidth: float
    sigma2: float
    theta22: float
    sigma2_blocks: float
    theta24_blocks: float
    n_blocks: int
    gamma: float
    lambda_: float
    n_used: int


@numbers_only("blockmax", "divisor", "trim", "proptrun", "gridsize")
def dpi(x, y, *, blockmax: int = 5, divisor: int = 20, trim: float = 0.01,
        proptrun: float = 0.05, gridsize: int = 401, binned: bool = True) -> PlugInResult:
    """Direct plug-in bandwidth for 1-D local-linear regression with the Gaussian kernel.

    Ruppert, Sheather and Wand (1995): h = [sigma^2 (b - a) / (2 sqrt(pi) theta_22 n)]^(1/5)
    with sigma^2 and theta_22 = E m''(X)^2 estimated from blocked quartic and local-polynomial
    pilots. The bandwidth is the Gaussian kernel's standard deviation, as
    ``attnreg.LocalLinear(kernel="gaussian", bandwidth=h)`` uses it.

    Parameters
    ----------
    x, y : array-like of shape (n,)
    blockmax, divisor, trim, proptrun, gridsize : as ``KernSmooth::dpill``.
    binned : bool, default=True
        ``True`` reproduces dpill; ``False`` uses exact (unbinned) pilot fits.

    Returns
    -------
    PlugInResult

    Examples
    --------
    >>> import numpy as np, attnreg
    >>> rng = np.random.default_rng(0); x = rng.uniform(size=500)
    >>> y = np.sin(6 * x) + rng.normal(0, 0.3, 500)
    >>> h = attnreg.bandwidth.dpi(x, y).bandwidth
    >>> 0.01 < h < 0.1
    True
    """
    x = np.asarray(x, dtype=np.float64)
    if x.ndim == 2 and x.shape[1] == 1:
        x = x[:, 0]
    if x.ndim != 1:
        raise ValueError(f"x: dpi is for one regressor; expected a 1-D array (or one column), "
                         f"got shape {x.shape}")
    y = np.asarray(y, dtype=np.float64).ravel()
    d = _core.dpi_local_linear(x, y, int(blockmax), int(divisor), float(trim), float(proptrun),
                               int(gridsize), bool(binned))
    return PlugInResult(bandwidth=d["bandwidth"], sigma2=d["sigma2"], theta22=d["theta22"],
                        sigma2_blocks=d["sigma2_blocks"], theta24_blocks=d["theta24_blocks"],
                        n_blocks=int(d["n_blocks"]), gamma=d["gamma"], lambda_=d["lambda"],
                        n_used=int(d["n_used"]))


# ---------------------------------------------------------------------------- data-driven search
@dataclass(frozen=True)
class BandwidthResult:
    """Result of :func:`select_bandwidth`.

    Attributes
    ----------
    bandwidth : ndarray of shape (n_features,)
        h for continuous columns, lambda for categorical ones (always positive, finite and in
        the kernel's range).
    objective : float
        The method's objective at ``bandwidth`` (for ``rot``/``dpi``: the cv_ls score there).
    n_evals : int
        Objective evaluations (exact curve points included; the binned curve's of the
        economical search, see ``exact_curve`` of :func:`select_bandwidth`, are not counted).
    converged : bool
        Whether the quasi-Newton search met its convergence test.
    method : str
    message : str
    lower, upper : ndarray
        The search box per column (the lower continuous bound is the smallest bandwidth at
        which every leave-one-out fit exists, or the bwcheck guard when ``min_neighbors`` > 0).
    at_bound : ndarray of int
        Per column: -1 when the bandwidth sits at the lower end of the box, +1 at the upper
        end, 0 inside (a :class:`BoundaryWarning` is issued for the non-zero ones).
    curve : tuple (grid, values) or None
        The objective over a log-spaced bandwidth grid, for one continuous column (NaN: not
        evaluated).
    curve_exact : bool
        Whether ``curve`` holds the exact objective (False: the binned one, see
        ``exact_curve`` of :func:`select_bandwidth`).
    names : tuple of str or None
        The column names (DataFrame or named Series input), which label :meth:`to_frame`,
        :attr:`bandwidths` and the printed table; None for arrays (then ``x1, x2, ...``).
    var_types : str
        One of c/u/o per column, as used by the search.
    """

    bandwidth: np.ndarray
    objective: float
    n_evals: int
    converged: bool
    method: str
    message: str
    lower: np.ndarray
    upper: np.ndarray
    curve: tuple | None
    estimator: str = "ll"
    kernel: str = "gaussian"
    at_bound: np.ndarray | None = None
    names: tuple | None = None
    var_types: str = ""
    curve_exact: bool = True

    def _labels(self) -> list:
        k = np.atleast_1d(self.bandwidth).size
        if self.names is not None and len(self.names) == k:
            return [str(v) for v in self.names]
        return [f"x{j + 1}" for j in range(k)]

    @property
    def bandwidths(self):
        """The bandwidths as a pandas Series indexed by column name."""
        import pandas as pd

        return pd.Series(np.atleast_1d(self.bandwidth), index=self._labels(), name="bandwidth")

    def to_frame(self):
        """One row per column: ``type`` (continuous / unordered / ordered), ``bandwidth``
        (h, or lambda for a categorical column), the search box ``lower``, ``upper`` and
        ``at_bound`` (-1 lower end, +1 upper end, 0 inside)."""
        import pandas as pd

        bw = np.atleast_1d(self.bandwidth)
        k = bw.size
        vt = (self.var_types or "c" * k).ljust(k, "c")
        kinds = {"c": "continuous", "u": "unordered", "o": "ordered"}

        def col(a, fill):
            a = np.atleast_1d(np.asarray(a if a is not None else [], dtype=np.float64))
            return a if a.size == k else np.full(k, fill)

        ab = np.atleast_1d(self.at_bound) if self.at_bound is not None else np.zeros(k)
        return pd.DataFrame({
            "type": [kinds.get(c, c) for c in vt[:k]],
            "bandwidth": bw,
            "lower": col(self.lower, np.nan),
            "upper": col(self.upper, np.nan),
            "at_bound": (ab if ab.size == k else np.zeros(k)).astype(int),
        }, index=pd.Index(self._labels(), name="variable"))

    def __repr__(self) -> str:
        t = self.to_frame()
        w = max(8, max(len(v) for v in t.index))
        where = {-1: "lower end", 1: "upper end", 0: ""}
        est = {"ll": "local linear", "lc": "local constant"}.get(self.estimator, self.estimator)
        lines = [
            f"Bandwidth selection: {self.method} for {est} regression, {self.kernel} kernel",
            f"{'variable':<{w}}  {'type':<10}  {'bandwidth':>10}  {'search box':>23}  note",
        ]
        for name, r in t.iterrows():
            box = f"[{r['lower']:.4g}, {r['upper']:.4g}]"
            sym = "h" if r["type"] == "continuous" else "lambda"
            note = where.get(int(r["at_bound"]), "")
            lines.append(f"{name:<{w}}  {r['type']:<10}  {r['bandwidth']:>10.4g}  {box:>23}  "
                         f"{(sym + ' at the ' + note) if note else ''}".rstrip())
        conv = "converged" if self.converged else "did not converge"
        lines.append(f"Objective {self.objective:.6g} after {self.n_evals} evaluations ({conv})")
        if self.message:
            lines.append(f"Message: {self.message}")
        return "\n".join(lines)

    __str__ = __repr__


class BoundaryWarning(UserWarning):
    """A selected bandwidth sits on the edge of its search box: the criterion still falls
    beyond it, so the number is the box's end rather than an interior optimum.

    At the lower end of a continuous column the box ends at the estimator's own limit: the
    smallest bandwidth at which every leave-one-out fit exists and keeps at least 8 digits
    (typically discrete data, where the cell means win); at the upper end (100 x the column's range, or the largest lambda of
    a categorical kernel) the variable is smoothed out: local linear treats it as entering
    linearly, local constant as irrelevant. Silence it with ``warnings.filterwarnings(
    "ignore", category=attnreg.BoundaryWarning)`` once you have judged the fit."""


# Set by an estimator that selects its bandwidth and then warns itself (naming its own call).
_BOUNDARY_WARNED_BY_CALLER = contextvars.ContextVar("_BOUNDARY_WARNED_BY_CALLER", default=False)


def _user_stacklevel() -> int:
    """The stacklevel for warnings.warn (called from the function that calls this one) that
    points at the first frame outside the attnreg package: the user's call."""
    import os
    import sys

    pkg = os.path.dirname(os.path.abspath(__file__))
    f = sys._getframe(2)  # the caller of the function that will call warnings.warn
    level = 2
    while f is not None and os.path.abspath(f.f_code.co_filename).startswith(pkg + os.sep):
        f = f.f_back
        level += 1
    return level


def _warn_boundary(res: "BandwidthResult", names, var_types: str, who: str) -> None:
    """Warn (BoundaryWarning) for every column whose selected bandwidth is on the box."""
    import warnings

    ab = res.at_bound
    if ab is None or not np.any(ab):
        return
    parts = []
    for j in np.flatnonzero(ab):
        name = repr(str(names[j])) if names is not None else f"column {j + 1}"
        cont = var_types[j] == "c" if j < len(var_types) else True
        sym = "h" if cont else "lambda"
        end = "lower" if ab[j] < 0 else "upper"
        box = f"[{res.lower[j]:.4g}, {res.upper[j]:.4g}]"
        if ab[j] < 0 and cont:
            advice = ("the search stopped at the smallest bandwidth at which every "
                      "leave-one-out fit exists (typical of a discrete variable, where the cell "
                      "means win: declare it categorical in var_types, or pass a bandwidth by "
                      "hand)")
        elif ab[j] < 0:
            advice = "its categories are kept apart entirely (cell means)"
        elif cont:
            advice = ("the variable is smoothed out: local linear treats it as entering "
                      "linearly, local constant as irrelevant (check it with a significance "
                      "test, drop it, or pass a bandwidth by hand)")
        else:
            advice = ("the variable is smoothed out (all categories pooled): read it as "
                      "irrelevant (check it with a significance test or drop it)")
        parts.append(f"{name}: {sym} = {res.bandwidth[j]:.4g} is at the {end} end of the "
                     f"search box {box}; {advice}")
    warnings.warn(f"{who}: the {res.method} bandwidth sits on the edge of its search box "
                  f"for " + "; ".join(parts), BoundaryWarning, stacklevel=_user_stacklevel())


_ESTIMATORS = {"ll": 1, "lc": 0, "local_linear": 1, "local_constant": 0, "nw": 0}


def _degree_of(estimator) -> int:
    key = str(estimator).lower()
    if key not in _ESTIMATORS:
        raise ValueError(
            f"estimator: {estimator!r} is not one of 'll' (local linear) or 'lc' "
            "(local constant, Nadaraya-Watson)"
        )
    return _ESTIMATORS[key]


def _approx_grid(value) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 10:
        raise ValueError(f"approx_grid_size: must be an integer >= 10 or None (the default), "
                         f"got {value!r}")
    return int(value)


@numbers_only("ridge", "n_starts", "random_state", "grid_size", "min_neighbors", "n_threads",
              "approx_grid_size")
def select_bandwidth(X, y, estimator: str = "ll", method: str = "cv_ls", *,
                     kernel: str = "gaussian", var_types: str | None = None,
                     unordered_kernel: str = "aitchison_aitken", ordered_kernel: str = "li_racine",
                     ridge: float = 0.0, n_starts: int = 3, random_state: int | None = 0,
                     grid_size: int = 30, min_neighbors: int = 0, n_threads: int = 0,
                     progress=False, sample_weight=None, approx: str = "exact",
                     approx_grid_size: int | None = None,
                     exact_curve: bool = False) -> BandwidthResult:
    """Data-driven bandwidths for local linear / local constant regression.

    Methods: ``cv_ls`` (exact leave-one-out least-squares cross-validation), ``aic`` (AICc of
    Hurvich, Simonoff and Tsai 1998, as R np's ``cv.aic``), ``gcv`` (n RSS / (n - tr L)^2),
    ``rot`` (normal-reference rule per continuous column), ``dpi`` (Ruppert-Sheather-Wand
    plug-in; 1-D Gaussian local linear). The searched methods minimise over log h (continuous
    columns) and lambda (categorical columns, inside the kernel's range) by projected L-BFGS
    with the exact gradient, from ``n_starts`` starting points; with one continuous column the
    objective curve over ``grid_size`` bandwidths is computed first and seeds the search (see
    ``exact_curve`` for how).

    Parameters
    ----------
    X : array-like, pandas DataFrame or Series of shape (n_samples, n_features)
        The same inputs as the estimators: in a DataFrame, categorical, ordered categorical,
        text and boolean columns get unordered / ordered kernels (as ``LocalLinear.fit``
        encodes them); in an array, categorical columns hold integer codes (ordered: 0, 1,
        2, ... in level order) named by ``var_types``. Column names label the result.
    y : array-like of shape (n_samples,)
    estimator : {"ll", "lc"}
    method : {"cv_ls", "aic", "gcv", "rot", "dpi"}
    kernel : str
        Continuous kernel (see :class:`attnreg.NadarayaWatson`).
    var_types : str, optional
        One of c/u/o per column; default inferred from a DataFrame, else all continuous.
    ridge : float
        Local-linear ridge (the cv_ls objective is then the exact refit leave-one-out score).
    n_starts : int
        Starting points of the search (random ones are reproducible from ``random_state``).
    random_state : int or None
    grid_size : int
        Points of the 1-D objective curve (0: no curve).
    min_neighbors : int
        0 (default): the box's lower end is the estimator's own limit, the smallest bandwidth
        at which every leave-one-out fit exists (local constant: one neighbour whose weight
        does not underflow; local linear: a local design whose Cholesky pivots stay above
        1e-8), checked on the objective. k > 0: nprobust's bwcheck guard instead, k other
        distinct values within the kernel's reach (a third of it for the Gaussian).
    approx : {"exact", "binned"}, default="exact"
        ``"binned"`` (``cv_ls`` only; one or two continuous columns, no categorical ones):
        the leave-one-out criterion from linearly binned data and FFT convolutions (Wand 1994,
        JCGS 3(4)), with its exact gradient: one O(n) pass, then O(G log G + G) per evaluation.
        Each point's own kernel weight K(0) is taken out of moments interpolated at the point.
        The search starts at five grid spacings. The chosen h moves from the exact one by
        O((grid spacing / h)^2): within about 1e-3 relative when h spans 15 or more spacings.
    approx_grid_size : int or None
        Grid points per continuous column for ``approx="binned"`` (at least 10; None: 4001 in
        1-D, finer than a binned fit's 401 because the minimiser of a flat criterion moves with
        small errors, and 101 x 101 in 2-D). ``grid_size`` stays the objective curve's size.
    exact_curve : bool, default=False
        How the 1-D objective curve that seeds the search is computed. False: for ``cv_ls``
        without ``sample_weight``, a kernel other than uniform, ``approx="exact"`` and enough
        distinct values of x (500 for the Gaussian and other kernels without fast sums, whose
        exact pass costs O(n^2); 1,000 for the compact kernels' O(n) fast sums), from the
        binned criterion on 4001 points (one per distinct value below 1,000 for the Gaussian;
        about 1e-4 relative from the exact one on 4001 points, and far cheaper than a
        cross-validation pass per point);
        its local minima are refined on it and the best ones searched by the exact criterion
        with its exact gradient, so the bandwidth is still the exact criterion's local minimum
        (to the optimiser's tolerance) after a few exact evaluations. ``curve`` then holds the
        binned values (NaN below the binned grid's resolution where they were not needed) and
        ``curve_exact`` is False. True: the exact criterion at every curve point, as in every
        other case.
    progress : bool, {"auto", "tqdm", "stderr"} or callable, default=False
        True shows the evaluations so far and the best objective (a tqdm bar when tqdm is
        installed, else a stderr line at most every half second); a callable is called as
        ``progress(n_evals, best)`` after each evaluation. Inside
        ``with attnreg.show_progress():`` the search reports there. Ctrl-C interrupts the
        search with ``KeyboardInterrupt``.
    sample_weight : array-like of shape (n_samples,), optional
        Observation weights (finite, >= 0, not all 0; rows of weight 0 are dropped). They
        multiply each row's kernel weight in every local fit and weight the criterion:
        ``cv_ls`` is ``sum_i w_i (y_i - m_{-i}(x_i))^2 / sum_i w_i`` with ``m_{-i}`` the
        weighted fit without observation ``i`` (all of its weight leaves; R np's ``npregbw``
        takes no weights). So integer weights are sampling weights, not copies: repeating a
        row instead keeps its other copies in its leave-one-out fit. ``aic`` and ``gcv`` use
        the weighted mean squared residual and the number of rows in their penalties. Equal
        weights give the unweighted result.

    Returns
    -------
    BandwidthResult

    Warns
    -----
    BoundaryWarning
        When a selected bandwidth sits on the edge of its search box (the message names the
        column, the value and the end; ``BandwidthResult.at_bound`` holds -1/0/+1 per column).

    Examples
    --------
    >>> import numpy as np, attnreg
    >>> rng = np.random.default_rng(0); x = rng.uniform(size=(200, 1))
    >>> y = np.sin(6 * x[:, 0]) + rng.normal(0, 0.3, 200)
    >>> r = attnreg.select_bandwidth(x, y, "ll", "cv_ls")
    >>> 0.01 < r.bandwidth[0] < 0.2 and r.converged
    True
    """
    names = list(X.columns) if hasattr(X, "columns") else (
        [X.name] if getattr(X, "name", None) is not None and np.ndim(X) == 1 else None)
    X, var_types = _encode_like_estimators(X, var_types)
    if X.ndim == 1:
        X = X.reshape(-1, 1)
    if X.ndim != 2:
        raise ValueError(f"X: expected a 2-D array (n_samples, n_features), got {X.ndim}-D")
    y = np.asarray(y, dtype=np.float64)
    if y.ndim != 1:
        if y.ndim == 2 and y.shape[1] == 1:
            y = y[:, 0]
        else:
            raise ValueError("y: expected one response per row (shape (n_samples,))")
    degree = _degree_of(estimator)
    if not isinstance(n_starts, numbers.Integral) or n_starts < 1:
        raise ValueError(f"n_starts: must be an integer >= 1, got {n_starts!r}")
    if random_state is None:
        seed = int(np.random.default_rng().integers(0, 2**63 - 1))
    else:
        seed = int(random_state)
        if seed < 0:
            raise ValueError("random_state: must be a non-negative integer or None")
    vt = "" if var_types is None else str(var_types)
    sw = _sample_weight(sample_weight, X.shape[0])
    with _progress.reporting(None if callable(progress) else progress) as rep, \
            _progress.muted_core(rep or _progress.current()) as rep:
        cb = None
        if callable(progress):
            cb = progress
        elif rep is not None:
            def cb(evals, best):  # noqa: E306
                rep(evals, None, "bandwidth search", f"best {best:.6g}")
        d = _core.select_bandwidth(X, y, degree, str(method), str(kernel), vt,
                                   str(unordered_kernel), str(ordered_kernel), float(ridge),
                                   int(n_starts), seed, int(grid_size), int(min_neighbors),
                                   int(n_threads), cb, sw, str(approx),
                                   _approx_grid(approx_grid_size), bool(exact_curve))
    grid = np.asarray(d["curve_grid"]).ravel()
    curve = (grid, np.asarray(d["curve_values"]).ravel()) if grid.size else None
    res = BandwidthResult(bandwidth=np.asarray(d["bandwidth"]).ravel(),
                           objective=float(d["objective"]), n_evals=int(d["n_evals"]),
                           converged=bool(d["converged"]), method=str(d["method"]),
                           message=str(d["message"]), lower=np.asarray(d["lower"]).ravel(),
                           upper=np.asarray(d["upper"]).ravel(), curve=curve,
                           estimator="ll" if degree == 1 else "lc", kernel=str(kernel),
                           at_bound=np.asarray(d.get("at_bound", []), dtype=np.int64).ravel(),
                           names=None if names is None else tuple(str(v) for v in names),
                           var_types=vt.replace(" ", "").lower() or "c" * X.shape[1],
                           curve_exact=bool(d.get("curve_exact", True)))
    if not _BOUNDARY_WARNED_BY_CALLER.get():
        _warn_boundary(res, names, res.var_types, "select_bandwidth")
    return res


def _encode_like_estimators(X, var_types):
    """X as the estimators take it: a DataFrame's categorical, ordered categorical, string
    and boolean columns become integer codes with unordered/ordered kernels (as
    ``LocalLinear.fit`` does), a categorical Series one such column. Returns (float array,
    var_types or None)."""
    # A pandas object exists only where pandas is imported already: numpy input does not pay
    # for importing it (about 0.3-1 s of the first call).
    pd = sys.modules.get("pandas")
    if pd is not None and isinstance(X, pd.Series):
        X = X.to_frame()
    if pd is not None and isinstance(X, pd.DataFrame):
        X, inferred = encode_frame(X)
        var_types = resolve_var_types(var_types, inferred, X.shape[1])
    try:
        X = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise ValueError(
            f"X: could not be read as numbers ({e}); pass a pandas DataFrame whose text columns "
            "are categories (they get categorical kernels), or numeric codes with var_types"
        ) from None
    return X, var_types


@numbers_only("bandwidth", "ridge")
def bandwidth_objective(X, y, bandwidth, estimator: str = "ll", method: str = "cv_ls", *,
                        kernel: str = "gaussian", var_types: str | None = None,
                        unordered_kernel: str = "aitchison_aitken",
                        ordered_kernel: str = "li_racine", ridge: float = 0.0,
                        sample_weight=None):
    """The objective of :func:`select_bandwidth` at one bandwidth, with its exact gradient.

    Returns ``(value, gradient)``; the gradient is with respect to log h for continuous
    columns and lambda for categorical ones. ``value`` is inf where some fit does not exist.
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim == 1:
        X = X.reshape(-1, 1)
    bw = np.atleast_1d(np.asarray(bandwidth, dtype=np.float64))
    v, g, _, _ = _core.bandwidth_objective(
        X, np.asarray(y, dtype=np.float64).ravel(), bw, _degree_of(estimator), str(method),
        str(kernel), "" if var_types is None else str(var_types), str(unordered_kernel),
        str(ordered_kernel), float(ridge), True, _sample_weight(sample_weight, X.shape[0]))
    return float(v), np.asarray(g).ravel()


def _sample_weight(sample_weight, n: int):
    """sample_weight as a float64 vector of length n (None stays None), checked."""
    if sample_weight is None:
        return None
    w = np.asarray(sample_weight, dtype=np.float64)
    if w.ndim != 1 or w.shape[0] != n:
        raise ValueError(f"sample_weight: expected shape ({n},) (one weight per row of X), "
                         f"got {w.shape}")
    if not (np.all(np.isfinite(w)) and np.all(w >= 0)):
        raise ValueError("sample_weight: must be finite and >= 0")
    if not np.any(w > 0):
        raise ValueError("sample_weight: all weights are zero; give at least one positive "
                         "weight")
    return w
