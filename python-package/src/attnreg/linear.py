"""Least squares as attention (Goulet Coulombe 2025, arXiv:2504.09663): OLS, ridge, PCR and the softmax attention regression.

Every estimator here predicts ``sum_i a_i(x) y_i``; ``attention_weights(X)`` returns the rows
``a(x)`` over the training rows (``predict(X) == attention_weights(X) @ y_train``). For the linear
ones the weights come from an embedding ``Omega`` of the design ``d(x) = [1, x]``:
``a(x)' = d(x)' Omega D'`` with ``Omega = (D'D)^{-1}`` (OLS, Goulet Coulombe 2025, arXiv:2504.09663, eqs. 4-8 and 20-21),
``U_L Lambda_L^{-1} U_L'`` (PCR, eqs. 22-27) or ``(D'D + alpha diag(0, I))^{-1}`` (ridge,
eqs. 29-30), and factorise as ``F_test F_train'`` (``factors``). ``AttentionRegression`` fits
``softmax(X Omega X')`` (eq. 28). Every formula lives in the C++ core; this module adds
scikit-learn plumbing.

Data layout: one observation per row (numpy ``(n, p)`` arrays or pandas DataFrames).
"""
from __future__ import annotations

import numbers
import warnings
from types import SimpleNamespace

import numpy as np
from numpy.typing import ArrayLike
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from . import _core, _ols_tall
from ._deprecation import alpha_to_level, check_level, renamed
from ._smoother import _Smoother
from ._validation import (as_2d_y, numbers_only, refuse_non_number_params,
                          require_numeric_columns, squeeze_outputs, validate_data)

_COV_TYPES = ("nonrobust", "HC0", "HC1", "HC2", "HC3", "HAC", "cluster", "CR0", "CR1", "CR2",
              "CR3")
_CLUSTER_TYPES = ("cluster", "CR0", "CR1", "CR2", "CR3")
_WEIGHT_TYPES = ("analytic", "frequency")


class NoResidualDFWarning(UserWarning):
    """An OLS fit with as many observations as estimated coefficients (n == rank): the fit is
    exact, there is no residual variance to estimate, and the standard errors, t statistics and
    p-values are nan (as R's ``summary.lm`` reports)."""


def _alpha_to_level(alpha) -> float:
    """The deprecated ``alpha=`` of OLS's summary / conf_int / predict: level = 1 - alpha
    (refused as before when not a number strictly between 0 and 1)."""
    from ._summary import check_alpha

    return 1.0 - check_alpha(alpha)


def _no_positional_alpha(fn):
    """``conf_int(0.05)``: the first positional argument was alpha and is now the level; for
    one release a positional value below 0.5 (an alpha read as a level) is refused, not
    silently turned into a 5% interval."""
    import functools

    @functools.wraps(fn)
    def inner(self, *args, **kwargs):
        if args and isinstance(args[0], numbers.Real) and not isinstance(args[0], bool) \
                and 0.0 < float(args[0]) < 0.5:
            raise ValueError(f"level: conf_int's first argument is now the interval's level (a "
                             f"fraction: 0.95 for a 95% interval), got {args[0]!r}; the old "
                             f"alpha={args[0]!r} is level={1 - float(args[0]):.6g} (pass level= by "
                             f"name)")
        return fn(self, *args, **kwargs)

    return inner


def _warn_no_residual_df(n: int, rank: int, stacklevel: int = 3) -> None:
    warnings.warn(
        f"OLS: no residual degrees of freedom (n = {n} observations, rank = {rank}): the fit is "
        "exact, so the standard errors, t statistics and p-values are nan; add observations or "
        "remove columns.",
        NoResidualDFWarning,
        stacklevel=stacklevel,
    )


def _note_cov_fix(est, inf, stacklevel: int = 3) -> bool:
    """Set ``est.cov_fixed_`` from the core's flag and warn when the two-way clustered
    covariance was eigenvalue-fixed (Cameron, Gelbach and Miller 2011, sec. 2.3)."""
    fixed = bool(inf.get("psd_fixed", False))
    est.cov_fixed_ = fixed
    if fixed:
        _warn_cov_fixed(type(est).__name__, float(inf.get("psd_min_eigenvalue", 0.0)), stacklevel + 1)
    return fixed


def _warn_cov_fixed(name: str, ratio: float, stacklevel: int = 3) -> None:
    warnings.warn(
        f"{name}: the two-way clustered covariance V_1 + V_2 - V_12 was not positive "
        f"semi-definite (smallest eigenvalue {ratio:.3g} times the largest); it was replaced by "
        "U max(Lambda, 0) U' (the eigenvalue fix of Cameron, Gelbach and Miller 2011, "
        "J. Bus. Econ. Stat. 29(2), sec. 2.3, doi:10.1198/jbes.2010.07136, as reghdfe and fixest "
        "do), so the standard errors are those of the fixed covariance (cov_fixed_ is True).",
        UserWarning,
        stacklevel=stacklevel,
    )


def _no_columns_as_array(X):
    """A table without columns (a DataFrame from a formula 'y ~ 1') -> an (n, 0) array, which
    scikit-learn's validation takes (it cannot infer a dtype from no columns)."""
    shape = getattr(X, "shape", None)
    if shape is not None and len(shape) == 2 and shape[1] == 0 and not isinstance(X, np.ndarray):
        return np.empty((shape[0], 0))
    return X


def _recode_levels(codes, levels):
    """Codes of a subset of the rows -> dense codes over the levels that remain."""
    out = np.empty_like(codes)
    kept_levels = []
    for j in range(codes.shape[1]):
        uniq, inv = np.unique(codes[:, j], return_inverse=True)
        out[:, j] = inv
        kept_levels.append(levels[j][uniq])
    return out, kept_levels


def _check_fe_options(fe_tol, fe_max_iter) -> None:
    """The absorbed fit's options, named as the user passed them (the core says tol, max_iter)."""
    if (isinstance(fe_tol, (bool, np.bool_)) or not isinstance(fe_tol, (int, float, np.number))
            or not (0.0 < float(fe_tol) < 1.0)):
        raise ValueError(f"fe_tol: must be a number in (0, 1) (the relative accuracy of the "
                         f"within transformation; default 1e-10), got {fe_tol!r}")
    if (isinstance(fe_max_iter, (bool, np.bool_)) or not isinstance(fe_max_iter, (int, np.integer))
            or fe_max_iter < 1):
        raise ValueError(f"fe_max_iter: must be an integer >= 1 (default 10000), got "
                         f"{fe_max_iter!r}")


def _maxlags_arg(maxlags) -> int:
    if maxlags is None:
        return -1
    if (isinstance(maxlags, (bool, np.bool_)) or not isinstance(maxlags, numbers.Integral)
            or maxlags < 0):
        raise ValueError(f"maxlags: must be None (automatic) or an integer >= 0, got {maxlags!r}")
    return int(maxlags)


def _check_cov_type(cov_type: str) -> str:
    for c in _COV_TYPES:
        if isinstance(cov_type, str) and cov_type.lower() == c.lower():
            return c
    raise ValueError(f"cov_type: must be one of {', '.join(_COV_TYPES)}; got {cov_type!r}")


def _check_weight_type(weight_type) -> str:
    if isinstance(weight_type, str) and weight_type.lower() in _WEIGHT_TYPES:
        return weight_type.lower()
    raise ValueError(
        f"weight_type: must be 'analytic' (Stata's aweight) or 'frequency' (Stata's fweight), "
        f"got {weight_type!r}"
    )


def _sample_weight_arg(sample_weight, n: int):
    """sample_weight -> float64 (n,) or None; the core checks the values (finite, >= 0, not all 0)."""
    if sample_weight is None:
        return None
    try:
        w = np.asarray(sample_weight, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"sample_weight: must be numeric, one weight per row ({exc})") from None
    if w.ndim == 2 and w.shape[1] == 1:
        w = w[:, 0]
    if w.ndim != 1:
        raise ValueError(f"sample_weight: must be 1-D with one weight per row, got shape {w.shape}")
    if w.shape[0] != n:
        raise ValueError(f"sample_weight: has length {w.shape[0]} but X has {n} rows (one weight per row)")
    return np.ascontiguousarray(w)


def _cluster_codes(groups, n: int) -> np.ndarray:
    """Cluster ids (n,), (n, 1) or (n, 2) of any hashable labels -> int64 codes (n, d), Fortran order."""
    import pandas as pd

    if isinstance(groups, pd.DataFrame):
        cols = [groups.iloc[:, j].to_numpy() for j in range(groups.shape[1])]
    elif isinstance(groups, pd.Series):
        cols = [groups.to_numpy()]
    else:
        arr = groups if isinstance(groups, np.ndarray) else np.asarray(groups, dtype=object)
        if arr.ndim == 1:
            cols = [arr]
        elif arr.ndim == 2:
            cols = [arr[:, j] for j in range(arr.shape[1])]
        else:
            raise ValueError(f"groups: must have shape (n,) or (n, 2), got {arr.shape}")
    if not 1 <= len(cols) <= 2:
        raise ValueError(
            f"groups: one or two columns of cluster ids (one- or two-way clustering), got {len(cols)}"
        )
    codes = np.empty((n, len(cols)), dtype=np.int64, order="F")
    for j, c in enumerate(cols):
        if len(c) != n:
            raise ValueError(f"groups: has {len(c)} rows but X has {n} (one cluster id per row)")
        cj, uniq = pd.factorize(c)
        if (cj < 0).any():
            i = int(np.flatnonzero(cj < 0)[0])
            raise ValueError(
                f"groups: cluster id missing (NaN or None) in row {i}"
                + (f" of column {j}" if len(cols) > 1 else "")
                + "; drop those rows or give them a cluster"
            )
        if len(uniq) < 2:
            raise ValueError(
                f"groups: {'column ' + str(j) + ' has' if len(cols) > 1 else 'has'} a single cluster "
                f"({uniq[0]!r}); clustered standard errors need at least 2 (use another clustering "
                "variable or a heteroskedasticity-robust cov_type such as 'HC1')"
            )
        codes[:, j] = cj
    return codes


class _AttentionEstimator(_Smoother):
    """Shared plumbing of the least-squares estimators: validation and output shapes
    (predict and attention weights are the smoother base's)."""

    def _validate_fit(self, X, y, fortran: bool = True, min_features: int = 1):
        require_numeric_columns(X, type(self).__name__)
        X = _no_columns_as_array(X) if min_features == 0 else X
        X, y = validate_data(self, X, y, multi_output=True, y_numeric=True, dtype=np.float64,
                             ensure_min_features=min_features)
        y2, self._y_1d = as_2d_y(y)
        return (np.asfortranarray(X) if fortran else X), np.asfortranarray(y2)

    def _check_X(self, X):
        check_is_fitted(self)
        require_numeric_columns(X, type(self).__name__)
        # A model of no columns (the mean from a formula 'y ~ 1'; fixed effects only) takes X
        # with no columns too.
        none = getattr(self, "n_features_in_", None) == 0
        X = _no_columns_as_array(X) if none else X
        return validate_data(self, X, reset=False, dtype=np.float64,
                             ensure_min_features=0 if none else 1)

    def _outputs(self, a: np.ndarray) -> np.ndarray:
        """(m, k) core result -> (m,) or (m, k)."""
        return squeeze_outputs(a, self._y_1d)

    def _split_coef(self, coef: np.ndarray, intercept: bool):
        """Design-order (q, k) coefficients -> (coef_, intercept_) in scikit-learn shapes."""
        off = 1 if intercept else 0
        k = coef.shape[1]
        if self._y_1d:
            return coef[off:, 0].copy(), (float(coef[0, 0]) if off else 0.0)
        return coef[off:, :].T.copy(), (coef[0, :].copy() if off else np.zeros(k))

    def _design_names(self) -> list[str]:
        names = (
            list(self.feature_names_in_)
            if hasattr(self, "feature_names_in_")
            else [f"x{j}" for j in range(self.n_features_in_)]
        )
        return (["(intercept)"] if self.fit_intercept else []) + names


class _FactorMixin:
    """factors / embedding / masked weights of the linear members (Goulet Coulombe 2025, arXiv:2504.09663, eqs. 5-7, 35)."""

    def factors(self, X: ArrayLike | None = None) -> np.ndarray:
        """Factors ``F`` with ``factors(X_test) @ factors().T == attention_weights(X_test)``.

        ``factors()`` (no argument) returns ``F_train`` (n_train, c), ``factors(X)`` the factors
        of new rows. For OLS ``F_train' F_train = I`` (eq. 6); for PCR too (with the constant
        factor ``1/sqrt(n)`` first when there is an intercept); for ridge the shrunk version.
        """
        check_is_fitted(self)
        if X is None:
            return self._model.training_factors()
        return self._model.factors(self._check_X(X))

    def embedding(self) -> np.ndarray:
        """Omega (q, q) over the design ``[1, x]`` (intercept first): A = d(X) Omega D'."""
        check_is_fitted(self)
        return self._model.embedding()

    def hat_diagonal(self) -> np.ndarray:
        """Diagonal of the in-sample attention (hat) matrix, shape (n_train,)."""
        check_is_fitted(self)
        return self._model.hat_diagonal()

    def masked_predictions(self, strict: bool = False) -> np.ndarray:
        """Masked (causal) in-sample predictions of Goulet Coulombe 2025, arXiv:2504.09663, eq. 35 for time-ordered rows.

        Row t averages the responses of rows tau <= t (tau < t with ``strict=True``) with the
        in-sample attention weights renormalised to sum to one. Computed from prefix sums in
        O(n r). Rows whose kept weights sum to (numerically) zero are ``nan``. Note the leakage
        Goulet Coulombe 2025, arXiv:2504.09663, section 4.3 describes: the similarities still use the full-sample Omega (see
        :func:`pseudo_out_of_sample`).
        """
        check_is_fitted(self)
        return self._outputs(self._model.masked_predictions(bool(strict)))

    def masked_weights(self, strict: bool = False) -> np.ndarray:
        """The (n_train, n_train) lower-triangular masked, renormalised weights of eq. 35."""
        check_is_fitted(self)
        return self._model.masked_weights(bool(strict))


class _CovArgs:
    """Covariance options, standard errors and covariance matrices of OLS, Ridge and PCR, as
    the core computes them (one implementation behind each class's documented method)."""

    def _cov_args(self, cov_type=None, maxlags=None, hac_adjust=None):
        """(cov_type, maxlags, hac_adjust, cluster codes or None) for the core."""
        ct = _check_cov_type(self.cov_type if cov_type is None else cov_type)
        ml = _maxlags_arg(self.maxlags if maxlags is None else maxlags)
        adj = bool(self.hac_adjust if hac_adjust is None else hac_adjust)
        groups = None
        if ct in _CLUSTER_TYPES:
            groups = getattr(self, "_groups", None)
            if groups is None:
                raise ValueError(
                    f"cov_type: {ct!r} needs cluster ids; pass groups= (one or two columns) to fit"
                )
        return ct, ml, adj, groups

    def _standard_errors(self, cov_type, maxlags, hac_adjust):
        check_is_fitted(self)
        se = self._model.std_errors(*self._cov_args(cov_type, maxlags, hac_adjust))
        return se[:, 0].copy() if self._y_1d else se.T.copy()

    def _cov_params(self, cov_type, maxlags, hac_adjust, output):
        check_is_fitted(self)
        k = 1 if self._y_1d else int(self.coef_.shape[0])
        if (isinstance(output, (bool, np.bool_)) or not isinstance(output, numbers.Integral)
                or not 0 <= output < k):
            raise ValueError(
                f"output: must be an integer in [0, {k - 1}] (the index of a column of y; the model "
                f"has {k} output{'s' if k > 1 else ''}), got {output!r}"
            )
        ct, ml, adj, groups = self._cov_args(cov_type, maxlags, hac_adjust)
        return self._model.covariance(ct, ml, adj, int(output), groups)


class OLS(_CovArgs, _FactorMixin, _AttentionEstimator):
    """Ordinary least squares solved by column-pivoted QR, with its attention form.

    The prediction at a row x is ``sum_i a_i(x) y_i`` with attention weights
    ``a(x)' = d(x)' (D'D)^{-1} D'`` (Goulet Coulombe 2025, arXiv:2504.09663, eqs. 4-8), where ``D`` is the training design
    (with a leading column of ones when ``fit_intercept``). With an intercept every row of
    weights sums to one. ``D'D`` is never formed or inverted.

    Parameters
    ----------
    fit_intercept : bool, default=True
        Add an (unpenalised) intercept column.
    cov_type : {"nonrobust", "HC0", "HC1", "HC2", "HC3", "HAC", "cluster", "CR0", "CR1", "CR2", "CR3"}, default="nonrobust"
        Covariance of the coefficients behind ``coef_se_`` and ``summary()``: classical,
        White's heteroskedasticity-robust HC0-HC3 (as ``sandwich::vcovHC`` and statsmodels),
        Newey-West HAC with Bartlett weights (as ``sandwich::NeweyWest(prewhite=FALSE)`` and
        statsmodels ``cov_type="HAC"``), or cluster-robust with the cluster ids passed to
        ``fit(..., groups=)``: "cluster" = "CR1" (Stata's ``vce(cluster)``: factor
        G/(G-1) (N-1)/(N-k), p-values from t with G - 1 degrees of freedom), "CR0" (no factor),
        "CR2" (Bell and McCaffrey 2002: residuals of cluster g premultiplied by
        (I - H_gg)^{-1/2}; one-way only). With two columns of ids the covariance is two-way
        (Cameron, Gelbach and Miller 2011, J. Bus. Econ. Stat. 29(2)): V_1 + V_2 - V_12, CR1
        scaled once with G = min(G_1, G_2) as Stata's ``ivreg2``/``reghdfe`` (statsmodels scales
        each term by its own G instead). V_1 + V_2 - V_12 can be indefinite (a negative
        variance, so a nan standard error); then, as Cameron, Gelbach and Miller (2011,
        sec. 2.3, doi:10.1198/jbes.2010.07136) propose and ``reghdfe`` and fixest do, V = U
        Lambda U' is replaced by U max(Lambda, 0) U' (in the coefficients' units), a
        ``UserWarning`` says so and ``cov_fixed_`` is True. One-way and HC covariances are
        positive semi-definite by construction and never changed. "CR3" (one-way): the
        cluster jackknife (G-1)/G sum_g (b_(g) - b)(b_(g) - b)' (MacKinnon, Nielsen and Webb
        2023, J. Econometrics 232(2)) in closed form from the per-cluster blocks of the design,
        never a refit; with ``absorb`` for factors nested in the clusters and for one factor
        that is not (pyfixest's CRV3 multiplies the sum by its CR1 factor instead of (G-1)/G).
        HC2/HC3 divide by 1 - h_i: a row of leverage one (an event dummy that is 1 on one row fits
        it exactly) has residual 0 and the term 0/0, which is left out (as for a singleton level of
        an absorbed factor; rows within 16 r u cond(R) of leverage one count as such); ``summary()``
        notes how many.
    maxlags : int or None, default=None
        HAC lags, 0 to n - 1; None uses floor(4 (n/100)^(2/9)).
    hac_adjust : bool, default=False
        HAC small-sample factor n/(n - rank) (sandwich's ``adjust=TRUE``, statsmodels'
        ``use_correction``).
    precision : {"auto", "double", "extended"}, default="auto"
        "extended" refactors the design in double-double arithmetic (about 32 digits): the NIST
        StRD Filip and Wampler problems come out to the accuracy the double-rounded data allow.
        "auto" does so when it is cheap or the design is ill-conditioned.
    rank_tol : float, default=1e-7
        Relative pivot tolerance of double-precision factorisations, as R's ``lm``. When the
        design is rank-deficient, columns are taken in order, intercept first, and a column whose
        norm after removing the earlier kept columns falls below ``rank_tol`` times its own norm
        is *aliased*, as ``lm`` does: coefficient ``nan``, left out of predictions (a
        ``UserWarning`` says which). Extended-precision fits use 1e-11.
    n_threads : int, default=0
        Threads for the core (0 = OpenMP default).
    weight_type : {"analytic", "frequency"}, default="analytic"
        Meaning of ``sample_weight`` (Stata's conventions; the coefficients are the same
        weighted least squares (D'WD)^{-1} D'W y either way). "analytic" (Stata's aweight; what
        statsmodels' WLS and R's ``lm(weights=)`` do): row i is one observation with variance
        proportional to 1/w_i; N = the number of rows with positive weight (rows of weight 0
        are left out, as ``lm``). "frequency" (Stata's fweight): row i stands for w_i identical
        observations, N = sum(w), and every statistic equals the unweighted one on the data
        with row i repeated w_i times (HAC is refused); the weights must then be whole numbers
        (for others use "analytic"). N enters the residual degrees of freedom
        N - rank, sigma2 = sum w_i e_i^2 / (N - rank), the HC1/CR1 factors and adjusted R^2.
        With ``absorb=``, rows of weight 0 are left out of the fit (``n_zero_weight_`` says
        how many), so they count in neither N, the degrees of freedom nor the level counts.
    fe_tol : float, default=1e-10
        With ``fit(..., absorb=...)`` and two or more factors: stopping tolerance of the
        alternating projections, about the accuracy of the within-transformed data relative to
        their largest value (one factor is exact in one pass).
    fe_max_iter : int, default=10000
        Cap on the accelerated projection steps; reaching it warns (``ConvergenceWarning``).
    drop_singletons : bool, default=True
        With ``fit(..., absorb=...)``: leave singleton rows (a level of some factor with one
        row; found iteratively, since dropping one can make another) out of every statistic,
        as reghdfe and pyfixest do (Correia 2015, "Singletons, cluster-robust standard errors
        and fixed effects: a bad mix"): they are fitted exactly by their own fixed effect and
        add nothing to the coefficients, but count in n and the absorbed levels. n, the
        degrees of freedom, G, R^2 and the small-sample factors are those of the fit without
        them; the rows keep their fitted values (residual 0) and fixed effects, so
        ``predict`` and ``attention_weights`` work on every training row. ``n_singletons_``
        and ``summary()`` say how many. False keeps them (fixest's ``fixef.rm = "none"``).
    ssc : dict or None, default=None
        Small-sample conventions of CR1 as fixest's ``ssc()`` (see :func:`attnreg.ssc`):
        ``{"k_adj": True, "k_fixef": "nonnested", "G_adj": True}`` (the default, as fixest,
        pyfixest and reghdfe): factor G/(G-1) (N-1)/(N-K), K = rank plus the absorbed
        parameters not nested in a cluster (one kept per nested factor). Used with ``absorb``.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,) or (n_targets, n_features)
    intercept_ : float or ndarray of shape (n_targets,); 0 when fixed effects are absorbed
        (they contain the constant).
    coef_se_, intercept_se_ : standard errors under ``cov_type``, same shapes.
    tvalues_, pvalues_ : t statistics and two-sided p-values (Student t, ``df_resid_``), design order.
    rsquared_, rsquared_adj_ : float or ndarray (centred R^2 with an intercept, as lm).
    sigma2_ : float or ndarray, residual variance RSS / (n - rank).
    df_resid_ : float, n - rank. When it is 0 (as many observations as estimated coefficients)
        the standard errors, t statistics and p-values are nan and fit warns with
        ``NoResidualDFWarning``, as R's ``summary.lm`` does.
    rank_ : int, numerical rank of the design.
    n_clusters_ : int or tuple of two ints, clusters per dimension (cluster cov_types only).
    cov_fixed_ : bool, True when the two-way clustered covariance was indefinite and replaced
        by its positive semi-definite part (Cameron, Gelbach and Miller 2011, sec. 2.3; see
        ``cov_type``); False otherwise.
    aliased_ : ndarray of bool, one per design column (intercept first).
    extended_precision_ : bool, whether the double-double path produced the fit.
    eigenvalues_ : eigenvalues of D'D (decreasing), the Lambda of eq. 4.
    n_features_in_, feature_names_in_ : as in scikit-learn.
    fe_names_ : list of str, the absorbed factors (only after ``fit(..., absorb=...)``; then
        the design has no intercept column and ``df_resid_`` counts the absorbed levels).
    n_fe_levels_ : list of int, levels per absorbed factor.
    rsquared_within_ : float or ndarray, 1 - RSS / TSS of the within-transformed y (fixest's
        within R^2); ``rsquared_`` is then the overall R^2 of the full model.
    df_absorbed_ : int, absorbed parameters: levels minus redundant levels.
    df_absorbed_exact_ : bool, False when the redundant levels of three or more factors are the
        lower bound (one per factor beyond the second) because the exact count was too costly.
    fe_iterations_, fe_converged_ : projection steps taken and whether fe_tol was reached.
    n_singletons_ : int, singleton rows left out of the statistics (``drop_singletons``).

    Examples
    --------
    >>> import numpy as np, attnreg
    >>> X = np.arange(10.0).reshape(-1, 1); y = 2 * X[:, 0] + 1
    >>> m = attnreg.OLS().fit(X, y)
    >>> float(round(m.coef_[0], 6)), float(round(m.intercept_, 6))
    (2.0, 1.0)
    >>> A = m.attention_weights(X[:2]); bool(np.allclose(A.sum(axis=1), 1.0))
    True
    """

    def __init__(
        self,
        fit_intercept: bool = True,
        cov_type: str = "nonrobust",
        maxlags: int | None = None,
        hac_adjust: bool = False,
        precision: str = "auto",
        rank_tol: float = 1e-7,
        n_threads: int = 0,
        weight_type: str = "analytic",
        fe_tol: float = 1e-10,
        fe_max_iter: int = 10000,
        drop_singletons: bool = True,
        ssc: dict | None = None,
    ):
        self.fit_intercept = fit_intercept
        self.cov_type = cov_type
        self.maxlags = maxlags
        self.hac_adjust = hac_adjust
        self.precision = precision
        self.rank_tol = rank_tol
        self.n_threads = n_threads
        self.weight_type = weight_type
        self.fe_tol = fe_tol
        self.fe_max_iter = fe_max_iter
        self.drop_singletons = drop_singletons
        self.ssc = ssc

    def fit(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None, *,
            groups=None, absorb=None):
        """Fit by column-pivoted QR (weighted least squares when ``sample_weight`` is given).

        Tall designs (n >= 20,000 rows and n >= 50 q, q the design columns; a single output;
        ``cov_type`` "nonrobust" or HC0-HC3; no ``absorb``; ``precision`` "auto" or "double")
        take a faster path with the same results: a QR of row panels of X read in place
        (TSQR; Demmel, Grigori, Hoemmen and Langou 2012, doi:10.1137/080731992) refined by
        corrected semi-normal equations (Bjorck 1987, doi:10.1016/0024-3795(87)90101-7),
        which gives the coefficients, the residual statistics and the covariance of
        ``cov_type``. The model then keeps a reference to the training ``X`` (no copy, as
        scikit-learn's neighbours estimators do; do not modify it in place) and forms the
        full QR fit from it on first use by a method that needs it (``attention_weights``,
        ``factors``, ``hat_diagonal``, ``summary``, ``conf_int``, prediction intervals,
        ``eigenvalues_``, or another ``cov_type`` in ``standard_errors``/``cov_params``);
        after that the reference is dropped. Pickling keeps the reference's data until then.

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
        sample_weight : array-like of shape (n_samples,), optional
            Observation weights w_i >= 0 (finite, not all 0): minimises sum_i w_i (y_i - d_i'b)^2.
            ``weight_type`` says how they count in degrees of freedom. The fit stays a linear
            smoother: ``attention_weights(x) = d(x)' (D'WD)^{-1} D'W`` (weight-0 rows get 0).
        groups : array-like, pandas.Series or DataFrame of shape (n_samples,) or (n_samples, 2), optional
            Cluster ids (any hashable labels; one column for one-way, two for two-way clustering)
            for ``cov_type`` "cluster", "CR0", "CR1" or "CR2"; kept for ``standard_errors``,
            ``cov_params`` and ``summary`` with those types.
        absorb : array-like of shape (n_samples,) or (n_samples, n_factors), pandas Series or
            DataFrame, optional
            Categorical factors (any hashable labels; one column per factor) whose fixed effects
            are absorbed, as fixest's ``y ~ x | f1 + f2``: the within transformation by weighted
            alternating projections (Gaure 2013, Computational Statistics & Data Analysis 66,
            8-18, doi:10.1016/j.csda.2013.03.024; exact in one pass for one factor), then
            OLS on the transformed data. The fixed effects replace the intercept. Residual
            degrees of freedom are n - rank - (levels - redundant levels), the redundant levels
            counted from the connected components of the factor graph (exact for two factors,
            and for three or more when the further factors are small). A regressor absorbed by
            the fixed effects (constant within the levels) gets a nan coefficient and a warning
            naming it. Missing labels are an error. HC2/HC3 add the leverage of the dummies
            to that of the transformed X (for two or more factors from a dense pseudo-inverse
            of the dummy Gram matrix per connected component of the levels, up to 3000 levels
            per component; beyond that they are refused in favour of HC1). CR2 needs every
            absorbed factor nested in the clusters (each level within one cluster), where it
            equals the dummy-variable fit's CR2 (Pustejovsky and Tipton 2018, JBES 36(4),
            Theorem 2); otherwise it is refused in favour of CR1 or CR0.

        Returns
        -------
        self
        """
        refuse_non_number_params(self)
        ct = _check_cov_type(self.cov_type)
        wt = _check_weight_type(self.weight_type)
        if groups is not None and ct not in _CLUSTER_TYPES:
            raise ValueError(
                f"groups: given, but cov_type={self.cov_type!r}; use cov_type='cluster' (or 'CR0', "
                "'CR1', 'CR2') for clustered standard errors, or drop groups"
            )
        if groups is None and ct in _CLUSTER_TYPES:
            raise ValueError(
                f"cov_type: {self.cov_type!r} needs cluster ids; pass groups= (one or two columns "
                "of ids, one row per observation) to fit"
            )
        # No columns: fixed effects only (absorb=), or the mean from a formula 'y ~ 1' (the
        # array interface keeps scikit-learn's error for X without columns).
        no_cols_ok = absorb is not None or (self.fit_intercept and
                                            getattr(self, "_formula_no_columns_ok", False))
        X, y2 = self._validate_fit(X, y, fortran=False,  # the tall path reads X in place
                                   min_features=0 if no_cols_ok else 1)
        w = _sample_weight_arg(sample_weight, X.shape[0])
        self._groups = None if groups is None else _cluster_codes(groups, X.shape[0])
        for name in ("fe_names_", "n_fe_levels_", "rsquared_within_", "df_absorbed_", "n_singletons_",
                     "df_absorbed_exact_", "fe_iterations_", "fe_converged_", "_fe_levels",
                     "_eigenvalues", "_tall", "_lazy_fit", "_core_model", "_model"):
            self.__dict__.pop(name, None)
        if absorb is not None:
            return self._fit_absorbed(np.asfortranarray(X), y2, absorb, w)
        if getattr(self, "ssc", None) is not None:
            from .cluster_inference import _ssc_args

            if _ssc_args(self.ssc) != (True, "nonnested", True):
                raise ValueError(
                    "ssc: its options apply to fits with absorb= (fixed effects); without "
                    "fixed effects CR1 uses G/(G-1) (N-1)/(N-K) (use cov_type='CR0' for no factor)"
                )
        cov = self._cov_args()
        tall = _ols_tall.tall_fit(self, X, y2, w, cov[0], wt)
        if tall is not None:
            return self._set_tall(tall, X, y2, w, cov[0], wt)
        model = _ols_tall.build_core_model(self, X, y2, w, cov[0], wt)
        self._model = model
        inf = model.inference(*cov)
        self.aliased_ = np.asarray(model.aliased(), dtype=bool)
        self.rank_ = int(model.rank)
        self.extended_precision_ = bool(model.extended_precision)
        self.eigenvalues_ = model.eigenvalues()
        return self._set_fit_stats(inf, model.sigma2(), float(model.n_effective))

    def _set_tall(self, tall, X, y2, w, ct, wt):
        """Results of the tall path; the core model is fitted on first use (see ``fit``)."""
        inf = tall["inference"]
        self.aliased_ = np.isnan(tall["coef"])
        self.rank_ = int(tall["rank"])
        self.extended_precision_ = False
        self._tall = {"cov_type": ct, "cov": tall["cov"], "se": tall["std_errors"]}
        self._lazy_fit = (X, y2, w, ct, wt)  # a reference to the training data, not a copy
        return self._set_fit_stats(inf, np.array([tall["sigma2"]]),
                                   float(inf["df_residual"]) + self.rank_, depth=1)

    def _set_fit_stats(self, inf, sigma2, n_effective, depth: int = 0):
        """Coefficient table and fit statistics from the core's inference record."""
        k = inf["estimate"].shape[1]
        self.coef_, self.intercept_ = self._split_coef(inf["estimate"], self.fit_intercept)
        self.coef_se_, self.intercept_se_ = self._split_coef(inf["std_error"], self.fit_intercept)
        if not self.fit_intercept:
            self.intercept_se_ = float("nan") if self._y_1d else np.full(k, np.nan)
        one = (lambda a: float(a[0])) if self._y_1d else (lambda a: a.copy())
        self.tvalues_ = inf["t_value"][:, 0].copy() if self._y_1d else inf["t_value"].T.copy()
        self.pvalues_ = inf["p_value"][:, 0].copy() if self._y_1d else inf["p_value"].T.copy()
        self.rsquared_ = one(inf["r_squared"])
        self.rsquared_adj_ = one(inf["adj_r_squared"])
        self.sigma2_ = one(sigma2)
        self.df_resid_ = float(inf["df_residual"])
        if inf["n_clusters"]:
            nc = tuple(int(g) for g in inf["n_clusters"])
            self.n_clusters_ = nc[0] if len(nc) == 1 else nc
        elif hasattr(self, "n_clusters_"):
            del self.n_clusters_
        _note_cov_fix(self, inf, stacklevel=4 + depth)
        if self.df_resid_ == 0:
            _warn_no_residual_df(int(round(n_effective)), self.rank_, 4 + depth)
        if self.aliased_.any():
            names = self._design_names()
            dropped = [names[j] for j in np.flatnonzero(self.aliased_)]
            warnings.warn(
                f"OLS: the design has rank {self.rank_} < {len(names)} columns; aliased "
                f"(coefficient nan, left out of predictions): {', '.join(dropped)}. "
                "Remove collinear columns to silence this.",
                UserWarning,
                stacklevel=3 + depth,
            )
        return self

    @property
    def _model(self):
        return _ols_tall.core_model(self)

    @_model.setter
    def _model(self, model):
        self.__dict__["_core_model"] = model

    @property
    def eigenvalues_(self):
        """Eigenvalues of the design's cross-product in Goulet Coulombe's spectral form
        (the squared singular values behind ``encoder``); after the tall path of ``fit`` they
        come from the QR fit formed on first use."""
        d = self.__dict__
        if "_eigenvalues" in d:
            return d["_eigenvalues"]
        if "eigenvalues_" in d:  # objects pickled by earlier versions
            return d["eigenvalues_"]
        if "_tall" not in d:
            raise AttributeError("eigenvalues_")
        d["_eigenvalues"] = self._model.eigenvalues()
        return d["_eigenvalues"]

    @eigenvalues_.setter
    def eigenvalues_(self, value):
        self.__dict__["_eigenvalues"] = value

    def _fit_absorbed(self, X, y2, absorb, sample_weight=None):
        from ._absorb import encode_absorb

        from .cluster_inference import _ssc_args

        codes, names, levels = encode_absorb(absorb, X.shape[0])
        drop = getattr(self, "drop_singletons", True)
        if not isinstance(drop, (bool, np.bool_)):
            raise ValueError(f"drop_singletons: must be True or False, got {drop!r}")
        _check_fe_options(self.fe_tol, self.fe_max_iter)
        # Rows of weight 0 carry no information: as in the fit without fixed effects they count
        # in neither n nor the degrees of freedom, and here in no level count either; they are
        # left out of the absorbed fit (n_zero_weight_ says how many).
        self.n_zero_weight_ = 0
        if sample_weight is not None:
            sw = np.asarray(sample_weight, dtype=np.float64)
            zero = sw == 0
            if zero.any() and not zero.all():
                self.n_zero_weight_ = int(zero.sum())
                keep = ~zero
                X, y2, sample_weight = (np.asfortranarray(X[keep]), np.asfortranarray(y2[keep]),
                                        sw[keep])
                codes, levels = _recode_levels(codes[keep], levels)
                if getattr(self, "_groups", None) is not None:
                    self._groups = np.asfortranarray(np.asarray(self._groups)[keep])
        model = _core.AbsorbedOLS(
            float(self.fe_tol), int(self.fe_max_iter), True, float(self.rank_tol),
            str(self.precision), int(self.n_threads),
            _check_weight_type(self.weight_type) == "frequency", bool(drop),
            *_ssc_args(getattr(self, "ssc", None)),
        )
        w = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
        model.fit(X, y2, codes, w)
        self._model = model
        self.fe_names_ = names
        self._fe_levels = levels
        self.n_fe_levels_ = [int(v) for v in model.n_levels]
        info = model.df_info()
        self.df_absorbed_ = int(info["df_absorbed"])
        self.df_absorbed_exact_ = bool(info["exact"])
        self.fe_iterations_ = int(model.iterations)
        self.fe_converged_ = bool(model.converged)
        self.n_singletons_ = int(model.n_singletons)
        inf = model.inference(*self._cov_args())
        self.aliased_ = np.asarray(model.aliased(), dtype=bool)
        self.rank_ = int(model.rank)
        self.extended_precision_ = False
        k = y2.shape[1]
        self.coef_, _ = self._split_coef(inf["estimate"], False)
        self.coef_se_, _ = self._split_coef(inf["std_error"], False)
        self.intercept_ = 0.0 if self._y_1d else np.zeros(k)
        self.intercept_se_ = float("nan") if self._y_1d else np.full(k, np.nan)
        one = (lambda a: float(a[0])) if self._y_1d else (lambda a: a.copy())
        self.tvalues_ = inf["t_value"][:, 0].copy() if self._y_1d else inf["t_value"].T.copy()
        self.pvalues_ = inf["p_value"][:, 0].copy() if self._y_1d else inf["p_value"].T.copy()
        self.rsquared_ = one(inf["r_squared"])
        self.rsquared_adj_ = one(inf["adj_r_squared"])
        self.rsquared_within_ = one(model.r_squared_within())
        self.sigma2_ = one(model.sigma2())
        self.df_resid_ = float(inf["df_residual"])
        if inf["n_clusters"]:
            nc = tuple(int(g) for g in inf["n_clusters"])
            self.n_clusters_ = nc[0] if len(nc) == 1 else nc
        elif hasattr(self, "n_clusters_"):
            del self.n_clusters_
        _note_cov_fix(self, inf, stacklevel=4)
        if not self.fe_converged_:
            warnings.warn(
                f"OLS: the within transformation did not reach fe_tol={self.fe_tol:g} in "
                f"fe_max_iter={self.fe_max_iter} steps; raise fe_max_iter (the factor graph is "
                "poorly connected).",
                ConvergenceWarning,
                stacklevel=3,
            )
        if self.df_resid_ <= 0:
            _warn_no_residual_df(int(model.n_obs), self.rank_ + self.df_absorbed_)
        names_x = self._design_names()
        absorbed = np.asarray(model.absorbed(), dtype=bool)
        if absorbed.any():
            warnings.warn(
                "OLS: removed because of collinearity with the fixed effects "
                f"({', '.join(self.fe_names_)}) (coefficient nan): "
                f"{', '.join(names_x[j] for j in np.flatnonzero(absorbed))}.",
                UserWarning,
                stacklevel=3,
            )
        other = self.aliased_ & ~absorbed
        if other.any():
            warnings.warn(
                "OLS: aliased (collinear with other regressors after absorbing the fixed "
                f"effects; coefficient nan): {', '.join(names_x[j] for j in np.flatnonzero(other))}."
                " Remove collinear columns to silence this.",
                UserWarning,
                stacklevel=3,
            )
        return self

    def _absorbed(self) -> bool:
        return getattr(self, "fe_names_", None) is not None

    def _new_codes(self, absorb, m: int, what: str):
        from ._absorb import encode_new

        if self._absorbed():
            if absorb is None:
                raise ValueError(
                    f"{what}: the model absorbed fixed effects ({', '.join(self.fe_names_)}); "
                    "pass their levels for the new rows as absorb="
                )
            return encode_new(absorb, m, self.fe_names_, self._fe_levels)
        if absorb is not None:
            raise ValueError(f"{what}: absorb= is only for models fitted with absorb=")
        return None

    def attention_weights(self, X: ArrayLike, absorb=None) -> np.ndarray:
        """Attention weights of new rows over the training rows.

        For a model with absorbed fixed effects the fit is still a linear smoother:
        ``A = P + (X - P X_train) (X~' X~)^{-1} X~'`` with ``P`` the rows of the fixed-effect
        operator at the given levels and ``X~`` the within-transformed design, so
        ``predict(X, absorb) == A @ y_train`` (in-sample: the fitted values).

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (m, n_features)
        absorb : levels of the absorbed factors for these rows (required for absorbed fits).

        Returns
        -------
        ndarray of shape (m, n_train)
        """
        X = self._check_X(X)
        codes = self._new_codes(absorb, X.shape[0], "attention_weights")
        if codes is None:
            return self._model.attention_weights(X)
        return self._model.attention_weights(X, codes)

    def fixed_effects(self) -> dict:
        """Fixed-effect values, one labelled pandas Series per absorbed factor (a DataFrame,
        one column per output, for a 2-D y).

        References as fixest's ``fixef()``: with two or more factors, the first level of the
        second factor in each connected component of the factor graph is 0, and the first level
        of each further factor is 0; the constants are in the first factor. Levels of different
        components are comparable only through these references.
        """
        import pandas as pd

        check_is_fitted(self)
        if not self._absorbed():
            raise ValueError("fixed_effects: the model was fitted without absorb=")
        out = {}
        for name, lev, a in zip(self.fe_names_, self._fe_levels, self._model.fixed_effects()):
            if self._y_1d:
                out[name] = pd.Series(a[:, 0], index=lev, name=name)
            else:
                out[name] = pd.DataFrame(a, index=lev)
        return out

    def _design_names(self) -> list[str]:
        names = super()._design_names()
        if self._absorbed() and self.fit_intercept:
            return names[1:]
        return names

    def _require_not_absorbed(self, what: str) -> None:
        if self._absorbed():
            raise ValueError(
                f"{what}: not available for a fit with absorbed fixed effects; use "
                "attention_weights(X, absorb=...) for its attention form"
            )

    def factors(self, X: ArrayLike | None = None) -> np.ndarray:
        self._require_not_absorbed("factors")
        return super().factors(X)

    factors.__doc__ = _FactorMixin.factors.__doc__

    def embedding(self) -> np.ndarray:
        self._require_not_absorbed("embedding")
        return super().embedding()

    embedding.__doc__ = _FactorMixin.embedding.__doc__

    def hat_diagonal(self) -> np.ndarray:
        self._require_not_absorbed("hat_diagonal")
        return super().hat_diagonal()

    hat_diagonal.__doc__ = _FactorMixin.hat_diagonal.__doc__

    def masked_predictions(self, strict: bool = False) -> np.ndarray:
        self._require_not_absorbed("masked_predictions")
        return super().masked_predictions(strict)

    masked_predictions.__doc__ = _FactorMixin.masked_predictions.__doc__

    def masked_weights(self, strict: bool = False) -> np.ndarray:
        self._require_not_absorbed("masked_weights")
        return super().masked_weights(strict)

    masked_weights.__doc__ = _FactorMixin.masked_weights.__doc__

    def standard_errors(self, cov_type=None, maxlags=None, hac_adjust=None) -> np.ndarray:
        """Standard errors in design order (intercept first) under any covariance type,
        without refitting: shape (q,) or (n_targets, q). Cluster types use the ``groups``
        given to fit."""
        check_is_fitted(self)
        ct = _check_cov_type(self.cov_type if cov_type is None else cov_type)
        se = _ols_tall.cached(self, ct, "se")
        return se.copy() if se is not None else self._standard_errors(cov_type, maxlags, hac_adjust)

    def cov_params(self, cov_type=None, maxlags=None, hac_adjust=None, output: int = 0):
        """Covariance matrix (q, q) of the coefficients of one output, design order."""
        check_is_fitted(self)
        ct = _check_cov_type(self.cov_type if cov_type is None else cov_type)
        V = _ols_tall.cached(self, ct, "cov") if type(output) is int and output == 0 else None
        return V.copy() if V is not None else self._cov_params(cov_type, maxlags, hac_adjust, output)

    def encoder(self) -> np.ndarray:
        """W = U Lambda^{-1/2} (q, rank) with Omega = W W' (Goulet Coulombe 2025, arXiv:2504.09663, eq. 12)."""
        check_is_fitted(self)
        self._require_not_absorbed("encoder")
        return self._model.encoder()

    def loo_predictions(self) -> np.ndarray:
        """Exact leave-one-out predictions ``y_i - e_i / (1 - h_ii)``; nan where h_ii = 1."""
        check_is_fitted(self)
        self._require_not_absorbed("loo_predictions")
        return self._outputs(self._model.loo_predictions())

    @renamed({"alpha": _alpha_to_level}, alpha="level")
    def summary(self, cov_type=None, maxlags=None, hac_adjust=None, level: float = 0.95):
        """Regression summary as statsmodels prints it, returned as data (single output).

        Parameters
        ----------
        cov_type, maxlags, hac_adjust : as the constructor; None uses the fitted model's.
        level : float, default=0.95
            Level of the confidence intervals, a fraction in (0, 1). The former
            ``alpha = 1 - level`` is a deprecated alias.

        Returns
        -------
        RegressionSummary
            ``.coefficients`` (DataFrame: estimate, std_error, t, p_value, ci_lower, ci_upper,
            one row per design column, intercept first) and ``.header`` (n, df_model,
            df_resid, r_squared, adj_r_squared, F, F_pvalue, sigma, cov_type, log_likelihood,
            aic, bic; n_clusters and r_squared_within when present). ``print`` shows the
            fixed-width report. The F statistic is the Wald test that all slopes are zero
            under ``cov_type`` (the classical F under "nonrobust"); AIC and BIC count the
            estimated coefficients, as statsmodels.
        """
        from ._summary import ols_summary

        check_is_fitted(self)
        if not self._y_1d:
            raise ValueError("summary: only for a single output; fit one model per column")
        level = check_level(level)
        inf = self._model.inference(*self._cov_args(cov_type, maxlags, hac_adjust))
        if inf.get("psd_fixed"):
            _warn_cov_fixed(type(self).__name__, float(inf["psd_min_eigenvalue"]))
        V = self.cov_params(cov_type, maxlags, hac_adjust)
        return ols_summary(self, inf, V, level)

    @_no_positional_alpha
    @renamed({"alpha": _alpha_to_level}, alpha="level")
    def conf_int(self, level: float = 0.95, cov_type=None, maxlags=None, hac_adjust=None):
        """Confidence intervals ``b +- t_{(1+level)/2, df_resid} se`` of the coefficients.

        ``level`` is a fraction in (0, 1); the former ``alpha = 1 - level`` is a deprecated
        alias. This release refuses a positional level below 0.5 (``conf_int(0.05)`` was
        alpha = 0.05); pass ``level=`` by name for such a level.

        Returns
        -------
        pandas.DataFrame
            Columns ``lower`` and ``upper``, one row per design column (intercept first).
        """
        c = self.summary(cov_type, maxlags, hac_adjust, level=level).coefficients
        return c[["ci_lower", "ci_upper"]].rename(columns={"ci_lower": "lower", "ci_upper": "upper"})

    @renamed({"alpha": _alpha_to_level}, alpha="level")
    def predict(self, X: ArrayLike, absorb=None, interval: str | None = None, level: float = 0.95,
                cov_type=None, maxlags=None, hac_adjust=None):
        """Predict at new rows, optionally with confidence or prediction intervals.

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (m, n_features)
        absorb : labels of the absorbed factors for the new rows (as in fit), required when
            the model absorbed fixed effects; every level must have been seen in fit.
        interval : {None, "confidence", "prediction"}, default=None
            None returns the predictions as an array. "confidence" gives intervals for the
            mean ``d(x)' b +- t se(x)`` with ``se(x)^2 = d(x)' V d(x)`` (``V`` the coefficient
            covariance under ``cov_type``); "prediction" gives intervals for a new observation,
            adding the residual variance: ``se^2 + sigma^2`` (as R's ``predict.lm`` and
            statsmodels' ``get_prediction().summary_frame``). Single output only.
        level : float, default=0.95
            Level of the intervals, a fraction in (0, 1) (Student t on ``df_resid_`` degrees of
            freedom; for clustered covariances on the number of clusters less one). The former
            ``alpha = 1 - level`` is a deprecated alias.
        cov_type, maxlags, hac_adjust : as in ``summary``.

        Returns
        -------
        ndarray of shape (m,) or (m, n_targets) without ``interval``; with it a
        pandas.DataFrame with columns ``fit``, ``se_fit`` (standard error of the mean),
        ``lower``, ``upper`` (index: that of X when it is a DataFrame).
        """
        if interval is None:
            Xc = self._check_X(X)
            codes = self._new_codes(absorb, Xc.shape[0], "predict")
            if codes is None and "_lazy_fit" in self.__dict__:
                return _ols_tall.predict(self, Xc)  # no need to form the QR fit
            if codes is None:
                return self._outputs(self._model.predict(Xc))
            return self._outputs(self._model.predict(Xc, codes))
        import pandas as pd

        from ._summary import inference_df, t_quantile

        if interval not in ("confidence", "prediction"):
            raise ValueError(f"interval: must be None, 'confidence' or 'prediction', got {interval!r}")
        level = check_level(level)
        check_is_fitted(self)
        if not self._y_1d:
            raise ValueError("predict: intervals only for a single output; fit one model per column")
        if getattr(self, "fe_names_", None):
            raise ValueError("predict: intervals are not available for a fit with absorbed fixed "
                             "effects (the effects of new rows are not estimated); refit with "
                             "the factors as dummy columns to get them")
        index = X.index if hasattr(X, "index") and hasattr(X, "columns") else None
        Xc = np.asfortranarray(self._check_X(X))
        fit = self._model.predict(Xc)[:, 0]
        V = self.cov_params(cov_type, maxlags, hac_adjust)
        var = _core.ols_prediction_variance(self._model, Xc, np.asfortranarray(V))
        se = np.sqrt(var)
        df = inference_df(self._model.inference(*self._cov_args(cov_type, maxlags, hac_adjust)))
        half = t_quantile(1 - (1 - level) / 2, df) * (
            np.sqrt(var + float(self.sigma2_)) if interval == "prediction" else se)
        return pd.DataFrame({"fit": fit, "se_fit": se, "lower": fit - half, "upper": fit + half},
                            index=index)

    def __getstate__(self):
        # The core model pickles itself (QR state + y); a tall fit whose QR fit was not formed
        # yet pickles its reference to the training data instead.
        return self.__dict__.copy()




def _check_groups_arg(cov_type, groups) -> str:
    ct = _check_cov_type(cov_type)
    if groups is not None and ct not in _CLUSTER_TYPES:
        raise ValueError(
            f"groups: given, but cov_type={cov_type!r}; use cov_type='cluster' (or 'CR0', "
            "'CR1', 'CR2') for clustered standard errors, or drop groups"
        )
    if groups is None and ct in _CLUSTER_TYPES:
        raise ValueError(
            f"cov_type: {cov_type!r} needs cluster ids; pass groups= (one or two columns "
            "of ids, one row per observation) to fit"
        )
    return ct


class _SpectralInference(_CovArgs):
    """Covariances, standard errors and summaries of Ridge and PCR (computed in the core)."""

    def _set_inference(self):
        inf = self._model.inference(*self._cov_args())
        self.coef_se_, self.intercept_se_ = self._split_coef(inf["std_error"], self.fit_intercept)
        if not self.fit_intercept:
            self.intercept_se_ = float("nan") if self._y_1d else np.full(inf["estimate"].shape[1], np.nan)
        one = (lambda a: float(a[0])) if self._y_1d else (lambda a: a.copy())
        self.tvalues_ = inf["t_value"][:, 0].copy() if self._y_1d else inf["t_value"].T.copy()
        self.pvalues_ = inf["p_value"][:, 0].copy() if self._y_1d else inf["p_value"].T.copy()
        self.rsquared_ = one(inf["r_squared"])
        self.rsquared_adj_ = one(inf["adj_r_squared"])
        self.sigma2_ = one(self._model.sigma2())
        self.df_resid_ = float(inf["df_residual"])
        if inf["n_clusters"]:
            nc = tuple(int(g) for g in inf["n_clusters"])
            self.n_clusters_ = nc[0] if len(nc) == 1 else nc
        elif hasattr(self, "n_clusters_"):
            del self.n_clusters_
        _note_cov_fix(self, inf, stacklevel=4)

    def standard_errors(self, cov_type=None, maxlags=None, hac_adjust=None) -> np.ndarray:
        """Standard errors in design order (intercept first) under any covariance type,
        without refitting: shape (q,) or (n_targets, q). Cluster types use the ``groups``
        given to fit. Variability around E[b], not the true coefficients (see ``cov_type``)."""
        return self._standard_errors(cov_type, maxlags, hac_adjust)

    def cov_params(self, cov_type=None, maxlags=None, hac_adjust=None, output: int = 0):
        """Covariance matrix (q, q) of the coefficients of one output, design order: the exact
        sandwich of the linear map b = M y (around E[b]; see ``cov_type``)."""
        return self._cov_params(cov_type, maxlags, hac_adjust, output)

    def summary(self, cov_type=None, maxlags=None, hac_adjust=None):
        """Coefficient table and fit statistics (single output), printed like statsmodels.

        Returns
        -------
        RegressionSummary
            ``.coefficients`` (estimate, std_error, t, p_value; Student t on N - tr H degrees
            of freedom, or clusters less one; no interval columns) and ``.header`` (n, df_model =
            tr H less the intercept, df_resid, r_squared, adj_r_squared, sigma, cov_type,
            n_clusters). A note says that the standard errors are around E[b].
        """
        from ._summary import spectral_summary

        check_is_fitted(self)
        if not self._y_1d:
            raise ValueError("summary: only for a single output; fit one model per column")
        inf = self._model.inference(*self._cov_args(cov_type, maxlags, hac_adjust))
        if inf.get("psd_fixed"):
            _warn_cov_fixed(type(self).__name__, float(inf["psd_min_eigenvalue"]))
        return spectral_summary(self, inf)

    @renamed({"alpha": alpha_to_level}, alpha="level")
    def conf_int(self, level: float = 0.95, cov_type=None, maxlags=None, hac_adjust=None):
        """Not available: the coefficients are shrunk (ridge) or truncated (PCR), so
        ``b +- t se`` covers E[b], not the coefficients. Raises ValueError naming what to use
        (:class:`OLS` and its ``conf_int``); the standard errors are in ``summary()``.
        ``level`` (formerly ``alpha = 1 - level``, which collided with Ridge's penalty)."""
        raise ValueError(
            f"conf_int: {type(self).__name__} coefficients are biased (shrunk or truncated), so "
            "b +- t se would cover their expectation, not the coefficients; for confidence "
            "intervals fit attnreg.OLS on the same data and use its conf_int (the standard "
            "errors around E[b] are in summary() and standard_errors())"
        )


class Ridge(_SpectralInference, _FactorMixin, _AttentionEstimator):
    """Ridge regression from one SVD, with its attention form (Goulet Coulombe 2025, arXiv:2504.09663, eqs. 29-30).

    Minimises ``||y - b0 - X b||^2 + alpha ||b||^2``; the intercept is never penalised (X and y
    are centred). With ``Xc = U S V'`` the attention weights are
    ``a(x) = 1/n + (x - x_bar)' V diag(s / (s^2 + alpha)) U'`` and sum to one.

    Parameters
    ----------
    alpha : float or array-like of floats, default=1.0
        Penalty (>= 0; 0 is least squares, minimum-norm when rank-deficient). Given several
        values, the one minimising ``criterion`` is chosen in one pass over the rows from one SVD
        (exact leave-one-out, as scikit-learn's RidgeCV), or the one minimising the
        cross-validated mean squared error of the splits ``cv``, and stored in ``alpha_``.
    fit_intercept : bool, default=True
    criterion : {"loo", "gcv", "aicc"} or None, default=None
        Criterion for a grid of alphas when ``cv`` is None: exact leave-one-out mean squared
        error (None means "loo"); generalised cross-validation n RSS / (n - tr H)^2; or AICc of
        Hurvich, Simonoff and Tsai (1998), ln(RSS/n) + (1 + tr H / n) / (1 - (tr H + 2) / n)
        (summed over outputs). Before this release the criterion was passed as ``cv="loo"``
        etc.; that spelling still works for one release with a ``FutureWarning``.
    n_threads : int, default=0
    weight_type : {"analytic", "frequency"}, default="analytic"
        Meaning of ``sample_weight`` (Stata's aweight / fweight, see :class:`OLS`). Both give
        the same fit; they differ in N of the inference (rows of positive weight, or sum(w)).
    cov_type : {"nonrobust", "HC0", "HC1", "HC2", "HC3", "HAC", "cluster", "CR0", "CR1", "CR2"}, default="nonrobust"
        Covariance behind ``coef_se_`` and ``summary()``, as in :class:`OLS` (cluster ids go to
        ``fit(..., groups=)``; one or two columns). The estimator is linear in y, b = M y, so
        the sandwich ``M diag(omega) M'`` (or its cluster form) is exact for it: classical
        ``sigma2 M W^{-1} M'`` with ``sigma2 = sum w_i e_i^2 / (N - tr H)``, and HC2/HC3/CR2
        use the leverages of the smoother H. Degrees of freedom are N - tr H (``df_resid_``).
        These are the variances of the estimator around its own expectation E[b] = M E[y].
        Ridge is biased, so ``b +- t se`` is not a confidence interval for the true
        coefficients (it covers them at the nominal rate only when the shrinkage bias is
        negligible; Hoerl and Kennard 1970, Technometrics 12(1); Hastie, Tibshirani and
        Friedman 2009, The Elements of Statistical Learning, sec. 3.4.1), hence no
        ``conf_int`` and no interval columns in ``summary()``. With a grid of alphas they are
        conditional on the chosen ``alpha_``. An indefinite two-way clustered covariance is
        replaced by its positive semi-definite part U max(Lambda, 0) U' (Cameron, Gelbach
        and Miller 2011, J. Bus. Econ. Stat. 29(2), sec. 2.3), with a ``UserWarning`` and
        ``cov_fixed_`` True, as for :class:`OLS`.
    maxlags : int or None, default=None
        HAC lags (see :class:`OLS`).
    hac_adjust : bool, default=False
        HAC small-sample factor N/(N - tr H).
    cv : int, cross-validation splitter or iterable of (train, test) splits, optional
        As scikit-learn's RidgeCV: with a grid of alphas, each alpha is scored by the mean over
        the splits of the test rows' mean squared error (averaged over outputs; weighted by
        ``sample_weight`` on the test rows when given), the smallest wins (the first on ties)
        and the model is refitted on all rows: RidgeCV with ``scoring="neg_mean_squared_error"``
        (RidgeCV's own default scores splits by R^2). An int k is k-fold (``KFold(k)``, no shuffling).
        None (the default) uses ``criterion`` instead.

    Attributes
    ----------
    coef_, intercept_ : as scikit-learn's Ridge.
    coef_se_, intercept_se_, tvalues_, pvalues_ : under ``cov_type`` (around E[b]).
    rsquared_, rsquared_adj_, sigma2_ : fit statistics (sigma2_ on N - tr H df).
    df_resid_ : float, N - tr H.
    n_clusters_ : int or tuple, clusters per dimension (cluster cov_types only).
    cov_fixed_ : bool, True when the two-way clustered covariance was eigenvalue-fixed (see
        ``cov_type``).
    alpha_ : float, the penalty in use.
    cv_results_ : dict (only for a grid): alphas, loo_mse, gcv, aicc, effective_df, best; with
        ``cv`` splits: alphas, mse (mean over splits), split_mse (alphas x splits), best.
    effective_df_ : float, tr(H) (intercept included).
    singular_values_ : singular values of the centred design.
    """

    def __init__(self, alpha=1.0, fit_intercept: bool = True, criterion: str | None = None,
                 n_threads: int = 0, weight_type: str = "analytic", cov_type: str = "nonrobust",
                 maxlags=None, hac_adjust: bool = False, cv=None):
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.criterion = criterion
        self.n_threads = n_threads
        self.weight_type = weight_type
        self.cov_type = cov_type
        self.maxlags = maxlags
        self.hac_adjust = hac_adjust
        self.cv = cv

    def _selection(self):
        """(criterion, splitter or None) from ``criterion`` and ``cv`` (the old ``cv="loo"``)."""
        criteria = ("loo", "gcv", "aicc")
        cv = self.cv
        criterion = self.criterion
        if isinstance(cv, str):
            if cv not in criteria:
                raise ValueError(f"cv: must be None, an int, a scikit-learn splitter or an "
                                 f"iterable of (train, test) splits, got {cv!r}; the criteria "
                                 f"'loo', 'gcv', 'aicc' go to criterion=")
            if criterion is not None:
                raise TypeError(f"Ridge: got both cv={cv!r} (the deprecated spelling of the "
                                f"criterion) and criterion={criterion!r}; pass criterion= only")
            import warnings

            warnings.warn(f"Ridge: cv={cv!r} is deprecated and will be removed in the next "
                          f"release; use criterion={cv!r} (cv= now takes scikit-learn "
                          f"cross-validation splits, as RidgeCV)", FutureWarning, stacklevel=3)
            return cv, None
        if criterion is None:
            criterion = "loo"
        if criterion not in criteria:
            raise ValueError(f"criterion: must be 'loo', 'gcv' or 'aicc', got {criterion!r}")
        return criterion, cv

    def fit(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None, *,
            groups=None):
        """Fit the estimator.

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
        sample_weight : array-like of shape (n_samples,), optional
            Observation weights w_i >= 0 (finite, not all 0): minimises
            ``sum_i w_i (y_i - b0 - x_i'b)^2 + alpha ||b||^2`` with weighted means for the
            intercept. The attention weights ``a(x) = w'/sum(w) + (x - x_bar)' V diag(s/(s^2 +
            alpha)) U' W^{1/2}`` still sum to one (weight-0 rows get 0). For a grid of alphas the
            criteria count row i w_i times: "loo" is sum_i w_i (y_i - yhat_{-i})^2 / sum(w)
            (row i left out entirely); "gcv" and "aicc" use RSS = sum_i w_i e_i^2 and n = sum(w),
            so with integer weights they equal the criteria of the data with rows repeated.
        groups : array-like, pandas.Series or DataFrame of shape (n_samples,) or (n_samples, 2), optional
            Cluster ids for ``cov_type`` "cluster", "CR0", "CR1" or "CR2" (as :class:`OLS`).

        Returns
        -------
        self
        """
        refuse_non_number_params(self)
        wt = _check_weight_type(self.weight_type)
        _check_groups_arg(self.cov_type, groups)
        X, y2 = self._validate_fit(X, y)
        w = _sample_weight_arg(sample_weight, X.shape[0])
        self._groups = None if groups is None else _cluster_codes(groups, X.shape[0])
        alphas = np.atleast_1d(np.asarray(self.alpha, dtype=np.float64)).ravel()
        if alphas.size == 0:
            raise ValueError("alpha: the grid of penalties is empty")
        criterion, cv = self._selection()
        if alphas.size > 1 and cv is not None:
            self.cv_results_ = self._split_scores(X, y2, w, alphas, cv, wt)
            alphas = alphas[self.cv_results_["best"]: self.cv_results_["best"] + 1]
        model = _core.Ridge(float(alphas[0]), bool(self.fit_intercept), int(self.n_threads),
                            weight_type=wt)
        if alphas.size == 1:
            model.fit(X, y2, w)
            if hasattr(self, "cv_results_") and cv is None:
                del self.cv_results_
        else:
            res = model.fit_select(X, y2, alphas, criterion, w)
            self.cv_results_ = {k: (int(v) if k == "best" else np.asarray(v)) for k, v in res.items()}
        self._model = model
        self.alpha_ = float(model.alpha)
        self.coef_, self.intercept_ = self._split_coef(model.coefficients(), self.fit_intercept)
        self.effective_df_ = float(model.effective_df())
        self.singular_values_ = model.singular_values()
        self._set_inference()
        return self

    def loo_predictions(self) -> np.ndarray:
        """Exact leave-one-out predictions (refitting without row i, intercept included)."""
        check_is_fitted(self)
        return self._outputs(self._model.loo_predictions())

    def _split_scores(self, X, y2, w, alphas, cv, wt) -> dict:
        """Mean squared error of each alpha on the test rows of each split of ``cv``."""
        from sklearn.model_selection import check_cv

        splits = list(check_cv(cv).split(X, y2[:, 0] if y2.shape[1] == 1 else y2))
        if not splits:
            raise ValueError("cv: gave no splits")
        mse = np.empty((alphas.size, len(splits)))
        for j, (train, test) in enumerate(splits):
            train, test = np.asarray(train), np.asarray(test)
            if train.size == 0 or test.size == 0:
                raise ValueError(f"cv: split {j} has an empty training or test set")
            model = _core.Ridge(float(alphas[0]), bool(self.fit_intercept), int(self.n_threads),
                                weight_type=wt)
            model.fit(np.asfortranarray(X[train]), np.asfortranarray(y2[train]),
                      None if w is None else w[train])
            Xt = np.asfortranarray(X[test])
            wt_test = None if w is None else w[test]
            for g, a in enumerate(alphas):
                model.set_alpha(float(a))
                err = (model.predict(Xt) - y2[test]) ** 2
                per_output = (np.average(err, axis=0, weights=wt_test)
                              if wt_test is not None and wt_test.sum() > 0 else err.mean(axis=0))
                mse[g, j] = per_output.mean()
        mean = mse.mean(axis=1)
        return {"alphas": alphas.copy(), "mse": mean, "split_mse": mse,
                "best": int(np.argmin(mean))}

    def coef_path(self, alphas: ArrayLike) -> np.ndarray:
        """Coefficients for each alpha from the stored SVD: (G, q) or (G, n_targets, q), design
        order (intercept first)."""
        check_is_fitted(self)
        a = np.atleast_1d(np.asarray(alphas, dtype=np.float64)).ravel()
        path = self._model.path(a)  # (G, k, q)
        return path[:, 0, :] if self._y_1d else path


class PCR(_SpectralInference, _FactorMixin, _AttentionEstimator):
    """Principal component regression as rank-L attention (Goulet Coulombe 2025, arXiv:2504.09663, eqs. 22-27).

    OLS on the first ``rank`` principal components of the centred X (the intercept is not
    reduced). Omega_L = U_L Lambda_L^{-1} U_L'; the factors ``F_train = [1/sqrt(n), U_L]`` are
    orthonormal (eq. 24) and predictions are ``F_test F_train' y`` (eq. 25). With ``rank`` equal
    to the number of features it is OLS.

    Parameters
    ----------
    rank : int or None, default=None
        Number of components L; None keeps all (the numerical rank of the centred X).
    fit_intercept : bool, default=True
    n_threads : int, default=0
    weight_type : {"analytic", "frequency"}, default="analytic"
        Meaning of ``sample_weight`` (Stata's aweight / fweight, see :class:`OLS`). Both give
        the same fit; they differ in N of the inference (rows of positive weight, or sum(w)).
    cov_type : {"nonrobust", "HC0", "HC1", "HC2", "HC3", "HAC", "cluster", "CR0", "CR1", "CR2"}, default="nonrobust"
        Covariance behind ``coef_se_`` and ``summary()``, as in :class:`OLS` (cluster ids go to
        ``fit(..., groups=)``; one or two columns). The estimator is linear in y, b = M y, so
        the sandwich ``M diag(omega) M'`` (or its cluster form) is exact for it: classical
        ``sigma2 M W^{-1} M'`` with ``sigma2 = sum w_i e_i^2 / (N - tr H)``, and HC2/HC3/CR2
        use the leverages of the smoother H. Degrees of freedom are N - tr H (``df_resid_``).
        These are the variances of the estimator around its own expectation E[b] = M E[y].
        With fewer components than the rank of X, PCR is biased (the dropped components'
        part of the coefficients is set to zero; Hastie, Tibshirani and Friedman 2009, The
        Elements of Statistical Learning, sec. 3.5.1), so ``b +- t se`` is not a confidence
        interval for the true coefficients, hence no ``conf_int`` and no interval columns in
        ``summary()``; with all components it is OLS. An indefinite two-way clustered covariance is
        replaced by its positive semi-definite part U max(Lambda, 0) U' (Cameron, Gelbach
        and Miller 2011, J. Bus. Econ. Stat. 29(2), sec. 2.3), with a ``UserWarning`` and
        ``cov_fixed_`` True, as for :class:`OLS`.
    maxlags : int or None, default=None
        HAC lags (see :class:`OLS`).
    hac_adjust : bool, default=False
        HAC small-sample factor N/(N - tr H).

    Attributes
    ----------
    coef_, intercept_ : ndarray, float
        Coefficients and intercept in the original units.
    rank_ : int
        Components used.
    components_ : ndarray of shape (``rank_``, n_features)
        Principal axes; with ``singular_values_`` and ``explained_variance_ratio_``.
    coef_se_, intercept_se_, tvalues_, pvalues_, rsquared_, rsquared_adj_, sigma2_
        As :class:`Ridge`; ``df_resid_`` = N - ``rank_`` - 1 (tr H of the projection).
    n_clusters_ : int or tuple
        Clusters per dimension (cluster cov_types only).
    cov_fixed_ : bool
        True when the two-way clustered covariance was eigenvalue-fixed (see ``cov_type``).
    """

    def __init__(self, rank: int | None = None, fit_intercept: bool = True, n_threads: int = 0,
                 weight_type: str = "analytic", cov_type: str = "nonrobust", maxlags=None,
                 hac_adjust: bool = False):
        self.rank = rank
        self.fit_intercept = fit_intercept
        self.n_threads = n_threads
        self.weight_type = weight_type
        self.cov_type = cov_type
        self.maxlags = maxlags
        self.hac_adjust = hac_adjust

    def fit(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None, *,
            groups=None):
        """Fit the estimator.

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
        sample_weight : array-like of shape (n_samples,), optional
            Observation weights w_i >= 0 (finite, not all 0): the principal components of
            ``W^{1/2} (X - x_bar_w)`` (weighted means) and weighted least squares on them; with
            all components it is weighted least squares (:class:`OLS` with ``sample_weight``).
        groups : array-like, pandas.Series or DataFrame of shape (n_samples,) or (n_samples, 2), optional
            Cluster ids for ``cov_type`` "cluster", "CR0", "CR1" or "CR2" (as :class:`OLS`).

        Returns
        -------
        self
        """
        refuse_non_number_params(self)
        if self.rank is not None and (not isinstance(self.rank, numbers.Integral) or self.rank < 0):
            raise ValueError(f"rank: must be None or an integer >= 0, got {self.rank!r}")
        wt = _check_weight_type(self.weight_type)
        _check_groups_arg(self.cov_type, groups)
        X, y2 = self._validate_fit(X, y)
        w = _sample_weight_arg(sample_weight, X.shape[0])
        self._groups = None if groups is None else _cluster_codes(groups, X.shape[0])
        model = _core.PCR(-1 if self.rank is None else int(self.rank), bool(self.fit_intercept),
                          int(self.n_threads), weight_type=wt)
        model.fit(X, y2, w)
        self._model = model
        self.rank_ = int(model.rank)
        self.coef_, self.intercept_ = self._split_coef(model.coefficients(), self.fit_intercept)
        self.singular_values_ = model.singular_values()
        self.components_ = model.principal_axes()[:, : self.rank_].T.copy()
        self.explained_variance_ratio_ = model.explained_variance_ratio()
        self._set_inference()
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # A fixed rank keeps the leading principal components of X, whatever y is: on data
        # whose signal lies in other directions the fit is poor by design (scikit-learn's
        # check_regressors_train data has 10 features of about equal variance, where the first
        # component carries R^2 = 0.05, as PCA(1) + LinearRegression gives), so the score
        # threshold of that check does not apply; with all components (rank=None) it is OLS.
        tags.regressor_tags.poor_score = self.rank is not None
        return tags


class AttentionRegression(_AttentionEstimator):
    """Softmax attention regression (Goulet Coulombe 2025, arXiv:2504.09663, eq. 28).

    Predicts ``yhat(x) = sum_j softmax_j(d(x)' Omega d(x_j)) y_j`` with ``Omega = W W'`` of rank
    ``rank`` over the standardised design ``d = [1, z]``. W minimises the leave-self-out mean
    squared error (the diagonal of the training attention is masked: otherwise each row would
    attend to itself), by L-BFGS with analytic gradients from ``n_starts`` seeded random starts.
    Weights are non-negative and sum to one (a convex combination of training responses).

    Parameters
    ----------
    rank : int, default=2
    fit_intercept : bool, default=True
        Include the constant in d (a learned bias per key).
    standardize : bool, default=True
    n_starts : int, default=4
    max_iter : int, default=300
    tol : float, default=1e-6
        L-BFGS gradient tolerance (relative to max(1, objective)).
    init_scale : float, default=1.0
        Spread of the random starting scores.
    random_state : int, RandomState or None, default=0
    n_threads : int, default=0

    Attributes
    ----------
    objective_ : float, the best leave-self-out MSE.
    start_objectives_ : ndarray, the objective reached from each start.
    n_evals_, n_iter_, converged_ : optimiser diagnostics (``n_iter_`` and ``converged_`` of the best start).
    """

    def __init__(
        self,
        rank: int = 2,
        fit_intercept: bool = True,
        standardize: bool = True,
        n_starts: int = 4,
        max_iter: int = 300,
        tol: float = 1e-6,
        init_scale: float = 1.0,
        random_state=0,
        n_threads: int = 0,
    ):
        self.rank = rank
        self.fit_intercept = fit_intercept
        self.standardize = standardize
        self.n_starts = n_starts
        self.max_iter = max_iter
        self.tol = tol
        self.init_scale = init_scale
        self.random_state = random_state
        self.n_threads = n_threads

    def fit(self, X: ArrayLike, y: ArrayLike):
        """Fit the estimator.

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_targets)

        Returns
        -------
        self
        """
        refuse_non_number_params(self)
        X, y2 = self._validate_fit(X, y)
        seed = int(check_random_state(self.random_state).randint(0, 2**31 - 1))
        model = _core.AttentionRegression(
            int(self.rank), bool(self.fit_intercept), bool(self.standardize), int(self.n_starts),
            seed, int(self.max_iter), float(self.tol), float(self.init_scale), int(self.n_threads),
        )
        model.fit(X, y2)
        self._model = model
        self.objective_ = float(model.objective)
        self.start_objectives_ = model.start_objectives()
        self.n_evals_ = int(model.n_evals)
        self.n_iter_ = int(model.iterations)
        self.converged_ = bool(model.converged)
        if not self.converged_:
            warnings.warn(
                f"AttentionRegression: L-BFGS stopped before convergence ({model.message}); "
                "increase max_iter or loosen tol",
                ConvergenceWarning,
                stacklevel=2,
            )
        return self

    def loo_predictions(self) -> np.ndarray:
        """The leave-self-out predictions the objective is built from."""
        check_is_fitted(self)
        return self._outputs(self._model.loo_predictions())

    def embedding(self) -> np.ndarray:
        """Omega over the raw design ``[1, x]``: weights = softmax(d(X) Omega D')."""
        check_is_fitted(self)
        return self._model.embedding()

    def encoder(self) -> np.ndarray:
        """W over the raw design, Omega = W W' (q, rank)."""
        check_is_fitted(self)
        return self._model.encoder()


@numbers_only("alpha", "start")
def pseudo_out_of_sample(X: ArrayLike, y: ArrayLike, alpha: float = 0.0, fit_intercept: bool = True, start=None,
                         keep_weights: bool = False) -> SimpleNamespace:
    """Recursive re-estimation versus masking (Goulet Coulombe 2025, arXiv:2504.09663, section 4.3) on time-ordered rows.

    For every row t from ``start`` on: the honest pseudo-out-of-sample forecast refits OLS
    (``alpha=0``) or ridge on rows < t; the masked forecast applies eq. 35 (strict mask, weights
    renormalised) to the full-sample fit. Masking hides future *responses* but its similarities
    still use the full-sample Omega: the difference is the leakage the paper describes.

    Returns a namespace with rows, y, recursive, masked, in_sample, mse_recursive, mse_masked,
    mse_in_sample, weight_gap (per row, L1 distance between masked and recursive weights) and,
    with ``keep_weights``, weights_recursive / weights_masked (m, n).
    """
    X = np.asfortranarray(np.asarray(X, dtype=np.float64))
    if X.ndim == 1:
        X = X.reshape(-1, 1, order="F")
    y2, one = as_2d_y(y)
    if start is not None and (not isinstance(start, numbers.Integral) or start < 1):
        raise ValueError(f"start: must be None or an integer >= 1, got {start!r}")
    r = _core.pseudo_out_of_sample(X, np.asfortranarray(y2), bool(fit_intercept), float(alpha),
                                   0 if start is None else int(start), bool(keep_weights))
    out = {}
    for k, v in r.items():
        v = np.asarray(v)
        if k == "rows":
            v = v.astype(np.int64)
        elif k in ("y", "recursive", "masked", "in_sample") and one:
            v = v[:, 0]
        elif k.startswith("mse_") and one:
            v = float(v[0])
        out[k] = v
    return SimpleNamespace(**out)
