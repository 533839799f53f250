"""Larger simulation runs for attnreg.diagnostics (not part of CI).

1. Coverage of conventional and robust bias-corrected (RBC) 95% intervals, homoskedastic and
   HC3, for Nadaraya-Watson and local linear on m(x) = sin(2 pi x), X ~ U(0,1) fixed design,
   sigma = 0.3, at interior and boundary points, with h = the imse_dpi bandwidth of the first
   sample (held fixed) -- an MSE-optimal h, where conventional intervals are known to
   undercover (CCF 2018).
2. Convergence-rate study (rate_study): oracle bandwidths, log-log slopes of the boundary MSE
   and of the integrated MSE for NW and local linear, d = 1 (uniform) and d = 2 (cone design).

Usage: PYTHONPATH=python-package/src python3 bench/diagnostics_coverage.py [--quick] [--bands]
3. (--bands) simultaneous coverage of the sup-t wild-bootstrap bands.
"""
import sys
import time

import numpy as np

import attnreg
from attnreg import diagnostics as D


def coverage(R=1000, n=500, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.random(n)
    f = lambda t: np.sin(2 * np.pi * t)  # noqa: E731
    g = np.array([0.0, 0.02, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0])
    truth = f(g)
    y0 = f(x) + 0.3 * rng.standard_normal(n)
    out = {}
    for name, cls, deg in (("NW", attnreg.NadarayaWatson, 0), ("LL", attnreg.LocalLinear, 1)):
        h = D.imse_dpi(x, y0, np.linspace(0, 1, 30), degree=deg, algorithm="one_step")
        hits = {k: np.zeros(len(g)) for k in ("conv_const", "conv_hc3", "rbc_const", "rbc_hc3")}
        for _ in range(R):
            y = f(x) + 0.3 * rng.standard_normal(n)
            m = cls(bandwidth=h).fit(x[:, None], y)
            for kind in ("const", "hc3"):
                d = m.diagnose(g[:, None], kind=kind)
                hits[f"conv_{kind}"] += (d.ci_low <= truth) & (truth <= d.ci_high)
                hits[f"rbc_{kind}"] += (d.rbc_low <= truth) & (truth <= d.rbc_high)
        out[name] = (h, {k: v / R for k, v in hits.items()})
    print(f"Coverage of 95% intervals, n = {n}, R = {R}, m = sin(2 pi x), sigma = 0.3")
    print("points: " + " ".join(f"{v:6.2f}" for v in g) + "   | mean")
    for name, (h, cov) in out.items():
        print(f"{name} (h = imse_dpi = {h:.4f})")
        for k, v in cov.items():
            print(f"  {k:10s} " + " ".join(f"{c:6.3f}" for c in v) + f"   | {v.mean():.3f}")


def band_coverage(R=300, n=300, B=499, seed=5):
    """Simultaneous coverage of sup-t wild-bootstrap bands (RBC-resampled) over 41 grid points,
    and mean pointwise coverage of the basic bootstrap intervals, at h = imse_dpi."""
    rng = np.random.default_rng(seed)
    x = rng.random(n)
    f = lambda t: np.sin(2 * np.pi * t)  # noqa: E731
    g = np.linspace(0, 1, 41)
    truth = f(g)
    h = D.imse_dpi(x, f(x) + 0.3 * rng.standard_normal(n), np.linspace(0, 1, 30),
                   algorithm="one_step")
    res = {}
    for bc in (False, True):
        uni = pw = 0.0
        for r in range(R):
            y = f(x) + 0.3 * rng.standard_normal(n)
            m = attnreg.LocalLinear(bandwidth=h).fit(x[:, None], y)
            b = D.bootstrap_bands(m, g[:, None], replications=B, seed=r + 1, bias_corrected=bc)
            uni += np.all((b.uniform_low <= truth) & (truth <= b.uniform_high))
            pw += np.mean((b.low <= truth) & (truth <= b.high))
        res[bc] = (uni / R, pw / R)
    print(f"\nWild (Rademacher) bootstrap bands, local linear, n = {n}, h = {h:.4f}, B = {B}, R = {R}")
    for bc, (u, p) in res.items():
        print(f"  {'RBC-resampled' if bc else 'plain        '}: simultaneous sup-t coverage {u:.3f}, "
              f"mean pointwise basic-bootstrap coverage {p:.3f}")


def rates(reps, ns1, ns2):
    f1 = lambda X: np.sin(3 * X[:, 0]) + X[:, 0]  # noqa: E731  (non-zero normal gradient at 0)
    r = D.rate_study(f1, ns=ns1, d=1, replications=reps, seed=1)
    print("\nRate study d = 1, uniform design, m(x) = sin(3x) + x, sigma = 0.3, boundary x = 0")
    print(r["table"].to_string(index=False))
    print(r["slopes"].to_string(index=False))
    f2 = lambda X: X[:, 0] + np.sin(2 * X[:, 1])  # noqa: E731
    r = D.rate_study(f2, ns=ns2, d=2, design="cone", replications=reps, seed=2)
    print("\nRate study d = 2, cone design (seed 002 App. E.1), m = x1 + sin(2 x2), boundary = apex 0")
    print(r["table"].to_string(index=False))
    print(r["slopes"].to_string(index=False))


if __name__ == "__main__":
    quick = "--quick" in sys.argv
    t0 = time.time()
    if "--bands" in sys.argv:
        band_coverage(R=60 if quick else 300)
        print(f"[{time.time() - t0:.0f} s]")
        sys.exit(0)
    coverage(R=100 if quick else 1000, n=300 if quick else 500)
    print(f"[{time.time() - t0:.0f} s]")
    if quick:
        rates(30, (100, 200, 400), (200, 400, 800))
    else:
        rates(200, (100, 200, 400, 800, 1600, 3200), (200, 400, 800, 1600, 3200))
    print(f"[{time.time() - t0:.0f} s]")
