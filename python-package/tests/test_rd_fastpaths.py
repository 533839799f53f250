"""The fast paths of attnreg.rd.rdrobust against its direct paths, to the last bit.

* The sort: x already ascending (no radix pass), strictly descending (reversed), and in random
  order (radix passes) must give the same estimate, bandwidths and attention weights (permuted
  with the rows) when x has no ties: the sorted data are then the same whatever the input order.
* Windows and nearest neighbours: without unit weights the windows are found by binary search
  and the nearest-neighbour residuals come from the side's; unit weights of 1 take the direct
  paths (every row's weight tested, window-local residuals). The arithmetic is the same, so
  every number must be equal: on grids where rows sit exactly at the window edges and at the
  cutoff, with mass points, clusters, covariates, fuzzy designs and every kernel.
"""
import warnings

import numpy as np
import pytest

import attnreg.rd as rd


def _numbers(r):
    out = [r.table.to_numpy().ravel(), np.array(list(r.bandwidths.values())),
           np.array([r.n_effective["left"], r.n_effective["right"]], float)]
    if r.first_stage is not None:
        out.append(r.first_stage.to_numpy().ravel())
    if r.coef_covs is not None:
        out.append(r.coef_covs.to_numpy())
    return np.concatenate(out)


def _design(seed, n, c=0.0):
    g = np.random.default_rng(seed)
    x = c + g.uniform(-1, 1, n)
    y = 1 + (x - c) - 0.5 * (x - c) ** 2 + 0.5 * (x >= c) + g.normal(0, 0.5, n)
    return g, x, y


@pytest.mark.parametrize("seed,n,c", [(1, 300, 0.0), (2, 2000, 0.0), (3, 5000, 1e4),
                                       (4, 800, -2.5)])
@pytest.mark.parametrize("kw", [{}, {"p": 2}, {"vce": "hc3"}, {"h": 0.4, "b": 0.6},
                                {"bwselect": "msetwo"}, {"kernel": "uniform"}])
def test_input_order_does_not_change_anything(seed, n, c, kw):
    g, x, y = _design(seed, n, c)
    assert np.unique(x).size == n  # no ties: the sorted data do not depend on the input order
    orders = {"random": np.arange(n), "ascending": np.argsort(x, kind="stable"),
              "descending": np.argsort(x, kind="stable")[::-1]}
    ref = None
    for name, o in orders.items():
        r = rd.rdrobust(y[o], x[o], c=c, **kw)
        a = np.empty(n)
        a[o] = r.attention_weights().weights  # back in the random order's rows
        got = (_numbers(r), a)
        if ref is None:
            ref = got
            continue
        np.testing.assert_array_equal(got[0], ref[0], err_msg=name)
        np.testing.assert_array_equal(got[1], ref[1], err_msg=name)


def _grid_design(seed, n, c, step):
    """x on a grid of width `step` around c: ties everywhere, rows exactly at c and at h."""
    g = np.random.default_rng(seed)
    x = c + step * g.integers(-40, 41, n)
    y = np.sin(x - c) + 0.3 * (x >= c) + g.normal(0, 0.3, n)
    t = ((x >= c) * 0.5 + g.uniform(0, 1, n) > 0.6).astype(float)
    z = np.column_stack([g.normal(size=n), 0.2 * y + g.normal(size=n)])
    cl = g.integers(0, 25, n)
    return x, y, t, z, cl


@pytest.mark.parametrize("kernel", ["triangular", "epanechnikov", "uniform"])
@pytest.mark.parametrize("case", ["sharp", "fuzzy", "covs", "clusters", "selected", "kink"])
@pytest.mark.parametrize("seed,c,step", [(5, 0.0, 0.025), (6, 3.0, 0.05), (7, -1e3, 0.0625)])
def test_unit_weights_of_one_equal_no_weights(kernel, case, seed, c, step):
    n = 1500
    x, y, t, z, cl = _grid_design(seed, n, c, step)
    kw = dict(c=c, kernel=kernel)
    if case != "selected":  # h and b exact multiples of the grid: rows at the window edges
        kw.update(h=10 * step, b=16 * step)
    if case == "fuzzy":
        kw["fuzzy"] = t
    elif case == "covs":
        kw["covs"] = z
    elif case == "clusters":
        kw["groups"] = cl
    elif case == "kink":
        kw.update(deriv=1, p=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # mass points
        fast = rd.rdrobust(y, x, **kw)
        direct = rd.rdrobust(y, x, weights=np.ones(n), **kw)
    np.testing.assert_array_equal(_numbers(fast), _numbers(direct))
    np.testing.assert_array_equal(fast.attention_weights().weights,
                                  direct.attention_weights().weights)
    if case != "selected":  # the window edges hold rows: the test exercises the edge rule
        h = kw["h"]
        assert np.any(np.isclose(np.abs(x - c), h, rtol=0, atol=1e-12 * max(1, abs(c))))


def test_rows_with_missing_values_and_a_cutoff_at_a_tie():
    x, y, _, _, _ = _grid_design(8, 1200, 0.0, 0.05)
    y = y.copy()
    y[::13] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fast = rd.rdrobust(y, x)
        direct = rd.rdrobust(y, x, weights=np.ones(x.size))
    assert fast.n_dropped == direct.n_dropped == np.isnan(y).sum()
    np.testing.assert_array_equal(_numbers(fast), _numbers(direct))
    a = fast.attention_weights().weights
    np.testing.assert_array_equal(a, direct.attention_weights().weights)
    assert np.all(a[np.isnan(y)] == 0)


def test_inputs_are_read_in_place_and_left_unchanged():
    _, x, y = _design(9, 3000)
    x0, y0 = x.copy(), y.copy()
    r = rd.rdrobust(y, x)
    np.testing.assert_array_equal(x, x0)  # the rule's rescaling happens on the core's copy
    np.testing.assert_array_equal(y, y0)
    aw = r.attention_weights()
    np.testing.assert_array_equal(aw.x, x0)
    # a @ y in another order than the core's sums: within n eps sum |a_i y_i|
    bound = y.size * np.finfo(float).eps * np.sum(np.abs(aw.weights * y))
    assert abs(aw.weights @ y - r.coef) <= bound
