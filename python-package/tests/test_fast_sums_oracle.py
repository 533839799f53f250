"""One continuous regressor with a compact kernel takes the exact fast-sum path (sorted windows of
running moment sums) from 64 rows on. Its fitted values, leverages, leave-one-out fits,
predictions, cv_ls objective and h-gradient must equal a direct all-pairs float64 computation
to 1e-10 (relative), on awkward data: ties, tight clusters, windows of a few points, a bandwidth
far above the range, an origin shifted to 1e6, observation weights, and two outputs."""
import numpy as np
import pytest

import attnreg
from attnreg.bandwidth import bandwidth_objective
from test_kernel import kdens  # the kernels written out (the oracle's)

COMPACT = ["epanechnikov", "uniform", "triangular", "biweight", "triweight", "tricube", "cosine"]
TOL = 1e-10


def kern(name, u):
    return kdens(name, u)


def local_fit(x, Y, h, q, kernel, degree, sw, drop=None):
    """Weighted least squares at q over all rows (row `drop` left out); the fit and L(q)'s row."""
    w = kern(kernel, (x - q) / h) * sw
    if drop is not None:
        w = w.copy()
        w[drop] = 0.0
    D = np.ones((len(x), 1)) if degree == 0 else np.column_stack([np.ones(len(x)), x - q])
    A = D.T @ (D * w[:, None])
    row = np.linalg.solve(A, (D * w[:, None]).T)[0]
    return row @ Y, row


def oracle(x, Y, h, kernel, degree, sw):
    n = len(x)
    fit, lev, loo = np.empty_like(Y), np.empty(n), np.empty_like(Y)
    for i in range(n):
        fit[i], row = local_fit(x, Y, h, x[i], kernel, degree, sw)
        lev[i] = row[i]
        loo[i], _ = local_fit(x, Y, h, x[i], kernel, degree, sw, drop=i)
    return fit, lev, loo


def data(case, seed):
    rng = np.random.default_rng(seed)
    n = {"ties": 300, "clusters": 240, "narrow": 200, "wide": 150, "shifted": 400,
         "weighted": 180, "two_outputs": 160}[case]
    x = rng.uniform(0, 1, n)
    h = 0.21
    sw = np.ones(n)
    if case == "ties":
        x = np.round(x * 25) / 25          # 26 distinct values, about 12 rows each
    elif case == "clusters":
        x = np.concatenate([rng.normal(0, 1e-3, n // 2), rng.normal(5, 1e-3, n - n // 2)])
        h = 0.0137                           # each cluster its own window
    elif case == "narrow":
        x = np.sort(x)
        gaps = np.diff(np.unique(x))
        # wider than every run of three gaps, so each leave-one-out window keeps two other
        # distinct points, yet windows hold only a handful of rows
        h = 1.01 * np.max(gaps[:-2] + gaps[1:-1] + gaps[2:])
        x = rng.permutation(x)
    elif case == "wide":
        h = 123.4                            # every row in every window: a global polynomial
    elif case == "shifted":
        x = 1e6 + x
    elif case == "weighted":
        sw = rng.uniform(0.1, 3.0, n)
    y = np.sin(2 * np.pi * x) + 0.3 * rng.normal(size=n)
    Y = np.column_stack([y, np.cos(x) + rng.normal(size=n)]) if case == "two_outputs" else y
    return x, Y, h, sw


def close(a, b, what):
    scale = 1.0 + np.abs(b)
    err = np.max(np.abs(a - b) / scale)
    assert err <= TOL, f"{what}: largest relative difference {err:.3g}"


CASES = ["ties", "clusters", "narrow", "wide", "shifted", "weighted", "two_outputs"]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("kernel", COMPACT)
@pytest.mark.parametrize("degree", [0, 1])
def test_fit_leverage_loo_predict_equal_all_pairs(case, kernel, degree):
    x, Y, h, sw = data(case, seed=COMPACT.index(kernel) + 10 * CASES.index(case))
    Est = attnreg.LocalLinear if degree == 1 else attnreg.NadarayaWatson
    kw = {} if case != "weighted" else {"sample_weight": sw}
    m = Est(kernel=kernel, bandwidth=h).fit(x[:, None], Y, **kw)
    fit, lev, loo = oracle(x, Y, h, kernel, degree, sw)
    close(m.fitted_values(), fit, "fitted values")
    close(m.leverage_, lev, "leverages")
    close(m.loo_predictions(), loo, "leave-one-out fits")
    xs = np.sort(x)
    q = xs[(np.array([0.05, 0.3, 0.5, 0.77, 0.95]) * len(x)).astype(int)] + 0.1 * h  # in windows
    pred = np.array([local_fit(x, Y, h, qq, kernel, degree, sw)[0] for qq in q])
    close(m.predict(q[:, None]), pred, "predictions")


@pytest.mark.parametrize("case", ["ties", "clusters", "narrow", "shifted", "weighted"])
@pytest.mark.parametrize("kernel", ["epanechnikov", "biweight", "tricube", "cosine"])
@pytest.mark.parametrize("est", ["ll", "lc"])
def test_cv_objective_and_gradient_equal_all_pairs(case, kernel, est):
    x, y, h, sw = data(case, seed=7 + CASES.index(case))
    degree = 1 if est == "ll" else 0
    kw = {} if case != "weighted" else {"sample_weight": sw}
    cv, grad = bandwidth_objective(x[:, None], y, [h], est, "cv_ls", kernel=kernel, **kw)
    _, _, loo = oracle(x, y, h, kernel, degree, sw)
    e2 = (y - loo) ** 2
    cv0 = np.sum(sw * e2) / np.sum(sw)
    assert abs(cv - cv0) <= TOL * cv0
    # d CV / d log h by central differences of the all-pairs oracle: a small step, so that no
    # kink of a compact kernel's objective (a point entering a window) is likely to fall inside
    # it; the difference's rounding error is ~eps / step relative, far below the tolerance
    step = 1e-7
    vals = []
    for s in (step, -step):
        _, _, l2 = oracle(x, y, h * np.exp(s), kernel, degree, sw)
        vals.append(np.sum(sw * (y - l2) ** 2) / np.sum(sw))
    fd = (vals[0] - vals[1]) / (2 * step)
    assert abs(grad[0] - fd) <= 1e-6 * (abs(fd) + cv0)


def test_the_fast_path_is_taken_and_agrees_with_the_pair_loop_below_it():
    # 63 rows keep the pair loop, 64 take the fast sums: both equal the oracle, so the switch
    # is invisible to the user.
    rng = np.random.default_rng(3)
    for n in (63, 64):
        x = rng.uniform(size=n)
        y = x ** 2 + 0.1 * rng.normal(size=n)
        m = attnreg.LocalLinear(kernel="epanechnikov", bandwidth=0.3).fit(x[:, None], y)
        fit, lev, loo = oracle(x, y, 0.3, "epanechnikov", 1, np.ones(n))
        close(m.fitted_values(), fit, f"n = {n} fitted")
        close(m.loo_predictions(), loo, f"n = {n} loo")
