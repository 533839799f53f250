"""Specification tests of kernel regression (R: ``spectests.R``): a bootstrap significance test
of each regressor, as np's ``npsigtest`` (:func:`significance_test`), and the Hsiao, Li & Racine
(2007) consistent test of a parametric model against the kernel alternative, as np's
``npcmstest`` (:func:`specification_test`).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import _core, _progress
from ._deprecation import renamed, seed_from_random_state
from ._encoding import encode_frame, resolve_var_types
from ._kernel_args import _fitted_core, _nonneg_int

__all__ = ["significance_test", "SignificanceTestResult", "specification_test",
           "SpecificationTestResult"]


def _stars(p: float) -> str:
    return "***" if p <= 0.001 else "**" if p <= 0.01 else "*" if p <= 0.05 else \
        "." if p <= 0.1 else ""


_SIGNIF = "Signif. codes:  0 '***' 0.001 '**' 0.01 '*' 0.05 '.' 0.1 ' ' 1"


@dataclass
class SignificanceTestResult:
    """Result of :func:`significance_test`; ``repr`` prints a table like np's ``npsigtest``.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per tested regressor: ``statistic`` (lambda_j) and bootstrap ``p_value``.
    draws : ndarray of shape (replications, n_tested)
        The bootstrap statistics under each null.
    null_scale : ndarray
        The factor ``sqrt(n / df0)`` applied to each null model's residuals.
    replications : int
    bootstrap : str
    """

    table: object
    draws: np.ndarray = field(repr=False)
    null_scale: np.ndarray = field(repr=False)
    replications: int = 0
    bootstrap: str = ""

    def __repr__(self) -> str:
        t = self.table
        w = max(8, max(len(str(v)) for v in t.index))
        lines = [
            "Kernel regression significance test (Racine, Hart & Li 2006)",
            f"Bootstrap under each null: {self.bootstrap}, {self.replications} replications, "
            "bandwidths held fixed",
            "",
            f"{'':{w}}  {'statistic':>11}  {'p-value':>8}",
        ]
        for name, row in t.iterrows():
            lines.append(f"{str(name):{w}}  {row['statistic']:11.4g}  {row['p_value']:8.4g} "
                         f"{_stars(row['p_value'])}")
        lines += ["---", _SIGNIF]
        return "\n".join(lines)

    __str__ = __repr__


@renamed(seed="random_state")
def significance_test(estimator, replications: int = 399, bootstrap: str = "mammen",
                      random_state=1, columns=None, output: int = 0,
                      progress=False) -> SignificanceTestResult:
    """Bootstrap test that the regression does not depend on each regressor (np's ``npsigtest``).

    For a continuous column the statistic is the mean squared marginal effect
    ``(1/n) sum_i (d m(x_i)/d x_j)^2`` (local-linear slope, or the derivative of the
    Nadaraya-Watson ratio); for a categorical column it is
    ``(1/n) sum_i sum_l (m(x_i; x_j = l) - m(x_i; x_j = first level))^2`` (Racine, Hart & Li
    2006). The null distribution is bootstrapped from the kernel regression without the column
    (same bandwidths; the mean when it is the only column), whose residuals are rescaled by
    ``sqrt(n / df0)`` and redrawn iid or wild. Every statistic is a quadratic form in y, so the
    replications are extra outputs of one fit: no refits.

    Parameters
    ----------
    estimator : fitted NadarayaWatson or LocalLinear
    replications : int, default 399
        Bootstrap replications B (at least 19); p-value ``(1 + #{lambda* >= lambda}) / (B + 1)``.
    bootstrap : {"mammen", "rademacher", "iid"}, default "mammen"
        Wild bootstrap (robust to heteroskedasticity) or iid residual resampling (np's default).
    random_state : int, None or numpy Generator, default 1
        Seed of the core's random number generator (formerly ``seed=``): with an int, results
        are reproducible.
    columns : sequence of int or str, optional
        Columns to test (0-based positions or DataFrame column names); default all.
    output : int, default 0
        Output column for multi-output fits.
    progress : bool, {"auto", "tqdm", "stderr"} or callable, default=False
        Report the replications done (all tested columns together) on a tqdm bar or stderr,
        or to ``f(done, total, label)``; an enclosing ``with attnreg.show_progress():`` does
        the same. Ctrl-C interrupts the test with ``KeyboardInterrupt``.

    Returns
    -------
    SignificanceTestResult

    Examples
    --------
    >>> import numpy as np, attnreg
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(200, 2)); y = np.sin(6 * X[:, 0]) + 0.3 * rng.normal(size=200)
    >>> fit = attnreg.LocalLinear(bandwidth=[0.08, 0.3]).fit(X, y)
    >>> res = attnreg.diagnostics.significance_test(fit, replications=99)
    >>> bool(res.table["p_value"].iloc[0] < 0.05)
    True
    """
    import pandas as pd

    model = _fitted_core(estimator)
    names = list(getattr(estimator, "feature_names_in_", [f"x{j + 1}" for j in
                                                          range(estimator.n_features_in_)]))
    names = [str(v) for v in names]
    if columns is None:
        cols = list(range(len(names)))
    else:
        cols = []
        for c in np.atleast_1d(np.asarray(columns, dtype=object)):
            if isinstance(c, str):
                if c not in names:
                    raise ValueError(f"columns: {c!r} is not a column of the fit ({names})")
                cols.append(names.index(c))
            elif isinstance(c, (int, np.integer)) and 0 <= int(c) < len(names):
                cols.append(int(c))
            else:
                raise ValueError(f"columns: {c!r} is not a column position in 0..{len(names) - 1}"
                                 " or a column name")
    if not isinstance(bootstrap, str):
        raise ValueError("bootstrap: use 'mammen', 'rademacher' or 'iid'")
    with _progress.reporting(progress):
        r = _core.significance_test(model, replications=int(replications), bootstrap=bootstrap,
                                    seed=seed_from_random_state(random_state), columns=cols,
                                    output=_nonneg_int(output, "output"))
    table = pd.DataFrame({"statistic": np.asarray(r["statistic"]).ravel(),
                          "p_value": np.asarray(r["p_value"]).ravel()},
                         index=[names[j] for j in r["columns"]])
    return SignificanceTestResult(table=table, draws=np.asarray(r["draws"]),
                                  null_scale=np.asarray(r["null_scale"]).ravel(),
                                  replications=int(r["replications"]),
                                  bootstrap=str(r["bootstrap"]))


@dataclass
class SpecificationTestResult:
    """Result of :func:`specification_test`; ``repr`` reads like np's ``npcmstest``.

    Attributes
    ----------
    statistic : float
        ``J_n``, asymptotically N(0, 1) under a correct parametric model (one-sided test).
    p_value : float
        Wild-bootstrap p-value.
    asymptotic_p_value : float
        ``1 - Phi(J_n)``.
    I_n : float
        The unstandardised statistic ``sum_{i != j} u_i u_j K_ij / (n (n - 1))``.
    bandwidth : ndarray
        Kernel bandwidths (given, or cv_ls of y on X).
    bandwidth_method : str
    coefficients, residuals : ndarray
        The OLS fit of y on the design.
    rank : int
        Numerical rank of the design.
    draws : ndarray
        Bootstrap statistics ``J*_b``.
    reselected : bool
        Whether the bandwidths were selected again on each bootstrap sample.
    """

    statistic: float
    p_value: float
    asymptotic_p_value: float
    I_n: float
    bandwidth: np.ndarray
    bandwidth_method: str
    coefficients: np.ndarray = field(repr=False)
    residuals: np.ndarray = field(repr=False)
    rank: int = 0
    draws: np.ndarray = field(repr=False, default=None)
    replications: int = 0
    bootstrap: str = ""
    reselected: bool = False

    def __repr__(self) -> str:
        bw = ", ".join(f"{b:.4g}" for b in np.atleast_1d(self.bandwidth))
        how = ("re-selected by cv_ls on each bootstrap sample" if self.reselected
               else "held fixed")
        return "\n".join([
            "Consistent model specification test (Hsiao, Li & Racine 2007)",
            "H0: the OLS model is correctly specified (E[y|x] = z(x)'beta)",
            f"Kernel bandwidth(s) ({self.bandwidth_method}): {bw}",
            f"Bootstrap: {self.bootstrap}, {self.replications} replications, bandwidths {how}",
            "",
            f"Jn = {self.statistic:.4g}   bootstrap p-value = {self.p_value:.4g} "
            f"{_stars(self.p_value)}   (asymptotic N(0,1) p-value = "
            f"{self.asymptotic_p_value:.4g})",
            "---",
            _SIGNIF,
        ])

    __str__ = __repr__


@renamed(seed="random_state")
def specification_test(X, y, design=None, var_types: str | None = None, bandwidth=None,
                       kernel: str = "gaussian", degree: int = 0, replications: int = 399,
                       bootstrap: str = "mammen", random_state=1,
                       unordered_kernel: str = "aitchison_aitken",
                       ordered_kernel: str = "li_racine", n_threads: int = 0,
                       reselect_bandwidth: bool | None = None,
                       progress=False) -> SpecificationTestResult:
    """Is the OLS model misspecified? Hsiao, Li & Racine (2007) test, as np's ``npcmstest``.

    With the OLS residuals ``u`` of y on ``design`` and the product kernel ``K_ij`` over the
    regressors ``X`` (continuous and categorical), ``J_n = sqrt(n/(n-1)) S1 / sqrt(2 S2)`` with
    ``S1 = sum_{i != j} u_i u_j K_ij`` and ``S2 = sum_{i != j} u_i^2 u_j^2 K_ij^2``; large values
    reject. The p-value is from the wild bootstrap ``y* = Z beta + u v`` (OLS residuals of y* are
    ``M (u v)``, no refit), which keeps heteroskedasticity. ``J_n`` follows the published
    normalisation (``1/(n(n-1))``); np's ``npcmstest`` scales by ``1/n^2``, so its ``Jn`` is this
    one times ``sqrt((n-1)/n)`` (the bootstrap p-values agree).

    Parameters
    ----------
    X : array-like or pandas.DataFrame of shape (n, q)
        Regressors of the kernel alternative (DataFrame categoricals get categorical kernels).
    y : array-like of shape (n,)
    design : array-like of shape (n, p), optional
        The parametric design ``Z`` including the intercept column. Default: an intercept, the
        continuous columns of X and dummies for each categorical level but the first.
    var_types : str, optional
        One of c/u/o per column of X; inferred from a DataFrame, else all continuous.
    bandwidth : array-like, optional
        Kernel bandwidths; default cv_ls of the kernel regression of y on X of ``degree``
        (as np's ``npcmstest``, which calls ``npregbw``).
    kernel : str, default "gaussian"
    degree : {0, 1}, default 0
        Degree of the bandwidth search (local constant as np's default). A local-linear search
        on data that look linear picks a bandwidth far beyond the data (the kernel is flat and
        the test meaningless): that raises ``ArithmeticError`` naming the fix.
    replications : int, default 399
    bootstrap : {"mammen", "rademacher", "iid"}, default "mammen"
    random_state : int, None or numpy Generator, default 1
        Seed of the bootstrap (formerly ``seed=``).
    unordered_kernel, ordered_kernel : str
    n_threads : int, default 0
    reselect_bandwidth : bool, optional
        With a selected (not given) bandwidth: select it again by cv_ls on every bootstrap
        sample, so that the bootstrap replicates the whole procedure. Holding it fixed (np's
        behaviour, ``False``) ignores that the bandwidth was chosen on the same y and makes the
        test oversized in small samples (about 0.09-0.10 instead of 0.05 at n = 100; see
        ``bench/results/specification_tests.md``). Default (``None``): re-select when
        n <= 500, where it is cheap; hold fixed above.
    progress : bool, {"auto", "tqdm", "stderr"} or callable, default=False
        Report the bootstrap replications done (the bandwidth search first counts as 0), as
        an enclosing ``with attnreg.show_progress():`` does. Ctrl-C interrupts the test.

    Returns
    -------
    SpecificationTestResult

    Examples
    --------
    >>> import numpy as np, attnreg
    >>> rng = np.random.default_rng(1)
    >>> x = rng.uniform(-1, 1, 300); y = 1 + x + x**2 + 0.3 * rng.normal(size=300)
    >>> res = attnreg.diagnostics.specification_test(x[:, None], y, replications=99)
    >>> bool(res.p_value < 0.05)
    True
    """
    Xe, inferred = encode_frame(X)
    Xa = np.asarray(Xe, dtype=np.float64)
    if Xa.ndim == 1:
        Xa = Xa[:, None]
    if Xa.ndim != 2:
        raise ValueError(f"X: expected a 2-D array of regressors, got shape {Xa.shape}")
    vt = resolve_var_types(var_types, inferred, Xa.shape[1])
    ya = np.asarray(y, dtype=np.float64)
    if ya.ndim == 2 and ya.shape[1] == 1:
        ya = ya[:, 0]
    if ya.ndim != 1:
        raise ValueError(f"y: expected a 1-D response, got shape {ya.shape}")
    if design is None:
        Z = _core.default_design(Xa, var_types=vt) if np.all(np.isfinite(Xa)) else Xa
    else:
        Z = np.asarray(design, dtype=np.float64)
        if Z.ndim == 1:
            Z = Z[:, None]
    bw = np.zeros(0) if bandwidth is None else np.atleast_1d(np.asarray(bandwidth, dtype=np.float64))
    if not isinstance(bootstrap, str):
        raise ValueError("bootstrap: use 'mammen', 'rademacher' or 'iid'")
    try:
        with _progress.reporting(progress):
            r = _core.specification_test(Z, ya, Xa, var_types=vt, kernel=str(kernel),
                                         unordered_kernel=str(unordered_kernel),
                                         ordered_kernel=str(ordered_kernel), bandwidth=bw,
                                         degree=int(degree), replications=int(replications),
                                         bootstrap=bootstrap, seed=seed_from_random_state(random_state),
                                         n_threads=int(n_threads),
                                         reselect=-1 if reselect_bandwidth is None
                                         else int(bool(reselect_bandwidth)))
    except ValueError as e:  # the core calls the design Z
        msg = str(e)
        if msg.startswith("Z:") or msg.startswith("Z ("):
            raise ValueError("design" + msg[1:]) from None
        raise
    return SpecificationTestResult(
        statistic=float(r["statistic"]), p_value=float(r["p_value"]),
        asymptotic_p_value=float(r["asymptotic_p_value"]), I_n=float(r["I_n"]),
        bandwidth=np.asarray(r["bandwidth"]).ravel(), bandwidth_method=str(r["bandwidth_method"]),
        coefficients=np.asarray(r["coefficients"]).ravel(),
        residuals=np.asarray(r["residuals"]).ravel(), rank=int(r["rank"]),
        draws=np.asarray(r["draws"]).ravel(), replications=int(r["replications"]),
        bootstrap=str(r["bootstrap"]), reselected=bool(r["reselected"]))
