# Multivariate robust bias correction and uniform bands in diagnose(). The numbers themselves are
# checked against a direct numpy oracle in python-package/tests/test_rbc_multivariate.py (the
# same C++ core); here: the R face fills every column, passes the options and reports bad input.

test_that("diagnose() fills bias and RBC columns with two regressors", {
  set.seed(3)
  d <- data.frame(x1 = runif(200, -1, 1), x2 = runif(200, -1, 1))
  d$y <- d$x1^2 + 0.5 * d$x1 * d$x2 + d$x2 + rnorm(200, sd = 0.2)
  f <- kreg(y ~ x1 + x2, data = d, bw = c(0.4, 0.4))
  nd <- data.frame(x1 = c(0, 0.5, -0.8), x2 = c(0, -0.3, 0.8))
  r <- expect_silent(diagnose(f, nd))
  expect_true(all(is.finite(as.matrix(r))))
  expect_equal(r$fit_bc, r$fit - r$bias, tolerance = 1e-12)
  # a noiseless quadratic is recovered exactly by the bias-corrected local linear fit
  d$y <- 1 + d$x1 - d$x2 + 0.7 * d$x1^2 - d$x1 * d$x2 + 1.5 * d$x2^2
  g <- kreg(y ~ x1 + x2, data = d, bw = c(0.5, 0.4))
  r2 <- diagnose(g, nd, vcov = "HC0")
  truth <- with(nd, 1 + x1 - x2 + 0.7 * x1^2 - x1 * x2 + 1.5 * x2^2)
  expect_true(max(abs(r2$fit - truth)) > 1e-3)
  expect_equal(r2$fit_bc, truth, tolerance = 1e-9)
  expect_error(diagnose(f, nd, pilot_bw = c(0.3, 0.3, 0.3)), "pilot_bw: needs one value per regressor \\(2\\)")
  expect_error(diagnose(f, nd, level = 95), "level: must be in \\(0, 1\\)")
  u1 <- diagnose(f, nd, uniform = TRUE, R = 500, seed = 4)
  u2 <- diagnose(f, nd, uniform = TRUE, R = 500, seed = 4)
  expect_identical(u1, u2)
  expect_true(attr(u1, "crit_uniform_rbc") > qnorm(0.975))
  expect_equal(u1$uniform_rbc_low, u1$fit_bc - attr(u1, "crit_uniform_rbc") * u1$se_bc,
               tolerance = 1e-12)
  expect_error(diagnose(f, nd, uniform = TRUE, R = 10), "R: must be an integer >= 100")
  # the wild bootstrap-t by default; the Gaussian sup-t on request; the method is reported
  expect_identical(attr(u1, "uniform_method"), "wild_t")
  ug <- diagnose(f, nd, uniform = TRUE, R = 500, seed = 4, uniform_method = "gaussian")
  expect_identical(attr(ug, "uniform_method"), "gaussian")
  expect_true(attr(ug, "crit_uniform_rbc") > qnorm(0.975))
  expect_equal(ug$fit_bc, u1$fit_bc)
  expect_error(diagnose(f, nd, uniform = TRUE, uniform_method = "normal"),
               "uniform_method: must be \"auto\", \"wild_t\" or \"gaussian\"")
  expect_identical(attr(diagnose(f, nd, vcov = "nn", uniform = TRUE, R = 200),
                        "uniform_method"), "gaussian")
})

test_that("uniform_method 'auto' falls back to the Gaussian sup-t with a warning when the wild bootstrap's refits do not fit in memory", {
  # 20,100 distinct rows under the Gaussian kernel: every row is in every window, and the
  # dense hat-matrix rows (20,100^2 entries) exceed the wild bootstrap-t's 4e8
  set.seed(5)
  d <- data.frame(x = runif(20100, -1, 1))
  d$y <- sin(2 * d$x) + rnorm(20100, sd = 0.3)
  f <- kreg(y ~ x, data = d, bw = 0.1)
  nd <- data.frame(x = c(-0.5, 0, 0.5))
  expect_warning(u <- diagnose(f, nd, uniform = TRUE, R = 200, seed = 1),
                 "uniform_method 'auto' used the Gaussian sup-t")
  expect_identical(attr(u, "uniform_method"), "gaussian")
  expect_null(attr(u, "uniform_note"))
  g <- expect_silent(diagnose(f, nd, uniform = TRUE, R = 200, seed = 1,
                              uniform_method = "gaussian"))
  expect_identical(attr(u, "crit_uniform_rbc"), attr(g, "crit_uniform_rbc"))
  expect_error(diagnose(f, nd, uniform = TRUE, R = 200, uniform_method = "wild_t"),
               "uniform_method: 'wild_t' refits every draw")
})

test_that("diagnose(vcov = 'local') pools the window's residuals (direct R oracle)", {
  set.seed(8)
  d <- data.frame(x1 = runif(150, -1, 1), x2 = runif(150, -1, 1))
  d$y <- sin(2 * d$x1) + d$x2^2 + rnorm(150, sd = 0.2)
  h <- c(0.45, 0.5)
  f <- kreg(y ~ x1 + x2, data = d, bw = h)
  nd <- data.frame(x1 = c(0, 0.7), x2 = c(0.1, -0.6))
  r <- diagnose(f, nd, vcov = "local")
  X <- cbind(d$x1, d$x2)
  for (j in seq_len(nrow(nd))) {
    x0 <- c(nd$x1[j], nd$x2[j])
    U <- sweep(X, 2, x0) / rep(h, each = nrow(X))
    w <- exp(-0.5 * rowSums(U^2))
    Z <- cbind(1, U)
    # sigma^2 from the residuals of the local quadratic (the pilot's degree)
    Zq <- cbind(Z, U[, 1]^2, U[, 1] * U[, 2], U[, 2]^2)
    Q <- qr.Q(qr(Zq * sqrt(w)))
    res <- sqrt(w) * d$y - Q %*% crossprod(Q, sqrt(w) * d$y)
    s2 <- sum(res^2) / sum(w * (1 - rowSums(Q^2)))
    l <- solve(crossprod(Z * sqrt(w)), t(Z * w))[1, ]  # the fit's attention weights
    expect_equal(r$se[j], sqrt(s2 * sum(l^2)), tolerance = 1e-9)
    expect_equal(r$ci_high[j] - r$fit[j], r$crit[j] * r$se[j], tolerance = 1e-12)
    expect_equal(r$rbc_high[j] - r$fit_bc[j], r$crit_bc[j] * r$se_bc[j], tolerance = 1e-12)
  }
  # far beyond the data every weight is 1 to rounding: the pooled variance is the global
  # quadratic's residual variance and the conventional weights lie in its span, so t is
  # Student t(n - 6) exactly (core/include/attnreg/inference/diagnostics.hpp)
  g <- kreg(y ~ x1 + x2, data = d, bw = c(1e3, 1e3))
  expect_equal(diagnose(g, nd, vcov = "local")$crit, rep(qt(0.975, 150 - 6), 2),
               tolerance = 1e-8)
  expect_equal(unique(diagnose(f, nd)$crit_bc), qnorm(0.975))
  expect_identical(attr(diagnose(f, nd, vcov = "LOCAL", uniform = TRUE, R = 200),
                        "uniform_method"), "gaussian")
})

test_that("diagnose(critical_value = 'null') is the robust t's own null quantile", {
  set.seed(9)
  n <- 150
  d <- data.frame(x1 = runif(n, -1, 1), x2 = runif(n, -1, 1))
  d$y <- sin(2 * d$x1) + d$x2^2 + rnorm(n, sd = 0.2)
  h <- c(0.4, 0.45)
  f <- kreg(y ~ x1 + x2, data = d, bw = h)
  nd <- data.frame(x1 = c(0, 0.9), x2 = c(0, 0.9))
  r <- diagnose(f, nd, critical_value = "null")
  z <- diagnose(f, nd)
  expect_identical(r$se_bc, z$se_bc)
  expect_equal(z$crit, rep(qnorm(0.975), 2), tolerance = 1e-15)
  expect_equal(r$rbc_high - r$fit_bc, r$crit_bc * r$se_bc, tolerance = 1e-12)
  # the direct oracle: local linear weights at the points and at every training row (the hat
  # matrix), the HC3 t of the conventional fit simulated under e ~ N(0, I) with 60,000 draws
  # (standard error of the quantile about 0.02); the saddlepoint errs by up to 3 % on the
  # large side where a few rows dominate (core/include/attnreg/detail/null_quantile.hpp)
  X <- cbind(d$x1, d$x2)
  ll <- function(x0) {
    U <- sweep(X, 2, x0) / rep(h, each = n)
    w <- exp(-0.5 * rowSums(U^2))
    Z <- cbind(1, U)
    solve(crossprod(Z * sqrt(w)), t(Z * w))[1, ]
  }
  H <- t(sapply(seq_len(n), function(i) ll(X[i, ])))
  s <- 1 / (1 - diag(H))^2
  E <- matrix(rnorm(n * 60000), n)
  RE <- E - H %*% E
  for (j in 1:2) {
    W <- ll(c(nd$x1[j], nd$x2[j]))
    t <- drop(crossprod(W, E)) / sqrt(colSums(W^2 * s * RE^2))
    c_sim <- unname(quantile(abs(t), 0.95))
    expect_lt(abs(r$crit[j] - c_sim), 0.04 * c_sim + 0.05)
  }
  expect_error(diagnose(f, nd, vcov = "nonrobust", critical_value = "null"),
               "critical_value: 'null' .*'hc0'-'hc3' and 'local'")
  expect_error(diagnose(f, nd, critical_value = "t"), "critical_value: must be")
  expect_equal(diagnose(f, nd, vcov = "local", critical_value = "normal")$crit,
               rep(qnorm(0.975), 2), tolerance = 1e-15)
})

test_that("plot(bands = 'uniform') draws diagnose()'s uniform RBC band over the grid", {
  set.seed(6)
  d <- data.frame(x1 = runif(300, -1, 1), x2 = runif(300, -1, 1))
  d$y <- sin(2 * d$x1) + d$x2^2 + rnorm(300, sd = 0.3)
  f <- kreg(y ~ x1 + x2, data = d, bw = c(0.35, 0.45))
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  p <- plot(f, var = "x1", bands = "uniform", n_grid = 40, R = 499, seed = 3)
  nd <- data.frame(x1 = seq(min(d$x1), max(d$x1), length.out = 40), x2 = median(d$x2))
  u <- diagnose(f, nd, uniform = TRUE, R = 499, seed = 3)
  expect_identical(attr(p, "crit_uniform_rbc"), attr(u, "crit_uniform_rbc"))
  expect_equal(p$uniform_lwr, u$uniform_rbc_low, tolerance = 1e-12)
  expect_equal(p$rbc_upr, u$rbc_high, tolerance = 1e-12)
  expect_true(all(p$uniform_lwr < p$rbc_lwr & p$uniform_upr > p$rbc_upr))
  expect_error(plot(f, bands = "uniform", R = 10), "R: must be an integer >= 100")
  # partial plots: the RBC band with two regressors (the other held at its median)
  part <- plot(f, type = "partial", bands = "rbc", n_grid = 20)
  nd2 <- data.frame(x1 = median(d$x1), x2 = seq(min(d$x2), max(d$x2), length.out = 20))
  expect_equal(part$x2$rbc_lwr, diagnose(f, nd2)$rbc_low, tolerance = 1e-12)
})
