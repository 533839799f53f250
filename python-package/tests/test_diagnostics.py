"""Tests for attnreg.diagnostics: oracle formulas from the explicit smoother matrix, exact bias on
quadratics, simulated coverage, dpi bandwidths against the asymptotic formula, the Monte Carlo
lab and bad-input messages."""
import numpy as np
import pandas as pd
import pytest

import attnreg
from attnreg import diagnostics as D

Z95 = 1.959963984540054


def _data(n=120, seed=0, sd=0.3):
    rng = np.random.default_rng(seed)
    x = rng.random(n)
    y = np.sin(2 * np.pi * x) + sd * rng.standard_normal(n)
    return x[:, None], y


@pytest.mark.parametrize("cls", [attnreg.NadarayaWatson, attnreg.LocalLinear])
@pytest.mark.parametrize("kind", ["const", "hc0", "hc1", "hc2", "hc3"])
def test_se_against_explicit_smoother(cls, kind):
    X, y = _data(70, seed=3)
    m = cls(bandwidth=0.1).fit(X, y)
    L = m.attention_weights(X)
    n = len(y)
    e = y - L @ y
    lev = np.diag(L)
    tr, tll = np.trace(L), np.sum(L * L)
    sigma2 = e @ e / (n - 2 * tr + tll)
    omega = {"const": np.full(n, sigma2), "hc0": e**2, "hc1": e**2 * n / (n - tr),
             "hc2": e**2 / (1 - lev), "hc3": e**2 / (1 - lev) ** 2}[kind]
    Xe = np.array([[0.0], [0.33], [1.0]])
    Le = m.attention_weights(Xe)
    df = m.diagnose(Xe, cov_type=kind)
    assert list(df.columns[:8]) == ["fit", "se", "bias", "mse", "ci_low", "ci_high",
                                    "rbc_low", "rbc_high"]
    np.testing.assert_allclose(df["fit"], Le @ y, atol=1e-12)
    np.testing.assert_allclose(df["se"], np.sqrt((Le**2) @ omega), rtol=1e-10)
    np.testing.assert_allclose(df["ci_high"] - df["ci_low"], 2 * Z95 * df["se"], rtol=1e-9)
    np.testing.assert_allclose(df["mse"], df["bias"] ** 2 + df["se"] ** 2, rtol=1e-12)
    np.testing.assert_allclose(df["fit_bc"], df["fit"] - df["bias"], atol=1e-12)


def test_summary_against_traces():
    X, y = _data(50, seed=1)
    m = attnreg.LocalLinear(bandwidth=0.12).fit(X, y)
    L = m.attention_weights(X)
    s = m.summary()
    n = len(y)
    tr, tll = np.trace(L), np.sum(L * L)
    rss = np.sum((y - L @ y) ** 2)
    assert s.trace_L == pytest.approx(tr, rel=1e-10)
    assert s.trace_LtL == pytest.approx(tll, rel=1e-10)
    assert s.residual_df == pytest.approx(n - 2 * tr + tll, rel=1e-10)
    assert s.sigma == pytest.approx(np.sqrt(rss / (n - 2 * tr + tll)), rel=1e-10)
    assert s.gcv == pytest.approx(n * rss / (n - tr) ** 2, rel=1e-10)
    assert s.aicc == pytest.approx(np.log(rss / n) + (1 + tr / n) / (1 - (tr + 2) / n), rel=1e-10)
    assert s.cv == pytest.approx(np.mean((y - m.loo_predictions()) ** 2), rel=1e-10)
    text = repr(s)
    for word in ("Residual standard error", "R-squared", "GCV", "AICc", "tr(L)", "gaussian"):
        assert word in text


@pytest.mark.parametrize("cls", [attnreg.NadarayaWatson, attnreg.LocalLinear])
def test_bias_exact_on_quadratic(cls):
    rng = np.random.default_rng(5)
    x = rng.random(60)
    f = lambda t: 1 - t + 4 * t**2  # noqa: E731
    m = cls(bandwidth=0.25).fit(x[:, None], f(x))
    g = np.linspace(0, 1, 7)
    df = D.diagnose(m, g[:, None], cov_type="hc0", pilot_bandwidth=0.4)
    np.testing.assert_allclose(df["bias"], df["fit"] - f(g), atol=1e-9)
    np.testing.assert_allclose(df["fit_bc"], f(g), atol=1e-9)


def test_coverage_small_simulation():
    # Fixed design, sin(2 pi x) + N(0, 0.3^2), n = 150, h = 0.1 (oversmoothed): the RBC
    # interval covers near 95% and the conventional interval less (bias).
    rng = np.random.default_rng(42)
    n, R = 150, 80
    x = rng.random(n)
    g = np.array([0.05, 0.25, 0.5, 0.75, 0.95])
    truth = np.sin(2 * np.pi * g)
    hits = {"conv": 0, "rbc": 0, "rbc_const": 0}
    for _ in range(R):
        y = np.sin(2 * np.pi * x) + 0.3 * rng.standard_normal(n)
        m = attnreg.LocalLinear(bandwidth=0.1).fit(x[:, None], y)
        d = m.diagnose(g[:, None], cov_type="hc3")
        dc = m.diagnose(g[:, None], cov_type="const")
        hits["conv"] += np.sum((d.ci_low <= truth) & (truth <= d.ci_high))
        hits["rbc"] += np.sum((d.rbc_low <= truth) & (truth <= d.rbc_high))
        hits["rbc_const"] += np.sum((dc.rbc_low <= truth) & (truth <= dc.rbc_high))
    cov = {k: v / (R * len(g)) for k, v in hits.items()}
    assert 0.90 <= cov["rbc"] <= 0.99, cov
    assert 0.90 <= cov["rbc_const"] <= 0.99, cov
    assert cov["conv"] < cov["rbc"], cov


def test_cluster_robust():
    X, y = _data(60, seed=2)
    m = attnreg.LocalLinear(bandwidth=0.15).fit(X, y)
    cl = np.repeat(np.arange(20), 3)
    L = m.attention_weights(X[:3])
    e = y - m.fitted_values()
    S = np.stack([L[:, cl == g] @ e[cl == g] for g in range(20)], axis=1)
    tr = m.effective_df_
    v = (20 / 19) * (59 / (60 - tr)) * np.sum(S**2, axis=1)
    d = D.diagnose(m, X[:3], cov_type="cr1", groups=cl)
    np.testing.assert_allclose(d["se"], np.sqrt(v), rtol=1e-10)


def test_dpi_against_asymptotic_formula():
    rng = np.random.default_rng(9)
    n = 2000
    x = rng.random(n)
    y = 2 * x**2 + 0.5 * rng.standard_normal(n)
    V = 0.25 / (2 * np.sqrt(np.pi))  # sigma^2 R(K) / f
    h_true = (V / (4 * n * 2.0**2)) ** 0.2  # B = m''/2 * mu2 = 2
    h = D.mse_dpi(x, y, 0.5)
    assert isinstance(h, float)
    assert h == pytest.approx(h_true, rel=0.15)
    hi = D.imse_dpi(x, y, np.linspace(0.2, 0.8, 13))
    assert hi == pytest.approx(h_true, rel=0.15)
    hs = D.mse_dpi(x, y, [0.3, 0.6])
    assert hs.shape == (2,) and np.all(hs > 0)
    assert D.imse_dpi(x, y, degree=0) > 0


def test_tradeoff_table():
    X, y = _data(80, seed=4)
    t = D.tradeoff(X, y, [0.04, 0.08, 0.16, 0.32])
    assert set(t.estimator) == {"NadarayaWatson", "LocalLinear"}
    np.testing.assert_allclose(t["mse"], t["bias2"] + t["variance"], rtol=1e-12)
    for _, g in t.groupby("estimator"):
        assert np.all(np.diff(g["df"].to_numpy()) < 0)
        # the estimated squared bias grows with the bandwidth at the large end
        assert g["bias2"].iloc[-1] > g["bias2"].iloc[0]


def test_monte_carlo_lab():
    f = lambda X: np.sin(2 * np.pi * X[:, 0])  # noqa: E731
    r = D.monte_carlo(f, n=150, replications=60, random_state=1)
    t = r["integrated"].set_index("estimator")
    np.testing.assert_allclose(t["mse"], t["bias2"] + t["variance"], rtol=1e-12)
    assert t.loc["ols", "bias2"] > 10 * t.loc["ll", "mse"]  # misspecified global linear
    assert t.loc["ll", "mse"] < t.loc["nw", "mse"]  # boundary bias of NW
    r2 = D.monte_carlo(f, n=150, replications=60, random_state=1)
    pd.testing.assert_frame_equal(r["integrated"], r2["integrated"])  # reproducible
    rc = D.monte_carlo(lambda X: X.sum(axis=1) ** 2, n=200, d=2, design="cone",
                       replications=20, random_state=2, estimators=("nw", "ll"))
    assert np.all(np.isfinite(rc["integrated"]["mse"]))
    Xc = D.simulate_design(500, 3, "cone", random_state=0, cone_dims=2)
    assert np.all(Xc[:, :2] >= 0) and np.any(Xc[:, 2] < 0)


def test_rate_study_small():
    f = lambda X: np.exp(X[:, 0])  # noqa: E731
    r = D.rate_study(f, ns=(100, 200, 400, 800), replications=40, random_state=3)
    s = r["slopes"].set_index(["estimator", "target"])
    assert s.loc[("ll", "point"), "slope"] < 0 and s.loc[("nw", "point"), "slope"] < 0
    assert np.all(s["se"] >= 0)


def test_bad_inputs():
    X, y = _data(40)
    m = attnreg.LocalLinear(bandwidth=0.2).fit(X, y)
    with pytest.raises(ValueError, match="cov_type"):
        m.diagnose(X[:2], cov_type="hc7")
    with pytest.raises(ValueError, match="level"):
        m.diagnose(X[:2], level=1.2)
    with pytest.raises(ValueError, match="cluster"):
        D.diagnose(m, X[:2], cov_type="cr1")
    with pytest.raises(ValueError, match="cluster"):
        D.diagnose(m, X[:2], cov_type="cr1", groups=[1, 2])
    with pytest.raises(ValueError, match="pilot_bandwidth"):
        D.diagnose(m, X[:2], pilot_bandwidth=-1.0)
    with pytest.raises(ValueError, match="pilot_degree"):
        D.diagnose(m, X[:2], pilot_degree=1)
    with pytest.raises(TypeError, match="estimator"):
        D.diagnose(attnreg.OLS().fit(X, y), X[:2])
    with pytest.raises(ValueError, match="design"):
        D.simulate_design(10, 1, "sphere")
    with pytest.raises(ValueError, match="y"):
        D.mse_dpi(np.arange(20.0), np.arange(19.0))
    with pytest.raises(ValueError, match="x"):
        D.imse_dpi(np.ones((20, 2)), np.arange(20.0))
    with pytest.raises(attnreg.NumericalError, match="pilot_bandwidth"):
        D.diagnose(m, np.array([[0.5123]]), pilot_bandwidth=1e-7)


def test_bootstrap_bands():
    X, y = _data(100, seed=6)
    m = attnreg.LocalLinear(bandwidth=0.1).fit(X, y)
    g = np.linspace(0, 1, 15)[:, None]
    b = D.bootstrap_bands(m, g, replications=2000, random_state=3, cov_type="hc0")
    v = np.var(b.attrs["draws"], axis=1, ddof=1)
    np.testing.assert_allclose(v / b["se"] ** 2, 1.0, atol=0.12)  # Rademacher: Var* = HC0
    assert 1.96 < b.attrs["critical_value"] < 3.3
    assert np.all(b.uniform_low <= b.low + 1e-12)
    b2 = D.bootstrap_bands(m, g, replications=2000, random_state=3, cov_type="hc0")
    np.testing.assert_array_equal(b.attrs["draws"], b2.attrs["draws"])
    bp = D.bootstrap_bands(m, g[2:13], replications=100, bootstrap="pairs", random_state=1)
    assert np.all(np.isfinite(bp.uniform_high))
    with pytest.raises(ValueError, match="type"):
        D.bootstrap_bands(m, g, bootstrap="jackknife")
    with pytest.raises(ValueError, match="replications"):
        D.bootstrap_bands(m, g, replications=3)


def test_plots_smoke():
    mpl = pytest.importorskip("matplotlib")
    mpl.use("Agg")
    X, y = _data(80, seed=7)
    m = attnreg.LocalLinear(bandwidth=0.1).fit(X, y)
    ax = D.plot_bands(m, X=X, y=y)
    assert len(ax.lines) >= 3  # fit and the two RBC band edges
    axes = D.plot_tradeoff(D.tradeoff(X, y, [0.05, 0.1, 0.2]))
    assert len(axes) == 2
    with pytest.raises(ValueError, match="X_grid"):
        D.plot_bands(m)
