"""Monte Carlo lab for kernel regression: simulated designs (:func:`simulate_design`), the bias,
variance, MSE and coverage of the fits over replications (:func:`monte_carlo`) and the
convergence rate of the MSE in n (:func:`rate_study`). The loops run in the C++ core.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from . import _core, _progress
from ._deprecation import renamed, seed_from_random_state
from ._kernel_args import _nonneg_int

__all__ = ["simulate_design", "monte_carlo", "rate_study"]


@renamed(rng="random_state")
def simulate_design(n: int, d: int = 1, design: str = "uniform", random_state=None,
                    cone_dims=None):
    """Draw an (n, d) design.

    ``"uniform"``: U[0, 1]^d. ``"cone"``: Zuo et al. 2025, arXiv:2510.01450, App. E.1 eq. 51 for one segment with the
    all-positive sign pattern: ``X_j = |Z_j|`` for ``j <= m`` (``m = cone_dims``, default d) and
    ``X_j = Z_j`` otherwise, ``Z ~ N(0, I_d)``: a Gaussian truncated to the cone
    ``{x_j >= 0, j <= m}``, whose faces are a boundary where the density does not vanish.
    (:func:`monte_carlo` draws its designs in the core, from its ``random_state``; this function uses
    NumPy's generator from ``random_state``: an int, None or a numpy Generator; formerly
    ``rng=``.)
    """
    rng = np.random.default_rng(random_state)
    if design == "uniform":
        return rng.random((n, d))
    if design == "cone":
        m = d if cone_dims is None else int(cone_dims)
        if not 0 < m <= d:
            raise ValueError(f"cone_dims: must be between 1 and d = {d}, got {cone_dims!r}")
        Z = rng.standard_normal((n, d))
        Z[:, :m] = np.abs(Z[:, :m])
        return Z
    raise ValueError(f"design: unknown design {design!r}; use 'uniform' or 'cone'")


def _mc_int(value, name: str, low: int) -> int:
    v = _nonneg_int(value, name)
    if v < low:
        raise ValueError(f"{name}: must be at least {low}, got {value!r}")
    return v


def _eval_func(func, X, name):
    v = np.asarray(func(X), dtype=np.float64).ravel()
    if v.shape[0] != X.shape[0]:
        raise ValueError(f"func: must return one value per row of its argument ({name})")
    return v


@renamed(seed="random_state")
def monte_carlo(func: Callable, n: int = 200, d: int = 1, design: str = "uniform",
                noise: float = 0.3, replications: int = 200, random_state=0,
                estimators: Sequence[str] = ("nw", "ll", "ols", "ridge"), bandwidth="oracle",
                bandwidth_grid=None, eval_points=None, ridge_alpha: float = 1.0,
                kernel: str = "gaussian", cone_dims=None, progress=False):
    """Empirical pointwise and integrated bias, variance and MSE by simulation.

    One design ``X`` (n, d) is drawn from ``design`` (``"uniform"``: U(0, 1)^d; ``"cone"``:
    Zuo et al. 2025, arXiv:2510.01450, App. E.1 eq. 51, ``X_j = |Z_j|`` for
    ``j <= cone_dims`` (default d), ``Z ~ N(0, I_d)``) and kept fixed; ``func(X)``
    (vectorised, rows = points) is evaluated once and ``replications`` response vectors
    ``func(X) + noise * N(0, 1)`` are drawn. Each estimator (``"nw"``, also called ``"lc"``,
    ``"ll"``, ``"ols"``, ``"ridge"``) is a linear smoother with weights ``W`` at the evaluation
    points, so the core computes all replications at once (``W @ Y``).
    ``bandwidth="oracle"`` takes, per kernel estimator, the bandwidth in ``bandwidth_grid``
    (default ``s n^(-1/(d+4))`` times 14 log-spaced factors from 0.25 to 2.5, ``s`` 0.3 for
    the uniform and 1 for the cone design) with the smallest empirical integrated MSE.
    Evaluation points: default 100 fresh draws from the design (Monte Carlo integration
    against the design density; for d = 1 uniform, 101 points evenly spaced on [0, 1]).

    Every draw comes from the core's generator seeded with ``random_state`` (an int; a numpy
    Generator or None draws one; formerly ``seed=``): R's ``monte_carlo`` with the same
    ``seed`` (and the same function and settings) gives the same numbers.

    ``progress`` (True, "tqdm", "stderr" or a callable ``f(done, total, label)``) reports after
    each fit; Ctrl-C interrupts with ``KeyboardInterrupt``.

    Returns a dict with ``"integrated"`` (DataFrame: estimator, bandwidth, bias2, variance, mse),
    ``"pointwise"`` (long DataFrame per estimator and point), ``"eval_points"`` and ``"X"``
    (the design drawn).
    """
    import pandas as pd

    n = _mc_int(n, "n", 3)
    d = _mc_int(d, "d", 1)
    replications = _mc_int(replications, "replications", 2)
    seed = seed_from_random_state(random_state)
    cone = 0 if cone_dims is None else _mc_int(cone_dims, "cone_dims", 1)
    X, Xe = _core.monte_carlo_sample(n, d, design=str(design), cone_dims=cone,
                                     n_eval=-1 if eval_points is None else 0, seed=seed)
    if eval_points is not None:
        Xe = np.asarray(eval_points, dtype=np.float64)
        Xe = Xe[:, None] if Xe.ndim == 1 else Xe
    m_train = _eval_func(func, X, "X")
    truth = _eval_func(func, Xe, "eval_points")
    Ysim = _core.monte_carlo_responses(m_train, float(noise), replications, seed=seed)
    if isinstance(bandwidth, str):
        if bandwidth != "oracle":
            raise ValueError(f"bandwidth: use 'oracle' or one number > 0, got {bandwidth!r}")
        h = 0.0
    else:
        h = float(bandwidth)
        if not (np.isfinite(h) and h > 0):
            raise ValueError(f"bandwidth: use 'oracle' or one number > 0, got {bandwidth!r}")
    grid = (_core.monte_carlo_default_grid(n, d, str(design)) if bandwidth_grid is None
            else np.asarray(bandwidth_grid, dtype=np.float64).ravel())
    if isinstance(estimators, str):
        estimators = [estimators]
    with _progress.reporting(progress):
        res = _core.monte_carlo_estimates(X, Xe, Ysim, truth, [str(e) for e in estimators],
                                          bandwidth=h, bandwidth_grid=grid,
                                          ridge_alpha=float(ridge_alpha), kernel=str(kernel))
    rows, points = [], []
    for s in res:
        bw = None if np.isnan(s["bandwidth"]) else float(s["bandwidth"])
        rows.append({"estimator": s["estimator"], "bandwidth": bw,
                     "bias2": s["integrated_bias2"], "variance": s["integrated_variance"],
                     "mse": s["integrated_mse"]})
        points.append(pd.DataFrame({"estimator": s["estimator"], "point": np.arange(Xe.shape[0]),
                                    "bias": np.ravel(s["bias"]),
                                    "variance": np.ravel(s["variance"]),
                                    "mse": np.ravel(s["mse"])}))
    return {"integrated": pd.DataFrame(rows), "pointwise": pd.concat(points, ignore_index=True),
            "eval_points": Xe, "X": X}


@renamed(seed="random_state")
def rate_study(func: Callable, ns: Sequence[int] = (100, 200, 400, 800, 1600), d: int = 1,
               design: str = "uniform", boundary_point=None, noise: float = 0.3,
               replications: int = 100, random_state=0, estimators: Sequence[str] = ("nw", "ll"),
               kernel: str = "gaussian", grid_points: int = 24, progress=False):
    """Convergence rates of NW and local linear at the boundary and integrated over D.

    For each ``n`` the design is drawn, and for each estimator the oracle bandwidth on a grid
    is chosen twice: minimising the empirical MSE at ``boundary_point`` (default the origin,
    a corner of ``[0,1]^d`` / the apex of the cone) and minimising the empirical integrated MSE
    over 100 design draws plus the boundary point. Slopes of log MSE on log n are fitted by OLS
    (with standard errors). Zuo et al. 2025, arXiv:2510.01450, Props 2.1/2.2 concern the *integrated* MSE on a bounded
    support: ``n^(-3/(d+3))`` for NW (boundary strip of width h with O(h) bias) and
    ``n^(-4/(d+4))`` for local linear; at a boundary point itself the classical pointwise rates
    are ``n^(-2/(d+2))`` (NW) and ``n^(-4/(d+4))`` (LL). The draws for the k-th sample size
    come from the core's generator seeded with ``random_state`` (study k, as :func:`monte_carlo` is
    study 0).

    ``progress`` (True, "tqdm", "stderr" or a callable ``f(done, total, label)``) reports after
    each sample size; Ctrl-C interrupts with ``KeyboardInterrupt``.

    Returns a dict: ``"table"`` (n, estimator, h_point, mse_point, h_int, imse) and
    ``"slopes"`` (estimator, target, slope, se, theory).
    """
    import pandas as pd

    seed = seed_from_random_state(random_state)
    d = _mc_int(d, "d", 1)
    replications = _mc_int(replications, "replications", 2)
    b = np.zeros(d) if boundary_point is None else np.asarray(boundary_point, dtype=np.float64)
    rows = []
    with _progress.steps(progress, "rate study", len(ns)) as tick:
        for step, n in enumerate(ns, 1):
            n = _mc_int(n, "ns", 3)
            X, draws = _core.monte_carlo_sample(n, d, design=str(design), n_eval=100,
                                                seed=seed, study=step - 1)
            Xe = np.vstack([b[None, :], draws])
            m_train = _eval_func(func, X, "X")
            truth = _eval_func(func, Xe, "eval_points")
            Ysim = _core.monte_carlo_responses(m_train, float(noise), replications, seed=seed,
                                               study=step - 1)
            scale = 1.0 if design == "cone" else 0.3
            grid = scale * n ** (-1.0 / (d + 4)) * np.geomspace(0.08, 4.0, grid_points)
            names = [str(e) for e in estimators]
            sp = _core.monte_carlo_estimates(X, Xe, Ysim, truth, names, bandwidth_grid=grid,
                                             kernel=str(kernel), criterion_points=1)
            si = _core.monte_carlo_estimates(X, Xe, Ysim, truth, names, bandwidth_grid=grid,
                                             kernel=str(kernel))
            for name, p, i in zip(names, sp, si):
                rows.append({"n": n, "estimator": name, "h_point": p["bandwidth"],
                             "mse_point": float(np.ravel(p["mse"])[0]), "h_int": i["bandwidth"],
                             "imse": float(i["integrated_mse"])})
            tick(step)
    table = pd.DataFrame(rows)
    theory = {("nw", "point"): -2 / (d + 2), ("ll", "point"): -4 / (d + 4),
              ("nw", "integrated"): -3 / (d + 3), ("ll", "integrated"): -4 / (d + 4)}
    slopes = []
    for name in estimators:
        t = table[table.estimator == name]
        for target, col in (("point", "mse_point"), ("integrated", "imse")):
            s = np.asarray(_core.loglog_slope(t.n.to_numpy(float), t[col].to_numpy(float))).ravel()
            slopes.append({"estimator": name, "target": target, "slope": s[0], "se": s[1],
                           "theory": theory.get((name, target), np.nan)})
    return {"table": table, "slopes": pd.DataFrame(slopes)}
