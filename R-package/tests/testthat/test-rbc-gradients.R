# Robust bias-corrected intervals for marginal effects: gradients(fit, interval = "rbc"). The
# numbers are checked against nprobust's lprobust(deriv = ...) and a direct numpy oracle in
# python-package/tests/test_rbc_marginal_effects.py (the same C++ core); here the R face: the
# long data frame, exactness on a cubic, the options and bad input.

test_that("gradients(interval = 'rbc') is exact on a cubic with cross terms and a factor", {
  set.seed(5)
  n <- 400
  d <- data.frame(x1 = round(runif(n, -1, 1) * 30) / 30, x2 = runif(n, 3, 5),
                  g = factor(sample(c("a", "b", "c"), n, TRUE)))
  f3 <- function(a, b) 1 + a - b + a^2 + a * b - 0.5 * b^2 + a^3 - a^2 * b + 2 * a * b^2 + 0.3 * b^3
  d$y <- f3(d$x1, d$x2 - 4)
  fit <- kreg(y ~ x1 + x2 + g, data = d, bw = c(0.6, 0.8, 0.3), method = "ll",
              kernel = "epanechnikov")
  nd <- data.frame(x1 = c(0, 0.9), x2 = c(4, 3.2),
                   g = factor(c("b", "a"), levels = c("a", "b", "c")))
  r <- gradients(fit, newdata = nd, interval = "rbc", vcov = "HC0")
  expect_equal(attr(r, "pilot_degree"), 3L)
  expect_equal(r$regressor, c("x1", "x2", "x1", "x2"))
  a <- nd$x1; b <- nd$x2 - 4
  truth <- as.vector(rbind(1 + 2 * a + b + 3 * a^2 - 2 * a * b + 2 * b^2,
                           -1 + a - b - a^2 + 4 * a * b + 0.9 * b^2))
  expect_equal(r$estimate_bc, truth, tolerance = 1e-8)
  expect_true(max(abs(r$estimate - truth)) > 1e-3)
  expect_equal(r$rbc_lower, r$estimate_bc - qnorm(0.975) * r$std_error_bc, tolerance = 1e-12)
  expect_equal(r$estimate, as.vector(t(gradients(fit, newdata = nd)[, 1:2])), tolerance = 1e-9)
})

test_that("gradients(interval = 'rbc') reports bad input", {
  set.seed(6)
  d <- data.frame(x = runif(150))
  d$y <- sin(3 * d$x) + rnorm(150, sd = 0.2)
  fit <- kreg(y ~ x, data = d, bw = 0.3, method = "ll", kernel = "epanechnikov")
  nd <- data.frame(x = 0.5)
  expect_error(gradients(fit, newdata = nd, interval = "rbc", level = 95),
               "level is a fraction: 0.95 for a 95% interval")
  expect_error(gradients(fit, newdata = nd, interval = "rbc", order = 2),
               "order: the derivative order must be between 1 and the degree 1")
  expect_error(gradients(fit, newdata = nd, interval = "rbc", pilot_degree = 1),
               "pilot_degree: must exceed the degree 1")
  expect_error(gradients(fit, newdata = nd, interval = "rbc", vcov = "CR1"),
               "vcov: 'cr1' is not available for RBC")
  expect_error(gradients(fit, newdata = nd, interval = "rbc", se_method = "bootstrap"),
               "interval: \"rbc\" uses the variance of vcov")
  nw <- kreg(y ~ x, data = d, bw = 0.3, method = "lc")
  expect_error(gradients(nw, newdata = nd, interval = "rbc"), "degree: RBC intervals")
  r <- gradients(fit, newdata = data.frame(x = c(0.02, 0.5)), interval = "rbc", vcov = "nn",
                 pilot_degree = 2, pilot_bw = 0.4)
  expect_equal(attr(r, "pilot_degree"), 2L)
  expect_true(all(is.finite(as.matrix(r[, -(1:2)]))) && all(r$std_error_bc > 0))
})

test_that("gradients(average = TRUE, interval = 'rbc'): the averaged weights", {
  set.seed(15)
  n <- 300
  d <- data.frame(x1 = round(runif(n, -1, 1) * 30) / 30, x2 = runif(n, 3, 5))
  f3 <- function(a, b) 1 + a - b + a^2 + a * b - 0.5 * b^2 + a^3 - a^2 * b + 2 * a * b^2 + 0.3 * b^3
  d$y <- f3(d$x1, d$x2 - 4)
  fit <- kreg(y ~ x1 + x2, data = d, bw = c(0.6, 0.8), method = "ll", kernel = "epanechnikov")
  av <- gradients(fit, average = TRUE, interval = "rbc", vcov = "HC0")
  pw <- gradients(fit, interval = "rbc", vcov = "HC0")
  expect_equal(rownames(av), c("x1", "x2"))
  for (k in c("x1", "x2")) {
    expect_equal(av[k, "estimate"], mean(pw$estimate[pw$regressor == k]), tolerance = 1e-12)
    expect_equal(av[k, "estimate_bc"], mean(pw$estimate_bc[pw$regressor == k]),
                 tolerance = 1e-12)
  }
  # the pilot local cubic reproduces the cubic: the averaged bias-corrected slope is exact
  a <- d$x1; b <- d$x2 - 4
  expect_equal(av$estimate_bc, c(mean(1 + 2 * a + b + 3 * a^2 - 2 * a * b + 2 * b^2),
                                 mean(-1 + a - b - a^2 + 4 * a * b + 0.9 * b^2)),
               tolerance = 1e-8)
  # HC0 with the fit's own residuals: the conventional average's standard error
  d$y <- d$y + rnorm(n, sd = 0.3)
  fit <- kreg(y ~ x1 + x2, data = d, bw = c(0.6, 0.8), method = "ll", kernel = "epanechnikov")
  av <- gradients(fit, average = TRUE, interval = "rbc", vcov = "HC0")
  conv <- gradients(fit, average = TRUE)
  expect_equal(av$std_error, conv$std_error, tolerance = 1e-9)
  expect_true(all(av$std_error_bc > av$std_error))
})

test_that("level_difference() is exact on a quadratic within each level and checks its input", {
  set.seed(16)
  n <- 400
  d <- data.frame(x = runif(n, -1, 1), g = factor(sample(c("a", "b", "c"), n, TRUE)))
  eff <- c(a = 0, b = 0.7, c = -0.4)
  d$y <- 1 + d$x + 2 * d$x^2 + eff[as.character(d$g)] * (1 + d$x^2)
  # bw 0 for the factor: each level's own local linear fit, whose bias the pilot local
  # quadratic removes exactly
  fit <- kreg(y ~ x + g, data = d, bw = c(0.5, 0), method = "ll", kernel = "epanechnikov")
  r <- level_difference(fit, "g", c("a", "b"))
  expect_equal(rownames(r), "g: b - a")
  expect_equal(attr(r, "pilot_degree"), 2L)
  expect_equal(r$estimate_bc, 0.7 * (1 + mean(d$x^2)), tolerance = 1e-8)
  expect_true(abs(r$estimate - r$estimate_bc) > 1e-3)
  nd <- data.frame(x = c(-0.5, 0.3), g = factor(c("a", "c"), levels = c("a", "b", "c")))
  p <- level_difference(fit, "g", c("c", "a"), newdata = nd, average = FALSE)
  expect_equal(p$row, rownames(nd))
  expect_equal(p$estimate_bc, 0.4 * (1 + nd$x^2), tolerance = 1e-8)
  expect_error(level_difference(fit, "g", c("a", "z")), "levels: 'z' is not a level of 'g'")
  expect_error(level_difference(fit, "x", c("a", "b")), "regressor: 'x' is continuous")
  expect_error(level_difference(fit, "h", c("a", "b")), "regressor: must be one of")
  expect_error(level_difference(fit, "g", c("a", "b"), level = 95), "level is a fraction")
})
