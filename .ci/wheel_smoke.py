"""Smoke test of an attnreg installed from the binary wheel (run by .ci/wheel-test.sh in a bare
Debian root, from outside the checkout): metadata, version, and a few fits.
    python wheel_smoke.py VERSION_FILE"""
import importlib.metadata as md
import pathlib
import sys

import numpy as np

import attnreg

version = pathlib.Path(sys.argv[1]).read_text().strip()  # the checkout's VERSION file
assert "site-packages" in attnreg.__file__, f"imported from {attnreg.__file__}, not the install"
assert attnreg.__version__ == version == md.version("attnreg"), (attnreg.__version__, version)
meta = md.metadata("attnreg")
assert meta["License-Expression"] == "MIT", meta["License-Expression"]
assert any(p.startswith("Issues, ") for p in meta.get_all("Project-URL")), meta.get_all("Project-URL")

ols = attnreg.OLS().fit(np.c_[np.arange(5.0)], 2 * np.arange(5.0) + 1)
np.testing.assert_allclose([ols.intercept_, *ols.coef_], [1.0, 2.0], atol=1e-12)
A = ols.attention_weights(np.c_[np.arange(5.0)])
np.testing.assert_allclose(A @ (2 * np.arange(5.0) + 1), ols.predict(np.c_[np.arange(5.0)]), atol=1e-12)

rng = np.random.default_rng(1)
X = rng.uniform(size=(300, 1))
f = np.sin(2 * np.pi * X[:, 0])
ll = attnreg.LocalLinear(bandwidth="cv_ls").fit(X, f + 0.1 * rng.standard_normal(300))
rmse = float(np.sqrt(np.mean((ll.predict(X) - f) ** 2)))
assert 0 < ll.bandwidth_[0] < 0.2 and rmse < 0.05, (ll.bandwidth_, rmse)
print(f"wheel install OK: attnreg {attnreg.__version__}, cv_ls h = {ll.bandwidth_[0]:.4f}, "
      f"RMSE {rmse:.4f}; build_info: {attnreg.build_info()}")
