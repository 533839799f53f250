"""The core's distribution functions (Boost.Math), which the summaries and intervals use,
against scipy.stats over a grid with tails and df from 1 to 1e6."""
import math

import numpy as np
import pytest

from attnreg import _core

stats = pytest.importorskip("scipy.stats")


def rel(a, b):
    return abs(a - b) / abs(b)


@pytest.mark.parametrize("df", [1.0, 2.0, 3.5, 10.0, 100.0, 1e6])
def test_t_tail_and_quantile_equal_scipy(df):
    for t in np.concatenate([-np.logspace(-3, 2, 8), np.logspace(-3, 3, 13)]):
        want = stats.t.sf(t, df)
        if want > 1e-300:
            assert rel(_core.student_t_sf(float(t), df), want) < 1e-13, t
    for p in [1e-12, 1e-4, 0.025, 0.3, 0.975, 1 - 1e-10]:
        assert rel(_core.student_t_quantile(p, df), stats.t.ppf(p, df)) < 1e-12, p
    # Near the centre scipy's t.ppf loses digits (1e-8 relative at p = 0.5 + 1e-9): check
    # against the Cauchy quantile tan(pi (p - 1/2)) instead (p - 1/2 is exact in floating point).
    p = 0.5 + 1e-9
    assert rel(_core.student_t_quantile(p, 1.0), math.tan(math.pi * (p - 0.5))) < 1e-11
    assert math.isnan(_core.student_t_quantile(0.3, 0.0))


def test_normal_quantile_equals_scipy():
    for p in [1e-300, 1e-20, 1e-5, 0.025, 0.4, 0.6, 0.975, 1 - 1e-12]:
        assert rel(_core.normal_quantile(p), stats.norm.ppf(p)) < 1e-14, p
    assert _core.student_t_quantile(0.975, math.inf) == _core.normal_quantile(0.975)


def test_f_tail_equals_high_precision():
    # Against 40-digit mpmath (scipy's f.sf is off by 5e-12 at f = 3, df = (10, 1e6)):
    # P(F > f) = I_x(d2/2, d1/2), x = d2 / (d2 + d1 f).
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 40
    for d1, d2 in [(1, 1), (2, 5), (3, 40), (10, 1e6)]:
        for f in [1e-3, 0.5, 1.0, 3.0, 30.0, 1e3]:
            x = mp.mpf(d2) / (mp.mpf(d2) + d1 * mp.mpf(f))
            want = float(mp.betainc(mp.mpf(d2) / 2, mp.mpf(d1) / 2, 0, x, regularized=True))
            if want > 1e-300:
                assert rel(_core.fisher_f_sf(f, d1, d2), want) < 1e-13, (f, d1, d2)


def test_partially_linear_p_values_from_the_core():
    import attnreg

    rng = np.random.default_rng(3)
    n = 120
    Z = rng.uniform(size=(n, 1))
    X = rng.normal(size=(n, 2))
    y = X @ np.array([0.3, -0.05]) + np.cos(3 * Z[:, 0]) + 0.5 * rng.normal(size=n)
    m = attnreg.PartiallyLinear(bandwidth=np.array([[0.15], [0.15], [0.15]])).fit(X, y, Z=Z)
    tab = m.coef_table()
    df = n - 2 - 1
    want = 2 * stats.t.sf(np.abs(tab["t_value"].to_numpy()), df)
    np.testing.assert_allclose(tab["p_value"].to_numpy(), want, rtol=1e-12)
