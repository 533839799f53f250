"""The kernel keywords reach the core through the one converter of the bindings (kernel_spec in
bindings/python/py_options.cpp): through every entry point that takes them, each keyword set to a
value the computation rejects is rejected naming it, and a valid non-default kernel or
categorical kernel changes the numbers. A keyword the binding dropped (the core's default ran
instead) makes the matching check fail."""
import numpy as np
import pytest

from attnreg import _core

rng = np.random.default_rng(20261128)
N = 60
Z = np.column_stack([rng.normal(size=N), rng.integers(0, 3, N), rng.integers(0, 4, N)]).astype(float)
X = rng.normal(size=(N, 2)) + 0.3 * Z[:, :1]
y = np.sin(Z[:, 0]) + 0.3 * Z[:, 1] - 0.2 * Z[:, 2] + X @ [1.0, -0.5] + 0.3 * rng.normal(size=N)
BW = np.array([1.5, 0.3, 0.4])
Zc = Z[:, :1].copy()

BASE = dict(kernel="gaussian", unordered_kernel="aitchison_aitken", ordered_kernel="li_racine",
            n_threads=0)


def _lp(kw):
    m = _core.LocalPolynomial(degree=1, ridge=0.0, compute_fitted=True, **kw)
    m.fit(Z, y, BW, None)
    return np.concatenate([m.predict(Z[:10]).ravel(), m.loo_fitted().ravel()])


def _select(kw):
    return _core.select_bandwidth(Z, y, 0, "cv_ls", kw["kernel"], kw["var_types"],
                                  kw["unordered_kernel"], kw["ordered_kernel"], 0.0, 1, 0, 0, 0,
                                  kw["n_threads"])["bandwidth"]


def _objective(kw):
    return np.array([_core.bandwidth_objective(Z, y, BW, 1, "cv_ls", kw["kernel"], kw["var_types"],
                                               kw["unordered_kernel"], kw["ordered_kernel"], 0.0,
                                               False)[0]])


def _select_lp(kw):
    return _core.select_local_polynomial_bandwidth(Z, y, 2, "cv_ls", kw["kernel"], kw["var_types"],
                                                   kw["unordered_kernel"], kw["ordered_kernel"],
                                                   0.0, 1, 0, 0, kw["n_threads"])["bandwidth"]


def _plm(kw):
    m = _core.PartiallyLinear(0, kw["kernel"], kw["var_types"], kw["unordered_kernel"],
                              kw["ordered_kernel"], "cv_ls", 1, kw["n_threads"])
    m.fit(X, y, Z, np.tile(BW, (3, 1)))
    return np.concatenate([m.coefficients(), m.fitted()])


def _scoef(kw):
    m = _core.SmoothCoefficient(kw["kernel"], kw["var_types"], kw["unordered_kernel"],
                                kw["ordered_kernel"], True, kw["n_threads"])
    m.fit(X, y, Z, BW)
    return m.fitted()


def _scoef_select(kw):
    return _core.select_smooth_coefficient_bandwidth(
        X, y, Z, kw["kernel"], kw["var_types"], kw["unordered_kernel"], kw["ordered_kernel"],
        True, kw["n_threads"], 1, 0)["bandwidth"]


def _spec(kw):
    r = _core.specification_test(X, y, Z, kw["var_types"], kw["kernel"], kw["unordered_kernel"],
                                 kw["ordered_kernel"], BW, 0, 19, "mammen", 1, kw["n_threads"], 0)
    return np.concatenate([[r["statistic"]], r["draws"]])


def _partial(kw):
    p = _core.local_partial(Zc, y[:, None], Zc[:10], np.array([1.5]), 1, kw["kernel"],
                            kw.get("algorithm", "auto"), kw.get("truncation", 1e-16), None, None,
                            kw["n_threads"], "X_new")
    return np.concatenate([np.ravel(p["A"]), np.ravel(p["T"])])


def _tradeoff(kw):
    d = _core.tradeoff_curve(Zc, y, np.array([1.5, 2.0]), 1, kw["kernel"], 0.0, Zc[:5], "const",
                             -1, 3.0, kw["n_threads"])
    return np.concatenate([np.ravel(v) for v in d.values()])


# name, function, takes categorical columns, keywords it takes beyond BASE
PATHS = [
    ("LocalPolynomial", _lp, True, ("var_types", "algorithm", "truncation")),
    ("select_bandwidth", _select, True, ("var_types",)),
    ("bandwidth_objective", _objective, True, ("var_types",)),
    ("select_local_polynomial_bandwidth", _select_lp, True, ("var_types",)),
    ("PartiallyLinear", _plm, True, ("var_types",)),
    ("SmoothCoefficient", _scoef, True, ("var_types",)),
    ("select_smooth_coefficient_bandwidth", _scoef_select, True, ("var_types",)),
    ("specification_test", _spec, True, ("var_types",)),
    ("local_partial", _partial, False, ("algorithm", "truncation")),
    ("tradeoff_curve", _tradeoff, False, ()),
]


def _base(categorical, extra):
    kw = dict(BASE)
    if "var_types" in extra or categorical:
        kw["var_types"] = "cuo" if categorical else "c"
    if "algorithm" in extra:
        kw["algorithm"] = "auto"
        kw["truncation"] = 1e-16
    return kw


@pytest.mark.parametrize("name,run,categorical,extra", PATHS, ids=[p[0] for p in PATHS])
def test_every_kernel_keyword_reaches_the_core(name, run, categorical, extra):
    base = _base(categorical, extra)
    r0 = run(base)
    assert np.any(np.isfinite(r0))
    # Every entry point that takes the kernel: a non-default one changes the numbers.
    assert not np.array_equal(run({**base, "kernel": "epanechnikov"}), r0, equal_nan=True)
    if "n_threads" in base and name != "bandwidth_objective":
        with pytest.raises(ValueError, match=r"^n_threads:"):
            run({**base, "n_threads": -1})
    if "var_types" in extra:
        with pytest.raises(ValueError, match=r"^var_types:"):
            run({**base, "var_types": "cuz" if categorical else "z"})
    if "algorithm" in extra:  # the Gaussian has no neighbour path without truncation
        with pytest.raises(ValueError, match=r"^algorithm:"):
            run({**base, "algorithm": "neighbors", "truncation": 0.0})
        with pytest.raises(ValueError, match=r"^truncation:"):
            run({**base, "truncation": 0.5})
    if categorical:
        assert not np.array_equal(run({**base, "unordered_kernel": "li_racine"}), r0, equal_nan=True)
        assert not np.array_equal(run({**base, "ordered_kernel": "wang_van_ryzin"}), r0,
                                  equal_nan=True)
