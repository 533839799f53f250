"""The Monte Carlo lab is one driver in the core: Python and R give the same numbers for the
same explicit seed.

The pinned numbers are also pinned in R-package/tests/testthat/test-diagnostics.R; when R and
the attnreg R package are installed, the second test also runs the study in R and compares.
"""
import os
import shutil
import subprocess

import numpy as np
import pytest

import attnreg.diagnostics as D

SEED = 2**40 + 7  # above 2^32: the high word of the seed counts
MSE = [0.13186568550097572, 0.13186568550097572, 0.13755502233042136, 0.22798123244850038,
       0.24807754125038806]


def _study():
    return D.monte_carlo(lambda X: np.sin(2 * np.pi * X[:, 0]) + X[:, 1], n=40, d=2,
                         replications=6, random_state=SEED,
                         estimators=("nw", "lc", "ll", "ols", "ridge"),
                         bandwidth_grid=[0.15, 0.3, 0.6], ridge_alpha=0.5)


def test_pinned_numbers():
    r = _study()
    it = r["integrated"]
    assert r["X"].shape == (40, 2) and np.all((r["X"] > 0) & (r["X"] < 1))
    assert list(it.estimator) == ["nw", "lc", "ll", "ols", "ridge"]
    np.testing.assert_array_equal(it.bandwidth.to_numpy(float)[:3], [0.15, 0.15, 0.15])
    assert it.bandwidth[3:].isna().all()
    np.testing.assert_allclose(it.mse, MSE, rtol=1e-10)
    np.testing.assert_allclose(it.bias2[2], 0.11250091277782083, rtol=1e-10)
    np.testing.assert_allclose(it.variance[3], 0.009278636440952774, rtol=1e-10)
    np.testing.assert_allclose(r["eval_points"][:2], [[0.134204188089243, 0.5225733112405555],
                                                      [0.9135435817464888, 0.6584175627643687]],
                               rtol=1e-15)


R_SCRIPT = r"""
suppressMessages(library(attnreg))
mc <- monte_carlo(function(X) sin(2 * pi * X[, 1]) + X[, 2], n = 40, d = 2, R = 6,
                  seed = 2^40 + 7, estimators = c("nw", "lc", "ll", "ols", "ridge"),
                  bw_grid = c(0.15, 0.3, 0.6), lambda = 0.5)
p <- mc$pointwise
cat(sprintf("%.17g", c(mc$integrated$mse, mc$integrated$bias2, mc$integrated$variance,
                       p$bias, p$variance, as.vector(t(mc$eval_points)), as.vector(t(mc$X)))),
    sep = "\n")
"""


def _r_has_attnreg():
    if shutil.which("Rscript") is None:
        return False
    r = subprocess.run(["Rscript", "-e", "cat(requireNamespace('attnreg', quietly = TRUE))"],
                       capture_output=True, text=True, timeout=120)
    return r.stdout.strip().endswith("TRUE")


@pytest.mark.skipif(not _r_has_attnreg(), reason="R or the attnreg R package is not installed")
def test_r_gives_the_same_study():
    out = subprocess.run(["Rscript", "-e", R_SCRIPT], capture_output=True, text=True,
                         timeout=300, env=dict(os.environ))
    assert out.returncode == 0, out.stderr
    got = np.array([float(v) for v in out.stdout.split()])
    r = _study()
    it, p = r["integrated"], r["pointwise"]
    want = np.concatenate([it.mse, it.bias2, it.variance, p.bias, p.variance,
                           r["eval_points"].ravel(), r["X"].ravel()])
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)
