"""diagnose(..., cov_type="nn"): nprobust's nearest-neighbour residual variance (3 neighbours)
against a direct numpy oracle."""
import numpy as np
import pytest

import attnreg
from attnreg.diagnostics import diagnose


def nn_sigma2(x, y, J=3):
    n = len(x)
    out = np.empty(n)
    for i in range(n):
        d = np.abs(x - x[i])
        d[i] = np.inf
        dJ = np.sort(d)[min(J, n - 1) - 1]
        nb = d <= dJ
        out[i] = nb.sum() / (nb.sum() + 1) * (y[i] - y[nb].mean()) ** 2
    return out


@pytest.mark.parametrize("ties", [False, True])
def test_diagnose_nn_standard_errors(ties):
    rng = np.random.default_rng(1)
    x = rng.uniform(size=90)
    if ties:
        x = np.round(x * 12) / 12
    y = np.cos(4 * x) + (0.1 + 0.3 * x) * rng.normal(size=90)
    m = attnreg.LocalLinear(bandwidth=0.15).fit(x.reshape(-1, 1), y)
    Xe = np.array([[0.2], [0.5], [0.8]])
    d = diagnose(m, Xe, cov_type="nn")
    L = m.attention_weights(Xe)
    np.testing.assert_allclose(d["se"], np.sqrt(L ** 2 @ nn_sigma2(x, y)), rtol=1e-12)
    # several regressors: test_rbc_grouped_nn.py (neighbours in d dimensions)
