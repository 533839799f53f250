"""Two builds of the Python module side by side: does a build option (precompiled headers, the
unity build of the core, compiler flags) change the speed of the compiled code? Each workload
runs in a fresh child process per build, the builds alternating (A B A B ...), and the best CPU
time (time.process_time, all threads) of the repeats is kept; the ratio B / A is printed.

    python3 bench/bench_build_variants.py --a DIR_A --b DIR_B [--repeats 5] [--out FILE.md]

DIR_A and DIR_B each hold an importable `attnreg` package (python-package/src/attnreg with the
build's _core*.so copied in). One thread (OMP_NUM_THREADS=1) so the load of the machine's other
core matters less; the load (uptime) is printed beside the results.
"""
import argparse
import json
import os
import subprocess
import sys
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))
CSV = os.path.join(HERE, "..", "data", "cps1988.csv")

PRE = textwrap.dedent("""
    import json, time, numpy as np, pandas as pd, attnreg
    rng = np.random.default_rng(2026)
    def sim(n, d=1):
        X = rng.uniform(size=(n, d))
        return X, np.sin(2 * np.pi * X[:, 0]) + 0.3 * rng.normal(size=n)
""")

# name: (setup, timed body)
WORKLOADS = {
    "OLS HC1, 10^6 x 5": (
        "X = rng.normal(size=(10**6, 5)); y = X @ np.arange(5.0) + rng.normal(size=10**6)",
        "attnreg.OLS(cov_type='HC1').fit(X, y).coef_se_"),
    "OLS absorbed FE (10^4 levels), 10^6 x 2": (
        "X = rng.normal(size=(10**6, 2)); f = rng.integers(0, 10**4, 10**6);"
        " y = X @ [1.0, 2.0] + f / 1e4 + rng.normal(size=10**6)",
        "attnreg.OLS(cov_type='HC1').fit(X, y, absorb=f).coef_se_"),
    "LocalLinear cv_ls, CPS1988 experience (28,155 rows)": (
        "df = pd.read_csv(%r); x = df[['experience']].to_numpy(float); y = np.log(df.wage.to_numpy(float))" % CSV,
        "attnreg.LocalLinear(bandwidth='cv_ls').fit(x, y).bandwidth_"),
    "NadarayaWatson Gaussian all-pairs predict, 5,000 x 5,000, d = 3": (
        "X, y = sim(5000, 3); m = attnreg.NadarayaWatson(bandwidth=[0.2, 0.2, 0.2]).fit(X, y)",
        "m.predict(X)"),
    "LocalLinear mixed cv_ls, 3,000 rows, d = 2": (
        "X, y = sim(3000, 2)",
        "attnreg.LocalLinear(bandwidth='cv_ls').fit(X, y).bandwidth_"),
    "LocalLinear binned fit + predict, 10^6 rows": (
        "X, y = sim(10**6)",
        "attnreg.LocalLinear(bandwidth=0.05, approx='binned').fit(X, y).predict(X[:1000])"),
    "attention.lla blockwise causal, (2, 4, 1024, 32)": (
        "Q, K, V = (rng.standard_normal((2, 4, 1024, 32)) for _ in range(3))",
        "attnreg.attention.lla(Q, K, V, bandwidth=4.0, ridge=0.1, causal=True, method='blockwise')"),
    "KernelDensity cv_ls, 5,000 rows, d = 2": (
        "X = rng.normal(size=(5000, 2))",
        "attnreg.KernelDensity(bandwidth='cv_ls').fit(X).bandwidth_"),
}


def run(pkg_dir, setup, body):
    code = PRE + setup + "\nc0 = time.process_time()\nres = " + body + \
        "\nprint(json.dumps(time.process_time() - c0))"
    env = dict(os.environ, PYTHONPATH=pkg_dir, OMP_NUM_THREADS="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--a", required=True, help="the reference build's package directory")
    ap.add_argument("--b", required=True, help="the build compared with it")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", help="also write the table (markdown) here")
    ap.add_argument("--only", help="run only the workloads whose name contains this text")
    args = ap.parse_args()
    for d in (args.a, args.b):
        if not os.path.isdir(os.path.join(d, "attnreg")):
            sys.exit(f"{d}: no attnreg package there (copy python-package/src/attnreg and a _core*.so)")
    rows = [f"load before: {os.getloadavg()[0]:.2f}", "",
            "| workload | A: CPU s (best of %d) | B: CPU s | B / A |" % args.repeats,
            "|---|---|---|---|"]
    ratios = []
    for name, (setup, body) in WORKLOADS.items():
        if args.only and args.only not in name:
            continue
        ta, tb = [], []
        for _ in range(args.repeats):
            ta.append(run(args.a, setup, body))
            tb.append(run(args.b, setup, body))
        a, b = min(ta), min(tb)
        ratios.append(b / a)
        rows.append(f"| {name} | {a:.3f} | {b:.3f} | {b / a:.3f} |")
        print(rows[-1], flush=True)
    rows += ["", f"load after: {os.getloadavg()[0]:.2f}; largest B / A: {max(ratios):.3f}"]
    print(rows[-1])
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
