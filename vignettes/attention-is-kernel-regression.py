"""Vignette 2, "Attention is kernel regression": Pai (2025) and two expositions of attention as kernel regression made numerical.

Reproduces, with attnreg and measured differences:
  * Nadaraya-Watson with the Gaussian kernel on unit-norm queries/keys is softmax attention
    (Pai 2025; the blog post *From Kernel Regression to Self-Attention* eqs. 10-12), checked to machine precision for attnreg.NadarayaWatson,
    attnreg.attention.nw_rbf and attnreg.attention.softmax against each other and a numpy oracle;
  * the bandwidth/temperature correspondence tau = h^2, and the 1/sqrt(d) scale (the lecture notes *Attention as Kernel Regression*;
    the blog post *From Kernel Regression to Self-Attention* section 5);
  * Epanechnikov attention and its linear-attention form for tau >= 4 (Pai 2025);
  * sliding-window attention under an in-context distribution shift (the experiment of Pai 2025).
Writes vignettes/out/attention-is-kernel-regression/index.md and its PNG figures.
Run from the repository root: python3 vignettes/attention-is-kernel-regression.py [--full]
(--full: 50 replications of the shift experiment instead of 8).
"""
from __future__ import annotations

import pathlib
import sys
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import attnreg  # noqa: E402
from attnreg import attention as at  # noqa: E402
from _report import Report, vignette_args  # noqa: E402

NAME = "attention-is-kernel-regression"
EPS = 1e-12  # identities that hold in exact arithmetic: float64 round-off only


def unit_rows(A: np.ndarray) -> np.ndarray:
    return A / np.linalg.norm(A, axis=-1, keepdims=True)


def oracle_nw(Q, K, V, weight_fn, mask=None):
    """Direct float64 Nadaraya-Watson: W = weight_fn(Q, K) (masked), rows normalised, W @ V."""
    W = weight_fn(Q, K)
    if mask is not None:
        W = np.where(mask, W, 0.0)
    return (W @ V) / W.sum(axis=1, keepdims=True), W / W.sum(axis=1, keepdims=True)


def gaussian_weights(h):
    def fn(Q, K):
        D2 = (Q * Q).sum(1)[:, None] - 2 * Q @ K.T + (K * K).sum(1)[None, :]
        S = -D2 / (2 * h * h)
        return np.exp(S - S.max(axis=1, keepdims=True))  # running-max shift: exact for NW
    return fn


def epanechnikov_weights(tau):
    def fn(Q, K):
        D2 = (Q * Q).sum(1)[:, None] - 2 * Q @ K.T + (K * K).sum(1)[None, :]
        return np.maximum(0.0, 1.0 - D2 / tau)
    return fn


def rel(a, b) -> float:
    return float(np.abs(a - b).max() / np.abs(b).max())


def section_identity(rep: Report, rng) -> None:
    rep.h(2, "1. Gaussian Nadaraya-Watson on the unit sphere is softmax attention")
    rep.p(r"""
        Pai (2025), and the blog post *From Kernel Regression to Self-Attention* (eqs. 10-12): with a Gaussian kernel
        $K_h(q,k)=\exp(-\|q-k\|^2/(2h^2))$ and unit-norm queries and keys,
        $\|q-k\|^2 = 2 - 2q^\top k$, so $K_h(q,k) = e^{-1/h^2}\exp(q^\top k/h^2)$: the constant
        cancels in the Nadaraya-Watson ratio and what is left is softmax attention with
        temperature $\tau = h^2$. We check it three ways on random unit-norm data
        ($n = 1000$ keys, $m = 200$ queries, $d = 16$, three value columns): the scikit-learn
        style estimator `attnreg.NadarayaWatson` (product Gaussian kernel with the same $h$ in
        every column, which is the radial kernel above), the attention engine's
        `attnreg.attention.nw_rbf(Q, K, V, bandwidth=h)` and
        `attnreg.attention.softmax(Q, K, V, scale=1/h**2)`, each against a direct numpy formula.
        """)
    n, m, d = 1000, 200, 16
    K = unit_rows(rng.standard_normal((n, d)))
    Q = unit_rows(rng.standard_normal((m, d)))
    V = rng.standard_normal((n, 3))
    rows = []
    for h in (0.15, 0.3, 0.5, 1.0, d ** 0.25, 4.0):
        tau = h * h
        ora, Wo = oracle_nw(Q, K, V, gaussian_weights(h))
        sm = at.softmax(Q, K, V, scale=1.0 / tau)
        rb = at.nw_rbf(Q, K, V, bandwidth=h)
        nw = np.column_stack([attnreg.NadarayaWatson(bandwidth=[h] * d).fit(K, V[:, j]).predict(Q)
                              for j in range(3)])
        Wnw = attnreg.NadarayaWatson(bandwidth=[h] * d).fit(K, V[:, 0]).attention_weights(Q)
        Wsm = at.attention_weights(Q, K, method="softmax", scale=1.0 / tau)
        wrong = at.softmax(Q, K, V, scale=1.0 / h)  # the tempting but wrong tau = h
        rows.append(dict(h=h, tau=tau,
                         softmax_vs_oracle=np.abs(sm - ora).max(),
                         nw_rbf_vs_softmax=np.abs(rb - sm).max(),
                         NW_vs_softmax=np.abs(nw - sm).max(),
                         weights_NW_vs_softmax=np.abs(Wnw - Wsm).max(),
                         rel_NW_vs_softmax=rel(nw, sm),
                         tau_eq_h_error=np.abs(wrong - sm).max(),
                         n_eff=float(np.mean(1.0 / (Wo ** 2).sum(1)))))
    tab = pd.DataFrame(rows)
    rep.p("""
        Columns: largest absolute difference over all outputs (`*_vs_*`), largest relative
        difference NW vs softmax (`rel_`, divided by the largest |output|), the error one makes
        by taking $\\tau = h$ instead of $h^2$ (`tau_eq_h_error`, not an identity: it should be
        large), and the effective number of keys each query averages over,
        $n_{\\mathrm{eff}} = 1/\\sum_j a_j^2$, averaged over queries.
        """)
    rep.table(tab, floatfmt="{:.3g}")
    for col in ("softmax_vs_oracle", "nw_rbf_vs_softmax", "NW_vs_softmax",
                "weights_NW_vs_softmax"):
        rep.check(f"{col}, worst over h", tab[col].max(), EPS)
    rep.check("NW vs softmax, worst over h", tab["rel_NW_vs_softmax"].max(), EPS,
              kind="max rel diff")
    rep.p(f"""
        Every route agrees to round-off ({tab[['softmax_vs_oracle', 'nw_rbf_vs_softmax',
        'NW_vs_softmax']].to_numpy().max():.1e} at worst), while confusing $\\tau$ with $h$ moves
        the outputs by up to {tab['tau_eq_h_error'].max():.2f}. The bandwidth is the whole
        story: from $h = 0.15$ to $h = 4$ the effective number of attended keys goes from
        {tab['n_eff'].iloc[0]:.1f} to {tab['n_eff'].iloc[-1]:.0f} of {n}.
        """)

    rep.h(3, "Without unit norms the identity fails, and how to restore it")
    rep.p(r"""
        The blog post *From Kernel Regression to Self-Attention* (eq. 10) expands $-\|q-k\|^2/(2\sigma^2)$ into a query term (cancels), the dot
        product and a key term $-\|k\|^2/(2\sigma^2)$, which only cancels when all keys have the
        same norm. With Gaussian (not normalised) keys the two estimators differ; appending a
        coordinate to queries ($1$) and keys ($-\|k\|^2/2$) puts the key term back into the dot
        product and restores the identity for any norms.
        """)
    Kr = rng.standard_normal((n, d)) * rng.uniform(0.5, 1.5, (n, 1))
    Qr = rng.standard_normal((m, d))
    h = 2.0
    rb = at.nw_rbf(Qr, Kr, V, bandwidth=h)
    sm = at.softmax(Qr, Kr, V, scale=1 / h ** 2)
    Qa = np.column_stack([Qr, np.ones(m)])
    Ka = np.column_stack([Kr, -0.5 * (Kr * Kr).sum(1)])
    sma = at.softmax(Qa, Ka, V, scale=1 / h ** 2)
    gap = np.abs(rb - sm).max()
    rep.output(f"keys with norms {np.linalg.norm(Kr, axis=1).min():.2f}..."
               f"{np.linalg.norm(Kr, axis=1).max():.2f}, h = {h}:\n"
               f"  max |nw_rbf - softmax(scale=1/h^2)|              = {gap:.3f}   (not an identity)\n"
               f"  max |nw_rbf - softmax on [q,1], [k,-|k|^2/2]|      = "
               f"{np.abs(rb - sma).max():.2e}")
    if gap < 1e-3:
        raise AssertionError("non-unit-norm keys should break the identity")
    rep.check("Gaussian NW = softmax with the key-norm coordinate", np.abs(rb - sma).max(), 1e-10)
    rep.p("""
        The tolerance here is looser than machine epsilon on purpose: the augmented scores are
        differences of numbers of size $\\|k\\|^2/(2h^2) \\approx 5$, so the round-off is relative
        to those, not to the result.
        """)

    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    hs = np.geomspace(0.08, 6, 40)
    for dd, col in ((4, "C0"), (16, "C1"), (64, "C2")):
        Kd = unit_rows(rng.standard_normal((n, dd)))
        Qd = unit_rows(rng.standard_normal((m, dd)))
        ne = [np.mean(1 / (at.attention_weights(Qd, Kd, method="softmax", scale=1 / x ** 2) ** 2)
                      .sum(1)) for x in hs]
        ax.loglog(hs, ne, color=col, label=f"d = {dd}")
        ax.axvline(dd ** 0.25, color=col, ls=":", lw=1)
    ax.set_xlabel("bandwidth h  (temperature tau = h^2)")
    ax.set_ylabel("effective number of keys")
    ax.set_title("Softmax attention = Gaussian NW: the bandwidth sets the averaging window",
                 fontsize=9)
    ax.legend(fontsize=8)
    rep.figure(fig, "bandwidth.png",
               f"Effective number of keys 1/sum a_j^2 per query against h, n = {n} unit-norm "
               "keys. Dotted: the transformer default h = d^(1/4) (scale 1/sqrt(d)).")


def section_scale(rep: Report, rng) -> None:
    rep.h(2, "2. The 1/sqrt(d) scale as a bandwidth")
    rep.p(r"""
        The lecture notes *Attention as Kernel Regression* call $1/\sqrt{d}$ an inverse bandwidth; the blog post *From Kernel Regression to Self-Attention* (section 5) derives it: with
        independent unit-variance coordinates, $\mathrm{Var}(q^\top k) = d$, so dividing by
        $\sqrt d$ keeps the scores at unit variance in every dimension. In the kernel language
        that is $\tau = \sqrt d$, $h = d^{1/4}$, which is the default bandwidth of
        `attnreg.attention.nw_rbf` and the default scale of `softmax`; we check the two defaults
        agree on unit-norm inputs, then measure the variance claim.
        """)
    for d in (8, 64):
        K = unit_rows(rng.standard_normal((500, d)))
        Q = unit_rows(rng.standard_normal((100, d)))
        V = rng.standard_normal((500, 2))
        rep.check(f"d = {d}: nw_rbf() default vs softmax() default",
                  np.abs(at.nw_rbf(Q, K, V) - at.softmax(Q, K, V)).max(), EPS)
    N, chunk = 50_000, 5_000
    rows = []
    for d in (4, 16, 64, 256, 1024):
        s, su = [], []
        for _ in range(N // chunk):  # in chunks: a (N, 1024) pair of arrays would be 800 MB
            q = rng.standard_normal((chunk, d))
            k = rng.standard_normal((chunk, d))
            s.append((q * k).sum(1))
            su.append((unit_rows(q) * unit_rows(k)).sum(1))
        s, su = np.concatenate(s), np.concatenate(su)
        # sharpness of softmax(q'k / sqrt(d)) over 1000 keys: effective number of keys
        Kd, Qd = rng.standard_normal((1000, d)), rng.standard_normal((100, d))
        ne = np.mean(1 / (at.attention_weights(Qd, Kd, method="softmax") ** 2).sum(1))
        neu = np.mean(1 / (at.attention_weights(unit_rows(Qd), unit_rows(Kd), method="softmax")
                           ** 2).sum(1))
        rows.append(dict(d=d, var_raw=s.var(), var_raw_over_d=s.var() / d,
                         var_scaled=(s / np.sqrt(d)).var(),
                         var_unitnorm_scaled=(su / np.sqrt(d)).var(),
                         n_eff_scaled=ne, n_eff_unitnorm_scaled=neu))
    tab = pd.DataFrame(rows)
    rep.table(tab, floatfmt="{:.4g}")
    rep.check("Var(q'k)/d - 1 (blog post: exactly 1), worst d, N = 50,000 pairs",
              np.abs(tab["var_raw_over_d"] - 1).max(), 0.03, kind="abs deviation")
    rep.p(f"""
        The variance of the raw score grows like $d$ (ratio to $d$ within
        {np.abs(tab['var_raw_over_d'] - 1).max():.3f} of 1, sampling error about
        $\\sqrt{{2/N}} = {np.sqrt(2 / N):.3f}$), and after scaling it is 1 in every dimension, as
        the blog post *From Kernel Regression to Self-Attention* says. **Where the sources disagree:** Pai (2025) assumes QK-norm (unit-norm queries
        and keys); there $q^\\top k \\in [-1, 1]$ has variance $1/d$, and the $1/\\sqrt d$ scale
        leaves a score variance of $1/d^2$ (column `var_unitnorm_scaled`: {tab['var_unitnorm_scaled'].iloc[-1]:.1e}
        at $d = 1024$). In kernel terms $h = d^{{1/4}}$ is then far wider than the sphere
        (distances are at most 2), so the attention is nearly uniform: the figure above shows
        the default (dotted lines) sitting on the flat, oversmoothed end of each curve. This is
        why QK-norm models learn or fix a larger scale; the unit-variance argument of the lecture
        notes and the blog post and the unit-norm argument of Pai (2025) call for different bandwidths.

        **Where we differ from the lecture notes:** it also says that "the bandwidth parameter is
        $1/\\sqrt{{d_k}}$: larger $d_k$ means narrower kernel, sharper attention weights". The last
        two columns measure the sharpness of `softmax(Q K'/sqrt(d))` as the effective number of
        keys out of 1000 (default scale, 100 queries). With unit-variance coordinates it stays
        between {tab['n_eff_scaled'].min():.0f} and {tab['n_eff_scaled'].max():.0f} with no trend
        towards sharper weights as $d$ grows: the
        scale exactly offsets the growth of $q^\\top k$, which is its purpose (the blog post *From Kernel Regression to Self-Attention*). With
        unit-norm inputs it grows to {tab['n_eff_unitnorm_scaled'].iloc[-1]:.0f}, i.e. *wider*.
        The kernel $\\exp(q^\\top k/\\sqrt d)$ has temperature $\\tau = \\sqrt d$, a bandwidth
        $h = d^{{1/4}}$ that grows with $d$; the lecture notes' own "inverse bandwidth" reading (its
        next section) is the consistent one.
        """)


def section_epanechnikov(rep: Report, rng) -> None:
    rep.h(2, "3. Epanechnikov attention and its linear-attention form")
    rep.p(r"""
        Pai (2025): replacing the Gaussian by the Epanechnikov profile,
        $K_\tau(q,k) = \max(0, 1 - \|q-k\|^2/\tau)$, which on the unit sphere is
        $\max(0, 1 - 2/\tau + (2/\tau) q^\top k)$. For $\tau \ge 4$ the bracket is never
        negative, the max disappears and $K_\tau(q,k) = \phi(q)^\top\phi(k)$ with
        $\phi(x) = [\sqrt{1-2/\tau}, \sqrt{2/\tau}\,x]$: Nadaraya-Watson becomes linear attention,
        computable by the recurrence $S_t = S_{t-1} + \phi(k_t)v_t^\top$ in $O(n)$.
        `attnreg.attention.linear(Q, K, V, feature_map="epanechnikov", tau=tau)` implements the
        feature map; we compare it with the clipped radial-kernel NW computed directly.
        """)
    n, m, d = 800, 150, 8
    K = unit_rows(rng.standard_normal((n, d)))
    Q = unit_rows(rng.standard_normal((m, d)))
    V = rng.standard_normal((n, 4))
    causal = np.tril(np.ones((n, n), dtype=bool))
    for tau in (4.0, 6.0, 20.0):
        ora, Wo = oracle_nw(Q, K, V, epanechnikov_weights(tau))
        rep.check(f"tau = {tau:g}: linear(epanechnikov) vs clipped Epanechnikov NW",
                  np.abs(at.linear(Q, K, V, feature_map="epanechnikov", tau=tau) - ora).max(), EPS)
        Wl = at.attention_weights(Q, K, method="linear", feature_map="epanechnikov", tau=tau)
        rep.check(f"tau = {tau:g}: weights", np.abs(Wl - Wo).max(), EPS)
        orac, _ = oracle_nw(K, K, V, epanechnikov_weights(tau), mask=causal)
        rep.check(f"tau = {tau:g}: causal recurrence vs causal NW",
                  np.abs(at.linear(K, K, V, feature_map="epanechnikov", tau=tau, causal=True)
                         - orac).max(), EPS)
    rows = []
    for tau in (2.0, 2.5, 3.0, 4.0):
        ora, Wo = oracle_nw(Q, K, V, epanechnikov_weights(tau))
        try:
            at.linear(Q, K, V, feature_map="epanechnikov", tau=tau)
            refused = "no"
        except attnreg.NumericalError:
            refused = "yes"
        # the unclipped linear form, numerator and denominator separately (normalize=False)
        num = at.linear(Q, K, V, feature_map="epanechnikov", tau=tau, normalize=False)
        den = at.linear(Q, K, np.ones((n, 1)), feature_map="epanechnikov", tau=tau,
                        normalize=False)
        lin = num / den
        raw = 1 - ((Q[:, None, :] - K[None]) ** 2).sum(-1) / tau
        rows.append(dict(tau=tau, share_of_pairs_clipped=float((raw < 0).mean()),
                         linear_vs_clipped_NW=np.abs(lin - ora).max(),
                         smallest_kernel_value=float(raw.min()),
                         negative_normaliser_queries=int((den <= 0).sum()),
                         attnreg_refuses=refused))
    tab = pd.DataFrame(rows)
    rep.p("""
        Below $\\tau = 4$ some pairs fall outside the support, the clipped kernel is no longer
        $\\phi(q)^\\top\\phi(k)$, and the unclipped linear form (computed here as numerator over
        denominator with `normalize=False`) is a different estimator with negative "weights".
        attnreg's normalised `linear` refuses, with a `NumericalError`, any query whose
        normaliser is not positive, and refuses $\\tau < 2$ outright ($\\sqrt{1 - 2/\\tau}$ is not
        real):
        """)
    rep.table(tab, floatfmt="{:.3g}")
    rep.p(f"""
        The price of linearity is the property Pai (2025) advertises first: for $\\tau \\ge 4$ the
        support covers the whole sphere ($\\|q-k\\|^2 \\le 4 \\le \\tau$), so no key is ever
        ignored; the kernel value at $\\tau = 4$ only reaches 0 for an exactly antipodal key
        (smallest value here {tab['smallest_kernel_value'].iloc[-1]:.3f}). Sparse, compactly
        supported Epanechnikov attention needs $\\tau < 4$ and then has no linear form.
        """)

    rep.h(3, "Product versus radial Epanechnikov")
    rep.p(r"""
        `attnreg.NadarayaWatson(kernel="epanechnikov")` is the econometrician's *product* kernel
        $\prod_j \tfrac34(1 - u_j^2)_+$ with $u_j = (x_j - x_{ij})/h$. In one dimension it is the
        radial kernel of Pai (2025) with $\tau = h^2$; in several dimensions it is not.
        """)
    x = rng.uniform(-2, 2, 300)
    y = np.sin(2 * x) + 0.1 * rng.standard_normal(300)
    xq = np.linspace(-1.9, 1.9, 50)
    h = 0.6
    nw1 = attnreg.NadarayaWatson(kernel="epanechnikov", bandwidth=[h]).fit(x[:, None], y)
    ora1, _ = oracle_nw(xq[:, None], x[:, None], y[:, None], epanechnikov_weights(h * h))
    rep.check("d = 1: NadarayaWatson(epanechnikov, h) vs radial Epanechnikov, tau = h^2",
              np.abs(nw1.predict(xq[:, None]) - ora1[:, 0]).max(), EPS)
    X2 = rng.uniform(-1, 1, (400, 2))
    y2 = np.sin(3 * X2[:, 0]) * X2[:, 1]
    Xq2 = rng.uniform(-0.8, 0.8, (50, 2))
    h2 = 0.7
    nw2 = attnreg.NadarayaWatson(kernel="epanechnikov", bandwidth=[h2, h2]).fit(X2, y2)
    ora2, _ = oracle_nw(Xq2, X2, y2[:, None], epanechnikov_weights(h2 * h2))
    rep.output(f"d = 2, h = {h2}: max |product - radial Epanechnikov NW| = "
               f"{np.abs(nw2.predict(Xq2) - ora2[:, 0]).max():.3f} (different estimators)")

    rep.h(3, "What linearity buys")
    n_big, dv = 16_384, 16
    Kb = unit_rows(rng.standard_normal((n_big, 16)))
    Vb = rng.standard_normal((n_big, dv))
    t0 = time.perf_counter()
    at.linear(Kb, Kb, Vb, feature_map="epanechnikov", tau=4.0, causal=True)
    t_lin = time.perf_counter() - t0
    t0 = time.perf_counter()
    at.softmax(Kb, Kb, Vb, scale=0.5, causal=True)
    t_sm = time.perf_counter() - t0
    rep.output(f"causal self-attention, n = {n_big:,}, d = 16, d_v = {dv}, float64, "
               f"{attnreg.build_info().get('max_threads', '?')} OpenMP threads:\n"
               f"  Epanechnikov, linear recurrence (O(n d d_v)): {t_lin * 1e3:8.1f} ms\n"
               f"  softmax / Gaussian NW (O(n^2 d)):            {t_sm * 1e3:8.1f} ms")
    rep.p("These wall times are from the machine that rendered this page; only their ratio "
          "(which grows linearly in n) carries over.")

    fig, ax = plt.subplots(figsize=(5.5, 3.4))
    c = np.linspace(-1, 1, 400)
    for tau, ls in ((0.25, "-"), (1.0, "--")):
        ax.plot(c, np.exp((c - 1) / tau), "C0", ls=ls, label=f"Gaussian, tau = {tau:g}")
    for tau, ls in ((1.0, "-"), (2.0, "--"), (4.0, ":"), (8.0, "-.")):
        ax.plot(c, np.maximum(0, 1 - (2 - 2 * c) / tau), "C3", ls=ls,
                label=f"Epanechnikov, tau = {tau:g}")
    ax.set_xlabel("cosine similarity q'k (unit-norm q, k)")
    ax.set_ylabel("kernel weight K(q, k)")
    ax.legend(fontsize=7)
    ax.set_title("Epanechnikov attention is linear in q'k (so linear attention) iff tau >= 4",
                 fontsize=9)
    rep.figure(fig, "kernels.png",
               "Kernel profiles on the unit sphere. The Epanechnikov profile is a straight line "
               "in q'k, clipped at 0 when tau < 4; from tau = 4 on it never clips.")


def shift_run(rng, T, shift_at, windows, h, noise, shifted: bool):
    """One in-context regression stream on the sphere S^2; strict-causal predictions."""
    X = unit_rows(rng.standard_normal((T, 3)))
    f1 = np.sin(3 * X[:, 0]) + 2 * X[:, 1] * X[:, 2]
    f2 = np.cos(3 * X[:, 1]) - 1.5 * X[:, 0] + X[:, 2] ** 2
    f = f1.copy()
    if shifted:
        f[shift_at:] = f2[shift_at:]
    y = f + noise * rng.standard_normal(T)
    # query t (t = 1..T-1) may use tokens 0..t-1: queries X[1:], keys X[:-1], causal mask j <= i
    Q, K, V = X[1:], X[:-1], y[:-1, None]
    err = {}
    for w in windows:
        pred = at.softmax(Q, K, V, scale=1 / h ** 2, causal=True, window=w)[:, 0]
        err[w] = (pred - f[1:]) ** 2
    return err, (Q, K, V)


def section_shift(rep: Report, rng, reps: int) -> None:
    rep.h(2, "4. Sliding windows under an in-context distribution shift")
    T, shift_at, h, noise = 3000, 1500, 0.25, 0.1
    windows = (None, 1000, 300, 100)
    rep.p(f"""
        Pai (2025) shows (as pictures, without numbers) Gaussian NW fitting a surface in context
        while the key/value relation shifts: old pairs stay in the average and bias the fit,
        and a sliding window recovers at the price of a noisier fit. We make it a measurement.
        A stream of $T = {T}$ tokens: keys uniform on the unit sphere $S^2$, values
        $y_t = f(k_t) + \\varepsilon_t$ with $\\varepsilon_t \\sim N(0, {noise}^2)$, where
        $f = f_1(x) = \\sin 3x_1 + 2x_2x_3$ before token {shift_at} and
        $f_2(x) = \\cos 3x_2 - 1.5x_1 + x_3^2$ from it on (Pai 2025 uses a spline surface it does
        not specify; ours is smooth and known, so we can score against the truth). Each token is
        predicted from the tokens before it by causal softmax attention
        (`attnreg.attention.softmax(..., scale=1/h**2, causal=True, window=w)`, which on the
        sphere is Gaussian NW with $h = {h}$, section 1), with the full history or the last $w$
        tokens. Score: squared error against $f(k_t)$, averaged over {reps} independent streams
        ({'full run' if rep.full else 'CI run; `--full` uses 50'}).
        """)
    # one exact check of the windowed causal engine against the direct formula
    err, (Q, K, V) = shift_run(np.random.default_rng(12345), 600, 300, (100,), h, noise, True)
    n = len(K)
    i, j = np.indices((n, n))
    mask = (j <= i) & (j > i - 100)
    ora, _ = oracle_nw(Q, K, V, gaussian_weights(h), mask=mask)
    rep.check("causal window = 100: softmax engine vs direct Gaussian NW",
              np.abs(at.softmax(Q, K, V, scale=1 / h ** 2, causal=True, window=100) - ora).max(),
              EPS)
    rep.check("causal window = 100: nw_rbf engine vs direct Gaussian NW",
              np.abs(at.nw_rbf(Q, K, V, bandwidth=h, causal=True, window=100) - ora).max(), EPS)

    curves = {s: {w: [] for w in windows} for s in (False, True)}
    for r in range(reps):
        for shifted in (False, True):
            e, _ = shift_run(np.random.default_rng(1000 + r), T, shift_at, windows, h, noise,
                             shifted)
            for w in windows:
                curves[shifted][w].append(e[w])
    t = np.arange(1, T)
    spans = {"stationary, t in [2500, 3000)": (False, 2500, 3000),
             "shift: before, t in [1000, 1500)": (True, 1000, 1500),
             "shift: just after, t in [1500, 1750)": (True, 1500, 1750),
             "shift: late, t in [2500, 3000)": (True, 2500, 3000)}
    rows = []
    for label, (s, a, b) in spans.items():
        row = {"period": label}
        sel = (t >= a) & (t < b)
        for w in windows:
            per_rep = np.array([c[sel].mean() for c in curves[s][w]])
            se = per_rep.std(ddof=1) / np.sqrt(reps) if reps > 1 else np.nan
            row["full history" if w is None else f"window {w}"] = \
                f"{per_rep.mean():.4f} ± {se:.4f}"
        rows.append(row)
    tab = pd.DataFrame(rows)
    rep.p("Mean squared error against the true surface (mean ± standard error over streams):")
    rep.table(tab)

    def m(s, w, a, b):
        sel = (t >= a) & (t < b)
        return float(np.mean([c[sel].mean() for c in curves[s][w]]))
    full_late, win_late = m(True, None, 2500, 3000), m(True, 300, 2500, 3000)
    stat_full, stat_100 = m(False, None, 2500, 3000), m(False, 100, 2500, 3000)
    rep.p(f"""
        Both of Pai's (2025) claims hold here. Under the shift the full-history attention keeps
        averaging in values of the old surface: 1000 to 1500 tokens after the shift its error
        is still {full_late:.3f}, against {win_late:.3f} with a 300-token window
        ({full_late / win_late:.1f} times larger). Without a shift the window costs accuracy,
        because fewer neighbours are averaged: {stat_100:.4f} with $w = 100$ against
        {stat_full:.4f} with the full history. The window length is a second bandwidth, in
        time rather than in key space, with the same bias-variance trade-off.
        """)
    if not (full_late > win_late and stat_100 > stat_full):
        raise AssertionError("the qualitative claims of Pai (2025) did not reproduce")

    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4), sharey=True)
    kern = np.ones(50) / 50
    for ax, s, title in ((axes[0], False, "no shift"), (axes[1], True, "shift at t = 1500")):
        for w, col in zip(windows, ("k", "C0", "C1", "C3")):
            c = np.mean(curves[s][w], axis=0)
            ax.semilogy(t[49:], np.convolve(c, kern, mode="valid"), color=col, lw=1,
                        label="full history" if w is None else f"window {w}")
        if s:
            ax.axvline(shift_at, color="grey", ls=":")
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("token t")
    axes[0].set_ylabel("squared error vs truth (50-token mean)")
    axes[0].legend(fontsize=7)
    rep.figure(fig, "shift.png",
               f"Causal Gaussian-NW (softmax) attention on S^2, h = {h}, mean of {reps} streams. "
               "Left: a stationary stream (the window only adds variance). Right: the surface "
               "changes at t = 1500; the full history recovers slowly, short windows fast.")


def main() -> None:
    args = vignette_args(__doc__)
    rep = Report(NAME, args.out, full=args.full,
                 title="Attention is kernel regression: softmax, bandwidth, Epanechnikov, windows")
    rep.p(f"""
        **What this reproduces.** The claims of D. Pai, "Regression is All You Need"
        (2025), the lecture notes "Attention as Kernel Regression" and the blog post
        ("From Kernel Regression to Self-Attention: A Line-by-Line Derivation", blog), each turned
        into a number computed with attnreg {attnreg.__version__}. Every identity below is
        checked in this run with its measured maximum absolute (or relative) difference printed
        next to it; a difference above its tolerance stops the rendering. **Where we differ
        from the sources:** the sources state the identities algebraically and show the
        distribution-shift experiment as pictures only, so the experiment in section 4 is our
        own design with stated settings; section 2 reports a tension between Pai (2025) and
        the two expositions about the right scale under unit-norm keys.
        """)
    rng = np.random.default_rng(20250828)
    section_identity(rep, rng)
    section_scale(rep, rng)
    section_epanechnikov(rep, rng)
    section_shift(rep, rng, reps=50 if args.full else 8)
    rep.save()


if __name__ == "__main__":
    main()
