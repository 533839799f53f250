"""Monte Carlo coverage of conventional, RBC and uniform bands with several regressors, at the
plug-in bandwidth vectors (attnreg.bandwidth.mse_dpi / imse_dpi with d >= 2).

    python3 bench/rbc_montecarlo.py run [--reps 1000] [--chunk 20] [--jobs N] [--state FILE]
        [--ds 2,3] [--ns 500,2000] [--kernels ...] [--truths ...] [--bias-terms absolute|signed]
        [--points-only] [--cov-type HC3|local|...] [--noise homoskedastic|hetero]
        [--critical-value auto|normal|null]
    python3 bench/rbc_montecarlo.py table [--state FILE] [--out bench/results/rbc_montecarlo.md]
    python3 bench/rbc_montecarlo.py explain [--d 3] [--n 500] [--kernel gaussian] [--truth curved]
        [--pilot fit|plugin]   (t-statistics of the RBC fits over the band's grid)

Design: x ~ U[-1, 1]^d (d = 2, 3), y = m(x) + 0.3 N(0, 1) (--noise hetero: (0.4 + 0.2 x_1) N(0, 1));
  smooth: m(x) = sin(x_1) + 0.5 x_2^2 (+ 0.3 x_3);  curved: m(x) = sin(3 x_1) + exp(-4 x_2^2) (+ x_3^2).
Local linear, kernel Gaussian or Epanechnikov. Pointwise: at each point P_k its own fit at the
pointwise plug-in vector mse_dpi(X, y, P_k, bias_terms=...) (the pilot local quadratic plug-in,
rule-of-thumb pilot, bwcheck 21; default bias_terms "absolute", mse_dpi's default and the vector
for inference; "signed" is the pure MSE-optimal vector, the one of the first tables in
bench/results/rbc_montecarlo.md, which predate bwcheck), RBC pilot rho = 1 (diagnose's
default; its pilot window holds at least 21 distinct rows); points interior (0, ..., 0),
(0.4, -0.4, 0.4..), boundary (0.9, -0.9, 0.9..), (-0.95, 0, ..). Uniform bands: one fit at the
IMSE-optimal vector imse_dpi(X, y, G) over the grid G of 5^2 (d = 2) or 3^3 (d = 3) points in
[-0.8, 0.8]^d, 2,000 multiplier draws. Variance HC3 (--cov-type), level 0.95.

Resumable: `run` appends one JSON line per finished chunk (configuration, chunk index, counts)
to --state and skips chunks already there; chunks go round-robin over the configurations so
every configuration advances together. Seeds: chunk c of a configuration uses
numpy.random.default_rng([d, n, kernel index, truth index, c]), whatever --jobs is: with
--jobs N, N worker processes (OMP_NUM_THREADS=1 each) take the chunks in that order and the
parent appends each finished chunk, so the state file holds the same chunks (in another line
order) for any N. The default state file is named after --bias-terms
(rbc_montecarlo_state_<bias_terms>.jsonl; --points-only adds _points). Per point the state also
holds the RBC t-statistic (fit_bc - m(P_k)) / se_bc and the vector h. A replication in which the
plug-in or a pilot is refused (too few points in a window) is counted as failed, not as covered
or not; `table` reports those counts. Binomial standard error of a coverage p at R replications:
sqrt(p (1 - p) / R).
"""
import argparse
import itertools
import json
import os
import subprocess
import time

import numpy as np

import attnreg
from attnreg import LocalLinear, _core
from attnreg.bandwidth import imse_dpi, mse_dpi
from attnreg.diagnostics import diagnose

KERNELS = ("gaussian", "epanechnikov")
TRUTHS = ("smooth", "curved")
TRUTH = {
    "smooth": lambda X: np.sin(X[:, 0]) + 0.5 * X[:, 1] ** 2 + (0.3 * X[:, 2] if X.shape[1] > 2 else 0),
    "curved": lambda X: np.sin(3 * X[:, 0]) + np.exp(-4 * X[:, 1] ** 2) + (X[:, 2] ** 2 if X.shape[1] > 2 else 0),
}


def points(d):
    P = np.array([[0.0] * d, [0.4, -0.4] + [0.4] * (d - 2), [0.9, -0.9] + [0.9] * (d - 2),
                  [-0.95, 0.0] + [0.0] * (d - 2)])
    k = 5 if d == 2 else 3
    g = np.array(list(itertools.product(np.linspace(-0.8, 0.8, k), repeat=d)))
    return P, g


NOISE = {
    "homoskedastic": lambda X: 0.3,
    # smooth heteroskedasticity, sd 0.2 to 0.6 across the support of x_1
    "hetero": lambda X: 0.4 + 0.2 * X[:, 0],
}


def one_rep(rng, d, kernel, n, truth, P, G, bias_terms="absolute", points_only=False,
            cov_type="HC3", noise="homoskedastic", critical_value="auto"):
    """Coverage indicators of one replication (None entries where a step was refused)."""
    m = TRUTH[truth]
    X = rng.uniform(-1, 1, size=(n, d))
    y = m(X) + NOISE[noise](X) * rng.standard_normal(n)
    out = {"conv": [None] * len(P), "rbc": [None] * len(P), "h": [None] * len(P),
           "t_rbc": [None] * len(P), "nu_rbc": [None] * len(P), "crit_rbc": [None] * len(P),
           "fail": []}
    t = m(P)
    for k in range(len(P)):
        stage = "plug-in"
        try:
            h = mse_dpi(X, y, P[k], kernel=kernel, bias_terms=bias_terms)
            stage = "diagnose"
            est = LocalLinear(kernel=kernel, bandwidth=h).fit(X, y)
            a = diagnose(est, P[k:k + 1], cov_type=cov_type, critical_value=critical_value)
        except (attnreg.NumericalError, ValueError) as e:
            out["fail"].append(f"point {k} {stage}: {str(e)[:90]}")
            continue
        out["conv"][k] = bool(a["ci_low"].iloc[0] <= t[k] <= a["ci_high"].iloc[0])
        out["rbc"][k] = bool(a["rbc_low"].iloc[0] <= t[k] <= a["rbc_high"].iloc[0])
        out["h"][k] = [float(v) for v in h]
        out["t_rbc"][k] = float((a["fit_bc"].iloc[0] - t[k]) / a["se_bc"].iloc[0])
        out["crit_rbc"][k] = float(a["crit_bc"].iloc[0])  # z unless critical_value "null"
        # Satterthwaite degrees of freedom of sum_i W_i^2 sigma_i^2 with equal variances,
        # (sum W^2)^2 / sum W^4, W = the bias-corrected smoother row (diagnose's pilot)
        W = est.attention_weights(P[k:k + 1])[0] - _core.bias_weights_multivariate(
            est._stats_model(), P[k:k + 1], -1, [], 21)[0]
        out["nu_rbc"][k] = float(np.sum(W ** 2) ** 2 / np.sum(W ** 4))
    out["unif_c"] = out["unif_r"] = None
    if points_only:
        return out
    stage = "plug-in"
    try:
        hi = imse_dpi(X, y, G, kernel=kernel)
        stage = "diagnose"
        est = LocalLinear(kernel=kernel, bandwidth=hi).fit(X, y)
        b = diagnose(est, G, cov_type=cov_type, uniform=True, replications=2000,
                     random_state=int(rng.integers(2 ** 31)))
    except (attnreg.NumericalError, ValueError) as e:
        out["fail"].append(f"grid {stage}: {str(e)[:90]}")
        return out
    tg = m(G)
    inside_c = (b["uniform_low"] <= tg) & (tg <= b["uniform_high"])
    inside_r = (b["uniform_rbc_low"] <= tg) & (tg <= b["uniform_rbc_high"])
    out["unif_c"] = bool(inside_c.all())
    out["unif_r"] = bool(inside_r.all())
    out["unif_r_miss"] = [int(v) for v in ~inside_r.to_numpy()]  # which grid points break the band
    out["pt_r_grid"] = [int(v) for v in ((b["rbc_low"] <= tg) & (tg <= b["rbc_high"])).to_numpy()]
    out["crit_r"] = float(b.attrs["crit_uniform_rbc"])
    # the same band with the homoskedastic variance (right for this design): isolates the
    # part of the undercoverage that comes from the noise of the HC3 standard errors
    seed_c = int(rng.integers(2 ** 31))
    try:  # needs every training row's own fit (sigma^2 from all residuals)
        bc = diagnose(est, G, cov_type="nonrobust", uniform=True, replications=2000,
                      random_state=seed_c)
        out["unif_r_const"] = bool(((bc["uniform_rbc_low"] <= tg)
                                    & (tg <= bc["uniform_rbc_high"])).all())
    except (attnreg.NumericalError, ValueError):
        out["unif_r_const"] = None
    out["h_imse"] = [float(v) for v in hi]
    return out


def configs(ds, ns, kernels=KERNELS, truths=TRUTHS):
    return [(d, kernel, n, truth) for d in ds for kernel in kernels for n in ns for truth in truths]


def key(cfg):
    return "d{}-{}-n{}-{}".format(*cfg)


def run_chunk(cfg, c, reps, bias_terms="absolute", points_only=False, cov_type="HC3",
              noise="homoskedastic", critical_value="auto"):
    d, kernel, n, truth = cfg
    rng = np.random.default_rng([d, n, KERNELS.index(kernel), TRUTHS.index(truth), c])
    P, G = points(d)
    t0 = time.process_time()
    rows = [one_rep(rng, d, kernel, n, truth, P, G, bias_terms, points_only, cov_type, noise,
                    critical_value) for _ in range(reps)]
    return {"key": key(cfg), "chunk": c, "reps": reps, "cpu_s": time.process_time() - t0,
            "bias_terms": bias_terms, "cov_type": cov_type, "noise": noise,
            "critical_value": critical_value, "rows": rows}


def _run_chunk_args(args):
    return run_chunk(*args)


def default_state(a):
    return (f"bench/results/rbc_montecarlo_state_{a.bias_terms}"
            f"{'_points' if a.points_only else ''}"
            f"{'' if a.cov_type == 'HC3' else '_' + a.cov_type}"
            f"{'' if a.noise == 'homoskedastic' else '_' + a.noise}"
            f"{'' if a.critical_value == 'auto' else '_' + a.critical_value}.jsonl")


def cmd_run(a):
    state = a.state or default_state(a)
    done = set()
    if os.path.exists(state):
        with open(state) as fh:
            for line in fh:
                r = json.loads(line)
                done.add((r["key"], r["chunk"]))
    cfgs = configs([int(v) for v in a.ds.split(",")], [int(v) for v in a.ns.split(",")],
                   a.kernels.split(","), a.truths.split(","))
    pending = [(cfg, c, a.chunk, a.bias_terms, a.points_only, a.cov_type, a.noise,
                a.critical_value)
               for c in range(a.reps // a.chunk) for cfg in cfgs if (key(cfg), c) not in done]

    def record(r):
        with open(state, "a") as fh:
            fh.write(json.dumps(r) + "\n")
        print(f"{r['key']} chunk {r['chunk']}: {r['cpu_s']:.0f} CPU s", flush=True)

    if a.jobs <= 1:
        for args in pending:
            record(run_chunk(*args))
        return
    import multiprocessing as mp
    # the workers start fresh interpreters (spawn) that read this environment before loading
    # attnreg's OpenMP runtime: one thread each, so N jobs use N cores
    os.environ["OMP_NUM_THREADS"] = "1"
    os.environ.setdefault("OMP_WAIT_POLICY", "passive")
    with mp.get_context("spawn").Pool(a.jobs) as pool:
        for r in pool.imap_unordered(_run_chunk_args, pending):
            record(r)


def _rate(vals):
    v = [x for x in vals if x is not None]
    if not v:
        return float("nan"), 0
    return float(np.mean(v)), len(v)


def _fmt(p, r):
    return "-" if r == 0 else f"{p:.3f} ({np.sqrt(max(p * (1 - p), 0.0475) / r):.3f})"


def cmd_table(a):
    a.state = a.state or default_state(a)
    by = {}
    cpu = 0.0
    with open(a.state) as fh:
        for line in fh:
            r = json.loads(line)
            by.setdefault(r["key"], []).extend(r["rows"])
            cpu += r["cpu_s"]
    up = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    L = [f"State file `{os.path.basename(a.state)}`; total CPU seconds of the runs: {cpu:.0f}; "
         f"uptime when tabulated: `{up}`.", "",
         "Coverage (binomial standard error sqrt(p(1-p)/R), with p(1-p) floored at 0.0475 so "
         "that an observed 0 or 1 still shows the precision), R = replications that completed; "
         "points: interior (0,..), (0.4,-0.4,..), boundary (0.9,-0.9,..), (-0.95,0,..).", "",
         "| d | kernel | n | truth | R | conv. (0) | conv. (0.4) | conv. (0.9) | conv. (-0.95) "
         "| RBC (0) | RBC (0.4) | RBC (0.9) | RBC (-0.95) | uniform conv. | uniform RBC "
         "| uniform RBC, nonrobust variance | failed |",
         "|" + "---|" * 17]
    diag = []
    pdet = []
    reasons = {}
    for cfg in configs([2, 3], [500, 2000]):
        rows = by.get(key(cfg))
        if not rows:
            continue
        cells = []
        for col in ("conv", "rbc"):
            for k in range(4):
                cells.append(_fmt(*_rate([r[col][k] for r in rows])))
        uc = _rate([r["unif_c"] for r in rows])
        ur = _rate([r["unif_r"] for r in rows])
        urc = _rate([r.get("unif_r_const") for r in rows])
        failed = sum(r["unif_c"] is None and not a.points_only for r in rows) + sum(
            v is None for r in rows for v in r["conv"])
        for k in range(4):
            tk = np.array([r["t_rbc"][k] for r in rows
                           if r.get("t_rbc") and r["t_rbc"][k] is not None])
            if tk.size:
                hk = np.mean([r["h"][k] for r in rows if r["h"][k] is not None], axis=0)
                tn = [(r["t_rbc"][k], r["nu_rbc"][k]) for r in rows
                      if r.get("nu_rbc") and r["nu_rbc"][k] is not None]
                tcol = "- | -"
                if tn:
                    from scipy import stats
                    tv, nv = np.array(tn).T
                    tcol = (f"{_fmt(*_rate(list(np.abs(tv) <= stats.t.ppf(0.975, nv))))} | "
                            f"{np.median(nv):.0f}")
                # the interval's critical value crit_bc (z unless critical_value resolves to "null")
                ck = [r["crit_rbc"][k] for r in rows
                      if r.get("crit_rbc") and r["crit_rbc"][k] is not None]
                ccol = (f"{_fmt(*_rate([r['rbc'][k] for r in rows]))} | {np.mean(ck):.2f}"
                        if ck else "- | -")
                pdet.append(f"| {key(cfg)} | {points(cfg[0])[0][k].tolist()} | {tk.size} | "
                            f"{_fmt(*_rate(list(np.abs(tk) <= 1.959964)))} | {tk.mean():+.2f} | "
                            f"{tk.std():.2f} | " + ", ".join(f"{v:.3f}" for v in hk)
                            + f" | {tcol} | {ccol} |")
        L.append(f"| {cfg[0]} | {cfg[1]} | {cfg[2]} | {cfg[3]} | {len(rows)} | "
                 + " | ".join(cells) + f" | {_fmt(*uc)} | {_fmt(*ur)} | {_fmt(*urc)} | {failed} |")
        for r in rows:
            for f in r.get("fail", []):
                why = f.split(": ", 1)
                reasons[(key(cfg), why[0])] = reasons.get((key(cfg), why[0]), 0) + 1
        ok = [r for r in rows if r["unif_r"] is not None]
        if ok:
            miss = np.mean([r["unif_r_miss"] for r in ok], axis=0)
            ptg = np.mean([r["pt_r_grid"] for r in ok], axis=0)
            G = points(cfg[0])[1]
            corner = np.all(np.abs(G) > 0.79, axis=1)
            hbar = np.mean([r["h_imse"] for r in ok], axis=0)
            diag.append(f"| {key(cfg)} | {len(ok)} | {np.mean([r['crit_r'] for r in ok]):.2f} | "
                        f"{ptg[corner].mean():.3f} | {ptg[~corner].mean():.3f} | "
                        f"{miss[corner].mean():.3f} | {miss[~corner].mean():.3f} | "
                        + ", ".join(f"{v:.3f}" for v in hbar) + " |")
    L += ["", "Uniform RBC band, by grid point: mean sup-t critical value; pointwise RBC coverage "
          "at the grid's corners (every |x_j| = 0.8) and elsewhere; share of replications in "
          "which the band misses the truth at a corner / elsewhere (per point); mean IMSE "
          "bandwidth vector.", "",
          "| configuration | R | crit | pointwise RBC corners | pointwise RBC other | miss per "
          "corner | miss per other point | mean h_imse |", "|" + "---|" * 8] + diag
    if pdet:
        L += ["", "Pointwise RBC by point: coverage, mean and sd of t = (fit_bc - m(x)) / se_bc "
              "(0 and 1 for a correct interval), mean bandwidth vector; where recorded, the "
              "coverage with the t quantile at nu = (sum W_i^2)^2 / sum W_i^4 instead of the "
              "normal one, and the median nu; where recorded, the coverage of diagnose's RBC "
              "interval with its critical value crit_bc (the statistic's finite-sample null "
              "quantile with cov_type=\"local\" or critical_value=\"null\", else z) and the "
              "mean critical value.", "",
              "| configuration | point | R | RBC coverage with z | mean t | sd t | mean h | "
              "t(nu) coverage | median nu | RBC coverage with crit | mean crit |",
              "|" + "---|" * 11] + pdet
    if reasons:
        L += ["", "Refused steps (replications of the chunks that recorded them), by stage:", ""]
        L += [f"* {k}, {stage}: {c}" for (k, stage), c in sorted(reasons.items())]
    text = "\n".join(L) + "\n"
    print(text)
    if a.out:
        with open(a.out, "w") as fh:
            fh.write(text)


def cmd_explain(a):
    """Why a uniform RBC band undercovers: the t-statistics (fit_bc - m) / se_bc at the grid."""
    d, n = a.d, a.n
    P, G = points(d)
    m = TRUTH[a.truth]
    rng = np.random.default_rng([d, n, KERNELS.index(a.kernel), TRUTHS.index(a.truth), 99991])
    T, F, S, C, fails = [], [], [], [], 0
    t0 = time.process_time()
    for _ in range(a.reps):
        X = rng.uniform(-1, 1, size=(n, d))
        y = m(X) + 0.3 * rng.standard_normal(n)
        try:
            hi, b = imse_dpi(X, y, G, kernel=a.kernel, return_pilot=True)
            est = LocalLinear(kernel=a.kernel, bandwidth=hi).fit(X, y)
            kw = {"pilot_bandwidth": b} if a.pilot == "plugin" else {}
            r = diagnose(est, G, cov_type=a.cov_type, uniform=True, replications=2000,
                         random_state=int(rng.integers(2 ** 31)), **kw)
        except (attnreg.NumericalError, ValueError):
            fails += 1
            continue
        T.append((r["fit_bc"] - m(G)) / r["se_bc"])
        F.append(r["fit_bc"].to_numpy())
        S.append(r["se_bc"].to_numpy())
        C.append(r.attrs["crit_uniform_rbc"])
    T, F, S, C = np.array(T), np.array(F), np.array(S), np.array(C)
    corner = np.all(np.abs(G) > 0.79, axis=1)
    mt = np.abs(T).max(axis=1)
    print(f"d={d} {a.kernel} n={n} {a.truth} pilot={a.pilot} cov_type={a.cov_type}: "
          f"R={len(T)} (failed {fails}), CPU {time.process_time() - t0:.0f} s")
    for name, sel in (("corners", corner), ("other points", ~corner)):
        print(f"  {name}: mean t {T[:, sel].mean():+.3f}, sd t {T[:, sel].std():.3f}, "
              f"MC sd(fit_bc) / mean se_bc {np.mean(F[:, sel].std(0) / S[:, sel].mean(0)):.3f}, "
              f"CV of se_bc {np.mean(S[:, sel].std(0) / S[:, sel].mean(0)):.3f}, "
              f"P(|t| > 1.96) {np.mean(np.abs(T[:, sel]) > 1.96):.3f}, "
              f"P(|t| > crit) {np.mean(np.abs(T[:, sel]) > C[:, None]):.4f}")
    print(f"  mean crit {C.mean():.3f}; 95% quantile of max|t| {np.quantile(mt, 0.95):.3f}; "
          f"uniform RBC coverage {np.mean(mt <= C):.3f}")


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--reps", type=int, default=1000)
    r.add_argument("--chunk", type=int, default=20)
    r.add_argument("--ds", default="2,3")
    r.add_argument("--ns", default="500,2000")
    r.add_argument("--kernels", default=",".join(KERNELS))
    r.add_argument("--truths", default=",".join(TRUTHS))
    r.add_argument("--jobs", type=int, default=1)
    t = sub.add_parser("table")
    t.add_argument("--out", default=None)
    t.add_argument("--pointwise-detail", action="store_true")
    for q in (r, t):
        q.add_argument("--state", default=None)
        q.add_argument("--bias-terms", dest="bias_terms", choices=("absolute", "signed"),
                       default="absolute")
        q.add_argument("--points-only", dest="points_only", action="store_true")
        q.add_argument("--cov-type", dest="cov_type", default="HC3",
                       help="diagnose's cov_type for the intervals and bands (default HC3)")
        q.add_argument("--noise", choices=tuple(NOISE), default="homoskedastic",
                       help="homoskedastic: sd 0.3; hetero: sd 0.4 + 0.2 x_1")
        q.add_argument("--critical-value", dest="critical_value", default="auto",
                       choices=("auto", "normal", "null"),
                       help="diagnose's critical_value for the pointwise intervals")
    e = sub.add_parser("explain")
    e.add_argument("--d", type=int, default=3)
    e.add_argument("--n", type=int, default=500)
    e.add_argument("--kernel", default="gaussian")
    e.add_argument("--truth", default="curved")
    e.add_argument("--reps", type=int, default=200)
    e.add_argument("--pilot", choices=("fit", "plugin"), default="fit")
    e.add_argument("--cov_type", default="HC3")
    a = ap.parse_args()
    {"run": cmd_run, "table": cmd_table, "explain": cmd_explain}[a.cmd](a)


if __name__ == "__main__":
    main()
