"""Uniform RBC band with d = 3: is the band construction or the variance estimate behind the
undercoverage of the reduced Monte Carlo (bench/rbc_montecarlo.py, uniform RBC 0.71-0.75)?

    python3 bench/rbc_band_check.py [reps] [smooth|curved]

Same design as bench/rbc_montecarlo.py (d = 3, n = 500, Gaussian, rule-of-thumb h, 3^3 grid in
[-0.8, 0.8]^3, HC3, 2,000 draws). Per replication the uniform RBC band is built five ways:
diagnose itself; a pure-numpy covariance (L - B) diag(omega) (L - B)' with the sup-t critical
value; the same smoother with the true variance 0.09 (oracle omega); HC3 with the residuals of
the bias-corrected fit at the training rows; and those residuals with the bias-corrected
smoother's leverages. Prints the band coverages and the worst grid points' pointwise RBC coverage.
"""
import itertools, sys, numpy as np
from attnreg import LocalLinear, _core
from attnreg.diagnostics import _fitted_core, diagnose
d, n, reps = 3, 500, int(sys.argv[1]) if len(sys.argv) > 1 else 200
truth = sys.argv[2] if len(sys.argv) > 2 else "smooth"
M = {"smooth": lambda X: np.sin(X[:, 0]) + 0.5 * X[:, 1] ** 2 + 0.3 * X[:, 2],
     "curved": lambda X: np.sin(3 * X[:, 0]) + np.exp(-4 * X[:, 1] ** 2) + X[:, 2] ** 2}[truth]
G = np.array(list(itertools.product(np.linspace(-0.8, 0.8, 3), repeat=d)))
rng = np.random.default_rng(11)
hits = {k: 0 for k in ["diag_hc3", "numpy_hc3", "oracle_sigma", "hc3_qfit_resid", "hc3_bcfit_lev"]}
pw = np.zeros(len(G)); tmax_or = []
for r in range(reps):
    X = rng.uniform(-1, 1, size=(n, d)); y = M(X) + 0.3 * rng.standard_normal(n)
    h = 1.06 * X.std(0) * n ** (-1 / (4 + d))
    est = LocalLinear(bandwidth=h).fit(X, y)
    core = _fitted_core(est)
    L = est.attention_weights(G); B = _core.bias_weights_multivariate(core, G, -1, [])
    W = L - B; tg = M(G)
    a = diagnose(est, G, cov_type="HC3", uniform=True, replications=2000, random_state=r)
    hits["diag_hc3"] += np.all((a["uniform_rbc_low"] <= tg) & (tg <= a["uniform_rbc_high"]))
    Ltr = est.attention_weights(X); e = y - Ltr @ y; lev = np.diag(Ltr)
    fbc = W @ y
    def band(om, key):
        S = (W * om) @ W.T; se = np.sqrt(np.diag(S))
        c = _core.sup_t_critical_value(S, 0.95, 2000, r + 1)
        hits[key] += np.all(np.abs(fbc - tg) <= c * se)
        return se, c
    se, c = band(e ** 2 / (1 - lev) ** 2, "numpy_hc3")
    se_o, c_o = band(np.full(n, 0.09), "oracle_sigma")
    tmax_or.append((np.abs(fbc - tg) / se_o).max() / c_o)
    pw += np.abs(fbc - tg) <= 1.959964 * se
    # residuals of the pilot local quadratic fit at the training rows (as nprobust's RBC variance)
    Bt = _core.bias_weights_multivariate(core, X, -1, [])
    eq = y - (Ltr - Bt) @ y
    band(eq ** 2 / (1 - lev) ** 2, "hc3_qfit_resid")
    levbc = np.diag(Ltr - Bt)
    band(eq ** 2 / np.maximum(1 - levbc, 1e-3) ** 2, "hc3_bcfit_lev")
print(truth, "reps", reps, {k: v / reps for k, v in hits.items()})
print("pointwise RBC coverage on the grid: min %.3f median %.3f" % (pw.min() / reps, np.median(pw) / reps))
print("worst grid points:", G[np.argsort(pw)[:4]].tolist(), np.sort(pw)[:4] / reps)
