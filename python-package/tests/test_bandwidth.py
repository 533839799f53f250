"""Direct plug-in bandwidth against KernSmooth::dpill fixtures (tests/fixtures/dpill.csv)."""
import numpy as np
import pandas as pd
import pytest

import attnreg

FIX = __import__("pathlib").Path(__file__).resolve().parents[2] / "tests" / "fixtures"


def test_dpi_matches_kernsmooth_dpill(data_dir):
    ref = pd.read_csv(FIX / "dpill.csv").set_index("dataset")["dpill"]
    s = pd.read_csv(FIX / "sine500.csv")
    e = pd.read_csv(data_dir / "engel.csv")
    cps = pd.read_csv(data_dir / "cps1988.csv")
    assert attnreg.bandwidth.dpi(s.x, s.y).bandwidth == pytest.approx(ref["sine500"], rel=1e-9)
    assert attnreg.bandwidth.dpi(e.income, e.foodexp).bandwidth == pytest.approx(ref["engel"], rel=1e-9)
    h = attnreg.bandwidth.dpi(cps.experience, np.log(cps.wage)).bandwidth
    assert h == pytest.approx(ref["cps1988_experience_logwage"], rel=1e-9)
    hu = attnreg.bandwidth.dpi(cps.experience, np.log(cps.wage), binned=False).bandwidth
    assert hu == pytest.approx(h, rel=1e-2)


def test_dpi_errors_name_the_argument():
    with pytest.raises(ValueError, match="y: has 4 values but x has 5"):
        attnreg.bandwidth.dpi(np.arange(5.0), np.arange(4.0))
    x = np.linspace(0, 1, 60)
    with pytest.raises(attnreg.NumericalError, match="^dpi: "):  # no curvature: a pilot fails
        attnreg.bandwidth.dpi(x, 2 * x + 1)
    with pytest.raises(ValueError, match="NaN"):
        attnreg.bandwidth.dpi(np.r_[x[:-1], np.nan], x)
