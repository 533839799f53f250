"""Least-squares speed: attnreg versus numpy, scikit-learn and statsmodels, in one run.

    python bench/bench_least_squares.py [--n 1000000] [--p 50] [--alphas 50] [--m 10000]
                                        [--block 20] [--repeat 1]

1. OLS at n x p (default 10^6 x 50, plus the intercept): attnreg.OLS (pivoted QR, classical
   standard errors included), numpy.linalg.lstsq (SVD), statsmodels OLS (pinv), scikit-learn
   LinearRegression.
2. Ridge path over `alphas` penalties with leave-one-out selection: attnreg.Ridge(alpha=grid)
   (one SVD, one blocked pass for every criterion) versus scikit-learn RidgeCV (same exact LOO)
   and a loop of scikit-learn Ridge fits (coefficients only).
3. Attention weights for m test rows against all n training rows. The full m x n matrix at
   n = 10^6, m = 10^4 would be 80 GB, so both contenders stream it in blocks of `block` rows
   (nothing n x n is ever formed; each block's m_b x n result is the only large object):
   attnreg.OLS.attention_weights versus numpy D_test (D'D)^{-1} D' with the inverse precomputed.

Times are wall-clock seconds (best of --repeat); the ratio column is contender / attnreg
(> 1: attnreg is faster). Agreement of the results is checked and printed.
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np


def best_of(fn, repeat):
    best, out = np.inf, None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def table(title, rows):
    base = rows[0][1]
    print(f"\n{title}")
    print(f"  {'method':<46} {'seconds':>9} {'ratio':>7}  note")
    for name, t, note in rows:
        print(f"  {name:<46} {t:9.3f} {t / base:7.2f}  {note}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--p", type=int, default=50)
    ap.add_argument("--alphas", type=int, default=50)
    ap.add_argument("--m", type=int, default=10_000)
    ap.add_argument("--block", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--skip-slow", action="store_true", help="skip statsmodels and the Ridge loop")
    a = ap.parse_args()

    import sklearn
    import statsmodels.api as sm
    from sklearn.linear_model import LinearRegression, Ridge, RidgeCV

    import attnreg

    info = attnreg.build_info()
    print(f"attnreg {info['version']} (BLAS: {info['blas']}, OpenMP threads {info['max_threads']}), "
          f"numpy {np.__version__}, scikit-learn {sklearn.__version__}, statsmodels {sm.__version__ if hasattr(sm, '__version__') else ''}, "
          f"cores {os.cpu_count()}")
    rng = np.random.default_rng(0)
    n, p = a.n, a.p
    # Correlated regressors (an AR(1)-like loading across columns), Fortran order as attnreg's core
    # wants it (a C-ordered array would be copied once by the face; numpy's LAPACK also copies).
    Z = rng.standard_normal((n, p))
    X = np.asfortranarray(Z + 0.5 * np.roll(Z, 1, axis=1))
    del Z
    beta = np.linspace(-1, 1, p)
    y = X @ beta + 2.0 + rng.standard_normal(n)
    print(f"data: n = {n:,}, p = {p} (+ intercept), {X.nbytes / 2**20:.0f} MiB")

    # ------------------------------------------------------------------ 1. OLS
    rows = []
    t, m_ours = best_of(lambda: attnreg.OLS().fit(X, y), a.repeat)
    rows.append(("attnreg.OLS (pivoted QR + refinement + SEs)", t, f"rank {m_ours.rank_}"))
    ref = np.concatenate(([m_ours.intercept_], m_ours.coef_))
    D = np.column_stack([np.ones(n), X])
    t, res = best_of(lambda: np.linalg.lstsq(D, y, rcond=None), a.repeat)
    rows.append(("numpy.linalg.lstsq (SVD, coefficients only)", t,
                 f"max |diff| {np.abs(res[0] - ref).max():.1e}"))
    t, lr = best_of(lambda: LinearRegression().fit(X, y), a.repeat)
    rows.append(("sklearn LinearRegression (coefficients only)", t,
                 f"max |diff| {np.abs(np.concatenate(([lr.intercept_], lr.coef_)) - ref).max():.1e}"))
    if not a.skip_slow:
        t, smf = best_of(lambda: sm.OLS(y, D).fit(), a.repeat)
        rows.append(("statsmodels OLS (pinv, with SEs)", t,
                     f"max |diff| {np.abs(smf.params - ref).max():.1e}, SE rel diff "
                     f"{np.abs(smf.bse / np.concatenate(([m_ours.intercept_se_], m_ours.coef_se_)) - 1).max():.1e}"))
        del smf
    table(f"OLS, n = {n:,}, p = {p}", rows)
    del D

    # ------------------------------------------------------------------ 2. ridge path
    alphas = np.logspace(-2, 4, a.alphas) * n / 1000
    rows = []
    t, r_ours = best_of(lambda: attnreg.Ridge(alpha=alphas, criterion="loo").fit(X, y), a.repeat)
    rows.append((f"attnreg.Ridge, {a.alphas} alphas, LOO+GCV+AICc", t, f"alpha_ {r_ours.alpha_:.4g}"))
    t, rcv = best_of(lambda: RidgeCV(alphas=alphas).fit(X, y), a.repeat)
    rows.append((f"sklearn RidgeCV, {a.alphas} alphas (exact LOO)", t,
                 f"alpha_ {rcv.alpha_:.4g}, coef max |diff| {np.abs(rcv.coef_ - r_ours.coef_).max():.1e}"))
    if not a.skip_slow:
        def loop():
            return [Ridge(alpha=al).fit(X, y).coef_ for al in alphas]
        t, coefs = best_of(loop, a.repeat)
        path = r_ours.coef_path(alphas)[:, 1:]
        rows.append((f"sklearn Ridge loop, {a.alphas} fits (no selection)", t,
                     f"path max |diff| {np.abs(np.array(coefs) - path).max():.1e}"))
    table(f"Ridge path, n = {n:,}, p = {p}", rows)
    del r_ours, rcv

    # ------------------------------------------------------------------ 3. attention weights
    Xt = rng.standard_normal((a.m, p))
    nb = (a.m + a.block - 1) // a.block

    def ours():
        s = 0.0
        for b in range(nb):
            A = m_ours.attention_weights(Xt[b * a.block:(b + 1) * a.block])
            s += A[:, :1000].sum()
        return s

    Dtr = np.column_stack([np.ones(n), X])
    Omega = np.linalg.inv(Dtr.T @ Dtr)  # the reference forms (D'D)^{-1} once
    DtrT = np.ascontiguousarray(Dtr.T)  # (q, n): rows contiguous for the GEMM

    def numpy_ref():
        s = 0.0
        for b in range(nb):
            Dt = np.column_stack([np.ones(min(a.block, a.m - b * a.block)), Xt[b * a.block:(b + 1) * a.block]])
            A = (Dt @ Omega) @ DtrT
            s += A[:, :1000].sum()
        return s

    rows = []
    m_ours.attention_weights(Xt[:8])  # forms and caches Q_1 (one dorgqr, n r^2 flops)
    t, s1 = best_of(ours, a.repeat)
    rows.append((f"attnreg.OLS.attention_weights, blocks of {a.block}", t,
                 f"{2 * a.m * n * (p + 1) / t / 1e9:.1f} GFLOP/s"))
    t, s2 = best_of(numpy_ref, a.repeat)
    rows.append(("numpy D_t (D'D)^{-1} D' (inverse precomputed)", t,
                 f"checksum rel diff {abs(s1 - s2) / abs(s2):.1e}"))
    A1 = m_ours.attention_weights(Xt[:5])
    A2 = np.column_stack([np.ones(5), Xt[:5]]) @ Omega @ DtrT
    table(f"Attention weights, m = {a.m:,} test rows x n = {n:,} (streamed, "
          f"{a.block * n * 8 / 2**20:.0f} MiB per block)", rows)
    print(f"  rows sum to 1: {np.abs(A1.sum(axis=1) - 1).max():.1e}; max |A - A_numpy| "
          f"{np.abs(A1 - A2).max():.1e}; A @ y vs predict: "
          f"{np.abs(A1 @ y - m_ours.predict(Xt[:5])).max():.1e}")


if __name__ == "__main__":
    main()
