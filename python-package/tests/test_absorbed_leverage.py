"""HC2/HC3 with two absorbed factors equal statsmodels' on the dummy-variable regression."""
import numpy as np
import pandas as pd
import pytest

import attnreg


@pytest.mark.parametrize("weighted", [False, True])
def test_two_factor_hc2_hc3_match_dummy_ols(weighted):
    sm = pytest.importorskip("statsmodels.api")
    rng = np.random.default_rng(3)
    n = 240
    f = rng.integers(0, 12, n)
    g = rng.integers(0, 5, n)
    X = rng.normal(size=(n, 2)) + 0.3 * f[:, None]
    y = X @ [1.0, -2.0] + f * 0.5 + g + rng.normal(size=n) * (1 + np.abs(X[:, 0]))
    w = rng.uniform(0.3, 2.0, n) if weighted else np.ones(n)
    D = pd.get_dummies(pd.DataFrame({"f": f, "g": g}).astype(str), drop_first=True).astype(float)
    Z = sm.add_constant(np.column_stack([X, D.to_numpy()]))
    for cov in ("HC2", "HC3"):
        ref = sm.WLS(y, Z, weights=w).fit(cov_type=cov)
        m = attnreg.OLS(cov_type=cov).fit(X, y, w if weighted else None,
                                          absorb=pd.DataFrame({"f": f, "g": g}))
        np.testing.assert_allclose(m.coef_, ref.params[1:3], rtol=1e-9)
        np.testing.assert_allclose(m.coef_se_, ref.bse[1:3], rtol=1e-8)
