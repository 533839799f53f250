"""HC2/HC3 with a row of leverage one (an event dummy: a column that is 1 on one row).

That row is fitted exactly: its residual is 0 and its HC2/HC3 term e^2 / (1 - h)^k is 0/0. The
core leaves such terms out (as the absorbed fixed-effects path does for singleton levels) and the
summary says so in a note. Oracle: a direct numpy sandwich from a Householder QR of the weighted
design that leaves out the rows known by construction to be fitted exactly (no tolerance). The
tolerance on the standard errors is 1e3 n u cond(X), a bound on the rounding of both QR-based
computations (leverages from Q accurate to about n u, the bread R^{-1} R^{-T} to about u cond).
"""
import numpy as np
import pytest

import attnreg

EPS = np.finfo(float).eps


def event_design(n, seed, n_events=1):
    rng = np.random.default_rng(seed)
    x1 = rng.normal(size=n)
    x2 = rng.uniform(-1, 1, size=n)
    D = [x1, x2]
    rows = rng.choice(n, size=n_events, replace=False)
    for r in rows:
        d = np.zeros(n)
        d[r] = 1.0
        D.append(d)
    X = np.column_stack(D)
    y = 1.0 + 0.5 * x1 - x2 + rng.normal(size=n)
    y[rows] += 3.0
    return X, y, rows


def oracle_se(X, y, cov_type, rows_one, w=None):
    n = X.shape[0]
    D = np.column_stack([np.ones(n), X])
    w = np.ones(n) if w is None else np.asarray(w, float)
    sw = np.sqrt(w)
    Q, R = np.linalg.qr(D * sw[:, None])
    b = np.linalg.solve(R, Q.T @ (y * sw))
    e = y - D @ b
    h = (Q ** 2).sum(1)
    score = sw * e
    keep = np.ones(n, bool)
    keep[rows_one] = False
    adj = np.zeros(n)  # the 0/0 terms of the rows fitted exactly are left out
    if cov_type == "HC2":
        adj[keep] = 1 / (1 - h[keep])
    else:
        adj[keep] = 1 / (1 - h[keep]) ** 2
    # meat = sum_i w_i^2 e_i^2 adj_i d_i d_i' (the scores of weighted least squares)
    Z = D * (sw * score * np.sqrt(adj))[:, None]
    Rinv = np.linalg.inv(R)
    bread = Rinv @ Rinv.T
    V = bread @ (Z.T @ Z) @ bread
    return np.sqrt(np.diag(V)), np.linalg.cond(D * sw[:, None])


CASES = [(n, seed, events) for n in (60, 80, 200) for seed in (0, 1, 2) for events in (1, 2)]


@pytest.mark.parametrize("n,seed,events", CASES)
@pytest.mark.parametrize("cov_type", ["HC2", "HC3"])
def test_event_dummy_hc_matches_the_oracle_that_drops_the_0_over_0_terms(n, seed, events,
                                                                         cov_type):
    X, y, rows = event_design(n, seed, events)
    m = attnreg.OLS(cov_type=cov_type).fit(X, y)
    se = m.standard_errors()
    want, cond = oracle_se(X, y, cov_type, rows)
    assert np.all(np.isfinite(se)), se
    np.testing.assert_allclose(se, want, rtol=1e3 * n * EPS * cond)
    # the leverage of the event rows is 1 to rounding, and the others are below 1
    h = m.hat_diagonal()
    assert np.all(np.abs(h[rows] - 1) < 1e3 * n * EPS)
    assert np.all(np.delete(h, rows) < 1 - 1e-3)
    s = m.summary()
    note = [t for t in s.notes if "leverage 1" in t]
    assert len(note) == 1 and note[0].startswith(f"{events} row")
    assert cov_type in note[0]


@pytest.mark.parametrize("cov_type", ["HC0", "HC1", "nonrobust"])
def test_other_covariances_are_unchanged_and_have_no_note(cov_type):
    X, y, rows = event_design(60, 0)
    m = attnreg.OLS(cov_type=cov_type).fit(X, y)
    assert np.all(np.isfinite(m.standard_errors()))
    assert not [t for t in m.summary().notes if "leverage 1" in t]


@pytest.mark.parametrize("n,seed", [(60, 0), (80, 1), (200, 2)])
@pytest.mark.parametrize("cov_type", ["HC2", "HC3"])
def test_weighted_event_dummy(n, seed, cov_type):
    X, y, rows = event_design(n, seed)
    rng = np.random.default_rng(seed + 10)
    w = rng.uniform(0.5, 2.0, size=n)
    m = attnreg.OLS(cov_type=cov_type).fit(X, y, sample_weight=w)
    want, cond = oracle_se(X, y, cov_type, rows, w=w)
    np.testing.assert_allclose(m.standard_errors(), want, rtol=1e3 * n * EPS * cond)
    # Frequency weights: the event row counted once (w = 1) keeps leverage one per copy; the
    # statistics equal those of the data with rows repeated.
    fw = rng.integers(1, 4, size=n).astype(float)
    fw[rows] = 1.0
    mf = attnreg.OLS(cov_type=cov_type, weight_type="frequency").fit(X, y, sample_weight=fw)
    rep = np.repeat(np.arange(n), fw.astype(int))
    mr = attnreg.OLS(cov_type=cov_type).fit(X[rep], y[rep])
    np.testing.assert_allclose(mf.standard_errors(), mr.standard_errors(),
                               rtol=1e3 * len(rep) * EPS * cond)


def test_tall_path_drops_the_same_rows():
    # n >= 20000 rows and >= 50 per column takes the tall (normal-equations-free) path.
    X, y, rows = event_design(24000, 5)
    for cov_type in ("HC2", "HC3"):
        m = attnreg.OLS(cov_type=cov_type).fit(X, y)
        want, cond = oracle_se(X, y, cov_type, rows)
        np.testing.assert_allclose(m.standard_errors(), want, rtol=1e3 * 24000 * EPS * cond)


@pytest.mark.parametrize("n,seed", [(60, 0), (80, 1), (200, 2)])
@pytest.mark.parametrize("cov_type", ["HC2", "HC3"])
def test_the_other_paths_leave_out_the_same_rows(n, seed, cov_type):
    # PCR with every component is OLS (its leverages come from the SVD), and absorbed fixed
    # effects equal OLS with the factor as dummy columns: the same standard errors, so the same
    # rows are left out. Tolerance as above, with the condition number of the dummy design.
    X, y, rows = event_design(n, seed)
    m = attnreg.OLS(cov_type=cov_type).fit(X, y)
    want, cond = oracle_se(X, y, cov_type, rows)
    s = attnreg.PCR(cov_type=cov_type).fit(X, y).summary()
    np.testing.assert_allclose(s.coefficients["std_error"].to_numpy(), want,
                               rtol=1e3 * n * EPS * cond)
    g = np.arange(n) % 5
    dummies = (g[:, None] == np.arange(1, 5)[None, :]).astype(float)
    fe = attnreg.OLS(cov_type=cov_type).fit(X, y, absorb=g)
    full = attnreg.OLS(cov_type=cov_type).fit(np.column_stack([X, dummies]), y)
    want_fe, cond_fe = oracle_se(np.column_stack([X, dummies]), y, cov_type, rows)
    np.testing.assert_allclose(full.standard_errors(), want_fe, rtol=1e3 * n * EPS * cond_fe)
    np.testing.assert_allclose(fe.coef_se_, want_fe[1:1 + X.shape[1]],
                               rtol=1e3 * n * EPS * cond_fe)


@pytest.mark.parametrize("cov_type", ["HC2", "HC3"])
def test_absorbed_fit_notes_its_leverage_one_rows(cov_type):
    # A singleton level and an event dummy: both rows are fitted exactly and left out.
    X, y, rows = event_design(60, 4)
    g = np.arange(60) % 5
    g[(rows[0] + 1) % 60] = 9  # a singleton level on another row
    m = attnreg.OLS(cov_type=cov_type).fit(X, y, absorb=g)
    note = [t for t in m.summary().notes if "leverage 1" in t]
    assert len(note) == 1 and note[0].startswith("2 rows"), note
