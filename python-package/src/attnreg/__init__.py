"""attnreg: kernel regression and least squares with their attention forms.

Every estimator here is linear in the responses, m(x) = sum_i l_i(x) y_i; the rows l(x) are the
attention weights over the training rows and are exposed by ``attention_weights``. Nadaraya-Watson
with a Gaussian kernel is softmax attention; local-linear regression is Local Linear Attention;
OLS predictions are attention with weights X_test (X'X)^{-1} X_train'.

Data layout: one observation per row (numpy ``(n, p)`` arrays or pandas DataFrames).
"""
from __future__ import annotations

from . import _core
from ._core import NumericalError
from .linear import OLS, PCR, AttentionRegression, NoResidualDFWarning, Ridge, pseudo_out_of_sample
from .kernel import LocalLinear, NadarayaWatson, kernel_constants
from . import attention
from . import bandwidth
from . import plot
from .bandwidth import BandwidthResult, BoundaryWarning, select_bandwidth
from . import diagnostics
from ._progress import show_progress
from ._summary import RegressionSummary
from .formula import kreg, ols, ridge

# The version is compiled in from the repository's VERSION file (as the wheel metadata and the R
# package are), so a checkout run from src/ and an installed wheel report the same number.
__version__: str = _core.build_info()["version"]


def build_info() -> dict:
    """Describe this build: version, OpenMP threads, BLAS, CUDA compiled in, GPUs visible."""
    return dict(_core.build_info())


__all__ = ["OLS", "Ridge", "PCR", "AttentionRegression", "pseudo_out_of_sample", "NadarayaWatson", "LocalLinear", "kernel_constants", "NumericalError", "build_info", "__version__", "select_bandwidth", "BandwidthResult"]
__all__ += ["show_progress"]
__all__ += ["NoResidualDFWarning"]
__all__ += ["BoundaryWarning"]
from .semiparametric import LocalPolynomial, PartiallyLinear, SmoothCoefficient  # noqa: E402
__all__ += ["LocalPolynomial", "PartiallyLinear", "SmoothCoefficient"]
from .density import KernelDensity, ConditionalDensity, ConditionalDistribution, ConditionalQuantile
__all__ += ["KernelDensity", "ConditionalDensity", "ConditionalDistribution", "ConditionalQuantile"]
from .effects import marginal_effects  # noqa: E402
__all__ += ["marginal_effects"]
__all__ += ["ols", "ridge", "kreg", "RegressionSummary"]
