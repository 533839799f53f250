"""Which variance gives pointwise RBC intervals their nominal coverage in small windows?

    python3 bench/rbc_pointwise_variance.py D KERNEL N TRUTH REPS SEED [NOISE]
    python3 bench/rbc_pointwise_variance.py table FILE...

On the design of bench/rbc_montecarlo.py (x ~ U[-1, 1]^d, its truths and its four points, each
point fitted at its own mse_dpi vector; NOISE "homoskedastic", sd 0.3, or "hetero", sd
0.4 + 0.2 x_1), one replication's bias-corrected estimate fit_bc = sum_i W_i y_i, W = L - B
(the fit's attention weights L, diagnose's bias weights B), is studentised with each candidate
standard error; `table` prints the coverage of |t| <= z (or of the t quantile where the
candidate has degrees of freedom). Candidates, all for the same W:

  hc3      diagnose's HC3: sum_i W_i^2 e_i^2 / (1 - L_ii)^2 with the fit's residuals e_i
           at the training rows and their leverages (global residuals);
  bm3/bm2  hc3 / hc2 with a t reference whose degrees of freedom are Bell and McCaffrey's
           (2002, Survey Methodology 28(2)): tr(M)^2 / tr(M^2), M = (I - H)' diag(a) (I - H),
           a_i = W_i^2 c_i (Imbens and Kolesar 2016, REStat 98(4), recommend HC2 with them);
  lp3      nprobust's lprobust convention: residuals of the pilot local quadratic at the point
           (the point's window), HC3 with the local linear fit's local leverages;
  local    diagnose's cov_type="local": sigma^2(x) = sum_i w_i r_i^2 / sum_i w_i (1 - H_ii)
           from the local linear fit's residuals in the window, times sum_i W_i^2;
  localq   the same from the pilot local quadratic's residuals;
  pool3    the fit's global HC3-scaled squared residuals averaged with the kernel weights at x,
           times sum_i W_i^2;
  wild_t   diagnose's wild bootstrap-t at the single point (uniform=True on one row, 999
           draws), i.e. a pointwise bootstrap-t interval.
Gaussian kernel weights for the window-based candidates (the kernel= argument is used for the
fit and the plug-in; the numpy candidates lp3, localq and pool3 take the Gaussian product
weight, so run them with KERNEL gaussian).
"""
import json
import sys

import numpy as np

import attnreg
from attnreg import LocalLinear, _core
from attnreg.bandwidth import mse_dpi
from attnreg.diagnostics import diagnose

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from rbc_montecarlo import NOISE, TRUTH, points  # noqa: E402

Z = 1.959963984540054


def quad_terms(U):
    n, d = U.shape
    return np.column_stack([np.ones(n)] + [U[:, a] for a in range(d)]
                           + [U[:, a] * U[:, e] for a in range(d) for e in range(a, d)])


def bm_df(a, S, HS):
    RS = -HS
    RS[np.arange(len(S)), S] += 1
    G = RS @ RS.T
    aS = a[S]
    return (aS @ (RS ** 2).sum(1)) ** 2 / np.sum((aS[:, None] * G * aS[None, :]) * G)


def candidates(X, y, est, x0, truth_k, k):
    cm = est._stats_model()
    h = np.asarray(est.bandwidth_, dtype=float)
    L = est.attention_weights(x0[None])[0]
    B = _core.bias_weights_multivariate(cm, x0[None], -1, [], 21)[0]
    W = L - B
    fbc = float(W @ y)
    e = y - est.predict(X)
    lev = np.asarray(cm.leverage())
    S = np.flatnonzero((W != 0) | (L != 0))
    HS = est.attention_weights(X[S])
    out = {}
    for name, c in (("3", 1 / (1 - lev) ** 2), ("2", 1 / (1 - lev))):
        a = W ** 2 * c
        t = (fbc - truth_k) / np.sqrt(a @ e ** 2)
        if name == "3":
            out["hc3"] = (t, None)
        out["bm" + name] = (t, bm_df(a, S, HS))
    U = (X[S] - x0) / h
    w = np.exp(-0.5 * (U ** 2).sum(1))
    Zp, Zq = np.column_stack([np.ones(len(S)), U]), quad_terms(U)
    sw = np.sqrt(w)
    res = {}
    for nm, Zm in (("p", Zp), ("q", Zq)):
        Q, _ = np.linalg.qr(Zm * sw[:, None])
        r = sw * y[S] - Q @ (Q.T @ (sw * y[S]))
        res[nm] = (r / sw, np.sum(Q ** 2, 1))
    sw2 = np.sum(W[S] ** 2)
    rq, hp = res["q"][0], res["p"][1]
    out["lp3"] = ((fbc - truth_k) / np.sqrt(np.sum(W[S] ** 2 * (rq / (1 - hp)) ** 2)), None)
    for nm, key in (("p", "local"), ("q", "localq")):
        r, hh = res[nm]
        s2 = np.sum(w * r ** 2) / np.sum(w * (1 - hh))
        out[key] = ((fbc - truth_k) / np.sqrt(s2 * sw2), None)
    s2g = np.sum(w * (e[S] / (1 - lev[S])) ** 2) / w.sum()
    out["pool3"] = ((fbc - truth_k) / np.sqrt(s2g * sw2), None)
    b = diagnose(est, x0[None], cov_type="HC3", uniform=True, replications=999,
                 uniform_method="wild_t", random_state=k)
    out["wild_t"] = (float(b["uniform_rbc_low"].iloc[0] <= truth_k <= b["uniform_rbc_high"].iloc[0]),
                     "covered")
    return {k_: [float(v[0]), v[1]] for k_, v in out.items()}


def kernel_weights(U, kernel):
    """Product kernel weights at u = (x - x0) / h, Gaussian or Epanechnikov (without its
    constant), for the numpy candidates of the study scripts."""
    if kernel == "gaussian":
        return np.exp(-0.5 * np.sum(U * U, axis=1))
    return np.prod(np.clip(1 - U * U, 0, None), axis=1)


def rbc_t(est, x0, truth_k, cov_type, **kw):
    """(fit_bc - m(x0)) / se_bc of diagnose's RBC interval at the one point x0, and its row."""
    D = diagnose(est, x0[None], cov_type=cov_type, **kw)
    return float((D["fit_bc"].iloc[0] - truth_k) / D["se_bc"].iloc[0]), D


def draw(rng, d, n, m, noise):
    """One sample of the design: x ~ U[-1, 1]^d, y = m(x) + noise."""
    X = rng.uniform(-1, 1, size=(n, d))
    return X, m(X) + NOISE[noise](X) * rng.standard_normal(n)


def replicate(rng, d, kernel, n, truth, noise, reps, per_point,
              errors=(attnreg.NumericalError, ValueError)):
    """reps samples of the design; at each of its points the fit at the point's mse_dpi vector
    and per_point(X, y, est, x0, m(x0), k); None where a step is refused."""
    P, _ = points(d)
    m = TRUTH[truth]
    rows = []
    for _ in range(reps):
        X, y = draw(rng, d, n, m, noise)
        t = m(P)
        row = []
        for k in range(len(P)):
            try:
                h = mse_dpi(X, y, P[k], kernel=kernel)
                est = LocalLinear(kernel=kernel, bandwidth=h).fit(X, y)
                row.append(per_point(X, y, est, P[k], t[k], k))
            except errors:
                row.append(None)
        rows.append(row)
    return rows


def coverage_cell(t):
    """'coverage (sd)' of normal 0.95 intervals from t-statistics, for the study tables."""
    t = np.asarray(t, dtype=float)
    return f"{np.mean(np.abs(t) <= Z):.3f} ({np.std(t):.2f})"


def t_coverage(pairs):
    """Share of (t, nu) pairs with |t| within the 0.975 quantile of t(nu) (normal where nu is
    None); rows whose t is not finite are left out."""
    from scipy import stats
    t = np.array([c for c, _ in pairs], dtype=float)
    crit = np.array([Z if q is None else stats.t.ppf(0.975, q) for _, q in pairs])
    ok = np.isfinite(t)
    return float(np.mean(np.abs(t[ok]) <= crit[ok]))


def run(d, kernel, n, truth, reps, seed, noise):
    rng = np.random.default_rng([99, d, n, seed])
    rows = replicate(rng, d, kernel, n, truth, noise, reps, candidates)
    out = f"bench/results/rbc_pointwise_variance_{d}_{kernel}_{n}_{truth}_{noise}_{seed}.json"
    with open(out, "w") as fh:
        json.dump(rows, fh)
    print(out)


def table(files):
    names = ["hc3", "bm3", "bm2", "lp3", "local", "localq", "pool3", "wild_t"]
    print("| design | point | R | " + " | ".join(names) + " |")
    print("|" + "---|" * (3 + len(names)))
    for f in files:
        rows = json.load(open(f))
        design = f.rsplit("/", 1)[-1][len("rbc_pointwise_variance_"):-len(".json")]
        for k in range(len(rows[0])):
            v = [r[k] for r in rows if r[k] is not None]
            cells = []
            for nm in names:
                vals = [x[nm] for x in v]
                if nm == "wild_t":
                    cov = np.mean([c for c, _ in vals])
                else:
                    cov = t_coverage(vals)
                cells.append(f"{cov:.3f}")
            print(f"| {design} | {k} | {len(v)} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    if sys.argv[1] == "table":
        table(sys.argv[2:])
    else:
        a = sys.argv[1:]
        run(int(a[0]), a[1], int(a[2]), a[3], int(a[4]), int(a[5]),
            a[6] if len(a) > 6 else "homoskedastic")
