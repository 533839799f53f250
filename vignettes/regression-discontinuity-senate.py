"""Regression discontinuity on the US Senate data: the RD plot, the density test, the estimate
under every bandwidth selector, and the attention weights behind it.

Renders vignettes/out/regression-discontinuity-senate/index.md with its PNG figures. The data
are small (n = 1,390), so CI and --full runs are the same.
"""
from __future__ import annotations

import pathlib
import sys
import time
import warnings

import numpy as np
import pandas as pd

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from _report import Report, vignette_args  # noqa: E402

import matplotlib  # noqa: E402
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import attnreg  # noqa: E402
import attnreg.plot  # noqa: E402
import attnreg.rd as rd  # noqa: E402
from attnreg.datasets import load_senate  # noqa: E402

NAME = "regression-discontinuity-senate"


def main() -> None:
    args = vignette_args(__doc__)
    rep = Report(NAME, args.out, full=args.full,
                 title="Regression discontinuity: the incumbency advantage in the US Senate")
    t_all = time.perf_counter()
    d = load_senate()
    y, x = d["vote"].to_numpy(), d["margin"].to_numpy()
    ok = ~np.isnan(y) & ~np.isnan(x)

    rep.p(f"""
        **The design.** The US Senate elections data of Cattaneo, Frandsen and Titiunik (2015,
        Journal of Causal Inference 3(1)), shipped with attnreg as
        `attnreg.datasets.load_senate()` (the public file distributed with rdrobust): {len(d)}
        Senate elections, 1914-2010. The running variable `margin` is the Democratic party's
        margin of victory at election t (in percentage points); the party wins the seat when it
        is positive, so the cutoff is c = 0. The outcome `vote` is the Democratic vote share in
        the seat's election at t + 2 (missing in {int(np.isnan(y).sum())} rows, which every
        function below drops and counts). Elections decided by a hair are as good as random,
        so the jump of E[vote | margin] at 0 is the incumbent party's advantage (Lee 2008,
        Journal of Econometrics 142(2)).
        """)

    # ------------------------------------------------------------------ the RD plot
    rep.h(2, "The RD plot")
    pl = rd.rdplot(y, x, binselect="esmv", hide=True)
    rep.p(f"""
        `rd.rdplot(vote, margin)` bins the outcome on each side with the mimicking-variance
        number of evenly spaced bins of Calonico, Cattaneo and Titiunik (2015, JASA 110(512)):
        J = {pl.J['left']} bins left and {pl.J['right']} right (the IMSE-optimal numbers would
        be {pl.J_imse['left']} and {pl.J_imse['right']}; a plot with many small bins shows the
        noise, which is the point of the mimicking-variance choice). The red curves are global
        quartic fits on each side. The bins come back as data:
        """)
    rep.table(pl.bins[pl.bins["n"] > 0].head(5)[["side", "bin", "left_edge", "right_edge",
                                                 "mean_y", "n", "ci_low", "ci_high"]])
    # claim: the binned means are the plain means of the rows in [e_j, e_j+1)
    worst = 0.0
    for side, m in (("left", ok & (x < 0)), ("right", ok & (x >= 0))):
        b = pl.bins[pl.bins["side"] == side]
        e = np.r_[b["left_edge"].to_numpy(), b["right_edge"].to_numpy()[-1]]
        idx = np.clip(np.searchsorted(e, x[m], side="right") - 1, 0, len(b) - 1)
        for j in range(len(b)):
            if (idx == j).any():
                worst = max(worst, abs(b["mean_y"].iloc[j] - y[m][idx == j].mean()))
    rep.check("bin means vs numpy means of the rows in each bin", worst, 1e-10)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    pl.plot(ax=axes[0], xlabel="Democratic margin at t", ylabel="Democratic vote share at t+2")
    qs = rd.rdplot(y, x, binselect="qs", ci=0.95, hide=True)
    qs.plot(ax=axes[1], ci=True, xlabel="Democratic margin at t",
            ylabel="Democratic vote share at t+2")
    rep.figure(fig, "rdplot.png",
               "Left: mimicking-variance evenly spaced bins (esmv) and quartic fits. Right: "
               "IMSE-optimal quantile-spaced bins (qs) with 95% intervals of the bin means.")

    # ------------------------------------------------------------------ density test
    rep.h(2, "Manipulation: the density test")
    dens = rd.rddensity(x, c=0.0)
    rep.p(f"""
        If candidates could sort around the cutoff, the density of the margin would jump at 0.
        `rd.rddensity(margin)` (Cattaneo, Jansson and Ma 2020, JASA 115(531)) estimates the
        density on each side with local quadratic fits: T = {dens.statistic:.3f}, p =
        {dens.p_value:.3f}, with bandwidths {dens.h_left:.2f} (left) and {dens.h_right:.2f}
        (right). No evidence of manipulation.
        """)
    rep.check("density test p-value is above 0.1 (no manipulation)", max(0.0, 0.1 - dens.p_value),
              0.0, kind="shortfall")

    # ------------------------------------------------------------------ every selector
    rep.h(2, "The estimate under every bandwidth selector")
    rows = []
    for sel in rd.SELECTORS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = rd.rdrobust(y, x, bwselect=sel)
        t = r.table
        rows.append({"bwselect": sel, "h_left": r.bandwidths["h_left"],
                     "h_right": r.bandwidths["h_right"], "coef": t.loc["conventional", "coef"],
                     "robust_ci_low": t.loc["robust", "ci_low"],
                     "robust_ci_high": t.loc["robust", "ci_high"],
                     "n_h": r.n_effective["left"] + r.n_effective["right"]})
    tab = pd.DataFrame(rows)
    rep.table(tab, floatfmt="{:.3f}")
    rep.p(f"""
        Local linear fits with a triangular kernel, nearest-neighbour variances, robust
        bias-corrected intervals (Calonico, Cattaneo and Titiunik 2014, Econometrica 82(6);
        the CER rules of Calonico, Cattaneo and Farrell 2020, Econometrics Journal 23(2)).
        The ten selectors give bandwidths from {tab[['h_left', 'h_right']].min().min():.1f} to
        {tab[['h_left', 'h_right']].max().max():.1f} points of margin and estimates from
        {tab['coef'].min():.2f} to {tab['coef'].max():.2f} percentage points; every robust
        interval excludes 0.
        """)
    rep.check("every robust interval excludes 0", max(0.0, -tab["robust_ci_low"].min()), 0.0,
              kind="shortfall")

    # ------------------------------------------------------------------ attention weights
    rep.h(2, "The attention weights")
    r = rd.rdrobust(y, x)
    a = r.attention_weights()
    yy = np.where(ok, y, 0.0)
    rep.check("conventional estimate = a @ y", abs(a.weights @ yy - r.table.loc["conventional",
                                                                              "coef"]), 1e-10)
    h = r.bandwidths["h_left"]
    inner = np.abs(x) <= h / 2
    share_pos = {s: a.weights[m & (a.weights != 0)] for s, m in
                 (("left", x < 0), ("right", x >= 0))}
    inner_share = (np.abs(a.weights[inner & (x >= 0)]).sum() /
                   np.abs(a.weights[x >= 0]).sum())
    neg = (a.weights[(x >= 0)] < 0).sum()
    rep.p(f"""
        The conventional estimate {r.table.loc['conventional', 'coef']:.3f} is a weighted
        difference of outcomes: `a = r.attention_weights().weights` with estimate = a @ y
        (checked below). The weights sum to 1 on the right and to -1 on the left; they are
        largest next to the cutoff and fall to 0 at |margin| = h = {h:.2f}. Of
        {r.n['left'] + r.n['right']} elections, {r.n_effective['left'] + r.n_effective['right']}
        lie inside the window, but the effective numbers of rows 1 / sum(a^2) are only
        {a.effective_n['left']:.0f} (left) and {a.effective_n['right']:.0f} (right): the
        estimate's variance is that of a mean of about that many equally weighted outcomes.
        On the right, the elections within h/2 of the cutoff carry {100 * inner_share:.0f}% of
        the absolute weight, and {neg} elections in the outer part of the window (beyond
        about h/2) get negative weight (the local linear fit extrapolates to the cutoff by subtracting them; Gelman and Imbens
        2019, J. Bus. Econ. Stat. 37(3), on reading such weights).
        """)
    negx = x[(x >= 0) & (a.weights < 0)]
    rep.check("negative weights on the right lie beyond 0.45 h", max(0.0, 0.45 * h - negx.min()), 0.0,
              kind="shortfall")
    rep.check("weights sum to 1 on the right", abs(a.weights[x >= 0].sum() - 1), 1e-10)
    rep.check("weights sum to -1 on the left", abs(a.weights[x < 0].sum() + 1), 1e-10)
    n_eff_direct = {s: 1 / np.sum(v ** 2) for s, v in share_pos.items()}
    rep.check("effective n vs 1/sum(a^2) in numpy",
              max(abs(n_eff_direct[s] - a.effective_n[s]) / n_eff_direct[s]
                  for s in ("left", "right")), 1e-12, kind="max rel diff")
    fig, ax = plt.subplots(figsize=(7, 4))
    attnreg.plot.rd_weights(r, ax=ax)
    ax.set_xlabel("Democratic margin at t")
    rep.figure(fig, "weights.png",
               "Attention weights of the conventional estimate (mserd bandwidth, triangular "
               "kernel, local linear): estimate = a @ y.")
    rep.p(f"*Total wall time {time.perf_counter() - t_all:.1f} s.*")
    rep.save()


if __name__ == "__main__":
    main()
