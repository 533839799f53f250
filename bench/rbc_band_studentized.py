"""Which sup-t critical value makes the uniform RBC band cover when the robust standard errors
are noisy? Candidates compared on the design of bench/rbc_montecarlo.py (x ~ U[-1, 1]^d,
y = m(x) + 0.3 N(0, 1), one local linear fit per replication at imse_dpi over the grid of 3^3
(d = 3) or 5^2 (d = 2) points in [-0.8, 0.8]^d, RBC pilot rho = 1):

  gauss   Gaussian sup-t of the estimated covariance Sigma (max_k |Z_k| / sqrt(Sigma_kk), Z ~
          N(0, Sigma)): what diagnose did (binsreg and lpdensity build theirs so).
  stud    studentized multiplier bootstrap: with F = (L - B) diag(sqrt(omega)) (the terms whose
          squares sum to se_bc^2) and v_i iid N(0, 1), max_k |sum_i F_ki v_i| /
          sqrt(sum_i F_ki^2 v_i^2) (Chernozhukov, Chetverikov and Kato 2014, Ann. Statist.
          42(5); the self-normalisation reproduces the noise of the estimated se).
  indep   the same ratio with the denominator's multipliers u_i drawn independently of the
          numerator's: max_k |sum_i F_ki v_i| / sqrt(sum_i F_ki^2 u_i^2).
  satt    Gaussian sup-t level turned into per-point t critical values with Bell-McCaffrey
          (Satterthwaite) degrees of freedom of se_bc^2 under a homoskedastic working model with
          the projected residuals M = I - H (Imbens and Kolesar 2016, REStat 98(4)).
  wild    full wild bootstrap-t (n <= 2,000): y* = fitted + e_i v_i (Rademacher), residuals
          re-projected, se* recomputed with the same cov_type, t* = (L-B)(y* - fitted) / se*.

    python3 bench/rbc_band_studentized.py [--d 3] [--n 500] [--kernel gaussian] [--truth curved]
        [--reps 200] [--cov_type HC3] [--draws 2000] [--wild-draws 499]

Prints coverage of each candidate's uniform RBC band (binomial se sqrt(p (1 - p) / R)).

    python3 bench/rbc_band_studentized.py --core [--d 3] [--n 500] ... [--cov_type HC3]

runs diagnose(uniform=True) itself with uniform_method "wild_t" and "gaussian" (2,000 draws) on
the same design: the core's implementation against the prototype's numbers.
"""
import argparse
import itertools
import time

import numpy as np
from scipy import stats

import attnreg
from attnreg import LocalLinear, _core
from attnreg.bandwidth import imse_dpi

TRUTH = {
    "smooth": lambda X: np.sin(X[:, 0]) + 0.5 * X[:, 1] ** 2 + (0.3 * X[:, 2] if X.shape[1] > 2 else 0),
    "curved": lambda X: np.sin(3 * X[:, 0]) + np.exp(-4 * X[:, 1] ** 2) + (X[:, 2] ** 2 if X.shape[1] > 2 else 0),
}


def grid(d):
    k = 5 if d == 2 else 3
    return np.array(list(itertools.product(np.linspace(-0.8, 0.8, k), repeat=d)))


def omega_of(cov_type, e, lev, n, trL):
    if cov_type == "HC0":
        return e ** 2
    if cov_type == "HC1":
        return e ** 2 * n / (n - trL)
    if cov_type == "HC2":
        return e ** 2 / (1 - lev)
    if cov_type == "HC3":
        return e ** 2 / (1 - lev) ** 2
    raise ValueError(cov_type)


def quant(v, level):
    v = np.sort(v)
    return v[int(np.ceil(level * len(v))) - 1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--d", type=int, default=3)
    ap.add_argument("--n", type=int, default=500)
    ap.add_argument("--kernel", default="gaussian")
    ap.add_argument("--truth", default="curved")
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--cov_type", default="HC3")
    ap.add_argument("--draws", type=int, default=2000)
    ap.add_argument("--wild-draws", type=int, default=499)
    ap.add_argument("--core", action="store_true")
    a = ap.parse_args()
    if a.core:
        return core_run(a)
    d, n, level = a.d, a.n, 0.95
    G = grid(d)
    m = TRUTH[a.truth]
    tg = m(G)
    rng = np.random.default_rng([d, n, len(a.kernel), len(a.truth), 4242])
    cover = {k: [] for k in ("gauss", "stud", "indep", "satt", "satt0", "wild")}
    dfs, dfs0 = [], []
    crits = {k: [] for k in ("gauss", "stud", "indep")}
    fails = 0
    t0 = time.process_time()
    for _ in range(a.reps):
        X = rng.uniform(-1, 1, size=(n, d))
        y = m(X) + 0.3 * rng.standard_normal(n)
        try:
            hi = imse_dpi(X, y, G, kernel=a.kernel)
            est = LocalLinear(kernel=a.kernel, bandwidth=hi).fit(X, y)
            model = est._model
            L = est.attention_weights(G)
            B = _core.bias_weights_multivariate(model, G)
            H = est.attention_weights(X)
        except (attnreg.NumericalError, ValueError):
            fails += 1
            continue
        W = L - B
        fitted = H @ y
        e = y - fitted
        lev = np.diag(H)
        trL = lev.sum()
        if a.cov_type == "nn":
            r = attnreg.diagnostics.diagnose(est, G, cov_type="nn")
            raise SystemExit("nn: use the core implementation")
        om = omega_of(a.cov_type, e, lev, n, trL)
        F = W * np.sqrt(om)
        se = np.sqrt((F ** 2).sum(1))
        fbc = W @ y
        t = np.abs(fbc - tg) / se
        # gauss
        Sigma = F @ F.T
        cg = _core.sup_t_critical_value(Sigma, level, a.draws, int(rng.integers(2 ** 31)))
        cover["gauss"].append(t.max() <= cg)
        crits["gauss"].append(cg)
        # studentized multiplier
        V = rng.standard_normal((n, a.draws))
        num = F @ V
        den = np.sqrt((F ** 2) @ (V ** 2))
        cs = quant(np.abs(num / den).max(0), level)
        cover["stud"].append(t.max() <= cs)
        crits["stud"].append(cs)
        # studentized with an independent denominator: the numerator's multipliers v and the
        # denominator's u drawn independently (a multivariate t whose scale is the noise of se)
        U = rng.standard_normal((n, a.draws))
        ci = quant(np.abs(num / np.sqrt((F ** 2) @ (U ** 2))).max(0), level)
        cover["indep"].append(t.max() <= ci)
        crits["indep"].append(ci)
        # Satterthwaite / Bell-McCaffrey dof per point, homoskedastic working model
        c = om / np.maximum(e ** 2, 1e-300)
        D = (W ** 2) * c  # m x n: se^2 = sum_i D_ki e_i^2
        p = 2 * stats.norm.sf(cg)
        if n <= 500:
            # Bell-McCaffrey: e = M eps, se^2 = eps' M' D_k M eps
            M = np.eye(n) - H
            tr1 = D @ (M ** 2).sum(1)
            M2 = (M @ M.T) ** 2
            tr2 = np.einsum("ki,ij,kj->k", D, M2, D)
            df = tr1 ** 2 / tr2
            cover["satt"].append(np.all(t <= stats.t.isf(p / 2, df)))
            dfs.append(df)
        # the same without the residuals' cross-correlations: e_i independent, var (1 - L_ii)
        D0 = D * (1 - lev)
        df0 = D0.sum(1) ** 2 / (D0 ** 2).sum(1)
        cover["satt0"].append(np.all(t <= stats.t.isf(p / 2, df0)))
        dfs0.append(df0)
        # full wild bootstrap-t
        if n <= 2000 and a.wild_draws > 0:
            Vw = rng.choice([-1.0, 1.0], size=(n, a.wild_draws))
            Es = e[:, None] * Vw           # y* - fitted
            num = W @ Es
            Rs = (fitted[:, None] + Es) - H @ (fitted[:, None] + Es)  # residuals of y*
            oms = omega_of(a.cov_type, Rs, lev[:, None], n, trL)
            ses = np.sqrt((W ** 2) @ oms)
            cw = quant(np.abs(num / ses).max(0), level)
            cover["wild"].append(t.max() <= cw)
    R = len(cover["gauss"])
    print(f"d={d} {a.kernel} n={n} {a.truth} cov_type={a.cov_type}: R={R} (failed {fails}), "
          f"CPU {time.process_time() - t0:.0f} s")
    for k, v in cover.items():
        if not v:
            continue
        p = np.mean(v)
        extra = ""
        if k in crits:
            extra = f", mean crit {np.mean(crits[k]):.3f}"
        if k == "satt":
            extra = f", median df {np.median(dfs):.1f}"
        if k == "satt0":
            extra = f", median df {np.median(dfs0):.1f}"
        print(f"  {k:6s} uniform RBC coverage {p:.3f} (se {np.sqrt(p * (1 - p) / len(v)):.3f}){extra}")


def core_run(a):
    from attnreg.diagnostics import diagnose
    d, n = a.d, a.n
    G = grid(d)
    m = TRUTH[a.truth]
    tg = m(G)
    rng = np.random.default_rng([d, n, len(a.kernel), len(a.truth), 777])
    hit = {"wild_t": [], "gaussian": []}
    crit = {"wild_t": [], "gaussian": []}
    fails = 0
    t0 = time.process_time()
    for _ in range(a.reps):
        X = rng.uniform(-1, 1, size=(n, d))
        y = m(X) + 0.3 * rng.standard_normal(n)
        seed = int(rng.integers(2 ** 31))
        try:
            hi = imse_dpi(X, y, G, kernel=a.kernel)
            est = LocalLinear(kernel=a.kernel, bandwidth=hi).fit(X, y)
            res = {k: diagnose(est, G, cov_type=a.cov_type, uniform=True, replications=2000,
                               random_state=seed, uniform_method=k) for k in hit}
        except (attnreg.NumericalError, ValueError):
            fails += 1
            continue
        for k, b in res.items():
            hit[k].append(bool(((b["uniform_rbc_low"] <= tg) & (tg <= b["uniform_rbc_high"])).all()))
            crit[k].append(b.attrs["crit_uniform_rbc"])
    print(f"core diagnose: d={d} {a.kernel} n={n} {a.truth} cov_type={a.cov_type}: "
          f"R={len(hit['wild_t'])} (failed {fails}), CPU {time.process_time() - t0:.0f} s")
    for k, v in hit.items():
        p = np.mean(v)
        print(f"  {k:8s} uniform RBC coverage {p:.3f} (se {np.sqrt(p * (1 - p) / len(v)):.3f}), "
              f"mean crit {np.mean(crit[k]):.3f}")


if __name__ == "__main__":
    main()
