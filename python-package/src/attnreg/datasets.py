"""Data sets shipped with attnreg.

``load_senate``: the US Senate elections data of Cattaneo, Frandsen and Titiunik (2015,
"Randomization inference in the regression discontinuity design: an application to party
advantages in the U.S. Senate", Journal of Causal Inference 3(1), 1-24), as distributed with the
rdpackages rdrobust software (https://github.com/rdpackages/rdrobust, file
``rdrobust_senate.csv``; public).
"""
from __future__ import annotations

from importlib import resources

__all__ = ["load_senate"]


def load_senate():
    """The US Senate elections data (1,390 elections, 1914-2010; 17 columns).

    Each row is a Senate seat's election: ``margin`` is the Democratic margin of victory at
    election t (the running variable, in percentage points; cutoff 0), ``vote`` the Democratic
    vote share at election t + 2 as rdrobust documents it (the outcome, in percent; missing for
    93 rows), ``state`` and
    ``year``, and the covariates of Cattaneo, Frandsen and Titiunik (2015): ``class``,
    ``termshouse``, ``termssenate``, ``dopen``, ``population``, ``presdemvoteshlag1``,
    ``demvoteshlag1``, ``demvoteshlag2``, ``demvoteshfor1``, ``demwinprv1``, ``demwinprv2``,
    ``dmidterm``, ``dpresdem``.

    Source: Cattaneo, Frandsen and Titiunik (2015), Journal of Causal Inference 3(1), 1-24, as
    shipped with rdrobust (Calonico, Cattaneo, Farrell and Titiunik 2017, Stata Journal 17(2)).

    Returns
    -------
    pandas.DataFrame
    """
    import pandas as pd

    with resources.files("attnreg").joinpath("data/senate.csv").open("r") as f:
        return pd.read_csv(f)
