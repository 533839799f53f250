# diagnose(), predict(se.fit, interval), summary(), mse_dpi/imse_dpi, tradeoff(), monte_carlo():
# oracle formulas from the explicit smoother matrix, exact bias on quadratics, simulated
# coverage, the asymptotic dpi formula and bad input.

sim <- function(n, seed, sd = 0.3) {
  set.seed(seed)
  d <- data.frame(x = runif(n))
  d$y <- sin(2 * pi * d$x) + rnorm(n, sd = sd)
  d
}

test_that("standard errors match the explicit smoother matrix for every kind", {
  d <- sim(70, 3)
  for (method in c("ll", "lc")) {
    f <- kreg(y ~ x, data = d, bw = 0.1, method = method)
    L <- unname(attention_weights(f, d))
    n <- nrow(d); y <- d$y
    e <- drop(y - L %*% y); lev <- diag(L); tr <- sum(lev); tll <- sum(L^2)
    s2 <- sum(e^2) / (n - 2 * tr + tll)
    om <- list(const = rep(s2, n), hc0 = e^2, hc1 = e^2 * n / (n - tr), hc2 = e^2 / (1 - lev),
               hc3 = e^2 / (1 - lev)^2)
    nd <- data.frame(x = c(0, 0.33, 1))
    Le <- unname(attention_weights(f, nd))
    for (k in names(om)) {
      r <- diagnose(f, nd, vcov = k)
      expect_equal(r$se, sqrt(drop(Le^2 %*% om[[k]])), tolerance = 1e-10)
      expect_equal(r$ci_high - r$ci_low, 2 * qnorm(0.975) * r$se, tolerance = 1e-9)
      expect_equal(r$mse, r$bias^2 + r$se^2, tolerance = 1e-12)
    }
    p <- predict(f, nd, se.fit = TRUE, interval = "confidence", vcov = "const")
    expect_equal(unname(p$fit[, "fit"]), drop(Le %*% y), tolerance = 1e-10)
    expect_equal(p$df, n - 2 * tr + tll, tolerance = 1e-10)
    expect_equal(p$residual.scale, sqrt(s2), tolerance = 1e-10)
    s <- summary(f)
    expect_equal(s$residual.df, n - 2 * tr + tll, tolerance = 1e-10)
    expect_equal(s$gcv, n * sum(e^2) / (n - tr)^2, tolerance = 1e-10)
    expect_equal(s$aicc, log(sum(e^2) / n) + (1 + tr / n) / (1 - (tr + 2) / n), tolerance = 1e-10)
    expect_output(print(s), "AICc")
  }
})

test_that("the bias estimate is exact on a quadratic and RBC recovers the truth", {
  set.seed(5)
  d <- data.frame(x = runif(60))
  q <- function(t) 1 - t + 4 * t^2
  d$y <- q(d$x)
  g <- data.frame(x = seq(0, 1, length.out = 7))
  for (method in c("ll", "lc")) {
    f <- kreg(y ~ x, data = d, bw = 0.25, method = method)
    r <- diagnose(f, g, vcov = "hc0", pilot_bw = 0.4)
    expect_equal(r$bias, r$fit - q(g$x), tolerance = 1e-8)
    expect_equal(r$fit_bc, q(g$x), tolerance = 1e-8)
  }
})

test_that("RBC intervals cover near 95% in a small simulation", {
  set.seed(42)
  n <- 150; R <- 60
  x <- runif(n)
  g <- data.frame(x = c(0.05, 0.25, 0.5, 0.75, 0.95))
  truth <- sin(2 * pi * g$x)
  hits <- c(conv = 0, rbc = 0)
  for (r in seq_len(R)) {
    d <- data.frame(x = x, y = sin(2 * pi * x) + rnorm(n, sd = 0.3))
    f <- kreg(y ~ x, data = d, bw = 0.1)
    ci <- predict(f, g, interval = "confidence")
    rb <- predict(f, g, interval = "rbc")
    hits["conv"] <- hits["conv"] + sum(ci[, "lwr"] <= truth & truth <= ci[, "upr"])
    hits["rbc"] <- hits["rbc"] + sum(rb[, "lwr"] <= truth & truth <= rb[, "upr"])
  }
  cov <- hits / (R * nrow(g))
  expect_gt(cov[["rbc"]], 0.88)
  expect_lt(cov[["rbc"]], 0.995)
  expect_lt(cov[["conv"]], cov[["rbc"]])
})

test_that("mse_dpi and imse_dpi match the asymptotic formula", {
  set.seed(9)
  n <- 2000
  x <- runif(n)
  y <- 2 * x^2 + rnorm(n, sd = 0.5)
  h_true <- (0.25 / (2 * sqrt(pi)) / (4 * n * 4))^(1 / 5)
  expect_equal(mse_dpi(x, y, 0.5), h_true, tolerance = 0.15)
  expect_equal(imse_dpi(x, y, seq(0.2, 0.8, length.out = 13)), h_true, tolerance = 0.15)
  expect_length(mse_dpi(x, y, c(0.3, 0.6)), 2)
  expect_gt(imse_dpi(x, y, method = "lc"), 0)
})

test_that("tradeoff and monte_carlo give consistent tables", {
  d <- sim(80, 4)
  t <- tradeoff(d$x, d$y, c(0.04, 0.08, 0.16, 0.32))
  expect_equal(t$mse, t$bias2 + t$variance, tolerance = 1e-12)
  expect_true(all(diff(t$df[t$method == "ll"]) < 0))
  mc <- monte_carlo(function(X) sin(2 * pi * X[, 1]), n = 120, R = 40, seed = 2)
  it <- mc$integrated
  expect_equal(it$mse, it$bias2 + it$variance, tolerance = 1e-12)
  expect_gt(it$bias2[it$estimator == "ols"], 10 * it$mse[it$estimator == "ll"])
  mc2 <- monte_carlo(function(X) sin(2 * pi * X[, 1]), n = 120, R = 40, seed = 2)
  expect_identical(mc$integrated, mc2$integrated)
})

test_that("bad input is reported with the argument's name", {
  d <- sim(40, 1)
  f <- kreg(y ~ x, data = d, bw = 0.2)
  expect_error(diagnose(f, d[1:2, ], vcov = "hc9"), "^vcov: must be one of")
  expect_error(diagnose(f, d[1:2, ], level = 2), "level")
  expect_error(diagnose(f, d[1:2, ], vcov = "cr1"), "cluster")
  expect_error(diagnose(f, d[1:2, ], vcov = "cr1", cluster = 1:3), "cluster")
  expect_error(diagnose(f, d[1:2, ], pilot_bw = -1), "pilot_bw")
  expect_error(diagnose(f, d[1:2, ], pilot_degree = 1), "pilot_degree")
  expect_error(mse_dpi(1:20, 1:19), "y")
  expect_error(monte_carlo(1), "f")
})

test_that("bootstrap bands: wild variance equals HC0, sup-t wider, seeded", {
  d <- sim(100, 6)
  f <- kreg(y ~ x, data = d, bw = 0.1)
  g <- data.frame(x = seq(0, 1, length.out = 15))
  b <- bootstrap_bands(f, g, R = 2000, seed = 3, vcov = "hc0")
  v <- apply(attr(b, "draws"), 1, var)
  expect_equal(v / b$se^2, rep(1, 15), tolerance = 0.12)
  expect_gt(attr(b, "critical_value"), qnorm(0.975))
  b2 <- bootstrap_bands(f, g, R = 2000, seed = 3, vcov = "hc0")
  expect_identical(attr(b, "draws"), attr(b2, "draws"))
  expect_error(bootstrap_bands(f, g, R = 5), "R: must be at least 19")
  expect_true(all(is.finite(bootstrap_bands(f, g[3:13, , drop = FALSE], R = 50,
                                            bootstrap = "pairs")$uniform_high)))
})

test_that("monte_carlo gives Python's numbers for the same seed (one driver, in the core)", {
  # The same study in attnreg.diagnostics.monte_carlo (Python) gives these numbers
  # (python-package/tests/test_monte_carlo_faces.py pins the same ones).
  mc <- monte_carlo(function(X) sin(2 * pi * X[, 1]) + X[, 2], n = 40, d = 2, R = 6,
                    seed = 2^40 + 7, estimators = c("nw", "lc", "ll", "ols", "ridge"),
                    bw_grid = c(0.15, 0.3, 0.6), lambda = 0.5)
  it <- mc$integrated
  expect_equal(dim(mc$X), c(40L, 2L))
  expect_equal(it$estimator, c("nw", "lc", "ll", "ols", "ridge"))
  expect_equal(it$bandwidth, c(0.15, 0.15, 0.15, NA, NA))
  expect_equal(it$mse, c(0.13186568550097572, 0.13186568550097572, 0.13755502233042136,
                         0.22798123244850038, 0.24807754125038806), tolerance = 1e-10)
  expect_equal(it$bias2[3], 0.11250091277782083, tolerance = 1e-10)
  expect_equal(it$variance[4], 0.009278636440952774, tolerance = 1e-10)
  expect_equal(mc$eval_points[1:2, ], rbind(c(0.134204188089243, 0.5225733112405555),
                                            c(0.9135435817464888, 0.6584175627643687)),
               tolerance = 1e-15)
})

test_that("summary.kreg takes sigma and its df from the core, per response", {
  d <- sim(80, 3)
  f <- kreg(y ~ x, data = d, bw = 0.1)
  s <- summary(f)
  g <- attnreg:::.diag_global(f)
  expect_equal(s$sigma, sqrt(g$sigma2))
  expect_equal(s$residual.df, g$residual_df)
  # The df by hand: n - 2 tr L + tr L'L from the explicit smoother matrix.
  L <- attention_weights(f, d)
  expect_equal(s$residual.df, nrow(d) - 2 * sum(diag(L)) + sum(L^2), tolerance = 1e-10)
  expect_equal(s$sigma, sqrt(sum((d$y - L %*% d$y)^2) / s$residual.df), tolerance = 1e-10)
  expect_output(print(s), "Residual standard error: .* on .* degrees of freedom")
  d$y2 <- 2 * d$y + 1
  s2 <- summary(kreg(cbind(y, y2) ~ x, data = d, bw = 0.1))
  expect_length(s2$sigma, 2)
  expect_equal(s2$sigma, c(1, 2) * s$sigma, tolerance = 1e-10)
  expect_equal(s2$residual.df, s$residual.df, tolerance = 1e-12)
})
