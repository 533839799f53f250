"""attnreg main job: the wage-experience profile on the 1988 Current Population Survey.

Fits a Mincer wage equation by OLS on the bundled CPS1988 data (28,155 men), prints the
coefficients with standard errors, shows which training rows one prediction attends to (OLS
as attention, seed 004), and writes a plot of the fitted profile. Run from the repository
root: `bash .ci/main-job.sh` (sets up first) or `python3 vignettes/main_job.py`.
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
    print(ols.summary().to_string(float_format=lambda v: f"{v:11.5f}"))
    print(f"residual sd {np.sqrt(ols.sigma2_):.4f}, rank {ols.rank_}")

    # One prediction as attention over the 28,155 training rows (seed 004, eq. 8).
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

    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("\nmatplotlib not installed: no plot written")
        return
    grid = np.arange(0, 61, dtype=float)
    Q = pd.DataFrame({"experience": grid, "experience2": grid**2, "education": 12.0, "afam": 0.0})
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.hexbin(cps["experience"], y, gridsize=45, cmap="Greys", mincnt=1, bins="log")
    ax.plot(grid, ols.predict(Q), color="C0", lw=2.5, label="OLS quadratic (education 12)")
    ax.set_xlabel("years of potential experience")
    ax.set_ylabel("log weekly wage")
    ax.set_title("CPS1988 wage-experience profile")
    ax.legend(loc="lower right")
    fig.tight_layout()
    path = out / "main_job.png"
    fig.savefig(path, dpi=120)
    print(f"\nplot written to {path}")


if __name__ == "__main__":
    main()
