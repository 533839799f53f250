"""Pooled residual variances for pointwise RBC intervals: which pooling window, which residuals?

    python3 bench/rbc_pointwise_variance_pooling.py D KERNEL N TRUTH NOISE REPS SEED OUT.json
    python3 bench/rbc_pointwise_variance_pooling.py table OUT.json...

A sequel to bench/rbc_pointwise_variance.py, on the same design (bench/rbc_montecarlo.py: x ~
U[-1, 1]^d, its truths, noise "homoskedastic" sd 0.3 or "hetero" sd 0.4 + 0.2 x_1, its four
points, each fitted at its own mse_dpi vector, local linear). The bias-corrected estimate
fit_bc = sum_i W_i y_i (W = L - B, the fit's attention weights minus diagnose's bias weights)
is studentised with se^2 = sigma^2 * sum_i W_i^2 for these estimates of sigma^2 (or with
sum_i W_i^2 sigma_i^2 where sigma^2 varies):

  local      diagnose's cov_type="local": the residuals r of the local linear fit at x (kernel
             weights w, hat P = Z (Z'wZ)^-1 Z'w in the data's scale), sum w r^2 / tr(M),
             M = (I - P)' diag(w) (I - P), so unbiased under a constant variance in the window;
  local_t    the same with a t reference: Satterthwaite degrees of freedom tr(M)^2 / tr(M^2);
  localq(_t) the same from the pilot local quadratic's residuals (all squares and cross products);
  localLL    sigma^2(x_i) = a + b'(x_i - x)/h fitted to r_i^2 / c_i (c_i = ((I - P)(I - P)')_ii,
             the exact E r_i^2 / sigma^2) by weighted least squares with w (Ruppert, Wand, Holst and
             Hoessjer 1997, Technometrics 39(3): a local linear variance function), floored at
             5% of the window mean; se^2 = sum_i W_i^2 sigma^2(x_i);
  ownc       the rows' own residuals e_i = y_i - m_hat(x_i) (each at its own local fit), pooled
             with w and their exact E e_i^2 / sigma^2 = 1 - 2 H_ii + sum_j H_ij^2 (H the fit's
             smoother matrix); ownLL the local linear variance function of those; own2 the
             same with the HC2-like normaliser sum_i w_i (1 - H_ii);
  local_w2, local_w15, localq_w2, own_w2
             the same residuals pooled with w^2 or w^1.5 (a narrower window: less curvature
             misfit and heteroskedasticity inside it, fewer rows);
  hc3        diagnose's default HC3, sum_i W_i^2 e_i^2 / (1 - H_ii)^2; hc2 with (1 - H_ii);
  hcx        sum_i W_i^2 e_i^2 / (1 - 2 H_ii + sum_j H_ij^2): each squared residual divided by its
             exact expectation under a constant variance (HC2 when H is a projection);
  _nu        with a t reference at nu = (sum_i W_i^2)^2 / sum_i W_i^4, the Satterthwaite degrees
             of freedom of sum_i W_i^2 e_i^2 / c_i when the residuals are treated as
             independent.

Window weights w: the fit kernel's product weights at x (NadarayaWatson attention weights with
the same kernel and bandwidth vector, so the Gaussian's truncation rule is the fit's). Data of a
replication depend only on (D, N, SEED, KERNEL, TRUTH, NOISE), so every candidate is evaluated
on the same samples. Results: bench/results/rbc_pointwise_variance.md ("Pooling windows").
"""
import json
import sys

import numpy as np

import attnreg
from attnreg import NadarayaWatson, _core

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from rbc_pointwise_variance import quad_terms, replicate, t_coverage  # noqa: E402



def candidates(X, y, est, kernel, x0, truth_k):
    cm = est._stats_model()
    h = np.asarray(est.bandwidth_, float)
    L = est.attention_weights(x0[None])[0]
    W = L - _core.bias_weights_multivariate(cm, x0[None], -1, [], 21)[0]
    fbc = float(W @ y)
    e = y - est.predict(X)
    lev = np.asarray(cm.leverage())
    w = NadarayaWatson(kernel=kernel, bandwidth=h).fit(X, y).attention_weights(x0[None])[0]
    S = np.flatnonzero((w > 0) | (W != 0))
    w = w[S] / w[S].max()
    U = (X[S] - x0) / h
    Zl = np.column_stack([np.ones(len(S)), U])
    W2 = W[S] ** 2
    sw2 = W2.sum()
    var, df = {}, {}

    def local_fit(Zm):
        Ai = np.linalg.inv(Zm.T @ (w[:, None] * Zm))
        P = Zm @ Ai @ (Zm.T * w)
        return y[S] - P @ y[S], np.eye(len(S)) - P, Ai

    def pooled(r, IP, pw):
        M = IP.T @ (pw[:, None] * IP)
        tr = np.trace(M)
        return np.sum(pw * r ** 2) / tr * sw2, tr ** 2 / np.sum(M * M)

    def variance_function(s, Ai):
        beta = Ai @ (Zl.T @ (w * s))
        return np.sum(W2 * np.maximum(Zl @ beta, 0.05 * np.sum(w * s) / w.sum()))

    r, IP, Ai = local_fit(Zl)
    rq, IPq, _ = local_fit(quad_terms(U))
    var["local"], df["local_t"] = pooled(r, IP, w)
    var["local_t"] = var["local"]
    var["localq"], df["localq_t"] = pooled(rq, IPq, w)
    var["localq_t"] = var["localq"]
    var["localLL"] = variance_function(r ** 2 / np.sum(IP ** 2, 1), Ai)  # E r_i^2 / sigma^2
    HS = est.attention_weights(X[S])
    c_own = 1 - 2 * lev[S] + (HS ** 2).sum(1)
    var["ownc"] = np.sum(w * e[S] ** 2) / np.sum(w * c_own) * sw2
    var["ownLL"] = variance_function(e[S] ** 2 / c_own, Ai)
    var["own2"] = np.sum(w * e[S] ** 2) / np.sum(w * (1 - lev[S])) * sw2
    var["local_w2"] = pooled(r, IP, w ** 2)[0]
    var["local_w15"] = pooled(r, IP, w ** 1.5)[0]
    var["localq_w2"] = pooled(rq, IPq, w ** 2)[0]
    var["own_w2"] = np.sum(w ** 2 * e[S] ** 2) / np.sum(w ** 2 * c_own) * sw2
    with np.errstate(divide="ignore", invalid="ignore"):
        var["hc3"] = float(np.sum(W ** 2 * (e / (1 - lev)) ** 2))
        var["hc2"] = float(np.sum(W ** 2 * e ** 2 / (1 - lev)))
    # the rows' own residuals scaled by their exact E e_i^2 / sigma^2 (HC2 where H is a
    # projection), and t references with nu = (sum W^2)^2 / sum W^4
    var["hcx"] = float(np.sum(W[S] ** 2 * e[S] ** 2 / c_own))
    nu = np.sum(W ** 2) ** 2 / np.sum(W ** 4)
    for k in ("hcx", "hc3", "hc2"):
        var[k + "_nu"], df[k + "_nu"] = var[k], nu
    return {k: [float((fbc - truth_k) / np.sqrt(v)), df.get(k)] for k, v in var.items()}


def run(d, kernel, n, truth, noise, reps, seed, out):
    rng = np.random.default_rng([77, d, n, seed, len(kernel), len(truth), len(noise)])
    rows = replicate(rng, d, kernel, n, truth, noise, reps,
                     lambda X, y, est, x0, tk, k: candidates(X, y, est, kernel, x0, tk),
                     (attnreg.NumericalError, ValueError, np.linalg.LinAlgError))
    with open(out, "w") as fh:
        json.dump(rows, fh)


def table(files):
    for f in files:
        rows = json.load(open(f))
        names = None
        for k in range(len(rows[0])):
            v = [r[k] for r in rows if r[k] is not None]
            if names is None:
                names = list(v[0])
                print(f"\n{f.rsplit('/', 1)[-1]}\n\n| point | R | " + " | ".join(names) + " |")
                print("|" + "---|" * (2 + len(names)))
            cells = []
            for nm in names:
                cells.append(f"{t_coverage([x[nm] for x in v]):.3f}")
            print(f"| {k} | {len(v)} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    if sys.argv[1] == "table":
        table(sys.argv[2:])
    else:
        a = sys.argv[1:]
        run(int(a[0]), a[1], int(a[2]), a[3], a[4], int(a[5]), int(a[6]), a[7])
