"""OLS.fit's tall-design path: the fit of a tall design (n >= 20,000, n >= 50 q) in three passes
over X read in place (core/src/least_squares/ols_tall.cpp), with the full QR state formed lazily.

The tall path gives the coefficients, residual statistics, the coefficient table and the
covariance of the fitted ``cov_type``. The core OLS model (the compact n x q QR factor behind
``q1``-based methods: attention weights, factors, hat diagonal, HAC or clustered covariances
asked after the fit, ``summary``) is fitted on first use from a reference to the training data
(no copy), after which the reference is dropped.
"""

from __future__ import annotations

import numpy as np

from . import _core

TALL_COV_TYPES = ("nonrobust", "HC0", "HC1", "HC2", "HC3")


def tall_fit(est, X, y2, w, ct: str, wt: str):
    """Run the tall path; None where it does not apply (OLS.fit's QR path is taken instead)."""
    if not getattr(est, "_use_tall", True) or ct not in TALL_COV_TYPES or y2.shape[1] != 1:
        return None
    if str(est.precision) not in ("auto", "double"):
        return None
    return _core._ols_tall(X, y2[:, 0], w, fit_intercept=bool(est.fit_intercept), cov_type=ct,
                           rank_tol=float(est.rank_tol), weight_type=wt,
                           double_precision=str(est.precision) == "double")


def build_core_model(est, X, y2, w, ct: str, wt: str):
    """The core OLS model as OLS.fit's QR path builds it."""
    model = _core.OLS(
        bool(est.fit_intercept), float(est.rank_tol), int(est.n_threads),
        str(est.precision), weight_type=wt,
        prepare_q1=ct != "nonrobust",  # robust covariances need Q_1 right away
    )
    model.fit(np.asfortranarray(X), np.asfortranarray(y2), w)
    return model


def core_model(est):
    """``est``'s core model, fitted now from the kept training data if the tall path deferred it."""
    d = est.__dict__
    m = d.get("_core_model", d.get("_model"))  # "_model": objects pickled by earlier versions
    if m is not None:
        return m
    lazy = d.get("_lazy_fit")
    if lazy is None:
        raise AttributeError("_model")
    m = build_core_model(est, *lazy)
    # the calls OLS.fit's QR path makes after its fit (the core caches what they form, and
    # later results are computed from those caches: bitwise the same object as that path's)
    m.inference(*est._cov_args(lazy[3]))
    d.setdefault("_eigenvalues", m.eigenvalues())
    d["_core_model"] = m
    del d["_lazy_fit"]  # the QR state holds what is needed from now on
    return m


def cached(est, ct: str, what: str):
    """The tall fit's covariance ("cov") or standard errors ("se") when the (checked) cov_type
    ``ct`` is the type they were computed for; else None."""
    tall = est.__dict__.get("_tall")
    return tall[what] if tall is not None and ct == tall["cov_type"] else None


def predict(est, X):
    """d(x)' b with aliased coefficients left out (as the core's predict)."""
    b = np.where(est.aliased_[1:] if est.fit_intercept else est.aliased_, 0.0, est.coef_)
    ic = est.intercept_ if est.fit_intercept and not est.aliased_[0] else 0.0
    return np.asarray(X, dtype=np.float64) @ b + ic
