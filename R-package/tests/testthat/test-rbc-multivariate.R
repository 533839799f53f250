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
    q <- qr(Z * sqrt(w))
    Q <- qr.Q(q)
    res <- sqrt(w) * d$y - Q %*% crossprod(Q, sqrt(w) * d$y)
    s2 <- sum(res^2) / sum(w * (1 - rowSums(Q^2)))
    l <- solve(crossprod(Z * sqrt(w)), t(Z * w))[1, ]  # the fit's attention weights
    expect_equal(r$se[j], sqrt(s2 * sum(l^2)), tolerance = 1e-9)
  }
  expect_identical(attr(diagnose(f, nd, vcov = "LOCAL", uniform = TRUE, R = 200),
                        "uniform_method"), "gaussian")
})
