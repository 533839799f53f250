"""attnreg.dask.loo_cv equals the in-memory cv_score_ to 1e-12 relative for any chunking and
for data far from the origin (the partial moments are centred at each query, so a shift of
the data does not cost digits, and merging blocks only adds them)."""
from __future__ import annotations

import numpy as np
import pytest

import attnreg

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")
import attnreg.dask as adk  # noqa: E402


@pytest.mark.parametrize("seed", [0])
@pytest.mark.parametrize("d", [1, 2])
@pytest.mark.parametrize("shift", [0.0, 1e5])
def test_loo_cv_equals_cv_score_for_every_chunking_and_shift(seed, d, shift):
    rng = np.random.default_rng(seed)
    n = 300
    X = rng.uniform(-1, 1, (n, d)) + shift
    y = np.sin(3 * (X - shift).sum(axis=1)) + 5 + rng.normal(0, 0.3, n)
    with dask.config.set(scheduler="synchronous"):
        for degree, Est in ((0, attnreg.NadarayaWatson), (1, attnreg.LocalLinear)):
            for h in (0.3, 2.0):
                ref = Est(bandwidth=h).fit(X, y).cv_score_
                for chunk in (n, 299, 100, 37):
                    got = adk.loo_cv(da.from_array(X, chunks=(chunk, d)),
                                     da.from_array(y, chunks=chunk), bandwidth=h,
                                     degree=degree)
                    assert abs(got - ref) <= 1e-12 * ref, (degree, h, chunk, got, ref)
