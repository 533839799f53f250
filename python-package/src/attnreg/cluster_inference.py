"""Cluster-robust inference for least squares: fixest's small-sample conventions (:func:`ssc`)
and the restricted wild cluster bootstrap (:func:`wild_bootstrap`).

The numerics are the C++ core's (``core/include/attnreg/least_squares/cluster_inference.hpp``):
the bootstrap is the fast algorithm of Roodman, MacKinnon, Nielsen and Webb (2019, Stata
Journal 19(1), "Fast and wild: bootstrap inference in Stata using boottest"), so B = 9,999
replications cost O(G B) after one pass over the data. This module draws the weights (so that
``random_state`` follows scikit-learn and numpy) and names things.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

__all__ = ["ssc", "wild_bootstrap", "WildBootstrapResult"]

_K_FIXEF = ("nonnested", "full", "none")


def ssc(k_adj: bool = True, k_fixef: str = "nonnested", G_adj: bool = True) -> dict:
    """Small-sample conventions of the CR1 covariance, as fixest's ``ssc()`` (pyfixest's names).

    The factor is G/(G-1) (N-1)/(N-K) (Stata's ``vce(cluster)``), each part only when enabled.

    Parameters
    ----------
    k_adj : bool, default=True
        Apply (N-1)/(N-K) (fixest's ``K.adj``, formerly ``adj``).
    k_fixef : {"nonnested", "full", "none"}, default="nonnested"
        What K counts of the absorbed fixed effects (fixest's ``K.fixef``, formerly
        ``fixef.K``): "nonnested" (fixest's, pyfixest's and reghdfe's default) counts the
        absorbed parameters except the levels of a factor nested in a cluster variable, for each
        of which one parameter is kept; "full" counts them all; "none" none (K = rank).
    G_adj : bool, default=True
        Apply G/(G-1) (fixest's ``G.adj``, formerly ``cluster.adj``), G the fewest clusters over
        the clustering dimensions (fixest's ``G.df = "min"``).

    Returns
    -------
    dict, to pass as ``OLS(ssc=...)`` or ``attnreg.ols(..., ssc=...)``.
    """
    out = {"k_adj": k_adj, "k_fixef": k_fixef, "G_adj": G_adj}
    _ssc_args(out)
    return out


def _ssc_args(value):
    """ssc dict (or None) -> (k_adj, k_fixef, g_adj) for the core, validated."""
    if value is None:
        return True, "nonnested", True
    if not isinstance(value, dict):
        raise ValueError(f"ssc: must be a dict such as attnreg.ssc(k_adj=True, "
                         f"k_fixef='nonnested', G_adj=True) or None, got {value!r}")
    unknown = set(value) - {"k_adj", "k_fixef", "G_adj"}
    if unknown:
        raise ValueError(f"ssc: unknown key(s) {sorted(unknown)}; use k_adj, k_fixef, G_adj")
    k_adj = value.get("k_adj", True)
    k_fixef = value.get("k_fixef", "nonnested")
    g_adj = value.get("G_adj", True)
    for name, v in (("k_adj", k_adj), ("G_adj", g_adj)):
        if not isinstance(v, (bool, np.bool_)):
            raise ValueError(f"ssc: {name} must be True or False, got {v!r}")
    if k_fixef not in _K_FIXEF:
        raise ValueError(f"ssc: k_fixef must be one of {_K_FIXEF}, got {k_fixef!r}")
    return bool(k_adj), str(k_fixef), bool(g_adj)


@dataclass
class WildBootstrapResult:
    """Result of :func:`wild_bootstrap`.

    Attributes
    ----------
    hypothesis : str, the restriction tested, e.g. ``"x1 = 0"``.
    estimate : float, R'b.
    std_error : float, its CR1 standard error (the fit's small-sample factor).
    t_stat : float, (R'b - value) / std_error.
    p_value : float, share of bootstrap ``|t*| >= |t|`` (symmetric, two-sided).
    conf_int : (float, float), the values r where the bootstrap test of R'b = r does not
        reject at 1 - level (test inversion); nan where no bound was found.
    level, replications, n_clusters, bootstrap : as used; ``enumerated`` is True when the
        2^G Rademacher sign vectors were enumerated instead of drawn (2^G <= replications).
    t_boot : ndarray of the bootstrap t statistics under the hypothesis.
    """

    hypothesis: str
    estimate: float
    std_error: float
    t_stat: float
    p_value: float
    conf_int: tuple
    level: float
    replications: int
    n_clusters: int
    bootstrap: str
    enumerated: bool
    t_boot: np.ndarray = field(repr=False)

    def __str__(self) -> str:
        lo, hi = self.conf_int
        return (f"Wild cluster bootstrap (WCR, {self.bootstrap}, {self.replications} "
                f"replications{', enumerated' if self.enumerated else ''}, {self.n_clusters} "
                f"clusters)\n  H0: {self.hypothesis}\n  estimate {self.estimate:.6g}, "
                f"t = {self.t_stat:.4f}, p = {self.p_value:.4f}\n  {self.level:.0%} "
                f"confidence interval [{lo:.6g}, {hi:.6g}]")


def _bootstrap_weights(rng, G: int, B: int, kind: str) -> np.ndarray:
    """The G x B weights: column b is replication b, row g the g-th cluster (in order of first
    appearance in ``groups``). Drawn as ``rng.integers(0, 2, (B, G))`` (Rademacher: 1 - 2 d),
    ``rng.integers(0, 6, (B, G))`` (Webb's six points), ``rng.random((B, G))`` (Mammen)."""
    if kind == "rademacher":
        d = rng.integers(0, 2, size=(B, G))
        V = 1.0 - 2.0 * d
    elif kind == "webb":
        pts = np.array([-math.sqrt(1.5), -1.0, -math.sqrt(0.5), math.sqrt(0.5), 1.0,
                        math.sqrt(1.5)])
        V = pts[rng.integers(0, 6, size=(B, G))]
    else:  # mammen: -(sqrt 5 - 1)/2 with probability (sqrt 5 + 1)/(2 sqrt 5)
        s5 = math.sqrt(5.0)
        u = rng.random((B, G))
        V = np.where(u < (s5 + 1) / (2 * s5), -(s5 - 1) / 2, (s5 + 1) / 2)
    return np.asfortranarray(V.T, dtype=np.float64)


def _restriction(param, names: list[str]) -> tuple[np.ndarray, str]:
    q = len(names)
    R = np.zeros(q)
    if isinstance(param, str):
        param = {param: 1.0}
    elif isinstance(param, (int, np.integer)) and not isinstance(param, bool):
        if not 0 <= param < q:
            raise ValueError(f"param: index {param} out of range (the model has {q} coefficients)")
        param = {names[int(param)]: 1.0}
    if not isinstance(param, dict) or not param:
        raise ValueError("param: a coefficient name, its index, or a dict {name: weight} for "
                         f"the linear combination sum_j weight_j b_j; got {param!r}")
    parts = []
    for name, wgt in param.items():
        if name not in names:
            raise ValueError(f"param: {name!r} is not a coefficient of the model ({', '.join(names)})")
        wgt = float(wgt)
        if not math.isfinite(wgt):
            raise ValueError(f"param: weight of {name!r} must be finite, got {wgt}")
        R[names.index(name)] += wgt
        parts.append(name if wgt == 1.0 else f"{wgt:g}*{name}")
    if not np.any(R != 0):
        raise ValueError("param: all weights are 0; name at least one coefficient")
    return R, " + ".join(parts)


def wild_bootstrap(fit, param, *, value: float = 0.0, replications: int = 9999,
                   bootstrap: str = "rademacher", random_state=None, level: float = 0.95,
                   groups=None) -> WildBootstrapResult:
    """Restricted wild cluster bootstrap (WCR) of one linear hypothesis on a fitted OLS.

    Tests ``sum_j w_j b_j = value`` by the wild cluster bootstrap with the null imposed
    (Cameron, Gelbach and Miller 2008, REStat 90(3)): bootstrap samples y* = X b_r + u_r v_g,
    b_r and u_r the restricted fit, one weight v_g per cluster; the statistic is the CR1 t
    statistic. Computed by the algorithm of Roodman, MacKinnon, Nielsen and Webb (2019, Stata
    Journal 19(1)), with absorbed fixed effects (nested in the clusters or not) and weights.
    The confidence interval inverts the test: the values r for which R'b = r is not rejected.

    Parameters
    ----------
    fit : attnreg.OLS fitted with one-way ``groups=`` (any cluster ``cov_type``), with or
        without ``absorb=``.
    param : str, int or dict
        A coefficient name (``fit``'s design names, e.g. a formula's column), its index, or
        ``{name: weight, ...}`` for a linear combination.
    value : float, default=0.0
        The hypothesised value of the combination.
    replications : int, default=9999
        Bootstrap replications B (at least 99). With ``bootstrap="rademacher"`` and 2^G <= B
        the 2^G sign vectors are enumerated instead (exact; as boottest).
    bootstrap : {"rademacher", "webb", "mammen"}, default="rademacher"
        Weights: Rademacher (+-1), Webb's six-point (+-sqrt(1/2), +-1, +-sqrt(3/2); Webb 2023,
        Canadian J. Econ. 56(3)), better with fewer than about 12 clusters, or Mammen's two-point.
    random_state : int, numpy Generator or None
        Seed of ``numpy.random.default_rng``; the draws are ``_bootstrap_weights``'s.
    level : float, default=0.95
        Confidence level, a fraction.
    groups : optional cluster ids (one per training row); default: those given to ``fit``.

    Returns
    -------
    WildBootstrapResult
    """
    import pandas as pd

    from . import _core

    if not hasattr(fit, "coef_"):
        raise ValueError("fit: pass a fitted attnreg.OLS (call fit first)")
    if isinstance(level, bool) or not isinstance(level, (int, float)) or not 0 < level < 1:
        raise ValueError(f"level: is a fraction: 0.95 for a 95% interval; got {level!r}")
    if isinstance(replications, bool) or not isinstance(replications, (int, np.integer)) \
            or replications < 99:
        raise ValueError(f"replications: must be an integer >= 99 (9999 is usual; fewer makes "
                         f"the p-value too coarse), got {replications!r}")
    if bootstrap not in ("rademacher", "webb", "mammen"):
        raise ValueError(f"bootstrap: must be 'rademacher', 'webb' or 'mammen', got {bootstrap!r}")
    if not math.isfinite(float(value)):
        raise ValueError(f"value: must be finite, got {value!r}")
    core = fit._model
    n = int(core.n_obs)
    if groups is None:
        codes = getattr(fit, "_groups", None)
        if codes is None:
            raise ValueError("groups: the fit has no cluster ids; fit with groups= or pass groups=")
    else:
        g = np.asarray(groups.to_numpy() if hasattr(groups, "to_numpy") else groups, dtype=object)
        if g.ndim != 1 or g.size != n:
            raise ValueError(f"groups: one cluster id per training row ({n}), one column")
        if pd.isna(pd.Series(g)).any():
            raise ValueError("groups: a cluster id is missing (NaN or None)")
        codes = pd.factorize(pd.Series(g))[0]
    codes = np.asarray(codes)
    if codes.ndim == 2:
        if codes.shape[1] != 1:
            raise ValueError("groups: the wild cluster bootstrap here is one-way; pass one column")
        codes = codes[:, 0]
    codes = np.ascontiguousarray(codes, dtype=np.int64)
    if getattr(fit, "_y_1d", True) is False:
        raise ValueError("fit: the wild bootstrap is for a single output")
    names = fit._design_names()
    R, text = _restriction(param, names)
    dropped = [names[j] for j in np.flatnonzero(fit.aliased_ & (R != 0))]
    if dropped:
        raise ValueError(f"param: {', '.join(dropped)} was dropped from the fit (aliased or "
                         "absorbed by the fixed effects; coefficient nan); test an estimated "
                         "coefficient")
    G = int(np.unique(codes).size)
    if G < 2:
        raise ValueError("groups: the wild cluster bootstrap needs at least 2 clusters")
    enumerated = bootstrap == "rademacher" and G <= 20 and 2 ** G <= replications
    if enumerated:
        V = np.asfortranarray(_core.rademacher_enumeration(G))
    else:
        V = _bootstrap_weights(np.random.default_rng(random_state), G, int(replications),
                               bootstrap)
    if fit._absorbed():
        res = core.wild_bootstrap(R, float(value), codes, V, float(level))
    else:
        # The factors F (n x r, F'F = I over the weighted rows) span the design; b = W theta
        # with W the encoder, so R'b = (W'R)'theta. Weighted: the sqrt(w) design is F / sqrt(w).
        F = np.asarray(core.training_factors())
        Wenc = np.asarray(core.encoder())
        y = np.asarray(core.fitted())[:, 0] + np.asarray(core.residuals())[:, 0]
        w = np.asarray(_core.ols_fit_weights(core), dtype=np.float64).ravel()
        if w.size:
            keep = w > 0
            F, y, codes_k = F[keep] / np.sqrt(w[keep])[:, None], y[keep] * np.sqrt(w[keep]), codes[keep]
            N = float(w.sum()) if str(fit.weight_type) == "frequency" else float(keep.sum())
        else:
            codes_k, N = codes, float(n)
        if np.unique(codes_k).size != G:
            raise ValueError("groups: a cluster has only rows of weight 0; drop those rows")
        K = float(fit.rank_)
        factor = G / (G - 1.0) * (N - 1.0) / (N - K)  # the fit's CR1 factor (it cancels in p)
        res = _core.wild_cluster_bootstrap(np.asfortranarray(F), np.asfortranarray(y),
                                           codes_k, Wenc.T @ R, float(value), V, float(level),
                                           factor)
    return WildBootstrapResult(
        hypothesis=f"{text} = {float(value):g}", estimate=float(res["estimate"]),
        std_error=float(res["std_error"]), t_stat=float(res["t_stat"]),
        p_value=float(res["p_value"]), conf_int=(float(res["ci_lower"]), float(res["ci_upper"])),
        level=float(level), replications=int(res["replications"]),
        n_clusters=int(res["n_clusters"]), bootstrap=bootstrap, enumerated=enumerated,
        t_boot=np.asarray(res["t_boot"]).ravel())
