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
