"""attnreg: kernel regression and least squares with their attention forms.

Every estimator here is linear in the responses, m(x) = sum_i l_i(x) y_i; the rows l(x) are the
attention weights over the training rows and are exposed by ``attention_weights``. Nadaraya-Watson
with a Gaussian kernel is softmax attention; local-linear regression is Local Linear Attention;
OLS predictions are attention with weights X_test (X'X)^{-1} X_train'.

Data layout: one observation per row (numpy ``(n, p)`` arrays or pandas DataFrames).
"""
from __future__ import annotations

import importlib as _importlib
import typing as _typing

# Loaded by `import attnreg`: the compiled core and the modules that need nothing heavier than
# numpy (pandas, matplotlib, tqdm are imported inside their functions).
from . import _core
from ._core import NumericalError
from . import attention
from . import bandwidth
from . import plot
from .bandwidth import BandwidthResult, BoundaryWarning, select_bandwidth
from . import diagnostics
from ._progress import show_progress
from ._summary import RegressionSummary
# Loaded by attnreg.diagnostics, which re-exports their functions; public modules by topic.
from . import montecarlo
from . import spectests

if _typing.TYPE_CHECKING:  # pragma: no cover - what type checkers and IDEs see for the lazy names
    from . import cluster_inference, dask, density, effects, formula, instrumental, kernel, linear
    from . import rd, semiparametric, torch
    from .density import ConditionalDensity, ConditionalDistribution, ConditionalQuantile
    from .density import KernelDensity
    from .effects import marginal_effects
    from .effects import level_difference
    from .formula import kreg, ols, ridge
    from .kernel import LocalLinear, NadarayaWatson, kernel_constants
    from .linear import OLS, PCR, AttentionRegression, NoResidualDFWarning, Ridge
    from .linear import pseudo_out_of_sample
    from .cluster_inference import WildBootstrapResult, ssc, wild_bootstrap
    from .semiparametric import LocalPolynomial, PartiallyLinear, SmoothCoefficient
    from .instrumental import IV2SLS, IVLIML, WeakInstrumentWarning, iv

# The version is compiled in from the repository's VERSION file (as the wheel metadata and the R
# package are), so a checkout run from src/ and an installed wheel report the same number.
__version__: str = _core.build_info()["version"]


def build_info() -> dict:
    """Describe this build: version, OpenMP threads, BLAS, CUDA compiled in, GPUs visible."""
    return dict(_core.build_info())


__all__ = ["OLS", "Ridge", "PCR", "AttentionRegression", "pseudo_out_of_sample", "NadarayaWatson",
           "LocalLinear", "kernel_constants", "NumericalError", "build_info", "__version__",
           "select_bandwidth", "BandwidthResult", "show_progress", "NoResidualDFWarning",
           "BoundaryWarning", "LocalPolynomial", "PartiallyLinear", "SmoothCoefficient",
           "KernelDensity", "ConditionalDensity", "ConditionalDistribution", "ConditionalQuantile",
           "marginal_effects", "ols", "ridge", "kreg", "RegressionSummary",
           "ssc", "wild_bootstrap", "WildBootstrapResult",
           "iv", "IV2SLS", "IVLIML", "WeakInstrumentWarning",
           "level_difference"]

# Loaded on first use (PEP 562 module __getattr__, as SciPy does): the estimators subclass
# scikit-learn's BaseEstimator, so their modules import scikit-learn (and with it SciPy), about
# a second; `attnreg.OLS` or `from attnreg import OLS` imports attnreg.linear then. The classes
# keep their modules (attnreg.linear.OLS, ...): pickles and isinstance checks are unchanged.
# Public name -> the submodule that defines it. python-package/tests/test_import_graph.py reads
# this table as imports of __init__; test_import_time.py checks what `import attnreg` loads.
_lazy_attributes = {
    "OLS": "linear", "Ridge": "linear", "PCR": "linear", "AttentionRegression": "linear",
    "pseudo_out_of_sample": "linear", "NoResidualDFWarning": "linear",
    "NadarayaWatson": "kernel", "LocalLinear": "kernel", "kernel_constants": "kernel",
    "LocalPolynomial": "semiparametric", "PartiallyLinear": "semiparametric",
    "SmoothCoefficient": "semiparametric",
    "KernelDensity": "density", "ConditionalDensity": "density",
    "ConditionalDistribution": "density", "ConditionalQuantile": "density",
    "marginal_effects": "effects",
    "level_difference": "effects",
    "ols": "formula", "ridge": "formula", "kreg": "formula",
    "ssc": "cluster_inference", "wild_bootstrap": "cluster_inference",
    "WildBootstrapResult": "cluster_inference",
    "iv": "instrumental", "IV2SLS": "instrumental", "IVLIML": "instrumental",
    "WeakInstrumentWarning": "instrumental",
}
# Submodules reachable as attributes of the package without importing them first
# (`attnreg.linear`, `attnreg.dask`, `attnreg.torch`, which needs PyTorch). Those loaded above
# are plain attributes already.
_lazy_submodules = {
    "linear", "kernel", "semiparametric", "density", "effects", "formula", "dask", "torch",
    "_absorb", "_encoding", "_ols_tall", "_validation",
    "cluster_inference",
    "instrumental",
    "rd",  # regression discontinuity (rdrobust, rdbwselect, rddensity, rdplot)
    "datasets",  # data sets shipped with the package (load_senate)
}


def __getattr__(name: str) -> _typing.Any:
    if name in _lazy_attributes:
        module = _importlib.import_module(f"{__name__}.{_lazy_attributes[name]}")
        value = getattr(module, name)
        globals()[name] = value  # later look-ups skip this function
        return value
    if name in _lazy_submodules:
        # The import binds the submodule as an attribute of this package.
        return _importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    # Everything loaded, every public name, and the public submodules not loaded yet (not
    # attnreg.torch, which needs PyTorch: tools that getattr every name of dir() would fail).
    return sorted(set(globals()) | set(__all__)
                  | {m for m in _lazy_submodules if not m.startswith("_") and m != "torch"})
