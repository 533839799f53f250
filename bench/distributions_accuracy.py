"""Accuracy of the t tail and normal quantile: Boost.Math (what the core uses, distributions.cpp)
against the hand-written versions it replaced and scipy.stats, all against 50-digit mpmath.

    python3 bench/distributions_accuracy.py [commit-with-the-hand-written-code]

The hand-written code (incomplete beta continued fraction; Acklam + Halley) is read from git at
the given commit (default af500ca, the last one that had it). Results: bench/results/distributions.md.
"""
import os
import subprocess
import sys
import tempfile

import mpmath as mp
import numpy as np
from scipy import stats

mp.mp.dps = 50
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OLD = sys.argv[1] if len(sys.argv) > 1 else "af500ca"


def old_source(path):
    return subprocess.run(["git", "-C", ROOT, "show", f"{OLD}:{path}"], capture_output=True,
                          text=True, check=True).stdout


def build():
    inf = old_source("core/src/least_squares_inference.cpp")
    t = inf[inf.index("// Continued fraction for the regularised incomplete beta function"):
            inf.index("namespace {\n\n// Dense codes")].replace("}  // namespace\n", "", 1)
    dg = old_source("core/src/diagnostics.cpp")
    q = dg[dg.index("/// Standard normal quantile: Acklam"):dg.index("bool one_continuous(")]
    prog = """#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>
const double kNaN = std::numeric_limits<double>::quiet_NaN();
namespace hand {
""" + t + q + """}
int main(int, char** argv) {
  using namespace boost::math;
  double a, b;
  while (std::scanf("%lf %lf", &a, &b) == 2) {
    if (argv[1][0] == 't')
      std::printf("%.17g %.17g\\n", hand::student_t_sf(a, b),
                  cdf(complement(students_t_distribution<double>(b), a)));
    else
      std::printf("%.17g %.17g\\n", hand::normal_quantile(a),
                  quantile(normal_distribution<double>(0, 1), a));
  }
}
"""
    d = tempfile.mkdtemp()
    with open(os.path.join(d, "cmp.cpp"), "w") as f:
        f.write(prog)
    exe = os.path.join(d, "cmp")
    subprocess.run(["g++", "-O2", "-std=c++17", os.path.join(d, "cmp.cpp"), "-o", exe], check=True)
    return exe


def t_sf_exact(t, df):
    t, df = mp.mpf(t), mp.mpf(df)
    x, y = df / (df + t * t), t * t / (df + t * t)
    if x > 0.5:
        tail = (1 - mp.betainc(mp.mpf(1) / 2, df / 2, 0, y, regularized=True)) / 2
    else:
        tail = mp.betainc(df / 2, mp.mpf(1) / 2, 0, x, regularized=True) / 2
    return tail if t >= 0 else 1 - tail


def report(title, rows):
    print(f"\n{title}: worst relative error against mpmath")
    for name, (r, where) in rows.items():
        print(f"  {name:6s} {r:.2e}  at {where}")


def main():
    exe = build()
    dfs = [0.5, 1, 2, 2.5, 3, 5, 10, 30, 100, 1e3, 1e4, 1e6, 1e8]
    ts = sorted(set(map(float, np.concatenate([-np.logspace(-3, 2, 12), np.logspace(-3, 3, 25),
                                                [1e5, 1e8, 1e12]]))))
    pairs = [(t, df) for df in dfs for t in ts]
    out = subprocess.run([exe, "t"], input="\n".join(f"{t!r} {float(df)!r}" for t, df in pairs),
                         capture_output=True, text=True).stdout.split("\n")
    worst = {k: (0.0, None) for k in ("hand", "boost", "scipy")}
    skipped = 0
    for (t, df), line in zip(pairs, out):
        h, b = map(float, line.split())
        try:
            e = t_sf_exact(t, df)
        except Exception:  # mpmath's series does not converge (huge df, large t): skip
            skipped += 1
            continue
        if float(e) < 1e-300:
            continue
        for name, v in (("hand", h), ("boost", b), ("scipy", float(stats.t.sf(t, df)))):
            r = float(abs((mp.mpf(v) - e) / e))
            if r > worst[name][0]:
                worst[name] = (r, f"t = {t:.4g}, df = {df:g}")
    report(f"Student t upper tail ({len(pairs) - skipped} points, {skipped} skipped)", worst)
    ps = sorted(set(map(float, list(np.logspace(-300, -1, 60)) + list(1 - np.logspace(-16, -1, 30))
                        + list(np.linspace(0.01, 0.99, 40)) + [0.5, 0.975, 0.995])))
    out = subprocess.run([exe, "q"], input="\n".join(f"{p!r} 0" for p in ps),
                         capture_output=True, text=True).stdout.split("\n")
    worst = {k: (0.0, None) for k in ("hand", "boost", "scipy")}
    for p, line in zip(ps, out):
        h, b = map(float, line.split())
        if p == 0.5:
            continue
        pm = mp.mpf(p)
        e = mp.findroot(lambda x: mp.ncdf(x) - pm, mp.mpf(b), tol=mp.mpf(10) ** -45)
        for name, v in (("hand", h), ("boost", b), ("scipy", float(stats.norm.ppf(p)))):
            r = float(abs((mp.mpf(v) - e) / e))
            if r > worst[name][0]:
                worst[name] = (r, f"p = {p!r}")
    report(f"normal quantile ({len(ps) - 1} points)", worst)


if __name__ == "__main__":
    main()
