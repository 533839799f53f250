"""RBC for average marginal effects and for categorical level differences
(marginal_effects(kind="average", interval="rbc") and level_difference()).

Checked against a direct numpy oracle: the bias-corrected weights of every evaluation point by
the weighted normal equations (fit of degree p at h, pilot of degree q at b, all monomials),
combined (averaged, or differenced between two levels), and their variance with one residual
per training row (the fit's and the pilot's at the row's own point, HC-scaled); against the
conventional average marginal effect; and by a small seeded Monte Carlo of the coverage of the
sample-average derivative.
"""
from __future__ import annotations

import numpy as np
import pytest

import attnreg


def _K(u, kernel):
    if kernel == "epanechnikov":
        return np.where(np.abs(u) <= 1, 0.75 * (1 - u ** 2), 0.0)
    if kernel == "gaussian":
        return np.exp(-u ** 2 / 2)
    raise ValueError(kernel)


def _monomials(dc, q):
    out = []
    for deg in range(q + 1):
        def rec(c, left, a):
            if c == dc - 1:
                out.append(tuple(a + [left]))
                return
            for e in range(left, -1, -1):
                rec(c + 1, left - e, a + [e])
        rec(0, deg, [])
    return out


class _Oracle:
    """Weighted normal equations at a point x0 (continuous columns cont, unordered columns
    cat with Aitchison-Aitken lambda lam / lam_b: 1 - lam at the same level, lam / (c - 1)
    otherwise)."""

    def __init__(self, X, y, cont, cat, h, b, lam, lam_b, p, q, kernel):
        self.__dict__.update(locals())
        self.mon = _monomials(len(cont), q)
        deg = np.array([sum(a) for a in self.mon])
        self.kp, self.kq = int(np.sum(deg <= p)), len(self.mon)
        self.nlev = {c: len(np.unique(X[:, c])) for c in cat}

    def _w(self, x0, bw, lam):
        w = np.ones(len(self.y))
        for j, c in enumerate(self.cont):
            w *= _K((self.X[:, c] - x0[c]) / bw[j], self.kernel)
        for c in self.cat:
            w *= np.where(self.X[:, c] == x0[c], 1 - lam, lam / (self.nlev[c] - 1))
        return w

    def fits(self, x0):
        D = self.X[:, self.cont] - x0[self.cont]
        Z = np.column_stack([np.prod(D ** np.array(a), axis=1) for a in self.mon])
        wh, wb = self._w(x0, self.h, self.lam), self._w(x0, self.b, self.lam_b)
        Zp, Zq = Z[:, :self.kp], Z
        Cp = np.linalg.solve(Zp.T @ (Zp * wh[:, None]), (Zp * wh[:, None]).T)
        Cq = np.linalg.solve(Zq.T @ (Zq * wb[:, None]), (Zq * wb[:, None]).T)
        return Zp, Zq, Cp, Cq, (wh > 0) | (wb > 0)

    def weights(self, x0, target):
        """(g, g_bc) of the coefficient of monomial `target` (raw units: the derivative)."""
        Zp, Zq, Cp, Cq, _ = self.fits(x0)
        g = Cp[self.mon.index(target)]
        bw = sum((g @ Zq[:, s]) * Cq[s] for s in range(self.kp, self.kq))
        return g, g - bw

    def own_residuals(self, vce):
        n = len(self.y)
        r2h, r2b = np.zeros(n), np.zeros(n)
        for i in range(n):
            Zp, Zq, Cp, Cq, inw = self.fits(self.X[i])
            nx = inw.sum()
            eh = self.y[i] - Zp[i] @ (Cp @ self.y)
            eb = self.y[i] - Zq[i] @ (Cq @ self.y)
            lev = Zp[i] @ Cp[:, i]
            fh, fb = {"hc0": (1, 1), "hc1": (nx / (nx - self.kp), nx / (nx - self.kq)),
                      "hc2": (1 / (1 - lev), 1 / (1 - lev)),
                      "hc3": (1 / (1 - lev) ** 2, 1 / (1 - lev) ** 2)}[vce]
            r2h[i], r2b[i] = eh ** 2 * fh, eb ** 2 * fb
        return r2h, r2b


def _summary(G, Gbc, y, r2h, r2b):
    return np.array([G @ y, Gbc @ y, np.sqrt(np.sum(G ** 2 * r2h)),
                     np.sqrt(np.sum(Gbc ** 2 * r2b))])


def _mixed_data(seed, n):
    rng = np.random.default_rng(seed)
    x1 = np.round(rng.uniform(-1, 1, n) * 20) / 20            # ties
    x2 = rng.uniform(3, 5, n) + 100.0                          # shifted origin
    g = rng.integers(0, 3, n).astype(float)
    y = np.sin(2 * x1) * (x2 - 104) ** 2 + 0.5 * g + 0.3 * rng.standard_normal(n)
    return np.column_stack([x1, x2, g]), y


def _tol(o, points):
    """20 kappa eps with kappa the largest condition number of the weighted Gram matrices
    (fit and pilot) at the points: the numpy oracle solves the normal equations (error
    ~ kappa eps relative), the core a thin QR; at least 1e-10."""
    kappa = 1.0
    for x0 in points:
        Zp, Zq, _, _, _ = o.fits(x0)
        for Z, bw, lam in ((Zp, o.h, o.lam), (Zq, o.b, o.lam_b)):
            w = o._w(x0, bw, lam)
            kappa = max(kappa, np.linalg.cond(Z.T @ (Z * w[:, None])))
    return max(1e-10, 20 * kappa * np.finfo(float).eps)


@pytest.mark.parametrize("seed,n,p,vce,kernel", [
    (0, 120, 1, "hc3", "epanechnikov"), (1, 150, 1, "hc0", "gaussian"),
    (2, 130, 2, "hc1", "epanechnikov"), (3, 110, 1, "hc2", "gaussian")])
def test_average_effect_against_numpy(seed, n, p, vce, kernel):
    X, y = _mixed_data(seed, n)
    h, b, lam, lam_b = np.array([0.73, 1.0]), np.array([0.93, 1.2]), 0.2, 0.3
    m = attnreg.LocalPolynomial(degree=p, bandwidth=[h[0], h[1], lam], kernel=kernel,
                                var_types="ccu").fit(X, y)
    q = p + 2 if p % 2 == 1 else p + 1
    o = _Oracle(X, y, [0, 1], [2], h, b, lam, lam_b, p, q, kernel)
    r2h, r2b = o.own_residuals(vce)
    for ev in (None, X[::7] + np.array([0.01, -0.02, 0.0])):
        pts = X if ev is None else ev
        t = attnreg.marginal_effects(m, ev, kind="average", interval="rbc", cov_type=vce,
                                     pilot_bandwidth=[b[0], b[1], lam_b])
        assert list(t.index) == ["x0", "x1"]
        for c in range(2):
            target = tuple(1 if k == c else 0 for k in range(2))
            G, Gbc = np.zeros(len(y)), np.zeros(len(y))
            for x0 in pts:
                g, gbc = o.weights(x0, target)
                G += g / len(pts)
                Gbc += gbc / len(pts)
            want = _summary(G, Gbc, y, r2h, r2b)
            got = t.iloc[c][["estimate", "estimate_bc", "std_error", "std_error_bc"]]
            tol = _tol(o, pts[:5])
            np.testing.assert_allclose(got.to_numpy(float), want, rtol=tol,
                                       atol=tol * np.abs(want[:2]).max())
            assert np.isclose(t.iloc[c]["bias"], want[0] - want[1], rtol=1e-8, atol=1e-12)


def test_average_effect_is_the_mean_of_the_pointwise_estimates():
    X, y = _mixed_data(4, 300)
    m = attnreg.LocalLinear(bandwidth=[0.5, 0.8, 0.2], kernel="epanechnikov",
                            var_types="ccu").fit(X, y)
    pw = attnreg.marginal_effects(m, kind="pointwise", interval="rbc")
    av = attnreg.marginal_effects(m, kind="average", interval="rbc")
    for f in ("x0", "x1"):
        p = pw.xs(f, level="feature")
        for col in ("estimate", "estimate_bc", "bias"):
            np.testing.assert_allclose(av.loc[f, col], p[col].mean(), rtol=1e-12,
                                       atol=1e-12 * np.abs(p[col]).max())
        # averaging: the average's se is below the mean pointwise se
        assert av.loc[f, "std_error_bc"] < p["std_error_bc"].mean()


@pytest.mark.parametrize("kernel", ["epanechnikov", "gaussian"])
def test_conventional_average_se_under_hc0_is_the_existing_one(kernel):
    """HC0 with the fit's own-row residuals is the conventional average marginal effect's
    variance sum_i gbar_i^2 e_i^2 (marginal_effects(kind="average")), one estimand for both."""
    rng = np.random.default_rng(8)
    X = rng.uniform(0, 1, (250, 2))
    y = np.sin(3 * X[:, 0]) + X[:, 1] ** 2 + 0.2 * rng.standard_normal(250)
    m = attnreg.LocalLinear(bandwidth=[0.3, 0.3], kernel=kernel).fit(X, y)
    conv = attnreg.marginal_effects(m, kind="average")
    rbc = attnreg.marginal_effects(m, kind="average", interval="rbc", cov_type="HC0")
    np.testing.assert_allclose(rbc["estimate"], conv["estimate"], rtol=1e-9)
    np.testing.assert_allclose(rbc["std_error"], conv["std_error"], rtol=1e-9)


@pytest.mark.parametrize("seed,p,vce,kernel,average", [
    (0, 1, "hc3", "epanechnikov", True), (1, 1, "hc0", "gaussian", False),
    (2, 0, "hc1", "epanechnikov", True), (3, 2, "hc2", "gaussian", True)])
def test_level_difference_against_numpy(seed, p, vce, kernel, average):
    X, y = _mixed_data(seed, 120)
    h, b, lam, lam_b = np.array([0.73, 1.0]), np.array([0.93, 1.2]), 0.2, 0.3
    m = attnreg.LocalPolynomial(degree=p, bandwidth=[h[0], h[1], lam], kernel=kernel,
                                var_types="ccu").fit(X, y)
    q = p + 1 if p % 2 == 1 else p + 2
    o = _Oracle(X, y, [0, 1], [2], h, b, lam, lam_b, p, q, kernel)
    r2h, r2b = o.own_residuals(vce)
    ev = X[:6]
    t = attnreg.level_difference(m, 2, (0.0, 2.0), ev, kind="average" if average else
                                 "pointwise", cov_type=vce, pilot_bandwidth=[b[0], b[1], lam_b])
    assert t.attrs["pilot_degree"] == q
    rows = []
    for x0 in ev:
        xa, xb = x0.copy(), x0.copy()
        xa[2], xb[2] = 0.0, 2.0
        ga, gabc = o.weights(xa, (0, 0))
        gb, gbbc = o.weights(xb, (0, 0))
        rows.append((gb - ga, gbbc - gabc))
    if average:
        rows = [(np.mean([r[0] for r in rows], 0), np.mean([r[1] for r in rows], 0))]
    assert len(t) == len(rows)
    tol = _tol(o, ev)
    for k, (G, Gbc) in enumerate(rows):
        want = _summary(G, Gbc, y, r2h, r2b)
        got = t.iloc[k][["estimate", "estimate_bc", "std_error", "std_error_bc"]]
        np.testing.assert_allclose(got.to_numpy(float), want, rtol=tol,
                                   atol=tol * np.abs(want[:2]).max())


def test_level_difference_labels_and_confidence_columns():
    import pandas as pd
    rng = np.random.default_rng(5)
    df = pd.DataFrame({"x": rng.uniform(0, 1, 200),
                       "grp": pd.Categorical(rng.choice(["a", "b", "c"], 200))})
    y = np.sin(3 * df["x"]) + (df["grp"] == "c") * 0.7 + 0.1 * rng.standard_normal(200)
    m = attnreg.LocalLinear(bandwidth=[0.2, 0.1], kernel="epanechnikov").fit(df, y)
    t = attnreg.level_difference(m, "grp", ("a", "c"))
    assert list(t.index) == ["grp: 'c' - 'a'"]
    assert abs(t["estimate_bc"].iloc[0] - 0.7) < 4 * t["std_error_bc"].iloc[0] + 0.05
    c = attnreg.level_difference(m, "grp", ("a", "c"), interval="confidence")
    assert list(c.columns) == ["estimate", "std_error", "ci_lower", "ci_upper"]
    pw = attnreg.level_difference(m, "grp", ("a", "b"), df.iloc[:3], kind="pointwise")
    assert pw.index.names == ["observation", "contrast"] and len(pw) == 3


def test_bad_input():
    import pandas as pd
    X, y = _mixed_data(6, 150)
    m = attnreg.LocalLinear(bandwidth=[0.7, 1.0, 0.2], kernel="epanechnikov",
                            var_types="ccu").fit(X, y)
    with pytest.raises(ValueError, match=r"^levels: the value 5 is not a level of column 3"):
        attnreg.level_difference(m, 2, (0, 5))
    with pytest.raises(ValueError, match=r"^column: 'x0' is continuous"):
        attnreg.level_difference(m, 0, (0, 1))
    with pytest.raises(ValueError, match=r"^column: 'zz' is not a feature"):
        attnreg.level_difference(m, "zz", (0, 1))
    with pytest.raises(ValueError, match=r"^levels: a pair"):
        attnreg.level_difference(m, 2, 1)
    with pytest.raises(ValueError, match="level is a fraction"):
        attnreg.level_difference(m, 2, (0, 1), level=95)
    with pytest.raises(ValueError, match="level is a fraction"):
        attnreg.marginal_effects(m, kind="average", interval="rbc", level=95)
    with pytest.raises(ValueError, match=r"^X: .*at least one row"):
        attnreg.marginal_effects(m, X[:0], kind="average", interval="rbc")
    with pytest.raises(ValueError, match=r"^X: .*at least one row"):
        attnreg.level_difference(m, 2, (0, 1), X[:0])
    df = pd.DataFrame({"x": X[:, 0], "grp": pd.Categorical(np.where(X[:, 2] > 0, "u", "v"))})
    md = attnreg.LocalLinear(bandwidth=[0.3, 0.1], kernel="epanechnikov").fit(df, y)
    with pytest.raises(ValueError, match=r"^levels: 'w' is not a level of 'grp'"):
        attnreg.level_difference(md, "grp", ("u", "w"))
    # no continuous column: the bias has no direction to be estimated in
    mc = attnreg.LocalLinear(bandwidth=[0.2], var_types="u").fit(X[:, [2]], y)
    with pytest.raises(ValueError, match=r"^X: RBC level differences need at least one"):
        attnreg.level_difference(mc, 0, (0, 1))


def test_monte_carlo_coverage_of_the_average_effect():
    """200 replications, n = 300, m(x) = sin(4 x) + x on [0, 1], local linear at a large h =
    0.3 (epanechnikov): the target is the sample average of m'(x_i) over the rows. A 95%
    interval covers 190 of 200 in expectation; >= 178 is -4 binomial sd. The conventional
    interval undercovers: the averaged bias does not shrink with the averaging, its standard
    error does (seeded: RBC 187, conventional 139 of 200). h = 0.3 is deliberately large, as
    in test_rbc_marginal_effects.py, so that the bias shows at this small n."""
    rng = np.random.default_rng(77)
    cover_rbc = cover_us = 0
    for _ in range(200):
        x = rng.uniform(0, 1, 300)
        y = np.sin(4 * x) + x + 0.3 * rng.standard_normal(300)
        truth = np.mean(4 * np.cos(4 * x) + 1)
        m = attnreg.LocalLinear(bandwidth=0.3, kernel="epanechnikov").fit(x[:, None], y)
        t = attnreg.marginal_effects(m, kind="average", interval="rbc").iloc[0]
        cover_rbc += t["rbc_lower"] <= truth <= t["rbc_upper"]
        cover_us += t["ci_lower"] <= truth <= t["ci_upper"]
    assert cover_rbc >= 178, cover_rbc
    assert cover_us < 160, cover_us
