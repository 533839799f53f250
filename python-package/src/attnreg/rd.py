"""Regression discontinuity designs: local polynomial RD estimates with robust bias-corrected
inference, their bandwidth selectors, and the attention weights behind each estimate.

``rdrobust`` and ``rdbwselect`` follow the rdpackages software of Calonico, Cattaneo and
Titiunik (2014, Econometrica 82(6); 2015, JASA 110(512)), Calonico, Cattaneo and Farrell (2020,
Econometrics Journal 23(2)) and Calonico, Cattaneo, Farrell and Titiunik (2019, REStat 101(3)).
The formulas live in the C++ core (``core/include/attnreg/rd/rdrobust.hpp``); docs/rd.md lists
the conventions and the differences from rdrobust 2.1.1.

Every RD estimate is linear in the outcome: the conventional estimate is ``a @ y`` with the
equivalent-kernel weights ``a`` of the two one-sided fits, returned by
``RDResult.attention_weights()`` (Gelman and Imbens 2019, J. Bus. Econ. Stat. 37(3), on why
these weights deserve a look).
"""
from __future__ import annotations

import dataclasses
import math
import typing

import numpy as np

from . import _core
from ._deprecation import check_level

__all__ = ["rdrobust", "rdbwselect", "RDResult", "RDBandwidths", "RDAttentionWeights",
           "rddensity", "RDDensityResult"]

#: The ten bandwidth selectors, in rdbwselect's order.
SELECTORS = ("mserd", "msetwo", "msesum", "msecomb1", "msecomb2", "cerrd", "certwo", "cersum",
             "cercomb1", "cercomb2")
_KERNELS = {"triangular": "triangular", "tri": "triangular", "epanechnikov": "epanechnikov",
            "epa": "epanechnikov", "uniform": "uniform", "uni": "uniform"}
_VCE = ("nn", "hc0", "hc1", "hc2", "hc3", "cr1", "cr2", "cr3")


def _vector(v, name: str, n: int | None = None, copy: bool = True) -> np.ndarray:
    if v is None:
        return None
    a = np.asarray(v)
    if a.ndim == 2 and 1 in a.shape:
        a = a.reshape(-1)
    if a.ndim != 1:
        raise ValueError(f"{name}: must be one-dimensional, got shape {a.shape}")
    if a.dtype == bool or not (np.issubdtype(a.dtype, np.number) or a.dtype == object):
        raise ValueError(f"{name}: must be numeric, got dtype {a.dtype}")
    try:
        a = a.astype(float, copy=copy)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: must be numeric (None/NaN mark missing rows)") from None
    if np.iscomplexobj(a):
        raise ValueError(f"{name}: must be real")
    if n is not None and a.shape[0] != n:
        raise ValueError(f"{name}: has {a.shape[0]} rows, x has {n}; pass one value per row")
    return a


def _covs(covs, n: int):
    if covs is None:
        return None, []
    names = None
    if hasattr(covs, "columns"):
        names = [str(c) for c in covs.columns]
        z = covs.to_numpy()
    elif hasattr(covs, "name") and hasattr(covs, "to_numpy"):
        names = [str(covs.name) if covs.name is not None else "z1"]
        z = covs.to_numpy().reshape(-1, 1)
    else:
        z = np.asarray(covs)
        if z.ndim == 1:
            z = z.reshape(-1, 1)
    if z.ndim != 2 or z.shape[0] != n:
        raise ValueError(f"covs: must have one row per observation ({n}), got shape {z.shape}")
    if z.dtype == bool or not (np.issubdtype(z.dtype, np.number) or z.dtype == object):
        raise ValueError(f"covs: must be numeric, got dtype {z.dtype}")
    z = z.astype(float)
    if names is None:
        names = [f"z{j + 1}" for j in range(z.shape[1])]
    return z, names


def _groups(groups, n: int):
    if groups is None:
        return None
    import pandas as pd
    g = pd.Series(np.asarray(groups).reshape(-1) if not hasattr(groups, "to_numpy")
                  else groups.to_numpy().reshape(-1))
    if len(g) != n:
        raise ValueError(f"groups: has {len(g)} rows, x has {n}; pass one cluster id per row")
    codes, _ = pd.factorize(g)  # missing ids -> -1 (dropped)
    return codes.astype(np.int64)


def _pair(v, name: str):
    if v is None:
        return math.nan, math.nan
    a = np.asarray(v, dtype=float).reshape(-1)
    if a.size not in (1, 2) or not np.all(np.isfinite(a)) or np.any(a <= 0):
        raise ValueError(f"{name}: must be one or two (left, right) positive finite numbers")
    return (float(a[0]), float(a[0])) if a.size == 1 else (float(a[0]), float(a[1]))



def _subset_rows(subset, n: int) -> np.ndarray:
    """The rows selected by ``subset``: a boolean mask of length n or integer positions."""
    s = np.asarray(subset)
    if s.dtype == bool:
        if s.shape != (n,):
            raise ValueError(f"subset: a boolean mask needs {n} values")
        return np.flatnonzero(s)
    if np.issubdtype(s.dtype, np.integer):
        if s.ndim != 1 or np.any(s < 0) or np.any(s >= n):
            raise ValueError(f"subset: integer positions must lie in 0..{n - 1}")
        return s
    raise ValueError("subset: pass a boolean mask or integer positions")

def _prepare(y, x, c, fuzzy, deriv, p, q, h, b, rho, covs, kernel, weights, bwselect, vce,
             groups, nnmatch, level, masspoints, bwcheck, bwrestrict, scaleregul, stdvars,
             subset, sharpbw):
    # No copies: the core reads float64 arrays in place, and the result keeps a reference to x
    # (attention_weights() returns a copy of it).
    xv = _vector(x, "x", copy=False)
    if xv is None:
        raise ValueError("x: the running variable is required")
    n = xv.shape[0]
    yv = _vector(y, "y", n, copy=False)
    tv = _vector(fuzzy, "fuzzy", n, copy=False)
    wv = _vector(weights, "weights", n, copy=False)
    z, names = _covs(covs, n)
    cl = _groups(groups, n)
    rows = None  # all rows
    if subset is not None:
        rows = _subset_rows(subset, n)
    take = (lambda a: a if a is None or rows is None else a[rows])
    for name, val in (("p", p), ("deriv", deriv), ("nnmatch", nnmatch)):
        if not isinstance(val, (int, np.integer)) or isinstance(val, bool):
            raise ValueError(f"{name}: must be an integer, got {val!r}")
    if q is None:
        q = p + 1
    if not isinstance(q, (int, np.integer)) or q <= p:
        raise ValueError(f"q: must be an integer greater than p = {p}, got {q!r}")
    kname = _KERNELS.get(str(kernel).lower())
    if kname is None:
        raise ValueError(f"kernel: {kernel!r} is not one of triangular, epanechnikov, uniform")
    bws = str(bwselect).lower()
    if bws not in SELECTORS:
        raise ValueError(f"bwselect: {bwselect!r} is not one of {', '.join(SELECTORS)}")
    v = str(vce).lower()
    if v not in _VCE:
        raise ValueError(f"vce: {vce!r} is not one of nn, hc0, hc1, hc2, hc3, cr1, cr2, cr3 "
                         f"(cr1-cr3 with groups=)")
    if v.startswith("cr") and cl is None:
        raise ValueError(f"vce: {v!r} is a cluster-robust variance and needs groups= (the "
                         f"cluster ids); without clusters use 'hc{v[2]}'")
    mp = "off" if masspoints in (False, None) else str(masspoints).lower()
    if mp not in ("off", "check", "adjust"):
        raise ValueError(f"masspoints: {masspoints!r} is not one of adjust, check, off")
    if bwcheck is None:
        bwcheck = 0
    elif not isinstance(bwcheck, (int, np.integer)) or bwcheck < 1:
        raise ValueError(f"bwcheck: must be a positive integer or None, got {bwcheck!r}")
    hl, hr = _pair(h, "h")
    bl, br = _pair(b, "b")
    if rho is not None and not (np.isscalar(rho) and np.isfinite(rho) and rho > 0):
        raise ValueError(f"rho: must be a positive number, got {rho!r}")
    if not (np.isscalar(c) and np.isfinite(c)):
        raise ValueError(f"c: the cutoff must be a finite number, got {c!r}")
    opts = dict(c=float(c), p=int(p), q=int(q), deriv=int(deriv), kernel=kname, vce=v,
                nnmatch=int(nnmatch), masspoints=mp, bwcheck=int(bwcheck),
                bwrestrict=bool(bwrestrict), scaleregul=float(scaleregul), stdvars=bool(stdvars),
                bwselect=bws, h_left=hl, h_right=hr, b_left=bl, b_right=br,
                rho=math.nan if rho is None else float(rho), level=check_level(level),
                sharpbw=bool(sharpbw))
    data = dict(y=take(yv), x=take(xv), t=take(tv), z=take(z),
                w=take(wv), cluster=take(cl))
    return data, opts, names, rows, n, xv


@dataclasses.dataclass
class RDAttentionWeights:
    """The weights a over the input rows with ``conventional estimate = a @ y``.

    ``weights`` is 0 outside the windows and for dropped rows; ``effective_n`` is 1 / sum(a^2)
    per side (the number of equally weighted rows that would give the same variance under
    homoskedasticity, as in Kish's effective sample size).
    """

    weights: np.ndarray
    x: np.ndarray
    c: float
    effective_n: dict


@dataclasses.dataclass
class RDBandwidths:
    """rdbwselect's result: ``bws`` a DataFrame indexed by selector with columns h_left, h_right,
    b_left, b_right; ``n`` per side; ``n_dropped``."""

    bws: typing.Any
    n: dict
    n_dropped: int
    mass_points: bool
    summary_info: dict

    def summary(self) -> str:
        """Print (and return) the bandwidths in rdbwselect's layout."""
        lines = ["Call: rdbwselect", "",
                 f"Number of Observations: {self.n['left'] + self.n['right']:>22d}",
                 f"Polynomial Order Est. (p): {self.summary_info['p']:>19d}",
                 f"Polynomial Order Bias (q): {self.summary_info['q']:>19d}",
                 f"Kernel: {self.summary_info['kernel'].capitalize():>38s}",
                 f"Var-Cov Estimator: {self.summary_info['vce'].upper():>27s}", "",
                 f"{'':15s}{'BW est. (h)':>24s}{'BW bias (b)':>24s}",
                 f"{'Method':15s}{'Left':>12s}{'Right':>12s}{'Left':>12s}{'Right':>12s}",
                 "-" * 63]
        for name, row in self.bws.iterrows():
            lines.append(f"{name:15s}" + "".join(f"{v:12.3f}" for v in row.to_numpy()))
        text = "\n".join(lines)
        print(text)
        return text


class RDResult:
    """The result of :func:`rdrobust`.

    Attributes
    ----------
    table : pandas.DataFrame
        Indexed ``conventional``, ``bias_corrected``, ``robust``; columns ``coef``, ``se``,
        ``z``, ``p_value``, ``ci_low``, ``ci_high`` (bias-corrected: the bias-corrected estimate
        with the conventional standard error; robust: with the robust one).
    first_stage : pandas.DataFrame or None
        Fuzzy designs: the same table for the jump in the treatment.
    bandwidths : dict
        ``h_left``, ``h_right``, ``b_left``, ``b_right``.
    n, n_effective : dict
        Rows per side (``left``, ``right``) used, and within h.
    n_dropped : int
        Rows dropped for a missing y, x, treatment, covariate, weight or cluster id.
    coef_covs : pandas.Series or None
        The common covariate coefficients (outcome equation), named.
    """

    def __init__(self, raw, names, rows, n_total, x_all, opts, level):
        import pandas as pd
        self._raw = raw
        self.level = level
        self.c = opts["c"]
        self.p, self.q, self.deriv = opts["p"], opts["q"], opts["deriv"]
        self.kernel = opts["kernel"]
        self.vce = raw["vce"]  # the variance the core used (cr1/cr2/cr3 with clusters)
        self.bwselect = raw["bwselect"]

        def table(e):
            return pd.DataFrame({k: np.asarray(e[k], dtype=float) for k in
                                 ("coef", "se", "z", "p_value", "ci_low", "ci_high")},
                                index=pd.Index(["conventional", "bias_corrected", "robust"]))
        self.table = table(raw["estimate"])
        self.fuzzy = bool(raw["fuzzy"])
        self.first_stage = table(raw["first_stage"]) if self.fuzzy else None
        hl, hr, bl, br = raw["bandwidths"]
        self.bandwidths = {"h_left": hl, "h_right": hr, "b_left": bl, "b_right": br}
        self.n = {"left": int(raw["n"][0]), "right": int(raw["n"][1])}
        self.n_effective = {"left": int(raw["n_h"][0]), "right": int(raw["n_h"][1])}
        self.n_bias = {"left": int(raw["n_b"][0]), "right": int(raw["n_b"][1])}
        self.n_unique = {"left": int(raw["n_unique"][0]), "right": int(raw["n_unique"][1])}
        self.n_dropped = int(raw["n_dropped"])
        self.n_clusters = int(raw["clusters"][2]) if opts.get("_clustered") else None
        self.mass_points = bool(raw["mass_points"])
        self.bias = {"left": raw["bias"][0], "right": raw["bias"][1]}
        self.beta_p_left = np.asarray(raw["beta_p_left"])
        self.beta_p_right = np.asarray(raw["beta_p_right"])
        kept = [names[j] for j in raw["covs_kept"]]
        self.covs_dropped = [names[j] for j in raw["covs_dropped"]]
        self.coef_covs = (pd.Series(raw["gamma"], index=kept, name="coef")
                          if kept else None)
        if rows is None:
            self._weights = raw["weights"]
        else:
            w = np.zeros(n_total)
            w[rows] = raw["weights"]
            self._weights = w
        self._x = x_all

    @property
    def coef(self) -> float:
        """The conventional estimate."""
        return float(self.table.loc["conventional", "coef"])

    def attention_weights(self) -> RDAttentionWeights:
        """The vector a over all input rows with ``conventional estimate = a @ y``.

        For fuzzy designs the same vector gives the reduced form (``a @ y``) and the first stage
        (``a @ fuzzy``); the estimate is their ratio.
        """
        a = self._weights
        with np.errstate(invalid="ignore"):
            left = a[self._x < self.c]
            right = a[self._x >= self.c]
        eff = {"left": 1.0 / float(np.sum(left ** 2)), "right": 1.0 / float(np.sum(right ** 2))}
        return RDAttentionWeights(weights=a.copy(), x=self._x.copy(), c=self.c, effective_n=eff)

    def summary(self) -> str:
        """Print (and return) the estimates in rdrobust's layout."""
        design = "Fuzzy" if self.fuzzy else "Sharp"
        kink = " Kink" if self.deriv == 1 else ""
        adj = "Covariate-adjusted " if self.coef_covs is not None else ""
        vce = self.vce.upper()
        b = self.bandwidths
        lines = ["Call: rdrobust", "",
                 f"{adj}{design}{kink} RD estimates using local polynomial regression.", "",
                 f"Number of Observations: {self.n['left'] + self.n['right']:>22d}",
                 f"Polynomial Order Est. (p): {self.p:>19d}",
                 f"Polynomial Order Bias (q): {self.q:>19d}",
                 f"Kernel: {self.kernel.capitalize():>38s}",
                 f"Bandwidth Selection: {self.bwselect:>25s}",
                 f"Var-Cov Estimator: {vce:>27s}", "",
                 f"{'':27s}{'Left':>9s}{'Right':>11s}",
                 "-" * 48,
                 f"{'Number of Observations':27s}{self.n['left']:>9d}{self.n['right']:>11d}",
                 f"{'Number of Unique Obs.':27s}{self.n_unique['left']:>9d}"
                 f"{self.n_unique['right']:>11d}",
                 f"{'Number of Effective Obs.':27s}{self.n_effective['left']:>9d}"
                 f"{self.n_effective['right']:>11d}",
                 f"{'Bandwidth Estimation':27s}{b['h_left']:>9.3f}{b['h_right']:>11.3f}",
                 f"{'Bandwidth Bias':27s}{b['b_left']:>9.3f}{b['b_right']:>11.3f}",
                 f"{'rho (h/b)':27s}{b['h_left'] / b['b_left']:>9.3f}"
                 f"{b['h_right'] / b['b_right']:>11.3f}", ""]
        if self.n_dropped:
            lines.insert(4, f"Rows dropped (missing values): {self.n_dropped:>15d}")
        pct = f"{100 * self.level:g}% CI"
        lines += [f"{'Method':13s}{'Coef.':>9s}{'S.E.':>9s}{'z-stat':>9s}{'P>|z|':>12s}"
                  f"{pct:>17s}", "-" * 73]
        for name, label in (("conventional", "Conventional"), ("robust", "Robust")):
            r = self.table.loc[name]
            ci = f"[{r.ci_low:.3f}, {r.ci_high:.3f}]"
            if name == "conventional":
                lines.append(f"{label:13s}{r.coef:>9.3f}{r.se:>9.3f}{r.z:>9.3f}"
                             f"{r.p_value:>12.3e}    {ci}")
            else:
                lines.append(f"{label:13s}{'-':>9s}{'-':>9s}{r.z:>9.3f}{r.p_value:>12.3e}"
                             f"    {ci}")
        if self.fuzzy:
            fs = self.first_stage.loc["conventional"]
            lines += ["", f"First stage (treatment jump): {fs.coef:.3f} (s.e. {fs.se:.3f})"]
        text = "\n".join(lines)
        print(text)
        return text

    def __repr__(self) -> str:
        t = self.table
        return (f"RDResult(coef={t.loc['conventional', 'coef']:.6g}, "
                f"robust CI=[{t.loc['robust', 'ci_low']:.6g}, {t.loc['robust', 'ci_high']:.6g}], "
                f"h=({self.bandwidths['h_left']:.6g}, {self.bandwidths['h_right']:.6g}))")


def rdrobust(y, x, c: float = 0.0, fuzzy=None, deriv: int = 0, p: int = 1, q: int | None = None,
             h=None, b=None, rho: float | None = None, covs=None, kernel: str = "triangular",
             weights=None, bwselect: str = "mserd", vce: str = "nn", groups=None,
             nnmatch: int = 3, level: float = 0.95, masspoints: str = "adjust",
             bwcheck: int | None = None, bwrestrict: bool = True, scaleregul: float = 1.0,
             stdvars: bool = True, subset=None, sharpbw: bool = False) -> RDResult:
    """Local polynomial RD estimate with robust bias-corrected inference.

    Parameters
    ----------
    y, x : array-like
        Outcome and running variable (numpy arrays or pandas Series). Rows with a missing value
        in any input are dropped and counted (``n_dropped``); infinite values are an error.
    c : float
        Cutoff; must lie strictly inside the range of x.
    fuzzy : array-like, optional
        Treatment take-up: a fuzzy design (the ratio of the outcome and treatment jumps).
    deriv : int
        0 for the jump in the level, 1 for a kink design (the jump in the slope).
    p, q : int
        Orders of the point-estimate and bias-correction polynomials (q > p; default p + 1).
    h, b : float or (float, float), optional
        Fixed bandwidths (one, or left and right). With h alone b = h (or h / rho).
    rho : float, optional
        b = h / rho.
    covs : array-like or DataFrame, optional
        Covariates entering linearly with one coefficient (CCFT 2019); names are kept in
        ``coef_covs``. Covariates collinear with earlier ones are dropped with a warning; one
        collinear with x is an error.
    kernel : {"triangular", "epanechnikov", "uniform"}
    weights : array-like, optional
        Nonnegative unit weights multiplying the kernel.
    bwselect : str
        One of ``SELECTORS`` (mserd, msetwo, msesum, msecomb1, msecomb2, cerrd, certwo, cersum,
        cercomb1, cercomb2), as rdbwselect defines them.
    vce : {"nn", "hc0", "hc1", "hc2", "hc3", "cr1", "cr2", "cr3"}
        rdrobust's variance names (kept because rdrobust users know them; attnreg's
        ``cov_type`` vocabulary elsewhere): nearest-neighbour residuals with ``nnmatch``
        neighbours, or HC0-HC3. With ``groups``, as rdrobust 2.1.1: nn, hc0, hc1 and cr1 give
        CR1 (rdrobust's small-sample factor), hc2 and cr2 CR2 (Bell and McCaffrey 2002), hc3 and
        cr3 CR3; cr1-cr3 without ``groups`` are an error. See docs/rd.md for the formulas.
    groups : array-like, optional
        Cluster ids (rdrobust's ``cluster``).
    level : float
        Confidence level as a fraction (0.95). rdrobust's ``level=95`` is ``level=0.95`` here.
    masspoints : {"adjust", "check", "off"}
        With ``adjust`` and at least 20% repeated x values on a side, pilot bandwidths keep
        ``bwcheck`` (default 10) distinct values, and the pilot uses the number of distinct x.
    bwcheck, bwrestrict, scaleregul, stdvars, sharpbw
        As in rdrobust 2.1.1 (``stdvars`` standardises x and y inside the bandwidth rule; the
        rule is scale-equivariant, so this changes only rounding).
    subset : boolean mask or integer positions, optional
        Rows to use; the attention weights of the others are 0.
    """
    data, opts, names, rows, n, xv = _prepare(y, x, c, fuzzy, deriv, p, q, h, b, rho, covs,
                                               kernel, weights, bwselect, vce, groups, nnmatch,
                                               level, masspoints, bwcheck, bwrestrict,
                                               scaleregul, stdvars, subset, sharpbw)
    import warnings
    raw = _core.rd_robust(data["y"], data["x"], data["t"], data["z"], data["w"],
                          data["cluster"], opts)
    opts["_clustered"] = groups is not None
    res = RDResult(raw, names, rows, n, xv, opts, opts["level"])
    if res.covs_dropped:
        warnings.warn("covs: dropped collinear covariates: " + ", ".join(res.covs_dropped),
                      stacklevel=2)
    if res.mass_points and opts["masspoints"] != "off":
        warnings.warn("x has mass points (>= 20% repeated values on a side)"
                      + ("; bandwidths keep at least bwcheck distinct values"
                         if opts["masspoints"] == "adjust" else
                         "; consider masspoints='adjust'"), stacklevel=2)
    return res


def rdbwselect(y, x, c: float = 0.0, fuzzy=None, deriv: int = 0, p: int = 1,
               q: int | None = None, covs=None, kernel: str = "triangular", weights=None,
               bwselect: str = "mserd", vce: str = "nn", groups=None, nnmatch: int = 3,
               masspoints: str = "adjust", bwcheck: int | None = None, bwrestrict: bool = True,
               scaleregul: float = 1.0, stdvars: bool = True, subset=None,
               sharpbw: bool = False, all: bool = False) -> RDBandwidths:
    """The bandwidths of :func:`rdrobust`: one selector, or all ten with ``all=True``.

    Arguments as in :func:`rdrobust`. Returns :class:`RDBandwidths` whose ``bws`` DataFrame is
    indexed by selector with columns h_left, h_right, b_left, b_right.
    """
    import pandas as pd
    data, opts, names, rows, n, xv = _prepare(y, x, c, fuzzy, deriv, p, q, None, None, None,
                                               covs, kernel, weights, bwselect, vce, groups,
                                               nnmatch, 0.95, masspoints, bwcheck, bwrestrict,
                                               scaleregul, stdvars, subset, sharpbw)
    raw = _core.rd_bwselect(data["y"], data["x"], data["t"], data["z"], data["w"],
                            data["cluster"], opts, bool(all))
    bws = pd.DataFrame(np.asarray(raw["bws"], dtype=float).reshape(-1, 4),
                       index=pd.Index(raw["selectors"], name="bwselect"),
                       columns=["h_left", "h_right", "b_left", "b_right"])
    return RDBandwidths(bws=bws, n={"left": int(raw["n"][0]), "right": int(raw["n"][1])},
                        n_dropped=int(raw["n_dropped"]), mass_points=bool(raw["mass_points"]),
                        summary_info={"p": opts["p"], "q": opts["q"], "kernel": opts["kernel"],
                                      "vce": raw["vce"]})


@dataclasses.dataclass
class RDDensityResult:
    """The manipulation test of ``rddensity``.

    ``statistic`` and ``p_value``: the robust (order q) test of equal densities at the cutoff,
    with the standard errors of ``vce`` under the model ``fitselect``; ``density``: the estimates left and right of c and their
    difference; ``se``: their standard errors; ``h_left``/``h_right`` the bandwidths;
    ``n_effective`` the rows within them (left, right); ``bandwidths``: rdbwdensity's table
    (rows left, right, diff, sum; None for a given h); ``binomial``: the binomial tests in
    windows around the cutoff (half-lengths, counts, p-values).
    """

    statistic: float
    p_value: float
    h_left: float
    h_right: float
    n_effective: tuple
    density: dict
    se: dict
    n: int
    n_left: int
    n_right: int
    n_dropped: int
    c: float
    p: int
    q: int
    kernel: str
    bwselect: str
    mass_points: bool
    bandwidths: typing.Any
    binomial: typing.Any
    fitselect: str = "unrestricted"
    vce: str = "jackknife"

    def summary(self) -> str:
        """The test as text: sample, bandwidths, densities, T and p-value, binomial tests."""
        lines = [
            "Manipulation test (Cattaneo, Jansson and Ma 2020)",
            f"  cutoff c = {self.c:g}, p = {self.p}, q = {self.q}, kernel = {self.kernel}, "
            f"model = {self.fitselect}, vce = {self.vce}, bwselect = {self.bwselect}",
            f"  n = {self.n} (left {self.n_left}, right {self.n_right}), dropped {self.n_dropped}",
            f"  h = {self.h_left:.4f} (left), {self.h_right:.4f} (right); effective n = "
            f"{self.n_effective[0]}, {self.n_effective[1]}",
            f"  density at c: left {self.density['left']:.6g}, right "
            f"{self.density['right']:.6g}",
            f"  T = {self.statistic:.4f}, p-value = {self.p_value:.4f}",
        ]
        if self.binomial is not None and len(self.binomial):
            lines.append("  binomial tests (window [c - w_left, c + w_right]):")
            lines.append(self.binomial.to_string(index=False))
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()


def rddensity(x, c: float = 0.0, p: int = 2, q: int | None = None, kernel: str = "triangular",
              h=None, bwselect: str = "comb", vce: str = "jackknife", masspoints: bool = True,
              regularize: bool = True, nlocalmin: int | None = None,
              nuniquemin: int | None = None, bino_n: int = 20, bino_w: float | None = None,
              bino_nw: int = 10, bino_p: float = 0.5,
              fitselect: str = "unrestricted") -> RDDensityResult:
    """Manipulation test: is the density of the running variable continuous at the cutoff?

    The local polynomial density estimator of Cattaneo, Jansson and Ma (2020, JASA 115(531)) on
    each side of ``c``, the robust test of equal densities (fits of order ``q = p + 1`` at the
    bandwidths chosen for order ``p``), with the bandwidth rules of rdbwdensity (``bwselect``:
    ``"each"``, ``"diff"``, ``"sum"`` or ``"comb"``, the median of the three; Cattaneo, Jansson
    and Ma 2018, Stata Journal 18(1)) and the binomial tests in windows around the cutoff
    (R rddensity's window rule; docs/rd.md says where rddensity 3.0's Python port differs).
    Missing x (NaN) are dropped (``n_dropped``); infinite x is an error.

    ``fitselect``: ``"unrestricted"`` (default; a distribution function per side) or
    ``"restricted"`` (one distribution function, continuous at c with common derivatives of
    order >= 2 and a density of its own on each side: Cattaneo, Jansson and Ma 2018, Stata
    Journal 18(1), section 2); the restricted model has one bandwidth (``bwselect`` ``"diff"``,
    ``"sum"`` or ``"comb"``, the smaller of the two). ``vce``: ``"jackknife"`` (default) or
    ``"plugin"``, the asymptotic variance of Cattaneo, Jansson and Ma (2020, Theorem 1) at the
    estimated densities; it also enters the bandwidth rules, as in rddensity.

    Parameters: ``h`` one bandwidth or a (left, right) pair (None: selected); ``masspoints``
    adjusts the empirical distribution at repeated values; ``regularize``, ``nlocalmin``,
    ``nuniquemin`` as rddensity (at least 20 + p + 1 rows and distinct values per side);
    ``bino_n`` rows on each side in the first window, or ``bino_w`` its half-length;
    ``bino_nw`` windows (0: none); ``bino_p`` the null probability of the left side.
    """
    import pandas as pd

    xv = _vector(x, "x")
    if xv is None or xv.size == 0:
        raise ValueError("x: must be a non-empty numeric vector")
    miss = np.isnan(xv)
    if np.any(np.isinf(xv)):
        raise ValueError("x: has infinite values; drop or fix those rows")
    xv = xv[~miss]
    if not (np.isscalar(c) and np.isfinite(c)):
        raise ValueError(f"c: must be a finite number, got {c!r}")
    for name, v, lo in (("p", p, 1), ("bino_nw", bino_nw, 0), ("bino_n", bino_n, 1)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo:
            raise ValueError(f"{name}: must be an integer >= {lo}, got {v!r}")
    if p > 7:
        raise ValueError(f"p: must be an integer from 1 to 7, got {p}")
    if q is None:
        q = p + 1
    if isinstance(q, bool) or not isinstance(q, (int, np.integer)) or not p <= q <= 8:
        raise ValueError(f"q: must be an integer from p ({p}) to 8, got {q!r}")
    if kernel not in _KERNELS:
        raise ValueError(f"kernel: must be one of 'triangular', 'epanechnikov', 'uniform', "
                         f"got {kernel!r}")
    if bwselect not in ("each", "diff", "sum", "comb"):
        raise ValueError(f"bwselect: must be one of 'each', 'diff', 'sum', 'comb', got "
                         f"{bwselect!r}")
    if vce not in ("jackknife", "plugin"):
        raise ValueError(f"vce: must be 'jackknife' or 'plugin', got {vce!r}")
    if fitselect not in ("unrestricted", "restricted"):
        raise ValueError(f"fitselect: must be 'unrestricted' or 'restricted', got {fitselect!r}")
    if xv.size < 2 or not (xv.min() <= c <= xv.max()):
        raise ValueError(f"c: the cutoff {c!r} must lie within the range of x")
    hl, hr = _pair(h, "h")
    mins = []
    for name, v in (("nlocalmin", nlocalmin), ("nuniquemin", nuniquemin)):
        if v is None:
            mins.append(-1)
        elif isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
            raise ValueError(f"{name}: must be a non-negative integer, got {v!r}")
        else:
            mins.append(int(v))
    if bino_w is not None and not (np.isscalar(bino_w) and np.isfinite(bino_w) and bino_w > 0):
        raise ValueError(f"bino_w: must be a positive number, got {bino_w!r}")
    if not (np.isscalar(bino_p) and 0 <= bino_p <= 1):
        raise ValueError(f"bino_p: must be a probability in [0, 1], got {bino_p!r}")
    opts = dict(c=float(c), p=int(p), q=int(q), kernel=_KERNELS[kernel], bwselect=bwselect,
                h_left=hl, h_right=hr, masspoints=bool(masspoints), regularize=bool(regularize),
                nlocalmin=mins[0], nuniquemin=mins[1], bino_n=int(bino_n),
                bino_w=math.nan if bino_w is None else float(bino_w), bino_nw=int(bino_nw),
                bino_p=float(bino_p), fitselect=fitselect, vce=vce)
    raw = _core.rd_density(xv, opts)
    n, nl, nr, nhl, nhr = (int(v) for v in raw["n"])
    table = None
    if raw["bw_table"]:
        table = pd.DataFrame(np.asarray(raw["bw_table"]).reshape(4, 3),
                             index=["left", "right", "diff", "sum"],
                             columns=["bandwidth", "variance", "bias2"])
    bino = pd.DataFrame({"w_left": raw["bino_w_left"], "w_right": raw["bino_w_right"],
                         "n_left": np.asarray(raw["bino_n_left"], dtype=np.int64),
                         "n_right": np.asarray(raw["bino_n_right"], dtype=np.int64),
                         "p_value": raw["bino_p_value"]})
    f, se = raw["f"], raw["se"]
    return RDDensityResult(
        statistic=float(raw["statistic"]), p_value=float(raw["p_value"]),
        h_left=float(raw["h"][0]), h_right=float(raw["h"][1]), n_effective=(nhl, nhr),
        density={"left": f[0], "right": f[1], "diff": f[2]},
        se={"left": se[0], "right": se[1], "diff": se[2]}, n=n, n_left=nl, n_right=nr,
        n_dropped=int(miss.sum()), c=float(c), p=int(p), q=int(q), kernel=_KERNELS[kernel],
        bwselect=raw["bwselect"], mass_points=bool(raw["mass_points"]), bandwidths=table,
        binomial=bino, fitselect=raw["fitselect"], vce=raw["vce"])



# ------------------------------------------------------------------------------------------------
# RD plots: binned means with the data-driven numbers of bins of Calonico, Cattaneo and Titiunik
# (2015, JASA 110(512)) and global polynomial fits; computed in the core
# (core/include/attnreg/rd/rdplot.hpp), laid out and drawn here. docs/rd.md, "RD plots".
import warnings as _warnings  # noqa: E402

__all__ += ["rdplot", "RDPlotResult"]

BINSELECT = ("es", "espr", "esmv", "esmvpr", "qs", "qspr", "qsmv", "qsmvpr")


@dataclasses.dataclass
class RDPlotResult:
    """The result of :func:`rdplot`.

    Attributes
    ----------
    bins : pandas.DataFrame
        One row per bin, left side first, in increasing x: ``side`` ("left"/"right"), ``bin``
        (1..J on each side, from the lowest x), ``left_edge``, ``right_edge``, ``mid`` (the bin's
        centre), ``mean_x``, ``mean_y``, ``n``, ``sd_y``, ``se_y``, ``ci_low``, ``ci_high``
        (t interval at ``level``). Empty bins have n = 0 and NaN means. With ``covs``,
        ``mean_y`` and the interval are covariate-adjusted and ``mean_y_unadjusted`` is added.
    J : dict
        ``left``, ``right``: the numbers of bins used.
    J_imse, J_mv : dict
        The IMSE-optimal and the mimicking-variance numbers of bins of the rule (its spacing and
        its variance estimator), per side.
    scale, rscale : dict
        The requested scale and the implied one (J / J_imse), per side.
    coef : pandas.DataFrame
        The polynomial coefficients of ``(x - c)**j``, j = 0..p, columns ``left`` and ``right``.
    curve : pandas.DataFrame
        The fitted polynomials: ``side``, ``x``, ``y`` (``nplot`` points per side).
    binselect : str
        The rule used (after the mass-point adjustment), or "manual" when ``nbins`` was given.
    n, n_h : dict
        Observations per side, and those with positive kernel weight in the polynomial fit.
    h : dict
        The bandwidths of the polynomial fits (the support when not given).
    mass_points : bool
        Whether at least 20% of the x values on a side repeat.
    n_dropped : int
        Rows with a missing y, x, weight or covariate.
    ax : matplotlib Axes or None
        The plot (None with ``hide=True``).
    coef_covs : pandas.Series or None
        With ``covs``: gamma of the polynomial fits (common to both sides), by covariate name.
    coef_covs_bins : pandas.Series or None
        With ``covs``: gamma of the binned means (y on the bin indicators and the covariates).
    covs_eval : pandas.Series or None
        With ``covs``: where the covariates are evaluated (their means, or 0).
    covs_dropped : list
        Covariates dropped as collinear with earlier ones.
    """

    bins: object
    J: dict
    J_imse: dict
    J_mv: dict
    scale: dict
    rscale: dict
    coef: object
    curve: object
    binselect: str
    n: dict
    n_h: dict
    h: dict
    c: float
    p: int
    kernel: str
    level: float
    mass_points: bool
    n_dropped: int
    ax: object = None
    coef_covs: object = None
    coef_covs_bins: object = None
    covs_eval: object = None
    covs_dropped: list = dataclasses.field(default_factory=list)

    def plot(self, ax=None, ci: bool = False, shade: bool = False, title: str | None = None,
             xlabel: str = "running variable x", ylabel: str = "outcome y"):
        """Draw the binned means and the polynomial fits (matplotlib); returns the Axes."""
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots()
        b = self.bins[self.bins["n"] > 0]
        if ci:
            for side in ("left", "right"):
                s = b[b["side"] == side]
                if shade:
                    ax.fill_between(s["mid"], s["ci_low"], s["ci_high"], color="C0", alpha=0.2,
                                    linewidth=0)
                else:
                    ax.vlines(s["mid"], s["ci_low"], s["ci_high"], color="C0", alpha=0.5)
        adj = "" if self.coef_covs is None else " (covariate-adjusted)"
        ax.scatter(b["mid"], b["mean_y"], s=12, color="C0", zorder=3, label="bin means" + adj)
        for side in ("left", "right"):
            cv = self.curve[self.curve["side"] == side]
            ax.plot(cv["x"], cv["y"], color="C3",
                    label=f"polynomial fit, p = {self.p}{adj}" if side == "left" else None)
        ax.axvline(self.c, color="0.5", linestyle=":")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(title if title is not None else
                     f"RD plot ({self.binselect}: J = {self.J['left']}, {self.J['right']})")
        ax.legend()
        return ax

    def __repr__(self):
        return (f"RDPlotResult(binselect={self.binselect!r}, J={self.J}, n={self.n}, "
                f"p={self.p}, c={self.c})")


def _side_pair(v, name: str, integer: bool = False):
    if v is None:
        return None
    a = np.asarray(v, dtype=float).reshape(-1)
    if a.size not in (1, 2) or not np.all(np.isfinite(a)) or np.any(a <= 0):
        raise ValueError(f"{name}: must be one or two (left, right) positive numbers")
    if integer and np.any(a != np.round(a)):
        raise ValueError(f"{name}: numbers of bins must be whole numbers")
    return (a[0], a[0]) if a.size == 1 else (a[0], a[1])


def rdplot(y, x, c: float = 0.0, p: int = 4, nbins=None, binselect: str = "esmv", scale=None,
           kernel: str = "uniform", weights=None, h=None, support=None, ci=None,
           shade: bool = False, hide: bool = False, ax=None, subset=None,
           masspoints: str = "adjust", level: float | None = None, nplot: int = 500,
           covs=None, covs_eval="mean", covs_drop: bool = True):
    """Regression discontinuity plot: binned means and global polynomial fits on each side.

    The numbers of bins follow Calonico, Cattaneo and Titiunik (2015, JASA 110(512)):
    evenly-spaced (``es*``) or quantile-spaced (``qs*``) bins; IMSE-optimal (``es``, ``qs``) or
    mimicking-variance (``esmv``, ``qsmv``) numbers, with the variance estimated from spacings
    or, with the ``pr`` suffix, from global polynomial regressions. The fits are weighted
    least-squares polynomials of order ``p`` in ``x - c`` on each side.

    Parameters
    ----------
    y, x : array-like
        Outcome and running variable (rows with a NaN in either are dropped).
    c : float
        The cutoff; it must lie strictly inside the range of x.
    p : int
        Order of the global polynomials (0..20).
    nbins : int or (int, int), optional
        Fixed numbers of bins (left, right); the spacing still follows ``binselect``.
    binselect : str
        One of es, espr, esmv (default), esmvpr, qs, qspr, qsmv, qsmvpr.
    scale : float or (float, float), optional
        Multiplies the selected numbers of bins (J = floor(scale * J_selected)).
    kernel : str
        Kernel of the polynomial fits: uniform (default), triangular or epanechnikov.
    weights : array-like, optional
        Non-negative unit weights of the polynomial fits (the bins are unweighted, as in
        rdrobust's rdplot).
    h : float or (float, float), optional
        Bandwidths of the polynomial fits; default the support on each side.
    support : (float, float), optional
        Extends the range of x used by the evenly-spaced bins.
    ci : float, optional
        Draw t confidence intervals of the bin means at this level, a fraction in (0, 1) as
        every level in attnreg (0.95 where rdrobust writes ``ci=95``; 95 is an error).
    shade : bool
        Draw the intervals as shaded bands.
    hide : bool
        Compute only; draw nothing.
    ax : matplotlib Axes, optional
        Where to draw.
    subset : boolean mask or integer positions, optional
        The rows to use.
    masspoints : str
        "adjust" (default: with >= 20% repeated x on a side, the spacings rules become their
        polynomial-regression variants), "check" (report only) or "off".
    level : float, optional
        Level of the bins' intervals in the result (default ``ci`` or 0.95).
    nplot : int
        Points of each fitted curve.
    covs : array-like or DataFrame, optional
        Covariates entering linearly (names kept; rows with a NaN are dropped and counted). The
        polynomial fits of both sides share one coefficient vector (``coef_covs``; Calonico,
        Cattaneo, Farrell and Titiunik 2019, REStat 101(3)), and the binned means are adjusted
        with the coefficients of y on the bin indicators and the covariates
        (``coef_covs_bins``; Cattaneo, Crump, Farrell and Feng 2024, AER 114(5)). docs/rd.md,
        "RD plots", says where this differs from rdrobust's rdplot.
    covs_eval : "mean" or 0
        Where the covariates are held: at their sample means (default) or at 0.
    covs_drop : bool
        Drop covariates collinear with earlier ones, with a warning naming them (default);
        False makes that an error.

    Returns
    -------
    RDPlotResult
    """
    xv = _vector(x, "x")
    if xv is None:
        raise ValueError("x: the running variable is required")
    n = xv.shape[0]
    yv = _vector(y, "y", n)
    if yv is None:
        raise ValueError("y: the outcome is required")
    wv = _vector(weights, "weights", n)
    z, znames = _covs(covs, n)
    if subset is not None:
        rows = _subset_rows(subset, n)
        xv, yv = xv[rows], yv[rows]
        wv = None if wv is None else wv[rows]
        z = None if z is None else z[rows]
    if isinstance(covs_eval, str) and covs_eval.lower() == "mean":
        covs_eval_mean = True
    elif (not isinstance(covs_eval, (bool, str)) and np.isscalar(covs_eval)
          and covs_eval == 0):
        covs_eval_mean = False
    else:
        raise ValueError(f"covs_eval: {covs_eval!r} is not 'mean' or 0")
    if not isinstance(covs_drop, (bool, np.bool_)):
        raise ValueError(f"covs_drop: must be True or False, got {covs_drop!r}")
    if not isinstance(p, (int, np.integer)) or isinstance(p, bool):
        raise ValueError(f"p: must be an integer, got {p!r}")
    if not isinstance(binselect, str) or binselect.lower() not in BINSELECT:
        raise ValueError(f"binselect: {binselect!r} is not one of {', '.join(BINSELECT)}")
    binselect = binselect.lower()
    if not isinstance(kernel, str) or kernel.lower() not in _KERNELS:
        raise ValueError(f"kernel: {kernel!r} is not one of triangular, epanechnikov, uniform")
    kernel = _KERNELS[kernel.lower()]
    if masspoints is False or masspoints is None:
        masspoints = "off"
    if masspoints not in ("adjust", "check", "off"):
        raise ValueError(f"masspoints: {masspoints!r} is not one of adjust, check, off")
    if ci is not None and not isinstance(ci, bool):
        ci = check_level(ci, "ci")  # a fraction, as every level in attnreg (rdrobust: ci=95)
    if level is None:
        level = ci if isinstance(ci, float) else 0.95
    check_level(level)
    nb = _side_pair(nbins, "nbins", integer=True)
    sc = _side_pair(scale, "scale")
    hh = _side_pair(h, "h")
    sup = (math.nan, math.nan)
    if support is not None:
        a = np.asarray(support, dtype=float).reshape(-1)
        if a.size != 2 or not np.all(np.isfinite(a)) or a[0] >= a[1]:
            raise ValueError("support: must be (low, high) finite numbers with low < high")
        sup = (float(a[0]), float(a[1]))
    if not np.isfinite(c):
        raise ValueError("c: must be a finite number")
    opts = dict(c=float(c), p=int(p), binselect=binselect,
                nbins_left=int(nb[0]) if nb else 0, nbins_right=int(nb[1]) if nb else 0,
                scale_left=float(sc[0]) if sc else 1.0, scale_right=float(sc[1]) if sc else 1.0,
                kernel=kernel, h_left=float(hh[0]) if hh else math.nan,
                h_right=float(hh[1]) if hh else math.nan, support_low=sup[0],
                support_high=sup[1], masspoints=masspoints, level=float(level),
                nplot=int(nplot), covs_eval_mean=covs_eval_mean, covs_drop=bool(covs_drop),
                covs_names=znames)
    r = _core.rd_plot(yv, xv, wv, opts, z)
    if r["covs_dropped"]:
        _warnings.warn("covs: dropped collinear covariates: " +
                       ", ".join(znames[j] for j in r["covs_dropped"]), stacklevel=2)
    if r["mass_points"] and masspoints != "off":
        msg = "rdplot: mass points detected in the running variable (>= 20% repeated values)"
        if masspoints == "adjust" and binselect in ("es", "esmv", "qs", "qsmv"):
            msg += f"; binselect {binselect!r} became {r['binselect']!r}"
        _warnings.warn(msg, stacklevel=2)
    for side in ("left", "right"):
        if r[side]["var_y"] == 0:
            _warnings.warn(f"rdplot: y is constant on the {side} side; one bin there",
                          stacklevel=2)
    result = _layout(r, float(c), int(p), kernel, float(level))
    if z is not None:
        import pandas as pd

        kept = [znames[j] for j in r["covs_kept"]]
        result.coef_covs = pd.Series(r["coef_covs"], index=kept, name="coef_covs")
        result.coef_covs_bins = pd.Series(r["coef_covs_bins"], index=kept, name="coef_covs_bins")
        result.covs_eval = pd.Series(r["covs_eval"], index=kept, name="covs_eval")
        result.covs_dropped = [znames[j] for j in r["covs_dropped"]]
        result.bins["mean_y_unadjusted"] = np.concatenate(
            [r["left"]["mean_y_raw"], r["right"]["mean_y_raw"]])
    if not hide:
        result.ax = result.plot(ax=ax, ci=ci is not None and ci is not False, shade=shade)
    return result


def _layout(r, c, p, kernel, level):
    import pandas as pd

    frames, curves = [], []
    for side in ("left", "right"):
        s = r[side]
        e = np.asarray(s["edges"])
        J = s["J"]
        frames.append(pd.DataFrame({
            "side": side, "bin": np.arange(1, J + 1), "left_edge": e[:-1], "right_edge": e[1:],
            "mid": s["mid"], "mean_x": s["mean_x"], "mean_y": s["mean_y"],
            "n": np.asarray(s["count"], dtype=np.int64), "sd_y": s["sd_y"], "se_y": s["se_y"],
            "ci_low": s["ci_low"], "ci_high": s["ci_high"]}))
        curves.append(pd.DataFrame({"side": side, "x": s["curve_x"], "y": s["curve_y"]}))
    per = lambda key: {"left": r["left"][key], "right": r["right"][key]}  # noqa: E731
    coef = pd.DataFrame({"left": r["left"]["coef"], "right": r["right"]["coef"]})
    coef.index.name = "power"
    return RDPlotResult(
        bins=pd.concat(frames, ignore_index=True), J=per("J"),
        J_imse={k: int(v) if np.isfinite(v) else v for k, v in per("J_imse").items()},
        J_mv={k: int(v) if np.isfinite(v) else v for k, v in per("J_mv").items()},
        scale=per("scale"), rscale=per("rscale"), coef=coef,
        curve=pd.concat(curves, ignore_index=True), binselect=r["binselect"], n=per("n"),
        n_h=per("n_h"), h=per("h"), c=c, p=p, kernel=kernel, level=level,
        mass_points=bool(r["mass_points"]), n_dropped=int(r["n_dropped"]))
