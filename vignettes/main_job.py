"""attnreg main job: the wage-experience profile on the 1988 Current Population Survey.

On the bundled CPS1988 data (28,155 men): a Mincer wage equation by OLS (coefficients, standard
errors, and the training rows one prediction attends to: OLS as attention, Goulet Coulombe 2025, arXiv:2504.09663), then the
nonparametric profile by local-linear regression: 1-D with the bandwidth chosen by exact
least-squares cross-validation (cv_ls; the Ruppert-Sheather-Wand plug-in for comparison), with
marginal effects, heteroskedasticity-robust standard errors and robust bias-corrected (RBC)
intervals at a few points; then mixed data (experience, education, ethnicity as a categorical
kernel) with all three bandwidths chosen by cv_ls, and the local-linear attention weights of
one prediction. Writes a plot of the profiles and of the fit with its bands. Run from the
repository root: `bash .ci/main-job.sh` (sets up first) or `python3 vignettes/main_job.py`.
"""
from __future__ import annotations

import argparse
import pathlib
import time

import numpy as np
import pandas as pd

import attnreg

ROOT = pathlib.Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "out"), help="folder for the plot")
    args = ap.parse_args()
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    cps = pd.read_csv(ROOT / "data" / "cps1988.csv")
    y = np.log(cps["wage"].to_numpy())
    X = pd.DataFrame({
        "experience": cps["experience"].astype(float),
        "experience2": cps["experience"].astype(float) ** 2,
        "education": cps["education"].astype(float),
        "afam": (cps["ethnicity"] == "afam").astype(float),
    })
    print(f"attnreg {attnreg.__version__}: CPS1988, n = {len(cps):,} men, response log(wage)")

    t0 = time.perf_counter()
    ols = attnreg.OLS().fit(X, y)
    t_fit = time.perf_counter() - t0
    print(f"\nOLS Mincer equation (pivoted QR, {t_fit * 1e3:.1f} ms):")
    print(ols.summary())
    print(f"residual sd {np.sqrt(ols.sigma2_):.4f}, rank {ols.rank_}")

    # One prediction as attention over the 28,155 training rows (Goulet Coulombe 2025, eq. 8).
    query = pd.DataFrame({"experience": [20.0], "experience2": [400.0], "education": [16.0],
                          "afam": [0.0]})
    a = ols.attention_weights(query)[0]
    pred = ols.predict(query)[0]
    print(f"\nPrediction for a white worker, 16 years of education, 20 years of experience:"
          f" log wage {pred:.4f} (= sum_i a_i y_i = {a @ y:.4f}; sum_i a_i = {a.sum():.6f})")
    top = np.argsort(-np.abs(a))[:8]
    tab = cps.iloc[top][["wage", "education", "experience", "ethnicity"]].copy()
    tab.insert(0, "weight", a[top])
    print("largest attention weights (|a_i|):")
    print(tab.to_string(float_format=lambda v: f"{v:.6f}"))
    print(f"weights: {np.sum(a > 0):,} positive, {np.sum(a < 0):,} negative;"
          f" effective number of rows 1/sum(a^2) = {1 / np.sum(a**2):,.0f}")

    # Local-linear profile of log wage on experience, bandwidth by exact leave-one-out CV.
    # Experience is whole years (67 distinct values), so the search runs over distinct values
    # with counts: the same objective and gradient as over all 28,155 rows.
    x_exp = cps["experience"].to_numpy(dtype=float)
    t0 = time.perf_counter()
    cv1 = attnreg.select_bandwidth(x_exp[:, None], y, "ll", "cv_ls", kernel="gaussian")
    t_cv1 = time.perf_counter() - t0
    t0 = time.perf_counter()
    dpi = attnreg.bandwidth.dpi(x_exp, y)
    t_bw = time.perf_counter() - t0
    h1 = float(cv1.bandwidth[0])
    t0 = time.perf_counter()
    ll1 = attnreg.LocalLinear(kernel="gaussian", bandwidth=h1).fit(x_exp[:, None], y)
    t_ll1 = time.perf_counter() - t0
    grid = np.arange(0, 61, dtype=float)
    prof1 = ll1.predict(grid[:, None])
    slope1 = ll1.gradient(grid[:, None])[:, 0]
    print(f"\nLocal linear, log wage on experience (Gaussian kernel):")
    print(f"  cv_ls bandwidth h = {h1:.4f} years in {t_cv1:.2f} s ({cv1.n_evals} evaluations of"
          f" the exact leave-one-out CV and its gradient; CV = {cv1.objective:.6f})")
    print(f"  search: {cv1.message}")
    print(f"  plug-in (Ruppert-Sheather-Wand, = KernSmooth::dpill) h = {dpi.bandwidth:.4f}"
          f" ({t_bw * 1e3:.1f} ms); its CV = "
          f"{attnreg.bandwidth.bandwidth_objective(x_exp[:, None], y, [dpi.bandwidth])[0]:.6f}")
    print(f"  fit + leverages + LOO at all {len(y):,} rows in {t_ll1:.2f} s,"
          f" effective df tr(L) = {ll1.effective_df_:.1f}")
    loo = ll1.loo_predictions()
    print(f"  leave-one-out RMSE {np.sqrt(np.mean((y - loo) ** 2)):.4f} with experience alone"
          f" (the Mincer OLS above also uses education: in-sample RMSE"
          f" {np.sqrt(np.mean((y - ols.predict(X)) ** 2)):.4f})")
    pts = np.array([0.0, 5, 10, 20, 30, 40, 50])
    t0 = time.perf_counter()
    dg = attnreg.diagnostics.diagnose(ll1, pts[:, None], cov_type="HC3")
    t_dg = time.perf_counter() - t0
    print(f"  95% intervals, HC3 standard errors; RBC = robust bias-corrected (Calonico,"
          f" Cattaneo and Farrell), pilot local quadratic ({t_dg:.2f} s):")
    print("  experience    fit   slope     se    conventional CI          RBC CI")
    for k, e in enumerate(pts.astype(int)):
        r = dg.iloc[k]
        print(f"  {e:10d} {r.fit:7.4f} {slope1[e]:7.4f} {r.se:6.4f}  [{r.ci_low:.4f}, {r.ci_high:.4f}]"
              f"  [{r.rbc_low:.4f}, {r.rbc_high:.4f}]")

    # "Is OLS biased here?": Hsiao-Li-Racine consistent specification test of polynomial
    # experience profiles against the kernel regression (as R np's npcmstest), wild bootstrap.
    # J_n needs all n^2 pairs per bootstrap draw, so it runs on a random 2,000-row subsample.
    rng = np.random.default_rng(1988)
    sub = rng.choice(len(y), 2000, replace=False)
    xs = cps["experience"].to_numpy(float)[sub]
    ys = y[sub]
    print("\n  Is a polynomial experience profile misspecified? Hsiao-Li-Racine test (as np's"
          " npcmstest),\n  2,000-row random subsample, kernel bandwidth by cv_ls, 399 wild"
          " bootstrap draws:")
    for deg, label in ((1, "linear"), (2, "quadratic (Mincer)"), (4, "quartic (Murphy-Welch)")):
        Z = np.column_stack([xs ** k for k in range(deg + 1)])
        t0 = time.perf_counter()
        st = attnreg.diagnostics.specification_test(xs[:, None], ys, design=Z, replications=399,
                                                    random_state=1)
        print(f"  {label:24s} J_n = {st.statistic:7.2f}  bootstrap p = {st.p_value:.4f}"
              f"  (h = {st.bandwidth[0]:.2f}, {time.perf_counter() - t0:.2f} s)")

    # Mixed data: experience and education continuous, ethnicity an unordered categorical
    # kernel (Aitchison-Aitken); all three bandwidths by cv_ls (one search, exact gradients).
    Xm = pd.DataFrame({"experience": cps["experience"].astype(float),
                       "education": cps["education"].astype(float),
                       "ethnicity": cps["ethnicity"].astype("category")})
    t0 = time.perf_counter()
    llm = attnreg.LocalLinear(kernel="gaussian", bandwidth="cv_ls").fit(Xm, y)
    t_llm = time.perf_counter() - t0
    bw = llm.bandwidth_
    Qm = pd.DataFrame({"experience": grid, "education": 12.0,
                       "ethnicity": pd.Categorical(["cauc"] * grid.size,
                                                   categories=Xm["ethnicity"].cat.categories)})
    profm = llm.predict(Qm)
    print(f"\nLocal linear, mixed data: cv_ls bandwidths experience h = {bw[0]:.3f},"
          f" education h = {bw[1]:.3f}, ethnicity lambda = {bw[2]:.4f} (CV = {llm.cv_score_:.6f}"
          f" vs {cv1.objective:.6f} with experience alone); search and fit at {len(y):,} rows"
          f" in {t_llm:.1f} s, tr(L) = {llm.effective_df_:.1f}")
    q1 = pd.DataFrame({"experience": [20.0], "education": [16.0],
                       "ethnicity": pd.Categorical(["cauc"], categories=Xm["ethnicity"].cat.categories)})
    w = llm.attention_weights(q1)[0]
    g = llm.gradient(q1).iloc[0].to_numpy()  # a DataFrame labelled by column
    print(f"  white, 16 years of education, 20 years of experience: log wage"
          f" {llm.predict(q1)[0]:.4f}; marginal effects d/d experience {g[0]:.4f},"
          f" d/d education {g[1]:.4f}")
    top = np.argsort(-np.abs(w))[:5]
    tab = cps.iloc[top][["wage", "education", "experience", "ethnicity"]].copy()
    tab.insert(0, "weight", w[top])
    print("  its largest local-linear attention weights:")
    print("  " + tab.to_string(float_format=lambda v: f"{v:.5f}").replace("\n", "\n  "))
    print(f"  weights sum to {w.sum():.6f}; effective number of rows 1/sum(w^2) ="
          f" {1 / np.sum(w ** 2):,.0f}")

    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("\nmatplotlib not installed: no plot written")
        return
    Q = pd.DataFrame({"experience": grid, "experience2": grid**2, "education": 12.0, "afam": 0.0})
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(13, 4.8))
    ax.hexbin(cps["experience"], y, gridsize=45, cmap="Greys", mincnt=1, bins="log")
    ax.plot(grid, ols.predict(Q), color="C0", lw=2.5, label="OLS quadratic (education 12, cauc)")
    ax.plot(grid, prof1, color="C1", lw=2.5,
            label=f"local linear, experience only (cv_ls h = {h1:.2f})")
    ax.plot(grid, profm, color="C3", lw=2.5, ls="--",
            label="local linear, mixed data, cv_ls (education 12, cauc)")
    ax.set_xlabel("years of potential experience")
    ax.set_ylabel("log weekly wage")
    ax.set_title("CPS1988 wage-experience profile")
    ax.legend(loc="lower right", fontsize=8)
    fine = np.linspace(0, 60, 121)
    band = attnreg.diagnostics.diagnose(ll1, fine[:, None], cov_type="HC3")
    ax2.fill_between(fine, band.ci_low, band.ci_high, color="C1", alpha=0.35,
                     label="95% conventional (HC3)")
    ax2.plot(fine, band.rbc_low, color="C2", ls="--", label="95% robust bias-corrected")
    ax2.plot(fine, band.rbc_high, color="C2", ls="--")
    ax2.plot(fine, band.fit, color="C1", lw=2, label=f"local linear (cv_ls h = {h1:.2f})")
    ax2.set_xlabel("years of potential experience")
    ax2.set_ylabel("log weekly wage")
    ax2.set_title("Experience profile with pointwise 95% bands")
    ax2.legend(loc="lower center", fontsize=8)
    fig.tight_layout()
    path = out / "main_job.png"
    fig.savefig(path, dpi=120)
    print(f"\nplot written to {path}")


if __name__ == "__main__":
    main()
